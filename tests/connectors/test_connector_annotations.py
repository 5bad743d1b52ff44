"""Connector tools carry the gateway's annotations (issue 28, point 5).

The reference gateway serves each fixture tool's ``annotations`` (MCP's ``readOnlyHint``,
``destructiveHint``, ``idempotentHint``, ``openWorldHint``) in its schemas; hermes reads them,
so the default ``annotations`` approval policy lets a read-only search run where nobody can be
asked (``hermes serve``), still refuses a destructive tool, and keeps MCP's safe defaults for a
tool the gateway states nothing about. ``manage_connections`` with action ``status`` is a read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from gateways import Gateway, connector_host, fixture, matches, payload
from mcp import Client, StdioServerParameters

from hermes_core._paths import Environment
from hermes_core.connectors._signin import save_token
from hermes_core.testing._cli_in_process import InProcessCli

NOTES = {
    "slug": "notes",
    "name": "Notes",
    "connected": True,
    "tools": [
        {
            "slug": "NOTES_SEARCH",
            "description": "Search the user's notes",
            "annotations": {"readOnlyHint": True, "openWorldHint": True},
            "result": {"notes": ["groceries"]},
        },
        {
            "slug": "NOTES_DELETE",
            "description": "Delete a note of the user",
            "annotations": {"destructiveHint": True, "idempotentHint": True},
            "result": {"deleted": True},
        },
        {
            "slug": "NOTES_ARCHIVE",
            "description": "Archive a note of the user",
            "result": {"archived": True},
        },
        {
            "slug": "NOTES_TAG",
            "description": "Tag a note of the user",
            "annotations": {"destructiveHint": False, "openWorldHint": False},
            "result": {"tagged": True},
        },
    ],
}
pytestmark = pytest.mark.anyio
BUNDLED = ["approvals", "bm25", "code_execution", "files", "skills", "terminal", "todo"]


def test_the_reference_gateway_serves_the_fixture_annotations() -> None:
    with Gateway(fixture(NOTES)) as served:
        answer = httpx.post(
            served.url + "v1/connectors/schemas",
            json={"tools": ["NOTES_SEARCH", "NOTES_ARCHIVE"]},
            headers={"Authorization": "Bearer t"},
        ).json()
    assert answer["schemas"]["NOTES_SEARCH"]["annotations"] == {
        "readOnlyHint": True,
        "openWorldHint": True,
    }
    assert "annotations" not in answer["schemas"]["NOTES_ARCHIVE"]


async def test_a_searched_connector_tool_carries_the_gateway_hints(tmp_path: Path) -> None:
    with Gateway(fixture(NOTES)) as served:
        async with connector_host(tmp_path, served.url) as host:
            session = host.new_session()
            found = payload(await host.dispatch("tool_search", {"queries": ["notes"]}, session))
            assert "connectors__notes__SEARCH" in matches(found), found
            search = host.connectors
            hints = search.tool("connectors__notes__SEARCH").annotations
            # destructiveHint unstated keeps MCP's default (it means nothing for a read-only tool)
            assert (hints.read_only, hints.open_world) == (True, True)
            hints = search.tool("connectors__notes__DELETE").annotations
            assert (hints.destructive, hints.idempotent, hints.read_only) == (True, True, False)
            # Nothing stated: MCP's defaults, destructive and open world.
            hints = search.tool("connectors__notes__ARCHIVE").annotations
            assert (hints.read_only, hints.destructive, hints.open_world) == (False, True, True)


async def test_the_approval_text_says_which_hints_the_gateway_stated(tmp_path: Path) -> None:
    """Through the default policy with nobody to ask, each refusal says why, truthfully."""
    with Gateway(fixture(NOTES)) as served:
        async with connector_host(
            tmp_path, served.url, approvals={"policy": "annotations"}
        ) as host:
            session = host.new_session()
            await host.dispatch("tool_search", {"queries": ["notes"]}, session)

            async def call(name: str) -> Any:
                return await host.dispatch(
                    "tool_call", {"name": f"connectors__notes__{name}", "arguments": {}}, session
                )

            searched = await call("SEARCH")
            assert searched.is_error is False, searched.text_content
            assert json.loads(searched.text_content) == {"notes": ["groceries"]}
            tagged = await call("TAG")
            assert tagged.is_error is False, tagged.text_content

            deleted = await call("DELETE")
            assert deleted.is_error, deleted.text_content
            assert "connectors__notes__DELETE may change or delete things" in deleted.text_content
            assert "the connector gateway marks it destructive" in deleted.text_content

            archived = await call("ARCHIVE")
            assert archived.is_error, archived.text_content
            assert "the connector gateway states no hints" in archived.text_content
            assert "counted as destructive" in archived.text_content


def _serve(tmp_path: Path, url: str) -> StdioServerParameters:
    cli = InProcessCli(tmp_path, config_file=tmp_path / "config.yaml")
    save_token(Environment(home=cli.home, cwd=cli.work), "a-token")
    config = {"plugins": {"enabled": BUNDLED}, "tools": {"connectors": {"url": url}}}
    cli.config.write_text(json.dumps(config), encoding="utf-8")
    command = cli.command("serve")
    return StdioServerParameters(
        command=command[0], args=command[1:], env=cli.variables(), cwd=cli.work
    )


@pytest.mark.subprocess
def test_through_serve_a_read_only_search_runs_and_a_destructive_tool_is_refused(
    tmp_path: Path,
) -> None:
    """``hermes serve`` (stdio, a real MCP SDK client that cannot be asked), the default
    approval policy and ``approvals.non_interactive: deny``."""
    with Gateway(fixture(NOTES)) as served:
        parameters = _serve(tmp_path, served.url)

        async def main() -> dict[str, Any]:
            async with Client(parameters, mode="legacy") as client:
                answers: dict[str, Any] = {}
                answers["search"] = await client.call_tool("tool_search", {"queries": ["notes"]})
                for slug in ("SEARCH", "DELETE"):
                    answers[slug] = await client.call_tool(
                        "tool_call", {"name": f"connectors__notes__{slug}", "arguments": {}}
                    )
                answers["status"] = await client.call_tool(
                    "manage_connections", {"action": "status"}
                )
                answers["connect"] = await client.call_tool(
                    "manage_connections", {"action": "connect", "connectors": ["notes"]}
                )
                return answers

        answers = anyio.run(main)
        executed = [r["body"] for r in served.requests("execute")]

    text = {key: answer.content[0].text for key, answer in answers.items()}
    assert answers["SEARCH"].is_error is False, text["SEARCH"]
    assert json.loads(text["SEARCH"]) == {"notes": ["groceries"]}
    assert answers["DELETE"].is_error is True
    assert "connectors__notes__DELETE needs approval" in text["DELETE"]
    assert [call["tools"][0]["tool"] for call in executed] == ["NOTES_SEARCH"]
    assert answers["status"].is_error is False, text["status"]
    status = json.loads(text["status"])
    assert status["connectors"]["status"] == "available", status
    assert {"name": "notes", "connected": True, "state": "active"} in status["connectors"]["items"]
    # connect may install or start things: it still needs approval.
    assert answers["connect"].is_error is True
    assert "manage_connections needs approval" in text["connect"]


async def test_a_tool_called_before_its_description_asks_and_says_to_describe_it(
    tmp_path: Path,
) -> None:
    """hermes knows a connector tool's hints from the gateway's answers; before any, it says
    so (rather than claiming the gateway stated none), and after ``tool_describe`` the
    read-only tool runs."""
    with Gateway(fixture(NOTES)) as served:
        async with connector_host(
            tmp_path, served.url, approvals={"policy": "annotations"}
        ) as host:
            session = host.new_session()
            call = {"name": "connectors__notes__SEARCH", "arguments": {}}
            first = await host.dispatch("tool_call", call, session)
            assert first.is_error, first.text_content
            assert "has not described it to hermes yet" in first.text_content
            assert "tool_describe it first" in first.text_content
            assert served.requests("execute") == []

            await host.dispatch("tool_describe", {"names": ["connectors__notes__SEARCH"]}, session)
            second = await host.dispatch("tool_call", call, session)
            assert second.is_error is False, second.text_content
            assert json.loads(second.text_content) == {"notes": ["groceries"]}


async def test_a_hint_that_is_not_a_boolean_is_not_stated(tmp_path: Path) -> None:
    """``"readOnlyHint": "true"`` (text) is not read as true: the tool keeps MCP's defaults and
    the approval text says the gateway stated no hints."""
    app = {
        "slug": "notes",
        "connected": True,
        "tools": [{"slug": "NOTES_WIPE", "annotations": {"readOnlyHint": "true"}}],
    }
    with Gateway(fixture(app)) as served:
        async with connector_host(
            tmp_path, served.url, approvals={"policy": "annotations"}
        ) as host:
            session = host.new_session()
            name = "connectors__notes__WIPE"
            await host.dispatch("tool_describe", {"names": [name]}, session)
            assert host.connectors.tool(name).annotations.read_only is False
            result = await host.dispatch("tool_call", {"name": name, "arguments": {}}, session)
            assert result.is_error, result.text_content
            assert "the connector gateway states no hints" in result.text_content
            assert served.requests("execute") == []
