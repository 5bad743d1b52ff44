"""The ``terminal`` toolset: ``terminal`` runs one shell command, ``process_manage`` keeps
background processes.

Commands run in the session's working directory with the host's environment, in a new process
group so a timeout or a kill stops the whole tree. ``terminal`` waits on the event loop, so the
user's stop or the caller giving up (an ``execute_code`` script's timeout, the host closing)
stops the command too. Output is captured in a file, so a command printing gigabytes costs disk,
not memory, and the model sees the head and the tail.

Settings (``plugins.entries.terminal``): ``default_timeout`` (60), ``max_timeout`` (600),
``max_output_bytes`` (50000), ``shell`` (``/bin/bash`` when present, else ``/bin/sh``).
"""

from __future__ import annotations

import errno
import itertools
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated, Any, Literal

import anyio
from annotated_types import Ge
from anyio.abc import Process

from hermes_core._plugin_support import (
    ClientIOError,
    ClientTerminal,
    client_terminal,
    create_private_file,
    end_group,
    end_group_blocking,
    head_and_tail,
    private_dir,
    progress_listener,
    setting_problem,
    signal_group,
)
from hermes_core.plugin import (
    SHELL_COMMAND_META,
    PluginContext,
    Session,
    Tool,
    ToolAnnotations,
    ToolResult,
    hookimpl,
    report_progress,
)

if TYPE_CHECKING:
    from hermes_core import Config, Environment

_PLUGIN = "terminal"
_STATE_KEY = "terminal.processes"
_KILL_GRACE = 3.0
_POLL_SECONDS = 0.05
"""How often a running command looks at the session's interrupt flag."""
_PROGRESS_SECONDS = 1.0
"""How often a running command reports progress (when someone listens)."""
_TAIL_BYTES = 4096
_LAST_LINE_CHARS = 120

Ending = Literal["exited", "timeout", "interrupted"]


@dataclass(frozen=True)
class TerminalEntry:
    """What ``plugins.entries.terminal`` may set (checked by ``PluginContext.settings_as``)."""

    default_timeout: Annotated[int, Ge(1)] = 60
    max_timeout: Annotated[int, Ge(1)] = 600
    max_output_bytes: Annotated[int, Ge(1)] = 50_000
    shell: str | None = None
    """Default: ``/bin/bash`` when present, else ``/bin/sh``."""


@dataclass(frozen=True)
class TerminalSettings:
    """``plugins.entries.terminal``, validated, with the shell found."""

    shell: str
    variables: Mapping[str, str]
    cache_dir: Path
    default_timeout: int = 60
    max_timeout: int = 600
    max_output_bytes: int = 50_000

    @classmethod
    def from_entry(cls, entry: TerminalEntry, env: Environment) -> TerminalSettings:
        """The settings of ``entry``; a shell that is not an executable is a ``ValueError``
        (of ``shell``: the only key refused here)."""
        shell = entry.shell or ("/bin/bash" if Path("/bin/bash").exists() else "/bin/sh")
        if not (Path(shell).exists() or shutil.which(shell)):
            raise ValueError(f"{shell!r} is not an executable")
        return cls(
            shell,
            dict(env.variables),
            env.cache_dir / "processes",
            default_timeout=entry.default_timeout,
            max_timeout=entry.max_timeout,
            max_output_bytes=entry.max_output_bytes,
        )


@dataclass
class Background:
    """One background process started by ``process_manage``."""

    id: str
    command: str
    process: subprocess.Popen[bytes]
    log_path: Path
    started: float = field(default_factory=time.time)

    def status(self) -> str:
        """``running`` or ``exited (code N)``."""
        code = self.process.poll()
        return "running" if code is None else f"exited (code {code})"


def _shell(
    settings: TerminalSettings, command: str, cwd: Path, output: IO[bytes]
) -> dict[str, Any]:
    """How a command starts, for :func:`subprocess.Popen` and :func:`anyio.open_process`
    alike: the shell, in its own process group, its output (both streams) into ``output``."""
    return {
        "args": [settings.shell, "-c", command],
        "cwd": cwd,
        "env": dict(settings.variables),
        "stdin": subprocess.DEVNULL,
        "stdout": output,
        "stderr": subprocess.STDOUT,
        "start_new_session": True,
    }


