"""Signing in: ``hermes connectors login`` and ``logout``, ``auth.json`` (mode 0600, atomic,
other keys kept), ``HERMES_CONNECTORS_TOKEN``; the token is never printed, logged or written to
``config.yaml``."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from gateways import GatewayProcess

from hermes_core._errors import ConfigError
from hermes_core._paths import Environment
from hermes_core.connectors._signin import TOKEN_VARIABLE, auth_path, read_sign_in, save_token
from hermes_core.testing import HermesCli
from hermes_core.testing._cli_in_process import InProcessCli

TOKEN = "tok-7f3a9c1e-not-for-your-eyes"


@pytest.fixture
def hermes_cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    """``hermes`` run in this process (:class:`InProcessCli`); ``subprocess_run`` runs the
    real command."""
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


def _env(home: Path, **variables: str) -> Environment:
    return Environment(home=home, cwd=home, variables=variables)


@pytest.mark.subprocess
def test_login_stores_the_token_in_auth_json_with_mode_0600(hermes_cli: HermesCli) -> None:
    done = hermes_cli.run("connectors", "login", "--token-stdin", input=f"  {TOKEN}\n")

    path = hermes_cli.home / "auth.json"
    assert json.loads(path.read_text()) == {"connectors": {"token": TOKEN}}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert TOKEN not in done.stdout + done.stderr
    assert str(path) in done.stdout
    assert not hermes_cli.config.exists() or TOKEN not in hermes_cli.config.read_text()
    assert list(hermes_cli.home.glob(".auth.json.*")) == []  # no temporary file left behind


def test_login_keeps_the_other_keys_of_auth_json(tmp_path: Path) -> None:
    env = _env(tmp_path)
    auth_path(env).write_text(json.dumps({"other-tool": {"key": "kept"}}))

    save_token(env, TOKEN)

    assert json.loads(auth_path(env).read_text()) == {
        "other-tool": {"key": "kept"},
        "connectors": {"token": TOKEN},
    }


@pytest.mark.subprocess
def test_login_refuses_an_auth_json_it_cannot_read_and_changes_nothing(
    hermes_cli: HermesCli,
) -> None:
    path = hermes_cli.home / "auth.json"
    path.write_text("{not json")

    done = hermes_cli.run("connectors", "login", "--token-stdin", input=TOKEN, ok=False)

    assert done.returncode == 2
    assert f"{path}: is not valid JSON" in done.stderr
    assert path.read_text() == "{not json"


@pytest.mark.subprocess
@pytest.mark.parametrize("token", ["", "   \n", "two words"])
def test_a_blank_token_or_one_with_spaces_is_refused(hermes_cli: HermesCli, token: str) -> None:
    done = hermes_cli.run("connectors", "login", "--token-stdin", input=token, ok=False)

    assert done.returncode == 2
    assert "nothing was saved" in done.stderr
    assert not (hermes_cli.home / "auth.json").exists()


@pytest.mark.subprocess
def test_login_without_a_terminal_asks_for_token_stdin(hermes_cli: HermesCli) -> None:
    done = hermes_cli.run("connectors", "login", ok=False)

    assert done.returncode == 2
    assert "--token-stdin" in done.stderr


@pytest.mark.subprocess
def test_logout_removes_the_token_and_keeps_the_rest(hermes_cli: HermesCli) -> None:
    path = hermes_cli.home / "auth.json"
    path.write_text(json.dumps({"connectors": {"token": TOKEN}, "other": 1}))

    done = hermes_cli.run("connectors", "logout")
    again = hermes_cli.run("connectors", "logout")

    assert "Signed out" in done.stdout
    assert json.loads(path.read_text()) == {"other": 1}
    assert "Not signed in" in again.stdout


@pytest.mark.subprocess
def test_logout_of_the_only_key_removes_the_file(hermes_cli: HermesCli) -> None:
    hermes_cli.run("connectors", "login", "--token-stdin", input=TOKEN)
    hermes_cli.run("connectors", "logout")

    assert not (hermes_cli.home / "auth.json").exists()


def test_the_environment_variable_overrides_auth_json(tmp_path: Path) -> None:
    save_token(_env(tmp_path), "from-the-file")

    from_file = read_sign_in(_env(tmp_path))
    from_variable = read_sign_in(_env(tmp_path, **{TOKEN_VARIABLE: "from-the-variable"}))

    assert (from_file.token, from_file.source) == ("from-the-file", "file")
    assert (from_variable.token, from_variable.source) == ("from-the-variable", "environment")
    assert "from-the" not in repr(from_file) + repr(from_variable)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[]", "must hold a JSON object"),
        ('{"connectors": {"token": 3}}', "connectors.token must be non-empty text"),
        ("{oops", "is not valid JSON"),
        ('{"a": ' * 100_000 + "1" + "}" * 100_000, "is nested too deeply to read"),
    ],
    ids=["a-list", "token-not-text", "not-json", "nested-too-deeply"],
)
def test_an_unreadable_auth_json_is_signed_out_with_the_reason(
    tmp_path: Path, text: str, problem: str
) -> None:
    auth_path(_env(tmp_path)).write_text(text)

    sign_in = read_sign_in(_env(tmp_path))

    assert not sign_in.signed_in
    assert sign_in.problem is not None
    assert problem in sign_in.problem


def test_save_token_refuses_an_unreadable_file(tmp_path: Path) -> None:
    auth_path(_env(tmp_path)).write_text("{oops")

    with pytest.raises(ConfigError, match="is not valid JSON"):
        save_token(_env(tmp_path), TOKEN)


@pytest.mark.subprocess
def test_the_token_is_never_printed_nor_logged_even_verbosely(hermes_cli: HermesCli) -> None:
    with GatewayProcess(hermes_cli) as gateway:
        hermes_cli.config.write_text(json.dumps({"tools": {"connectors": {"url": gateway.url}}}))
        hermes_cli.run("connectors", "login", "--token-stdin", input=TOKEN)
        outputs = [
            hermes_cli.run("-v", "tools", "search", "gmail send email", "--json"),
            hermes_cli.run("-v", "connectors", "status", "--json"),
            hermes_cli.run(
                "-v",
                "tools",
                "call",
                "connectors__linear__CREATE_ISSUE",
                '{"title": "x"}',
                "--yes",
            ),
            hermes_cli.run("config", "show", "--json"),
        ]

    for done in outputs:
        assert TOKEN not in done.stdout + done.stderr
    assert TOKEN not in hermes_cli.config.read_text()
    for log in hermes_cli.log_dir.glob("*"):
        assert TOKEN not in log.read_text(errors="replace")
