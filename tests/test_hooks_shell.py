"""Shell hooks (``hooks:`` in config.yaml): real shell commands, run by a real host through the
same hook machinery as plugin hooks; ``pre_tool_call`` fails closed, naming the hook."""

from __future__ import annotations

import json
import os
import shlex
import sys
import textwrap
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from builders import make_env, processes_gone

from hermes_core._config import Config
from hermes_core._host import Host
from hermes_core._paths import Environment
from hermes_core._session import Session
from hermes_core._tools import ToolResult
from hermes_core.testing import write_dir_plugin
from hermes_core.testing._cli_in_process import InProcessCli

T = TypeVar("T")


def host_for(env: Environment, config: dict[str, Any]) -> Host:
    return Host(Config.model_validate({"approvals": {"policy": "off"}, **config}), env)


def with_host(host: Host, work: Callable[[Host, Session], Awaitable[T]]) -> T:
    async def scenario() -> T:
        async with host, host.session() as session:
            return await work(host, session)

    return anyio.run(scenario)


def call(host: Host, name: str, arguments: dict[str, Any]) -> ToolResult:
    async def work(host: Host, session: Session) -> ToolResult:
        return await host.dispatch(name, arguments, session)

    return with_host(host, work)


def activity(env: Environment) -> list[dict[str, Any]]:
    path = env.log_dir / "activity.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def env(tmp_path: Path) -> Environment:
    return make_env(tmp_path)


@pytest.fixture
def hermes_cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


def pre(command: str, **options: Any) -> dict[str, Any]:
    return {"hooks": {"pre_tool_call": [{"command": command, **options}]}}


BLOCK = """echo '{"action": "block", "message": "no shell after six"}'"""


@pytest.mark.subprocess
def test_a_pre_tool_call_hook_that_prints_a_block_stops_the_call_with_its_message(
    env: Environment,
) -> None:
    host = host_for(env, pre(BLOCK, match="terminal"))

    result = call(host, "terminal", {"command": "touch made"})

    assert result.error_code == "BLOCKED"
    assert result.text_content == (
        f"terminal was blocked by shell hook {BLOCK!r} (hooks.pre_tool_call[0]): no shell after six"
    )
    assert not (env.cwd / "made").exists()
    assert activity(env)[-1]["status"] == "blocked"


def test_a_pre_tool_call_hook_applies_only_to_the_tools_it_matches(env: Environment) -> None:
    (env.cwd / "notes.txt").write_text("hello\n")
    host = host_for(env, pre(BLOCK, match="term*"))

    result = call(host, "read_file", {"path": "notes.txt"})

    assert not result.is_error, result.text_content


def sleeper(tag: str) -> list[str]:
    return ["sleep", f"30.{os.getpid()}{time.monotonic_ns() % 100000}{tag}"]


HANGS = sleeper("1")


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("command", "options", "reason"),
    [
        pytest.param(
            "echo 'policy file missing' >&2; exit 1",
            {},
            "it exited with status 1: policy file missing",
            id="exits-1",
        ),
        pytest.param("echo sure, go ahead", {}, "is not a JSON directive", id="garbage"),
        pytest.param(
            """echo '{"action": "maybe"}'""", {}, "it printed an unknown directive", id="unknown"
        ),
        pytest.param(
            shlex.join(HANGS), {"timeout": 0.5}, "did not answer within 0.5 s", id="hangs"
        ),
    ],
)
def test_a_failing_pre_tool_call_hook_blocks_the_call_naming_the_hook(
    env: Environment, command: str, options: dict[str, Any], reason: str
) -> None:
    host = host_for(env, pre(command, **options))

    started = time.monotonic()
    result = call(host, "terminal", {"command": "touch made"})

    assert result.error_code == "BLOCKED"
    assert "shell hook" in result.text_content
    assert "(hooks.pre_tool_call[0])" in result.text_content
    assert reason in result.text_content
    assert not (env.cwd / "made").exists()
    assert time.monotonic() - started < 10
    assert processes_gone(HANGS)


