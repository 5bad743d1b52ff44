"""Connectors from the command line, as a user works with them: the reference gateway as a
child process, ``hermes connectors login``, search, call, connect, and what is left when the
gateway stops; a signed-out build that prints exactly what a build without connectors does."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pexpect
import pytest
from gateways import FIXTURE, GatewayProcess, OffProtocolServer

from hermes_core.connectors._signin import TOKEN_VARIABLE
from hermes_core.testing import HermesCli
from hermes_core.testing._cli_in_process import InProcessCli

pytestmark = pytest.mark.subprocess


@pytest.fixture
def hermes_cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    """``hermes`` run in this process (:class:`InProcessCli`); ``subprocess_run`` runs the
    real command."""
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


TOKEN = "a-secret-token-3f9c"
LOCAL_PLUGIN = """
from hermes_core.plugin import Tool, ToolAnnotations, hookimpl


@hookimpl
def hermes_tools(config, env):
    return [
        Tool(
            "relay_send_email",
            "Send an email through the local relay",
            handler=lambda **arguments: "queued",
            toolset="relay",
            annotations=ToolAnnotations(read_only=True, destructive=False),
        )
    ]
"""


def _configure(cli: HermesCli, url: str | None, **connectors: Any) -> None:
    plugin = cli.home / "plugins" / "relay"
    plugin.mkdir(parents=True, exist_ok=True)
    (plugin / "plugin.yaml").write_text("name: relay\nversion: '1.0'\n")
    (plugin / "__init__.py").write_text(LOCAL_PLUGIN)
    config: dict[str, Any] = {"plugins": {"enabled": ["relay"]}}
    if url is not None or connectors:
        config["tools"] = {"connectors": {**({"url": url} if url else {}), **connectors}}
    cli.config.write_text(json.dumps(config), encoding="utf-8")


def test_a_user_signs_in_finds_calls_connects_and_keeps_local_tools_when_the_gateway_stops(
    hermes_cli: HermesCli,
) -> None:
    gateway = GatewayProcess(hermes_cli)
    try:
        _configure(hermes_cli, gateway.url)
        login = hermes_cli.run("connectors", "login", "--token-stdin", input=TOKEN + "\n")

        found = hermes_cli.json("tools", "search", "gmail send email", "--json")
        call = ("tools", "call", "connectors__gmail__SEND_EMAIL", '{"to": "ann@example.org"}')
        first = hermes_cli.run(*call, "--yes", "--json", ok=False)
        refused = json.loads(first.stdout)["structured"]
        opened = httpx.get(refused["connect_url"])
        second = hermes_cli.json(*call, "--yes", "--json")
        status = hermes_cli.json("connectors", "status", "--json")
    finally:
        gateway.stop()
    after = hermes_cli.json("tools", "search", "gmail send email", "--json")
    table = hermes_cli.run("tools", "search", "send email")

    assert TOKEN not in login.stdout + login.stderr
    assert "connectors__gmail__SEND_EMAIL" in found["results"][0]["matches"]
    assert first.returncode == 1
    assert refused["code"] == "CONNECTION_REQUIRED"
    assert refused["connect_url"].startswith(gateway.url)
    assert opened.status_code == 200
    assert second["is_error"] is False
    assert second["structured"] == FIXTURE["connectors"][0]["tools"][0]["result"]
    assert status["in_scope"] is True
    assert {item["name"]: item["connected"] for item in status["connectors"]} == {
        "gmail": True,
        "linear": True,
    }
    # The gateway is gone: local tools are still found, and the answer says connectors are not.
    assert after["results"][0]["matches"] == ["relay_send_email"]
    assert after["connectors"]["status"] == "unavailable"
    assert after["connectors"]["reason"] == "unreachable"
    assert "relay_send_email" in table.stdout
    assert "connectors: unavailable (unreachable)" in table.stderr


def test_signed_out_assemble_and_search_print_exactly_what_a_build_without_connectors_does(
    tmp_path: Path,
) -> None:
    printed = []
    with GatewayProcess(InProcessCli(tmp_path / "gateway")) as gateway:
        for name, url, connectors in [
            ("without", None, {}),
            ("signed-out", gateway.url, {}),
            ("disabled", gateway.url, {"enabled": False}),
        ]:
            cli = InProcessCli(tmp_path / name)
            _configure(cli, url, **connectors)
            env = cli.variables(**({TOKEN_VARIABLE: TOKEN} if name == "disabled" else {}))
            assembled = cli.run("tools", "assemble", "--json", env=env).stdout
            searched = cli.run(
                "tools", "search", "gmail send email", "manage connections", "--json", env=env
            ).stdout
            printed.append((assembled, searched))
        requests = httpx.get(f"{gateway.url}_dev/requests").json()["requests"]

    assert printed[0] == printed[1] == printed[2]
    assert "connectors__" not in printed[0][0]
    assert requests == []


def test_connect_on_a_terminal_waits_for_the_link_to_be_opened(hermes_cli: HermesCli) -> None:
    with GatewayProcess(hermes_cli) as gateway:
        _configure(hermes_cli, gateway.url)
        env = hermes_cli.variables(**{TOKEN_VARIABLE: TOKEN})
        waiting = subprocess.Popen(
            hermes_cli.command(
                "connectors", "connect", "gmail", "linear", "nope", "--wait", "--interval", "0.1"
            ),
            cwd=hermes_cli.work,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert waiting.stderr is not None
        line = waiting.stderr.readline()
        link = line.rsplit(" ", 1)[-1].strip()
        httpx.get(link).raise_for_status()
        out, _ = waiting.communicate(timeout=60)

    assert line.startswith("Open this link to connect gmail: ")
    assert out.splitlines() == [
        "gmail: connected",
        "linear: connected",
        "nope: skipped (the gateway could not start a connection for it)",
    ]
    assert waiting.returncode == 1  # not every app got connected


def test_connect_without_waiting_prints_the_links(hermes_cli: HermesCli) -> None:
    with GatewayProcess(hermes_cli) as gateway:
        _configure(hermes_cli, gateway.url)
        env = hermes_cli.variables(**{TOKEN_VARIABLE: TOKEN})
        done = hermes_cli.run("connectors", "connect", "gmail", env=env)

    assert done.stdout.splitlines() == ["gmail: open the link above"]
    assert f"Open this link to connect gmail: {gateway.url}_dev/connect/gmail" in done.stderr


def test_connect_without_waiting_exits_1_when_the_gateway_cannot_start_an_app(
    hermes_cli: HermesCli,
) -> None:
    with GatewayProcess(hermes_cli) as gateway:
        _configure(hermes_cli, gateway.url)
        env = hermes_cli.variables(**{TOKEN_VARIABLE: TOKEN})
        done = hermes_cli.run("connectors", "connect", "gmail", "nope", env=env, ok=False)

    assert done.stdout.splitlines() == [
        "gmail: open the link above",
        "nope: skipped (the gateway could not start a connection for it)",
    ]
    assert done.returncode == 1  # a misspelt app is not taken as done


def test_status_says_why_connectors_are_not_in_scope(hermes_cli: HermesCli) -> None:
    _configure(hermes_cli, None)
    no_url = hermes_cli.json("connectors", "status", "--json")
    _configure(hermes_cli, "http://127.0.0.1:9/")
    signed_out = hermes_cli.json("connectors", "status", "--json")
    _configure(hermes_cli, "http://127.0.0.1:9/", enabled=False)
    disabled = hermes_cli.run("connectors", "status")

    assert (no_url["in_scope"], no_url["reason"]) == (False, "no_url")
    assert (signed_out["reason"], signed_out["signed_in"]) == ("signed_out", False)
    assert "hermes connectors login" in signed_out["message"]
    assert "not in scope: connectors are disabled" in disabled.stdout


def test_status_of_a_gateway_that_refuses_the_token_says_so_and_exits_1(
    hermes_cli: HermesCli,
) -> None:
    with GatewayProcess(hermes_cli, {**FIXTURE, "token": "another"}) as gateway:
        _configure(hermes_cli, gateway.url)
        env = hermes_cli.variables(**{TOKEN_VARIABLE: TOKEN})
        done = hermes_cli.run("connectors", "status", "--json", ok=False, env=env)

    report = json.loads(done.stdout)
    assert done.returncode == 1
    assert report["error"]["kind"] == "signed_out"
    assert TOKEN not in done.stdout + done.stderr


def test_status_refuses_a_connected_flag_that_is_not_true_or_false(
    hermes_cli: HermesCli, off_protocol: OffProtocolServer
) -> None:
    gmail = {"connector": "gmail", "connected": "false", "connectionStatus": "not_connected"}
    off_protocol.answer("v1/connectors", 200, {"items": [gmail]})
    _configure(hermes_cli, off_protocol.url)
    env = hermes_cli.variables(**{TOKEN_VARIABLE: TOKEN})
    done = hermes_cli.run("connectors", "status", ok=False, env=env)

    assert done.returncode == 1
    assert "gmail" not in done.stdout  # no row says it is connected
    assert (
        "hermes: error: the answer to v1/connectors does not follow the protocol: "
        "items[0].connected must be true or false, not the text 'false'"
    ) in done.stderr


def test_status_lists_an_app_once_and_warns_once_when_the_gateway_repeats_a_cursor(
    hermes_cli: HermesCli, off_protocol: OffProtocolServer
) -> None:
    gmail = {"connector": "gmail", "connected": True, "connectionStatus": "active"}
    # Every page, whatever the cursor asked, is this one and names the same next cursor.
    off_protocol.answer("v1/connectors", 200, {"items": [gmail], "nextCursor": "again"})
    _configure(hermes_cli, off_protocol.url)
    env = hermes_cli.variables(**{TOKEN_VARIABLE: TOKEN})
    done = hermes_cli.run("connectors", "status", "--json", env=env)

    report = json.loads(done.stdout)
    assert report["connectors"] == [{"name": "gmail", "connected": True, "state": "active"}]
    assert report["error"] is None
    warnings = [line for line in done.stderr.splitlines() if line.startswith("hermes: warning:")]
    assert len(warnings) == 1, done.stderr
    assert "repeated the cursor 'again'" in warnings[0]
    assert len(off_protocol.seen) == 2


def test_search_of_a_gateway_answering_off_the_protocol_names_what_is_wrong(
    hermes_cli: HermesCli, off_protocol: OffProtocolServer
) -> None:
    off_protocol.answer("v1/connectors/search", 200, {"results": "nothing"})
    _configure(hermes_cli, off_protocol.url)
    env = hermes_cli.variables(**{TOKEN_VARIABLE: TOKEN})
    table = hermes_cli.run("tools", "search", "send email", env=env)

    assert "relay_send_email" in table.stdout
    assert "results must be a list" in table.stderr
    assert "connectors: unavailable (error)" in table.stderr
    assert "unreachable" not in table.stderr


def test_search_of_a_gateway_that_is_down_says_which_address_could_not_be_reached(
    hermes_cli: HermesCli,
) -> None:
    with GatewayProcess(hermes_cli) as gateway:
        _configure(hermes_cli, gateway.url)
    env = hermes_cli.variables(**{TOKEN_VARIABLE: TOKEN})
    table = hermes_cli.run("tools", "search", "send email", env=env)

    assert "relay_send_email" in table.stdout
    (line,) = [line for line in table.stderr.splitlines() if line.startswith("connectors:")]
    assert line.startswith("connectors: unavailable (unreachable): connector search failed: ")
    assert f"cannot reach {gateway.url}v1/connectors/search" in line


def test_connect_exits_1_when_the_gateway_fails(hermes_cli: HermesCli) -> None:
    with GatewayProcess(hermes_cli) as gateway:
        _configure(hermes_cli, gateway.url)
        httpx.post(f"{gateway.url}_dev/faults", json={"slug": "gmail", "fault": "error"})
        env = hermes_cli.variables(**{TOKEN_VARIABLE: TOKEN})
        done = hermes_cli.run("connectors", "connect", "gmail", "--no-wait", ok=False, env=env)

    assert done.returncode == 1  # 2 stays for configuration and usage errors
    assert "hermes: error: " in done.stderr
    assert "HTTP 500" in done.stderr
    assert "Traceback" not in done.stderr


HOSTILE = "bad\x1b]52;c;ZWNobyBwd25lZA==\x07\u202eX"
HOSTILE_SHOWN = "bad\\x1b]52;c;ZWNobyBwd25lZA==\\x07\\u202eX"


def test_status_on_a_terminal_shows_the_gateways_error_text_escaped(
    hermes_cli: HermesCli, off_protocol: OffProtocolServer
) -> None:
    # The error line quotes the gateway's own message: an OSC 52 sequence in it would write
    # the user's clipboard, a bidi override turn the line around.
    off_protocol.answer("v1/connectors", 401, {"error": {"code": "NOPE", "message": HOSTILE}})
    _configure(hermes_cli, off_protocol.url)
    env = hermes_cli.variables(**{TOKEN_VARIABLE: TOKEN})
    child = pexpect.spawn(
        hermes_cli.command("connectors", "status")[0],
        hermes_cli.command("connectors", "status")[1:],
        env=env,
        cwd=str(hermes_cli.work),
        encoding="utf-8",
        dimensions=(24, 500),
    )
    child.expect(pexpect.EOF, timeout=60)
    child.close()
    shown = str(child.before)

    for hostile in ("\x1b]52", "\x07", "\u202e"):
        assert hostile not in shown, shown
    assert HOSTILE_SHOWN in shown
    assert child.exitstatus == 1


def test_status_and_connect_of_a_refused_token_say_how_to_sign_in_again(
    hermes_cli: HermesCli,
) -> None:
    with GatewayProcess(hermes_cli, {**FIXTURE, "token": "another"}) as gateway:
        _configure(hermes_cli, gateway.url)
        login = hermes_cli.run("connectors", "login", "--token-stdin", input=TOKEN)
        status = hermes_cli.run("connectors", "status", ok=False)
        connect = hermes_cli.run("connectors", "connect", "gmail", "--no-wait", ok=False)
        env = hermes_cli.variables(**{TOKEN_VARIABLE: TOKEN})
        from_env = hermes_cli.run("connectors", "status", ok=False, env=env)

    assert "Signed in" in login.stdout
    (line,) = [line for line in from_env.stderr.splitlines() if "hermes: error:" in line]
    assert line.endswith(
        f"sign in again: {TOKEN_VARIABLE} holds the token refused: set it to another, "
        "or unset it and run 'hermes connectors login'"
    ), line
    for done in (status, connect):
        (line,) = [line for line in done.stderr.splitlines() if "hermes: error:" in line]
        assert "refused the token" in line
        assert line.endswith("sign in again: run 'hermes connectors login'"), line
        assert done.returncode == 1
        assert TOKEN not in done.stdout + done.stderr


def test_connect_on_a_terminal_shows_the_gateways_link_escaped(
    hermes_cli: HermesCli, off_protocol: OffProtocolServer
) -> None:
    # The link is the gateway's text: an OSC 52 sequence in it would write the user's clipboard.
    link = f"https://gateway.example.com/{HOSTILE}"
    answer = {"results": [{"connector": "gmail", "status": "initiated", "connectUrl": link}]}
    off_protocol.answer("v1/connectors/connections", 200, answer)
    _configure(hermes_cli, off_protocol.url)
    env = hermes_cli.variables(**{TOKEN_VARIABLE: TOKEN})
    command = hermes_cli.command("connectors", "connect", "gmail", "--no-wait")
    child = pexpect.spawn(
        command[0],
        command[1:],
        env=env,
        cwd=str(hermes_cli.work),
        encoding="utf-8",
        dimensions=(24, 500),
    )
    child.expect(pexpect.EOF, timeout=60)
    child.close()
    shown = str(child.before)

    for hostile in ("\x1b]52", "\x07", "\u202e"):
        assert hostile not in shown, shown
    assert f"Open this link to connect gmail: https://gateway.example.com/{HOSTILE_SHOWN}" in shown
    assert child.exitstatus == 0
