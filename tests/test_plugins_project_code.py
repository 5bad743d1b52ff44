"""Code carried by the project never runs through the pip source.

A ``*.dist-info`` folder or a module inside the working directory tree is the project's, however
it got onto ``sys.path`` (``python -m`` puts the working directory there, ``PYTHONPATH=.`` or
``src`` does too): such a plugin is a project plugin, gated as one, and shadows nothing.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from builders import make_venv

from hermes_core._config import Config, PluginsConfig
from hermes_core._paths import Environment
from hermes_core._plugins import discover, plan_plugins
from hermes_core._yaml_limits import MANIFEST_MAX_BYTES
from hermes_core.testing import HermesCli, write_dir_plugin, write_distribution

GOOD = """
from hermes_core._hookspecs import hookimpl

@hookimpl
def hermes_session_start(session):
    pass
"""


def marker_code(marker: Path) -> str:
    return f"open({str(marker)!r}, 'w').close()\n"


def trap_distribution(site: Path, marker: Path) -> None:
    """A distribution named after the user's ``shouty`` and the bundled ``bm25``, whose module
    leaves ``marker`` behind when it is imported."""
    write_distribution(
        site,
        "evil",
        entry_points={"shouty": "evil_mod", "bm25": "evil_mod"},
        files={"evil_mod.py": marker_code(marker)},
    )


def user_plugin(cli: HermesCli) -> dict[str, str]:
    """``shouty`` in the user's folder and enabled in the user's config, beside the shipped
    bundled plugins (``bm25`` among them); the variables to run ``hermes`` with."""
    write_dir_plugin(cli.home / "plugins", "shouty", GOOD)
    cli.config.write_text("plugins:\n  enabled: [shouty]\n", encoding="utf-8")
    return {}


def rows_by_name(cli: HermesCli, variables: dict[str, str]) -> dict[str, list[dict[str, Any]]]:
    rows: list[dict[str, Any]] = cli.json(
        "plugins", "list", "--json", "--all", env=cli.variables(**variables)
    )
    grouped: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        grouped.setdefault(row["name"], []).append(row)
    return grouped


@pytest.mark.subprocess
def test_python_m_in_a_project_does_not_take_its_dist_info_for_a_pip_plugin(
    hermes_cli: HermesCli,
) -> None:
    marker = hermes_cli.root / "project-code-ran"
    variables = user_plugin(hermes_cli)
    # The working directory of ``python -m hermes_core`` (HermesCli runs exactly that).
    trap_distribution(hermes_cli.work, marker)

    rows = rows_by_name(hermes_cli, variables)
    hermes_cli.run("tools", "list", env=hermes_cli.variables(**variables))

    assert [(r["source"], r["status"]) for r in rows["shouty"]] == [("user", "enabled")]
    assert [(r["source"], r["status"]) for r in rows["bm25"]] == [("bundled", "enabled (default)")]
    assert not marker.exists()


@pytest.mark.subprocess
@pytest.mark.parametrize("where", ["vendor", "src/deep/site"])
def test_pip_distribution_inside_project_is_gated_as_project_plugin(
    hermes_cli: HermesCli, where: str
) -> None:
    marker = hermes_cli.root / "project-code-ran"
    variables = user_plugin(hermes_cli)
    inside = hermes_cli.work / where
    trap_distribution(inside, marker)
    variables["PYTHONPATH"] = str(inside)

    rows = rows_by_name(hermes_cli, variables)
    hermes_cli.run("tools", "list", env=hermes_cli.variables(**variables))

    shouty = {r["source"]: r for r in rows["shouty"]}
    assert (shouty["user"]["status"], shouty["user"]["shadowed_by"]) == ("enabled", None)
    assert shouty["project"]["status"] == "gated"
    assert Path(shouty["project"]["path"]).is_relative_to(hermes_cli.work)
    bm25 = {r["source"]: r["status"] for r in rows["bm25"]}
    assert bm25 == {"bundled": "enabled (default)", "project": "gated"}
    assert "pip" not in {r["source"] for group in rows.values() for r in group}
    assert not marker.exists()


@pytest.mark.subprocess
def test_python_m_imports_no_module_of_the_project_directory(hermes_cli: HermesCli) -> None:
    marker = hermes_cli.root / "project-code-ran"
    # Modules hermes-core imports at start and when loading its configuration.
    for module in ("click", "pydantic", "ruamel", "yaml", "pluggy"):
        (hermes_cli.work / f"{module}.py").write_text(marker_code(marker), encoding="utf-8")

    hermes_cli.run("config", "validate")

    assert not marker.exists()


def test_distribution_on_sys_path_through_the_working_directory_is_a_project_plugin(
    hermes_env: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_distribution(
        hermes_env.cwd,
        "hermes-local",
        entry_points={"local": "local_mod"},
        files={"local_mod.py": ""},
    )
    monkeypatch.chdir(hermes_env.cwd)
    monkeypatch.syspath_prepend("")  # what ``python -c`` and the interactive prompt put there

    (candidate,) = discover(hermes_env).candidates
    (record,), _ = plan_plugins(Config(plugins=PluginsConfig(enabled=["local"])), hermes_env)

    assert (candidate.source, candidate.name) == ("project", "local")
    assert candidate.path == hermes_env.cwd / "local_mod.py"
    assert record.status == "gated"


def test_pip_plugin_whose_module_lies_in_the_project_is_a_project_plugin(
    hermes_env: Environment, hermes_distribution, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Installed metadata outside the project, the module itself inside it, found through a
    # sys.path entry the project supplies (PYTHONPATH=src); no editable install of that folder
    # is recorded (see test_plugins_source_by_install.py for one that is).
    hermes_distribution("hermes-dev", entry_points={"dev": "dev_mod"})
    source = hermes_env.cwd / "src"
    source.mkdir()
    (source / "dev_mod.py").write_text(GOOD, encoding="utf-8")
    monkeypatch.syspath_prepend(str(source))

    (candidate,) = discover(hermes_env).candidates

    assert (candidate.source, candidate.path) == ("project", source / "dev_mod.py")


def test_project_distribution_does_not_hide_the_installed_one_of_the_same_name(
    hermes_env: Environment, hermes_distribution, monkeypatch: pytest.MonkeyPatch
) -> None:
    installed = hermes_distribution(
        "hermes-weather",
        "2.0",
        entry_points={"weather": "weather_mod"},
        files={"weather_mod.py": ""},
    )
    # Same distribution name, no entry point: first on sys.path, it would hide the real one.
    write_distribution(hermes_env.cwd / "vendor", "hermes-weather", "9.9")
    monkeypatch.syspath_prepend(str(hermes_env.cwd / "vendor"))

    (candidate,) = discover(hermes_env).candidates

    assert (candidate.source, candidate.version) == ("pip", "2.0")
    assert candidate.path == installed.site_dir / "weather_mod.py"


@pytest.mark.subprocess
def test_distribution_in_the_interpreters_own_site_packages_inside_the_project_stays_pip(
    hermes_cli: HermesCli,
) -> None:
    # A virtual environment in the project, the usual place: what is installed into the
    # interpreter's own site-packages is the user's (its .pth files run at start anyway).
    venv = hermes_cli.work / ".venv"
    python, site = make_venv(venv)
    write_distribution(
        site, "hermes-venv", entry_points={"venv-tool": "venv_tool"}, files={"venv_tool.py": GOOD}
    )
    hermes_cli.config.write_text("plugins:\n  enabled: [venv-tool]\n", encoding="utf-8")
    command = [str(python), *hermes_cli.command("plugins", "list", "--json")[1:]]

    done = subprocess.run(
        command,
        cwd=hermes_cli.work,
        env=hermes_cli.variables(HERMES_BUNDLED_PLUGINS=str(hermes_cli.root / "none")),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    rows = [r for r in json.loads(done.stdout) if r["name"] == "venv-tool"]
    assert [(r["source"], r["status"]) for r in rows] == [("pip", "enabled")]


def test_project_distribution_loads_only_as_a_project_plugin(
    hermes_env: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    vendor = hermes_env.cwd / "vendor"
    write_distribution(
        vendor, "hermes-local", entry_points={"local": "local_mod"}, files={"local_mod.py": GOOD}
    )
    monkeypatch.syspath_prepend(str(vendor))
    env = dataclasses.replace(
        hermes_env, variables={**hermes_env.variables, "HERMES_ENABLE_PROJECT_PLUGINS": "1"}
    )
    enabled = Config(plugins=PluginsConfig(enabled=["local"]))

    (from_user,), _ = plan_plugins(enabled, env, config_path=hermes_env.home / "config.yaml")
    (from_project,), _ = plan_plugins(
        enabled, env, config_path=hermes_env.cwd / ".hermes" / "config.yaml"
    )

    assert (from_user.source, from_user.status) == ("project", "enabled")
    assert (from_project.source, from_project.status) == ("project", "not enabled")


def test_project_distribution_with_a_malformed_entry_points_file_is_ignored_with_a_warning(
    hermes_env: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    vendor = hermes_env.cwd / "vendor"
    broken = write_distribution(vendor, "hermes-broken").dist_info
    (broken / "entry_points.txt").write_text("[hermes_core.plugins]\nno equals sign\n")
    write_distribution(vendor, "hermes-fine", entry_points={"fine": "fine_mod"})
    monkeypatch.syspath_prepend(str(vendor))

    found = discover(hermes_env)

    assert [(c.source, c.name) for c in found.candidates] == [("project", "fine")]
    (warning,) = found.warnings
    assert str(broken) in warning
    assert "entry_points.txt cannot be read" in warning


def test_project_distribution_with_oversized_metadata_is_ignored_unread(
    hermes_env: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    vendor = hermes_env.cwd / "vendor"
    big = write_distribution(vendor, "hermes-big", entry_points={"big": "big_mod"}).dist_info
    with (big / "METADATA").open("a", encoding="utf-8") as stream:
        stream.write("Summary: " + "x" * 100_000 + "\n")
    monkeypatch.syspath_prepend(str(vendor))

    found = discover(hermes_env)

    assert found.candidates == []
    (warning,) = found.warnings
    assert f"METADATA is larger than {MANIFEST_MAX_BYTES} bytes" in warning


def test_entry_point_that_is_not_a_module_reference_is_an_error_of_that_plugin(
    hermes_env: Environment, hermes_distribution
) -> None:
    hermes_distribution("hermes-odd", entry_points={"odd": "not a module!", "even": "even_mod"})

    found = {c.name: c for c in discover(hermes_env).candidates}

    assert found["odd"].error is not None
    assert "not a module or module:attribute reference" in found["odd"].error
    assert found["even"].error is None


def test_project_distribution_of_no_plugin_is_not_read_however_large_its_metadata(
    hermes_env: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``.pth`` or ``PYTHONPATH=.`` naming a venv's site-packages in the project puts every
    package of it there (pydantic's METADATA is 144 kB): none is hermes' business."""
    vendor = hermes_env.cwd / "vendor"
    plain = write_distribution(vendor, "pydantic-like").dist_info
    scripts = write_distribution(
        vendor, "tool-like", entry_points={"tool": "tool_mod"}, group="console_scripts"
    ).dist_info
    for folder in (plain, scripts):
        with (folder / "METADATA").open("a", encoding="utf-8") as stream:
            stream.write("Description: " + "x" * 150_000 + "\n")
    write_distribution(vendor, "hermes-fine", entry_points={"fine": "fine_mod"})
    monkeypatch.syspath_prepend(str(vendor))

    found = discover(hermes_env)

    assert [(c.source, c.name) for c in found.candidates] == [("project", "fine")]
    assert found.warnings == []


