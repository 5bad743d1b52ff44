"""The words of the session index: how a message's text is indexed (:func:`indexed_text`,
:func:`also_text`), how a query becomes an FTS5 match (:func:`fts_query`, :func:`word_forms`)
and how a snippet is shown (:func:`shown_text`); :mod:`.index` explains why.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Final

_WORD = re.compile(r"\w+", re.UNICODE)
_APART: Final = "\u200b"
"""Set between the characters of unspaced scripts in the index: a separator to ``unicode61``."""
_UNSPACED = re.compile(
    "[\u0e00-\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff\u3040-\u30ff\u3130-\u318f"
    "\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7af\uf900-\ufaff"
    "\uff66-\uff9f\U00020000-\U0003134f]"
)
"""Thai, Lao, Myanmar, Hangul, Khmer, kana, CJK ideographs: scripts written without spaces
between words (Korean has them between words, not before a particle)."""
_LOWER: Final = "a-z\u00df-\u00f6\u00f8-\u00ff"
_UPPER: Final = "A-Z\u00c0-\u00d6\u00d8-\u00de"
_CASE_SEAM = re.compile(f"(?<=[{_LOWER}])(?=[{_UPPER}])|(?<=[{_UPPER}])(?=[{_UPPER}][{_LOWER}])")
"""Where a camelCase identifier of Latin letters changes words: ``parse|Config``,
``HTTP|Server``."""
_AFTER_CASE_SEAM = re.compile(
    f"[{_UPPER}](?<=[{_LOWER}][{_UPPER}])|[{_UPPER}](?<=[{_UPPER}][{_UPPER}])(?=[{_LOWER}])"
)
"""The letter after each :data:`_CASE_SEAM`, found as fast as an upper-case letter: that
pattern's lookbehinds, tried at every character of a message, made the words of the index's
build 7x 26a2946's on ordinary transcripts; this one halves them, and saves a fifth of the
cutting of code-heavy ones (docs/performance.md)."""
_SHARP_S = re.compile("[\u00df\u1e9e]")
_MARKED_SEAM: Final = "]" + _APART + "["
_MARKED_APART = re.compile(
    f"(?<={_UNSPACED.pattern})\\]([^\\[\\]]{{0,4}})\\[(?={_UNSPACED.pattern})"
)

STOPWORDS: Final = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "so",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "this",
        "to",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
    }
)
"""Words left out of a query: they match nearly every session and rank none."""


def indexed_text(text: str) -> str:
    """``text`` as the index holds it: each character of an unspaced script set apart
    (``东京`` is ``\u200b东\u200b\u200b京\u200b``), so each is a token, and a camelCase
    identifier cut at its case seams (``parse\u200bConfig``); other text as it is."""
    text = _AFTER_CASE_SEAM.sub(lambda letter: _APART + letter.group(), text)
    if _UNSPACED.search(text) is None:
        return text
    return _UNSPACED.sub(lambda match: _APART + match.group() + _APART, text)


def _sharp_s_folded(word: str) -> str:
    return word.replace("\u00df", "ss").replace("\u1e9e", "SS")


def also_text(text: str) -> str:
    """The ``also`` column of a message's ``text``: the ``ss`` spelling of each word (and
    identifier part) holding ``ß``; empty for most text. (Identifiers are not kept whole:
    their parts find them, and on code-heavy transcripts the whole ones tripled the index's
    build time and doubled its size.)"""
    if _SHARP_S.search(text) is None:
        return ""
    forms: list[str] = []
    for word in dict.fromkeys(_WORD.findall(text)):
        if _SHARP_S.search(word) is not None:
            forms.append(_sharp_s_folded(word))
            forms += [
                _sharp_s_folded(part)
                for part in _CASE_SEAM.split(word)
                if part != word and _SHARP_S.search(part)
            ]
    return " ".join(dict.fromkeys(forms))


def word_forms(word: str) -> list[str]:
    """The spellings a query's ``word`` is searched by, lower case: as written, the phrase of
    its camelCase parts (``load_settings`` is that phrase already: ``unicode61`` cuts at
    ``_``), and each with ``ss`` for ``ß`` and ``ß`` for ``ss``."""
    forms = [word.lower()]
    if _CASE_SEAM.search(word) is not None:
        forms.append(_CASE_SEAM.sub(" ", word).lower())
    forms += [_sharp_s_folded(form) for form in forms if _SHARP_S.search(form) is not None]
    # The ß spelling finds the word in the message's own text, so the snippet marks it.
    forms += [form.replace("ss", "\u00df") for form in forms if "ss" in form]
    return list(dict.fromkeys(forms))


def shown_text(indexed: str) -> str:
    """Text of the index (a snippet) as the transcript had it: a phrase of an unspaced script
    marked whole, though FTS5 marks its tokens apart around a combining mark (Thai ``้``,
    which ``unicode61`` takes for a separator)."""
    text = indexed.replace(_MARKED_SEAM, "").replace(_APART, "")
    return _MARKED_APART.sub(
        lambda seam: seam.group(1) if _only_marks(seam.group(1)) else seam.group(), text
    )


def marked_words(text: str, opening: str = "[", closing: str = "]") -> list[str]:
    """The words ``text`` (a snippet, a highlight) marks between ``opening`` and ``closing``,
    as :func:`shown_text` shows them."""
    spans = re.findall(
        f"{re.escape(opening)}([^{re.escape(opening + closing)}]*){re.escape(closing)}", text
    )
    return _WORD.findall(shown_text(" ".join(spans)))


def _only_marks(text: str) -> bool:
    return all(unicodedata.category(character) == "Mn" for character in text)


def query_words(text: str) -> list[str]:
    """The words of ``text`` searched, each once: less :data:`STOPWORDS`, unless it has no
    other."""
    found = list(dict.fromkeys(_WORD.findall(text)))
    return [word for word in found if word.lower() not in STOPWORDS] or found


def unspaced(word: str) -> bool:
    """Whether ``word`` holds a character of a script written without spaces."""
    return _UNSPACED.search(word) is not None


def fts_query(text: str) -> str | None:
    """The words of ``text`` (:func:`query_words`) as an FTS5 query (:func:`words_query`), or
    ``None`` when it holds no word."""
    return words_query(query_words(text))


def words_query(words: Sequence[str]) -> str | None:
    """An FTS5 query matching any of ``words`` (each quoted, so no word is read as an
    operator; a word of an unspaced script a phrase of its characters), or ``None`` for
    none."""
    if not words:
        return None
    forms = dict.fromkeys(form for word in words for form in word_forms(word))
    phrases = (indexed_text(form).replace(_APART, " ").strip() for form in forms)
    return " OR ".join('"' + phrase.replace('"', '""') + '"' for phrase in phrases)
