"""Shell hooks: ``hooks.<event>`` commands of ``config.yaml``.

A command runs with ``/bin/sh`` in the session's working directory, with the host's environment,
in a process group of its own; it reads the event as JSON on stdin. On ``pre_tool_call`` it may
print a directive, ``{"action": "block", "message": ...}`` (or ``approve``, or ``modify`` with
``arguments``); printing nothing lets the call go on. It fails closed: a non-zero exit status,
output that is not a JSON directive, or no answer within its ``timeout`` (the dispatcher's
deadline, which ends the command's whole group) blocks the call, naming the hook. The answer is
what the command printed by the time it exited: what it left running (``cmd &``) is killed with
its group then, and its pipes are not waited on. On the other events the output is ignored and a
failure is logged, as for a plugin's observer.

In a project whose gate is closed, a command is not run where its line starts a launcher that
would run what the project plants (:func:`hook_refusal`), and is run with its launcher's guard's
variables otherwise (:func:`guarded_environment`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import anyio
from anyio.abc import ByteReceiveStream, Process

from hermes_core._errors import HermesError
from hermes_core._hooks.adapters import EventHook, adapter_for
from hermes_core._hooks.events import EVENTS, HookEvent
from hermes_core._hooks.refusal import command_index, hook_refusal, lift_substitutions
from hermes_core._shown import clipped
from hermes_core._specs import PreCallDirective

if TYPE_CHECKING:
    from hermes_core._config import HooksConfig, ShellHook
    from hermes_core._paths import Environment

__all__ = [
    "CommandOutcome",
    "ShellHookFailed",
    "cannot_run",
    "hook_refusal",
    "missing_command",
    "run_command",
    "shell_hooks",
]

OUTPUT_LIMIT: Final = 1024 * 1024
"""How much of a hook's stdout is read (a directive is a line); the rest is discarded."""
ERRORS_SHOWN: Final = 500
"""How many characters of a failed hook's stderr its message shows."""
OUTPUT_GRACE: Final = 0.5
"""How long, once the command exited and its group was killed, what is left in its pipes is
still read: only a process that left the group (``setsid``) can hold them open that long."""

# Words /bin/sh runs itself (builtins and keywords): nothing on PATH to look for.
# fmt: off
_SHELL_OWN: Final = frozenset({
    "!", "{", "}", "(", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for",
    "case", "esac", ":", ".", "[", "alias", "bg", "break", "cd", "command", "continue", "echo",
    "eval", "exec", "exit", "export", "false", "fc", "fg", "getopts", "hash", "jobs", "kill",
    "local", "printf", "pwd", "read", "readonly", "return", "set", "shift", "source", "test",
    "times", "trap", "true", "type", "ulimit", "umask", "unalias", "unset", "wait",
})
# fmt: on


class ShellHookFailed(HermesError):
    """A shell hook of an observer event exited with a non-zero status (or could not start);
    the message says it as a blocked call's does (``it exited with status 3: ...``)."""


@dataclass(frozen=True)
class CommandOutcome:
    """What a hook command did: its exit status, stdout and stderr."""

    returncode: int
    stdout: bytes
    stderr: bytes

    def failure(self) -> str | None:
        """Why the command failed (``exited with status 1: <stderr>``), or ``None``."""
        if self.returncode == 0:
            return None
        if self.returncode < 0:
            what = f"was ended by signal {-self.returncode}"
        else:
            what = f"exited with status {self.returncode}"
        errors = self.stderr.decode("utf-8", "replace").strip()
        return f"{what}: {clipped(errors, ERRORS_SHOWN)}" if errors else what


async def _drain(stream: ByteReceiveStream | None, into: bytearray) -> None:
    if stream is None:
        return
    async for chunk in stream:
        if len(into) < OUTPUT_LIMIT:
            into.extend(chunk[: OUTPUT_LIMIT - len(into)])


