"""``hermes acp`` in an install without the ``acp`` extra: the error every other command
missing an extra gives (``hermes run`` without ``openai``, ``hermes cron create`` without
``croniter``): one ``hermes: error:`` line naming the pip command, and status 2."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from hermes_core.testing._cli_in_process import InProcessCli


def test_hermes_acp_without_the_sdk_says_which_extra_to_install_as_hermes_errors_do(
    hermes_home: Path, hermes_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "acp", None)  # as if agent-client-protocol were absent
    cli = InProcessCli(tmp_path, home=hermes_home, work=hermes_project)

    done = cli.run("acp", ok=False)

    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        "hermes: error: hermes acp needs the Agent Client Protocol SDK: "
        "pip install 'hermes-core-agent[acp]'\n"
    )
    assert done.stdout == ""
