"""The checks of ``hermes doctor`` that only a plugin knows: each loaded (enabled) plugin's
``hermes_doctor_checks``, called with its own context, and each check it returns run under
the plugin's name as group, all at once. A hook or a check that raises, returns something
else or takes over ``plugins.hook_timeout`` is one error line naming the plugin, never a
crash; with ``--offline`` a check that sends requests (``network``) is not run."""

from __future__ import annotations

import inspect
import threading
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, TypeVar, get_args

import anyio

from hermes_core._cli.doctor_checks import OWN_GROUPS, Check, not_checked
from hermes_core._shown import shown
from hermes_core._specs import DoctorCheckSpec, DoctorResult, DoctorStatus

if TYPE_CHECKING:
    from hermes_core._host import Host

__all__ = ["HOOK", "plugin_doctor_checks"]

HOOK: Final = "hermes_doctor_checks"
_STATUSES: Final = frozenset(get_args(DoctorStatus))
_T = TypeVar("_T")


class _Refused(Exception):
    """What a hook or a check returned that is not what it must return, or its silence: the
    message follows the name of the hook or check."""


async def plugin_doctor_checks(host: Host, *, offline: bool) -> list[Check]:
    """Every loaded plugin's checks, in plugin order and each plugin's own order."""
    timeout = host.config.plugins.hook_timeout
    impls = host.pm.hook.hermes_doctor_checks.get_hookimpls()
    results: dict[str, list[Check]] = {}
    async with anyio.create_task_group() as group:
        for impl in reversed(impls):  # pluggy's call order: the highest source first
            results[impl.plugin_name] = []
            group.start_soon(_plugin_checks, host, impl, timeout, offline, results)
    return [check for found in results.values() for check in found]


async def _plugin_checks(
    host: Host, impl: Any, timeout: float, offline: bool, results: dict[str, list[Check]]
) -> None:
    plugin: str = impl.plugin_name
    group = _group(host, plugin)
    context = host.plugin_context(plugin)
    arguments = {"config": context.config, "env": context.env, "context": context}
    hint = f"hermes plugins info {plugin}"

    def call() -> Any:
        return impl.function(*(arguments[name] for name in impl.argnames))

    try:
        specs = _specs(await _within(call, timeout))
    except Exception as exc:
        results[plugin] = [Check(group, "checks", "error", _failed(plugin, HOOK, exc), hint)]
        return
    found: dict[str, Check] = {}
    async with anyio.create_task_group() as tasks:
        for spec in specs:
            if offline and spec.network:
                found[spec.name] = not_checked(
                    group, spec.name, "not run: it sends requests (--offline)"
                )
            else:
                tasks.start_soon(_run, plugin, group, spec, timeout, found)
    results[plugin] = [found[spec.name] for spec in specs]


def _group(host: Host, plugin: str) -> str:
    """The group of ``plugin``'s lines: its name, and its source and folder when the name is
    also a copy it beat (a user's ``memory`` over the bundled one) or a group of doctor's own,
    so its lines never read as hermes's."""
    record = next((r for r in host.plugins if r.name == plugin and r.loadable), None)
    if record is None or record.source == "bundled" or record.path is None:
        return plugin
    if record.shadows or plugin in OWN_GROUPS:
        return f"{plugin} ({record.source} plugin {record.path})"
    return plugin


async def _run(
    plugin: str, group: str, spec: DoctorCheckSpec, timeout: float, found: dict[str, Check]
) -> None:
    try:
        result = await _within(lambda: _awaited(spec.run()), timeout)
        if not isinstance(result, DoctorResult):
            raise _Refused(f"returned {type(result).__name__} {shown(result)}, not a DoctorResult")
        if result.status not in _STATUSES:
            statuses = ", ".join(sorted(_STATUSES))
            raise _Refused(f"returned the status {result.status!r}, not one of {statuses}")
    except Exception as exc:
        message = _failed(plugin, f"the check {spec.name!r}", exc)
        found[spec.name] = Check(
            group, spec.name, "error", message, f"hermes plugins info {plugin}"
        )
        return
    found[spec.name] = Check(group, spec.name, result.status, str(result.message), str(result.hint))


def _specs(returned: object) -> list[DoctorCheckSpec]:
    """What the hook returned, as a list of checks with names of their own; else
    :class:`_Refused` saying what it was."""
    if inspect.isawaitable(returned):
        close = getattr(returned, "close", None)
        if callable(close):
            close()
        raise _Refused("is async def: define it with def (a check's run may be async)")
    if returned is None:
        return []
    if isinstance(returned, DoctorCheckSpec):
        returned = [returned]
    if not isinstance(returned, list | tuple):
        raise _Refused(f"must return a list of DoctorCheckSpec, got {type(returned).__name__}")
    wrong = [item for item in returned if not isinstance(item, DoctorCheckSpec)]
    if wrong:
        got = f"{type(wrong[0]).__name__} {shown(wrong[0])}"
        raise _Refused(f"must return a list of DoctorCheckSpec, got a list holding {got}")
    names = Counter(spec.name for spec in returned)
    twice = next((name for name, count in names.items() if count > 1), None)
    if twice is not None:
        raise _Refused(f"returned the check name {twice!r} twice: give each its own name")
    return list(returned)


def _awaited(returned: object) -> object:
    """``returned``, or what it gives when awaited (a check's ``run`` may be ``async def``),
    in an event loop of this thread's own."""
    if not inspect.isawaitable(returned):
        return returned

    async def wait() -> object:
        return await returned

    return anyio.run(wait)


async def _within(function: Callable[[], _T], timeout: float) -> _T:
    """``function()`` in a thread of its own, a daemon one: a plugin's code that hangs (a
    blocking read, a sleep) is left behind at ``timeout``, and neither stops the report nor
    keeps the command from exiting."""

    def wait() -> _T:
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                box["value"] = function()
            except BaseException as exc:  # handed to the caller, whatever it is
                box["error"] = exc

        thread = threading.Thread(target=target, name="hermes doctor check", daemon=True)
        thread.start()
        thread.join(timeout)
        if thread.is_alive():
            raise _Refused(f"gave no answer within {timeout:g} s (plugins.hook_timeout)")
        error = box.get("error")
        if isinstance(error, Exception):
            raise error
        if error is not None:  # SystemExit, KeyboardInterrupt: the plugin's, not this process's
            raise _Refused(f"raised {type(error).__name__}: {error}")
        value: _T = box["value"]
        return value

    return await anyio.to_thread.run_sync(wait)


def _failed(plugin: str, what: str, exc: BaseException) -> str:
    """``plugin 'x': hermes_doctor_checks raised ValueError: ...``, on one line."""
    if isinstance(exc, _Refused):
        said = f"{what} {exc}"
    else:
        said = f"{what} raised {type(exc).__name__}: {exc}"
    said = " ".join(said.split())
    return f"plugin {plugin!r}: {said}; fix or disable it (hermes plugins disable {plugin})"
