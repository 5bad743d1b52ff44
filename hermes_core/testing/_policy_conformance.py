"""The rules every approval policy follows, as checks a policy author runs against a plugin.

Each rule is a function named after it that takes ``make`` (a function returning a new policy)
and raises :class:`AssertionError` saying what the policy did instead. They check what the
:class:`~hermes_core._approvals.policy.ApprovalPolicy` protocol promises the dispatcher, over a
sample of calls every policy meets (a read-only tool, a destructive one, one with no hints, a
shell command, a call its tool marks as only reading, a connector tool whose hints a gateway
states):

- ``decide`` answers a :class:`~hermes_core._approvals.policy.Decision` (``allow``, ``deny`` or
  ``ask``) at once, never an awaitable, and raises for none of them (an exception counts as
  deny: a policy that raises denies everything it does not understand);
- the same call in the same session gets the same answer;
- ``decide`` changes neither the call's arguments nor the session;
- an ``ask`` or a ``deny`` says why (its ``message`` is what the user reads).

Run them with :func:`approval_policy_conformance`, one test per rule.
"""

from __future__ import annotations

import copy
import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hermes_core._approvals.policy import SHELL_COMMAND_META, ApprovalPolicy, Decision
from hermes_core._session import Session
from hermes_core._specs import ToolCall
from hermes_core._tools import HINTS_META, READ_ONLY_CALLS_META, Tool, ToolAnnotations

__all__ = ["POLICY_RULES", "MakePolicy", "approval_policy_conformance", "sample_calls"]

MakePolicy = Callable[[], ApprovalPolicy]
"""Returns a new policy (each rule starts from one)."""

_ACTIONS = ("allow", "deny", "ask")


def _tool(name: str, annotations: ToolAnnotations, **meta: Any) -> Tool:
    return Tool(
        name, f"The {name} tool.", toolset="conformance", annotations=annotations, meta=meta
    )


def sample_calls() -> list[ToolCall]:
    """The calls every rule asks the policy about (new objects at every call)."""
    read_only = ToolAnnotations(read_only=True, destructive=False)
    manage = _tool(
        "manage_things", ToolAnnotations(), **{READ_ONLY_CALLS_META: {"action": ["status"]}}
    )
    connector = _tool(
        "connectors__gmail__send_email",
        ToolAnnotations(open_world=True),
        **{
            HINTS_META: {"by": "the connector gateway", "stated": ["destructiveHint"], "seen": True}
        },
    )
    return [
        ToolCall("read_file", {"path": "notes.txt"}, _tool("read_file", read_only)),
        ToolCall("write_file", {"path": "notes.txt"}, _tool("write_file", ToolAnnotations())),
        ToolCall(
            "fetch_page",
            {"url": "https://example.org"},
            _tool("fetch_page", ToolAnnotations(destructive=False, open_world=True)),
        ),
        ToolCall(
            "terminal",
            {"command": "rm -rf build"},
            _tool("terminal", ToolAnnotations(), **{SHELL_COMMAND_META: "command"}),
        ),
        ToolCall("manage_things", {"action": "status"}, manage),
        ToolCall("manage_things", {"action": "delete"}, manage),
        ToolCall(connector.name, {"to": "ann@example.org"}, connector),
    ]


def _session() -> Session:
    return Session(cwd=Path.cwd(), interactive=True)


def _decide(policy: ApprovalPolicy, call: ToolCall, session: Session) -> Decision:
    try:
        decision = policy.decide(call, session)
    except Exception as error:
        raise AssertionError(f"decide raised {error!r} for {call.name} {call.arguments}") from None
    assert not inspect.isawaitable(decision), f"decide returned an awaitable for {call.name}"
    return decision


def every_call_gets_a_decision(make: MakePolicy) -> None:
    """``decide`` answers a Decision of a known action for every sample call."""
    policy, session = make(), _session()
    for call in sample_calls():
        decision = _decide(policy, call, session)
        assert isinstance(decision, Decision), f"{call.name}: {decision!r} is no Decision"
        assert decision.action in _ACTIONS, f"{call.name}: unknown action {decision.action!r}"


def the_same_call_gets_the_same_decision(make: MakePolicy) -> None:
    """Asked twice about one call in one session, the policy answers the same."""
    policy, session = make(), _session()
    for call in sample_calls():
        first, second = _decide(policy, call, session), _decide(policy, call, session)
        assert first == second, f"{call.name}: {first!r}, then {second!r}"


def deciding_changes_neither_the_call_nor_the_session(make: MakePolicy) -> None:
    """A policy decides; it never edits the arguments or the session's state."""
    policy, session = make(), _session()
    for call in sample_calls():
        arguments, state = copy.deepcopy(call.arguments), copy.deepcopy(session.state)
        _decide(policy, call, session)
        assert call.arguments == arguments, f"{call.name}: the arguments were changed"
        assert session.state == state, f"{call.name}: the session's state was changed"


def an_ask_or_a_deny_says_why(make: MakePolicy) -> None:
    """Every ``ask`` and ``deny`` carries a message for the user."""
    policy, session = make(), _session()
    for call in sample_calls():
        decision = _decide(policy, call, session)
        if decision.action != "allow":
            assert decision.message.strip(), f"{call.name}: {decision.action} without a message"


POLICY_RULES: tuple[Callable[[MakePolicy], None], ...] = (
    every_call_gets_a_decision,
    the_same_call_gets_the_same_decision,
    deciding_changes_neither_the_call_nor_the_session,
    an_ask_or_a_deny_says_why,
)
"""Every rule of an approval policy."""


def approval_policy_conformance(make: MakePolicy) -> list[Any]:
    """One ``pytest.param`` per rule of :data:`POLICY_RULES` (its id is the rule's name): a
    function of no arguments checking that rule against policies from ``make``::

        @pytest.mark.parametrize(
            "check", approval_policy_conformance(lambda: make_approval_policy("strict"))
        )
        def test_strict_policy_follows_the_protocol(check):
            check()
    """
    return [
        pytest.param(functools.partial(rule, make), id=rule.__name__.replace("_", "-"))
        for rule in POLICY_RULES
    ]
