"""``hermes plugins``: run as a real subprocess against real plugin folders and distributions."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from hermes_core.testing import (
    FakeNixStore,
    make_nix_store,
    write_dir_plugin,
    write_distribution,
)
from hermes_core.testing._cli_in_process import InProcessCli

pytestmark = pytest.mark.subprocess

GOOD = """
from hermes_core._hookspecs import hookimpl

@hookimpl
def hermes_session_start(session):
    pass
"""


@pytest.fixture
def hermes_cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    """``hermes`` run in this process (:class:`InProcessCli`); ``subprocess_run`` runs the
    real command."""
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


@dataclass
class Setup:
    """A ``hermes_cli`` with every plugin source: bundled plugins, a site dir, a Nix store, and
    the variables a test adds before running ``hermes``."""

    cli: InProcessCli
    variables: dict[str, str] = field(default_factory=dict)

    @property
    def root(self) -> Path:
        return self.cli.root

    @property
    def home(self) -> Path:
        return self.cli.home

    @property
    def project(self) -> Path:
        return self.cli.work

    @property
    def bundled(self) -> Path:
        return self.root / "bundled"

    @property
    def site(self) -> Path:
        return self.root / "site-packages"

    @property
    def user_plugins(self) -> Path:
        return self.home / "plugins"

    @property
    def project_plugins(self) -> Path:
        return self.project / ".hermes" / "plugins"

    def nix_store(self) -> FakeNixStore:
        store = make_nix_store(self.root / "nix" / "store")
        self.variables["HERMES_NIX_PLUGINS"] = str(store.path)
        return store

    def environment(self) -> dict[str, str]:
        sources = {
            "HERMES_BUNDLED_PLUGINS": str(self.bundled),
            "PYTHONPATH": str(self.site),
            "COLUMNS": "200",
        }
        return self.cli.variables(**{**sources, **self.variables})

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.cli.run(*args, ok=False, env=self.environment())

    def list_json(self, *extra: str) -> list[dict[str, Any]]:
        done = self.run("plugins", "list", "--json", *extra)
        rows: list[dict[str, Any]] = json.loads(done.stdout)
        # docs/cli.md's rule for list commands: every row shown, then exit 1 when one is broken.
        assert done.returncode == int(any(r["status"] == "error" for r in rows)), done.stderr
        return rows


@pytest.fixture
def setup(hermes_cli: InProcessCli) -> Setup:
    made = Setup(hermes_cli)
    made.bundled.mkdir()
    made.site.mkdir()
    return made


def demo_in_all_five_sources(setup: Setup) -> None:
    write_dir_plugin(setup.bundled, "demo", GOOD)
    write_dir_plugin(setup.user_plugins, "demo", GOOD)
    write_dir_plugin(setup.project_plugins, "demo", GOOD)
    write_distribution(
        setup.site,
        "hermes-demo",
        "2.0",
        entry_points={"demo": "demo_pip"},
        files={"demo_pip.py": GOOD},
    )
    setup.nix_store().add_dir_plugin("demo", GOOD, manifest={"version": "9.0"})


def test_a_name_in_plugins_enabled_or_disabled_that_no_plugin_has_is_warned_about(
    hermes_cli: InProcessCli,
) -> None:
    # config.yaml edited by hand: `shoutty` enables nothing and `termnal` disables nothing (the
    # bundled terminal stays enabled); the list showed shouty "not enabled", config validate
    # said ok, and nothing named the mistyped entries.
    write_dir_plugin(hermes_cli.home / "plugins", "shouty", GOOD)
    hermes_cli.config.write_text("plugins:\n  enabled: [shoutty]\n  disabled: [termnal]\n")

    done = hermes_cli.subprocess_run("plugins", "list")

    warned = done.stderr.splitlines()
    config = hermes_cli.config
    assert (
        f"hermes: warning: plugins.enabled in {config} names 'shoutty', "
        "but no plugin of that name was found. Did you mean 'shouty'?"
    ) in warned
    assert (
        f"hermes: warning: plugins.disabled in {config} names 'termnal', "
        "but no plugin of that name was found. Did you mean 'terminal'?"
    ) in warned


def test_enabling_a_plugin_whose_variable_is_missing_says_so_and_promises_no_traceback(
    hermes_cli: InProcessCli,
) -> None:
    # The warning ended "(hermes -v plugins info shouty shows the traceback)": there is none,
    # nothing of the plugin ran; the command it named printed no traceback.
    write_dir_plugin(
        hermes_cli.home / "plugins", "shouty", GOOD, manifest={"requires_env": ["SHOUTY_TOKEN"]}
    )

    done = hermes_cli.subprocess_run("plugins", "enable", "shouty")

    assert "missing environment variable: SHOUTY_TOKEN" in done.stderr
    assert "traceback" not in done.stderr


def test_a_mistyped_manifest_key_is_named_with_the_key_it_was_meant_to_be(
    hermes_cli: InProcessCli,
) -> None:
    # `require_env` for `requires_env`: the requirement is dropped and the plugin loads without
    # its variable; the warning said only "unknown key 'require_env' ignored".
    folder = write_dir_plugin(
        hermes_cli.home / "plugins",
        "shouty",
        GOOD,
        manifest="name: shouty\nversion: 1.0\nrequire_env: [SHOUTY_TOKEN]\nflavour: x\n",
    )
    hermes_cli.config.write_text("plugins:\n  enabled: [shouty]\n")

    done = hermes_cli.subprocess_run("plugins", "list")

    manifest = folder / "plugin.yaml"
    warned = done.stderr.splitlines()
    assert (
        f"hermes: warning: {manifest}: unknown key 'require_env' ignored. "
        "Did you mean 'requires_env'?"
    ) in warned
    assert f"hermes: warning: {manifest}: unknown key 'flavour' ignored" in warned


def test_list_json_shows_the_winner_by_precedence_and_every_other_copy_shadowed(
    setup: Setup,
) -> None:
    demo_in_all_five_sources(setup)
    setup.variables["HERMES_ENABLE_PROJECT_PLUGINS"] = "1"

    rows = setup.list_json()

    assert [(r["source"], r["status"], r["shadowed_by"]) for r in rows] == [
        ("nix", "not enabled", None),
        ("pip", "shadowed", "nix"),
        ("project", "shadowed", "nix"),
        ("user", "shadowed", "nix"),
        ("bundled", "shadowed", "nix"),
    ]
    winner = rows[0]
    assert set(winner) == {
        "name",
        "version",
        "source",
        "status",
        "path",
        "hooks",
        "shadows",
        "shadowed_by",
        "error",
    }
    assert winner["name"] == "demo"
    assert winner["version"] == "9.0"
    assert winner["shadows"] == ["bundled", "user", "project", "pip"]
    assert winner["error"] is None
    assert rows[1]["version"] == "2.0"
    assert rows[3]["path"] == str(setup.user_plugins / "demo")


def test_list_table_without_all_folds_shadowed_copies_into_the_winner(setup: Setup) -> None:
    demo_in_all_five_sources(setup)
    setup.variables["HERMES_ENABLE_PROJECT_PLUGINS"] = "1"
    (setup.home / "config.yaml").write_text("plugins:\n  enabled: [demo]\n", encoding="utf-8")

    folded = setup.run("plugins", "list")
    every = setup.run("plugins", "list", "--all")
    winner = setup.list_json()[0]

    demo_rows = [line for line in folded.stdout.splitlines() if line.startswith("demo")]
    assert len(demo_rows) == 1
    assert "nix" in demo_rows[0]
    assert "bundled, user, project, pip" in demo_rows[0]
    assert len([line for line in every.stdout.splitlines() if line.startswith("demo")]) == 5
    assert (winner["source"], winner["status"]) == ("nix", "enabled")
    assert winner["hooks"] == ["hermes_session_start"]
    assert winner["shadows"] == ["bundled", "user", "project", "pip"]


def test_project_plugins_are_listed_as_gated_without_the_flag(setup: Setup) -> None:
    demo_in_all_five_sources(setup)

    rows = setup.list_json("--all")

    gated = [r for r in rows if r["source"] == "project"]
    assert [(r["status"], r["shadowed_by"]) for r in gated] == [("gated", None)]
    winner = next(r for r in rows if r["source"] == "nix")
    assert winner["shadows"] == ["bundled", "user", "pip"]


def test_config_inside_the_project_cannot_enable_project_plugins(setup: Setup) -> None:
    write_dir_plugin(setup.project_plugins, "local-tool", GOOD)
    inside = setup.project / ".hermes"
    (inside / "config.yaml").write_text("plugins:\n  enabled: [local-tool]\n", encoding="utf-8")
    setup.variables["HERMES_ENABLE_PROJECT_PLUGINS"] = "1"
    setup.variables["HERMES_HOME"] = str(inside)

    (row,) = setup.list_json()

    assert (row["source"], row["status"]) == ("project", "not enabled")


def test_project_plugins_load_with_the_flag_and_the_users_config(setup: Setup) -> None:
    write_dir_plugin(setup.project_plugins, "local-tool", GOOD)
    (setup.home / "config.yaml").write_text("plugins:\n  enabled: [local-tool]\n", encoding="utf-8")
    setup.variables["HERMES_ENABLE_PROJECT_PLUGINS"] = "1"

    (row,) = setup.list_json()

    assert (row["source"], row["status"]) == ("project", "enabled")


def test_listing_runs_no_code_of_plugins_not_enabled(setup: Setup) -> None:
    marker = setup.root / "ran"
    code = f"open({str(marker)!r}, 'w').close()\n"
    write_dir_plugin(setup.user_plugins, "sleeper", code)
    write_distribution(
        setup.site,
        "hermes-dormant",
        entry_points={"dormant": "dormant_mod"},
        files={"dormant_mod.py": code},
    )
    write_dir_plugin(setup.user_plugins, "awake", GOOD)
    (setup.home / "config.yaml").write_text("plugins:\n  enabled: [awake]\n", encoding="utf-8")

    rows = setup.list_json()

    assert {r["name"]: r["status"] for r in rows} == {
        "awake": "enabled",
        "dormant": "not enabled",
        "sleeper": "not enabled",
    }
    assert not marker.exists()


def test_list_shows_each_broken_plugin_with_its_cause_and_loads_the_rest(setup: Setup) -> None:
    write_dir_plugin(setup.user_plugins, "raises", "raise RuntimeError('database is on fire')\n")
    write_dir_plugin(setup.user_plugins, "broken-yaml", manifest="name: [oops\n")
    write_dir_plugin(
        setup.user_plugins,
        "bad-signature",
        "from hermes_core._hookspecs import hookimpl\n"
        "@hookimpl\ndef hermes_session_end(session, extra):\n    pass\n",
    )
    write_dir_plugin(setup.user_plugins, "needs-env", GOOD, manifest={"requires_env": ["TOKEN_X"]})
    write_dir_plugin(setup.user_plugins, "fine", GOOD)
    (setup.home / "config.yaml").write_text(
        "plugins:\n  enabled: [raises, broken-yaml, bad-signature, needs-env, fine]\n",
        encoding="utf-8",
    )
    # Listing exists to show broken plugins, so it does not stop at the first one.
    setup.variables["HERMES_STRICT_PLUGINS"] = "1"

    rows = {r["name"]: r for r in setup.list_json()}

    assert {name: row["status"] for name, row in rows.items()} == {
        "bad-signature": "error",
        "broken-yaml": "error",
        "fine": "enabled",
        "needs-env": "error",
        "raises": "error",
    }
    assert "RuntimeError: database is on fire" in rows["raises"]["error"]
    assert "plugin.yaml" in rows["broken-yaml"]["error"]
    assert "extra" in rows["bad-signature"]["error"]
    assert "TOKEN_X" in rows["needs-env"]["error"]


def test_list_shows_every_row_then_exits_1_when_a_plugin_is_in_error(setup: Setup) -> None:
    write_dir_plugin(setup.user_plugins, "raises", "raise RuntimeError('database is on fire')\n")
    write_dir_plugin(setup.user_plugins, "fine", GOOD)
    (setup.home / "config.yaml").write_text(
        "plugins:\n  enabled: [raises, fine]\n", encoding="utf-8"
    )

    table = setup.run("plugins", "list")
    as_json = setup.run("plugins", "list", "--json")

    assert table.returncode == as_json.returncode == 1, table.stderr
    assert "database is on fire" in table.stdout
    assert re.search(r"^fine\s", table.stdout, re.MULTILINE)
    assert {row["name"]: row["status"] for row in json.loads(as_json.stdout)}.items() >= {
        "raises": "error",
        "fine": "enabled",
    }.items()


def test_list_exits_0_when_no_plugin_is_in_error(setup: Setup) -> None:
    write_dir_plugin(setup.user_plugins, "fine", GOOD)
    (setup.home / "config.yaml").write_text("plugins:\n  enabled: [fine]\n", encoding="utf-8")

    table = setup.run("plugins", "list")
    as_json = setup.run("plugins", "list", "--json")

    assert table.returncode == as_json.returncode == 0, table.stderr + as_json.stderr


def test_verbose_list_prints_the_traceback(setup: Setup) -> None:
    write_dir_plugin(setup.user_plugins, "raises", "def f():\n    1 / 0\nf()\n")
    (setup.home / "config.yaml").write_text("plugins:\n  enabled: [raises]\n", encoding="utf-8")

    quiet = setup.run("plugins", "list")
    loud = setup.run("-v", "plugins", "list")

    assert quiet.returncode == loud.returncode == 1
    assert "ZeroDivisionError" in quiet.stdout
    assert "Traceback" not in quiet.stderr
    assert "Traceback" in loud.stderr


def test_impostor_is_ignored_with_a_warning(setup: Setup) -> None:
    write_dir_plugin(setup.bundled, "bm25", GOOD, manifest={"kind": "backend"})
    write_dir_plugin(setup.user_plugins, "bm25", GOOD, dirname="sneaky")

    done = setup.run("plugins", "list", "--json", "--all")

    rows = json.loads(done.stdout)
    assert [(r["source"], r["status"]) for r in rows] == [("bundled", "enabled (default)")]
    assert "sneaky" in done.stderr
    assert "warning" in done.stderr


def test_broken_config_exits_2_naming_the_file(setup: Setup) -> None:
    config = setup.home / "config.yaml"
    config.write_text("plugins:\n  enabled: demo\n", encoding="utf-8")

    done = setup.run("plugins", "list")

    assert done.returncode == 2
    assert str(config) in done.stderr
    assert "plugins.enabled" in done.stderr


def test_unknown_subcommand_usage_error_exits_2(setup: Setup) -> None:
    done = setup.run("plugins", "frobnicate")

    assert done.returncode == 2
    assert "frobnicate" in done.stderr


def test_info_describes_every_copy(setup: Setup) -> None:
    write_dir_plugin(setup.bundled, "demo", GOOD)
    write_dir_plugin(
        setup.user_plugins, "demo", GOOD, manifest={"description": "Mine", "version": "3"}
    )

    done = setup.run("plugins", "info", "Demo")

    assert done.returncode == 0, done.stderr
    assert "description:     Mine" in done.stdout
    assert "shadowed by:     user" in done.stdout
    assert "hermes plugins enable demo" in done.stdout


PROVIDERS = """
from hermes_core.plugin import ImageProviderSpec, WebSearchProviderSpec, hookimpl


