"""Import and registration: decide before import, failure isolation, strict mode, order."""

from __future__ import annotations

import dataclasses
import importlib
import sys
from pathlib import Path

import anyio
import pluggy
import pytest

from hermes_core import _hookspecs as hookspecs_module
from hermes_core._config import Config, PluginsConfig
from hermes_core._errors import PluginError
from hermes_core._hookspecs import PROJECT_NAME
from hermes_core._host import Host
from hermes_core._paths import Environment
from hermes_core._plugins import load_plugins
from hermes_core._plugins.loader import new_plugin_manager
from hermes_core.testing import FakeNixStore, write_dir_plugin

GOOD = """
from hermes_core._hookspecs import hookimpl

@hookimpl
def hermes_session_start(session):
    pass
"""


def with_vars(env: Environment, **variables: str) -> Environment:
    return dataclasses.replace(env, variables={**env.variables, **variables})


def lenient(env: Environment) -> Environment:
    return with_vars(env, HERMES_STRICT_PLUGINS="0")


def enabling(*names: str) -> Config:
    return Config(plugins=PluginsConfig(enabled=list(names)))


def marker_code(marker: Path) -> str:
    return f"open({str(marker)!r}, 'w').close()\n"


@pytest.mark.anyio
async def test_plugin_not_enabled_runs_no_code(
    hermes_env: Environment, hermes_distribution, tmp_path: Path
) -> None:
    marker = tmp_path / "sleeper-ran"
    write_dir_plugin(hermes_env.user_plugins_dir, "sleeper", marker_code(marker))
    write_dir_plugin(hermes_env.user_plugins_dir, "awake", GOOD)
    hermes_distribution(
        "hermes-dormant",
        entry_points={"dormant": "dormant_mod"},
        files={"dormant_mod.py": marker_code(marker)},
    )

    load_plugins(enabling("awake"), hermes_env, strict=False)
    async with Host(enabling("awake"), hermes_env) as host:
        assert host.pm.has_plugin("awake")
        assert {r.name: r.status for r in host.plugins} == {
            "awake": "enabled",
            "dormant": "not enabled",
            "sleeper": "not enabled",
        }

    assert not marker.exists()
    assert "hermes_plugins.user.sleeper" not in sys.modules
    assert "dormant_mod" not in sys.modules
    assert "hermes_plugins.user.awake" in sys.modules


def test_directory_plugins_import_under_a_private_namespace(hermes_env: Environment) -> None:
    write_dir_plugin(
        hermes_env.user_plugins_dir,
        "with-helper",
        "from .helper import VALUE\n",
        files={"helper.py": "VALUE = 42\n"},
    )

    plugins = load_plugins(enabling("with-helper"), hermes_env)

    module = sys.modules["hermes_plugins.user.with_helper"]
    assert plugins.pm.get_plugin("with-helper") is module
    assert module.VALUE == 42
    assert "hermes_plugins.user.with_helper.helper" in sys.modules


def test_each_failure_is_listed_as_error_and_the_others_load(hermes_env: Environment) -> None:
    root = hermes_env.user_plugins_dir
    write_dir_plugin(root, "raises", "raise RuntimeError('database is on fire')\n")
    write_dir_plugin(root, "broken-yaml", manifest="name: broken-yaml\nversion: [1\n")
    write_dir_plugin(
        root,
        "bad-signature",
        "from hermes_core._hookspecs import hookimpl\n"
        "@hookimpl\ndef hermes_session_start(session, nonsense):\n    pass\n",
    )
    write_dir_plugin(root, "needs-env", GOOD, manifest={"requires_env": ["NEEDS_TOKEN"]})
    write_dir_plugin(root, "fine", GOOD)
    env = lenient(hermes_env)

    plugins = load_plugins(
        enabling("raises", "broken-yaml", "bad-signature", "needs-env", "fine"), env
    )

    errors = {r.name: r.error for r in plugins.records if r.status == "error"}
    assert set(errors) == {"raises", "broken-yaml", "bad-signature", "needs-env"}
    assert "RuntimeError: database is on fire" in (errors["raises"] or "")
    assert "plugin.yaml" in (errors["broken-yaml"] or "")
    assert "nonsense" in (errors["bad-signature"] or "")
    assert "NEEDS_TOKEN" in (errors["needs-env"] or "")
    assert [r.name for r in plugins.loaded] == ["fine"]
    assert plugins.pm.has_plugin("fine")
    assert not plugins.pm.has_plugin("bad-signature")
    raises = plugins.get("raises")
    assert raises is not None
    assert raises.traceback is not None
    assert "database is on fire" in raises.traceback
    assert "hermes_plugins.user.raises" not in sys.modules


