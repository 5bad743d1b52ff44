"""Why a tool name can or cannot run here: the one answer for every caller.

:meth:`Availability.check` takes a name, a session and the route the call came by: *direct*
(the model, a CLI, a script calls the tool itself) or *through the bridge* (an entry of
``tool_call``). In order:

1. the name is not text, or a bridge tool named inside ``tool_call``: refused (called
   directly, a bridge tool runs for every session, whatever its grant and toolsets);
2. the registry holds it and its toolset is enabled: outside the session's grant, "not
   available in this session"; through the bridge, a tool in the model's tool list must be
   called directly; otherwise it may run;
3. a connector tool (``connectors__...``) through the bridge: it may run when connectors are in
   scope and granted;
4. the registry lacks it for a known reason (an MCP tool filtered out, its server unavailable):
   that reason;
5. otherwise unknown: when a plugin's manifest lists it, with why that plugin has no such tool
   here (not enabled, and how to enable it...); else with the closest name the route could
   have meant.

A name unknown while the MCP server it would be a tool of (by its ``mcp__<server>__`` prefix)
has no known tools and is still making its first connect may be one of that server's tools:
:meth:`Availability.settle` waits for that server alone (up to its ``connect_timeout``) before
the name is checked again.

The dispatcher asks before it runs a direct call; the bridge asks for each ``tool_call`` entry
and hands the tool it was given to the dispatcher, so a grant is checked once per call.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Awaitable, Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hermes_core._connector_names import CONNECTORS_TOOLSET, is_connector_name
from hermes_core._registry import Registry
from hermes_core._tool_blocks import BlockRun, runs_of
from hermes_core._tools import BRIDGE_TOOL_NAMES, Tool, ToolResult, toolsets_config_allows

if TYPE_CHECKING:
    from hermes_core._config import ToolsConfig
    from hermes_core._session import Session

__all__ = [
    "Availability",
    "BridgeRoute",
    "closest_deferred_names",
    "describe_guesses",
    "unknown_name_guesses",
]


@dataclass(slots=True)
class BridgeRoute:
    """What the bridge knows for a ``tool_call`` entry: which names the model sees as tools
    (``visible``), which it reaches through the bridge (``deferred``, in the session's grant),
    and whether connector tools are in scope (``connectors``: configured and signed in)."""

    visible: Collection[str]
    deferred: Collection[str]
    connectors: bool | None = None
    """``None``: no connector gateway is configured; ``False``: configured but not in scope
    (disabled or signed out); ``True``: in scope."""


class Availability:
    """The rules of the module docstring over one registry and its configuration.

    ``explain(name)`` gives the result for a name the registry lacks for a known reason (the MCP
    supervisor's), or ``None``; ``missing(name)`` says why a name no source explains is missing
    when a plugin provides it (the plugin runtime's ``missing_tool``), or ``None``.
    ``starting_source(name)`` names the source still starting whose tools are not known yet
    that ``name`` may belong to (``None``: none), and ``wait_for_source(source)`` waits for it
    (the MCP supervisor's ``starting_server_of`` and ``wait_for_server``).
    """

    def __init__(
        self,
        registry: Registry,
        tools_config: ToolsConfig,
        explain: Callable[[str], ToolResult | None] | None = None,
        *,
        missing: Callable[[str], str | None] | None = None,
        starting_source: Callable[[str], str | None] | None = None,
        wait_for_source: Callable[[str], Awaitable[None]] | None = None,
    ) -> None:
        self.registry = registry
        self.tools_config = tools_config
        self.explain = explain
        self.missing = missing
        self.starting_source = starting_source
        self.wait_for_source = wait_for_source

    def pending_source(self, name: object) -> str | None:
        """The source still starting that ``name``, which the registry lacks, may yet be a
        tool of; ``None`` when there is none (or ``name`` is registered)."""
        if self.starting_source is None or not isinstance(name, str) or name in self.registry:
            return None
        return self.starting_source(name)

    async def settle(self, name: object) -> bool:
        """When ``name`` has a :meth:`pending_source`, wait for that source alone, up to its own
        timeout, and say so (``True``: check ``name`` again); otherwise ``False`` at once."""
        source = self.pending_source(name)
        if source is None or self.wait_for_source is None:
            return False
        await self.wait_for_source(source)
        return True

    def resolve(self, name: object, session: Session | None) -> Tool | None:
        """The tool called ``name`` when it exists, its toolset is enabled and ``session`` (if
        any) is granted it; otherwise ``None``."""
        tool = self.registry.get(name) if isinstance(name, str) else None
        if tool is None or _is_bridge(tool):
            return tool
        if not toolsets_config_allows(tool.toolset, self.tools_config):
            return None
        if session is not None and not session.grants(tool.toolset):
            return None
        return tool

    def check(
        self, name: object, session: Session, bridge: BridgeRoute | None = None
    ) -> Tool | ToolResult | None:
        """The tool to run for ``name``, or why not (an error result); ``None`` for a connector
        tool that may run through the bridge (it has no local tool)."""
        if not isinstance(name, str):
            return ToolResult.error("UNKNOWN_TOOL", f"There is no tool named {name!r}.")
        if bridge is not None and name in BRIDGE_TOOL_NAMES:
            return _bridge_refusal(
                f"{name!r} is a bridge tool; call it directly, not inside tool_call",
                "INVALID_ARGUMENTS",
            )
        tool = self.registry.get(name)
        if tool is not None and bridge is None and _is_bridge(tool):
            return tool  # the bridge serves every session, whatever its grant
        if tool is not None and toolsets_config_allows(tool.toolset, self.tools_config):
            if not session.grants(tool.toolset):
                if bridge is not None:
                    return _bridge_refusal(
                        f"{name!r} is not available in this session", "NOT_AVAILABLE"
                    )
                return ToolResult.error(
                    "UNKNOWN_TOOL",
                    f"The tool {name!r} is not available in this session (its toolset is "
                    "disabled or not granted).",
                )
            if bridge is not None and name in bridge.visible:
                return _bridge_refusal(
                    f"{name!r} is in your tool list: call it directly, not through tool_call",
                    "CALL_DIRECTLY",
                )
            return tool
        if bridge is not None and is_connector_name(name) and bridge.connectors is not None:
            return self._connector(name, session, bridge)
        if tool is None and self.explain is not None:
            # A name the registry lacks for a known reason: a filtered MCP tool, a server down.
            explained = self.explain(name)
            if explained is not None:
                if bridge is None:
                    return explained
                reason = explained.error_message or explained.text_content
                return _bridge_refusal(reason, "NOT_AVAILABLE")
        why = self.missing(name) if tool is None and self.missing is not None else None
        if bridge is not None:
            if why:
                return _bridge_refusal(f"unknown tool {name!r}: {why}", "UNKNOWN_TOOL")
            guesses = closest_deferred_names(name, bridge.deferred)
            if guesses:
                more = " Send the full name." if len(guesses) > 1 else ""
                return _bridge_refusal(
                    f"unknown tool {name!r}. Did you mean {unknown_name_guesses(guesses)}?{more}",
                    "UNKNOWN_TOOL",
                )
            return _bridge_refusal(
                f"unknown tool {name!r}: use tool_search to find the exact name", "UNKNOWN_TOOL"
            )
        if tool is not None:
            return ToolResult.error(
                "UNKNOWN_TOOL",
                f"The tool {name!r} is not available in this session (its toolset is disabled "
                "or not granted).",
            )
        if why:
            return ToolResult.error("UNKNOWN_TOOL", f"There is no tool named {name!r}. {why}.")
        known = self._known(session)
        ending = closest_deferred_names(name, known) if "__" not in name else []
        close = list(dict.fromkeys([*ending, *difflib.get_close_matches(name, known, n=3)]))[:3]
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        return ToolResult.error("UNKNOWN_TOOL", f"There is no tool named {name!r}.{hint}")

    def _known(self, session: Session) -> list[str]:
        """The names :meth:`resolve` finds for ``session``, in registration order; a block's
        decided per group, making none of its tools."""
        names: list[str] = []
        for run in runs_of(self.registry.tools()):
            if isinstance(run, BlockRun):
                block = run.block
                allowed = [
                    toolsets_config_allows(toolset, self.tools_config) and session.grants(toolset)
                    for toolset in block.toolsets
                ]
                ids, every = block.group_ids, block.names
                names += [every[p] for p in run.indices() if allowed[ids[p]]]
            else:
                names += [tool.name for tool in run if self.resolve(tool.name, session)]
        return names

    def _connector(self, name: str, session: Session, bridge: BridgeRoute) -> ToolResult | None:
        if not bridge.connectors:
            return _bridge_refusal(
                f"{name!r} is a connector tool, and connectors are not available (not "
                "configured or not signed in)",
                "NOT_AVAILABLE",
            )
        if not session.grants(CONNECTORS_TOOLSET):
            return _bridge_refusal(f"{name!r} is not available in this session", "NOT_AVAILABLE")
        return None


def _is_bridge(tool: Tool) -> bool:
    return tool.name in BRIDGE_TOOL_NAMES and bool(tool.meta.get("bridge"))


def _bridge_refusal(message: str, code: str) -> ToolResult:
    """A refusal of the bridge: ``{"error", "code"}`` as both compact JSON text and structured
    result, as every bridge answer is."""
    payload = {"error": message, "code": code}
    text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
    return ToolResult(
        content=[{"type": "text", "text": text}],
        structured=payload,
        is_error=True,
        error_code=code,
        error_message=message,
    )


MAX_GUESSES = 5
"""The most names one unknown name is answered with."""


def closest_deferred_names(name: str, deferred: Iterable[str]) -> list[str]:
    """The names of ``deferred`` (or of any tools) closest to ``name`` among those that end the
    same way (the part after the last ``__``, or the whole name): one, or all of those as close
    (at most :data:`MAX_GUESSES`, by name), such as every server's tool for a bare name that
    several servers list (``search``); ``[]`` when none ends that way."""
    tail = name.rsplit("__", 1)[-1]
    if not tail:
        return []
    candidates = [
        candidate
        for candidate in deferred
        if candidate != name and (candidate == tail or candidate.endswith("_" + tail))
    ]
    if "__" not in name:
        # A bare name: each server's tool of exactly that name is as likely as the others,
        # however long its server's name.
        same = sorted(c for c in candidates if c.rsplit("__", 1)[-1] == name)
        if same:
            return same[:MAX_GUESSES]
    ratios = {c: difflib.SequenceMatcher(None, name, c).ratio() for c in candidates}
    best = max(ratios.values(), default=None)
    return sorted(c for c, ratio in ratios.items() if ratio == best)[:MAX_GUESSES]


def unknown_name_guesses(guesses: Sequence[str]) -> str:
    """``'a'`` for one guess, ``one of 'a', 'b'`` for several: what follows "did you mean"."""
    if len(guesses) == 1:
        return repr(guesses[0])
    return "one of " + ", ".join(map(repr, guesses))


def describe_guesses(
    names: Sequence[str], deferred: Iterable[str]
) -> tuple[dict[str, str], dict[str, str]]:
    """For the names ``tool_describe`` did not find: the one deferred name to send for each
    that has one (its ``did_you_mean``), and for each that several are as close to, an error
    naming them (they go under ``errors``)."""
    known = list(deferred) if names else []
    guessed = {name: found for name in names if (found := closest_deferred_names(name, known))}
    one = {name: found[0] for name, found in guessed.items() if len(found) == 1}
    several = {
        name: f"no tool has that name; did you mean {unknown_name_guesses(found)}? Send the "
        "full name"
        for name, found in guessed.items()
        if len(found) > 1
    }
    return one, several
