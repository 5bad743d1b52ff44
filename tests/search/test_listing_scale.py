"""The listing's ladder at scale (issue 32): the same choice as the quadratic ladder it replaced,
at a cost linear in the number of groups (counted in Python steps, not timed)."""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

from bridge_fixtures import mcp_tool

from hermes_core._tool_blocks import BlockRun, ToolSequence
from hermes_core._tools import Tool
from hermes_core.search import _listing
from hermes_core.search._catalog import read_catalog
from hermes_core.search._listing import LISTING_HEADER, BlockForm, build_listing

FORMS: tuple[BlockForm, ...] = ("full", "names", "summary")


def _reference_forms(
    tools: list[Tool], budget: int, unavailable: Mapping[str, tuple[int, str]]
) -> dict[str, BlockForm] | None:
    """The ladder as it was before issue 32, every candidate summed in full: the forms it
    chooses, or None for no listing."""
    groups = _listing._groups(tools)
    sizes = {(group.name, form): len(group.block(form)) for group in groups for form in FORMS}
    fixed = [
        f"{server} ({n} tools unavailable: {reason})"
        for server, (n, reason) in sorted(unavailable.items())
    ]

    def fits(forms: Mapping[str, BlockForm]) -> bool:
        parts = [len(LISTING_HEADER)] + [len(text) for text in fixed]
        parts += [sizes[name, form] for name, form in forms.items()]
        return -(-(sum(parts) + len(parts) - 1) // 4) <= budget

    if (not groups and not fixed) or budget <= 0:
        return None
    every_name: dict[str, BlockForm] = {group.name: "names" for group in groups}
    candidates: list[dict[str, BlockForm]] = []
    if groups and fits(every_name):
        candidates = [{group.name: "full" for group in groups}, every_name]
    collapsing = dict(every_name)
    for group in sorted(groups, key=lambda group: (-len(group.names), group.name)):
        collapsing = {**collapsing, group.name: "summary"}
        candidates.append(collapsing)
    if not groups:
        candidates = [{}]
    return next((forms for forms in candidates if fits(forms)), None)


def _reference_text(
    tools: list[Tool], budget: int, unavailable: Mapping[str, tuple[int, str]]
) -> str:
    forms = _reference_forms(tools, budget, unavailable)
    if forms is None:
        return ""
    entries = [(group.name, group.block(forms[group.name])) for group in _listing._groups(tools)]
    entries += [
        (server, f"{server} ({n} tools unavailable: {reason})")
        for server, (n, reason) in unavailable.items()
    ]
    return "\n".join([LISTING_HEADER, *(text for _, text in sorted(entries))])


def _catalog(seed: int, groups: int) -> list[Tool]:
    chance = random.Random(seed)
    tools = []
    for group in range(groups):
        server = f"server_{chance.randrange(10 * groups):05d}"
        # Sizes with ties, and groups of one whose summary is longer than their names block.
        for index in range(chance.choice([1, 1, 2, 3, 3, 7, 20])):
            short = "op" + "x" * chance.randrange(0, 12) + f"_{group}_{index}"
            tools.append(mcp_tool(server, short))
    return tools


def test_listing_matches_the_full_ladder_at_every_budget() -> None:
    for seed in range(6):
        tools = _catalog(seed, 12)
        unavailable = {"down_server": (4, "timed out")} if seed % 2 else {}
        full = build_listing(tools, 10**6, unavailable).tokens
        # Every budget where the choice can change (each rung's size, one either side), and some.
        rungs = {
            build_listing(tools, budget, unavailable).tokens
            for budget in range(0, full + 2, max(1, full // 40))
        }
        budgets = {0, full + 1} | {rung + step for rung in rungs for step in (-1, 0, 1)}
        budgets |= set(random.Random(seed).sample(range(full + 2), min(60, full + 2)))
        for budget in sorted(budgets):
            expected = _reference_text(tools, budget, unavailable)
            assert build_listing(tools, budget, unavailable).text == expected, (seed, budget)


@contextmanager
def _counting_steps() -> Iterator[list[int]]:
    """Counts the Python lines run in the listing module (loops' iterations included)."""
    count = [0]
    module_file = _listing.__file__

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":
            count[0] += 1
        return local

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename == module_file else None

    sys.settrace(trace)
    try:
        yield count
    finally:
        sys.settrace(None)


def _steps_to_list(groups: int) -> int:
    tools = [
        mcp_tool(f"server_{group:05d}", f"op_{index}")
        for group in range(groups)
        for index in range(3)
    ]
    # A budget that only fits once most groups are collapsed: the ladder's longest walk.
    budget = groups * 20
    with _counting_steps() as count:
        listing = build_listing(tools, budget)
    assert listing.form == "mixed"
    return count[0]


def test_listing_work_grows_linearly_with_the_groups() -> None:
    small, large = _steps_to_list(300), _steps_to_list(1200)
    # Four times the groups: about four times the steps (the quadratic ladder took sixteen).
    assert large < 5 * small, (small, large)


def test_a_block_is_listed_as_its_tools_would_be_in_any_order_at_every_budget(
    tmp_path: Path,
) -> None:
    # Servers interleaved and names out of order (the positions are sorted by group, then by
    # name), a run of some of the block's positions, and a plain tool in one of its groups.
    chance = random.Random(7)
    names = [f"op_{chance.randrange(10**6):06d}_{index}" for index in range(90)]
    servers = [chance.choice(["bee", "sea", "dee", "eee"]) for _ in names]
    entries = [
        {"name": name, "server": server, "description": f"Does {name}. More."}
        for name, server in zip(names, servers, strict=True)
    ]
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(entries), encoding="utf-8")
    block = read_catalog(path, None, owner="catalog", cache_dir=None)
    some = tuple(sorted(chance.sample(range(len(names)), 50)))
    lone = Tool(name="aaa_lone", description="Lone.", source="plugin", source_name="sea")
    for runs in ([BlockRun(block)], [(lone,), BlockRun(block, some)]):
        tools = ToolSequence(runs)
        full = build_listing(tools, 10**6).tokens
        for budget in range(0, full + 2, 3):
            assert build_listing(tools, budget) == build_listing(list(tools), budget), budget
    assert block.made_count == len(names)  # only list() made them
