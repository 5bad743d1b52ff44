"""The agent runtime, a floor on top of the host: the face of an embedder who runs
conversations and of a model provider author.

A model provider is a plugin kind (``ModelProviderSpec`` in ``hermes_core.plugin``), selected
by ``model.provider`` in ``config.yaml`` as search backends are; it turns a
:class:`ModelRequest` into its vendor's wire format and streams back :class:`TextDelta` s and
one :class:`ModelTurn`. The conversation loop runs every tool call the model asks for through
``Host.dispatch``, so hooks, approvals and the activity log see the real tool. See
``docs/agent.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_core._exports import FACES, face_names, lazy_exports

if TYPE_CHECKING:
    from hermes_core._approvals.questions import (
        Question as Question,
    )
    from hermes_core._approvals.questions import (
        QuestionTransport as QuestionTransport,
    )
    from hermes_core._approvals.questions import (
        Reply as Reply,
    )
    from hermes_core._approvals.questions import (
        TerminalQuestions as TerminalQuestions,
    )
    from hermes_core._approvals.questions import (
        attach_questions as attach_questions,
    )
    from hermes_core.agent._agent import (
        Agent as Agent,
    )
    from hermes_core.agent._budget import (
        Budget as Budget,
    )
    from hermes_core.agent._conversation import (
        Conversation as Conversation,
    )
    from hermes_core.agent._cron_rows import (
        CronJob as CronJob,
    )
    from hermes_core.agent._cron_rows import (
        CronRun as CronRun,
    )
    from hermes_core.agent._cron_schedule import (
        JobError as JobError,
    )
    from hermes_core.agent._cron_store import (
        CronJobs as CronJobs,
    )
    from hermes_core.agent._cron_toolsets import (
        job_toolsets as job_toolsets,
    )
    from hermes_core.agent._delegation import (
        Delegations as Delegations,
    )
    from hermes_core.agent._events import (
        AgentEvent as AgentEvent,
    )
    from hermes_core.agent._events import (
        ChildCompacted as ChildCompacted,
    )
    from hermes_core.agent._events import (
        ChildFinished as ChildFinished,
    )
    from hermes_core.agent._events import (
        ChildStarted as ChildStarted,
    )
    from hermes_core.agent._events import (
        Compacted as Compacted,
    )
    from hermes_core.agent._events import (
        Finished as Finished,
    )
    from hermes_core.agent._events import (
        Retrying as Retrying,
    )
    from hermes_core.agent._events import (
        ToolFinished as ToolFinished,
    )
    from hermes_core.agent._events import (
        ToolStarted as ToolStarted,
    )
    from hermes_core.agent._events import (
        UsageReport as UsageReport,
    )
    from hermes_core.agent._events import (
        event_json as event_json,
    )
    from hermes_core.agent._http_errors import (
        http_model_error as http_model_error,
    )
    from hermes_core.agent._http_errors import (
        overflowed as overflowed,
    )
    from hermes_core.agent._http_errors import (
        transport_errors as transport_errors,
    )
    from hermes_core.agent._memory import (
        Memory as Memory,
    )
    from hermes_core.agent._memory_provider import (
        MEMORY_TARGETS as MEMORY_TARGETS,
    )
    from hermes_core.agent._memory_provider import (
        MemoryProvider as MemoryProvider,
    )
    from hermes_core.agent._memory_provider import (
        MemoryTarget as MemoryTarget,
    )
    from hermes_core.agent._prompt_sections import (
        PromptSection as PromptSection,
    )
    from hermes_core.agent._provider_checks import (
        VendorSdk as VendorSdk,
    )
    from hermes_core.agent._provider_checks import (
        listed_models as listed_models,
    )
    from hermes_core.agent._provider_checks import (
        no_stream_error as no_stream_error,
    )
    from hermes_core.agent._provider_checks import (
        require_vendor_key as require_vendor_key,
    )
    from hermes_core.agent._provider_checks import (
        token_count as token_count,
    )
    from hermes_core.agent._requests import (
        RetryPolicy as RetryPolicy,
    )
    from hermes_core.agent._session_model import (
        SessionModel as SessionModel,
    )
    from hermes_core.agent._session_model import (
        session_model as session_model,
    )
    from hermes_core.agent._settling import (
        send_until_settled as send_until_settled,
    )
    from hermes_core.agent._transcripts import (
        Transcript as Transcript,
    )
    from hermes_core.agent._transcripts import (
        TranscriptStore as TranscriptStore,
    )
    from hermes_core.agent._wire import (
        ContextOverflowError as ContextOverflowError,
    )
    from hermes_core.agent._wire import (
        ImagePart as ImagePart,
    )
    from hermes_core.agent._wire import (
        Message as Message,
    )
    from hermes_core.agent._wire import (
        ModelError as ModelError,
    )
    from hermes_core.agent._wire import (
        ModelEvent as ModelEvent,
    )
    from hermes_core.agent._wire import (
        ModelProvider as ModelProvider,
    )
    from hermes_core.agent._wire import (
        ModelRequest as ModelRequest,
    )
    from hermes_core.agent._wire import (
        ModelSettings as ModelSettings,
    )
    from hermes_core.agent._wire import (
        ModelToolCall as ModelToolCall,
    )
    from hermes_core.agent._wire import (
        ModelTurn as ModelTurn,
    )
    from hermes_core.agent._wire import (
        ReasoningDetail as ReasoningDetail,
    )
    from hermes_core.agent._wire import (
        TextDelta as TextDelta,
    )
    from hermes_core.agent._wire import (
        ThinkingBlock as ThinkingBlock,
    )
    from hermes_core.agent._wire import (
        ThinkingDelta as ThinkingDelta,
    )
    from hermes_core.agent._wire import (
        ToolSchema as ToolSchema,
    )
    from hermes_core.agent._wire import (
        Usage as Usage,
    )
    from hermes_core.agent._wire import (
        cache_breakpoints as cache_breakpoints,
    )

__all__ = face_names("hermes_core.agent")

__getattr__, __dir__ = lazy_exports(__name__, FACES[__name__], __all__, globals())
