"""``hermes serve`` as a real child process for the tests: a temporary home and config file, the
stdio parameters an MCP client launches it with, an HTTP server process on a free port with its
bearer token and an SDK client sending it, and the MCP Inspector CLI."""

from __future__ import annotations

import importlib.util
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from hermes_core.testing import HermesCli
from hermes_core.testing._cli_in_process import InProcessCli

SERVERS_DIR = Path(__file__).resolve().parent / "servers"
LATE_SERVER = SERVERS_DIR / "late.py"
REPO_ROOT = Path(__file__).resolve().parents[2]
SPAWNER_SERVER = REPO_ROOT / "tests" / "mcp" / "servers" / "spawner.py"
TOOLBOX_SERVER = REPO_ROOT / "tests" / "mcp" / "servers" / "toolbox.py"
INSPECTOR_JS = (
    REPO_ROOT / ".cache/npm/node_modules/@modelcontextprotocol/inspector/cli/build/index.js"
)
INSPECTOR_INSTALL = (
    "npm install --prefix .cache/npm @modelcontextprotocol/inspector (run in the repository root)"
)
BROWSER_TOOLS = [
    "browser_navigate",
    "browser_snapshot",
    "browser_click",
    "browser_type",
    "browser_scroll",
    "browser_back",
    "browser_press",
    "browser_screenshot",
    "browser_vision",
    "browser_close",
]
# The browser tools are core when Playwright is installed (the extra `browser`, which the
# default test session does not install; `nox -s tests_browser` does).
CORE_TOOLS = [
    *(BROWSER_TOOLS if importlib.util.find_spec("playwright") is not None else []),
    "clarify",
    "execute_code",
    "read_file",
    "write_file",
    "patch",
    "search_files",
    "vision_analyze",
    "session_search",
    "skills_list",
    "skill_view",
    "terminal",
    "web_extract",
    "web_search",
]
BRIDGE_TOOLS = ["tool_search", "tool_describe", "tool_call"]
BUNDLED = ["approvals", "bm25", "code_execution", "files", "skills", "terminal", "todo"]


def time_server() -> dict[str, Any]:
    """A ``mcp_servers`` entry running the PyPI ``mcp-server-time`` (a published server, where
    that is the point: the MCP Inspector's test)."""
    return {
        "command": sys.executable,
        "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
    }


def toolbox_server() -> dict[str, Any]:
    """A ``mcp_servers`` entry running ``tests/mcp/servers/toolbox.py`` (stdio, on the standard
    library): its ``echo`` tool is read-only, so calls need no approval."""
    return {"command": sys.executable, "args": [str(TOOLBOX_SERVER)]}


def late_server(ready: Path, *, connect_timeout: float = 2.0) -> dict[str, Any]:
    """A ``mcp_servers`` entry running ``servers/late.py``, which answers once ``ready``
    exists; until then every connect attempt times out after ``connect_timeout``."""
    return {
        "command": sys.executable,
        "args": [str(LATE_SERVER), str(ready)],
        "connect_timeout": connect_timeout,
    }


def spawner_server(marker: str) -> dict[str, Any]:
    """A ``mcp_servers`` entry running ``tests/mcp/servers/spawner.py``, which starts a
    long-lived child of its own with ``marker`` on its command line and leaves it behind when
    it exits."""
    return {"command": sys.executable, "args": [str(SPAWNER_SERVER), marker]}