def _start(
    settings: TerminalSettings, command: str, cwd: Path, output: IO[bytes]
) -> subprocess.Popen[bytes]:
    options = _shell(settings, command, cwd, output)
    return subprocess.Popen(options.pop("args"), **options)


async def _open(settings: TerminalSettings, command: str, cwd: Path, output: IO[bytes]) -> Process:
    options = _shell(settings, command, cwd, output)
    return await anyio.open_process(options.pop("args"), **options)


async def _wait(
    process: Process, limit: float, session: Session, output: IO[bytes] | None = None
) -> Ending:
    """Wait until the command exits, ``limit`` seconds pass or ``session`` is interrupted;
    with ``output`` (someone listens to progress), report it every second or so."""
    started = anyio.current_time()
    deadline = started + limit
    reported = started
    while True:
        now = anyio.current_time()
        remaining = deadline - now
        if remaining <= 0:
            return "timeout"
        with anyio.move_on_after(min(_POLL_SECONDS, remaining)):
            await process.wait()
            return "exited"
        if session.interrupted:
            return "interrupted"
        if output is not None and now - reported >= _PROGRESS_SECONDS:
            reported = now
            _report(output, now - started, limit)


def _report(output: IO[bytes], elapsed: float, limit: float) -> None:
    """Report the elapsed time, the output so far and its last line (read from the file the
    command writes, which this process only reads from its end)."""
    size = os.fstat(output.fileno()).st_size
    last = ""
    if size:
        with open(output.fileno(), "rb", closefd=False) as reader:
            reader.seek(max(0, size - _TAIL_BYTES))
            lines = reader.read(_TAIL_BYTES).decode("utf-8", "replace").splitlines()
            last = next((line.strip() for line in reversed(lines) if line.strip()), "")
    message = f"{elapsed:.0f} s of at most {limit:g} s, {size} bytes of output"
    if last:
        message += f", last line: {last[:_LAST_LINE_CHARS]}"
    report_progress(round(elapsed, 1), None, message)


