"""``hermes tools ...`` as a user runs it: real subprocesses, a temporary home."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pexpect
import pytest

from hermes_core._cli.progress import progress_text
from hermes_core._progress import ProgressReport
from hermes_core.testing import HermesCli
from hermes_core.testing._cli_in_process import InProcessCli

pytestmark = pytest.mark.subprocess

EVERYTHING_JS = (
    Path(__file__).resolve().parents[1]
    / ".cache/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
)


@pytest.fixture
def hermes_cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    """``hermes`` run in this process (:class:`InProcessCli`); ``subprocess_run`` runs the
    real command."""
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


def everything_server() -> dict[str, Any]:
    """The ``mcp_servers`` entry of npm's server-everything (installed by ``nox -s tests``)."""
    node = shutil.which("node")
    if node is None or not EVERYTHING_JS.is_file():
        pytest.fail(
            f"node and {EVERYTHING_JS} are needed: npm install --prefix .cache/npm "
            "@modelcontextprotocol/server-everything (in the repository root)"
        )
    return {"command": node, "args": [str(EVERYTHING_JS), "stdio"]}


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
    assert set(rows[0]) == {
        "name",
        "toolset",
        "source",
        "overrides",
        "deferrable",
        "annotations",
        "description",
    }
    assert by_name["read_file"]["overrides"] is None
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
        "bridge_tokens",
    }
    names = [tool["name"] for tool in result["tools"]]
    assert "tool_search" in names
    assert "todo_list" not in names
    assert set(result["tools"][0]) == {"name", "description", "parameters"}


def test_tools_assemble_of_two_small_deferred_tools_saves_0_tokens_and_shows_the_bridge_cost(
    hermes_cli: HermesCli,
) -> None:
    # Only two small built-in tools are deferred: the bridge costs more than it saves.
    hermes_cli.config.write_text("tools:\n  tool_search:\n    defer: [todo_list, process_manage]\n")
    done = hermes_cli.run("tools", "assemble")
    statistics = _statistics(done.stdout)
    assert statistics["tokens_saved"] == "0", done.stdout
    assert int(statistics["bridge_tokens"]) > int(statistics["listing_tokens"]) > 0, done.stdout
    result = hermes_cli.json("tools", "assemble", "--json")
    assert result["tokens_saved"] == 0
    assert result["bridge_tokens"] == int(statistics["bridge_tokens"])


def _statistics(printed: str) -> dict[str, str]:
    """The ``key: value`` lines ``hermes tools assemble`` prints before the tool names."""
    rows: dict[str, str] = {}
    for line in printed.splitlines():
        if line.startswith("tools ("):
            break
        key, _, value = line.partition(":")
        rows[key] = value.strip()
    return rows


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


def test_a_limit_above_the_configured_cap_says_the_cap(hermes_cli: InProcessCli) -> None:
    # The bridge clamps a model's limit quietly; a person who typed --limit 100 asked for it.
    hermes_cli.config.write_text("tools:\n  tool_search:\n    max_search_limit: 3\n")
    done = hermes_cli.run("tools", "search", "file", "--limit", "100")
    assert done.returncode == 0, done.stderr
    assert (
        "hermes: note: --limit 100 is above tools.tool_search.max_search_limit (3): "
        "at most 3 tools a query" in done.stderr
    )
    quiet = hermes_cli.run("tools", "search", "file", "--limit", "2")
    assert "max_search_limit" not in quiet.stderr


