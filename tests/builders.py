"""Build a real dispatcher for tests: a pluggy manager, the bundled plugins imported from
``plugins_builtin/`` by path, the shell hooks and hook directories the configuration names, a
registry filled through ``hermes_tools``, the configured approval policy, a temporary home,
working directory and log directory."""

from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pluggy

from hermes_core import hookspecs
from hermes_core.activity import ACTIVITY_LOG_NAME
from hermes_core.approvals import select_policy
from hermes_core.config import Config
from hermes_core.dispatch import Dispatcher
from hermes_core.hooks import register_hooks
from hermes_core.paths import Environment
from hermes_core.session import Session
from hermes_core.specs import PluginContext
from hermes_core.tools import Registry, ToolResult

BUNDLED_DIR = Path(__file__).resolve().parents[1] / "plugins_builtin"
ALL_BUNDLED = ("approvals", "code_execution", "files", "skills", "terminal", "todo")


def load_bundled(name: str) -> ModuleType:
    """Import ``plugins_builtin/<name>/__init__.py`` by path (once per test run)."""
    module_name = f"hermes_test_bundled_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    init = BUNDLED_DIR / name / "__init__.py"
    spec = importlib.util.spec_from_file_location(
        module_name, init, submodule_search_locations=[str(init.parent)]
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def make_env(tmp_path: Path, **variables: str) -> Environment:
    """An environment with a temporary home, working directory, cache and log directory."""
    home = tmp_path / "home"
    cwd = tmp_path / "work"
    home.mkdir(parents=True, exist_ok=True)
    cwd.mkdir(parents=True, exist_ok=True)
    base = {
        "PATH": Environment.from_process().get("PATH") or "/usr/bin:/bin",
        "HOME": str(home),
        "HERMES_HOME": str(home),
        "HERMES_LOG_DIR": str(tmp_path / "logs"),
        "HERMES_CACHE_DIR": str(tmp_path / "cache"),
        "HERMES_STRICT_PLUGINS": "1",
    }
    return Environment(home=home, cwd=cwd, variables={**base, **variables})


@dataclass
class Harness:
    """A dispatcher with everything it needs, and shortcuts to call it."""

    env: Environment
    config: Config
    manager: pluggy.PluginManager
    registry: Registry
    dispatcher: Dispatcher

    def session(self, *, prompt: Any = None, **fields: Any) -> Session:
        """A session in the harness's working directory, whose approvals ``prompt`` answers."""
        fields.setdefault("cwd", self.env.cwd)
        made = Session(**fields)
        if prompt is not None:
            self.dispatcher.approvals.attach(made, prompt)
        return made

    def call(self, name: str, arguments: Any, session: Session | None = None) -> ToolResult:
        """Dispatch one call from synchronous test code."""
        target = session if session is not None else self.session()
        return anyio.run(self.dispatcher.dispatch, name, arguments, target)

    def activity(self) -> list[dict[str, Any]]:
        """The activity log's records so far."""
        import json

        self.dispatcher.activity_log.flush()
        path = self.env.log_dir / ACTIVITY_LOG_NAME
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    def close(self) -> None:
        """Stop the activity log writer."""
        self.dispatcher.close()


def build_harness(
    tmp_path: Path,
    config: Config | Mapping[str, Any] | None = None,
    plugins: Iterable[tuple[str, object]] = (),
    bundled: Iterable[str] = ALL_BUNDLED,
    env: Environment | None = None,
) -> Harness:
    """Register the bundled plugins, then ``plugins`` (``(name, object)`` pairs, later ones
    called first as pluggy does), fill the registry and select the configured policy."""
    environment = env or make_env(tmp_path)
    if config is None:
        settings = Config()
    elif isinstance(config, Config):
        settings = config
    else:
        settings = Config.model_validate(config)
    manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    manager.add_hookspecs(hookspecs)
    for name in bundled:
        manager.register(load_bundled(name), name=name)
    for name, plugin in plugins:
        manager.register(plugin, name=name)
    register_hooks(manager, settings, environment, strict=True)
    registry = Registry()
    for impl in manager.hook.hermes_tools.get_hookimpls():
        given = {"config": settings, "env": environment}
        tools = impl.function(*[given[name] for name in impl.argnames])
        registry.register_all(tools, owner=impl.plugin_name)
    specs = [
        (impl.plugin_name, spec)
        for impl in manager.hook.hermes_approval_policies.get_hookimpls()
        for spec in impl.function()
    ]
    policy = select_policy(specs, settings.approvals.policy, PluginContext(settings, environment))
    dispatcher = Dispatcher(registry, manager, policy, settings, environment)
    return Harness(environment, settings, manager, registry, dispatcher)


def live_processes_running(argv: list[str]) -> list[int]:
    """Pids of processes (zombies excluded) whose command line is exactly ``argv``."""
    wanted = "\0".join(argv).encode() + b"\0"
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if cmdline == wanted and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def processes_gone(argv: list[str]) -> bool:
    """Whether no live process runs ``argv`` (waiting up to 5 s for the kernel to end them)."""
    # SIGKILL is delivered asynchronously: allow the kernel a moment to finish the process.
    for _ in range(100):
        if not live_processes_running(argv):
            return True
        time.sleep(0.05)
    return False
