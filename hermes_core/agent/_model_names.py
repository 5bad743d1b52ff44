"""The one rule of a model name, whoever gives it: ``--model NAME`` of ``hermes run``,
``hermes chat`` and ``hermes cron create``, ``/model NAME``, a cron job's stored model, and the
models a provider lists for ``hermes acp``'s picker (:func:`model_problem`).

A name is one word of printable text, at most :data:`MAX_MODEL` characters; the space around
it is no part of it. It is not checked with the provider: a name it does not know is its error
at the next request.
"""

from __future__ import annotations

from typing import Final

from hermes_core._shown import shown

__all__ = ["MAX_MODEL", "model_problem"]

MAX_MODEL: Final = 200
"""The longest model name: providers' names are far shorter, and a longer one would be shown
in every listing and quoted in errors whole."""


def model_problem(model: object) -> str | None:
    """What makes ``model`` (the space around it left out) no model name, else ``None``."""
    if not isinstance(model, str) or len(model.split()) != 1:
        return f"expected one model name (one word), got {shown(model)}"
    name = model.strip()
    if len(name) > MAX_MODEL:
        return f"{len(name)} characters; at most {MAX_MODEL}"
    if not name.isprintable():
        return "it holds a control character"
    return None
