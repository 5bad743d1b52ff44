"""Assembly: the tool array of one model request, its tier and its statistics.

Stateless in what it decides (derived from the live tools and the session's grant every time)
and cheap to repeat: :class:`~hermes_core.search._toolsearch.ToolSearch` caches the result by
registry generation, budget and grant.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Container, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, Protocol

from hermes_core._config import ToolSearchConfig
from hermes_core._session import Session
from hermes_core._tool_blocks import BlockRun, ToolsByName, ToolSequence, runs_of
from hermes_core._tools import BRIDGE_TOOL_NAMES, Tool
from hermes_core.search._deferral import is_deferrable, not_deferrable_in_block
from hermes_core.search._listing import (
    NO_LISTING,
    Listing,
    ListingForm,
    build_listing,
    group_counts,
)
from hermes_core.search._render import ToolFormat, render_tools

__all__ = [
    "UNKNOWN_CONTEXT_TOKENS",
    "Assembly",
    "EitherNames",
    "LiveTools",
    "Tier",
    "ToolSplit",
    "assemble_tools",
    "listing_budget",
    "split_tools",
]

Tier = Literal[0, 1, 2]
UNKNOWN_CONTEXT_TOKENS = 10000
"""The listing budget before the cap when the model's context length is unknown."""


class LiveTools(Protocol):
    """The live tools, as assembly reads them: the host's enabled tools
    (:class:`~hermes_core._registry.EnabledTools`). Not a "catalog": in hermes-core a catalog is
    data listing tools or servers from which nothing runs (``tools.catalogs``, the MCP server
    catalog)."""

    @property
    def generation(self) -> int:
        """Grows on every change of the tools."""
        ...

    def tools(self) -> Sequence[Tool]:
        """Every tool, in registration order."""
        ...

    def get(self, name: str) -> Tool | None:
        """The tool called ``name``, or ``None``."""
        ...


@dataclass(frozen=True)
class GrantView:
    """The live tools as one grant of toolsets sees it; built once per generation and grant."""

    visible: tuple[Tool, ...]
    deferred: Sequence[Tool]
    deferred_by_name: Mapping[str, Tool] = field(repr=False)
    sources: tuple[tuple[str, int], ...] = field(repr=False)
    """``(group, tool count)`` of the deferred tools, sorted by group."""

    @classmethod
    def of(
        cls,
        visible: tuple[Tool, ...],
        deferred: Sequence[Tool],
        deferred_by_name: Mapping[str, Tool] | None = None,
    ) -> GrantView:
        """The view of these tools, with the lookups search needs precomputed
        (``deferred_by_name``, when the caller has it already, is ``deferred`` by name)."""
        counts = group_counts(deferred)
        if deferred_by_name is None:
            deferred_by_name = by_name(deferred)
        return cls(visible, deferred, deferred_by_name, tuple(sorted(counts.items())))


@dataclass(frozen=True)
class ToolSplit:
    """The live tools at one generation, split into visible and deferred tools (bridge names
    stripped). Deferred tools keep registration order."""

    generation: int
    visible: tuple[Tool, ...]
    deferred: Sequence[Tool]
    deferred_by_name: Mapping[str, Tool] = field(repr=False)
    visible_names: frozenset[str] = field(repr=False)
    _grants: dict[frozenset[str] | None, GrantView] = field(
        default_factory=dict, repr=False, compare=False
    )

    def grant(self, session: Session | None) -> GrantView:
        """The tools ``session`` may see (all of them without a session or a grant), cached."""
        key = None if session is None else session.granted_toolsets
        found = self._grants.get(key)
        if found is None:
            if key is None:
                found = GrantView.of(self.visible, self.deferred, self.deferred_by_name)
            else:
                found = GrantView.of(
                    tuple(tool for tool in self.visible if tool.toolset in key),
                    in_toolsets(self.deferred, key),
                )
            if len(self._grants) >= _MAX_GRANTS:
                self._grants.clear()
            self._grants[key] = found
        return found

    def in_grant(self, session: Session | None) -> tuple[tuple[Tool, ...], Sequence[Tool]]:
        """``(visible, deferred)`` restricted to the toolsets ``session`` grants."""
        found = self.grant(session)
        return found.visible, found.deferred


_MAX_GRANTS = 64
"""Distinct grants whose views are kept per generation; a host serving many stays bounded."""


