"""The smaller items of issue 28 (point 10), each as a user meets it: a schema that promises what
the tool does not deliver, typos answered without a "did you mean", an argument error as a JSON
blob, an interrupted call missing from the activity log, a catalog ``server`` that silently
overrides its entries' servers, ``import-agent`` silent about ``CLAUDE.md``."""

from __future__ import annotations

import json
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from builders import Harness, build_harness

from hermes_core._config.models import CatalogEntry
from hermes_core._errors import ConfigError
from hermes_core._hooks.directories import hook_manifest
from hermes_core._hookspecs import hookimpl
from hermes_core._tools import Tool, ToolAnnotations, ToolResult
from hermes_core.search._catalog import catalog_tools
from hermes_core.testing import HermesCli
from hermes_core.testing._cli_in_process import InProcessCli
from plugins_builtin.files import FileSettings, build_tools


@pytest.fixture
def cli(tmp_path: Path) -> HermesCli:
    return InProcessCli(tmp_path)


def write_config(cli: HermesCli, data: dict[str, Any]) -> None:
    cli.config.write_text(json.dumps(data), encoding="utf-8")  # JSON is YAML


# 1. search_files: the schema's maximum is what the tool returns ---------------------------------


def _max_results(settings: FileSettings) -> dict[str, Any]:
    (search,) = [tool for tool in build_tools(settings) if tool.name == "search_files"]
    schema: dict[str, Any] = search.parameters["properties"]["max_results"]
    return schema


def test_search_files_advertises_the_maximum_it_returns() -> None:
    assert _max_results(FileSettings())["maximum"] == 200
    assert _max_results(FileSettings(max_search_results=1000))["maximum"] == 1000
    small = _max_results(FileSettings(max_search_results=20))
    assert (small["maximum"], small["default"]) == (20, 20)


@pytest.mark.subprocess
def test_search_files_refuses_more_results_than_it_returns(cli: HermesCli) -> None:
    for index in range(250):
        (cli.work / f"f{index:03}.txt").write_text("x\n")

    done = cli.run(
        "tools", "call", "search_files", '{"glob": "*.txt", "max_results": 1000}', ok=False
    )
    assert done.returncode != 0
    assert "INVALID_ARGUMENTS" in done.stderr
    assert "max_results" in done.stderr
    assert "200" in done.stderr

    result = cli.json(
        "tools", "call", "search_files", '{"glob": "*.txt", "max_results": 200}', "--json"
    )
    assert len(result["structured"]["matches"]) == 200
    assert result["structured"]["truncated"] is True


# 2. HOOK.yaml: a mistyped key gets a "did you mean" ----------------------------------------------


@pytest.mark.subprocess
def test_a_mistyped_hook_yaml_key_is_answered_with_the_key_meant() -> None:
    manifest = hook_manifest(
        {"event": "pre_tool_call", "matchs": "terminal", "timeot": 5}, "hooks/guard/HOOK.yaml"
    )
    assert len(manifest.warnings) == 2
    assert "did you mean 'match'" in manifest.warnings[0].lower()
    assert "did you mean 'timeout'" in manifest.warnings[1].lower()


@pytest.mark.subprocess
def test_hooks_list_shows_the_did_you_mean(cli: HermesCli) -> None:
    directory = cli.home / "hooks" / "guard"
    directory.mkdir(parents=True)
    (directory / "HOOK.yaml").write_text("event: pre_tool_call\nmatchs: terminal\n")
    (directory / "handler.py").write_text("def handle(event):\n    return None\n")

    done = cli.run("hooks", "list")
    assert "did you mean 'match'" in (done.stdout + done.stderr).lower()


# 3. hermes mcp test tim ------------------------------------------------------------------------


@pytest.mark.subprocess
def test_mcp_test_with_a_mistyped_server_name_suggests_the_server(cli: HermesCli) -> None:
    write_config(cli, {"mcp_servers": {"time": {"command": sys.executable, "args": ["-V"]}}})

    done = cli.run("mcp", "test", "tim", ok=False)

    assert done.returncode != 0
    assert "'tim'" in done.stderr
    assert "did you mean 'time'" in done.stderr.lower()


# 4. INVALID_ARGUMENTS: a short readable message ----------------------------------------------


@pytest.mark.subprocess
def test_invalid_arguments_are_one_readable_sentence_on_the_terminal(cli: HermesCli) -> None:
    (cli.work / "a.txt").write_text("hello\n")

    done = cli.run("tools", "call", "read_file", '{"path": "a.txt", "limit": 0}', ok=False)

    message = done.stderr.strip()
    assert done.returncode != 0
    assert not message.split(": ", 1)[-1].lstrip().startswith("{"), message
    assert len(message) < 400, message
    assert "arguments.limit" in message  # the argument
    assert "minimum" in message  # the rule
    assert '"maximum": 100000' in message or "100000" in message  # the expected shape


