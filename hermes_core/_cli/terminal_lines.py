"""The one reader of a terminal for ``hermes chat`` and ``hermes run``: every line typed goes
to whoever is waiting for one, so nothing fights over stdin.

- While an approval prompt, a ``clarify`` question or an MCP server's form is open, a line is
  its answer: each prompt reads from a pipe of its own that this reader feeds
  (:meth:`TerminalLines.answering`), and the existing terminal prompts
  (:class:`~hermes_core._approvals.prompt.TerminalPrompt`,
  :class:`~hermes_core._approvals.questions.TerminalQuestions`,
  :class:`~hermes_core._mcp.terminal_form.TerminalForms`) read that pipe as they would read a
  terminal. Stopping the turn closes the pipe: the prompt ends as at end of input (a
  denial, no answer), so no thread is left reading.
- Otherwise, while a turn runs, a line goes to ``on_busy``; when idle, to :meth:`next_line`
  (the next message).
- ``/stop`` goes to ``on_stop`` first, whoever waits (``hermes chat``: it stops the running
  turn, and so ends an open prompt as a denial).

Without a ``history`` the terminal stays in its ordinary line mode: the person edits a line
as usual and it arrives when they press Enter. On a terminal, lines that arrive together (a
paste: each line follows the last within :data:`QUIET` seconds) are one *burst*, handed on
once it ends: to the waiting :meth:`next_line` as one text (its lines joined with newlines), to
``on_busy`` likewise; an open prompt takes no burst of several lines (it says so and goes
on waiting: a pasted ``a`` must not allow a call always). A paste's last line without a
newline is still on the edit line when the burst ends; it is taken with the burst
(:func:`edit_line`). ``/stop`` is a command on a line of its own only. Not a terminal (a pipe,
a file), each line is handed on as it comes.

With a ``history`` (``hermes chat``) the terminal leaves its line mode for the chat's own line
editor (:class:`~hermes_core._cli.line_editor.LineEditor`: arrow keys, Emacs keys, Up/Down and
Ctrl-R through the history, Tab completing a command while no prompt is open); its signals stay
on, so Ctrl-C is SIGINT as before (Ctrl-Z gives the shell the terminal in its line mode, ``fg``
sets the editor's mode again; a resize, SIGWINCH, draws the line again at the new width).
The bursts are the same: the editor hands on each line at Enter,
and its line not yet sent is the edit line a burst takes. A bracketed paste (the terminal marks
it) is one burst, ended at its end mark.
The messages handed on are added to the history (those ``on_busy`` does not send too), never
an answer to a prompt. Output printed through
:class:`~hermes_core._cli.edited_output.EditedOutput` first erases the line being edited, which
is drawn again once the output's line ends (or at the next key).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import select
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_core._cli.chat_history import ChatHistory
    from hermes_core._cli.line_editor import LineEditor


STOP = "/stop"
"""The line that stops the running turn (``hermes chat``), even at an open prompt."""
QUIET = 0.05
"""Seconds without a new line that end a burst. A pty hands a paste over one line a read,
the next already there; a person takes far longer between two Enters."""


_EDITING: list[TerminalLines] = []
"""The readers whose terminal is out of its line mode (:func:`restore_terminals`)."""


def restore_terminals() -> None:
    """Put every terminal the line editor took back in its line mode: before an exit that
    does not unwind (a second Ctrl-C), which would leave the shell a terminal that echoes
    nothing."""
    for lines in list(_EDITING):
        lines.close()


class TerminalLines:
    """Reads lines from ``fd`` in the running event loop and hands each to the open prompt,
    the waiting :meth:`next_line`, or ``on_busy`` (which returns whether it took the line; a
    line nobody took waits for the next :meth:`next_line`)."""

    def __init__(
        self,
        fd: int,
        on_busy: Callable[[str], bool] | None = None,
        output: IO[str] | None = None,
        history: ChatHistory | None = None,
        commands: Sequence[str] = (),
    ) -> None:
        self._fd = fd
        self._history = history
        self._commands = tuple(commands)
        self.editor: LineEditor | None = None
        """The line editor, with a ``history`` on a terminal (from :meth:`start` on)."""
        self._mode: list[Any] | None = None  # the terminal's mode before the editor's
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._output = sys.stderr if output is None else output
        self._burst: list[str] | None = [] if os.isatty(fd) else None  # None: no bursts
        self._quiet: asyncio.TimerHandle | None = None
        self.on_busy = on_busy
        self.on_stop: Callable[[], bool] | None = None
        """Called for a ``/stop`` line before anyone else sees it (an open prompt included);
        returns whether it stopped something (else the line goes on as any other)."""
        self._buffer = bytearray()
        self._pipes: list[int] = []  # write ends of the open prompts' pipes, oldest first
        self._waiter: asyncio.Future[str | None] | None = None
        self._lines: list[str] = []
        self.ended = False
        self.turn_stopped = False
        """Whether the open prompts were ended by :meth:`stop_turn` (not by end of input)."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._commanding = True  # whether the line awaited may be a command (Tab completes)

    def start(self) -> None:
        """Start reading (in the running loop)."""
        self._loop = asyncio.get_running_loop()
        if self._history is not None and self._burst is not None:
            self._edit()
        try:
            self._loop.add_reader(self._fd, self._readable)
        except PermissionError:  # a regular file (``< messages.txt``): it never blocks
            self._loop.call_soon(self._read_file)

    def _read_file(self) -> None:
        while not self.ended:
            self._readable(file=True)

    def close(self) -> None:
        """Stop reading; open prompts end as at end of input."""
        if self._quiet is not None:
            self._quiet.cancel()
            self._quiet = None
        if self._loop is not None and not self.ended:
            self._loop.remove_reader(self._fd)
            self.ended = True
        self._restore()
        self.stop_prompts()

    def _edit(self) -> None:
        """Leave the terminal's line mode for the editor (echo off, signals on), marking
        pastes."""
        import termios

        from hermes_core._cli.line_editor import LineEditor

        assert self._history is not None
        assert self._loop is not None
        try:
            self._mode = termios.tcgetattr(self._fd)
            self._keys_mode()
        except (termios.error, OSError):
            self._mode = None
            return
        self.editor = LineEditor(self._echo, self._columns, self._history.entries)
        self.editor.commands = self._completed
        _EDITING.append(self)
        self._echo("\x1b[?2004h")
        self._loop.add_signal_handler(signal.SIGTSTP, self._suspend)
        self._loop.add_signal_handler(signal.SIGWINCH, self.editor.resized)

    def _completed(self) -> tuple[str, ...]:
        """The commands Tab completes now: none while a prompt is open (its answer is no
        command), nor on a line :meth:`next_line` awaits as no command."""
        return () if self._pipes or not self._commanding else self._commands

    def _keys_mode(self) -> None:
        """Set the editor's mode on the terminal: keys as typed, no echo, signals on."""
        import termios

        assert self._mode is not None
        mode = list(self._mode)
        mode[3] = mode[3] & ~(termios.ICANON | termios.ECHO | termios.IEXTEN)
        mode[6] = list(mode[6])
        mode[6][termios.VMIN], mode[6][termios.VTIME] = 1, 0
        termios.tcsetattr(self._fd, termios.TCSANOW, mode)

    def _suspend(self) -> None:
        """Ctrl-Z: the terminal in its line mode again and the chat stopped, as by default;
        taken up again (``fg``: a shell hands it back in the shell's own mode), the editor's
        mode set again and the line drawn again, as readline does."""
        import termios

        if self._mode is None or self.editor is None or self._loop is None:
            return
        self.editor.suspend()
        self._echo("\x1b[?2004l")
        with contextlib.suppress(termios.error, OSError):
            termios.tcsetattr(self._fd, termios.TCSANOW, self._mode)
        self._loop.remove_signal_handler(signal.SIGTSTP)
        # To this thread: it stops before the call returns (not in an orphaned process group,
        # which the kernel does not stop: then the chat just goes on).
        signal.pthread_kill(threading.get_ident(), signal.SIGTSTP)
        self._loop.add_signal_handler(signal.SIGTSTP, self._suspend)
        with contextlib.suppress(termios.error, OSError):
            self._keys_mode()
        self._echo("\x1b[?2004h")
        self.editor.resume()

    def _restore(self) -> None:
        import termios

        if self._mode is None:
            return
        mode, self._mode = self._mode, None
        if self.editor is not None:
            self.editor.close()
        if self._loop is not None and not self._loop.is_closed():
            self._loop.remove_signal_handler(signal.SIGTSTP)
            self._loop.remove_signal_handler(signal.SIGWINCH)
        if self in _EDITING:
            _EDITING.remove(self)
        self._echo("\x1b[?2004l")
        with contextlib.suppress(termios.error, OSError):
            termios.tcsetattr(self._fd, termios.TCSANOW, mode)

    def _echo(self, text: str) -> None:
        with contextlib.suppress(OSError):
            os.write(self._fd, text.encode("utf-8", "replace"))

    def _columns(self) -> int:
        try:
            return os.get_terminal_size(self._fd).columns
        except OSError:
            return 80

    def _readable(self, *, file: bool = False) -> None:
        try:
            data = os.read(self._fd, 4096)
        except OSError:
            data = b""
        if self.editor is not None and data:
            if not self._typed(self._decoder.decode(data)):
                return
        elif not data:
            self._ended(file=file)
            return
        else:
            self._split(data)
        if self._burst and self._loop is not None:
            if self._quiet is not None:
                self._quiet.cancel()
            self._quiet = self._loop.call_later(QUIET, self._quiet_ended)

    def _typed(self, keys: str) -> bool:
        """What the editor made of ``keys`` taken on; ``False`` at its end of input."""
        assert self.editor is not None
        for kind, text in self.editor.feed(keys):
            if kind == "end":
                self._ended()
                return False
            if kind == "line":
                self._take(text)
            else:  # a bracketed paste: exactly one burst, its last line included
                self._end_burst()
                for line in text.split("\n"):
                    self._take(line)
                self._end_burst()
        return True

    def _ended(self, *, file: bool = False) -> None:
        self.ended = True
        if self._loop is not None and not file:
            self._loop.remove_reader(self._fd)
        if self._buffer:
            self._take(self._buffer.decode("utf-8", "replace"))
            self._buffer.clear()
        self._end_burst()
        self.stop_prompts()
        self._wake(None)

    def _split(self, data: bytes) -> None:
        self._buffer.extend(data.replace(b"\r\n", b"\n").replace(b"\r", b"\n"))
        while b"\n" in self._buffer:
            line, _, rest = bytes(self._buffer).partition(b"\n")
            self._buffer[:] = rest
            self._take(line.decode("utf-8", "replace"))

    def _take(self, line: str) -> None:
        if self._burst is None:
            self._line(line)
        else:
            self._burst.append(line)

    def _quiet_ended(self) -> None:
        self._quiet = None
        if self.ended or select.select([self._fd], [], [], 0)[0]:
            return  # more is coming: the reader sets the next quiet interval
        if self._pipes or (self._waiter is not None and not self._waiter.done()):
            # Whoever waits takes the paste's last line, even without its newline.
            if self.editor is not None:
                if self.editor.text:
                    self._take(self.editor.take())
                self._end_burst()
                return
            tail = edit_line(self._fd)
            if tail:
                self._split(tail)
                if self._buffer:
                    self._take(self._buffer.decode("utf-8", "replace"))
                    self._buffer.clear()
                self._say("")  # the cursor is still after the line the terminal echoed
        self._end_burst()

    def _end_burst(self) -> None:
        if self._quiet is not None:
            self._quiet.cancel()
            self._quiet = None
        if not self._burst:
            return
        burst, self._burst = self._burst, []
        while len(burst) > 1 and not burst[-1].strip():
            burst.pop()
        while len(burst) > 1 and not burst[0].strip():
            burst.pop(0)
        if len(burst) == 1:
            self._line(burst[0])
        elif self._pipes:
            self._say(
                f"hermes: {len(burst)} pasted lines are not an answer: type the answer on one line"
            )
        else:
            self._hand_on("\n".join(burst))

    def _say(self, line: str) -> None:
        from hermes_core._approvals.prompt import write_flushed

        write_flushed(self._output, line + "\n")

    def _line(self, line: str) -> None:
        if line.strip() == STOP and self.on_stop is not None and self.on_stop():
            return
        if self._pipes:
            with contextlib.suppress(OSError):
                os.write(self._pipes[0], line.encode("utf-8") + b"\n")
        else:
            self._hand_on(line)

    def _hand_on(self, line: str) -> None:
        self._remember(line)  # also one ``on_busy`` does not send: Up brings it back
        if self._waiter is not None and not self._waiter.done():
            self._wake(line)
        elif self.on_busy is None or not self.on_busy(line):
            self._lines.append(line)

    def _remember(self, line: str) -> None:
        # A paste of several lines is not recalled: the editor edits one line.
        if self._history is not None and "\n" not in line:
            self._history.add(line)

    def _wake(self, line: str | None) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(line)

    async def next_line(self, *, command: bool = True) -> str | None:
        """The next line typed outside a prompt, or ``None`` at end of input; with
        ``command=False`` one that is never a command (a message's next line): Tab
        completes none on it."""
        if self._lines:
            return self._lines.pop(0)
        if self.ended:
            return None
        self._waiter = asyncio.get_running_loop().create_future()
        self._commanding = command
        try:
            return await self._waiter
        finally:
            self._waiter, self._commanding = None, True

    @contextlib.contextmanager
    def answering(self) -> Iterator[int]:
        """A descriptor the lines typed in the block are written to (a prompt reads it); at
        end of input, or when :meth:`stop_prompts` is called, it reads as ended."""
        read_end, write_end = os.pipe()
        self.turn_stopped = False
        if self.ended:
            os.close(write_end)
        else:
            self._pipes.append(write_end)
        try:
            yield read_end
        finally:
            self._close_pipe(write_end)
            os.close(read_end)

    def _close_pipe(self, write_end: int) -> None:
        if write_end in self._pipes:
            self._pipes.remove(write_end)
            os.close(write_end)

    def discard_line(self) -> bool:
        """Throw away the line being typed at the awaited prompt (Ctrl-C there, as in a
        shell); ``False`` when none is typed, or no prompt of the chat's awaits one."""
        if self.editor is None or self._waiter is None or self._pipes:
            return False
        return self.editor.discard()

    def stop_turn(self) -> None:
        """End every open prompt because the person stopped the turn (Ctrl-C, ``/stop``)."""
        self.turn_stopped = True
        self.stop_prompts()

    def stop_prompts(self) -> None:
        """End every open prompt as at end of input (the user stopped the turn)."""
        for write_end in list(self._pipes):
            self._close_pipe(write_end)


def edit_line(fd: int) -> bytes:
    """What is on the terminal ``fd``'s edit line, not yet sent with Enter (a paste's last
    line without a newline), taken from it; ``b""`` when nothing is, or ``fd`` is not a
    terminal in its line mode. In line mode the kernel hands over whole lines only: the mode
    is left for one read that does not wait, then set back at once (nothing typed is lost)."""
    import termios

    try:
        mode = termios.tcgetattr(fd)
    except (termios.error, OSError):
        return b""
    if not mode[3] & termios.ICANON:
        return b""
    raw = list(mode)
    raw[3] = mode[3] & ~termios.ICANON
    raw[6] = list(mode[6])
    raw[6][termios.VMIN] = 0
    raw[6][termios.VTIME] = 0
    try:
        termios.tcsetattr(fd, termios.TCSANOW, raw)
        return os.read(fd, 65536)
    except (termios.error, OSError):
        return b""
    finally:
        with contextlib.suppress(termios.error, OSError):
            termios.tcsetattr(fd, termios.TCSANOW, mode)
