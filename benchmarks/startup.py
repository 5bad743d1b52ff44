"""Start-up time of the ``hermes`` command, against the bare interpreter, in one run.

Builds 50 plugins spread over the five sources (bundled, user, project, pip, Nix) in a temporary
directory, enables half of them, then times as subprocesses (wall clock, N repetitions,
interleaved so drift hits every command alike):

- ``python -c pass`` (the baseline),
- ``hermes --version``,
- ``hermes --help`` (budget: at most 2x ``hermes --version``),
- ``hermes plugins list`` (budget: 300 ms median).

Then, in a second home with the 5,468-tool SaaS catalog (``../shared/data``) and the five servers
of the README tour configured (``mcp-server-time``, ``mcp-server-git``, npm's server-everything,
server-filesystem and server-memory, from ``.cache/npm``; see noxfile.py):

- ``hermes tools search "create issue"`` warm (tool manifests and search index cached, no
  server started; budget 400 ms median) against ``hermes --version`` in that home, interleaved;
- the same search cold (the cache directory emptied before each run: every server started),
  fewer runs (``--cold-repeat``), for the record;
- ``hermes serve`` over stdio with manifests: spawn, ``initialize``, ``tools/list`` answered
  (budget 300 ms median), against a minimal MCP echo server (``tests/mcp/servers/toolbox.py --sdk``,
  the SDK's low-level server) started and asked the same way.

Prints the median and the ratio to the baseline of each, and whether each budget holds. Exit
status 1 when one does not.

    python benchmarks/startup.py [--repeat 20] [--budget-ms 300] [--cold-repeat 3]
                                 [--no-servers] [--against OTHER/bin/hermes] [--catalog PATH]

``--against`` adds ``plugins list`` and the warm search of another install (a virtualenv of an
earlier revision: ``git archive REV | tar -x -C DIR``, ``python -m venv``, ``pip install -e
DIR``), interleaved with this one's in the same runs, and prints the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from hermes_core.testing import make_nix_store, write_dir_plugin, write_distribution

PLUGIN_CODE = """
from hermes_core import hookimpl  # the old name: an --against install may predate .plugin

@hookimpl
def hermes_session_start(session):
    pass