async def _drain_both(
    process: Process, stdout: bytearray, stderr: bytearray, done: anyio.Event
) -> None:
    async with anyio.create_task_group() as group:
        group.start_soon(_drain, process.stdout, stdout)
        group.start_soon(_drain, process.stderr, stderr)
    done.set()


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def run_command(
    command: str, event: Mapping[str, Any], *, cwd: Path, env: Mapping[str, str]
) -> CommandOutcome:
    """Run ``command`` with ``event`` as JSON on stdin; its whole process group is killed when
    it ends and when the caller gives up (a timeout)."""
    process = await anyio.open_process(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=dict(env),
        start_new_session=True,
    )
    stdout, stderr = bytearray(), bytearray()
    payload = json.dumps(event, ensure_ascii=False, default=str).encode("utf-8")
    try:

        async def feed() -> None:
            assert process.stdin is not None
            try:
                await process.stdin.send(payload)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass  # a hook that does not read its event
            finally:
                await process.stdin.aclose()

        drained = anyio.Event()
        async with anyio.create_task_group() as group:
            group.start_soon(feed)
            group.start_soon(_drain_both, process, stdout, stderr, drained)
            await process.wait()
            # The command has answered. A job it left in the background (``cmd &``) shares its
            # pipes, so their end of file would wait for that job: end the group instead, and
            # take what is already written.
            _kill_group(process.pid)
            with anyio.move_on_after(OUTPUT_GRACE):
                await drained.wait()
            group.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            _kill_group(process.pid)  # and what it left in its group
            await process.wait()
            await process.aclose()
    assert process.returncode is not None
    return CommandOutcome(process.returncode, bytes(stdout), bytes(stderr))


def read_directive(stdout: bytes) -> PreCallDirective | None:
    """The directive a ``pre_tool_call`` hook printed: ``None`` for no output (or ``{}``); a
    block for anything that is not a JSON directive (fail closed)."""
    text = stdout.decode("utf-8", "replace").strip()
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return PreCallDirective.block(
            f"it printed something that is not a JSON directive: {clipped(text)}"
        )
    return answered_directive(value, f"it printed an unknown directive: {clipped(text)}")


DIRECTIVES: Final = "(a directive is {}, or an action: block, approve, or modify with arguments)"


def answered_directive(value: Any, unknown: str) -> PreCallDirective | None:
    """The directive a ``pre_tool_call`` hook answered (the JSON a shell hook printed, the
    mapping a hook directory's ``handle`` returned): ``None`` for ``{}``; a block saying
    ``unknown`` and what a directive is for anything else that is not one (fail closed)."""
    if value == {}:
        return None
    action = value.get("action") if isinstance(value, Mapping) else None
    if action == "block":
        return PreCallDirective.block(str(value.get("message") or "no reason given"))
    if action == "approve":
        return PreCallDirective.approve(str(value.get("message") or ""))
    if action == "modify" and isinstance(value.get("arguments"), Mapping):
        return PreCallDirective.modify(dict(value["arguments"]))
    return PreCallDirective.block(f"{unknown} {DIRECTIVES}")


def unrunnable_shell_hooks(
    hooks: HooksConfig, env: Environment, config_path: Path | None = None
) -> list[str]:
    """A warning for each shell hook that cannot run (:func:`cannot_run`), naming its key (and
    ``config_path``, the file it is in): it would fail every event it sees (a ``pre_tool_call``
    one blocks the calls), so a host says so at its start."""
    found = []
    where = f" in {config_path}" if config_path is not None else ""
    for event in EVENTS:
        for index, hook in enumerate(getattr(hooks, event)):
            missing = cannot_run(hook.command, env)
            if missing is not None:
                found.append(
                    f"shell hook {clipped(hook.command)!r} (hooks.{event}[{index}]{where}) "
                    f"cannot run: {missing}; fix or remove it"
                )
    return found


def cannot_run(command: str, env: Environment) -> str | None:
    """Why ``command`` cannot run in the working directory: the project keeps it from running
    there (:func:`hook_refusal`), or its command cannot start (:func:`missing_command`)."""
    return hook_refusal(command, env.cwd, env) or missing_command(command, env)


