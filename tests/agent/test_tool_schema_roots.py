"""A tool whose input schema has ``anyOf``, ``oneOf`` or ``allOf`` at its top level (Notion's,
GitLab's and Cloudflare's MCP servers list such tools: "give ``content`` or ``source_url``")
is refused by Anthropic's API, and with it every request that carries it: the whole
conversation. Such a tool, sent as itself (``always_visible``, or with the tool search off),
goes to every model as one object of all its branches' properties, the choice said in its
description; the tool still checks the real schema when it is called."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from hermes_core._schema_roots import sendable
from hermes_core.testing import FakeModelServer, FakeToolCall, FakeTurn
from hermes_core.testing._cli_in_process import InProcessCli
from hermes_core.testing._fake_refusals import refusal

pytestmark = pytest.mark.subprocess

BADTOOLS = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "badtools.py"
FIND = {
    "name": "find_page",
    "description": "Find a page of a space.",
    "annotations": {"readOnlyHint": True},
    "inputSchema": {
        "type": "object",
        "properties": {"space": {"type": "string"}},
        "required": ["space"],
        "anyOf": [
            {"properties": {"title": {"type": "string"}}, "required": ["title"]},
            {"properties": {"page_url": {"type": "string"}}, "required": ["page_url"]},
        ],
    },
}


@pytest.fixture
def cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


def _configure(cli: InProcessCli, server: FakeModelServer, wire: str, tmp: Path) -> dict[str, str]:
    listing = tmp / "listing.json"
    listing.write_text(json.dumps([FIND]), encoding="utf-8")
    base_url = server.openai_base_url if wire == "openai" else server.anthropic_base_url
    config = {
        "model": {"provider": wire, "model": "fake-model", "base_url": base_url},
        "mcp_servers": {
            "notes": {"command": sys.executable, "args": [str(BADTOOLS), str(listing)]}
        },
        "tools": {"tool_search": {"always_visible": ["mcp__notes__*"]}},
    }
    cli.config.write_text(json.dumps(config), encoding="utf-8")
    key = "OPENAI_API_KEY" if wire == "openai" else "ANTHROPIC_API_KEY"
    return cli.variables(**{key: "sk-fake-key-for-tests"})


def _sent_schema(body: dict[str, Any], wire: str) -> tuple[str, dict[str, Any]]:
    """The find_page tool's description and schema as ``body`` sent them."""
    for tool in body["tools"]:
        if wire == "anthropic" and tool["name"] == "mcp__notes__find_page":
            return tool["description"], tool["input_schema"]
        function = tool.get("function", {})
        if function.get("name") == "mcp__notes__find_page":
            return function["description"], function["parameters"]
    raise AssertionError(f"the tool was not sent: {body['tools']}")


@pytest.mark.parametrize("wire", ["anthropic", "openai"])
def test_a_tool_with_a_top_level_any_of_is_sent_as_one_object_and_called(
    cli: InProcessCli, tmp_path: Path, wire: str
) -> None:
    turns = [
        FakeTurn(
            tool_calls=[FakeToolCall("mcp__notes__find_page", {"space": "eng", "title": "Runbook"})]
        ),
        FakeTurn(text="Found it."),
    ]
    with FakeModelServer(turns) as server:
        env = _configure(cli, server, wire, tmp_path)
        done = cli.subprocess_run("run", "Find the Runbook page in eng.", env=env)
        requests = server.requests

    assert done.returncode == 0, done.stderr
    assert "Found it." in done.stdout
    assert "<- ok" in done.stderr
    description, schema = _sent_schema(requests[0].body, wire)
    assert not {"anyOf", "oneOf", "allOf"} & set(schema)
    assert schema["type"] == "object"
    assert set(schema["properties"]) == {"space", "title", "page_url"}
    assert schema["required"] == ["space"]
    assert description.startswith("Find a page of a space.")
    assert "`title`" in description
    assert "`page_url`" in description
    # the tool's result reached the model
    assert "called find_page" in json.dumps(requests[1].messages)


def test_all_of_parts_are_merged_and_a_one_of_is_said_in_the_description() -> None:
    parameters = {
        "type": "object",
        "allOf": [
            {"properties": {"space": {"type": "string"}}, "required": ["space"]},
            {"properties": {"limit": {"type": "integer"}}},
        ],
        "oneOf": [
            {"required": ["title"], "properties": {"title": {"type": "string"}}},
            {"required": ["id", "version"]},
            "junk",
        ],
        "$defs": {"kept": {"type": "string"}},
    }
    description, schema = sendable("Find a page.", parameters)

    assert schema == {
        "type": "object",
        "$defs": {"kept": {"type": "string"}},
        "properties": {
            "space": {"type": "string"},
            "limit": {"type": "integer"},
            "title": {"type": "string"},
        },
        "required": ["space"],
    }
    assert description == "Find a page.\n\nGive exactly one of: `title`; `id` and `version`."
    assert "allOf" in parameters  # the tool's own schema is left as it was


