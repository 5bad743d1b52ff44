"""``tool_call``'s plan: the entries it was sent, read, checked and made into a ``CallPlan``.

``tool_call`` is a router: it never runs a tool. Its handler returns a
:class:`~hermes_core._dispatch.CallPlan` of the real calls (one entry, or a batch of connector
tools), each checked by :class:`~hermes_core._availability.Availability` through the bridge and
its arguments read, which the dispatcher then runs under their real names. A refused call is a
result at once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hermes_core._arguments import ArgumentsProblem, read_arguments
from hermes_core._availability import Availability, BridgeRoute
from hermes_core._dispatch import CallPlan, PlannedCall
from hermes_core._session import Session
from hermes_core._tools import ToolResult
from hermes_core.search._assembly import ToolSplit
from hermes_core.search._batches import batch_answer
from hermes_core.search._bridge import (
    BridgeArgumentError,
    arguments_refusal,
    batch_rule,
    bridge_result,
    parse_calls,
    refusal,
)
from hermes_core.search._remote import ConnectorSource

__all__ = ["plan_tool_call"]


def plan_tool_call(
    arguments: Any,
    session: Session,
    view: Callable[[], ToolSplit],
    availability: Availability,
    connectors: ConnectorSource | None,
    connectors_route: Callable[[], bool | None],
) -> CallPlan | ToolResult:
    """What ``tool_call`` asks of ``session``, planned over the live tools' ``view()``.

    ``connectors_route()`` is what an entry may expect of connectors (``None``: none are
    configured; else whether they are in scope); ``connectors`` makes the tool of a connector
    entry in scope.
    """
    if isinstance(arguments, str):
        # A model's arguments are JSON text: the object it holds is the payload, as for any
        # tool; a string holding something else keeps being read as the calls themselves.
        read = read_arguments(arguments)
        if isinstance(read, dict):
            arguments = read
    payload = arguments if isinstance(arguments, Mapping) else {"calls": arguments}
    try:
        entries = parse_calls(payload)
    except BridgeArgumentError as exc:
        return bridge_result(refusal(str(exc)))
    refused = batch_rule(entries)
    if refused is not None:
        return bridge_result(refused)
    split = view()
    route = BridgeRoute(
        visible=split.visible_names,
        deferred=split.grant(session).deferred_by_name.keys(),
        connectors=connectors_route(),
    )
    batch = len(entries) > 1
    planned: list[PlannedCall] = []
    for index, entry in enumerate(entries):
        found = availability.check(entry.name, session, route)
        if isinstance(found, ToolResult):
            planned.append(PlannedCall(entry.name, refusal=found))
            continue
        if found is None:  # a connector tool, in scope: the gateway runs it
            assert connectors is not None
            found = connectors.tool(entry.name)
        read = read_arguments(entry.arguments)
        if isinstance(read, ArgumentsProblem):
            where = f"calls[{index}].arguments" if batch else "arguments"
            planned.append(
                PlannedCall(entry.name, refusal=bridge_result(arguments_refusal(read, where)))
            )
            continue
        planned.append(PlannedCall(entry.name, read, found))
    if not batch:
        return CallPlan(planned, lambda outcomes: outcomes[0] or _interrupted(entries[0].name))
    names = [entry.name for entry in entries]
    return CallPlan(planned, lambda outcomes: _batch_answer(names, outcomes), batch=True)


def _interrupted(name: str) -> ToolResult:
    return bridge_result(
        {"error": f"{name} was not run: the user interrupted the turn.", "code": "INTERRUPTED"}
    )


def _batch_answer(names: Sequence[str], outcomes: Sequence[ToolResult | None]) -> ToolResult:
    return bridge_result(batch_answer(names, outcomes))
