"""What hermes writes on its own (the activity log, caches, the user's transcripts) while its
home lies inside the project (``HERMES_HOME=./.hermes``: a home committed into a repository by
accident, or one a hostile clone planted) and the project gate is closed: nothing lands in the
project's tree, where it could be committed and pushed; it is kept in that home's own folder in
the user's ``~/.hermes/projects/``. The real ``hermes`` as a subprocess, with neither
``HERMES_LOG_DIR`` nor ``HERMES_CACHE_DIR`` set (the defaults), the bundled ``openai`` provider
against the test kit's ``FakeModelServer``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_core._paths import home_tag
from hermes_core.testing import FakeModelServer, FakeToolCall, FakeTurn, HermesCli

pytestmark = [pytest.mark.subprocess, pytest.mark.slow]  # the OpenAI SDK's import


def tree(folder: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in folder.rglob("*")
        if path.is_file()
    }


def project_home(tmp_path: Path) -> tuple[HermesCli, Path]:
    """A cloned repository with a committed ``.hermes`` home (its config, not read while the
    gate is closed) and a file the model reads."""
    repo = tmp_path / "repo"
    (repo / ".hermes").mkdir(parents=True)
    (repo / ".hermes" / "config.yaml").write_text("plugins: {}\n", encoding="utf-8")
    (repo / "notes.txt").write_text("deploy on Fridays\n", encoding="utf-8")
    cli = HermesCli(tmp_path, home=repo / ".hermes", work=repo)
    return cli, repo


def variables(cli: HermesCli, server: FakeModelServer, gate: bool = False) -> dict[str, str]:
    config = cli.root / "mine.yaml"
    model = {"provider": "openai", "model": "fake", "base_url": server.openai_base_url}
    config.write_text(json.dumps({"model": model}), encoding="utf-8")
    extra = {"HERMES_ENABLE_PROJECT_PLUGINS": "1"} if gate else {}
    env = cli.variables(HERMES_CONFIG=str(config), OPENAI_API_KEY="k", **extra)
    del env["HERMES_LOG_DIR"], env["HERMES_CACHE_DIR"]  # the defaults: under the home
    return env


def test_with_the_gate_closed_nothing_new_lands_in_a_project_home(tmp_path: Path) -> None:
    cli, repo = project_home(tmp_path)
    before = tree(repo)
    read = FakeToolCall("read_file", {"path": "notes.txt"})
    remember = FakeToolCall("memory", {"action": "add", "target": "memory", "content": "Friday"})
    turns = [FakeTurn(tool_calls=[read, remember]), FakeTurn(text="On Fridays.")]
    with FakeModelServer(turns) as server:
        env = variables(cli, server)
        cli.run("tools", "call", "read_file", '{"path": "notes.txt"}', env=env)
        cli.run("run", "When do we deploy?", env=env)
        again = FakeModelServer([FakeTurn(text="You asked when we deploy.")])
    assert tree(repo) == before
    own = cli.user_home / ".hermes" / "projects" / home_tag(cli.home)
    logged = (own / "logs" / "activity.jsonl").read_text(encoding="utf-8")
    assert logged.count('"read_file"') == 2  # the user's own record, out of the repository
    (transcript,) = (own / "sessions").glob("*.jsonl")
    assert "On Fridays." in transcript.read_text(encoding="utf-8")
    with again:  # the user's own conversation is the user's: taken up again
        cli.run("run", "--continue", "What did I ask?", env=variables(cli, again))
        sent = json.dumps(again.requests[0].body["messages"])
    assert "When do we deploy?" in sent
    assert tree(repo) == before


def test_with_the_gate_open_a_project_home_is_the_home_hermes_writes_in(tmp_path: Path) -> None:
    cli, _ = project_home(tmp_path)
    with FakeModelServer([FakeTurn(text="Hi.")]) as server:
        env = variables(cli, server, gate=True)
        cli.run("tools", "call", "read_file", '{"path": "notes.txt"}', env=env)
        cli.run("run", "Hello", env=env)
    assert (cli.home / "logs" / "activity.jsonl").is_file()
    assert list((cli.home / "sessions").glob("*.jsonl"))
    assert not (cli.user_home / ".hermes").exists()


def test_with_the_gate_closed_the_users_secrets_are_kept_out_of_a_project_home(
    tmp_path: Path,
) -> None:
    """The token of ``hermes serve``, the MCP servers' sign-ins and the connectors' are the
    user's credentials: written in the repository's tree, a push would publish them."""
    cli, repo = project_home(tmp_path)
    before = tree(repo)
    with FakeModelServer([]) as server:
        token = cli.run("serve", "token", env=variables(cli, server)).stdout.strip()
    assert tree(repo) == before
    own = cli.user_home / ".hermes" / "projects" / home_tag(cli.home)
    assert (own / "serve-token").read_text(encoding="utf-8").strip() == token
