"""A broken plugin fails loudly and in one place, seen through the real ``hermes`` command: its
error is listed by ``hermes plugins list``, a broken search backend makes ``tool_search`` an
error naming the plugin, and every other tool keeps working."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hermes_core.testing import HermesCli, write_distribution
from hermes_core.testing._cli_in_process import InProcessCli

pytestmark = pytest.mark.subprocess


@pytest.fixture
def hermes_cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    """``hermes`` run in this process (:class:`InProcessCli`); ``subprocess_run`` runs the
    real command."""
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


RAISING_FACTORY = """
from hermes_core.plugin import SearchBackendSpec, hookimpl


def make(context):
    raise RuntimeError("index server down")


@hookimpl
def hermes_search_backends():
    return [SearchBackendSpec("broken", factory=make)]
"""

MISSING_METHODS = """
from hermes_core.plugin import SearchBackendSpec, hookimpl


class HalfBackend:
    def build(self, documents):
        pass


@hookimpl
def hermes_search_backends():
    return [SearchBackendSpec("half", factory=lambda context: HalfBackend())]
"""

RAISING_POLICY = """
from hermes_core.plugin import ApprovalPolicySpec, hookimpl


def make(context):
    raise OSError("rules file missing")


@hookimpl
def hermes_approval_policies():
    return [ApprovalPolicySpec("careful", factory=make)]
"""

ASYNC_REGISTRATION = """
from hermes_core.plugin import SearchBackendSpec, hookimpl


@hookimpl
async def hermes_search_backends():
    return [SearchBackendSpec("eager", factory=lambda context: None)]
"""

NOT_A_LIST = """
from hermes_core.plugin import hookimpl


@hookimpl
def hermes_search_backends():
    return "bm25"
"""

BAD_SPEC_NAME = """
from hermes_core.plugin import SearchBackendSpec, hookimpl


@hookimpl
def hermes_search_backends():
    return [SearchBackendSpec("Fast Search", factory=lambda context: None)]
"""


@pytest.fixture
def installed(hermes_cli: HermesCli, hermes_dir_plugin: Callable[..., Path]) -> Callable[..., None]:
    """``install(name, source, config_yaml)``: a user plugin, enabled, with more config."""

    def install(name: str, source: str, more_config: str = "") -> None:
        hermes_dir_plugin(hermes_cli.home / "plugins", name, source)
        hermes_cli.config.write_text(
            f"plugins:\n  enabled: [{name}]\n{more_config}", encoding="utf-8"
        )

    return install


def lenient(cli: HermesCli) -> dict[str, str]:
    """The command's environment without strict plugin loading (what a user has)."""
    return cli.variables(HERMES_STRICT_PLUGINS="0")


def listed(cli: HermesCli, name: str) -> dict[str, Any]:
    done = cli.run("plugins", "list", "--json", env=lenient(cli), ok=False)
    rows = json.loads(done.stdout)
    # docs/cli.md's rule for list commands: every row shown, then exit 1 when one is broken.
    assert done.returncode == int(any(row["status"] == "error" for row in rows)), done.stderr
    return next(row for row in rows if row["name"] == name)


BROKEN_BACKEND = "tools:\n  tool_search:\n    backend: broken\n"


def test_a_search_backend_whose_factory_raises_leaves_read_file_working(
    hermes_cli: HermesCli, installed: Callable[..., None]
) -> None:
    installed("broken-search", RAISING_FACTORY, BROKEN_BACKEND)
    (hermes_cli.work / "notes.txt").write_text("hello\n", encoding="utf-8")

    done = hermes_cli.run(
        "tools", "call", "read_file", '{"path": "notes.txt"}', env=lenient(hermes_cli)
    )

    assert done.stdout.startswith("hello")
    assert "Traceback" not in done.stderr


def test_a_search_backend_whose_factory_raises_makes_tools_search_an_error_naming_the_plugin(
    hermes_cli: HermesCli, installed: Callable[..., None]
) -> None:
    installed("broken-search", RAISING_FACTORY, BROKEN_BACKEND)

    done = hermes_cli.run("tools", "search", "time", "--json", ok=False, env=lenient(hermes_cli))

    assert done.returncode == 1
    answer = json.loads(done.stdout)
    assert "plugin 'broken-search'" in answer["error"]
    assert "search backend 'broken' (from hermes_search_backends)" in answer["error"]
    assert "RuntimeError: index server down" in answer["error"]
    assert "Traceback" not in done.stderr


