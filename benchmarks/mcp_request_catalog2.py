"""The second request dev set's catalog: the tools of more real MCP servers, as hermes exposes them.

Issue 32 asked for a request set written blind, over real MCP servers no other dev set uses. This
script starts them through a real :class:`~hermes_core._host.Host` and writes every MCP tool it
registered with the description and input schema the server listed, in the eval catalog format,
sorted by name, through ``benchmarks/mcp_catalog.py``'s functions:

    python benchmarks/mcp_request_catalog2.py            # write benchmarks/data/mcp-requests-2/...
    python benchmarks/mcp_request_catalog2.py --check    # exit 1 when the file differs

The npm servers are pinned here (``NPM_PACKAGES``), not in ``noxfile.py``: only this script and
its slow test start them. ``--install`` installs them (``nox -s tests_slow`` runs it),
``--install-hint`` prints the commands; the npm folder is ``.cache/npm`` unless ``--npm-root``
or ``HERMES_NPM_ROOT`` names another. The PyPI server (``excel-mcp-server``) runs in the
interpreter running this script.

Listing tools needs no account: the servers that want a key or a cluster get a placeholder
(``fake-...``, an unreachable address, an empty kubeconfig), which no tool call here ever uses.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]


def _load_sibling(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, _HERE / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


# How a catalog is listed through hermes, written and checked (the MCP-server set's script), and
# the first request set's placeholder key.
_CATALOG_SCRIPT = _load_sibling("mcp_catalog")
_REQUESTS_SCRIPT = _load_sibling("mcp_request_catalog")
ServerMissing = _CATALOG_SCRIPT.ServerMissing
FAKE_KEY: str = _REQUESTS_SCRIPT.FAKE_KEY

REPO = _HERE.parent
CATALOG = REPO / "benchmarks" / "data" / "mcp-requests-2" / "catalog.json"
# Installed apart from the tests' servers and from the lock the catalog was captured with: npm
# hoists shared dependencies differently in a shared folder, and a server built against another
# SDK or zod lists other schemas (CI saw every airtable tool "changed").
DEFAULT_NPM_ROOT = REPO / ".cache" / "npm-requests-2"
LOCKED = CATALOG.parent / "npm"
UNREACHABLE = "127.0.0.1:9"
# The kubernetes server builds its API client at start and exits without a current cluster.
KUBECONFIG = f"""apiVersion: v1
kind: Config
clusters:
- name: placeholder
  cluster: {{server: "https://{UNREACHABLE}"}}
users:
- name: placeholder
  user: {{token: "{FAKE_KEY}"}}
contexts:
- name: placeholder
  context: {{cluster: placeholder, user: placeholder}}
