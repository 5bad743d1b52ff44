"""``hermes tools``: list, assemble, search, describe and call tools through the real host.

``list``, ``assemble``, ``search`` and ``describe`` only read: they start no MCP server whose
tool manifest is fresh, nor one whose connect failed within its ``retry_interval``, and
``--refresh`` reconnects every server first. ``call`` registers the known tools at once and
starts only the servers its call needs: its own server (``mcp__NAME__...``), the servers a
search needs, those whose tools a script calls; a core tool such as ``read_file`` starts none.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, TypeVar

import click

from hermes_core._cli.host_runs import run_with_host
from hermes_core._cli.output import columns, did_you_mean, echo_shown
from hermes_core._cli.tool_results import (
    print_bridge,
    print_json,
    print_result,
    print_search,
    result_payload,
)
from hermes_core._shown import printable, printable_lines

if TYPE_CHECKING:
    from hermes_core._approvals.prompt import Answer, ApprovalRequest, PromptTransport
    from hermes_core._config import Config
    from hermes_core._host import Host
    from hermes_core._plugins.plugin_tools import ToolOverride
    from hermes_core._tools import Tool, ToolResult

T = TypeVar("T")


def refresh_option(function: Callable[..., Any]) -> Callable[..., Any]:
    """``--refresh``: reconnect every MCP server instead of answering from tool manifests."""
    return click.option(
        "--refresh",
        is_flag=True,
        help="Reconnect every MCP server and list its tools again instead of answering from "
        "the cached tool manifests (and retry servers whose connect failed).",
    )(function)


@click.group()
def tools() -> None:
    """List, assemble, search, describe and call tools."""


@tools.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON objects.")
@refresh_option
def list_command(as_json: bool, refresh: bool) -> None:
    """Every tool of the host: name, toolset, source, whether it may be deferred."""
    from hermes_core._plugins.plugin_tools import tool_overrides
    from hermes_core.search._deferral import is_deferrable

    marks: dict[str, str] = {}

    async def work(host: Host) -> list[dict[str, Any]]:
        search_config = host.config.tools.tool_search
        overrides = tool_overrides(host.registry, host.plugins)
        marks.update((name, found.mark) for name, found in overrides.items())
        return [
            {
                "name": tool.name,
                "toolset": tool.toolset,
                "source": tool.source,
                "overrides": _overridden(overrides.get(tool.name)),
                "deferrable": is_deferrable(tool, search_config),
                "annotations": asdict(tool.annotations),
                "description": tool.description,
            }
            for tool in host.tool_search.live_tools.tools()
        ]

    rows = run_with_host(work, read_only=True, refresh=refresh)
    if as_json:
        print_json(rows)
        return
    from hermes_core.search._listing import short_description

    table = [("NAME", "TOOLSET", "SOURCE", "DEFERRABLE", "DESCRIPTION")]
    for row in rows:
        first = short_description(str(row["description"]))
        source = row["source"]
        if row["name"] in marks:
            source += f" ({marks[row['name']]})"
        table.append((row["name"], row["toolset"], source, _yes(row["deferrable"]), first))
    click.echo(columns(table))


def _overridden(found: ToolOverride | None) -> dict[str, str | None] | None:
    """``tools list --json``'s ``overrides``: whose tool of the same name this one replaced."""
    return None if found is None else {"owner": found.owner, "source": found.owner_source}


def _yes(flag: object) -> str:
    return "yes" if flag else "no"


