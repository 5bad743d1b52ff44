"""The cost of reading every script: the bm25 index of the 5,468 SaaS tools built from the raw
tools (tokenization included) in fresh interpreters, this checkout's engine against another
checkout's (``--baseline DIR``, e.g. a ``git archive`` of main with the C kernel copied in),
alternated run by run; ``--cjk`` adds a Chinese sentence to every description. Also the mean
time of the first 200 SaaS keyword queries, from that index. Prints the medians as JSON.

    python benchmarks/search_languages.py --baseline /tmp/main [--cjk] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CATALOG = REPO.parent / "shared" / "data" / "saas_openapi_catalog" / "catalog.json"
QUERIES = REPO / "benchmarks" / "data" / "saas-keyword" / "queries.jsonl"
CHINESE = " 创建新的问题并发送给团队成员。"

_ONE_RUN = """
import json, sys, time
from hermes_core.search import ToolDocument
from plugins_builtin.bm25.index import BM25Index
catalog, queries, extra = sys.argv[1], sys.argv[2], sys.argv[3]
docs = [
    ToolDocument.from_schema(e["name"], e.get("description", "") + extra, e.get("server") or "x",
                             e.get("input_schema") or {})
    for e in json.load(open(catalog, encoding="utf-8"))
]
started = time.perf_counter()
index = BM25Index(docs)
built = time.perf_counter() - started
asked = [json.loads(line)["query"] for line in open(queries, encoding="utf-8")][:200]
started = time.perf_counter()
for query in asked:
    index.search(query, 10, "off")
print(json.dumps({"build_s": built, "query_ms": (time.perf_counter() - started) * 1e3 / 200}))
"""


def one_run(checkout: Path, extra: str) -> dict[str, float]:
    """One build and the queries in a fresh interpreter importing ``checkout``'s engine."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    out = subprocess.run(
        [sys.executable, "-c", _ONE_RUN, str(CATALOG), str(QUERIES), extra],
        env=env, capture_output=True, text=True, check=True, cwd="/",
    )  # fmt: skip
    result: dict[str, float] = json.loads(out.stdout.splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True)
    parser.add_argument("--cjk", action="store_true")
    parser.add_argument("--runs", type=int, default=5)
    arguments = parser.parse_args()
    extra = CHINESE if arguments.cjk else ""
    ways = {"baseline": arguments.baseline, "this": REPO}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in ways}
    for number in range(arguments.runs):
        order = list(ways) if number % 2 else list(ways)[::-1]
        for name in order:
            runs[name].append(one_run(ways[name], extra))
    print(json.dumps({
        name: {key: statistics.median(run[key] for run in found) for key in found[0]}
        for name, found in runs.items()
    }, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
