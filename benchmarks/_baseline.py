"""Running a benchmark script against another revision of this repository, in the same run.

The revision's ``hermes_core`` and bundled plugins are extracted with ``git archive`` into a
temporary directory; the script (this checkout's file) runs in a subprocess whose
``PYTHONPATH`` and ``HERMES_BUNDLED_PLUGINS`` point there, and prints its figures as JSON. The
scripts therefore use only what both revisions have: the public API of ``hermes_core``.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def revision_tree(revision: str) -> Iterator[Path]:
    """A temporary directory holding ``hermes_core/`` and ``plugins_builtin/`` of ``revision``."""
    with tempfile.TemporaryDirectory(prefix="hermes-baseline-") as tree:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", revision, "hermes_core", "plugins_builtin"],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", tree], input=archive, check=True)
        yield Path(tree)


def tree_variables(tree: Path, base: Mapping[str, str]) -> dict[str, str]:
    """``base`` with ``PYTHONPATH`` and ``HERMES_BUNDLED_PLUGINS`` on the ``hermes_core`` and
    bundled plugins of ``tree``."""
    return {
        **base,
        "PYTHONPATH": str(tree),
        "HERMES_BUNDLED_PLUGINS": str(tree / "plugins_builtin"),
    }


def run_json(script: Path, arguments: Sequence[str], tree: Path) -> Any:
    """Run ``script`` with ``arguments`` on the ``hermes_core`` of ``tree`` (``ROOT`` for this
    checkout) and return what it printed, read as JSON. Its stderr is shown when it fails."""
    variables = tree_variables(tree, os.environ)
    done = subprocess.run(
        [sys.executable, str(script), *arguments],
        capture_output=True,
        text=True,
        env=variables,
    )
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise subprocess.CalledProcessError(done.returncode, done.args, done.stdout, done.stderr)
    return json.loads(done.stdout)


Figures = dict[str, float]
"""One run of a script: a median (in seconds) per case."""


def alternating_runs(
    script: Path, arguments: Sequence[str], revision: str, runs: int
) -> tuple[list[Figures], list[Figures]]:
    """``runs`` runs of ``script`` on this checkout and as many on ``revision``, one after the
    other (this checkout, the revision, this checkout...), so that the machine's noise falls
    on both alike."""
    current: list[Figures] = []
    baseline: list[Figures] = []
    with revision_tree(revision) as tree:
        for number in range(runs):
            print(f"run {number + 1}/{runs}: this checkout, then {revision}", file=sys.stderr)
            current.append(run_json(script, arguments, ROOT))
            baseline.append(run_json(script, arguments, tree))
    return current, baseline


def medians(runs: Sequence[Figures]) -> Figures:
    """The median over ``runs`` of each case."""
    return {case: statistics.median(run[case] for run in runs) for case in runs[0]}


def duration(seconds: float) -> str:
    """``seconds`` in the unit that suits it (s, ms or µs)."""
    if abs(seconds) >= 1.0:
        return f"{seconds:.2f} s"
    if abs(seconds) >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.2f} µs"


def comparison_table(
    cases: Mapping[str, str], current: Figures, baseline: Figures, revision: str
) -> str:
    """A markdown table: per case (key: label), this checkout's median, the revision's and the
    ratio current/baseline."""
    lines = [f"| case | this checkout | {revision} | ratio |", "|---|---|---|---|"]
    for case, label in cases.items():
        now, then = current[case], baseline[case]
        ratio = f"{now / then:.2f}x" if then else "n/a"
        lines.append(f"| {label} | {duration(now)} | {duration(then)} | {ratio} |")
    return "\n".join(lines)


def load_average() -> str:
    """The 1-minute load average, for the record: the machine may be shared."""
    return f"{os.getloadavg()[0]:.2f}"


def compare(
    script: Path,
    arguments: Sequence[str],
    revision: str,
    *,
    runs: int,
    cases: Mapping[str, str],
    per_run: str,
) -> Figures:
    """Measure this checkout and ``revision`` alternately (:func:`alternating_runs`), print the
    command, the load and the table of :func:`comparison_table`, and return this checkout's
    medians. ``per_run`` says what the figure of one run is."""
    before = load_average()
    current, baseline = alternating_runs(script, arguments, revision, runs)
    now = medians(current)
    command = " ".join([f"python benchmarks/{script.name}", *sys.argv[1:]])
    print(
        f"`{command}` ({os.cpu_count()} cores, load average {before} at the start and "
        f"{load_average()} at the end; medians of {runs} runs of each side, alternating; "
        f"{per_run}):\n"
    )
    print(comparison_table(cases, now, medians(baseline), revision))
    print()
    return now