@tools.command("assemble")
@click.option("--context-length", type=click.IntRange(min=1), help="The model's context (tokens).")
@click.option(
    "--format",
    "style",
    type=click.Choice(["neutral", "openai", "anthropic"]),
    default="neutral",
    show_default=True,
    help="The tools as that API takes them (neutral: name, description, parameters).",
)
@click.option("--json", "as_json", is_flag=True, help="Print statistics and the tool array.")
@refresh_option
def assemble_command(context_length: int | None, style: str, as_json: bool, refresh: bool) -> None:
    """The tool array one model request would get, with its statistics."""

    async def work(host: Host) -> dict[str, Any]:
        assembly = host.assemble(context_length, host.new_session())
        result: dict[str, Any] = assembly.as_dict(style)  # type: ignore[arg-type]
        result["listing"] = assembly.listing
        return result

    result = run_with_host(work, read_only=True, refresh=refresh)
    listing = result.pop("listing")
    if as_json:
        print_json(result)
        return
    stats = {key: value for key, value in result.items() if key != "tools"}
    click.echo(columns([(f"{key}:", str(value)) for key, value in stats.items()]))
    names = [_tool_name(tool) for tool in result["tools"]]
    click.echo(f"tools ({len(names)}): {', '.join(names)}")
    if listing:
        click.echo("")
        # Servers' descriptions: shown, never obeyed (--json has the listing exact).
        click.echo(printable_lines(listing))


def _tool_name(rendered: dict[str, Any]) -> str:
    function = rendered.get("function")
    return str(function["name"] if isinstance(function, dict) else rendered["name"])


@tools.command("search")
@click.argument("queries", nargs=-1, required=True)
@click.option("--limit", type=click.IntRange(min=1), help="Hits per query.")
@click.option("--json", "as_json", is_flag=True, help="Print the tool_search result.")
@refresh_option
def search_command(
    queries: tuple[str, ...], limit: int | None, as_json: bool, refresh: bool
) -> None:
    """Search the deferred tools, as the model does with tool_search (one query per argument)."""
    if not any(query.strip() for query in queries):
        blank = (
            "the query is blank"
            if len(queries) == 1
            else f"every query is blank ({len(queries)} given)"
        )
        raise click.BadParameter(
            f"{blank}: give at least one keyword, e.g. hermes tools search 'create issue'",
            param_hint="'QUERIES...'",
        )
    arguments: dict[str, Any] = {"queries": list(queries)}
    if limit is not None:
        arguments["limit"] = limit
    result, config = _bridge_call("tool_search", arguments, refresh=refresh)
    cap = config.tools.tool_search.max_search_limit
    if limit is not None and limit > cap:  # the bridge clamps a model's limit without a word
        click.echo(
            f"hermes: note: --limit {limit} is above tools.tool_search.max_search_limit "
            f"({cap}): at most {cap} tools a query",
            err=True,
        )
    payload = result_payload(result)
    if as_json or result.is_error:
        print_bridge(result, payload, as_json=as_json)
        return
    print_search(payload)
    remote = payload.get("connectors")
    if isinstance(remote, dict):
        reason = remote.get("reason")
        message = remote.get("message")
        # An `error` was printed as a warning already; the others are said only here.
        what = f": {printable(str(message))}" if message and reason != "error" else ""
        click.echo(
            f"connectors: {remote.get('status')} ({reason}){what}. "
            f"{payload.get('hint', '')}".rstrip(),
            err=True,
        )


