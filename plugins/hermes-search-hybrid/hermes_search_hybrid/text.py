"""What text of a tool is embedded, and the words of an identifier."""

from __future__ import annotations

import re

from hermes_core.search import ToolDocument

__all__ = [
    "embedded_text",
    "identifier_words",
    "query_texts",
    "reads_as_sentence",
    "summary_text",
    "word_count",
]

_SEPARATORS = re.compile(r"[_\-.:/\s]+")
_PIECES = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_MCP_PREFIX = "mcp"
_AFTER_END_MARK = r"(?<=[.!?])\s+"
_SENTENCE_END = re.compile(_AFTER_END_MARK + r"|\s*;\s*|\s*\n\s*")
_WORD = re.compile(r"\w+")
_FIRST_SENTENCE_END = re.compile(_AFTER_END_MARK)
_QUERY_WORD = re.compile(r"\w+(?:['’]\w+)*")
# The English words a sentence has and a keyword query does not: articles, pronouns,
# auxiliaries, prepositions, question words.
_SENTENCE_WORDS_TEXT = (
    "a an the my your our me i i'm we you it it's this that what what's which who who's how "
    "is are was be do does can please of to in on for with from by at into about up and or "
    "any some"
)
_SENTENCE_WORDS = frozenset(_SENTENCE_WORDS_TEXT.split())


def identifier_words(identifier: str) -> list[str]:
    """The lowercased words of an identifier, split at ``_ - . : /``, camelCase humps and
    letter/digit boundaries: ``github__issues_create`` -> github, issues, create;
    ``getHTTPStatus`` -> get, http, status."""
    words: list[str] = []
    for part in _SEPARATORS.split(identifier):
        words.extend(piece.lower() for piece in _PIECES.findall(part))
    return words


def _name_text(document: ToolDocument) -> str:
    """The words of ``document``'s name, without the ``mcp`` of an ``mcp__<server>__`` prefix."""
    words = identifier_words(document.name)
    if document.name.startswith(_MCP_PREFIX + "__") and words[:1] == [_MCP_PREFIX]:
        words = words[1:]
    return " ".join(words)


def embedded_text(document: ToolDocument) -> str:
    """The text the model embeds for ``document``: the words of its name (without the ``mcp``
    of an ``mcp__<server>__`` prefix), a colon, its description with whitespace collapsed, and
    the words of its parameter names in parentheses:
    ``github issues create: Create an issue ... (owner, repo, title, body)``.

    The model reads the first 64 word pieces, so the name and the first sentence or two of the
    description decide the vector. Measured (docs/tool-search.md): parameter names add 1.4
    points of dense recall@5 on toolbench; putting them before the description changes
    nothing; the group is not added, since catalog names already carry their server.
    """
    text = _name_text(document)
    description = " ".join(document.description.split())
    if description:
        text = f"{text}: {description}"
    parameters = [" ".join(identifier_words(name)) for name in document.parameter_names]
    parameters = [words for words in parameters if words]
    if parameters:
        text = f"{text} ({', '.join(parameters)})"
    return text


def summary_text(document: ToolDocument) -> str:
    """What the model embeds as ``document``'s summary, which keyword queries are matched
    against: the words of its name, a colon, and its description up to the first ``.``, ``!``
    or ``?`` followed by whitespace, with whitespace collapsed first (so a line break does not
    end it: a title line without a period runs on into the first sentence below it):
    ``gitea issue create issue: Create an issue.``; a description with no such end is whole.

    A short query names what the tool does; the rest of a long description (its options, its
    caveats) and the parameter names pull the tool's vector away from that. Measured
    (docs/tool-search.md, "Summaries for keyword queries"): matching keyword queries against
    summaries instead of :func:`embedded_text` raises hybrid hit@5 on the SaaS keyword dev set
    from 89.9 to 92.0 (on a hold-out set it changes nothing), while long requests lose recall
    against summaries, so they keep the whole text. Cutting at line breaks too scored better on
    the dev set and worse on the two sets written after it.
    """
    text = _name_text(document)
    description = " ".join(document.description.split())
    first = _FIRST_SENTENCE_END.split(description, maxsplit=1)[0] if description else ""
    return f"{text}: {first}" if first else text


def word_count(query: str) -> int:
    """The words (runs of letters, digits and ``_``) of ``query``."""
    return len(_WORD.findall(query))


def reads_as_sentence(query: str) -> bool:
    """Whether ``query`` is written as a sentence rather than as keywords: it holds at least
    two English function words (``the``, ``my``, ``to``, ``what``, ``does``...).
    ``what files does PR 57 touch`` does; ``github create issue`` and ``book hotel room in
    lisbon`` do not."""
    words = _QUERY_WORD.findall(query.lower().replace("’", "'"))
    return sum(word in _SENTENCE_WORDS for word in words) >= 2


def query_texts(query: str) -> list[str]:
    """What the model embeds for ``query``: the query itself, then each of its sentences of at
    least two words (split after ``.``, ``!`` or ``?`` followed by a space, at ``;`` and at
    line breaks). A tool's similarity to the query is its greatest similarity to any of them.

    A request often asks for two things in two sentences ("Find hotels in Rome. Also, what
    will the weather be?"); one vector of the whole request lies between them and near
    neither tool. Measured (docs/tool-search.md): with the default fusion, the sentences add 3.1
    points of recall@5 on toolbench (3.7 sentences a request) and 0.05 on metatool; a keyword
    query is one sentence and is embedded as before.
    """
    text = query.strip()
    sentences = [part.strip() for part in _SENTENCE_END.split(text)]
    kept = (part for part in sentences if part != text and word_count(part) >= 2)
    return [text, *dict.fromkeys(kept)]
