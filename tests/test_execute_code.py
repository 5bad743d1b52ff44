"""execute_code: real scripts in real child processes, their tool calls coming back through the
dispatcher (the same hooks, approvals and activity log), the limits, the two modes and the
scrubbed environment."""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from builders import (
    Harness,
    build_harness,
    make_env,
    processes_gone,
    run_script,
    script_harnesses,
    script_payload,
    stopped_after,
)

from hermes_core._config import Config
from hermes_core._errors import PluginError
from hermes_core._hookspecs import hookimpl
from hermes_core._host import Host
from hermes_core._session import Session
from hermes_core._specs import PreCallDirective, ToolCall
from hermes_core._tools import Tool, ToolAnnotations, ToolResult
from hermes_core.testing import write_dir_plugin


@pytest.fixture
def harnesses(tmp_path: Path) -> Iterator[Callable[..., Harness]]:
    yield from script_harnesses(tmp_path)


run = run_script
payload = script_payload


# A multi-step script --------------------------------------------------------------------------


@pytest.mark.subprocess
def test_script_returns_only_what_it_printed_and_its_calls_run_under_their_real_names(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses()
    (harness.env.cwd / "todo.txt").write_text("buy milk\nfix the roof\nbuy bread\n")
    (harness.env.cwd / "notes.txt").write_text("buy a ladder\n")

    result = run(
        harness,
        """
        from hermes_tools import read_file, search_files

        todo = read_file(path="todo.txt")
        hits = search_files(pattern="^buy", path=".")
        files = sorted({hit["path"] for hit in hits.data["matches"]})
        print(f"{len(todo.splitlines())} todo lines; 'buy' in {len(files)} files")
        """,
    )

    assert not result.is_error, result.text_content
    assert payload(result) == {
        "status": "success",
        "output": "3 todo lines; 'buy' in 2 files\n",
        "tool_calls_made": 2,
        "duration_seconds": payload(result)["duration_seconds"],
    }
    assert "fix the roof" not in result.text_content
    logged = [(event["name"], event["status"]) for event in harness.activity()]
    assert logged == [("read_file", "ok"), ("search_files", "ok"), ("execute_code", "ok")]


def test_a_failed_tool_call_raises_tool_error_with_the_code_and_message(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses()

    result = run(
        harness,
        """
        import hermes_tools
        try:
            hermes_tools.read_file(path="missing.txt")
        except hermes_tools.ToolError as error:
            print(error.code, "|", error.message)
        hermes_tools.read_file(path="missing.txt")
        """,
    )

    data = payload(result)
    assert data["status"] == "error"
    assert result.error_code == "SCRIPT_ERROR"
    assert data["output"].startswith("TOOL_ERROR | read_file: missing.txt does not exist")
    assert data["error"].splitlines()[-1].startswith("hermes_tools.ToolError: TOOL_ERROR: ")
    assert 'File "<script>", line 7, in <module>' in data["error"]
    assert "stderr" not in data  # the traceback is the error, not repeated


@pytest.mark.subprocess
def test_the_error_of_a_failed_call_shows_the_scripts_lines_not_the_generated_modules(
    harnesses: Callable[..., Harness],
) -> None:
    # walk9's walk: a ToolError's traceback ended in two frames of the generated module
    # (File "/tmp/hermes-exec-.../hermes_tools.py", a file gone after the run, and its
    # `raise ToolError(...)` line): 6 of the 12 lines `error` keeps, pushing the script's own
    # frames out.
    harness = harnesses()

    result = run(
        harness,
        """
        import hermes_tools

        def fetch(path):
            return hermes_tools.call("read_file", path=path)

        def report(paths):
            for path in paths:
                print(fetch(path))

        report(["missing.txt"])
        """,
    )

    data = payload(result)
    assert data["status"] == "error"
    assert "hermes_tools.py" not in data["error"]
    assert data["error"].splitlines() == [
        "Traceback (most recent call last):",
        '  File "<script>", line 11, in <module>',
        '    report(["missing.txt"])',
        '  File "<script>", line 9, in report',
        "    print(fetch(path))",
        "          ^^^^^^^^^^^",
        '  File "<script>", line 5, in fetch',
        '    return hermes_tools.call("read_file", path=path)',
        "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        "hermes_tools.ToolError: TOOL_ERROR: read_file: missing.txt does not exist or is not a "
        "regular file",
    ]


@pytest.mark.subprocess
def test_a_tool_without_a_function_is_an_error_naming_call_and_the_functions(
    harnesses: Callable[..., Harness],
) -> None:
    # walk9's walk: hermes_tools.todo_list() (a deferred tool) raised "module 'hermes_tools' has
    # no attribute 'todo_list'", not saying that call("todo_list") reaches it.
    harness = harnesses()

    result = run(
        harness,
        """
        import hermes_tools
        print(hermes_tools.call("todo_list"))
        print(hasattr(hermes_tools, "todo_list"))
        hermes_tools.todo_list()
        """,
    )

    data = payload(result)
    assert data["output"] == "the task list is empty\nFalse\n"
    assert data["error"].splitlines()[-1] == (
        "AttributeError: hermes_tools has no function 'todo_list': call a tool without one by "
        "its full name, hermes_tools.call('todo_list', ...) (the functions: read_file, "
        "write_file, patch, search_files, terminal)"
    )


@pytest.mark.subprocess
def test_importing_a_tool_without_a_function_is_an_import_error_naming_call_and_the_functions(
    harnesses: Callable[..., Harness],
) -> None:
    # ``from hermes_tools import todo_list`` gave Python's own "cannot import name", saying
    # neither what can be imported nor that call("todo_list") reaches the tool.
    harness = harnesses()

    result = run(
        harness,
        """
        from hermes_tools import read_file
        try:
            from hermes_tools import todo_list
        except ImportError as error:
            print(type(error).__name__, error.name, "|", error)
        """,
    )

    data = payload(result)
    assert data["output"] == (
        "ImportError hermes_tools | hermes_tools has no function 'todo_list': call a tool "
        "without one by its full name, hermes_tools.call('todo_list', ...) (the functions: "
        "read_file, write_file, patch, search_files, terminal)\n"
    )


@pytest.mark.subprocess
def test_functions_take_the_parameters_as_keywords_and_document_the_tool(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses()

    result = run(
        harness,
        """
        import inspect
        import hermes_tools
        print(inspect.signature(hermes_tools.read_file))
        print(hermes_tools.read_file.__doc__.splitlines()[0])
        print(sorted(set(hermes_tools.__all__) - {"Result", "ToolError", "call"}))
        """,
    )

    lines = payload(result)["output"].splitlines()
    assert lines[0] == "(*, path, offset=<the tool's default>, limit=<the tool's default>)"
    assert lines[1].startswith("Read a text file in the working directory.")
    assert lines[2] == str(["patch", "read_file", "search_files", "terminal", "write_file"])


def test_a_script_that_does_not_compile_is_an_error_with_the_syntax_error(
    harnesses: Callable[..., Harness],
) -> None:
    result = run(harnesses(), "print('unclosed'\n")

    assert payload(result)["status"] == "error"
    assert "SyntaxError" in payload(result)["error"]


# Approvals and hooks inside scripts ----------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        pytest.param("terminal", {"command": "touch made-by-terminal"}, id="terminal"),
        pytest.param("write_file", {"path": "made-by-write_file", "content": "x"}, id="write_file"),
    ],
)
def test_a_non_interactive_session_denies_what_a_script_calls_and_nothing_runs(
    harnesses: Callable[..., Harness], tool: str, arguments: dict[str, Any]
) -> None:
    harness = harnesses()
    before = sorted(path.name for path in harness.env.cwd.iterdir())

    result = run(
        harness,
        f"""
        import hermes_tools
        try:
            hermes_tools.call({tool!r}, **{arguments!r})
        except hermes_tools.ToolError as error:
            print(error.code)
        """,
    )

    assert payload(result)["output"] == "DENIED\n"
    assert payload(result)["tool_calls_made"] == 1
    assert sorted(path.name for path in harness.env.cwd.iterdir()) == before
    assert next((e["name"], e["status"]) for e in harness.activity()) == (tool, "denied")


class BlocksTerminal:
    @hookimpl
    def hermes_pre_tool_call(self, call: ToolCall) -> PreCallDirective | None:
        if call.name == "terminal":
            return PreCallDirective.block("no shell from scripts today")
        return None


def test_a_pre_tool_call_block_applies_inside_scripts(harnesses: Callable[..., Harness]) -> None:
    harness = harnesses(
        {"approvals": {"policy": "off"}}, plugins=[("gatekeeper", BlocksTerminal())]
    )

    result = run(
        harness,
        """
        import hermes_tools
        try:
            hermes_tools.terminal(command="touch blocked")
        except hermes_tools.ToolError as error:
            print(error.code, error.message)
        """,
    )

    output = payload(result)["output"]
    assert output.startswith("BLOCKED terminal was blocked by plugin 'gatekeeper'")
    assert "no shell from scripts today" in output
    assert not (harness.env.cwd / "blocked").exists()


def test_approvals_deny_holds_inside_scripts(harnesses: Callable[..., Harness]) -> None:
    harness = harnesses({"approvals": {"policy": "off", "deny": ["terminal:rm *"]}})
    keep = harness.env.cwd / "keep.txt"
    keep.write_text("precious")

    result = run(
        harness,
        """
        import hermes_tools
        try:
            hermes_tools.terminal(command="rm -f keep.txt")
        except hermes_tools.ToolError as error:
            print(error.code, error.message)
        print(hermes_tools.terminal(command="echo still allowed").splitlines()[0])
        """,
    )

    lines = payload(result)["output"].splitlines()
    assert lines[0].startswith("DENIED terminal was refused: it matches 'terminal:rm *'")
    assert lines[1] == "still allowed"
    assert keep.read_text() == "precious"


@pytest.mark.subprocess
def test_execute_code_itself_needs_approval_like_any_destructive_tool(tmp_path: Path) -> None:
    harness = build_harness(tmp_path)
    try:
        result = run(harness, "print('never runs')")
    finally:
        harness.close()

    assert result.error_code == "DENIED"
    assert "execute_code" in result.text_content


# The environment ------------------------------------------------------------------------------

SECRETS = {
    "FOO_API_KEY": "k-1",
    "GH_TOKEN": "ghp-2",
    "DB_PASSWORD": "p-3",
    "MY_AUTH": "a-4",
    "PLAIN_SETTING": "not a system variable",
    "LANG": "C.UTF-8",
}
PRINT_ENVIRONMENT = "import json, os\nprint(json.dumps(dict(os.environ)))\n"


def seen_environment(harness: Harness, session: Session | None = None) -> dict[str, str]:
    result = run(harness, PRINT_ENVIRONMENT, session)
    seen: dict[str, str] = json.loads(payload(result)["output"])
    return seen


@pytest.mark.parametrize("mode", ["project", "strict"])
def test_secrets_of_the_host_are_scrubbed_in_either_mode(
    harnesses: Callable[..., Harness], tmp_path: Path, mode: str
) -> None:
    env = make_env(tmp_path / mode, **SECRETS)
    harness = harnesses({"code_execution": {"mode": mode}}, env=env)

    seen = seen_environment(harness)

    assert not set(seen) & {"FOO_API_KEY", "GH_TOKEN", "DB_PASSWORD", "MY_AUTH", "PLAIN_SETTING"}
    assert not set(seen) & {"HERMES_HOME", "HERMES_LOG_DIR", "HERMES_CACHE_DIR"}
    assert seen["LANG"] == "C.UTF-8"
    assert seen["PATH"] == env.variables["PATH"]
    assert seen["HOME"] == env.variables["HOME"]


def _settings(where: str, settings: dict[str, Any]) -> dict[str, Any]:
    """``settings`` of execute_code under ``plugins.entries`` or the deprecated section."""
    if where == "entries":
        return {"plugins": {"entries": {"code_execution": settings}}}
    return {"code_execution": settings}


@pytest.mark.parametrize("where", ["entries", "deprecated-section"])
@pytest.mark.parametrize("mode", ["project", "strict"])
def test_a_name_in_env_passthrough_passes_when_set(
    harnesses: Callable[..., Harness], tmp_path: Path, mode: str, where: str
) -> None:
    env = make_env(tmp_path / mode, **SECRETS)
    config = _settings(where, {"mode": mode, "env_passthrough": ["GH_TOKEN", "UNSET_NAME"]})
    harness = harnesses(config, env=env)

    seen = seen_environment(harness)

    assert seen["GH_TOKEN"] == "ghp-2"
    assert "UNSET_NAME" not in seen
    assert "FOO_API_KEY" not in seen


class ShowsChildEnvironment:
    """A third party's tool, written against the plugin face: it starts a child process of its
    own and asks its ``ToolCaller`` what that child may see."""

    @hookimpl
    def hermes_tools(self, config: Config, env: Any) -> list[Tool]:
        from hermes_core.plugin import ToolCaller

        def child_environment(caller: ToolCaller) -> dict[str, str]:
            return caller.child_environment()

        reads = ToolAnnotations(read_only=True, destructive=False)
        return [
            Tool(
                "child_environment",
                "What a child process sees.",
                handler=child_environment,
                annotations=reads,
            )
        ]


@pytest.mark.parametrize(
    ("config", "passed"),
    [
        (
            {"plugins": {"entries": {"code_execution": {"env_passthrough": ["GH_TOKEN"]}}}},
            "GH_TOKEN",
        ),
        ({"code_execution": {"env_passthrough": ["DB_PASSWORD"]}}, "DB_PASSWORD"),
        (  # a key set in both places takes the value of plugins.entries (configuration.md)
            {
                "code_execution": {"env_passthrough": ["DB_PASSWORD"]},
                "plugins": {"entries": {"code_execution": {"env_passthrough": ["GH_TOKEN"]}}},
            },
            "GH_TOKEN",
        ),
    ],
    ids=["entries", "deprecated-section", "both"],
)
def test_a_third_partys_child_environment_passes_what_execute_code_passes(
    harnesses: Callable[..., Harness], tmp_path: Path, config: dict[str, Any], passed: str
) -> None:
    env = make_env(tmp_path, **SECRETS)
    harness = harnesses(config, env=env, plugins=[("third-party", ShowsChildEnvironment())])

    theirs = harness.call("child_environment", {})
    script = seen_environment(harness)

    assert not theirs.is_error, theirs.text_content
    seen = theirs.structured
    assert isinstance(seen, dict)
    secrets = {"FOO_API_KEY", "GH_TOKEN", "DB_PASSWORD", "MY_AUTH"}
    assert set(seen) & secrets == {passed}
    assert set(script) & secrets == {passed}


# The two modes --------------------------------------------------------------------------------

WHERE_AND_WHICH = "import os, sys\nprint(os.getcwd())\nprint(sys.executable)\n"


@pytest.mark.subprocess
def test_project_mode_runs_in_the_session_directory_with_the_active_virtualenv(
    harnesses: Callable[..., Harness], tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    harness = harnesses(env=make_env(tmp_path / "project", VIRTUAL_ENV=str(venv)))
    workdir = harness.env.cwd / "sub"
    workdir.mkdir()

    result = run(harness, WHERE_AND_WHICH, harness.session(cwd=workdir))

    cwd, executable = payload(result)["output"].splitlines()
    assert Path(cwd).resolve() == workdir.resolve()
    assert executable == str(venv / "bin" / "python")


@pytest.mark.subprocess
def test_strict_mode_runs_in_a_fresh_directory_with_the_hosts_python(
    harnesses: Callable[..., Harness], tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    env = make_env(tmp_path / "strict", VIRTUAL_ENV=str(venv))
    harness = harnesses({"code_execution": {"mode": "strict"}}, env=env)

    first = payload(run(harness, WHERE_AND_WHICH))["output"].splitlines()
    second = payload(run(harness, WHERE_AND_WHICH))["output"].splitlines()

    assert first[1] == second[1] == sys.executable
    assert first[0] != second[0]
    assert Path(first[0]).resolve() != harness.env.cwd.resolve()
    assert not Path(first[0]).exists()  # removed with the run


# Limits ---------------------------------------------------------------------------------------


def unique_sleep(tag: str) -> list[str]:
    return ["sleep", f"300.{os.getpid()}{time.monotonic_ns() % 100000}{tag}"]


@pytest.mark.subprocess
def test_an_endless_script_times_out_and_leaves_no_process(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses({"code_execution": {"timeout": 1}})
    grandchild = unique_sleep("1")

    started = time.monotonic()
    result = run(
        harness,
        f"""
        import subprocess
        subprocess.Popen({grandchild!r})
        print("started", flush=True)
        while True:
            pass
        """,
    )

    data = payload(result)
    assert data["status"] == "timeout"
    assert result.error_code == "TIMEOUT"
    assert data["output"] == "started\n"
    assert "did not finish within 1 s" in data["error"]
    assert time.monotonic() - started < 5
    assert processes_gone(grandchild)


@pytest.mark.subprocess
def test_a_script_ignoring_sigterm_is_killed_after_the_grace_period(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses({"code_execution": {"timeout": 0.5}})
    grandchild = unique_sleep("2")

    result = run(
        harness,
        f"""
        import signal, subprocess, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        subprocess.Popen({grandchild!r})
        while True:
            time.sleep(0.01)
        """,
    )

    assert payload(result)["status"] == "timeout"
    assert 5 <= payload(result)["duration_seconds"] < 9
    assert processes_gone(grandchild)


@pytest.mark.subprocess
def test_a_timed_out_script_stops_the_command_it_waits_on(
    harnesses: Callable[..., Harness],
) -> None:
    allowed = {"allow": ["execute_code", "terminal"]}
    harness = harnesses({"code_execution": {"timeout": 2}, "approvals": allowed})
    argv = ["sleep", f"30.{os.getpid()}{time.monotonic_ns() % 100000}5"]
    command = f"{' '.join(argv)}; echo done"

    started = time.monotonic()
    result = run(harness, f"from hermes_tools import terminal\nterminal(command={command!r})\n")

    assert payload(result)["status"] == "timeout"
    assert time.monotonic() - started < 6
    assert processes_gone(argv)


@pytest.mark.subprocess
def test_what_a_finished_script_left_running_is_killed(harnesses: Callable[..., Harness]) -> None:
    harness = harnesses()
    grandchild = unique_sleep("3")

    result = run(harness, f"import subprocess\nsubprocess.Popen({grandchild!r})\nprint('done')\n")

    assert payload(result)["status"] == "success"
    assert processes_gone(grandchild)


def test_the_call_past_max_tool_calls_fails_with_a_clear_error(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses()
    (harness.env.cwd / "a.txt").write_text("a\n")

    result = run(
        harness,
        """
        import hermes_tools
        for number in range(1, 52):
            try:
                hermes_tools.read_file(path="a.txt")
            except hermes_tools.ToolError as error:
                print(number, error.code, error.message)
        """,
    )

    data = payload(result)
    assert data["tool_calls_made"] == 50
    assert data["output"] == (
        "51 TOO_MANY_CALLS read_file was not called: this script already made 50 tool calls, "
        "the most one run may make (code_execution.max_tool_calls).\n"
    )
    assert [e["name"] for e in harness.activity()].count("read_file") == 50


def test_five_megabytes_of_output_come_back_as_head_and_tail_with_the_saved_path(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses()

    result = run(
        harness,
        """
        import sys
        sys.stdout.write("HEAD" + "x" * (5 * 1024 * 1024) + "TAIL\\n")
        sys.stderr.write("warning " * 5000)
        """,
    )

    data = payload(result)
    saved = Path(data["output_file"])
    assert data["status"] == "success"
    assert data["output"].startswith("HEADxxx")
    assert data["output"].endswith("xxxTAIL\n")
    assert f"bytes of output left out; all of it is in {saved}" in data["output"]
    assert len(data["output"]) < 51_000
    assert saved.is_relative_to(harness.env.cache_dir)
    assert saved.stat().st_size == 5 * 1024 * 1024 + 9
    assert len(data["stderr"]) < 10_100
    assert "bytes of output left out" in data["stderr"]


@pytest.mark.subprocess
def test_a_script_cannot_call_execute_code(harnesses: Callable[..., Harness]) -> None:
    harness = harnesses()

    result = run(
        harness,
        """
        import hermes_tools
        print(hasattr(hermes_tools, "execute_code"))
        try:
            hermes_tools.call("execute_code", code="print('nested')")
        except hermes_tools.ToolError as error:
            print(error.code, error.message)
        """,
    )

    data = payload(result)
    assert data["output"] == "False\nNOT_AVAILABLE a script cannot call execute_code.\n"
    assert data["tool_calls_made"] == 0
    assert [e["name"] for e in harness.activity()] == ["execute_code"]


def test_a_core_tool_outside_code_execution_tools_is_refused_but_deferred_ones_are_reached(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses({"code_execution": {"tools": ["read_file"]}})

    result = run(
        harness,
        """
        import hermes_tools
        try:
            hermes_tools.call("write_file", path="x", content="y")
        except hermes_tools.ToolError as error:
            print(error.code, error.message)
        print(hermes_tools.call("todo_list").splitlines()[-1])
        """,
    )

    lines = payload(result)["output"].splitlines()
    assert lines[0] == (
        "NOT_AVAILABLE a script may not call write_file: it is not in code_execution.tools (a "
        "script may call read_file, and deferred tools by their full name)."
    )
    assert lines[1] == "the task list is empty"
    assert not (harness.env.cwd / "x").exists()


@pytest.mark.subprocess
def test_the_users_stop_ends_the_script(harnesses: Callable[..., Harness]) -> None:
    harness = harnesses()
    session = harness.session()
    grandchild = unique_sleep("4")
    code = f"import subprocess, time\nsubprocess.Popen({grandchild!r})\ntime.sleep(60)\n"

    started = time.monotonic()
    result = stopped_after(harness, "execute_code", {"code": code}, session, 1.0)

    assert payload(result)["status"] == "interrupted"
    assert result.error_code == "INTERRUPTED"
    assert time.monotonic() - started < 5
    assert processes_gone(grandchild)
    assert [e["status"] for e in harness.activity()] == ["interrupted"]


# Through a real host ------------------------------------------------------------------------


@pytest.mark.subprocess
def test_the_requires_env_of_a_loaded_plugin_passes_to_scripts(tmp_path: Path) -> None:
    env = make_env(tmp_path, WEATHER_KEY="w-1", OTHER_KEY="o-2")
    write_dir_plugin(env.user_plugins_dir, "weather", manifest={"requires_env": ["WEATHER_KEY"]})
    config = Config.model_validate(
        {"plugins": {"enabled": ["weather"]}, "approvals": {"allow": ["execute_code"]}}
    )

    async def scenario() -> ToolResult:
        async with Host(config, env) as host:
            return await host.dispatch(
                "execute_code", {"code": PRINT_ENVIRONMENT}, host.new_session()
            )

    seen = json.loads(payload(anyio.run(scenario))["output"])

    assert seen["WEATHER_KEY"] == "w-1"
    assert "OTHER_KEY" not in seen


@pytest.mark.subprocess
def test_a_script_cannot_reach_execute_code_through_the_bridge(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    config = Config.model_validate({"approvals": {"policy": "off"}})
    code = textwrap.dedent(
        """
        import hermes_tools
        try:
            hermes_tools.call("tool_call", name="execute_code", arguments={"code": "print(1)"})
        except hermes_tools.ToolError as error:
            print(error.code, error.message)
        """
    )

    async def scenario() -> ToolResult:
        async with Host(config, env) as host:
            return await host.dispatch("execute_code", {"code": code}, host.new_session())

    data = payload(anyio.run(scenario))

    assert (
        data["output"]
        == "NOT_AVAILABLE tool_call is a bridge tool: call the real tool by its name.\n"
    )
    assert data["tool_calls_made"] == 0


@pytest.mark.subprocess
def test_a_script_that_cannot_start_is_an_error_saying_why(
    harnesses: Callable[..., Harness], tmp_path: Path
) -> None:
    harness = harnesses()

    result = run(harness, "print('never')", harness.session(cwd=tmp_path / "missing"))

    assert result.error_code == "TOOL_ERROR"
    assert result.text_content.startswith("execute_code: could not start the script: ")
    assert "missing" in result.text_content


class OddlyNamedTools:
    """A tool whose name and parameters are not all Python identifiers."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []

    @hookimpl
    def hermes_tools(self) -> list[Tool]:
        def get_user(**arguments: Any) -> dict[str, Any]:
            self.received.append(arguments)
            return {"got": arguments}

        schema = {
            "type": "object",
            "properties": {
                "user_id": {"type": "integer", "description": "Whose."},
                "from": {"type": "string"},
                "limit": {"type": "integer", "default": 10},
            },
            "required": ["user_id"],
        }
        hints = ToolAnnotations(read_only=True, destructive=False)
        return [Tool("get-user", "Fetch a user.", schema, handler=get_user, annotations=hints)]


def test_tool_names_and_parameters_that_are_not_identifiers_still_reach_the_tool(
    harnesses: Callable[..., Harness],
) -> None:
    tools = OddlyNamedTools()
    harness = harnesses({"code_execution": {"tools": ["get-user"]}}, plugins=[("odd", tools)])

    result = run(
        harness,
        """
        import inspect, json
        import hermes_tools
        print(inspect.signature(hermes_tools.get_user))
        print(json.dumps(hermes_tools.get_user(user_id="7", **{"from": "2024"}).data))
        print(json.dumps(hermes_tools.call("get-user", user_id=8).data))
        """,
    )

    lines = payload(result)["output"].splitlines()
    assert lines[0] == "(*, user_id, limit=<the tool's default>, **extra)"
    assert json.loads(lines[1]) == {"got": {"user_id": 7, "from": "2024"}}
    assert json.loads(lines[2]) == {"got": {"user_id": 8}}
    assert tools.received == [{"user_id": 7, "from": "2024"}, {"user_id": 8}]


# Its settings, under plugins.entries ----------------------------------------------------------


def test_a_refused_setting_names_the_plugin_the_key_and_what_was_expected(
    tmp_path: Path,
) -> None:
    with pytest.raises(PluginError) as caught:
        build_harness(tmp_path, config=_settings("entries", {"timeout": 0, "mod": "strict"}))

    message = str(caught.value)
    assert caught.value.plugin == "code-execution"  # the name it is registered under
    assert "plugins.entries.code_execution.timeout: expected a number greater than 0, got 0" in (
        message
    )
    assert "plugins.entries.code_execution.mod: unknown key, did you mean 'mode'?" in message


def test_the_settings_under_plugins_entries_win_over_the_deprecated_section(
    tmp_path: Path,
) -> None:
    config = {**_settings("entries", {"timeout": 20}), "code_execution": {"timeout": 10}}
    harness = build_harness(tmp_path, config=config)
    try:
        tool = harness.registry.get("execute_code")
    finally:
        harness.close()

    assert tool is not None
    assert tool.timeout == 20 + 5 + 10  # the script's timeout, the kill grace, a margin
