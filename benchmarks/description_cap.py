"""What the description cap costs where it is checked: a listing of the large catalogs.

Times, median of ``--rounds`` rounds, each catalog of ``../shared/data`` (the 5,468 SaaS API
operations, the 527 tools of 70 MCP servers, the 2,479 ToolBench endpoints) two ways:

- ``mcp``: screened as one MCP server's ``tools/list`` answer (``screen_tools``: every check a
  live listing passes, the SDK's included);
- ``catalog``: read as a ``tools.catalogs`` file, uncached (``read_catalog``).

Run it on the tree before and after a change to compare (each on its own import path):

    PYTHONPATH=/path/to/tree python benchmarks/description_cap.py
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# benchmarks/ holds a script named mcp.py: keep this folder off the import path so ``import mcp``
# (inside hermes_core._mcp) finds the SDK.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

from hermes_core._mcp.listing import screen_tools  # noqa: E402
from hermes_core.search._catalog import read_catalog  # noqa: E402

DATA = _HERE.parent.parent / "shared" / "data"


def _livemcp() -> list[dict[str, Any]]:
    # Tool names repeat across (and within) the servers; a catalog takes each name once.
    servers = json.loads((DATA / "livemcpbench_tools" / "tools.json").read_text("utf-8"))
    tools = [
        tool
        for entry in servers
        for listing in entry["tools"].values()
        for tool in listing["tools"]
        if isinstance(tool.get("inputSchema"), dict)
    ]
    return [
        {
            "name": f"t{index}",
            "description": tool.get("description") or "",
            "input_schema": tool["inputSchema"],
        }
        for index, tool in enumerate(tools)
    ]


def catalogs() -> dict[str, list[dict[str, Any]]]:
    """Each catalog's entries in the eval format."""
    saas = DATA / "saas_openapi_catalog" / "catalog.json"
    toolbench = DATA / "eval" / "toolbench" / "catalog.json"
    return {
        "saas": json.loads(saas.read_text("utf-8")),
        "livemcp": _livemcp(),
        "toolbench": json.loads(toolbench.read_text("utf-8")),
    }


def median_ms(run: Callable[[], object], rounds: int) -> float:
    """The median wall time of ``run`` in milliseconds, one warm-up run first."""
    run()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as folder:
        for name, entries in catalogs().items():
            listing = {
                "tools": [
                    {
                        "name": f"t{index}",
                        "description": entry.get("description") or "",
                        "inputSchema": entry.get("input_schema") or {"type": "object"},
                    }
                    for index, entry in enumerate(entries)
                ]
            }
            path = Path(folder) / f"{name}.json"
            path.write_text(json.dumps(entries), encoding="utf-8")
            mcp = median_ms(lambda listing=listing: screen_tools(listing, None), rounds)
            catalog = median_ms(
                lambda path=path: read_catalog(path, None, owner="catalog", cache_dir=None), rounds
            )
            print(
                f"{name:10} {len(entries):6,} tools  mcp {mcp:8.1f} ms  catalog {catalog:8.1f} ms"
            )


if __name__ == "__main__":
    main()
