"""A keyword query that names a service nobody has: ``hubspot add contact`` over a catalog
without HubSpot.

A model writes a tool search as ``<service> <action> <object>``. Such a query names an absent
service when

- its first word, edge punctuation aside, is held by no tool (the lexical side's unmatched
  words with no hits) and answered by none of its best hits (no equivalent, no compound),
- that word is not itself an action, and the second word is one: an action is a word of three
  letters or more, not an article, demonstrative or pronoun, that starts some tool's
  description in this catalog ("Create an issue", "Lists the refunds", "Sends
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
import string
from collections import Counter
from collections.abc import Collection, Iterable, Sequence

from hermes_core.search import Admission, SearchBackend, ToolDocument
from hermes_search_hybrid.text import identifier_words

__all__ = [
    "MAX_WORDS",
    "ActionWords",
    "action_word",
    "asks_for_absent_service",
    "names_absent_service",
]

MAX_WORDS = 8
"""A longer query is a request in words, not ``<service> <action> <object>``: never judged."""

_FIRST_WORD = re.compile(r"\W*([A-Za-z]+)")
_LETTERS = re.compile(r"[A-Za-z]+")
_EDGES = "".join(sorted({*string.punctuation} - {"_"}))
_MIN_STEM = 3
_NOT_ACTIONS = frozenset({"the", "this", "that", "these", "those", "its", "you", "your", "our"})
"""Words a description may start with that are no action ("The ...", "This tool ...")."""


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
    are the words of the query that no tool holds (in any case); ``known`` the words of the
    tools searched (the catalog's, and those of a query's extra candidates)."""
    words = _judged_words(query)
    if not words:
        return False
    first, second = words[0], words[1]
    if not (_LETTERS.fullmatch(first) and _LETTERS.fullmatch(second)):
        return False
    if first.lower() not in {word.lower() for word in unmatched}:
        return False
    if any(table.is_action(first) for table in known):
        return False
    if not any(table.is_action(second) for table in known):
        return False
    pieces = {piece for word in words for piece in (word.lower(), *identifier_words(word))}
    return not any(table.names_a_server(piece) for piece in pieces for table in known)


def asks_for_absent_service(
    query: str,
    lexical: SearchBackend,
    catalog: ActionWords,
    *,
    admission: Admission = "off",
    extra: Sequence[ToolDocument] = (),
    candidates: int = 50,
) -> bool:
    """:func:`names_absent_service` over the ``lexical`` backend's index, whose words are
    ``catalog``, and a query's ``extra`` candidates: the words no tool holds, less those that
    one of its best ``candidates`` hits under ``admission`` answers through an equivalent or a
    compound (``repo`` for ``repositories``). The extra candidates' words are counted, and the
    hits searched, only when what comes before says yes."""
    if not _judged_words(query):  # before any lexical work: most requests are longer
        return False
    unknown = set(lexical.unmatched_words(query, [], extra))
    if not unknown:
        return False
    known = [catalog]
    if extra:
        known.append(ActionWords())
        known[-1].add(extra)
    if not names_absent_service(query, unknown, known):
        return False
    hits = lexical.search(query, candidates, admission, extra)
    return names_absent_service(
        query, unknown & set(lexical.unmatched_words(query, hits, extra)), known
    )


def _judged_words(query: str) -> list[str]:
    """The words of ``query``, edge punctuation stripped, when it has two to
    :data:`MAX_WORDS` of them; else none."""
    words = [word.strip(_EDGES) for word in query.split()]
    return words if 2 <= len(words) <= MAX_WORDS else []


def _actions_of(document: ToolDocument) -> list[str]:
    found = _FIRST_WORD.match(document.description)
    if found is None or len(found.group(1)) < _MIN_STEM or found.group(1).lower() in _NOT_ACTIONS:
        return []
    return [action_word(found.group(1))]


def _server_words(document: ToolDocument) -> set[str]:
    group = document.group
    if not group or group == ToolDocument.OTHER_GROUP:
        return set()
    return {group.lower(), *identifier_words(group)}
