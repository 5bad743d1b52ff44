"""What a model provider checks around its requests, one place for every provider: that its
vendor's SDK is installed (:class:`VendorSdk`), that the vendor's own API gets a key, that a
server's answer is a stream of the provider's wire,
which of its token counts are a number of tokens, and that its answer to a model listing is
one."""

from __future__ import annotations

import importlib.util
import math
import os
from collections.abc import AsyncIterable, Mapping
from dataclasses import dataclass
from typing import Final, Protocol

from hermes_core._errors import ConfigError
from hermes_core._redaction import shown_url
from hermes_core.agent._wire import ModelError, ModelSettings

__all__ = [
    "MOST_TOKENS",
    "VendorSdk",
    "listed_models",
    "no_stream_error",
    "require_vendor_key",
    "token_count",
]

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


class _FactoryContext(Protocol):
    """What :class:`VendorSdk` reads of the ``ModelContext`` a provider's factory gets (typed
    here by its shape: the plugin specs sit below the agent floor and import its wire)."""

    @property
    def model(self) -> ModelSettings | None:
        """The ``model`` section."""

    def api_key(self, default_env: str) -> str | None:
        """The provider's key (``model.api_key_env``'s, else ``default_env``'s)."""


@dataclass(frozen=True)
class VendorSdk:
    """A model provider over its vendor's SDK: ``name`` is the provider's; ``module`` the
    SDK's import name and ``install`` what ``pip install`` takes for it (by default both
    ``name``, and the extra ``hermes-core-agent[name]``: the bundled ``openai`` and
    ``anthropic``; a third party's ``gemini`` gives ``google.genai`` and ``google-genai``).
    Its key is read from ``model.api_key_env``, else ``key_variable``, and
    :func:`require_vendor_key` gets ``sdk_base_url_variable`` and ``local_example``. What the
    provider's factory and its ``ready`` check refuse alike."""

    name: str
    key_variable: str
    sdk_base_url_variable: str
    local_example: str
    module: str = ""
    install: str = ""

    @property
    def _module(self) -> str:
        return self.module or self.name

    def settings(self, context: _FactoryContext) -> ModelSettings:
        """The ``model`` section ``context`` holds; a ``ValueError`` when it holds none."""
        if context.model is None:
            raise ValueError(f"the {self.name} provider is built with the model settings")
        return context.model

    def missing(self, settings: ModelSettings) -> ModelError:
        """The error of the SDK not installed: it names the package and the pip command."""
        install = self.install or f"hermes-core-agent[{self.name}]"
        return ModelError(
            f"the {self.name} model provider needs the {self._module} package: "
            f"pip install '{install}'",
            provider=self.name,
            model=settings.model,
        )

    def is_missing(self, error: ImportError) -> bool:
        """Whether ``error`` (importing the provider's module) is the SDK's own, not installed
        (or the namespace it is in), rather than another module's."""
        missing, module = error.name or "", self._module
        return bool(missing) and (
            f"{module}.".startswith(f"{missing}.") or missing.startswith(f"{module}.")
        )

    def key(self, context: _FactoryContext) -> str | None:
        """The key, refused (a ``ConfigError`` naming its variable) when the vendor's own API
        would get none."""
        key = context.api_key(self.key_variable)
        require_vendor_key(
            self.name,
            key,
            self.settings(context),
            variable=self.key_variable,
            sdk_base_url_variable=self.sdk_base_url_variable,
            local_example=self.local_example,
        )
        return key

    def check_ready(self, context: _FactoryContext) -> None:
        """Refuse what the factory would (the SDK not installed: :meth:`missing`; no key),
        without importing the SDK: ``hermes doctor --offline``'s check."""
        settings = self.settings(context)
        try:
            found = importlib.util.find_spec(self._module)
        except ModuleNotFoundError:  # a namespace it is in (``google`` of ``google.genai``)
            found = None
        if found is None:
            raise self.missing(settings)
        self.key(context)


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
