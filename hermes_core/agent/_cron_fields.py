"""The fields of a cron job as :class:`~hermes_core.agent._cron_store.CronJobs` checks them
before it stores or edits one: its prompt, name, delivery, directory and model (its schedule:
:mod:`~hermes_core.agent._cron_schedule`; its toolsets: :mod:`~hermes_core.agent._cron_toolsets`;
its model, by :func:`~hermes_core.agent._model_names.model_problem`'s rule). Each bad field is a
:class:`JobError` naming it.
"""

from __future__ import annotations

import os
from typing import Final

from hermes_core._redaction import shown_url
from hermes_core._shown import printable, shown
from hermes_core.agent._cron_schedule import JobError
from hermes_core.agent._model_names import model_problem

DELIVERIES: Final = "'file' (a file under $HERMES_HOME/cron/output), 'stdout', or an http(s) URL"
"""Where a run's answer may go, as error messages name it."""
_MAX_PROMPT: Final = 20_000
_MAX_NAME: Final = 200
_MAX_DELIVERY: Final = 2048
"""The longest webhook URL: what web servers commonly accept in a request line; a longer one
would be stored, shown in every listing and quoted in errors whole."""


def check_delivery(delivery: object, *, quoted: bool = True) -> str:
    """``delivery`` if it is one of :data:`DELIVERIES` (a URL's scheme, in any case, given in
    lowercase: RFC 3986 3.1), else a :class:`JobError`. With ``quoted=False`` the message
    names the value without quoting it: a run's detail goes to the daemon's log, which never
    holds a webhook's URL (it often holds its token)."""
    if delivery in ("file", "stdout"):
        return str(delivery)
    if isinstance(delivery, str) and len(delivery) > _MAX_DELIVERY:
        raise JobError("delivery", f"{len(delivery)} characters; at most {_MAX_DELIVERY}")
    shown = shown_url(delivery) if isinstance(delivery, str) else delivery
    named = repr(shown) if quoted else "the delivery `hermes cron list` shows"
    scheme, colon, rest = delivery.partition(":") if isinstance(delivery, str) else ("", "", "")
    if scheme.lower() in ("http", "https") and rest.startswith("//"):
        import httpx

        given = scheme.lower() + colon + rest
        try:
            url = httpx.URL(given)
        except httpx.InvalidURL as bad:
            raise JobError("delivery", f"{named} is not a URL: {bad}") from None
        if url.host:
            return given
    raise JobError("delivery", f"expected {DELIVERIES}, got {named}")


def check_cwd(cwd: object) -> str | None:
    """A job's directory as an absolute path (a relative one is taken from this process's),
    which must be a directory now; ``None`` stays ``None``."""
    if cwd is None:
        return None
    given = os.fspath(cwd) if isinstance(cwd, os.PathLike) else cwd
    if not isinstance(given, str) or not given:
        raise JobError("cwd", f"expected a directory, got {shown(cwd)}")
    path = os.path.abspath(given)
    if "\0" in path or not os.path.isdir(path):
        raise JobError(
            "cwd", f"{printable(path)} is not a directory: create it, or give an existing directory"
        )
    return path


def check_name(name: object) -> None:
    """A job's name is one line of text a terminal shows as it is: a model writes names too."""
    if not isinstance(name, str) or not name.strip():
        raise JobError("name", f"expected a short text, got {shown(name)}")
    if len(name) > _MAX_NAME:
        raise JobError("name", f"{len(name)} characters; at most {_MAX_NAME}")
    if not name.isprintable():
        bad = next(char for char in name if not char.isprintable())
        raise JobError(
            "name", f"it holds a control character ('{printable(bad)}'): a name is one line"
        )


def check_prompt(prompt: object) -> str:
    """``prompt`` if it is the text a job sends to the model (not blank, not too long), else
    a :class:`JobError` naming the field."""
    if not isinstance(prompt, str) or not prompt.strip():
        raise JobError("prompt", "expected the text the job sends to the model")
    if len(prompt) > _MAX_PROMPT:
        raise JobError("prompt", f"{len(prompt)} characters; at most {_MAX_PROMPT}")
    return prompt


def check_model(model: object) -> str | None:
    """``model`` without the space around it if it is one model name by
    :func:`~hermes_core.agent._model_names.model_problem`'s rule, ``None`` for none (``model.model``
    at run time), else a :class:`JobError` naming the field."""
    if model is None:
        return None
    chosen = model.strip() if isinstance(model, str) else model
    if (problem := model_problem(chosen)) is not None:
        raise JobError("model", problem)
    return str(chosen)


__all__ = [
    "DELIVERIES",
    "check_cwd",
    "check_delivery",
    "check_model",
    "check_name",
    "check_prompt",
]
