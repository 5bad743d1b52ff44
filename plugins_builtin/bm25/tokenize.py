"""Turn text and identifiers into search tokens.

The rule, in order:

1. Letters, marks and digits of any script make words; anything else (spaces, ``_ - . :``,
   other punctuation and symbols) separates them. Text is folded first (:func:`fold`):
   compatibility forms become plain ones (full-width ``ＧｉｔＨｕｂ`` is ``GitHub``) and Latin,
   Greek and Cyrillic letters lose their accents (``créer`` -> creer, ``Straße`` -> strasse).
   Rules 2-5 are those of ASCII words; a word of another script is casefolded whole, except
   in the scripts written without spaces (Chinese, Japanese, Korean, Thai, Lao, Khmer,
   Myanmar): there the words of the lexicon (:mod:`.lexicon`) are cut out first (the longest
   one at each place; a one-character particle of Korean only ends a word), and what is left
   becomes overlapping character bigrams, cut at each change of script (a lone character stays
   one token): ``部署服务器`` -> 部署, 署服, 服务, 务器; ``创建新问题`` -> 创建, 新, 问题;
   ``ファイルを削除`` -> ファイル, を, 削除.
2. Each word is split at camelCase boundaries (``createIssue`` -> create, Issue; an upper-case
   run keeps together before a capitalised word: ``HTTPServer`` -> HTTP, Server) and at
   letter/digit boundaries (``zones2`` -> zones, 2; ``base64`` -> base, 64).
3. One exception keeps version-like tokens whole: a single letter directly followed by digits
   stays one token (``V2`` -> v2, ``s3`` -> s3), so ``getV2Zones`` -> get, v2, zones.
4. An upper-case run followed by a lone ``s`` is an acronym plural: ``URLs`` -> url, ``IDs`` ->
   id (not ur, ls).
5. A mixed-case word of letters is also kept whole, after its pieces: ``YouTube`` -> you, tube,
   youtube; ``IMDb`` -> im, db, imdb; so a query naming the product in one word finds it.
6. Tokens are lowercased and stemmed with the Snowball English stemmer (``issues`` -> issu, the
   same stem as ``issue``); a word of the lexicon is stemmed as its English word (``创建``,
   ``crear``, ``erstellen`` -> creat), in documents and queries alike.

Queries drop function words (:data:`QUERY_STOPWORDS`: English, and the lexicon's of other
languages) before stemming, unless nothing
else is left: measured on the eval sets, this lifts recall@5 by 9 to 17 points because
natural-language requests are otherwise ranked on "can you", "the", "me". Verbs that tool names
are made of ("get", "find", "like") are kept: dropping them too gained under half a point and
lost ``get_issue`` for the query "get issue". Documents keep every word.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from functools import cache
from typing import Final

import Stemmer

from .lexicon import ACTION_WORDS, FUNCTION_WORDS

__all__ = [
    "LEXICON",
    "QUERY_STOPWORDS",
    "TEXT_BREAK",
    "fold",
    "is_seam",
    "join_bigrams",
    "query_tokens",
    "query_words",
    "raw_text",
    "split_words",
    "stem",
    "stem_words",
    "tokenize",
    "word_pieces",
]

# The pieces of ASCII words, in order of preference: a version-like token (one letter that starts
# a piece, followed by digits: v2, s3, the V2 of getV2Zones), an acronym plural (URLs; its "s" is
# dropped below), an upper-case run not followed by lower case (HTTP of HTTPServer), a word with
# at most one leading capital, a digit run. Anything else separates pieces.
_PIECES = re.compile(
    r"(?:(?<![A-Za-z])[A-Za-z]|(?<=[a-z])[A-Z])[0-9]+(?![0-9])"
    r"|[A-Z]{2,}s(?![a-z])|[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+"
)
# Every byte that is not an ASCII letter or digit becomes a space (non-ASCII text is encoded
# with "?" first).
_SEPARATORS = bytes(
    code if chr(code).isascii() and chr(code).isalnum() else ord(" ") for code in range(256)
)
_STEMMER = Stemmer.Stemmer("english")
_STEMMER.maxCacheSize = 200_000  # PyStemmer keeps its own cache of stems
# Indexing stems each distinct word once (the word table): a cache would only cost (5x).
_UNCACHED_STEMMER = Stemmer.Stemmer("english")
_UNCACHED_STEMMER.maxCacheSize = 0

_STOPWORD_TEXT = """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its
    itself just let me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    also please want need
