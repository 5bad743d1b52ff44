"""Query analysis: the tokens a query is ranked with, and how to tell which of its words the
results answer.

Against the index's vocabulary (``known``), in order:

1. The query's words (:func:`~.tokenize.query_words`) are stemmed (each distinct word once a
   process: a cache keyed per word, never per query), after the request reading
   (:func:`~.phrasing.request_words`), which runs only when a run of the query may start one
   of its rules (:func:`~.phrasing.read_as_written`, from each run's marks, also cached per
   word): most queries are keywords that start none, and it would give them back as written.
2. **Compounds.** Two adjacent words of letters whose concatenation is a known token add that
   token: ``time zone`` also finds ``timezones``, ``pull request`` also ``pullRequest``.
3. **Splits.** A word that no tool holds, of at least :data:`MIN_SPLIT_WORD` letters, that
   splits into two known words of at least :data:`MIN_SPLIT_PART` letters each is ranked as
   those two: ``timezone`` finds "time zone", ``pullrequest`` finds "pull request". Of several
   splits, the most even one wins (then the leftmost). No tool contains the word as written,
   so it stays unmatched (``zendesk`` is not "zen desk").
4. **Equivalents.** Each query token in the equivalence table (:mod:`.equivalents`) also
   searches for its equivalents, at a lower weight, as one expansion token.
5. **Unmatched.** A word that no tool holds and that no compound rescues is *unmatched* at the
   catalog level: its stem stays among the tokens (``strict`` admission returns nothing for
   it). Against a result, a word is unmatched when none of the returned tools holds it, one of
   its compounds or one of its equivalents (its expansion token); see :func:`unmatched_in`.
   Overlapping bigrams of unspaced script are shown joined (:func:`~.tokenize.join_bigrams`);
   a bigram no tool holds between two that tools hold is the seam of two words, neither
   ranked nor unmatched (``部署服务器``: 部署 and 服务, 务器 are held, 署服 is not).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

from .equivalents import EQUIVALENTS, expansion_token
from .idioms import VERBS, bare_word, is_plural, plural_words
from .phrasing import read_as_written, request_words, run_marks
from .tokenize import QUERY_STOPWORDS, is_seam, join_bigrams, split_words, stem, stem_words

__all__ = [
    "MAX_SPLIT_WORD",
    "MIN_SPLIT_PART",
    "MIN_SPLIT_WORD",
    "QueryAnalysis",
    "analyze_query",
    "unmatched_in",
]

LISTING = "list"
"""The action a request that names things in the plural and no action asks for."""

VERB_STEMS = frozenset(stem(verb) for verb in VERBS) | {LISTING}
"""The stems of action words: a request with one asks for that action, not a listing."""

MIN_LISTING_WORDS = 2
"""The fewest words (function words counted) for :data:`LISTING`: one plural word alone
("issues") is a search for its tools, whatever they do."""

MAX_LISTING_WORDS = 4
"""The most words (function words not counted) a request may have for :data:`LISTING` to be
added: a longer one describes what it wants ("good sushi restaurants in downtown seattle")."""

MIN_SPLIT_WORD = 6
"""The shortest unknown word the split rule tries."""

MIN_SPLIT_PART = 3
"""The shortest part a split may have (``sla`` + ``ck`` is no split of ``slack``)."""

MAX_SPLIT_WORD = 40
"""The longest word the split rule tries: each try stems every cut of the word, so an
unbounded one costs time in its length squared (a 40,000-letter word took 6 s)."""


class QueryAnalysis:
    """What a query is ranked with, and its words.

    ``tokens``: stems in query order, then compound and split tokens; repeats count again.
    ``expanded``: the distinct tokens that have equivalents, each ranked with its expansion
    token. ``unmatched``: the words no tool holds (lowercased, unstemmed, in query order).
    :attr:`answers`: each distinct word with the tokens that answer it.
    """

    __slots__ = ("_answers", "_compounds", "_equivalents", "_stems", "_words", "expanded",
                 "tokens", "unmatched")  # fmt: skip

    def __init__(
        self,
        tokens: tuple[str, ...],
        expanded: tuple[str, ...],
        unmatched: tuple[str, ...],
        words: Sequence[str],
        stems: Sequence[str],
        compounds: Mapping[int, Sequence[str]],
        equivalents: Collection[str],
    ) -> None:
        self.tokens = tokens
        self.expanded = expanded
        self.unmatched = unmatched
        self._words = words
        self._stems = stems
        self._compounds = compounds
        self._equivalents = equivalents
        self._answers: tuple[tuple[str, tuple[str, ...]], ...] | None = None

    @property
    def answers(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """Each distinct word with the tokens that answer it: its stem, its compounds, its
        expansion token (a tool answers the word when it holds one of them). Worked out when
        first asked for (only the unmatched words need it)."""
        if self._answers is None:
            answers: dict[str, tuple[str, ...]] = {}
            for position, word in enumerate(self._words):
                if word not in answers:
                    token = self._stems[position]
                    found = (token, *self._compounds.get(position, ()))
                    if token in self._equivalents:
                        found = (*found, expansion_token(token))
                    answers[word] = found
            self._answers = tuple(answers.items())
        return self._answers


MAX_CACHED_WORDS = 100_000
"""The most words :func:`analyze_query` keeps the pieces and stems of (emptied past it)."""

_WORDS: dict[str, tuple[list[str], list[str]]] = {}
"""Per word of a query (a run without whitespace, as written): its pieces and their stems, as
:func:`~.tokenize.split_words` and :func:`~.tokenize.stem_words` give them. A word's pieces
do not depend on its neighbours (whitespace separates words under every rule), so a query's
words are the pieces of its runs in order: each distinct word is split and stemmed once per
process, not once per query (a few hundred bytes a word)."""

_JOINED: dict[str, str] = {}
"""The stem of each pair of adjacent words joined (a compound's token), likewise."""


def _pieces(run: str) -> tuple[list[str], list[str]]:
    found = _WORDS.get(run)
    if found is None:
        if len(_WORDS) >= MAX_CACHED_WORDS:
            _WORDS.clear()
        pieces = split_words(run)
        found = _WORDS[run] = (pieces, stem_words(pieces))
    return found


def _joined_stem(left: str, right: str) -> str:
    word = left + right
    found = _JOINED.get(word)
    if found is None:
        if len(_JOINED) >= MAX_CACHED_WORDS:
            _JOINED.clear()
        found = _JOINED[word] = stem(word)
    return found


_RUNS: dict[str, tuple[int, str, str | None]] = {}
"""Per run of a query, as written, what the request reading and the listing rule ask of it
alone: its :func:`~.phrasing.run_marks`, its :func:`~.idioms.bare_word` and that word's stem
when it names things in the plural (else ``None``); likewise once a process."""


def _run(run: str) -> tuple[int, str, str | None]:
    if len(_RUNS) >= MAX_CACHED_WORDS:
        _RUNS.clear()
    bare = bare_word(run)
    found = _RUNS[run] = (run_marks(run), bare, stem(bare) if is_plural(bare) else None)
    return found


def _query_words(query: str) -> tuple[list[str], list[str]]:
    """:func:`~.tokenize.query_words` of ``query`` and their stems (the same words: function
    words dropped unless nothing else is left), from the per-word cache."""
    return _words_of(request_words(query.split(), QUERY_STOPWORDS))  # phrasing.py


def _words_of(runs: Sequence[str]) -> tuple[list[str], list[str]]:
    """The words of ``runs`` (as the request reading gives them) and their stems, without
    function words unless nothing else is left."""
    every: list[str] = []
    every_stem: list[str] = []
    for run in runs:
        pieces, stems = _WORDS.get(run) or _pieces(run)
        every += pieces
        every_stem += stems
    if QUERY_STOPWORDS.isdisjoint(every):
        return every, every_stem
    kept = [position for position, word in enumerate(every) if word not in QUERY_STOPWORDS]
    if not kept:
        return every, every_stem
    return [every[position] for position in kept], [every_stem[position] for position in kept]


def analyze_query(
    query: str,
    known: Callable[[str], bool],
    equivalents: Mapping[str, tuple[tuple[str, ...], ...]] = EQUIVALENTS,
) -> QueryAnalysis:
    """Analyze ``query`` against a vocabulary: ``known(token)`` says whether any tool holds the
    (stemmed) token; ``equivalents`` maps a stem to the stemmed phrases it also searches for."""
    runs = query.split()
    if not runs:
        return QueryAnalysis((), (), (), [], [], {}, equivalents)
    marks, bare, plurals = zip(*[_RUNS.get(run) or _run(run) for run in runs], strict=True)
    as_written = not any(marks) or read_as_written(marks, bare)
    if as_written:  # most requests: nothing for the request reading to change
        words, stems = _words_of(runs)
    else:  # phrasing.py: message, measures, idioms and questions
        words, stems = _query_words(query)
    if (
        len(runs) >= MIN_LISTING_WORDS
        and len(words) <= MAX_LISTING_WORDS
        and (not as_written or plurals.count(None) < len(plurals))  # as written: a plural run
        and known(LISTING)
        and _lists(
            # read as written, no question is asked: the plural words are the runs' own
            dict(zip(bare, plurals, strict=True))
            if as_written
            else {word: stem(word) for word in plural_words(runs)},
            words,
            stems,
            known,
        )
    ):
        words, stems = [*words, LISTING], [*stems, LISTING]
    compounds: dict[int, list[str]] = {}
    added: list[str] = []
    for position in range(len(words) - 1):
        left, right = words[position], words[position + 1]
        if not (left.isalpha() and right.isalpha() and left.isascii()):
            continue  # nor bigrams: a 2,000-character query of them made 2,000 list scans
        joined = _JOINED.get(left + right) or _joined_stem(left, right)
        if joined not in stems and known(joined):
            added.append(joined)
            compounds.setdefault(position, []).append(joined)
            compounds.setdefault(position + 1, []).append(joined)
    tokens: list[str] = []
    unmatched: list[str] = []
    if all(map(known, stems)):  # the common case: some tool holds every word
        tokens = stems
    else:
        for position, token in enumerate(stems):
            if known(token):
                tokens.append(token)
            elif (
                is_seam(words, position)
                and known(stems[position - 1])
                and known(stems[position + 1])
            ):
                # 署服 of 部署服务器, across two words the tools hold: answered by either
                compounds[position] = [stems[position - 1], stems[position + 1]]
            elif position not in compounds:
                word = words[position]
                parts = _split(word, known)
                if parts is not None:
                    added.extend(parts)
                else:
                    tokens.append(token)  # held by no tool: strict admission answers nothing
                unmatched.append(word)
    ranked = tuple(tokens + added) if added else tuple(tokens)
    expanded = tuple(filter(equivalents.__contains__, dict.fromkeys(ranked)))
    found = tuple(join_bigrams(list(dict.fromkeys(unmatched)))) if unmatched else ()
    return QueryAnalysis(ranked, expanded, found, words, stems, compounds, equivalents)


def _lists(
    plurals: Mapping[str, str | None],
    words: Sequence[str],
    stems: Sequence[str],
    known: Callable[[str], bool],
) -> bool:
    """Whether a query names things in the plural and no action. ``plurals`` maps words of the
    query to their stems when they name things in the plural (:func:`~.idioms.plural_words`),
    else to ``None``; one of those stems must be held by a tool, and a plural's own stem is no
    action ("labels")."""
    if not any(known(found) for found in plurals.values() if found is not None):
        return False
    return all(
        stems[position] not in VERB_STEMS
        for position, word in enumerate(words)
        if plurals.get(word) is None
    )


def unmatched_in(analysis: QueryAnalysis, held: Iterable[Collection[str]]) -> list[str]:
    """The words of ``analysis`` that none of the ``held`` token sets (one per returned tool)
    answers; with nothing returned, the words no tool holds at all."""
    results = [set(tokens) for tokens in held]
    if not results:
        return list(analysis.unmatched)
    return join_bigrams(
        [
            word
            for word, answering in analysis.answers
            if not any(token in tokens for tokens in results for token in answering)
        ]
    )


def _split(word: str, known: Callable[[str], bool]) -> tuple[str, str] | None:
    """The two known stems ``word`` splits into (the most even split, then the leftmost), or
    ``None``."""
    if not MIN_SPLIT_WORD <= len(word) <= MAX_SPLIT_WORD or not word.isalpha():
        return None
    best: tuple[str, str] | None = None
    best_shortest = 0
    for cut in range(MIN_SPLIT_PART, len(word) - MIN_SPLIT_PART + 1):
        shortest = min(cut, len(word) - cut)
        if shortest <= best_shortest:
            continue
        left, right = stem(word[:cut]), stem(word[cut:])
        if known(left) and known(right):
            best, best_shortest = (left, right), shortest
    return best
