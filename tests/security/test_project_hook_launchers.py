"""A shell hook of the user's, run in a project whose gate is closed (a cloned repository), is
not run when a command of its line is a launcher hermes would not start there as an MCP server
(``uv run``, ``pnpm dlx``, ``yarn dlx``, ``bunx`` where the project holds what it reads), or one
whose guard needs arguments hermes does not write into a hook's line (``env -i python3 -m``,
``npx``): docs/security.md, "The project gate", and docs/plugins.md, "Shell hooks".

Real hosts, real shell hooks, a real ``uv`` (the test extra's) and a real Python; ``pnpm``,
``yarn`` and ``bun`` are refused before anything runs, so their rows hold without them.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from test_project_launchers import GATE, call, environment, places, policy_off, uv_command
from test_project_readers import plant_virtual_environment

from hermes_core._host import Host

__all__ = ["places"]  # the fixture, shared with test_project_launchers

ANSWER = "print('{}')"


@pytest.mark.subprocess
@pytest.mark.parametrize("gate", ["", "1"], ids=["gate-closed", "gate-open"])
@pytest.mark.parametrize(
    "shape", ["plain", "sh -c", "after echo", "with a substitution", "after if"]
)
def test_the_users_uv_run_shell_hook_never_runs_the_python_the_project_plants(
    places: dict[str, Path], gate: str, shape: str
) -> None:
    # A hook `uv run ...` of ~/.hermes/config.yaml runs in the project: uv ran the clone's
    # .venv/bin/python (to ask its version) before the hook's own command.
    marker = places["user_home"] / "planted-python-ran"
    plant_virtual_environment(places["project"], marker)
    line = shlex.join(
        [uv_command("uv"), "run", "--offline", "--no-project", sys.executable, "-c", ANSWER]
    )
    command = {
        "plain": line,
        "sh -c": f"sh -c {shlex.quote(line)}",
        "after echo": f"echo checking >&2 && {line}",
        "with a substitution": f'{line} "$(pwd)"',
        "after if": f"if true; then {line}; fi",
    }[shape]
    hook = {"command": command, "match": "todo_list", "timeout": 30}
    host = Host(
        policy_off(hooks={"pre_tool_call": [hook]}), environment(places, gate), strict=False
    )

    result = call(host, "todo_list", {})

    assert marker.exists() == bool(gate)
    if not gate:
        assert result.error_code is not None  # a pre_tool_call hook fails closed
        said = result.text_content
        for part in ("hooks.pre_tool_call[0]", "uv run", str(places["project"] / ".venv")):
            assert part in said, said
        for part in ("uv --directory", "cd ", "installed command", f"{GATE}=1"):
            assert part in said, said
        assert "\n" not in said.strip(), said


PLANTED_MODULE = """
from pathlib import Path
Path({marker!r}).touch()
print('{{"action": "block", "message": "planted"}}')
"""


@pytest.mark.subprocess
@pytest.mark.parametrize("gate", ["", "1"], ids=["gate-closed", "gate-open"])
def test_the_users_env_i_python_m_shell_hook_never_imports_a_module_the_project_plants(
    places: dict[str, Path], gate: str
) -> None:
    # `env -i` drops the PYTHONSAFEPATH hermes gives the hook, and hermes does not rewrite a
    # hook's line (as it writes `env -i PYTHONSAFEPATH=1 ...` for a server): the clone's
    # audit_hook.py decided every call.
    marker = places["user_home"] / "planted-hook-ran"
    (places["project"] / "audit_hook.py").write_text(PLANTED_MODULE.format(marker=str(marker)))
    hook = {"command": f"env -i {sys.executable} -m audit_hook", "match": "todo_list"}
    host = Host(
        policy_off(hooks={"pre_tool_call": [hook]}), environment(places, gate), strict=False
    )

    result = call(host, "todo_list", {})

    assert marker.exists() == bool(gate)
    if not gate:
        said = result.text_content
        assert result.error_code is not None
        assert f"env -i PYTHONSAFEPATH=1 {sys.executable} -m audit_hook" in said, said
        assert f"{GATE}=1" in said, said


@pytest.mark.subprocess
def test_a_refused_observer_shell_hook_is_not_run_and_the_call_goes_on(
    places: dict[str, Path], caplog: pytest.LogCaptureFixture
) -> None:
    marker = places["user_home"] / "planted-python-ran"
    plant_virtual_environment(places["project"], marker)
    line = shlex.join([uv_command("uv"), "run", "--offline", "--no-project", sys.executable])
    hook = {"command": f"{line} -c pass"}
    host = Host(policy_off(hooks={"post_tool_call": [hook]}), environment(places, ""), strict=False)

    result = call(host, "todo_list", {})

    assert result.error_code is None, result.text_content
    assert not marker.exists()
    said = [r.getMessage() for r in caplog.records if "hooks.post_tool_call[0]" in r.getMessage()]
    assert said, [r.getMessage() for r in caplog.records]
    assert "uv run" in said[0], said
    assert str(places["project"] / ".venv") in said[0], said


@pytest.mark.parametrize(
    ("line", "planted", "refused"),
    [
        ("uv run audit", "pyproject.toml", "`uv run` reads"),
        ("LC_ALL=C uv --offline run audit", ".venv", "`uv run` reads"),
        ("pnpm dlx audit-hook", ".npmrc", "`pnpm dlx` reads"),
        ("yarn dlx audit-hook", ".yarnrc.yml", "`yarn dlx` reads"),
        ("bunx audit-hook", "node_modules", "`bunx` reads"),
        ("env A=1 bunx audit-hook", "bunfig.toml", "`bunx` reads"),
        ("sh -c 'uv run audit'", "uv.toml", "`uv run` reads"),
        ("bash -lc 'pnpm dlx audit-hook'", ".npmrc", "`pnpm dlx` reads"),
        ("echo x | uv run audit", ".python-version", "`uv run` reads"),
        ("exec uv run audit", "uv.toml", "`uv run` reads"),
        ('uv run audit "$(pwd)"', "pyproject.toml", "`uv run` reads"),
        ("uv run audit $(git rev-parse HEAD)", ".venv", "`uv run` reads"),
        ("at=$(date); uv run audit", "pyproject.toml", "`uv run` reads"),
        ('echo "$(uv run audit)"', "pyproject.toml", "`uv run` reads"),
        ("echo `uv run audit`", "pyproject.toml", "`uv run` reads"),
        ("jq -c . <(uv run audit)", "pyproject.toml", "`uv run` reads"),
        ("if uv run audit; then :; fi", "pyproject.toml", "`uv run` reads"),
        ("if true; then uv run audit; fi", "pyproject.toml", "`uv run` reads"),
        ("! uv run audit", "pyproject.toml", "`uv run` reads"),
        ("{ uv run audit; }", "pyproject.toml", "`uv run` reads"),
        ("while :; do uv run audit; done", "pyproject.toml", "`uv run` reads"),
        ("exec -a audit uv run audit", "pyproject.toml", "`uv run` reads"),
        ("timeout -s KILL 5 uv run audit", "pyproject.toml", "`uv run` reads"),
        ("nice -n 5 uv run audit", "pyproject.toml", "`uv run` reads"),
        ("setsid uv run audit", "pyproject.toml", "`uv run` reads"),
        ("bash -o pipefail -c 'uv run audit | jq .'", "pyproject.toml", "`uv run` reads"),
        ("uv run audit <<'EOF'\n{}\nEOF", "pyproject.toml", "`uv run` reads"),
        ("echo a; uv run audit <<EOF\n$(date)\nEOF", "pyproject.toml", "`uv run` reads"),
        ("cd tools && uv run audit", "pyproject.toml", "`uv run` reads"),  # still the project's
        ("(cd ~/tools && make); uv run audit", "pyproject.toml", "`uv run` reads"),
        ("pushd ~/tools; popd; uv run audit", "pyproject.toml", "`uv run` reads"),
        ("cd ~/tools && uv run a; cd - && uv run audit", "pyproject.toml", None),  # cd -: unknown
        ("env -i python3 -m audit_hook", "README.md", "write `env -i PYTHONSAFEPATH=1 python3"),
        ("npx -y audit-hook", "package.json", "write `npx --prefix"),
        ("npx -y audit-hook", "node_modules", "`npx` reads"),
        ("npm exec -- audit-hook", ".npmrc", "write `npm exec --prefix"),
        ("deno run npm:audit-hook", "deno.json", "write `deno run --no-config npm:audit-hook`"),
        ("deno run npm:audit-hook", "package.json", "`deno` reads"),
        ("python3 -E -m audit_hook", "README.md", "write `python3 -P -E -m audit_hook`"),
        ("uv run audit", "README.md", None),
        ("cd ~/tools && uv run audit", "pyproject.toml", None),  # runs in a folder of its own
        ("pushd ~/tools && uv run audit", "pyproject.toml", None),
        ("cd && uv run audit", "pyproject.toml", None),  # to $HOME
        ("cd .. && uv run audit", "pyproject.toml", None),
        ('cd "$TOOLS" && uv run audit', "pyproject.toml", None),  # known when it runs
        ("uv --directory ~/tools run audit", "pyproject.toml", None),
        ("$UV run audit", "pyproject.toml", None),  # known only when the shell runs it
        ("uvx audit", "uv.toml", None),
        ("python3 -m audit_hook", "README.md", None),  # PYTHONSAFEPATH is enough
        ("npx --prefix /opt/hooks -y audit-hook", "node_modules", None),
        # Where the folder holds nothing npx or deno reads, they run as written: a user's
        # `npx prettier` hook is not refused in every folder but their home.
        ("npx -y audit-hook", "README.md", None),
        ("deno run npm:audit-hook", "README.md", None),
        ("env -i PYTHONSAFEPATH=1 python3 -m audit_hook", "README.md", None),
        ("pnpm install", ".npmrc", None),
        ("jq -c . >> calls.jsonl", "pyproject.toml", None),
        ('jq -c . >> "$(date +%F).jsonl"', "pyproject.toml", None),
        ('cd ~/tools && uv run audit "$(pwd)"', "pyproject.toml", None),  # after the cd
        ("command -v npx >/dev/null && jq -c .", "README.md", None),  # looked up, not run
        ("command -V uv", "pyproject.toml", None),
        ("echo 'uv run audit'", "pyproject.toml", None),
        ("jq -c . <<'EOF'\nuv run audit\nEOF", "pyproject.toml", None),  # what jq reads
    ],
)
def test_which_shell_hooks_are_refused_in_a_gated_project(
    places: dict[str, Path], line: str, planted: str, refused: str | None
) -> None:
    from hermes_core._hooks.shell import hook_refusal

    project = places["project"]
    found = project / planted
    found.mkdir() if planted in ("node_modules", ".venv") else found.write_text("x\n")
    closed = environment(places, "")

    said = hook_refusal(line, project, closed)

    assert (said is not None) is (refused is not None), said
    if refused is not None:
        assert said is not None
        assert refused in said, said
        assert f"{GATE}=1" in said, said
        assert "\n" not in said, said
    assert hook_refusal(line, project, environment(places, "1")) is None
    assert hook_refusal(line, places["user_home"], closed) is None


def test_hermes_hooks_list_says_which_shell_hooks_a_gated_project_keeps_from_running(
    hermes_home: Path, hermes_project: Path, tmp_path: Path
) -> None:
    # `hooks list` started in the project says what a call started there meets: a refused
    # pre_tool_call hook blocks every call it matches, as a hook whose command is missing does.
    from hermes_core.testing._cli_in_process import InProcessCli

    cli = InProcessCli(tmp_path, home=hermes_home, work=hermes_project)
    (hermes_project / "pyproject.toml").write_text("[project]\nname = 'clone'\n")
    cli.config.write_text(
        "hooks:\n  pre_tool_call:\n    - command: uv run audit\n    - command: 'true'\n"
    )

    listed = cli.run("hooks", "list", "--json", ok=False)
    first, second = json.loads(listed.stdout)

    assert listed.returncode == 1
    assert first["status"] == "not runnable"
    said = first["message"]
    assert f"`uv run` reads {hermes_project.resolve() / 'pyproject.toml'}" in said, said
    assert said.endswith(f"(hooks.pre_tool_call[0] in {cli.config})"), said
    assert second["status"] == "enabled"
    opened = cli.run("hooks", "list", "--json", env=cli.variables(**{GATE: "1"}))
    assert [row["status"] for row in json.loads(opened.stdout)] == ["enabled", "enabled"]


def test_a_host_started_in_a_gated_project_warns_of_a_shell_hook_it_keeps_from_running(
    places: dict[str, Path],
) -> None:
    # The warning a command starting a host prints (`hermes: warning: ...`), as for a hook
    # whose command is missing: one line naming the hook, the launcher, the file and the remedies.
    (places["project"] / "pyproject.toml").write_text("[project]\nname = 'clone'\n")
    hook = {"command": "uv run audit", "match": "todo_list"}
    config = policy_off(hooks={"pre_tool_call": [hook]})
    host = Host(config, environment(places, ""), strict=False)
    host.start()
    try:
        said = host.hook_warnings
    finally:
        host.close()
    opened = Host(config, environment(places, "1"), strict=False)
    opened.start()
    try:
        assert not [w for w in opened.hook_warnings if "not started" in w]
    finally:
        opened.close()

    (warned,) = said
    assert warned.startswith(
        "shell hook 'uv run audit' (hooks.pre_tool_call[0]) cannot run: not started: `uv run` "
        f"reads {places['project'] / 'pyproject.toml'}"
    ), warned
    for part in ("uv --directory", "cd /path/to/yours", f"{GATE}=1"):
        assert part in warned, warned
    assert "\n" not in warned
