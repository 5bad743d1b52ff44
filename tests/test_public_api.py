"""The public API is a few faces by audience, each with an ``__all__`` that is its row of one
table (``hermes_core._exports.FACES``): ``hermes_core`` (an embedder), ``hermes_core.plugin``,
``hermes_core.search``, ``hermes_core.connectors`` and ``hermes_core.testing``. The docs, the
examples and third-party plugins import only from the faces; bundled plugins may also use
``hermes_core._plugin_support``. Every name of every face has a docstring and is in the docs,
and every hook is documented in docs/plugins.md with the parameters its hookspec has."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import itertools
import re
import shutil
import subprocess
import sys
import typing
from collections.abc import Iterator
from pathlib import Path

import pytest

import hermes_core
from hermes_core import _exports as exports
from hermes_core import _hookspecs as hookspecs

REPO = Path(__file__).resolve().parents[1]
FACES = (
    "hermes_core",
    "hermes_core.plugin",
    "hermes_core.search",
    "hermes_core.connectors",
    "hermes_core.agent",
    "hermes_core.testing",
)
"""Where a plugin author or an embedder may import from."""
SUPPORT = "hermes_core._plugin_support"
"""The one private module bundled plugins may also import from."""
PUBLIC_MODULES = frozenset(FACES)
BUNDLED_MODULES = frozenset({*FACES, SUPPORT})

OLD_CORE_NAMES = frozenset(
    {
        "CACHE_FRAME_SIZE", "HINTS_META", "READ_ONLY_CALLS_META", "SHELL_COMMAND_META",
        "ActivityEvent", "Admission", "ApprovalPolicy", "ApprovalPolicySpec", "ApprovalRequest",
        "Assembly", "CacheFileError", "CliCommandSpec", "Config", "ConfigDocument",
        "ConfigError", "ConnectionLink", "ConnectorGateway", "ConnectorGatewaySpec",
        "ConnectorSchema", "ConnectorState", "Decision", "Environment", "ExecuteCall",
        "ExecuteError", "ExecuteResult", "GatewayConnections", "GatewayContext",
        "GatewayExecution", "GatewayFailure", "GatewayListing", "GatewaySchemas",
        "GatewaySearch", "HermesError", "Host", "KeyedDocuments", "ManagedConfigError",
        "McpServerConfig", "PluginContext", "PluginError", "PreCallDirective",
        "PromptTransport", "RegistrationError", "SearchBackend", "SearchBackendSpec",
        "SearchHit", "ServerStatus", "Session", "Skill", "SkillError", "TerminalPrompt",
        "Tool", "ToolAnnotations", "ToolCall", "ToolCaller", "ToolDocument", "ToolResult",
        "__version__", "cache_frame", "create_private_file", "edit_config", "head_and_tail",
        "hide_host_memory", "hookimpl", "load_config", "load_skills", "make_private_dir",
        "private_dir", "progress_listener", "project_refusal", "read_cache_frame",
        "releasable_variables", "report_progress", "signal_group",
    }
)  # fmt: skip
"""``hermes_core.__all__`` of 0.1: each of these names keeps working for one release."""

_PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
_IMPORT_LINE = re.compile(
    r"^\s*(?:from\s+(hermes_core[\w.]*)\s+import|import\s+(hermes_core[\w.]*))"
)


@dataclasses.dataclass(frozen=True)
class Import:
    """One import of hermes-core: where it is, the module, and the names taken from it."""

    where: str
    module: str
    names: tuple[str, ...]


def _imports_in_code(code: str, where: str, first_line: int = 1) -> Iterator[Import]:
    try:
        tree = compile(
            code, where, "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        )
    except SyntaxError:  # a fragment in the docs: its import lines still count
        for number, line in enumerate(code.splitlines(), first_line):
            match = _IMPORT_LINE.match(line)
            if match:
                yield Import(f"{where}:{number}", match[1] or match[2], ())
        return
    for node in ast.walk(tree):
        line = f"{where}:{first_line + getattr(node, 'lineno', 1) - 1}"
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] == "hermes_core":
                yield Import(line, node.module, tuple(alias.name for alias in node.names))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "hermes_core":
                    yield Import(line, alias.name, ())


def _python_files(*roots: str) -> Iterator[Path]:
    for root in roots:
        for path in sorted((REPO / root).rglob("*.py")):
            if "tests" not in path.relative_to(REPO).parts:
                yield path


def _imports_in_files(*roots: str) -> list[Import]:
    found: list[Import] = []
    for path in _python_files(*roots):
        where = str(path.relative_to(REPO))
        found.extend(_imports_in_code(path.read_text(encoding="utf-8"), where))
    return found


def _imports_in_docs() -> list[Import]:
    found: list[Import] = []
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for block in _PYTHON_BLOCK.finditer(text):
            first_line = text.count("\n", 0, block.start(1)) + 1
            where = str(path.relative_to(REPO))
            found.extend(_imports_in_code(block[1], where, first_line))
    return found


def _outside_the_api(imports: list[Import], allowed: frozenset[str] = PUBLIC_MODULES) -> list[str]:
    problems = []
    for found in imports:
        if found.module not in allowed:
            problems.append(f"{found.where}: imports {found.module} (not a public module)")
        else:
            exported = importlib.import_module(found.module).__all__
            missing = [name for name in found.names if name not in exported]
            if missing:
                problems.append(f"{found.where}: {found.module} does not export {missing}")
    return problems


def _face_table(face: str) -> dict[str, str]:
    return dict(exports.FACES[face])


@pytest.mark.parametrize("face", [*FACES, SUPPORT])
def test_each_face_exports_its_row_of_the_table_sorted(face: str) -> None:
    module = importlib.import_module(face)
    names = [name for name in module.__all__ if name != "__version__"]

    assert sorted(module.__all__) == sorted(_face_table(face))
    assert names == sorted(names, key=lambda name: (not name.isupper(), name))
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("face", [*FACES, SUPPORT])
def test_every_name_of_a_face_is_the_one_its_defining_module_has(face: str) -> None:
    module = importlib.import_module(face)

    for name, defining in _face_table(face).items():
        assert getattr(module, name) is getattr(importlib.import_module(defining), name), name


def test_the_embedders_face_holds_at_most_25_names() -> None:
    assert len(hermes_core.__all__) <= 25


def _documented_in_source(module: str, name: str) -> bool:
    """An attribute docstring: a string right after ``name = ...`` in ``module``."""
    source = inspect.getsource(importlib.import_module(module))
    body = ast.parse(source).body
    for statement, following in itertools.pairwise(body):
        targets = (
            statement.targets
            if isinstance(statement, ast.Assign)
            else [statement.target]
            if isinstance(statement, ast.AnnAssign)
            else []
        )
        if any(isinstance(target, ast.Name) and target.id == name for target in targets):
            return (
                isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)
            )
    return False


def _has_docstring(face: str, name: str) -> bool:
    value = getattr(importlib.import_module(face), name)
    if inspect.isclass(value) or inspect.isfunction(value) or inspect.ismethod(value):
        return bool(vars(value).get("__doc__") or getattr(value, "__doc__", None))
    if hasattr(value, "_pytestfixturefunction") or type(value).__name__.startswith("Fixture"):
        return bool(getattr(value, "__doc__", None))
    return _documented_in_source(_face_table(face)[name], name)


@pytest.mark.parametrize("face", [*FACES, SUPPORT])
def test_every_name_of_a_face_has_a_docstring(face: str) -> None:
    undocumented = [name for name in _face_table(face) if not _has_docstring(face, name)]

    assert undocumented == []


def _docs_text() -> str:
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    return "\n".join(page.read_text(encoding="utf-8") for page in pages)


@pytest.mark.parametrize("face", FACES)
def test_every_name_of_a_face_is_in_the_docs(face: str) -> None:
    text = _docs_text()

    missing = [name for name in _face_table(face) if f"`{name}" not in text]

    assert missing == []


def _api_page_sections() -> dict[str, str]:
    text = (REPO / "docs" / "api.md").read_text(encoding="utf-8")
    parts = re.split(r"^## `([\w.]+)`.*$", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


@pytest.mark.parametrize("face", [*FACES, SUPPORT])
def test_docs_api_lists_every_face_with_each_of_its_names_on_a_line(face: str) -> None:
    section = _api_page_sections()[face]

    missing = [name for name in _face_table(face) if f"- `{name}`" not in section]

    assert missing == []


def test_the_readme_tour_links_the_api_page() -> None:
    assert "(docs/api.md)" in (REPO / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(OLD_CORE_NAMES - set(hermes_core.__all__)))
def test_an_old_name_still_works_with_a_warning_naming_its_new_place(name: str) -> None:
    home = next(face for face in (*FACES[1:], SUPPORT) if name in _face_table(face))

    with pytest.warns(DeprecationWarning, match=f"hermes_core.{name} is deprecated") as warned:
        value = getattr(hermes_core, name)

    assert value is getattr(importlib.import_module(home), name)
    where = (
        f"it is internal now ({home}, for the bundled plugins)"
        if home == SUPPORT
        else f"import it from {home}"
    )
    assert str(warned[0].message) == (
        f"hermes_core.{name} is deprecated: {where}; the old name goes in 0.2"
    )
    assert warned[0].filename == __file__


def test_an_old_name_is_deprecated_by_an_import_statement_too() -> None:
    with pytest.warns(
        DeprecationWarning, match=r"it is internal now \(hermes_core\._plugin_support"
    ):
        from hermes_core import cache_frame  # noqa: F401


def test_every_old_name_is_still_in_the_embedders_face_or_deprecated() -> None:
    assert set(hermes_core.__all__) | exports.DEPRECATED_IN_CORE == OLD_CORE_NAMES
    assert not set(hermes_core.__all__) & exports.DEPRECATED_IN_CORE


def test_a_name_that_never_was_in_hermes_core_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'DevGateway'"):
        _ = hermes_core.DevGateway


def test_the_package_is_marked_as_typed() -> None:
    assert (Path(hermes_core.__file__).parent / "py.typed").is_file()


def test_the_docs_import_only_the_public_api() -> None:
    imports = _imports_in_docs()

    assert len(imports) > 10  # the scan reads the code blocks
    assert _outside_the_api(imports) == []


def test_bundled_plugins_import_only_the_faces_and_the_support_module() -> None:
    imports = _imports_in_files("plugins_builtin")

    assert {found.where.split("/")[1] for found in imports} >= {
        "approvals",
        "bm25",
        "files",
        "terminal",
        "todo",
    }
    assert _outside_the_api(imports, BUNDLED_MODULES) == []


def test_third_party_plugins_import_only_the_faces() -> None:
    imports = _imports_in_files("plugins")

    assert {found.where.split("/")[1] for found in imports} >= {"hermes-search-hybrid"}
    assert _outside_the_api(imports) == []


def test_the_hybrid_plugins_readme_names_only_faces_as_its_public_api() -> None:
    readme = (REPO / "plugins" / "hermes-search-hybrid" / "README.md").read_text("utf-8")

    named = set(re.findall(r"`(hermes_core(?:\.\w+)*)", readme))

    assert named
    assert named <= PUBLIC_MODULES


def test_the_example_plugin_imports_only_the_public_api() -> None:
    imports = _imports_in_files("examples")

    assert imports
    assert _outside_the_api(imports) == []


def test_an_import_of_an_internal_module_is_reported_with_its_place() -> None:
    code = (
        "from hermes_core.search._backend import ToolDocument\n"
        "from hermes_core import Nope\n"
        "from hermes_core._plugin_support import cache_frame\n"
    )

    problems = _outside_the_api(list(_imports_in_code(code, "plugin.py")))

    assert problems == [
        "plugin.py:1: imports hermes_core.search._backend (not a public module)",
        "plugin.py:2: hermes_core does not export ['Nope']",
        "plugin.py:3: imports hermes_core._plugin_support (not a public module)",
    ]


def _hook_names() -> list[str]:
    return sorted(
        name
        for name, value in vars(hookspecs).items()
        if inspect.isfunction(value) and hookspecs.hookspec.project_name + "_spec" in vars(value)
    )


def _documented_parameters(hook: str) -> list[str]:
    """The parameter names of the signature that opens the hook's section of docs/plugins.md
    (`` `hermes_pre_tool_call(call, session) -> ...` ``)."""
    text = (REPO / "docs" / "plugins.md").read_text(encoding="utf-8")
    section = text.split(f"### `{hook}`\n", 1)[1]
    match = re.search(rf"`{hook}\(([^)]*)\)", section)
    assert match, f"docs/plugins.md's section of {hook} does not open with its signature"
    return [part.split(":")[0].strip() for part in match[1].split(",") if part.strip()]


def test_every_hook_is_found() -> None:
    assert "hermes_pre_tool_call" in _hook_names()


@pytest.mark.parametrize("hook", _hook_names())
def test_every_hook_is_documented_with_the_parameters_of_its_hookspec(hook: str) -> None:
    declared = list(inspect.signature(getattr(hookspecs, hook)).parameters)

    assert _documented_parameters(hook) == declared


# mypy of a whole package: tens of seconds on a loaded machine, over the 120 s default there.
@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.timeout(600)
def test_the_example_plugin_passes_mypy_strict_outside_the_repository(tmp_path: Path) -> None:
    if shutil.which("mypy") is None and not _has_module("mypy"):
        pytest.fail("mypy is not installed: pip install -e '.[test]' installs it")
    plugin = tmp_path / "search_backend_plugin"
    shutil.copytree(REPO / "examples" / "search_backend_plugin", plugin)

    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(plugin)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "Success" in checked.stdout


def _has_module(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def test_the_version_is_the_distributions() -> None:
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]

    assert hermes_core.__version__ == project["version"]


@pytest.mark.parametrize(
    "spec", [name for name in _face_table("hermes_core.plugin") if name.endswith("Spec")]
)
def test_docs_api_names_every_field_a_plugin_author_may_set_on_a_spec(spec: str) -> None:
    cls = getattr(importlib.import_module("hermes_core.plugin"), spec)
    line = next(
        line
        for line in _api_page_sections()["hermes_core.plugin"].splitlines()
        if line.startswith(f"- `{spec}`")
    )

    unnamed = [
        field.name
        for field in dataclasses.fields(cls)
        if field.name not in ("name", "factory", "description") and f"`{field.name}" not in line
    ]

    assert unnamed == []


def test_the_transcript_a_conversation_appends_to_is_public() -> None:
    from hermes_core import agent

    assert "Transcript" in agent.__all__, "docs/agent.md reads Transcript.history()"
    returned = typing.get_type_hints(agent.Conversation.transcript)["return"]
    assert returned == agent.Transcript | None
