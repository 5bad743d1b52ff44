"""Where a compaction cuts a conversation (``split_point``) and what counts as a compaction's
own message (``replaces_earlier``): pure rules over messages, read as the spec says them."""

from __future__ import annotations

from hermes_core.agent._compaction import (
    DROPPED_NOTE,
    SUMMARY_HEADER,
    replaces_earlier,
    split_point,
)
from hermes_core.agent._wire import Message, ModelToolCall

BIG = "x" * 4000  # 1,000 tokens


def call(number: int) -> Message:
    return Message("assistant", "", tool_calls=(ModelToolCall(f"c{number}", "read_file"),))


def result(number: int, text: str = BIG) -> Message:
    return Message("tool", text, tool_call_id=f"c{number}", name="read_file")


def test_the_cut_keeps_recent_messages_up_to_the_share_and_starts_at_no_tool_result() -> None:
    messages = [Message("user", BIG), call(1), result(1), call(2), result(2), call(3), result(3)]

    cut = split_point(messages, keep=1500)

    assert cut == 5  # call 3 and its result: call 2 with its result would pass 1,500
    assert messages[cut].role == "assistant"


def test_the_cut_keeps_the_last_call_with_its_results_even_past_the_share() -> None:
    messages = [Message("user", "go"), call(1), result(1), call(2), result(2, BIG * 5)]

    assert split_point(messages, keep=100) == 3


def test_nothing_is_cut_from_one_message_or_from_a_summary_and_what_follows_it() -> None:
    summary = Message("user", f"{SUMMARY_HEADER}\n\nGOAL: ...")

    assert split_point([Message("user", BIG)], keep=10) is None
    assert split_point([summary, Message("user", BIG)], keep=100) is None


def test_a_note_of_dropped_messages_counts_as_a_compaction_like_a_summary() -> None:
    note = Message("user", DROPPED_NOTE.format(count=12, why="the summary request failed: 400"))

    assert replaces_earlier(note)
    assert replaces_earlier(Message("user", f"{SUMMARY_HEADER}\n\nGOAL: ..."))
    assert not replaces_earlier(Message("user", "[12 earlier ideas] are what I want"))
    assert split_point([note, Message("user", BIG)], keep=100) is None


def test_a_summary_past_the_share_kept_whole_is_cut_from_what_follows_it() -> None:
    """A summary that alone takes more than the share kept (a forged or huge compaction record
    taken up again, an enormous summary a model wrote) is compacted again, not left to
    overflow every request."""
    huge = Message("user", f"{SUMMARY_HEADER}\n\n{BIG * 3}")

    assert split_point([huge, Message("user", "and now?")], keep=1500) == 1