@dataclass
class ServeHome:
    """A :class:`HermesCli` (temporary ``HERMES_HOME``, working directory, cache and log
    directory) whose ``config.yaml``, outside the home, is given with ``hermes --config``."""

    cli: HermesCli

    @property
    def root(self) -> Path:
        return self.cli.root

    @property
    def home(self) -> Path:
        return self.cli.home

    @property
    def work(self) -> Path:
        return self.cli.work

    @property
    def config_path(self) -> Path:
        return self.cli.config

    def write_config(self, **sections: Any) -> Path:
        """Write ``config.yaml`` (as JSON, which YAML reads) with the bundled plugins enabled
        plus ``sections``."""
        data: dict[str, Any] = {"plugins": {"enabled": BUNDLED}, **sections}
        self.config_path.write_text(json.dumps(data, indent=2), encoding="utf-8")
        return self.config_path

    def variables(self) -> dict[str, str]:
        """The environment of the served process: only temporary locations, strict plugins."""
        return self.cli.variables()

    def command(self, *serve_args: str) -> list[str]:
        """``python -m hermes_core --config <config.yaml> serve ...``."""
        return self.cli.command("serve", *serve_args)

    def stdio_parameters(self, *serve_args: str) -> StdioServerParameters:
        """What an MCP client launches: ``hermes serve`` over stdio in the temporary home."""
        command = self.command(*serve_args)
        return StdioServerParameters(
            command=command[0], args=command[1:], env=self.variables(), cwd=self.work
        )


def make_home(tmp_path: Path) -> ServeHome:
    """A :class:`ServeHome` with its directories made."""
    return ServeHome(InProcessCli(tmp_path, config_file=tmp_path / "config.yaml"))


@dataclass
class HttpServe:
    """``hermes serve --transport http`` running as a child process; ``token`` is its bearer
    token (empty when started with ``--no-auth``)."""

    url: str
    process: subprocess.Popen[bytes]
    stderr_seen: str
    token: str = ""

    @property
    def headers(self) -> dict[str, str]:
        """The ``Authorization`` header a client of this server sends."""
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def client(self, **options: Any) -> AbstractAsyncContextManager[Client]:
        """An ``mcp`` SDK client of this server sending the token (``options`` go to
        ``Client``)."""
        return http_client(self.url, self.headers, **options)

    def stop(self) -> int:
        """SIGTERM, then the exit status (a guard kills it after 30 s)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            pytest.fail("hermes serve did not stop within 30 s of SIGTERM")


@asynccontextmanager
async def http_client(url: str, headers: dict[str, str], **options: Any) -> AsyncIterator[Client]:
    """An ``mcp`` SDK client of the streamable HTTP server at ``url`` sending ``headers``
    (``options`` go to ``Client``); the SDK leaves an HTTP client it was given open, so it is
    closed here."""
    async with create_mcp_http_client(headers=headers) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, **options) as client:
            yield client


def _read_stderr_until_url(process: subprocess.Popen[bytes], limit: float) -> tuple[str, str]:
    assert process.stderr is not None
    seen = b""
    give_up = time.monotonic() + limit
    fd = process.stderr.fileno()
    while time.monotonic() < give_up:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            seen += chunk
            for line in seen.decode(errors="replace").splitlines():
                marker = "listening on "
                if marker in line:
                    return line.split(marker, 1)[1].split()[0], seen.decode(errors="replace")
        elif process.poll() is not None:
            break
    text = seen.decode(errors="replace")
    pytest.fail(f"hermes serve printed no URL (exit status {process.poll()}); stderr:\n{text}")


@contextmanager
def http_serve(served: ServeHome, *serve_args: str) -> Iterator[HttpServe]:
    """``hermes serve --transport http --port 0`` in ``served``; yields once it printed its URL
    on stderr (with the token it made in ``$HERMES_HOME/serve-token``, unless ``--no-auth``),
    stops it with SIGTERM afterwards."""
    process = subprocess.Popen(
        served.command("--transport", "http", "--port", "0", *serve_args),
        env=served.variables(),
        cwd=served.work,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        # A guard against a server that never comes up, not a performance check.
        url, seen = _read_stderr_until_url(process, limit=60)
        token_file = served.home / "serve-token"
        token = "" if "--no-auth" in serve_args else token_file.read_text().strip()
        yield HttpServe(url, process, seen, token)
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


def processes_mentioning(text: str) -> list[int]:
    """Live (not zombie) processes whose command line contains ``text``, read from ``/proc``."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        state = stat.rsplit(")", 1)[1].split()[0]
        if state != "Z" and text in cmdline:
            found.append(int(entry.name))
    return found


