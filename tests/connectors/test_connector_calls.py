"""tool_describe and tool_call of connector tools, against the reference gateway over real
sockets: one schemas request, the literal-slug retry, retries and idempotency keys, batches run
entry by entry through the dispatcher (hooks, approvals, the interrupt), and connections."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from gateways import (
    SEND_EMAIL_SCHEMA,
    Gateway,
    connector_env,
    connector_host,
    entries,
    fixture,
    payload,
)

from hermes_core._approvals.prompt import Answer, ApprovalRequest
from hermes_core._host import Host
from hermes_core._session import Session
from hermes_core._tools import ToolResult
from hermes_core.connectors._signin import save_token
from hermes_core.testing import write_dir_plugin

pytestmark = pytest.mark.anyio

SEND = "connectors__gmail__SEND_EMAIL"
LABELS = "connectors__gmail__LIST_LABELS"
ARCHIVE = "connectors__gmail__ARCHIVE_EMAIL"
ISSUE = "connectors__linear__CREATE_ISSUE"


def connected(*slugs: str) -> dict[str, Any]:
    """The default fixture with the apps ``slugs`` connected."""
    data = fixture()
    for app in data["connectors"]:
        app["connected"] = app["connected"] or app["slug"] in slugs
    return data


@pytest.fixture
def mail(start_gateway: Callable[[Mapping[str, Any]], Gateway]) -> Gateway:
    """The reference gateway with Gmail connected."""
    return start_gateway(connected("gmail"))


async def _call(host: Host, calls: Any, session: Session | None = None) -> ToolResult:
    return await host.dispatch("tool_call", {"calls": calls}, session or host.new_session())


def _executed(gateway: Gateway) -> list[tuple[str, dict[str, Any]]]:
    return [
        (entry["tool"], entry["arguments"])
        for request in gateway.requests("execute")
        for entry in request["body"]["tools"]
    ]


# tool_describe --------------------------------------------------------------------------------


async def test_describe_fetches_connector_schemas_in_one_request(
    tmp_path: Path, gateway: Gateway
) -> None:
    async with connector_host(tmp_path, gateway.url) as host:
        result = await host.dispatch(
            "tool_describe",
            {"names": [SEND, "connectors__gmail__NOPE", ISSUE, "todo_list"]},
            host.new_session(),
        )

    answer = payload(result)
    assert list(answer["tools"]) == [SEND, ISSUE, "todo_list"]
    assert answer["tools"][SEND]["parameters"] == SEND_EMAIL_SCHEMA
    assert answer["not_found"] == ["connectors__gmail__NOPE"]
    (request,) = gateway.requests("schemas")
    assert request["body"] == {
        "tools": [
            "GMAIL_SEND_EMAIL",
            "SEND_EMAIL",
            "GMAIL_NOPE",
            "NOPE",
            "LINEAR_CREATE_ISSUE",
            "CREATE_ISSUE",
        ]
    }


async def test_describe_finds_a_tool_the_gateway_serves_under_its_literal_slug(
    tmp_path: Path, start_gateway: Callable[[Mapping[str, Any]], Gateway]
) -> None:
    app = {"slug": "gmail", "tools": [{"slug": "DRAFT", "description": "Draft an email"}]}
    gateway = start_gateway(fixture(app))
    async with connector_host(tmp_path, gateway.url) as host:
        result = await host.dispatch(
            "tool_describe", {"names": ["connectors__gmail__DRAFT"]}, host.new_session()
        )

    assert payload(result)["tools"]["connectors__gmail__DRAFT"]["description"] == "Draft an email"


async def test_a_connector_tool_whose_schema_is_3_mb_is_not_described_or_found_with_one_warning(
    tmp_path: Path,
    start_gateway: Callable[[Mapping[str, Any]], Gateway],
    caplog: pytest.LogCaptureFixture,
) -> None:
    properties = {
        f"field_{i}": {"type": "string", "description": "d" * 1_000} for i in range(3_000)
    }
    huge = {"type": "object", "properties": properties}
    size = len(json.dumps(huge, separators=(",", ":"), ensure_ascii=False))
    tools = [
        {"slug": "GMAIL_DRAFT_EMAIL", "description": "Draft an email", "input_schema": huge},
        {"slug": "GMAIL_SEND_EMAIL", "description": "Send an email"},
    ]
    gateway = start_gateway(fixture({"slug": "gmail", "tools": tools}))
    caplog.set_level(logging.WARNING, logger="hermes_core.connectors")
    draft = "connectors__gmail__DRAFT_EMAIL"
    async with connector_host(tmp_path, gateway.url) as host:
        session = host.new_session()
        found = await host.dispatch("tool_search", {"queries": ["draft an email"]}, session)
        described = await host.dispatch("tool_describe", {"names": [draft]}, session)
        again = await host.dispatch("tool_describe", {"names": [draft]}, session)

    assert draft not in json.dumps(payload(found).get("results"))
    assert len(described.text_content) < 10_000
    assert payload(described)["not_found"] == [draft]
    assert payload(again)["not_found"] == [draft]
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    named = [line for line in warned if "GMAIL_DRAFT_EMAIL" in line]
    assert len(named) == 1, warned
    assert f"{size:,}" in named[0]
    assert "131,072" in named[0]


async def test_a_connector_tool_described_in_3_mb_is_shortened_with_one_warning(
    tmp_path: Path,
    start_gateway: Callable[[Mapping[str, Any]], Gateway],
    caplog: pytest.LogCaptureFixture,
) -> None:
    long = "Draft an email to a contact. " * 100_000
    tools = [
        {"slug": "GMAIL_DRAFT_EMAIL", "description": long},
        {"slug": "GMAIL_SEND_EMAIL", "description": "Send an email"},
    ]
    gateway = start_gateway(fixture({"slug": "gmail", "tools": tools}))
    caplog.set_level(logging.WARNING, logger="hermes_core.connectors")
    draft = "connectors__gmail__DRAFT_EMAIL"
    async with connector_host(tmp_path, gateway.url) as host:
        session = host.new_session()
        found = await host.dispatch("tool_search", {"queries": ["draft an email"]}, session)
        described = await host.dispatch("tool_describe", {"names": [draft]}, session)
        again = await host.dispatch("tool_describe", {"names": [draft]}, session)

    assert draft in json.dumps(payload(found).get("results"))
    for answer in (described, again):
        description = payload(answer)["tools"][draft]["description"]
        assert 16_000 < len(description) <= 16_384
        body, _, note = description.rpartition("...")
        assert body.endswith("contact.")
        assert long.startswith(body)
        assert "description cut at 16,384 characters" in note
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    named = [line for line in warned if "GMAIL_DRAFT_EMAIL" in line]
    assert len(named) == 1, warned
    assert f"{len(long):,}" in named[0]
    assert "16,384" in named[0]


# The literal-slug retry -----------------------------------------------------------------------


async def test_a_served_slug_costs_one_execute_request(tmp_path: Path, mail: Gateway) -> None:
    async with connector_host(tmp_path, mail.url) as host:
        result = await _call(host, [{"name": SEND, "arguments": {"to": "a@b.c"}}])

    assert not result.is_error, result.text_content
    assert result.structured == {"id": "msg-1", "status": "sent"}
    assert _executed(mail) == [("GMAIL_SEND_EMAIL", {"to": "a@b.c"})]


async def test_literal_slug_retry_costs_two_requests_and_no_more(
    tmp_path: Path, mail: Gateway
) -> None:
    mail.fault("GMAIL_SEND_EMAIL", "prefixed_not_found")
    async with connector_host(tmp_path, mail.url) as host:
        result = await _call(host, [{"name": SEND, "arguments": {"to": "a@b.c"}}])

    assert not result.is_error, result.text_content
    assert result.structured == {"id": "msg-1", "status": "sent"}
    assert [tool for tool, _ in _executed(mail)] == ["GMAIL_SEND_EMAIL", "SEND_EMAIL"]


async def test_an_unknown_connector_tool_is_tool_not_found_after_both_slugs(
    tmp_path: Path, mail: Gateway
) -> None:
    async with connector_host(tmp_path, mail.url) as host:
        result = await _call(host, [{"name": "connectors__gmail__NOPE", "arguments": {}}])

    assert result.error_code == "TOOL_NOT_FOUND"
    assert [tool for tool, _ in _executed(mail)] == ["GMAIL_NOPE", "NOPE"]


@pytest.mark.parametrize(
    "name",
    [
        "connectors__gmail__bad name!",
        "connectors__GMAIL__SEND_EMAIL",
        f"connectors__gmail__{'X' * 60}",
    ],
)
async def test_a_connector_name_search_never_offers_is_an_unknown_tool_and_nothing_is_sent(
    tmp_path: Path, mail: Gateway, name: str
) -> None:
    # No slug composes to these names (a character a provider refuses, an upper-case connector,
    # over 64 characters): refused here as any unknown tool is, never asked of the gateway.
    async with connector_host(tmp_path, mail.url) as host:
        result = await _call(host, [{"name": name, "arguments": {}}])
        described = await host.dispatch("tool_describe", {"names": [name]}, host.new_session())

    assert payload(result) == {
        "error": f"unknown tool {name!r}: use tool_search to find the exact name",
        "code": "UNKNOWN_TOOL",
    }
    assert payload(described)["not_found"] == [name]
    assert mail.requests("execute") == []
    assert mail.requests("schemas") == []


async def test_only_tool_not_found_is_retried_with_the_literal_slug(
    tmp_path: Path, mail: Gateway
) -> None:
    async with connector_host(tmp_path, mail.url) as host:
        result = await _call(host, [{"name": SEND, "arguments": {"subject": "no recipient"}}])

    assert result.error_code == "INVALID_ARGUMENTS"
    assert "to" in (result.error_message or "")
    assert [tool for tool, _ in _executed(mail)] == ["GMAIL_SEND_EMAIL"]


# Retries --------------------------------------------------------------------------------------


async def test_a_rate_limit_is_honoured_with_retry_after_and_the_same_idempotency_key(
    tmp_path: Path, mail: Gateway
) -> None:
    mail.fault("GMAIL_SEND_EMAIL", "rate_limit", retry_after=1, times=1)
    async with connector_host(tmp_path, mail.url) as host:
        started = time.perf_counter()
        result = await _call(host, [{"name": SEND, "arguments": {"to": "a@b.c"}}])
        elapsed = time.perf_counter() - started

    assert not result.is_error, result.text_content
    assert elapsed >= 1.0
    sent = mail.requests("execute")
    assert [request["status"] for request in sent] == [429, 200]
    assert sent[0]["idempotency_key"] == sent[1]["idempotency_key"] is not None


async def test_a_rate_limit_longer_than_the_route_allows_is_an_error_result(
    tmp_path: Path, mail: Gateway
) -> None:
    mail.fault("GMAIL_SEND_EMAIL", "rate_limit", retry_after=3600)
    async with connector_host(tmp_path, mail.url) as host:
        result = await _call(host, [{"name": SEND, "arguments": {"to": "a@b.c"}}])

    assert result.error_code == "RATE_LIMITED"
    assert result.structured["retry_after"] == 3600
    assert len(mail.requests("execute")) == 1


async def test_a_500_is_retried_once_with_the_same_idempotency_key(
    tmp_path: Path, mail: Gateway
) -> None:
    mail.fault("GMAIL_SEND_EMAIL", "error", times=1)
    async with connector_host(tmp_path, mail.url) as host:
        result = await _call(host, [{"name": SEND, "arguments": {"to": "a@b.c"}}])

    assert not result.is_error, result.text_content
    sent = mail.requests("execute")
    assert [request["status"] for request in sent] == [500, 200]
    assert len({request["idempotency_key"] for request in sent}) == 1


async def test_a_gateway_failure_degrades_only_that_batch_entry(
    tmp_path: Path, mail: Gateway
) -> None:
    mail.fault("LINEAR_CREATE_ISSUE", "error")  # every attempt fails
    calls = [
        {"name": LABELS, "arguments": {}},
        {"name": ISSUE, "arguments": {"title": "Broken"}},
        {"name": ARCHIVE, "arguments": {}},
    ]
    async with connector_host(tmp_path, mail.url) as host:
        result = await _call(host, calls)

    answer = payload(result)
    assert "response" in entries(answer)[0]
    assert entries(answer)[1]["error"]["code"] == "PROVIDER_ERROR"
    assert "HTTP 500" in entries(answer)[1]["error"]["message"]
    assert "response" in entries(answer)[2]
    assert (answer["success_count"], answer["error_count"]) == (2, 1)


async def test_arguments_that_are_not_json_fail_only_their_entry(
    tmp_path: Path, mail: Gateway
) -> None:
    calls = [{"name": SEND, "arguments": {"to": {"a@b.c"}}}, {"name": LABELS, "arguments": {}}]
    async with connector_host(tmp_path, mail.url) as host:
        result = await _call(host, calls)

    answer = payload(result)
    assert entries(answer)[0]["error"]["code"] == "PROVIDER_ERROR"
    assert entries(answer)[1]["response"] == {"labels": ["INBOX", "SENT"]}
    assert [tool for tool, _ in _executed(mail)] == ["GMAIL_LIST_LABELS"]


# Batches --------------------------------------------------------------------------------------


async def test_connector_batch_entries_run_one_by_one_in_input_order(
    tmp_path: Path, mail: Gateway
) -> None:
    calls = [
        {"name": LABELS, "arguments": {}},
        {"name": SEND, "arguments": '{"to": "a@b.c"}'},
        {"name": ARCHIVE},
    ]
    async with connector_host(tmp_path, mail.url) as host:
        result = await _call(host, calls)

    answer = payload(result)
    assert [(item["index"], item["name"]) for item in entries(answer)] == [
        (0, LABELS),
        (1, SEND),
        (2, ARCHIVE),
    ]
    assert entries(answer)[1]["response"] == {"id": "msg-1", "status": "sent"}
    assert (answer["success_count"], answer["error_count"], answer["total_count"]) == (3, 0, 3)
    # Each entry is its own execute request, in input order.
    assert _executed(mail) == [
        ("GMAIL_LIST_LABELS", {}),
        ("GMAIL_SEND_EMAIL", {"to": "a@b.c"}),
        ("GMAIL_ARCHIVE_EMAIL", {}),
    ]
    assert all(len(request["body"]["tools"]) == 1 for request in mail.requests("execute"))


class ScriptedPrompt:
    """A person answering approval prompts: ``answers`` in turn; after the ``interrupt_at``-th
    answer they also stop the turn."""

    interactive = True

    def __init__(self, answers: list[Answer], interrupt_at: int) -> None:
        self.answers = answers
        self.interrupt_at = interrupt_at
        self.asked: list[str] = []
        self.session: Session | None = None

    async def ask(self, request: ApprovalRequest, timeout: float) -> Answer | None:
        self.asked.append(request.tool_name)
        if len(self.asked) == self.interrupt_at and self.session is not None:
            self.session.interrupt()
        return self.answers[len(self.asked) - 1]


async def test_a_batch_of_3_with_one_approval_denied_and_an_interrupt_after_the_second(
    tmp_path: Path, mail: Gateway
) -> None:
    prompt = ScriptedPrompt(["once", "deny", "once"], interrupt_at=2)
    calls = [
        {"name": SEND, "arguments": {"to": "a@b.c"}},
        {"name": ARCHIVE, "arguments": {}},
        {"name": LABELS, "arguments": {}},
    ]
    async with connector_host(tmp_path, mail.url, approvals={"policy": "annotations"}) as host:
        session = host.new_session(interactive=True, prompt=prompt)
        prompt.session = session
        result = await _call(host, calls, session)

    answer = payload(result)
    assert prompt.asked == [SEND, ARCHIVE]  # approval settles per entry, under the real name
    assert "response" in entries(answer)[0]
    assert entries(answer)[1]["error"]["code"] == "DENIED"
    assert entries(answer)[2]["error"]["code"] == "INTERRUPTED"
    assert (answer["success_count"], answer["error_count"]) == (1, 2)
    assert _executed(mail) == [("GMAIL_SEND_EMAIL", {"to": "a@b.c"})]  # nothing more was sent


REWRITER = """
from hermes_core.plugin import PreCallDirective, hookimpl


