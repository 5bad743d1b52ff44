"""A model server's failed answer as a :class:`ModelError`: one place for every provider.

What is retryable (429, 5xx but 501, no answer at all), how long the server asked to wait
(``retry-after-ms``, then ``retry-after`` in seconds or as an HTTP date), and a message naming
the provider, the model and what to check (the key's variable for a 401, ``model.model`` and
``model.base_url`` for a 404, ``model.base_url`` for a 405 or 501), never the key: a server's
own message is left out for 401 and 403 (real servers echo part of the key) and redacted
otherwise. A request past the model's context window is a :class:`ContextOverflowError`, by
the words every known server answers it with (:func:`overflowed`).
"""

from __future__ import annotations

import errno
import re
import socket
import sys
from collections.abc import Mapping

from hermes_core._redaction import redact_text, shown_url
from hermes_core._retry_after import retry_after_seconds as header_seconds
from hermes_core.agent._wire import ContextOverflowError, ModelError

__all__ = ["http_model_error", "overflowed", "retry_after_seconds", "transport_errors"]

_DETAIL_LIMIT = 500


def retry_after_seconds(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """How long the server asked to wait: ``retry-after-ms`` (milliseconds, as OpenAI sends),
    else ``retry-after`` (:func:`hermes_core._retry_after.retry_after_seconds`); ``None`` when
    it said nothing usable."""
    lowered = {key.lower(): value for key, value in headers.items()}
    milliseconds = lowered.get("retry-after-ms")
    if milliseconds is not None:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    return header_seconds(lowered.get("retry-after"), now)


def _clean(detail: str, secret: str | None) -> str:
    if secret:
        detail = detail.replace(secret, "[redacted]")
    detail = redact_text(" ".join(detail.split()))
    return detail if len(detail) <= _DETAIL_LIMIT else detail[:_DETAIL_LIMIT] + "..."


_UNREACHABLE = frozenset({errno.ECONNREFUSED, errno.EHOSTUNREACH, errno.ENETUNREACH})


def _never_connected(error: BaseException | None) -> bool:
    """Whether ``error`` (an SDK's, wrapping its HTTP library's) came of a connection refused
    or a host not found: read down its chain of causes, whichever HTTP library raised it."""
    for _ in range(16):  # a chain is short; a cycle of contexts must not hang
        if error is None:
            return False
        if isinstance(error, socket.gaierror) or (
            isinstance(error, OSError) and error.errno in _UNREACHABLE
        ):
            return True
        error = error.__cause__ or error.__context__
    return False


def _innermost(error: BaseException | None) -> str:
    """The message of the last exception of ``error``'s chain of causes that has one: the
    transport's own words under an SDK's ("Connection error.")."""
    said = ""
    for _ in range(16):  # a chain is short; a cycle of contexts must not hang
        if error is None:
            break
        said = str(error) or said
        error = error.__cause__ or error.__context__
    return said


_OVERFLOW_WORDS = re.compile(
    r"context_length_exceeded|maximum context length|context length exceeded"
    r"|prompt is too long|exceeds? the (?:available )?context (?:size|window)"
    r"|exceeds? (?:the )?context limit|input tokens exceed the configured limit"
    r"|exceeds the maximum number of tokens|exceed_context_size_error"
    r"|too many tokens: (?:total number of tokens in the prompt|size limit exceeded)"
    r"|input is too long|when context (?:the )?overflows",
    re.IGNORECASE,
)
"""How servers say a request is past the context window: OpenAI (``context_length_exceeded``,
"maximum context length", "exceeds the context window", "input tokens exceed the configured
limit"), vLLM and other OpenAI-compatible servers ("maximum context length"), Anthropic
("prompt is too long", "exceed context limit" with ``max_tokens``), llama.cpp's server
(``exceed_context_size_error``, "exceeds the available context size"), Gemini's
OpenAI-compatible API ("exceeds the maximum number of tokens"), LM Studio ("when context the
overflows", its window the one the model was loaded with), Cohere ("too many tokens:" and
what of the prompt; those words alone say nothing of the window)."""

_OUTPUT_LIMIT_WORDS = re.compile(
    r"max_(?:completion_)?tokens'? (?:or 'max_completion_tokens' )?is too large",
    re.IGNORECASE,
)
"""vLLM's refusal of a ``max_tokens`` past the window, which names the window's "maximum context
length" too: ``model.max_output_tokens`` is to lower, no compaction makes room for it."""


def _says_overflow(detail: str) -> bool:
    return bool(_OVERFLOW_WORDS.search(detail)) and not _OUTPUT_LIMIT_WORDS.search(detail)


def overflowed(error: ModelError) -> bool:
    """Whether ``error`` is a request refused for its size: a :class:`ContextOverflowError`, or
    a 400 or 413 whose words say so (a provider that builds its own :class:`ModelError`). The
    one rule the loop compacts and explains by, whatever the provider."""
    if isinstance(error, ContextOverflowError):
        return True
    return error.status == 413 or (error.status == 400 and _says_overflow(str(error)))


_NO_SUCH_API = frozenset({405, 501})
"""Method Not Allowed, Not Implemented: no API takes a POST at that address (a web server
serving files, python -m http.server), which no retry mends."""


_LOST = ("NetworkError", "RemoteProtocolError", "TimeoutException")


def transport_errors() -> tuple[type[Exception], ...]:
    """The errors of a lost connection (dropped, refused, timed out) of httpx and httpx2,
    whichever are loaded: an SDK before the ones that wrap them in its ``APIConnectionError``
    (openai before 3.14, anthropic before 2.17) lets them out of a stream."""
    found: list[type[Exception]] = []
    for library in ("httpx", "httpx2"):
        module = sys.modules.get(library)
        for name in _LOST:
            kind = getattr(module, name, None)
            if isinstance(kind, type) and issubclass(kind, Exception):
                found.append(kind)
    return tuple(found)


def http_model_error(
    provider: str,
    model: str,
    *,
    status: int | None,
    detail: str = "",
    headers: Mapping[str, str] | None = None,
    key_env: str | None = None,
    base_url: str | None = None,
    secret: str | None = None,
    timed_out_after: float | None = None,
    cause: BaseException | None = None,
    mid_answer: bool = False,
    base_url_hint: str | None = None,
) -> ModelError:
    """The :class:`ModelError` for an answer of HTTP ``status`` (``None``: the server could
    not be reached or the connection dropped), with the server's ``detail`` (its error
    message) and ``headers``.

    ``key_env`` names the key's variable (a 401 says to check it), ``base_url`` where the
    server is; ``secret`` is the key, removed from anything quoted. 429, 5xx and ``None`` are
    retryable, with ``retry_after`` from the headers. ``timed_out_after``: no answer came
    within ``model.timeout``, those seconds (the message names the setting to raise).
    ``cause``: the exception raised, for ``status`` ``None``: a connection never made (nothing
    listens there, no such host) says to check that the server runs at ``base_url``.
    ``mid_answer``: the answer had begun to stream when the connection was lost (the SDKs
    wrap that in their ``APIConnectionError``): said so, with the transport's own reason.
    ``base_url_hint``: what a 404 adds about ``model.base_url`` (the provider's rule for it).
    """
    where = shown_url(base_url) if base_url else "the provider's default URL"
    subject = f"{provider}: model {model!r} at {where}"
    detail = _clean(detail, secret)
    quoted = f": {detail}" if detail else ""
    variable = key_env or "the key's variable"
    if status is None and timed_out_after is not None:
        message = (
            f"{subject}: no answer within model.timeout ({timed_out_after:g} s): a slow model "
            "or a long request needs a larger one"
        )
    elif status is None and mid_answer:
        reason = _clean(_innermost(cause) or detail, secret)
        said = f" ({reason})" if reason else ""
        message = f"{subject}: the connection was closed mid-answer{said}"
    elif status is None and _never_connected(cause):
        said = f" ({detail})" if detail else ""
        check = "that the model server runs there" if base_url else "the network connection"
        message = f"{subject}: could not connect to the server{said}: check {check}"
    elif status is None:
        message = f"{subject}: no answer from the server{quoted}"
    elif status == 401:
        message = (
            f"{subject}: the server refused the key (HTTP 401): check {variable} (in the "
            "environment or $HERMES_HOME/.env; model.api_key_env names another variable)"
        )
    elif status == 403:
        message = (
            f"{subject}: the key has no access to this model (HTTP 403): check the account "
            f"and the key in {variable}"
        )
    elif status == 404:
        hint = f" ({redact_text(base_url_hint)})" if base_url_hint else ""
        message = (
            f"{subject}: not found (HTTP 404): check model.model and model.base_url{hint}{quoted}"
        )
    elif status in _NO_SUCH_API:  # a plain web server there: its page says nothing more
        message = (
            f"{subject}: the server takes no such request (HTTP {status}): check "
            "model.base_url (a web server that is no model API answers there)"
        )
    elif status == 413 or (status == 400 and _says_overflow(detail)):
        message = (
            f"{subject}: the conversation is longer than the model's context window "
            f"(HTTP {status}){quoted}"
        )
        return ContextOverflowError(message, provider=provider, model=model, status=status)
    elif status == 429:
        message = f"{subject}: rate limited (HTTP 429){quoted}"
    elif status >= 500:
        message = f"{subject}: server error (HTTP {status}){quoted}"
    else:
        message = f"{subject}: the server refused the request (HTTP {status}){quoted}"
    retryable = status is None or status == 429 or (status >= 500 and status not in _NO_SUCH_API)
    wait = retry_after_seconds(headers or {}) if retryable else None
    return ModelError(
        message,
        provider=provider,
        model=model,
        status=status,
        retryable=retryable,
        retry_after=wait,
    )
