"""The bundled ``http`` gateway client: its routes' retries, what each HTTP status means, answers
matched by position, and every failure an answer, never an exception. Against the reference
gateway, and against :class:`OffProtocolServer`, a real HTTP server that answers whatever a test
tells it to (what a broken gateway would)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from gateways import TOKEN, Gateway, OffProtocolServer, connector_host, fixture

from hermes_core.connectors import ConnectorGateway, ExecuteCall

pytestmark = pytest.mark.anyio


def _client_module(gateway: ConnectorGateway) -> ModuleType:
    return sys.modules[type(gateway).__module__]


async def _with_gateway(tmp_path: Path, url: str, work: Callable[[ConnectorGateway], Any]) -> Any:
    async with connector_host(tmp_path, url) as host:
        return await work(host.connectors.gateway())


# Statuses -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "kind"),
    [(401, "signed_out"), (403, "signed_out"), (404, "not_served"), (400, "error")],
)
async def test_what_an_http_status_means(
    tmp_path: Path, off_protocol: OffProtocolServer, status: int, kind: str
) -> None:
    off_protocol.answer("v1/connectors/schemas", status, {"error": {"code": "X", "message": "no"}})

    async def work(gateway: ConnectorGateway) -> Any:
        return await gateway.schemas(["GMAIL_SEND_EMAIL"])

    answer = await _with_gateway(tmp_path, off_protocol.url, work)

    assert answer.failure is not None
    assert answer.failure.kind == kind
    assert "X: no" in answer.failure.message
    # Only 5xx, timeouts and transport errors are retried.
    assert len(off_protocol.seen) == 1


@pytest.mark.parametrize(
    ("status", "body", "said"),
    [
        (503, b"", "answered HTTP 503"),
        (503, b"<html>busy</html>", "answered HTTP 503"),
        (502, {"error": {}}, "answered HTTP 502"),
        (400, b"", "refused the request: HTTP 400"),
        (401, b"", "refused the token (HTTP 401)"),
        (404, b"", "does not serve this account (HTTP 404)"),
    ],
)
async def test_a_status_without_an_error_body_is_said_once(
    tmp_path: Path, off_protocol: OffProtocolServer, status: int, body: Any, said: str
) -> None:
    off_protocol.answer("v1/connectors/schemas", status, body)

    async def work(gateway: ConnectorGateway) -> Any:
        return await gateway.schemas(["GMAIL_SEND_EMAIL"])

    answer = await _with_gateway(tmp_path, off_protocol.url, work)

    assert answer.failure is not None
    assert answer.failure.message == f"{off_protocol.url}v1/connectors/schemas {said}"


async def test_the_token_goes_as_a_bearer_header_and_never_into_a_repr(
    tmp_path: Path, off_protocol: OffProtocolServer
) -> None:
    off_protocol.answer("v1/connectors", 200, {"items": []})

    async def work(gateway: ConnectorGateway) -> Any:
        await gateway.list_connectors()
        return repr(gateway)

    shown = await _with_gateway(tmp_path, off_protocol.url, work)

    assert off_protocol.seen[0][1]["authorization"] == f"Bearer {TOKEN}"
    assert TOKEN not in shown


# Answers off the protocol -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({"results": "nothing"}, "results must be a list"),
        ({"results": [{"tools": 3}]}, "results[0].tools must be a list"),
        ([1, 2], "the answer must be an object"),
        (b"<html>oops</html>", "not JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b'{"results": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested too deeply"),
    ],
    ids=["results-not-a-list", "tools-not-a-list", "a-list", "html", "deep", "deep-results"],
)
async def test_a_search_answer_off_the_protocol_is_a_failure_never_an_exception(
    tmp_path: Path, off_protocol: OffProtocolServer, body: Any, said: str
) -> None:
    off_protocol.answer("v1/connectors/search", 200, body)

    async def work(gateway: ConnectorGateway) -> Any:
        return await gateway.search(["gmail send email"])

    answer = await _with_gateway(tmp_path, off_protocol.url, work)

    assert answer.failure is not None
    assert answer.failure.kind == "error"
    assert said in answer.failure.message


@pytest.mark.parametrize(
    ("route", "body", "said"),
    [
        pytest.param(
            "v1/connectors",
            {"items": [{"connector": "gmail", "connected": "false", "connectionStatus": "x"}]},
            "items[0].connected must be true or false, not the text 'false'",
            id="list-text",
        ),
        pytest.param(
            "v1/connectors",
            {"items": [{"connector": "gmail", "connectionStatus": "active"}]},
            "items[0].connected must be true or false, not missing",
            id="list-missing",
        ),
        pytest.param(
            "v1/connectors",
            {"items": [{"connector": "gmail", "connected": True, "connectionStatus": 1}]},
            "items[0].connectionStatus must be text or null, not the number 1",
            id="list-status-number",
        ),
        pytest.param(
            "v1/connectors",
            {"items": [], "nextCursor": 2},
            "nextCursor must be text or null, not the number 2",
            id="list-cursor-number",
        ),
        pytest.param(
            "v1/connectors/search",
            {"results": [], "connections": [{"connector": "gmail", "connected": 1}]},
            "connections[0].connected must be true or false, not the number 1",
            id="search-number",
        ),
    ],
)
async def test_a_field_of_the_wrong_type_is_a_protocol_error_naming_it_never_read_as_truthy(
    tmp_path: Path, off_protocol: OffProtocolServer, route: str, body: Any, said: str
) -> None:
    off_protocol.answer(route, 200, body)
    call = ROUTE_CALLS[route]

    answer = await _with_gateway(tmp_path, off_protocol.url, call)

    assert answer.failure is not None
    assert answer.failure.kind == "error"
    assert f"the answer to {route} does not follow the protocol: {said}" in answer.failure.message


async def test_execute_results_are_matched_by_position_and_a_missing_one_is_an_error(
    tmp_path: Path, off_protocol: OffProtocolServer
) -> None:
    off_protocol.answer(
        "v1/connectors/execute",
        200,
        {"results": [{"connector": "other", "tool": "OTHER", "data": {"first": True}}]},
    )
    calls = [ExecuteCall("gmail", "GMAIL_A", {}), ExecuteCall("gmail", "GMAIL_B", {})]

    async def work(gateway: ConnectorGateway) -> Any:
        return await gateway.execute(calls)

    answer = await _with_gateway(tmp_path, off_protocol.url, work)

    first, second = answer.results
    assert (first.tool, first.data) == ("GMAIL_A", {"first": True})
    assert second.tool == "GMAIL_B"
    assert second.error is not None
    assert "no result" in second.error.message


async def test_a_schema_entry_that_cannot_be_read_is_left_out(
    tmp_path: Path, off_protocol: OffProtocolServer
) -> None:
    schemas = {
        "GMAIL_A": {"connector": "gmail", "description": "A", "inputSchema": {"type": "object"}},
        "GMAIL_B": {"description": "no connector"},
        "GMAIL_C": "not an object",
    }
    off_protocol.answer("v1/connectors/schemas", 200, {"schemas": schemas, "notFound": ["X"]})

    async def work(gateway: ConnectorGateway) -> Any:
        return await gateway.schemas(["GMAIL_A", "GMAIL_B", "GMAIL_C", "X"])

    answer = await _with_gateway(tmp_path, off_protocol.url, work)

    assert answer.failure is None
    assert list(answer.schemas) == ["GMAIL_A"]
    assert list(answer.not_found) == ["X"]


# Retries -------------------------------------------------------------------------------------


ROUTE_CALLS: dict[str, Callable[[ConnectorGateway], Any]] = {
    "v1/connectors/search": lambda gateway: gateway.search(["send an email"]),
    "v1/connectors/schemas": lambda gateway: gateway.schemas(["GMAIL_SEND_EMAIL"]),
    "v1/connectors/execute": lambda gateway: gateway.execute(
        [ExecuteCall("gmail", "GMAIL_SEND_EMAIL", {})]
    ),
    "v1/connectors/connections": lambda gateway: gateway.connect(["gmail"], False),
    "v1/connectors": lambda gateway: gateway.list_connectors(),
}


@pytest.mark.parametrize(
    ("route", "attempts"),
    [
        pytest.param("v1/connectors/search", 1, id="search-none"),
        pytest.param("v1/connectors/schemas", 2, id="schemas-one"),
        pytest.param("v1/connectors/execute", 2, id="execute-one"),
        pytest.param("v1/connectors/connections", 1, id="connections-never"),
        pytest.param("v1/connectors", 2, id="list-one"),
    ],
)
async def test_each_route_retries_a_5xx_as_often_as_the_protocol_table_says(
    tmp_path: Path, off_protocol: OffProtocolServer, route: str, attempts: int
) -> None:
    off_protocol.answer(route, 503, {"error": {"code": "BUSY", "message": "try later"}})

    answer = await _with_gateway(tmp_path, off_protocol.url, ROUTE_CALLS[route])

    assert answer.failure is not None
    assert answer.failure.kind == "unreachable"
    assert [path for path, _ in off_protocol.seen] == [f"/{route}"] * attempts


async def test_schemas_are_retried_once_after_a_500(tmp_path: Path, gateway: Gateway) -> None:
    gateway.fault("GMAIL_SEND_EMAIL", "error", times=1)

    async def work(connectors: ConnectorGateway) -> Any:
        return await connectors.schemas(["GMAIL_SEND_EMAIL"])

    answer = await _with_gateway(tmp_path, gateway.url, work)

    assert answer.failure is None
    assert list(answer.schemas) == ["GMAIL_SEND_EMAIL"]
    assert [request["status"] for request in gateway.requests("schemas")] == [500, 200]


async def test_connections_are_never_retried(tmp_path: Path, gateway: Gateway) -> None:
    gateway.fault("gmail", "error", times=1)

    async def work(connectors: ConnectorGateway) -> Any:
        return await connectors.connect(["gmail"], False)

    answer = await _with_gateway(tmp_path, gateway.url, work)

    assert answer.failure is not None
    assert answer.failure.kind == "unreachable"
    assert len(gateway.requests("connections")) == 1


async def test_the_connector_list_follows_next_cursor_over_every_page(
    tmp_path: Path, start_gateway: Callable[[Mapping[str, Any]], Gateway]
) -> None:
    apps = [{"slug": f"app{index:02d}", "connected": index % 2 == 0} for index in range(30)]
    gateway = start_gateway(fixture(*apps))

    async def work(connectors: ConnectorGateway) -> Any:
        return await connectors.list_connectors()

    answer = await _with_gateway(tmp_path, gateway.url, work)

    assert [item.connector for item in answer.items] == [app["slug"] for app in apps]
    assert answer.items[0].connected
    assert not answer.items[1].connected
    assert len(gateway.requests("list")) == 2


async def test_an_app_listed_on_two_pages_is_kept_once_with_one_warning(
    tmp_path: Path, off_protocol: OffProtocolServer, caplog: pytest.LogCaptureFixture
) -> None:
    gmail = {"connector": "gmail", "connected": True, "connectionStatus": "active"}
    stale = {"connector": "gmail", "connected": False, "connectionStatus": "expired"}
    linear = {"connector": "linear", "connected": False, "connectionStatus": "not_connected"}
    off_protocol.answer("v1/connectors", 200, {"items": [gmail], "nextCursor": "c2"})
    off_protocol.answer("v1/connectors?cursor=c2", 200, {"items": [stale, linear]})
    caplog.set_level(logging.WARNING, logger="hermes_core.connectors")

    async def work(gateway: ConnectorGateway) -> Any:
        return await gateway.list_connectors()

    answer = await _with_gateway(tmp_path, off_protocol.url, work)

    assert [(item.connector, item.connected) for item in answer.items] == [
        ("gmail", True),
        ("linear", False),
    ]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        "the connector gateway listed gmail more than once in v1/connectors: the first entry is "
        "kept"
    ]


@pytest.mark.parametrize(
    ("header", "seconds"),
    [("3", 3.0), ("0.5", 0.5), ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0), ("soon", None), ("", None)],
)
async def test_retry_after_is_read_as_seconds_or_an_http_date(
    tmp_path: Path, gateway: Gateway, header: str, seconds: float | None
) -> None:
    async with connector_host(tmp_path, gateway.url) as host:
        module = _client_module(host.connectors.gateway())

    assert module.retry_after_seconds(header) == seconds
    later = module.retry_after_seconds("Wed, 21 Oct 2015 07:28:10 GMT", now=1445412480.0)
    assert later == pytest.approx(10.0)


async def test_the_gateway_of_a_host_is_released_when_the_host_ends(
    tmp_path: Path, gateway: Gateway
) -> None:
    async with connector_host(tmp_path, gateway.url) as host:
        built = host.connectors.gateway()
        await host.dispatch("tool_search", {"queries": ["gmail"]}, host.new_session())
        client = built._client  # type: ignore[attr-defined]

    assert client is not None
    assert client.is_closed


async def test_an_answer_over_the_cap_is_a_failure_naming_it(
    tmp_path: Path, off_protocol: OffProtocolServer
) -> None:
    off_protocol.answer("v1/connectors/search", 200, b" " * (16 * 1024 * 1024 + 1))

    async def work(gateway: ConnectorGateway) -> Any:
        return await gateway.search(["gmail send email"])

    answer = await _with_gateway(tmp_path, off_protocol.url, work)

    assert answer.failure is not None
    assert answer.failure.kind == "error"
    assert "answered more than 16 MiB" in answer.failure.message


# The token on the network -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "warned"),
    [
        ("http://gateway.example.com/", True),
        ("http://10.1.2.3:8080/", True),
        ("https://gateway.example.com/", False),
        ("http://127.0.0.1:9/", False),
        ("http://[::1]:9/", False),
        ("http://localhost:9/", False),
    ],
)
async def test_a_plain_http_gateway_beyond_loopback_warns_that_the_token_goes_in_the_clear(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, url: str, warned: bool
) -> None:
    caplog.set_level(logging.WARNING, logger="hermes_core.connectors")

    async def work(gateway: ConnectorGateway) -> Any:
        return gateway

    await _with_gateway(tmp_path, url, work)

    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    if warned:
        (warning,) = warnings
        assert warning == (
            f"tools.connectors.url is {url}: plain HTTP beyond this machine's loopback, so the "
            "connector token crosses the network unencrypted with every request, and whoever "
            "sees it can use your connected apps; use the gateway's https:// URL"
        )
    else:
        assert warnings == []
    assert all(TOKEN not in r.getMessage() for r in caplog.records)


async def test_the_plain_http_warning_names_the_url_with_its_secrets_redacted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A password or a key in the URL goes into the log no more than in an error.
    caplog.set_level(logging.WARNING, logger="hermes_core.connectors")
    url = "http://me:s3cret@gateway.example.com/?api_key=k3y&region=eu"

    async def work(gateway: ConnectorGateway) -> Any:
        return gateway

    await _with_gateway(tmp_path, url, work)

    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warning.startswith(
        "tools.connectors.url is http://me:[redacted]@gateway.example.com/?api_key=[redacted]"
        "&region=eu: plain HTTP beyond"
    ), warning


async def test_a_redirect_is_not_followed_and_says_where_it_pointed(tmp_path: Path) -> None:
    with OffProtocolServer() as elsewhere, OffProtocolServer() as moved:
        elsewhere.answer("v1/connectors", 200, {"items": []})
        target = elsewhere.url.replace("127.0.0.1", "localhost") + "v1/connectors"
        moved.answer("v1/connectors", 301, b"", location=target)

        async def work(gateway: ConnectorGateway) -> Any:
            return await gateway.list_connectors()

        answer = await _with_gateway(tmp_path, moved.url, work)

    assert elsewhere.seen == []  # the token went nowhere else
    assert answer.failure is not None
    assert answer.failure.kind == "error"
    assert answer.failure.message == (
        f"{moved.url}v1/connectors answered HTTP 301, a redirect to {target}: a gateway's "
        "redirects are not followed (the token would go with them); if the gateway moved, set "
        "tools.connectors.url to its new address"
    )


async def test_a_search_waits_as_long_as_tools_connectors_search_timeout_allows(
    tmp_path: Path, gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The route's own 30 s stands at 0.2 s here, the user's search_timeout above it at 20 s:
    # a gateway answering after one second is waited for, as the setting says.
    gateway.fault("*", "delay", ms=1000)
    async with connector_host(tmp_path, gateway.url, connectors={"search_timeout": 20}) as host:
        client = host.connectors.gateway()
        module = _client_module(client)
        monkeypatch.setattr(module, "SEARCH", replace(module.SEARCH, timeout=0.2))
        answer = await client.search(["send email"])

    assert answer.failure is None, answer.failure
    assert "GMAIL_SEND_EMAIL" in answer.results[0]


@pytest.mark.parametrize("reachable", [True, False], ids=["answers-an-error", "unreachable"])
async def test_a_gateway_failure_names_the_url_with_its_secrets_redacted(
    tmp_path: Path, off_protocol: OffProtocolServer, reachable: bool
) -> None:
    # The failure's message reaches the model (tool_search's `connectors.message`) and the
    # terminal: a password in tools.connectors.url must not go with it.
    off_protocol.answer("v1/connectors", 400, {"error": {"code": "X", "message": "no"}})
    base = off_protocol.url if reachable else "http://127.0.0.1:9/"
    url = base.replace("http://", "http://me:s3cret@")

    async def work(gateway: ConnectorGateway) -> Any:
        return await gateway.list_connectors()

    answer = await _with_gateway(tmp_path, url, work)

    assert answer.failure is not None
    message = answer.failure.message
    assert "s3cret" not in message, message
    assert "me:[redacted]@127.0.0.1" in message, message


@pytest.mark.parametrize("suffix", ["?tenant=x", "?tenant=x#part", "#part"])
async def test_a_url_with_a_query_or_a_fragment_gets_its_routes_on_the_path_and_its_query_kept(
    tmp_path: Path, off_protocol: OffProtocolServer, suffix: str
) -> None:
    """``tools.connectors.url: https://gw.example/base/?tenant=x`` sent every route after the
    query (``/base/?tenant=x/v1/connectors``), and a fragment swallowed the routes: a route is
    joined to the path, the query goes with every request (a page's cursor beside it), and a
    fragment, which HTTP never sends, is left out."""
    off_protocol.answer("base/v1/connectors", 200, {"items": [], "nextCursor": "c2"})
    off_protocol.answers["/base/v1/connectors?tenant=x&cursor=c2"] = (200, {"items": []}, {})
    off_protocol.answers["/base/v1/connectors?cursor=c2"] = (200, {"items": []}, {})
    off_protocol.answer("base/v1/connectors/schemas", 200, {"results": []})

    async def work(gateway: ConnectorGateway) -> Any:
        listing = await gateway.list_connectors()
        await gateway.schemas(["GMAIL_SEND_EMAIL"])
        return listing

    listing = await _with_gateway(tmp_path, off_protocol.url + "base/" + suffix, work)

    assert listing.failure is None
    query = "tenant=x" if "tenant" in suffix else ""
    assert off_protocol.targets == [
        "/base/v1/connectors" + (f"?{query}" if query else ""),
        f"/base/v1/connectors?{query + '&' if query else ''}cursor=c2",
        "/base/v1/connectors/schemas" + (f"?{query}" if query else ""),
    ]
