"""The toolsets a cron job may name, checked when it is made and again when it runs
(:func:`check_toolsets`): never ``cron`` (**jobs cannot make jobs**), and, where the host's
tools are known, none that no tool has: a job given such a toolset would run without its tools
(a plugin not loaded, removed since, or a misspelt name), so it is refused by name instead.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Final

from hermes_core.agent._cron_schedule import JobError
from hermes_core.agent._delegated_tasks import DELEGATION_TOOLSET

if TYPE_CHECKING:
    from hermes_core._config import Config

__all__ = ["CRON_TOOLSET", "check_toolsets", "job_toolsets"]

CRON_TOOLSET: Final = "cron"
"""The toolset of the ``cronjob`` tool: never granted to a job's session."""


def job_toolsets(grantable: Collection[str], config: Config) -> frozenset[str]:
    """The toolsets a job may name: ``grantable`` (the host's
    :func:`~hermes_core._toolsets.grantable_toolsets`) and those the agent that runs it
    registers itself (``delegation``; ``memory`` when ``memory.enabled``), never ``cron``."""
    from hermes_core.agent._memory import MEMORY_TOOLSET

    own = {DELEGATION_TOOLSET, *([MEMORY_TOOLSET] if config.memory.enabled else [])}
    return frozenset({*grantable, *own} - {CRON_TOOLSET})


def check_toolsets(
    toolsets: object, known: Collection[str] | None = None
) -> tuple[str, ...] | None:
    """``toolsets`` as a tuple of names (``None``: all), else a :class:`JobError`: never
    ``cron`` (jobs cannot make jobs), and with ``known`` (:func:`job_toolsets`) no name that
    none of them is, naming it and listing them (a job given such a toolset would run without
    its tools)."""
    if toolsets is None:
        return None
    if not isinstance(toolsets, Sequence) or isinstance(toolsets, str):
        raise JobError("toolsets", f"expected a list of toolset names, got {toolsets!r}")
    if not all(isinstance(name, str) and name for name in toolsets):
        raise JobError("toolsets", f"expected a list of toolset names, got {toolsets!r}")
    if CRON_TOOLSET in toolsets:
        raise JobError("toolsets", "a job cannot use the cron toolset (jobs cannot make jobs)")
    if known is not None and (unknown := [name for name in toolsets if name not in known]):
        named = ", ".join(repr(name) for name in unknown)
        raise JobError(
            "toolsets",
            f"no tool has the toolset{'s' * (len(unknown) > 1)} {named} (its plugin is not "
            f"loaded, or was removed, or the name is misspelt); the toolsets here: "
            f"{', '.join(sorted(known)) or 'none'}",
        )
    return tuple(toolsets)
