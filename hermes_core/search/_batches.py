"""A batch of connector entries: how its answer is shaped.

``tool_call`` accepts several entries only when every name is a connector tool, at most
:data:`MAX_BATCH` (the rule is :func:`~hermes_core.search._bridge.batch_rule`). The dispatcher runs
them one by one in input order, each through the whole call path; entries not started when the
user stops the turn are not run. :func:`batch_answer` turns what each entry gave into the one
answer the model sees.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core._tools import ToolResult

__all__ = ["MAX_BATCH", "batch_answer"]

MAX_BATCH = 10
"""The most entries a connector batch holds."""


def batch_answer(names: Sequence[str], outcomes: Sequence[ToolResult | None]) -> dict[str, Any]:
    """A connector batch's answer: each entry's response or error, in input order, with the
    counts; an entry not started after the user's stop (``None``) is ``INTERRUPTED``."""
    results: list[dict[str, Any]] = []
    for index, (name, outcome) in enumerate(zip(names, outcomes, strict=True)):
        item: dict[str, Any] = {"index": index, "name": name}
        if outcome is None:
            item["error"] = {
                "code": "INTERRUPTED",
                "message": "not run: the user stopped this turn before it started",
            }
        else:
            item.update(_entry(outcome))
        results.append(item)
    errors = sum(1 for item in results if "error" in item)
    return {
        "results": results,
        "success_count": len(results) - errors,
        "error_count": errors,
        "total_count": len(results),
    }


def _entry(result: ToolResult) -> dict[str, Any]:
    if result.is_error:
        error: dict[str, Any] = {
            "code": result.error_code or "TOOL_ERROR",
            "message": result.error_message or result.text_content,
        }
        if isinstance(result.structured, Mapping):
            extra = {k: v for k, v in result.structured.items() if k not in ("code", "message")}
            error.update(extra)
        return {"error": error}
    response = result.structured if result.structured is not None else result.text_content
    return {"response": response}
