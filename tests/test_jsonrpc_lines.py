"""The line rules ``hermes serve`` and ``hermes acp`` share (``hermes_core/_jsonrpc_lines.py``):
lines bounded without holding a longer one, and what a line that is no message is answered."""

from __future__ import annotations

import pytest

from hermes_core._jsonrpc_lines import (
    INVALID_REQUEST,
    PARSE_ERROR,
    BoundedLines,
    LineRefused,
    read_message,
)


def _shown(lines: list[bytes | LineRefused]) -> list[bytes | str]:
    return [line.details if isinstance(line, LineRefused) else line for line in lines]


def test_a_line_of_the_bound_is_kept_and_one_byte_more_is_refused() -> None:
    lines = BoundedLines(8)
    assert _shown(lines.feed(b"12345678\n123456789\nok\n")) == [
        b"12345678",
        "a line longer than 8 bytes, the longest message hermes reads (9 bytes, skipped); "
        "send a smaller message",
        b"ok",
    ]


def test_a_line_over_many_chunks_is_let_go_at_the_bound_and_skipped_to_its_newline() -> None:
    lines = BoundedLines(8)
    assert lines.feed(b"abcde") == []
    assert lines.feed(b"fghij") == []  # past the bound: what was read is let go
    assert lines.feed(b"x" * 100) == []
    refused, after = lines.feed(b"yz\nnext\n")
    assert isinstance(refused, LineRefused)
    assert refused.code == INVALID_REQUEST
    assert "(112 bytes, skipped)" in refused.details
    assert after == b"next"


def test_a_line_split_over_chunks_is_joined_and_the_last_one_ends_the_stream() -> None:
    lines = BoundedLines(8)
    assert lines.feed(b"ab") == []
    assert _shown(lines.feed(b"cd\nef")) == [b"abcd"]
    assert _shown(lines.end()) == [b"ef"]
    assert BoundedLines(8).end() == []


def test_a_line_too_long_at_the_end_of_the_stream_is_refused() -> None:
    lines = BoundedLines(4)
    assert lines.feed(b"123456") == []
    (refused,) = lines.end()
    assert isinstance(refused, LineRefused)
    assert "(6 bytes, skipped)" in refused.details


@pytest.mark.parametrize(
    ("line", "code"),
    [
        pytest.param(b"hello", PARSE_ERROR, id="not-json"),
        pytest.param(b'{"id": 1, "method": ', PARSE_ERROR, id="cut-short"),
        pytest.param(b"[" * 100_000 + b"]" * 100_000, PARSE_ERROR, id="nested-too-deep"),
        pytest.param(b"[1, 2]", INVALID_REQUEST, id="batch"),
        pytest.param(b"42", INVALID_REQUEST, id="number"),
        pytest.param(b'{"jsonrpc": "2.0"}', INVALID_REQUEST, id="no-method-no-id"),
    ],
)
def test_a_line_that_is_no_message_is_refused_with_its_code(line: bytes, code: int) -> None:
    with pytest.raises(LineRefused) as refused:
        read_message(line)
    assert refused.value.code == code
    answer = refused.value.answer()
    assert answer["id"] is None
    assert answer["error"]["code"] == code
    assert answer["error"]["data"]["details"] == refused.value.details


def test_a_request_a_notification_and_a_response_are_messages() -> None:
    assert read_message(b'{"id": 1, "method": "ping"}') == {"id": 1, "method": "ping"}
    assert read_message(b'{"method": "notifications/initialized"}')["method"]
    assert read_message(b'{"id": 1, "result": {}}')["id"] == 1
