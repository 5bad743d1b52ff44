"""Latency of ``session_search`` over many stored sessions, against a bare FTS5 query.

Writes N sessions in the transcript format (default 10,000: the 20 hand-written ones of
``tests/memory/session_corpus.py`` among fillers), indexes them once (timed), then times the 20
hand-written questions, side by side in one process (``_paired.py``): the tool's search (the
sessions ranked, the current one left out, snippets) and the tool's whole call (the incremental
update that finds nothing new, then the search), each against a bare FTS5 query of the same
words (``SELECT rowid ... MATCH ? ORDER BY rank LIMIT 5``). Run:

    python benchmarks/session_search.py [--sessions 10000] [--rounds 10] [--write]

``--write`` replaces the section of docs/performance.md. The machine may be shared: compare
the ratios, measured in the same run, more than the milliseconds.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]

from _paired import cells, paired_times  # noqa: E402
from _report import write_section  # noqa: E402

from hermes_core.search._evaluation import percentile  # noqa: E402
from tests.memory.bundled import bundled  # noqa: E402
from tests.memory.session_corpus import TARGETS, write_corpus  # noqa: E402

HEADING = "## Session search"


def main() -> None:
    """Build, index and time; print the table (and write it with ``--write``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--write", action="store_true")
    options = parser.parse_args()
    # The plugin imports its index only when the tool runs: imported here by name.
    index_module = importlib.import_module(f"{bundled('session_search').__name__}.index")
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch)
        write_corpus(home / "sessions", options.sessions)
        index = index_module.SessionIndex(home / "session_search.db", home / "sessions")
        started = time.perf_counter()
        index.update()
        indexing = time.perf_counter() - started
        bare = sqlite3.connect(home / "session_search.db")

        def bare_query(question: str) -> object:
            match = index_module.fts_query(question)
            return bare.execute(
                "SELECT rowid FROM messages WHERE messages MATCH ? ORDER BY rank LIMIT 5",
                (match,),
            ).fetchall()

        def search(question: str) -> object:
            return index.search(question, 5, exclude="current")

        def tool_call(question: str) -> object:
            index.update(within=5.0)  # the tool's default plugins.entries.session_search
            return index.search(question, 5, exclude="current")

        questions = [target[2] for target in TARGETS]
        searched = paired_times(questions, options.rounds, {"search": search, "bare": bare_query})
        called = paired_times(questions, options.rounds, {"call": tool_call, "bare": bare_query})
        looked = []
        for _ in range(5):
            started = time.perf_counter()
            index.update()
            looked.append((time.perf_counter() - started) * 1000.0)
        bare.close()
        index.close()
    rows = [
        ("search (rank, snippets)", searched["search"], searched["bare"]),
        ("tool call (update within 5 s + search)", called["call"], called["bare"]),
        ("a full look at every transcript", looked, called["bare"]),
    ]
    lines = [
        HEADING,
        "",
        f"`python benchmarks/session_search.py --sessions {options.sessions} --rounds "
        f"{options.rounds}`: {options.sessions:,} sessions (2 messages each), indexed from "
        f"nothing in {indexing:.1f} s; the 20 hand-written questions x {options.rounds} "
        f"rounds, each timed side by side with a bare FTS5 query of the same words, in one "
        f"process, on a shared 2-core machine (load {os.getloadavg()[0]:.1f}).",
        "",
        "| what | p50 ms | p90 ms | p99 ms | bare FTS5 p50 ms | ratio of p50s |",
        "|---|---|---|---|---|---|",
    ]
    for name, times, baseline in rows:
        ratio = percentile(times, 50) / percentile(baseline, 50)
        p50_bare = f"{percentile(baseline, 50):.3f}"
        lines.append(f"| {name} | {' | '.join(cells(times))} | {p50_bare} | {ratio:.1f}x |")
    text = "\n".join(lines) + "\n"
    print(text)
    if options.write:
        write_section(HEADING, text)


if __name__ == "__main__":
    main()
