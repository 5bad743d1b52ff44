"""The launchers no argument keeps from what a project plants (``uv run``, ``pnpm dlx``, ``yarn
dlx``, ``bunx``) are not started by hermes in a project whose gate is closed where the project
holds what they would read; and ``env -i`` keeps the guard of the Python it runs
(docs/security.md, "The project gate").

A real ``uv`` (the test extra's) and a real Python; ``pnpm``, ``yarn`` and ``bun`` are refused
before anything runs, so their tests hold without them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from test_project_launchers import GATE, call, environment, places, policy_off, uv_command

from hermes_core._host import Host
from hermes_core._mcp.launch import project_guard

__all__ = ["places"]  # the fixture, shared with test_project_launchers

PLANTED_PYTHON = "#!/bin/sh\ntouch {marker}\nexit 1\n"


def plant_virtual_environment(folder: Path, marker: Path) -> None:
    """A ``.venv`` whose ``python`` touches ``marker`` when anything runs it."""
    python = folder / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(PLANTED_PYTHON.format(marker=marker))
    python.chmod(0o755)
    (folder / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")


@pytest.mark.subprocess
@pytest.mark.parametrize("gate", ["", "1"], ids=["gate-closed", "gate-open"])
@pytest.mark.parametrize("where", ["here", "above"])
def test_the_users_uv_run_server_is_not_started_where_the_project_plants_a_virtual_environment(
    places: dict[str, Path], gate: str, where: str
) -> None:
    # `uv run` runs the `python` of the .venv it finds in its working directory or a folder
    # above it (to ask its version), even with --no-project: a clone's .venv ran at the first
    # `hermes mcp list` there.
    marker = places["user_home"] / "planted-python-ran"
    project = places["project"]
    plant_virtual_environment(project, marker)
    args = ["run", "--offline", "--no-project", sys.executable, "-m", "mcp_server_time"]
    server = {"command": uv_command("uv"), "args": args, "connect_timeout": 30}
    if where == "above":
        (project / "tools").mkdir()
        server["cwd"] = "tools"
    host = Host(policy_off(mcp_servers={"time": server}), environment(places, gate), strict=False)

    result = call(host, "mcp__time__get_current_time", {"timezone": "UTC"})

    assert marker.exists() == bool(gate)  # with the gate open, uv then runs another Python
    if not gate:
        assert result.error_code is not None
        said = result.text_content
        for part in ("'time'", "uv run", str(project / ".venv"), "`cwd`", "uv --directory"):
            assert part in said, said
        assert f"{GATE}=1" in said, said


@pytest.mark.subprocess
def test_the_users_uv_run_server_starts_in_a_gated_project_that_plants_nothing_uv_reads(
    places: dict[str, Path],
) -> None:
    (places["project"] / "README.md").write_text("a clone\n")
    args = ["run", "--offline", "--no-project", sys.executable, "-m", "mcp_server_time"]
    server = {"command": uv_command("uv"), "args": args, "connect_timeout": 30}
    host = Host(policy_off(mcp_servers={"time": server}), environment(places, ""), strict=False)

    result = call(host, "mcp__time__get_current_time", {"timezone": "UTC"})

    assert result.error_code is None, result.text_content
    assert "UTC" in result.text_content


@pytest.mark.subprocess
def test_the_users_uv_run_server_behind_an_option_hermes_does_not_list_is_still_refused(
    places: dict[str, Path],
) -> None:
    # uv takes options it does not list in its help (`--preview-features X`): the value of
    # one is not `uv`'s command, and `run` after it still reads the clone's .venv.
    marker = places["user_home"] / "planted-python-ran"
    plant_virtual_environment(places["project"], marker)
    args = ["--preview-features", "format", "run", "--offline", "--no-project"]
    server = {"command": uv_command("uv"), "args": [*args, sys.executable, "-m", "mcp_server_time"]}
    host = Host(policy_off(mcp_servers={"time": server}), environment(places, ""), strict=False)

    result = call(host, "mcp__time__get_current_time", {"timezone": "UTC"})

    assert not marker.exists()
    assert result.error_code is not None
    assert str(places["project"] / ".venv") in result.text_content, result.text_content


PLANTED_SCRIPT = "require('fs').writeFileSync({marker!r}, '')\n"


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("launcher", "planted"),
    [
        (["pnpm", "dlx"], {".npmrc": "global-pnpmfile=./planted.cjs\n"}),
        (["pnpx"], {".npmrc": "global-pnpmfile=./planted.cjs\n"}),
        (["yarn", "dlx"], {".yarnrc.yml": "yarnPath: ./planted.cjs\n"}),
        (["bunx"], {"node_modules/.bin/server-everything": "#!/bin/sh\ntouch {marker}\n"}),
        (["bun", "x"], {"bunfig.toml": 'preload = ["./planted.cjs"]\n'}),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else "",
)
def test_the_users_node_launcher_server_is_not_started_where_the_project_plants_what_it_reads(
    places: dict[str, Path], launcher: list[str], planted: dict[str, str]
) -> None:
    # pnpm dlx reads the project's .npmrc, yarn dlx its .yarnrc.yml (yarnPath runs in place of
    # yarn), bunx its node_modules and bunfig.toml: none has a switch that keeps them out.
    marker = places["user_home"] / "planted-ran"
    project = places["project"]
    (project / "planted.cjs").write_text(PLANTED_SCRIPT.format(marker=str(marker)))
    for name, text in planted.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text.format(marker=marker))
        (project / name).chmod(0o755)
    args = [*launcher[1:], "@modelcontextprotocol/server-everything", "stdio"]
    server = {"command": launcher[0], "args": args, "connect_timeout": 30}
    host = Host(
        policy_off(mcp_servers={"everything": server}), environment(places, ""), strict=False
    )

    result = call(host, "mcp__everything__echo", {"message": "hi"})

    assert result.error_code is not None
    assert not marker.exists()
    said = result.text_content
    first = Path(next(iter(planted))).parts[0]
    for part in ("'everything'", " ".join(launcher), str(project / first), "`cwd`"):
        assert part in said, said
    assert f"{GATE}=1" in said, said


@pytest.mark.parametrize(
    ("command", "args", "planted", "refused"),
    [
        ("uv", ["run", "server"], "pyproject.toml", True),
        ("/usr/bin/uv", ["--offline", "run", "server"], "uv.toml", True),
        ("uv", ["run", "--no-project", "server"], ".python-version", True),
        ("uv", ["--color", "never", "run", "server"], "above/.venv", True),
        ("uv", ["--preview-features", "format", "run", "server"], ".venv", True),
        ("uv", ["--python-fetch", "automatic", "run", "server"], "pyproject.toml", True),
        ("uv", ["-qp", "3.12", "run", "server"], "above/.venv", True),
        ("uv", ["--offline", "tool", "run", "server"], "uv.toml", False),
        ("python3", ["-m", "uv", "run", "server"], "uv.toml", True),
        (
            "/usr/bin/python3",
            ["-I", "-W", "ignore", "-m", "uv", "run", "x"],
            "pyproject.toml",
            True,
        ),
        ("python3", ["-Imuv", "--offline", "run", "server"], "above/.venv", True),
        ("env", ["-i", "python3", "-m", "uv", "run", "server"], "uv.toml", True),
        ("python3", ["-m", "uv", "tool", "run", "server"], "uv.toml", False),
        ("uv", ["run", "server"], "README.md", False),
        ("uv", ["--directory", "/opt/server", "run", "server"], "pyproject.toml", False),
        ("uv", ["run", "--directory", "/opt/server", "server"], "pyproject.toml", False),
        ("uv", ["--directory", "tools", "run", "server"], "tools/.venv", True),
        ("uv", ["run", "--directory=tools/x", "server"], "tools/uv.toml", True),
        ("uv", ["--directory", "tools", "run", "server"], "pyproject.toml", True),
        ("uv", ["tool", "run", "server"], "uv.toml", False),
        ("uvx", ["server"], "uv.toml", False),
        ("pnpm", ["dlx", "server"], ".npmrc", True),
        ("pnpm", ["--silent", "dlx", "server"], "pnpm-workspace.yaml", True),
        ("pnpm", ["install"], ".npmrc", False),
        ("pnpx", ["server"], "above/.npmrc", True),
        ("yarn", ["dlx", "server"], "above/.yarnrc.yml", True),
        ("yarn", ["dlx", "server"], ".npmrc", False),
        ("bunx", ["server"], "node_modules", True),
        ("bun", ["x", "server"], "bunfig.toml", True),
        ("bun", ["run", "serve"], "bunfig.toml", False),  # the project's own, as `npm run`
        ("pnpm", ["exec", "server"], "node_modules", False),
        ("yarn", ["exec", "server"], ".yarnrc.yml", False),
        ("pnpm", ["dlx", "server"], "package.json", False),  # corepack's packageManager
        ("env", ["A=1", "bunx", "server"], "node_modules", True),
        ("pnpm", ["-C", "/opt/server", "dlx", "server"], ".npmrc", False),  # pnpm reads DIR's
        ("pnpm", ["--dir", "tools", "dlx", "server"], "tools/.npmrc", True),
        ("pnpm", ["--dir=tools", "dlx", "server"], "tools/pnpm-workspace.yaml", True),
        ("pnpm", ["-Ctools", "dlx", "server"], "tools/.npmrc", True),
        ("env", ["-C", "/opt/server", "uv", "run", "server"], "pyproject.toml", False),
        ("env", ["--chdir=tools", "uv", "run", "server"], "tools/.venv", True),
        ("env", ["-iC", "tools", "bunx", "server"], "tools/bunfig.toml", True),
        ("env", ["-C", "tools", "uv", "--directory", "x", "run", "s"], "tools/x/uv.toml", True),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else str(value),
)
def test_which_launchers_are_refused_in_a_gated_project_and_for_which_files(
    places: dict[str, Path], command: str, args: list[str], planted: str, refused: bool
) -> None:
    project = places["project"]
    cwd = project / "above" / "here" if planted.startswith("above/") else project
    cwd.mkdir(parents=True, exist_ok=True)
    found = project / planted
    found.parent.mkdir(parents=True, exist_ok=True)
    found.mkdir() if planted.endswith(("modules", ".venv")) else found.write_text("x\n")
    closed = environment(places, "")

    guard = project_guard(command, args, cwd, closed)

    assert (guard.refusal is not None) is refused
    if refused:
        assert str(found) in (guard.refusal or "")
    assert project_guard(command, args, cwd, environment(places, "1")).refusal is None
    assert project_guard(command, args, places["user_home"], closed).refusal is None


@pytest.mark.subprocess
@pytest.mark.parametrize("where", ["a folder of the project", "a folder of the user's"])
def test_the_users_uv_run_server_behind_env_c_is_judged_in_the_folder_env_moves_to(
    places: dict[str, Path], where: str
) -> None:
    # `env -C DIR uv run` runs uv in DIR: a clone's tools/.venv ran (hermes looked only at the
    # project's root), and a DIR of the user's was refused for the project's pyproject.toml.
    marker = places["user_home"] / "planted-python-ran"
    project = places["project"]
    plant_virtual_environment(project / "tools", marker)
    folder = project / "tools"
    if where.endswith("user's"):
        (project / "pyproject.toml").write_text("[project]\nname = 'clone'\n")
        folder = places["user_home"] / "server"
        folder.mkdir()
    uv_run = [uv_command("uv"), "run", "--offline", "--no-project", sys.executable]
    args = ["-C", str(folder), *uv_run, "-m", "mcp_server_time"]
    server = {"command": "env", "args": args, "connect_timeout": 30}
    host = Host(policy_off(mcp_servers={"time": server}), environment(places, ""), strict=False)

    result = call(host, "mcp__time__get_current_time", {"timezone": "UTC"})

    assert not marker.exists()
    if where.endswith("project"):
        assert result.error_code is not None
        assert str(project / "tools" / ".venv") in result.text_content, result.text_content
    else:
        assert result.error_code is None, result.text_content


def test_a_file_in_the_users_home_above_the_project_does_not_refuse_a_launcher(
    places: dict[str, Path],
) -> None:
    # The user's own ~/.python-version (pyenv's) or ~/.npmrc is no project's.
    project = places["user_home"] / "src" / "clone"
    project.mkdir(parents=True)
    (places["user_home"] / ".python-version").write_text("3.12\n")
    (places["user_home"] / ".npmrc").write_text("registry=https://registry.npmjs.org/\n")
    env = environment(places, "")

    assert project_guard("uv", ["run", "server"], project, env).refusal is None
    assert project_guard("pnpm", ["dlx", "server"], project, env).refusal is None


PLANTED_MODULE = """
from pathlib import Path
Path({marker!r}).touch()
raise SystemExit(1)
"""


@pytest.mark.subprocess
@pytest.mark.parametrize("gate", ["", "1"], ids=["gate-closed", "gate-open"])
@pytest.mark.parametrize(
    "options", [["-i"], ["-"], ["--ignore-environment", "TZ=UTC"]], ids=" ".join
)
def test_the_users_env_i_python_m_server_never_imports_a_module_the_project_plants(
    places: dict[str, Path], gate: str, options: list[str]
) -> None:
    # `env -i` starts Python with an empty environment: the PYTHONSAFEPATH hermes set was
    # dropped, and `env -i python3 -m mcp_server_time` imported the clone's module.
    marker = places["user_home"] / "planted-module-ran"
    (places["project"] / "mcp_server_time.py").write_text(PLANTED_MODULE.format(marker=str(marker)))
    args = [*options, sys.executable, "-m", "mcp_server_time"]
    server = {"command": "env", "args": args, "connect_timeout": 30}
    host = Host(policy_off(mcp_servers={"time": server}), environment(places, gate), strict=False)

    result = call(host, "mcp__time__get_current_time", {"timezone": "UTC"})

    assert marker.exists() == bool(gate)
    if not gate:
        assert result.error_code is None, result.text_content


@pytest.mark.parametrize(
    ("args", "guarded"),
    [
        (["-i", "python3", "-m", "srv"], ["-i", "PYTHONSAFEPATH=1", "python3", "-m", "srv"]),
        (
            ["-", "A=1", "python3", "-m", "srv"],
            ["-", "A=1", "PYTHONSAFEPATH=1", "python3", "-m", "srv"],
        ),
        (
            ["-iu", "X", "python3", "-c", "x"],
            ["-iu", "X", "PYTHONSAFEPATH=1", "python3", "-c", "x"],
        ),
        (["-i", "PYTHONSAFEPATH=", "python3", "-m", "srv"], None),  # the entry's own wins
        (
            ["-i", "python3", "-E", "-m", "srv"],
            ["-i", "PYTHONSAFEPATH=1", "python3", "-P", "-E", "-m", "srv"],
        ),
        (["A=1", "python3", "-m", "srv"], None),  # the environment's variable reaches it
        (["-i", "python3", "/opt/srv.py"], None),
        (["-u", "X", "python3", "-m", "srv"], None),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else str(value),
)
def test_which_env_runs_carry_the_guard_as_an_assignment_in_a_gated_project(
    places: dict[str, Path], args: list[str], guarded: list[str] | None
) -> None:
    guard = project_guard("/usr/bin/env", args, places["project"], environment(places, ""))

    assert guard.args == (None if guarded is None else tuple(guarded))


@pytest.mark.subprocess
@pytest.mark.parametrize("options", [["-S"], ["-vS"], ["--split-string"]], ids=" ".join)
def test_the_users_env_s_python_m_server_never_imports_a_module_the_project_plants(
    places: dict[str, Path], options: list[str]
) -> None:
    # `env -S 'python3 -m NAME'` splits its one string into Python's command line: hermes saw
    # no Python there, and the clone's module was imported.
    marker = places["user_home"] / "planted-module-ran"
    (places["project"] / "mcp_server_time.py").write_text(PLANTED_MODULE.format(marker=str(marker)))
    args = [*options, f"{sys.executable} -m mcp_server_time"]
    server = {"command": "env", "args": args, "connect_timeout": 30}
    host = Host(policy_off(mcp_servers={"time": server}), environment(places, ""), strict=False)

    result = call(host, "mcp__time__get_current_time", {"timezone": "UTC"})

    assert not marker.exists()
    assert result.error_code is not None
    for part in ("'time'", "env -S", f"{GATE}=1"):
        assert part in result.text_content, result.text_content


@pytest.mark.parametrize(
    ("args", "refused"),
    [
        (["-S", "uv run server"], True),
        (["--split-string=npx -y server"], True),
        (["-S/usr/bin/python3 -m srv"], True),
        (["-S", "python3 /opt/srv.py"], False),  # a script: nothing to guard
        (["-uS", "python3", "-m", "srv"], False),  # -u's value is S: Python guarded as usual
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else str(value),
)
def test_which_env_s_runs_are_refused_in_a_gated_project(
    places: dict[str, Path], args: list[str], refused: bool
) -> None:
    (places["project"] / "pyproject.toml").write_text("[project]\nname = 'clone'\n")
    guard = project_guard("env", args, places["project"], environment(places, ""))

    assert (guard.refusal is not None) is refused, guard
    assert project_guard("env", args, places["project"], environment(places, "1")).refusal is None
