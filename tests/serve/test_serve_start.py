"""``hermes serve``'s start runs with the cyclic garbage collector paused (issue 32), and the
served host collects garbage again once its first tool list is built."""

from __future__ import annotations

import gc

import anyio
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
