"""Remote MCP servers that need sign-in: a real OAuth-protected server on 127.0.0.1
(``servers/oauth_server.py``: the SDK's resource and authorization server, dynamic client
registration, PKCE, refresh), the real ``hermes`` command, and a stand-in browser
(``servers/browser.py``) that follows the authorization URL to hermes' loopback listener."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from realservers import HttpServer, start_listening

from hermes_core._atomic_write import held_exclusively
from hermes_core._config import Config, InvalidConfig
from hermes_core.testing import HermesCli

SERVERS = Path(__file__).parent / "servers"
OAUTH_SERVER = SERVERS / "oauth_server.py"
BROWSER = SERVERS / "browser.py"
TOOL = "mcp__sec__whoami"


@pytest.fixture(scope="module")
def oauth_server() -> Iterator[Callable[..., str]]:
    """The OAuth-protected server with ``token_lifetime`` seconds per access token (and
    ``revoke_on_refresh``: a refresh revokes the access token issued with the refresh token it
    used); returns its MCP URL. One server per kind serves the module's tests: each test's
    hermes has a home of its own, so it registers a client of its own and holds tokens no other
    test sees."""
    started: dict[tuple[int, bool], tuple[subprocess.Popen[bytes], str]] = {}

    def start(token_lifetime: int = 3600, *, revoke_on_refresh: bool = False) -> str:
        kind = (token_lifetime, revoke_on_refresh)
        if kind in started:
            return started[kind][1]
        process, port = start_listening(
            lambda port: [
                sys.executable,
                str(OAUTH_SERVER),
                str(port),
                "--token-lifetime",
                str(token_lifetime),
                *(["--revoke-on-refresh"] if revoke_on_refresh else []),
            ],
            "the OAuth server",
            seconds=90,
        )
        started[kind] = (process, f"http://127.0.0.1:{port}/mcp")
        return started[kind][1]

    yield start
    for process, _ in started.values():
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _cli(tmp_path: Path, url: str) -> HermesCli:
    cli = HermesCli(tmp_path)
    cli.config.write_text(
        f"mcp_servers:\n  sec:\n    url: {url}\n    connect_timeout: 30\n", encoding="utf-8"
    )
    return cli


def _browser(cli: HermesCli) -> dict[str, str]:
    """The environment with the stand-in browser, which notes each URL it opens."""
    return cli.variables(BROWSER=str(BROWSER), BROWSER_LOG=str(cli.root / "browser.log"))


def _opened(cli: HermesCli) -> list[str]:
    log = cli.root / "browser.log"
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def _token_file(cli: HermesCli) -> Path:
    return cli.home / "mcp-auth" / "sec.json"


def _tokens(cli: HermesCli) -> dict[str, str]:
    data = json.loads(_token_file(cli).read_text(encoding="utf-8"))
    tokens: dict[str, str] = data["tokens"]
    return tokens


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_401_names_the_server_and_says_to_log_in(
    tmp_path: Path, oauth_server: Callable[..., str]
) -> None:
    cli = _cli(tmp_path, oauth_server())
    started = time.monotonic()
    called = cli.run("tools", "call", TOOL, "{}", "--yes", ok=False, env=_browser(cli))
    tested = cli.run("mcp", "test", "sec", ok=False, env=_browser(cli))
    # Neither waited for a browser: a sign-in waits 300 s for one (SIGN_IN_TIMEOUT); the two
    # commands took 137 s on a loaded 2-core machine, 60 s was the bound before.
    assert time.monotonic() - started < 240
    for done in (called, tested):
        output = done.stdout + done.stderr
        assert done.returncode != 0
        assert "'sec'" in output
        assert "run: hermes mcp login sec" in output
        assert "-32603" not in output
        assert "Traceback" not in output
    assert _opened(cli) == []  # no browser was opened by a non-interactive command
    assert not _token_file(cli).exists()


@pytest.mark.slow
@pytest.mark.subprocess
def test_login_stores_tokens_private_and_a_later_call_needs_no_browser(
    tmp_path: Path, oauth_server: Callable[..., str]
) -> None:
    cli = _cli(tmp_path, oauth_server())
    login = cli.run("mcp", "login", "sec", env=_browser(cli))
    assert "signed in" in login.stdout.lower()
    assert len(_opened(cli)) == 1
    opened = _opened(cli)[0]
    assert "code_challenge=" in opened
    assert "code_challenge_method=S256" in opened
    path = _token_file(cli)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert _tokens(cli)["access_token"].startswith("at-")

    called = cli.run("tools", "call", TOOL, "{}", "--yes", env=_browser(cli))
    assert "a signed-in client" in called.stdout
    assert len(_opened(cli)) == 1  # the stored token was used; no second sign-in


@pytest.mark.slow
@pytest.mark.subprocess
def test_login_prints_the_url_when_no_browser_is_opened(
    tmp_path: Path, oauth_server: Callable[..., str]
) -> None:
    cli = _cli(tmp_path, oauth_server())
    login = cli.start("mcp", "login", "sec", "--no-browser")
    try:
        assert login.stdout is not None
        url = ""
        for line in login.stdout:
            if "http://" in line and "/authorize?" in line:
                url = line[line.index("http://") :].strip()
                break
        assert url, "the login printed no authorization URL"
        # The user opens the printed URL: the server approves and redirects to hermes.
        assert httpx.get(url, follow_redirects=True, timeout=30).status_code == 200
        rest, errors = login.communicate(timeout=60)
    finally:
        if login.poll() is None:
            login.kill()
    assert login.returncode == 0, errors
    assert "signed in" in rest.lower()
    assert _tokens(cli)["access_token"]


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_sign_in_to_a_url_with_a_secret_query_value_keeps_no_secret_in_its_file(
    tmp_path: Path, oauth_server: Callable[..., str]
) -> None:
    secret = "qs-s3cret-31"
    cli = _cli(tmp_path, f"{oauth_server()}?api_key={secret}")
    login = cli.run("mcp", "login", "sec", env=_browser(cli))
    assert "signed in" in login.stdout.lower()
    text = _token_file(cli).read_text(encoding="utf-8")
    assert secret not in text
    assert json.loads(text)["url"].endswith("/mcp?api_key=[redacted]")

    called = cli.run("tools", "call", TOOL, "{}", "--yes", env=_browser(cli))
    assert "a signed-in client" in called.stdout
    assert len(_opened(cli)) == 1  # the file was found under the URL without its secret


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_url_with_a_user_and_no_password_still_signs_in(
    tmp_path: Path, oauth_server: Callable[..., str]
) -> None:
    # Only a password makes a URL's user part a credential sent as Basic auth: a user alone
    # (``https://bob@host/mcp``) signs in with OAuth, to the resource the server names (no user).
    cli = _cli(tmp_path, oauth_server().replace("http://", "http://bob@", 1))
    login = cli.run("mcp", "login", "sec", env=_browser(cli))
    assert "signed in" in login.stdout.lower()
    assert len(_opened(cli)) == 1
    assert "bob@" not in _token_file(cli).read_text(encoding="utf-8")

    called = cli.run("tools", "call", TOOL, "{}", "--yes", env=_browser(cli))
    assert "a signed-in client" in called.stdout
    assert len(_opened(cli)) == 1


@pytest.mark.slow
@pytest.mark.subprocess
def test_an_expired_token_is_refreshed_without_a_browser(
    tmp_path: Path, oauth_server: Callable[..., str]
) -> None:
    cli = _cli(tmp_path, oauth_server(token_lifetime=2))
    cli.run("mcp", "login", "sec", env=_browser(cli))
    first = _tokens(cli)
    time.sleep(3)  # the access token has expired; the server refuses it now
    called = cli.run("tools", "call", TOOL, "{}", "--yes", env=_browser(cli))
    assert "a signed-in client" in called.stdout
    refreshed = _tokens(cli)
    assert refreshed["access_token"] != first["access_token"]
    assert refreshed["refresh_token"] != first["refresh_token"]
    assert len(_opened(cli)) == 1


@pytest.mark.slow
@pytest.mark.subprocess
def test_an_access_token_the_server_refuses_before_its_expiry_is_refreshed_once(
    tmp_path: Path, oauth_server: Callable[..., str]
) -> None:
    # A token the server stops accepting while hermes still thinks it good (revoked, or
    # expired a moment early by the other side's clock): a 401 is answered with a refresh.
    cli = _cli(tmp_path, oauth_server())
    cli.run("mcp", "login", "sec", env=_browser(cli))
    record = json.loads(_token_file(cli).read_text(encoding="utf-8"))
    record["tokens"]["access_token"] = "no-longer-accepted"
    _token_file(cli).write_text(json.dumps(record), encoding="utf-8")
    called = cli.run("tools", "call", TOOL, "{}", "--yes", env=_browser(cli))
    assert "a signed-in client" in called.stdout
    assert _tokens(cli)["access_token"] != "no-longer-accepted"
    assert len(_opened(cli)) == 1  # the login's: no browser since


@pytest.mark.slow
@pytest.mark.subprocess
def test_tokens_never_reach_the_activity_log_or_the_server_logs(
    tmp_path: Path, oauth_server: Callable[..., str]
) -> None:
    cli = _cli(tmp_path, oauth_server(token_lifetime=2))
    outputs = [cli.run("mcp", "login", "sec", env=_browser(cli))]
    seen = [_tokens(cli)]
    time.sleep(3)
    outputs.append(cli.run("tools", "call", TOOL, "{}", "--yes", env=_browser(cli)))
    seen.append(_tokens(cli))
    outputs.append(cli.run("mcp", "list", "--refresh", env=_browser(cli)))
    secrets = {t[key] for t in seen for key in ("access_token", "refresh_token")}
    assert (cli.log_dir / "activity.jsonl").exists()
    written = [p for root in (cli.log_dir, cli.cache_dir) for p in root.rglob("*") if p.is_file()]
    for path in written:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert not [s for s in secrets if s in text], f"a token is in {path}"
    for done in outputs:
        assert not [s for s in secrets if s in done.stdout + done.stderr]


@pytest.mark.slow
@pytest.mark.subprocess
def test_logout_removes_the_tokens(tmp_path: Path, oauth_server: Callable[..., str]) -> None:
    cli = _cli(tmp_path, oauth_server())
    cli.run("mcp", "login", "sec", env=_browser(cli))
    assert _token_file(cli).exists()
    logout = cli.run("mcp", "logout", "sec")
    assert "sec" in logout.stdout
    assert not _token_file(cli).exists()
    called = cli.run("tools", "call", TOOL, "{}", "--yes", ok=False, env=_browser(cli))
    assert "run: hermes mcp login sec" in called.stdout + called.stderr


@pytest.mark.slow
@pytest.mark.subprocess
def test_mcp_list_after_logout_says_sign_in_is_needed_not_the_tools_listed_before(
    tmp_path: Path, oauth_server: Callable[..., str]
) -> None:
    # journey5's walk: after `hermes mcp logout`, `hermes mcp list` showed the server `known`
    # with its tools from the manifest listed while signed in, and exited 0.
    cli = _cli(tmp_path, oauth_server())
    cli.run("mcp", "login", "sec", env=_browser(cli))
    assert "sec   http       connected  1" in cli.run("mcp", "list").stdout
    cli.run("mcp", "logout", "sec")
    opened = _opened(cli)
    listed = cli.run("mcp", "list", ok=False, env=_browser(cli))
    assert listed.returncode == 1
    assert "needs sign-in: run: hermes mcp login sec" in listed.stdout
    assert _opened(cli) == opened  # only the login opened the browser


@pytest.mark.slow
@pytest.mark.subprocess
def test_logout_of_a_mistyped_name_says_so_and_keeps_the_sign_in(
    tmp_path: Path, oauth_server: Callable[..., str]
) -> None:
    # journey5's walk: `hermes mcp logout sce` said "No sign-in kept" and exited 0, so a user
    # revoking access believed it done while the sign-in of 'sec' stayed.
    cli = _cli(tmp_path, oauth_server())
    cli.run("mcp", "login", "sec", env=_browser(cli))
    typo = cli.run("mcp", "logout", "sce", ok=False)
    assert typo.returncode == 2
    assert "no MCP server 'sce' in mcp_servers (configured: sec). Did you mean 'sec'?" in (
        typo.stderr
    )
    assert _token_file(cli).exists()
    # The sign-in of a server already removed from mcp_servers can still be forgotten.
    cli.config.write_text("mcp_servers: {}\n", encoding="utf-8")
    gone = cli.run("mcp", "logout", "sec")
    assert "Signed out of 'sec'" in gone.stdout
    assert not _token_file(cli).exists()


def test_oauth_keys_are_checked_by_name() -> None:
    with pytest.raises(InvalidConfig) as typo:
        Config.model_validate(
            {"mcp_servers": {"sec": {"url": "https://x.example/mcp", "oauth": {"client_idd": "a"}}}}
        )
    assert "mcp_servers.sec.oauth.client_idd" in str(typo.value)
    assert "client_id" in str(typo.value)
    with pytest.raises(InvalidConfig) as stdio:
        Config.model_validate(
            {"mcp_servers": {"local": {"command": "server", "oauth": {"client_id": "a"}}}}
        )
    assert "oauth" in str(stdio.value)
    assert "url" in str(stdio.value)
    with pytest.raises(InvalidConfig) as port:
        Config.model_validate(
            {
                "mcp_servers": {
                    "sec": {"url": "https://x.example/mcp", "oauth": {"redirect_port": 70000}}
                }
            }
        )
    assert "mcp_servers.sec.oauth.redirect_port" in str(port.value)


@pytest.mark.subprocess
def test_login_to_a_server_that_asks_for_no_sign_in_says_so(
    tmp_path: Path, http_toolbox: HttpServer
) -> None:
    cli = _cli(tmp_path, http_toolbox.url)
    login = cli.run("mcp", "login", "sec", env=_browser(cli))
    assert "did not ask for sign-in" in login.stdout
    assert _opened(cli) == []
    assert not _token_file(cli).exists()


# Two processes, one rotating refresh token -------------------------------------------------------

_HOLDER = """
import sys
import time

