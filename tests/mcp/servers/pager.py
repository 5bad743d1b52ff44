"""A real stdio MCP server (``toolbox.py``'s tools on ``stdio_mcp.py``'s loop, standard library)
whose ``tools/list`` never ends: every page lists ``PAGE`` new tools (``pager.py PAGE``) and gives
a new cursor, for ever, as a broken or hostile server may. It counts the pages it was asked for
on its standard error."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import toolbox

PAGE = int(sys.argv[1])
_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}}


class PagerServer(toolbox.ToolboxServer):
    def _result(self, method: str, params: dict[str, Any], cancel: threading.Event) -> Any:
        if method != "tools/list":
            return super()._result(method, params, cancel)
        page = int(params.get("cursor") or 0)
        print(f"page {page}", file=sys.stderr, flush=True)
        tools = [
            {"name": f"tool_{page}_{n}", "description": "One more tool.", "inputSchema": _SCHEMA}
            for n in range(PAGE)
        ]
        return {"tools": tools, "nextCursor": str(page + 1)}


if __name__ == "__main__":
    PagerServer().run()
