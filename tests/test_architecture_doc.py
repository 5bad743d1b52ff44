"""docs/architecture.md names every module of hermes_core/, so the picture cannot fall behind
the code unnoticed."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_every_module_is_on_the_architecture_page() -> None:
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`([\w/]+\.py)`", text))
    package = REPO / "hermes_core"
    modules = {path.relative_to(package).as_posix() for path in package.rglob("*.py")}

    packages = {path.parent.name for path in package.rglob("__init__.py")} - {"hermes_core"}
    stale = [name for name in named - modules if name.split("/")[0] in packages]

    assert sorted(modules - named) == []
    assert stale == []  # a module the page names that no longer exists
