"""``prepare_tool``: what a tool whose schema cannot be checked is told."""

from __future__ import annotations

import logging

import pytest

from hermes_core._call_shape import prepare_tool
from hermes_core._tools import Tool

BROKEN = {"type": "object", "properties": {"x": {"type": "strng"}}}


def test_a_tool_made_in_code_with_a_broken_schema_is_named_without_a_plugin(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # An embedding host's own tool: no plugin to name ("of plugin ''" before).
    with caplog.at_level(logging.WARNING):
        prepare_tool(Tool("mine", "Mine.", BROKEN, handler=lambda x: x))
    (message,) = [record.getMessage() for record in caplog.records]
    assert message.startswith(
        "tool 'mine': its parameters are not a valid JSON Schema, so its arguments are not checked"
    ), message
