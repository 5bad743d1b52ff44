"""``HERMES_HOME`` isolates hermes: with it set, everything hermes writes (tool manifests,
indexes, the activity log with every call's arguments, the MCP servers' logs) is under it, and
two homes never share a log file, not even when ``HERMES_LOG_DIR`` names one directory for both.

Each test runs the real ``hermes`` command with ``HOME`` and the ``XDG_*`` directories pointing
into a temporary user home, ``HERMES_HOME`` elsewhere, and the toolbox MCP server of
tests/mcp/servers as a real stdio child process.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from hermes_core.testing import HermesCli
from hermes_core.testing._cli_in_process import InProcessCli

pytestmark = pytest.mark.subprocess

TOOLBOX = Path(__file__).resolve().parent / "mcp" / "servers" / "toolbox.py"
ECHO = "mcp__box__echo"


def box_server(label: str) -> dict[str, object]:
    """The toolbox server, named ``box``, writing ``started for LABEL`` to its standard error
    first (so its log file says which home started it)."""
    script = f"echo 'started for {label}' >&2; exec {shlex.quote(sys.executable)} {TOOLBOX}"
    return {"command": "/bin/sh", "args": ["-c", script]}


def user_variables(cli: HermesCli, **extra: str) -> dict[str, str]:
    """The environment of a user whose ``HOME`` and XDG directories are under ``user_home``,
    with ``HERMES_HOME`` set and no ``HERMES_CACHE_DIR`` / ``HERMES_LOG_DIR`` (then ``extra``)."""
    variables = cli.variables()
    del variables["HERMES_CACHE_DIR"], variables["HERMES_LOG_DIR"]
    user = cli.user_home
    variables |= {
        "XDG_CACHE_HOME": str(user / ".cache"),
        "XDG_STATE_HOME": str(user / ".local" / "state"),
        "XDG_DATA_HOME": str(user / ".local" / "share"),
        "XDG_CONFIG_HOME": str(user / ".config"),
    }
    return variables | extra


def files_under(root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in root.rglob("*") if not path.is_dir())


def use_the_box(cli: HermesCli, env: dict[str, str], text: str) -> None:
    """A ``tools call`` of the box's echo with ``text``, then a ``tools search``."""
    called = cli.run("tools", "call", ECHO, json.dumps({"text": text}), env=env)
    assert text in called.stdout
    found = cli.json("tools", "search", "echo the text back", "--json", env=env)
    assert ECHO in [name for query in found["results"] for name in query["matches"]]


def activity(log: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def test_with_hermes_home_set_nothing_is_written_outside_it(tmp_path: Path) -> None:
    cli = InProcessCli(tmp_path / "one")
    cli.user_home.mkdir()
    cli.config.write_text(json.dumps({"mcp_servers": {"box": box_server("one")}}))
    env = user_variables(cli)

    use_the_box(cli, env, "a secret argument")

    assert files_under(cli.user_home) == []
    assert files_under(cli.work) == []
    written = files_under(cli.home)
    assert "logs/activity.jsonl" in written, written
    assert "logs/mcp-box.log" in written, written
    assert any(name.startswith("cache/mcp/box.") for name in written), written
    calls = activity(cli.home / "logs" / "activity.jsonl")
    assert [call["arguments"] for call in calls if call["name"] == ECHO] == [
        {"text": "a secret argument"}
    ]
    assert "started for one" in (cli.home / "logs" / "mcp-box.log").read_text(encoding="utf-8")
    # Nothing beside the home, the project and the user's home either.
    assert sorted(path.name for path in cli.root.iterdir()) == [
        "hermes-home",
        "project",
        "user-home",
    ]


def test_hermes_cache_dir_and_hermes_log_dir_still_say_where(tmp_path: Path) -> None:
    cli = InProcessCli(tmp_path)
    cli.user_home.mkdir()
    cli.config.write_text(json.dumps({"mcp_servers": {"box": box_server("one")}}))
    cache, logs = tmp_path / "elsewhere-cache", tmp_path / "elsewhere-logs"
    env = user_variables(cli, HERMES_CACHE_DIR=str(cache), HERMES_LOG_DIR=str(logs))

    use_the_box(cli, env, "hello")

    assert files_under(cli.user_home) == []
    assert not (cli.home / "cache").exists()
    assert not (cli.home / "logs").exists()
    assert any(name.startswith("mcp/box.") for name in files_under(cache))
    logged = files_under(logs)
    assert [Path(name).name for name in logged] == ["activity.jsonl", "mcp-box.log"], logged


@pytest.mark.parametrize("shared_log_dir", [False, True], ids=["own-log-dirs", "one-log-dir"])
def test_two_homes_with_a_server_of_the_same_name_keep_their_own_logs(
    tmp_path: Path, shared_log_dir: bool
) -> None:
    user_home = tmp_path / "user-home"
    user_home.mkdir()
    shared = tmp_path / "shared-logs"
    homes = {
        label: InProcessCli(tmp_path, home=tmp_path / f"home-{label}", user_home=user_home)
        for label in ("a", "b")
    }
    for label, cli in homes.items():
        cli.config.write_text(json.dumps({"mcp_servers": {"box": box_server(label)}}))
        extra = {"HERMES_LOG_DIR": str(shared)} if shared_log_dir else {}
        use_the_box(cli, user_variables(cli, **extra), f"from home {label}")

    assert files_under(user_home) == []
    places = [shared] if shared_log_dir else [cli.home / "logs" for cli in homes.values()]
    server_logs = [log for place in places for log in place.rglob("mcp-box.log")]
    activity_logs = [log for place in places for log in place.rglob("activity.jsonl")]
    assert len(server_logs) == 2, server_logs
    assert len(activity_logs) == 2, activity_logs
    started = sorted(
        {
            line
            for log in server_logs
            for line in log.read_text(encoding="utf-8").splitlines()
            if line.startswith("started for")
        }
    )
    assert started == ["started for a", "started for b"]
    for log in server_logs:  # each log holds the runs of one home only
        text = log.read_text(encoding="utf-8")
        assert ("started for a" in text) != ("started for b" in text), text
    echoes = [
        [call["arguments"] for call in activity(log) if call["name"] == ECHO]
        for log in activity_logs
    ]
    assert sorted(str(calls) for calls in echoes) == [
        "[{'text': 'from home a'}]",
        "[{'text': 'from home b'}]",
    ]


def test_without_hermes_home_everything_is_written_under_the_default_home(tmp_path: Path) -> None:
    cli = InProcessCli(tmp_path)
    default_home = cli.user_home / ".hermes"
    default_home.mkdir(parents=True)
    (default_home / "config.yaml").write_text(
        json.dumps({"mcp_servers": {"box": box_server("me")}})
    )
    env = user_variables(cli)
    del env["HERMES_HOME"]

    called = cli.run("tools", "call", ECHO, json.dumps({"text": "hi"}), env=env)

    assert "hi" in called.stdout
    written = files_under(cli.user_home)
    assert [name for name in written if not name.startswith(".hermes/")] == [], written
    assert ".hermes/logs/activity.jsonl" in written, written
    assert ".hermes/logs/mcp-box.log" in written, written
    assert any(name.startswith(".hermes/cache/mcp/box.") for name in written), written
