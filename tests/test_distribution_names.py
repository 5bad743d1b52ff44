"""Every distribution of this repository has a name of its own on PyPI and depends only on our
own distributions and real third-party packages.

``hermes-core`` on PyPI is another project (Cossack Labs' Python bindings for Hermes): a plugin
depending on it, or a ``pip install --upgrade hermes-core``, installs that project. The checks
run offline:

- a requirement whose name starts with ``hermes`` must name one of the distributions defined by
  the ``pyproject.toml`` files of this repository;
- no distribution here is named, or depends on, a name known to be another project's on PyPI
  (:data:`OTHER_PROJECTS`, each checked with ``pip index versions NAME``);
- the core's own dependencies and its ``test`` extra are what the test environment was
  installed from (``pip install -e '.[test]'``), so each of them must be installed here, in a
  version its specifier accepts: a misspelt or made-up name could not have been. The other
  extras and the plugins' dependencies are not installed here; they are held to the first two
  rules.
"""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import hermes_core

REPO = Path(__file__).resolve().parents[1]

OTHER_PROJECTS = {
    "hermes-core": "Cossack Labs' python bindings for Hermes (0.5.1 on PyPI)",
    # PyPI refuses a new name too close to an existing one ("confusable" names).
    "hermescore": "refused by PyPI as confusable with hermes-core",
}
"""Names that are another project's on PyPI, or that PyPI would refuse us."""

CORE = "hermes-core-agent"
HYBRID = "hermes-core-search-hybrid"


def pyproject_files() -> list[Path]:
    """The ``pyproject.toml`` of the core, of each plugin under plugins/ and of each example."""
    found = [REPO / "pyproject.toml"]
    for folder in ("plugins", "examples"):
        found += sorted((REPO / folder).glob("*/pyproject.toml"))
    return found


def project(path: Path) -> dict[str, object]:
    table = tomllib.loads(path.read_text(encoding="utf-8"))["project"]
    assert isinstance(table, dict)
    return table


def our_distributions() -> dict[str, Path]:
    """Canonical name -> the pyproject.toml defining it."""
    return {canonicalize_name(str(project(path)["name"])): path for path in pyproject_files()}


def requirements(path: Path) -> list[tuple[str, Requirement]]:
    """``(where, requirement)`` for every dependency and optional dependency of ``path``."""
    table = project(path)
    dependencies = table.get("dependencies", [])
    extras = table.get("optional-dependencies", {})
    assert isinstance(dependencies, list)
    assert isinstance(extras, dict)
    listed = [("dependencies", str(text)) for text in dependencies]
    for extra, texts in extras.items():
        listed += [(f"optional-dependencies.{extra}", text) for text in texts]
    relative = path.relative_to(REPO)
    return [(f"{relative}: {where}", Requirement(text)) for where, text in listed]


def every_requirement() -> list[tuple[str, Requirement]]:
    return [pair for path in pyproject_files() for pair in requirements(path)]


def test_the_repository_defines_the_core_and_the_hybrid_plugin() -> None:
    names = our_distributions()

    assert canonicalize_name(CORE) in names
    assert canonicalize_name(HYBRID) in names
    assert names[canonicalize_name(CORE)] == REPO / "pyproject.toml"


def test_no_distribution_here_is_named_as_another_project_on_pypi() -> None:
    taken = {name: OTHER_PROJECTS[name] for name in our_distributions() if name in OTHER_PROJECTS}

    assert taken == {}


def test_every_requirement_named_hermes_is_one_of_ours() -> None:
    ours = set(our_distributions())
    foreign = [
        f"{where}: {requirement}"
        for where, requirement in every_requirement()
        if canonicalize_name(requirement.name).startswith("hermes")
        and canonicalize_name(requirement.name) not in ours
    ]

    assert foreign == []


def test_no_requirement_names_another_project_on_pypi() -> None:
    foreign = [
        f"{where}: {requirement} ({OTHER_PROJECTS[canonicalize_name(requirement.name)]})"
        for where, requirement in every_requirement()
        if canonicalize_name(requirement.name) in OTHER_PROJECTS
    ]

    assert foreign == []


def test_the_hybrid_plugin_depends_on_the_core_by_its_distribution_name() -> None:
    path = our_distributions()[canonicalize_name(HYBRID)]
    names = [canonicalize_name(requirement.name) for _, requirement in requirements(path)]

    assert canonicalize_name(CORE) in names


