"""An exception a plugin's own code raises names the file and line it was raised at, wherever
the plugin runs, as an import failure always did (``(at ~/.hermes/plugins/p/__init__.py, line
4)``): a ``hermes_tools`` or a registration hook, a factory the selection step calls, a
``pre_tool_call`` hook (whose block also says how to turn it off) and an observer hook. Seen
through the real ``hermes`` command, without ``HERMES_STRICT_PLUGINS`` (what a user has)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.testing import HermesCli, write_dir_plugin
from hermes_core.testing._cli_in_process import InProcessCli

pytestmark = pytest.mark.subprocess

SOURCE = """\
from hermes_core.plugin import SearchBackendSpec, Tool, ToolAnnotations, ToolResult, hookimpl


def make_backend(context):
    raise RuntimeError("factory broke")


@hookimpl
def hermes_tools():
    if TOOLS_BREAK:
        raise RuntimeError("tools broke")
    return [
        Tool(
            "greet",
            "Greet.",
            handler=lambda: ToolResult.text("hi"),
            annotations=ToolAnnotations(read_only=True),
        )
    ]


@hookimpl
def hermes_search_backends():
    if BACKENDS_BREAK:
        raise RuntimeError("backends broke")
    return [SearchBackendSpec("broke", factory=make_backend)]


@hookimpl
def hermes_pre_tool_call(call):
    if PRE_BREAKS:
        raise RuntimeError("pre broke")


@hookimpl
def hermes_post_tool_call(call):
    raise RuntimeError("post broke")
"""


@pytest.fixture
def hermes_cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


def plugin(cli: HermesCli, *breaking: str, config: str = "") -> Path:
    """The plugin ``loc``, enabled, with the flags in ``breaking`` set; its ``__init__.py``."""
    flags = {flag: flag in breaking for flag in ("TOOLS_BREAK", "BACKENDS_BREAK", "PRE_BREAKS")}
    text = "".join(f"{flag} = {value}\n" for flag, value in flags.items()) + SOURCE
    folder = write_dir_plugin(cli.home / "plugins", "loc", text)
    cli.config.write_text(f"plugins:\n  enabled: [loc]\n{config}", encoding="utf-8")
    return folder / "__init__.py"


def at(init: Path, raising: str) -> str:
    """``(at /.../__init__.py, line N)`` of the line of ``init`` holding ``raising``."""
    lines = init.read_text(encoding="utf-8").splitlines()
    number = next(index for index, line in enumerate(lines, 1) if raising in line)
    return f"(at {init}, line {number})"


def lenient(cli: HermesCli) -> dict[str, str]:
    return cli.variables(HERMES_STRICT_PLUGINS="0")


def test_a_hermes_tools_hook_that_raises_names_its_file_and_line(hermes_cli: HermesCli) -> None:
    init = plugin(hermes_cli, "TOOLS_BREAK")

    rows = hermes_cli.json("plugins", "list", "--json", env=lenient(hermes_cli), exit_code=1)

    (row,) = [row for row in rows if row["name"] == "loc"]
    assert (
        row["error"] == f"hermes_tools failed: RuntimeError: tools broke {at(init, 'tools broke')}"
    )


def test_a_registration_hook_that_raises_names_its_file_and_line(hermes_cli: HermesCli) -> None:
    init = plugin(hermes_cli, "BACKENDS_BREAK")

    rows = hermes_cli.json("plugins", "list", "--json", env=lenient(hermes_cli), exit_code=1)

    (row,) = [row for row in rows if row["name"] == "loc"]
    assert f"RuntimeError: backends broke {at(init, 'backends broke')}" in row["error"]


def test_a_factory_that_raises_names_its_file_and_line(hermes_cli: HermesCli) -> None:
    init = plugin(hermes_cli, config="tools:\n  tool_search:\n    backend: broke\n")

    done = hermes_cli.run("tools", "search", "greet", ok=False, env=lenient(hermes_cli))

    assert done.returncode == 1
    assert f"its factory raised RuntimeError: factory broke {at(init, 'factory broke')}" in (
        done.stdout + done.stderr
    )


def test_a_pre_tool_call_hook_that_raises_blocks_naming_its_line_and_the_remedy(
    hermes_cli: HermesCli,
) -> None:
    init = plugin(hermes_cli, "PRE_BREAKS")

    done = hermes_cli.run("tools", "call", "greet", "{}", ok=False, env=lenient(hermes_cli))

    assert done.returncode == 1
    assert (
        "error (BLOCKED): greet was blocked: the pre_tool_call hook of plugin 'loc' failed "
        f"(RuntimeError: pre broke {at(init, 'pre broke')}); "
        "fix or disable it (hermes plugins disable loc)."
    ) in (done.stdout + done.stderr).splitlines()


def test_an_observer_hook_that_raises_names_its_file_and_line(hermes_cli: HermesCli) -> None:
    init = plugin(hermes_cli)

    done = hermes_cli.run("tools", "call", "greet", "{}", env=lenient(hermes_cli))

    assert done.stdout == "hi\n"
    assert (
        f"hermes: warning: plugin 'loc': observer hook failed: RuntimeError: post broke "
        f"{at(init, 'post broke')}; fix or disable it (hermes plugins disable loc)"
    ) in done.stderr.splitlines()


POLICY = """\
from hermes_core.plugin import ApprovalPolicySpec, hookimpl