def test_a_schema_without_a_top_level_choice_is_sent_as_it_is() -> None:
    nested = {"type": "object", "properties": {"x": {"anyOf": [{"type": "string"}, {}]}}}
    assert sendable("Do it.", nested) == ("Do it.", nested)


def test_a_schema_without_its_object_type_is_sent_with_it() -> None:
    """OpenAI refuses a function whose parameters do not say ``"type": "object"`` ("schema must
    be a JSON Schema of 'type: "object"', got 'type: "None"'"), Anthropic one without a type: a
    plugin tool written ``{"properties": {...}}``, valid JSON Schema, had every request
    refused."""
    loose = {"properties": {"path": {"type": "string"}}, "required": ["path"]}
    assert sendable("Read.", loose) == ("Read.", {"type": "object", **loose})
    assert sendable("Now.", {}) == ("Now.", {"type": "object", "properties": {}})


def test_a_schema_whose_type_is_a_list_with_object_is_sent_as_an_object() -> None:
    """A plugin's schema that may be an object or null (a ``Model | None``, zod's
    ``.nullable()``): ``"type": ["object", "null"]`` is valid JSON Schema, but both APIs take a
    tool's input only as ``"type": "object"`` and refuse every request carrying it otherwise,
    and an MCP client of ``hermes serve`` skips the tool ("inputSchema.type: input should be
    'object'")."""
    nullable = {"type": ["null", "object"], "properties": {"path": {"type": "string"}}}
    assert sendable("Read.", nullable) == ("Read.", {**nullable, "type": "object"})
    chosen = {"type": ["object", "null"], "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}
    assert sendable("Pick.", chosen)[1]["type"] == "object"


def test_branches_given_by_ref_or_by_all_of_are_folded_with_their_properties() -> None:
    """A plugin's union model (pydantic's ``RootModel[ByTitle | ByUrl]``: ``oneOf`` of
    ``$ref`` branches) and a generated schema's ``allOf`` of a ``$ref`` base: the properties
    live where the references lead; sent without them, the model saw an object of no
    properties, nothing to call the tool with."""
    parameters = {
        "oneOf": [{"$ref": "#/$defs/ByTitle"}, {"$ref": "#/definitions/ByUrl"}],
        "allOf": [{"$ref": "#/$defs/Base"}, {"$ref": "https://example.com/remote.json"}],
        "$defs": {
            "Base": {"properties": {"space": {"type": "string"}}, "required": ["space"]},
            "ByTitle": {"properties": {"title": {"type": "string"}}, "required": ["title"]},
        },
        "definitions": {
            "ByUrl": {"allOf": [{"properties": {"url": {"type": "string"}}, "required": ["url"]}]}
        },
    }
    description, schema = sendable("Find a page.", parameters)

    assert schema["properties"] == {
        "space": {"type": "string"},
        "title": {"type": "string"},
        "url": {"type": "string"},
    }
    assert schema["required"] == ["space"]
    assert description == "Find a page.\n\nGive exactly one of: `title`; `url`."


def test_a_choice_inside_an_all_of_part_is_folded_and_said_too() -> None:
    """``allOf`` of a base and a choice (``{"allOf": [{"$ref": Base}, {"anyOf": [...]}]}``, as
    schemas generated from OpenAPI write it): the choice's properties were lost."""
    parameters = {
        "type": "object",
        "allOf": [
            {"properties": {"zone": {"type": "string"}}, "required": ["zone"]},
            {
                "anyOf": [
                    {"properties": {"name": {"type": "string"}}, "required": ["name"]},
                    {"properties": {"id": {"type": "string"}}, "required": ["id"]},
                ]
            },
        ],
    }
    description, schema = sendable("Find a record.", parameters)

    assert set(schema["properties"]) == {"zone", "name", "id"}
    assert schema["required"] == ["zone"]
    assert description == "Find a record.\n\nGive at least one of: `name`; `id`."


def test_a_top_level_not_is_folded_and_said_in_the_description() -> None:
    """OpenAI refuses a function whose parameters have ``not`` at the top level ("schema must
    have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top level"), as
    MCP servers write "give one of these, not both" with it: every request was refused."""
    both = {"required": ["title", "page_url"]}
    parameters = {"type": "object", "properties": {"title": {}, "page_url": {}}, "not": both}
    description, schema = sendable("Find a page.", parameters)

    assert schema == {"type": "object", "properties": {"title": {}, "page_url": {}}}
    assert description == "Find a page.\n\nDo not give `title` and `page_url` together."
    none = {"not": {"anyOf": [{"required": ["draft"]}, {"required": ["deleted"]}]}}
    assert sendable("List.", none) == (
        "List.\n\nGive none of: `draft`; `deleted`.",
        {"type": "object", "properties": {}},
    )


def test_a_not_of_other_rules_is_said_as_its_schema() -> None:
    """``not`` of a value (``mode`` must not be ``"raw"``) is no list of names: said as the
    schema it is, which the model reads, rather than wrongly as "do not give `mode`"."""
    raw = {"properties": {"mode": {"const": "raw"}}, "required": ["mode"]}
    description, schema = sendable("Read.", {"type": "object", "not": raw})

    assert schema == {"type": "object", "properties": {}}
    assert description == (
        'Read.\n\nThe arguments must not match the JSON schema {"properties": {"mode": '
        '{"const": "raw"}}, "required": ["mode"]}.'
    )


def test_a_not_inside_an_all_of_part_is_said_too() -> None:
    parameters = {
        "type": "object",
        "allOf": [
            {"properties": {"a": {}, "b": {}}},
            {"not": {"required": ["a", "b"]}},
        ],
    }
    description, schema = sendable("Pick.", parameters)

    assert schema == {"type": "object", "properties": {"a": {}, "b": {}}}
    assert description == "Pick.\n\nDo not give `a` and `b` together."


def test_a_top_level_if_then_else_is_sent_as_it_is() -> None:
    """Both APIs take ``if``/``then``/``else`` at the top level: OpenAI's refusal names only
    oneOf, anyOf, allOf, enum and not, Anthropic's only the first three (MCP servers move
    their rules to it for that: kenn-io/kata#365)."""
    conditional = {
        "type": "object",
        "properties": {"kind": {"type": "string"}, "url": {"type": "string"}},
        "if": {"properties": {"kind": {"const": "link"}}},
        "then": {"required": ["url"]},
        "else": {"not": {"required": ["url"]}},
    }
    assert sendable("Add.", conditional) == ("Add.", conditional)


def test_the_fake_server_refuses_a_top_level_not_or_choice_as_openai_does() -> None:
    def body(**schema: Any) -> dict[str, Any]:
        function = {"name": "find", "parameters": {"type": "object", **schema}}
        return {"messages": [], "tools": [{"type": "function", "function": function}]}

    said = (
        "Invalid schema for function 'find': schema must have type 'object' and not have "
        "'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top level."
    )
    for key in ("oneOf", "anyOf", "allOf", "enum", "not"):
        value: Any = {"required": ["a"]} if key == "not" else [{"required": ["a"]}]
        assert refusal("openai", body(**{key: value})) == said
    assert refusal("openai", body(**{"if": {}, "then": {}})) is None


def test_an_if_then_inside_a_top_level_all_of_part_is_said_in_the_description() -> None:
    """A tool keeping one rule per value in a top-level ``allOf`` of ``if``/``then`` parts (as
    agent kernels write "action depends on object"): folding the ``allOf`` dropped the rules
    unsaid, so the model learnt them only from the tool's refusals."""
    pad = {"properties": {"object": {"const": "pad"}}}
    parameters = {
        "type": "object",
        "properties": {"object": {"type": "string"}, "action": {"type": "string"}},
        "allOf": [
            {"if": pad, "then": {"properties": {"action": {"enum": ["edit", "load"]}}}},
            {"if": {"required": ["a"]}, "then": {"required": ["b"]}, "else": {"required": ["c"]}},
        ],
    }
    description, schema = sendable("Act.", parameters)

    assert schema == {
        "type": "object",
        "properties": {"object": {"type": "string"}, "action": {"type": "string"}},
    }
    assert description == (
        'Act.\n\nIf the arguments match the JSON schema {"properties": {"object": {"const": '
        '"pad"}}}, they must match {"properties": {"action": {"enum": ["edit", "load"]}}}. If '
        'the arguments match the JSON schema {"required": ["a"]}, they must match {"required": '
        '["b"]}; else {"required": ["c"]}.'
    )
