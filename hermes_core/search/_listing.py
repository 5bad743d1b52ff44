"""The catalog listing embedded in the ``tool_search`` description.

A header line, then one block per group (MCP server, plugin, or ``other``), blocks sorted by
group name and tools by name, so the bytes are the same whatever the registration order (prompt
caches stay warm). Each block takes one of three forms (full, names, summary); the degradation
ladder picks the richest listing that fits the token budget.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Literal

from hermes_core._tool_blocks import BlockRun, ToolBlock, runs_of
from hermes_core._tools import Tool
from hermes_core.search._backend import OTHER_GROUP
from hermes_core.search._render import estimate_tokens

__all__ = [
    "LISTING_HEADER",
    "SHORT_DESCRIPTION_CHARS",
    "BlockForm",
    "Listing",
    "ListingForm",
    "block_groups",
    "build_listing",
    "group_counts",
    "group_named",
    "group_of",
    "short_description",
]

BlockForm = Literal["full", "names", "summary"]
ListingForm = Literal["full", "names", "mixed", "summary", "none"]
"""``mixed``: some groups by name, the largest collapsed to summaries; ``none``: no listing."""

SHORT_DESCRIPTION_CHARS = 60
LISTING_HEADER = (
    "Deferred tools by source (search with tool_search, read schemas with tool_describe, "
    "run with tool_call):"
)

_SENTENCE_END = re.compile(r"(?<=[.!?])\s|\n")
_SPACES = re.compile(r"\s+")


def group_of(tool: Tool) -> str:
    """The listing group of ``tool``: its MCP server, plugin or catalog name, else ``other``."""
    return group_named(tool.source_name, tool.toolset)


def group_named(source_name: str, toolset: str) -> str:
    """The listing group of a tool with this ``source_name`` and ``toolset`` (:func:`group_of`)."""
    if source_name:
        return source_name
    if toolset.startswith("mcp-") and len(toolset) > 4:
        return toolset[4:]
    return OTHER_GROUP


def block_groups(block: ToolBlock) -> list[str]:
    """The listing group of each of ``block``'s groups (indexed like ``block.groups``)."""
    return [group_named(*pair) for pair in zip(block.groups, block.toolsets, strict=True)]


def group_counts(tools: Sequence[Tool]) -> Counter[str]:
    """How many of ``tools`` each listing group holds; a block's counted per group, no tool
    made."""
    counts: Counter[str] = Counter()
    for run in runs_of(tools):
        if isinstance(run, BlockRun):
            groups = block_groups(run.block)
            ids = run.block.group_ids
            sizes: Mapping[int, int] = (
                dict(enumerate(run.block.group_sizes()))
                if run.positions is None
                else Counter(ids[position] for position in run.positions)
            )
            for group, size in sizes.items():
                if size:
                    counts[groups[group]] += size
        else:
            counts.update(map(group_of, run))
    return counts


_HTML_TAG = re.compile(
    r"</?(?:a|b|i|u|em|strong|code|pre|p|br|hr|li|ul|ol|dl|dt|dd|span|div|note|important|"
    r"nobr|aside|h[1-6]|table|tr|td|th|sup|sub|tt)\b[^<>]*>",
    re.IGNORECASE,
)
_BEFORE_PUNCTUATION = re.compile(r"\s+([.,;:!?)])")


def short_description(description: str) -> str:
    """The first sentence of ``description``, cut at a word boundary to at most 60 characters
    plus ``…`` when it is longer. HTML (OpenAPI catalogs write descriptions in it) is read as
    text: its tags dropped, its entities decoded; other angle brackets (``<name>``) stay."""
    text = description.strip()
    if "<" in text or "&" in text:
        import html

        text = _BEFORE_PUNCTUATION.sub(r"\1", html.unescape(_HTML_TAG.sub(" ", text))).strip()
    first = _SENTENCE_END.split(text, maxsplit=1)[0] if text else ""
    first = _SPACES.sub(" ", first).strip()
    if len(first) <= SHORT_DESCRIPTION_CHARS:
        return first
    cut = first[: SHORT_DESCRIPTION_CHARS + 1]
    space = cut.rfind(" ")
    cut = cut[:space] if space > 0 else first[:SHORT_DESCRIPTION_CHARS]
    return cut.rstrip(" ,;:-") + "…"


@dataclass(frozen=True)
class Listing:
    """A rendered listing: its text (empty for none), form, estimated tokens and how many tools
    it names."""

    text: str
    form: ListingForm
    tokens: int
    named_count: int


