"""The ``code_execution`` toolset: ``execute_code`` runs a Python script in a child process.

The script imports ``hermes_tools``, a module generated for the run whose functions are the
tools it may call; each call goes back to the host over a channel the script inherits as an
open descriptor (:mod:`.channel`: no path another process could connect to) and through the
dispatcher under the real tool name (the same hooks, approvals and activity log as a call of
the model). Only what the script prints comes back.

Settings (``plugins.entries.code_execution`` in ``config.yaml``; the top-level
``code_execution`` section still works for one release, with a warning): ``mode``
(``project``: the session's working directory and the active virtualenv's Python;
``strict``: a fresh temporary directory and the host's own Python), ``timeout`` (300 s;
SIGTERM to the script's process group, then SIGKILL 5 s later to the script and every process
it started, in its group or not: :mod:`.runner`), ``max_tool_calls`` (50),
``max_captured_bytes`` (10,000,000: the most a script may write to stdout, or to stderr, before
it is stopped; :mod:`.capture`), ``tools`` (default: the file tools and ``terminal``) and
``env_passthrough`` (variables passed to the script when set). The script's
environment is scrubbed of secrets in both modes
(:meth:`hermes_core.plugin.ToolCaller.child_environment`), and the host is made non-dumpable before
the first script starts, so a script cannot read them from the host's ``/proc`` files either
(:mod:`hermes_core._execution.memory_guard`). The result holds stdout up to 50 KB (head
and tail; what was captured is saved in the cache directory, which keeps the 20 newest) and
stderr up to 10 KB.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated, Any, Literal

import anyio
from annotated_types import Ge, Gt

from hermes_core._plugin_support import (
    create_private_file,
    head_and_tail,
    moved_settings,
    private_dir,
    progress_listener,
)
from hermes_core.plugin import (
    PluginContext,
    Tool,
    ToolAnnotations,
    ToolCaller,
    ToolResult,
    hookimpl,
    report_progress,
)

if TYPE_CHECKING:
    from hermes_core import Config, Environment

    from .capture import Capture
    from .child import Outcome
    from .rpc import RpcServer

_PLUGIN = "code_execution"
DEFAULT_TOOLS: tuple[str, ...] = ("read_file", "write_file", "patch", "search_files", "terminal")
"""What a script may call when ``code_execution.tools`` is not set."""
STDOUT_CAP = 50_000
STDERR_CAP = 10_000
KEEP_OUTPUTS = 20
"""How many saved outputs the cache directory keeps (the newest)."""
PROGRESS_SECONDS = 1.0
"""How often a running script's progress is reported (when someone listens)."""
KILL_GRACE = 5.0
DRAIN_SECONDS = 0.5
"""How long the pipes are read after the script's group is gone (a process that left the group
may still hold them)."""
ERROR_LINES = 12
"""How many of the last lines of a script's traceback its result's ``error`` holds."""
_RUNNER = Path(__file__).parent / "runner.py"

Status = Literal["success", "error", "timeout", "interrupted"]
_ERROR_CODES: Mapping[Status, str] = {
    "error": "SCRIPT_ERROR",
    "timeout": "TIMEOUT",
    "interrupted": "INTERRUPTED",
}


def _names_list(value: Any) -> Any:
    """Lists of names must be YAML lists: a lone scalar is almost always a forgotten ``[...]``."""
    if isinstance(value, str | int | float | bool):
        raise ValueError(f"expected a list of names, got {value!r} (write [{value}])")
    return value


@dataclass(frozen=True)
class ExecutionEntry:
    """What ``plugins.entries.code_execution`` may set (checked by
    ``PluginContext.settings_as``)."""

    mode: Literal["project", "strict"] = "project"
    timeout: Annotated[float, Gt(0)] = 300.0
    max_tool_calls: Annotated[int, Ge(0)] = 50
    max_captured_bytes: Annotated[int, Ge(1)] = 10_000_000
    tools: Annotated[list[str] | None, _names_list] = None
    env_passthrough: Annotated[list[str], _names_list] = field(default_factory=list)


def _context(config: Config, env: Environment) -> PluginContext:
    """The plugin's context, its settings ``plugins.entries.code_execution`` over the keys set in
    the deprecated ``code_execution`` section (read for one more release; loading a config.yaml
    that has it warns): the core's rule, which the script passthrough of every tool reads too."""
    context = PluginContext.of(_PLUGIN, config, env)
    return replace(context, settings=moved_settings(config, _PLUGIN))


