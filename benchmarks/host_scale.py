"""A host with a very large catalog: the first search's time and the process's memory.

Writes the synthetic catalog of ``benchmarks/search.py`` (the SaaS catalog's words at their real
frequencies, servers of 50 tools; 330,000 tools by default) as a catalog file
(``tools.catalogs``), then runs ``hermes tools search "create issue"`` on it as a subprocess,
twice: cold (an empty cache directory) and warm (the cache the cold run left). For each it
prints the wall time of the command and the peak resident memory of the process (``ru_maxrss``
of the child, which is at least its memory after the search). Budgets (issue 11): RSS under
1.2 GB, the first answer under 15 s cold and under 2 s warm. A warm run is faster only where
something is cached across processes (the bm25 engine's persisted index).

Then, with the cache the runs left (issue 32): the host's first ``assemble`` in a fresh process
(the tool listing built; CPU seconds of that call, budget 0.5 s, and the process's peak RSS),
and ``hermes serve`` over stdio: spawned, ``initialize``, ``tools/list`` answered (wall seconds
to the answer, budget 2 s, and of the ``tools/list`` request alone), alternating with the MCP
SDK's echo server (``tests/mcp/servers/toolbox.py --sdk``) asked the same way, for a ratio measured
in the same run on a shared machine.

With ``--real-schemas`` the catalog is the SaaS catalog's 5,468 real tools, their real input
schemas included, repeated under renamed servers up to ``--tools`` (the synthetic tools' schemas
are a few string properties); ``--search-only`` measures the two searches alone, ``--serve-only``
the ``hermes serve`` stage alone (``--runs`` rounds of serve and echo server, after one untimed
search that fills the cache). ``--workdir DIR`` keeps the catalog, home and cache in ``DIR`` and
reuses a catalog of the same size and kind written there before (writing 330,000 tools takes
about 30 s). ``--against REV`` adds ``hermes serve`` of another revision (its ``hermes_core``
and bundled plugins by ``git archive``, ``benchmarks/_baseline.py``) to the serve stage's
rotation, for a before-and-after in the same run.

    python benchmarks/host_scale.py [--tools 330000] [--runs 1] [--real-schemas]
        [--search-only | --serve-only] [--workdir DIR] [--against REV]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from _baseline import revision_tree, tree_variables  # benchmarks/ is on the script's path
from search import CATALOG, SEED, synthetic_catalog

from hermes_core.search._evaluation import catalog_documents, load_catalog

ECHO_SERVER = Path(__file__).resolve().parents[1] / "tests" / "mcp" / "servers" / "toolbox.py"
RSS_BUDGET_MB = 1200.0
COLD_BUDGET_S = 15.0
WARM_BUDGET_S = 2.0
ASSEMBLE_BUDGET_S = 0.5
TOOLS_LIST_BUDGET_S = 2.0

# Run in a fresh interpreter with the home's environment: the first assemble's CPU time.
ASSEMBLE_PROBE = """
import json, sys, time
from pathlib import Path
from hermes_core import Config, Environment, Host
home = Path(sys.argv[1])
config = Config.model_validate(json.loads((home / "config.yaml").read_text()))
host = Host(config, Environment.from_process())
host.start()
session = host.new_session()
cpu, wall = time.process_time(), time.perf_counter()
assembly = host.assemble(None, session)
cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
listing = next(t for t in assembly.tools if t.name == "tool_search").description
# VmHWM is this process's own peak: ru_maxrss would keep the parent's from before the exec.
status = Path("/proc/self/status")
peaks = [line for line in status.read_text().splitlines() if line.startswith("VmHWM:")]
peak = int(peaks[0].split()[1]) / 1024 if peaks else 0.0
print(json.dumps({"cpu": cpu, "wall": wall, "rss": peak, "listing": len(listing)}))
"""


def _clipped(name: str, suffix: str) -> str:
    return name if len(name) <= 64 else name[: 64 - len(suffix)] + suffix


def write_catalog(path: Path, size: int) -> None:
    """The synthetic catalog of ``size`` tools as a catalog file."""
    documents = synthetic_catalog(catalog_documents(load_catalog(CATALOG)), size, SEED + size)
    entries = [
        {
            # Tool names have at most 64 characters; the index at the end keeps them unique.
            "name": _clipped(document.name, f"_{index}"),
            "server": document.group,
            "description": document.description,
            "input_schema": {
                "type": "object",
                "properties": {name: {"type": "string"} for name in document.parameter_names},
            },
        }
        for index, document in enumerate(documents)
    ]
    path.write_text(json.dumps(entries), encoding="utf-8")


def write_real_catalog(path: Path, size: int) -> None:
    """``size`` tools with real input schemas: the SaaS catalog's 5,468 tools (their names,
    descriptions and schemas as they are) repeated under renamed servers (``github_2``, ...)
    until there are ``size``."""
    real = json.loads(CATALOG.read_text(encoding="utf-8"))
    with path.open("w", encoding="utf-8") as out:
        out.write("[")
        for index in range(size):
            copy, entry = divmod(index, len(real))
            tool = real[entry]
            server = tool["server"] if copy == 0 else f"{tool['server']}_{copy}"
            name = tool["name"]
            if copy:
                name = server + name[len(tool["server"]) :]
            item = {
                "name": _clipped(name, f"_{index}"),
                "server": server,
                "description": tool["description"],
                "input_schema": tool["input_schema"],
            }
            out.write(("," if index else "") + json.dumps(item))
        out.write("]")


def run_once(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall seconds of ``command`` and the peak RSS (MB) of that child alone."""
    # ru_maxrss of RUSAGE_CHILDREN is the largest of all children waited for, so each run is
    # measured from a fresh helper process that has no other child.
    probe = (
        "import resource, subprocess, sys, time\n"
        "start = time.perf_counter()\n"
        "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)\n"
        "took = time.perf_counter() - start\n"
        "print(took, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)\n"
    )
    done = subprocess.run(
        [str(Path(sys.executable).absolute()), "-c", probe, *command],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr}")
    took, rss = done.stdout.split()
    return float(took), float(rss)


