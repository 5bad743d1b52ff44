"""A real stdio MCP server (``toolbox.py``'s tools, standard library) that, once listed, says
its tools changed (``notifications/tools/list_changed``) every 5 ms for ever: a storm. Its tool
``listings`` answers how many listings (``tools/list`` without a cursor) it was asked for."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import toolbox
from stdio_mcp import text_result

toolbox.TOOLS.append(
    {
        "name": "listings",
        "description": "How many listings this server was asked for.",
        "inputSchema": {"type": "object", "properties": {}},
    }
)


class StormServer(toolbox.ToolboxServer):
    def __init__(self) -> None:
        super().__init__()
        self.listings = 0
        self.storming = False

    def _storm(self) -> None:
        while True:
            self._send({"method": "notifications/tools/list_changed"})
            time.sleep(0.005)

    def _result(self, method: str, params: dict[str, Any], cancel: threading.Event) -> Any:
        if method == "tools/list" and not params.get("cursor"):
            self.listings += 1
            if not self.storming:
                self.storming = True
                threading.Thread(target=self._storm, daemon=True).start()
        if method == "tools/call" and params.get("name") == "listings":
            return text_result(str(self.listings))
        return super()._result(method, params, cancel)


if __name__ == "__main__":
    StormServer().run()
