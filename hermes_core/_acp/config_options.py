"""The session config options of ``hermes acp``: what an editor shows as its model picker and
its thinking-level picker (ACP's ``configOptions``, set by ``session/set_config_option``).

``model`` (category ``model``): the configured ``model.model`` first, then the models the
provider's server lists (the provider's optional ``list_models``, as ``hermes doctor`` asks
it), asked once per process within :data:`LISTING_TIMEOUT` and kept (:class:`ModelListing`): a
listing that fails, hangs or that the provider does not offer leaves the configured model
alone, said on stderr only. ``thought_level`` (category ``thought_level``), for a provider
whose spec says it takes ``model.reasoning_effort`` (``ModelProviderSpec.takes_reasoning_effort``:
one may ignore it, so none is offered for one that does not say so): ``default`` (none set:
the model's own) and each effort the provider's settings check (``ModelProviderSpec.check``,
the one ``hermes config validate`` runs) takes with the configured settings.

:class:`SessionChoices` switches them for one session, nothing saved: the session's agent is
its own (a switch reaches no other session), the model switched as ``hermes chat``'s ``/model``
switches it (:meth:`~hermes_core.agent._conversation.Conversation.use_model`: the transcript's next
header names it), an effort by a provider built with it (kept until the session ends: a
background subagent may still be asking it). Neither is switched while a prompt turn runs: a
turn's requests all go to one model, as ``/model`` is refused then.
"""

from __future__ import annotations

import asyncio
import logging
import typing
from dataclasses import replace
from typing import TYPE_CHECKING, Final

from hermes_core._errors import ConfigError, HermesError
from hermes_core.agent._model_names import model_problem

if TYPE_CHECKING:
    from acp.schema import SessionConfigOptionBoolean, SessionConfigOptionSelect

    from hermes_core._host import Host
    from hermes_core.agent._conversation import Conversation
    from hermes_core.agent._wire import ModelProvider, ModelSettings

_log = logging.getLogger(__name__)

LISTING_TIMEOUT: Final = 5.0
"""Seconds the provider's server gets to list its models, once per ``hermes acp``: the first
``session/new`` waits for it at most that long (a listing is quick; ``model.timeout`` is
minutes)."""

DEFAULT_EFFORT: Final = "default"
"""The ``thought_level`` value of no ``model.reasoning_effort``: the model's own default."""


def efforts() -> tuple[str, ...]:
    """Every value ``model.reasoning_effort`` takes, in order, as the section declares them."""
    from hermes_core._config.agent import ModelConfig

    hint = typing.get_type_hints(ModelConfig)["reasoning_effort"]
    literal = next(arg for arg in typing.get_args(hint) if arg is not type(None))
    return tuple(str(value) for value in typing.get_args(literal))


class ModelListing:
    """The models the provider's server lists, asked once (:data:`LISTING_TIMEOUT`) and kept;
    none when the listing failed. :meth:`aclose` stops a listing still running."""

    def __init__(self) -> None:
        self._task: asyncio.Task[tuple[str, ...]] | None = None

    async def models(self, provider: ModelProvider, name: str) -> tuple[str, ...]:
        """The names ``provider`` (``model.provider`` ``name``) lists, one word each."""
        if self._task is None:
            self._task = asyncio.ensure_future(_listed(provider, name))
        # Shielded: a session/new cancelled while it waits does not cancel the listing.
        return await asyncio.shield(self._task)

    async def aclose(self) -> None:
        """Stop the listing if it still runs."""
        if self._task is not None and not self._task.done():
            self._task.cancel()


async def _listed(provider: ModelProvider, name: str) -> tuple[str, ...]:
    lister = getattr(provider, "list_models", None)
    if lister is None:
        return ()
    try:
        listed = await asyncio.wait_for(lister(), LISTING_TIMEOUT)
    except TimeoutError:
        why = f"no answer to a model listing within {LISTING_TIMEOUT:g} s"
    except Exception as exc:  # a plugin's provider too: the configured model is still there
        why = f"{type(exc).__name__}: {exc}"
    else:
        names = (str(model) for model in listed)
        return tuple(name.strip() for name in names if model_problem(name) is None)
    _log.warning("%s: only model.model is offered to the editor's model picker: %s", name, why)
    return ()


