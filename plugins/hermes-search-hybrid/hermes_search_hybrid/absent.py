"""A keyword query that names a service nobody has: ``stripe refund charge`` over a catalog
without Stripe.

A model writes a tool search as ``<service> <action> <object>``. Such a query names an absent
service when

- its first word is held by no tool (the lexical side's unmatched words with no hits),
- that word is not itself an action, and the second word is one: an action is a word that
  starts some tool's description in this catalog ("Create an issue", "Lists the refunds", "Sends
  a message"), third persons folded (``lists`` and ``list`` are one, see :func:`action_word`),
- and no word of the query is a server's name or one of its words (``standup create zoom
  meeting`` names Zoom).

Then the hybrid backend answers no match (``absent_service_no_match``): the similarity of
"quickbooks create invoice" to Square's ``CreateInvoice`` is high, and no similarity threshold
tells the two apart (docs/tool-search.md, "The threshold"). A query that starts with its
argument ("torvalds followers") or with a verb no tool uses ("store memory", "forget entity
old_project") has no action second and is ranked as any other.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Sequence

from hermes_core import ToolDocument
from hermes_search_hybrid.text import identifier_words

__all__ = ["MAX_WORDS", "ActionWords", "action_word", "names_absent_service"]

MAX_WORDS = 8
"""A longer query is a request in words, not ``<service> <action> <object>``: never judged."""

_FIRST_WORD = re.compile(r"\W*([A-Za-z]+)")
_LETTERS = re.compile(r"[A-Za-z]+")
_MIN_STEM = 3


def action_word(word: str) -> str:
    """``word`` lowercased, folded so that a verb and its third person meet: a final ``s``
    (not ``ss``), then a final ``e``, taken off while three letters remain. ``Creates`` and
    ``create`` -> ``creat``, ``Lists`` -> ``list``, ``searches`` -> ``search``, ``address``
    stays."""
    folded = word.lower()
    if folded.endswith("s") and not folded.endswith("ss") and len(folded) > _MIN_STEM:
        folded = folded[:-1]
    if folded.endswith("e") and len(folded) > _MIN_STEM:
        folded = folded[:-1]
    return folded


class ActionWords:
    """The actions of a catalog (the first word of each tool's description, as
    :func:`action_word` folds it) and its servers' name words, counted by tool so that removing
    a tool takes its words back out."""

    def __init__(self) -> None:
        self._actions: Counter[str] = Counter()
        self._servers: Counter[str] = Counter()

    def add(self, documents: Iterable[ToolDocument]) -> None:
        """Count the words of ``documents``."""
        for document in documents:
            self._actions.update(_actions_of(document))
            self._servers.update(_server_words(document))

    def remove(self, documents: Iterable[ToolDocument]) -> None:
        """Take the words of ``documents`` (counted before) back out: a word no tool has any
        more counts 0, and is no action or server word."""
        for document in documents:
            self._actions.subtract(_actions_of(document))
            self._servers.subtract(_server_words(document))

    def is_action(self, word: str) -> bool:
        """Whether ``word`` starts a tool's description (folded as :func:`action_word`)."""
        return self._actions[action_word(word)] > 0

    def names_a_server(self, word: str) -> bool:
        """Whether ``word`` is a server's name or one of its words."""
        return self._servers[word.lower()] > 0


def names_absent_service(
    query: str, unmatched: Collection[str], known: Sequence[ActionWords]
) -> bool:
    """Whether ``query`` names a service nobody has (see the module docstring); ``unmatched``
    are the words of the query that no tool holds, lowercased; ``known`` the words of the
    tools searched (the catalog's, and those of a query's extra candidates)."""
    words = query.split()
    if not 2 <= len(words) <= MAX_WORDS:
        return False
    first = _LETTERS.fullmatch(words[0])
    second = _LETTERS.fullmatch(words[1])
    if first is None or second is None or words[0].lower() not in unmatched:
        return False
    if any(table.is_action(words[0]) for table in known):
        return False
    if not any(table.is_action(words[1]) for table in known):
        return False
    return not any(
        table.names_a_server(piece)
        for word in words
        for piece in _LETTERS.findall(word)
        for table in known
    )


def _actions_of(document: ToolDocument) -> list[str]:
    found = _FIRST_WORD.match(document.description)
    return [action_word(found.group(1))] if found else []


def _server_words(document: ToolDocument) -> set[str]:
    group = document.group
    if not group or group == ToolDocument.OTHER_GROUP:
        return set()
    return {group.lower(), *identifier_words(group)}
