"""Enabling and disabling by name in ``config.yaml``: ``hermes plugins enable|disable`` and
``hermes hooks enable|disable`` edit their pair of lists the same way."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING

import click

from hermes_core._cli.context import environment, say_if_held_back
from hermes_core._cli.output import did_you_mean, warnings_to_stderr

if TYPE_CHECKING:
    from hermes_core._config import Config, ConfigDocument
    from hermes_core._paths import Environment


def edit_lists(
    name: str,
    *,
    section: str,
    enable: bool,
    known: Callable[[Config, Environment], Iterable[str]],
    what: str,
    blocker: Callable[[Config, Environment, str], str | None] | None = None,
    checked: Callable[[ConfigDocument, Environment], AbstractContextManager[None]] | None = None,
) -> None:
    """Enable (or disable) ``name`` in ``<section>.enabled`` / ``<section>.disabled``: add it
    to one list and remove every spelling of it from the other, in place (comments and key
    order kept), names compared normalized. Warns when no ``what`` of that name is among
    ``known(config, env)``, and, when enabling, when ``blocker(config, env, name)`` says why
    it will still not load (gated, say) and what to do. ``checked``: the edit is made within
    it, which may refuse it (exit, nothing written)."""
    from hermes_core._config import edit_config
    from hermes_core._plugin_names import normalize_name

    add_to = f"{section}.enabled" if enable else f"{section}.disabled"
    remove_from = f"{section}.disabled" if enable else f"{section}.enabled"
    verb = "enabled" if enable else "disabled"
    env = environment()
    wanted = normalize_name(name)
    with warnings_to_stderr(), edit_config(env) as document, _within(checked, document, env):
        for spelling in _spellings(document.get(remove_from), wanted):
            document.remove_from_list(remove_from, spelling)
        already = _spellings(document.get(add_to), wanted)
        if not already:
            document.add_to_list(add_to, wanted)
        changed = document.changed
        config = document.validate()
    if changed:
        click.echo(f"{verb} {wanted} in {env.config_path}")
    else:
        click.echo(f"{wanted} is already {verb} in {env.config_path}")
    say_if_held_back(env)
    names = list(known(config, env))
    if wanted not in names:
        hint = did_you_mean(wanted, names)
        click.echo(
            f"hermes: warning: no {what} named {wanted!r} is installed (yet).{hint} "
            f"See: hermes {section} list",
            err=True,
        )
    elif enable and blocker is not None and (why := blocker(config, env, wanted)) is not None:
        click.echo(f"hermes: warning: {wanted} is enabled but will not load: {why}", err=True)


def _within(
    checked: Callable[[ConfigDocument, Environment], AbstractContextManager[None]] | None,
    document: ConfigDocument,
    env: Environment,
) -> AbstractContextManager[None]:
    return nullcontext() if checked is None else checked(document, env)


def _spellings(items: object, wanted: str) -> list[str]:
    from hermes_core._plugin_names import normalize_name

    if not isinstance(items, list):
        return []
    return [item for item in items if isinstance(item, str) and normalize_name(item) == wanted]


def unmatched_names(
    section: str,
    lists: tuple[Iterable[str], Iterable[str]],
    found: Iterable[str],
    *,
    what: str,
    config_path: object,
) -> list[str]:
    """A warning for each name of ``<section>.enabled`` and ``<section>.disabled`` (``lists``)
    that no ``what`` found has, with the closest found name: a typo there enables nothing, or
    leaves enabled what it meant to disable."""
    from hermes_core._plugin_names import normalize_name

    known = sorted(set(found))
    problems = []
    for key, names in zip(("enabled", "disabled"), lists, strict=True):
        for name in names:
            wanted = normalize_name(name)
            if wanted not in known:
                problems.append(
                    f"{section}.{key} in {config_path} names {name!r}, but no {what} of that "
                    f"name was found.{did_you_mean(wanted, known)}"
                )
    return problems
