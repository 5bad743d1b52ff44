"""Who may talk to ``hermes serve --transport http``: the holder of the bearer token kept 0600
under ``$HERMES_HOME``, on a Host and Origin the server answers to, with the calls it parks for
approvals bounded.

Everything here is real: ``hermes serve`` runs as a child process on 127.0.0.x, the other local
account is user ``nobody`` (``setpriv --reuid=65534``: the tests run as root, who can read any
file) running a script with httpx and the ``mcp`` SDK client, and the token is read the way a
user reads it, with ``hermes serve token``.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx
import mcp_types
import pytest
from accounts import AS_NOBODY, AS_ROOT, needs_another_account
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from hermes_core.testing import HermesCli
from hermes_core.testing._cli_in_process import InProcessCli

pytestmark = pytest.mark.subprocess

BUNDLED = ["approvals", "bm25", "code_execution", "files", "skills", "terminal", "todo"]
SECRET = "the-contents-only-root-may-read-3f9a"
PARKED_PER_SESSION = 16
"""The documented bound on calls one session parks for approvals (docs/mcp.md)."""
PARKED_TOTAL = 128
"""The documented bound on calls one ``hermes serve`` parks for approvals (docs/mcp.md)."""
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw-test", "version": "1"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}

ATTACKER = """
import json, sys
import anyio, httpx, mcp_types
from mcp import Client

url, secret_path, marker, answer = sys.argv[1:5]
report = {}
try:
    with open(secret_path) as handle:
        report["open"] = handle.read()
except OSError as exc:
    report["open"] = type(exc).__name__
initialize = json.loads(sys.argv[5])
headers = {"Accept": "application/json, text/event-stream"}
bare = httpx.post(url, json=initialize, headers=headers, timeout=30)
report["status"] = bare.status_code
report["www_authenticate"] = bare.headers.get("www-authenticate")
report["content_type"] = bare.headers.get("content-type")
report["body"] = bare.text
guessed = httpx.post(
    url, json=initialize, headers={**headers, "Authorization": "Bearer guessed"}, timeout=30
)
report["guessed_status"] = guessed.status_code


async def person(context, params):
    return mcp_types.ElicitResult(action="accept", content={"answer": answer})


async def attack():
    calls = {
        "read_file": {"path": secret_path},
        "terminal": {"command": "touch " + marker},
        "write_file": {"path": marker + ".written", "content": "x"},
    }
    outcomes = {}
    for name, arguments in calls.items():
        try:
            async with Client(url, elicitation_callback=person) as client:
                result = await client.call_tool(name, arguments)
                outcomes[name] = result.model_dump_json()
        except BaseException as exc:
            outcomes[name] = "refused: " + type(exc).__name__ + ": " + repr(exc)
    return outcomes


report["calls"] = anyio.run(attack)
print(json.dumps(report))
"""


def world_readable_dir() -> Path:
    """A directory under /tmp that user nobody can traverse (pytest's tmp_path is 0700)."""
    path = Path(tempfile.mkdtemp(prefix="hermes-serve-auth-", dir="/tmp"))
    path.chmod(0o755)
    return path


@pytest.fixture
def root() -> Iterator[Path]:
    path = world_readable_dir()
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def cli(root: Path) -> HermesCli:
    """A temporary home, project directory and config file (the bundled plugins enabled)."""
    made = InProcessCli(root, config_file=root / "config.yaml")
    made.config.write_text(json.dumps({"plugins": {"enabled": BUNDLED}}), encoding="utf-8")
    return made


@dataclass
class Serving:
    """A running ``hermes serve --transport http``."""

    url: str
    process: subprocess.Popen[bytes]
    stderr: str

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1].split("/", 1)[0])


def _wait_for_url(process: subprocess.Popen[bytes]) -> tuple[str, str]:
    assert process.stderr is not None
    seen = b""
    give_up = time.monotonic() + 60  # a guard against a server that never comes up
    fd = process.stderr.fileno()
    while time.monotonic() < give_up:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            seen += chunk
            for line in seen.decode(errors="replace").splitlines():
                if "listening on " in line:
                    url = line.split("listening on ", 1)[1].split()[0]
                    return url, seen.decode(errors="replace")
        elif process.poll() is not None:
            break
    pytest.fail(f"hermes serve printed no URL (status {process.poll()}):\n{seen.decode()}")


