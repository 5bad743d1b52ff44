"""An upstream MCP server's form asked on the terminal, field by field.

The person first sees whose question it is and chooses to answer, decline or cancel; then each
field is asked with its title, description, choices (an ``enum`` or ``oneOf`` list) and
default (Enter takes it); a value that does not fit (not a choice, not a number, out of range,
too short) is asked again. A field that looks like a secret (a password, token or key) is read
without echo, with a note that servers should not ask for those in forms. End of input cancels;
nobody answering within ``timeout`` seconds declines.
"""

from __future__ import annotations

import contextlib
import re
import termios
import time
from collections.abc import Iterator, Mapping
from typing import IO, TYPE_CHECKING, Any, Final

from hermes_core._approvals.prompt import read_line, write_flushed
from hermes_core._mcp.elicitation import labelled
from hermes_core._shown import printable

if TYPE_CHECKING:
    import mcp_types  # imported when a form is asked (see hermes_core._mcp.elicitation)

__all__ = ["TerminalForms"]

_SECRET: Final = re.compile(r"pass(word|phrase)?|secret|token|api[ _-]?key|credential", re.I)
_YES: Final = {"y": True, "yes": True, "true": True, "n": False, "no": False, "false": False}
_FORM_TIMEOUT: Final = 600.0


class _Cancelled(Exception):
    pass


class TerminalForms:
    """Asks upstream forms on a terminal: reads lines from ``input`` (a tty's descriptor) and
    writes to ``output``."""

    def __init__(self, input: IO[Any] | int, output: IO[str], timeout: float = _FORM_TIMEOUT):
        self._fd = input if isinstance(input, int) else input.fileno()
        self._output = output
        self._timeout = timeout

    async def answer(
        self, server: str, form: mcp_types.ElicitRequestFormParams
    ) -> mcp_types.ElicitResult | None:
        """Ask the form in a worker thread (the terminal is read with a deadline)."""
        import anyio.to_thread

        deadline = time.monotonic() + self._timeout
        return await anyio.to_thread.run_sync(
            self._ask, server, form, deadline, abandon_on_cancel=True
        )

    def _ask(
        self, server: str, form: mcp_types.ElicitRequestFormParams, deadline: float
    ) -> mcp_types.ElicitResult:
        import mcp_types

        self._write(f"\n\rhermes: {labelled(server, form.message)}\n")
        try:
            while True:
                choice = self._line("[a]nswer, [d]ecline, [c]ancel: ", deadline).strip().lower()
                if choice in ("a", "answer"):
                    break
                if choice in ("d", "decline"):
                    return mcp_types.ElicitResult(action="decline")
                if choice in ("c", "cancel"):
                    return mcp_types.ElicitResult(action="cancel")
            schema = form.requested_schema
            required = set(schema.get("required") or ())
            content: dict[str, Any] = {}
            for name, spec in (schema.get("properties") or {}).items():
                if isinstance(spec, Mapping):
                    value = self._field(str(name), spec, str(name) in required, deadline)
                    if value is not None:
                        content[str(name)] = value
        except _Cancelled:
            self._write("\nend of input: cancelled\n")  # Ctrl-D echoes no line end
            return mcp_types.ElicitResult(action="cancel")
        except TimeoutError:
            self._write("\nno answer: declined\n")
            return mcp_types.ElicitResult(action="decline")
        return mcp_types.ElicitResult(action="accept", content=content)

    def _field(self, name: str, spec: Mapping[str, Any], required: bool, deadline: float) -> Any:
        title = printable(str(spec.get("title") or name))
        description = spec.get("description")
        if description:
            self._write(f"  {printable(str(description))}\n")
        choices = _choices(spec)
        kind = spec.get("type")
        hint = ""
        if choices:
            hint = f" (one of: {', '.join(choices)})"
        elif kind == "boolean":
            hint = " (y/n)"
        default = spec.get("default")
        if default is not None:
            shown = ("y" if default else "n") if isinstance(default, bool) else str(default)
            hint += f" [{printable(shown)}]"
        secret = kind == "string" and bool(_SECRET.search(f"{name} {title}"))
        if secret:
            self._write(
                "  (this looks like a secret: it is not echoed; servers should not ask for "
                "passwords or keys in a form)\n"
            )
        prompt = f"{title}{hint}{'' if required else ' (optional)'}: "
        while True:
            with _no_echo(self._fd) if secret else contextlib.nullcontext():
                text = self._line(prompt, deadline)
            if secret:
                self._write("\n")
            text = text.strip()
            if not text:
                if default is not None:
                    return default
                if not required:
                    return None
                prompt = f"{title} is required: "
                continue
            value, problem = _parse(text, spec, choices)
            if problem is None:
                return value
            prompt = f"{problem}; {title}{hint}: "

    def _line(self, prompt: str, deadline: float) -> str:
        self._write(prompt)
        line = read_line(self._fd, deadline)
        if line is None:
            raise TimeoutError
        if line == "\x04":
            raise _Cancelled
        return line

    def _write(self, text: str) -> None:
        write_flushed(self._output, text)


def _choices(spec: Mapping[str, Any]) -> list[str]:
    """The values a single-choice field takes (``enum``, or ``oneOf`` consts)."""
    if isinstance(spec.get("enum"), list):
        return [str(value) for value in spec["enum"]]
    options = spec.get("oneOf") or spec.get("anyOf")
    if isinstance(options, list):
        return [str(o["const"]) for o in options if isinstance(o, Mapping) and "const" in o]
    items = spec.get("items")
    if spec.get("type") == "array" and isinstance(items, Mapping):
        return _choices(items)
    return []


def _parse(text: str, spec: Mapping[str, Any], choices: list[str]) -> tuple[Any, str | None]:
    """The value of a typed answer, or why it does not fit."""
    kind = spec.get("type")
    if kind == "array":
        picked = [part.strip() for part in text.split(",") if part.strip()]
        wrong = [part for part in picked if choices and part not in choices]
        if wrong:
            return None, f"please answer some of: {', '.join(choices)} (comma-separated)"
        return picked, None
    if choices:
        if text not in choices:
            return None, f"please answer one of: {', '.join(choices)}"
        return text, None
    if kind == "boolean":
        if text.lower() not in _YES:
            return None, "please answer y or n"
        return _YES[text.lower()], None
    if kind in ("integer", "number"):
        try:
            number: float | int = int(text) if kind == "integer" else float(text)
        except ValueError:
            return None, f"please answer {'a whole number' if kind == 'integer' else 'a number'}"
        low, high = spec.get("minimum"), spec.get("maximum")
        if (low is not None and number < low) or (high is not None and number > high):
            return None, f"please answer a number from {low} to {high}"
        return number, None
    shortest, longest = spec.get("minLength"), spec.get("maxLength")
    if (shortest is not None and len(text) < shortest) or (
        longest is not None and len(text) > longest
    ):
        return None, f"please answer {shortest or 0} to {longest or 'any number of'} characters"
    return text, None


@contextlib.contextmanager
def _no_echo(fd: int) -> Iterator[None]:
    try:
        before = termios.tcgetattr(fd)
    except termios.error:  # not a terminal after all
        yield
        return
    quiet = list(before)
    quiet[3] &= ~termios.ECHO
    termios.tcsetattr(fd, termios.TCSANOW, quiet)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, before)
