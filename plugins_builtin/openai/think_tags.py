"""A reasoning model's thinking left in its text as ``<think>...</think>``.

A server that does not parse a reasoning model's thinking out of its answer (vLLM without
``--reasoning-parser``, older Ollama, some proxies) streams it as text: a ``<think>`` block
that opens the answer. It is no part of the answer: it is thinking, as what a server sends in
``reasoning_content`` is (:meth:`ThinkTags.thought`, shown only where the user asked). Only a
block that opens the answer is thinking; a ``<think>`` later in the text is the model's text.
A template that writes the opening tag itself (the answer then holds only ``</think>``) is
not recognised: the answer would have to be held back whole to tell.
"""

from __future__ import annotations

__all__ = ["CLOSE", "OPEN", "ThinkTags"]

OPEN, CLOSE = "<think>", "</think>"


class ThinkTags:
    """Splits streamed text into the answer, shown as it comes, and the thinking block that
    opens it, taken apart (:meth:`thought`)."""

    def __init__(self) -> None:
        self._held = ""
        self._thought: list[str] = []
        self._blank: list[str] = []
        """Blank text at the start (a block may still open after it), in pieces joined once:
        a piece added to the text held so far copied it (60,000 pieces took 19 s)."""
        self._state = "start"  # then "text", or "thinking", "after" (the block) and "text"

    def feed(self, text: str) -> str:
        """The part of ``text`` (with what was held before) that is answer and can be shown."""
        if self._state == "text":
            return text
        if self._state == "after":  # the blank lines between the block and the answer
            shown = text.lstrip()
            self._state = "text" if shown else "after"
            return shown
        if self._state == "start" and not self._held and not text.strip():
            self._blank.append(text)
            return ""
        if self._blank:
            text, self._blank = "".join(self._blank) + text, []
        self._held += text
        if self._state == "start":
            begun = self._held.lstrip()
            if OPEN.startswith(begun) and len(begun) < len(OPEN):
                return ""  # could still open a block
            if not begun.startswith(OPEN):
                self._state = "text"
                shown, self._held = self._held, ""
                return shown
            self._state, self._held = "thinking", begun[len(OPEN) :]
        at = self._held.find(CLOSE)
        if at < 0:
            kept = len(CLOSE) - 1  # what could begin the closing tag
            if len(self._held) > kept:
                self._thought.append(self._held[:-kept])
                self._held = self._held[-kept:]
            return ""
        self._thought.append(self._held[:at])
        rest, self._held = self._held[at + len(CLOSE) :], ""
        self._state = "after"
        return self.feed(rest)

    def finish(self) -> str:
        """The text still held at the end: what only looked like the start of a block (or,
        in a block cut short, the end of its thinking: :meth:`thought`)."""
        held, self._held = "".join(self._blank) + self._held, ""
        self._blank = []
        if self._state == "thinking":
            self._thought.append(held)
        return held if self._state == "start" else ""

    def thought(self) -> str:
        """The block's thinking found since the last call (``""`` for none)."""
        thought, self._thought = "".join(self._thought), []
        return thought
