"""Hook directories (``$HERMES_HOME/hooks/<name>/``): discovered like plugins, never imported
until ``hooks.enabled`` lists them, ``hooks.disabled`` wins; an enabled one runs through the
same hook machinery as plugin hooks."""

from __future__ import annotations

import json
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from builders import make_env

from hermes_core._config import Config
from hermes_core._errors import PluginError
from hermes_core._host import Host
from hermes_core._paths import Environment
from hermes_core._tools import ToolResult
from hermes_core.testing import HermesCli, forget_modules_under
from hermes_core.testing._cli_in_process import InProcessCli


@pytest.fixture
def hermes_cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    """``hermes`` run in this process (:class:`InProcessCli`); ``subprocess_run`` runs the
    real command."""
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Environment]:
    made = make_env(tmp_path)
    yield made
    forget_modules_under(made.hooks_dir)


def write_hook(env: Environment, name: str, manifest: str, handler: str) -> Path:
    directory = env.hooks_dir / name
    directory.mkdir(parents=True)
    (directory / "HOOK.yaml").write_text(textwrap.dedent(manifest))
    (directory / "handler.py").write_text(textwrap.dedent(handler))
    return directory


def marked_handler(marker: Path, body: str) -> str:
    """A handler.py that leaves ``marker`` behind when it is imported."""
    return f"from pathlib import Path\nPath({str(marker)!r}).touch()\n\n" + textwrap.dedent(body)


GUARD = """
def handle(event):
    if "rm " in event["arguments"].get("command", ""):
        return {"action": "block", "message": "rm is not for agents"}
    return None
"""


def host_for(env: Environment, config: dict[str, Any]) -> Host:
    return Host(Config.model_validate({"approvals": {"policy": "off"}, **config}), env)


def call(host: Host, name: str, arguments: dict[str, Any]) -> ToolResult:
    async def scenario() -> ToolResult:
        async with host:
            return await host.dispatch(name, arguments, host.new_session())

    return anyio.run(scenario)


def statuses(host: Host) -> dict[str, tuple[str, str | None]]:
    host.start()
    try:
        return {d.name: (d.status, d.message) for d in host.hook_directories}
    finally:
        host.close()


@pytest.mark.subprocess
def test_a_hook_directory_not_in_hooks_enabled_is_never_imported(env: Environment) -> None:
    marker = env.home / "imported"
    write_hook(
        env, "guard", "event: pre_tool_call\nmatch: terminal\n", marked_handler(marker, GUARD)
    )
    host = host_for(env, {})

    result = call(host, "terminal", {"command": "rm -f nothing"})
    found = statuses(host_for(env, {}))

    assert not result.is_error, result.text_content
    assert not marker.exists()
    assert found == {"guard": ("not enabled", "enable it with: hermes hooks enable guard")}


@pytest.mark.subprocess
def test_an_enabled_hook_directory_runs_and_blocks_naming_itself(env: Environment) -> None:
    marker = env.home / "imported"
    write_hook(
        env, "guard", "event: pre_tool_call\nmatch: terminal\n", marked_handler(marker, GUARD)
    )
    host = host_for(env, {"hooks": {"enabled": ["guard"]}})

    blocked = call(host, "terminal", {"command": "rm -f precious"})
    allowed = call(
        host_for(env, {"hooks": {"enabled": ["guard"]}}), "terminal", {"command": "true"}
    )

    assert marker.exists()
    assert blocked.error_code == "BLOCKED"
    assert blocked.text_content == (
        "terminal was blocked by hook directory 'guard': rm is not for agents"
    )
    assert not allowed.is_error, allowed.text_content