def test_tools_search_table_says_which_words_no_tool_holds_and_what_a_miss_searched(
    hermes_cli: InProcessCli, tmp_path: Path
) -> None:
    # The table printed the matches of "github create issue zzqx" as if they were the answer,
    # without "zzqx" found nowhere, and for a miss a hint about "available_sources", a key the
    # table never shows; a refused search printed its JSON.
    catalog = tmp_path / "catalog.json"
    catalog.write_text(
        json.dumps(
            [
                {
                    "name": "github__issues_create",
                    "server": "github",
                    "description": "Create an issue",
                },
                {
                    "name": "gmail__messages_send",
                    "server": "gmail",
                    "description": "Send a message",
                },
            ]
        ),
        encoding="utf-8",
    )
    hermes_cli.config.write_text(f"tools:\n  catalogs:\n    - path: {catalog}\n")

    done = hermes_cli.subprocess_run("tools", "search", "github create issue zzqx", "zzqx")
    refused = hermes_cli.subprocess_run("tools", "search", *"abcdefgh", ok=False)

    partial, miss = done.stdout.split("\nzzqx:\n")
    assert partial.splitlines()[1].split()[0] == "github__issues_create"
    assert "  no tool contains: zzqx" in partial.splitlines()
    assert "available_sources" not in done.stdout
    assert miss.splitlines()[0].startswith("  no match: no tool contains: zzqx")
    assert "github (1 tool)" in miss
    assert "gmail (1 tool)" in miss
    assert refused.returncode == 1
    assert refused.stderr.startswith("error (INVALID_ARGUMENTS): 8 queries sent; at most 7 per")
    assert '"code"' not in refused.stderr


@pytest.mark.parametrize(
    ("queries", "said"),
    [(("",), "the query is blank"), (("", " \t"), "every query is blank (2 given)")],
)
def test_tools_search_of_a_blank_query_says_the_query_is_blank(
    hermes_cli: InProcessCli, queries: tuple[str, ...], said: str
) -> None:
    # A new user's `hermes tools search ""` was told "queries is empty", though a query was
    # sent: a blank one (an unset shell variable, say).
    done = hermes_cli.run("tools", "search", *queries, ok=False)

    assert done.returncode == 2
    assert done.stdout == ""
    assert (
        f"Error: Invalid value for 'QUERIES...': {said}: give at least one keyword, e.g. "
        "hermes tools search 'create issue'"
    ) in done.stderr
    assert "empty" not in done.stderr


def test_tools_search_with_nothing_deferred_says_so_rather_than_that_no_tool_holds_the_words(
    hermes_cli: InProcessCli, tmp_path: Path
) -> None:
    # With tools.tool_search.enabled: off every tool is sent directly and tool_search has
    # nothing to search: "no tool contains: gmail, send" told a user with a gmail tool it had none.
    catalog = tmp_path / "catalog.json"
    entry = {"name": "gmail__messages_send", "server": "gmail", "description": "Send a message"}
    catalog.write_text(json.dumps([entry]), encoding="utf-8")
    hermes_cli.config.write_text(
        f"tools:\n  tool_search:\n    enabled: off\n  catalogs:\n    - path: {catalog}\n"
    )

    done = hermes_cli.run("tools", "search", "gmail send")

    assert done.returncode == 0, done.stderr
    assert "no tool contains" not in done.stdout
    assert done.stdout.splitlines() == [
        "gmail send:",
        "  no match: no tool is deferred, so there is nothing to search; every tool is in the "
        "model's tool list (hermes tools list)",
    ]


def test_tools_describe_json_gives_deferred_tools_as_tool_describe_does(
    hermes_cli: HermesCli,
) -> None:
    result = hermes_cli.json("tools", "describe", "todo_list", "--json")
    assert set(result) == {"tools"}
    assert set(result["tools"]["todo_list"]) == {"description", "parameters"}
    assert "todos" in result["tools"]["todo_list"]["parameters"]["properties"]


def test_tools_describe_shows_the_schema_of_a_tool_in_the_models_tool_list(
    hermes_cli: HermesCli,
) -> None:
    # tool_describe refuses these (the model has their schemas); the person at the CLI has not.
    result = hermes_cli.json("tools", "describe", "read_file", "todo_list", "tool_call", "--json")
    assert list(result["tools"]) == ["read_file", "todo_list", "tool_call"]
    assert result["tools"]["read_file"]["visible"] is True
    assert result["tools"]["read_file"]["parameters"]["required"] == ["path"]
    assert result["tools"]["tool_call"]["visible"] is True
    assert "calls" in result["tools"]["tool_call"]["parameters"]["properties"]
    assert "visible" not in result["tools"]["todo_list"]
    assert "errors" not in result

    done = hermes_cli.run("tools", "describe", "read_file")
    assert done.stdout.startswith("read_file (in the model's tool list)\n"), done.stdout
    assert '"path"' in done.stdout
    assert done.stderr == ""


