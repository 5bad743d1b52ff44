"""``hermes mcp add`` where what it writes would not do what the user meant: a server that is
this hermes's own ``hermes serve`` (refused), and a config file the project gate keeps closed
(written, and said)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from hermes_core.testing import HermesCli
from hermes_core.testing._cli_in_process import InProcessCli

pytestmark = pytest.mark.subprocess


def _servers(config: Path) -> dict[str, Any]:
    if not config.exists():
        return {}
    data = YAML(typ="safe").load(config.read_text(encoding="utf-8")) or {}
    servers: dict[str, Any] = data.get("mcp_servers") or {}
    return servers


@pytest.fixture
def cli(hermes_cli: HermesCli) -> InProcessCli:
    """``hermes`` in this process, reading ``$HERMES_HOME/config.yaml`` (no ``--config``)."""
    return InProcessCli(hermes_cli.root, home=hermes_cli.home, work=hermes_cli.work)


THIS_HERMES = [
    ["hermes", "serve"],
    ["/usr/local/bin/hermes", "--verbose", "serve", "--context-length", "200000"],
    [sys.executable, "-m", "hermes_core", "serve"],
    # The launchers users put in front of it.
    ["uvx", "hermes-core-agent", "serve"],
    ["uvx", "--from", "hermes-core-agent", "hermes", "serve"],
    ["pipx", "run", "--spec", "hermes-core-agent", "hermes", "serve"],
    ["uv", "run", "hermes", "serve"],
    ["uv", "run", "--directory", "/srv/app", "hermes", "serve"],
    ["/usr/bin/env", "HERMES_LOG_LEVEL=debug", "hermes", "serve"],
    ["sh", "-c", "exec hermes serve"],
    ["bash", "-lc", "cd /tmp && hermes serve"],
]
THIS_HERMES_IDS = [
    "hermes",
    "full-path",
    "module",
    "uvx",
    "uvx-from",
    "pipx-run",
    "uv-run",
    "uv-run-directory",
    "env",
    "sh-c",
    "bash-lc",
]


@pytest.mark.parametrize("command", THIS_HERMES, ids=THIS_HERMES_IDS)
def test_adding_this_hermes_own_serve_is_refused_naming_the_server_and_why(
    cli: InProcessCli, command: list[str]
) -> None:
    # `claude mcp add hermes -- hermes serve` from docs/mcp.md, typed as `hermes mcp add`: every
    # hermes command would start a hermes serve of this configuration, which starts another.
    done = cli.run("mcp", "add", "hermes", "--", *command, ok=False)
    assert done.returncode == 2, done.stdout
    assert "refusing to add MCP server 'hermes'" in done.stderr
    assert "it starts hermes serve, this hermes itself" in done.stderr
    assert "HERMES_HOME" in done.stderr  # how to add another hermes instead
    assert _servers(cli.config) == {}


def test_a_hermes_serve_naming_this_home_or_file_is_refused_and_another_is_added(
    cli: InProcessCli,
) -> None:
    home = f"HERMES_HOME={cli.home}"
    done = cli.run("mcp", "add", "me", "--env", home, "--", "hermes", "serve", ok=False)
    assert done.returncode == 2
    done = cli.run(
        "mcp", "add", "me", "--", "hermes", "--config", str(cli.config), "serve", ok=False
    )
    assert done.returncode == 2
    assert "it starts hermes serve, this hermes itself" in done.stderr
    assert _servers(cli.config) == {}
    # Through env(1): the home it names is this one.
    done = cli.run("mcp", "add", "me", "--", "env", home, "hermes", "serve", ok=False)
    assert done.returncode == 2
    # Another home, or another file: a hermes of other servers, which this one may use.
    other = cli.root / "work-hermes"
    cli.run("mcp", "add", "env-other", "--", "env", f"HERMES_HOME={other}", "hermes", "serve")
    cli.run("mcp", "add", "work", "--env", f"HERMES_HOME={other}", "--", "hermes", "serve")
    cli.run("mcp", "add", "quick", "--", "hermes", "--config", "quickstart.yaml", "serve")
    servers = _servers(cli.config)
    assert servers["env-other"]["args"] == [f"HERMES_HOME={other}", "hermes", "serve"]
    assert servers["work"]["args"] == ["serve"]
    assert servers["quick"]["args"] == ["--config", "quickstart.yaml", "serve"]


def test_import_agent_and_mcp_add_skip_the_same_entries(cli: InProcessCli) -> None:
    # One rule: a Claude entry of another home is imported, as mcp add adds it.
    other = cli.root / "work-hermes"
    servers = {
        "hermes": {"command": "hermes", "args": ["serve"]},
        "work": {"command": "hermes", "args": ["serve"], "env": {"HERMES_HOME": str(other)}},
    }
    claude_json = cli.root / "claude.json"
    claude_json.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    done = cli.run("import-agent", "claude-code", "--claude-json", str(claude_json))
    assert "skipped: hermes from user scope" in done.stdout + done.stderr
    assert set(_servers(cli.config)) == {"work"}


def test_adding_to_a_config_file_in_a_gated_project_says_it_will_not_load_until_the_gate(
    tmp_path: Path,
) -> None:
    # HERMES_HOME=./.hermes in a project: its config.yaml is the project's, and its servers are
    # not started without HERMES_ENABLE_PROJECT_PLUGINS=1 (docs/plugins.md, "The project gate").
    # `mcp add` said only "Added", and the server then never appeared in `tools list`.
    repo = tmp_path / "repo"
    cli = HermesCli(tmp_path, home=repo / ".hermes", work=repo, user_home=tmp_path / "user")
    box = [sys.executable, "-c", "pass"]
    done = cli.run("mcp", "add", "box", "--", *box)
    said = done.stdout + done.stderr
    assert str(cli.config) in said
    assert "'box' will not be started" in said
    assert "HERMES_ENABLE_PROJECT_PLUGINS=1" in said
    assert set(_servers(cli.config)) == {"box"}
    opened = cli.variables(HERMES_ENABLE_PROJECT_PLUGINS="1")
    done = cli.run("mcp", "add", "box2", "--", *box, env=opened)
    assert "HERMES_ENABLE_PROJECT_PLUGINS" not in done.stdout + done.stderr
    # The same file named on the command line is the user's choice: it loads.
    done = cli.run("--config", str(cli.config), "mcp", "add", "box3", "--", *box)
    assert "HERMES_ENABLE_PROJECT_PLUGINS" not in done.stdout + done.stderr
    assert set(_servers(cli.config)) == {"box", "box2", "box3"}


def test_secrets_are_not_written_to_a_gated_project_homes_env(tmp_path: Path) -> None:
    # That .env is not read while the gate is closed (a planted key would act for the
    # repository), so a secret moved there would do nothing but wait to be committed and
    # pushed with the repository: refused, nothing written.
    repo = tmp_path / "repo"
    cli = HermesCli(tmp_path, home=repo / ".hermes", work=repo, user_home=tmp_path / "user")
    token = "GITHUB_TOKEN=ghp_0123456789abcdefghijklmnopqrstuvwxyz"
    done = cli.run("mcp", "add", "gh", "--env", token, "--", "npx", "gh-server", ok=False)
    assert done.returncode == 2, done.stdout
    assert done.stderr.startswith("hermes: error: refusing to write secrets to ")
    assert f"{cli.home / '.env'} (in the project " in done.stderr
    assert "HERMES_ENABLE_PROJECT_PLUGINS=1" in done.stderr
    assert not (cli.home / ".env").exists()
    assert not cli.config.exists()
    servers = {"gh": {"command": "npx", "args": ["gh-server"], "env": {"GITHUB_TOKEN": "ghp_x1"}}}
    claude_json = tmp_path / "claude.json"
    claude_json.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    done = cli.run("import-agent", "claude-code", "--claude-json", str(claude_json), ok=False)
    assert done.returncode == 2, done.stdout
    assert "refusing to write secrets to " in done.stderr
    assert not (cli.home / ".env").exists()
    assert not cli.config.exists()
    opened = cli.variables(HERMES_ENABLE_PROJECT_PLUGINS="1")  # the user's own home: written
    cli.run("mcp", "add", "gh", "--env", token, "--", "npx", "gh-server", env=opened)
    assert "GITHUB_TOKEN=" in (cli.home / ".env").read_text(encoding="utf-8")


def test_a_config_named_after_dash_c_is_read_from_that_directory(cli: InProcessCli) -> None:
    # `hermes -C DIR --config FILE serve` reads DIR/FILE: this home's own config.yaml, named
    # relative to it, is this hermes, refused; the same name in another directory is not.
    done = cli.run(
        "mcp", "add", "me", "--", "hermes", "-C", str(cli.home), "--config", "config.yaml",
        "serve", ok=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout
    assert "it starts hermes serve, this hermes itself" in done.stderr
    cli.run("mcp", "add", "other", "--", "hermes", "--directory=/srv", "--config", "config.yaml",
            "serve")  # fmt: skip
    assert set(_servers(cli.config)) == {"other"}


@pytest.mark.parametrize(
    "command",
    [
        ["uv", "run", "--with", "hermes-core-agent", "python", "server.py", "serve"],
        ["uvx", "--with", "hermes-core-agent", "notes-server", "serve"],
        ["uvx", "notes-server", "hermes", "serve"],
    ],
    ids=["uv-run-with", "uvx-with", "uvx-other-package"],
)
def test_a_launcher_running_another_program_is_added_though_hermes_is_named(
    cli: InProcessCli, command: list[str]
) -> None:
    # A server of one's own run beside hermes-core-agent (a plugin author's, say), or handed
    # 'hermes serve' as its arguments: the launcher runs that program, not this hermes.
    cli.run("mcp", "add", "notes", "--", *command)

    assert _servers(cli.config)["notes"]["args"] == command[1:]


INDEX = "https://pypi.example.org/simple"


@pytest.mark.parametrize(
    "command",
    [
        ["uv", "run", "--env-file", ".env", "hermes", "serve"],
        ["uv", "run", "--extra", "cli", "--group", "dev", "--only-group", "ops", "hermes", "serve"],
        ["uv", "run", "--package", "app", "--index", INDEX, "hermes", "serve"],
        ["uv", "--cache-dir", "/tmp/uv", "run", "-C", "key=value", "-w", "rich", "hermes", "serve"],
        ["uv", "tool", "run", "-i", INDEX, "--from", "hermes-core-agent", "hermes", "serve"],
        ["uvx", "-c", "constraints.txt", "hermes-core-agent", "serve"],
        ["uvx", "--resolution", "lowest", "-P", "rich", "hermes-core-agent", "serve"],
        ["pipx", "run", "--index-url", INDEX, "--spec", "hermes-core-agent", "hermes", "serve"],
        ["pipx", "run", "--backend", "pip", "--spec", "hermes-core-agent", "hermes", "serve"],
    ],
    ids=[
        "uv-run-env-file",
        "uv-run-extra-group",
        "uv-run-package-index",
        "uv-cache-dir-config-setting-with",
        "uv-tool-run-index-url",
        "uvx-constraints",
        "uvx-resolution-upgrade-package",
        "pipx-run-index-url",
        "pipx-run-backend",
    ],
)
def test_a_launcher_option_value_before_the_program_is_not_taken_for_the_program(
    cli: InProcessCli, command: list[str]
) -> None:
    # `uv run --env-file .env hermes serve` runs hermes, not `.env`: every option of uv run,
    # uvx and pipx run that takes a value has it skipped on the way to the program.
    done = cli.run("mcp", "add", "hermes", "--", *command, ok=False)
    assert done.returncode == 2, done.stdout
    assert "it starts hermes serve, this hermes itself" in done.stderr
    assert _servers(cli.config) == {}


@pytest.mark.parametrize(
    "command",
    [
        ["bash", "-lc", "if [ -d .venv ]; then . .venv/bin/activate; fi\nhermes serve"],
        ["sh", "-c", "cd /srv/app\nexec hermes serve"],
        ["bash", "-c", "nohup hermes serve"],
        ["bash", "-c", "{ hermes serve; }"],
        ["bash", "-c", "if command -v hermes >/dev/null; then hermes serve; fi"],
        ["uv", "run", "--module", "hermes_core", "serve"],
        ["uv", "run", "--python-preference", "managed", "hermes", "serve"],
    ],
    ids=[
        "script-lines",
        "cd-then-a-line",
        "nohup",
        "braces",
        "if-then",
        "uv-run-module",
        "uv-run-python-preference",
    ],
)
def test_a_script_whose_command_words_hold_hermes_serve_is_this_hermes(
    cli: InProcessCli, command: list[str]
) -> None:
    # A shell script is read conservatively: a command whose words hold `hermes ... serve`
    # after a word hermes does not know (`nohup`, `then`, `{`), or on a line of its own, starts
    # hermes serve; so does uv running the module hermes_core.
    done = cli.run("mcp", "add", "hermes", "--", *command, ok=False)
    assert done.returncode == 2, done.stdout
    assert "it starts hermes serve, this hermes itself" in done.stderr
    assert _servers(cli.config) == {}


@pytest.mark.parametrize(
    "command",
    [
        ["nohup", "hermes", "serve"],
        ["setsid", "-f", "hermes", "serve"],
        ["nice", "-n", "5", "hermes", "serve"],
        ["timeout", "-k", "5", "1d", "hermes", "serve"],
        ["stdbuf", "-oL", "/usr/local/bin/hermes", "serve"],
        ["nohup", "nice", "-n5", "env", "HERMES_LOG_LEVEL=debug", "hermes", "serve"],
        ["env", "-S", "hermes serve"],
        ["env", "--split-string=nice hermes serve"],
        ["python3", "-mhermes_core", "serve"],
        ["python3", "-Im", "hermes_core", "serve"],
        ["bash", "-c", "--", "hermes serve"],
        ["bash", "-c", "-e", "hermes serve"],
        ["sh", "-ec", "-o", "pipefail", "nohup hermes serve"],
    ],
    ids=[
        "nohup",
        "setsid",
        "nice",
        "timeout",
        "stdbuf",
        "stacked",
        "env-S",
        "env-split-string",
        "python-m-joined",
        "python-Im",
        "bash-c-dashdash",
        "bash-c-option-after",
        "sh-ec-o-pipefail",
    ],
)
def test_a_launcher_in_the_entrys_own_command_is_looked_through(
    cli: InProcessCli, command: list[str]
) -> None:
    # What a script's line is read through holds for the entry's command itself: `nohup hermes
    # serve` (or nice, setsid, timeout, stdbuf, env -S), `python -mhermes_core serve`, and a
    # shell's -c with its script after `--` or another option, all start this hermes.
    done = cli.run("mcp", "add", "hermes", "--", *command, ok=False)
    assert done.returncode == 2, done.stdout
    assert "it starts hermes serve, this hermes itself" in done.stderr
    assert _servers(cli.config) == {}


@pytest.mark.parametrize(
    "command",
    [
        ["nice", "-n", "5", "notes-server", "hermes", "serve"],
        ["timeout", "1d", "notes-server", "serve"],
        ["python3", "-Xfrozen_modules=off", "-m", "notes_server", "serve"],
        ["bash", "-c", "--", "notes-server serve", "hermes"],
    ],
    ids=["nice-other", "timeout-other", "python-X", "bash-script-argument"],
)
def test_a_launcher_running_another_program_stays_another_program(
    cli: InProcessCli, command: list[str]
) -> None:
    cli.run("mcp", "add", "notes", "--", *command)

    assert _servers(cli.config)["notes"]["args"] == command[1:]


@pytest.mark.parametrize(
    "command",
    [
        ["uv", "run", "--package", "hermes", "python", "server.py", "serve"],
        ["uv", "run", "--extra", "hermes", "notes-server", "serve"],
        ["uvx", "--python-platform", "hermes", "notes-server", "serve"],
    ],
    ids=["uv-run-package", "uv-run-extra", "uvx-python-platform"],
)
def test_an_option_value_named_hermes_is_not_taken_for_the_program(
    cli: InProcessCli, command: list[str]
) -> None:
    # A workspace package or an extra named hermes: uv runs python or notes-server, not hermes.
    cli.run("mcp", "add", "notes", "--", *command)

    assert _servers(cli.config)["notes"]["args"] == command[1:]


@pytest.mark.parametrize(
    "launcher",
    [
        ["env", "-C", "{home}"],
        ["env", "--chdir={home}", "HERMES_LOG_LEVEL=debug"],
        ["uv", "run", "--directory", "{home}"],
        ["uv", "run", "--directory={home}", "--with", "rich"],
        ["sh", "-c", "cd {home} && exec {rest}"],
        ["bash", "-lc", "cd /tmp; cd {home} || exit 1; {rest}"],
    ],
    ids=["env-C", "env-chdir", "uv-run-directory", "uv-run-directory-equals", "sh-cd", "bash-cd"],
)
def test_a_relative_config_is_read_from_the_directory_a_launcher_moves_to(
    cli: InProcessCli, launcher: list[str]
) -> None:
    # `env -C DIR hermes --config config.yaml serve` reads DIR/config.yaml: here this home's, so
    # this hermes, refused; it was read from the directory hermes runs in, and added.
    rest = ["hermes", "--config", "config.yaml", "serve"]
    shell = launcher[0] in ("sh", "bash")
    words = [word.format(home=cli.home, rest=" ".join(rest)) for word in launcher]
    words += [] if shell else rest
    done = cli.run("mcp", "add", "me", "--", *words, ok=False)
    assert done.returncode == 2, done.stdout
    assert "it starts hermes serve, this hermes itself" in done.stderr
    # Another directory's config.yaml is another hermes's: added.
    other = [word.replace(str(cli.home), "/srv") for word in words]
    cli.run("mcp", "add", "other", "--", *other)
    assert set(_servers(cli.config)) == {"other"}


def test_after_a_move_hermes_cannot_know_a_relative_config_is_another_hermess(
    cli: InProcessCli,
) -> None:
    # `cd "$APP"`: where it leads is the launching shell's business; a config named in full
    # there is still known.
    unknown = 'cd "$APP" && hermes --config config.yaml serve'
    cli.run("mcp", "add", "app", "--", "sh", "-c", unknown)
    known = f'cd "$APP" && hermes --config {cli.config} serve'
    done = cli.run("mcp", "add", "me", "--", "sh", "-c", known, ok=False)
    assert done.returncode == 2, done.stdout
    assert set(_servers(cli.config)) == {"app"}
