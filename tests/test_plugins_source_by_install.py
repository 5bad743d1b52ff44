"""A plugin's source is how it was installed, not where its code lies; a name that selects a
plugin which did not load says which plugin it is, why it did not load and what to do.

``pip install -e plugins/hermes-search-hybrid`` in a checkout leaves a ``*.dist-info`` (with a
``direct_url.json`` marking it editable) in the environment's site-packages and a ``.pth`` that
puts the plugin's folder, inside the checkout, on ``sys.path``: the user ran pip, so it is a
``pip`` plugin. Code that only the working directory supplies (a module there that comes first
on ``sys.path`` because ``python -m`` puts the working directory there) stays the project's.

Everything runs through the real ``hermes`` command in a virtual environment of its own (made
here, with hermes-core and its dependencies from the environment running the tests), the
distribution written as pip writes an editable install.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from builders import make_venv

from hermes_core._paths import Environment
from hermes_core._plugins import discover
from hermes_core.testing import HermesCli, write_dir_plugin, write_distribution

HYBRID = """\
from hermes_core.plugin import SearchBackendSpec, hookimpl


@hookimpl
def hermes_search_backends():
    # Good enough for a test: the bundled keyword ranking under another name.
    return [SearchBackendSpec("hybrid", factory=lambda context: context.search_backend("bm25"))]
