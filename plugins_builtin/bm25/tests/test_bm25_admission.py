"""Admission: the rarest-token rule (strict and lenient), the coverage floor, ``off``."""

from __future__ import annotations

from bm25_modules import BM25Index, admission

from hermes_core.search import ToolDocument

coverage_floor, exact_name_keys, lenient_required_tokens, strict_rarest_tokens = (
    admission.coverage_floor,
    admission.exact_name_keys,
    admission.lenient_required_tokens,
    admission.strict_rarest_tokens,
)


def _doc(name: str, description: str) -> ToolDocument:
    return ToolDocument(name, description, "other")


CATALOG = [
    _doc("send_email", "Send an email message to a recipient"),
    _doc("send_sms", "Send a text message to a phone"),
    _doc("list_calendar_events", "List events of a calendar"),
    _doc("create_calendar_event", "Create an event in a calendar with a title and attendees"),
    _doc("post_chat", "Post a message to a chat channel"),
]


def _names(query: str, admission: str) -> list[str]:
    index = BM25Index(CATALOG, equivalents={})  # the rules alone, without the table
    return [hit.name for hit in index.search(query, 10, admission)]  # type: ignore[arg-type]


def test_strict_returns_nothing_for_token_no_tool_has() -> None:
    assert _names("send message zebra", "strict") == []
    assert strict_rarest_tokens({"send": 2, "messag": 3, "zebra": 0}) == {"zebra"}


def test_lenient_ignores_unknown_token() -> None:
    assert _names("send message zebra", "lenient") == ["send_email", "send_sms"]
    assert lenient_required_tokens({"send": 2, "messag": 3, "zebra": 0}, 5) == {"send"}


def test_tool_must_contain_the_rarest_token() -> None:
    # "phone" (1 tool) is rarer than "message" (3 tools): only send_sms is admitted.
    assert _names("message phone", "strict") == ["send_sms"]
    assert _names("message phone", "lenient") == ["send_sms"]


def test_tied_rarest_tokens_admit_either() -> None:
    assert strict_rarest_tokens({"email": 1, "phone": 1, "send": 2}) == {"email", "phone"}
    assert sorted(_names("email phone", "strict")) == ["send_email", "send_sms"]


def test_coverage_floor_for_four_or_more_tokens() -> None:
    assert [coverage_floor(n) for n in range(8)] == [0, 0, 0, 0, 2, 3, 3, 4]
    # Four catalog tokens: a tool must hold the rarest ("attendee") and at least two of them.
    # (Singular: things in the plural and no action also ask for a listing, idioms.py.)
    query = "calendar event attendee message"
    assert _names(query, "strict") == ["create_calendar_event"]
    # With three tokens there is no floor beyond the rarest token.
    assert _names("calendar event message", "strict") == [
        "list_calendar_events",
        "create_calendar_event",
    ]


def test_coverage_floor_excludes_tools_below_half() -> None:
    # Five catalog tokens -> floor 3. The rarest (one tool each) are post, chat, channel and
    # recipient: send_email holds recipient and message (2 < 3), post_chat holds four.
    query = "post chat channel message recipient"
    assert _names(query, "strict") == ["post_chat"]
    assert "send_email" in _names(query, "off")


def _wide_catalog() -> list[ToolDocument]:
    # 40 tools: "report" is in 20 of them (common), "invoice" in 2 and "refund" in 1 (rare).
    tools = [_doc(f"report_{index}", f"Build report number {index}") for index in range(20)]
    tools += [_doc(f"misc_{index}", f"Unrelated helper {index}") for index in range(17)]
    tools += [
        _doc("send_invoice", "Send an invoice and a report to a customer"),
        _doc("void_invoice", "Void an invoice"),
        _doc("issue_refund", "Issue a refund for a payment"),
    ]
    return tools


def test_lenient_admits_any_informative_token() -> None:
    index = BM25Index(_wide_catalog())
    # strict: only holders of the rarest token ("refund"); lenient: any token in at most 5% of
    # the tools ("refund" 1, "invoice" 2; 5% of 40 is 2), never a tool holding only "report".
    strict = [hit.name for hit in index.search("refund invoice report", 10, "strict")]
    lenient = [hit.name for hit in index.search("refund invoice report", 10, "lenient")]
    assert strict == ["issue_refund"]
    assert set(lenient) == {"issue_refund", "send_invoice", "void_invoice"}
    assert lenient_required_tokens({"refund": 1, "invoic": 2, "report": 21}, 40) == {
        "refund",
        "invoic",
    }


def test_lenient_has_no_coverage_floor() -> None:
    assert coverage_floor(6, "lenient") == 0
    assert coverage_floor(6, "strict") == 3


def test_off_ranks_every_tool_sharing_a_token() -> None:
    # send_email and send_sms tie (same lengths and frequencies) and keep registry order.
    assert _names("send message zebra", "off") == ["send_email", "send_sms", "post_chat"]


def test_exact_name_keys_strip_the_mcp_prefix() -> None:
    assert exact_name_keys(ToolDocument("mcp__github__Create_Issue", "", "github")) == (
        "create_issue",
        "mcp__github__create_issue",
    )
    assert exact_name_keys(ToolDocument("send_email", "", "other")) == ("send_email",)