def split_tools(tools: Sequence[Tool], config: ToolSearchConfig, generation: int) -> ToolSplit:
    """Split ``tools`` by :func:`~hermes_core.search._deferral.is_deferrable`; with
    ``enabled: off`` nothing is deferred. Bridge tools in the input are dropped. The runs of
    blocks in a :class:`~hermes_core._tool_blocks.ToolSequence` are split whole
    (:func:`~hermes_core.search._deferral.not_deferrable_in_block`), making none of their tools."""
    visible: list[Tool] = []
    deferred_runs: list[tuple[Tool, ...] | BlockRun] = []
    for run in runs_of(tools):
        if isinstance(run, BlockRun):
            if config.enabled == "off":
                visible.extend(run)
                continue
            shown = not_deferrable_in_block(run, config)
            if shown:
                hidden = set(shown)
                visible.extend(run.block.tool(position) for position in shown)
                run = BlockRun(
                    run.block,
                    tuple(position for position in run.indices() if position not in hidden),
                )
            deferred_runs.append(run)
            continue
        plain: list[Tool] = []
        for tool in run:
            if tool.name in BRIDGE_TOOL_NAMES:
                continue
            if config.enabled != "off" and is_deferrable(tool, config):
                plain.append(tool)
            else:
                visible.append(tool)
        deferred_runs.append(tuple(plain))
    deferred: Sequence[Tool]
    if any(isinstance(run, BlockRun) for run in deferred_runs):
        deferred = ToolSequence(deferred_runs)
    else:
        deferred = tuple(tool for run in deferred_runs for tool in run)
    return ToolSplit(
        generation=generation,
        visible=tuple(visible),
        deferred=deferred,
        deferred_by_name=by_name(deferred),
        visible_names=frozenset(tool.name for tool in visible),
    )


def by_name(tools: Sequence[Tool]) -> Mapping[str, Tool]:
    """``tools`` by name (a block's tools made only when looked up)."""
    if isinstance(tools, ToolSequence):
        return ToolsByName(tools)
    return {tool.name: tool for tool in tools}


def in_toolsets(tools: Sequence[Tool], toolsets: Collection[str]) -> Sequence[Tool]:
    """Those of ``tools`` whose toolset is one of ``toolsets``, in order (per group for the
    runs of blocks, making none of their tools)."""
    if not isinstance(tools, ToolSequence):
        return tuple(tool for tool in tools if tool.toolset in toolsets)
    runs: list[tuple[Tool, ...] | BlockRun] = []
    for run in tools.runs:
        if isinstance(run, BlockRun):
            block = run.block
            allowed = [toolset in toolsets for toolset in block.toolsets]
            runs.append(
                BlockRun(
                    block,
                    tuple(p for p in run.indices() if allowed[block.group_ids[p]]),
                )
            )
        else:
            runs.append(tuple(tool for tool in run if tool.toolset in toolsets))
    return ToolSequence(runs)


def listing_budget(config: ToolSearchConfig, context_length: int | None) -> int:
    """The listing budget in tokens: ``min(listing_max_tokens, floor(context * pct / 100))``, or
    ``min(listing_max_tokens, 10000)`` when the context length is unknown; 0 with
    ``listing: off``."""
    if config.listing == "off":
        return 0
    if context_length is None:
        return min(config.listing_max_tokens, UNKNOWN_CONTEXT_TOKENS)
    share = math.floor(max(context_length, 0) * config.threshold_pct / 100)
    return min(config.listing_max_tokens, share)


