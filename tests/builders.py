"""Build a real host for the dispatcher tests: the bundled plugins as a user has them (found in
``plugins_builtin/``), the test's own plugin objects registered through :meth:`Host.register`,
the configured approval policy, a temporary home, working directory and log directory."""

from __future__ import annotations

import atexit
import functools
import json
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pluggy

from hermes_core._activity import ACTIVITY_LOG_NAME
from hermes_core._config import Config
from hermes_core._dispatch import Dispatcher
from hermes_core._host import Host
from hermes_core._paths import Environment
from hermes_core._registry import Registry
from hermes_core._session import Session
from hermes_core._tools import ToolResult

ALL_BUNDLED = ("approvals", "code_execution", "files", "skills", "terminal", "todo")
"""The bundled plugins the dispatcher tests use (``bm25`` loads too: it provides no tool)."""


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
    """A started host, its dispatcher and registry, and shortcuts to call it."""

    env: Environment
    config: Config
    manager: pluggy.PluginManager
    registry: Registry
    dispatcher: Dispatcher
    host: Host

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
        """Stop the activity log writer and unregister the plugins."""
        self.host.close()


def build_harness(
    tmp_path: Path,
    config: Config | Mapping[str, Any] | None = None,
    plugins: Iterable[tuple[str, object]] = (),
    bundled: Iterable[str] = ALL_BUNDLED,
    env: Environment | None = None,
) -> Harness:
    """Start a host with the bundled plugins (those of ``ALL_BUNDLED`` not in ``bundled`` are
    disabled), then ``plugins`` (``(name, object)`` pairs given to :meth:`Host.register`, later
    ones called first as pluggy does), and build its dispatcher with the configured policy."""
    environment = env or make_env(tmp_path)
    if config is None:
        settings = Config()
    elif isinstance(config, Config):
        settings = config
    else:
        settings = Config.model_validate(config)
    left_out = [name for name in ALL_BUNDLED if name not in set(bundled)]
    if left_out:
        disabled = [*settings.plugins.disabled, *left_out]
        plugins_config = settings.plugins.model_copy(update={"disabled": disabled})
        settings = settings.model_copy(update={"plugins": plugins_config})
    host = Host(settings, environment)
    for name, plugin in plugins:
        host.register(plugin, name=name)
    host.start()
    try:
        dispatcher = host.dispatcher
    except BaseException:
        host.close()
        raise
    return Harness(environment, settings, host.pm, host.registry, dispatcher, host)


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


# execute_code -------------------------------------------------------------------------------

RUNS_SCRIPTS = {"approvals": {"allow": ["execute_code"]}}
"""The user allowed execute_code itself; each tool a script calls is still approved alone."""


def script_harnesses(tmp_path: Path) -> Iterator[Callable[..., Harness]]:
    """The body of a ``harnesses`` fixture: ``make(config=None, **options)`` builds a harness
    whose config adds ``config`` to :data:`RUNS_SCRIPTS`; all are closed after the test."""
    made: list[Harness] = []

    def make(config: dict[str, Any] | None = None, **options: Any) -> Harness:
        merged: dict[str, Any] = {**RUNS_SCRIPTS, **(config or {})}
        harness = build_harness(tmp_path / f"h{len(made)}", config=merged, **options)
        made.append(harness)
        return harness

    yield make
    for harness in made:
        harness.close()


def run_script(harness: Harness, code: str, session: Session | None = None) -> ToolResult:
    """``execute_code`` of ``code`` (dedented) through the harness."""
    return harness.call("execute_code", {"code": textwrap.dedent(code)}, session)


def script_payload(result: ToolResult) -> dict[str, Any]:
    """The structured result of an ``execute_code`` call, checked to be its text as well."""
    assert isinstance(result.structured, dict), result.text_content
    assert json.loads(result.text_content) == result.structured
    return result.structured


def stopped_after(
    harness: Harness, name: str, arguments: Mapping[str, Any], session: Session, seconds: float
) -> ToolResult:
    """Dispatch ``name`` for ``session``, stop the turn (``session.interrupt()``, the user's
    stop) ``seconds`` later, and return the call's result."""
    results: list[ToolResult] = []

    async def scenario() -> None:
        async def call() -> None:
            results.append(await harness.dispatcher.dispatch(name, arguments, session))

        async with anyio.create_task_group() as group:
            group.start_soon(call)
            await anyio.sleep(seconds)
            session.interrupt()

    anyio.run(scenario)
    return results[0]


def make_venv(venv: Path) -> tuple[Path, Path]:
    """A virtual environment at ``venv`` (no pip) that also sees hermes-core and its
    dependencies from the environment running the tests; its ``python`` and site-packages.

    Each is a copy of one made by ``python -m venv`` once per test process: a test may install
    into its own, and copying a few files is much cheaper than two more Python starts."""
    template, site = _venv_template()
    shutil.copytree(template, venv, symlinks=True)
    return venv / "bin" / "python", venv / site.relative_to(template)


@functools.cache
def _venv_template() -> tuple[Path, Path]:
    """The virtual environment :func:`make_venv` copies (removed when the process exits)."""
    root = Path(tempfile.mkdtemp(prefix="hermes-test-venv-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    venv = root / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (site / "hermes-test-deps.pth").write_text(
        f"import site; site.addsitedir({sysconfig.get_path('purelib')!r})\n", encoding="utf-8"
    )
    return venv, site
