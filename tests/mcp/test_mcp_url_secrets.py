"""A password in an MCP server's URL (its user part, or the value of a secret query key such as
``?token=``) is kept as a credential header's value is: ``hermes mcp add`` and
``hermes import-agent`` write it to ``$HERMES_HOME/.env`` and a ``${VAR}`` reference to
config.yaml, the connection expands it (the real toolbox server over streamable HTTP on
127.0.0.1, answering 401 without them), and the OAuth token file is keyed by the URL without
them. Every file under the test's folders is read for the secrets' bytes."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from realservers import TOOLBOX, start_listening
from ruamel.yaml import YAML

from hermes_core._mcp.tokens import TokenFile
from hermes_core.testing._cli_in_process import InProcessCli

pytestmark = pytest.mark.subprocess

PASSWORD = "pw-s3cret-77"
TOKEN = "qt-s3cret-88"


@pytest.fixture
def guarded() -> Iterator[str]:
    """The HTTP toolbox answering only ``user:PASSWORD`` (Basic) with ``?token=TOKEN``; its URL
    without them."""
    process, port = start_listening(
        lambda port: [
            sys.executable,
            str(TOOLBOX),
            "--http",
            str(port),
            "--basic",
            f"user:{PASSWORD}",
            "--query-token",
            TOKEN,
        ],
        "the guarded HTTP toolbox server",
    )
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def cli(tmp_path: Path) -> InProcessCli:
    return InProcessCli(tmp_path, home=tmp_path / "home" / ".hermes", user_home=tmp_path / "home")


def with_secrets(url: str) -> str:
    return url.replace("http://", f"http://user:{PASSWORD}@", 1) + f"?token={TOKEN}&mode=fast"


def servers(cli: InProcessCli) -> dict[str, Any]:
    data = YAML(typ="safe").load(cli.config.read_text(encoding="utf-8")) or {}
    found: dict[str, Any] = data.get("mcp_servers") or {}
    return found


def files_holding_secrets(cli: InProcessCli) -> list[str]:
    """Every file under the test's folders holding the password or the token, but ``.env``."""
    dotenv = cli.home / ".env"
    return [
        str(path)
        for path in sorted(cli.root.rglob("*"))
        if path.is_file()
        and path != dotenv
        and any(secret.encode() in path.read_bytes() for secret in (PASSWORD, TOKEN))
    ]


def test_add_keeps_a_urls_password_and_token_in_dotenv_and_connects_with_them(
    cli: InProcessCli, guarded: str
) -> None:
    added = cli.run("mcp", "add", "remote", "--url", with_secrets(guarded))

    port = guarded.rsplit(":", 1)[1].split("/")[0]
    assert servers(cli)["remote"]["url"] == (
        f"http://user:${{REMOTE_URL_PASSWORD}}@127.0.0.1:{port}/mcp"
        "?token=${REMOTE_URL_TOKEN}&mode=fast"
    )
    dotenv = cli.home / ".env"
    assert dotenv.read_text(encoding="utf-8") == (
        f"REMOTE_URL_PASSWORD={PASSWORD}\nREMOTE_URL_TOKEN={TOKEN}\n"
    )
    said = [line for line in added.stdout.splitlines() if "kept out of config.yaml" in line]
    assert said == [
        f"Secrets kept out of config.yaml, in {dotenv}: url.password -> "
        "${REMOTE_URL_PASSWORD}, url.token -> ${REMOTE_URL_TOKEN}."
    ]
    tested = cli.run("mcp", "test", "remote")
    assert "echo" in tested.stdout
    listed = cli.run("mcp", "list", "--json")
    assert json.loads(listed.stdout)[0]["status"] in ("known", "connected")
    shown = cli.run("config", "show")
    doctor = cli.run("doctor", ok=False, env=cli.variables(HERMES_STRICT_PLUGINS="0"))
    assert "remote" in doctor.stdout
    outputs = [done.stdout + done.stderr for done in (added, tested, listed, shown, doctor)]
    assert [output for output in outputs if PASSWORD in output or TOKEN in output] == []
    assert files_holding_secrets(cli) == []