def test_strict_mode_raises_the_first_plugin_error(hermes_env: Environment) -> None:
    write_dir_plugin(hermes_env.user_plugins_dir, "raises", "raise RuntimeError('boom')\n")
    write_dir_plugin(hermes_env.user_plugins_dir, "fine", GOOD)
    env = with_vars(hermes_env, HERMES_STRICT_PLUGINS="1")

    with pytest.raises(PluginError, match=r"'raises'.*RuntimeError: boom") as caught:
        load_plugins(enabling("raises", "fine"), env)

    assert caught.value.plugin == "raises"


@pytest.mark.anyio
async def test_strict_mode_raises_from_the_host(hermes_env: Environment) -> None:
    write_dir_plugin(
        hermes_env.user_plugins_dir, "needs-env", GOOD, manifest={"requires_env": ["NEEDS_TOKEN"]}
    )

    with pytest.raises(PluginError, match="NEEDS_TOKEN"):
        async with Host(enabling("needs-env"), hermes_env):
            pass


def test_a_wrapper_hook_is_an_error_not_a_decision_hook_that_never_runs(
    hermes_env: Environment,
) -> None:
    write_dir_plugin(
        hermes_env.user_plugins_dir,
        "guard",
        "from hermes_core._hookspecs import hookimpl\n"
        "@hookimpl(wrapper=True)\ndef hermes_pre_tool_call(call, session):\n"
        "    raise RuntimeError('block everything')\n    yield\n",
    )

    plugins = load_plugins(enabling("guard"), lenient(hermes_env))

    record = plugins.get("guard")
    assert record is not None
    assert record.status == "error"
    assert "hermes_pre_tool_call is a wrapper" in (record.error or "")
    assert not plugins.pm.has_plugin("guard")
    with pytest.raises(PluginError, match="is a wrapper"):
        load_plugins(enabling("guard"), hermes_env)


def test_unknown_hook_name_is_an_error(hermes_env: Environment) -> None:
    write_dir_plugin(
        hermes_env.user_plugins_dir,
        "typo",
        "from hermes_core._hookspecs import hookimpl\n"
        "@hookimpl\ndef hermes_sesion_start(session):\n    pass\n",
    )

    plugins = load_plugins(enabling("typo"), lenient(hermes_env))

    record = plugins.get("typo")
    assert record is not None
    assert record.status == "error"
    assert "hermes_sesion_start" in (record.error or "")
    assert not plugins.pm.has_plugin("typo")


def test_a_hook_signature_error_is_one_line_naming_the_argument_and_the_hooks_own(
    hermes_env: Environment,
) -> None:
    write_dir_plugin(
        hermes_env.user_plugins_dir,
        "verbose",
        "from hermes_core.plugin import hookimpl\n"
        "@hookimpl\ndef hermes_tools(config, env, verbose):\n    return []\n",
    )
    write_dir_plugin(hermes_env.user_plugins_dir, "fine", GOOD)

    plugins = load_plugins(enabling("verbose", "fine"), lenient(hermes_env))

    record = plugins.get("verbose")
    assert record is not None
    assert record.status == "error"
    assert record.error == (
        "invalid hook: hermes_tools(config, env, verbose) takes 'verbose', which the hook "
        "does not pass (it passes config, env, context: take any of them, and no other)"
    )
    assert plugins.pm.has_plugin("fine")
    with pytest.raises(PluginError, match="takes 'verbose', which the hook does not pass"):
        load_plugins(enabling("verbose"), hermes_env)


