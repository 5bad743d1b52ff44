"""A hermes tool call as an ACP client shows it: its ``kind``, title, ``locations`` and content.

The kind, the title and the arguments shown (``rawInput``) are the real tool's (the calls a
bridge ``tool_call`` carries, never ``tool_call`` itself); the kind comes from one table of
hermes' own tools and, for any other tool, its name: an editor shows reads, edits, searches and
commands each its own way. Paths are made absolute
against the session's working directory, so the editor can open them. A file write or a patch
is shown as a diff, a shell command whole (until the editor's own terminal, embedded in the
call, shows it), as it runs and once it has ended; a session loaded from its transcript shows
its calls through the same :func:`call_start`. An editor renders a call's texts as Markdown
(Zed does), so what is shown as written (a command, code, a result) goes as a fenced code block
(:func:`fenced`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from hermes_core._mcp.manifests import deeper_than
from hermes_core._shown import printable
from hermes_core.agent._events import bridged_calls

if TYPE_CHECKING:
    from acp.schema import (
        ContentToolCallContent,
        FileEditToolCallContent,
        TerminalToolCallContent,
        ToolCallLocation,
        ToolCallStart,
        ToolCallStatus,
        ToolKind,
    )

    from hermes_core.agent._wire import ModelToolCall

    ToolContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent

_KINDS: Final[dict[str, ToolKind]] = {
    "read_file": "read",
    "write_file": "edit",
    "patch": "edit",
    "search_files": "search",
    "tool_search": "search",
    "tool_describe": "read",
    "terminal": "execute",
    "process_manage": "execute",
    "execute_code": "execute",
    "todo": "think",
    "delegate_task": "think",
    "clarify": "think",
}
"""hermes' own tools; other tools are judged by their name (:func:`tool_kind`)."""

_NAME_WORDS: Final[tuple[tuple[tuple[str, ...], ToolKind], ...]] = (
    (("delete", "remove", "unlink", "rmdir"), "delete"),
    (("move", "rename"), "move"),
    (("fetch", "http", "url", "download", "browse"), "fetch"),
    (("search", "find", "grep", "query", "lookup"), "search"),
    (("write", "edit", "patch", "create", "update", "replace"), "edit"),
    (("read", "get", "list", "show", "view", "cat"), "read"),
    (("run", "exec", "shell", "command"), "execute"),
)

_PATH_ARGUMENTS: Final = ("path", "file_path", "filename", "file")
SHOWN_DEPTH: Final = 64
"""How deep the arguments shown to the editor may nest (as the transcript redacts them): the
SDK cannot write a few hundred levels back ("Maximum serialization depth exceeded")."""


def child_call_id(label: str) -> str:
    """The ACP id of the tool call showing the subagent ``label`` (``d1.2``)."""
    return f"subagent-{label}"


def tool_kind(tools: tuple[str, ...]) -> ToolKind:
    """The ACP kind of a call running ``tools`` (the first real tool decides)."""
    name = tools[0] if tools else ""
    known = _KINDS.get(name)
    if known is not None:
        return known
    words = name.rsplit("__", 1)[-1].lower().replace("-", "_").split("_")
    for stems, kind in _NAME_WORDS:
        if any(word in stems for word in words):
            return kind
    return "other"


def arguments_of(text: str) -> dict[str, Any]:
    """The arguments object the model wrote (``{}`` when it is not one, or nests deeper than
    :data:`SHOWN_DEPTH`)."""
    try:
        value = json.loads(text) if text else {}
    except (ValueError, RecursionError):  # not JSON, or nested past what Python reads
        return {}
    if not isinstance(value, dict) or deeper_than(value, SHOWN_DEPTH):
        return {}
    return value