def test_the_guarded_server_refuses_a_url_without_its_secrets(
    cli: InProcessCli, guarded: str
) -> None:
    cli.run("mcp", "add", "remote", "--url", guarded)

    tested = cli.run("mcp", "test", "remote", ok=False)

    assert tested.returncode == 1


def test_a_url_server_written_with_its_password_sends_it_as_basic_auth(
    cli: InProcessCli, guarded: str
) -> None:
    url = with_secrets(guarded)
    cli.config.write_text(json.dumps({"mcp_servers": {"remote": {"url": url}}}), "utf-8")

    tested = cli.run("mcp", "test", "remote")

    assert "echo" in tested.stdout
    assert PASSWORD not in tested.stdout + tested.stderr
    assert TOKEN not in tested.stdout + tested.stderr
    assert [path for path in files_holding_secrets(cli) if path != str(cli.config)] == []


def test_a_url_written_with_references_stays_as_it_is(cli: InProcessCli) -> None:
    url = "https://user:${MY_PASSWORD}@mcp.example/mcp?api_key=${MY_KEY}"

    done = cli.run("mcp", "add", "remote", "--url", url)

    assert servers(cli)["remote"]["url"] == url
    assert not (cli.home / ".env").exists()
    assert "kept out of config.yaml" not in done.stdout


def test_a_user_without_password_and_plain_query_values_stay_in_the_url(
    cli: InProcessCli,
) -> None:
    url = "https://bob@mcp.example/mcp?mode=fast&next=a@b"

    cli.run("mcp", "add", "remote", "--url", url)

    assert servers(cli)["remote"]["url"] == url
    assert not (cli.home / ".env").exists()


def test_importing_claude_and_cursor_urls_keeps_their_secrets_in_dotenv(cli: InProcessCli) -> None:
    url = f"https://user:{PASSWORD}@mcp.example/mcp?api_key={TOKEN}"
    project_file = cli.work / ".mcp.json"
    project_file.write_text(
        json.dumps({"mcpServers": {"claude": {"type": "http", "url": url}}}), "utf-8"
    )
    cursor_file = cli.user_home / ".cursor" / "mcp.json"
    cursor_file.parent.mkdir(parents=True)
    cursor_file.write_text(json.dumps({"mcpServers": {"cur": {"url": url}}}), "utf-8")

    dry = cli.run("import-agent", "claude-code", "--project", "--dry-run", "--json")
    claude = cli.run("import-agent", "claude-code", "--project")
    cursor = cli.run("import-agent", "cursor")

    found = servers(cli)
    assert found["claude"]["url"] == (
        "https://user:${CLAUDE_URL_PASSWORD}@mcp.example/mcp?api_key=${CLAUDE_URL_API_KEY}"
    )
    assert found["cur"]["url"] == (
        "https://user:${CUR_URL_PASSWORD}@mcp.example/mcp?api_key=${CUR_URL_API_KEY}"
    )
    assert (cli.home / ".env").read_text(encoding="utf-8") == (
        f"CLAUDE_URL_PASSWORD={PASSWORD}\nCLAUDE_URL_API_KEY={TOKEN}\n"
        f"CUR_URL_PASSWORD={PASSWORD}\nCUR_URL_API_KEY={TOKEN}\n"
    )
    for done in (dry, claude, cursor):
        assert PASSWORD not in done.stdout + done.stderr
        assert TOKEN not in done.stdout + done.stderr
    kept = [project_file, cursor_file]  # the files the user wrote them in
    assert [found for found in files_holding_secrets(cli) if Path(found) not in kept] == []


