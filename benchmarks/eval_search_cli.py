"""Wall time of the ``hermes eval search`` command, this checkout against another revision, in
one run.

The other revision's ``hermes_core`` and bundled plugins are extracted with ``git archive``
(``_baseline.revision_tree``) and run by the same interpreter (``PYTHONPATH`` and
``HERMES_BUNDLED_PLUGINS`` on them, the working directory outside both trees). The bm25 C
kernel compiled in this checkout is copied into the other tree when its source is the same
(else the other side would rank with the numpy kernel and measure that). Both share one
temporary home, each side with a cache directory of its own warmed by one untimed run; then
each repetition runs the command once on each side, the order alternating, so that the
machine's noise falls on both alike. Prints the median, min and max of each side in ms and
the ratio of the medians.

    python benchmarks/eval_search_cli.py [--against REV] [--repeat 15]
        [--catalog ../shared/data/saas_openapi_catalog/catalog.json]
        [--queries benchmarks/data/saas-keyword/queries.jsonl] [--backend bm25]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _baseline import ROOT, revision_tree, tree_variables

CATALOG = ROOT.parent / "shared" / "data" / "saas_openapi_catalog" / "catalog.json"
QUERIES = ROOT / "benchmarks" / "data" / "saas-keyword" / "queries.jsonl"


def _timed(command: list[str], variables: dict[str, str], cwd: Path) -> float:
    """Seconds ``command`` took; its output is dropped, a failure stops the benchmark."""
    started = time.perf_counter()
    done = subprocess.run(command, env=variables, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(f"{' '.join(command)} exited with {done.returncode}")
    return elapsed


def _share_kernel(tree: Path) -> None:
    """This checkout's compiled bm25 kernel copied into ``tree`` when both hold the same
    ``_kernel.c``; otherwise a stop (the figures would compare two kernels)."""
    ours, theirs = ROOT / "plugins_builtin" / "bm25", tree / "plugins_builtin" / "bm25"
    compiled = list(ours.glob("_kernel.*.so"))
    if not compiled:
        raise SystemExit(f"no compiled kernel in {ours}: pip install -e . first")
    if (theirs / "_kernel.c").read_bytes() != (ours / "_kernel.c").read_bytes():
        raise SystemExit("the other revision's _kernel.c differs: see benchmarks/kernel_ab.py")
    for library in compiled:
        shutil.copy2(library, theirs / library.name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", default="main", help="the revision to compare with")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--catalog", type=Path, default=CATALOG)
    parser.add_argument("--queries", type=Path, default=QUERIES)
    parser.add_argument("--backend", default="bm25", help="tools.tool_search.backend")
    options = parser.parse_args()
    command = [
        sys.executable, "-m", "hermes_core", "eval", "search",
        "--catalog", str(options.catalog.resolve()), "--queries", str(options.queries.resolve()),
    ]  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="hermes-eval-bench-") as scratch:
        home = Path(scratch) / "home"
        home.mkdir()
        (home / "config.yaml").write_text(
            f"tools:\n  tool_search:\n    backend: {options.backend}\n", encoding="utf-8"
        )
        base = {**os.environ, "HERMES_HOME": str(home)}
        base.pop("PYTHONPATH", None)
        base.pop("PYTHONDONTWRITEBYTECODE", None)  # compiled once, as on a user's machine
        with revision_tree(options.against) as tree:
            _share_kernel(tree)
            # A cache directory each: what one side keeps (plugin listings keyed by the bundled
            # folder's path) would otherwise be replaced by the other's at every run.
            sides = {
                "this checkout": {
                    **tree_variables(ROOT, base),
                    "HERMES_CACHE_DIR": str(Path(scratch) / "cache-this"),
                },
                options.against: {
                    **tree_variables(tree, base),
                    "HERMES_CACHE_DIR": str(Path(scratch) / "cache-against"),
                },
            }
            for variables in sides.values():  # warm: the index cache, the .pyc files
                _timed(command, variables, Path(scratch))
            times: dict[str, list[float]] = {name: [] for name in sides}
            names = list(sides)
            for number in range(options.repeat):
                for name in names if number % 2 == 0 else names[::-1]:
                    times[name].append(_timed(command, sides[name], Path(scratch)) * 1000.0)
    reference = statistics.median(times[options.against])
    load = os.getloadavg()
    print(f"hermes eval search, {options.backend}, {options.repeat} runs each, load {load[0]:.2f}")
    print(f"{'side':<24}{'median ms':>10}{'min ms':>9}{'max ms':>9}{'ratio':>8}")
    for name, samples in times.items():
        median = statistics.median(samples)
        print(
            f"{name:<24}{median:>10.0f}{min(samples):>9.0f}{max(samples):>9.0f}"
            f"{median / reference:>8.2f}"
        )


if __name__ == "__main__":
    main()
