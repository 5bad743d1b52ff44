"""Sections of the system prompt contributed when a session starts.

A :data:`PromptSection` is called once, when a conversation is made, with its session; what it
returns is appended to the system prompt (``None`` or empty: nothing). The prompt is then fixed
for the whole conversation: a section that changes later (the memory the agent writes) shows in
the next session, and the prompt prefix stays cacheable. A section that fails is left out and
logged: the conversation still starts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hermes_core._session import Session

log = logging.getLogger(__name__)

PromptSection = Callable[["Session"], "str | None"]
"""Called with a new conversation's session: the text to append to its system prompt, or
``None``."""


def with_sections(base: str, sections: Iterable[PromptSection], session: Session) -> str:
    """``base`` followed by what each of ``sections`` returns for ``session``, a blank line
    between them."""
    parts = [base]
    for section in sections:
        try:
            text = section(session)
        except Exception:  # one broken section must not stop the conversation
            log.warning("a system prompt section failed; left out", exc_info=True)
            continue
        if text and text.strip():
            parts.append(text.strip())
    return "\n\n".join(parts)