"""


# The scripts written without spaces between words, as ranges of code points: Han (with its
# radicals, iteration marks and extensions), kana (with the length mark ー), Hangul (syllables
# and jamo), Thai, Lao, Khmer, Myanmar.
_HAN = (
    "\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3038-\u303b\u3400-\u4dbf\u4e00-\u9fff"
    "\uf900-\ufaff\U00020000-\U0003134f"
)
_HIRAGANA = "\u3041-\u309f"
_KATAKANA = "\u30a0-\u30ff\u31f0-\u31ff"
_HANGUL = "\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff"
_SOUTH_EAST_ASIAN = ("\u0e00-\u0e7f", "\u0e80-\u0eff", "\u1780-\u17ff", "\u1000-\u109f")
_UNSPACED_CLASS = _HAN + _HIRAGANA + _KATAKANA + _HANGUL + "".join(_SOUTH_EAST_ASIAN)
# Combining marks, which belong to the letter before them (str.isalnum() says no to them).
_MARKS = (
    "\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670"
    "\u06d6-\u06ed\u0900-\u0dff\u0f00-\u0fff\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff"
    "\ufe20-\ufe2f"
)
_ACCENTS = re.compile("[\u0300-\u036f]+")  # the combining marks of Latin, Greek and Cyrillic
# Latin, Greek and Cyrillic letters, some with accents: text without any needs no stripping.
_ACCENTED = re.compile("[\u00c0-\u024f\u0370-\u052f\u1e00-\u1fff]")


def fold(text: str) -> str:
    """``text`` as the tokenizer reads it: compatibility forms as plain ones (NFKC: full-width
    letters, ligatures), Latin, Greek and Cyrillic accents stripped, ``ß`` as ``ss``. Case is
    kept (rule 2 reads it); ASCII text is returned as it is."""
    if text.isascii():
        return text
    if not unicodedata.is_normalized("NFKC", text):  # the check is faster than the change
        text = unicodedata.normalize("NFKC", text)
    if _ACCENTED.search(text):  # Chinese text, say, has none: three passes saved
        stripped = _ACCENTS.sub("", unicodedata.normalize("NFD", text))
        text = unicodedata.normalize("NFC", stripped)
        if "ß" in text or "ẞ" in text or "ς" in text:  # str.translate is slow on such text
            text = text.replace("ß", "ss").replace("ẞ", "ss").replace("ς", "σ")
    return text


def _folded_words(words: Iterable[str]) -> list[str]:
    return [fold(word).casefold() for word in words]


def _lexicon() -> dict[str, str]:
    table: dict[str, str] = {}
    for english, languages in ACTION_WORDS.items():
        for word in _folded_words(word for words in languages for word in words):
            if table.setdefault(word, english) != english:
                raise ValueError(f"lexicon: {word!r} is both {table[word]!r} and {english!r}")
    return table


LEXICON: Final = _lexicon()
"""Each folded, casefolded word of :data:`~.lexicon.ACTION_WORDS` with its English word."""

_FUNCTION_WORDS = frozenset(_folded_words(w for words in FUNCTION_WORDS.values() for w in words))
QUERY_STOPWORDS = frozenset(_STOPWORD_TEXT.split()) | _FUNCTION_WORDS
"""Words dropped from queries (lowercased, unstemmed): English, and the lexicon's function
words of other languages."""

# The words cut out of unspaced text before bigrams, and the longest of them.
_UNSPACED_WORDS = frozenset(
    word for word in (*LEXICON, *_FUNCTION_WORDS) if not word.isascii() and len(word) <= 8
)
_LONGEST = max(map(len, _UNSPACED_WORDS))
_FIRST_LETTERS = frozenset(word[0] for word in _UNSPACED_WORDS)


# The pieces of a folded non-ASCII word: its letters in runs of one kind (ASCII, unspaced
# script, other letters, marks and digits; anything else separates them), then an unspaced
# run's runs of one script.
# Compiled on first use, by non-ASCII text only: their Unicode classes take about 7 ms to
# compile, which every search paid at start for ASCII queries over an ASCII catalog.
@cache
def _kinds() -> re.Pattern[str]:
    return re.compile(
        rf"[A-Za-z0-9]+|[{_UNSPACED_CLASS}]+|(?:(?![A-Za-z0-9_{_UNSPACED_CLASS}])[\w{_MARKS}])+"
    )


@cache
def _scripts() -> re.Pattern[str]:
    return re.compile(
        "|".join(
            f"[{letters}]+"
            for letters in (_HAN, _HIRAGANA + "ー", _KATAKANA, _HANGUL, *_SOUTH_EAST_ASIAN)
        )
    )


@cache
def _unspaced() -> re.Pattern[str]:
    return re.compile(f"[{_UNSPACED_CLASS}]+")


@cache
def _hangul_letter() -> re.Pattern[str]:
    return re.compile(f"[{_HANGUL}]")


def _folded_utf8(text: str, separators: bytes) -> bytes:
    """``text`` folded, as UTF-8, each ASCII separator a space (non-ASCII ones are dropped when
    its words are split: :func:`_unicode_pieces` reads letters, marks and digits only); a lone
    surrogate, which UTF-8 cannot hold, a ``?`` (a separator)."""
    return fold(text).encode("utf-8", "replace").translate(separators)


def _unspaced_pieces(run: str) -> list[str]:
    """The pieces of a run of unspaced script: lexicon words, the longest at each place (a
    one-character one, a particle, ends a Korean run), and bigrams of the rest."""
    pieces: list[str] = []
    rest = 0
    position = 0
    size = len(run)
    while position < size:
        if run[position] not in _FIRST_LETTERS:  # most places start no word of the lexicon
            position += 1
            continue
        for length in range(min(_LONGEST, size - position), 0, -1):
            candidate = run[position : position + length]
            if candidate in _UNSPACED_WORDS and (
                length > 1 or position == size - 1 or not _hangul_letter().match(candidate)
            ):
                break
        else:
            position += 1
            continue
        pieces += _bigrams(run[rest:position])
        pieces.append(candidate)
        position += length
        rest = position
    pieces += _bigrams(run[rest:])
    return pieces


def _bigrams(text: str) -> list[str]:
    pieces: list[str] = []
    for part in _scripts().findall(text) if text else ():
        if len(part) == 1:
            pieces.append(part)
        else:
            pieces += [part[index : index + 2] for index in range(len(part) - 1)]
    return pieces


def _unicode_pieces(word: str) -> list[str]:
    """The pieces of a folded word holding non-ASCII letters (rule 1)."""
    pieces: list[str] = []
    for run in _kinds().findall(word):
        if run.isascii():
            pieces += word_pieces(run)
        elif _unspaced().match(run):
            pieces += _unspaced_pieces(run)
        else:
            pieces.append(run.casefold())
    return pieces


def is_seam(words: Sequence[str], position: int) -> bool:
    """Whether ``words[position]`` is a bigram of unspaced script overlapping a bigram on each
    side (部署, 署服, 服务: 署服 may be where two words meet)."""
    word = words[position]
    if len(word) != 2 or word.isascii() or not 0 < position < len(words) - 1:
        return False  # the common case, first
    before, after = words[position - 1], words[position + 1]
    return (
        len(before) == len(after) == 2
        and before[1] == word[0]
        and word[1] == after[0]
        and _unspaced().fullmatch(before + word[1] + after[1]) is not None
    )


def join_bigrams(words: Sequence[str]) -> list[str]:
    """``words`` with each chain of overlapping bigrams of unspaced script (``新问``, ``问题``)
    joined back into the text they came from (``新问题``): how unmatched words are shown."""
    joined: list[str] = []
    for word in words:
        previous = joined[-1] if joined else ""
        if (
            len(word) == 2
            and previous
            and previous[-1] == word[0]
            and not word.isascii()
            and _unspaced().fullmatch(previous + word)
        ):
            joined[-1] = previous + word[1]
        else:
            joined.append(word)
    return joined


def word_pieces(word: str) -> list[str]:
    """The lowercased, unstemmed pieces of one folded word of letters and digits, per rules 1-5
    of the module docstring."""
    if not word.isascii():
        return _unicode_pieces(word)
    if word.isdigit() or (word.islower() and word.isalpha()):
        return [word]  # the common case needs no regular expression
    if word.isalpha() and (word.isupper() or word[1:].islower()):
        return [word.lower()]  # "URL", "Issue": one piece, as the expression finds
    found = _PIECES.findall(word)
    pieces = [
        piece[:-1].lower()
        if len(piece) > 2 and piece[-1] == "s" and piece[:-1].isupper()  # an acronym plural
        else piece.lower()
        for piece in found
    ]
    if len(found) > 1 and word.isalpha() and not word.isupper():
        pieces.append(word.lower())  # a mixed-case word, also whole
    return pieces


def split_words(text: str) -> list[str]:
    """The lowercased, unstemmed pieces of ``text`` per rules 1-5 of the module docstring."""
    pieces: list[str] = []
    if not text.isascii():
        words = _folded_utf8(text, _UTF8_SEPARATORS).decode().split()
    else:
        words = text.encode("ascii").translate(_SEPARATORS).decode("ascii").split()
    for word in words:
        if word.isdigit() or (word.islower() and word.isalpha()):
            pieces.append(word)  # as word_pieces would, without the call
        else:
            pieces.extend(word_pieces(word))
    return pieces


TEXT_BREAK: Final = b"\x01"
"""The word :func:`raw_text` puts after each text (no word of rule 1 holds that byte)."""

_BATCH_SEPARATORS = _SEPARATORS[:1] + TEXT_BREAK + _SEPARATORS[2:]
_UTF8_SEPARATORS = _SEPARATORS[:128] + bytes(range(128, 256))  # UTF-8 bytes kept
_UTF8_BATCH_SEPARATORS = _BATCH_SEPARATORS[:128] + bytes(range(128, 256))


def raw_text(texts: Sequence[str]) -> bytes:
    """The words of each of ``texts`` per rule 1 (folded, not yet split or lowercased; UTF-8),
    in order, each text followed by :data:`TEXT_BREAK`, separated by spaces (and no other
    whitespace): one pass over many texts, for indexing."""
    if not texts:
        return b""
    separator = " \x01 "
    joined = separator.join(texts)
    if joined.count("\x01") != len(texts) - 1:  # a text holds the break byte itself
        joined = separator.join(text.replace("\x01", " ") for text in texts)
    if joined.isascii():
        return (joined + separator).encode("ascii").translate(_BATCH_SEPARATORS)
    # Each text folded alone: one accented letter must not send a whole batch through NFD.
    folded = separator.join(
        text if text.isascii() else fold(text) for text in joined.split(separator)
    )
    # A lone surrogate (half a character: JSON allows one) is a "?", a separator.
    return (folded + separator).encode("utf-8", "replace").translate(_UTF8_BATCH_SEPARATORS)


def stem(word: str) -> str:
    """The Snowball English stem of one lowercased word (of its English word, for a word of
    the lexicon)."""
    result: str = _STEMMER.stemWord(LEXICON.get(word, word))
    return result


def stem_words(words: Sequence[str], *, cached: bool = True) -> list[str]:
    """The Snowball English stems of lowercased ``words``, in order (a word of the lexicon
    stemmed as its English word); ``cached=False`` for words stemmed once (the same stems,
    without filling the stem cache)."""
    english = list(map(LEXICON.get, words, words))
    stems: list[str] = (_STEMMER if cached else _UNCACHED_STEMMER).stemWords(english)
    return stems


def tokenize(text: str) -> list[str]:
    """The search tokens of ``text``: split, lowercased and stemmed, in order, repeats kept."""
    return stem_words(split_words(text))


def query_words(query: str) -> list[str]:
    """The lowercased, unstemmed words of a search query, without :data:`QUERY_STOPWORDS`
    unless the query holds nothing else."""
    words = split_words(query)
    return [word for word in words if word not in QUERY_STOPWORDS] or words


def query_tokens(query: str) -> list[str]:
    """The tokens of a search query: the stems of :func:`query_words`."""
    return stem_words(query_words(query))
