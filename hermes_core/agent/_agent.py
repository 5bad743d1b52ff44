"""``Agent``: a model, its provider and a host, and the settings every conversation it makes
shares (limits, retries, the system prompt and its sections, transcripts): what
:class:`~hermes_core.agent._conversation.Conversation` s are made by.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from hermes_core._config.agent import AgentConfig
from hermes_core.agent._budget import Budget
from hermes_core.agent._conversation import Conversation
from hermes_core.agent._delegate_tool import register_delegate_task
from hermes_core.agent._memory import TOOL_NAME as MEMORY_TOOL
from hermes_core.agent._memory import Memory
from hermes_core.agent._prompt_sections import (
    DEFAULT_SYSTEM_PROMPT,
    PromptSection,
    oversized_warning,
    skills_index,
    subagent_prompt,
    tool_guidance,
    with_sections,
)
from hermes_core.agent._request_tools import RequestTools
from hermes_core.agent._requests import RetryPolicy
from hermes_core.agent._transcripts import TranscriptStore
from hermes_core.agent._wire import ModelProvider, ModelSettings, ToolSchema

if TYPE_CHECKING:
    from hermes_core._host import Host
    from hermes_core._session import Session

# The name docs/agent.md gives the oversized-prompt warning's records, from when Agent and
# Conversation shared a module: embedders filter by it.
log = logging.getLogger("hermes_core.agent._loop")


class Agent:
    """A model and a host: makes :class:`Conversation` s.

    ``provider`` answers model requests with ``model`` (:class:`ModelSettings`, the ``model``
    section); ``limits`` is the ``agent`` section (turns, tokens, wall time). Transcripts go to
    ``transcripts`` (default: ``$HERMES_HOME/sessions``; ``None`` keeps none). Build one from
    the host's configuration with :meth:`from_host`; close it with :meth:`aclose`.
    """

    def __init__(
        self,
        host: Host,
        provider: ModelProvider,
        model: ModelSettings,
        *,
        limits: AgentConfig | None = None,
        retry: RetryPolicy | None = None,
        system_prompt: str | None = None,
        transcripts: TranscriptStore | None = None,
        memory: Memory | None = None,
        prompt_sections: Sequence[PromptSection] = (),
    ) -> None:
        self.host = host
        self.provider = provider
        self.model = model
        self.limits = limits if limits is not None else host.config.agent
        self.retry = retry if retry is not None else RetryPolicy()
        configured = system_prompt or self.limits.system_prompt
        self.system_prompt = configured or DEFAULT_SYSTEM_PROMPT
        self._guided = not configured
        self.transcripts = transcripts
        self.request_tools = RequestTools()
        self._size_warned = False
        self.prompt_sections: list[PromptSection] = list(prompt_sections)
        if memory is not None:
            memory.register(host.registry)
            self.prompt_sections.append(
                lambda session: memory.prompt_section(
                    session, writable=MEMORY_TOOL in self.tool_names(session)
                )
            )
        self.prompt_sections.append(lambda opened: skills_index(host.env, self.tool_names(opened)))
        register_delegate_task(host.registry)

    @classmethod
    def from_host(cls, host: Host, *, model: str | None = None) -> Agent:
        """The agent the host's ``config.yaml`` describes: its ``model`` (the provider chosen
        by ``model.provider``, its key read from the variable ``model.api_key_env`` names),
        ``agent`` limits, its memory and transcripts under the home; ``model``: that model of
        the provider instead of ``model.model`` (``--model``). A ``ConfigError`` naming
        ``model.model`` when no model is set (every command and ``hermes acp`` say so alike)."""
        from hermes_core.agent._configured_model import configured_model
        from hermes_core.agent._memory import selected_memory

        section = host.config.model
        settings = configured_model(host, require_model=model is None)
        if model is not None:
            settings = replace(settings, model=model)
        provider = host.create_model_provider(settings)
        retry = RetryPolicy(section.max_retries, section.max_retry_wait)
        store = TranscriptStore.of_home(host.env)
        memory = selected_memory(host)
        return cls(host, provider, settings, retry=retry, transcripts=store, memory=memory)

    def conversation(
        self,
        session: Session,
        *,
        budget: Budget | None = None,
        parent: str | None = None,
        system_prompt: str | None = None,
        depth: int = 0,
        job: str | None = None,
    ) -> Conversation:
        """A new conversation in ``session`` spending ``budget`` (default: a fresh one from the
        ``agent`` limits at each :meth:`Conversation.send`, so the limits are each turn's; a
        delegation passes its own, so the tree shares one). ``parent`` is
        the session id of the conversation that delegated this one, written in the
        transcript; ``depth`` is how deep in a delegation tree it is (0: a root, deeper: told
        it is a subagent). The system prompt is ``system_prompt`` (default: the agent's, with
        how to use the tools the session has when it is the default one), then the sections.
        The first conversation whose tools alone overflow ``model.context_length`` logs a
        warning saying so."""
        sections: list[PromptSection] = []
        if system_prompt is None and self._guided:
            sections.append(lambda opened: tool_guidance(self.tool_names(opened)))
        if depth > 0:
            sections.append(lambda opened: subagent_prompt(bool(self.tool_names(opened))))
        text = with_sections(
            system_prompt or self.system_prompt, [*sections, *self.prompt_sections], session
        )
        self._warn_if_oversized(text, session)
        return Conversation(
            self,
            session,
            budget if budget is not None else Budget.from_config(self.limits),
            renew_budget=budget is None,
            parent=parent,
            system_prompt=text,
            depth=depth,
            job=job,
        )

    def tool_names(self, session: Session) -> frozenset[str]:
        """The names of the tools the next request for ``session`` holds."""
        return frozenset(schema.name for schema in self.tool_schemas(session))

    def _warn_if_oversized(self, system_prompt: str, session: Session) -> None:
        """Warn once per agent when the system prompt and the tools of ``session`` alone need
        more than ``model.context_length``: every request would be refused or cut."""
        if not self._size_warned:
            size = self.model.context_length
            warning = oversized_warning(self.host, size, system_prompt, session)
            self._size_warned = warning is not None
            if warning is not None:
                log.warning("%s", warning)

    def tool_schemas(self, session: Session) -> tuple[ToolSchema, ...]:
        """The tools of the next request for ``session``, assembled now."""
        tools = self.host.assemble(self.model.context_length, session).tools
        return self.request_tools.schemas(tools)

    async def aclose(self) -> None:
        """Close the provider's connections."""
        await self.provider.aclose()
