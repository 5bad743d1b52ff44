"""A real stdio MCP server (``toolbox.py``'s tools, standard library) that also lists ``deep``,
a tool whose input schema nests ``LEVELS`` objects deep (``deep.py LEVELS``): JSON any reader
of the standard library takes, deeper than some readers go. Its answers are written as they
are, as a server on another SDK (or none) may write them."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import toolbox

schema: dict[str, Any] = {}
for _ in range(int(sys.argv[1]) // 2):
    schema = {"type": "object", "properties": {"a": schema}}
toolbox.TOOLS.append({"name": "deep", "description": "Nested deep.", "inputSchema": schema})

if __name__ == "__main__":
    toolbox.StdioServer().run()