@pytest.mark.subprocess
def test_invalid_arguments_keep_the_structured_detail_in_json(cli: HermesCli) -> None:
    (cli.work / "a.txt").write_text("hello\n")

    done = cli.run(
        "tools", "call", "read_file", '{"path": "a.txt", "limit": 0}', "--json", ok=False
    )

    result = json.loads(done.stdout)
    assert result["error_code"] == "INVALID_ARGUMENTS"
    detail = result["structured"]
    assert (detail["tool"], detail["path"], detail["rule"]) == (
        "read_file",
        "arguments.limit",
        "minimum",
    )
    assert detail["parameters"]["properties"]["limit"]["minimum"] == 1
    text = result["content"][0]["text"]
    assert len(text) < 400
    assert not text.startswith("{")


def test_the_model_gets_the_readable_message_and_the_expected_shape(tmp_path: Path) -> None:
    harness = build_harness(tmp_path)
    try:
        result = harness.call("read_file", {"path": "a.txt", "limit": "many"})
    finally:
        harness.close()
    assert result.error_code == "INVALID_ARGUMENTS"
    text = result.text_content
    assert not text.startswith("{"), text
    assert len(text) < 400, text
    assert "read_file" in text
    assert "arguments.limit" in text
    assert "type" in text
    assert "integer" in text
    assert "send the call again" in text.lower()


# 5. An interrupted call is in the activity log -----------------------------------------------


class _Slow:
    @hookimpl
    def hermes_tools(self) -> list[Tool]:
        async def slow(seconds: float = 30) -> str:
            await anyio.sleep(seconds)
            return "slow"

        return [
            Tool(
                "slow",
                "sleeps",
                parameters={"type": "object", "properties": {"seconds": {"type": "number"}}},
                handler=slow,
                toolset="sample",
                annotations=ToolAnnotations(read_only=True, destructive=False),
            )
        ]


@pytest.fixture
def slow_harness(tmp_path: Path) -> Iterator[Harness]:
    harness = build_harness(tmp_path, plugins=[("sample", _Slow())])
    yield harness
    harness.close()


def test_a_cancelled_call_is_logged_as_interrupted(slow_harness: Harness) -> None:
    session = slow_harness.session()
    results: list[ToolResult] = []

    async def main() -> bool:
        with anyio.move_on_after(0.3) as scope:
            results.append(await slow_harness.dispatcher.dispatch("slow", {"seconds": 30}, session))
        return scope.cancelled_caught

    started = time.monotonic()
    assert anyio.run(main) is True
    assert results == []
    assert time.monotonic() - started < 10
    slow_harness.dispatcher.activity_log.flush()

    (record,) = slow_harness.activity()
    assert record["name"] == "slow"
    assert record["status"] == "interrupted"
    assert record["arguments"] == {"seconds": 30}
    assert record["duration_ms"] >= 250


