"""tool_search with connectors in scope, against the reference gateway over real sockets: one
request per search, remote hits ranked with local tools in one pass, the gateway's order not
trusted, and local results unchanged whenever the gateway cannot answer."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from gateways import (
    GITHUB_TOOLS,
    Gateway,
    OffProtocolServer,
    connector_env,
    connector_host,
    fixture,
    matches,
    payload,
)

from hermes_core.connectors._signin import save_token

pytestmark = pytest.mark.anyio


def _unavailable(answer: Mapping[str, Any]) -> str:
    connectors = answer["connectors"]
    assert connectors["status"] == "unavailable"
    assert set(connectors) <= {"status", "reason", "message"}
    return str(connectors["reason"])


async def _search(host: Any, queries: list[str], **arguments: Any) -> dict[str, Any]:
    result = await host.dispatch(
        "tool_search", {"queries": queries, **arguments}, host.new_session()
    )
    assert not result.is_error, result.text_content
    return payload(result)


async def test_all_queries_of_a_search_go_to_the_gateway_in_one_request(
    tmp_path: Path, gateway: Gateway
) -> None:
    async with connector_host(tmp_path, gateway.url) as host:
        answer = await _search(host, ["gmail send email", "linear issue"])

    sent = gateway.requests("search")
    assert len(sent) == 1
    assert sent[0]["body"] == {
        "queries": [{"useCase": "gmail send email"}, {"useCase": "linear issue"}]
    }
    assert matches(answer, 0)[0] == "connectors__gmail__SEND_EMAIL"
    assert matches(answer, 1)[0] == "connectors__linear__CREATE_ISSUE"
    assert answer["tools"]["connectors__gmail__SEND_EMAIL"] == {
        "source": "connectors",
        "source_name": "gmail",
        "description": "Send an email from the user's Gmail account",
        "required": ["to"],
    }
    assert "connectors" not in answer


async def test_connector_tool_holding_the_rarest_token_is_not_crowded_out_by_local_tools(
    tmp_path: Path, gateway: Gateway
) -> None:
    async with connector_host(tmp_path, gateway.url, local=GITHUB_TOOLS) as host:
        answer = await _search(host, ["linear create issue"], limit=3)

    found = matches(answer)
    # Eight local tools hold "create"/"issue"; only the connector tool holds "linear".
    assert found[0] == "connectors__linear__CREATE_ISSUE"
    assert len(found) == 3


async def test_limit_caps_local_and_connector_hits_together(
    tmp_path: Path, gateway: Gateway
) -> None:
    async with connector_host(tmp_path, gateway.url, local=GITHUB_TOOLS) as host:
        answer = await _search(host, ["create issue"], limit=2)
        wide = await _search(host, ["create issue"], limit=20)

    assert len(matches(answer)) == 2
    assert {*GITHUB_TOOLS, "connectors__linear__CREATE_ISSUE"} <= set(matches(wide))
    assert matches(answer) == matches(wide)[:2]


async def test_the_gateways_order_is_not_trusted_only_its_membership(
    tmp_path: Path, start_gateway: Callable[[Mapping[str, Any]], Gateway]
) -> None:
    notion = {
        "slug": "notion",
        "name": "Notion",
        "connected": True,
        "tools": [
            {"slug": "NOTION_SEARCH", "description": "Search the workspace"},
            {"slug": "NOTION_ARCHIVE_BLOCK", "description": "Archive a block"},
            {"slug": "NOTION_CREATE_PAGE", "description": "Create a page in a Notion database"},
        ],
    }
    gateway = start_gateway(fixture(notion))
    async with connector_host(tmp_path, gateway.url) as host:
        answer = await _search(host, ["notion create page"])

    # The gateway answered in fixture order (NOTION_SEARCH first); the ranking decides.
    assert matches(answer)[0] == "connectors__notion__CREATE_PAGE"
    assert {name for name in matches(answer) if name.startswith("connectors__")} == {
        "connectors__notion__SEARCH",
        "connectors__notion__ARCHIVE_BLOCK",
        "connectors__notion__CREATE_PAGE",
    }


async def test_a_slow_gateway_degrades_to_local_results_within_the_timeout(
    tmp_path: Path, gateway: Gateway
) -> None:
    # The gateway's delay is reached only if the search waits for it: it can be long, and the
    # check below holds on a loaded machine as well as on a quiet one.
    gateway.fault("*", "delay", ms=30_000)
    local = {"local_send_email": "Send an email through the local relay"}
    async with connector_host(
        tmp_path, gateway.url, local=local, connectors={"search_timeout": 0.5}
    ) as host:
        started = time.perf_counter()
        answer = await _search(host, ["send email"])
        elapsed = time.perf_counter() - started

    assert elapsed < 15.0, "the search waited for the gateway"
    assert matches(answer) == ["local_send_email"]
    assert _unavailable(answer) == "unreachable"
    assert answer["connectors"]["message"] == (
        "the connector gateway did not answer a search within 0.5 s "
        "(tools.connectors.search_timeout)"
    )
    assert "do not conclude that an app is missing" in answer["hint"]


async def test_an_unreachable_gateway_degrades_to_local_results(tmp_path: Path) -> None:
    with Gateway() as gone:
        url = gone.url
    local = {"local_send_email": "Send an email through the local relay"}
    async with connector_host(tmp_path, url, local=local) as host:
        answer = await _search(host, ["send email"])

    assert matches(answer) == ["local_send_email"]
    assert _unavailable(answer) == "unreachable"


async def test_while_connectors_cannot_be_searched_no_hint_says_an_app_is_missing(
    tmp_path: Path,
) -> None:
    with Gateway() as gone:
        url = gone.url
    local = {"local_send_email": "Send an email through the local relay"}
    async with connector_host(tmp_path, url, local=local) as host:
        answer = await _search(host, ["gmail send email"])

    (result,) = answer["results"]
    assert result["unmatched"] == ["gmail"]
    assert "none of the connected sources provides it" not in result["hint"]
    assert result["hint"].startswith(
        "No local tool contains 'gmail', and the hosted app connectors could not be searched"
    )
    assert "do not conclude that it is missing" in result["hint"]


async def test_a_gateway_answering_500_degrades_and_search_is_not_retried(
    tmp_path: Path, gateway: Gateway
) -> None:
    gateway.fault("*", "error")
    async with connector_host(tmp_path, gateway.url) as host:
        answer = await _search(host, ["gmail send email"])

    assert _unavailable(answer) == "unreachable"
    assert [request["status"] for request in gateway.requests("search")] == [500]


@pytest.mark.parametrize(
    ("body", "said"),
    [
        pytest.param({"results": "nothing"}, "results must be a list", id="results"),
        pytest.param(
            {"results": [], "connections": [{"connector": "gmail", "connected": "false"}]},
            "connections[0].connected must be true or false, not the text 'false'",
            id="connected-text",
        ),
    ],
)
async def test_an_answer_off_the_protocol_is_unavailable_as_an_error_never_unreachable(
    tmp_path: Path,
    off_protocol: OffProtocolServer,
    caplog: pytest.LogCaptureFixture,
    body: Any,
    said: str,
) -> None:
    off_protocol.answer("v1/connectors/search", 200, body)
    local = {"local_send_email": "Send an email through the local relay"}
    caplog.set_level(logging.WARNING, logger="hermes_core.connectors")
    async with connector_host(tmp_path, off_protocol.url, local=local) as host:
        answer = await _search(host, ["send email"])
        await _search(host, ["send email"])

    assert matches(answer) == ["local_send_email"]
    assert _unavailable(answer) == "error"
    assert said in answer["connectors"]["message"]
    assert "do not conclude that an app is missing" in answer["hint"]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1  # once per host, not once per search
    assert "v1/connectors/search does not follow the protocol" in warnings[0]
    assert said in warnings[0]


@pytest.mark.parametrize("source", ["environment", "file"])
async def test_a_refused_token_shows_signed_out(
    tmp_path: Path, start_gateway: Callable[[Mapping[str, Any]], Gateway], source: str
) -> None:
    gateway = start_gateway(fixture(token="the-right-one"))
    env = connector_env(tmp_path, token="an-old-one" if source == "environment" else None)
    if source == "file":
        save_token(env, "an-old-one")
    async with connector_host(tmp_path, gateway.url, env=env) as host:
        answer = await _search(host, ["gmail send email"])

    assert gateway.requests("search")[0]["status"] == 401
    assert _unavailable(answer) == "signed_out"
    assert matches(answer) == []
    # Retrying later would not help: the model is told what the user must do, and a token
    # of HERMES_CONNECTORS_TOKEN wins over a new login.
    again = (
        "sign in again: HERMES_CONNECTORS_TOKEN holds the token refused: set it to another, or "
        "unset it and run 'hermes connectors login'"
        if source == "environment"
        else "sign in again: run 'hermes connectors login'"
    )
    assert answer["hint"] == (
        "Hosted app connectors could not be searched: the connector gateway refused the "
        f"sign-in. Do not conclude that an app is missing: tell the user to {again}."
    )


async def test_a_gateway_that_does_not_serve_the_account_is_silent(
    tmp_path: Path, gateway: Gateway
) -> None:
    unserved = gateway.url + "elsewhere/"
    local = {"local_send_email": "Send an email through the local relay"}
    async with connector_host(tmp_path, unserved, local=local) as host:
        answer = await _search(host, ["send email"])
    async with connector_host(tmp_path / "plain", None, local=local) as host:
        plain = await _search(host, ["send email"])

    assert answer == plain  # 404: no connectors status, no hint, local results only


async def test_twins_keep_the_prefixed_slug_and_warn_once_naming_both(
    tmp_path: Path,
    start_gateway: Callable[[Mapping[str, Any]], Gateway],
    caplog: pytest.LogCaptureFixture,
) -> None:
    gmail = {
        "slug": "gmail",
        "connected": True,
        "tools": [
            {"slug": "ARCHIVE", "description": "Archive a message (old slug)"},
            {"slug": "GMAIL_ARCHIVE", "description": "Archive a message of the mailbox"},
        ],
    }
    gateway = start_gateway(fixture(gmail))
    caplog.set_level(logging.WARNING, logger="hermes_core.connectors")
    async with connector_host(tmp_path, gateway.url) as host:
        first = await _search(host, ["gmail archive message"])
        await _search(host, ["gmail archive message"])

    assert matches(first) == ["connectors__gmail__ARCHIVE"]
    assert first["tools"]["connectors__gmail__ARCHIVE"]["description"] == (
        "Archive a message of the mailbox"
    )
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "GMAIL_ARCHIVE" in warnings[0]
    assert "ARCHIVE is not offered" in warnings[0]


async def test_a_tool_whose_slug_makes_no_valid_name_is_not_offered(
    tmp_path: Path, start_gateway: Callable[[Mapping[str, Any]], Gateway]
) -> None:
    gmail = {
        "slug": "gmail",
        "connected": True,
        "tools": [
            {"slug": "GMAIL_SEND.EMAIL", "description": "Send an email (a dotted slug)"},
            {"slug": "GMAIL_SEND_EMAIL", "description": "Send an email"},
        ],
    }
    gateway = start_gateway(fixture(gmail))
    async with connector_host(tmp_path, gateway.url) as host:
        answer = await _search(host, ["gmail send email"])

    assert matches(answer) == ["connectors__gmail__SEND_EMAIL"]


async def test_sessions_not_granted_connectors_do_not_ask_the_gateway(
    tmp_path: Path, gateway: Gateway
) -> None:
    async with connector_host(tmp_path, gateway.url) as host:
        session = host.new_session(granted_toolsets=frozenset({"local"}))
        result = await host.dispatch("tool_search", {"queries": ["gmail send email"]}, session)

    assert not result.is_error
    assert gateway.requests("search") == []
    assert "connectors" not in payload(result)