def test_a_hook_that_passes_nothing_says_to_take_no_argument(hermes_env: Environment) -> None:
    write_dir_plugin(
        hermes_env.user_plugins_dir,
        "provider",
        "from hermes_core.plugin import hookimpl\n"
        "@hookimpl\ndef hermes_model_providers(config, env):\n    return []\n",
    )

    plugins = load_plugins(enabling("provider"), lenient(hermes_env))

    record = plugins.get("provider")
    assert record is not None
    assert record.error == (
        "invalid hook: hermes_model_providers(config, env) takes 'config', 'env', which the "
        "hook does not pass (it passes no argument: take none)"
    )


def test_requires_plugins_imports_dependencies_first(
    hermes_env: Environment, tmp_path: Path
) -> None:
    log = tmp_path / "order.txt"

    def logging_code(name: str) -> str:
        return f"with open({str(log)!r}, 'a') as f:\n    f.write({name!r} + '\\n')\n"

    root = hermes_env.user_plugins_dir
    write_dir_plugin(root, "alpha", logging_code("alpha"), manifest={"requires_plugins": ["zeta"]})
    write_dir_plugin(root, "beta", logging_code("beta"))
    write_dir_plugin(root, "zeta", logging_code("zeta"), manifest={"requires_plugins": ["Beta"]})
    write_dir_plugin(root, "gamma", logging_code("gamma"))

    load_plugins(enabling("alpha", "beta", "gamma", "zeta"), hermes_env)

    assert log.read_text(encoding="utf-8").split() == ["beta", "gamma", "zeta", "alpha"]


def test_requiring_a_plugin_that_is_not_enabled_is_an_error(hermes_env: Environment) -> None:
    root = hermes_env.user_plugins_dir
    write_dir_plugin(root, "app", GOOD, manifest={"requires_plugins": ["lib"]})
    write_dir_plugin(root, "lib", GOOD)

    plugins = load_plugins(enabling("app"), lenient(hermes_env))

    record = plugins.get("app")
    assert record is not None
    assert record.error == "requires plugin 'lib', which is not enabled"


def test_requires_plugins_cycle_is_an_error(hermes_env: Environment) -> None:
    root = hermes_env.user_plugins_dir
    write_dir_plugin(root, "egg", GOOD, manifest={"requires_plugins": ["hen"]})
    write_dir_plugin(root, "hen", GOOD, manifest={"requires_plugins": ["egg"]})
    write_dir_plugin(root, "rooster", GOOD)

    plugins = load_plugins(enabling("egg", "hen", "rooster"), lenient(hermes_env))

    assert {r.name: r.status for r in plugins.records} == {
        "egg": "error",
        "hen": "error",
        "rooster": "enabled",
    }


def test_dependent_of_a_failed_plugin_fails_too(hermes_env: Environment) -> None:
    root = hermes_env.user_plugins_dir
    write_dir_plugin(root, "base", "raise ImportError('no such thing')\n")
    write_dir_plugin(root, "top", GOOD, manifest={"requires_plugins": ["base"]})

    plugins = load_plugins(enabling("base", "top"), lenient(hermes_env))

    top = plugins.get("top")
    assert top is not None
    assert top.status == "error"
    assert "requires plugin 'base', which failed" in (top.error or "")


def test_higher_source_hook_runs_first(hermes_env: Environment, hermes_distribution) -> None:
    def backend(name: str) -> str:
        return (
            "from hermes_core._hookspecs import hookimpl\n"
            "from hermes_core._specs import SearchBackendSpec\n"
            "@hookimpl\ndef hermes_search_backends():\n"
            f"    return [SearchBackendSpec({name!r}, factory=lambda ctx: None)]\n"
        )

    write_dir_plugin(
        hermes_env.bundled_plugins_dir, "a-core", backend("core"), manifest={"kind": "backend"}
    )
    write_dir_plugin(hermes_env.user_plugins_dir, "b-user", backend("user"))
    hermes_distribution(
        "hermes-c-pip", entry_points={"c-pip": "c_pip"}, files={"c_pip.py": backend("pip")}
    )

    plugins = load_plugins(enabling("b-user", "c-pip"), hermes_env)

    results = plugins.pm.hook.hermes_search_backends()
    assert [specs[0].name for specs in results] == ["pip", "user", "core"]


