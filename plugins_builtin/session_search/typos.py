"""A misspelled word of a query to the session index: the closest word the index holds.

SQLite's standard build has no ``spellfix1``, and no edit-distance library is among the
dependencies, but FTS5's ``fts5vocab`` table lists the index's vocabulary, with the number of
messages holding each term, and reads a range of it (the terms beginning with two letters) without
scanning the rest. The terms are Porter stems (``deploi`` for ``deployment``, ``postgr`` for
``postgres``), so a word is compared with each stem followed by one of the endings the stemmer
takes off (:data:`ENDINGS`), and the closest such spelling (fewest edits, a transposition being
one, then the stem held by most messages) is searched in a few messages, and the word searched
instead is the one they hold there, as written (lower case): a corrected word is one a
conversation holds, never one made up.

A word is corrected only when no conversation holds it (:func:`correctable` words only): one
edit for a word of 4 or 5 letters, two for longer ones (Elasticsearch's ``AUTO`` fuzziness: a
short word two edits away is most often another word), none for shorter ones (a word of three
letters is most often an acronym, one edit from a word: ``aws``, ``was``; ``AUTO`` starts at
three), for a word with a digit (a version, an id: ``v16`` is not a typo of ``v14``) or for
one of more than :data:`LONGEST` letters. Words of scripts written without spaces are not
corrected: the index holds each of their characters as a word, and a character that matched
nothing is no misspelling of another (one character is a whole different word). Nor are camelCase
identifiers (searched by their parts), nor a word whose first two letters are not the meant
word's (in either order): the vocabulary is read by them, which bounds a correction's cost
over a vocabulary of a million words (docs/performance.md).
"""

from __future__ import annotations

import os
import sqlite3
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Final

from .words import marked_words, unspaced, words_query

_VOCABULARY: Final = "temp.session_vocabulary"
LONGEST: Final = 30
"""Letters of the longest word corrected (``internationalization`` has 20): its cost grows with
the square of its length, and a longer run of letters is no word misspelled."""
_MAX_SPELLED: Final = 100
"""Terms spelled out with each ending at most, the closest first by the cheaper estimate."""
MAX_CORRECTED: Final = 5
"""Words of one query corrected at most (each reads a part of the vocabulary)."""
_MAX_TRIED: Final = 20
"""Spellings of one word searched at most, closest first (a spelling the stemmer cuts
otherwise than its term finds nothing: ``postgrers`` for ``postgress``)."""
ENDINGS: Final = (
    "",
    "e",
    "s",
    "es",
    "ed",
    "er",
    "ers",
    "ing",
    "ings",
    "y",
    "ly",
    "ion",
    "ions",
    "ation",
    "ations",
    "ication",
    "ications",
    "ization",
    "ate",
    "ated",
    "ates",
    "ating",
    "ator",
    "ic",
    "ics",
    "ical",
    "ically",
    "al",
    "ally",
    "ity",
    "ive",
    "ize",
    "izer",
    "izers",
    "icate",
    "icates",
    "icated",
    "icity",
    "ative",
    "atives",
    "alize",
    "alized",
    "alism",
    "ality",
    "ational",
    "tional",
    "ability",
    "ibility",
    "ivity",
    "iveness",
    "fulness",
    "ousness",
    "ement",
    "ements",
    "ators",
    "or",
    "ors",
    "ized",
    "izes",
    "ise",
    "ment",
    "ments",
    "ness",
    "able",
    "ible",
    "ance",
    "ence",
    "ant",
    "ent",
    "ism",
    "ist",
    "ists",
    "ous",
    "ful",
)
"""What the Porter stemmer takes off an English word, alone or chained (``ication``)."""


@dataclass
class _Ending:
    """A beginning of :data:`ENDINGS`: whether it is one, and the letters that follow it."""

    ends: bool = False
    after: dict[str, _Ending] = field(default_factory=dict)


def _ending_tree(endings: Iterable[str]) -> _Ending:
    root = _Ending()
    for ending in endings:
        node = root
        for letter in ending:
            node = node.after.setdefault(letter, _Ending())
        node.ends = True
    return root


_ENDING_TREE: Final = _ending_tree(ENDINGS)


def allowed_edits(word: str) -> int:
    """How many edits a correction of ``word`` may make: by its length (none past
    :data:`LONGEST`)."""
    if len(word) > LONGEST:
        return 0
    return 2 if len(word) >= 6 else 1 if len(word) >= 4 else 0


def correctable(word: str, unspaced: Callable[[str], bool]) -> bool:
    """Whether ``word`` of a query may be corrected: letters only, no camelCase seam after the
    first letter, not of a script ``unspaced`` says is written without spaces."""
    return (
        word.isalpha()
        and allowed_edits(word) > 0
        and word[1:] == word[1:].lower()
        and not unspaced(word)
    )