async def _end(process: Process) -> None:
    """:func:`_stop` for a command ``terminal`` waits on."""
    if process.returncode is None:
        await end_group(process.pid, _KILL_GRACE)
    signal_group(process.pid, signal.SIGKILL)
    await process.wait()


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the process group, give it a grace period, then SIGKILL the group and reap.

    The SIGKILL is sent whatever the leader did: members that ignore SIGTERM or that the
    command put in the background (``cmd &``) outlive the shell that started them.
    """
    if process.poll() is None:
        end_group_blocking(process.pid, _KILL_GRACE)
    signal_group(process.pid, signal.SIGKILL)
    process.wait()


class TerminalTools:
    """The handlers, sharing one :class:`TerminalSettings`."""

    def __init__(self, settings: TerminalSettings) -> None:
        self.settings = settings
        self._ids = itertools.count(1)

    async def terminal(
        self, session: Session, command: str, timeout: int | None = None
    ) -> ToolResult:
        """Run ``command`` and return its output and exit code."""
        settings = self.settings
        if not command.strip():
            return ToolResult.error("TOOL_ERROR", "terminal: the command is empty")
        limit = min(timeout or settings.default_timeout, settings.max_timeout)
        client = client_terminal(session)
        if client is not None:
            return await self._in_client(client, session, command, limit)
        with tempfile.TemporaryFile() as output:
            try:
                process = await _open(settings, command, session.cwd, output)
            except OSError as exc:
                return ToolResult.error("TOOL_ERROR", _not_started("terminal", command, exc))
            ending: Ending | None = None
            try:
                # Progress is read from the output only when someone listens.
                watched = output if progress_listener() is not None else None
                ending = await _wait(process, limit, session, watched)
            finally:
                # Also when the call is cancelled: a cancel scope around the dispatch (a
                # script's timeout, the host closing) must not leave the command running.
                with anyio.CancelScope(shield=True):
                    if ending == "exited":
                        # The shell is done; what it left running in its group (``cmd &``) goes too.
                        signal_group(process.pid, signal.SIGKILL)
                    else:
                        await _end(process)
                    await process.aclose()
            size = output.seek(0, os.SEEK_END)
            text, truncated = head_and_tail(output, size, settings.max_output_bytes)
        return _result(text, process.returncode, ending, limit, truncated, size)

    async def _in_client(
        self, client: ClientTerminal, session: Session, command: str, limit: int
    ) -> ToolResult:
        """``command`` run in a terminal of the session's client (an editor's, over ACP), with
        the same shell, limits and result."""
        settings = self.settings
        try:
            run = await client.run(
                [settings.shell, "-c", command],
                session.cwd,
                timeout=limit,
                output_limit=settings.max_output_bytes,
                session=session,
            )
        except ClientIOError as exc:
            return ToolResult.error("TOOL_ERROR", f"terminal: the client could not run it: {exc}")
        size = len(run.output.encode("utf-8"))
        return _result(run.output, run.exit_code, run.ending, limit, run.truncated, size)

    def process_manage(
        self,
        session: Session,
        action: str,
        command: str | None = None,
        process_id: str | None = None,
        tail_bytes: int = 4000,
    ) -> ToolResult:
        """Start, list, read the output of, or kill background processes of this session."""
        processes: dict[str, Background] = session.state.setdefault(_STATE_KEY, {})
        if action == "start":
            return self._start_background(session, processes, command)
        if action == "list":
            rows = [
                {"id": p.id, "pid": p.process.pid, "status": p.status(), "command": p.command}
                for p in processes.values()
            ]
            text = "\n".join(
                f"{r['id']}  pid {r['pid']}  {r['status']}  {r['command']}" for r in rows
            )
            return ToolResult.text(text or "no background processes", structured=rows)
        if process_id is None:
            return ToolResult.error(
                "TOOL_ERROR", f"process_manage: action {action!r} needs process_id"
            )
        entry = processes.get(process_id)
        if entry is None:
            known = ", ".join(processes) or "none"
            return ToolResult.error(
                "TOOL_ERROR", f"process_manage: no process {process_id!r} (known: {known})"
            )
        if action == "read":
            cap = max(1, min(tail_bytes, self.settings.max_output_bytes))
            with entry.log_path.open("rb") as handle:
                size = handle.seek(0, os.SEEK_END)
                handle.seek(max(0, size - cap))
                text = handle.read().decode("utf-8", "replace")
            return ToolResult.text(
                f"{text}\n[{entry.status()}; showing the last {min(cap, size)} of {size} bytes]",
                structured={"status": entry.status(), "output_bytes": size},
            )
        _stop(entry.process)
        return ToolResult.text(
            f"{entry.id} {entry.status()}", structured={"status": entry.status()}
        )

    def _start_background(
        self, session: Session, processes: dict[str, Background], command: str | None
    ) -> ToolResult:
        if not command or not command.strip():
            return ToolResult.error("TOOL_ERROR", "process_manage: start needs a command")
        private_dir(self.settings.cache_dir)
        directory = private_dir(self.settings.cache_dir / session.id)
        process_id = f"p{next(self._ids)}"
        log_path = directory / f"{process_id}.log"
        with create_private_file(log_path) as output:
            try:
                process = _start(self.settings, command, session.cwd, output)
            except OSError as exc:
                return ToolResult.error("TOOL_ERROR", _not_started("process_manage", command, exc))
        processes[process_id] = Background(process_id, command, process, log_path)
        return ToolResult.text(
            f"started {process_id} (pid {process.pid})",
            structured={"id": process_id, "pid": process.pid},
        )


def _not_started(tool: str, command: str, exc: OSError) -> str:
    """Why the shell did not start; for a command longer than the kernel takes in one argument
    (``MAX_ARG_STRLEN``, 128 KiB on Linux), its size and the way around it."""
    if exc.errno == errno.E2BIG:
        return (
            f"{tool}: the command is {len(command.encode())} bytes, more than the system takes "
            "in one argument (128 KiB on Linux); write the long part to a file with write_file "
            "and run or read that file instead"
        )
    return f"{tool}: could not start the shell: {exc}"


def _result(
    text: str, code: int | None, ending: Ending | None, limit: int, truncated: bool, size: int
) -> ToolResult:
    """A command's output, its ending and its exit code, as the model reads them."""
    timed_out = ending == "timeout"
    if timed_out:
        note = f"[timed out after {limit} s; the process group was killed]"
    elif ending == "interrupted":
        note = "[the user interrupted the turn; the process group was killed]"
    else:
        note = ""
    footer = f"[exit code: {code}]"
    body = "\n".join(part for part in (text.rstrip("\n"), note, footer) if part)
    structured = {
        "exit_code": code,
        "timed_out": timed_out,
        "truncated": truncated,
        "output_bytes": size,
    }
    if ending == "interrupted":
        return ToolResult.error("INTERRUPTED", body, structured=structured)
    return ToolResult.text(body, structured=structured)