@pytest.mark.subprocess
def test_hooks_disabled_wins_over_hooks_enabled(env: Environment) -> None:
    marker = env.home / "imported"
    write_hook(env, "guard", "event: pre_tool_call\n", marked_handler(marker, GUARD))
    config = {"hooks": {"enabled": ["guard"], "disabled": ["Guard"]}}

    result = call(host_for(env, config), "terminal", {"command": "rm -f nothing"})

    assert not result.is_error
    assert not marker.exists()
    assert statuses(host_for(env, config)) == {
        "guard": ("disabled", "disabled in hooks.disabled, which wins over hooks.enabled")
    }


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("handler", "expected"),
    [
        pytest.param(
            "async def handle(event):\n    return {'action': 'block', 'message': 'no'}\n",
            "terminal was blocked by hook directory 'check': no",
            id="async-block",
        ),
        pytest.param(
            "def handle(event):\n    raise RuntimeError('rules unreadable')\n",
            "the pre_tool_call hook of hook directory 'check' failed "
            "(RuntimeError: rules unreadable (at ",
            id="raises",
        ),
        pytest.param(
            "import time\ndef handle(event):\n    time.sleep(5)\n",
            "the pre_tool_call hook of hook directory 'check' did not answer within 0.3 s",
            id="times-out",
        ),
        pytest.param(
            "def handle(event):\n    return 'yes please'\n",
            "terminal was blocked by hook directory 'check': it returned 'yes please', "
            "which is not a PreCallDirective",
            id="not-a-directive",
        ),
    ],
)
def test_a_hook_directory_handler_blocks_or_fails_closed(
    env: Environment, handler: str, expected: str
) -> None:
    write_hook(env, "check", "event: pre_tool_call\ntimeout: 0.3\n", handler)

    result = call(host_for(env, {"hooks": {"enabled": ["check"]}}), "terminal", {"command": "true"})

    assert result.error_code == "BLOCKED"
    assert expected in result.text_content


@pytest.mark.subprocess
def test_a_hook_directory_answers_with_a_mapping_as_a_shell_hook_prints_one(
    env: Environment,
) -> None:
    # walk9's walk: a handle() returning {} (what a shell hook prints to let the call go on)
    # blocked the call with "it returned a mapping, which is not a PreCallDirective", and so
    # did {"action": "nope"}, neither saying what was wrong.
    write_hook(env, "empty", "event: pre_tool_call\n", "def handle(event):\n    return {}\n")
    write_hook(
        env,
        "typo",
        "event: pre_tool_call\nmatch: read_file\n",
        "def handle(event):\n    return {'action': 'deny', 'message': 'no'}\n",
    )
    (env.cwd / "notes.txt").write_text("hello\n")
    config = {"hooks": {"enabled": ["empty", "typo"]}}

    allowed = call(host_for(env, config), "terminal", {"command": "echo went on"})
    blocked = call(host_for(env, config), "read_file", {"path": "notes.txt"})

    assert not allowed.is_error, allowed.text_content
    assert "went on" in allowed.text_content
    assert blocked.error_code == "BLOCKED"
    assert blocked.text_content == (
        "read_file was blocked by hook directory 'typo': it returned an unknown directive: "
        '{"action": "deny", "message": "no"} (a directive is {}, or an action: block, '
        "approve, or modify with arguments)"
    )


def test_a_post_tool_call_hook_directory_receives_the_event(env: Environment) -> None:
    seen = env.home / "seen.json"
    handler = f"""
    import json

    def handle(event):
        with open({str(seen)!r}, "w") as out:
            json.dump(event, out)
    """
    write_hook(env, "recorder", "event: post_tool_call\n", handler)
    (env.cwd / "a.txt").write_text("alpha\n")

    call(host_for(env, {"hooks": {"enabled": ["recorder"]}}), "read_file", {"path": "a.txt"})

    event = json.loads(seen.read_text())
    assert event["tool_name"] == "read_file"
    assert event["arguments"] == {"path": "a.txt"}
    assert event["result"]["text"] == "alpha\n"
    assert event["result"]["is_error"] is False


