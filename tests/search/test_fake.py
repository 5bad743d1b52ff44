"""The in-memory ``FakeSearchBackend`` test template honours the backend protocol."""

from __future__ import annotations

from hermes_core.search._backend import SearchBackend, ToolDocument
from hermes_core.search._fake import FakeSearchBackend


def test_fake_backend_matches_substrings_and_keeps_insertion_order_for_ties() -> None:
    backend = FakeSearchBackend()
    assert isinstance(backend, SearchBackend)
    backend.build(
        [
            ToolDocument("mcp__github__create_issue", "Create an issue", "github"),
            ToolDocument("mcp__gitlab__create_issue", "Create an issue", "gitlab"),
            ToolDocument("send_email", "Send mail", "other"),
        ]
    )
    backend.remove(["send_email"])
    extra = [ToolDocument("connectors__linear__issue", "Linear issue", "connectors")]
    hits = backend.search("issue linear", 5, "lenient", extra=extra)
    assert [hit.name for hit in hits] == [
        "connectors__linear__issue",
        "mcp__github__create_issue",
        "mcp__gitlab__create_issue",
    ]
    assert backend.admissions == ["lenient"]
    assert len(backend) == 2