def test_entry_point_attribute_is_registered(hermes_env: Environment, hermes_distribution) -> None:
    hermes_distribution(
        "hermes-objplugin",
        entry_points={"objplugin": "obj_mod:PLUGIN"},
        files={
            "obj_mod.py": "from hermes_core._hookspecs import hookimpl\n"
            "class Plugin:\n"
            "    @hookimpl\n"
            "    def hermes_session_end(self, session):\n"
            "        pass\n"
            "PLUGIN = Plugin()\n"
        },
    )

    plugins = load_plugins(enabling("objplugin"), hermes_env)

    record = plugins.get("objplugin")
    assert record is not None
    assert type(record.plugin).__name__ == "Plugin"
    assert record.hooks == ["hermes_session_end"]


CLASS_PLUGIN = """
from hermes_core._hookspecs import hookimpl
from hermes_core._tools import Tool


class WeatherPlugin:
    def __init__(self, unit="celsius"):
        self.unit = unit

    @hookimpl
    def hermes_tools(self, config, env):
        return [Tool(name="forecast_unit", description="The unit.", handler=lambda: self.unit)]
"""


def test_entry_point_naming_a_class_registers_an_instance_whose_hooks_run(
    hermes_env: Environment, hermes_distribution
) -> None:
    hermes_distribution(
        "hermes-weather",
        entry_points={"weather": "weather_plugin:WeatherPlugin"},
        files={"weather_plugin.py": CLASS_PLUGIN},
    )

    async def unit() -> object:
        async with Host(enabling("weather"), hermes_env) as host:
            return host.registry.get("forecast_unit").handler()

    assert anyio.run(unit) == "celsius"  # hermes_tools ran, bound to the instance


def test_entry_point_naming_a_class_that_needs_arguments_is_an_error_saying_so(
    hermes_env: Environment, hermes_distribution
) -> None:
    hermes_distribution(
        "hermes-weather",
        entry_points={"weather": "weather_plugin:WeatherPlugin"},
        files={"weather_plugin.py": CLASS_PLUGIN.replace('unit="celsius"', "unit")},
    )

    plugins = load_plugins(enabling("weather"), lenient(hermes_env))

    record = plugins.get("weather")
    assert record is not None
    assert record.status == "error"
    assert "'weather_plugin:WeatherPlugin' names a class" in (record.message or "")
    assert "unit" in (record.message or "")
    # No line of the plugin raised: the place is none, never hermes-core's own code.
    assert "(at " not in (record.message or ""), record.message


@pytest.mark.subprocess
def test_every_bundled_hook_implementation_is_trylast_so_other_plugins_run_first(
    hermes_env: Environment,
) -> None:
    env = Environment(home=hermes_env.home, cwd=hermes_env.cwd, variables={})  # real bundled

    plugins = load_plugins(Config(), env)

    bundled = {r.name for r in plugins.records if r.source == "bundled" and r.plugin is not None}
    assert {"approvals", "bm25", "files", "terminal"} <= bundled
    impls = [
        impl
        for caller in plugins.pm.hook.__dict__.values()
        if hasattr(caller, "get_hookimpls")
        for impl in caller.get_hookimpls()
        if impl.plugin_name in bundled
    ]
    assert impls
    assert all(impl.trylast for impl in impls), [
        impl.plugin_name for impl in impls if not impl.trylast
    ]