def test_tools_describe_of_an_unknown_name_exits_1_and_names_the_closest_tool(
    hermes_cli: HermesCli,
) -> None:
    done = hermes_cli.run("tools", "describe", "nosuch", ok=False)
    assert done.returncode == 1
    assert done.stderr.strip() == "nosuch: not found."

    done = hermes_cli.run("tools", "describe", "todo_list", "todo_lis", ok=False)
    assert done.returncode == 1
    assert "todo_list\n" in done.stdout  # what was found is still shown
    assert "todo_lis: not found. Did you mean 'todo_list'?" in done.stderr

    done = hermes_cli.run("tools", "describe", "nosuch", "--json", ok=False)
    assert done.returncode == 1
    assert json.loads(done.stdout) == {"not_found": ["nosuch"]}


def test_a_mistyped_top_level_command_names_the_closest_command(hermes_cli: HermesCli) -> None:
    done = hermes_cli.run("tool", "search", "time", ok=False)
    assert done.returncode == 2
    assert "No such command 'tool'. Did you mean 'tools'?" in done.stderr

    done = hermes_cli.run("xyzzy", ok=False)
    assert done.returncode == 2
    assert "No such command 'xyzzy'." in done.stderr
    assert "Did you mean" not in done.stderr


def test_v_after_a_command_says_it_goes_before_it(hermes_cli: HermesCli) -> None:
    done = hermes_cli.run("doctor", "-v", ok=False)
    assert done.returncode == 2
    assert "No such option '-v'" in done.stderr
    assert "-v/--verbose goes before the command: hermes -v doctor" in done.stderr

    done = hermes_cli.run("sessions", "list", "--verbose", ok=False)
    assert done.returncode == 2
    assert "goes before the command: hermes -v sessions list" in done.stderr

    done = hermes_cli.run("doctor", "-x", ok=False)
    assert done.returncode == 2
    assert "goes before" not in done.stderr


def test_tools_call_prints_a_line_for_an_image_and_keeps_it_whole_in_json(
    hermes_cli: HermesCli,
) -> None:
    hermes_cli.config.write_text(json.dumps({"mcp_servers": {"everything": everything_server()}}))
    done = hermes_cli.run("tools", "call", "mcp__everything__get-tiny-image")
    result = hermes_cli.json("tools", "call", "mcp__everything__get-tiny-image", "--json")
    image = next(block for block in result["content"] if block["type"] == "image")
    size = len(base64.b64decode(image["data"]))
    assert image["mimeType"] == "image/png"
    assert f"[image: image/png, {size:,} bytes]" in done.stdout.splitlines(), done.stdout
    assert image["data"] not in done.stdout
    assert "Here's the image you requested:" in done.stdout


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
    # The command's own way to approve one call, beside the config's (journey4's walk).
    assert "--yes approves this one call" in done.stderr
    assert not marker.exists()


@pytest.mark.parametrize(
    ("approvals", "refused"),
    [
        ("  deny: [read_file]\n", "it matches 'read_file' in approvals.deny"),
        (
            "  policy: failing\n",
            "the approval policy 'failing' (plugin 'failing-policy') failed (OSError: rules "
            "file missing (at ",  # its __init__.py, the line of the raise
        ),
    ],
)
def test_tools_call_offers_yes_only_where_it_would_approve(
    hermes_cli: InProcessCli,
    hermes_dir_plugin: Callable[..., Path],
    approvals: str,
    refused: str,
) -> None:
    # --yes answers the approval prompt; a deny glob or a policy that failed refuses before any
    # prompt, so "--yes approves this one call" sent the user to a flag that changes nothing.
    hermes_dir_plugin(hermes_cli.home / "plugins", "failing-policy", FAILING_POLICY)
    hermes_cli.config.write_text(
        f"plugins:\n  enabled: [failing-policy]\napprovals:\n{approvals}", encoding="utf-8"
    )
    (hermes_cli.work / "notes.txt").write_text("hello\n", encoding="utf-8")
    arguments = '{"path": "notes.txt"}'

    done = hermes_cli.subprocess_run("tools", "call", "read_file", arguments, ok=False)
    with_yes = hermes_cli.subprocess_run("tools", "call", "--yes", "read_file", arguments, ok=False)

    for run in (done, with_yes):
        assert run.returncode == 1
        assert refused in run.stdout + run.stderr
    assert "--yes" not in done.stderr


