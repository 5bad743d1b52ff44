"""Latency of ``session_search`` over many stored sessions, against a bare FTS5 query.

Writes N sessions in the transcript format (default 10,000: the 20 hand-written ones of
``tests/memory/session_corpus.py`` among fillers), indexes them once (timed), then times the 20
hand-written questions, side by side in one process (``_paired.py``): the tool's search (the
sessions ranked, the current one left out, snippets) and the tool's whole call (the incremental
update that finds nothing new, then the search), each against a bare FTS5 query of the same
words (``SELECT rowid ... MATCH ? ORDER BY rank LIMIT 5``); the search of the questions whose
words all matched against its ranking alone (the search less the check that each word matched
something); and the questions with a word
misspelled (two letters of its longest word swapped: the search corrects it), against the bare
query of the spelled question. With ``--vocabulary N``, sessions of N made-up words (letters
drawn by their English frequencies, 4 to 12 of them: denser than a real vocabulary, so the
misspelled words have more neighbours to weigh) are added, a vocabulary of about N terms. Run:

    python benchmarks/session_search.py [--sessions 10000] [--rounds 10] [--vocabulary 0] [--write]

``--write`` replaces the section of docs/performance.md. The machine may be shared: compare
the ratios, measured in the same run, more than the milliseconds.
"""

from __future__ import annotations

import argparse
import importlib
import os
import random
import re
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]

from _paired import cells, paired_times  # noqa: E402
from _report import write_section  # noqa: E402

from hermes_core.agent import Message, TranscriptStore  # noqa: E402
from hermes_core.search._evaluation import percentile  # noqa: E402
from tests.memory.bundled import bundled  # noqa: E402
from tests.memory.session_corpus import TARGETS, write_corpus  # noqa: E402

HEADING = "## Session search"


def main() -> None:
    """Build, index and time; print the table (and write it with ``--write``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--vocabulary", type=int, default=0)
    parser.add_argument("--write", action="store_true")
    options = parser.parse_args()
    # The plugin imports its index only when the tool runs: imported here by name.
    index_module = importlib.import_module(f"{bundled('session_search').__name__}.index")
    words_module = importlib.import_module(f"{bundled('session_search').__name__}.words")
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch)
        write_corpus(home / "sessions", options.sessions)
        made_up_words(home / "sessions", options.vocabulary)
        index = index_module.SessionIndex(home / "session_search.db", home / "sessions")
        started = time.perf_counter()
        index.update()
        indexing = time.perf_counter() - started
        bare = sqlite3.connect(home / "session_search.db")

        def bare_query(question: str) -> object:
            match = words_module.fts_query(question)
            return bare.execute(
                "SELECT rowid FROM messages WHERE messages MATCH ? ORDER BY rank LIMIT 5",
                (match,),
            ).fetchall()

        def search(question: str) -> object:
            return index.search(question, 5, exclude="current")

        def tool_call(question: str) -> object:
            index.update(within=5.0)  # the tool's default plugins.entries.session_search
            return index.search(question, 5, exclude="current")

        def ranked_alone(question: str) -> object:
            return index._ranked(words_module.fts_query(question), 5, "current")

        questions = [target[2] for target in TARGETS]
        misspelled = {misspelled_question(question): question for question in questions}

        def corrected(question: str) -> object:
            return index.find(question, 5, exclude="current")

        def bare_spelled(question: str) -> object:
            return bare_query(misspelled[question])

        searched = paired_times(questions, options.rounds, {"search": search, "bare": bare_query})
        held = [question for question in questions if not _unknown_words(index, question)]
        alone = paired_times(held, options.rounds, {"search": search, "ranked": ranked_alone})
        typos = paired_times(
            list(misspelled), options.rounds, {"corrected": corrected, "bare": bare_spelled}
        )
        fixed = sum(bool(index.find(question, 5).corrected) for question in misspelled)
        unheld = len(questions) - len(held)
        terms = (
            bare.execute(
                "CREATE VIRTUAL TABLE temp.vocabulary USING fts5vocab(main, messages, row)"
            )
            .execute("SELECT count(*) FROM temp.vocabulary")
            .fetchone()[0]
        )
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
        (
            f"search of the {len(held)} questions whose words all matched, against its ranking "
            "alone (in the bare column: the search less the check that each word matched)",
            alone["search"],
            alone["ranked"],
        ),
        (
            f"search, a word of each question misspelled ({fixed} of {len(misspelled)} corrected)",
            typos["corrected"],
            typos["bare"],
        ),
        ("tool call (update within 5 s + search)", called["call"], called["bare"]),
        ("a full look at every transcript", looked, called["bare"]),
    ]
    lines = [
        HEADING,
        "",
        f"`python benchmarks/session_search.py --sessions {options.sessions} --rounds "
        f"{options.rounds} --vocabulary {options.vocabulary}`: {options.sessions:,} sessions "
        f"(2 messages each) and {options.vocabulary:,} made-up words, a vocabulary of "
        f"{terms:,} terms, indexed from "
        f"nothing in {indexing:.1f} s; the 20 hand-written questions x {options.rounds} "
        f"rounds ({unheld} of them holding a word no conversation holds, which the search "
        f"tries to correct), each timed side by side with a bare FTS5 query of the same words, "
        f"in one "
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


def _unknown_words(index: object, question: str) -> bool:
    """Whether a word of ``question`` matched nothing (corrected or not)."""
    found = index.find(question, 5)  # type: ignore[attr-defined]
    return bool(found.corrected or found.unknown)


def misspelled_question(question: str) -> str:
    """``question`` with two letters in the middle of its longest word swapped."""
    word = max(re.findall(r"[a-z]+", question), key=len)
    middle = len(word) // 2
    wrong = word[: middle - 1] + word[middle] + word[middle - 1] + word[middle + 1 :]
    return question.replace(word, wrong, 1)


def made_up_words(directory: Path, count: int) -> None:
    """Sessions holding ``count`` made-up words (most of them different), 400 a message."""
    rng = random.Random(11)
    letters = "etaoinshrdlcumwfgypbvkjxqz"
    weights = [12, 9, 8, 7, 7, 6, 6, 6, 5, 4, 4, 3, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1]
    store = TranscriptStore(directory)
    for number in range(0, count, 4000):
        transcript = store.open(f"made-up-{number}")
        transcript.start(f"made-up-{number}", model="fake-1")
        for start in range(number, min(number + 4000, count), 400):
            words = (
                "".join(rng.choices(letters, weights, k=rng.randint(4, 12)))
                for _ in range(min(400, count - start))
            )
            transcript.add(Message("user", " ".join(words)))


if __name__ == "__main__":
    main()
