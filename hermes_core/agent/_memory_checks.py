"""What the ``memory`` tool refuses to write, and why: the one place for the rule.

Whatever is written to the memory goes into the system prompt of every later session, so an
entry is an instruction the agent will read with its own authority. A tool's output (a web
page, a file, an MCP server's answer) can ask the model to "remember" something; these rules
keep such text out:

- prompt-injection shapes: text addressed to the model that would override its instructions
  (``ignore previous instructions``, ``you are now``, chat-template markers such as
  ``<|im_start|>`` or ``[INST]``, a fake ``system:`` turn), or that tells it to hide things
  from the user or send data away;
- invisible Unicode: format characters (zero-width spaces and joiners, bidirectional
  overrides, tag characters), private-use and control characters, which show the user one
  text and the model another; and the Unicode line and paragraph separators (U+2028, U+2029),
  which the line-start shapes below would not see but the file provider reads back as new
  lines;
- secrets: anything the redaction rules of the transcripts and the activity log
  (:mod:`hermes_core._redaction`) would hide; a key written to memory would be in every prompt.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

from hermes_core._redaction import redact_text

_INJECTION: Final[tuple[tuple[str, re.Pattern[str]], ...]] = tuple(
    (why, re.compile(pattern, re.IGNORECASE | re.MULTILINE))
    for why, pattern in (
        (
            "it tells the model to ignore its instructions",
            r"\b(ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}\b(previous|prior|above|"
            r"earlier|all|your|system|the)\b[^.\n]{0,20}\b(instructions?|prompts?|rules|"
            r"guidelines|directives|messages)\b",
        ),
        ("it gives the model a new identity", r"\byou are now\b|\bfrom now on,? you (are|will)\b"),
        ("it claims to be new instructions", r"\b(new|updated|real) (system )?instructions?\s*:"),
        ("it speaks as the system prompt", r"\bsystem prompt\b|^\s*(system|assistant)\s*:"),
        (
            "it holds a chat-template marker",
            r"<\|[a-z_]+\|>|\[/?INST\]|<</?SYS>>|</?(system|assistant|instructions?)>"
            r"|^#{1,3}\s*(system|instruction)",
        ),
        (
            "it tells the model to hide something from the user",
            r"\b(do not|don't|never)\s+(tell|inform|show|mention|reveal)\s+(this\s+|it\s+|"
            r"anything\s+)?(to\s+)?the\s+user\b|\b(hide|conceal)\b[^.\n]{0,30}\bfrom the user\b",
        ),
        (
            "it tells the model to send data away",
            r"\b(curl|wget|fetch|post|send|upload|exfiltrate)\b[^\n]{0,60}"
            r"(https?://|\$\{?[A-Z_]*(KEY|TOKEN|SECRET)|\.env\b|\.ssh/|authorized_keys)",
        ),
    )
)
"""Each shape with the reason given when it matches (``^`` is the start of any line)."""

_PIPED: Final = "it pipes a download into a shell"
_SEGMENT: Final = re.compile(r"[^\n|]*")
_DOWNLOADER: Final = re.compile(r"\b(curl|wget)\b", re.IGNORECASE)
_SHELL: Final = re.compile(r"\s*(ba|z)?sh\b", re.IGNORECASE)


def _pipes_a_download(text: str) -> bool:
    """Whether ``text`` pipes ``curl`` or ``wget`` into a shell (``curl URL | sh``).

    Segment by segment (between line breaks and ``|``), so each character is looked at a few
    times: one pattern (a downloader's name, then anything but a line break or ``|`` up to a
    ``|``) scanned to the end of its line after every ``curl``, and 100,000 characters of
    ``curl curl ...`` held the GIL for 4 s."""
    for segment in _SEGMENT.finditer(text):
        end = segment.end()
        if (
            text.startswith("|", end)
            and _SHELL.match(text, end + 1)
            and _DOWNLOADER.search(text, segment.start(), end)
        ):
            return True
    return False


_ALLOWED_CONTROLS: Final = frozenset("\n\t")


def _invisible(text: str) -> str | None:
    for position, char in enumerate(text):
        category = unicodedata.category(char)
        if category in ("Zl", "Zp"):
            name = unicodedata.name(char)
            return f"it holds U+{ord(char):04X} ({name}) at {position}: use a plain new line"
        if category in ("Cf", "Co", "Cs") or (category == "Cc" and char not in _ALLOWED_CONTROLS):
            name = unicodedata.name(char, "a control character")
            return f"it holds an invisible character, U+{ord(char):04X} ({name}) at {position}"
    return None


def refusal(text: str) -> str | None:
    """Why ``text`` may not be written to the memory, or ``None`` when it may; in time linear
    in its length (the memory's budget is checked first: text over it is never scanned)."""
    invisible = _invisible(text)
    if invisible is not None:
        return invisible
    for why, pattern in _INJECTION:
        if pattern.search(text):
            return f"{why} (a prompt-injection shape)"
    if _pipes_a_download(text):
        return f"{_PIPED} (a prompt-injection shape)"
    if redact_text(text) != text:
        return "it holds what looks like a secret (a key, a token, a password)"
    return None