"""

MANIFEST = "kind: backend\nprovides_hooks: [hermes_search_backends]\n"


@dataclass
class Checkout:
    """A ``HermesCli`` whose working directory stands for a checkout, and the ``python`` of a
    virtual environment outside it into which distributions are installed as pip installs
    them."""

    cli: HermesCli
    python: Path
    site: Path

    def run(
        self, *args: str, ok: bool = True, env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """``hermes *args`` with the environment's ``python``, in the checkout."""
        done = subprocess.run(
            [str(self.python), *self.cli.command(*args)[1:]],
            cwd=self.cli.work,
            env=dict(env) if env is not None else self.cli.variables(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if ok and done.returncode != 0:
            pytest.fail(f"hermes {' '.join(args)} exited with {done.returncode}:\n{done.stderr}")
        return done

    def rows(self, name: str, env: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
        """``plugins list --json`` rows of ``name``."""
        listed = json.loads(self.run("plugins", "list", "--json", env=env).stdout)
        return [row for row in listed if row["name"] == name]

    def install_editable(self, source: Path, module: str, code: str) -> None:
        """``pip install -e source`` of a distribution ``demo-hybrid`` whose entry point
        ``hybrid`` is the package ``module`` in ``source``: its package written there, its
        ``*.dist-info`` (``direct_url.json`` saying editable) and ``.pth`` in site-packages."""
        package = source / module
        package.mkdir(parents=True, exist_ok=True)
        (package / "__init__.py").write_text(code, encoding="utf-8")
        (package / "plugin.yaml").write_text(MANIFEST, encoding="utf-8")
        dist_info = self.site / "demo_hybrid-0.1.0.dist-info"
        dist_info.mkdir()
        files = {
            "METADATA": "Metadata-Version: 2.1\nName: demo-hybrid\nVersion: 0.1.0\n",
            "entry_points.txt": f"[hermes_core.plugins]\nhybrid = {module}\n",
            "INSTALLER": "pip\n",
            "direct_url.json": json.dumps({"url": source.as_uri(), "dir_info": {"editable": True}}),
        }
        for name, text in files.items():
            (dist_info / name).write_text(text, encoding="utf-8")
        pth = "_demo_hybrid.pth"
        (self.site / pth).write_text(f"{source}\n", encoding="utf-8")
        record = [*(f"{dist_info.name}/{name}" for name in files), f"{dist_info.name}/RECORD", pth]
        (dist_info / "RECORD").write_text("".join(f"{r},,\n" for r in record), encoding="utf-8")


@pytest.fixture
def checkout(hermes_cli: HermesCli) -> Checkout:
    venv = hermes_cli.root / "venv"
    python, site = make_venv(venv)
    return Checkout(hermes_cli, python, site)


def select_hybrid(cli: HermesCli) -> None:
    cli.config.write_text(
        "plugins:\n  enabled: [hybrid]\ntools:\n  tool_search:\n    backend: hybrid\n",
        encoding="utf-8",
    )


@pytest.mark.subprocess
def test_an_editable_install_whose_code_lies_in_the_checkout_is_a_pip_plugin(
    checkout: Checkout,
) -> None:
    source = checkout.cli.work / "plugins" / "demo-hybrid"
    checkout.install_editable(source, "demo_hybrid", HYBRID)

    before = checkout.rows("hybrid")
    enabled = checkout.run("plugins", "enable", "hybrid")
    select_hybrid(checkout.cli)
    searched = checkout.run("tools", "search", "connections", "--json")
    after = checkout.rows("hybrid")

    assert [(r["source"], r["status"]) for r in before] == [("pip", "not enabled")]
    assert Path(before[0]["path"]) == source / "demo_hybrid"
    assert "warning" not in enabled.stderr
    assert "error" not in json.loads(searched.stdout)
    assert [(r["source"], r["status"], r["hooks"]) for r in after] == [
        ("pip", "enabled", ["hermes_search_backends"])
    ]


@pytest.mark.subprocess
def test_a_module_the_checkout_puts_before_an_editable_install_stays_the_projects(
    checkout: Checkout,
) -> None:
    # Installed editable from a folder outside the checkout; the checkout has a package of the
    # same name, which comes first on sys.path through PYTHONPATH=<the checkout> (hermes itself
    # takes off the working directory that ``python -m`` puts there).
    marker = checkout.cli.root / "checkout-code-ran"
    checkout.install_editable(
        checkout.cli.root / "elsewhere" / "demo-hybrid", "demo_hybrid", HYBRID
    )
    planted = checkout.cli.work / "demo_hybrid"
    planted.mkdir()
    (planted / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n", "utf-8")
    select_hybrid(checkout.cli)

    variables = checkout.cli.variables(PYTHONPATH=str(checkout.cli.work))

    rows = checkout.rows("hybrid", env=variables)
    searched = checkout.run("tools", "search", "connections", "--json", ok=False, env=variables)

    assert [(r["source"], r["status"]) for r in rows] == [("project", "gated")]
    assert "plugin 'hybrid'" in searched.stdout + searched.stderr
    assert not marker.exists()


def gated_project_plugin(cli: HermesCli, name: str) -> None:
    """A plugin ``name`` in the project's ``.hermes/plugins`` (gated: the gate is closed)."""
    write_dir_plugin(cli.work / ".hermes" / "plugins", name, "", manifest={"kind": "backend"})


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("kind", "config", "command"),
    [
        (
            "search backend",
            "tools:\n  tool_search:\n    backend: hybrid\n",
            ["tools", "search", "x"],
        ),
        ("approval policy", "approvals:\n  policy: hybrid\n", ["tools", "list"]),
        (
            "connector gateway",
            "tools:\n  connectors:\n    url: http://127.0.0.1:9/\n    gateway: hybrid\n",
            ["connectors", "status"],
        ),
    ],
)
def test_an_unknown_name_names_the_gated_project_plugin_of_that_name_and_the_fix(
    hermes_cli: HermesCli, kind: str, config: str, command: list[str]
) -> None:
    gated_project_plugin(hermes_cli, "hybrid")
    hermes_cli.config.write_text(f"plugins:\n  enabled: [hybrid]\n{config}", encoding="utf-8")

    done = hermes_cli.run(*command, ok=False)

    said = done.stdout + done.stderr
    assert done.returncode != 0
    assert f"{kind} 'hybrid'" in said
    assert (
        f"plugin 'hybrid' (project, {hermes_cli.work / '.hermes' / 'plugins' / 'hybrid'})" in said
    )
    assert "is gated" in said
    assert "HERMES_ENABLE_PROJECT_PLUGINS=1" in said
    assert "valid names:" in said


@pytest.mark.subprocess
def test_an_unknown_policy_names_the_disabled_plugin_of_that_name_and_how_to_enable_it(
    hermes_cli: HermesCli,
) -> None:
    write_dir_plugin(hermes_cli.home / "plugins", "careful", "")
    hermes_cli.config.write_text(
        "plugins:\n  disabled: [careful]\napprovals:\n  policy: careful\n", encoding="utf-8"
    )

    done = hermes_cli.run("tools", "list", ok=False)

    assert done.returncode == 2
    assert "approval policy 'careful'" in done.stderr
    assert "plugin 'careful' (user, " in done.stderr
    assert "is disabled" in done.stderr
    assert "hermes plugins enable careful" in done.stderr
    assert "valid names: annotations" in done.stderr


@pytest.mark.subprocess
def test_enabling_a_gated_project_plugin_says_it_stays_gated_and_how_to_open_the_gate(
    hermes_cli: HermesCli,
) -> None:
    gated_project_plugin(hermes_cli, "hybrid")

    done = hermes_cli.run("plugins", "enable", "hybrid")

    assert "enabled hybrid in" in done.stdout
    # The user's config, outside the project, now enables it: the gate is all that is left.
    # (It was told it "must also be in plugins.enabled of a config file outside the project",
    # just after being put there.)
    assert done.stderr.endswith(
        "is gated: set HERMES_ENABLE_PROJECT_PLUGINS=1 in the environment to load the "
        "project's plugins (only for a project you trust)\n"
    ), done.stderr
    assert "will not load" in done.stderr
    assert "plugins.enabled" not in done.stderr


@pytest.mark.subprocess
def test_a_gated_project_plugin_not_yet_enabled_is_said_to_need_enabling_too(
    hermes_cli: HermesCli,
) -> None:
    gated_project_plugin(hermes_cli, "hybrid")
    hermes_cli.config.write_text("tools:\n  tool_search:\n    backend: hybrid\n")

    done = hermes_cli.run("tools", "search", "x", ok=False)

    assert (
        "is gated: set HERMES_ENABLE_PROJECT_PLUGINS=1 in the environment to load the "
        "project's plugins (only for a project you trust); then enable it: hermes plugins "
        "enable hybrid"
    ) in done.stderr


@pytest.mark.subprocess
def test_enabling_a_gated_project_plugin_from_the_projects_own_config_says_both_are_needed(
    hermes_cli: HermesCli,
) -> None:
    gated_project_plugin(hermes_cli, "hybrid")
    home = hermes_cli.work / ".hermes"

    done = hermes_cli.run(
        "plugins", "enable", "hybrid", env=hermes_cli.variables(HERMES_HOME=str(home))
    )

    assert f"enabled hybrid in {home / 'config.yaml'}" in done.stdout  # the file, named
    assert (
        "is gated: set HERMES_ENABLE_PROJECT_PLUGINS=1 in the environment to load the "
        "project's plugins (only for a project you trust); and enable it in a config file "
        "outside the project (your own): the one in effect lies inside it"
    ) in done.stderr


@pytest.mark.subprocess
def test_enabling_a_project_plugin_from_the_projects_own_config_says_why_it_stays_off(
    hermes_cli: HermesCli,
) -> None:
    # HERMES_HOME=./.hermes: the config in effect is the project's own, which cannot enable
    # the project's plugins even with the gate open.
    gated_project_plugin(hermes_cli, "hybrid")
    home = hermes_cli.work / ".hermes"
    variables = hermes_cli.variables(HERMES_HOME=str(home), HERMES_ENABLE_PROJECT_PLUGINS="1")

    done = hermes_cli.run("plugins", "enable", "hybrid", env=variables)

    assert f"enabled hybrid in {home / 'config.yaml'}" in done.stdout
    assert "will not load" in done.stderr
    assert "config file outside the project" in done.stderr


@pytest.mark.subprocess
def test_enabling_an_installed_plugin_reports_plain_success(hermes_cli: HermesCli) -> None:
    write_dir_plugin(hermes_cli.home / "plugins", "careful", "")

    done = hermes_cli.run("plugins", "enable", "careful")

    assert done.stdout.startswith("enabled careful in")
    assert done.stderr == ""


def test_the_egg_info_an_editable_install_leaves_in_its_source_is_not_a_second_project_copy(
    hermes_env: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    # setuptools' editable install: the dist-info in site-packages, and an egg-info beside the
    # package in the source folder, which the install's .pth puts on sys.path.
    source = hermes_env.cwd / "plugins" / "demo"
    installed = write_distribution(
        hermes_env.cwd.parent / "site", "demo-hybrid", "0.1.0", entry_points={"hybrid": "demo_mod"}
    )
    (installed.dist_info / "direct_url.json").write_text(
        json.dumps({"url": source.as_uri(), "dir_info": {"editable": True}}), encoding="utf-8"
    )
    write_distribution(source, "demo-hybrid", "0.1.0", entry_points={"hybrid": "demo_mod"})
    egg_info = source / "demo_hybrid-0.1.0.dist-info"
    egg_info.rename(source / "demo_hybrid.egg-info")
    (source / "demo_mod.py").write_text(HYBRID, encoding="utf-8")
    monkeypatch.syspath_prepend(str(source))
    monkeypatch.syspath_prepend(str(installed.site_dir))

    found = [(c.source, c.name, c.path) for c in discover(hermes_env).candidates]

    assert found == [("pip", "hybrid", source / "demo_mod.py")]


HELLO_COMMAND = """\
import click

from hermes_core.plugin import hookimpl
from hermes_core._specs import CliCommandSpec


@click.command()
def hello():
    \\"\\"\\"Say hello.\\"\\"\\"
    click.echo("hello")


@hookimpl
def hermes_cli_commands():
    return [CliCommandSpec("hello", hello)]
"""


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("where", "config", "state"),
    [
        ("user", "plugins:\n  enabled: []\n", "is not enabled: enable it with: hermes plugins"),
        ("user", "plugins:\n  disabled: [hello]\n", "is disabled"),
        ("project", "plugins:\n  enabled: [hello]\n", "is gated"),
    ],
)
def test_an_unknown_command_names_the_plugin_of_that_name_that_did_not_load(
    hermes_cli: HermesCli, where: str, config: str, state: str
) -> None:
    root = hermes_cli.home if where == "user" else hermes_cli.work / ".hermes"
    write_dir_plugin(root / "plugins", "hello", HELLO_COMMAND)
    hermes_cli.config.write_text(config, encoding="utf-8")

    done = hermes_cli.run("hello", ok=False)

    assert done.returncode == 2
    assert "No such command 'hello'" in done.stderr
    assert f"plugin 'hello' ({where}, {root / 'plugins' / 'hello'}) {state}" in done.stderr