def test_eval_search_over_a_search_backend_whose_factory_raises_is_an_error_not_zeros(
    hermes_cli: HermesCli, installed: Callable[..., None], tmp_path: Path
) -> None:
    installed("broken-search", RAISING_FACTORY, BROKEN_BACKEND)
    catalog = tmp_path / "catalog.json"
    catalog.write_text(json.dumps([{"name": "get_time", "description": "Time."}]), "utf-8")
    queries = tmp_path / "queries.jsonl"
    queries.write_text(json.dumps({"query": "time", "relevant": ["get_time"]}) + "\n", "utf-8")

    done = hermes_cli.run(
        "eval", "search", "--catalog", str(catalog), "--queries", str(queries),
        ok=False, env=lenient(hermes_cli),
    )  # fmt: skip

    assert done.returncode == 2
    assert done.stdout == ""  # no figures: every query would have scored 0
    assert (
        "hermes: error: plugin 'broken-search': search backend 'broken' (from "
        "hermes_search_backends) could not be built: its factory raised RuntimeError: index "
        "server down"
    ) in done.stderr
    assert "Traceback" not in done.stderr


def test_a_search_backend_whose_factory_raises_leaves_tool_describe_working(
    hermes_cli: HermesCli, installed: Callable[..., None]
) -> None:
    installed("broken-search", RAISING_FACTORY, BROKEN_BACKEND)

    done = hermes_cli.run("tools", "describe", "read_file", "--json", env=lenient(hermes_cli))

    assert "read_file" in json.loads(done.stdout)["tools"]


def test_a_search_backend_whose_factory_raises_is_listed_as_its_plugin_error(
    hermes_cli: HermesCli, installed: Callable[..., None]
) -> None:
    installed("broken-search", RAISING_FACTORY, BROKEN_BACKEND)

    row = listed(hermes_cli, "broken-search")
    shown = hermes_cli.run("plugins", "list", env=lenient(hermes_cli), ok=False)
    table = shown.stdout

    assert shown.returncode == 1, shown.stderr

    assert row["status"] == "error"
    assert (
        "search backend 'broken' (from hermes_search_backends) could not be built" in (row["error"])
    )
    assert "RuntimeError: index server down" in row["error"]
    line = next(line for line in table.splitlines() if line.startswith("broken-search"))
    assert " error " in line
    assert "index server down" in line


def test_a_search_backend_whose_factory_raises_stops_a_strict_command_naming_the_plugin(
    hermes_cli: HermesCli, installed: Callable[..., None]
) -> None:
    installed("broken-search", RAISING_FACTORY, BROKEN_BACKEND)

    done = hermes_cli.run("tools", "call", "read_file", '{"path": "x"}', ok=False)

    assert done.returncode == 2
    assert "hermes: error: plugin 'broken-search': search backend 'broken'" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_search_backend_missing_methods_is_an_error_naming_the_plugin_and_the_methods(
    hermes_cli: HermesCli, installed: Callable[..., None]
) -> None:
    installed("half-search", MISSING_METHODS, "tools:\n  tool_search:\n    backend: half\n")

    done = hermes_cli.run("tools", "search", "time", "--json", ok=False, env=lenient(hermes_cli))
    row = listed(hermes_cli, "half-search")

    error = json.loads(done.stdout)["error"]
    assert "plugin 'half-search'" in error
    assert "returned HalfBackend, which has no add, remove, search, unmatched_words, __len__" in (
        error
    )
    assert "expected a SearchBackend (build, add, remove, search, unmatched_words, __len__)" in (
        error
    )
    assert row["status"] == "error"
    assert "which has no add, remove" in row["error"]


