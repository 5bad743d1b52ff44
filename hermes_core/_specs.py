"""Typed objects that plugins hand to the host through registration and decision hooks.

A backend is registered as a spec holding a validated name and a factory; the host collects the
specs of every loaded plugin, refuses a name claimed twice (naming both plugins) and selects one
by the name given in ``config.yaml``. "Spec" in hermes-core always means such a registration
spec; the declarations of the hooks are *hook specifications* (:mod:`hermes_core._hookspecs`).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from hermes_core._errors import RegistrationError
from hermes_core._tools import call_annotations

if TYPE_CHECKING:
    import click

    from hermes_core._config import Config
    from hermes_core._image_providers import ImageProvider
    from hermes_core._paths import Environment
    from hermes_core._tools import Tool, ToolAnnotations
    from hermes_core._web_search import WebSearchProvider
    from hermes_core.agent._wire import ModelSettings
    from hermes_core.search._backend import SearchBackend

_Settings = TypeVar("_Settings")

_SPEC_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


def _check_name(kind: str, name: str) -> None:
    if not isinstance(name, str) or not _SPEC_NAME.fullmatch(name):
        raise ValueError(
            f"{kind} name {name!r} is not valid: use 1-64 lowercase letters, digits, '_' or '-'"
        )


@dataclass(frozen=True)
class PluginContext:
    """What a backend factory receives: the configuration, the environment and the plugin's own
    settings from ``plugins.entries.<name>``.

    ``backend_builder`` is how :meth:`search_backend` builds another backend; the host sets it
    for the contexts it gives to search backend factories, and it is ``None`` elsewhere.
    ``plugin`` is the name of the plugin whose ``settings`` these are (found in
    ``config.plugins.entries`` when not given).
    """

    config: Config
    env: Environment
    settings: Mapping[str, Any] = field(default_factory=dict)
    backend_builder: Callable[[str], SearchBackend] | None = field(
        default=None, repr=False, compare=False
    )
    plugin: str | None = None
    image_builder: Callable[[str], ImageProvider] | None = field(
        default=None, repr=False, compare=False
    )
    web_search_builder: Callable[[str], WebSearchProvider] | None = field(
        default=None, repr=False, compare=False
    )

    @classmethod
    def of(cls, plugin: str, config: Config, env: Environment) -> PluginContext:
        """The context of ``plugin``, with its settings from ``plugins.entries.<plugin>``: what
        a hook that gets ``config`` and ``env`` (``hermes_tools``) reads its settings with."""
        from hermes_core._plugin_names import normalize_name

        return cls(
            config, env, config.plugins.entries.get(normalize_name(plugin), {}), plugin=plugin
        )

    def settings_as(self, kind: type[_Settings]) -> _Settings:
        """The plugin's settings checked and converted to ``kind``: a dataclass (or a config
        :class:`~hermes_core._config.sections.Section` subclass) whose fields are the keys of
        ``plugins.entries.<plugin>``, with their types, defaults and bounds
        (:mod:`hermes_core._plugin_settings` says which).

        Raises :class:`~hermes_core._errors.PluginSettingsError` naming the plugin and, for
        each unknown key, wrong type or out-of-range value, the file and line of
        ``config.yaml``, the dotted key and what was expected; ``TypeError`` when ``kind`` is
        neither a dataclass nor a section, or declares a key of a type settings cannot have.
        """
        from hermes_core._plugin_settings import checked_settings, entry_name

        plugin = entry_name(self.config, self.plugin, self.settings)
        return checked_settings(kind, self.settings, self.config, plugin)

    def search_backend(self, name: str) -> SearchBackend:
        """A new, empty instance of the search backend registered as ``name``, made by its own
        factory with its own plugin's settings: how a backend builds on another one (the
        ``hybrid`` plugin fuses the ``bm25`` ranking with a dense one) without importing it.

        Raises :class:`~hermes_core._errors.RegistrationError` when no loaded plugin registers
        ``name`` (listing the valid names, as for ``tools.tool_search.backend``), when a backend
        asks for itself, directly or through another backend, and when this context was not
        given to a search backend factory by a host.
        """
        if self.backend_builder is None:
            raise RegistrationError(
                f"cannot build search backend {name!r}: only the context a host gives to a "
                "search backend factory can build other search backends"
            )
        return self.backend_builder(name)

    def image_provider(self, name: str) -> ImageProvider:
        """A new instance of the image provider registered as ``name``, made by its own
        plugin's factory: how a tool (``image_generate``) draws with the service the user
        chose without importing it. Call it when the tool runs, not at registration.

        Raises :class:`~hermes_core._errors.RegistrationError` when no loaded plugin registers
        ``name`` (listing the valid names) or when this context was not given by a host (to
        ``hermes_tools``), and :class:`~hermes_core._errors.PluginError` when the provider's
        factory fails.
        """
        if self.image_builder is None:
            raise RegistrationError(
                f"cannot build image provider {name!r}: only the context a host gives to "
                "hermes_tools can build providers"
            )
        return self.image_builder(name)

    def web_search_provider(self, name: str) -> WebSearchProvider:
        """A new instance of the web search provider registered as ``name``, made by its own
        plugin's factory: how ``web_search`` searches with the service the user chose
        (``plugins.entries.web.search_provider``). Call it when the tool runs.

        Raises as :meth:`image_provider` does."""
        if self.web_search_builder is None:
            raise RegistrationError(
                f"cannot build web search provider {name!r}: only the context a host gives to "
                "hermes_tools can build providers"
            )
        return self.web_search_builder(name)


@dataclass(frozen=True)
class SearchBackendSpec:
    """A search backend, selected by ``tools.tool_search.backend``."""

    name: str
    factory: Callable[[PluginContext], Any]
    description: str = ""

    def __post_init__(self) -> None:
        _check_name("search backend", self.name)


@dataclass(frozen=True)
class GatewayContext(PluginContext):
    """What a gateway factory receives: the plugin context, the gateway ``url``
    (``tools.connectors.url``) and the signed-in user's bearer ``token`` (never shown in a
    ``repr``; never log it)."""

    url: str = ""
    token: str = field(default="", repr=False)


@dataclass(frozen=True)
class ConnectorGatewaySpec:
    """A connector gateway client, selected by ``tools.connectors.gateway``; its factory gets
    a :class:`GatewayContext` (a plugin context with the gateway URL and the user's token) and
    returns a :class:`~hermes_core.connectors._gateway.ConnectorGateway`."""

    name: str
    factory: Callable[[GatewayContext], Any]
    description: str = ""

    def __post_init__(self) -> None:
        _check_name("connector gateway", self.name)


@dataclass(frozen=True)
class ModelContext(PluginContext):
    """What a model provider factory receives: the plugin context and the ``model`` section
    with its key read from the environment
    (:class:`~hermes_core.agent._wire.ModelSettings`; never log ``model.api_key``)."""

    model: ModelSettings | None = None

    def api_key(self, default_env: str) -> str | None:
        """The key for this provider: :attr:`ModelSettings.api_key` when ``model.api_key_env``
        names a variable, else the variable ``default_env`` (``OPENAI_API_KEY``), read from
        the environment, then ``$HERMES_HOME/.env``; ``None`` when unset (a local server needs
        no key)."""
        if self.model is not None and self.model.api_key_env:
            return self.model.api_key
        from hermes_core._dotenv import secret_variable

        return secret_variable(self.env, default_env)


@dataclass(frozen=True)
class ModelProviderSpec:
    """A model provider, selected by ``model.provider``; its factory gets a
    :class:`ModelContext` and returns a :class:`~hermes_core.agent._wire.ModelProvider`.

    ``check``, when given, refuses the settings the factory would refuse (a ``ConfigError``
    naming the key, the factory's own words) without building anything or importing the
    vendor's SDK: ``hermes config validate`` runs it on the ``model`` section. ``ready``, when
    given, gets the factory's context and refuses what else keeps the factory from building
    (its SDK not installed: a ``HermesError``; no key: a ``ConfigError`` naming the key's
    variable), the same way and also without importing the SDK: ``hermes doctor --offline``
    runs it instead of building the provider. ``takes_reasoning_effort`` says the provider
    sends ``model.reasoning_effort`` (the bundled ``openai`` and ``anthropic`` do): ``hermes
    acp`` offers a thinking level only then."""

    name: str
    factory: Callable[[ModelContext], Any]
    description: str = ""
    check: Callable[[ModelSettings], None] | None = None
    takes_reasoning_effort: bool = False
    ready: Callable[[ModelContext], None] | None = None

    def __post_init__(self) -> None:
        _check_name("model provider", self.name)


@dataclass(frozen=True)
class WebSearchProviderSpec:
    """A web search provider, selected by ``plugins.entries.web.search_provider``; its factory
    gets the :class:`PluginContext` of its plugin and returns a
    :class:`~hermes_core._web_search.WebSearchProvider`."""

    name: str
    factory: Callable[[PluginContext], Any]
    description: str = ""

    def __post_init__(self) -> None:
        _check_name("web search provider", self.name)


@dataclass(frozen=True)
class ImageProviderSpec:
    """An image provider (what ``image_generate`` draws with), selected by name in the
    configuration of the tool that uses it; its factory gets the registering plugin's
    :class:`PluginContext` and returns an :class:`~hermes_core._image_providers.ImageProvider`."""

    name: str
    factory: Callable[[PluginContext], Any]
    description: str = ""

    def __post_init__(self) -> None:
        _check_name("image provider", self.name)


@dataclass(frozen=True)
class ApprovalPolicySpec:
    """An approval policy, selected by ``approvals.policy``."""

    name: str
    factory: Callable[[PluginContext], Any]
    description: str = ""

    def __post_init__(self) -> None:
        _check_name("approval policy", self.name)


@dataclass(frozen=True)
class CliCommandSpec:
    """A ``hermes`` subcommand contributed by a plugin."""

    name: str
    command: click.Command

    def __post_init__(self) -> None:
        _check_name("command", self.name)


@dataclass
class ToolCall:
    """One call as hooks see it: always the real tool, never a bridge tool."""

    name: str
    arguments: dict[str, Any]
    tool: Tool
    call_id: str = ""

    @property
    def annotations(self) -> ToolAnnotations:
        """The hints of this call, which approval policies read: the tool's, or read-only
        for a call the tool marks as one that only reads
        (:data:`~hermes_core._tools.READ_ONLY_CALLS_META`)."""
        return call_annotations(self.tool, self.arguments)


@dataclass(frozen=True)
class PreCallDirective:
    """What a ``hermes_pre_tool_call`` hook may return.

    ``block``: the call does not run and the result is an error carrying ``message``.
    ``approve``: ask the approval policy even if it would not.
    ``modify``: replace the arguments with ``arguments``.
    """

    action: Literal["block", "approve", "modify"]
    message: str = ""
    arguments: dict[str, Any] | None = None

    @classmethod
    def block(cls, message: str) -> PreCallDirective:
        """Stop the call with ``message``."""
        return cls("block", message)

    @classmethod
    def approve(cls, message: str = "") -> PreCallDirective:
        """Require approval for this call."""
        return cls("approve", message)

    @classmethod
    def modify(cls, arguments: dict[str, Any]) -> PreCallDirective:
        """Replace the call's arguments."""
        return cls("modify", arguments=arguments)


ActivityStatus = Literal["ok", "error", "blocked", "denied", "interrupted"]


@dataclass(frozen=True)
class ActivityEvent:
    """One finished tool call, as the activity log and observers see it. ``parent_id`` is the
    session that delegated the call's session (a subagent's call), else ``None``."""

    name: str
    arguments: Mapping[str, Any]
    status: ActivityStatus
    duration_ms: float
    session_id: str
    source: str
    message: str | None = None
    parent_id: str | None = None


@dataclass(frozen=True)
class MemoryProviderSpec:
    """A memory provider, selected by ``memory.provider``; its factory gets a
    :class:`PluginContext` and returns a :class:`~hermes_core.agent._memory_provider.MemoryProvider`
    (the agent's memory: two lists of entries, kept where the provider keeps them)."""

    name: str
    factory: Callable[[PluginContext], Any]
    description: str = ""

    def __post_init__(self) -> None:
        _check_name("memory provider", self.name)


DoctorStatus = Literal["ok", "warning", "error", "not checked"]


@dataclass(frozen=True)
class DoctorResult:
    """What a :class:`DoctorCheckSpec`'s ``run`` returns: one line of ``hermes doctor``, its
    ``status``, a one-line ``message`` (the problem and what to do) and ``hint``, the command
    that shows more (or empty)."""

    status: DoctorStatus
    message: str
    hint: str = ""


@dataclass(frozen=True)
class DoctorCheckSpec:
    """A check of ``hermes doctor``, registered by ``hermes_doctor_checks``: ``run``, a plain or
    ``async`` function without arguments, returns a :class:`DoctorResult`, shown under the
    plugin's name. ``network``: it sends requests, so ``hermes doctor --offline`` shows it not
    checked without calling ``run``. A ``run`` that raises, returns anything else or takes over
    ``plugins.hook_timeout`` is an error line naming the plugin."""

    name: str
    run: Callable[[], DoctorResult | Awaitable[DoctorResult]]
    network: bool = False

    def __post_init__(self) -> None:
        _check_name("doctor check", self.name)