def test_a_failing_observer_hook_directory_is_logged_saying_how_to_disable_it(
    env: Environment, caplog: pytest.LogCaptureFixture
) -> None:
    write_hook(
        env, "audit", "event: post_tool_call\n", "def handle(event):\n    raise OSError('full')\n"
    )
    (env.cwd / "a.txt").write_text("alpha\n")

    result = call(host_for(env, {"hooks": {"enabled": ["audit"]}}), "read_file", {"path": "a.txt"})

    assert not result.is_error
    handler = env.hooks_dir / "audit" / "handler.py"
    assert (
        f"hook directory 'audit': observer hook failed: OSError: full (at {handler}, line 2); "
        "fix or disable it (hermes hooks disable audit)"
    ) in caplog.text


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("manifest", "files", "error"),
    [
        pytest.param(
            "description: guard\nevent: before_everything\n",
            True,
            "HOOK.yaml:2: event: must be one of pre_tool_call, post_tool_call, session_start, "
            "session_end, not 'before_everything'",
            id="bad-event",
        ),
        pytest.param(
            "event: PreToolUse\n",
            True,
            "HOOK.yaml:1: event: must be one of pre_tool_call, post_tool_call, session_start, "
            "session_end, not 'PreToolUse': Claude Code's PreToolUse is hermes's "
            "'pre_tool_call', write 'event: pre_tool_call'",
            id="claude-event",
        ),
        pytest.param(
            "event: pre_tool_call\ntimeout: -1\n",
            True,
            "HOOK.yaml:2: timeout: must be a number of seconds > 0",
            id="bad-timeout",
        ),
        pytest.param("event: [pre_tool_call\n", True, "HOOK.yaml:2: not valid YAML", id="yaml"),
        pytest.param(
            "event: pre_tool_call\n", False, "no handler.py beside HOOK.yaml", id="no-handler"
        ),
    ],
)
def test_a_broken_hook_directory_is_listed_with_its_error_and_the_others_load(
    env: Environment, manifest: str, files: bool, error: str
) -> None:
    broken = write_hook(env, "broken", manifest, GUARD)
    if not files:
        (broken / "handler.py").unlink()
    write_hook(env, "guard", "event: pre_tool_call\n", GUARD)
    variables = {**env.variables, "HERMES_STRICT_PLUGINS": "0"}
    lenient = Environment(home=env.home, cwd=env.cwd, variables=variables)
    config = {"hooks": {"enabled": ["broken", "guard"]}}

    found = statuses(host_for(lenient, config))
    result = call(host_for(lenient, config), "terminal", {"command": "rm -f x"})

    assert found["broken"][0] == "error"
    assert error in (found["broken"][1] or "")
    assert found["guard"] == ("enabled", None)
    assert result.error_code == "BLOCKED"


def test_in_strict_mode_a_broken_hook_directory_raises_naming_it(env: Environment) -> None:
    write_hook(env, "broken", "event: pre_tool_call\n", "raise ImportError('missing dependency')\n")

    with pytest.raises(PluginError, match=r"hook directory broken.*missing dependency"):
        host_for(env, {"hooks": {"enabled": ["broken"]}}).start()


@pytest.mark.subprocess
def test_hermes_hooks_list_shows_shell_hooks_and_directories_without_importing_them(
    hermes_cli: InProcessCli,
) -> None:
    marker = hermes_cli.root / "imported"
    hooks_dir = hermes_cli.home / "hooks" / "guard"
    hooks_dir.mkdir(parents=True)
    (hooks_dir / "HOOK.yaml").write_text(
        "event: pre_tool_call\nmatch: terminal\ndescription: no rm\n"
    )
    (hooks_dir / "handler.py").write_text(marked_handler(marker, GUARD))
    (hermes_cli.work / "check.sh").write_text("#!/bin/sh\n")
    (hermes_cli.work / "check.sh").chmod(0o755)
    hermes_cli.config.write_text(
        "hooks:\n  pre_tool_call:\n    - command: ./check.sh\n      match: 'mcp__*'\n"
    )

    rows = json.loads(hermes_cli.subprocess_run("hooks", "list", "--json").stdout)
    table = hermes_cli.run("hooks", "list").stdout

    assert not marker.exists()
    assert rows == [
        {
            "kind": "shell",
            "name": "hooks.pre_tool_call[0]",
            "event": "pre_tool_call",
            "match": "mcp__*",
            "timeout": 10.0,
            "status": "enabled",
            "command": "./check.sh",
        },
        {
            "kind": "directory",
            "name": "guard",
            "path": str(hooks_dir),
            "status": "not enabled",
            "event": "pre_tool_call",
            "match": "terminal",
            "timeout": 10.0,
            "description": "no rm",
            "message": "enable it with: hermes hooks enable guard",
        },
    ]
    assert "guard" in table
    assert "./check.sh" in table


