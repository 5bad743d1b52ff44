"""Every file of the checkout (or of ``../shared`` beside it) that README.md and docs/*.md name
in code spans exists, so a reader who looks a named file up finds it."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FOLDERS = (
    "hermes_core/",
    "plugins_builtin/",
    "plugins/",
    "tests/",
    "tests_conformance/",
    "benchmarks/",
    "examples/",
    "docs/",
    "spec/",
    "../shared/",
)
A_FILE = re.compile(r"\.[a-z]{1,5}$")


def _named_files() -> list[str]:
    named = []
    for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for number, line in enumerate(text.splitlines(), 1):
            for span in re.findall(r"`([^`\s]+)`", line):
                path = span.split("::")[0].split(":")[0]
                if path.startswith(FOLDERS) and A_FILE.search(path) and "*" not in path:
                    named.append(f"{page.name}:{number}: {path}")
    return named


def test_the_docs_name_files_in_code_spans() -> None:
    assert len(_named_files()) > 50


def test_every_file_the_docs_name_exists() -> None:
    missing = [where for where in _named_files() if not (REPO / where.split(": ")[1]).exists()]
    assert missing == []
