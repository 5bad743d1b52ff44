"""``hermes tools ...`` as a user runs it: real subprocesses, a temporary home."""

from __future__ import annotations

import json

import pexpect
import pytest

from hermes_core.testing import HermesCli

CONFIG_WITH_COMMENTS = """\
# my hermes settings
approvals:
  policy: annotations   # ask for destructive tools
  allow: []             # globs that never ask

# plugins I use
plugins:
  enabled: []
"""


def test_tools_list_json_has_the_documented_keys(hermes_cli: HermesCli) -> None:
    rows = hermes_cli.json("tools", "list", "--json")
    by_name = {row["name"]: row for row in rows}
    assert set(rows[0]) == {"name", "toolset", "source", "deferrable", "annotations", "description"}
    assert by_name["read_file"]["deferrable"] is False
    assert by_name["todo_list"]["deferrable"] is True
    assert by_name["read_file"]["annotations"]["read_only"] is True


def test_tools_assemble_json_has_the_documented_keys(hermes_cli: HermesCli) -> None:
    result = hermes_cli.json("tools", "assemble", "--context-length", "200000", "--json")
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
def test_tools_assemble_renders_provider_formats(
    hermes_cli: HermesCli, style: str, shape: set[str]
) -> None:
    result = hermes_cli.json("tools", "assemble", "--format", style, "--json")
    assert set(result["tools"][0]) == shape


def test_tools_search_json_prints_exactly_the_bridge_result(hermes_cli: HermesCli) -> None:
    result = hermes_cli.json("tools", "search", "todo list", "--json")
    assert result["queries"] == ["todo list"]
    assert result["results"][0]["matches"][0] == "todo_list"
    assert result["tools"]["todo_list"]["source"] == "builtin"


def test_tools_search_table_names_the_match(hermes_cli: HermesCli) -> None:
    done = hermes_cli.run("tools", "search", "background process")
    assert done.returncode == 0, done.stderr
    assert "process_manage" in done.stdout


def test_tools_describe_json_and_call_it_directly(hermes_cli: HermesCli) -> None:
    result = hermes_cli.json("tools", "describe", "todo_list", "read_file", "--json")
    assert "todos" in result["tools"]["todo_list"]["parameters"]["properties"]
    assert "call it directly" in result["errors"]["read_file"]


def test_tools_call_routes_a_deferred_tool_through_tool_call(hermes_cli: HermesCli) -> None:
    todos = {"todos": [{"id": "1", "content": "write docs", "status": "pending"}]}
    done = hermes_cli.run("tools", "call", "todo_list", json.dumps(todos))
    assert done.returncode == 0, done.stderr
    assert "write docs" in done.stdout
    log = hermes_cli.log_dir / "activity.jsonl"
    names = [json.loads(line)["name"] for line in log.read_text().splitlines()]
    assert names == ["todo_list"]


def test_tools_call_without_a_terminal_denies_and_the_command_does_not_run(
    hermes_cli: HermesCli,
) -> None:
    marker = hermes_cli.work / "ran"
    done = hermes_cli.run(
        "tools", "call", "terminal", json.dumps({"command": f"touch {marker}"}), ok=False
    )
    assert done.returncode == 1
    assert "terminal" in done.stderr
    assert "approvals.allow" in done.stderr
    assert not marker.exists()


def test_tools_call_yes_approves_this_one_call(hermes_cli: HermesCli) -> None:
    marker = hermes_cli.work / "ran"
    done = hermes_cli.run(
        "tools", "call", "--yes", "terminal", json.dumps({"command": f"touch {marker}"})
    )
    assert done.returncode == 0, done.stderr
    assert marker.exists()


def test_tools_call_with_bad_json_is_a_usage_error(hermes_cli: HermesCli) -> None:
    done = hermes_cli.run("tools", "call", "read_file", "{not json", ok=False)
    assert done.returncode == 2
    assert "ARGS_JSON" in done.stderr


def test_tools_call_with_a_lone_surrogate_is_logged_and_ends_without_a_traceback(
    hermes_cli: HermesCli,
) -> None:
    done = hermes_cli.run("tools", "call", "read_file", '{"path": "a\\ud800.txt"}', ok=False)

    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "read_file failed" in done.stderr
    log = hermes_cli.log_dir / "activity.jsonl"
    (record,) = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert record["name"] == "read_file"
    assert record["arguments"] == {"path": "a\ud800.txt"}


def test_interactive_always_writes_approvals_allow_keeping_comments(hermes_cli: HermesCli) -> None:
    config = hermes_cli.config
    config.write_text(CONFIG_WITH_COMMENTS)
    work = hermes_cli.work
    first = work / "first"

    python, *args = hermes_cli.command(
        "tools", "call", "terminal", json.dumps({"command": f"touch {first}"})
    )
    child = pexpect.spawn(
        python,
        args,
        env=hermes_cli.variables(),
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
    done = hermes_cli.run("tools", "call", "terminal", json.dumps({"command": f"touch {first}"}))
    assert done.returncode == 0, done.stderr
    assert first.exists()


def test_an_unknown_backend_is_a_configuration_error_with_exit_status_two(
    hermes_cli: HermesCli,
) -> None:
    hermes_cli.config.write_text("tools:\n  tool_search:\n    backend: nope\n")
    done = hermes_cli.run("tools", "search", "time", ok=False)
    assert done.returncode == 2
    assert "unknown search backend 'nope'" in done.stderr
    assert "valid names: bm25" in done.stderr