def test_an_approval_policy_whose_factory_raises_stops_tool_calls_naming_the_plugin(
    hermes_cli: HermesCli, installed: Callable[..., None]
) -> None:
    installed("careful-policy", RAISING_POLICY, "approvals:\n  policy: careful\n")

    done = hermes_cli.run(
        "tools", "call", "read_file", '{"path": "x"}', ok=False, env=lenient(hermes_cli)
    )
    row = listed(hermes_cli, "careful-policy")

    assert done.returncode == 2
    assert "plugin 'careful-policy': approval policy 'careful'" in done.stderr
    assert "OSError: rules file missing" in done.stderr
    assert row["status"] == "error"
    assert "approval policy 'careful' (from hermes_approval_policies)" in row["error"]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        pytest.param(
            ASYNC_REGISTRATION,
            "hermes_search_backends: registration hooks must be plain functions, not coroutines",
            id="async-def-hook",
        ),
        pytest.param(
            NOT_A_LIST,
            "hermes_search_backends must return a list of SearchBackendSpec, got str",
            id="not-a-list-of-specs",
        ),
        pytest.param(
            BAD_SPEC_NAME,
            "hermes_search_backends raised ValueError: search backend name 'Fast Search' is not "
            "valid",
            id="bad-spec-name",
        ),
    ],
)
def test_a_broken_registration_hook_is_listed_as_its_plugin_error(
    hermes_cli: HermesCli, installed: Callable[..., None], source: str, expected: str
) -> None:
    installed("sloppy", source)

    row = listed(hermes_cli, "sloppy")

    assert row["status"] == "error"
    assert expected in row["error"]


def test_a_backend_name_registered_by_two_plugins_is_listed_as_both_plugins_error(
    hermes_cli: HermesCli, hermes_dir_plugin: Callable[..., Path]
) -> None:
    for name in ("first-search", "second-search"):
        hermes_dir_plugin(hermes_cli.home / "plugins", name, RAISING_FACTORY)
    hermes_cli.config.write_text(
        "plugins:\n  enabled: [first-search, second-search]\n", encoding="utf-8"
    )

    first, second = listed(hermes_cli, "first-search"), listed(hermes_cli, "second-search")

    for row in (first, second):
        assert row["status"] == "error"
        assert "'broken' is registered by two plugins" in row["error"]
        assert "'first-search'" in row["error"]
        assert "'second-search'" in row["error"]


SHARED_PROVIDERS = """
from hermes_core.plugin import MemoryProviderSpec, ModelProviderSpec, hookimpl


@hookimpl
def hermes_model_providers():
    return [ModelProviderSpec("shared", factory=lambda context: None)]


@hookimpl
def hermes_memory_providers():
    return [MemoryProviderSpec("shared", factory=lambda context: None)]
"""


def test_a_selected_name_two_plugins_register_is_reported_as_theirs_not_as_unknown(
    hermes_cli: InProcessCli, hermes_dir_plugin: Callable[..., Path], tmp_path: Path
) -> None:
    # The same provider names from a user plugin and a pip plugin: neither wins (both are
    # errors), and the selection says so, naming both, instead of "unknown ... Did you mean".
    hermes_dir_plugin(hermes_cli.home / "plugins", "mine", SHARED_PROVIDERS)
    site = tmp_path / "site"
    write_distribution(
        site,
        "theirs",
        entry_points={"theirs": "theirs_plugin"},
        files={"theirs_plugin/__init__.py": SHARED_PROVIDERS},
    )
    hermes_cli.config.write_text(
        "plugins:\n  enabled: [mine, theirs]\n"
        "model:\n  provider: shared\n  model: m\nmemory:\n  provider: shared\n",
        encoding="utf-8",
    )
    # As a user runs hermes: not strict, so the clash is recorded and the selection explains it.
    env = hermes_cli.variables(PYTHONPATH=str(site), HERMES_STRICT_PLUGINS="0")

    validated = hermes_cli.subprocess_run("config", "validate", ok=False, env=env)
    ran = hermes_cli.subprocess_run("run", "hello", ok=False, env=env)

    assert validated.returncode == 2
    where = {"model.provider": 4, "memory.provider": 7}
    for kind, key in (("model provider", "model.provider"), ("memory provider", "memory.provider")):
        assert (
            f"hermes: error: {hermes_cli.config}:{where[key]}: {kind} 'shared' (set by {key}) "
            "is registered by two plugins, "
            "'mine' and 'theirs', so neither's is used: disable one of them "
            "(hermes plugins disable NAME)"
        ) in validated.stderr
    assert ran.returncode == 2
    assert (
        f"hermes: error: {hermes_cli.config}:4: model provider 'shared' (set by model.provider) "
        "is registered by two plugins, 'mine' and 'theirs', so neither's is used"
    ) in ran.stderr
    assert "unknown" not in validated.stderr + ran.stderr
    assert "Did you mean" not in validated.stderr + ran.stderr


