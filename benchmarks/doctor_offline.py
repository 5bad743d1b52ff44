"""Wall time of ``hermes doctor --offline`` against ``hermes config validate`` and the bare
interpreter, in one run.

In a temporary HERMES_HOME with the default configuration (the ``openai`` provider, no key set,
no MCP server), times as subprocesses, interleaved so drift hits every command alike:

- ``python -c pass`` (the baseline),
- ``hermes config validate``,
- ``hermes doctor --offline``,

and with ``--against OTHER/bin/hermes`` the same two commands of another install (an earlier
revision) in the same rounds. Prints each median, its ratio to the baseline and to this
install's ``config validate``.

    python benchmarks/doctor_offline.py [--repeat 10] [--against OTHER/bin/hermes]
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


def _timed(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - started) * 1000.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=10, help="Runs of each command.")
    parser.add_argument("--against", type=Path, help="Another install's hermes script.")
    options = parser.parse_args()

    hermes = [sys.executable, "-m", "hermes_core"]
    commands: dict[str, list[str]] = {"python -c pass": [sys.executable, "-c", "pass"]}
    for name, prefix in [("", hermes), (" (against)", [str(options.against)])]:
        if name and options.against is None:
            continue
        commands[f"config validate{name}"] = [*prefix, "config", "validate"]
        commands[f"doctor --offline{name}"] = [*prefix, "doctor", "--offline"]

    with tempfile.TemporaryDirectory() as home:
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("HERMES_", "OPENAI_", "ANTHROPIC_"))
        }
        env.update(HERMES_HOME=home, HERMES_CACHE_DIR=str(Path(home) / "cache"))
        for command in commands.values():  # warm: bytecode written, caches filled
            _timed(command, env)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for round_number in range(options.repeat):
            names = list(commands)
            for name in names if round_number % 2 else names[::-1]:
                times[name].append(_timed(commands[name], env))

    medians = {name: statistics.median(values) for name, values in times.items()}
    baseline = medians["python -c pass"]
    validate = medians["config validate"]
    print(f"{options.repeat} runs each, interleaved; medians (ms)\n")
    print("| command | median ms | x python -c pass | x config validate |")
    print("|---|---:|---:|---:|")
    for name, median in medians.items():
        print(f"| {name} | {median:.0f} | {median / baseline:.2f} | {median / validate:.2f} |")


if __name__ == "__main__":
    main()
