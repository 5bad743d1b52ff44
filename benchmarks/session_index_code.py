"""Indexing time of ``session_search`` over code-heavy transcripts, against another revision.

Tool outputs full of camelCase identifiers are what the index's word forms (identifiers cut at
their case seams, ``ß``'s ``ss`` spellings) cost the most on. Writes S sessions of 4 tool
messages of about 4,000 characters of generated code each (a fixed seed), then times one
``SessionIndex.update()`` over them (a fresh index each round). With ``--baseline REV`` this
checkout and REV run alternately in subprocesses (``_baseline.py``). Run:

    python benchmarks/session_index_code.py [--sessions 500] [--rounds 3]
        [--baseline REV [--runs 3]]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "benchmarks")]

from _baseline import compare  # noqa: E402

from hermes_core.agent import Message, TranscriptStore  # noqa: E402

PARTS = ("parse", "config", "load", "settings", "http", "server", "user", "id", "get", "value")


def _plugin_index() -> object:
    """The measured tree's bundled ``session_search`` index module (``HERMES_BUNDLED_PLUGINS``
    when set by ``_baseline``, else this checkout's), imported by its directory."""
    plugins = Path(os.environ.get("HERMES_BUNDLED_PLUGINS", REPO / "plugins_builtin"))
    directory = plugins / "session_search"
    spec = importlib.util.spec_from_file_location(
        "bench_session_search",
        directory / "__init__.py",
        submodule_search_locations=[str(directory)],
    )
    assert spec is not None
    assert spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = package
    spec.loader.exec_module(package)
    return importlib.import_module(f"{spec.name}.index")


def _code(rng: random.Random) -> str:
    def name() -> str:
        words = rng.sample(PARTS, rng.randint(2, 4))
        return words[0] + "".join(word.title() for word in words[1:])

    lines: list[str] = []
    while sum(map(len, lines)) < 4000:
        lines.append(f"const {name()} = await {name()}({name()}, {name()});")
    return "\n".join(lines)


def measure(sessions: int, rounds: int) -> dict[str, float]:
    """The median seconds of one update over ``sessions`` code-heavy sessions."""
    index_module: object = _plugin_index()
    times: list[float] = []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as scratch:
            home = Path(scratch)
            rng = random.Random(7)
            store = TranscriptStore(home / "sessions")
            for number in range(sessions):
                transcript = store.open(f"s{number}")
                transcript.start(f"s{number}", model="m")
                for _ in range(4):
                    transcript.add(Message("tool", _code(rng), tool_call_id="c", name="read"))
            index = index_module.SessionIndex(home / "session_search.db", home / "sessions")  # type: ignore[attr-defined]
            started = time.perf_counter()
            index.update()
            times.append(time.perf_counter() - started)
            index.close()
    return {"update": statistics.median(times)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", metavar="REV", help="also measure revision REV")
    parser.add_argument("--runs", type=int, default=3, help="subprocess runs of each side")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.baseline is None:
        figures = measure(options.sessions, options.rounds)
        print(json.dumps(figures) if options.json else f"update: {figures['update']:.3f} s")
        return
    compare(
        Path(__file__),
        ["--sessions", str(options.sessions), "--rounds", str(options.rounds), "--json"],
        options.baseline,
        runs=options.runs,
        cases={"update": f"index {options.sessions * 4:,} code tool outputs of ~4,000 characters"},
        per_run=f"the figure of a run is the median of {options.rounds} fresh indexes",
    )


if __name__ == "__main__":
    main()