FAILING_POLICY = """
from hermes_core.plugin import ApprovalPolicySpec, hookimpl


class Failing:
    def decide(self, call, session):
        raise OSError("rules file missing")


@hookimpl
def hermes_approval_policies():
    return [ApprovalPolicySpec("failing", lambda context: Failing())]
"""


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
    assert "read_file: path holds half a character (\\ud800, a lone surrogate)" in done.stderr
    log = hermes_cli.log_dir / "activity.jsonl"
    (record,) = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert record["name"] == "read_file"
    assert record["arguments"] == {"path": "a\ud800.txt"}


def test_tools_call_prints_a_result_holding_a_lone_surrogate_without_a_traceback(
    hermes_cli: InProcessCli,
) -> None:
    # todo_list shows back the item the model wrote, half a character included.
    arguments = '{"todos": [{"content": "fix \\ud800 now"}]}'

    done = hermes_cli.subprocess_run("tools", "call", "todo_list", arguments, ok=False)
    as_json = hermes_cli.subprocess_run("tools", "call", "todo_list", arguments, "--json", ok=False)

    for run in (done, as_json):
        assert (run.returncode, run.stderr) == (0, "")
    assert "[ ] 1. fix \ufffd now" in done.stdout
    assert json.loads(as_json.stdout)["structured"][0]["content"] == "fix \ufffd now"


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


def test_a_question_asked_while_a_script_runs_is_not_drawn_over_by_its_progress(
    hermes_cli: HermesCli,
) -> None:
    # walk9's walk: a script's write_file asked "Allow? [o]nce, ..." and a second later the
    # script's progress line ("1 s of at most 300 s, 1 tool call, ...") was drawn over it:
    # the question left the screen while hermes waited for its answer.
    hermes_cli.config.write_text("approvals:\n  allow: [execute_code]\n")
    code = 'import hermes_tools\nhermes_tools.write_file(path="out.txt", content="x")\n'
    python, *args = hermes_cli.command("tools", "call", "execute_code", json.dumps({"code": code}))
    child = pexpect.spawn(
        python,
        args,
        env=hermes_cli.variables(),
        cwd=str(hermes_cli.work),
        encoding="utf-8",
        timeout=30,
        dimensions=(40, 120),
    )
    child.expect(r"\[d\]eny: ")
    # The script reports its progress every second: three chances to draw over the question.
    drawn = child.expect(["s of at most", pexpect.TIMEOUT], timeout=3)
    over_the_question = str(child.before) + (str(child.after) if drawn == 0 else "")
    child.sendline("o")
    child.expect(pexpect.EOF)
    child.close()

    assert drawn == 1, f"drawn over the question: {over_the_question!r}"
    assert child.exitstatus == 0, child.before
    assert (hermes_cli.work / "out.txt").read_text() == "x"


def test_an_unknown_backend_is_a_configuration_error_with_exit_status_two(
    hermes_cli: HermesCli,
) -> None:
    hermes_cli.config.write_text("tools:\n  tool_search:\n    backend: nope\n")
    done = hermes_cli.run("tools", "search", "time", ok=False)
    assert done.returncode == 2
    assert "unknown search backend 'nope'" in done.stderr
    assert "valid names: bm25" in done.stderr


SAAS_CATALOG = Path(__file__).resolve().parents[2] / "shared" / "data" / "saas_openapi_catalog"


def test_tools_search_github_create_issue_puts_github_issues_create_first_with_the_saas_catalog(
    hermes_cli: HermesCli,
) -> None:
    catalog = SAAS_CATALOG / "catalog.json"
    assert catalog.is_file(), f"the SaaS catalog is read from {catalog} (../shared/data)"
    hermes_cli.config.write_text(f"tools:\n  catalogs:\n    - path: {catalog}\n")
    result = hermes_cli.json("tools", "search", "github create issue", "--json")
    assert result["results"][0]["matches"][0] == "github__issues_create"