@dataclass(frozen=True)
class ExecutionSettings:
    """``plugins.entries.code_execution``, and where full outputs are saved."""

    mode: Literal["project", "strict"]
    timeout: float
    max_tool_calls: int
    tools: tuple[str, ...]
    output_dir: Path
    max_captured_bytes: int

    @classmethod
    def from_config(cls, config: Config, env: Environment) -> ExecutionSettings:
        """The settings of ``plugins.entries.code_execution`` (and of the deprecated
        ``code_execution`` section)."""
        entry = _context(config, env).settings_as(ExecutionEntry)
        tools = DEFAULT_TOOLS if entry.tools is None else tuple(entry.tools)
        return cls(
            mode=entry.mode,
            timeout=entry.timeout,
            max_tool_calls=entry.max_tool_calls,
            tools=tuple(name for name in tools if name != "execute_code"),
            output_dir=env.cache_dir / "execute_code",
            max_captured_bytes=entry.max_captured_bytes,
        )


def interpreter(settings: ExecutionSettings, variables: Mapping[str, str]) -> str:
    """The Python that runs scripts: in ``project`` mode the active virtualenv's
    (``VIRTUAL_ENV``) when there is one, else (and in ``strict`` mode) the host's own."""
    if settings.mode == "project":
        venv = variables.get("VIRTUAL_ENV")
        if venv:
            scripts = "Scripts" if os.name == "nt" else "bin"
            candidate = Path(venv) / scripts / ("python.exe" if os.name == "nt" else "python")
            if candidate.exists():
                return str(candidate)
    return sys.executable


def _last_lines(text: str, count: int) -> str:
    return "\n".join(text.rstrip("\n").splitlines()[-count:])


def _traceback(directory: Path) -> str | None:
    """The traceback of a script that raised (the runner writes it), else ``None``."""
    path = directory / "traceback.txt"
    return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None


def _cut_text(outcome: Outcome, cut: Sequence[Capture]) -> str:
    """Why a run whose output passed the cap ended, and how much of it was dropped."""
    clauses = [
        f"wrote more than {capture.limit} bytes to {capture.name} "
        f"(code_execution.max_captured_bytes); {capture.dropped} bytes past it "
        "were dropped"
        for capture in cut
    ]
    stopped = "was stopped: it " if outcome.ending == "output_limit" else ""
    return f"the script {stopped}" + "; it also ".join(clauses)


def _error_text(
    outcome: Outcome, traceback: str | None, cut: Sequence[Capture], settings: ExecutionSettings
) -> str | None:
    if outcome.ending == "timeout":
        return f"the script did not finish within {settings.timeout:g} s and was stopped"
    if outcome.ending == "interrupted":
        return "the user interrupted the turn; the script was stopped"
    if cut:
        return _cut_text(outcome, cut)
    code = outcome.returncode
    if code == 0:
        return None
    if traceback is not None:
        return _last_lines(traceback, ERROR_LINES)
    if code is not None and code < 0:
        return f"the script was ended by signal {-code}"
    return f"the script exited with status {code}"


def _status(outcome: Outcome, cut: Sequence[Capture]) -> Status:
    if outcome.ending == "timeout":
        return "timeout"
    if outcome.ending == "interrupted":
        return "interrupted"
    return "success" if outcome.returncode == 0 and not cut else "error"


def _shown(file: IO[bytes], capture: Capture, cap: int, saved: Path | None) -> str:
    """What the result shows of one stream: up to ``cap`` bytes (head and tail), and a last
    line saying how much was dropped when the script wrote more than the capture keeps."""
    if not capture.over:
        text, _ = head_and_tail(file, capture.kept, cap, saved_to=str(saved) if saved else None)
        return text
    text, _ = head_and_tail(file, capture.kept, cap)
    where = f"; the first {capture.kept} bytes are in {saved}" if saved is not None else ""
    return f"{text}\n[... output cut: {capture.dropped} more bytes were dropped{where} ...]\n"