@pytest.mark.subprocess
def test_ctrl_c_during_hermes_tools_call_is_logged_as_interrupted(cli: HermesCli) -> None:
    # As in a terminal's foreground. A suite started as a background job of a script inherits
    # SIGINT ignored, passes that on to its children, and Python (hence hermes) then keeps
    # ignoring it, as a background job should: the Ctrl-C below was lost whenever no test
    # before it in the same worker had happened to reset the handler.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        running = cli.start("tools", "call", "terminal", '{"command": "sleep 300"}', "--yes")
    finally:
        signal.signal(signal.SIGINT, previous)
    log = cli.log_dir / "activity.jsonl"
    try:
        # A generous budget: on a loaded 2-core machine the CLI has taken over 30 s to start
        # the command; SIGINT before the call is under way would test something else.
        deadline = time.monotonic() + 120
        while not _sleeping_child(running.pid):
            assert running.poll() is None, running.communicate()
            assert time.monotonic() < deadline, "the terminal call never started `sleep 300`"
            time.sleep(0.1)
        running.send_signal(signal.SIGINT)
        running.communicate(timeout=30)
    finally:
        if running.poll() is None:
            running.kill()
            running.communicate()

    assert running.returncode != 0
    (record,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert (record["name"], record["status"]) == ("terminal", "interrupted")
    assert record["arguments"] == {"command": "sleep 300"}


def _sleeping_child(pid: int) -> bool:
    """Whether a descendant of ``pid`` runs ``sleep 300`` (the call is under way)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "cmdline").read_bytes() == b"sleep\x00300\x00" and _descends(
                int(entry.name), pid
            ):
                return True
        except (OSError, ValueError):
            continue
    return False


def _descends(child: int, ancestor: int) -> bool:
    while child > 1:
        if child == ancestor:
            return True
        status = Path(f"/proc/{child}/status").read_text()
        child = int(status.split("PPid:", 1)[1].split()[0])
    return False


# 6. tools.catalogs[].server against the entries' own servers ----------------------------------


def _catalog(path: Path, entries: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps(entries), encoding="utf-8")
    return path


def test_a_catalog_server_that_would_override_an_entrys_own_server_is_an_error(
    tmp_path: Path,
) -> None:
    _catalog(
        tmp_path / "c.json",
        [
            {"name": "list_invoices", "description": "x", "server": "billing"},
            {"name": "refund", "description": "y", "server": "billing"},
        ],
    )
    with pytest.raises(ConfigError) as raised:
        catalog_tools([CatalogEntry(path="c.json", server="payments")], tmp_path)
    message = str(raised.value)
    assert "c.json" in message
    assert "entry 0" in message
    assert "'billing'" in message
    assert "'payments'" in message


def test_a_catalog_server_names_the_entries_that_name_none_or_the_same(tmp_path: Path) -> None:
    _catalog(
        tmp_path / "c.json",
        [
            {"name": "list_invoices", "description": "x"},
            {"name": "refund", "description": "y", "server": "payments"},
        ],
    )
    tools = catalog_tools([CatalogEntry(path="c.json", server="payments")], tmp_path)
    assert {tool.source_name for tool in tools} == {"payments"}


@pytest.mark.subprocess
def test_hermes_refuses_the_overriding_catalog_naming_it(cli: HermesCli) -> None:
    _catalog(
        cli.home / "c.json",
        [{"name": "list_invoices", "description": "x", "server": "billing"}],
    )
    write_config(cli, {"tools": {"catalogs": [{"path": "c.json", "server": "payments"}]}})

    done = cli.run("tools", "list", ok=False)

    assert done.returncode != 0
    assert "'billing'" in done.stderr
    assert "'payments'" in done.stderr


# 7. import-agent and CLAUDE.md ---------------------------------------------------------------


@pytest.fixture
def claude_machine(tmp_path: Path) -> HermesCli:
    user_home = tmp_path / "home"
    cli = InProcessCli(tmp_path, home=user_home / ".hermes", user_home=user_home)
    (user_home / ".claude").mkdir(parents=True)
    (user_home / ".claude" / "CLAUDE.md").write_text("Always answer in French.\n")
    (cli.work / "CLAUDE.md").write_text("Run the tests with nox.\n")
    return cli


@pytest.mark.subprocess
def test_import_agent_says_claude_md_is_not_imported(claude_machine: HermesCli) -> None:
    done = claude_machine.run("import-agent", "claude-code")

    user_file = claude_machine.user_home / ".claude" / "CLAUDE.md"
    project_file = claude_machine.work / "CLAUDE.md"
    lines = [line for line in done.stdout.splitlines() if "CLAUDE.md" in line]
    assert len(lines) == 2, done.stdout
    assert all(line.startswith("not imported:") for line in lines)
    assert str(user_file) in done.stdout
    assert str(project_file) in done.stdout
    assert "no instructions file" in done.stdout
    assert not list(claude_machine.home.rglob("CLAUDE.md"))


@pytest.mark.subprocess
def test_import_agent_json_lists_claude_md_as_not_imported(claude_machine: HermesCli) -> None:
    report = claude_machine.json("import-agent", "claude-code", "--dry-run", "--json")

    files = {item["from"] for item in report["not_imported"]}
    assert files == {
        str(claude_machine.user_home / ".claude" / "CLAUDE.md"),
        str(claude_machine.work / "CLAUDE.md"),
    }
    assert {item["what"] for item in report["not_imported"]} == {"instructions"}


def test_the_docs_do_not_claim_instructions_are_imported() -> None:
    docs = Path(__file__).resolve().parents[1] / "docs"
    text = (docs / "mcp.md").read_text(encoding="utf-8")
    section = text.split("## Importing from Claude Code", 1)[1].split("\n## ", 1)[0]
    assert "CLAUDE.md" in section
    assert "not imported" in section
    assert "CLAUDE.md" in (docs / "cli.md").read_text(encoding="utf-8")
