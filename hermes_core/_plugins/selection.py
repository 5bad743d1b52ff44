"""The selection step: build the search backend, connector gateway or approval policy that the
configuration names, from the plugin that registered it.

Every backend, gateway and policy the host uses is built here, by :func:`build_selected`, in
three steps that each fail loudly:

1. the name is looked up among the registrations
   (:meth:`~hermes_core._plugins.registrations.Registrations.select`): an unknown name is a
   :class:`~hermes_core._errors.RegistrationError` listing the valid ones;
2. the factory is called with the plugin's :class:`~hermes_core._specs.PluginContext`: an
   exception, or a coroutine (an ``async def`` factory), is a
   :class:`~hermes_core._errors.PluginError`;
3. what it returned is checked against the protocol of its kind (:data:`EXPECTED`): a missing
   method, or an ``async def`` where a plain method is expected (or the reverse), is a
   :class:`~hermes_core._errors.PluginError` too.

A :class:`~hermes_core._errors.PluginError` names the plugin, the registration hook, the
registered name and what was expected. The host records it as that plugin's error (``hermes
plugins list`` shows it). A search backend that cannot be built is replaced by an
:class:`UnavailableSearchBackend`, so ``tool_search`` answers with that error while every other
tool keeps working.
"""

from __future__ import annotations

import inspect
import traceback
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, NoReturn

from hermes_core._errors import HermesError, PluginError, raised_at

if TYPE_CHECKING:
    from hermes_core._config import Config
    from hermes_core._plugins.registrations import Registrations
    from hermes_core._specs import PluginContext
    from hermes_core.search._backend import Admission, SearchHit, ToolDocument

SelectableKind = Literal[
    "search_backend",
    "connector_gateway",
    "model_provider",
    "approval_policy",
    "web_search_provider",
    "image_provider",
    "memory_provider",
]


def configured_selections(config: Config) -> list[tuple[SelectableKind, str]]:
    """The names ``config`` selects from plugins for the host's own parts: the search backend,
    the approval policy, and the connector gateway when ``tools.connectors`` has a ``url``
    (the agent's providers are the agent's, chosen when it starts)."""
    selected: list[tuple[SelectableKind, str]] = [
        ("search_backend", config.tools.tool_search.backend),
        ("approval_policy", config.approvals.policy),
    ]
    connectors = config.tools.connectors
    if connectors.enabled and connectors.url:
        selected.append(("connector_gateway", connectors.gateway))
    return selected


@dataclass(frozen=True)
class Expected:
    """What the factory of one kind of registration must return: an object with the methods of
    ``protocol`` (an importable ``module:Class``), described to plugin authors as ``what``.
    ``either_way`` names methods its caller accepts as ``def`` or ``async def``; ``generators``
    methods that return an async iterator, written as async generators."""

    what: str
    hook: str
    protocol: str
    either_way: frozenset[str] = frozenset()
    generators: frozenset[str] = frozenset()

    @property
    def protocol_name(self) -> str:
        """The protocol's class name (``SearchBackend``)."""
        return self.protocol.rpartition(":")[2]


EXPECTED: Mapping[SelectableKind, Expected] = {
    "search_backend": Expected(
        "search backend", "hermes_search_backends", "hermes_core.search._backend:SearchBackend"
    ),
    "connector_gateway": Expected(
        "connector gateway",
        "hermes_connector_gateways",
        "hermes_core.connectors._gateway:ConnectorGateway",
    ),
    "model_provider": Expected(
        "model provider",
        "hermes_model_providers",
        "hermes_core.agent._wire:ModelProvider",
        generators=frozenset({"stream"}),
    ),
    "approval_policy": Expected(
        "approval policy",
        "hermes_approval_policies",
        "hermes_core._approvals.policy:ApprovalPolicy",
        # The dispatcher awaits a decision that is a coroutine, within plugins.hook_timeout.
        either_way=frozenset({"decide"}),
    ),
    "web_search_provider": Expected(
        "web search provider",
        "hermes_web_search_providers",
        "hermes_core._web_search:WebSearchProvider",
    ),
    "image_provider": Expected(
        "image provider", "hermes_image_providers", "hermes_core._image_providers:ImageProvider"
    ),
    "memory_provider": Expected(
        "memory provider",
        "hermes_memory_providers",
        "hermes_core.agent._memory_provider:MemoryProvider",
    ),
}
"""Per kind: how it is called, the hook that registers it and the protocol it implements."""


def protocol_methods(protocol: type) -> dict[str, bool]:
    """The methods a protocol class declares (its own and its bases'), each with whether it is
    a coroutine function: ``{"build": False, ..., "__len__": False}`` for ``SearchBackend``."""
    methods: dict[str, bool] = {}
    for klass in reversed(protocol.__mro__):
        if klass.__module__ in ("builtins", "typing", "typing_extensions"):
            continue
        for name, value in vars(klass).items():
            # Protocol machinery (__init__, __subclasshook__) is not declared by the class.
            if inspect.isfunction(value) and value.__qualname__ == f"{klass.__qualname__}.{name}":
                methods[name] = inspect.iscoroutinefunction(value)
    return methods


def _protocol(kind: SelectableKind) -> type:
    import importlib

    module, _, name = EXPECTED[kind].protocol.partition(":")
    found: type = getattr(importlib.import_module(module), name)
    return found


