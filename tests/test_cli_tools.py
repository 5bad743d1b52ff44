"""``hermes tools ...`` as a user runs it: real subprocesses, a temporary home."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest

CONFIG_WITH_COMMENTS = """\
# my hermes settings
approvals:
  policy: annotations   # ask for destructive tools
  allow: []             # globs that never ask

# plugins I use
plugins:
  enabled: []
"""


@pytest.fixture
def home(tmp_path: Path) -> Path:
    made = tmp_path / "home"
    made.mkdir()
    (tmp_path / "work").mkdir()
    return made


def _env(home: Path) -> dict[str, str]:
    variables = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("HERMES_") and key not in {"PYTEST_ADDOPTS"}
    }
    variables.update(
        HERMES_HOME=str(home),
        HERMES_LOG_DIR=str(home.parent / "logs"),
        HERMES_CACHE_DIR=str(home.parent / "cache"),
        HERMES_STRICT_PLUGINS="1",
    )
    return variables


def hermes(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hermes_core", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=_env(home),
        cwd=home.parent / "work",
        timeout=60,
        check=False,
    )


def _json(done: subprocess.CompletedProcess[str]) -> Any:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_tools_list_json_has_the_documented_keys(home: Path) -> None:
    rows = _json(hermes(home, "tools", "list", "--json"))
    by_name = {row["name"]: row for row in rows}
    assert set(rows[0]) == {"name", "toolset", "source", "deferrable", "annotations", "description"}
    assert by_name["read_file"]["deferrable"] is False
    assert by_name["todo_list"]["deferrable"] is True
    assert by_name["read_file"]["annotations"]["read_only"] is True


def test_tools_assemble_json_has_the_documented_keys(home: Path) -> None:
    result = _json(hermes(home, "tools", "assemble", "--context-length", "200000", "--json"))
    assert set(result) == {
        "tier",
        "listing_form",
        "budget_tokens",
        "listing_tokens",
        "visible_count",
        "deferred_count",
        "tools",
        "tokens_saved",
    }
    names = [tool["name"] for tool in result["tools"]]
    assert "tool_search" in names
    assert "todo_list" not in names
    assert set(result["tools"][0]) == {"name", "description", "parameters"}


@pytest.mark.parametrize(
    ("style", "shape"),
    [("openai", {"type", "function"}), ("anthropic", {"name", "description", "input_schema"})],
)
def test_tools_assemble_renders_provider_formats(home: Path, style: str, shape: set[str]) -> None:
    result = _json(hermes(home, "tools", "assemble", "--format", style, "--json"))
    assert set(result["tools"][0]) == shape


def test_tools_search_json_prints_exactly_the_bridge_result(home: Path) -> None:
    result = _json(hermes(home, "tools", "search", "todo list", "--json"))
    assert result["queries"] == ["todo list"]
    assert result["results"][0]["matches"][0] == "todo_list"
    assert result["tools"]["todo_list"]["source"] == "builtin"


def test_tools_search_table_names_the_match(home: Path) -> None:
    done = hermes(home, "tools", "search", "background process")
    assert done.returncode == 0, done.stderr
    assert "process_manage" in done.stdout


def test_tools_describe_json_and_call_it_directly(home: Path) -> None:
    result = _json(hermes(home, "tools", "describe", "todo_list", "read_file", "--json"))
    assert "todos" in result["tools"]["todo_list"]["parameters"]["properties"]
    assert "call it directly" in result["errors"]["read_file"]


def test_tools_call_routes_a_deferred_tool_through_tool_call(home: Path) -> None:
    todos = {"todos": [{"id": "1", "content": "write docs", "status": "pending"}]}
    done = hermes(home, "tools", "call", "todo_list", json.dumps(todos))
    assert done.returncode == 0, done.stderr
    assert "write docs" in done.stdout
    log = home.parent / "logs" / "activity.jsonl"
    names = [json.loads(line)["name"] for line in log.read_text().splitlines()]
    assert names == ["todo_list"]


def test_tools_call_without_a_terminal_denies_and_the_command_does_not_run(home: Path) -> None:
    marker = home.parent / "work" / "ran"
    done = hermes(home, "tools", "call", "terminal", json.dumps({"command": f"touch {marker}"}))
    assert done.returncode == 1
    assert "terminal" in done.stderr
    assert "approvals.allow" in done.stderr
    assert not marker.exists()


def test_tools_call_yes_approves_this_one_call(home: Path) -> None:
    marker = home.parent / "work" / "ran"
    done = hermes(
        home, "tools", "call", "--yes", "terminal", json.dumps({"command": f"touch {marker}"})
    )
    assert done.returncode == 0, done.stderr
    assert marker.exists()


def test_tools_call_with_bad_json_is_a_usage_error(home: Path) -> None:
    done = hermes(home, "tools", "call", "read_file", "{not json")
    assert done.returncode == 2
    assert "ARGS_JSON" in done.stderr


def test_interactive_always_writes_approvals_allow_keeping_comments(home: Path) -> None:
    config = home / "config.yaml"
    config.write_text(CONFIG_WITH_COMMENTS)
    work = home.parent / "work"
    first = work / "first"

    child = pexpect.spawn(
        sys.executable,
        [
            "-m",
            "hermes_core",
            "tools",
            "call",
            "terminal",
            json.dumps({"command": f"touch {first}"}),
        ],
        env=_env(home),
        cwd=str(work),
        encoding="utf-8",
        timeout=30,
    )
    child.expect(r"\[o\]nce")
    child.sendline("always")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert first.exists()

    text = config.read_text()
    assert "# my hermes settings" in text
    assert "# ask for destructive tools" in text
    assert "# plugins I use" in text
    assert "terminal:touch" in text

    first.unlink()
    # No terminal and no --yes: only the remembered "always" can let this through.
    done = hermes(home, "tools", "call", "terminal", json.dumps({"command": f"touch {first}"}))
    assert done.returncode == 0, done.stderr
    assert first.exists()