def test_a_token_file_keyed_by_the_url_with_its_password_is_found_and_rewritten_without_it(
    tmp_path: Path,
) -> None:
    url = f"http://user:{PASSWORD}@127.0.0.1:9/mcp?token={TOKEN}"
    path = tmp_path / "mcp-auth" / "sec.json"
    path.parent.mkdir()
    old = {"url": url, "tokens": {"access_token": "at-old", "token_type": "Bearer"}}
    path.write_text(json.dumps(old), encoding="utf-8")

    store = TokenFile(path, url, None, redirect_uri="http://127.0.0.1/cb", keep_registration=False)
    tokens = anyio.run(store.get_tokens)

    assert tokens is not None
    assert tokens.access_token == "at-old"
    text = path.read_text(encoding="utf-8")
    assert PASSWORD not in text
    assert TOKEN not in text
    assert json.loads(text)["url"] == "http://127.0.0.1:9/mcp?token=[redacted]"
    assert json.loads(text)["tokens"]["access_token"] == "at-old"
    # Read again, keyed the new way; another password of the same server finds the same file.
    again = TokenFile(
        path,
        url.replace(PASSWORD, "changed"),
        None,
        redirect_uri="http://127.0.0.1/cb",
        keep_registration=False,
    )
    assert anyio.run(again.get_tokens) == tokens


def test_a_token_file_is_written_keyed_by_the_url_without_its_secrets(tmp_path: Path) -> None:
    from mcp.shared.auth import OAuthToken

    url = f"http://user:{PASSWORD}@127.0.0.1:9/mcp?token={TOKEN}"
    path = tmp_path / "sec.json"
    store = TokenFile(path, url, None, redirect_uri="http://127.0.0.1/cb", keep_registration=True)

    anyio.run(store.set_tokens, OAuthToken(access_token="at-new", token_type="Bearer"))

    assert PASSWORD.encode() not in path.read_bytes()
    assert TOKEN.encode() not in path.read_bytes()
    assert json.loads(path.read_text(encoding="utf-8"))["url"] == (
        "http://127.0.0.1:9/mcp?token=[redacted]"
    )


def test_a_url_that_is_not_http_is_refused_with_its_password_moved_or_not(
    cli: InProcessCli,
) -> None:
    done = cli.run(
        "mcp", "add", "remote", "--url", f"ftp://user:{PASSWORD}@h.example/mcp", ok=False
    )

    assert done.returncode == 2
    assert "mcp_servers.remote.url: expected an http:// or https:// URL, got" in done.stderr
    assert PASSWORD not in done.stdout + done.stderr
    assert not cli.config.exists()
    assert not (cli.home / ".env").exists()


def test_verbose_logs_name_the_url_without_its_password_and_token(
    cli: InProcessCli, guarded: str
) -> None:
    url = with_secrets(guarded)
    cli.config.write_text(json.dumps({"mcp_servers": {"remote": {"url": url}}}), "utf-8")

    tested = cli.run("--verbose", "mcp", "test", "remote")

    assert "HTTP Request: POST http://user:[redacted]@127.0.0.1:" in tested.stderr
    assert PASSWORD not in tested.stdout + tested.stderr
    assert TOKEN not in tested.stdout + tested.stderr


def test_a_url_in_a_stdio_servers_arguments_keeps_its_secrets_in_dotenv(cli: InProcessCli) -> None:
    url = f"https://user:{PASSWORD}@mcp.example/mcp?token={TOKEN}"

    done = cli.run("mcp", "add", "remote", "--", "npx", "-y", "mcp-remote", url, f"--to={url}")

    shown = "https://user:${REMOTE_URL_PASSWORD}@mcp.example/mcp?token=${REMOTE_URL_TOKEN}"
    assert servers(cli)["remote"]["args"] == ["-y", "mcp-remote", shown, f"--to={shown}"]
    assert (cli.home / ".env").read_text(encoding="utf-8") == (
        f"REMOTE_URL_PASSWORD={PASSWORD}\nREMOTE_URL_TOKEN={TOKEN}\n"
    )
    assert PASSWORD not in done.stdout + done.stderr
    assert files_holding_secrets(cli) == []
