"""How users phrase a request, read before it is ranked: its message is an argument, and a
question's "how far" asks for a distance.

**The message.** A request often carries the text it wants sent or filed: "open an issue saying
the login button is broken", "ping #deploys that the release is out". Those words are an
argument of the tool, and ranked like the rest they pick whichever sibling's description shares
them (``update_issue`` for "broken"). :func:`action_words` drops, in each sentence, the words
from a *clause marker* (:data:`CLAUSE_MARKERS`; ``that`` only where it opens a clause, before a
pronoun or an article, not as a determiner: "reply to that thread" keeps "thread") to the
sentence's end, when at least :data:`MIN_KEPT` words that are not function words come before it
in that sentence. "about" is no marker: in "tell me about the weather in Paris" its words are
the object. Measured on the request
probe and the natural-language eval sets (docs/tool-search.md, "Requests").

**Measure questions.** "how far is the office from the station", "how high above sea level is
Denver", "how long is the drive": the measure asked for is in the question words, which are
function words and dropped (:data:`~.tokenize.QUERY_STOPWORDS`), and no tool is described with
"far" or "high". :func:`request_words` adds the measure (:data:`MEASURES`: "how far" adds
"distance") after the question's words; "how do I get to/from" adds "directions".
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Final

from .idioms import (
    PHRASE_OPENINGS,
    READ_ANYWHERE,
    READ_FIRST,
    bare_word,
    has_value,
    idiom_words,
    question_word,
    question_words,
    value_words,
)

__all__ = [
    "CLAUSE_MARKERS",
    "MEASURES",
    "MIN_KEPT",
    "OPENS_PHRASE",
    "READS",
    "READS_FIRST",
    "action_words",
    "read_as_written",
    "request_words",
    "run_marks",
]

CLAUSE_MARKERS: Final = frozenset({"saying", "says", "asking", "telling"})
"""Words after which the rest of a sentence is the message."""

CLAUSE_THAT_BEFORE: Final = frozenset(
    [
        "the",
        "a",
        "an",
        "i",
        "i'm",
        "we",
        "we're",
        "it",
        "it's",
        "he",
        "she",
        "they",
        "you",
        "this",
        "our",
        "my",
        "everyone",
    ]
)
"""The words after which ``that`` opens a clause ("that the release is out")."""

MIN_KEPT: Final = 2
"""How many words that are not function words must come before the marker in its sentence."""

_SENTENCE_END: Final = (".", "?", "!")

MEASURES: Final = {
    "far": ("distance",),
    "long": ("duration", "time"),
    "high": ("elevation", "height"),
    "tall": ("elevation", "height"),
}
"""The word after "how" and the measure it asks for."""

_GET_THERE: Final = frozenset({"to", "from", "there"})

VERB_SENSES: Final = {"open": "create", "file": "create", "make": "create"}
"""Words that are a state or a thing elsewhere ("open issues", "read a file") and mean another
verb when a request starts with them before "a"/"an" ("open a PR", "file a bug")."""


def action_words(runs: Sequence[str], stopwords: frozenset[str]) -> Sequence[str]:
    """``runs`` (a query's whitespace-separated runs, as written) without each sentence's
    message: the runs from a clause marker that has :data:`MIN_KEPT` content words before it in
    its sentence to that sentence's end; ``runs`` itself when there is none."""
    kept: list[str] = []
    content = 0
    skipping = False
    for position, run in enumerate(runs):
        word = run.lower()
        ends = word.endswith(_SENTENCE_END) and not word.startswith(("http", "www"))
        if not skipping and content >= MIN_KEPT and position + 1 < len(runs):
            following = runs[position + 1].lower()
            skipping = word in CLAUSE_MARKERS or (
                word == "that" and following in CLAUSE_THAT_BEFORE
            )
        if not skipping:
            kept.append(run)
            if word not in stopwords and word not in CLAUSE_MARKERS:
                content += 1
        if ends:
            skipping, content = False, 0
    return runs if len(kept) == len(runs) else kept


def _measure_word(run: str) -> str:
    return run.lower().strip("?,.!")


def request_words(runs: Sequence[str], stopwords: frozenset[str]) -> Sequence[str]:
    """``runs`` as ranked: its values and idioms read (:mod:`.idioms`), :func:`action_words`,
    then the measures of its "how" questions and the actions its questions ask for."""
    runs = action_words(idiom_words(value_words(runs)), stopwords)
    if len(runs) > 2 and runs[1].lower() in ("a", "an"):
        sense = VERB_SENSES.get(runs[0].lower())
        if sense is not None:
            runs = [sense, *runs[1:]]
    added: list[str] = []
    lowered = list(map(_measure_word, runs))
    for position, word in enumerate(lowered[:-1]):
        if word != "how":
            continue
        following = lowered[position + 1]
        added.extend(MEASURES.get(following, ()))
        rest = lowered[position + 1 : position + 6]
        after_get = rest[rest.index("get") + 1 :] if "get" in rest else []
        if after_get and after_get[0] in _GET_THERE:
            added.append("directions")
    added.extend(word for word in question_words(runs) if word not in added)
    return [*runs, *added] if added else runs


READS: Final = 1
"""A mark of :func:`run_marks`: a rule of the request reading may start at the run, wherever it
stands."""
READS_FIRST: Final = 2
"""A mark of :func:`run_marks`: a rule may start at the run when the request starts with it."""
OPENS_PHRASE: Final = 4
"""A mark of :func:`run_marks`: the run may open a phrasal verb (:data:`~.idioms.PHRASES`)."""

_READ_ANYWHERE: Final = READ_ANYWHERE | CLAUSE_MARKERS | {"that", "how"}
_READ_FIRST: Final = READ_FIRST | VERB_SENSES.keys()
_PHRASE_OPENERS: Final = frozenset(opening[0] for opening in PHRASE_OPENINGS)


def run_marks(run: str) -> int:
    """Which rules of :func:`request_words` and :func:`~.idioms.question_words` may start at
    ``run`` (:data:`READS`, :data:`READS_FIRST`, :data:`OPENS_PHRASE`), read in each of the
    forms the rules lowercase it to. Each depends on the run alone: it is worked out once a
    word, and :func:`read_as_written` tells from the marks that a request has nothing to read."""
    bare = bare_word(run)
    forms = {run.lower(), bare, _measure_word(run), question_word(run)}  # as each rule has it
    marks = 0
    if has_value(run) or not _READ_ANYWHERE.isdisjoint(forms):
        marks |= READS | READS_FIRST
    elif not _READ_FIRST.isdisjoint(forms):
        marks |= READS_FIRST
    if bare in _PHRASE_OPENERS:
        marks |= OPENS_PHRASE
    return marks


def read_as_written(marks: Sequence[int], bare: Sequence[str]) -> bool:
    """Whether :func:`request_words` gives runs back as they are and
    :func:`~.idioms.question_words` finds no question in them, for runs with these
    :func:`run_marks` and these :func:`~.idioms.bare_word` forms (most requests: a keyword
    query starts no rule), so that neither needs to be called."""
    if not marks:
        return True
    every = 0
    for mark in marks:
        every |= mark
    if every & READS or marks[0] & READS_FIRST:
        return False
    return not every & OPENS_PHRASE or PHRASE_OPENINGS.isdisjoint(pairwise(bare))
