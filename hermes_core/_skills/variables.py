"""Which of a skill's ``required_environment_variables`` viewing it releases to scripts.

A skill is text anyone can write (a cloned repository's, an imported one), so what it lists
is a request, not a grant: a variable is released only when the user allowed it in
``skills.allowed_environment_variables``, and never when it is one of hermes' own credentials
(a ``HERMES_*`` variable that is a secret by the scrub rule: ``HERMES_CONNECTORS_TOKEN``, the
serve token), even when listed there.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from hermes_core._execution.environment import looks_secret

__all__ = ["is_hermes_credential", "releasable_variables"]

ALLOWED_KEY = "skills.allowed_environment_variables"


def is_hermes_credential(name: str) -> bool:
    """Whether ``name`` is one of hermes' own credentials: ``HERMES_*`` and a secret by name."""
    return name.upper().startswith("HERMES_") and looks_secret(name)


def releasable_variables(
    wanted: Iterable[str], allowed: Collection[str]
) -> tuple[list[str], dict[str, str]]:
    """The names of ``wanted`` a skill may release, and why each other one may not."""
    released: list[str] = []
    refused: dict[str, str] = {}
    for name in wanted:
        if is_hermes_credential(name):
            refused[name] = "one of hermes' own credentials, never released to scripts"
        elif name not in allowed:
            refused[name] = f"not in {ALLOWED_KEY}"
        else:
            released.append(name)
    return released, refused
