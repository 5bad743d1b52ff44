"""A typo's correction in ``session_search`` against another revision's, side by side.

Writes the sessions of ``benchmarks/session_search.py`` (``--sessions``, the 20 hand-written
ones among fillers, and ``--vocabulary`` made-up words), indexes them once, then corrects
``--count`` words with this checkout's ``typos.closest`` and with ``--before``'s (its
``typos.py`` read with ``git show``, imported beside this one: both use this checkout's
``words.py``), each word with both, which goes first drawn at random. The words: a word the
sessions hold (made-up and hand-written, in turn) with a letter swapped with the next, dropped,
added or changed, a second edit on half of those of six letters or more, and one in ten a run
of letters nobody wrote (a word the corpus lacks). Prints the words corrected, those the two
revisions correct differently (the exit status is 1 if any), and each one's p50, p90 and p99
with the ratio. Run:

    python benchmarks/session_search_typos.py [--before main] [--count 3000] [--sessions 10000]
        [--vocabulary 1000000] [--seed 7]
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]

from session_search import made_up_words  # noqa: E402

from hermes_core.search._evaluation import percentile  # noqa: E402
from tests.memory.bundled import bundled  # noqa: E402
from tests.memory.session_corpus import write_corpus  # noqa: E402

LETTERS = "abcdefghijklmnopqrstuvwxyz"


def main() -> None:
    """Build, index, correct with both and compare; print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="main")
    parser.add_argument("--count", type=int, default=3000)
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--vocabulary", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=7)
    options = parser.parse_args()
    package = bundled("session_search").__name__
    after = importlib.import_module(f"{package}.typos")
    index_module = importlib.import_module(f"{package}.index")
    rng = random.Random(options.seed)
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch)
        before = _revision_module(package, options.before, home / "typos_before.py")
        write_corpus(home / "sessions", options.sessions)
        made_up_words(home / "sessions", options.vocabulary)
        index_module.SessionIndex(home / "session_search.db", home / "sessions").update()
        words = typos(_held_words(home / "sessions"), options.count, rng)
        connection = sqlite3.connect(home / "session_search.db")
        times: dict[str, list[float]] = {"before": [], "after": []}
        differ = []
        corrected = 0
        for word in words:
            order = [("before", before), ("after", after)]
            rng.shuffle(order)
            answers = {}
            for name, module in order:
                started = time.perf_counter()
                answers[name] = module.closest(connection, word)
                times[name].append((time.perf_counter() - started) * 1000.0)
            corrected += answers["after"] is not None
            if answers["before"] != answers["after"]:
                differ.append((word, answers["before"], answers["after"]))
        connection.close()
    print(f"{len(words)} words, {corrected} corrected, {len(differ)} corrected differently")
    for word, was, now in differ[:20]:
        print(f"  {word}: {options.before} {was}, this checkout {now}")
    for share in (50, 90, 99):
        was, now = percentile(times["before"], share), percentile(times["after"], share)
        print(
            f"p{share}: {options.before} {was:.2f} ms, this checkout {now:.2f} ms, {was / now:.1f}x"
        )
    sys.exit(1 if differ else 0)


def _revision_module(package: str, revision: str, path: Path) -> ModuleType:
    """``typos.py`` of ``revision``, imported as ``typos_before`` of the plugin's package."""
    source = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{revision}:plugins_builtin/session_search/typos.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"{package}.typos_before", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # a dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


def _held_words(directory: Path) -> tuple[list[str], list[str]]:
    """The words of letters the sessions hold (3 to 30 of them): made-up, hand-written."""
    made: set[str] = set()
    written: set[str] = set()
    for path in sorted(directory.glob("*.jsonl")):
        into = made if path.name.startswith("made-up") else written
        for line in path.read_text(encoding="utf-8").splitlines():
            text = json.loads(line).get("content")
            if isinstance(text, str):
                into.update(w for w in text.lower().split() if w.isalpha() and 3 <= len(w) <= 30)
    return sorted(made), sorted(written)


def typos(held: tuple[list[str], list[str]], count: int, rng: random.Random) -> list[str]:
    """``count`` misspelled words of ``held`` (in turn from each list that has words), one in
    ten a run of letters instead, all of three letters or more."""
    pools = [pool for pool in held if pool]
    words: list[str] = []
    while len(words) < count:
        if len(words) % 10 == 0:
            word = "".join(rng.choices(LETTERS, k=rng.randint(3, 12)))
        else:
            word = _edited(rng.choice(pools[len(words) % len(pools)]), rng)
            if len(word) >= 6 and rng.random() < 0.5:
                word = _edited(word, rng)
        if len(word) >= 3:
            words.append(word)
    return words


def _edited(word: str, rng: random.Random) -> str:
    letters = list(word)
    place = rng.randrange(len(letters) - 1)
    kind = rng.randrange(4)
    if kind == 0:
        letters[place], letters[place + 1] = letters[place + 1], letters[place]
    elif kind == 1:
        del letters[place]
    elif kind == 2:
        letters.insert(place, rng.choice(LETTERS))
    else:
        letters[place] = rng.choice(LETTERS)
    return "".join(letters)


if __name__ == "__main__":
    main()
