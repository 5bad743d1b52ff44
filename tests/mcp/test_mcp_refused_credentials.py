"""A URL server that refuses the credentials hermes sends (the password of its URL, sent as HTTP
Basic auth, or the entry's own ``Authorization`` header) fails the connection with one line
naming the server, its URL without the secrets, ``HTTP 401: the server refused the
credentials``, the ``.env`` variables that hold them and the command that gives them again;
not the SDK's ``MCP error -32603``. The real HTTP toolbox on 127.0.0.1 guarded by Basic auth,
and a real HTTP server answering 403 to everything."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from realservers import TOOLBOX, start_listening

from hermes_core._config import McpServerConfig
from hermes_core._mcp.calling import call_connected
from hermes_core._mcp.connection import open_connection
from hermes_core._paths import Environment
from hermes_core.testing._cli_in_process import InProcessCli

pytestmark = pytest.mark.subprocess

RIGHT = "right-pw-41"
WRONG = "wrong-pw-42"
TOKEN = "qt-s3cret-43"
BEARER = "bearer-s3cret-44"


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[str]:
    """The HTTP toolbox answering only ``user:RIGHT`` (Basic) with ``?token=TOKEN``, and nothing
    once ``tmp_path/revoked`` exists; its URL."""
    process, port = start_listening(
        lambda port: [
            sys.executable,
            str(TOOLBOX),
            "--http",
            str(port),
            "--basic",
            f"user:{RIGHT}",
            "--query-token",
            TOKEN,
            "--revoked-when",
            str(tmp_path / "revoked"),
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


class _Forbidden(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.send_response(403)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_DELETE = do_POST

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def forbidding() -> Iterator[str]:
    """A real HTTP server answering 403 to every request; its URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Forbidden)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def cli(tmp_path: Path) -> InProcessCli:
    return InProcessCli(tmp_path, home=tmp_path / "home" / ".hermes", user_home=tmp_path / "home")


def error_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if "MCP server 'remote'" in line]


def test_a_refused_url_password_names_the_server_the_url_and_the_dotenv_variable(
    cli: InProcessCli, guarded: str
) -> None:
    url = guarded.replace("http://", f"http://user:{WRONG}@", 1) + f"?token={TOKEN}"
    cli.run("mcp", "add", "remote", "--url", url)

    tested = cli.run("mcp", "test", "remote", ok=False)

    assert tested.returncode == 1
    output = tested.stdout + tested.stderr
    shown = guarded.replace("http://", "http://user:[redacted]@", 1) + "?token=[redacted]"
    [line] = error_lines(output)
    assert f"HTTP 401: the server refused the credentials hermes sent to {shown}" in line
    assert "${REMOTE_URL_PASSWORD}" in line
    assert str(cli.home / ".env") in line
    assert "hermes mcp add remote --url URL --force" in line
    assert "-32603" not in output
    assert WRONG not in output
    assert TOKEN not in output


def test_a_refused_authorization_header_says_403_and_names_its_variable(
    cli: InProcessCli, forbidding: str
) -> None:
    entry = {"url": forbidding, "headers": {"Authorization": "Bearer ${MY_TOKEN}"}}
    cli.config.write_text(json.dumps({"mcp_servers": {"remote": entry}}), "utf-8")
    cli.home.mkdir(parents=True, exist_ok=True)
    (cli.home / ".env").write_text(f"MY_TOKEN={BEARER}\n", "utf-8")

    tested = cli.run("mcp", "test", "remote", ok=False)

    assert tested.returncode == 1
    output = tested.stdout + tested.stderr
    [line] = error_lines(output)
    assert f"HTTP 403: the server refused the credentials hermes sent to {forbidding}" in line
    assert "the Authorization header of mcp_servers.remote.headers, ${MY_TOKEN}" in line
    assert str(cli.home / ".env") in line
    assert "-32603" not in output
    assert BEARER not in output


@pytest.mark.anyio
async def test_credentials_refused_during_a_session_fail_the_call_saying_so(
    tmp_path: Path, guarded: str
) -> None:
    env = Environment(home=tmp_path / "home" / ".hermes", cwd=tmp_path)
    url = guarded.replace("http://", f"http://user:{RIGHT}@", 1) + f"?token={TOKEN}"
    entry = McpServerConfig(url=url)

    async with open_connection("remote", entry, env) as connection:
        first = await call_connected(connection, "remote", entry, "echo", {"text": "hi"})
        (tmp_path / "revoked").touch()
        second = await call_connected(connection, "remote", entry, "echo", {"text": "hi"})

    assert not first.is_error
    assert second.is_error
    assert second.error_message is not None
    shown = guarded.replace("http://", "http://user:[redacted]@", 1) + "?token=[redacted]"
    assert f"HTTP 401: the server refused the credentials hermes sent to {shown}" in (
        second.error_message
    )
    assert RIGHT not in second.error_message
    assert "-32603" not in second.error_message
