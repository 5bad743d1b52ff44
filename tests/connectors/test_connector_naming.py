"""Connector tool names: ``connectors__<connector>__<tool>`` from gateway slugs and back."""

from __future__ import annotations

import pytest

from hermes_core.connectors._naming import (
    GatewaySlugs,
    Twin,
    gateway_slugs,
    resolve_twins,
    split_connector_name,
    tool_name,
)


@pytest.mark.parametrize(
    ("connector", "slug", "name"),
    [
        ("gmail", "GMAIL_SEND_EMAIL", "connectors__gmail__SEND_EMAIL"),
        ("Gmail", "GMAIL_SEND_EMAIL", "connectors__gmail__SEND_EMAIL"),
        ("gmail", "SEND_EMAIL", "connectors__gmail__SEND_EMAIL"),
        ("gmail", "GMAIL_", "connectors__gmail__GMAIL_"),
        ("linear", "GMAIL_SEND_EMAIL", "connectors__linear__GMAIL_SEND_EMAIL"),
        ("google-drive", "GOOGLE-DRIVE_LIST", "connectors__google-drive__LIST"),
    ],
)
def test_the_model_name_is_the_connector_lowercased_and_the_slug_minus_its_prefix(
    connector: str, slug: str, name: str
) -> None:
    assert tool_name(connector, slug) == name


@pytest.mark.parametrize(
    ("connector", "slug"),
    [("gmail", "GMAIL_SEND.EMAIL"), ("g__mail", "SEND"), ("gmail_", "SEND"), ("gmail", "X" * 60)],
)
def test_a_slug_that_makes_no_valid_tool_name_has_no_name(connector: str, slug: str) -> None:
    assert tool_name(connector, slug) is None


@pytest.mark.parametrize(
    ("name", "parts"),
    [
        ("connectors__gmail__SEND_EMAIL", ("gmail", "SEND_EMAIL")),
        ("connectors__gmail__A__B", ("gmail", "A__B")),
        ("connectors__gmail__", None),
        ("connectors____SEND", None),
        ("connectors__gmail", None),
        ("mcp__gmail__SEND", None),
    ],
)
def test_a_name_parses_into_exactly_three_non_empty_parts(
    name: str, parts: tuple[str, str] | None
) -> None:
    assert split_connector_name(name) == parts


def test_a_call_sends_the_prefixed_slug_first_then_the_literal_one() -> None:
    assert gateway_slugs("connectors__gmail__SEND_EMAIL") == GatewaySlugs(
        "gmail", "GMAIL_SEND_EMAIL", "SEND_EMAIL"
    )
    assert gateway_slugs("tool_search") is None


def test_of_twins_the_prefixed_slug_is_kept_whichever_comes_first() -> None:
    for order in ([("gmail", "X"), ("gmail", "GMAIL_X")], [("gmail", "GMAIL_X"), ("gmail", "X")]):
        named, twins = resolve_twins(order)
        assert named == {"connectors__gmail__X": ("gmail", "GMAIL_X")}
        assert twins == [Twin("connectors__gmail__X", "GMAIL_X", "X")]


def test_the_same_slug_twice_is_no_twin() -> None:
    named, twins = resolve_twins([("gmail", "GMAIL_X"), ("gmail", "GMAIL_X")])
    assert list(named) == ["connectors__gmail__X"]
    assert twins == []