@tools.command("describe")
@click.argument("names", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@refresh_option
def describe_command(names: tuple[str, ...], as_json: bool, refresh: bool) -> None:
    """Show the description and parameters of tools: deferred ones as tool_describe gives them,
    and the tools in the model's tool list too (which tool_describe refuses: the model has
    their schemas already). Exit status 1 when a name is not found."""

    async def work(host: Host) -> tuple[ToolResult, dict[str, Any]]:
        async with host.session(**_session_fields(host)) as session:
            result = await host.dispatch("tool_describe", {"names": list(names)}, session)
            payload = result_payload(result)
            if not result.is_error:
                in_list = {tool.name: tool for tool in host.assemble(None, session).tools}
                payload = _with_tool_list(payload, names, in_list)
                if payload.get("not_found"):
                    # A name a plugin provides is under errors, with why (tool_describe).
                    known = [tool.name for tool in host.tool_search.live_tools.tools()]
                    payload["hints"] = {
                        name: hint
                        for name in payload["not_found"]
                        if (hint := did_you_mean(name, known))
                    }
            return result, payload

    result, payload = run_with_host(work, read_only=True, refresh=refresh)
    hints: dict[str, str] = payload.pop("hints", {})
    failed = result.is_error or bool(payload.get("not_found") or payload.get("errors"))
    if as_json or result.is_error:
        print_bridge(result, payload, as_json=as_json)
    else:
        for name, described in payload.get("tools", {}).items():
            where = " (in the model's tool list)" if described.get("visible") else ""
            # A server's text: shown, never obeyed (an escape sequence, a bidi override).
            description = printable_lines(str(described.get("description", "")))
            click.echo(f"{printable(name)}{where}\n  " + description.replace("\n", "\n  "))
            schema = json.dumps(described.get("parameters", {}), indent=2, ensure_ascii=False)
            click.echo("  parameters: " + printable_lines(schema).replace("\n", "\n  "))
        # A plugin's manifest, a gateway's error: text from outside.
        for name in payload.get("not_found", []):
            echo_shown(f"{name}: not found.{hints.get(name, '')}", err=True)
        for name, message in payload.get("errors", {}).items():
            echo_shown(f"{name}: {message}", err=True)
    if failed:
        sys.exit(1)


def _with_tool_list(
    payload: dict[str, Any], names: Sequence[str], in_list: Mapping[str, Tool]
) -> dict[str, Any]:
    """``payload`` of tool_describe with the tools it refused because they are in the model's
    tool list (``in_list``, bridge tools included) described from there, marked ``visible``,
    every described tool in the order ``names`` gave."""
    errors = dict(payload.get("errors", {}))
    described = dict(payload.get("tools", {}))
    for name in list(errors):
        tool = in_list.get(name)
        if tool is not None:
            del errors[name]
            described[name] = {
                "description": tool.description,
                "parameters": dict(tool.parameters),
                "visible": True,
            }
    order = [name.strip() for name in names]
    ordered = {name: described[name] for name in order if name in described}
    result = {**payload, "tools": {**ordered, **described}, "errors": errors}
    return {key: value for key, value in result.items() if value}


@tools.command("call")
@click.argument("name")
@click.argument("arguments_json", metavar="[ARGS_JSON]", required=False, default="{}")
@click.option(
    "--yes",
    is_flag=True,
    help="Approve this one call without asking (not the calls it makes: a script's calls "
    "are approved on their own).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the whole result as JSON.")
def call_command(name: str, arguments_json: str, yes: bool, as_json: bool) -> None:
    """Call a tool through the whole pipeline: hooks, approvals, the handler.

    A deferred tool or a connector tool goes through tool_call, as the model would call it.
    When standard input is not a terminal, nobody can answer an approval prompt:
    approvals.non_interactive applies.
    """
    from hermes_core._cli.progress import QuietWhileAsking, call_progress_line
    from hermes_core._mcp.elicitation import answering_forms
    from hermes_core._mcp.terminal_form import TerminalForms
    from hermes_core._progress import listening_to_progress
    from hermes_core.connectors._naming import is_connector_name

    try:
        arguments = json.loads(arguments_json) if arguments_json.strip() else {}
    except ValueError as exc:
        raise click.BadParameter(f"not JSON: {exc}", param_hint="ARGS_JSON") from None

    asked: set[str] = set()  # the tools a prompt was asked about: where --yes would approve

    async def work(host: Host) -> ToolResult:
        approved = name if yes else None
        fields = _session_fields(host, approve=approved, asked=asked)
        fields["prompt"] = QuietWhileAsking(fields["prompt"], line)  # not drawn over
        async with host.session(**fields) as session:
            if name in host.tool_search.view().deferred_by_name or is_connector_name(name):
                payload = {"name": name, "arguments": arguments}
                return await host.dispatch("tool_call", payload, session)
            # An unknown name a plugin provides is explained in the result (Availability).
            return await host.dispatch(name, arguments, session)

    # Only an MCP tool's own server is waited for (its name says which); the others are not
    # started unless the call needs them (a search, a script calling their tools).
    parts = name.split("__")
    server = parts[1] if len(parts) >= 3 and parts[0] == "mcp" else None
    line = call_progress_line()
    # An upstream server's form is asked on the terminal; without one nobody can answer, and
    # the servers are not told that someone could.
    forms = (
        QuietWhileAsking(TerminalForms(sys.stdin, sys.stderr), line) if sys.stdin.isatty() else None
    )
    try:
        # Standard output is the result's: what a hook or plugin prints while the call runs
        # (a print() left in a handler) goes to standard error (run_with_host).
        with listening_to_progress(line), answering_forms(forms):
            result = run_with_host(
                work, wait_only=frozenset({server} if server else ()), hold_background=True
            )
    finally:
        if line is not None:
            line.close()
    print_result(result, as_json=as_json)
    if result.error_code == "DENIED" and not yes and not sys.stdin.isatty() and name in asked:
        click.echo("hermes: no terminal to ask on: --yes approves this one call", err=True)
    if result.error_code == "UNKNOWN_TOOL" and name in _conversation_tools():
        click.echo(
            f"hermes: {name} is a tool of the agent's conversations, not of the host: the model "
            "uses it in hermes chat, hermes run and hermes acp",
            err=True,
        )
    if result.is_error:
        sys.exit(1)


def _conversation_tools() -> frozenset[str]:
    """The tools an agent's conversation adds to its session (memory, delegate_task)."""
    from hermes_core.agent._delegate_tool import TOOL_NAME as DELEGATE
    from hermes_core.agent._memory import TOOL_NAME as MEMORY

    return frozenset({MEMORY, DELEGATE})


def _bridge_call(
    name: str, arguments: dict[str, Any], *, refresh: bool
) -> tuple[ToolResult, Config]:
    """``name`` (a bridge tool that only reads) called once in a read-only host, and the
    configuration it ran under."""

    async def work(host: Host) -> tuple[ToolResult, Config]:
        async with host.session(**_session_fields(host)) as session:
            return await host.dispatch(name, arguments, session), host.config

    return run_with_host(work, read_only=True, refresh=refresh)


class _ApproveOnce:
    """The answer of ``--yes``: the named call is approved, once, nothing is remembered; every
    other request (the calls an ``execute_code`` script makes) goes to ``then``."""

    def __init__(self, name: str | None, then: PromptTransport, asked: set[str]) -> None:
        self.name = name
        self.then = then
        self.asked = asked
        self._given = False

    @property
    def interactive(self) -> bool:
        """Whether ``then`` has a person to ask."""
        return bool(getattr(self.then, "interactive", False))

    async def ask(self, request: ApprovalRequest, timeout: float) -> Answer | None:
        # The named call is asked about before its handler runs, so before any call it makes.
        if not self._given and request.tool_name == self.name:
            self._given = True
            return "once"
        self.asked.add(request.tool_name)
        return await self.then.ask(request, timeout)


def _session_fields(
    host: Host, *, approve: str | None = None, asked: set[str] | None = None
) -> dict[str, Any]:
    """Who answers approval prompts: the terminal, or the non-interactive rule; with
    ``approve`` (``--yes``) the call of that tool is approved once before either is asked.
    ``asked`` collects the tools either was asked about."""
    from hermes_core._approvals.prompt import NonInteractivePrompt, TerminalPrompt

    interactive = sys.stdin.isatty()
    prompt: PromptTransport
    if interactive:
        prompt = TerminalPrompt(sys.stdin, sys.stderr)
    else:
        prompt = NonInteractivePrompt(host.config.approvals.non_interactive)
    if approve is not None or asked is not None:
        prompt = _ApproveOnce(approve, prompt, set() if asked is None else asked)
    return {"interactive": interactive, "prompt": prompt}