NO_LISTING = Listing("", "none", 0, 0)


_Member = Tool | tuple[ToolBlock, int]
_Part = tuple[ToolBlock, Sequence[int]] | list[Tool]
"""Some of a group's tools: positions of one block, or ordinary tools."""


class _Group:
    """One group's tools. Its names are sorted, and its descriptions read, only for a block
    that lists them: a summary needs the count, and a names block's length needs only the
    names' lengths (a catalog's tools are not made to be listed by name or counted)."""

    def __init__(self, name: str, parts: Sequence[_Part]) -> None:
        self.name = name
        self._parts = parts
        self.count = sum(len(part) if isinstance(part, list) else len(part[1]) for part in parts)
        self._sorted: tuple[tuple[str, ...], Callable[[], list[str]]] | None = None

    @property
    def names(self) -> tuple[str, ...]:
        """The tools' names, sorted."""
        return self._in_order()[0]

    def block(self, form: BlockForm) -> str:
        """The group's block in ``form``."""
        if form == "summary":
            return self._summary()
        head = self._head()
        if form == "names":
            return head + "\n" + ", ".join(self.names)
        names, descriptions = self._in_order()
        pairs = zip(names, descriptions(), strict=True)
        lines = [f"- {name}: {short_description(text)}" for name, text in pairs]
        return "\n".join([head, *lines])

    def length(self, form: Literal["names", "summary"]) -> int:
        """``len(self.block(form))`` without rendering it."""
        if form == "summary":
            return len(self._summary())
        named = 0
        for part in self._parts:
            if isinstance(part, list):
                named += sum(len(tool.name) for tool in part)
            else:
                block, positions = part
                named += sum(map(len, map(block.names.__getitem__, positions)))
        return len(self._head()) + 1 + named + 2 * (self.count - 1)

    def _head(self) -> str:
        return self.head_of(self.name, self.count)

    def _summary(self) -> str:
        return self.summary_of(self.name, self.count)

    @staticmethod
    def head_of(name: str, count: int) -> str:
        """The first line of a names or full block of group ``name`` of ``count`` tools."""
        return f"{name} tools ({count}):"

    @staticmethod
    def summary_of(name: str, count: int) -> str:
        """The summary block of group ``name`` of ``count`` tools."""
        return f"{name} ({count} tools, names not listed; find them with tool_search)"

    def _in_order(self) -> tuple[tuple[str, ...], Callable[[], list[str]]]:
        if self._sorted is None:
            self._sorted = _sorted_members(self._parts)
        return self._sorted


def _sorted_members(parts: Sequence[_Part]) -> tuple[tuple[str, ...], Callable[[], list[str]]]:
    """The names of ``parts``' tools sorted, and how to read their descriptions in that order."""
    if len(parts) == 1 and isinstance(parts[0], tuple):
        # A group of one block (every catalog server): sorted with C loops, no pair made a tool.
        block, positions = parts[0]
        order = sorted(positions, key=block.names.__getitem__)
        return tuple(map(block.names.__getitem__, order)), partial(_block_texts, block, order)
    pairs: list[tuple[str, _Member]] = []
    for part in parts:
        if isinstance(part, list):
            pairs += [(tool.name, tool) for tool in part]
        else:
            block, positions = part
            pairs += [(block.names[position], (block, position)) for position in positions]
    pairs.sort(key=lambda pair: pair[0])
    members = tuple(member for _, member in pairs)
    return tuple(name for name, _ in pairs), partial(_descriptions, members)


def _description(member: _Member) -> str:
    if isinstance(member, Tool):
        return member.description
    block, position = member
    return block.fields(position)[1]


def _descriptions(members: Sequence[_Member]) -> list[str]:
    return [_description(member) for member in members]


def _block_texts(block: ToolBlock, positions: Sequence[int]) -> list[str]:
    return [block.fields(position)[1] for position in positions]


def _groups(tools: Sequence[Tool]) -> list[_Group]:
    grouped: dict[str, list[_Part]] = {}
    for run in runs_of(tools):
        if isinstance(run, BlockRun):
            block = run.block
            named = block_groups(block)
            wanted = None if run.positions is None else set(run.positions)
            for group, positions in enumerate(block.group_positions()):
                if wanted is not None:
                    positions = [position for position in positions if position in wanted]
                grouped.setdefault(named[group], []).append((block, positions))
        else:
            for tool in run:
                parts = grouped.setdefault(group_of(tool), [])
                if not parts or not isinstance(parts[-1], list):
                    parts.append([])
                last = parts[-1]
                assert isinstance(last, list)
                last.append(tool)
    result = [_Group(name, parts) for name, parts in sorted(grouped.items())]
    return [group for group in result if group.count]