class SessionChoices:
    """The config options of one session's ``conversation`` (its agent its own), the models
    ``listed`` besides the configured one; :meth:`switch` sets one for this session only."""

    def __init__(self, host: Host, conversation: Conversation, listed: tuple[str, ...]) -> None:
        settings = conversation.agent.model
        self._host = host
        self._conversation = conversation
        self._models = tuple(dict.fromkeys((settings.model, *listed)))
        self._efforts = _efforts_taken(host, settings)
        self._shared = conversation.agent.provider
        self._providers: dict[str | None, ModelProvider] = {settings.reasoning_effort: self._shared}

    def options(self) -> list[SessionConfigOptionSelect | SessionConfigOptionBoolean]:
        """The options and their current values, as ``configOptions`` holds them."""
        from acp.schema import SessionConfigOptionSelect, SessionConfigSelectOption

        settings = self._conversation.agent.model
        offered: list[SessionConfigOptionSelect | SessionConfigOptionBoolean] = [
            SessionConfigOptionSelect(
                id="model",
                name="Model",
                description=f"the model of the {settings.provider} provider for this session "
                "(not saved in the configuration)",
                category="model",
                type="select",
                current_value=settings.model,
                options=[SessionConfigSelectOption(value=m, name=m) for m in self._models],
            )
        ]
        if self._efforts:
            offered.append(
                SessionConfigOptionSelect(
                    id="thought_level",
                    name="Thinking",
                    description="how much a reasoning model thinks (model.reasoning_effort) "
                    "for this session (not saved in the configuration)",
                    category="thought_level",
                    type="select",
                    current_value=settings.reasoning_effort or DEFAULT_EFFORT,
                    options=[SessionConfigSelectOption(value=e, name=e) for e in self._efforts],
                )
            )
        return offered

    def switch(self, config_id: str, value: object, *, busy: bool) -> None:
        """Set option ``config_id`` to ``value`` from the next request on; invalid params for
        an option or a value not offered, or a switch while a prompt turn runs (``busy``)."""
        from acp import RequestError

        choices = {"model": self._models, "thought_level": self._efforts}
        if not choices.get(config_id):
            known = ", ".join(k for k, v in choices.items() if v)
            raise RequestError.invalid_params(
                {
                    "configId": config_id,
                    "message": f"no option {config_id!r} (the options: {known})",
                }
            )
        if value not in choices[config_id]:
            offered = ", ".join(choices[config_id])
            raise RequestError.invalid_params(
                {"configId": config_id, "message": f"{value!r} is not offered (offered: {offered})"}
            )
        if busy:
            raise RequestError.invalid_params(
                {
                    "configId": config_id,
                    "message": f"{config_id} is not switched while a prompt turn runs (a "
                    "turn's requests all go to one model): choose it again once it has ended",
                }
            )
        settings = self._conversation.agent.model
        if config_id == "model" and value != settings.model:
            self._conversation.use_model(str(value))
        elif config_id == "thought_level":
            effort = None if value == DEFAULT_EFFORT else str(value)
            if effort != settings.reasoning_effort:
                changed = replace(settings, reasoning_effort=effort)
                self._conversation.use(changed, self._provider(changed))

    def _provider(self, settings: ModelSettings) -> ModelProvider:
        from acp import RequestError

        effort = settings.reasoning_effort
        if effort not in self._providers:
            try:
                self._providers[effort] = self._host.create_model_provider(settings)
            except HermesError as exc:
                raise RequestError.internal_error({"details": str(exc)}) from None
        return self._providers[effort]

    async def aclose(self) -> None:
        """Close the providers built for this session's efforts."""
        for provider in self._providers.values():
            if provider is not self._shared:
                await provider.aclose()


def _efforts_taken(host: Host, settings: ModelSettings) -> tuple[str, ...]:
    """``default`` and the efforts the provider's settings check takes; none for a provider
    whose spec does not say it takes ``model.reasoning_effort``, or that no plugin registers
    (an embedder's own, which no effort could be built for)."""
    registered = host.registrations.model_providers.get(settings.provider)
    if registered is None or not registered.spec.takes_reasoning_effort:
        return ()
    check = registered.spec.check
    taken = [DEFAULT_EFFORT]
    for effort in efforts():
        try:
            if check is not None:
                check(replace(settings, reasoning_effort=effort))
        except ConfigError:
            continue
        taken.append(effort)
    return tuple(taken)
