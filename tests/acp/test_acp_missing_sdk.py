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


def test_hermes_acp_with_another_minor_version_of_the_sdk_says_which_it_needs(
    hermes_home: Path, hermes_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The extra pins agent-client-protocol<0.13 (its minor versions change the schema); one
    # upgraded past it was imported as if it were the one hermes speaks.
    site = tmp_path / "site"
    (site / "acp").mkdir(parents=True)
    (site / "acp" / "__init__.py").write_text("", encoding="utf-8")
    info = site / "agent_client_protocol-0.13.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: agent-client-protocol\nVersion: 0.13.0\n", encoding="utf-8"
    )
    for name in [name for name in sys.modules if name.split(".")[0] == "acp"]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(site))
    cli = InProcessCli(tmp_path, home=hermes_home, work=hermes_project)

    done = cli.run("acp", ok=False)

    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        "hermes: error: hermes acp speaks the Agent Client Protocol SDK 0.12, not the "
        "agent-client-protocol 0.13.0 installed: pip install 'hermes-core-agent[acp]'\n"
    )
    assert done.stdout == ""