"""
PER_SOURCE = 10
REPO = Path(__file__).resolve().parents[1]
CATALOG = REPO.parent / "shared" / "data" / "saas_openapi_catalog" / "catalog.json"
NPM = REPO / ".cache" / "npm" / "node_modules" / "@modelcontextprotocol"
ECHO_SERVER = REPO / "tests" / "mcp" / "servers" / "toolbox.py"
SEARCH_BUDGET_MS = 400.0
SERVE_BUDGET_MS = 300.0
HELP_RATIO_BUDGET = 2.0


def build(root: Path) -> dict[str, str]:
    """50 plugins over the five sources; returns the environment variables to run with."""
    home = root / "home" / ".hermes"
    project = root / "project"
    bundled = root / "bundled"
    site = root / "site-packages"
    for directory in (home, project, bundled, site):
        directory.mkdir(parents=True)
    store = make_nix_store(root / "nix" / "store")
    enabled: list[str] = []
    for index in range(PER_SOURCE):
        kind = {"kind": "backend"} if index % 2 == 0 else {}
        write_dir_plugin(bundled, f"bundled-{index}", PLUGIN_CODE, manifest=kind)
        write_dir_plugin(home / "plugins", f"user-{index}", PLUGIN_CODE)
        write_dir_plugin(project / ".hermes" / "plugins", f"project-{index}", PLUGIN_CODE)
        write_distribution(
            site,
            f"hermes-pip-{index}",
            entry_points={f"pip-{index}": f"pip_plugin_{index}"},
            files={f"pip_plugin_{index}.py": PLUGIN_CODE},
        )
        if index < PER_SOURCE // 2:
            store.add_dir_plugin(f"nix-{index}", PLUGIN_CODE)
        else:
            store.add_distribution(
                f"hermes-nix-{index}",
                entry_points={f"nix-{index}": f"nix_plugin_{index}"},
                files={f"nix_plugin_{index}.py": PLUGIN_CODE},
            )
        if index % 2 == 1:
            enabled += [f"user-{index}", f"project-{index}", f"pip-{index}", f"nix-{index}"]
    lines = "".join(f"    - {name}\n" for name in enabled)
    (home / "config.yaml").write_text(f"plugins:\n  enabled:\n{lines}", encoding="utf-8")
    return {
        "PATH": os.defpath,
        "HOME": str(home.parent),
        "HERMES_HOME": str(home),
        "HERMES_BUNDLED_PLUGINS": str(bundled),
        "HERMES_ENABLE_PROJECT_PLUGINS": "1",
        "HERMES_NIX_PLUGINS": str(store.path),
        "PYTHONPATH": str(site),
    }


def build_servers(root: Path, catalog: Path = CATALOG) -> dict[str, str]:
    """A home with the SaaS catalog and the five servers; returns the environment to run with."""
    node = shutil.which("node")
    missing = [p for p in (catalog, NPM / "server-everything") if not p.exists()]
    if node is None or missing:
        raise SystemExit(f"needs node and {', '.join(map(str, missing)) or 'nothing else'}")
    home = root / "home" / ".hermes"
    project = root / "project"
    repository = root / "repository"
    for directory in (home, project, repository):
        directory.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repository)], check=True)
    servers = {
        "time": {
            "command": sys.executable,
            "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
        },
        "git": {
            "command": sys.executable,
            "args": ["-m", "mcp_server_git", "--repository", str(repository)],
        },
        "everything": {
            "command": node,
            "args": [str(NPM / "server-everything" / "dist" / "index.js"), "stdio"],
        },
        "filesystem": {
            "command": node,
            "args": [str(NPM / "server-filesystem" / "dist" / "index.js"), str(project)],
        },
        "memory": {"command": node, "args": [str(NPM / "server-memory" / "dist" / "index.js")]},
    }
    config = {"tools": {"catalogs": [{"path": str(catalog)}]}, "mcp_servers": servers}
    (home / "config.yaml").write_text(json.dumps(config), encoding="utf-8")
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(home.parent),
        "HERMES_HOME": str(home),
        "HERMES_CACHE_DIR": str(root / "cache"),
        "HERMES_LOG_DIR": str(root / "logs"),
    }


def _read_answer(process: subprocess.Popen[bytes], request_id: int) -> None:
    assert process.stdout is not None
    while True:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError(f"the server ended before answering request {request_id}")
        if json.loads(line).get("id") == request_id:
            return


def _message(method: str, request_id: int | None = None, **params: object) -> bytes:
    message: dict[str, object] = {"jsonrpc": "2.0", "method": method}
    if request_id is not None:
        message["id"] = request_id
    if params or request_id is not None:
        message["params"] = params
    return (json.dumps(message) + "\n").encode()


INITIALIZE = _message(
    "initialize",
    1,
    protocolVersion="2025-11-25",
    capabilities={},
    clientInfo={"name": "startup-benchmark", "version": "1"},
)


def time_serve_once(command: list[str], env: dict[str, str], cwd: Path) -> float:
    """Spawn an MCP server over stdio, ``initialize`` it and have its ``tools/list`` answered:
    the milliseconds until that answer. The process is then ended (not timed)."""
    start = time.perf_counter()
    process = subprocess.Popen(
        command,
        env=env,
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None
    try:
        process.stdin.write(INITIALIZE)
        process.stdin.flush()
        _read_answer(process, 1)
        process.stdin.write(_message("notifications/initialized") + _message("tools/list", 2))
        process.stdin.flush()
        _read_answer(process, 2)
        took = (time.perf_counter() - start) * 1000
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return took


def time_cold_once(command: list[str], env: dict[str, str], cwd: Path) -> float:
    shutil.rmtree(env["HERMES_CACHE_DIR"], ignore_errors=True)
    return time_once(command, env, cwd)


def hermes_command() -> list[str]:
    """The installed ``hermes`` script beside this interpreter, else ``python -m hermes_core``."""
    script = Path(sys.executable).with_name("hermes")
    return [str(script)] if script.exists() else [sys.executable, "-m", "hermes_core"]


def time_once(command: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        command, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    return (time.perf_counter() - start) * 1000


Timer = Callable[[list[str], dict[str, str], Path], float]


def with_cache(timer: Timer, cache: Path) -> Timer:
    """``timer`` with the cache directory ``cache`` (``HERMES_CACHE_DIR``) instead of the run's."""

    def timed(command: list[str], env: dict[str, str], cwd: Path) -> float:
        return timer(command, {**env, "HERMES_CACHE_DIR": str(cache)}, cwd)

    return timed


def interleaved(
    cases: dict[str, tuple[Timer, list[str]]], env: dict[str, str], cwd: Path, repeat: int
) -> dict[str, list[float]]:
    """``repeat`` timings of each case, one of each in turn, after one warm-up run each."""
    for timer, command in cases.values():  # warm the file cache, .pyc files and hermes' caches
        timer(command, env, cwd)
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(repeat):
        for name, (timer, command) in cases.items():
            samples[name].append(timer(command, env, cwd))
    return samples


def print_table(title: str, samples: dict[str, list[float]], baseline: str) -> None:
    reference = statistics.median(samples[baseline])
    print(f"\n{title}")
    print(f"{'command':<46}{'median ms':>10}{'min ms':>9}{'max ms':>9}{'x ' + baseline:>28}")
    for name, values in samples.items():
        print(
            f"{name:<46}{statistics.median(values):>10.1f}{min(values):>9.1f}{max(values):>9.1f}"
            f"{statistics.median(values) / reference:>28.2f}"
        )


AGAINST = "--against: "


