"""How ``hermes sessions show`` prints a transcript's message: ``you>`` and ``assistant>``
lines, ``-> tool {arguments}`` for each real tool a call ran, ``<- tool:`` and the first lines
of its result, each line escaped as text from outside is."""

from __future__ import annotations

import click

from hermes_core._cli.output import echo_shown
from hermes_core.agent._wire import Message

_RESULT_LINES = 4
_LINE_SHOWN = 200


def shown_message(message: Message, tools: dict[str, str]) -> None:
    """Print ``message``; ``tools`` maps the calls of the message before it to the real tools
    they ran (their results name them), and is filled with this one's."""
    from hermes_core._cli.agent_events import call_lines
    from hermes_core.agent._compaction import replaces_earlier
    from hermes_core.agent._events import real_tools
    from hermes_core.agent._requests import NO_OUTPUT

    if replaces_earlier(message):
        click.echo("[compaction: the messages before this summary were replaced by it]")
    if message.role == "tool":
        # The newline ending a command's output starts no line of its own; a result of no
        # text is shown as the model got it (worded_results).
        text = message.content.rstrip("\n")
        lines = text.split("\n") if text and not text.isspace() else [NO_OUTPUT]
        cut = [_clipped(line) for line in lines[:_RESULT_LINES]]
        if len(lines) > _RESULT_LINES:
            more = len(lines) - _RESULT_LINES
            cut.append(f"... ({more} more line{'' if more == 1 else 's'})")
        failed = " (failed)" if message.is_error else ""
        name = tools.get(message.tool_call_id or "") or message.name or "tool"
        echo_shown(_indented(f"<- {name}{failed}: ", cut, 3))
        return
    tools.clear()  # results follow their call's message at once: only its calls are kept
    tools.update((call.id, ", ".join(real_tools(call))) for call in message.tool_calls)
    label = "you" if message.role == "user" else message.role
    if message.content.strip():
        echo_shown(_indented(f"{label}> ", message.content.split("\n"), len(label) + 2))
    for call in message.tool_calls:
        for line in call_lines(call):
            click.echo(line)


def _indented(first: str, lines: list[str], width: int) -> str:
    """``lines`` after ``first``, the later ones indented by ``width`` spaces (a blank one
    left blank, no spaces at a line's end)."""
    later = (f"{' ' * width}{line}" if line else "" for line in lines[1:])
    return "\n".join([f"{first}{lines[0]}" if lines[0] else first.rstrip(), *later])


def _clipped(line: str) -> str:
    return line if len(line) <= _LINE_SHOWN else f"{line[:_LINE_SHOWN]}... ({len(line)} characters)"
