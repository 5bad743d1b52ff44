"""Shell hooks and hook directories: extending the call path without writing a plugin.

Both become plugin objects registered with the host's plugin manager after the plugins, so the
dispatcher runs them with the plugins' hooks, in one pipeline: the same order rule (last
registered first: shell hooks in the order listed, then hook directories by name, then the
plugins' hooks), each under its own ``timeout``, ``pre_tool_call`` failing closed, blocked and
denied calls in the same activity log. See ``docs/plugins.md``, "Shell hooks and hook
directories".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hermes_core._hooks.directories import (
    HookDirectory,
    hook_directory_plugins,
    load_hook_directories,
    plan_hook_directories,
    refusing_plugins,
)
from hermes_core._hooks.events import EVENTS, HookEvent
from hermes_core._hooks.shell import shell_hooks, unrunnable_shell_hooks
from hermes_core._project_trust import config_refusal

if TYPE_CHECKING:
    from pathlib import Path

    import pluggy

    from hermes_core._config import Config
    from hermes_core._paths import Environment

__all__ = [
    "EVENTS",
    "HookDirectory",
    "HookEvent",
    "RegisteredHooks",
    "plan_hook_directories",
    "register_hooks",
]


@dataclass
class RegisteredHooks:
    """What :func:`register_hooks` put into a plugin manager, to take out again."""

    pm: pluggy.PluginManager
    objects: list[object] = field(default_factory=list)
    directories: list[HookDirectory] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def unregister(self) -> None:
        """Remove every registered hook object."""
        for plugin in self.objects:
            if self.pm.is_registered(plugin):
                self.pm.unregister(plugin)
        self.objects.clear()


def register_hooks(
    pm: pluggy.PluginManager,
    config: Config,
    env: Environment,
    *,
    strict: bool = False,
    config_path: Path | None = None,
) -> RegisteredHooks:
    """Register the enabled hook directories, the refusals of those that failed to load, then
    the shell hooks of ``config.hooks``, with ``pm`` (after the plugins: they run before the
    plugins' hooks); the warnings say what will not run as configured (a directory that failed
    to load, a shell hook whose command is missing, what the gate holds back). ``config_path``
    is the file ``config`` was read from (``None``: built in code); the shell hooks of a file
    that is the project's run only with the project gate open
    (:func:`~hermes_core._project_trust.config_refusal`)."""
    directories, warnings = load_hook_directories(
        config, env, strict=strict, config_path=config_path
    )
    registered = RegisteredHooks(pm, directories=directories, warnings=warnings)
    commands = shell_hooks(config.hooks, env)
    refusal = (
        config_refusal(env, config_path, "the shell hooks of the config file") if commands else None
    )
    if refusal is not None:
        warnings.append(f"{refusal}: not run")
        commands = []
    elif commands:
        warnings += unrunnable_shell_hooks(config.hooks, env, config_path)
    # Registered last, so they run first: a refusal needs no other hook's answer.
    made = [*hook_directory_plugins(directories), *commands, *refusing_plugins(directories)]
    for name, plugin in made:
        pm.register(plugin, name=name)
        registered.objects.append(plugin)
    return registered