class CodeExecution:
    """The ``execute_code`` handler over one set of settings."""

    def __init__(self, settings: ExecutionSettings) -> None:
        self.settings = settings

    async def execute_code(self, code: str, caller: ToolCaller) -> ToolResult:
        """Run ``code`` and return what it printed, with its status and tool-call count."""
        # Here, not at the top: the script's channel, process and RPC server are for a call,
        # not for every start that registers the tool.
        from .capture import Capture
        from .channel import channel_pair
        from .module import module_source
        from .rpc import RpcServer, ScriptTools

        started = time.perf_counter()
        settings = self.settings
        with tempfile.TemporaryDirectory(prefix="hermes-exec-") as temporary:
            directory = Path(temporary)
            tools = ScriptTools(caller, settings.tools)
            host_end, script_end = channel_pair()
            (directory / "hermes_tools.py").write_text(
                module_source(tools.named.values(), script_end.fileno()), encoding="utf-8"
            )
            (directory / "script.py").write_text(code, encoding="utf-8")
            if settings.mode == "strict":
                cwd = directory / "work"
                cwd.mkdir()
            else:
                cwd = caller.session.cwd
            env = {
                **caller.child_environment(),  # env_passthrough included: the host passes it
                "PWD": str(cwd),
                "PYTHONDONTWRITEBYTECODE": "1",
                "PYTHONUTF8": "1",
            }
            command = [
                interpreter(settings, caller.env.variables),
                str(_RUNNER),
                str(directory),
                str(script_end.fileno()),
                str(KILL_GRACE),
            ]
            server = RpcServer(tools, settings.max_tool_calls)
            with (
                host_end,
                script_end,
                (directory / "stdout").open("w+b") as stdout,
                (directory / "stderr").open("w+b") as stderr,
            ):
                output = Capture("stdout", stdout, settings.max_captured_bytes)
                errors = Capture("stderr", stderr, settings.max_captured_bytes)
                try:
                    outcome = await self._run(
                        server, (host_end, script_end), command, cwd, env, output, errors
                    )
                except OSError as exc:
                    return ToolResult.error(
                        "TOOL_ERROR", f"execute_code: could not start the script: {exc}"
                    )
                payload = self._payload(outcome, server, directory, output, errors)
        payload["duration_seconds"] = round(time.perf_counter() - started, 3)
        return _result(payload)

    async def _run(
        self,
        server: RpcServer,
        channel: tuple[socket.socket, socket.socket],
        command: Sequence[str],
        cwd: Path,
        env: Mapping[str, str],
        output: Capture,
        errors: Capture,
    ) -> Outcome:
        """Serve the script's calls and read its output while it runs; an ``OSError`` when it
        cannot start."""
        settings = self.settings
        session = server.tools.caller.session
        host_end, script_end = channel
        from hermes_core._plugin_support import hide_host_memory  # ctypes: when a script runs

        from .child import kill_group, script_process, supervise

        hide_host_memory()
        started = script_process(command, cwd=cwd, env=env, pass_fds=[script_end.fileno()])
        async with started as process, anyio.create_task_group() as group:
            script_end.close()  # the script holds it now: its end closes when the script's does
            assert process.stdout is not None  # pipes: script_process asks for them
            assert process.stderr is not None
            group.start_soon(server.serve, host_end)
            group.start_soon(output.read, process.stdout)
            group.start_soon(errors.read, process.stderr)
            if progress_listener() is not None:
                group.start_soon(_report_progress, server, output, settings.timeout)
            try:
                outcome = await supervise(
                    process,
                    timeout=settings.timeout,
                    grace=KILL_GRACE,
                    session=session,
                    over=lambda: output.over or errors.over,
                )
                await kill_group(process)
                with anyio.move_on_after(DRAIN_SECONDS):
                    await output.done.wait()
                    await errors.done.wait()
            finally:
                group.cancel_scope.cancel()
        return outcome

    def _payload(
        self,
        outcome: Outcome,
        server: RpcServer,
        directory: Path,
        output: Capture,
        errors: Capture,
    ) -> dict[str, Any]:
        cut = [capture for capture in (output, errors) if capture.over]
        saved: Path | None = None
        if output.kept > STDOUT_CAP or output.over:
            saved = self._save(directory / "stdout")
        payload: dict[str, Any] = {
            "status": _status(outcome, cut),
            "output": _shown(output.file, output, STDOUT_CAP, saved),
            "tool_calls_made": server.calls_made,
        }
        if saved is not None:
            payload["output_file"] = str(saved)
        traceback = _traceback(directory)
        error = _error_text(outcome, traceback, cut, self.settings)
        if error is not None:
            payload["error"] = error
        if errors.size:
            shown = _shown(errors.file, errors, STDERR_CAP, None)
            if traceback is None or shown.strip() != traceback.strip():
                payload["stderr"] = shown  # not when it is only the traceback of "error"
        return payload

    def _save(self, stdout_path: Path) -> Path:
        """Keep the output (all of it, or what the capture kept) in the cache directory; its
        path goes into the result."""
        target = private_dir(self.settings.output_dir) / f"output-{uuid.uuid4().hex[:16]}.txt"
        with stdout_path.open("rb") as source, create_private_file(target) as copy:
            shutil.copyfileobj(source, copy)
        _keep_newest(self.settings.output_dir, KEEP_OUTPUTS, target)
        return target


