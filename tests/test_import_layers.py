"""The import rules of ``hermes_core/``: no cycle in the module import graph (type-only and
function-level imports count: they are where cycles hide), every import runs down the layers of
docs/architecture.md or is one of the few exceptions that page names and justifies, and no module
grows past the size a reader can hold."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "hermes_core"
MAX_LINES = 450
MAX_HOST_LINES = 350

LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "hermes_core._errors",
        "hermes_core._version",
        "hermes_core._tls",
        "hermes_core._exports",
        "hermes_core._shown",
        "hermes_core._paths",
        "hermes_core._atomic_write",
        "hermes_core._encodable",
        "hermes_core._private_files",
        "hermes_core._process_groups",
        "hermes_core._captured",
        "hermes_core._gc_pause",
        "hermes_core._generation_cache",
        "hermes_core._timeouts",
        "hermes_core._arguments",
        "hermes_core._plugin_names",
        "hermes_core._project_trust",
        "hermes_core._yaml_limits",
        "hermes_core._yaml_layout",
        "hermes_core._cache_files",
        "hermes_core._block_lines",
        "hermes_core._result_cut",
        "hermes_core._progress",
        "hermes_core._session",
        "hermes_core._coercion",
        "hermes_core._redaction",
        "hermes_core._dotenv",
        "hermes_core._retry_after",
        "hermes_core._client_io",
        "hermes_core._addresses",
        "hermes_core._expanding",
        "hermes_core._checked_fetch",
        "hermes_core._tool_call_entries",
        "hermes_core._jsonrpc_lines",
        "hermes_core._schema_roots",
        "hermes_core._terminal_cells",
    ),
    ("hermes_core._config",),
    (
        "hermes_core._tools",
        "hermes_core._tool_blocks",
        "hermes_core._registry",
        "hermes_core._validation",
        "hermes_core._pattern_budget",
        "hermes_core._broken_schema",
        "hermes_core._connector_names",
        "hermes_core._call_path",
        "hermes_core._path_arguments",
    ),
    (
        "hermes_core._availability",
        "hermes_core.search._backend",
        "hermes_core.agent._wire",
        "hermes_core._web_search",
        "hermes_core._image_providers",
        "hermes_core.agent._memory_provider",
    ),
    (
        "hermes_core._specs",
        "hermes_core._hookspecs",
        "hermes_core._plugin_settings",
        "hermes_core.connectors._gateway",
    ),
    (
        "hermes_core._activity",
        "hermes_core._mcp",
        "hermes_core._approvals",
        "hermes_core._execution",
        "hermes_core._toolsets",
    ),
    ("hermes_core._dispatch", "hermes_core._hook_calls", "hermes_core._call_shape"),
    ("hermes_core.search",),
    ("hermes_core.connectors",),
    ("hermes_core._plugins",),
    ("hermes_core._hooks", "hermes_core._skills"),
    ("hermes_core._host", "hermes_core._plugin_runtime"),
    ("hermes_core.agent",),
    (
        "hermes_core._serve",
        "hermes_core._acp",
        "hermes_core._cli",
        "hermes_core.testing",
        "hermes_core.__main__",
        "hermes_core.plugin",
        "hermes_core._plugin_support",
        "=hermes_core",
        "=hermes_core.search",
        "=hermes_core.connectors",
    ),
)
"""Bottom to top. A module belongs to the layer of the longest entry naming it or a package
above it (``=name``: that module alone, a package's face); it imports only from its own layer
and the layers below (docs/architecture.md, "Layers")."""


def _modules() -> dict[str, Path]:
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


MODULES = _modules()


def _known(name: str) -> str:
    while name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def _imported(module: str, path: Path) -> Iterator[str]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            if base.split(".")[0] != "hermes_core":
                continue
            for alias in node.names:
                yield _known(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "hermes_core":
                    yield _known(alias.name)


@functools.cache
def _graph() -> dict[str, list[str]]:
    """Each module's imports of the package's own modules. Parsed when a test asks (0.4 s of
    CPU), not when every xdist worker collects this file."""
    return {
        module: sorted({target for target in _imported(module, path) if target != module})
        for module, path in MODULES.items()
    }


def _layer(module: str) -> int:
    best, found = -1, -1
    for number, prefixes in enumerate(LAYERS):
        for entry in prefixes:
            prefix = entry.removeprefix("=")
            within = module == prefix or (
                not entry.startswith("=") and module.startswith(prefix + ".")
            )
            if within and len(entry) > best:
                best, found = len(entry), number
    assert found >= 0, f"{module} is in no layer: add it to LAYERS and docs/architecture.md"
    return found


def _cycles() -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in _graph()[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in _graph():
        if node not in index:
            visit(node)
    return found


def upward_imports() -> list[str]:
    """Every import from a lower layer up to a higher one, as ``importer -> imported``."""
    return sorted(
        f"{module} -> {target}"
        for module, targets in _graph().items()
        for target in targets
        if _layer(target) > _layer(module)
    )


def test_the_import_graph_has_no_cycle() -> None:
    assert _cycles() == []


def test_upward_imports_are_few_and_each_is_justified_on_the_architecture_page() -> None:
    page = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    justified = sorted(re.findall(r"^- `(hermes_core[\w.]* -> hermes_core[\w.]*)`", page, re.M))
    assert upward_imports() == justified
    assert len(justified) <= 3


def test_no_module_is_longer_than_a_reader_can_hold() -> None:
    long = {
        str(path.relative_to(REPO)): lines
        for path in MODULES.values()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def test_host_is_a_composition_root() -> None:
    lines = len((PACKAGE / "_host.py").read_text(encoding="utf-8").splitlines())
    assert lines < MAX_HOST_LINES
