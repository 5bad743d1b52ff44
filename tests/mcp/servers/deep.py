"""A real stdio MCP server (``toolbox.py``'s tools, standard library) that also lists ``deep``,
a tool whose input schema nests ``LEVELS`` objects deep (``deep.py LEVELS``), and whose call
answers structured content 300 objects deep: JSON the standard library reads and writes,
deeper than some readers go. Its answers are written as they
are, as a server on another SDK (or none) may write them. With ``--id-inside`` its answer to
``deep`` has the ``id`` neither first nor last: ``{"result": ..., "id": 3, "jsonrpc": "2.0"}``;
with ``--id-escaped`` it is last, a string of the number with every digit escaped: ``"id":
"\\u0033"`` (the SDK takes ``"3"`` for request 3)."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import toolbox

schema: dict[str, Any] = {}
for _ in range(int(sys.argv[1]) // 2):
    schema = {"type": "object", "properties": {"a": schema}}
toolbox.TOOLS.append({"name": "deep", "description": "Nested deep.", "inputSchema": schema})

ANSWER: dict[str, Any] = {}
for _ in range(300):  # its call answers structured content 300 objects deep
    ANSWER = {"a": ANSWER, "b": [1]}


ID_INSIDE = "--id-inside" in sys.argv[2:]
ID_ESCAPED = "--id-escaped" in sys.argv[2:]


class DeepServer(toolbox.ToolboxServer):
    def _send(self, message: dict[str, Any]) -> None:
        result = message.get("result")
        written = ID_INSIDE or ID_ESCAPED
        if not (written and isinstance(result, dict) and "structuredContent" in result):
            super()._send(message)
            return
        if ID_INSIDE:
            line = json.dumps({"result": result, "id": message["id"], "jsonrpc": "2.0"})
        else:
            ident = "".join(f"\\u{ord(digit):04x}" for digit in str(message["id"]))
            line = json.dumps({"jsonrpc": "2.0", "result": result})[:-1] + f', "id": "{ident}"}}'
        with self._write_lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    def _result(self, method: str, params: dict[str, Any], cancel: threading.Event) -> Any:
        if method == "tools/call" and params.get("name") == "deep":
            return {"content": [], "structuredContent": ANSWER}
        return super()._result(method, params, cancel)


if __name__ == "__main__":
    DeepServer().run()