def folded(word: str) -> str:
    """``word`` as ``unicode61 remove_diacritics 2`` holds it: lower case, no accents."""
    decomposed = unicodedata.normalize("NFKD", word.lower())
    return "".join(c for c in decomposed if unicodedata.category(c) != "Mn")


def corrections(
    connection: sqlite3.Connection, words: list[str], marked: set[str], *, look_up: bool
) -> tuple[dict[str, str], list[str]]:
    """The :func:`correctable` ``words`` of a query no conversation holds (at most
    :data:`MAX_CORRECTED`), each with the :func:`closest` word the index ``messages`` holds,
    and those none was close to. ``marked`` (folded) are held: the words its snippets mark; the
    others are looked up (:func:`holds`) if ``look_up``, else all taken as held by none (the
    search found nothing, and left no session out)."""
    unknown = [word for word in words if correctable(word, unspaced) and folded(word) not in marked]
    if unknown and look_up:
        held = holds(connection, unknown)
        unknown = [word for word, there in zip(unknown, held, strict=True) if not there]
    corrected: dict[str, str] = {}
    for word in unknown[:MAX_CORRECTED]:
        spelling = closest(connection, word)
        if spelling is not None:
            corrected[word] = spelling
    return corrected, [word for word in unknown[:MAX_CORRECTED] if word not in corrected]


def holds(connection: sqlite3.Connection, words: list[str]) -> list[bool]:
    """Whether some message of the index ``messages`` holds each of ``words``, in one
    statement."""
    asked = ", ".join(["EXISTS (SELECT 1 FROM messages WHERE messages MATCH ?)"] * len(words))
    row = connection.execute(f"SELECT {asked}", [words_query([word]) for word in words])
    return [bool(there) for there in row.fetchone()]


def written(connection: sqlite3.Connection, spelling: str) -> list[str]:
    """The words that match ``spelling`` in a few messages, as they hold them."""
    rows = connection.execute(
        "SELECT highlight(messages, 0, char(1), char(2)) FROM messages "
        "WHERE messages MATCH ? LIMIT 3",
        (words_query([spelling]),),
    )
    return [word for (text,) in rows for word in marked_words(text, "\x01", "\x02")]


def closest(connection: sqlite3.Connection, word: str) -> str | None:
    """The word closest to ``word`` (:func:`folded`) a conversation holds, or ``None``: the
    spelling of a term of the index ``messages`` with fewest edits, then of the term most
    messages hold, then as long as the word; of the words a few messages matching that
    spelling hold where it matched (:func:`written`), the closest to ``word`` (the spelling
    ``dynamoal``, of the term ``dynamo``, is ``dynamo`` as written), if it is within the edits
    ``word`` allows (else the next spelling: ``res``, of the term ``re``, is ``re`` as written,
    two edits from ``rest``)."""
    bound = allowed_edits(word)
    typed = folded(word)
    connection.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {_VOCABULARY} USING fts5vocab(main, messages, row)"
    )
    tails = _closest_endings(typed)
    near: list[tuple[int, int, str, list[list[int]]]] = []
    for start in dict.fromkeys((typed[:2], typed[1::-1])):
        terms = connection.execute(
            f"SELECT term, doc FROM {_VOCABULARY} WHERE term >= ? AND term < ? "
            "AND length(term) <= ?",
            (start, start + "\U0010ffff", len(typed) + bound),
        )
        for term, messages, rows in _near_terms(terms, typed, bound):
            # The closest ending after each beginning of the word: a spelling's edits, or one
            # more (a transposition across the seam of stem and ending; a stem's i for y).
            estimate = min(edits + tails[end] for end, edits in enumerate(rows[-1]))
            if estimate <= bound + 1 + term.endswith("i"):
                near.append((estimate, -messages, term, rows))
    ranked = sorted(_spellings(sorted(near, key=lambda one: one[:3]), typed, bound))
    tried = 0
    for *_, spelling in ranked:
        if tried == _MAX_TRIED:
            break
        if spelling == typed:
            continue
        tried += 1
        # A spelling within the bound can be written farther (res, of the term re, as re).
        held = [(_distance(typed, one), one) for one in map(folded, written(connection, spelling))]
        within = [one for one in held if one[0] <= bound]
        if within:
            return min(within)[1]
    return None


def _closest_endings(typed: str) -> list[int]:
    """For each place in ``typed``, the edits from what follows it to the closest of
    :data:`ENDINGS`: one table an ending, both read backwards (its last row holds the edits to
    each end of ``typed``)."""
    backwards = typed[::-1]
    best = [len(typed) - end for end in range(len(typed) + 1)]  # to the ending ""
    for ending in ENDINGS:
        rows = [list(range(len(typed) + 1))]
        for length in range(1, len(ending) + 1):
            rows.append(_next_row(rows, ending[::-1], length, backwards))
        for end, edits in enumerate(reversed(rows[-1])):
            best[end] = min(best[end], edits)
    return best