def test_hermes_hooks_list_shows_a_shell_hook_whose_command_is_missing_as_not_runnable(
    hermes_cli: InProcessCli,
) -> None:
    """A hook whose command is not on PATH, or is a file that does not exist, would block every
    call it matches (it fails closed): the listing says so before a call does, naming the
    command and where the hook is declared."""
    present = hermes_cli.work / "present.sh"
    present.write_text("#!/bin/sh\n")
    present.chmod(0o755)
    hermes_cli.config.write_text(
        "hooks:\n"
        "  pre_tool_call:\n"
        "    - command: no-such-hermes-hook --check\n"
        "    - command: ./missing.sh\n"
        "    - command: ./present.sh\n"
        "    - command: FLAG=1 echo ok\n"
        "  post_tool_call:\n"
        "    - command: 'true'\n"
    )

    listed = hermes_cli.run("hooks", "list", "--json", ok=False)
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    shown = hermes_cli.run("hooks", "list", ok=False)
    table = shown.stdout

    assert rows["hooks.pre_tool_call[0]"]["status"] == "not runnable"
    assert rows["hooks.pre_tool_call[0]"]["message"] == (
        f"its command 'no-such-hermes-hook' is not on PATH "
        f"(hooks.pre_tool_call[0] in {hermes_cli.config})"
    )
    assert rows["hooks.pre_tool_call[1]"]["status"] == "not runnable"
    assert rows["hooks.pre_tool_call[1]"]["message"] == (
        f"its command './missing.sh' does not exist ({hermes_cli.work / 'missing.sh'}) "
        f"(hooks.pre_tool_call[1] in {hermes_cli.config})"
    )
    assert [rows[f"hooks.pre_tool_call[{i}]"]["status"] for i in (2, 3)] == ["enabled"] * 2
    assert "message" not in rows["hooks.pre_tool_call[2]"]
    assert rows["hooks.post_tool_call[0]"]["status"] == "enabled"
    assert "its command 'no-such-hermes-hook' is not on PATH" in table
    # A broken row fails the listing, as in skills list and mcp list.
    assert (listed.returncode, shown.returncode) == (1, 1)


@pytest.mark.parametrize("where", ["project", "elsewhere"])
def test_hermes_hooks_list_checks_a_relative_hook_command_where_the_hook_runs(
    hermes_cli: InProcessCli, where: str
) -> None:
    """A shell hook runs in the session's working directory, which for a command is the one it
    was started in: ``hooks list`` started there says what a call started there meets."""
    script = hermes_cli.work / "hooks" / "check.sh"
    script.parent.mkdir()
    script.write_text('#!/bin/sh\necho \'{"action": "block", "message": "checked"}\'\n')
    script.chmod(0o755)
    hermes_cli.config.write_text("hooks:\n  pre_tool_call:\n    - command: ./hooks/check.sh\n")
    here = hermes_cli.work if where == "project" else hermes_cli.root / "elsewhere"
    here.mkdir(exist_ok=True)
    cli = InProcessCli(hermes_cli.root, home=hermes_cli.home, work=here)

    listed = cli.run("hooks", "list", "--json", ok=False)
    (row,) = json.loads(listed.stdout)
    called = cli.run("tools", "call", "todo_list", "{}", ok=False)

    if where == "project":
        assert (row["status"], listed.returncode) == ("enabled", 0)
        assert "blocked by shell hook './hooks/check.sh' (hooks.pre_tool_call[0]): checked" in (
            called.stderr
        )
    else:
        assert (row["status"], listed.returncode) == ("not runnable", 1)
        assert row["message"].startswith(
            f"its command './hooks/check.sh' does not exist ({here / 'hooks' / 'check.sh'})"
        )
        assert "./hooks/check.sh: not found" in called.stderr