@hookimpl
def hermes_image_providers():
    return [ImageProviderSpec("sketch", lambda context: None, "black squares")]


@hookimpl
def hermes_web_search_providers():
    return [WebSearchProviderSpec("duck", lambda context: None, "a local index")]
"""


def test_info_names_what_a_loaded_plugin_registers_by_name(setup: Setup) -> None:
    # A provider plugin is selected by the names it registers: info says which they are.
    write_dir_plugin(setup.user_plugins, "sketchy", PROVIDERS)
    (setup.home / "config.yaml").write_text("plugins:\n  enabled: [sketchy]\n", encoding="utf-8")

    done = setup.run("plugins", "info", "sketchy")

    assert done.returncode == 0, done.stderr
    assert "registers:       web search provider 'duck', image provider 'sketch'" in done.stdout


def test_info_of_an_unknown_plugin_exits_2(setup: Setup) -> None:
    done = setup.run("plugins", "info", "nothing-here")

    assert done.returncode == 2
    assert "no plugin named 'nothing-here'" in done.stderr


def test_info_of_a_mistyped_plugin_names_the_closest_one(setup: Setup) -> None:
    write_dir_plugin(setup.bundled, "weather", GOOD)
    write_dir_plugin(setup.bundled, "bm25", GOOD)

    done = setup.run("plugins", "info", "bm2")

    assert done.returncode == 2
    assert "no plugin named 'bm2' was found. Did you mean 'bm25'?" in done.stderr


def test_enable_of_a_mistyped_plugin_names_the_closest_one(setup: Setup) -> None:
    write_dir_plugin(setup.bundled, "weather", GOOD)

    done = setup.run("plugins", "enable", "waether")

    assert done.returncode == 0, done.stderr
    assert "no plugin named 'waether' is installed (yet). Did you mean 'weather'?" in done.stderr


COMMENTED = """\
# My hermes configuration.
tools:
  tool_search:
    backend: bm25   # the default