@pytest.mark.parametrize(
    ("where", "requirement"),
    [
        pytest.param(where, requirement, id=requirement.name)
        for where, requirement in requirements(REPO / "pyproject.toml")
        if where.endswith((": dependencies", ".test"))
    ],
)
def test_every_core_and_test_requirement_is_a_real_installed_package(
    where: str, requirement: Requirement
) -> None:
    try:
        installed = metadata.version(requirement.name)
    except metadata.PackageNotFoundError:
        pytest.fail(f"{where}: {requirement} is not installed (pip install -e '.[test]')")
    assert requirement.specifier.contains(installed, prereleases=True), (
        f"{where}: {requirement}, but {installed} is installed"
    )


def test_the_running_hermes_core_is_installed_under_our_name() -> None:
    installed = metadata.distribution(CORE)  # PackageNotFoundError under any other name
    scripts = installed.entry_points.select(group="console_scripts")

    assert installed.version == hermes_core.__version__
    assert [(script.name, script.value) for script in scripts] == [
        ("hermes", "hermes_core._cli:run")
    ]
    with pytest.raises(metadata.PackageNotFoundError):
        metadata.distribution("hermes-core")  # Cossack Labs' project, or a stale install of ours


FENCE = re.compile(r"^```[a-z]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
QUOTED_REQUIREMENT = re.compile(r"""["'](hermes[A-Za-z0-9_.\-]*)(?:\[[^\]]*\])?\s*[<>=!~]""")
PIP_INSTALL = re.compile(r"pip install((?:[ \t]+(?:-[-\w=]+|[^\s&;|#]+))+)")


def documents() -> list[Path]:
    return [
        REPO / "README.md",
        *sorted((REPO / "docs").glob("*.md")),
        *sorted((REPO / "plugins").glob("*/README.md")),
    ]


def named_in_code(text: str) -> list[str]:
    """The distribution names starting with ``hermes`` that the code blocks of a Markdown text
    install (``pip install NAME``) or depend on (``"NAME>=1"``)."""
    names: list[str] = []
    for line in (line for block in FENCE.findall(text) for line in block.splitlines()):
        installs = PIP_INSTALL.findall(line)
        if not installs:
            names += QUOTED_REQUIREMENT.findall(line)
        for word in (word for arguments in installs for word in arguments.split()):
            name = re.split(r"[\[<>=!~]", word.strip("'\""), maxsplit=1)[0]
            if name.lower().startswith("hermes") and "/" not in name:
                names.append(name)
    return names


def test_the_scan_of_the_docs_finds_installs_and_dependencies() -> None:
    text = (
        '```toml\ndependencies = ["hermes-weather>=1", "httpx"]\n```\n'
        "```sh\npip install -U hermes-x 'hermes-y[all]>=2' -e plugins/hermes-z && hermes\n```\n"
    )

    assert named_in_code(text) == ["hermes-weather", "hermes-x", "hermes-y"]


@pytest.mark.parametrize("document", documents(), ids=lambda path: str(path.relative_to(REPO)))
def test_the_docs_install_and_depend_on_our_distributions_only(document: Path) -> None:
    ours = set(our_distributions())
    example_plugins = {"hermes-weather"}  # the docs' example of a third-party plugin
    named = named_in_code(document.read_text(encoding="utf-8"))

    foreign = [
        name
        for name in named
        if canonicalize_name(name) not in ours | example_plugins
        or canonicalize_name(name) in OTHER_PROJECTS
    ]

    assert foreign == []


def installed_by_the_code() -> list[str]:
    """``path:line: NAME`` for each name starting with ``hermes`` that a ``pip install`` in the
    Python source of the core and of the plugins tells a user to install (an error's hint)."""
    found: list[str] = []
    for folder in ("hermes_core", "plugins_builtin", "plugins"):
        for path in sorted((REPO / folder).rglob("*.py")):
            lines = path.read_text(encoding="utf-8").splitlines()
            for number, line in enumerate(lines, start=1):
                for arguments in PIP_INSTALL.findall(line):
                    for word in arguments.split():
                        text = word.strip("'\"`").rstrip(").,;:")
                        name = re.split(r"[\[<>=!~]", text, maxsplit=1)[0]
                        if name.lower().startswith("hermes") and "/" not in name:
                            found.append(f"{path.relative_to(REPO)}:{number}: {name}")
    return found


def test_the_install_hints_of_the_code_name_our_distributions_only() -> None:
    ours = set(our_distributions())
    named = installed_by_the_code()
    foreign = [
        where
        for where in named
        if canonicalize_name(where.rsplit(" ", 1)[1]) not in ours
        or canonicalize_name(where.rsplit(" ", 1)[1]) in OTHER_PROJECTS
    ]

    assert any(where.endswith(f": {CORE}") for where in named)  # the scan finds the hints
    assert foreign == []
