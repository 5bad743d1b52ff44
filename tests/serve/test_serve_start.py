"""``hermes serve``'s start (issue 32): it runs with the cyclic garbage collector paused, and the
served host collects garbage again once its first tool list is built; the hosted connectors'
service is made only when connectors are configured."""

from __future__ import annotations

import gc
import subprocess
import sys

import anyio
import pytest
from in_process import host_server
from serving import ServeHome

from hermes_core._gc_pause import pause_for_start


def test_the_collector_resumes_once_the_first_tool_list_is_built(served: ServeHome) -> None:
    served.write_config()
    frozen = gc.get_freeze_count()

    async def main() -> tuple[bool, bool, int]:
        pause_for_start()
        paused = not gc.isenabled()
        async with host_server(served) as server:
            assert server.tools()
            return paused, gc.isenabled(), gc.get_freeze_count()

    try:
        paused, enabled, frozen_then = anyio.run(main)
    finally:
        gc.enable()
        gc.unfreeze()
    assert paused
    assert enabled
    assert frozen_then > frozen  # what the start made, frozen


STARTED = """
import sys
import anyio
from hermes_core._cli.context import environment
from hermes_core._config import load_config
from hermes_core._serve.transports import serving_host

env = environment()

async def main():
    async with serving_host(load_config(env.config_path), env, session_scope="connection") as s:
        s.tools(s.session_for_request())
        print(sorted(name for name in sys.modules if name.startswith("hermes_core.connectors")))

anyio.run(main)
"""


@pytest.mark.slow  # a process each: the MCP SDK's import and a host start, about 2.5 s
@pytest.mark.parametrize("url", [None, "https://gateway.invalid/mcp"])
def test_the_connectors_service_is_made_at_start_only_when_connectors_are_configured(
    served: ServeHome, url: str | None
) -> None:
    served.write_config(tools={"connectors": {"url": url}})
    command = [sys.executable, "-c", STARTED]
    variables = {**served.variables(), "HERMES_CONFIG": str(served.config_path)}
    done = subprocess.run(
        command, env=variables, cwd=served.work, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    imported = done.stdout.strip().splitlines()[-1]
    assert ("hermes_core.connectors._service" in imported) == (url is not None), imported