SEARCH_PROBE = (
    "import sys\n"
    "from hermes_core._cli import main\n"
    "try:\n    main(['tools', 'search', 'background processes'])\n"
    "except SystemExit:\n    pass\n"
    "print('LOADED', 'jsonschema' in sys.modules)\n"
)


def _probe(hermes_cli: HermesCli, code: str) -> subprocess.CompletedProcess[str]:
    """``python -c code`` in the CLI's working directory and environment; it must succeed."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=hermes_cli.work,
        env=hermes_cli.variables(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done


def test_tools_search_does_not_import_jsonschema(hermes_cli: HermesCli) -> None:
    # Only the bridge runs, and it parses its own arguments: importing the validator library
    # would be most of a warm search's fixed cost after the configuration.
    done = _probe(hermes_cli, SEARCH_PROBE)
    assert "process_manage" in done.stdout
    assert done.stdout.splitlines()[-1] == "LOADED False"


CALL_PROBE = (
    "import sys\n"
    "from hermes_core._cli import main\n"
    "try:\n    main(['tools', 'call', 'read_file', '{\"path\": \"notes.txt\"}'])\n"
    "except SystemExit:\n    pass\n"
    "print('LOADED', 'mcp_types' in sys.modules)\n"
)


def test_a_call_of_a_local_tool_does_not_import_the_mcp_types(hermes_cli: HermesCli) -> None:
    # The command can answer an MCP server's form, but a local tool has no server to ask one:
    # the MCP types' import was almost half of such a call's process (0.2 of 0.45 s).
    (hermes_cli.work / "notes.txt").write_text("hello\n", encoding="utf-8")
    done = _probe(hermes_cli, CALL_PROBE)
    assert done.stdout.startswith("hello")
    assert done.stdout.splitlines()[-1] == "LOADED False"


@pytest.mark.parametrize("name", ["memory", "delegate_task"])
def test_calling_a_tool_of_the_agents_conversations_says_where_it_lives(
    hermes_cli: HermesCli, name: str
) -> None:
    """docs/memory.md calls memory a core tool; ``hermes tools call memory`` must not leave the
    user thinking it is missing."""
    done = hermes_cli.run("tools", "call", name, "{}", ok=False)
    assert done.returncode == 1
    assert f"There is no tool named {name!r}" in done.stderr
    assert "hermes chat" in done.stderr, done.stderr
    assert "hermes run" in done.stderr, done.stderr


@pytest.mark.parametrize(
    ("report", "line"),
    [
        # A script's report: its message starts with the seconds that are its progress.
        (
            ProgressReport(1, None, "1 s of at most 300 s, 2 tool calls"),
            "1 s of at most 300 s, 2 tool calls",
        ),
        (ProgressReport(1, None, "10 files"), "1 10 files"),
        (ProgressReport(3, 10, "copying"), "[######..............] 3/10 copying"),
        (ProgressReport(2, None, None), "2"),
    ],
)
def test_a_progress_line_says_the_progress_once(report: ProgressReport, line: str) -> None:
    assert progress_text(report) == line


@pytest.mark.parametrize(
    "command",
    [("search", "create issue"), ("describe", "todo_list")],
    ids=["search", "describe"],
)
def test_a_bridge_command_refused_says_why_with_json_too(
    hermes_cli: InProcessCli, command: tuple[str, ...]
) -> None:
    # A refusal that is no answer of the bridge (the approval policy's, a hook's) printed {}
    # with --json: exit status 1 and not a word of why.
    hermes_cli.config.write_text("approvals:\n  deny: [tool_search, tool_describe]\n")
    bridge = {"search": "tool_search", "describe": "tool_describe"}[command[0]]
    why = f"{bridge} was refused: it matches '{bridge}' in approvals.deny."

    done = hermes_cli.run("tools", *command, ok=False)
    as_json = hermes_cli.run("tools", *command, "--json", ok=False)

    assert (done.returncode, done.stdout, done.stderr) == (1, "", f"error (DENIED): {why}\n")
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout) == {"error": why, "code": "DENIED"}
