"""The FakeModelServer refuses, as OpenAI's and Anthropic's APIs do, a conversation whose tool
calls and results do not pair: a call not answered right after it, or a result whose call is
not just before it. Every test of the loop (compaction cutting a conversation, a turn stopped
mid-call, a conversation taken up again) runs against these rules."""

from __future__ import annotations

from typing import Any

from hermes_core.testing._fake_refusals import refusal


def _openai(*messages: dict[str, Any]) -> str | None:
    return refusal("openai", {"messages": [{"role": "user", "content": "Add."}, *messages]})


def _anthropic(*messages: dict[str, Any]) -> str | None:
    return refusal("anthropic", {"messages": [{"role": "user", "content": "Add."}, *messages]})


CALLS = {"role": "assistant", "content": "", "tool_calls": [{"id": "c1"}, {"id": "c2"}]}


def _result(call: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call, "content": "5"}


def test_openai_calls_must_each_be_answered_before_anything_else() -> None:
    assert _openai(CALLS, _result("c2"), _result("c1")) is None
    assert _openai(CALLS, _result("c1"), {"role": "user", "content": "Go on."}) == (
        "An assistant message with 'tool_calls' must be followed by tool messages responding to "
        "each 'tool_call_id'. The following tool_call_ids did not have response messages: c2"
    )
    assert "c1, c2" in str(_openai(CALLS))


def test_openai_a_result_without_its_call_is_refused() -> None:
    orphan = "messages with role 'tool' must be a response to a preceeding message"
    assert orphan in str(_openai(_result("c1")))
    assert orphan in str(_openai(CALLS, _result("c1"), _result("c2"), _result("c2")))
    assert orphan in str(_openai(CALLS, _result("c3")))


def _uses(*ids: str) -> dict[str, Any]:
    blocks = [{"type": "tool_use", "id": i, "name": "add", "input": {}} for i in ids]
    return {"role": "assistant", "content": blocks}


def _results(*ids: str, then: str = "") -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [
        {"type": "tool_result", "tool_use_id": i, "content": "5"} for i in ids
    ]
    blocks += [{"type": "text", "text": then}] if then else []
    return {"role": "user", "content": blocks}


def test_anthropic_each_tool_use_is_answered_in_the_next_message() -> None:
    assert _anthropic(_uses("t1", "t2"), _results("t2", "t1", then="Go on.")) is None
    refused = _anthropic(_uses("t1", "t2"), _results("t1"))
    assert refused is not None
    assert refused.startswith(
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: t2."
    )
    assert "immediately after: t1" in str(_anthropic(_uses("t1")))


def test_anthropic_a_result_without_its_tool_use_just_before_is_refused() -> None:
    refused = _anthropic(
        _uses("t1"), _results("t1"), {"role": "assistant", "content": "5."}, _results("t1")
    )
    assert refused == (
        "messages.4.content.0: unexpected `tool_use_id` found in `tool_result` blocks: t1. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous "
        "message."
    )