def missing_command(command: str, env: Environment) -> str | None:
    """Why ``command`` cannot start (``its command 'x' is not on PATH``, a path that does not
    exist or is not executable), or ``None``: its first command was found, or is the shell's
    own, or is known only when the shell runs it (a variable, a substitution)."""
    # Imported here: asked only when shell hooks are configured (hooks list, a host's start).
    from hermes_core._approvals.shell_words import split_words

    line = split_words(command)
    if line.unparseable or not line.segments:
        return None
    words = line.segments[0][1]
    index = command_index(words)
    if index == len(words):
        return None
    name, expands = words[index]
    if expands or name in _SHELL_OWN:
        return None
    if "/" not in name:
        if shutil.which(name, path=env.get("PATH") or os.defpath) is None:
            return f"its command {name!r} is not on PATH"
        return None
    if name.startswith("~"):  # the shell's $HOME (or another account's home: not looked up)
        home = env.get("HOME")
        if home is None or not name.startswith("~/"):
            return None
        name_path = Path(home) / name[2:]
    else:
        name_path = Path(name)
    path = env.cwd / name_path
    if not path.is_file():
        return f"its command {name!r} does not exist ({path})"
    if not os.access(path, os.X_OK):
        return f"its command {name!r} is not executable ({path})"
    return None


def guarded_environment(command: str, cwd: Path, env: Environment) -> dict[str, str]:
    """The environment ``command`` runs with in ``cwd``: the host's, plus the variables of its
    launcher's guard when ``cwd`` is a project whose gate is closed
    (:func:`~hermes_core._mcp.launch.project_guard`: ``PYTHONSAFEPATH=1`` for ``python3 -m
    NAME``). Only a simple command is read (one command, its command substitutions aside):
    what a longer line or a script runs is not known before the shell runs it; a guard's
    arguments are not added."""
    from hermes_core._approvals.shell_words import split_words
    from hermes_core._mcp.launch import project_guard

    line = split_words(lift_substitutions(command)[0])
    if line.unparseable or len(line.segments) != 1:
        return dict(env.variables)
    words = line.segments[0][1]
    index = command_index(words)
    if index == len(words) or words[index][1]:
        return dict(env.variables)
    # A word the shell fills when it runs (`"$HOME/log"`, `"$(pwd)"`) is read as written: it
    # can hide a guard's need (`python3 $FLAGS -m x`), as before, but not remove a guard.
    name, *args = (word for word, _ in words[index:])
    return {**env.variables, **project_guard(name, args, cwd, env).variables}


class ShellAction:
    """Runs one configured command for an event."""

    def __init__(self, hook: ShellHook, event: HookEvent, env: Environment) -> None:
        self.hook = hook
        self.event = event
        self.env = env

    async def __call__(self, event: dict[str, Any]) -> Any:
        cwd = Path(str(event.get("cwd") or self.env.cwd))
        if (refusal := hook_refusal(self.hook.command, cwd, self.env)) is not None:
            if self.event == "pre_tool_call":
                return PreCallDirective.block(refusal)  # a guard that cannot run fails closed
            raise ShellHookFailed(refusal)
        variables = guarded_environment(self.hook.command, cwd, self.env)
        try:
            outcome = await run_command(self.hook.command, event, cwd=cwd, env=variables)
        except OSError as exc:
            if self.event == "pre_tool_call":
                return PreCallDirective.block(f"it could not be started: {exc}")
            raise ShellHookFailed(f"it could not be started: {exc}") from None
        failure = outcome.failure()
        if self.event != "pre_tool_call":
            if failure is not None:
                raise ShellHookFailed(f"it {failure}")
            return None
        if failure is not None:
            return PreCallDirective.block(f"it {failure}")
        return read_directive(outcome.stdout)


def shell_hooks(hooks: HooksConfig, env: Environment) -> list[tuple[str, EventHook]]:
    """A plugin object per configured command, with its registration name, in the order to
    register them: the first command listed for an event runs first (pluggy calls the last
    registered first)."""
    made: list[tuple[str, EventHook]] = []
    for event in EVENTS:
        listed: list[ShellHook] = getattr(hooks, event)
        for index, hook in enumerate(listed):
            key = f"hooks.{event}[{index}]"
            owner = f"shell hook {clipped(hook.command)!r} ({key})"
            remedy = f"fix or remove it ({key} of the configuration)"
            adapter = adapter_for(
                event, owner, remedy, hook.timeout, hook.match, ShellAction(hook, event, env)
            )
            made.append((f"shell-hook:{event}:{index}", adapter))
    made.reverse()
    return made