@pytest.mark.subprocess
def test_a_pre_tool_call_hook_receives_the_event_and_may_rewrite_the_arguments(
    env: Environment,
) -> None:
    script = env.home / "rewrite.py"
    script.write_text(
        textwrap.dedent(
            """
            import json, sys
            event = json.load(sys.stdin)
            with open(sys.argv[1], "w") as seen:
                json.dump(event, seen)
            command = event["arguments"]["command"].replace("hello", "rewritten")
            print(json.dumps({"action": "modify", "arguments": {"command": command}}))
            """
        )
    )
    seen = env.home / "seen.json"
    host = host_for(env, pre(f"{sys.executable} {script} {seen}"))

    result = call(host, "terminal", {"command": "echo hello"})

    assert result.text_content.startswith("rewritten"), result.text_content
    event = json.loads(seen.read_text())
    assert event["event"] == "pre_tool_call"
    assert event["tool_name"] == "terminal"
    assert event["arguments"] == {"command": "echo hello"}
    assert event["cwd"] == str(env.cwd)
    assert event["session_id"]


def test_shell_hooks_run_in_the_order_listed_before_plugin_hooks(env: Environment) -> None:
    trail = env.home / "trail"
    write_dir_plugin(
        env.user_plugins_dir,
        "audit",
        textwrap.dedent(
            f"""
            from hermes_core.plugin import hookimpl

            @hookimpl
            def hermes_pre_tool_call(call):
                with open({str(trail)!r}, "a") as out:
                    out.write("plugin ")
            """
        ),
    )
    first = {"command": f"printf 'first ' >> {trail}"}
    second = {"command": f"printf 'second ' >> {trail}"}
    config = {"plugins": {"enabled": ["audit"]}, "hooks": {"pre_tool_call": [first, second]}}
    (env.cwd / "a.txt").write_text("a\n")

    call(host_for(env, config), "read_file", {"path": "a.txt"})

    assert trail.read_text() == "first second plugin "


@pytest.mark.subprocess
def test_a_hook_that_leaves_a_job_in_the_background_answers_when_it_exits(
    env: Environment,
) -> None:
    job = sleeper("2")
    # The job sleeps 30 s and the hook's timeout is 15 s: a hook that waited for its job would
    # be cut off by the timeout, and its directive (the block's reason) would be lost.
    host = host_for(env, pre(f"{shlex.join(job)} & {BLOCK}", timeout=15))

    started = time.monotonic()
    result = call(host, "terminal", {"command": "touch made"})

    assert time.monotonic() - started < 15
    assert result.error_code == "BLOCKED"
    assert result.text_content.endswith("no shell after six")
    assert "did not answer within" not in result.text_content
    assert not (env.cwd / "made").exists()
    assert processes_gone(job)


@pytest.mark.subprocess
def test_a_block_stops_the_later_hooks(env: Environment) -> None:
    trail = env.home / "trail"
    later = {"command": f"printf 'later ' >> {trail}"}
    config = {"hooks": {"pre_tool_call": [{"command": BLOCK}, later]}}

    result = call(host_for(env, config), "terminal", {"command": "true"})

    assert result.error_code == "BLOCKED"
    assert not trail.exists()


APPEND_STDIN = "import sys; open(sys.argv[1], 'a').write(sys.stdin.read() + '\\n')"
APPEND_EVENT_AND_SESSION = (
    "import json, sys; e = json.load(sys.stdin); "
    "open(sys.argv[1], 'a').write(e['event'] + ' ' + e['session_id'] + '\\n')"
)


@pytest.mark.subprocess
def test_a_post_tool_call_hook_receives_the_real_tool_name_and_the_result(
    env: Environment,
) -> None:
    events = env.home / "events.jsonl"
    record = shlex.join([sys.executable, "-c", APPEND_STDIN, str(events)])
    config = {
        "approvals": {"policy": "off"},
        "hooks": {"post_tool_call": [{"command": record, "match": "terminal"}]},
    }
    code = "from hermes_tools import terminal\nprint(terminal(command='echo from-a-script'))\n"

    async def work(host: Host, session: Session) -> None:
        await host.dispatch("terminal", {"command": "echo direct"}, session)
        await host.dispatch("execute_code", {"code": code}, session)

    with_host(host_for(env, config), work)

    seen = [json.loads(line) for line in events.read_text().splitlines()]
    assert [event["tool_name"] for event in seen] == ["terminal", "terminal"]
    assert [event["event"] for event in seen] == ["post_tool_call"] * 2
    texts = [event["result"]["text"].splitlines()[0] for event in seen]
    assert texts == ["direct", "from-a-script"]
    assert all(event["result"]["is_error"] is False for event in seen)
    assert seen[0]["result"]["structured"]["exit_code"] == 0