# Plugins I trust:
plugins:
  enabled:
    - alpha   # first
  disabled: [beta]
  hook_timeout: 10  # seconds
approvals:
  policy: annotations
"""


def test_enable_and_disable_keep_comments_and_key_order(setup: Setup) -> None:
    config = setup.home / "config.yaml"
    config.write_text(COMMENTED, encoding="utf-8")

    enabled = setup.run("plugins", "enable", "Beta")
    disabled = setup.run("plugins", "disable", "alpha")

    assert enabled.returncode == 0, enabled.stderr
    assert disabled.returncode == 0, disabled.stderr
    text = config.read_text(encoding="utf-8")
    for comment in (
        "# My hermes configuration.",
        "# the default",
        "# Plugins I trust:",
        "# seconds",
    ):
        assert comment in text
    keys = re.findall(r"^ *([a-z_]+):", text, flags=re.MULTILINE)
    assert keys == [
        "tools",
        "tool_search",
        "backend",
        "plugins",
        "enabled",
        "disabled",
        "hook_timeout",
        "approvals",
        "policy",
    ]
    from ruamel.yaml import YAML

    data = YAML(typ="safe").load(text)
    assert data["plugins"]["enabled"] == ["beta"]
    assert data["plugins"]["disabled"] == ["alpha"]


def test_enable_creates_the_config_and_says_so(setup: Setup) -> None:
    write_dir_plugin(setup.user_plugins, "demo", GOOD)

    done = setup.run("plugins", "enable", "demo")

    assert done.returncode == 0, done.stderr
    assert "enabled demo" in done.stdout
    assert "warning" not in done.stderr
    assert setup.list_json()[0]["status"] == "enabled"


def test_enable_of_an_unknown_plugin_warns(setup: Setup) -> None:
    done = setup.run("plugins", "enable", "later")

    assert done.returncode == 0
    assert "no plugin named 'later' is installed" in done.stderr


def test_managed_config_refuses_to_enable(setup: Setup) -> None:
    config = setup.home / "config.yaml"
    config.write_text(COMMENTED, encoding="utf-8")
    setup.variables["HERMES_MANAGED"] = "1"

    done = setup.run("plugins", "enable", "gamma")

    assert done.returncode == 2
    assert "managed by Nix or an administrator" in done.stderr
    assert config.read_text(encoding="utf-8") == COMMENTED


PROBE = (
    "import sys\n"
    "from hermes_core._cli import main\n"
    "try:\n    main(['plugins', 'list', '--json'])\n"
    "except SystemExit:\n    pass\n"
    "heavy = ('mcp', 'numpy', 'jsonschema', 'packaging', 'pydantic', 'regex',\n"
    "         'asyncio', 'ssl', 'http')\n"
    "print('LOADED', sorted({m.split('.')[0] for m in sys.modules} & set(heavy)))\n"
)
"""Modules a plugin listing must not import: heavy libraries, and the standard library's
asyncio, ssl and http (a fifth of a listing's time when bundled plugins pulled them in at
import)."""


def run_probe(setup: Setup, code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``python -c code`` in the project with ``env``; it must succeed."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=setup.project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done


def heavy_modules_after_listing(setup: Setup) -> str:
    write_dir_plugin(setup.user_plugins, "demo", GOOD)
    (setup.home / "config.yaml").write_text("plugins:\n  enabled: [demo]\n", encoding="utf-8")
    done = run_probe(setup, PROBE, setup.cli.variables(**setup.variables))
    return done.stdout.splitlines()[-1]


def test_listing_imports_no_mcp_numpy_jsonschema_packaging_pydantic_regex_or_asyncio(
    setup: Setup,
) -> None:
    setup.variables["HERMES_BUNDLED_PLUGINS"] = str(setup.bundled)

    assert heavy_modules_after_listing(setup) == "LOADED []"


def test_listing_with_the_shipped_plugins_imports_no_heavy_module(
    setup: Setup,
) -> None:
    # The bundled plugins load on every listing, so they too must import heavy modules lazily;
    # packaging is needed only for a manifest's requires_hermes, which none of them sets.
    assert heavy_modules_after_listing(setup) == "LOADED []"


def test_listing_with_playwright_installed_imports_no_heavy_module(
    setup: Setup, tmp_path: Path
) -> None:
    # With the browser extra installed the browser plugin registers its tools on a listing:
    # building them imported its driver (asyncio, and ssl through the agent's package).
    installed = tmp_path / "site-with-playwright"
    (installed / "playwright").mkdir(parents=True)
    (installed / "playwright" / "__init__.py").write_text("", encoding="utf-8")
    setup.variables["PYTHONPATH"] = str(installed)

    assert heavy_modules_after_listing(setup) == "LOADED []"


SEARCH_PROBE = (
    "import sys\n"
    "from hermes_core._cli import main\n"
    "try:\n    main(['tools', 'search', 'schedule a prompt', '--json'])\n"
    "except SystemExit:\n    pass\n"
    "calls_only = ('sqlite3', 'hermes_core._approvals.questions',\n"
    "              'hermes_core.agent._cron_store', 'hermes_core.search._hint_language',\n"
    "              'hermes_plugins.bundled.browser.actions',\n"
    "              'hermes_plugins.bundled.code_execution.rpc', 'hermes_core.agent._wire',\n"
    "              'hermes_plugins.bundled.session_search.index',\n"
    "              'hermes_core._approvals.shell', 'hermes_core._approvals.shell_words')\n"
    "print('LOADED', sorted(set(sys.modules) & set(calls_only)))\n"
)
"""Modules only a tool call (or a search that misses words) needs: a search that finds its
tools must not import them (sqlite3 for the cron and session stores, the question transports,
the browser's actions at session end, execute_code's script runner, the model providers' wire
types, the hints' languages, the shell command reader of approval rules; about 5 % of a warm
search)."""


def test_a_search_with_the_shipped_plugins_imports_what_only_a_call_needs_lazily(
    setup: Setup,
) -> None:
    done = run_probe(setup, SEARCH_PROBE, setup.cli.variables(**setup.variables))

    assert '"cronjob"' in done.stdout  # the search found the cron tool, hints not needed
    assert done.stdout.splitlines()[-1] == "LOADED []"


HELLO = """
import click

