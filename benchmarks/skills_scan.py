"""The skills folder's scan: 100 skills side by side against 100 in 10 category folders.

A real home (``$HERMES_HOME/skills``, the user's home directory, a project as the working
directory) gets 100 skills, each a ``SKILL.md`` with a name and a description, either directly
in the skills folder (``skills/<name>/SKILL.md``) or ten to a category folder
(``skills/<category>/<name>/SKILL.md``). Each round writes them into fresh folders and times:

- the first scan, ``load_skills`` (every front matter parsed: the parsed skills are kept by
  folder and text, so a fresh folder is a first read),
- the same scan again (the parsed skills kept),
- ``skills_state``, the stat-only look that decides whether the system prompt's skills index
  is made again (the files' times set back past its settling delay, as a skill at rest).

Only the public API of ``hermes_core._skills`` is used, so the same script measures an earlier
revision too. A revision before category folders reads none: it reports each category as
misplaced, so its category figures are what that costs, not a scan of 100 skills. Run:

    python benchmarks/skills_scan.py [--skills 100] [--categories 10] [--rounds 20]
                                     [--baseline REV [--runs 5]]

With ``--baseline REV`` this checkout and REV are each measured in ``--runs`` subprocesses,
one after the other, and a markdown table gives the medians and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _baseline import Figures, compare

from hermes_core import Environment
from hermes_core._skills import load_skills, skills_state

CASES = {
    "flat_scan": "flat: first scan (load_skills)",
    "flat_rescan": "flat: scan again (parsed skills kept)",
    "flat_state": "flat: skills_state",
    "category_scan": "categories: first scan (load_skills)",
    "category_rescan": "categories: scan again (parsed skills kept)",
    "category_state": "categories: skills_state",
}
SETTLED_AGO = 60.0
"""How long ago the written files are said to have changed: past skills_state's delay."""


def write_skills(root: Path, count: int, categories: int) -> None:
    """``count`` skills under ``root``, spread over ``categories`` folders (flat with 0)."""
    past = time.time() - SETTLED_AGO
    body = "An instruction line of the skill's body.\n" * 20
    for number in range(count):
        name = f"skill-{number:03d}"
        parent = root / f"category-{number % categories:02d}" if categories else root
        folder = parent / name
        folder.mkdir(parents=True)
        skill = folder / "SKILL.md"
        skill.write_text(
            f"---\nname: {name}\ndescription: Does task number {number} step by step, "
            f"with the files beside it.\nmetadata:\n  version: 1\n---\n\n# {name}\n\n{body}",
            encoding="utf-8",
        )
        os.utime(skill, (past, past))


def measure(count: int, categories: int, rounds: int) -> tuple[Figures, str]:
    """The median of each case in seconds, and how many skills each layout loaded."""
    times: dict[str, list[float]] = {case: [] for case in CASES}
    loaded: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        # A layout's rounds all before the other's: a revision reading the categories' skills
        # keeps more in memory than one that does not, which should not weigh on flat's.
        for layout, groups in (("flat", 0), ("category", categories)):
            for number in range(rounds):
                user = base / f"{layout}-{number}" / "user"
                project = base / f"{layout}-{number}" / "project"
                project.mkdir(parents=True)
                env = Environment(home=user / ".hermes", cwd=project, user_home=user)
                write_skills(env.skills_dir, count, groups)
                started = time.perf_counter()
                skills, _ = load_skills(env.skills_dir, env)
                times[f"{layout}_scan"].append(time.perf_counter() - started)
                started = time.perf_counter()
                load_skills(env.skills_dir, env)
                times[f"{layout}_rescan"].append(time.perf_counter() - started)
                started = time.perf_counter()
                state = skills_state(env.skills_dir, env)
                times[f"{layout}_state"].append(time.perf_counter() - started)
                if state is None:
                    raise SystemExit("skills_state could not vouch for settled skills")
                loaded[layout] = len(skills)
    figures = {case: statistics.median(values) for case, values in times.items()}
    return figures, f"loaded: {loaded['flat']} flat, {loaded['category']} in categories"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=100)
    parser.add_argument("--categories", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--baseline", metavar="REV", help="also measure revision REV")
    parser.add_argument("--runs", type=int, default=5, help="subprocess runs of each side")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    arguments = ["--skills", str(options.skills), "--categories", str(options.categories)]
    arguments += ["--rounds", str(options.rounds)]
    if options.baseline is not None:
        compare(
            Path(__file__),
            [*arguments, "--json"],
            options.baseline,
            runs=options.runs,
            cases=CASES,
            per_run=f"the figure of a run is the median of {options.rounds} rounds, each on "
            "fresh folders",
        )
        return 0
    figures, loaded = measure(options.skills, options.categories, options.rounds)
    if options.json:
        print(json.dumps(figures))
        return 0
    print(loaded)
    print("| case | median |")
    print("|---|---|")
    for case, label in CASES.items():
        print(f"| {label} | {figures[case] * 1000:.3f} ms |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
