"""What the project gate leaves to the Node launchers themselves, and why (docs/security.md,
"The project gate"): corepack's ``packageManager``, and ``pnpm exec``, ``yarn exec`` and
``bun run``, which run the project's own commands by the user's choice, as ``npm run`` does.

A real ``corepack`` (Node's, 20 to 24) and a real HTTP server on 127.0.0.1.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from test_project_launchers import environment, places

from hermes_core._mcp.launch import project_guard

__all__ = ["places"]  # the fixture, shared with test_project_launchers


@pytest.fixture
def planted_server() -> Iterator[tuple[str, list[str]]]:
    """A server on 127.0.0.1 that would hand out the project's package manager: its URL and
    the paths asked of it."""
    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            self.send_error(404)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/planted.tgz", asked
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.subprocess
@pytest.mark.parametrize("manager", ["pnpm", "yarn"])
def test_corepack_never_fetches_the_package_manager_a_project_names_by_url(
    places: dict[str, Path], planted_server: tuple[str, list[str]], manager: str
) -> None:
    # With corepack enabled, `pnpm` and `yarn` are its shims, which run the version the
    # project's package.json names as packageManager. A version is one of the registry's,
    # whose signature corepack checks; a URL would be the project's own code, and corepack
    # refuses it unless the user set COREPACK_ENABLE_UNSAFE_CUSTOM_URLS=1: so hermes does not
    # refuse `pnpm dlx` or `yarn dlx` for a package.json.
    corepack = shutil.which("corepack")
    if corepack is None:
        pytest.fail("corepack is missing: it comes with Node 20 to 24 (install Node)")
    url, asked = planted_server
    project = places["project"]
    (project / "package.json").write_text(json.dumps({"packageManager": f"{manager}@{url}"}))
    env = environment(places, "")
    variables = {**env.variables, "COREPACK_HOME": str(places["user_home"] / "corepack")}

    ran = subprocess.run(
        [corepack, manager, "--version"],
        cwd=project,
        env=variables,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert ran.returncode != 0, ran
    assert "COREPACK_ENABLE_UNSAFE_CUSTOM_URLS" in ran.stdout + ran.stderr, ran
    assert asked == []
    assert project_guard(manager, ["dlx", "server"], project, env).refusal is None
