"""``hermes sessions list`` over many transcripts.

A fresh home gets ``--sessions`` conversations, each a header and ``--messages`` messages of
about 300 characters (the person's and the model's alternately, as :class:`Transcript`
writes them), all of one working directory, a tenth of them with a subagent's transcript
beside them. Each round times:

- ``conversations(store)``, the listing's reading, in this process (every file's start, its
  end for the latest header, its messages counted),
- ``hermes sessions list --all --json`` as a subprocess (the command's start included),
- ``--continue``'s search (:func:`resumed`) from a directory none of them is of: the worst
  case, every transcript's latest header read (from its ends) before it says there is none.

Run:

    python benchmarks/sessions_list.py [--sessions 1000] [--messages 20] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hermes_core._cli.resuming import ResumeError, resumed
from hermes_core.agent._conversations import conversations
from hermes_core.agent._transcripts import Transcript, TranscriptStore
from hermes_core.agent._wire import Message


def write_sessions(sessions: Path, count: int, messages: int, cwd: Path) -> None:
    """``count`` conversations of ``messages`` messages each in ``sessions``."""
    sessions.mkdir(parents=True)
    text = "A sentence of an ordinary conversation about the work at hand. " * 5
    for number in range(count):
        session = f"{number:032x}"
        transcript = Transcript(sessions / f"{session}.jsonl")
        transcript.start(session, model="bench-1", cwd=str(cwd))
        for index in range(messages):
            role = "user" if index % 2 == 0 else "assistant"
            transcript.add(Message(role, f"{index} {text}"))
        if number % 10 == 0:
            child = Transcript(sessions / f"c{number:031x}.jsonl")
            child.start(f"c{number:031x}", model="bench-1", parent=session, cwd=str(cwd))
            child.add(Message("user", "a subagent's goal"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--messages", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        home, work = root / "home", root / "work"
        work.mkdir()
        write_sessions(home / "sessions", args.sessions, args.messages, work)
        store = TranscriptStore(home / "sessions")
        variables = {**os.environ, "HERMES_HOME": str(home), "HOME": str(root / "user")}
        command = [sys.executable, "-m", "hermes_core", "sessions", "list", "--all", "--json"]
        reading, listing, continuing = [], [], []
        for _ in range(args.rounds):
            start = time.perf_counter()
            found = conversations(store)
            reading.append(time.perf_counter() - start)
            start = time.perf_counter()
            try:
                resumed(store, last=True, session=None, model="bench-1")
            except ResumeError:  # none of this directory: every header was read
                continuing.append(time.perf_counter() - start)
            start = time.perf_counter()
            subprocess.run(command, cwd=work, env=variables, capture_output=True, check=True)
            listing.append(time.perf_counter() - start)
    print(f"listed: {len(found)} conversations of {args.messages} messages")
    print("| what | median | min |")
    print("|---|---|---|")
    for name, times in (
        ("conversations(store)", reading),
        ("hermes sessions list --all --json", listing),
        ("--continue, none of this directory", continuing),
    ):
        print(f"| {name} | {statistics.median(times) * 1000:.0f} ms | {min(times) * 1000:.0f} ms |")


if __name__ == "__main__":
    main()
