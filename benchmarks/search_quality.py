"""Search quality on every labelled set, in every admission mode, for both search backends.

Sets: the dev sets of ``benchmarks/data/sets.json`` (keyword queries as a model sends them,
with negatives) and the natural-language eval sets of ``shared/data/eval`` (toolbench,
metatool). Backends: the bundled ``bm25`` and the ``hybrid`` plugin of
``plugins/hermes-search-hybrid`` (when it is installed), each in admission ``strict``,
``lenient`` and ``off``; plus the plain rank-bm25 reference of ``shared/data/README.md``. Every
figure is measured host-free with :func:`hermes_core.search._evaluation.evaluate_backend` (the
same metrics as ``hermes eval search``). Prints one markdown table and, with ``--write``, puts
it under "## Search quality" in ``docs/performance.md``.

    python benchmarks/search_quality.py [--write] [--every N]

``--every N`` keeps every N-th query of metatool's 21,111 (the hybrid backend embeds each
query: the whole set takes minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from _report import write_section  # benchmarks/ is on the path of a script run from it
from rank_bm25 import BM25Okapi

from hermes_core._config import Config
from hermes_core._errors import HermesError
from hermes_core._paths import Environment
from hermes_core.search._backend import SearchBackend
from hermes_core.search._evaluation import (
    CatalogEntry,
    EvalQuery,
    evaluate,
    evaluate_backend,
    load_catalog,
    load_queries,
    load_sets,
)
from hermes_core.testing import make_search_backend

ROOT = Path(__file__).resolve().parents[1]
EVAL = ROOT.parent / "shared" / "data" / "eval"
SETS = ROOT / "benchmarks" / "data" / "sets.json"
COLUMNS = (
    "recall@5",
    "hit@1",
    "hit@5",
    "ndcg@10",
    "mrr",
    "no_match_rate",
    "negatives_flagged",
    "p50_ms",
)
ADMISSIONS = ("strict", "lenient", "off")
_NAME_PIECES = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def plain_reference(
    catalog: Sequence[CatalogEntry], queries: Sequence[EvalQuery]
) -> dict[str, float | int]:
    """The README's plain rank-bm25 figures, recomputed with the same metric code."""

    def words(text: str) -> list[str]:
        return re.findall(r"\w+", text.lower())

    def name_words(name: str) -> list[str]:
        pieces: list[str] = []
        for part in re.split(r"[_\-.]+", name):
            pieces.extend(piece.lower() for piece in _NAME_PIECES.findall(part))
        return pieces

    reference = BM25Okapi([name_words(e.name) + words(e.description) for e in catalog])
    names = [entry.name for entry in catalog]

    def search(query: str, limit: int) -> list[str]:
        scores = reference.get_scores(words(query))
        order = np.argsort(-scores, kind="stable")[:limit]
        return [names[i] for i in order]

    return evaluate(search, catalog, queries)


def hybrid_backend() -> SearchBackend | None:
    """A new ``hybrid`` backend when its distribution is installed, else ``None``."""
    # Not run from the checkout: there the editable plugin would be a project plugin, which is
    # not loaded without being trusted, and the benchmark measures it as a user installs it.
    home = Path(tempfile.mkdtemp(prefix="hermes-quality-"))
    env = Environment(home=home, cwd=home, variables={})
    config = Config.model_validate({"plugins": {"enabled": ["hybrid"]}})
    try:
        return make_search_backend("hybrid", config=config, env=env)
    except HermesError as error:
        print(f"hybrid backend not measured: {error}", file=sys.stderr)
        return None


INTRO = (
    "Every labelled set, in every admission mode, for both backends (the hybrid plugin when it\n"
    "is installed, as in `nox -s tests_hybrid`) and the plain rank-bm25 reference of\n"
    "`../shared/data/README.md`, measured host-free with the metrics of `hermes eval search`\n"
    "(`hermes_core.search._evaluation.evaluate_backend`). Run {when}{sampled}; load average\n"
    "{load} (1 minute) on the development machine's 2 cores."
)
LEGEND = """\
Percentages 0-100. recall@5 is |relevant ∩ top 5| / |relevant| averaged over queries; hit@k
counts a query whose top k holds any relevant tool; nDCG@10 uses binary gains; MRR counts the
first relevant tool among the 10 returned; `no_match_rate` is over the positive queries,
`negatives_flagged` is the share of negatives answered with no match or with the absent word in
`unmatched`; p50 is one search in ms (the hybrid's includes embedding the query). The default
is admission `off`. What moved the bm25 figures, and the hybrid's fusion and threshold tables,
are in `docs/tool-search.md`.

The same through the product's own path (the catalog as a catalog toolset of a real host, each
query sent to `tool_search` through the dispatcher):

```sh
hermes eval search --sets benchmarks/data/sets.json
hermes eval search --catalog ../shared/data/eval/toolbench/catalog.json \\
                   --queries ../shared/data/eval/toolbench/queries.jsonl --json
```
"""


def main(argv: Sequence[str] | None = None) -> None:
    """Evaluate every set, mode and backend; print the table, and optionally record it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update docs/performance.md")
    parser.add_argument("--every", type=int, default=1, help="keep every N-th metatool query")
    args = parser.parse_args(argv)
    started, load_at_start = time.time(), os.getloadavg()[0]
    sets = [(item.name, item.catalog, item.queries) for item in load_sets(SETS)]
    for name in ("toolbench", "metatool"):
        sets.append((name, EVAL / name / "catalog.json", EVAL / name / "queries.jsonl"))
    header = "| set | ranking | " + " | ".join(COLUMNS) + " |"
    lines = [header, "|" + "---|" * (len(COLUMNS) + 2)]
    has_hybrid = hybrid_backend() is not None
    for name, catalog_path, queries_path in sets:
        catalog = load_catalog(catalog_path)
        queries = load_queries(queries_path)
        if name == "metatool":
            queries = queries[:: args.every]
        results = {"rank-bm25 plain (reference)": plain_reference(catalog, queries)}
        for backend_name in ("bm25", "hybrid") if has_hybrid else ("bm25",):
            for admission in ADMISSIONS:
                backend = hybrid_backend() if backend_name == "hybrid" else make_search_backend()
                assert backend is not None
                label = f"{backend_name}, {admission}"
                results[label] = evaluate_backend(backend, catalog, queries, admission)  # type: ignore[arg-type]
        for label, result in results.items():
            print(name, label, result, file=sys.stderr)
            cells = " | ".join(str(result[column]) for column in COLUMNS)
            count = f"{result['queries']} + {result['negatives']} negatives"
            lines.append(f"| {name} ({count}) | {label} | {cells} |")
    every = f" --every {args.every}" if args.every != 1 else ""
    sampled = f", metatool on every {args.every}th query" if args.every != 1 else ""
    began = time.strftime("%Y-%m-%d %H:%M", time.localtime(started))
    text = (
        "## Search quality\n\n"
        + INTRO.format(
            when=f"{began} to {time.strftime('%H:%M')}",
            sampled=sampled,
            load=f"{load_at_start:.1f} to {os.getloadavg()[0]:.1f}",
        )
        + f"\n\n`python benchmarks/search_quality.py --write{every}`\n\n"
        + "\n".join(lines)
        + "\n\n"
        + LEGEND
    )
    print(text)
    if args.write:
        write_section("## Search quality", text)


if __name__ == "__main__":
    main()