def probe_json(
    what: str, code: str, arguments: list[str], env: Mapping[str, str], cwd: Path
) -> Any:
    """Run ``python -c code arguments`` and read its last line of output as JSON; exits
    naming ``what`` with the probe's stderr when it fails."""
    done = subprocess.run(
        [sys.executable, "-c", code, *arguments],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"the {what} probe failed:\n{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])


def assemble_once(env: dict[str, str], cwd: Path, home: Path) -> dict[str, float]:
    """The first ``assemble`` of a fresh host on this home: CPU and wall seconds, peak RSS."""
    figures: dict[str, float] = probe_json("assemble", ASSEMBLE_PROBE, [str(home)], env, cwd)
    return figures


def spawn_medians(runs: list[tuple[float, float, int, float]]) -> tuple[float, float]:
    """The median wall seconds to the ``tools/list`` answer and CPU seconds of
    :func:`serve_once` runs."""
    return statistics.median(run[0] for run in runs), statistics.median(run[3] for run in runs)


def _message(method: str, request_id: int | None = None, **params: object) -> bytes:
    message: dict[str, object] = {"jsonrpc": "2.0", "method": method}
    if request_id is not None:
        message["id"] = request_id
        message["params"] = params
    return (json.dumps(message) + "\n").encode()


def _answer(process: subprocess.Popen[bytes], request_id: int) -> bytes:
    assert process.stdout is not None
    while line := process.stdout.readline():
        if json.loads(line).get("id") == request_id:
            return line
    raise SystemExit(f"hermes serve ended before answering request {request_id}")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def serve_once(
    command: list[str], env: Mapping[str, str], cwd: Path
) -> tuple[float, float, int, float]:
    """An MCP server over stdio: seconds from spawn to the ``tools/list`` answer, seconds of
    the ``tools/list`` request alone, how many tools it listed, and the CPU seconds of the
    whole process (it ends when its stdin closes)."""
    cpu = _children_cpu()
    start = time.perf_counter()
    process = subprocess.Popen(
        command, env=env, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert process.stdin is not None
    try:
        initialize = _message(
            "initialize",
            1,
            protocolVersion="2025-11-25",
            capabilities={},
            clientInfo={"name": "host-scale-benchmark", "version": "1"},
        )
        process.stdin.write(initialize)
        process.stdin.flush()
        _answer(process, 1)
        asked = time.perf_counter()
        process.stdin.write(_message("notifications/initialized") + _message("tools/list", 2))
        process.stdin.flush()
        listed = json.loads(_answer(process, 2))
        done = time.perf_counter()
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return done - start, done - asked, len(listed["result"]["tools"]), _children_cpu() - cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", type=int, default=330_000, help="catalog size")
    parser.add_argument("--runs", type=int, default=1, help="cold and warm runs (default 1)")
    parser.add_argument(
        "--real-schemas",
        action="store_true",
        help="the SaaS catalog's real tools, repeated under renamed servers, not synthetic ones",
    )
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--search-only", action="store_true", help="only the cold and warm searches")
    only.add_argument(
        "--serve-only", action="store_true", help="only hermes serve against the echo server"
    )
    parser.add_argument(
        "--workdir", type=Path, help="keep (and reuse) the catalog, home and cache in this folder"
    )
    parser.add_argument(
        "--against", metavar="REV", help="also serve from this revision, in the same rotation"
    )
    options = parser.parse_args()
    trees = ExitStack()
    if options.workdir is not None:
        root = options.workdir.resolve()
        root.mkdir(parents=True, exist_ok=True)
    else:
        root = Path(tempfile.mkdtemp(prefix="hermes-host-scale-"))
    try:
        started = time.perf_counter()
        catalog = root / "catalog.json"
        marker = root / "catalog.kind"
        kind = f"{options.tools} {'real' if options.real_schemas else 'synthetic'}"
        if not catalog.exists() or not marker.exists() or marker.read_text() != kind:
            (write_real_catalog if options.real_schemas else write_catalog)(catalog, options.tools)
            marker.write_text(kind)
        written = time.perf_counter() - started
        home = root / "home"
        home.mkdir(exist_ok=True)
        (home / "config.yaml").write_text(
            json.dumps({"tools": {"catalogs": [{"path": str(catalog)}]}}), encoding="utf-8"
        )
        cache = root / "cache"
        env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": str(root),
            "HERMES_HOME": str(home),
            "HERMES_CACHE_DIR": str(cache),
            "HERMES_LOG_DIR": str(root / "logs"),
        }
        script = Path(sys.executable).absolute().with_name("hermes")
        hermes = [str(script)] if script.exists() else [sys.executable, "-m", "hermes_core"]
        command = [*hermes, "tools", "search", "create issue"]
        cold: list[tuple[float, float]] = []
        warm: list[tuple[float, float]] = []
        for _ in range(0 if options.serve_only else options.runs):
            shutil.rmtree(cache, ignore_errors=True)
            cold.append(run_once(command, env, root))
            warm.append(run_once(command, env, root))
        if options.serve_only:
            run_once(command, env, root)  # the cache filled (or found), untimed
        runs = 0 if options.search_only else options.runs
        probes = 0 if options.serve_only else runs
        assembled = [assemble_once(env, root, home) for _ in range(probes)]
        served: list[tuple[float, float, int, float]] = []
        echoed: list[tuple[float, float, int, float]] = []
        before: list[tuple[float, float, int, float]] = []
        servers: list[tuple[list[tuple[float, float, int, float]], list[str], dict[str, str]]]
        servers = [
            (served, [*hermes, "serve"], env),
            (echoed, [sys.executable, str(ECHO_SERVER), "--sdk"], env),
        ]
        if options.against and runs:
            tree = trees.enter_context(revision_tree(options.against))
            other = tree_variables(tree, env)
            servers.append((before, [sys.executable, "-m", "hermes_core", "serve"], other))
        load = os.getloadavg()[0]
        for number in range(runs):
            # Rotated, so no server always follows another.
            turn = number % len(servers)
            for figures, server, variables in servers[turn:] + servers[:turn]:
                figures.append(serve_once(server, variables, root))
        load = max(load, os.getloadavg()[0])
        size_mb = catalog.stat().st_size / 1e6
    finally:
        trees.close()
        if options.workdir is None:
            shutil.rmtree(root, ignore_errors=True)
    kind = "real-schema (SaaS catalog repeated)" if options.real_schemas else "synthetic"
    print(
        f"{options.tools:,} {kind} catalog tools ({size_mb:.0f} MB of JSON, written in "
        f"{written:.0f} s); hermes tools search 'create issue'; {options.runs} run(s) each\n"
    )
    checks: list[tuple[str, str, bool]] = []
    for name, timings, budget in (
        ("cold", cold, COLD_BUDGET_S),
        ("warm", warm, WARM_BUDGET_S),
    ):
        if not timings:
            continue
        seconds = statistics.median(took for took, _ in timings)
        rss = max(peak for _, peak in timings)
        print(f"{name}: {seconds:.2f} s, peak RSS {rss:.0f} MB")
        checks.append((f"{name} first answer < {budget:g} s", f"{seconds:.2f} s", seconds < budget))
        checks.append(
            (f"{name} RSS < {RSS_BUDGET_MB:.0f} MB", f"{rss:.0f} MB", rss < RSS_BUDGET_MB)
        )
    if options.search_only:
        return report(checks)
    if assembled:
        report_assemble(assembled, checks)
    whole, cpu_serve = spawn_medians(served)
    alone = statistics.median(run[1] for run in served)
    echo, cpu_echo = spawn_medians(echoed)
    print(
        f"hermes serve (stdio): tools/list answered {whole:.2f} s after spawn "
        f"({cpu_serve:.2f} s CPU in all), the request alone {alone:.2f} s ({served[0][2]} tools "
        f"listed); the SDK's echo server {echo:.2f} s ({cpu_echo:.2f} s CPU): "
        f"{whole / echo:.2f}x its wall time, {cpu_serve / cpu_echo:.2f}x its CPU; medians of "
        f"{runs}, alternated (load average up to {load:.2f})"
    )
    print(
        "  each run, serve / echo: "
        + ", ".join(f"{a[0]:.2f} / {b[0]:.2f} s" for a, b in zip(served, echoed, strict=True))
    )
    if before:
        then, cpu_then = spawn_medians(before)
        print(
            f"hermes serve at {options.against}: {then:.2f} s ({cpu_then:.2f} s CPU in all), "
            f"{then / echo:.2f}x the echo server's wall time; this tree {whole / then:.2f}x its "
            f"wall time, {cpu_serve / cpu_then:.2f}x its CPU"
        )
    checks.append(
        (
            f"serve tools/list < {TOOLS_LIST_BUDGET_S:g} s",
            f"{whole:.2f} s",
            whole < TOOLS_LIST_BUDGET_S,
        )
    )
    return report(checks)


def report_assemble(assembled: list[dict[str, float]], checks: list[tuple[str, str, bool]]) -> None:
    """Print the first assemble's figures and add its budget check."""
    cpu = statistics.median(figures["cpu"] for figures in assembled)
    wall = statistics.median(figures["wall"] for figures in assembled)
    rss = max(figures["rss"] for figures in assembled)
    print(
        f"first assemble: {cpu:.2f} s CPU, {wall:.2f} s wall, peak RSS {rss:.0f} MB "
        f"(tool_search description {assembled[0]['listing']:,.0f} characters)"
    )
    checks.append(
        (f"first assemble < {ASSEMBLE_BUDGET_S:g} s CPU", f"{cpu:.2f} s", cpu < ASSEMBLE_BUDGET_S)
    )


def report(checks: list[tuple[str, str, bool]]) -> int:
    """Print each budget check; 0 when all are met."""
    print()
    for what, figure, held in checks:
        print(f"{'ok  ' if held else 'OVER'} {what}: {figure}")
    return 0 if all(held for _, _, held in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
