"""The agent runtime's sections of ``config.yaml``: ``model``, ``agent``, ``delegation``,
``cron`` and ``memory``.

Nothing here is read by the tool layer: the host runs without a model; ``hermes chat``,
``hermes run`` and an embedder's :class:`~hermes_core.agent.Agent` read these.
"""

from __future__ import annotations

from typing import Annotated, Literal

from hermes_core._config.checks import After, Number, http_url
from hermes_core._config.sections import Section


class ModelConfig(Section):
    """``model``: which provider (a plugin, selected by name like search backends), which model
    and where. ``api_key_env`` names the variable holding the key (read from the environment,
    then ``$HERMES_HOME/.env``; ``None``: the provider's usual one, ``OPENAI_API_KEY`` or
    ``ANTHROPIC_API_KEY``); the key itself never belongs in this file. ``prompt_cache`` marks
    the prefix every request resends for the server's prompt cache (Anthropic's
    ``cache_control``, OpenRouter's for Claude; OpenAI caches without being asked);
    ``reasoning_effort`` asks a reasoning model to think less or more (OpenAI's
    ``reasoning_effort``, Anthropic's extended thinking budget; ``None``: the model's
    default)."""

    provider: str = "openai"
    model: str = ""
    base_url: Annotated[str | None, After(http_url)] = None
    api_key_env: str | None = None
    context_length: Annotated[int, Number(low=1024, whole=True)] = 128_000
    max_output_tokens: Annotated[int, Number(low=1, whole=True)] = 4096
    timeout: Annotated[float, Number(above=0)] = 120.0
    prompt_cache: bool = True
    reasoning_effort: Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"] | None = (
        None
    )
    max_retries: Annotated[int, Number(low=0, high=20, whole=True)] = 3
    max_retry_wait: Annotated[float, Number(low=0)] = 60.0


class AgentConfig(Section):
    """``agent``: the conversation loop's limits, each reported when reached (``None``: no
    limit). One budget covers a whole delegation tree: children spend the parent's.
    ``compact_at``: the share of ``model.context_length`` past which a request's estimate
    makes the conversation compacted first (0 or ``None``: never before the server refuses
    one for its size)."""

    system_prompt: str | None = None
    max_turns: Annotated[int, Number(low=1, whole=True)] = 50
    max_tokens: Annotated[int, Number(low=1, whole=True)] | None = None
    max_seconds: Annotated[float, Number(above=0)] | None = None
    compact_at: Annotated[float, Number(low=0, high=1)] | None = 0.8


class DelegationConfig(Section):
    """``delegation``: how ``delegate_task`` runs its children. ``max_concurrent`` children run
    at once (more are queued; there is no hard cap); ``max_depth`` is how deep children may
    delegate in turn (1: children cannot delegate)."""

    max_concurrent: Annotated[int, Number(low=1, whole=True)] = 3
    max_depth: Annotated[int, Number(low=1, whole=True)] = 1


class CronConfig(Section):
    """``cron``: the scheduler, ``hermes cron daemon``. It looks for due jobs at least every
    ``poll_interval`` seconds (sooner when a job is due sooner: jobs made by another process
    are seen within it); a run holds its job's lease, renewed every third of ``lease`` seconds,
    so a daemon gone without a word frees its jobs ``lease`` seconds later at the latest."""

    poll_interval: Annotated[float, Number(above=0, high=3600)] = 30.0
    lease: Annotated[float, Number(low=3, high=86400)] = 60.0


class MemoryConfig(Section):
    """``memory``: the agent's own memory (the ``memory`` tool and the snapshot in the system
    prompt). ``provider`` names the memory provider that keeps it (a plugin, selected by name
    like search backends: one at a time); ``memory_chars`` and ``user_chars`` are the character
    budgets of its two parts, which the tool enforces."""

    enabled: bool = True
    provider: str = "file"
    memory_chars: Annotated[int, Number(low=100, high=100_000, whole=True)] = 2200
    user_chars: Annotated[int, Number(low=100, high=100_000, whole=True)] = 1375


__all__ = ["AgentConfig", "CronConfig", "DelegationConfig", "MemoryConfig", "ModelConfig"]