def _unavailable_block(server: str, count: int, reason: str) -> str:
    return f"{server} ({count} tools unavailable: {reason})"


def build_listing(
    tools: Sequence[Tool],
    budget_tokens: int,
    unavailable: Mapping[str, tuple[int, str]] | None = None,
) -> Listing:
    """The richest listing of ``tools`` that fits ``budget_tokens``.

    The ladder, first that fits wins: every group full; every group by names; then groups
    collapsed to summaries one at a time, largest first (ties by name); if even all summaries do
    not fit, no listing. ``unavailable`` maps configured servers that are not available to
    ``(tool count, reason)``; they are listed in every form.
    """
    down = sorted((unavailable or {}).items())
    if budget_tokens <= 0 or (not down and not tools):
        return NO_LISTING
    if tools and not _may_fit(group_counts(tools), budget_tokens, down):
        return NO_LISTING
    groups = _groups(tools)
    if not groups and not down:
        return NO_LISTING
    fixed = {server: _unavailable_block(server, n, reason) for server, (n, reason) in down}
    # Sizes decide, only the winner's blocks are rendered. Each rung differs from the one
    # before by one group's block, so its size is the last size plus that difference: the
    # ladder costs one step a group, not one sum a group. A full block is longer than its
    # names block, so full blocks are rendered only when every names block fits (a large
    # catalog's descriptions are never read to be listed).
    lines = 1 + len(fixed) + len(groups)
    base = len(LISTING_HEADER) + sum(len(text) for text in fixed.values()) + lines - 1

    def fits(size: int) -> bool:
        return -(-size // 4) <= budget_tokens

    names_lengths = {group.name: group.length("names") for group in groups}
    names_size = base + sum(names_lengths.values())
    if groups and fits(names_size):
        full = {group.name: group.block("full") for group in groups}
        if fits(base + sum(map(len, full.values()))):
            return _render(groups, {name: "full" for name in full}, full, fixed)
        return _render(groups, {name: "names" for name in full}, {}, fixed)
    if not groups:
        return _render(groups, {}, {}, fixed) if fits(base) else NO_LISTING
    forms: dict[str, BlockForm] = dict.fromkeys(names_lengths, "names")
    size = names_size
    for group in sorted(groups, key=lambda group: (-group.count, group.name)):
        size += group.length("summary") - names_lengths[group.name]
        forms[group.name] = "summary"
        if fits(size):
            return _render(groups, forms, {}, fixed)
    return NO_LISTING


def _may_fit(
    counts: Mapping[str, int], budget_tokens: int, down: Sequence[tuple[str, tuple[int, str]]]
) -> bool:
    """Whether any rung of the ladder may fit, from the groups' counts alone: every rung is at
    least the header, the unavailable servers, and each group's summary or its names block at
    their shorter, where a names block is at least its head and one character a name. A large
    catalog's groups (6,600 at 330,000 tools) are not sorted nor their names measured to find
    that none fits."""
    lines = 1 + len(down) + sum(1 for count in counts.values() if count)
    least = len(LISTING_HEADER) + lines - 1
    least += sum(len(_unavailable_block(server, n, reason)) for server, (n, reason) in down)
    for name, count in counts.items():
        if count:
            head = len(_Group.head_of(name, count))
            least += min(len(_Group.summary_of(name, count)), head + 1 + count + 2 * (count - 1))
    return -(-least // 4) <= budget_tokens


def _render(
    groups: Sequence[_Group],
    forms: Mapping[str, BlockForm],
    full: Mapping[str, str],
    fixed: Mapping[str, str],
) -> Listing:
    entries = [
        (group.name, full.get(group.name) or group.block(forms[group.name])) for group in groups
    ]
    entries += list(fixed.items())
    entries.sort(key=lambda entry: entry[0])
    text = "\n".join([LISTING_HEADER, *(block for _, block in entries)])
    used = set(forms.values())
    named = sum(group.count for group in groups if forms[group.name] != "summary")
    form: ListingForm
    if not groups or used == {"summary"}:
        form = "summary"
    elif len(used) == 1:
        form = "full" if used == {"full"} else "names"
    else:
        form = "mixed"
    return Listing(text, form, estimate_tokens(text), named)
