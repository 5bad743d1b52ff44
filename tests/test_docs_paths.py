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


def _anchors(page: Path) -> set[str]:
    """The anchors GitHub makes of a page's headings: lower case, punctuation dropped, spaces
    as ``-``, a repeated one numbered."""
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    in_code = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_code = not in_code
        heading = None if in_code else re.match(r"#{1,6} (.*)", line)
        if heading:
            anchor = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-")
            count = seen.get(anchor, 0)
            seen[anchor] = count + 1
            anchors.add(anchor if count == 0 else f"{anchor}-{count}")
    return anchors


def test_every_link_between_the_docs_leads_to_a_file_and_heading_there() -> None:
    broken = []
    links = 0
    for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
        for target in re.findall(r"\]\(([^)\s]+)\)", re.sub(r"`[^`]*`", "", text)):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            path, _, anchor = target.partition("#")
            linked = page.parent / path if path else page
            links += 1
            if not linked.exists():
                broken.append(f"{page.name}: {target} (no such file)")
            elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert links > 100
    assert broken == []