def test_hermes_hooks_list_warns_of_a_listed_name_no_hook_directory_has(
    hermes_cli: InProcessCli,
) -> None:
    """As ``hermes plugins list`` does for plugins: a typo in ``hooks.enabled`` enables nothing
    and one in ``hooks.disabled`` leaves the hook running, silently otherwise."""
    hooks_dir = hermes_cli.home / "hooks" / "guard"
    hooks_dir.mkdir(parents=True)
    (hooks_dir / "HOOK.yaml").write_text("event: pre_tool_call\n")
    (hooks_dir / "handler.py").write_text(GUARD)
    hermes_cli.config.write_text("hooks:\n  enabled: [gaurd]\n  disabled: [nothing]\n")

    done = hermes_cli.run("hooks", "list")

    assert (
        f"hooks.enabled in {hermes_cli.config} names 'gaurd', but no hook directory of that "
        "name was found. Did you mean 'guard'?"
    ) in done.stderr
    assert "hooks.disabled" in done.stderr
    assert "'nothing'" in done.stderr


@pytest.mark.subprocess
def test_hermes_hooks_enable_and_disable_edit_the_lists(hermes_cli: HermesCli) -> None:
    hooks_dir = hermes_cli.home / "hooks" / "guard"
    hooks_dir.mkdir(parents=True)
    (hooks_dir / "HOOK.yaml").write_text("event: pre_tool_call\n")
    (hooks_dir / "handler.py").write_text(GUARD)
    hermes_cli.config.write_text("# my hooks\nhooks:\n  disabled: [guard]\n")

    enabled = hermes_cli.run("hooks", "enable", "guard")
    after_enable = hermes_cli.config.read_text()
    listed = hermes_cli.json("hooks", "list", "--json")
    unknown = hermes_cli.run("hooks", "disable", "gaurd")

    assert enabled.stdout.startswith("enabled guard in ")
    assert after_enable == "# my hooks\nhooks:\n  disabled: []\n  enabled:\n  - guard\n"
    assert listed[0]["status"] == "enabled"
    assert "no hook directory named 'gaurd' is installed (yet). Did you mean 'guard'?" in (
        unknown.stderr
    )


def test_a_hook_directory_another_account_could_write_never_runs_and_fails_closed(
    env: Environment,
) -> None:
    marker = env.home / "imported"
    guard = write_hook(
        env, "guard", "event: pre_tool_call\nmatch: terminal\n", marked_handler(marker, GUARD)
    )
    (guard / "handler.py").chmod(0o666)
    variables = {**env.variables, "HERMES_STRICT_PLUGINS": "0"}
    lenient = Environment(home=env.home, cwd=env.cwd, variables=variables)
    config = {"hooks": {"enabled": ["guard"]}}

    found = statuses(host_for(lenient, config))
    result = call(host_for(lenient, config), "terminal", {"command": "true"})

    assert found["guard"][0] == "error"
    assert f"{guard / 'handler.py'} is writable by other accounts" in (found["guard"][1] or "")
    assert not marker.exists()
    assert result.error_code == "BLOCKED"  # an enabled hook that cannot run blocks its calls


@pytest.mark.subprocess
def test_a_hook_directory_that_never_returns_does_not_keep_hermes_running(
    hermes_cli: InProcessCli,
) -> None:
    # A plain handle() runs in a worker thread, which its timeout abandons (a thread cannot be
    # stopped): the command answered "blocked" after 1 s, then waited at exit for the thread,
    # so `hermes tools call` never ended (journey3's walk).
    _enabled_hook_and_notes(
        hermes_cli,
        "stuck",
        "event: pre_tool_call\ntimeout: 1\n",
        "import threading\n\n\ndef handle(event):\n    threading.Event().wait()\n",
    )

    process = hermes_cli.start("tools", "call", "read_file", '{"path": "notes.txt"}')
    try:
        _, stderr = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail("hermes tools call was still running 60 s after its hook timed out")

    assert process.returncode == 1
    assert "error (BLOCKED): read_file was blocked: the pre_tool_call hook of hook directory" in (
        stderr
    )
    assert "'stuck' did not answer within 1 s." in stderr