def entries_of(name: str, arguments: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The real calls of one model call: itself, or the entries of a bridge ``tool_call``."""
    calls = bridged_calls(name, arguments)
    if calls is None:
        return [(name, arguments)]
    found: list[tuple[str, dict[str, Any]]] = []
    for entry, inner in calls:
        if isinstance(inner, str):
            inner = arguments_of(inner)
        found.append((entry, inner if isinstance(inner, dict) else {}))
    return found


def absolute(cwd: Path, raw: str) -> str:
    """``raw`` against the session's directory, as the absolute path ACP wants."""
    path = Path(raw).expanduser()
    return str(path if path.is_absolute() else cwd / path)


def title_of(tools: tuple[str, ...], entries: list[tuple[str, dict[str, Any]]]) -> str:
    """What the editor shows for a call: the real tool and the command or path it acts on (in
    a code span: the title is Markdown too), non-printable characters escaped (a carriage
    return must not hide the end of a command)."""
    parts = []
    for name, arguments in entries:
        command = arguments.get("command")
        path = next((arguments[key] for key in _PATH_ARGUMENTS if key in arguments), None)
        if isinstance(command, str) and command:
            parts.append(f"{name}: {code_span(command)}")
        elif isinstance(path, str) and path:
            parts.append(f"{name} {code_span(path)}")
        elif name == "tool_search" and _queries(arguments):
            parts.append(f"{name}: {_queries(arguments)}")
        else:
            parts.append(name)
    return printable("; ".join(parts) or ", ".join(tools))


def _queries(arguments: dict[str, Any]) -> str:
    queries = arguments.get("queries", arguments.get("query"))
    if isinstance(queries, str):
        return queries
    if isinstance(queries, list):
        return ", ".join(str(query) for query in queries)
    return ""


def locations_of(cwd: Path, entries: list[tuple[str, dict[str, Any]]]) -> list[ToolCallLocation]:
    """The files a call touches (the editor follows along), with a line when one is known."""
    from acp.schema import ToolCallLocation

    found: list[ToolCallLocation] = []
    for _name, arguments in entries:
        for key in _PATH_ARGUMENTS:
            value = arguments.get(key)
            if isinstance(value, str) and value:
                offset = arguments.get("offset")
                line = offset if isinstance(offset, int) and offset > 0 else None
                found.append(ToolCallLocation(path=absolute(cwd, value), line=line))
                break
    return found


def old_text(path: str) -> str | None:
    """The file's text now (``None`` when there is none: a write creates it)."""
    try:
        file = Path(path)
        if file.is_file() and file.stat().st_size <= 1_000_000:
            return file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return None


Earlier = Callable[[str], str | None] | None
"""How a file's text before a write is known: a function of its path (``None``: there was no
file), or ``None`` when it is not known (a write told again from a transcript, which keeps
no file's text)."""


def started_content(
    cwd: Path,
    entries: list[tuple[str, dict[str, Any]]],
    earlier: Earlier = old_text,
    *,
    failed: bool = False,
) -> list[ToolContent]:
    """What a call will do, shown before it runs and kept shown after: a diff for a file write
    or a patch (the whole new file against the one before it; the replaced text for a patch),
    the whole command for a shell tool. A write whose file's earlier text is not known shows
    the text written and says so, rather than a diff that would invent one; ``failed``, the
    text it was to write, saying that it failed."""
    from acp import text_block, tool_content, tool_diff_content

    shown: list[ToolContent] = []
    for name, arguments in entries:
        path = arguments.get("path")
        if name == "write_file" and isinstance(path, str):
            target = absolute(cwd, path)
            new_text = str(arguments.get("content", ""))
            if earlier is None:
                state = (
                    "the write failed (its error is below); the text it was to write:"
                    if failed
                    else "its earlier text was not kept, so no diff; the text written:"
                )
                said = f"{target}: {state}"
                shown.append(tool_content(text_block(f"{said}\n{fenced(new_text)}")))
            else:
                shown.append(tool_diff_content(target, new_text, earlier(target)))
        elif name == "patch" and isinstance(path, str):
            old, new = arguments.get("old_text"), arguments.get("new_text")
            if isinstance(old, str) and isinstance(new, str):
                shown.append(tool_diff_content(absolute(cwd, path), new, old))
        elif (line := command_line(arguments)) is not None:
            shown.append(tool_content(text_block(line)))
        elif name == "execute_code" and isinstance(arguments.get("code"), str):
            shown.append(tool_content(text_block(fenced(arguments["code"], "python"))))
    return shown


def command_line(arguments: dict[str, Any]) -> str | None:
    """How a shell command is shown in its call (``$ cmd``, fenced); ``None`` when there is
    none."""
    command = arguments.get("command")
    return fenced(f"$ {command}") if isinstance(command, str) else None


def code_span(text: str) -> str:
    """``text`` as a Markdown code span, shown as written on one line: its backticks outnumber
    every run of them in ``text`` (CommonMark closes a span only on a run of the same length),
    with a space inside each end when ``text`` starts or ends with a backtick or a space."""
    runs = {len(run) for run in re.findall(r"`+", text)}
    ticks = "`" * next(n for n in range(1, len(runs) + 2) if n not in runs)
    pad = " " if text[:1] in ("`", " ") or text[-1:] in ("`", " ") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def fenced(text: str, language: str = "") -> str:
    """``text`` as a Markdown fenced code block, which an editor shows as written: its line
    breaks kept, and ``*``, ``_``, ``#`` or ``<b>`` in a command or a file not taken for
    formatting (nor an approval's command shown with parts of it hidden). The fence is longer
    than any run of backticks in ``text``, which cannot close it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = text.removesuffix("\n")
    return f"{fence}{language}\n{body}\n{fence}"


def command_lines(call: ModelToolCall) -> frozenset[str]:
    """The ``$ cmd`` lines ``call`` shows (a bridge ``tool_call``'s entries unwrapped): what an
    embedded terminal of the editor, which shows its command itself, replaces."""
    entries = entries_of(call.name, arguments_of(call.arguments))
    return frozenset(line for _name, arguments in entries if (line := command_line(arguments)))


def call_start(
    cwd: Path,
    call: ModelToolCall,
    tools: tuple[str, ...],
    tool_call_id: str,
    status: ToolCallStatus,
    *,
    earlier: Earlier = old_text,
    result: str | None = None,
) -> ToolCallStart:
    """The ``tool_call`` showing ``call`` (running ``tools``), live and told again alike:
    title, kind, locations, the real tool's arguments (:func:`raw_input_of`) and what it does
    (:func:`started_content`), then ``result`` when it has ended."""
    from acp.schema import ToolCallStart

    arguments = arguments_of(call.arguments)
    entries = entries_of(call.name, arguments)
    content = started_content(cwd, entries, earlier, failed=status == "failed")
    if result is not None:
        content += result_content(result)
    return ToolCallStart(
        session_update="tool_call",
        tool_call_id=tool_call_id,
        title=title_of(tools, entries),
        kind=tool_kind(tools),
        status=status,
        locations=locations_of(cwd, entries) or None,
        content=content or None,
        raw_input=raw_input_of(entries),
    )


def raw_input_of(entries: list[tuple[str, dict[str, Any]]]) -> Any:
    """A call's ``rawInput``: the arguments its tool runs with (for a bridge ``tool_call``, the
    arguments of the call it carries, as hooks and approvals see them, never the bridge's own
    ``{name, arguments}``); for a batch of several, each one's name and arguments."""
    if len(entries) == 1:
        return entries[0][1]
    return [{"name": name, "arguments": arguments} for name, arguments in entries]


def result_content(text: str) -> list[ToolContent]:
    """A finished call's text, as the model reads it (:func:`fenced`)."""
    from acp import text_block, tool_content

    return [tool_content(text_block(fenced(text)))] if text else []