def half_uninstalled(cli: HermesCli) -> tuple[Path, dict[str, str]]:
    """A distribution whose ``entry_points.txt`` does not parse, in a directory of its own; its
    metadata folder and the environment that puts it on the import path."""
    site = cli.root / "site-packages"
    broken = write_distribution(site, "half-uninstalled").dist_info
    (broken / "entry_points.txt").write_text("[console_scripts]\nthis line is garbage\n")
    return broken, cli.variables(PYTHONPATH=str(site))


def test_a_malformed_entry_points_file_of_an_unrelated_distribution_does_not_stop_the_listing(
    hermes_cli: InProcessCli,
) -> None:
    _, env = half_uninstalled(hermes_cli)

    # A new process: this one may have read every distribution's entry points already.
    listed = hermes_cli.subprocess_run("plugins", "list", "--json", env=env)
    rows = json.loads(listed.stdout)

    # Discovery skips what it cannot parse, and the configuration is read without pydantic.
    assert {"bm25", "files"} <= {row["name"] for row in rows}


def test_a_malformed_entry_points_file_that_stops_the_mcp_sdk_is_an_error_naming_it(
    hermes_cli: InProcessCli,
) -> None:
    broken, env = half_uninstalled(hermes_cli)
    server = {"command": sys.executable, "args": ["-m", "mcp_server_time"]}
    hermes_cli.config.write_text(json.dumps({"mcp_servers": {"time": server}}), encoding="utf-8")

    # A new process: pydantic reads the entry points once a process (this one may have).
    done = hermes_cli.subprocess_run("mcp", "list", ok=False, env=env)

    # pydantic reads every distribution's entry points when it builds the MCP SDK's first model,
    # in the server's task, and stops on this one: the user is told which file, not given a
    # traceback of the task group.
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert f"the installed distribution {broken} has a malformed entry_points.txt" in done.stderr
    assert "line 2 is not name = value: 'this line is garbage'" in done.stderr
    assert "reinstall or uninstall it" in done.stderr


VAULT_MEMORY = """
from hermes_core.plugin import MemoryProviderSpec, hookimpl


@hookimpl
def hermes_memory_providers():
    return [MemoryProviderSpec("vault", factory=lambda context: None)]
"""


@pytest.mark.parametrize("source", ["user", "pip"])
def test_an_unknown_name_points_at_the_installed_plugin_that_is_not_enabled(
    hermes_cli: InProcessCli, hermes_dir_plugin: Callable[..., Path], tmp_path: Path, source: str
) -> None:
    # The first mistake with a new provider plugin: installed, selected by its provider's name,
    # never enabled. The name is not the plugin's, so only the plugins that did not load can
    # be pointed at (none of their code ran).
    site = tmp_path / "site"
    if source == "user":
        hermes_dir_plugin(hermes_cli.home / "plugins", "vault-memory", VAULT_MEMORY)
    else:
        write_distribution(
            site,
            "hermes-vault",
            entry_points={"vault-memory": "hermes_vault"},
            files={"hermes_vault/__init__.py": VAULT_MEMORY},
        )
    hermes_cli.config.write_text("memory:\n  provider: vault\n", encoding="utf-8")
    env = hermes_cli.variables(PYTHONPATH=str(site))

    done = hermes_cli.subprocess_run("config", "validate", ok=False, env=env)

    assert done.returncode == 2
    assert (
        f"hermes: error: {hermes_cli.config}:2: unknown memory provider 'vault' (set by "
        "memory.provider); valid names: "
        "file. Plugins that did not load may register it: plugin 'vault-memory' "
        f"({source}, "
    ) in done.stderr
    assert "is not enabled: enable it with: hermes plugins enable vault-memory" in done.stderr


def test_the_unloaded_plugins_pointed_at_are_those_whose_manifest_may_provide_the_hook(
    hermes_cli: InProcessCli, hermes_dir_plugin: Callable[..., Path]
) -> None:
    # A plugin whose manifest lists its hooks, without the one that registers the kind, cannot
    # register it: pointing at it ("may register it") sent the user to enable the wrong plugin.
    plugins = hermes_cli.home / "plugins"
    hermes_dir_plugin(
        plugins,
        "vault-memory",
        VAULT_MEMORY,
        manifest={"provides_hooks": ["hermes_memory_providers"]},
    )
    hermes_dir_plugin(plugins, "shouty", "", manifest={"provides_hooks": ["hermes_tools"]})
    hermes_dir_plugin(plugins, "unsaid", "")  # no provides_hooks: it may
    hermes_cli.config.write_text("memory:\n  provider: vault\n", encoding="utf-8")

    done = hermes_cli.run("config", "validate", ok=False)

    assert done.returncode == 2
    assert "plugin 'vault-memory' (user, " in done.stderr
    assert "plugin 'unsaid' (user, " in done.stderr
    assert "shouty" not in done.stderr