@pytest.mark.subprocess
def test_what_a_hook_directory_prints_stays_off_the_result_of_hermes_tools_call(
    hermes_cli: InProcessCli,
) -> None:
    # A print() left in a handler (to see the events) went to standard output, before the
    # result: `hermes tools call --json` printed something that is not JSON (journey3's walk).
    _enabled_hook_and_notes(
        hermes_cli,
        "chatty",
        "event: pre_tool_call\n",
        "def handle(event):\n    print('saw', event['tool_name'])\n",
    )

    result = hermes_cli.subprocess_run(
        "tools", "call", "read_file", '{"path": "notes.txt"}', "--json"
    )

    assert json.loads(result.stdout)["content"][0]["text"].startswith("hello")
    assert "saw read_file\n" in result.stderr


def _enabled_hook_and_notes(cli: InProcessCli, name: str, manifest: str, handler: str) -> None:
    """Hook directory ``name`` in the CLI's home, the only one enabled, and ``notes.txt`` (a
    line of ``hello``) in its working directory for ``read_file`` to read."""
    directory = cli.home / "hooks" / name
    directory.mkdir(parents=True)
    (directory / "HOOK.yaml").write_text(manifest)
    (directory / "handler.py").write_text(handler)
    (cli.work / "notes.txt").write_text("hello\n")
    cli.config.write_text(f"hooks:\n  enabled: [{name}]\n")


def linked_project_hook(hermes_cli: InProcessCli, marker: Path) -> Path:
    """A hook directory the user develops in the project, linked into their own
    ``$HERMES_HOME/hooks``: the project's, so gated while the gate is closed."""
    directory = hermes_cli.work / "hooks" / "guard"
    directory.mkdir(parents=True)
    (directory / "HOOK.yaml").write_text("event: pre_tool_call\n")
    (directory / "handler.py").write_text(marked_handler(marker, GUARD))
    (hermes_cli.home / "hooks").mkdir()
    (hermes_cli.home / "hooks" / "guard").symlink_to(directory)
    return hermes_cli.home / "hooks" / "guard"


GATED_HOOK_WARNING = (
    "guard is enabled but will not load: hook directory 'guard' (project, {path}) is gated: "
    "set HERMES_ENABLE_PROJECT_PLUGINS=1 in the environment to load the project's hook "
    "directories (only for a project you trust)"
)


@pytest.mark.subprocess
@pytest.mark.parametrize(
    "command",
    [("tools", "call", "todo_list", "{}", "--yes"), ("doctor", "--offline")],
    ids=["tools-call", "doctor"],
)
def test_a_gated_hook_directory_the_config_enables_is_warned_of_by_a_command_that_runs_it(
    hermes_cli: InProcessCli, tmp_path: Path, command: tuple[str, ...]
) -> None:
    # As for a gated plugin: the user's own config enables the hook, the gate keeps it out,
    # and a command that would run it says so once, instead of the hook silently never running.
    marker = tmp_path / "imported"
    path = linked_project_hook(hermes_cli, marker)
    hermes_cli.config.write_text("hooks:\n  enabled: [guard]\n")

    done = hermes_cli.run(*command, ok=False)

    assert not marker.exists()
    said = done.stdout + done.stderr
    assert said.count(GATED_HOOK_WARNING.format(path=path)) == 1, said


@pytest.mark.subprocess
def test_a_gated_hook_directory_the_config_enables_is_said_once_by_hooks_list(
    hermes_cli: InProcessCli, tmp_path: Path
) -> None:
    # Its row says "gated" and what it takes: a warning would repeat it.
    linked_project_hook(hermes_cli, tmp_path / "imported")
    hermes_cli.config.write_text("hooks:\n  enabled: [guard]\n")

    done = hermes_cli.run("hooks", "list")

    said = done.stdout + done.stderr
    assert "gated" in done.stdout
    assert said.count("HERMES_ENABLE_PROJECT_PLUGINS=1") == 1, said


