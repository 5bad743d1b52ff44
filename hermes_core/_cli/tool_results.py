"""A tool's result on the terminal (``hermes tools call`` and the bridge commands): its text and
one line for each block that is not text, or the whole of it as JSON; an error on stderr.

A result is a server's text: on a terminal its control characters are shown escaped (an OSC 52
sequence would write the clipboard, a CSI one clear the screen); through a pipe or a file, and
with ``--json``, it is data, written exactly."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click

from hermes_core._cli.output import echo_shown
from hermes_core._encodable import encodable_value
from hermes_core._shown import printable

if TYPE_CHECKING:
    from hermes_core._tools import ToolResult


def print_json(value: Any) -> None:
    """``value`` as indented JSON on standard output, each lone surrogate as U+FFFD (UTF-8
    cannot hold it; ``hermes_core/_encodable.py``)."""
    click.echo(json.dumps(encodable_value(value), indent=2, ensure_ascii=False))


def result_payload(result: ToolResult) -> dict[str, Any]:
    """The JSON object a bridge tool answered with (its structured content, or its text
    parsed); empty when it is none. An error that is no answer of the bridge (the approval
    policy's refusal, a hook's, a timeout) in the shape of the bridge's own errors."""
    if isinstance(result.structured, dict):
        return result.structured
    try:
        parsed = json.loads(result.text_content)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        return parsed
    if result.is_error:
        return {"error": result.text_content, "code": result.error_code}
    return {}


def print_bridge(result: ToolResult, payload: dict[str, Any], *, as_json: bool) -> None:
    """A bridge answer: exactly its JSON with ``--json``, else its error's message on stderr;
    exit status 1 when it is an error."""
    if as_json:
        print_json(payload)
    elif result.is_error and isinstance(payload.get("error"), str):
        echo_shown(f"error ({result.error_code}): {payload['error']}", err=True)
    else:
        print_result(result, as_json=False)
    if result.is_error:
        sys.exit(1)


def print_search(payload: dict[str, Any]) -> None:
    """A ``tool_search`` answer as a person reads it: each query, its matches (name, source,
    the description's first line), the words no tool holds and, for a miss, the sources that
    were searched (the model reads these in ``unmatched`` and ``available_sources``); what a
    server or gateway named is shown escaped, as in the tables."""
    from hermes_core._cli.output import columns

    found: dict[str, Any] = payload.get("tools", {})
    # Nothing deferred (tool search off, every tool visible) is not "no tool holds the words".
    empty = payload.get("total_available") == 0 and "connectors" not in payload
    for entry in payload.get("results", []):
        click.echo(f"{printable(entry['query'])}:")
        if empty and not entry.get("matches"):
            click.echo(f"  no match: {_NOTHING_DEFERRED}")
            continue
        rows = [
            (f"  {name}", found.get(name, {}).get("source_name", ""), _first_line(found, name))
            for name in entry.get("matches", [])
        ]
        unmatched = entry.get("unmatched") or []
        missing = f"no tool contains: {printable(', '.join(unmatched))}" if unmatched else ""
        if rows:
            click.echo(columns(rows))
            if missing:
                click.echo(f"  {missing}")
            continue
        click.echo(f"  no match: {missing}" if missing else "  no match")
        sources = [
            f"{source['name']} ({_tools(source['tool_count'])})"
            for source in entry.get("available_sources", [])
        ]
        if sources:
            click.echo(f"  searched: {printable(', '.join(sources))}")


_NOTHING_DEFERRED = (
    "no tool is deferred, so there is nothing to search; every tool is in the model's tool "
    "list (hermes tools list)"
)


def _tools(count: int) -> str:
    return f"{count:,} tool" if count == 1 else f"{count:,} tools"


def _first_line(found: dict[str, Any], name: str) -> str:
    from hermes_core.search._listing import short_description

    return short_description(str(found.get(name, {}).get("description", "")))


def print_result(result: ToolResult, *, as_json: bool) -> None:
    """A tool's result: the whole of it with ``--json``; else its text, and one line for each
    block that is not text (``[image: image/png, 12,345 bytes]``); an error on stderr."""
    if as_json:
        print_json(
            {
                "is_error": result.is_error,
                "error_code": result.error_code,
                "content": result.content,
                "structured": result.structured,
            }
        )
        return
    if result.is_error:
        echo_shown(f"error ({result.error_code}): {result.text_content}", err=True)
    else:
        from hermes_core._block_lines import block_line

        text = "\n".join(block_line(block) for block in result.content)
        echo_shown(text)