def _tools_of(name: str, *tools: str) -> str:
    made = ", ".join(
        f"Tool(name={tool!r}, description='From {name}.', parameters=SCHEMA, handler=_run)"
        for tool in tools
    )
    return f"""
from hermes_core.plugin import Tool, hookimpl

SCHEMA = {{"type": "object", "properties": {{}}}}


def _run() -> str:
    return {name!r}


@hookimpl
def hermes_tools():
    return [{made}]
"""


@pytest.mark.parametrize("names", [("alpha", "beta"), ("zeta", "beta")], ids=["a-b", "z-b"])
def test_a_tool_name_two_user_plugins_register_is_neithers_and_their_other_tools_load(
    hermes_cli: HermesCli, hermes_dir_plugin: Callable[..., Path], names: tuple[str, str]
) -> None:
    """Whatever the folders are called: ``deploy`` is left out of both, each plugin is an
    ``error`` naming both, and each one's other tools still load."""
    first, second = names
    plugins = hermes_cli.home / "plugins"
    hermes_dir_plugin(plugins, first, _tools_of(first, "deploy", f"{first}_only"))
    hermes_dir_plugin(plugins, second, _tools_of(second, "deploy", f"{second}_only"))
    hermes_cli.config.write_text(f"plugins:\n  enabled: [{first}, {second}]\n", encoding="utf-8")

    tools = {
        row["name"] for row in hermes_cli.json("tools", "list", "--json", env=lenient(hermes_cli))
    }
    assert {f"{first}_only", f"{second}_only"} <= tools
    assert "deploy" not in tools
    low, high = sorted(names)
    both = f"'{low}' and '{high}'"
    for name in names:
        row = listed(hermes_cli, name)
        assert row["status"] == "error"
        assert (
            f"tool 'deploy' is registered by two plugins, {both}, so neither's is used"
            in row["error"]
        )
    called = hermes_cli.run(
        "tools", "call", f"{second}_only", "{}", "--yes", env=lenient(hermes_cli)
    )
    assert called.stdout.strip() == second

    strict = hermes_cli.run("tools", "list", ok=False)
    assert strict.returncode != 0
    assert f"tool 'deploy' is registered by two plugins, {both}" in strict.stderr


def _registering(plugin: str, hook: str, spec: str) -> str:
    """A plugin registering ``x`` of one kind (``hook``/``spec``) and its own tool."""
    return f"""
from hermes_core.plugin import {spec}, Tool, hookimpl


def _run() -> str:
    return {plugin!r}


@hookimpl
def {hook}():
    return [{spec}("x", factory=lambda context: None)]


@hookimpl
def hermes_tools():
    schema = {{"type": "object", "properties": {{}}}}
    return [Tool(name="{plugin}_only", description="Mine.", parameters=schema, handler=_run)]
"""


