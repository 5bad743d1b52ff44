"""A real stdio MCP server (``toolbox.py``'s tools, standard library) with one more tool,
``flood``: called, it writes to its output without end and never a newline, as a broken or
hostile server may. Every other tool answers as ``toolbox.py``'s do."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import toolbox

toolbox.TOOLS.append(
    {
        "name": "flood",
        "description": "Writes to its output for ever, without a newline.",
        "inputSchema": {"type": "object", "properties": {}},
    }
)

CHUNK = b'{"jsonrpc":"2.0","method":"' + b"x" * (1024 * 1024)


class FloodServer(toolbox.ToolboxServer):
    def _result(self, method: str, params: dict[str, Any], cancel: threading.Event) -> Any:
        if method == "tools/call" and params.get("name") == "flood":
            out = sys.stdout.buffer
            try:
                while True:
                    out.write(CHUNK)
                    out.flush()
            except OSError:  # hermes closed the pipe
                return None
        return super()._result(method, params, cancel)


if __name__ == "__main__":
    FloodServer().run()