def _spellings(
    near: list[tuple[int, int, str, list[list[int]]]], typed: str, bound: int
) -> Iterator[tuple[int, int, int, str]]:
    """Each term of ``near`` (by its estimate, fewest edits first) with each ending, and its
    ``i`` as ``y``, within ``bound`` edits of ``typed``: the edits, the term's messages
    (negative), how much longer or shorter than ``typed``, the spelling."""
    for estimate, fewer, term, rows in near[:_MAX_SPELLED]:
        if estimate > near[0][0] + 2:
            return
        bases = [(term, rows)]
        if term.endswith("i"):
            as_y = term[:-1] + "y"
            bases.append((as_y, [*rows[:-1], _next_row(rows, as_y, len(term), typed)]))
        for base, rows_of_base in bases:
            for edits, spelling in _ended(base, list(rows_of_base), _ENDING_TREE, typed, bound):
                yield edits, fewer, abs(len(spelling) - len(typed)), spelling


def _ended(
    spelling: str, table: list[list[int]], node: _Ending, typed: str, bound: int
) -> Iterator[tuple[int, str]]:
    """``spelling`` followed by each ending of ``node`` within ``bound`` edits of ``typed``,
    with its edits; ``table`` holds the rows of ``spelling``'s table. Endings sharing a
    beginning share its rows, and those after a row all of whose edits exceed ``bound`` are
    passed over (no row has fewer edits than the one before)."""
    if min(table[-1]) > bound:
        return
    if node.ends and abs(len(spelling) - len(typed)) <= bound and table[-1][-1] <= bound:
        yield table[-1][-1], spelling
    for letter, after in node.after.items():
        longer = spelling + letter
        table.append(_next_row(table, longer, len(longer), typed))
        yield from _ended(longer, table, after, typed, bound)
        table.pop()


def _near_terms(
    terms: Iterable[tuple[str, int]], typed: str, bound: int
) -> Iterator[tuple[str, int, list[list[int]]]]:
    """The ``terms`` (sorted, with their messages) each beginning of which is within ``bound``
    edits of a beginning of ``typed``, the whole term within one more (a transposition across
    the seam of a stem and its ending), each with its table's rows (the edits from each of its
    beginnings to each of ``typed``'s): what a spelling of the term and an ending within
    ``bound`` edits of ``typed`` needs. Sorted terms share their beginnings with the one
    before: the rows of a shared beginning are reused, and the terms beginning with one too
    far are passed over, as are, before any table, those holding more than ``bound`` + 1
    letters ``typed`` lacks (each is an edit at least)."""
    rows = [list(range(len(typed) + 1))]  # rows[n]: edits from term[:n] to typed's beginnings
    previous = ""
    too_far: str | None = None
    others = dict.fromkeys(map(ord, typed))  # translate() deletes them: typed lacks what is left
    for term, messages in terms:
        if too_far is not None and term.startswith(too_far):
            continue
        if len(term.translate(others)) > bound + 1:
            continue
        too_far = None
        shared = min(len(_common_beginning(previous, term)), len(rows) - 1)
        del rows[shared + 1 :]
        previous = term
        for length in range(shared + 1, len(term) + 1):
            row = _next_row(rows, term, length, typed)
            if min(row) > bound:
                if length == len(term) and min(row) == bound + 1:
                    yield term, messages, [*rows, row]
                too_far = term[:length]
                break
            rows.append(row)
        else:
            yield term, messages, list(rows)


def _common_beginning(first: str, second: str) -> str:
    return os.path.commonprefix([first, second])  # noqa: RUF071 (words, not paths)


def _next_row(rows: list[list[int]], first: str, length: int, second: str) -> list[int]:
    """The row of the optimal string alignment distance's table for ``first[:length]`` (the
    edits from it to each beginning of ``second``), from ``rows``, those of its beginnings."""
    previous = rows[length - 1]
    before = rows[length - 2] if length > 1 else previous
    letter = first[length - 1]
    # No letter of second is "" (the letter before second's first) or equal to "" (first's
    # letter before its first): no transposition there.
    letter_before = first[length - 2] if length > 1 else ""
    current = [length]
    left = length
    other_before = ""
    # Written out rather than with min(): this loop is most of a correction's time.
    for column, other in enumerate(second, 1):
        best = previous[column - 1] + (letter != other)
        if previous[column] < best:
            best = previous[column] + 1
        if left < best:
            best = left + 1
        if letter == other_before and letter_before == other and before[column - 2] < best:
            best = before[column - 2] + 1
        current.append(best)
        left = best
        other_before = other
    return current


def _distance(first: str, second: str) -> int:
    """Edits from ``first`` to ``second`` (a transposition of neighbours being one)."""
    rows = [list(range(len(second) + 1))]
    for length in range(1, len(first) + 1):
        rows.append(_next_row(rows, first, length, second))
    return rows[-1][-1]