def _keep_newest(directory: Path, keep: int, kept: Path) -> None:
    """Remove the saved outputs of ``directory`` but the ``keep`` newest (``kept`` among
    them): each may hold up to ``max_captured_bytes``, and the cache must not grow forever."""
    try:
        saved = sorted(
            (
                (entry.stat().st_mtime, entry.path)
                for entry in os.scandir(directory)
                if entry.name.startswith("output-") and entry.path != str(kept)
            ),
            reverse=True,
        )
        for _, path in saved[keep - 1 :]:
            os.unlink(path)
    except OSError:  # another run cleaning up at the same time
        pass


async def _report_progress(server: RpcServer, output: Capture, limit: float) -> None:
    """Every second while the script runs: the elapsed time, its tool calls and output so far
    and the last line it printed."""
    started = anyio.current_time()
    while True:
        await anyio.sleep(PROGRESS_SECONDS)
        elapsed = anyio.current_time() - started
        calls = server.calls_made
        message = (
            f"{elapsed:.0f} s of at most {limit:g} s, {calls} tool call"
            f"{'' if calls == 1 else 's'}, {output.size} bytes printed"
        )
        if output.last_line:
            message += f", last line: {output.last_line[:120]}"
        report_progress(round(elapsed, 1), None, message)


def _result(payload: dict[str, Any]) -> ToolResult:
    text = json.dumps(payload, ensure_ascii=False, indent=1)
    status: Status = payload["status"]
    if status == "success":
        return ToolResult.text(text, structured=payload)
    return ToolResult(
        content=[{"type": "text", "text": text}],
        structured=payload,
        is_error=True,
        error_code=_ERROR_CODES[status],
        error_message=f"execute_code: {payload.get('error') or status}",
    )


def build_tools(settings: ExecutionSettings) -> Sequence[Tool]:
    """``execute_code`` over one set of settings."""
    handler = CodeExecution(settings)
    names = ", ".join(settings.tools) or "none"
    return [
        Tool(
            name="execute_code",
            description=(
                "Run a Python script that calls tools, to do several steps in one turn (search, "
                "filter, process each item, summarize). In the script, `from hermes_tools import "
                f"...` ({names}): each function takes the tool's parameters as keyword "
                "arguments and returns its text (`.data` holds its structured result); a failed "
                "call raises hermes_tools.ToolError (.code, .message). Other tools: "
                "hermes_tools.call('full_tool_name', **arguments). Only what the script prints "
                f"is returned (head and tail beyond {STDOUT_CAP // 1000} KB). Limits: "
                f"{settings.timeout:g} s, {settings.max_tool_calls} tool calls, "
                f"{settings.max_captured_bytes} bytes of output (past it the script is stopped). "
                "The result is "
                "JSON: status (success, error, timeout, interrupted), output, tool_calls_made, "
                "duration_seconds, and error (the last traceback lines) when the script raised."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "code": {
                        "type": "string",
                        "minLength": 1,
                        "description": "The Python script to run.",
                    }
                },
                "required": ["code"],
                "additionalProperties": False,
            },
            handler=handler.execute_code,
            toolset="code_execution",
            source="builtin",
            source_name=_PLUGIN,
            # The script itself can do anything Python can: approve it, then each tool it calls.
            annotations=ToolAnnotations(read_only=False, destructive=True, open_world=True),
            timeout=settings.timeout + KILL_GRACE + 10.0,
            core=True,
        )
    ]


@hookimpl(trylast=True)
def hermes_tools(config: Config, env: Environment) -> Sequence[Tool]:
    """``execute_code``, configured from ``plugins.entries.code_execution``."""
    return build_tools(ExecutionSettings.from_config(config, env))