@pytest.mark.subprocess
def test_a_shell_pre_tool_call_block_applies_inside_scripts(env: Environment) -> None:
    config = {**pre(BLOCK, match="terminal"), "approvals": {"policy": "off"}}
    code = textwrap.dedent(
        """
        import hermes_tools
        try:
            hermes_tools.terminal(command="touch made")
        except hermes_tools.ToolError as error:
            print(error.code, error.message)
        """
    )

    result = call(host_for(env, config), "execute_code", {"code": code})

    output = result.structured["output"]
    assert output.startswith("BLOCKED terminal was blocked by shell hook")
    assert "no shell after six" in output
    assert not (env.cwd / "made").exists()


@pytest.mark.subprocess
def test_session_hooks_run_when_a_session_starts_and_ends(env: Environment) -> None:
    trail = env.home / "trail"
    record = shlex.join([sys.executable, "-c", APPEND_EVENT_AND_SESSION, str(trail)])
    config = {
        "hooks": {"session_start": [{"command": record}], "session_end": [{"command": record}]}
    }

    async def work(host: Host, session: Session) -> str:
        return session.id

    session_id = with_host(host_for(env, config), work)

    assert trail.read_text().splitlines() == [
        f"session_start {session_id}",
        f"session_end {session_id}",
    ]


def test_a_failing_observer_hook_is_logged_and_changes_nothing(
    env: Environment, caplog: pytest.LogCaptureFixture
) -> None:
    config = {"hooks": {"post_tool_call": [{"command": "echo broken >&2; exit 3"}]}}
    (env.cwd / "a.txt").write_text("a\n")

    result = call(host_for(env, config), "read_file", {"path": "a.txt"})

    assert not result.is_error
    # In the words of a blocked call, without the name of hermes' internal exception class
    # (it read `observer hook failed: ShellHookFailed: exited with status 3`, execwalk's walk).
    assert "observer hook failed: it exited with status 3: broken; fix" in caplog.text
    assert "ShellHookFailed" not in caplog.text
    assert "shell hook 'echo broken >&2; exit 3' (hooks.post_tool_call[0])" in caplog.text
    assert "; fix or remove it (hooks.post_tool_call[0] of the configuration)" in caplog.text


def test_a_claude_code_event_name_under_hooks_names_the_hermes_event_or_says_there_is_none(
    hermes_cli: InProcessCli,
) -> None:
    """``PreToolUse`` pasted from ``.claude/settings.json`` names the event to write instead;
    ``UserPromptSubmit``, which hermes has no event for, says so plainly."""
    hermes_cli.config.write_text(
        "hooks:\n  PreToolUse:\n    - command: 'true'\n  UserPromptSubmit:\n    - command: 'true'\n"
    )

    stderr = hermes_cli.run("hooks", "list", ok=False).stderr

    assert (
        f"{hermes_cli.config}:2: hooks.PreToolUse: unknown key: Claude Code's PreToolUse is "
        "hermes's 'pre_tool_call', write hooks.pre_tool_call" in stderr
    )
    assert (
        f"{hermes_cli.config}:4: hooks.UserPromptSubmit: unknown key: Claude Code's "
        "UserPromptSubmit has no hermes event (hermes's events: pre_tool_call, post_tool_call, "
        "session_start, session_end)" in stderr
    )


def test_a_claude_code_hook_entry_says_what_hermes_expects_with_file_and_line(
    hermes_cli: InProcessCli,
) -> None:
    """An entry of ``.claude/settings.json``'s shape (``matcher`` and a ``hooks`` list) is one
    problem, at its line, saying the shape hermes reads, not three about its keys."""
    hermes_cli.config.write_text(
        "hooks:\n"
        "  pre_tool_call:\n"
        "    - command: 'true'\n"
        "    - matcher: Bash\n"
        "      hooks:\n"
        "        - type: command\n"
        "          command: ./check.sh\n"
    )

    result = hermes_cli.run("hooks", "list", ok=False)

    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"hermes: error: {hermes_cli.config}:4: hooks.pre_tool_call[1]: this is a Claude Code "
        "hook entry (matcher, hooks); hermes runs one command per entry: write each as "
        "'- command: ...' with 'match:' a glob over hermes tool names (such as 'terminal') "
        "and 'timeout:' in seconds"
    )
