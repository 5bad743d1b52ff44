"""Calling a catalog-only tool (listed by ``tools.catalogs``, nothing to run it) with the real
``hermes``: whatever the arguments, the answer is that it cannot be run, before any argument is
judged (a user fixing the arguments would only meet that answer next)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_core.testing import HermesCli

pytestmark = pytest.mark.subprocess

MEETING = {
    "name": "zoom_create_meeting",
    "description": "Create a Zoom meeting.",
    "input_schema": {
        "type": "object",
        "properties": {"topic": {"type": "string"}},
        "required": ["topic"],
        "additionalProperties": False,
    },
}


@pytest.mark.parametrize("arguments", ['{"topic": "standup"}', "{}", '{"topic": 3, "bogus": true}'])
def test_a_catalog_tool_called_with_any_arguments_answers_catalog_only(
    hermes_cli: HermesCli, tmp_path: Path, arguments: str
) -> None:
    catalog = tmp_path / "catalog.json"
    catalog.write_text(json.dumps([MEETING]), encoding="utf-8")
    hermes_cli.config.write_text(f"tools:\n  catalogs:\n    - path: {catalog}\n", "utf-8")

    done = hermes_cli.run("tools", "call", "zoom_create_meeting", arguments, "--json", ok=False)

    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert result["error_code"] == "CATALOG_ONLY", result
    assert "catalog-only tool" in result["content"][0]["text"]
    assert "Invalid arguments" not in done.stdout
