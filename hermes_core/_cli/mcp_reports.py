"""How ``hermes mcp list`` and ``hermes mcp test`` show servers: a server's status as JSON and
as the columns of the status table, the MCP warnings that table repeats, a probe report."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from hermes_core._cli.output import columns

if TYPE_CHECKING:
    from pathlib import Path

    from hermes_core._config import Config
    from hermes_core._mcp.probe import ProbeReport
    from hermes_core._mcp.supervisor import ServerStatus


def status_json(status: ServerStatus) -> dict[str, Any]:
    """``status`` as one object of ``hermes mcp list --json``."""
    return {
        "name": status.name,
        "transport": status.transport,
        "status": status.state,
        "reason": status.reason,
        "tool_count": status.tool_count,
        "filtered_count": status.filtered_count,
        "unmatched_patterns": list(status.unmatched_patterns),
        "protocol_version": status.protocol_version,
        "log": str(status.log_path) if status.log_path is not None else None,
        "stderr_tail": list(status.stderr_tail),
        "manifest_age": None if status.manifest_age is None else round(status.manifest_age, 1),
        "failed_at": status.failed_at,
        "recorded": status.recorded,
    }


class _DropStatusRepeats(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        from hermes_core._mcp.supervisor import SHOWN_IN_STATUS

        return not getattr(record, SHOWN_IN_STATUS, False)


@contextmanager
def statuses_printed_instead_of_warnings() -> Iterator[None]:
    """Drop the MCP warnings that the status table repeats anyway."""
    logger = logging.getLogger("hermes_core._mcp")
    dropper = _DropStatusRepeats()
    logger.addFilter(dropper)
    try:
        yield
    finally:
        logger.removeFilter(dropper)


def status_note(status: ServerStatus, config: Config) -> str:
    """The note column: why a server is unavailable (and since when, when that was recorded
    by an earlier command), and the patterns matching nothing."""
    from hermes_core._shown import duration

    note = "" if status.state == "disabled" else status.reason or ""
    if status.recorded and status.failed_at is not None:
        import time

        since = time.time() - status.failed_at
        interval = config.mcp_servers[status.name].retry_interval
        note += (
            f" (recorded {duration(since)} ago; tried again in "
            f"{duration(max(0.0, interval - since))}, or now with --refresh)"
        )
    if status.unmatched_patterns:
        unmatched = f"patterns matching nothing: {', '.join(status.unmatched_patterns)}"
        note = f"{note}; {unmatched}" if note else unmatched
    return note


def manifest_age(status: ServerStatus) -> str:
    """The manifest column: how old the server's tool manifest is, or ``-``."""
    from hermes_core._shown import duration

    return "-" if status.manifest_age is None else duration(status.manifest_age)


def output_lines(status: ServerStatus) -> list[str]:
    """What an unavailable stdio server last wrote to its standard error, as lines to print."""
    from hermes_core._mcp.connection import describe_output

    if status.state != "unavailable" or not status.stderr_tail:
        return []
    header, *lines = describe_output(status.log_path, status.stderr_tail)
    return [f"{status.name}: {header}", *lines]


def print_probe(report: ProbeReport, as_json: bool, log_path: Path | None) -> None:
    """Print what ``hermes mcp test`` found: the tools, kept or filtered, and the time it took."""
    if as_json:
        data = {
            "name": report.server,
            "protocol_version": report.protocol_version,
            "connect_seconds": round(report.connect_seconds, 3),
            "tools": [
                {"name": t.name, "description": t.description, "filtered": not t.kept}
                for t in report.tools
            ],
            "unmatched_patterns": list(report.unmatched_patterns),
            "log": str(log_path) if log_path is not None else None,
        }
        click.echo(json.dumps(data, indent=2))
        return
    kept = sum(1 for tool in report.tools if tool.kept)
    click.echo(
        f"{report.server}: connected and listed {len(report.tools)} tools in "
        f"{report.connect_seconds * 1000:.0f} ms (protocol {report.protocol_version}); "
        f"{kept} kept, {len(report.tools) - kept} filtered"
    )
    rows = [
        (
            f"  {tool.name}{'' if tool.kept else ' [filtered]'}",
            tool.description.splitlines()[0] if tool.description else "",
        )
        for tool in report.tools
    ]
    if rows:
        click.echo(columns(rows))  # a server's names and descriptions: shown escaped
    if log_path is not None:
        click.echo(f"Its standard error is logged in {log_path}.")
    for pattern in report.unmatched_patterns:
        click.echo(f"hermes: warning: the pattern {pattern!r} matches none of its tools", err=True)
