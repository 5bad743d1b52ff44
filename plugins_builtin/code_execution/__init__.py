"""The ``code_execution`` toolset: ``execute_code`` runs a Python script in a child process.

The script imports ``hermes_tools``, a module generated for the run whose functions are the
tools it may call; each call goes back to the host over a Unix socket in a private temporary
directory and through the dispatcher under the real tool name (the same hooks, approvals and
activity log as a call of the model). Only what the script prints comes back.

Settings (``code_execution`` in ``config.yaml``): ``mode`` (``project``: the session's working
directory and the active virtualenv's Python; ``strict``: a fresh temporary directory and the
host's own Python), ``timeout`` (300 s; SIGTERM, then SIGKILL 5 s later, to the whole process
group), ``max_tool_calls`` (50), ``tools`` (default: the file tools and ``terminal``) and
``env_passthrough``. The script's environment is scrubbed of secrets in both modes
(:meth:`hermes_core.ToolCaller.child_environment`). Stdout is kept to 50 KB (head and tail, the
whole of it saved in the cache directory), stderr to 10 KB.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

import anyio

from hermes_core import Tool, ToolAnnotations, ToolCaller, ToolResult, head_and_tail, hookimpl

from .child import Outcome, script_process, supervise
from .module import module_source
from .rpc import RpcServer, ScriptTools

if TYPE_CHECKING:
    from hermes_core import Config, Environment

_PLUGIN = "code_execution"
DEFAULT_TOOLS: tuple[str, ...] = ("read_file", "write_file", "patch", "search_files", "terminal")
"""What a script may call when ``code_execution.tools`` is not set."""
STDOUT_CAP = 50_000
STDERR_CAP = 10_000
KILL_GRACE = 5.0
ERROR_LINES = 12
"""How many of the last lines of a script's traceback its result's ``error`` holds."""
_RUNNER = Path(__file__).parent / "runner.py"

Status = Literal["success", "error", "timeout", "interrupted"]
_ERROR_CODES: Mapping[Status, str] = {
    "error": "SCRIPT_ERROR",
    "timeout": "TIMEOUT",
    "interrupted": "INTERRUPTED",
}


@dataclass(frozen=True)
class ExecutionSettings:
    """``code_execution`` of the configuration, and where full outputs are saved."""

    mode: Literal["project", "strict"]
    timeout: float
    max_tool_calls: int
    tools: tuple[str, ...]
    output_dir: Path

    @classmethod
    def from_config(cls, config: Config, env: Environment) -> ExecutionSettings:
        """The settings of ``config.code_execution``."""
        section = config.code_execution
        tools = DEFAULT_TOOLS if section.tools is None else tuple(section.tools)
        return cls(
            mode=section.mode,
            timeout=section.timeout,
            max_tool_calls=section.max_tool_calls,
            tools=tuple(name for name in tools if name != "execute_code"),
            output_dir=env.cache_dir / "execute_code",
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


def _error_text(outcome: Outcome, traceback: str | None, settings: ExecutionSettings) -> str | None:
    if outcome.ending == "timeout":
        return f"the script did not finish within {settings.timeout:g} s and was stopped"
    if outcome.ending == "interrupted":
        return "the user interrupted the turn; the script was stopped"
    code = outcome.returncode
    if code == 0:
        return None
    if traceback is not None:
        return _last_lines(traceback, ERROR_LINES)
    if code is not None and code < 0:
        return f"the script was ended by signal {-code}"
    return f"the script exited with status {code}"


def _status(outcome: Outcome) -> Status:
    if outcome.ending != "exited":
        return outcome.ending
    return "success" if outcome.returncode == 0 else "error"


class CodeExecution:
    """The ``execute_code`` handler over one set of settings."""

    def __init__(self, settings: ExecutionSettings) -> None:
        self.settings = settings

    async def execute_code(self, code: str, caller: ToolCaller) -> ToolResult:
        """Run ``code`` and return what it printed, with its status and tool-call count."""
        started = time.perf_counter()
        settings = self.settings
        with tempfile.TemporaryDirectory(prefix="hermes-exec-") as temporary:
            directory = Path(temporary)
            tools = ScriptTools(caller, settings.tools)
            socket_path = directory / "rpc.sock"
            (directory / "hermes_tools.py").write_text(
                module_source(tools.named.values(), str(socket_path)), encoding="utf-8"
            )
            (directory / "script.py").write_text(code, encoding="utf-8")
            if settings.mode == "strict":
                cwd = directory / "work"
                cwd.mkdir()
            else:
                cwd = caller.session.cwd
            env = {
                **caller.child_environment(),
                "PWD": str(cwd),
                "PYTHONDONTWRITEBYTECODE": "1",
                "PYTHONUTF8": "1",
            }
            command = [interpreter(settings, caller.env.variables), str(_RUNNER), str(directory)]
            server = RpcServer(tools, settings.max_tool_calls)
            with (
                (directory / "stdout").open("w+b") as stdout,
                (directory / "stderr").open("w+b") as stderr,
            ):
                try:
                    outcome = await self._run(
                        server, socket_path, command, cwd, env, stdout, stderr
                    )
                except OSError as exc:
                    return ToolResult.error(
                        "TOOL_ERROR", f"execute_code: could not start the script: {exc}"
                    )
                payload = self._payload(outcome, server, directory, stdout, stderr)
        payload["duration_seconds"] = round(time.perf_counter() - started, 3)
        return _result(payload)

    async def _run(
        self,
        server: RpcServer,
        socket_path: Path,
        command: Sequence[str],
        cwd: Path,
        env: Mapping[str, str],
        stdout: IO[bytes],
        stderr: IO[bytes],
    ) -> Outcome:
        """Serve the script's calls while it runs; an ``OSError`` when it cannot start."""
        settings = self.settings
        session = server.tools.caller.session
        async with await anyio.create_unix_listener(socket_path) as listener:
            started = script_process(command, cwd=cwd, env=env, stdout=stdout, stderr=stderr)
            async with started as process, anyio.create_task_group() as group:
                group.start_soon(server.serve, listener)
                try:
                    outcome = await supervise(
                        process, timeout=settings.timeout, grace=KILL_GRACE, session=session
                    )
                finally:
                    group.cancel_scope.cancel()
        return outcome

    def _payload(
        self,
        outcome: Outcome,
        server: RpcServer,
        directory: Path,
        stdout: IO[bytes],
        stderr: IO[bytes],
    ) -> dict[str, Any]:
        size = stdout.seek(0, os.SEEK_END)
        saved: Path | None = None
        if size > STDOUT_CAP:
            saved = self._save(directory / "stdout")
        output, _ = head_and_tail(
            stdout, size, STDOUT_CAP, saved_to=str(saved) if saved is not None else None
        )
        payload: dict[str, Any] = {
            "status": _status(outcome),
            "output": output,
            "tool_calls_made": server.calls_made,
        }
        if saved is not None:
            payload["output_file"] = str(saved)
        traceback = _traceback(directory)
        error = _error_text(outcome, traceback, self.settings)
        if error is not None:
            payload["error"] = error
        errors_size = stderr.seek(0, os.SEEK_END)
        if errors_size:
            errors, _ = head_and_tail(stderr, errors_size, STDERR_CAP)
            if traceback is None or errors.strip() != traceback.strip():
                payload["stderr"] = errors  # not when it is only the traceback of "error"
        return payload

    def _save(self, stdout_path: Path) -> Path:
        """Keep the whole output in the cache directory; its path goes into the result."""
        self.settings.output_dir.mkdir(parents=True, exist_ok=True)
        target = self.settings.output_dir / f"output-{uuid.uuid4().hex[:16]}.txt"
        shutil.copyfile(stdout_path, target)
        return target


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
                f"{settings.timeout:g} s, {settings.max_tool_calls} tool calls. The result is "
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
    """``execute_code``, configured from ``code_execution``."""
    return build_tools(ExecutionSettings.from_config(config, env))