current-context: placeholder
"""
# npm package -> (version, licence): the one place these servers are pinned.
NPM_PACKAGES: dict[str, tuple[str, str]] = {
    "mcp-server-kubernetes": ("4.1.7", "MIT"),
    "mongodb-mcp-server": ("3.0.4", "Apache-2.0"),
    "@playwright/mcp": ("0.0.83", "Apache-2.0"),
    "airtable-mcp-server": ("1.14.0", "MIT"),
    "todoist-mcp": ("1.3.4", "MIT"),
    "@upstash/context7-mcp": ("4.1.1", "MIT"),
    "@modelcontextprotocol/server-postgres": ("0.6.2", "MIT"),
}
# server name in hermes -> (npm package, entry script inside it, arguments, environment); the
# strings {scratch} and {key} are replaced by the scratch folder and the placeholder key.
NPM_SERVERS: dict[str, tuple[str, str, list[str], dict[str, str]]] = {
    "kubernetes": (
        "mcp-server-kubernetes",
        "dist/index.js",
        [],
        {"KUBECONFIG": "{scratch}/kube/config"},
    ),
    "mongodb": (
        "mongodb-mcp-server",
        "dist/esm/index.js",
        [],
        {
            "MDB_MCP_TELEMETRY": "disabled",
            "MDB_MCP_LOG_PATH": "{scratch}/mongodb-logs",
            "HOME": "{scratch}",
        },
    ),
    "playwright": ("@playwright/mcp", "cli.js", ["--headless"], {"HOME": "{scratch}"}),
    "airtable": ("airtable-mcp-server", "dist/main.js", [], {"AIRTABLE_API_KEY": "{key}"}),
    "todoist": ("todoist-mcp", "dist/index.js", [], {"API_KEY": "{key}"}),
    "context7": ("@upstash/context7-mcp", "dist/index.js", [], {}),
    "postgres": (
        "@modelcontextprotocol/server-postgres",
        "dist/index.js",
        [f"postgresql://{UNREACHABLE}/shop"],
        {},
    ),
}
# server name in hermes -> (PyPI distribution, version, licence, arguments after the interpreter)
PYPI_SERVERS: dict[str, tuple[str, str, str, list[str]]] = {
    "excel": ("excel-mcp-server", "2.2.2", "MIT", ["-m", "excel_mcp", "stdio"]),
}


def npm_root() -> Path:
    """Where the npm servers are installed: ``HERMES_NPM_ROOT`` or ``.cache/npm-requests-2``."""
    named = os.environ.get("HERMES_NPM_ROOT")
    return Path(named).resolve() if named else DEFAULT_NPM_ROOT


def install_hint() -> str:
    """The commands that install every server of this catalog at its pinned version."""
    npm = " ".join(f"{name}@{version}" for name, (version, _) in NPM_PACKAGES.items())
    pypi = " ".join(f"{dist}=={version}" for dist, version, _, _ in PYPI_SERVERS.values())
    return (
        f"python benchmarks/mcp_request_catalog2.py --install (npm ci of the lock in {LOCKED} "
        f"under {npm_root()}: {npm}; pip install {pypi})"
    )


def install() -> int:
    """Install every server at its pinned version: the npm ones under :func:`npm_root`, the
    PyPI one into the running interpreter (``nox -s tests_slow`` runs this)."""
    import subprocess

    npm = shutil.which("npm")
    if npm is None:
        print("mcp_request_catalog2: npm is not on PATH; install Node.js 20 or later")
        return 2
    root = npm_root()
    root.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(LOCKED / name, root / name)
    quiet = ["--no-audit", "--no-fund", "--loglevel=error"]
    done = subprocess.run([npm, "ci", "--prefix", str(root), *quiet])
    if done.returncode:
        return done.returncode
    wheels = [f"{dist}=={version}" for dist, version, _, _ in PYPI_SERVERS.values()]
    return subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", *wheels]).returncode


def npm_script(package: str, entry: str) -> Path:
    """The entry script of an installed npm server at its pinned version."""
    version = NPM_PACKAGES[package][0]
    manifest = npm_root() / "node_modules" / package / "package.json"
    if not manifest.is_file():
        raise ServerMissing(f"{package} is not installed under {npm_root()}; {install_hint()}")
    installed = json.loads(manifest.read_text(encoding="utf-8")).get("version")
    if installed != version:
        raise ServerMissing(
            f"{package} {installed} is installed, {version} pinned; {install_hint()}"
        )
    return manifest.parent / entry


def _fill(text: str, scratch: Path) -> str:
    return text.replace("{scratch}", str(scratch)).replace("{key}", FAKE_KEY)


def servers_config(scratch: Path) -> dict[str, Any]:
    """The ``mcp_servers`` section for the servers, with placeholder keys and addresses."""
    node = shutil.which("node")
    if node is None:
        raise ServerMissing("node is not on PATH; install Node.js 20 or later")
    (scratch / "kube").mkdir(exist_ok=True)
    (scratch / "kube" / "config").write_text(KUBECONFIG, encoding="utf-8")
    servers: dict[str, Any] = {}
    for name, (dist, version, _, args) in PYPI_SERVERS.items():
        module = args[1] if args[:1] == ["-m"] else ""
        if module and importlib.util.find_spec(module) is None:
            raise ServerMissing(f"{dist} is not installed; pip install {dist}=={version}")
        servers[name] = {"command": sys.executable, "args": [_fill(a, scratch) for a in args]}
    for name, (package, entry, args, env) in NPM_SERVERS.items():
        servers[name] = {
            "command": node,
            "args": [str(npm_script(package, entry)), *(_fill(a, scratch) for a in args)],
            "env": {key: _fill(value, scratch) for key, value in env.items()},
        }
    return servers


def live_catalog() -> list[dict[str, Any]]:
    """The tools the servers list now, through hermes, sorted by name."""
    result: list[dict[str, Any]] = _CATALOG_SCRIPT.live_tools(
        servers_config, "hermes-mcp-requests-2-"
    )
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    parser.add_argument("--npm-root", type=Path, help="where the npm servers are installed")
    parser.add_argument("--install-hint", action="store_true", help="print the install commands")
    parser.add_argument("--install", action="store_true", help="install the pinned servers")
    options = parser.parse_args()
    if options.npm_root is not None:
        os.environ["HERMES_NPM_ROOT"] = str(options.npm_root)
    if options.install_hint:
        print(install_hint())
        return 0
    if options.install:
        return install()
    check: int = _CATALOG_SCRIPT.write_or_check(
        CATALOG, live_catalog, "mcp_request_catalog2", options.check
    )
    return check


if __name__ == "__main__":
    sys.exit(main())
