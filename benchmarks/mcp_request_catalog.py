"""The request dev sets' catalog: the tools of seven more real MCP servers, as hermes exposes them.

Starts npm's ``server-github``, ``server-gitlab``, ``server-slack``, ``server-google-maps``,
``server-brave-search`` and ``@notionhq/notion-mcp-server`` (pinned in ``noxfile.py``,
installed under ``.cache/npm``) and PyPI's ``mcp-server-fetch`` through a real
:class:`~hermes_core._host.Host`, and writes every MCP tool it registered with the description
and input schema the server listed, in the eval catalog format, sorted by name (as
``benchmarks/mcp_catalog.py`` does for the MCP-server set):

    python benchmarks/mcp_request_catalog.py            # write benchmarks/data/mcp-requests/...
    python benchmarks/mcp_request_catalog.py --check    # exit 1 when the file differs

Listing tools needs no account: the servers that want a key get a placeholder one (``fake-...``),
which no tool call here ever uses.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]


REPO = _HERE.parent
CATALOG = REPO / "benchmarks" / "data" / "mcp-requests" / "catalog.json"
NPM_ROOT = REPO / ".cache" / "npm"
FAKE_KEY = "fake-key-for-listing-only"
# server name in hermes -> (npm package, entry script inside it, environment)
NPM_SERVERS: dict[str, tuple[str, str, dict[str, str]]] = {
    "github": (
        "@modelcontextprotocol/server-github",
        "dist/index.js",
        {"GITHUB_PERSONAL_ACCESS_TOKEN": FAKE_KEY},
    ),
    "gitlab": (
        "@modelcontextprotocol/server-gitlab",
        "dist/index.js",
        {"GITLAB_PERSONAL_ACCESS_TOKEN": FAKE_KEY, "GITLAB_API_URL": "http://127.0.0.1:9/api/v4"},
    ),
    "slack": (
        "@modelcontextprotocol/server-slack",
        "dist/index.js",
        {"SLACK_BOT_TOKEN": FAKE_KEY, "SLACK_TEAM_ID": "T00000000"},
    ),
    "google-maps": (
        "@modelcontextprotocol/server-google-maps",
        "dist/index.js",
        {"GOOGLE_MAPS_API_KEY": FAKE_KEY},
    ),
    "brave-search": (
        "@modelcontextprotocol/server-brave-search",
        "dist/index.js",
        {"BRAVE_API_KEY": FAKE_KEY},
    ),
    "notion": ("@notionhq/notion-mcp-server", "bin/cli.mjs", {"NOTION_TOKEN": FAKE_KEY}),
}
PYPI_SERVERS = {
    "fetch": ["-m", "mcp_server_fetch"],
}


def _load_sibling(name: str) -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, _HERE / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


# The MCP-server set's script: how a catalog is listed through hermes, written and checked.
_CATALOG_SCRIPT = _load_sibling("mcp_catalog")
ServerMissing = _CATALOG_SCRIPT.ServerMissing


def npm_script(package: str, entry: str) -> Path:
    """The entry script of an installed npm server at its pinned version."""
    pinned = _load_sibling("mcp_catalog").pinned_npm_packages()
    version = pinned.get(package)
    if version is None:
        raise ServerMissing(f"noxfile.py's NPM_PACKAGES does not pin {package}")
    hint = f"install it with: npm install --prefix .cache/npm {package}@{version}"
    manifest = NPM_ROOT / "node_modules" / package / "package.json"
    if not manifest.is_file():
        raise ServerMissing(f"{package} is not installed under {NPM_ROOT}; {hint}")
    installed = json.loads(manifest.read_text(encoding="utf-8")).get("version")
    if installed != version:
        raise ServerMissing(
            f"{package} {installed} is installed, noxfile.py pins {version}; {hint}"
        )
    return manifest.parent / entry


def servers_config(scratch: Path) -> dict[str, Any]:
    """The ``mcp_servers`` section for the seven servers, with placeholder keys."""
    node = shutil.which("node")
    if node is None:
        raise ServerMissing("node is not on PATH; install Node.js 18 or later")
    import importlib.util

    if importlib.util.find_spec("mcp_server_fetch") is None:
        raise ServerMissing("mcp-server-fetch is not installed; pip install mcp-server-fetch")
    servers: dict[str, Any] = {
        name: {"command": sys.executable, "args": list(args)} for name, args in PYPI_SERVERS.items()
    }
    for name, (package, entry, env) in NPM_SERVERS.items():
        servers[name] = {
            "command": node,
            "args": [str(npm_script(package, entry))],
            "env": dict(env),
        }
    return servers


def live_catalog() -> list[dict[str, Any]]:
    """The tools the seven servers list now, through hermes, sorted by name."""
    result: list[dict[str, Any]] = _CATALOG_SCRIPT.live_tools(
        servers_config, "hermes-mcp-requests-"
    )
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    options = parser.parse_args()
    check: int = _CATALOG_SCRIPT.write_or_check(
        CATALOG, live_catalog, "mcp_request_catalog", options.check
    )
    return check


if __name__ == "__main__":
    sys.exit(main())
