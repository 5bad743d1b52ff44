"""The conformance suite this session runs is the one the issue names, on Node 22."""

from __future__ import annotations

import subprocess

from conformance_runner import BIN_DIR, NODE_VERSION, conformance_bin, listed_scenarios


def test_the_suite_runs_on_node_22_and_lists_the_auth_scenarios() -> None:
    conformance_bin()
    node = subprocess.run(
        [str(BIN_DIR / "node"), "--version"], capture_output=True, text=True, check=True
    )
    assert node.stdout.startswith(f"v{NODE_VERSION}."), node.stdout
    # The 14 auth scenarios of the current spec (2025-11-25) that issue 28 requires.
    assert len(listed_scenarios("client", "auth/")) == 14