@dataclass(frozen=True)
class Assembly:
    """The tools of one model request and what the assembly decided.

    ``visible_count`` counts the tools sent as themselves (not the bridge), ``deferred_count`` the
    tools reached through the bridge, ``tokens_saved`` the schema tokens saved compared with
    sending every tool as itself (0, never negative, when the bridge costs more than it saves)
    and ``bridge_tokens`` what the bridge itself costs: the schema tokens of the three bridge
    tools as sent, the listing included (0 at tier 0).
    """

    tools: tuple[Tool, ...]
    tier: Tier
    listing_form: ListingForm
    budget_tokens: int
    listing_tokens: int
    visible_count: int
    deferred_count: int
    bridge_tokens: int = 0
    listing: str = ""
    sent_tokens: int = 0
    """The schema tokens of the tool array as sent (the bridge and its listing included)."""
    measured: tuple[Sequence[Tool], ...] = field(default=(), repr=False, compare=False)
    """Every tool as itself (the visible and the deferred ones): what ``tokens_saved`` compares
    with; kept as given, so deferred tools are not made or rendered before it is read."""
    schema_tokens: Callable[[Tool], int] | None = field(default=None, repr=False, compare=False)

    @cached_property
    def tokens_saved(self) -> int:
        """Schema tokens saved compared with sending every tool as itself, never negative.

        Measured on first use: rendering every deferred schema to count it is most of an
        assembly's cost at thousands of tools, and only the statistics need it."""
        if self.schema_tokens is None:
            return 0
        everything = sum(self.schema_tokens(tool) for tools in self.measured for tool in tools)
        # A small catalog costs more through the bridge than as itself: nothing is saved, and
        # bridge_tokens says what the bridge costs instead of a negative saving.
        return max(0, everything - self.sent_tokens)

    def statistics(self) -> dict[str, Any]:
        """The statistics, under their documented keys."""
        return {
            "tier": self.tier,
            "listing_form": self.listing_form,
            "budget_tokens": self.budget_tokens,
            "listing_tokens": self.listing_tokens,
            "visible_count": self.visible_count,
            "deferred_count": self.deferred_count,
            "tokens_saved": self.tokens_saved,
            "bridge_tokens": self.bridge_tokens,
        }

    def render(self, style: ToolFormat = "neutral") -> list[dict[str, Any]]:
        """The tool array in a provider's format."""
        return render_tools(self.tools, style)

    def as_dict(self, style: ToolFormat = "neutral") -> dict[str, Any]:
        """Statistics plus ``tools`` rendered in ``style`` (what ``--json`` prints)."""
        return {**self.statistics(), "tools": self.render(style)}


def assemble_tools(
    visible: Sequence[Tool],
    deferred: Sequence[Tool],
    *,
    config: ToolSearchConfig,
    budget_tokens: int,
    connectors_in_scope: bool,
    unavailable: Mapping[str, tuple[int, str]],
    make_bridge: Callable[[str], Sequence[Tool]],
    schema_tokens: Callable[[Tool], int],
) -> Assembly:
    """Decide the tier and build the tool array.

    Tier 0 (``enabled: off``, or nothing deferred, no connectors and no unavailable server):
    every tool as is. Otherwise
    the bridge is active; tier 1 when the listing names every deferred tool (forms ``full`` and
    ``names``), tier 2 when any group is only summarized or there is no listing. (The spec counted
    a ``mixed`` listing as tier 1; the issue asks the 5,468-tool catalog at 200,000 tokens to be
    tier 2: a listing that names a few percent of the tools would suggest those are all there
    is.) ``make_bridge`` builds the bridge tools from the listing text.
    """
    # A configured server that is down keeps the bridge up, so its listing line tells the model
    # the server exists.
    if config.enabled == "off" or (not deferred and not connectors_in_scope and not unavailable):
        tools = tuple(visible) + tuple(deferred)
        return Assembly(tools, 0, "none", budget_tokens, 0, len(tools), 0)
    listing: Listing = (
        build_listing(deferred, budget_tokens, unavailable) if budget_tokens > 0 else NO_LISTING
    )
    bridge = tuple(make_bridge(listing.text))
    tools = tuple(visible) + bridge
    bridge_tokens = sum(schema_tokens(tool) for tool in bridge)
    sent = sum(schema_tokens(tool) for tool in visible) + bridge_tokens
    tier: Tier = 1 if deferred and listing.named_count == len(deferred) else 2
    return Assembly(
        tools=tools,
        tier=tier,
        listing_form=listing.form,
        budget_tokens=budget_tokens,
        listing_tokens=listing.tokens,
        visible_count=len(visible),
        deferred_count=len(deferred),
        bridge_tokens=bridge_tokens,
        listing=listing.text,
        sent_tokens=sent,
        measured=(visible, deferred),
        schema_tokens=schema_tokens,
    )


class EitherNames(Container[str]):
    """Names in either of two containers (without building their union: the deferred tools
    may be hundreds of thousands)."""

    def __init__(self, first: Container[str], second: Container[str]) -> None:
        self._first = first
        self._second = second

    def __contains__(self, name: object) -> bool:
        return name in self._first or name in self._second