import anyio
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from hermes_core._config import McpServerConfig
from hermes_core._mcp.oauth import auth_for
from hermes_core._paths import Environment


async def main(url: str) -> None:
    auth = auth_for("sec", McpServerConfig(url=url), Environment.from_process())
    assert auth is not None
    async with (
        create_mcp_http_client(auth=auth) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        print("ready", flush=True)
        while line := (await anyio.to_thread.run_sync(sys.stdin.readline)).strip():
            if line == "expire":  # its clock passed the expiry of the token it holds
                auth.context.token_expiry_time = time.time() - 1
                print("expired", flush=True)
                continue
            try:
                result = await session.call_tool("whoami", {})
            except Exception as exc:  # noqa: BLE001 - the test reads what the user would
                print("failed:", auth.sign_in_needed or repr(exc), flush=True)
            else:
                print("called:", result.content[0].text, flush=True)


anyio.run(main, sys.argv[1])
"""


class _Holder:
    """A hermes process that stays up with the sign-in it read at start (a ``hermes serve``
    or a chat): one connection to the server, one provider, driven a line at a time."""

    def __init__(self, cli: HermesCli, url: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", _HOLDER, url],
            cwd=cli.work,
            env=cli.variables(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.answer() == "ready"

    def answer(self) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline().strip()
        assert line, f"the holder ended (exit {self.process.wait(timeout=60)})"
        return line

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def ask(self, line: str) -> str:
        self.send(line)
        return self.answer()

    def close(self) -> None:
        self.process.communicate(timeout=60)  # an empty line ends it
        assert self.process.returncode == 0


def _expire_stored(cli: HermesCli) -> None:
    """The stored access token's expiry passed (as the clock would have it)."""
    record = json.loads(_token_file(cli).read_text(encoding="utf-8"))
    record["expires_at"] = time.time() - 60
    _token_file(cli).write_text(json.dumps(record), encoding="utf-8")


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_process_whose_refresh_token_another_rotated_takes_the_saved_tokens(
    tmp_path: Path, oauth_server: Callable[..., str]
) -> None:
    url = oauth_server()
    cli = _cli(tmp_path, url)
    cli.run("mcp", "login", "sec", env=_browser(cli))
    holder = _Holder(cli, url)  # holds the login's tokens, R1
    try:
        assert holder.ask("call") == "called: a signed-in client"
        _expire_stored(cli)
        cli.run("tools", "call", TOOL, "{}", "--yes")  # refreshes: R2 saved, R1 dead
        rotated = _tokens(cli)

        # Its own token expires: the file holds a newer one, used without a refresh.
        assert holder.ask("expire") == "expired"
        assert holder.ask("call") == "called: a signed-in client"
        assert _tokens(cli) == rotated

        # That one expires too: refreshed with the newest refresh token, R2.
        _expire_stored(cli)
        assert holder.ask("expire") == "expired"
        assert holder.ask("call") == "called: a signed-in client"
        assert _tokens(cli)["refresh_token"] not in (rotated["refresh_token"], "")
    finally:
        holder.close()
    assert len(_opened(cli)) == 1  # the login's: no sign-in since


@pytest.mark.slow
@pytest.mark.subprocess
def test_two_processes_refreshing_one_refresh_token_at_once_both_go_on(
    tmp_path: Path, oauth_server: Callable[..., str]
) -> None:
    # The loser's old access token is refused too: it cannot go on with it by mistake.
    url = oauth_server(revoke_on_refresh=True)
    cli = _cli(tmp_path, url)
    cli.run("mcp", "login", "sec", env=_browser(cli))
    holders = [_Holder(cli, url), _Holder(cli, url)]  # both hold R1
    try:
        _expire_stored(cli)
        # Both ask while the file is held (a third process saving): both then refresh at once.
        with held_exclusively(_token_file(cli).with_name(".sec.json.lock")):
            for holder in holders:
                assert holder.ask("expire") == "expired"
                holder.send("call")
        assert [holder.answer() for holder in holders] == ["called: a signed-in client"] * 2
        assert holders[0].ask("call") == holders[1].ask("call") == "called: a signed-in client"
    finally:
        for holder in holders:
            holder.close()
    assert len(_opened(cli)) == 1


@pytest.mark.slow
@pytest.mark.subprocess
def test_an_access_token_revoked_by_another_process_refresh_is_replaced_by_the_saved_one(
    tmp_path: Path, oauth_server: Callable[..., str]
) -> None:
    # Servers that revoke the access token of a refresh token they rotate: the one held here,
    # not yet expired, is refused (401); the tokens the other process saved are taken.
    url = oauth_server(revoke_on_refresh=True)
    cli = _cli(tmp_path, url)
    cli.run("mcp", "login", "sec", env=_browser(cli))
    holder = _Holder(cli, url)
    try:
        assert holder.ask("call") == "called: a signed-in client"
        _expire_stored(cli)
        cli.run("tools", "call", TOOL, "{}", "--yes")  # refreshes: A1 and R1 revoked
        rotated = _tokens(cli)

        assert holder.ask("call") == "called: a signed-in client"
        assert _tokens(cli) == rotated  # taken as saved, not refreshed again
    finally:
        holder.close()
    assert len(_opened(cli)) == 1


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_refresh_while_a_stuck_process_holds_the_sign_in_file_fails_in_one_line(
    tmp_path: Path, oauth_server: Callable[..., str]
) -> None:
    # A hermes stopped (Ctrl-Z) or hung in its turn at refreshing keeps the file's lock: the
    # next process waited for it for ever, past its connect_timeout and Ctrl-C, saying only
    # that the server did not answer.
    cli = _cli(tmp_path, oauth_server())
    cli.config.write_text(
        cli.config.read_text(encoding="utf-8").replace(
            "connect_timeout: 30", "connect_timeout: 60"
        ),
        encoding="utf-8",
    )
    cli.run("mcp", "login", "sec", env=_browser(cli))
    _expire_stored(cli)
    before = _tokens(cli)
    lock = _token_file(cli).with_name(".sec.json.lock")

    with held_exclusively(lock):
        calling = cli.run("tools", "call", TOOL, "{}", "--yes", ok=False, timeout=90)

    assert calling.returncode == 1, calling.stderr
    assert f"{lock} is locked by another process (still after 20 s)" in calling.stderr
    assert "stop the process that holds it" in calling.stderr
    assert _tokens(cli) == before  # no refresh sent that could not be saved
    assert len(_opened(cli)) == 1
