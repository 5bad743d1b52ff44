"""Runs one script for ``execute_code``, in the child process: ``python runner.py DIRECTORY``.

``DIRECTORY`` holds ``script.py`` and the generated ``hermes_tools.py``. The script runs as
``__main__``; when it raises, its traceback (without this file's frame) goes to stderr and to
``DIRECTORY/traceback.txt``, and the exit status is 1. SIGTERM ends the script as ``sys.exit``
does, so what it printed is flushed.
"""

# Runs in the script's interpreter (any Python from 3.8): the standard library only.

from __future__ import annotations

import linecache
import os
import signal
import sys
import traceback
from types import FrameType

SCRIPT_NAME = "<script>"


def _stop(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def _fail(directory: str, text: str) -> None:
    sys.stderr.write(text)
    with open(os.path.join(directory, "traceback.txt"), "w", encoding="utf-8") as handle:
        handle.write(text)
    sys.exit(1)


def main() -> None:
    directory = sys.argv[1]
    sys.path[0] = directory  # hermes_tools, not this file's directory
    sys.argv = [SCRIPT_NAME]
    signal.signal(signal.SIGTERM, _stop)
    with open(os.path.join(directory, "script.py"), encoding="utf-8") as handle:
        source = handle.read()
    # Tracebacks show the script's lines under a short name, not a temporary path.
    linecache.cache[SCRIPT_NAME] = (len(source), None, source.splitlines(True), SCRIPT_NAME)
    try:
        code = compile(source, SCRIPT_NAME, "exec")
    except SyntaxError as exc:
        _fail(directory, "".join(traceback.format_exception_only(type(exc), exc)))
        return
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    try:
        exec(code, namespace)
    except SystemExit:
        raise
    except BaseException as exc:
        tb = exc.__traceback__.tb_next if exc.__traceback__ is not None else None
        _fail(directory, "".join(traceback.format_exception(type(exc), exc, tb)))


if __name__ == "__main__":
    main()