@pytest.mark.subprocess
def test_hooks_enable_of_a_gated_hook_directory_says_it_will_not_load(
    hermes_cli: InProcessCli, tmp_path: Path
) -> None:
    path = linked_project_hook(hermes_cli, tmp_path / "imported")

    done = hermes_cli.run("hooks", "enable", "guard")

    assert done.stdout.startswith("enabled guard in ")
    assert GATED_HOOK_WARNING.format(path=path) in done.stderr


def test_host_warnings_hold_the_hooks_warnings_after_the_plugins_ones(env: Environment) -> None:
    # An embedder reading host.warnings saw the plugins' warnings and none of the hooks': a
    # hook directory that fails to load, a shell hook whose command is missing (both block
    # every call they would see) were only logged.
    write_hook(env, "broken", "event: [pre_tool_call\n", GUARD)
    lenient = Environment(
        home=env.home, cwd=env.cwd, variables={**env.variables, "HERMES_STRICT_PLUGINS": "0"}
    )
    host = host_for(
        lenient,
        {
            "hooks": {
                "enabled": ["broken", "absent"],
                "pre_tool_call": [{"command": "no-such-hermes-hook --check"}],
            },
            "plugins": {"enabled": ["absent-plugin"]},
        },
    )
    host.start()
    try:
        said, hooks = host.warnings, host.hook_warnings
    finally:
        host.close()

    (failed,) = [w for w in said if w.startswith("hook directory 'broken'")]
    assert "failed to load: " in failed
    assert "HOOK.yaml:2: not valid YAML" in failed
    (shell,) = [w for w in said if "no-such-hermes-hook" in w]
    assert shell == (
        "shell hook 'no-such-hermes-hook --check' (hooks.pre_tool_call[0]) cannot run: its "
        "command 'no-such-hermes-hook' is not on PATH; fix or remove it"
    )
    assert hooks == [failed, shell]
    assert said[-len(hooks) :] == hooks


@pytest.mark.subprocess
@pytest.mark.parametrize(
    "command",
    [("tools", "list"), ("doctor", "--offline"), ("plugins", "list")],
    ids=["tools-list", "doctor", "plugins-list"],
)
def test_a_hook_that_cannot_run_is_said_once_by_a_command_that_starts_a_host(
    hermes_cli: InProcessCli, command: tuple[str, ...]
) -> None:
    # tools list said nothing of a shell hook whose command is missing; doctor says it in its
    # hooks rows, plugins list leaves it to hooks list: neither may now repeat it as a plugin
    # warning.
    hermes_cli.config.write_text(
        "hooks:\n  pre_tool_call:\n    - command: no-such-hermes-hook --check\n"
    )

    done = hermes_cli.run(*command, ok=False)

    said = done.stdout + done.stderr
    expected = 0 if command[0] == "plugins" else 1
    assert said.count("'no-such-hermes-hook' is not on PATH") == expected, said


@pytest.mark.subprocess
def test_doctor_says_an_enabled_hook_directory_that_failed_to_load_once(
    hermes_cli: InProcessCli, hermes_home: Path
) -> None:
    # It was said twice in the hooks rows: a "directories" warning, then the directory's row.
    directory = hermes_home / "hooks" / "bad"
    directory.mkdir(parents=True)
    (directory / "HOOK.yaml").write_text("event: pre_tool_call\n")
    (directory / "handler.py").write_text("import no_such_hermes_module\n")
    hermes_cli.config.write_text("hooks:\n  enabled: [bad]\n")

    done = hermes_cli.run("doctor", "--offline", ok=False)

    said = done.stdout + done.stderr
    assert said.count("No module named 'no_such_hermes_module'") == 1, said
    (row,) = [line for line in done.stdout.splitlines() if "no_such_hermes_module" in line]
    assert row.split()[:3] == ["hooks", "bad", "error"]
    assert f"({directory}) failed to load" in row
    assert "the calls it would see are blocked" in row
