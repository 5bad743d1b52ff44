"""Start-up time of the ``hermes`` command, against the bare interpreter, in one run.

Builds 50 plugins spread over the five sources (bundled, user, project, pip, Nix) in a temporary
directory, enables half of them, then times as subprocesses (wall clock, N repetitions,
interleaved so drift hits every command alike):

- ``python -c pass`` (the baseline),
- ``hermes --version``,
- ``hermes plugins list``.

Prints the median and the ratio to the baseline of each, and whether each ``hermes`` command stays
within the budget (300 ms median). Exit status 1 when one does not.

    python benchmarks/startup.py [--repeat 20] [--budget-ms 300]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hermes_core.testing import make_nix_store, write_dir_plugin, write_distribution

PLUGIN_CODE = """
from hermes_core.hookspecs import hookimpl

@hookimpl
def hermes_session_start(session):
    pass
"""
PER_SOURCE = 10


def build(root: Path) -> dict[str, str]:
    """50 plugins over the five sources; returns the environment variables to run with."""
    home = root / "home" / ".hermes"
    project = root / "project"
    bundled = root / "bundled"
    site = root / "site-packages"
    for directory in (home, project, bundled, site):
        directory.mkdir(parents=True)
    store = make_nix_store(root / "nix" / "store")
    enabled: list[str] = []
    for index in range(PER_SOURCE):
        kind = {"kind": "backend"} if index % 2 == 0 else {}
        write_dir_plugin(bundled, f"bundled-{index}", PLUGIN_CODE, manifest=kind)
        write_dir_plugin(home / "plugins", f"user-{index}", PLUGIN_CODE)
        write_dir_plugin(project / ".hermes" / "plugins", f"project-{index}", PLUGIN_CODE)
        write_distribution(
            site,
            f"hermes-pip-{index}",
            entry_points={f"pip-{index}": f"pip_plugin_{index}"},
            files={f"pip_plugin_{index}.py": PLUGIN_CODE},
        )
        if index < PER_SOURCE // 2:
            store.add_dir_plugin(f"nix-{index}", PLUGIN_CODE)
        else:
            store.add_distribution(
                f"hermes-nix-{index}",
                entry_points={f"nix-{index}": f"nix_plugin_{index}"},
                files={f"nix_plugin_{index}.py": PLUGIN_CODE},
            )
        if index % 2 == 1:
            enabled += [f"user-{index}", f"project-{index}", f"pip-{index}", f"nix-{index}"]
    lines = "".join(f"    - {name}\n" for name in enabled)
    (home / "config.yaml").write_text(f"plugins:\n  enabled:\n{lines}", encoding="utf-8")
    return {
        "PATH": os.defpath,
        "HOME": str(home.parent),
        "HERMES_HOME": str(home),
        "HERMES_BUNDLED_PLUGINS": str(bundled),
        "HERMES_ENABLE_PROJECT_PLUGINS": "1",
        "HERMES_NIX_PLUGINS": str(store.path),
        "PYTHONPATH": str(site),
    }


def hermes_command() -> list[str]:
    """The installed ``hermes`` script beside this interpreter, else ``python -m hermes_core``."""
    script = Path(sys.executable).with_name("hermes")
    return [str(script)] if script.exists() else [sys.executable, "-m", "hermes_core"]


def time_once(command: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(command, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=20, help="runs per command (default 20)")
    parser.add_argument("--budget-ms", type=float, default=300.0, help="median budget")
    options = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="hermes-startup-"))
    try:
        env = build(root)
        cwd = root / "project"
        hermes = hermes_command()
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "hermes --version": [*hermes, "--version"],
            "hermes plugins list": [*hermes, "plugins", "list"],
        }
        listing = subprocess.run(
            [*hermes, "plugins", "list", "--json"],
            env=env,
            cwd=cwd,
            capture_output=True,
            text=True,
            check=True,
        )
        shown = listing.stdout.count('"name"')
        for command in commands.values():  # warm the file cache and .pyc files
            time_once(command, env, cwd)
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(options.repeat):
            for name, command in commands.items():
                samples[name].append(time_once(command, env, cwd))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    baseline = statistics.median(samples["python -c pass"])
    print(f"{shown} plugins listed; {options.repeat} runs each; wall time of a subprocess\n")
    print(f"{'command':<22}{'median ms':>10}{'min ms':>9}{'max ms':>9}{'x baseline':>12}  budget")
    over = False
    for name, values in samples.items():
        median = statistics.median(values)
        verdict = ""
        if name != "python -c pass":
            within = median <= options.budget_ms
            over = over or not within
            verdict = f"{'ok' if within else 'OVER'} ({options.budget_ms:.0f} ms)"
        print(
            f"{name:<22}{median:>10.1f}{min(values):>9.1f}{max(values):>9.1f}"
            f"{median / baseline:>12.2f}  {verdict}"
        )
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
