"""Recording benchmark results: each script replaces its own section of docs/performance.md."""

from __future__ import annotations

from pathlib import Path

PERFORMANCE = Path(__file__).resolve().parents[1] / "docs" / "performance.md"


def write_section(heading: str, text: str) -> None:
    """Replace the section that starts with the line ``heading`` (``## Search``) with ``text``,
    or append it; other sections are left as they are."""
    current = PERFORMANCE.read_text(encoding="utf-8") if PERFORMANCE.exists() else ""
    if not current.lstrip().startswith("# "):
        current = "# Performance\n\n" + current.lstrip("\n")
    lines = current.splitlines()
    if heading in lines:
        start = lines.index(heading)
        end = next(
            (i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines)
        )
        lines[start:end] = [*text.rstrip("\n").splitlines(), ""]
    else:
        lines += ["", *text.rstrip("\n").splitlines()]
    PERFORMANCE.write_text("\n".join(lines).strip("\n") + "\n", encoding="utf-8")
