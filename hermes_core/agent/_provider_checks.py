"""What a model provider checks around its requests, one place for every provider: that the
vendor's own API gets a key, that a server's answer is a stream of the provider's wire,
which of its token counts are a number of tokens, and that its answer to a model listing is
one."""

from __future__ import annotations

import math
import os
from collections.abc import AsyncIterable, Mapping
from typing import Final

from hermes_core._errors import ConfigError
from hermes_core._redaction import shown_url
from hermes_core.agent._wire import ModelError, ModelSettings

__all__ = ["MOST_TOKENS", "listed_models", "no_stream_error", "require_vendor_key", "token_count"]

MOST_TOKENS: Final = 10**9
"""The largest token count read as one: no model reads or writes a billion tokens in a
request (the largest windows hold ten million), so a server saying more miscounts."""


def require_vendor_key(
    provider: str,
    key: str | None,
    settings: ModelSettings,
    *,
    variable: str,
    sdk_base_url_variable: str,
    local_example: str,
) -> None:
    """Refuse, before any request, to send the vendor's own API no key: a ``ConfigError``
    naming the key's variable (``model.api_key_env``, else ``variable``). With
    ``model.base_url`` set, or the SDK's own ``sdk_base_url_variable``, the server may be a
    local one that needs none. Without this, the vendor can only refuse, and with no network
    the request is retried as a connection error that never names the key."""
    if key is not None or settings.base_url is not None:
        return
    if os.environ.get(sdk_base_url_variable):
        return
    raise ConfigError(
        f"{provider}: no key: {settings.api_key_env or variable} is not set (in the "
        "environment or $HERMES_HOME/.env; model.api_key_env names another variable). A local "
        f"server needs no key: set model.base_url to it (e.g. {local_example})"
    )


def no_stream_error(
    provider: str,
    model: str,
    *,
    base_url: str | None,
    headers: Mapping[str, str],
    stream: str,
    missing: str,
    base_url_hint: str,
) -> ModelError:
    """The :class:`ModelError` for a 200 answer that is no ``stream`` of the provider's wire
    (``missing`` says what never came): a web page, a proxy, another API at ``base_url``. It
    names the content type and says to check ``model.base_url`` (``base_url_hint``: what the
    URL should look like)."""
    where = shown_url(base_url) if base_url else "the provider's default URL"
    content_type = headers.get("content-type") or "none"
    return ModelError(
        f"{provider}: model {model!r} at {where}: the server's answer is no {stream} "
        f"(content-type {content_type}, {missing}): check model.base_url ({base_url_hint})",
        provider=provider,
        model=model,
    )


def token_count(value: object) -> int | None:
    """A server's token count as a number of tokens, or ``None`` (unknown) when it is none: a
    whole number from 0 to :data:`MOST_TOKENS`, as an int, a float (``1234.0``) or a numeric
    string (``"1234"``). Negative, fractional, absurd, a bool, null or anything else is
    unknown, never an error: an answer is never lost because of its count."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
        value = int(text) if text.isdigit() and len(text) < 12 else None
    if isinstance(value, float):
        value = int(value) if math.isfinite(value) and value.is_integer() else None
    if isinstance(value, int) and 0 <= value <= MOST_TOKENS:
        return value
    return None


async def listed_models(
    provider: str, model: str, entries: AsyncIterable[object], *, base_url: str | None, hint: str
) -> list[str]:
    """The ``id`` of each model ``entries`` (an SDK's listing, read page by page) holds. A
    200 answer that is no listing (a web page, text that is not JSON, JSON of another shape,
    an entry without an ``id``) is a :class:`ModelError` saying to check ``model.base_url``
    (``hint``: what the URL should look like), not the SDK's parsing error; the SDK's own
    errors (HTTP statuses, no answer) go on as they are."""
    names: list[str] = []
    try:
        async for entry in entries:
            name = getattr(entry, "id", None)
            if not isinstance(name, str) or not name:
                raise TypeError("an entry without an id")
            names.append(name)
    except (ValueError, TypeError, AttributeError) as error:
        # The SDKs build a page from whatever JSON (or text) came: its shape fails here.
        why = "not JSON" if isinstance(error, ValueError) else "an answer of another shape"
        where = shown_url(base_url) if base_url else "the provider's default URL"
        raise ModelError(
            f"{provider}: model {model!r} at {where}: the server's answer to GET .../models is "
            f"no model listing ({why}: a web page or another service answers there): check "
            f"model.base_url ({hint})",
            provider=provider,
            model=model,
        ) from None
    return names
