"""Cost of redacting a call's arguments for the activity log (``hermes_core._redaction.redact``).

Every dispatched call pays it once, on the arguments as the tool received them. Timed with the
process's CPU time (``time.process_time``), so other processes on a busy machine do not inflate
it; the best of several repeats is kept. Run:

    python benchmarks/redaction.py [--repeat 7]

It prints the time per call for typical arguments: a path, a shell command, a command holding a
credential, a to-do list, and files written with ``write_file`` (YAML, 4 kB and 26 kB of Python).
"""

from __future__ import annotations

import argparse
import time
import timeit
from pathlib import Path
from typing import Any

from hermes_core._redaction import redact

REPO = Path(__file__).resolve().parents[1]


def cases() -> dict[str, dict[str, Any]]:
    """Named arguments of typical calls."""
    python = (REPO / "hermes_core" / "_dispatch.py").read_text(encoding="utf-8")
    yaml = "db:\n  host: db.example\n  port: 5432\nname: demo\n" * 20
    return {
        "read_file path": {"path": "src/hermes_core/_dispatch.py", "offset": 10, "limit": 200},
        "terminal command": {"command": "git status && ls -la src/ | head -20", "timeout": 30},
        "terminal with a credential": {
            "command": "curl -H 'Authorization: Bearer abcdefghijklmnopqrstu' https://api.example"
        },
        "todo_list of 5": {
            "todos": [
                {"id": str(i), "content": f"write the docs for item {i}", "status": "pending"}
                for i in range(5)
            ]
        },
        "write_file YAML 1 kB": {"path": "config.yaml", "content": yaml},
        "write_file Python 4 kB": {"path": "x.py", "content": python[:4000]},
        f"write_file Python {len(python) // 1000} kB": {"path": "x.py", "content": python},
    }


def main(repeat: int) -> None:
    for name, arguments in cases().items():
        size = len(repr(arguments))
        number = max(20, 200_000 // (size + 50))
        best = min(
            timeit.repeat(
                lambda arguments=arguments: redact(arguments),
                number=number,
                repeat=repeat,
                timer=time.process_time,
            )
        )
        print(f"{name:28s} {best / number * 1e6:10.2f} µs/call")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="timed repeats (best is kept)")
    main(parser.parse_args().repeat)