from hermes_core._hookspecs import hookimpl
from hermes_core._specs import CliCommandSpec
from hermes_core.testing._cli_in_process import InProcessCli


@click.command()
@click.argument("who")
def hello(who):
    \"\"\"Say hello.\"\"\"
    click.echo(f"hello, {who}")


@hookimpl
def hermes_cli_commands():
    return [CliCommandSpec("hello", hello)]
"""


def test_enabled_plugin_adds_a_subcommand(setup: Setup) -> None:
    write_dir_plugin(setup.user_plugins, "greeter", HELLO)
    (setup.home / "config.yaml").write_text("plugins:\n  enabled: [greeter]\n", encoding="utf-8")

    done = setup.run("hello", "world")
    helped = setup.run("--help")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "hello, world\n"
    assert "hello" in helped.stdout


def test_plugin_subcommand_follows_the_config_given_with_dash_dash_config(setup: Setup) -> None:
    write_dir_plugin(setup.user_plugins, "greeter", HELLO)
    other = setup.home.parent / "other.yaml"
    other.write_text("plugins:\n  enabled: [greeter]\n", encoding="utf-8")

    done = setup.run("--config", str(other), "hello", "world")
    helped = setup.run("--config", str(other), "--help")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "hello, world\n"
    assert "hello" in helped.stdout


def test_subcommand_of_a_plugin_not_enabled_does_not_exist(setup: Setup) -> None:
    write_dir_plugin(setup.user_plugins, "greeter", HELLO)

    done = setup.run("hello", "world")

    assert done.returncode == 2
    assert "No such command 'hello'" in done.stderr


def test_a_command_no_loaded_plugin_adds_names_the_plugins_that_did_not_load(
    setup: Setup,
) -> None:
    # It said "No such command 'hello'." alone: nothing tells which plugin adds a command
    # before its code runs, so the ones that did not load are named, as for a search backend.
    write_dir_plugin(setup.user_plugins, "greeter", HELLO)
    (setup.home / "config.yaml").write_text("plugins:\n  disabled: [greeter]\n", encoding="utf-8")

    done = setup.run("hello", "world")

    assert done.returncode == 2
    assert (
        "No such command 'hello'. Plugins that did not load may add it: plugin 'greeter' (user, "
        f"{setup.user_plugins / 'greeter'}) is disabled (disabled in plugins.disabled): hermes "
        "plugins enable greeter"
    ) in " ".join(done.stderr.split())


HELP_PROBE = (
    "import sys\n"
    "from hermes_core._cli import main\n"
    "try:\n    main(['--help'])\n"
    "except SystemExit:\n    pass\n"
    "heavy = ('pydantic', 'hermes_core._config', 'hermes_core._plugins.loader',\n"
    "         'hermes_core._host', 'asyncio')\n"
    "print('LOADED', sorted(set(sys.modules) & set(heavy)))\n"
)


def test_help_imports_neither_the_pydantic_config_nor_the_plugin_loader_nor_asyncio(
    setup: Setup,
) -> None:
    write_dir_plugin(setup.user_plugins, "greeter", HELLO)
    (setup.home / "config.yaml").write_text("plugins:\n  enabled: [greeter]\n", encoding="utf-8")
    # The first help loads the plugins once; as a process, whose import path the probe shares.
    first = setup.cli.subprocess_run("--help", ok=False, env=setup.environment())
    assert "hello" in first.stdout

    done = run_probe(setup, HELP_PROBE, setup.environment())

    assert done.stdout.splitlines()[-1] == "LOADED []"
    assert re.search(r"^  hello +Say hello\.$", done.stdout, re.MULTILINE)


def test_help_lists_the_command_of_a_plugin_enabled_after_the_last_help(setup: Setup) -> None:
    write_dir_plugin(setup.user_plugins, "greeter", HELLO)
    assert "hello" not in setup.run("--help").stdout

    (setup.home / "config.yaml").write_text("plugins:\n  enabled: [greeter]\n", encoding="utf-8")

    assert "hello" in setup.run("--help").stdout


def test_help_shows_the_new_help_of_a_plugin_command_edited_in_place(setup: Setup) -> None:
    plugin = write_dir_plugin(setup.user_plugins, "greeter", HELLO)
    (setup.home / "config.yaml").write_text("plugins:\n  enabled: [greeter]\n", encoding="utf-8")
    assert "Say hello." in setup.run("--help").stdout
    code = next(path for path in plugin.iterdir() if path.suffix == ".py")
    code.write_text(HELLO.replace("Say hello.", "Greet someone."), encoding="utf-8")

    assert "Greet someone." in setup.run("--help").stdout


def test_a_corrupt_help_cache_is_read_as_a_miss(setup: Setup) -> None:
    write_dir_plugin(setup.user_plugins, "greeter", HELLO)
    (setup.home / "config.yaml").write_text("plugins:\n  enabled: [greeter]\n", encoding="utf-8")
    setup.run("--help")
    cache = setup.cli.cache_dir / "cli-commands.json"
    cache.write_text('{"key": "truncated', encoding="utf-8")

    done = setup.run("--help")

    assert done.returncode == 0, done.stderr
    assert "hello" in done.stdout
    assert done.stderr == ""


def test_a_plugin_error_of_several_lines_keeps_the_table_one_row_a_plugin(setup: Setup) -> None:
    write_dir_plugin(
        setup.user_plugins, "raises", "raise RuntimeError('the database\\nis on fire\\n')\n"
    )
    write_dir_plugin(setup.user_plugins, "fine", GOOD)
    (setup.home / "config.yaml").write_text(
        "plugins:\n  enabled: [raises, fine]\n", encoding="utf-8"
    )
    lines = setup.run("plugins", "list").stdout.splitlines()

    row = next(line for line in lines if line.startswith("raises "))
    assert "the database is on fire" in row, lines
    assert not any(line.strip().startswith("is on fire") for line in lines), lines


def test_a_pip_plugin_that_cannot_be_used_still_shows_its_distributions_version(
    setup: Setup,
) -> None:
    """An entry point that names no module, or a ``plugin.yaml`` beside the module that does not
    parse, leaves no manifest; the version column still says what pip installed."""
    write_distribution(setup.site, "hermes-odd", "1.0", entry_points={"odd": "not a module!"})
    write_distribution(
        setup.site,
        "hermes-broken",
        "2.5",
        entry_points={"broken": "broken_pkg"},
        files={"broken_pkg/__init__.py": GOOD, "broken_pkg/plugin.yaml": "name: [unclosed\n"},
    )

    rows = {row["name"]: row for row in setup.list_json()}
    table = setup.run("plugins", "list").stdout

    assert (rows["odd"]["status"], rows["odd"]["version"]) == ("error", "1.0")
    assert (rows["broken"]["status"], rows["broken"]["version"]) == ("error", "2.5")
    assert re.search(r"^odd +1\.0 +pip +error", table, re.M), table
    assert "version:         2.5" in setup.run("plugins", "info", "broken").stdout


def test_a_gated_plugin_the_config_enables_is_said_once_by_plugins_list(
    hermes_cli: InProcessCli,
) -> None:
    # The host warns of it (host.warnings); the listing's row already says it: not twice.
    write_dir_plugin(hermes_cli.work / ".hermes" / "plugins", "stamp", GOOD)
    hermes_cli.config.write_text("plugins:\n  enabled: [stamp]\n", encoding="utf-8")

    done = hermes_cli.run("plugins", "list", ok=False)

    assert done.returncode == 0, done.stderr
    said = done.stdout + done.stderr
    assert said.count("HERMES_ENABLE_PROJECT_PLUGINS=1") == 1, said


def test_a_gated_plugin_the_config_enables_is_warned_of_by_a_command_that_runs_it(
    hermes_cli: InProcessCli,
) -> None:
    plugin = write_dir_plugin(hermes_cli.work / ".hermes" / "plugins", "stamp", GOOD)
    hermes_cli.config.write_text("plugins:\n  enabled: [stamp]\n", encoding="utf-8")

    done = hermes_cli.run("tools", "list", ok=False)

    assert done.returncode == 0, done.stderr
    warning = f"stamp is enabled but will not load: plugin 'stamp' (project, {plugin}) is gated"
    assert done.stderr.count(warning) == 1, done.stderr


RAISES_ON_IMPORT = 'raise RuntimeError("kaput")\n'
RAISES_IN_ITS_HOOK = """
from hermes_core.plugin import hookimpl

