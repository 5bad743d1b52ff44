"""The reference gateway: ``hermes connectors dev-gateway``, its fixture format, tokens, links,
idempotency keys and test-only routes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from gateways import FIXTURE, Gateway, GatewayProcess, fixture

from hermes_core._errors import ConfigError
from hermes_core.testing import HermesCli
from hermes_core.testing._cli_in_process import InProcessCli
from hermes_core.testing._gateway_fixtures import parse_fixtures

DOCS = Path(__file__).resolve().parents[2] / "docs" / "connectors.md"


@pytest.fixture
def hermes_cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    """``hermes`` run in this process (:class:`InProcessCli`); ``subprocess_run`` runs the
    real command."""
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


def documented_fixture() -> dict[str, Any]:
    """The fixture of the issue, as docs/connectors.md shows it under "Fixture format"."""
    text = DOCS.read_text(encoding="utf-8").split("### Fixture format", 1)[1]
    data: dict[str, Any] = json.loads(text.split("```json\n", 1)[1].split("```", 1)[0])
    return data


def _post(gateway_url: str, route: str, body: Any, token: str | None = "any") -> httpx.Response:
    headers = {"authorization": f"Bearer {token}"} if token is not None else {}
    return httpx.post(f"{gateway_url}v1/connectors/{route}", json=body, headers=headers)


@pytest.mark.subprocess
def test_the_command_prints_where_it_listens_once_it_accepts_connections(
    hermes_cli: HermesCli,
) -> None:
    with GatewayProcess(hermes_cli) as running:
        answer = httpx.get(f"{running.url}v1/connectors", headers={"authorization": "Bearer x"})
        code = running.stop()

    assert running.first_line.startswith("listening on http://127.0.0.1:")
    assert running.url.endswith("/")
    assert answer.status_code == 200
    assert [item["connector"] for item in answer.json()["items"]] == ["gmail", "linear"]
    assert code == 0


@pytest.mark.subprocess
def test_the_documented_fixture_is_served_as_written(hermes_cli: HermesCli) -> None:
    data = documented_fixture()
    with GatewayProcess(hermes_cli, data) as running:
        refused = _post(running.url, "schemas", {"tools": ["GMAIL_SEND_EMAIL"]}, token="other")
        served = _post(
            running.url,
            "schemas",
            {"tools": ["GMAIL_SEND_EMAIL"]},
            token="optional-required-bearer",
        )

    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "UNAUTHORIZED"
    assert served.json()["schemas"]["GMAIL_SEND_EMAIL"]["inputSchema"]["required"] == ["to"]


@pytest.mark.subprocess
def test_a_broken_fixture_file_is_an_error_naming_the_file_and_the_key(
    hermes_cli: HermesCli,
) -> None:
    broken = hermes_cli.root / "broken.json"
    broken.write_text(json.dumps({"connectors": [{"slug": "gmail", "tools": [{}]}]}))

    done = hermes_cli.run("connectors", "dev-gateway", "--fixtures", str(broken), ok=False)

    assert done.returncode == 2
    assert f"{broken}: connectors[0].tools[0].slug: expected non-empty text" in done.stderr


@pytest.mark.parametrize(
    ("data", "key", "said"),
    [
        ({}, "connectors", "expected a list of connectors"),
        ({"connectors": [], "tokn": "x"}, "(top level)", "unknown keys ['tokn']"),
        ({"connectors": [{"slug": "a__b"}]}, "connectors[0].slug", "cannot hold '__'"),
        ({"connectors": [{"slug": "a", "connected": "yes"}]}, "connectors[0].connected", "true"),
        ({"connectors": [{"slug": "a"}, {"slug": "a"}]}, "connectors", "given twice"),
        (
            {"connectors": [{"slug": "a", "tools": [{"slug": "X", "input_schema": []}]}]},
            "connectors[0].tools[0].input_schema",
            "expected an object",
        ),
    ],
)
def test_a_fixture_error_names_its_key(data: dict[str, Any], key: str, said: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_fixtures(data, Path("fx.json"))

    assert caught.value.key == key
    assert said in str(caught.value)


def test_any_bearer_token_is_accepted_unless_the_fixture_sets_one(gateway: Gateway) -> None:
    assert _post(gateway.url, "schemas", {"tools": []}, token="whatever").status_code == 200
    assert _post(gateway.url, "schemas", {"tools": []}, token=None).status_code == 401


def test_a_connect_url_is_a_real_url_of_the_same_server_whose_get_connects(
    gateway: Gateway,
) -> None:
    answer = _post(gateway.url, "connections", {"connectors": ["gmail"], "reinitiate": False})
    (link,) = answer.json()["results"]

    opened = Gateway.open(link["connectUrl"])

    assert link["status"] == "initiated"
    assert link["connectUrl"].startswith(gateway.url)
    assert opened.status_code == 200
    assert gateway.connections()["gmail"] == "active"
    again = _post(gateway.url, "connections", {"connectors": ["gmail"], "reinitiate": False})
    assert again.json()["results"] == [{"connector": "gmail", "status": "active"}]


def test_a_repeated_idempotency_key_answers_again_without_running_again(
    start_gateway: Any,
) -> None:
    gateway = start_gateway(fixture(*[dict(app, connected=True) for app in FIXTURE["connectors"]]))
    body = {
        "tools": [
            {"connector": "linear", "tool": "LINEAR_CREATE_ISSUE", "arguments": {"title": "x"}}
        ]
    }
    headers = {"authorization": "Bearer t", "x-idempotency-key": "key-1"}

    first = httpx.post(f"{gateway.url}v1/connectors/execute", json=body, headers=headers)
    second = httpx.post(f"{gateway.url}v1/connectors/execute", json=body, headers=headers)

    assert first.json() == second.json()
    assert first.json()["results"][0]["data"] == {"id": "LIN-1"}
    assert [request.get("replayed", False) for request in gateway.requests("execute")] == [
        False,
        True,
    ]


def test_search_answers_membership_in_fixture_order(gateway: Gateway) -> None:
    answer = _post(gateway.url, "search", {"queries": [{"useCase": "archive labels"}]})

    (result,) = answer.json()["results"]
    assert result["tools"] == ["GMAIL_LIST_LABELS", "GMAIL_ARCHIVE_EMAIL"]
    assert answer.json()["connections"] == [{"connector": "gmail", "connected": False}]


@pytest.mark.parametrize(
    "fault",
    [
        {"slug": "gmail", "fault": "explode"},
        {"fault": "delay"},
        {"slug": "LINEAR_CREATE_ISSUE", "fault": "prefixed_not_found", "extra": 1},
        {"slug": "nobody", "fault": "expired"},
    ],
)
def test_a_fault_that_cannot_apply_is_refused(gateway: Gateway, fault: dict[str, Any]) -> None:
    answer = httpx.post(f"{gateway.url}_dev/faults", json=fault)

    if fault.get("extra"):  # a known fault on a real tool slug: accepted
        assert answer.status_code == 200
    else:
        assert answer.status_code == 400
        assert answer.json()["error"]["code"] == "BAD_REQUEST"


def test_an_unknown_route_is_a_404_with_an_error_body(gateway: Gateway) -> None:
    answer = httpx.get(f"{gateway.url}v2/anything")

    assert answer.status_code == 404
    assert answer.json()["error"]["code"] == "NOT_FOUND"
