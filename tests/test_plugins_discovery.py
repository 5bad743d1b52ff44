"""Discovery and resolution: the five sources, their precedence, shadowing, the impostor guard."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from hermes_core._config import Config, PluginsConfig
from hermes_core._errors import PluginError
from hermes_core._paths import Environment
from hermes_core._plugins import discover, load_plugins, normalize_name, plan_plugins, resolve
from hermes_core._plugins.manifest import load_manifest
from hermes_core.testing import FakeNixStore, write_dir_plugin, write_distribution


def with_vars(env: Environment, **variables: str) -> Environment:
    return dataclasses.replace(env, variables={**env.variables, **variables})


def bundled_dir(env: Environment) -> Path:
    return env.bundled_plugins_dir


def test_names_are_normalized_like_package_names() -> None:
    assert normalize_name("My_Plugin..Name") == "my-plugin-name"
    assert normalize_name("a-_.b") == "a-b"


def test_each_source_is_found_with_its_name_and_path(
    hermes_env: Environment, hermes_distribution, hermes_nix_store
) -> None:
    store: FakeNixStore = hermes_nix_store()
    write_dir_plugin(bundled_dir(hermes_env), "one")
    write_dir_plugin(hermes_env.user_plugins_dir, "two")
    write_dir_plugin(hermes_env.project_plugins_dir, "three")
    dist = hermes_distribution(
        "hermes-four", "4.2", entry_points={"Four": "four_mod"}, files={"four_mod.py": ""}
    )
    store.add_dir_plugin("five")
    store.add_distribution("hermes-six", "6.0", entry_points={"six": "six_mod:Plugin"})
    env = with_vars(hermes_env, HERMES_NIX_PLUGINS=str(store.path))

    found = {c.name: c for c in discover(env).candidates}

    assert {name: c.source for name, c in found.items()} == {
        "one": "bundled",
        "two": "user",
        "three": "project",
        "four": "pip",
        "five": "nix",
        "six": "nix",
    }
    assert found["two"].path == hermes_env.user_plugins_dir / "two"
    assert found["four"].version == "4.2"
    assert found["four"].path == dist.site_dir / "four_mod.py"
    assert found["six"].site_dir == store.site_dir
    assert found["six"].entry_point is not None
    assert found["six"].entry_point.value == "six_mod:Plugin"


def test_later_source_wins_and_earlier_ones_are_shadowed(
    hermes_env: Environment, hermes_distribution, hermes_nix_store
) -> None:
    store: FakeNixStore = hermes_nix_store()
    write_dir_plugin(bundled_dir(hermes_env), "demo")
    write_dir_plugin(hermes_env.user_plugins_dir, "demo")
    write_dir_plugin(hermes_env.project_plugins_dir, "demo")
    hermes_distribution("hermes-demo", entry_points={"demo": "demo_pip"})
    store.add_dir_plugin("demo")
    env = with_vars(
        hermes_env, HERMES_NIX_PLUGINS=str(store.path), HERMES_ENABLE_PROJECT_PLUGINS="1"
    )

    resolution = resolve(discover(env))

    assert resolution.winners["demo"].source == "nix"
    assert [c.source for c in resolution.shadowed["demo"]] == [
        "bundled",
        "user",
        "project",
        "pip",
    ]


def test_gated_project_plugin_shadows_nothing(hermes_env: Environment) -> None:
    write_dir_plugin(hermes_env.user_plugins_dir, "demo")
    write_dir_plugin(hermes_env.project_plugins_dir, "demo")

    resolution = resolve(discover(hermes_env))

    assert resolution.winners["demo"].source == "user"
    assert "demo" not in resolution.shadowed
    assert [c.source for c in resolution.gated] == ["project"]


def test_user_plugin_claiming_a_bundled_name_from_another_directory_is_ignored(
    hermes_env: Environment,
) -> None:
    write_dir_plugin(bundled_dir(hermes_env), "bm25")
    write_dir_plugin(hermes_env.user_plugins_dir, "bm25", dirname="innocent-tool")

    resolution = resolve(discover(hermes_env))

    assert resolution.winners["bm25"].source == "bundled"
    assert "bm25" not in resolution.shadowed
    assert any("innocent-tool" in w and "bm25" in w for w in resolution.warnings)


def test_same_named_directory_overrides_the_bundled_plugin(hermes_env: Environment) -> None:
    write_dir_plugin(bundled_dir(hermes_env), "bm25")
    write_dir_plugin(hermes_env.user_plugins_dir, "bm25", dirname="BM25")

    resolution = resolve(discover(hermes_env))

    assert resolution.winners["bm25"].source == "user"
    assert [c.source for c in resolution.shadowed["bm25"]] == ["bundled"]
    assert resolution.warnings == []


def test_directories_starting_with_underscore_or_dot_are_skipped(
    hermes_env: Environment,
) -> None:
    write_dir_plugin(hermes_env.user_plugins_dir, "hidden", dirname=".hidden")
    write_dir_plugin(hermes_env.user_plugins_dir, "private", dirname="_private")
    write_dir_plugin(hermes_env.user_plugins_dir, "shown")
    (hermes_env.user_plugins_dir / "not-a-plugin").mkdir()
    (hermes_env.user_plugins_dir / "README.txt").write_text("hello", encoding="utf-8")

    names = [c.name for c in discover(hermes_env).candidates]

    assert names == ["shown"]


def test_broken_manifest_is_reported_and_discovery_goes_on(hermes_env: Environment) -> None:
    write_dir_plugin(hermes_env.user_plugins_dir, "broken", manifest="name: [unclosed\n")
    write_dir_plugin(hermes_env.user_plugins_dir, "fine")

    found = {c.name: c for c in discover(hermes_env).candidates}

    assert found["fine"].error is None
    assert found["broken"].error is not None
    assert "plugin.yaml" in found["broken"].error
    assert found["broken"].manifest is None


def test_a_plugin_yaml_that_is_a_fifo_or_a_dangling_link_makes_an_error_not_a_missing_plugin(
    hermes_env: Environment,
) -> None:
    fifo = write_dir_plugin(hermes_env.user_plugins_dir, "fifo") / "plugin.yaml"
    fifo.unlink()
    os.mkfifo(fifo)
    dangling = write_dir_plugin(hermes_env.user_plugins_dir, "dangling") / "plugin.yaml"
    dangling.unlink()
    dangling.symlink_to(hermes_env.home / "gone.yaml")

    found = {c.name: c for c in discover(hermes_env).candidates}

    assert f"{fifo}: not a regular file (a FIFO)" in (found["fifo"].error or "")
    assert f"{dangling}: cannot be read" in (found["dangling"].error or "")


def test_unreadable_plugins_directory_is_reported_not_fatal(hermes_env: Environment) -> None:
    hermes_env.home.mkdir(exist_ok=True)
    # A file where the plugins directory should be cannot be listed.
    hermes_env.user_plugins_dir.write_text("not a directory", encoding="utf-8")
    write_dir_plugin(hermes_env.bundled_plugins_dir, "core", manifest={"kind": "backend"})

    found = discover(hermes_env)

    assert [c.name for c in found.candidates] == ["core"]
    assert any(str(hermes_env.user_plugins_dir) in w for w in found.warnings)


def test_disable_autoload_keeps_only_bundled_plugins(
    hermes_env: Environment, hermes_distribution, hermes_nix_store
) -> None:
    store: FakeNixStore = hermes_nix_store()
    write_dir_plugin(bundled_dir(hermes_env), "core")
    write_dir_plugin(hermes_env.user_plugins_dir, "user-one")
    write_dir_plugin(hermes_env.project_plugins_dir, "project-one")
    hermes_distribution("hermes-pip-one", entry_points={"pip-one": "pip_one"})
    store.add_dir_plugin("nix-one")
    env = with_vars(
        hermes_env,
        HERMES_NIX_PLUGINS=str(store.path),
        HERMES_ENABLE_PROJECT_PLUGINS="1",
        HERMES_DISABLE_PLUGIN_AUTOLOAD="1",
    )

    assert [c.name for c in discover(env).candidates] == ["core"]


def test_nix_reads_only_the_running_python_site_dir(
    hermes_env: Environment, hermes_nix_store
) -> None:
    store: FakeNixStore = hermes_nix_store()
    other = store.path / "lib" / "python3.1" / "site-packages"
    write_distribution(other, "hermes-old", entry_points={"old": "old_mod"})
    store.add_distribution("hermes-new", entry_points={"new": "new_mod"})
    env = with_vars(hermes_env, HERMES_NIX_PLUGINS=str(store.path))

    assert [c.name for c in discover(env).candidates] == ["new"]


def test_several_nix_store_paths_are_read(hermes_env: Environment, hermes_nix_store) -> None:
    first: FakeNixStore = hermes_nix_store("first")
    second: FakeNixStore = hermes_nix_store("second")
    first.add_dir_plugin("alpha")
    second.add_dir_plugin("beta")
    env = with_vars(hermes_env, HERMES_NIX_PLUGINS=f"{first.path}:{second.path}")

    assert sorted(c.name for c in discover(env).candidates) == ["alpha", "beta"]


def test_pip_plugin_reads_plugin_yaml_beside_its_module(
    hermes_env: Environment, hermes_distribution
) -> None:
    hermes_distribution(
        "hermes-weather",
        "3.1",
        summary="Weather tools",
        entry_points={"weather": "weather_pkg"},
        files={
            "weather_pkg/__init__.py": "",
            "weather_pkg/plugin.yaml": (
                "version: '9.9'\ndescription: Old words\n"
                "requires_env: [WEATHER_KEY]\nprovides_tools: [forecast]\n"
            ),
        },
    )

    (candidate,) = discover(hermes_env).candidates

    assert candidate.manifest is not None
    assert candidate.manifest.requires_env == ("WEATHER_KEY",)
    assert candidate.manifest.provides_tools == ("forecast",)
    assert candidate.manifest.version == "3.1"  # the installed one, not the file's
    assert candidate.manifest.description == "Weather tools"


def test_discovery_imports_no_plugin_code(
    hermes_env: Environment, hermes_distribution, hermes_nix_store, tmp_path: Path
) -> None:
    marker = tmp_path / "imported"
    code = f"open({str(marker)!r}, 'w').close()\n"
    store: FakeNixStore = hermes_nix_store()
    write_dir_plugin(hermes_env.user_plugins_dir, "user-one", code)
    hermes_distribution(
        "hermes-pip-two", entry_points={"pip-two": "pip_two"}, files={"pip_two.py": code}
    )
    store.add_distribution(
        "hermes-nix-three", entry_points={"nix-three": "nix_three"}, files={"nix_three.py": code}
    )
    env = with_vars(hermes_env, HERMES_NIX_PLUGINS=str(store.path))

    assert len(resolve(discover(env)).winners) == 3
    assert not marker.exists()
    assert "pip_two" not in sys.modules
    assert str(store.site_dir) not in sys.path


def test_real_bundled_directory_is_discovered_by_default(hermes_env: Environment) -> None:
    env = Environment(home=hermes_env.home, cwd=hermes_env.cwd, variables={})
    shipped = Path(__file__).resolve().parent.parent / "plugins_builtin"
    # A plugin is named by its manifest; each bundled one sits in a directory of that name.
    expected = sorted(
        normalize_name(load_manifest(d / "plugin.yaml", default_name=d.name).name)
        for d in shipped.iterdir()
        if (d / "plugin.yaml").is_file() and not d.name.startswith(("_", "."))
    )

    found = discover(env)

    assert env.bundled_plugins_dir.resolve() == shipped
    assert sorted(c.name for c in found.candidates if c.source == "bundled") == expected
    # So a user overrides one by copying its directory into ~/.hermes/plugins as it is.
    assert all(
        c.path is not None and normalize_name(c.path.name) == c.name
        for c in found.candidates
        if c.source == "bundled"
    )


def test_two_pip_distributions_with_one_entry_point_name_are_an_error_naming_both(
    hermes_env: Environment, hermes_distribution
) -> None:
    first = hermes_distribution(
        "hermes-dup-a", entry_points={"dup": "dup_a"}, files={"dup_a.py": ""}
    )
    second = hermes_distribution(
        "hermes-dup-b", "2.0", entry_points={"Dup": "dup_b"}, files={"dup_b.py": ""}
    )
    config = Config(plugins=PluginsConfig(enabled=["dup"]))

    (record,) = plan_plugins(config, hermes_env)[0]

    assert (record.name, record.source, record.status) == ("dup", "pip", "error")
    message = record.error or ""
    assert f"hermes-dup-a 1.0 ({first.site_dir / 'dup_a.py'})" in message
    assert f"hermes-dup-b 2.0 ({second.site_dir / 'dup_b.py'})" in message
    assert "uninstall" in message
    with pytest.raises(PluginError, match=r"hermes-dup-a 1\.0"):
        load_plugins(config, hermes_env)
    assert "dup_a" not in sys.modules
    assert "dup_b" not in sys.modules


def test_a_distribution_whose_metadata_lacks_name_and_version_is_still_a_plugin(
    hermes_env: Environment, hermes_distribution
) -> None:
    installed = hermes_distribution("hermes-bare", entry_points={"bare": "bare_mod"})
    (installed.dist_info / "METADATA").write_text("Metadata-Version: 2.1\n", encoding="utf-8")

    (candidate,) = discover(hermes_env).candidates

    assert (candidate.source, candidate.name, candidate.error) == ("pip", "bare", None)
    assert candidate.manifest is not None


def test_an_installed_distribution_with_a_malformed_entry_points_file_is_skipped_with_a_warning(
    hermes_env: Environment, hermes_distribution
) -> None:
    broken = hermes_distribution("hermes-half-uninstalled").dist_info
    (broken / "entry_points.txt").write_text("[hermes_core.plugins]\nthis line is garbage\n")
    hermes_distribution("hermes-fine", entry_points={"fine": "fine_mod"})

    found = discover(hermes_env)

    assert [(c.source, c.name) for c in found.candidates if c.source == "pip"] == [("pip", "fine")]
    (warning,) = found.warnings
    assert f"installed distribution {broken}" in warning
    assert "line 2 is not name = value: 'this line is garbage'" in warning


def test_concurrent_discoveries_each_read_every_manifest(hermes_env: Environment) -> None:
    # Only the bundled source, so the threads spend their time parsing manifests.
    env = with_vars(hermes_env, HERMES_DISABLE_PLUGIN_AUTOLOAD="1")
    for index in range(30):
        write_dir_plugin(
            bundled_dir(env),
            f"plugin-{index:02d}",
            manifest={"description": "x" * index, "provides_tools": [f"t{n}" for n in range(40)]},
        )
    expected = [(c.name, c.manifest) for c in discover(env).candidates]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often, as a busy server would
    try:
        with ThreadPoolExecutor(max_workers=4) as pool:
            results = list(pool.map(lambda _: discover(env), range(8)))
    finally:
        sys.setswitchinterval(interval)

    for found in results:
        assert [c.error for c in found.candidates if c.error] == []
        assert [(c.name, c.manifest) for c in found.candidates] == expected


def test_hermes_home_set_to_its_default_from_the_home_directory_holds_user_plugins(
    hermes_env: Environment,
) -> None:
    assert hermes_env.user_home is not None
    default_home = hermes_env.user_home / ".hermes"
    env = dataclasses.replace(
        with_vars(hermes_env, HERMES_HOME=str(default_home)),
        home=default_home,
        cwd=hermes_env.user_home,
    )
    write_dir_plugin(env.user_plugins_dir, "mine")

    plugins = load_plugins(
        Config(plugins=PluginsConfig(enabled=["mine"])), env, config_path=env.config_path
    )

    assert [(r.name, r.source, r.status) for r in plugins.records] == [("mine", "user", "enabled")]
    assert plugins.pm.has_plugin("mine")


@pytest.mark.subprocess
def test_environment_from_process_knows_the_user_home(tmp_path: Path) -> None:
    code = (
        "from hermes_core._paths import Environment\n"
        "env = Environment.from_process()\n"
        "print(env.user_home)\n"
        "print(env.home)\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", code],
        env={"HOME": str(tmp_path), "HERMES_HOME": str(tmp_path / "elsewhere")},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()

    assert shown == [str(tmp_path), str(tmp_path / "elsewhere")]