@contextmanager
def serving(cli: HermesCli, *args: str) -> Iterator[Serving]:
    """``hermes serve --transport http --port 0 *args``, stopped with SIGTERM afterwards."""
    process = subprocess.Popen(
        cli.command("serve", "--transport", "http", "--port", "0", *args),
        env=cli.variables(),
        cwd=cli.work,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        url, seen = _wait_for_url(process)
        yield Serving(url, process, seen)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        assert process.stderr is not None
        process.stderr.close()


def token_file(cli: HermesCli) -> Path:
    return cli.home / "serve-token"


def token_on_disk(cli: HermesCli) -> str:
    """The token ``hermes serve`` keeps, or a placeholder where none was written."""
    path = token_file(cli)
    return path.read_text(encoding="utf-8").strip() if path.is_file() else "no-token-written"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@asynccontextmanager
async def token_client(url: str, token: str, **options: Any) -> AsyncIterator[Client]:
    """The ``mcp`` SDK client of ``url`` sending the token on every request (the SDK leaves an
    HTTP client it was given open: closed here)."""
    async with create_mcp_http_client(headers=bearer(token)) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, **options) as client:
            yield client


def text_of(result: mcp_types.CallToolResult) -> str:
    return "\n".join(
        block.text for block in result.content if isinstance(block, mcp_types.TextContent)
    )


async def answer_once(
    context: ClientRequestContext, params: mcp_types.ElicitRequestParams
) -> mcp_types.ElicitResult:
    return mcp_types.ElicitResult(action="accept", content={"answer": "once"})


# Another account ------------------------------------------------------------------------------