class Picky:
    def decide(self, call, session):
        raise RuntimeError("policy broke")


@hookimpl
def hermes_approval_policies():
    return [ApprovalPolicySpec("picky", lambda context: Picky())]
"""


def test_an_approval_policy_that_raises_names_its_file_and_line(hermes_cli: HermesCli) -> None:
    init = write_dir_plugin(hermes_cli.home / "plugins", "picky", POLICY) / "__init__.py"
    hermes_cli.config.write_text(
        "plugins:\n  enabled: [picky]\napprovals:\n  policy: picky\n", encoding="utf-8"
    )
    (hermes_cli.work / "notes.txt").write_text("hello\n", encoding="utf-8")

    done = hermes_cli.run(
        "tools", "call", "read_file", '{"path": "notes.txt"}', ok=False, env=lenient(hermes_cli)
    )

    assert done.returncode == 1
    assert (
        "error (DENIED): read_file was refused: the approval policy 'picky' (plugin 'picky') "
        f"failed (RuntimeError: policy broke {at(init, 'policy broke')})."
    ) in (done.stdout + done.stderr).splitlines()


def test_a_one_module_pip_plugin_names_its_own_line_not_the_library_beside_it(
    hermes_cli: HermesCli, tmp_path: Path
) -> None:
    # A distribution of one module (hermes_single.py) lies in site-packages among the libraries
    # it calls: the folder of its file was taken for its own, so a library beside it that
    # raised on its behalf was named "(at .../site-packages/somelib.py, line 2)".
    from hermes_core.testing import write_distribution

    site = tmp_path / "site"
    single = (
        "import somelib\nfrom hermes_core.plugin import hookimpl\n\n\n@hookimpl\n"
        "def hermes_tools():\n    return somelib.parse('{bad')\n"
    )
    write_distribution(
        site,
        "hermes-single",
        entry_points={"single": "hermes_single"},
        files={
            "hermes_single.py": single,
            "somelib.py": "def parse(text):\n    raise ValueError('bad input')\n",
        },
    )
    hermes_cli.config.write_text("plugins:\n  enabled: [single]\n", encoding="utf-8")
    env = hermes_cli.variables(PYTHONPATH=str(site), HERMES_STRICT_PLUGINS="0")

    rows = hermes_cli.json("plugins", "list", "--json", env=env, exit_code=1)

    (row,) = [row for row in rows if row["name"] == "single"]
    own = at(site / "hermes_single.py", "somelib.parse")
    assert row["error"] == f"hermes_tools failed: ValueError: bad input {own}"