def test_project_distribution_with_an_oversized_entry_points_file_is_ignored_unread(
    hermes_env: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    vendor = hermes_env.cwd / "vendor"
    big = write_distribution(vendor, "hermes-big", entry_points={"big": "big_mod"}).dist_info
    with (big / "entry_points.txt").open("a", encoding="utf-8") as stream:
        stream.write("# " + "x" * 100_000 + "\n")
    monkeypatch.syspath_prepend(str(vendor))

    found = discover(hermes_env)

    assert found.candidates == []
    (warning,) = found.warnings
    assert str(big) in warning
    assert f"entry_points.txt is larger than {MANIFEST_MAX_BYTES} bytes" in warning


@pytest.mark.parametrize("name", ["entry_points.txt", "METADATA"])
def test_project_distribution_whose_metadata_file_is_a_fifo_is_refused_not_waited_on(
    hermes_env: Environment, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    vendor = hermes_env.cwd / "vendor"
    fifo = write_distribution(vendor, "hermes-fifo", entry_points={"x": "x_mod"}).dist_info
    (fifo / name).unlink()
    os.mkfifo(fifo / name)
    monkeypatch.syspath_prepend(str(vendor))

    found = discover(hermes_env)

    assert found.candidates == []
    (warning,) = found.warnings
    assert f"project distribution {fifo}: {name} is not a regular file (a FIFO)" in warning