def wait_for_processes(text: str, count: int, *, limit: float = 60) -> None:
    """Wait until ``count`` live processes mention ``text``: ``hermes serve`` answers before its
    MCP servers are up, so they start behind its first answer."""
    give_up = time.monotonic() + limit  # a guard against a hang, not a performance check
    while len(processes_mentioning(text)) < count:
        if time.monotonic() > give_up:
            pytest.fail(f"{count} processes mentioning {text!r} did not appear in {limit:g} s")
        time.sleep(0.1)


async def served_tools_once_listed(client: Any, name: str, *, limit: float = 60) -> list[Any]:
    """``client``'s ``tools/list`` once the listing of ``tool_search`` names ``name``:
    ``hermes serve`` answers at once and a server without a tool manifest joins the tool list
    when it has connected (clients are told)."""
    import anyio

    with anyio.fail_after(limit):  # a guard against a hang, not a performance check
        while True:
            tools: list[Any] = (await client.list_tools()).tools
            search = next((tool for tool in tools if tool.name == "tool_search"), None)
            if search is not None and name in (search.description or ""):
                return tools
            await anyio.sleep(0.1)


def inspector(
    target: list[str], *options: str, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the MCP Inspector CLI (``--cli`` mode's own entry) against ``target``; fails the test
    with the install command when the Inspector is missing."""
    if not INSPECTOR_JS.is_file():
        pytest.fail(
            f"the MCP Inspector is not installed at {INSPECTOR_JS}; "
            f"install it with: {INSPECTOR_INSTALL}"
        )
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH; it is needed to run the MCP Inspector")
    return subprocess.run(
        [node, str(INSPECTOR_JS), *target, *options],
        env=dict(env) if env is not None else None,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


# A guard against a hang, not a performance check.
RAW_WAIT_LIMIT = 60


class RawStdio:
    """The client's end of ``hermes serve`` over stdio, byte by byte: write lines (any bytes),
    read its answers, close its input."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.pending = b""

    def write(self, data: bytes) -> None:
        """Write ``data`` as it is (no newline added)."""
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, line: bytes) -> None:
        """Write ``line`` and a newline."""
        self.write(line + b"\n")

    def request(self, ident: int, method: str, params: dict[str, Any] | None = None) -> None:
        message = {"jsonrpc": "2.0", "id": ident, "method": method, "params": params or {}}
        self.send(json.dumps(message).encode())

    def initialize(self, version: str = "2025-11-25") -> dict[str, Any]:
        """``initialize`` (asking for protocol ``version``) and ``notifications/initialized``:
        the answer."""
        client = {"name": "raw-test", "version": "1"}
        params = {"protocolVersion": version, "capabilities": {}, "clientInfo": client}
        self.request(0, "initialize", params)
        answer = self.receive()
        self.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        return answer

    def receive(self) -> dict[str, Any]:
        """The next message on its stdout."""
        answer: dict[str, Any] = self.receive_line()
        return answer

    def receive_line(self) -> Any:
        """The next line on its stdout, as JSON (an array for the answer to a batch)."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        give_up = time.monotonic() + RAW_WAIT_LIMIT
        while b"\n" not in self.pending:
            left = give_up - time.monotonic()
            assert left > 0, "hermes serve answered nothing"
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 65536)
                assert chunk, "hermes serve closed its stdout"
                self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return json.loads(line)

    def close(self) -> int:
        """End the input, as a client leaving: the exit status (killed if it outlives
        RAW_WAIT_LIMIT)."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            return self.process.wait(timeout=RAW_WAIT_LIMIT)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()


@contextmanager
def raw_stdio(served: ServeHome) -> Iterator[RawStdio]:
    """``hermes serve`` over stdio in ``served`` with its stderr in ``root/stderr.log``."""
    with (served.root / "stderr.log").open("wb") as stderr:
        process = subprocess.Popen(
            served.command(),
            cwd=served.work,
            env=served.variables(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
    try:
        yield RawStdio(process)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()
