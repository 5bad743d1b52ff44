"""A host with a very large catalog: the first search's time and the process's memory.

Writes the synthetic catalog of ``benchmarks/search.py`` (the SaaS catalog's words at their real
frequencies, servers of 50 tools; 330,000 tools by default) as a catalog file
(``tools.catalogs``), then runs ``hermes tools search "create issue"`` on it as a subprocess,
twice: cold (an empty cache directory) and warm (the cache the cold run left). For each it
prints the wall time of the command and the peak resident memory of the process (``ru_maxrss``
of the child, which is at least its memory after the search). Budgets (issue 11): RSS under
1.2 GB, the first answer under 15 s cold and under 2 s warm. A warm run is faster only where
something is cached across processes (the bm25 engine's persisted index).

    python benchmarks/host_scale.py [--tools 330000] [--runs 1]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from search import CATALOG, SEED, synthetic_catalog  # benchmarks/ is on the script's path

from hermes_core.search._evaluation import catalog_documents, load_catalog

RSS_BUDGET_MB = 1200.0
COLD_BUDGET_S = 15.0
WARM_BUDGET_S = 2.0


def _clipped(name: str, suffix: str) -> str:
    return name if len(name) <= 64 else name[: 64 - len(suffix)] + suffix


def write_catalog(path: Path, size: int) -> None:
    """The synthetic catalog of ``size`` tools as a catalog file."""
    documents = synthetic_catalog(catalog_documents(load_catalog(CATALOG)), size, SEED + size)
    entries = [
        {
            # Tool names have at most 64 characters; the index at the end keeps them unique.
            "name": _clipped(document.name, f"_{index}"),
            "server": document.group,
            "description": document.description,
            "input_schema": {
                "type": "object",
                "properties": {name: {"type": "string"} for name in document.parameter_names},
            },
        }
        for index, document in enumerate(documents)
    ]
    path.write_text(json.dumps(entries), encoding="utf-8")


def run_once(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall seconds of ``command`` and the peak RSS (MB) of that child alone."""
    # ru_maxrss of RUSAGE_CHILDREN is the largest of all children waited for, so each run is
    # measured from a fresh helper process that has no other child.
    probe = (
        "import resource, subprocess, sys, time\n"
        "start = time.perf_counter()\n"
        "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)\n"
        "took = time.perf_counter() - start\n"
        "print(took, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)\n"
    )
    done = subprocess.run(
        [str(Path(sys.executable).absolute()), "-c", probe, *command],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr}")
    took, rss = done.stdout.split()
    return float(took), float(rss)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", type=int, default=330_000, help="catalog size")
    parser.add_argument("--runs", type=int, default=1, help="cold and warm runs (default 1)")
    options = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="hermes-host-scale-"))
    try:
        started = time.perf_counter()
        catalog = root / "catalog.json"
        write_catalog(catalog, options.tools)
        written = time.perf_counter() - started
        home = root / "home"
        home.mkdir()
        (home / "config.yaml").write_text(
            json.dumps({"tools": {"catalogs": [{"path": str(catalog)}]}}), encoding="utf-8"
        )
        cache = root / "cache"
        env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": str(root),
            "HERMES_HOME": str(home),
            "HERMES_CACHE_DIR": str(cache),
            "HERMES_LOG_DIR": str(root / "logs"),
        }
        script = Path(sys.executable).absolute().with_name("hermes")
        hermes = [str(script)] if script.exists() else [sys.executable, "-m", "hermes_core"]
        command = [*hermes, "tools", "search", "create issue"]
        cold: list[tuple[float, float]] = []
        warm: list[tuple[float, float]] = []
        for _ in range(options.runs):
            shutil.rmtree(cache, ignore_errors=True)
            cold.append(run_once(command, env, root))
            warm.append(run_once(command, env, root))
        size_mb = catalog.stat().st_size / 1e6
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(
        f"{options.tools:,} synthetic catalog tools ({size_mb:.0f} MB of JSON, written in "
        f"{written:.0f} s); hermes tools search 'create issue'; {options.runs} run(s) each\n"
    )
    checks = []
    for name, runs, budget in (("cold", cold, COLD_BUDGET_S), ("warm", warm, WARM_BUDGET_S)):
        seconds = statistics.median(took for took, _ in runs)
        rss = max(peak for _, peak in runs)
        print(f"{name}: {seconds:.2f} s, peak RSS {rss:.0f} MB")
        checks.append((f"{name} first answer < {budget:g} s", f"{seconds:.2f} s", seconds < budget))
        checks.append(
            (f"{name} RSS < {RSS_BUDGET_MB:.0f} MB", f"{rss:.0f} MB", rss < RSS_BUDGET_MB)
        )
    print()
    for what, figure, held in checks:
        print(f"{'ok  ' if held else 'OVER'} {what}: {figure}")
    return 0 if all(held for _, _, held in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
