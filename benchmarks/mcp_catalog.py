"""The MCP-server dev set's catalog: the tools of five real MCP servers, as hermes exposes them.

Starts ``mcp-server-time`` and ``mcp-server-git`` (PyPI) and npm's ``server-everything``,
``server-filesystem`` and ``server-memory`` (pinned in ``noxfile.py``, installed under
``.cache/npm``) through a real :class:`~hermes_core._host.Host` configured with the five servers,
and writes every MCP tool it registered (``mcp__time__get_current_time``...) with the
description and input schema the server listed, in the eval catalog format, sorted by name:

    python benchmarks/mcp_catalog.py            # write benchmarks/data/mcp-servers/catalog.json
    python benchmarks/mcp_catalog.py --check    # exit 1 when the file differs from the servers

``tests/test_devsets.py`` runs the same listing and compares it with the committed file.
"""

from __future__ import annotations

import argparse
import ast
import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

# benchmarks/ holds a script named mcp.py: keep this folder off the import path so ``import mcp``
# (inside hermes_core._mcp) finds the SDK.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import anyio  # noqa: E402

from hermes_core._config import Config  # noqa: E402
from hermes_core._host import Host  # noqa: E402
from hermes_core._paths import Environment  # noqa: E402

REPO = _HERE.parent
CATALOG = REPO / "benchmarks" / "data" / "mcp-servers" / "catalog.json"
NPM_ROOT = REPO / ".cache" / "npm"
NPM_SCOPE = "@modelcontextprotocol"
# server name in hermes -> npm package (without scope) and the arguments after its script.
NPM_SERVERS = {
    "everything": ("server-everything", ["stdio"]),
    "filesystem": ("server-filesystem", []),  # + the allowed directory, a temporary one
    "memory": ("server-memory", []),
}
PYPI_SERVERS = {
    "time": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
    "git": ["-m", "mcp_server_git"],
}


class ServerMissing(Exception):
    """A server cannot be started here; the message says how to install it."""


def pinned_npm_packages() -> dict[str, str]:
    """``{package: version}`` of ``NPM_PACKAGES`` in noxfile.py, the one place they are pinned."""
    tree = ast.parse((REPO / "noxfile.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "NPM_PACKAGES" for t in node.targets
        ):
            specs: tuple[str, ...] = ast.literal_eval(node.value)
            return dict(spec.rsplit("@", 1) for spec in specs)
    raise RuntimeError("noxfile.py defines no NPM_PACKAGES")


def _install_hint(package: str, version: str) -> str:
    return (
        f"install it with: npm install --prefix .cache/npm {package}@{version} "
        "(run in the repository root; `nox -s tests` installs every package of NPM_PACKAGES)"
    )


def npm_script(package: str) -> Path:
    """The entry script of an installed npm server at the version noxfile.py pins; raises
    :class:`ServerMissing` with the install command when it is absent or another version."""
    version = pinned_npm_packages()[package]
    folder = NPM_ROOT / "node_modules" / package
    manifest = folder / "package.json"
    if not manifest.is_file():
        raise ServerMissing(
            f"{package} is not installed under {NPM_ROOT}; " + _install_hint(package, version)
        )
    installed = json.loads(manifest.read_text(encoding="utf-8"))
    if installed.get("version") != version:
        raise ServerMissing(
            f"{package} {installed.get('version')} is installed under {NPM_ROOT}, but noxfile.py "
            f"pins {version}; " + _install_hint(package, version)
        )
    script = folder / "dist" / "index.js"
    if not script.is_file():
        raise ServerMissing(f"{script} is missing; " + _install_hint(package, version))
    return script


def servers_config(scratch: Path) -> dict[str, Any]:
    """The ``mcp_servers`` section for the five servers; ``scratch`` is a temporary directory
    (the filesystem server's allowed directory and the memory server's file live there)."""
    node = shutil.which("node")
    if node is None:
        raise ServerMissing(
            "node is not on PATH; install Node.js 18 or later to run the npm servers"
        )
    servers: dict[str, Any] = {
        name: {"command": sys.executable, "args": args} for name, args in PYPI_SERVERS.items()
    }
    allowed = scratch / "allowed"
    allowed.mkdir(exist_ok=True)
    for name, (package, args) in NPM_SERVERS.items():
        script = npm_script(f"{NPM_SCOPE}/{package}")
        entry: dict[str, Any] = {"command": node, "args": [str(script), *args]}
        if name == "filesystem":
            entry["args"].append(str(allowed))
        if name == "memory":
            entry["env"] = {"MEMORY_FILE_PATH": str(scratch / "memory.jsonl")}
        servers[name] = entry
    return servers


async def listed_tools(servers: dict[str, Any], scratch: Path) -> list[dict[str, Any]]:
    """Every MCP tool a host with ``servers`` registers, in the eval catalog format; raises
    :class:`ServerMissing` when one does not connect."""
    (scratch / "home").mkdir(exist_ok=True)
    env = Environment(
        home=scratch / "home",
        cwd=scratch,
        variables={"HERMES_LOG_DIR": str(scratch / "logs"), "HERMES_CACHE_DIR": str(scratch)},
    )
    config = Config.model_validate({"mcp_servers": servers})
    async with Host(config, env) as host:
        down = {
            name: status.reason
            for name, status in host.mcp_status().items()
            if status.state != "connected"
        }
        if down:
            raise ServerMissing(f"MCP servers did not connect: {down}")
        return [
            {
                "name": tool.name,
                "description": tool.description,
                "input_schema": dict(tool.parameters),
                "server": tool.source_name,
            }
            for tool in host.registry
            if tool.source == "mcp"
        ]


def live_tools(servers_of: Callable[[Path], dict[str, Any]], prefix: str) -> list[dict[str, Any]]:
    """The tools the servers ``servers_of(scratch)`` configures list now, through hermes,
    sorted by name (``scratch`` a temporary directory named with ``prefix``)."""
    with tempfile.TemporaryDirectory(prefix=prefix) as scratch:
        tools = anyio.run(listed_tools, servers_of(Path(scratch)), Path(scratch))
    return sorted(tools, key=lambda tool: tool["name"])


def live_catalog() -> list[dict[str, Any]]:
    """The tools the five servers list now, through hermes, sorted by name."""
    return live_tools(servers_config, "hermes-mcp-catalog-")


def catalog_text(tools: list[dict[str, Any]]) -> str:
    """The stable bytes of the catalog file: sorted keys, two-space indent, a final newline."""
    return json.dumps(tools, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_or_check(
    catalog: Path, live: Callable[[], list[dict[str, Any]]], script: str, check: bool
) -> int:
    """Write what ``live()`` lists to ``catalog`` (``check``: compare instead, 1 when it
    differs); 2 with the install hint when a server is missing."""
    try:
        text = catalog_text(live())
    except ServerMissing as error:
        print(f"{script}: {error}", file=sys.stderr)
        return 2
    if check:
        current = catalog.read_text(encoding="utf-8") if catalog.exists() else ""
        if current != text:
            print(f"{catalog} differs from what the servers list; rerun without --check")
            return 1
        print(f"{catalog}: up to date")
        return 0
    catalog.parent.mkdir(parents=True, exist_ok=True)
    catalog.write_text(text, encoding="utf-8")
    print(f"wrote {len(json.loads(text))} tools to {catalog.relative_to(REPO)}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    options = parser.parse_args()
    return write_or_check(CATALOG, live_catalog, "mcp_catalog", options.check)


if __name__ == "__main__":
    sys.exit(main())