def test_nix_site_dir_joins_sys_path_only_when_one_of_its_plugins_is_enabled(
    hermes_env: Environment, hermes_nix_store
) -> None:
    store: FakeNixStore = hermes_nix_store()
    store.add_distribution(
        "hermes-nixy", entry_points={"nixy": "nixy_mod"}, files={"nixy_mod.py": GOOD}
    )
    env = with_vars(hermes_env, HERMES_NIX_PLUGINS=str(store.path))

    idle = load_plugins(Config(), env)
    assert idle.get("nixy") is not None
    assert str(store.site_dir) not in sys.path

    active = load_plugins(enabling("nixy"), env)
    assert active.pm.has_plugin("nixy")
    assert str(store.site_dir) in sys.path
    assert sys.modules["nixy_mod"].__file__ == str(store.site_dir / "nixy_mod.py")


@pytest.mark.anyio
async def test_hosts_are_independent_and_unregister_on_exit(hermes_env: Environment) -> None:
    write_dir_plugin(hermes_env.user_plugins_dir, "demo", GOOD)

    async with Host(enabling("demo"), hermes_env) as first, Host(Config(), hermes_env) as second:
        assert first.pm.has_plugin("demo")
        assert not second.pm.has_plugin("demo")
        pm = first.pm
    assert not pm.has_plugin("demo")


@pytest.mark.anyio
async def test_host_from_environment_reads_the_user_config(hermes_env: Environment) -> None:
    write_dir_plugin(hermes_env.user_plugins_dir, "demo", GOOD)
    hermes_env.config_path.write_text("plugins:\n  enabled: [demo]\n", encoding="utf-8")

    async with Host.from_environment(hermes_env) as host:
        assert host.pm.has_plugin("demo")
        assert host.config_path == hermes_env.config_path


def recording(log: Path, copy: str) -> str:
    return GOOD + f"with open({str(log)!r}, 'a') as f:\n    f.write({copy!r} + '\\n')\n"


def test_winning_nix_plugin_runs_its_own_copy_of_a_module_pip_also_installs(
    hermes_env: Environment, hermes_distribution, hermes_nix_store, tmp_path: Path
) -> None:
    log = tmp_path / "copies-run.txt"
    hermes_distribution(
        "hermes-twin",
        entry_points={"twin": "twin_mod"},
        files={"twin_mod.py": recording(log, "pip")},
    )
    store: FakeNixStore = hermes_nix_store()
    store.add_distribution(
        "hermes-twin",
        "2.0",
        entry_points={"twin": "twin_mod"},
        files={"twin_mod.py": recording(log, "nix")},
    )
    env = with_vars(hermes_env, HERMES_NIX_PLUGINS=str(store.path))

    plugins = load_plugins(enabling("twin"), env)

    record = plugins.get("twin")
    assert record is not None
    assert (record.source, record.status) == ("nix", "enabled")
    assert log.read_text(encoding="utf-8").split() == ["nix"]
    assert record.plugin is sys.modules["twin_mod"]
    assert sys.modules["twin_mod"].__file__ == str(store.site_dir / "twin_mod.py")


def test_nix_plugin_whose_module_is_already_imported_from_pip_fails_naming_both(
    hermes_env: Environment, hermes_distribution, hermes_nix_store
) -> None:
    pip = hermes_distribution(
        "hermes-twin", entry_points={"twin": "twin_mod"}, files={"twin_mod.py": GOOD}
    )
    store: FakeNixStore = hermes_nix_store()
    store.add_distribution(
        "hermes-twin", "2.0", entry_points={"twin": "twin_mod"}, files={"twin_mod.py": GOOD}
    )
    env = lenient(with_vars(hermes_env, HERMES_NIX_PLUGINS=str(store.path)))
    importlib.import_module("twin_mod")  # the program already uses the pip copy

    plugins = load_plugins(enabling("twin"), env)

    record = plugins.get("twin")
    assert record is not None
    assert (record.source, record.status) == ("nix", "error")
    assert str(pip.site_dir / "twin_mod.py") in (record.error or "")
    assert str(store.site_dir / "twin_mod.py") in (record.error or "")
    assert not plugins.pm.has_plugin("twin")


