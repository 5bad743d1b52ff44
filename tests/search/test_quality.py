"""Search quality floors of the default settings, on every labelled set (the search-quality
issue's acceptance 2). These are quality floors on real data, not timings.

- The dev sets of ``benchmarks/data`` (keyword queries as a model sends them): hit@5 on the SaaS
  catalog and on the five MCP servers, and every negative query answered with no match or with
  its absent service word among the ``unmatched`` words.
- The request sets of ``benchmarks/data`` (users' requests over seven, then eight more MCP
  servers): hit@5, and the second pair's negatives flagged.
- The natural-language sets of ``shared/data/eval`` (toolbench, metatool): recall@5 and
  nDCG@10.

Measured host-free with the backend and the admission of a default ``Config`` (``hermes eval
search`` measures the same through the real ``tool_search``; docs/performance.md has both).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core._config import Config
from hermes_core.search._evaluation import (
    METRIC_KEYS,
    evaluate_backend,
    load_catalog,
    load_queries,
    load_sets,
)
from hermes_core.testing import make_search_backend

SETS = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "sets.json"

FLOORS = {
    # saas-keyword at round 4 of the request rules (issue 32): 88.24 host-free
    "saas-keyword": {"hit@5": 88.0, "negatives_flagged": 100.0},
    "mcp-servers": {"hit@5": 95.0, "negatives_flagged": 100.0},
    "toolbench": {"recall@5": 69.0, "ndcg@10": 69.0},
    "metatool": {"recall@5": 64.0, "ndcg@10": 56.0},
    # Users' requests (issue 32), as round 4 of the request rules left them (96.97 and 75.38)
    "mcp-requests-probe": {"hit@5": 96.0},
    "mcp-requests-holdout": {"hit@5": 75.0},
    # The second request sets, written blind (issue 32), at their host-free baselines (75.31 and
    # 77.22; docs/performance.md has them through `eval search`): floors against a regression,
    # to be raised by whoever improves them, never tuned on the hold-out's misses.
    # Round 4 of the request rules tuned on the probe: 96.3 host-free.
    "mcp-requests-2-probe": {"hit@5": 96.0, "negatives_flagged": 85.0},
    "mcp-requests-2-holdout": {"hit@5": 77.0, "negatives_flagged": 100.0},
}


def _paths(name: str, data_dir: Path) -> tuple[Path, Path]:
    for item in load_sets(SETS):
        if item.name == name:
            return item.catalog, item.queries
    folder = data_dir / "eval" / name
    return folder / "catalog.json", folder / "queries.jsonl"


# metatool, the largest set, takes about 10 s: it runs with the slow tests.
@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n == "metatool" else n for n in FLOORS]
)
def test_default_settings_meet_the_quality_floor(name: str, data_dir: Path) -> None:
    defaults = Config().tools.tool_search
    catalog_path, queries_path = _paths(name, data_dir)
    catalog = load_catalog(catalog_path)
    queries = load_queries(queries_path)
    backend = make_search_backend(defaults.backend)
    result = evaluate_backend(backend, catalog, queries, defaults.admission)
    assert tuple(result) == METRIC_KEYS
    assert result["queries"] + result["negatives"] == len(queries)
    for metric, floor in FLOORS[name].items():
        assert result[metric] >= floor, (metric, result)
