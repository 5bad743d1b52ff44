"""Instructions of one warm ``hermes tools search``, this install against another, in one run.

Wall times of a start move by tens of percent with the neighbours' load on a shared machine;
the instructions a start executes do not (two runs of one install differ by about 1 %). This
script builds ``benchmarks/startup.py``'s home (the 5,468-tool SaaS catalog and the five
servers of the README tour), warms each install's own cache, then counts the user-space
instructions of ``hermes tools search 'create issue'`` under ``valgrind --tool=callgrind``,
alternating the installs. ``OPENBLAS_NUM_THREADS=1``: numpy's idle BLAS threads would add 4 to
41 M, varying by run.

``--disable NAME ...`` adds a third case: this install with those bundled plugins in
``plugins.disabled``, to compare like for like with an install that does not ship them.

    python benchmarks/startup_instructions.py --against OTHER/bin/hermes [--runs 2]
        [--disable anthropic brave ...] [--catalog PATH]

Needs valgrind, node and the npm servers of ``.cache/npm`` (noxfile.py).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from startup import CATALOG, build_servers

QUERY = "create issue"


def instructions(hermes: str, env: dict[str, str]) -> int:
    """The instructions callgrind collects over one ``hermes tools search``."""
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", hermes]
    answer = subprocess.run(
        [*command, "tools", "search", QUERY], env=env, capture_output=True, text=True, check=True
    )
    line = next(line for line in answer.stderr.splitlines() if "Collected :" in line)
    return int(line.rsplit(":", 1)[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", required=True, metavar="OTHER/bin/hermes")
    parser.add_argument("--runs", type=int, default=2, help="counted runs of each case")
    parser.add_argument("--disable", nargs="*", default=[], metavar="PLUGIN")
    parser.add_argument("--catalog", type=Path, default=CATALOG)
    options = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("needs valgrind (apt-get install valgrind)")
    root = Path(tempfile.mkdtemp(prefix="hermes-instructions-"))
    env = build_servers(root, options.catalog)
    this = str(Path(sys.executable).with_name("hermes"))
    cases = {"this install": (this, env), "--against": (options.against, env)}
    if options.disable:
        home = root / "home-disabled" / ".hermes"
        shutil.copytree(env["HERMES_HOME"], home)
        config = json.loads((home / "config.yaml").read_text(encoding="utf-8"))
        config["plugins"] = {"disabled": options.disable}
        (home / "config.yaml").write_text(json.dumps(config), encoding="utf-8")
        disabled = dict(env, HERMES_HOME=str(home), HOME=str(home.parent))
        cases["this install, --disable"] = (this, disabled)
    environments = {
        name: dict(
            case_env, HERMES_CACHE_DIR=str(root / f"cache-{index}"), OPENBLAS_NUM_THREADS="1"
        )
        for index, (name, (_, case_env)) in enumerate(cases.items())
    }
    for name, (hermes, _) in cases.items():
        for _ in range(2):  # the first starts the servers and writes the caches
            subprocess.run(
                [hermes, "tools", "search", QUERY],
                env=environments[name],
                capture_output=True,
                check=True,
            )
    counts: dict[str, list[int]] = {name: [] for name in cases}
    for _ in range(options.runs):
        for name, (hermes, _) in cases.items():
            counts[name].append(instructions(hermes, environments[name]))
    base = statistics.median(counts["--against"])
    print(f"warm `hermes tools search {QUERY!r}`, instructions (callgrind), {options.runs} runs")
    print("| case | runs, M | median, M | x --against |")
    print("|---|---|---|---|")
    for name, values in counts.items():
        middle = statistics.median(values)
        runs = ", ".join(f"{value / 1e6:,.0f}" for value in values)
        print(f"| {name} | {runs} | {middle / 1e6:,.0f} | {middle / base:.3f} |")
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