def test_pip_plugin_sharing_a_module_with_a_loaded_nix_plugin_fails_naming_both(
    hermes_env: Environment, hermes_distribution, hermes_nix_store
) -> None:
    pip = hermes_distribution(
        "hermes-beta", entry_points={"beta": "shared_mod"}, files={"shared_mod.py": GOOD}
    )
    store: FakeNixStore = hermes_nix_store()
    store.add_distribution(
        "hermes-alpha", entry_points={"alpha": "shared_mod"}, files={"shared_mod.py": GOOD}
    )
    env = lenient(with_vars(hermes_env, HERMES_NIX_PLUGINS=str(store.path)))

    plugins = load_plugins(enabling("alpha", "beta"), env)

    alpha, beta = plugins.get("alpha"), plugins.get("beta")
    assert alpha is not None
    assert beta is not None
    assert alpha.status == "enabled"
    assert sys.modules["shared_mod"].__file__ == str(store.site_dir / "shared_mod.py")
    assert beta.status == "error"
    assert str(pip.site_dir / "shared_mod.py") in (beta.error or "")
    assert str(store.site_dir / "shared_mod.py") in (beta.error or "")


def test_function_named_like_a_hook_without_hookimpl_is_ignored(hermes_env: Environment) -> None:
    write_dir_plugin(
        hermes_env.user_plugins_dir,
        "helpers",
        "def hermes_sesion_start(session):\n    pass\n"
        "def hermes_session_start(session):\n    raise AssertionError('not a hook')\n",
    )

    plugins = load_plugins(enabling("helpers"), hermes_env)

    record = plugins.get("helpers")
    assert record is not None
    assert (record.status, record.hooks) == ("enabled", [])
    plugins.pm.hook.hermes_session_start(session=None)


_SHAPES = """
import functools
from hermes_core._hookspecs import hookimpl

@hookimpl
def hermes_tools(config, env):
    return []

def hermes_cli_commands():  # the hook's name without the marker: not an implementation
    return []

@hookimpl(specname="hermes_search_backends")
def backends_under_another_name():
    return []

def _marked(function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        return function(*args, **kwargs)
    return wrapper

@_marked
@hookimpl
def hermes_approval_policies():
    return []

class _Holder:
    @hookimpl
    def hermes_connector_gateways(self):
        return []

hermes_connector_gateways = _Holder().hermes_connector_gateways
hermes_session_start = staticmethod(hookimpl(lambda session: None))
hermes_tool_activity = property(lambda self: None)
CONSTANT = 3
"""


def _implementations(pm: pluggy.PluginManager) -> set[tuple[str, str, str]]:
    return {
        (name, impl.plugin_name, impl.function.__name__)
        for name, caller in vars(pm.hook).items()
        if isinstance(caller, pluggy.HookCaller)
        for impl in caller.get_hookimpls()
    }


def test_the_plugin_manager_finds_the_hooks_pluggy_finds(tmp_path: Path) -> None:
    """The host's manager reads module plugins faster than pluggy's (docs/performance.md) and
    must find the same implementations in every bundled plugin and in odd shapes of module."""
    (tmp_path / "shapes_plugin.py").write_text(_SHAPES, encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        modules = [importlib.import_module("shapes_plugin")]
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("shapes_plugin", None)
    for folder in sorted((Path(__file__).resolve().parents[1] / "plugins_builtin").iterdir()):
        if (folder / "__init__.py").is_file():
            modules.append(importlib.import_module(f"plugins_builtin.{folder.name}"))
    ours, theirs = new_plugin_manager(), pluggy.PluginManager(PROJECT_NAME)
    theirs.add_hookspecs(hookspecs_module)
    for pm in (ours, theirs):
        for module in modules:
            pm.register(module)
    found = _implementations(ours)
    assert found == _implementations(theirs)
    shapes = {
        (hook, function) for hook, plugin, function in found if plugin.endswith("shapes_plugin")
    }
    assert shapes >= {
        ("hermes_tools", "hermes_tools"),
        ("hermes_search_backends", "backends_under_another_name"),
        ("hermes_approval_policies", "hermes_approval_policies"),
        ("hermes_connector_gateways", "hermes_connector_gateways"),
    }
    assert len(modules) > 10
