"""What ``hermes run`` and ``hermes chat`` print while a conversation runs, and how ``run``
exits.

Plain: the answer's text streams to stdout; each tool call is a short line on stderr naming
the real tool (``-> weather_now {"city": "Lyon"}``, then ``<- ok`` or the error code), as are
subagents starting and ending (``=> d1.1 started: GOAL``, ``<= d1.1 completed``), retries and
the reason the turn stopped (``hermes run``: once, at the run's end), and a compaction of the
conversation (``hermes: compacted 42 messages (about 96,000 tokens) into a summary of 800
tokens``). ``--json``: one
``event_json`` object per line on stdout and nothing else there; a turn that ends without an
answer says why on stderr too.

A reasoning model's thinking is shown only with ``--show-thinking`` (it can run to thousands
of lines): dimmed on a terminal, escaped as the answer is, on stderr (``run``) or above the
answer (``chat``); with ``--json`` as ``thinking`` events, which are otherwise left out.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any, Final, TypeVar

import click

from hermes_core._cli.output import ShownStream
from hermes_core._shown import printable

if TYPE_CHECKING:
    from hermes_core.agent._events import AgentEvent, Finished
    from hermes_core.agent._wire import ModelToolCall

EXIT_STATUS: Final[dict[str, int]] = {
    "answer": 0,
    "error": 1,
    "max_turns": 3,
    "max_tokens": 3,
    "max_seconds": 3,
    "interrupted": 130,
}
"""``hermes run``'s exit status by ``Finished.stop`` (2 is a configuration problem, raised
before any turn)."""

_SHOWN_ARGUMENTS: Final = 200
F = TypeVar("F", bound=Callable[..., Any])
_DIM, _UNDIM = "\x1b[2m", "\x1b[0m"


def call_lines(call: ModelToolCall) -> list[str]:
    """``-> name {arguments}`` for each real tool a call runs (the calls a ``tool_call``
    carries), the arguments cut to a line."""
    shown: list[tuple[str, Any]] = [(call.name, call.arguments)]
    if call.name == "tool_call":
        try:
            arguments = json.loads(call.arguments)
        except (ValueError, RecursionError):  # not JSON, or nested past what Python reads
            arguments = None
        calls = arguments.get("calls") if isinstance(arguments, dict) else None
        if isinstance(calls, list) and calls:
            shown = [
                (str(entry.get("name")), entry.get("arguments", {}))
                for entry in calls
                if isinstance(entry, dict)
            ] or shown
    lines = []
    for name, arguments in shown:
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        if len(text) > _SHOWN_ARGUMENTS:
            text = f"{text[:_SHOWN_ARGUMENTS]}..."
        lines.append(f"-> {printable(name)} {printable(text)}")
    return lines


def thinking_option(where: str) -> Callable[[F], F]:
    """``--show-thinking`` (the keyword ``show_thinking``), its help saying ``where``."""
    return click.option(
        "--show-thinking",
        is_flag=True,
        help=f"Show the model's thinking (a reasoning model's, as it streams), dimmed, {where}.",
    )


class EventPrinter:
    """Prints a conversation's events: as JSON lines (``as_json``) or plain. ``quiet_answer``
    leaves out the stop line of a turn that ended with an answer (``hermes chat``).
    ``show_thinking``: the model's thinking too, on ``thinking_out`` (stderr by default)."""

    def __init__(
        self,
        *,
        as_json: bool = False,
        quiet_answer: bool = False,
        out: IO[str] | None = None,
        err: IO[str] | None = None,
        show_thinking: bool = False,
        thinking_out: IO[str] | None = None,
    ) -> None:
        self.as_json = as_json
        self.quiet_answer = quiet_answer
        self.show_thinking = show_thinking
        self._out = out or sys.stdout
        self._err = err or sys.stderr
        self._mid_line = False
        self._retries = 0
        self._answer = ShownStream(self._out)
        self._thinking_out = thinking_out or self._err
        self._thought = ShownStream(self._thinking_out)
        self._thinking = False  # a thought is being shown, its line not ended
        self._thought_ends_line = False

    @classmethod
    def for_chat(cls, show_thinking: bool) -> EventPrinter:
        """``hermes chat``'s: no stop line after an answer; the thinking above the answer."""
        return cls(quiet_answer=True, show_thinking=show_thinking, thinking_out=sys.stdout)

    def show(self, event: AgentEvent) -> None:
        """Print one event."""
        from hermes_core.agent._events import (
            ChildCompacted,
            ChildFinished,
            ChildStarted,
            Compacted,
            Finished,
            Retrying,
            ToolFinished,
            ToolStarted,
            event_json,
        )
        from hermes_core.agent._wire import TextDelta, ThinkingDelta

        if isinstance(event, ThinkingDelta):
            if self.show_thinking and self.as_json:
                self._out.write(json.dumps(event_json(event), ensure_ascii=False) + "\n")
                self._out.flush()
            elif self.show_thinking:
                self._think(event.text)
            return
        self._end_thought()
        if self.as_json:
            self._out.write(json.dumps(event_json(event), ensure_ascii=False) + "\n")
            self._out.flush()
            if isinstance(event, Retrying):
                self._retries += 1
            elif isinstance(event, Finished) and event.stop != "answer":
                self.finish(event)  # why the exit status is not 0, where a job's log shows it
        elif isinstance(event, TextDelta):
            self._out.write(self._answer.add(event.text))
            self._out.flush()
            if event.text:
                self._mid_line = not event.text.endswith("\n")
        elif isinstance(event, ToolStarted):
            self.end_line()  # the model's message before its calls is done, piped or not
            for line in call_lines(event.call):
                self.note(line)
        elif isinstance(event, ToolFinished):
            outcome = "ok" if event.error_code is None else event.error_code
            first = event.text.strip().split("\n", 1)[0][:_SHOWN_ARGUMENTS]
            self.note(f"<- {outcome}" + (f": {printable(first)}" if event.is_error else ""))
        elif isinstance(event, ChildStarted):
            goal = event.goal.strip().split("\n", 1)[0][:_SHOWN_ARGUMENTS]
            self.note(f"=> {event.label} started: {printable(goal)}")
        elif isinstance(event, ChildFinished):
            self.note(f"<= {event.label} {event.status}")
        elif isinstance(event, ChildCompacted):
            self.note(f"=> {event.label} {event.compacted.said}")
        elif isinstance(event, Retrying):
            self._retries += 1
            self.note(
                f"hermes: the model request failed ({event.error}); retrying in "
                f"{event.wait:g} s (attempt {event.attempt} of {event.attempts})"
            )
        elif isinstance(event, Compacted):
            self.note(f"hermes: {event.said}")
        elif isinstance(event, Finished):
            self.finish(event)

    def _think(self, text: str) -> None:
        if not self._thinking:
            self.end_line()  # a thought after the text before a tool call begins its own line
            self._thinking = True
            if self._thought.terminal:
                self._thinking_out.write(_DIM)
        self._thinking_out.write(self._thought.add(text))
        self._thinking_out.flush()
        self._thought_ends_line = text.endswith("\n") if text else self._thought_ends_line

    def _end_thought(self) -> None:
        """End a thought being shown: what it held back, the dimming undone, its line ended."""
        if not self._thinking:
            return
        self._thinking = False
        ending = self._thought.end() + (_UNDIM if self._thought.terminal else "")
        if not self._thought_ends_line:
            ending += "\n"
        self._thinking_out.write(ending)
        self._thinking_out.flush()

    def finish(self, event: Finished) -> None:
        """End the answer's line and say why the turn stopped."""
        self.end_line()
        retries, self._retries = self._retries, 0
        if event.stop == "answer" and self.quiet_answer and not event.detail:
            return
        spent = f"{event.turns} model request{'s' if event.turns != 1 else ''}"
        if retries:
            spent += f" in {event.turns + retries} attempts"
        used = event.turn_usage  # as the requests: subagents' included
        none = used.unreported
        if none and not used.total:
            spent += ", tokens not reported"
        elif none:
            requests = f"{none} request{'s' if none != 1 else ''}"
            spent += f", at least {used.total:,} tokens: {requests} reported none"
        else:
            spent += f", {used.total:,} tokens"
        if used.cached_tokens:
            spent += f", {used.cached_tokens:,} cached"
        if event.stop == "error":
            self.note(f"hermes: error: {event.detail} ({spent})")
        elif event.stop == "answer" and not event.detail:
            self.note(f"hermes: stop: answer ({spent})")
        else:
            self.note(f"hermes: stop: {event.stop}: {event.detail} ({spent})")

    def turn_ended(self, event: Finished) -> None:
        """A turn the run goes on after (its subagents' results are sent next): its answer's
        line ended, and why it ended when that was not a whole answer; nothing on stdout and
        no stop line (the run's last turn has it, counting every turn)."""
        self.end_line()
        if event.stop != "answer" or event.detail:
            self.note(
                f"hermes: turn ended: {event.stop}: {event.detail}; "
                "the run goes on with its subagents' results"
            )

    def note(self, line: str) -> None:
        """A line on stderr, after the answer's line is ended (so it does not run into it)."""
        if self._out.isatty():
            self.end_line()
        self._err.write(line + "\n")
        self._err.flush()

    def end_line(self) -> None:
        """End the answer's line: what is held back (a joiner waiting for its next character)
        is shown, escaped when it is not printable alone, so an interrupted text loses none."""
        self._end_thought()
        self._out.write(self._answer.end())  # a joiner held back: nothing follows it now
        if self._mid_line:
            self._out.write("\n")
            self._out.flush()
            self._mid_line = False


def exit_status(event: Finished | None) -> int:
    """``hermes run``'s exit status for the turn's end (1 when it never ended)."""
    return 1 if event is None else EXIT_STATUS[event.stop]