def stop_all(session: Session) -> None:
    """Stop every background process of ``session`` (at session end)."""
    processes: dict[str, Background] = session.state.get(_STATE_KEY, {})
    for entry in processes.values():
        _stop(entry.process)


def build_tools(settings: TerminalSettings) -> Sequence[Tool]:
    """``terminal`` and ``process_manage`` over one set of settings."""
    handlers = TerminalTools(settings)
    shell_hints = ToolAnnotations(read_only=False, destructive=True, open_world=True)
    return [
        Tool(
            name="terminal",
            description=(
                "Run a shell command in the working directory and return its output (head and "
                f"tail beyond {settings.max_output_bytes} bytes) and exit code. `timeout` in "
                f"seconds, at most {settings.max_timeout}. Each call is a new shell started in "
                "the working directory: cd and variables do not carry over (chain commands with "
                "&&), standard input is empty; start servers with process_manage, not `&`."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "command": {"type": "string", "minLength": 1},
                    "timeout": {"type": ["integer", "null"], "minimum": 1},
                },
                "required": ["command"],
                "additionalProperties": False,
            },
            handler=handlers.terminal,
            toolset="terminal",
            source="builtin",
            source_name=_PLUGIN,
            annotations=shell_hints,
            timeout=float(settings.max_timeout + 2 * _KILL_GRACE + 5),
            core=True,
            meta={SHELL_COMMAND_META: "command"},
        ),
        Tool(
            name="process_manage",
            description=(
                "Manage background processes: action 'start' (with command), 'list', 'read' "
                "(the tail of a process's output) or 'kill' (with process_id)."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "action": {"enum": ["start", "list", "read", "kill"]},
                    "command": {"type": ["string", "null"]},
                    "process_id": {"type": ["string", "null"]},
                    "tail_bytes": {"type": "integer", "minimum": 1, "default": 4000},
                },
                "required": ["action"],
                "additionalProperties": False,
            },
            handler=handlers.process_manage,
            toolset="terminal",
            source="builtin",
            source_name=_PLUGIN,
            annotations=shell_hints,
            timeout=30.0,
            core=True,
            meta={SHELL_COMMAND_META: "command"},
        ),
    ]


@hookimpl(trylast=True)
def hermes_tools(config: Config, env: Environment) -> Sequence[Tool]:
    """The shell tools, configured from ``plugins.entries.terminal``."""
    entry = PluginContext.of(_PLUGIN, config, env).settings_as(TerminalEntry)
    try:
        settings = TerminalSettings.from_entry(entry, env)
    except ValueError as exc:  # every shell tool runs it: the plugin fails, located
        raise setting_problem(config, _PLUGIN, "shell", str(exc)) from None
    return build_tools(settings)


@hookimpl(trylast=True)
def hermes_session_end(session: Session) -> None:
    """Stop the session's background processes."""
    stop_all(session)