def print_against(samples: dict[str, list[float]], ours: str, theirs: str) -> None:
    """The ratio of ``ours`` to the other install's ``theirs``, when it was timed."""
    if theirs in samples:
        ratio = statistics.median(samples[ours]) / statistics.median(samples[theirs])
        print(f"{ours}: {ratio:.2f}x the --against install's")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=20, help="runs per command (default 20)")
    parser.add_argument("--budget-ms", type=float, default=300.0, help="plugins list budget")
    parser.add_argument("--cold-repeat", type=int, default=3, help="cold search runs (default 3)")
    parser.add_argument("--no-servers", action="store_true", help="only the plugin cases")
    parser.add_argument(
        "--against", type=Path, help="another install's hermes script, timed in the same runs"
    )
    parser.add_argument(
        "--catalog",
        type=Path,
        default=CATALOG,
        help="the SaaS catalog (default: ../shared/data/...; a worktree's parent may have none)",
    )
    options = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="hermes-startup-"))
    hermes = hermes_command()
    checks: list[tuple[str, str, bool]] = []
    try:
        env = build(root / "plugins")
        cwd = root / "plugins" / "project"
        listing = subprocess.run(
            [*hermes, "plugins", "list", "--json"],
            env=env,
            cwd=cwd,
            capture_output=True,
            text=True,
            check=True,
        )
        shown = listing.stdout.count('"name"')
        plugin_cases: dict[str, tuple[Timer, list[str]]] = {
            "python -c pass": (time_once, [sys.executable, "-c", "pass"]),
            "hermes --version": (time_once, [*hermes, "--version"]),
            "hermes --help": (time_once, [*hermes, "--help"]),
            "hermes plugins list": (time_once, [*hermes, "plugins", "list"]),
        }
        if options.against is not None:
            plugin_cases[AGAINST + "plugins list"] = (
                time_once,
                [str(options.against), "plugins", "list"],
            )
        plugins = interleaved(plugin_cases, env, cwd, options.repeat)
        print(f"{shown} plugins listed; {options.repeat} runs each; wall time of a subprocess")
        print_table("50 plugins over the five sources", plugins, "python -c pass")
        print_against(plugins, "hermes plugins list", AGAINST + "plugins list")
        version = statistics.median(plugins["hermes --version"])
        listed = statistics.median(plugins["hermes plugins list"])
        helped = statistics.median(plugins["hermes --help"])
        checks.append(("hermes --version", f"{version:.1f} ms", version <= options.budget_ms))
        checks.append(
            (
                f"hermes --help <= {HELP_RATIO_BUDGET:g}x hermes --version",
                f"{helped / version:.2f}x",
                helped / version <= HELP_RATIO_BUDGET,
            )
        )
        checks.append(
            (
                f"hermes plugins list < {options.budget_ms:.0f} ms",
                f"{listed:.1f} ms",
                listed <= options.budget_ms,
            )
        )
        if not options.no_servers:
            checks += servers_cases(root / "servers", hermes, options)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print()
    for what, figure, held in checks:
        print(f"{'ok  ' if held else 'OVER'} {what}: {figure}")
    return 0 if all(held for _, _, held in checks) else 1


def servers_cases(
    root: Path, hermes: list[str], options: argparse.Namespace
) -> list[tuple[str, str, bool]]:
    """The cases of the five-server home; returns the checks."""
    env = build_servers(root, options.catalog)
    cwd = root / "project"
    search = [*hermes, "tools", "search", "create issue"]
    warm = "hermes tools search 'create issue' (warm)"
    serve = "hermes serve: initialize + tools/list"
    echo = "echo server: initialize + tools/list"
    cases: dict[str, tuple[Timer, list[str]]] = {
        "hermes --version": (time_once, [*hermes, "--version"]),
        warm: (time_once, search),
        serve: (time_serve_once, [*hermes, "serve"]),
        echo: (time_serve_once, [sys.executable, str(ECHO_SERVER), "--sdk"]),
    }
    if options.against is not None:
        other = [str(options.against), "tools", "search", "create issue"]
        # A cache directory of its own: the two installs' catalog caches differ in format, and
        # sharing one made each rewrite it for the other, so neither search was warm.
        cases[AGAINST + "tools search (warm)"] = (
            with_cache(time_once, root / "cache-against"),
            other,
        )
    samples = interleaved(cases, env, cwd, options.repeat)
    cold = [time_cold_once(search, env, cwd) for _ in range(options.cold_repeat)]
    samples[f"hermes tools search 'create issue' (cold, {options.cold_repeat} runs)"] = cold
    print_table(
        "5,468 catalog tools and five MCP servers (time, git, everything, filesystem, memory)",
        samples,
        "hermes --version",
    )
    print_against(samples, warm, AGAINST + "tools search (warm)")
    warm_ms = statistics.median(samples[warm])
    serve_ms = statistics.median(samples[serve])
    echo_ms = statistics.median(samples[echo])
    return [
        (
            f"tools search warm < {SEARCH_BUDGET_MS:.0f} ms",
            f"{warm_ms:.1f} ms",
            warm_ms < SEARCH_BUDGET_MS,
        ),
        (
            f"serve initialize + tools/list < {SERVE_BUDGET_MS:.0f} ms",
            f"{serve_ms:.1f} ms ({serve_ms / echo_ms:.2f}x the echo server, "
            f"{serve_ms - echo_ms:+.1f} ms)",
            serve_ms < SERVE_BUDGET_MS,
        ),
    ]


if __name__ == "__main__":
    sys.exit(main())
