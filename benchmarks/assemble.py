"""``Host.assemble`` on an unchanged registry against a fresh assembly of the same catalog.

The 5,468-tool SaaS catalog of ``../shared/data`` is loaded as a catalog toolset into a real
host. The baseline is what one assembly costs when the registry changed (a tool added and
removed between calls, so the split, the listing and the bridge are rebuilt); the measured case
is the same call with nothing changed, which the host answers from its cache. Run:

    python benchmarks/assemble.py [--rounds 200]

Budget: under 1 ms median on an unchanged registry (exit status 1 when over).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from hermes_core.config import Config
from hermes_core.host import Host
from hermes_core.paths import Environment
from hermes_core.tools import Tool

BUDGET_MS = 1.0
CATALOG = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "data"
    / "saas_openapi_catalog"
    / "catalog.json"
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--catalog", type=Path, default=CATALOG)
    options = parser.parse_args()
    if not options.catalog.exists():
        print(f"missing {options.catalog}: the shared data must sit beside the checkout")
        return 2
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        env = Environment(
            home=root / "home",
            cwd=root,
            variables={"HERMES_LOG_DIR": str(root / "logs"), "HERMES_CACHE_DIR": str(root)},
        )
        config = Config.model_validate({"tools": {"catalogs": [{"path": str(options.catalog)}]}})
        host = Host(config, env)
        host.start()
        try:
            session = host.new_session()
            probe = Tool("benchmark_probe", "Added and removed to change the registry.")
            fresh: list[float] = []
            cached: list[float] = []
            host.assemble(200_000, session)
            for _ in range(options.rounds):
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
    fresh_ms = statistics.median(fresh) * 1000
    cached_ms = statistics.median(cached) * 1000
    print(f"catalog: {assembly.deferred_count} deferred tools, tier {assembly.tier}")
    print("| case | median |")
    print("|---|---|")
    print(f"| assemble after a registry change | {fresh_ms:.3f} ms |")
    print(f"| assemble, registry unchanged | {cached_ms * 1000:.1f} µs |")
    print(f"| ratio | {fresh_ms / cached_ms:,.0f}x |")
    within = cached_ms < BUDGET_MS
    print("within budget" if within else f"OVER BUDGET ({BUDGET_MS} ms)")
    return 0 if within else 1


if __name__ == "__main__":
    sys.exit(main())