@pytest.mark.parametrize(
    ("kind", "hook", "spec", "selecting"),
    [
        (
            "search backend",
            "hermes_search_backends",
            "SearchBackendSpec",
            "tools:\n  tool_search:\n    backend: x\n",
        ),
        (
            "connector gateway",
            "hermes_connector_gateways",
            "ConnectorGatewaySpec",
            "tools:\n  connectors:\n    url: http://127.0.0.1:9/\n    gateway: x\n",
        ),
        (
            "model provider",
            "hermes_model_providers",
            "ModelProviderSpec",
            "model:\n  provider: x\n  model: m\n",
        ),
        (
            "approval policy",
            "hermes_approval_policies",
            "ApprovalPolicySpec",
            "approvals:\n  policy: x\n",
        ),
        (
            "web search provider",
            "hermes_web_search_providers",
            "WebSearchProviderSpec",
            "  entries:\n    web:\n      search_provider: x\n",
        ),
        (
            "image provider",
            "hermes_image_providers",
            "ImageProviderSpec",
            "  entries:\n    media:\n      image_provider: x\n",
        ),
        (
            "memory provider",
            "hermes_memory_providers",
            "MemoryProviderSpec",
            "memory:\n  provider: x\n",
        ),
    ],
)
def test_a_name_two_plugins_register_is_neithers_and_their_tools_and_hooks_load(
    hermes_cli: InProcessCli,
    hermes_dir_plugin: Callable[..., Path],
    kind: str,
    hook: str,
    spec: str,
    selecting: str,
) -> None:
    """As for a tool name: only the name's registrations are dropped. It was the whole of
    both plugins (unloaded: their tools gone, 'alpha_only' was no tool)."""
    plugins = hermes_cli.home / "plugins"
    for plugin in ("alpha", "beta"):
        hermes_dir_plugin(plugins, plugin, _registering(plugin, hook, spec))
    enabling = "plugins:\n  enabled: [alpha, beta]\n"
    hermes_cli.config.write_text(enabling, encoding="utf-8")
    env = lenient(hermes_cli)
    both = "is registered by two plugins, 'alpha' and 'beta', so neither's is used"

    called = hermes_cli.run("tools", "call", "alpha_only", "{}", "--yes", ok=False, env=env)
    assert called.stdout.strip() == "alpha", called.stderr
    tools = {row["name"] for row in hermes_cli.json("tools", "list", "--json", env=env)}
    assert {"alpha_only", "beta_only"} <= tools
    for plugin in ("alpha", "beta"):
        row = listed(hermes_cli, plugin)
        assert (row["status"], f"{kind} 'x' {both}" in row["error"]) == ("error", True), row

    # A plugins.entries setting goes under plugins:, any other section beside it.
    hermes_cli.config.write_text(enabling + selecting, encoding="utf-8")
    validated = hermes_cli.run("config", "validate", ok=False, env=env)
    assert validated.returncode == 2
    assert f"hermes: error: {hermes_cli.config}:" in validated.stderr, validated.stderr
    assert f": {kind} 'x' (set by " in validated.stderr, validated.stderr
    assert both in validated.stderr  # the selection names both


def test_an_entry_point_naming_no_installed_module_names_the_entry_point_not_importlib(
    hermes_cli: InProcessCli, tmp_path: Path
) -> None:
    # It said "(at <frozen importlib._bootstrap>, line 1140)": a place no one can open.
    site = tmp_path / "site"
    write_distribution(
        site,
        "hermes-weather",
        "2.1.0",
        entry_points={"weather": "hermes_nosuch"},
        files={"hermes_weather/__init__.py": ""},
    )
    hermes_cli.config.write_text("plugins:\n  enabled: [weather]\n", encoding="utf-8")
    env = hermes_cli.variables(PYTHONPATH=str(site), HERMES_STRICT_PLUGINS="0")

    rows = hermes_cli.json("plugins", "list", "--json", env=env, exit_code=1)

    (row,) = [row for row in rows if row["name"] == "weather"]
    assert "<frozen" not in row["error"]
    assert row["error"].startswith(
        "import failed: ModuleNotFoundError: No module named 'hermes_nosuch' (the entry point "
        "weather = hermes_nosuch of hermes-weather 2.1.0"
    )


def test_a_missing_command_never_names_plugins_that_loaded_as_not_loaded(
    hermes_cli: HermesCli, hermes_dir_plugin: Callable[..., Path]
) -> None:
    # Two plugins whose tool names clash stay loaded (their other tools and hooks work, and
    # their commands were asked for): "No such command" listed them as "Plugins that did not
    # load may add it", the whole clash message twice over.
    plugins = hermes_cli.home / "plugins"
    for plugin in ("alpha", "beta"):
        hermes_dir_plugin(plugins, plugin, _tools_of(plugin, "deploy", f"{plugin}_only"))
    hermes_dir_plugin(plugins, "later", "")
    hermes_cli.config.write_text("plugins:\n  enabled: [alpha, beta]\n", encoding="utf-8")

    done = hermes_cli.run("nosuch", ok=False, env=lenient(hermes_cli))

    said = " ".join(done.stderr.split())
    assert done.returncode == 2
    assert "No such command 'nosuch'. Plugins that did not load may add it: plugin 'later'" in said
    assert "plugin 'alpha'" not in said
    assert "plugin 'beta'" not in said
