"""The environment a script started for a session sees: scrubbed of secrets, in one place.

The rule (execution.md, "execute_code"): every variable whose name contains ``KEY``, ``TOKEN``,
``SECRET``, ``PASSWORD``, ``PASSWD``, ``CREDENTIAL`` or ``AUTH`` (any case) is removed; of the
rest only the safe system variables of :data:`SAFE_VARIABLES` (and ``LC_*``) pass. On top of
that pass, when they are set, the names of ``code_execution.env_passthrough``
(:func:`configured_passthrough`), the ``requires_env`` of the loaded plugins and the variables a
session was given (the ``required_environment_variables`` of a skill it viewed). No mode changes
this, and every child process started for a session gets the same
(:meth:`~hermes_core._execution.caller.ToolCaller.child_environment`), ``execute_code``'s script
or a third party's.
"""

from __future__ import annotations

import weakref
from collections.abc import Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Final

from hermes_core._plugin_settings import moved_settings

if TYPE_CHECKING:
    from hermes_core._config import Config
    from hermes_core._session import Session

__all__ = [
    "SAFE_VARIABLES",
    "SECRET_MARKERS",
    "ScriptPassthrough",
    "configured_passthrough",
    "looks_secret",
    "scrubbed_environment",
]

SECRET_MARKERS: Final = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH")
"""A variable whose name contains one of these (in any case) is a secret."""

SAFE_VARIABLES: Final = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "LANGUAGE",
        "TERM",
        "TZ",
        "TMPDIR",
        "TEMP",
        "TMP",
        "COLUMNS",
        "LINES",
        "VIRTUAL_ENV",
        "SYSTEMROOT",
        "WINDIR",
        "COMSPEC",
        "PATHEXT",
    }
)
"""The system variables a script gets from the host (plus every ``LC_*``)."""

_SAFE_PREFIXES: Final = ("LC_",)


def looks_secret(name: str) -> bool:
    """Whether the variable ``name`` holds a secret by the scrub rule (``GH_TOKEN``,
    ``db_password``, ``MY_AUTH``)."""
    upper = name.upper()
    return any(marker in upper for marker in SECRET_MARKERS)


def configured_passthrough(config: Config) -> tuple[str, ...]:
    """The names ``env_passthrough`` lets through for every session: of
    ``plugins.entries.code_execution`` over the deprecated ``code_execution`` section
    (:func:`~hermes_core._plugin_settings.moved_settings`, the rule ``execute_code`` reads its
    settings by). A value that is not a list of names lets none through: the ``code_execution``
    plugin refuses it when it loads, naming the key."""
    names = moved_settings(config, "code_execution").get("env_passthrough", ())
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        return ()
    return tuple(names)


def scrubbed_environment(
    variables: Mapping[str, str], passthrough: Collection[str] = ()
) -> dict[str, str]:
    """The safe, non-secret variables of ``variables``, plus the ``passthrough`` names that are
    set there (a passthrough name passes even when it looks secret: that is what it is for)."""
    kept = {
        name: value
        for name, value in variables.items()
        if (name in SAFE_VARIABLES or name.startswith(_SAFE_PREFIXES)) and not looks_secret(name)
    }
    for name in passthrough:
        value = variables.get(name)
        if value is not None:
            kept[name] = value
    return kept


class ScriptPassthrough:
    """Which variable names pass the scrub, for every session of one dispatcher.

    ``always`` holds the names that pass for every session (``code_execution.env_passthrough``,
    the loaded plugins' ``requires_env``); :meth:`give` adds names for one session, kept as long
    as the session lives.
    """

    def __init__(self, always: Iterable[str] = ()) -> None:
        self.always: frozenset[str] = frozenset(always)
        self._given: weakref.WeakKeyDictionary[Session, set[str]] = weakref.WeakKeyDictionary()

    def give(
        self, session: Session, names: Iterable[str], variables: Mapping[str, str]
    ) -> list[str]:
        """Let ``names`` pass for ``session``, those that are set in ``variables`` only;
        return the names given."""
        given = [name for name in names if variables.get(name) is not None]
        if given:
            self._given.setdefault(session, set()).update(given)
        return given

    def names(self, session: Session) -> frozenset[str]:
        """Every name that passes for ``session``."""
        found = self._given.get(session)
        return self.always | found if found else self.always
