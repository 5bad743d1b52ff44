"""CPU time of naming where a plugin's code raised (``hermes_core._errors.raised_at``).

A plugin's hook that raises is reported with its file and line on every call it fails, so the
cost is paid per tool call while such a hook is enabled. Two errors of a plugin package in a
temporary folder: one raised at once (a few frames) and a ``RecursionError`` (about a thousand
frames of the plugin's one file). Prints the median CPU time (``time.process_time``) of each
over ``--repeat`` calls; run it at two revisions to compare (each with its own checkout on
``sys.path``):

    python benchmarks/plugin_error_location.py [--repeat 15]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import tempfile
import time
from pathlib import Path

from hermes_core._errors import raised_at

PLUGIN = """\
def recurse(n):
    return recurse(n + 1)


def divide(n):
    return 1 / n
"""


def _errors(folder: Path) -> dict[str, BaseException]:
    (folder / "__init__.py").write_text(PLUGIN, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("located_plugin", folder / "__init__.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    errors: dict[str, BaseException] = {}
    for name, call in (
        ("raised at once", lambda: module.divide(0)),
        ("RecursionError", lambda: module.recurse(0)),
    ):
        try:
            call()
        except (ZeroDivisionError, RecursionError) as error:
            errors[name] = error
    return errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    repeat = parser.parse_args().repeat
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "located_plugin"
        folder.mkdir()
        for name, error in _errors(folder).items():
            times = []
            for _ in range(repeat):
                start = time.process_time()
                where = raised_at(error, folder / "__init__.py")
                times.append(time.process_time() - start)
            assert where is not None
            assert where.startswith(str(folder)), where
            print(
                f"{name:16} {statistics.median(times) * 1e3:9.3f} ms   ({where.rsplit('/', 1)[-1]})"
            )


if __name__ == "__main__":
    main()
