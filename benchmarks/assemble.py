"""``Host.assemble`` on an unchanged registry against a fresh assembly of the same catalog.

The 5,468-tool SaaS catalog of ``../shared/data`` is loaded as a catalog toolset into a real
host. The baseline is what one assembly costs when the registry changed (a tool added and
removed between calls, so the split, the listing and the bridge are rebuilt); the measured case
is the same call with nothing changed, which the host answers from its cache. Only the public
API is used, so the same script measures an earlier revision too. Run:

    python benchmarks/assemble.py [--rounds 200] [--baseline REV [--runs 5]]

Budget: under 1 ms median on an unchanged registry (exit status 1 when over). With
``--baseline REV`` this checkout and REV are each measured in ``--runs`` subprocesses, one after
the other, and a markdown table gives the medians and their ratio.
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

from hermes_core import Config, Environment, Host, Tool

BUDGET_MS = 1.0
CATALOG = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "data"
    / "saas_openapi_catalog"
    / "catalog.json"
)
CASES = {
    "fresh": "assemble after a registry change (split, listing, bridge rebuilt)",
    "cached": "assemble, registry unchanged (budget 1 ms)",
}


def measure(catalog: Path, rounds: int) -> tuple[Figures, str]:
    """The median of each case in seconds, and what was assembled."""
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        variables = {"HERMES_LOG_DIR": str(root / "logs"), "HERMES_CACHE_DIR": str(root)}
        if "HERMES_BUNDLED_PLUGINS" in os.environ:  # set by _baseline: the measured tree's plugins
            variables["HERMES_BUNDLED_PLUGINS"] = os.environ["HERMES_BUNDLED_PLUGINS"]
        env = Environment(home=root / "home", cwd=root, variables=variables)
        config = Config.model_validate({"tools": {"catalogs": [{"path": str(catalog)}]}})
        host = Host(config, env)
        host.start()
        try:
            session = host.new_session()
            probe = Tool("benchmark_probe", "Added and removed to change the registry.")
            fresh: list[float] = []
            cached: list[float] = []
            host.assemble(200_000, session)
            for _ in range(rounds):
                host.registry.register(probe, owner="benchmark")
                host.registry.unregister(probe.name)
                started = time.perf_counter()
                host.assemble(200_000, session)
                fresh.append(time.perf_counter() - started)
                started = time.perf_counter()
                assembly = host.assemble(200_000, session)
                cached.append(time.perf_counter() - started)
        finally:
            host.close()
    figures = {"fresh": statistics.median(fresh), "cached": statistics.median(cached)}
    return figures, f"{assembly.deferred_count} deferred tools, tier {assembly.tier}"


def verdict(cached: float) -> int:
    """Print whether ``cached`` (seconds) is within the budget; the exit status."""
    within = cached * 1000 < BUDGET_MS
    print("within budget" if within else f"OVER BUDGET ({BUDGET_MS} ms)")
    return 0 if within else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--catalog", type=Path, default=CATALOG)
    parser.add_argument("--baseline", metavar="REV", help="also measure revision REV")
    parser.add_argument("--runs", type=int, default=5, help="subprocess runs of each side")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if not options.catalog.exists():
        print(f"missing {options.catalog}: the shared data must sit beside the checkout")
        return 2
    if options.baseline is not None:
        arguments = ["--rounds", str(options.rounds), "--catalog", str(options.catalog)]
        now = compare(
            Path(__file__),
            [*arguments, "--json"],
            options.baseline,
            runs=options.runs,
            cases=CASES,
            per_run=f"the figure of a run is the median of {options.rounds} rounds",
        )
        return verdict(now["cached"])
    figures, assembled = measure(options.catalog, options.rounds)
    if options.json:
        print(json.dumps(figures))
        return 0
    fresh_ms, cached_ms = figures["fresh"] * 1000, figures["cached"] * 1000
    print(f"catalog: {assembled}")
    print("| case | median |")
    print("|---|---|")
    print(f"| assemble after a registry change | {fresh_ms:.3f} ms |")
    print(f"| assemble, registry unchanged | {cached_ms * 1000:.1f} µs |")
    print(f"| ratio | {fresh_ms / cached_ms:,.0f}x |")
    return verdict(figures["cached"])


if __name__ == "__main__":
    sys.exit(main())
