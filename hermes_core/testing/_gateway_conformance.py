"""The rules every connector gateway follows, as checks a gateway author runs against a plugin.

Each rule is a function named after it that takes ``make`` (a function returning a new
:class:`~hermes_core.connectors._gateway.ConnectorGateway` over a fresh account holding the
connectors of :data:`GATEWAY_FIXTURES`) and raises :class:`AssertionError` saying what the
gateway answered instead. They check what the protocol promises hermes-core, route by route:

- ``search`` answers one list of slugs per use case, by position, with the schema of every slug
  found and the connection of every connector involved;
- ``schemas`` answers the schemas of the slugs it knows and names the others ``not_found``;
- ``execute`` answers one result per call, by position: the tool's data, or an error
  (``TOOL_NOT_FOUND`` for a slug it does not serve, ``CONNECTION_REQUIRED`` with a
  ``connect_url`` for an app that is not connected);
- ``connect`` answers one link per connector, by position (``active`` for a connected one, a
  ``connect_url`` to open for one that is not);
- ``list_connectors`` lists the account's connectors and whether each is connected;
- no method raises, and ``failure`` is ``None`` when the gateway answered.

:data:`GATEWAY_FIXTURES` is in the fixture format of the reference gateway
(:class:`~hermes_core.testing.DevGateway`), so a client plugin runs the rules against it and a
gateway service loads the same account. Run them with :func:`connector_gateway_conformance`.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import pytest

from hermes_core.connectors._gateway import ConnectorGateway, ExecuteCall

__all__ = ["GATEWAY_FIXTURES", "GATEWAY_RULES", "MakeGateway", "connector_gateway_conformance"]

MakeGateway = Callable[[], ConnectorGateway]
"""Returns a new gateway over a fresh account of :data:`GATEWAY_FIXTURES`."""

_NOTE_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {"title": {"type": "string"}},
    "required": ["title"],
}

GATEWAY_FIXTURES: Mapping[str, Any] = {
    "connectors": [
        {
            "slug": "notes",
            "name": "Notes",
            "connected": True,
            "tools": [
                {
                    "slug": "NOTES_CREATE_NOTE",
                    "description": "Create a note in the notebook",
                    "input_schema": _NOTE_SCHEMA,
                    "annotations": {"destructiveHint": False},
                    "result": {"id": "note-1"},
                },
                {
                    "slug": "NOTES_LIST_NOTES",
                    "description": "List the notes of the notebook",
                    "annotations": {"readOnlyHint": True},
                    "result": {"notes": []},
                },
            ],
        },
        {
            "slug": "mail",
            "name": "Mail",
            "connected": False,
            "tools": [
                {
                    "slug": "MAIL_SEND_EMAIL",
                    "description": "Send an email message",
                    "result": {"sent": True},
                }
            ],
        },
    ]
}
"""The account every rule expects: ``notes`` (connected) with two tools, ``mail`` (not
connected) with one."""


def _run(make: MakeGateway, check: Callable[[ConnectorGateway], Awaitable[None]]) -> None:
    async def main() -> None:
        gateway = make()
        try:
            await check(gateway)
        finally:
            await gateway.aclose()

    anyio.run(main)


def search_answers_one_list_per_use_case_by_position(make: MakeGateway) -> None:
    """One list of slugs per use case, in the order of the use cases."""

    async def check(gateway: ConnectorGateway) -> None:
        answer = await gateway.search(["create a note", "send an email", "xqzzy"])
        assert answer.failure is None, f"search failed: {answer.failure}"
        assert len(answer.results) == 3, f"{len(answer.results)} result lists for 3 use cases"
        assert "NOTES_CREATE_NOTE" in answer.results[0], f"found {list(answer.results[0])}"
        assert "MAIL_SEND_EMAIL" in answer.results[1], f"found {list(answer.results[1])}"
        assert list(answer.results[2]) == [], f"found {list(answer.results[2])} for nonsense"

    _run(make, check)


def every_slug_found_comes_with_its_schema_and_connection(make: MakeGateway) -> None:
    """Each slug a search finds has its schema, and each connector involved its connection."""

    async def check(gateway: ConnectorGateway) -> None:
        answer = await gateway.search(["create a note", "send an email"])
        found = {slug for slugs in answer.results for slug in slugs}
        assert found, "the search found nothing"
        for slug in found:
            schema = answer.schemas.get(slug)
            assert schema is not None, f"no schema for {slug}"
            assert schema.slug == slug, f"the schema of {slug} is {schema.slug}'s"
            assert schema.connector in answer.connections, f"no connection of {schema.connector}"
        assert answer.connections.get("notes") is True, f"notes: {answer.connections}"
        assert answer.connections.get("mail") is False, f"mail: {answer.connections}"

    _run(make, check)


def schemas_answers_the_known_slugs_and_names_the_others(make: MakeGateway) -> None:
    """``schemas`` holds the known slugs (arguments as the fixture has them), ``not_found`` the
    rest."""

    async def check(gateway: ConnectorGateway) -> None:
        answer = await gateway.schemas(["NOTES_CREATE_NOTE", "NOTES_NO_SUCH_TOOL"])
        assert answer.failure is None, f"schemas failed: {answer.failure}"
        assert set(answer.schemas) == {"NOTES_CREATE_NOTE"}, f"schemas of {set(answer.schemas)}"
        schema = answer.schemas["NOTES_CREATE_NOTE"]
        assert schema.connector == "notes", f"connector {schema.connector!r}"
        assert dict(schema.input_schema) == dict(_NOTE_SCHEMA), f"{schema.input_schema}"
        assert list(answer.not_found) == ["NOTES_NO_SUCH_TOOL"], f"{answer.not_found}"

    _run(make, check)


def execute_answers_one_result_per_call_by_position(make: MakeGateway) -> None:
    """The data of a tool that ran, ``TOOL_NOT_FOUND`` and ``CONNECTION_REQUIRED`` (with the
    link that fixes it), each at the position of its call."""

    async def check(gateway: ConnectorGateway) -> None:
        answer = await gateway.execute(
            [
                ExecuteCall("notes", "NOTES_CREATE_NOTE", {"title": "groceries"}),
                ExecuteCall("notes", "NOTES_NO_SUCH_TOOL", {}),
                ExecuteCall("mail", "MAIL_SEND_EMAIL", {"to": "ann@example.org"}),
            ]
        )
        assert answer.failure is None, f"execute failed: {answer.failure}"
        tools = [(result.connector, result.tool) for result in answer.results]
        assert tools == [
            ("notes", "NOTES_CREATE_NOTE"),
            ("notes", "NOTES_NO_SUCH_TOOL"),
            ("mail", "MAIL_SEND_EMAIL"),
        ], f"results for {tools}"
        ran, unknown, unconnected = answer.results
        assert ran.error is None, f"{ran}"
        assert ran.data == {"id": "note-1"}, f"{ran}"
        assert unknown.error is not None, f"{unknown}"
        assert unknown.error.code == "TOOL_NOT_FOUND", f"{unknown}"
        refused = unconnected.error
        assert refused is not None, f"{unconnected}"
        assert refused.code == "CONNECTION_REQUIRED", f"{unconnected}"
        assert refused.connect_url, "CONNECTION_REQUIRED without a connect_url"

    _run(make, check)


def connect_answers_one_link_per_connector_by_position(make: MakeGateway) -> None:
    """``active`` for a connected app, a link to open for one that is not."""

    async def check(gateway: ConnectorGateway) -> None:
        answer = await gateway.connect(["mail", "notes"], False)
        assert answer.failure is None, f"connect failed: {answer.failure}"
        assert [link.connector for link in answer.results] == ["mail", "notes"], f"{answer}"
        mail, notes = answer.results
        assert mail.status == "initiated", f"{mail}"
        assert mail.connect_url, f"{mail}"
        assert notes.status == "active", f"{notes}"

    _run(make, check)


def list_connectors_lists_the_account_with_its_connections(make: MakeGateway) -> None:
    """Every connector of the account, and whether it is connected."""

    async def check(gateway: ConnectorGateway) -> None:
        answer = await gateway.list_connectors()
        assert answer.failure is None, f"list_connectors failed: {answer.failure}"
        connected = {item.connector: item.connected for item in answer.items}
        assert connected == {"notes": True, "mail": False}, f"listed {connected}"

    _run(make, check)


GATEWAY_RULES: tuple[Callable[[MakeGateway], None], ...] = (
    search_answers_one_list_per_use_case_by_position,
    every_slug_found_comes_with_its_schema_and_connection,
    schemas_answers_the_known_slugs_and_names_the_others,
    execute_answers_one_result_per_call_by_position,
    connect_answers_one_link_per_connector_by_position,
    list_connectors_lists_the_account_with_its_connections,
)
"""Every rule, route by route in the order of the protocol."""


def connector_gateway_conformance(make: MakeGateway) -> list[Any]:
    """One ``pytest.param`` per rule of :data:`GATEWAY_RULES` (its id is the rule's name): a
    function of no arguments checking that rule against gateways from ``make``, which returns
    a new gateway over a fresh account of :data:`GATEWAY_FIXTURES` each time::

        @pytest.mark.parametrize(
            "check", connector_gateway_conformance(lambda: make_connector_gateway(url, token))
        )
        def test_my_gateway_follows_the_protocol(check):
            check()
    """
    return [
        pytest.param(functools.partial(rule, make), id=rule.__name__.replace("_", "-"))
        for rule in GATEWAY_RULES
    ]
