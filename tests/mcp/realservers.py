"""Real MCP servers for the tests (entries for the PyPI, npm and local servers), and a look
into ``/proc`` for the children of the test process."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

from hermes_core._config import McpServerConfig
from hermes_core._tools import Tool, ToolResult

SERVERS_DIR = Path(__file__).resolve().parent / "servers"
TOOLBOX = SERVERS_DIR / "toolbox.py"
SPAWNER = SERVERS_DIR / "spawner.py"
BADTOOLS = SERVERS_DIR / "badtools.py"
REPO_ROOT = Path(__file__).resolve().parents[2]
EVERYTHING_JS = (
    REPO_ROOT / ".cache/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
)
EVERYTHING_INSTALL = (
    "npm install --prefix .cache/npm @modelcontextprotocol/server-everything "
    "(run in the repository root)"
)


def toolbox_entry(**fields: object) -> McpServerConfig:
    """A stdio entry running ``tests/mcp/servers/toolbox.py``."""
    return McpServerConfig.model_validate(
        {"command": sys.executable, "args": [str(TOOLBOX)], **fields}
    )


def time_entry(**fields: object) -> McpServerConfig:
    """A stdio entry running the PyPI ``mcp-server-time``."""
    return McpServerConfig.model_validate(
        {
            "command": sys.executable,
            "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
            **fields,
        }
    )


def everything_entry(**fields: object) -> McpServerConfig:
    """A stdio entry running npm's ``@modelcontextprotocol/server-everything``; fails the test
    with the install command when it is missing."""
    if not EVERYTHING_JS.is_file():
        pytest.fail(
            f"@modelcontextprotocol/server-everything is not installed at {EVERYTHING_JS}; "
            f"install it with: {EVERYTHING_INSTALL}"
        )
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH; it is needed to run server-everything")
    return McpServerConfig.model_validate(
        {"command": node, "args": [str(EVERYTHING_JS), "stdio"], **fields}
    )


GITHUB_PACKAGE = "@modelcontextprotocol/server-github"
GITHUB_INSTALL = f"npm install --prefix .cache/npm {GITHUB_PACKAGE}@2025.4.8 (in the checkout)"


def github_entry(**fields: object) -> McpServerConfig:
    """A stdio entry running npm's ``@modelcontextprotocol/server-github`` (it lists its tools
    without a token), from ``.cache/npm`` or the npm prefix ``HERMES_TEST_NPM_PREFIX`` names;
    fails the test with the install command when it is missing."""
    prefix = Path(os.environ.get("HERMES_TEST_NPM_PREFIX") or REPO_ROOT / ".cache/npm")
    script = prefix / "node_modules" / GITHUB_PACKAGE / "dist/index.js"
    if not script.is_file():
        pytest.fail(f"{GITHUB_PACKAGE} is not installed at {script}; install it with: "
                    f"{GITHUB_INSTALL}")  # fmt: skip
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH; it is needed to run server-github")
    return McpServerConfig.model_validate({"command": node, "args": [str(script)], **fields})


def hanging_entry(**fields: object) -> McpServerConfig:
    """A stdio "server" that never answers: a Python process sleeping forever."""
    return McpServerConfig.model_validate(
        {
            "command": sys.executable,
            "args": ["-c", "import time\nwhile True: time.sleep(3600)", "hermes-hang-marker"],
            **fields,
        }
    )


def mute_entry(**fields: object) -> McpServerConfig:
    """A stdio "server" that reads its input and never answers, and exits when its input
    closes: a hung server that does not also make its shutdown wait out the grace period
    (:func:`hanging_entry` does, for the tests of that)."""
    return McpServerConfig.model_validate(
        {
            "command": sys.executable,
            "args": ["-c", "import sys\nsys.stdin.buffer.read()", "hermes-mute-marker"],
            **fields,
        }
    )


def spawner_entry(marker: str, *, silent: bool = False, **fields: object) -> McpServerConfig:
    """A stdio entry running ``tests/mcp/servers/spawner.py``, which starts a long-lived child of
    its own with ``marker`` on its command line (``silent``: and then never answers)."""
    args = [str(SPAWNER), marker, *(["--silent"] if silent else [])]
    return McpServerConfig.model_validate({"command": sys.executable, "args": args, **fields})


def badtools_entry(
    listing: Path, *, legacy: bool = False, changed: bool = False, **fields: object
) -> McpServerConfig:
    """A stdio entry running ``tests/mcp/servers/badtools.py``, whose ``tools/list`` answers
    with the tools in the JSON file ``listing``, as they are written (``legacy``: a 2025-era
    server, protocol 2025-11-25; ``changed``: it says its tools changed once listed, and
    lists one more, ``later``)."""
    flags = [*(["--legacy"] if legacy else []), *(["--changed"] if changed else [])]
    args = [str(BADTOOLS), str(listing), *flags]
    return McpServerConfig.model_validate({"command": sys.executable, "args": args, **fields})


def _live_processes() -> list[tuple[int, int, str]]:
    """(pid, parent pid, command line) of every live (not zombie) process, from ``/proc``."""
    found: list[tuple[int, int, str]] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z":
            found.append((int(entry.name), int(fields[1]), cmdline))
    return found


def live_pids(marker: str) -> list[int]:
    """Live processes anywhere (a grandchild, or an orphan whose parent is now PID 1) whose
    command line contains ``marker``, read from ``/proc``."""
    return [pid for pid, _, cmdline in _live_processes() if marker in cmdline]


def child_pids(marker: str) -> list[int]:
    """Live processes whose parent is this test process and whose command line contains
    ``marker``, read from ``/proc``."""
    me = os.getpid()
    return [pid for pid, parent, cmdline in _live_processes() if parent == me and marker in cmdline]


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class HttpServer:
    """A server child process listening on ``url``."""

    url: str
    process: subprocess.Popen[bytes]


class ToolsSeen:
    """An ``on_tools_changed`` callback that keeps each server's current tools and the history
    of changes (server, tool names)."""

    def __init__(self) -> None:
        self.current: dict[str, dict[str, Tool]] = {}
        self.history: list[tuple[str, list[str]]] = []

    def __call__(self, server: str, tools: list[Tool]) -> None:
        self.current[server] = {tool.name: tool for tool in tools}
        self.history.append((server, [tool.name for tool in tools]))

    def tool(self, name: str) -> Tool:
        """The currently registered tool called ``name``."""
        for tools in self.current.values():
            if name in tools:
                return tools[name]
        raise AssertionError(f"no tool {name!r} is registered; have {self.names()}")

    def names(self, server: str | None = None) -> list[str]:
        """The currently registered tool names (of one server)."""
        if server is not None:
            return sorted(self.current.get(server, {}))
        return sorted(name for tools in self.current.values() for name in tools)


async def wait_until(condition: Callable[[], bool], what: str, *, limit: float = 60.0) -> None:
    """Poll ``condition`` on the event loop until it holds; fail naming ``what`` after ``limit``
    seconds (a guard against hanging, not a performance check)."""
    with anyio.move_on_after(limit):
        while not condition():
            await anyio.sleep(0.02)
        return
    pytest.fail(f"gave up waiting for {what}")


async def call(tool: Tool, **arguments: object) -> ToolResult:
    """Call ``tool`` through its handler, as the dispatcher does."""
    assert tool.handler is not None
    result = await tool.handler(**arguments)
    assert isinstance(result, ToolResult)
    return result


def start_listening(
    command: Callable[[int], list[str]], what: str, *, seconds: float = 60, attempts: int = 3
) -> tuple[subprocess.Popen[bytes], int]:
    """Start ``command(port)`` on a free port and wait until that process (not another one)
    listens on 127.0.0.1:``port``; the process and its port. Between choosing a port and the
    child binding it, another test's server may take it: the child then exits, and a new port
    is tried (``attempts`` in all). A guard against a server that never comes up, not a
    performance check."""
    for attempt in range(attempts):
        port = free_port()
        process = subprocess.Popen(command(port))
        give_up = time.monotonic() + seconds
        while process.poll() is None and not _listens(process.pid, port):
            if time.monotonic() > give_up:
                process.kill()
                process.wait()
                pytest.fail(f"{what} did not listen within {seconds:g} s")
            time.sleep(0.05)
        if process.returncode is None:
            return process, port
        if attempt == attempts - 1:
            pytest.fail(f"{what} exited with {process.returncode}")
    raise AssertionError("unreachable")


def _listens(pid: int, port: int) -> bool:
    """Whether process ``pid`` holds a socket listening on TCP ``port`` (Linux: /proc)."""
    inodes = set()
    for line in Path("/proc/net/tcp").read_text(encoding="ascii").splitlines()[1:]:
        fields = line.split()
        if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
            inodes.add(f"socket:[{fields[9]}]")
    if not inodes:
        return False
    try:
        descriptors = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for descriptor in descriptors:
        try:
            if os.readlink(f"/proc/{pid}/fd/{descriptor}") in inodes:
                return True
        except OSError:
            continue
    return False