@hookimpl
def hermes_pre_tool_call(call, session):
    if call.name.startswith("connectors__gmail__"):
        return PreCallDirective.modify({**call.arguments, "subject": "[checked] " + call.name})
    return None
"""


async def test_pre_hooks_may_rewrite_the_arguments_that_go_on_the_wire(
    tmp_path: Path, mail: Gateway
) -> None:
    write_dir_plugin(tmp_path / "home" / "plugins", "rewriter", REWRITER)
    async with connector_host(tmp_path, mail.url, plugins={"enabled": ["rewriter"]}) as host:
        result = await _call(host, [{"name": SEND, "arguments": {"to": "a@b.c"}}])

    assert not result.is_error, result.text_content
    assert _executed(mail) == [
        ("GMAIL_SEND_EMAIL", {"to": "a@b.c", "subject": f"[checked] {SEND}"})
    ]


async def test_a_batch_of_more_than_10_entries_runs_nothing(tmp_path: Path, mail: Gateway) -> None:
    async with connector_host(tmp_path, mail.url) as host:
        result = await _call(host, [{"name": LABELS}] * 11)

    assert result.is_error
    assert "at most 10" in payload(result)["error"]
    assert mail.requests("execute") == []


async def test_a_batch_of_10_entries_runs_them_all(tmp_path: Path, mail: Gateway) -> None:
    async with connector_host(tmp_path, mail.url) as host:
        result = await _call(host, [{"name": LABELS}] * 10)

    assert payload(result)["success_count"] == 10
    assert len(mail.requests("execute")) == 10


async def test_a_batch_outside_the_sessions_grant_runs_nothing(
    tmp_path: Path, mail: Gateway
) -> None:
    async with connector_host(tmp_path, mail.url) as host:
        session = host.new_session(granted_toolsets=frozenset({"files"}))
        result = await _call(host, [{"name": LABELS}, {"name": ARCHIVE}], session)

    assert {item["error"]["code"] for item in entries(payload(result))} == {"NOT_AVAILABLE"}
    assert mail.requests("execute") == []


# Connections ----------------------------------------------------------------------------------


async def test_connection_required_then_opening_the_link_then_the_same_call_succeeds(
    tmp_path: Path, gateway: Gateway
) -> None:
    call = [{"name": SEND, "arguments": {"to": "a@b.c"}}]
    async with connector_host(tmp_path, gateway.url) as host:
        first = await _call(host, call)
        refused = payload(first)
        opened = Gateway.open(refused["connect_url"])
        second = await _call(host, call)

    assert first.error_code == "CONNECTION_REQUIRED"
    assert set(refused) == {"code", "message", "connector", "connect_url", "hint"}
    assert refused["connector"] == "gmail"
    assert refused["connect_url"].startswith(gateway.url)
    assert "manage_connections" in refused["hint"]
    assert "connect_url" in refused["hint"]
    assert opened.status_code == 200
    assert not second.is_error, second.text_content
    assert second.structured == {"id": "msg-1", "status": "sent"}


async def test_connection_required_in_a_batch_carries_the_link_in_its_entry(
    tmp_path: Path, gateway: Gateway
) -> None:
    calls = [
        {"name": SEND, "arguments": {"to": "a@b.c"}},
        {"name": ISSUE, "arguments": {"title": "x"}},
    ]
    async with connector_host(tmp_path, gateway.url) as host:
        answer = payload(await _call(host, calls))

    error = entries(answer)[0]["error"]
    assert error["code"] == "CONNECTION_REQUIRED"
    assert error["connect_url"].endswith("/_dev/connect/gmail")
    assert entries(answer)[1]["response"] == {"id": "LIN-1"}


async def test_an_expired_connection_is_connection_required_with_a_link(
    tmp_path: Path, mail: Gateway
) -> None:
    mail.fault("gmail", "expired")
    async with connector_host(tmp_path, mail.url) as host:
        result = await _call(host, [{"name": LABELS, "arguments": {}}])

    assert result.error_code == "CONNECTION_REQUIRED"
    assert "expired" in payload(result)["message"]
    assert payload(result)["connect_url"].endswith("/_dev/connect/gmail")


async def test_an_unreachable_gateway_makes_each_entry_a_provider_error_never_an_exception(
    tmp_path: Path,
) -> None:
    with Gateway() as gone:
        url = gone.url
    calls = [{"name": LABELS, "arguments": {}}, {"name": ISSUE, "arguments": {"title": "x"}}]
    async with connector_host(tmp_path, url) as host:
        answer = payload(await _call(host, calls))

    assert [item["error"]["code"] for item in entries(answer)] == ["PROVIDER_ERROR"] * 2
    assert "cannot reach" in entries(answer)[0]["error"]["message"]
    assert (answer["success_count"], answer["error_count"]) == (0, 2)


@pytest.mark.parametrize("source", ["environment", "file"])
async def test_a_refused_token_tells_how_to_sign_in_again_where_the_token_comes_from(
    tmp_path: Path, start_gateway: Callable[[Mapping[str, Any]], Gateway], source: str
) -> None:
    # HERMES_CONNECTORS_TOKEN wins over auth.json: a new login alone would change nothing.
    gateway = start_gateway(fixture(token="the-right-one"))
    env = connector_env(tmp_path, token="an-old-one" if source == "environment" else None)
    if source == "file":
        save_token(env, "an-old-one")
    async with connector_host(tmp_path, gateway.url, env=env) as host:
        called = await _call(host, [{"name": SEND, "arguments": {"to": "a@b.c"}}])
        described = await host.dispatch("tool_describe", {"names": [SEND]}, host.new_session())

    again = (
        "sign in again: HERMES_CONNECTORS_TOKEN holds the token refused: set it to another, or "
        "unset it and run 'hermes connectors login'"
        if source == "environment"
        else "sign in again: run 'hermes connectors login'"
    )
    assert called.error_code == "SIGNED_OUT"
    assert payload(called)["hint"] == f"Tell the user to {again}."
    assert payload(described)["errors"][SEND].endswith(f": {again}"), payload(described)
    assert "HERMES_CONNECTORS_TOKEN)" not in json.dumps(payload(described))


async def test_a_result_of_json_null_is_a_result_of_no_output_not_the_text_null(
    tmp_path: Path, start_gateway: Callable[[Mapping[str, Any]], Gateway]
) -> None:
    # As an MCP tool answering no content: the conversation says "(no output)".
    data = connected("gmail")
    for tool in data["connectors"][0]["tools"]:
        tool["result"] = None if tool["slug"] == "GMAIL_ARCHIVE_EMAIL" else tool["result"]
    gateway = start_gateway(data)
    async with connector_host(tmp_path, gateway.url) as host:
        alone = await _call(host, [{"name": ARCHIVE, "arguments": {}}])
        batch = await _call(host, [{"name": ARCHIVE, "arguments": {}}, {"name": LABELS}])

    assert not alone.is_error, alone.text_content
    assert (alone.content, alone.structured) == ([], None)
    assert entries(payload(batch))[0]["response"] == ""