@hookimpl
def hermes_tools():
    raise RuntimeError("no tools today")
"""


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        (RAISES_ON_IMPORT, "import failed: RuntimeError: kaput (at {folder}/__init__.py, line 1)"),
        (RAISES_IN_ITS_HOOK, "RuntimeError: no tools today"),
    ],
    ids=["raises-on-import", "raises-in-its-hook"],
)
def test_enabling_a_plugin_that_fails_to_load_says_so_at_once_and_still_enables_it(
    setup: Setup, source: str, problem: str
) -> None:
    # `enable` said "enabled boom" and nothing else; the failure surfaced at the next command.
    folder = write_dir_plugin(setup.user_plugins, "boom", source)

    done = setup.run("plugins", "enable", "boom")

    assert done.returncode == 0, done.stderr
    assert f"enabled boom in {setup.home / 'config.yaml'}" in done.stdout
    (warning,) = done.stderr.splitlines()
    assert warning.startswith(
        f"hermes: warning: boom is enabled but will not load: plugin 'boom' (user, {folder}) "
        "failed: "
    ), warning
    assert problem.format(folder=folder) in warning
    assert [row["status"] for row in setup.list_json() if row["name"] == "boom"] == ["error"]


def test_enabling_a_plugin_with_a_broken_manifest_says_so_once_and_still_enables_it(
    setup: Setup,
) -> None:
    folder = write_dir_plugin(setup.user_plugins, "badman", GOOD, manifest="version: [1\n")

    done = setup.run("plugins", "enable", "badman")

    assert done.returncode == 0, done.stderr
    (warning,) = done.stderr.splitlines()
    assert warning.startswith(
        f"hermes: warning: badman is enabled but will not load: plugin 'badman' (user, {folder}) "
        f"failed: broken manifest: {folder}/plugin.yaml:"
    ), warning


def test_enabling_a_gated_project_plugin_runs_none_of_its_code(
    setup: Setup, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    write_dir_plugin(setup.project_plugins, "stamp", f"open({str(marker)!r}, 'w').close()\n")

    done = setup.run("plugins", "enable", "stamp")

    assert done.returncode == 0, done.stderr
    assert "is gated" in done.stderr
    assert not marker.exists()


def test_enabling_in_a_config_file_the_gate_holds_back_imports_no_plugin(
    setup: Setup, tmp_path: Path
) -> None:
    # The project's config file is saved but read by no command while the gate is closed:
    # enable must not load the plugins it enables either.
    marker = tmp_path / "ran"
    write_dir_plugin(setup.user_plugins, "boom", f"open({str(marker)!r}, 'w').close()\n")
    held = setup.project / "hermes.yaml"
    held.write_text("plugins:\n  enabled: []\n", encoding="utf-8")
    setup.variables["HERMES_CONFIG"] = str(held)

    done = setup.run("plugins", "enable", "boom")

    assert done.returncode == 0, done.stderr
    assert "enabled boom" in done.stdout
    assert "not in effect" in done.stderr
    assert not marker.exists()