def expected_text(kind: SelectableKind) -> str:
    """``a SearchBackend (build, add, remove, search, unmatched_words, __len__)``: the object a
    factory of ``kind`` must return, as error messages say it."""
    protocol = _protocol(kind)
    methods = ", ".join(protocol_methods(protocol))
    article = "an" if protocol.__name__[0] in "AEIOU" else "a"
    return f"{article} {protocol.__name__} ({methods})"


def protocol_problem(kind: SelectableKind, built: object) -> str | None:
    """Why ``built`` does not implement the protocol of ``kind``, or ``None`` when it does: the
    methods it lacks, or one that is ``async def`` where the protocol's is not (or the
    reverse). Special methods (``__len__``) are looked up on the type, as Python does."""
    missing: list[str] = []
    wrong: list[str] = []
    either_way = EXPECTED[kind].either_way
    for name, awaited in protocol_methods(_protocol(kind)).items():
        owner: Any = type(built) if name.startswith("__") else built
        try:
            method = getattr(owner, name, None)
        except Exception:  # a property that raises is no method either
            method = None
        if not callable(method):
            missing.append(name)
        elif (
            name not in either_way
            and (inspect.isfunction(method) or inspect.ismethod(method))
            and inspect.iscoroutinefunction(method) != awaited
        ):
            wrong.append(
                f"{name} must be an async generator (async def with yield), not a coroutine "
                "function"
                if name in EXPECTED[kind].generators
                else f"{name} must be {'async def' if awaited else 'a plain def'}"
            )
    got = "None" if built is None else type(built).__name__
    if missing:
        return f"its factory returned {got}, which has no {', '.join(missing)}"
    if wrong:
        return f"its factory returned {got}, whose {'; '.join(wrong)}"
    return None


def build_selected(
    registrations: Registrations,
    kind: SelectableKind,
    name: str,
    context: Callable[[str], PluginContext],
    *,
    origin: str | None = None,
) -> Any:
    """The object that the registration of ``kind`` called ``name`` builds, checked against its
    protocol. ``context`` gives the :class:`~hermes_core._specs.PluginContext` of a plugin by
    name (the host's :meth:`~hermes_core._host.Host.plugin_context`); ``origin`` says who asked
    for ``name`` when it is not the configuration (another backend's factory).

    Raises :class:`~hermes_core._errors.RegistrationError` for a name no loaded plugin registered
    (listing the valid ones), and :class:`~hermes_core._errors.PluginError` naming the plugin,
    the hook and ``name`` when the factory raises (with its exception), is a coroutine function
    or returns something else (with what was expected). A
    :class:`~hermes_core._errors.HermesError` raised by the factory itself (a backend that asked
    the host for another one that failed, say) passes unchanged: it already says what went
    wrong.
    """
    spec = registrations.select(kind, name, origin=origin)
    plugin = registrations.table(kind)[name].plugin
    try:
        built = spec.factory(context(plugin))
    except HermesError:
        raise
    except (Exception, SystemExit) as exc:
        where = raised_at(exc)
        raised = f"its factory raised {type(exc).__name__}: {exc}"
        _fail(kind, name, plugin, raised + (f" (at {where})" if where else ""), exc)
    if inspect.isawaitable(built):
        close = getattr(built, "close", None)
        if callable(close):
            close()  # never awaited: close it so Python does not warn
        _fail(
            kind,
            name,
            plugin,
            "its factory returned a coroutine: factories must be plain functions (def, not "
            "async def)",
        )
    problem = protocol_problem(kind, built)
    if problem is not None:
        _fail(kind, name, plugin, problem)
    return built


def _fail(
    kind: SelectableKind, name: str, plugin: str, problem: str, cause: BaseException | None = None
) -> NoReturn:
    expected = EXPECTED[kind]
    trace = None
    message = f"{expected.what} {name!r} (from {expected.hook}) could not be built: {problem}"
    if cause is None:  # it returned the wrong thing: say what it should have returned
        message = f"{message}; expected {expected_text(kind)}"
    else:  # it raised: its exception is what went wrong, not the protocol
        trace = "".join(traceback.format_exception(type(cause), cause, cause.__traceback__))
    raise PluginError(plugin, message, trace=trace) from cause


class SearchBackendUnavailable(HermesError):
    """Raised by every search of an :class:`UnavailableSearchBackend`; its message is why the
    backend could not be built."""


class UnavailableSearchBackend:
    """Stands in for a search backend that could not be built (``error`` says why).

    It indexes nothing, and every search raises :class:`SearchBackendUnavailable` with the
    message of ``error``, which ``tool_search`` returns as its error result; assembly, the
    listing, ``tool_describe``, ``tool_call`` and every other tool keep working.
    """

    def __init__(self, error: HermesError) -> None:
        self.error = error

    def build(self, documents: Sequence[ToolDocument]) -> None:
        """Nothing is indexed."""

    def add(self, documents: Sequence[ToolDocument]) -> None:
        """Nothing is indexed."""

    def remove(self, names: Collection[str]) -> None:
        """Nothing is indexed."""

    def search(
        self, query: str, limit: int, admission: Admission, extra: Sequence[ToolDocument] = ()
    ) -> list[SearchHit]:
        """Raise :class:`SearchBackendUnavailable`."""
        raise SearchBackendUnavailable(str(self.error))

    def unmatched_words(
        self, query: str, hits: Sequence[SearchHit], extra: Sequence[ToolDocument] = ()
    ) -> list[str]:
        """Raise :class:`SearchBackendUnavailable`."""
        raise SearchBackendUnavailable(str(self.error))

    def __len__(self) -> int:
        return 0