@needs_another_account
def test_another_account_without_the_token_gets_401_and_reads_runs_and_writes_nothing(
    cli: HermesCli, root: Path
) -> None:
    secret = cli.work / "id_ed25519"
    secret.write_text(SECRET, encoding="utf-8")
    secret.chmod(0o600)
    config_before = cli.config.read_bytes()
    marker = cli.work / "pwned"
    script = root / "attacker.py"
    script.write_text(ATTACKER, encoding="utf-8")
    script.chmod(0o644)
    nobody_home = root / "nobody"
    nobody_home.mkdir(mode=0o777)
    nobody_home.chmod(0o777)

    with serving(cli) as server:
        attack = [str(script), server.url, str(secret), str(marker), "always"]
        done = subprocess.run(
            [*AS_NOBODY, sys.executable, *attack, json.dumps(INITIALIZE)],
            env={"HOME": str(nobody_home), "PATH": os.defpath},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["open"] == "PermissionError", "the script must not be able to read it itself"
    served = {
        name: outcome
        for name, outcome in report["calls"].items()
        if not outcome.startswith("refused: ")
    }
    # Every way in, checked before any assertion, so a failure shows all that got through.
    got_through = {
        "read the 0600 file": SECRET in done.stdout,
        "ran a command": marker.exists(),
        "wrote a file": Path(f"{marker}.written").exists(),
        "wrote config.yaml": cli.config.read_bytes() != config_before,
        "was served calls": bool(served),
    }
    assert [what for what, done_it in got_through.items() if done_it] == [], served
    assert report["status"] == 401, report
    assert report["guessed_status"] == 401, report
    assert (report["www_authenticate"] or "").startswith("Bearer"), report
    assert (report["content_type"] or "").startswith("application/json"), report
    assert "hermes serve token" in json.loads(report["body"])["error_description"]


# The token holder ------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", [pytest.param("legacy", id="2025-11-25"), "auto"])
def test_with_the_token_an_mcp_sdk_client_initializes_lists_and_calls(
    cli: HermesCli, mode: Any
) -> None:
    note = cli.work / "note.txt"
    note.write_text("hello from the project", encoding="utf-8")

    async def main(url: str, token: str) -> tuple[list[str], mcp_types.CallToolResult]:
        async with token_client(url, token, mode=mode) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            return names, await client.call_tool("read_file", {"path": str(note)})

    with serving(cli) as server:
        token = cli.run("serve", "token").stdout.strip()
        names, read = anyio.run(main, server.url, token)
    assert "read_file" in names
    assert "terminal" in names
    assert read.is_error is False, text_of(read)
    assert "hello from the project" in text_of(read)


def test_the_token_file_is_0600_in_a_0700_home_and_serve_token_prints_it(root: Path) -> None:
    cli = InProcessCli(root)
    fresh_home = root / "fresh-home"
    env = cli.variables(HERMES_HOME=str(fresh_home))
    command = ["sh", "-c", 'umask 000; exec "$@"', "sh", *cli.command("serve", "token")]

    def token_command(*extra: str) -> str:
        done = subprocess.run(
            [*command, *extra], env=env, cwd=cli.work, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    first = token_command()
    path = fresh_home / "serve-token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(fresh_home.stat().st_mode) == 0o700
    assert path.read_text(encoding="utf-8").strip() == first
    assert len(first) >= 43  # secrets.token_urlsafe(32)
    assert token_command() == first

    rotated = token_command("--rotate")
    assert rotated != first
    assert path.read_text(encoding="utf-8").strip() == rotated
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [entry.name for entry in fresh_home.iterdir()] == ["serve-token"]

    if AS_ROOT:  # as another user, the modes above are what keeps the token from others
        readable_by_nobody = subprocess.run(
            [*AS_NOBODY, "cat", str(path)], capture_output=True, text=True, timeout=30, check=False
        )
        assert readable_by_nobody.returncode != 0
        assert rotated not in readable_by_nobody.stdout


def test_a_rotated_token_takes_effect_on_the_running_server(cli: HermesCli) -> None:
    with serving(cli) as server, httpx.Client(timeout=30) as http:
        old = cli.run("serve", "token").stdout.strip()
        first = http.post(server.url, json=INITIALIZE, headers={**MCP_HEADERS, **bearer(old)})
        new = cli.run("serve", "token", "--rotate").stdout.strip()
        with_old = http.post(server.url, json=INITIALIZE, headers={**MCP_HEADERS, **bearer(old)})
        with_new = http.post(server.url, json=INITIALIZE, headers={**MCP_HEADERS, **bearer(new)})
    assert first.status_code == 200, first.text
    assert with_old.status_code == 401
    assert with_new.status_code == 200, with_new.text


def test_a_token_file_other_accounts_can_read_stops_serve_with_the_fix(cli: HermesCli) -> None:
    path = token_file(cli)
    path.write_text("a-token-someone-left-readable\n", encoding="utf-8")
    path.chmod(0o644)
    done = cli.run("serve", "--transport", "http", "--port", "0", ok=False, timeout=60)
    assert done.returncode == 2
    assert str(path) in done.stderr
    assert "hermes serve token --rotate" in done.stderr


def test_no_auth_is_explicit_and_warns_on_stderr(cli: HermesCli) -> None:
    with serving(cli, "--no-auth") as server:
        answered = httpx.post(server.url, json=INITIALIZE, headers=MCP_HEADERS, timeout=30)
    assert answered.status_code == 200, answered.text
    assert "without authentication" in server.stderr
    assert "any local account" in server.stderr
    # The address it serves on (--port 0 picked one), not the port asked for.
    served_at = urlsplit(server.url).netloc
    assert f"anyone who can reach {served_at}, can read your files" in server.stderr


@pytest.mark.parametrize(
    ("bind", "beyond_loopback"),
    [
        pytest.param("127.0.0.2", False, id="127.0.0.2"),
        # Bound to every address: the token would cross the network in the clear.
        pytest.param("0.0.0.0", True, id="0.0.0.0"),
    ],
)
def test_a_bind_beyond_loopback_warns_that_the_token_crosses_the_network_unencrypted(
    cli: HermesCli, bind: str, beyond_loopback: bool
) -> None:
    with serving(cli, "--host", bind) as server:
        pass
    warning = (
        f"hermes serve: warning: {urlsplit(server.url).netloc} is reachable beyond this "
        "machine's loopback, and hermes serves plain HTTP"
    )
    assert (warning in server.stderr) is beyond_loopback, server.stderr
    if beyond_loopback:
        assert "the bearer token" in server.stderr
        assert "an SSH tunnel or a TLS proxy" in server.stderr


# Host and Origin ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bind", "connect"),
    [
        pytest.param("127.0.0.1", "127.0.0.1", id="127.0.0.1"),
        pytest.param("127.0.0.2", "127.0.0.2", id="127.0.0.2"),
        # Bound to every address, reached only through loopback by this test.
        pytest.param("0.0.0.0", "127.0.0.1", id="0.0.0.0"),
    ],
)
def test_a_foreign_host_or_origin_is_refused_on_every_bind(
    cli: HermesCli, bind: str, connect: str
) -> None:
    with serving(cli, "--host", bind) as server, httpx.Client(timeout=30) as http:
        url = f"http://{connect}:{server.port}/mcp"
        own_host = f"{connect}:{server.port}"
        headers = {**MCP_HEADERS, **bearer(token_on_disk(cli))}

        def status(**extra: str) -> int:
            return http.post(url, json=INITIALIZE, headers={**headers, **extra}).status_code

        foreign_host = status(Host="attacker.example")
        foreign_host_port = status(Host=f"attacker.example:{server.port}")
        foreign_origin = status(Host=own_host, Origin="http://attacker.example")
        own = status(Host=own_host)
        own_origin = status(Host=own_host, Origin=f"http://{own_host}")
    assert (foreign_host, foreign_host_port) == (421, 421)
    assert foreign_origin == 403
    assert (own, own_origin) == (200, 200)


# Parked approvals ------------------------------------------------------------------------------


async def park(client: Client, path: Path) -> mcp_types.CallToolResult | Any:
    arguments = {"path": str(path), "content": "x"}
    return await client.session.call_tool("write_file", arguments, allow_input_required=True)


def test_parked_approvals_over_http_are_bounded_in_total(cli: HermesCli) -> None:
    extra = 20

    async def main(url: str, token: str) -> tuple[list[Any], list[Any], Any, Any]:
        async with token_client(url, token, elicitation_callback=answer_once) as client:
            rounds = [
                await park(client, cli.work / f"{n}.txt") for n in range(PARKED_TOTAL + extra)
            ]
            parked = [r for r in rounds if isinstance(r, mcp_types.InputRequiredResult)]
            refused = [r for r in rounds if isinstance(r, mcp_types.CallToolResult)]
            # Answering one frees its place: the bound counts waiting calls, not calls ever made.
            first = parked[0]
            assert first.input_requests is not None
            denial = {
                key: mcp_types.ElicitResult(action="accept", content={"answer": "deny"})
                for key in first.input_requests
            }
            answered = await client.session.call_tool(
                "write_file",
                {"path": str(cli.work / "0.txt"), "content": "x"},
                input_responses=denial,
                request_state=first.request_state,
            )
            again = await park(client, cli.work / "again.txt")
            return parked, refused, answered, again

    with serving(cli) as server:
        parked, refused, answered, again = anyio.run(main, server.url, token_on_disk(cli))
    assert len(parked) == PARKED_TOTAL
    assert len(refused) == extra
    for result in refused:
        assert result.is_error is True
        assert "already wait for an approval" in text_of(result)
        assert str(PARKED_TOTAL) in text_of(result)
    assert "refused by the user" in text_of(answered)
    assert isinstance(again, mcp_types.InputRequiredResult)
    assert list(cli.work.glob("*.txt")) == []


def test_parked_approvals_of_one_stdio_session_are_bounded(cli: HermesCli) -> None:
    command = cli.command("serve")
    parameters = StdioServerParameters(
        command=command[0], args=command[1:], env=cli.variables(), cwd=cli.work
    )

    async def main() -> list[Any]:
        async with Client(parameters, elicitation_callback=answer_once) as client:
            return [
                await park(client, cli.work / f"{n}.txt") for n in range(PARKED_PER_SESSION + 3)
            ]

    rounds = anyio.run(main)
    parked = [r for r in rounds if isinstance(r, mcp_types.InputRequiredResult)]
    refused = [r for r in rounds if isinstance(r, mcp_types.CallToolResult)]
    assert len(parked) == PARKED_PER_SESSION
    assert len(refused) == 3
    for result in refused:
        assert result.is_error is True
        assert "already wait for an approval" in text_of(result)
        assert str(PARKED_PER_SESSION) in text_of(result)


def test_allow_host_adds_a_name_to_a_wildcard_bind_and_nothing_else(cli: HermesCli) -> None:
    with serving(cli, "--host", "0.0.0.0", "--allow-host", "box.example") as server:
        url = f"http://127.0.0.1:{server.port}/mcp"
        headers = {**MCP_HEADERS, **bearer(token_on_disk(cli))}
        with httpx.Client(timeout=30) as http:
            named = http.post(
                url, json=INITIALIZE, headers={**headers, "Host": f"box.example:{server.port}"}
            )
            other = http.post(
                url, json=INITIALIZE, headers={**headers, "Host": f"attacker.example:{server.port}"}
            )
    assert named.status_code == 200, named.text
    assert other.status_code == 421
