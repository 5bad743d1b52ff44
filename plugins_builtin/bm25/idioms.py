"""How users say what they want done, read before a request is ranked (issue 32, round 4):
argument values, phrasal verbs and the questions that name an action.

Each table here is the vocabulary of requests to any service (a calendar, a CRM, a cloud
console, a database), written for a class of misses of the request probe, never for one query
or one server's tools; docs/tool-search.md ("Requests") lists them with their measurements.

**Values** (:func:`value_words`). A request carries the values it wants passed: a quoted title
("add 'buy milk' to my list"), a web address, an e-mail address. Their words are no tool's
business, and ranked like the rest they pick whichever tool shares them ("rename 'Side
project' to 'Shop'" ranked tools whose descriptions say "shop"). A quoted span is dropped, when
at least :data:`MIN_LEFT` runs stay outside quotes; an address is replaced by its kind
("url", "email"), which is what it says about the tool: it takes a URL or an address.

**Phrasal verbs** (:data:`PHRASES`). "get rid of the project" is "delete"; its words are "get",
a verb of reading, and "rid", no tool's word; "spin up a server" is "create", "shut down" is
"stop", "leave a comment" is "add a comment". A phrase of the table is replaced by its verb.

**Reminders.** "remind me to call the dentist on friday" asks to create a reminder; what
follows "to"/"about"/"that" is the reminder's text, an argument (as a message is in
:mod:`.phrasing`).

**Reschedules.** "push the gym task to next monday", "move the standup to friday": a verb of
moving (:data:`MOVE_VERBS`) with a date after "to"/"until" (:data:`DATE_WORDS`) changes a date,
an update; the verb becomes "reschedule" (an equivalent of "update").

**Questions that name an action** (:data:`QUESTIONS`). "how many orders are pending" asks for a
count, "how big is the table" for a size, "what fields does a record have" for a schema, "who
else is on the project" for its members, "total revenue per country" for an aggregate grouped
by country. The question words are function words (dropped) or no tool's words: the action
asked for is added after them.

**Make the ... .** A request that starts "make the/my/this ..." changes a thing that exists
("make the task priority 1", "make my profile public"): its verb is "update" ("make a ..."
creates, :data:`~.phrasing.VERB_SENSES`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise
from typing import Final

__all__ = [
    "DATE_WORDS",
    "DERIVED",
    "MIN_LEFT",
    "MOVE_VERBS",
    "PHRASES",
    "PHRASE_OPENINGS",
    "QUESTIONS",
    "READ_ANYWHERE",
    "READ_FIRST",
    "UNIT_MEASURES",
    "VERBS",
    "bare_word",
    "has_value",
    "idiom_words",
    "is_plural",
    "plural_words",
    "question_word",
    "question_words",
    "value_words",
]

MIN_LEFT: Final = 2
"""How many runs must stay outside quotes for a quoted span to be dropped."""

_OPENING: Final = ("'", '"', "\u2018", "\u201c")
_CLOSING: Final = ("'", '"', "\u2019", "\u201d")
_TRAILING: Final = ",.;:!?)"

_URL: Final = re.compile(
    r"(?:https?://|www\.)\S+"
    r"|(?:[a-z0-9-]+\.)+(?:com|org|net|io|dev|app|ai|co|edu|gov|info|biz|me|us|uk|de|fr)(?:/\S*)?",
    re.IGNORECASE,
)
_EMAIL: Final = re.compile(r"[^@\s]+@[^@\s]+\.[a-z]{2,}", re.IGNORECASE)


def _bare(run: str) -> str:
    return run.rstrip(_TRAILING).strip("()<>[]")


def bare_word(run: str) -> str:
    """``run`` lowercased without the punctuation around it, as the rules here read it."""
    return _bare(run).lower()


def question_word(run: str) -> str:
    """:func:`bare_word` with a typographic apostrophe made plain, as :func:`question_words`
    reads it ("what’s")."""
    return _bare(run).lower().replace("\u2019", "'")


_VALUE_MARKS: Final = re.compile(r"['\"\u2018\u201c@.]|://")


def has_value(run: str) -> bool:
    """Whether :func:`value_words` may change a request holding ``run``: it holds an opening
    quote or what an address holds."""
    return _VALUE_MARKS.search(run) is not None


_TOOL_NOUNS: Final = frozenset(
    {
        "api",
        "apis",
        "tool",
        "tools",
        "endpoint",
        "function",
        "service",
        "command",
        "app",
        "method",
        "action",
        "operation",
        "plugin",
        "integration",
        "feature",
    }
)
"""After a quote, the words that make it a tool's name ("the 'Get Content' API"), kept."""


def _kind(run: str) -> str | None:
    bare = _bare(run).strip("'\"\u2018\u2019\u201c\u201d")
    if "@" not in bare and "." not in bare and "://" not in bare:
        return None  # most words: no pattern can match, and each query word is asked
    if _EMAIL.fullmatch(bare):
        return "email"
    return "url" if _URL.fullmatch(bare) else None


def value_words(runs: Sequence[str]) -> Sequence[str]:
    """``runs`` with quoted spans dropped (when :data:`MIN_LEFT` runs stay; a quoted address
    gives its kind, a quote before "API", "tool"... is a name and stays) and web and e-mail
    addresses replaced by "url" and "email"."""
    kept: list[str] = []
    span: list[str] = []
    closing = ""
    for position, run in enumerate(runs):
        bare = _bare(run)
        if not closing and bare[:1] in _OPENING and len(bare) > 1:
            opening = _OPENING.index(bare[0])
            closing, span = _CLOSING[opening], []
        if not closing:
            kept.append(_kind(run) or run)
            continue
        span.append(run)
        if len(span) == 1 and not (len(bare) > 2 and bare.endswith(closing)):
            continue
        if len(span) > 1 and not bare.endswith(closing):
            continue
        closing = ""
        following = _bare(runs[position + 1]).lower() if position + 1 < len(runs) else ""
        if following in _TOOL_NOUNS:
            kept.extend(span)
        elif len(span) == 1 and _kind(span[0]):
            kept.append(_kind(span[0]) or "")
    if closing or len(kept) < MIN_LEFT:  # an unclosed quote is an apostrophe
        return _unquoted(runs)
    return runs if kept == list(runs) else kept


def _unquoted(runs: Sequence[str]) -> Sequence[str]:
    """``runs`` with only the addresses replaced (quotes kept)."""
    found = [_kind(run) or run for run in runs]
    return runs if found == list(runs) else found


PHRASES: Final = {
    ("get", "rid", "of"): "delete",
    ("got", "rid", "of"): "delete",
    ("wipe", "out"): "delete",
    ("clear", "out"): "delete",
    ("throw", "away"): "delete",
    ("spin", "up"): "create",
    ("set", "up"): "create",
    ("shut", "down"): "stop",
    ("turn", "on"): "enable",
    ("turn", "off"): "disable",
    ("switch", "on"): "enable",
    ("switch", "off"): "disable",
    ("leave", "a"): "add a",
    ("leave", "an"): "add an",
    ("drop", "a"): "add a",
    ("jot", "down"): "add",
    ("write", "down"): "add",
    ("fill", "in"): "fill",
    ("fill", "out"): "fill",
    ("look", "up"): "lookup",
    ("look", "for"): "search",
    ("find", "out"): "get",
    ("hit", "enter"): "press enter",
    ("up", "to", "date"): "latest",
    ("up-to-date",): "latest",
}
"""Phrasal verbs and the verb each is ranked as (matched lowercased, anywhere in a request)."""

_LONGEST: Final = max(len(phrase) for phrase in PHRASES)
_PHRASE_STARTS: Final = frozenset(phrase[0] for phrase in PHRASES)
_UP_TO_DATE: Final = PHRASES["up", "to", "date"]
_BRING: Final = frozenset({"bring", "keep", "get"})
PHRASE_OPENINGS: Final = frozenset(phrase[:2] for phrase in PHRASES if len(phrase) > 1)
"""The first two words of each phrase of more than one: no phrase is read without them."""

MOVE_VERBS: Final = frozenset(
    {"push", "move", "bump", "shift", "postpone", "delay", "defer", "reschedule", "pull"}
)
"""Verbs that change a date when a date follows "to"/"until"."""

DATE_WORDS: Final = frozenset(
    {
        *("today", "tomorrow", "tonight", "yesterday", "weekend", "week", "month"),
        *("noon", "midnight", "morning", "afternoon", "evening"),
        *("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"),
        *("january", "february", "march", "april", "may", "june", "july", "august"),
        *("september", "october", "november", "december"),
        *("jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"),
    }
)
"""Words that name a date or a time."""

_DATE_PREPOSITIONS: Final = frozenset({"to", "until", "till", "for", "on"})
_REMINDER_MARKERS: Final = frozenset({"to", "about", "that"})
_TIME: Final = re.compile(r"\d{1,2}(:\d\d)?(am|pm)|\d{4}-\d\d-\d\d|\d{1,2}/\d{1,2}(/\d{2,4})?")
_MAKE_UPDATES: Final = frozenset({"the", "my", "this", "that", "our", "these", "those", "all"})


def _is_date(word: str) -> bool:
    return word in DATE_WORDS or _TIME.fullmatch(word) is not None


def idiom_words(runs: Sequence[str]) -> Sequence[str]:
    """``runs`` with phrasal verbs replaced by their verbs, a reminder's text dropped, a
    rescheduling verb made "reschedule" and a leading "make the" made "update the"."""
    lowered = [_bare(run).lower() for run in runs]
    found: list[str] = []
    position = 0
    changed = False
    while position < len(runs):
        if lowered[position] not in _PHRASE_STARTS:
            found.append(runs[position])
            position += 1
            continue
        for length in range(_LONGEST, 0, -1):
            verb = PHRASES.get(tuple(lowered[position : position + length]))
            if verb is not None:
                found.extend(verb.split())
                position += length
                changed = True
                break
        else:
            found.append(runs[position])
            position += 1
    words = [_bare(run).lower() for run in found]
    if words and words[0] in _BRING and _UP_TO_DATE in found:
        # "bring the branch up to date": the verb is the phrase's, "update"
        found = ["update", *(word for word in found[1:] if word != _UP_TO_DATE)]
        words = [_bare(run).lower() for run in found]
    if len(words) > 2 and words[0] == "remind" and words[1] == "me":
        rest = words[2:]
        cut = next((i for i, word in enumerate(rest) if word in _REMINDER_MARKERS), len(rest))
        return ["create", "reminder", *found[2 : 2 + cut]]
    if len(words) > 2 and words[0] == "make" and words[1] in _MAKE_UPDATES:
        found[0], changed = "update", True
    if words and words[0] in MOVE_VERBS:
        for previous, word in pairwise(words[1:]):
            if previous in _DATE_PREPOSITIONS and (_is_date(word) or word == "next"):
                found[0], changed = "reschedule", True
                break
    return found if changed else runs


QUESTIONS: Final = {
    ("how", "many"): ("count",),
    ("how", "big"): ("size", "storage"),
    ("how", "large"): ("size", "storage"),
    ("how", "much", "space"): ("size", "storage"),
    ("how", "much", "storage"): ("size", "storage"),
    ("how", "much", "disk"): ("size", "storage"),
    ("how", "much", "room"): ("size", "storage"),
}
"""Question openings and the action each asks for (matched anywhere)."""
_QUESTIONS_AT: Final = {
    first: [(opening, action) for opening, action in QUESTIONS.items() if opening[0] == first]
    for first in {opening[0] for opening in QUESTIONS}
}

DERIVED: Final = {"remember": "memory", "memorize": "memory", "memorise": "memory"}
"""Verbs whose noun names a kind of tool or service by another stem ("remember" a memory): the
noun is added beside the verb, at full weight, so that a server named after it is named."""

UNIT_MEASURES: Final = {
    **dict.fromkeys(("seconds", "minutes", "hours", "days", "weeks", "mins", "hrs"), "duration"),
    **dict.fromkeys(("miles", "km", "kilometers", "kilometres", "meters", "metres"), "distance"),
    **dict.fromkeys(("feet", "steps", "blocks"), "distance"),
}
"""After "how many", a unit asks for its measure ("how many minutes" is "how long"), not a
count."""

_SAID: Final = frozenset({"said", "discussed", "posted", "talked", "written"})
_STRUCTURE: Final = frozenset(
    {"field", "fields", "column", "columns", "attribute", "attributes", "properties"}
)
_WHO_PLACES: Final = frozenset({"on", "in", "part", "member", "members", "working", "assigned"})
_PER_UNITS: Final = frozenset(
    {"page", "second", "minute", "hour", "day", "request", "call", "cent", "user", "seat"}
)
_QUESTION_WORDS: Final = frozenset(
    {*DERIVED, *_QUESTIONS_AT, "how", "what", "what's", "which", "who", "who's", "whos"}
    | {"say", "says", "per"}
)
"""The words :func:`question_words`'s rules start at."""

READ_ANYWHERE: Final = _QUESTION_WORDS | {phrase[0] for phrase in PHRASES if len(phrase) == 1}
"""Words (as :func:`bare_word` gives them) at which a rule here may read a request wherever
they stand; the others start at an address or a quote (:func:`has_value`), at a phrase's
opening (:data:`PHRASE_OPENINGS`) or at the request's first word (:data:`READ_FIRST`)."""

READ_FIRST: Final = MOVE_VERBS | {"remind", "make"}
"""Words at which :func:`idiom_words` may read a request that starts with them."""


_VERB_TEXT: Final = """
    create add new insert make post register open delete remove destroy trash drop erase wipe
    purge update edit modify patch change set rename reschedule get fetch retrieve read show
    view lookup describe list enumerate browse send publish search find query filter start
    begin launch run trigger stop end halt cancel abort terminate kill upload put download
    move transfer migrate copy duplicate clone approve accept confirm reject decline deny
    comment reply close resolve complete finish merge assign invite share mark schedule book
    enable disable press type click fill count aggregate export import sync archive restore
    pause resume restart connect disconnect subscribe unsubscribe follow unfollow watch tag
    label pin unpin lock commit push pull fork remind unlock rotate revoke grant upgrade
    downgrade deploy scale build test check verify validate convert translate summarize
    generate give tell notify ping
"""
VERBS: Final = frozenset(_VERB_TEXT.split())
"""The action words of requests: a request with none of them names only its objects."""

_NOT_PLURAL: Final = frozenset(
    {
        "status",
        "address",
        "news",
        "analytics",
        "always",
        "this",
        "its",
        "his",
        "is",
        "was",
        "has",
        "does",
        "yes",
        "us",
        "as",
        "plus",
        "access",
        "process",
        "class",
        "alias",
    }
)


def is_plural(word: str) -> bool:
    """Whether lowercased ``word`` names things in the plural."""
    return (
        len(word) > 3
        and word.isalpha()
        and word.endswith("s")
        and not word.endswith(("ss", "us", "is"))
        and word not in _NOT_PLURAL
    )


def plural_words(runs: Sequence[str]) -> list[str]:
    """The words of ``runs`` that name things in the plural, when they ask no question
    ("digitalocean kubernetes clusters", "which labels am I using"): when the request has no
    action either (:data:`VERBS`, checked on its stems, so in any language of the lexicon), the
    listing is what is asked for, if a tool holds one of them."""
    lowered = [_bare(run).lower() for run in runs]
    if question_words(runs):
        return []
    return [word for word in lowered if is_plural(word)]


def question_words(runs: Sequence[str]) -> list[str]:
    """The actions ``runs``'s questions ask for (to be added after its words)."""
    lowered = list(map(question_word, runs))
    if _QUESTION_WORDS.isdisjoint(lowered):
        return []  # most requests ask no question: every rule below starts at one of these
    added: list[str] = []
    for position, word in enumerate(lowered):
        if word in DERIVED:
            added.append(DERIVED[word])
        following = lowered[position + 1 : position + 4]
        if word == "how" and following[:1] == ["many"] and following[1:2]:
            measure = UNIT_MEASURES.get(following[1])
            if measure is not None:
                added.append(measure)
                continue
        for opening, action in _QUESTIONS_AT.get(word, ()):
            if tuple(lowered[position : position + len(opening)]) == opening:
                added.extend(action)
        if word in ("what", "what's") and _SAID.intersection(following):
            added.extend(("messages", "history"))
        if word in ("what", "which") and _STRUCTURE.intersection(following[:2]):
            added.extend(("schema", "describe"))
        if word in ("who", "who's", "whos") and _WHO_PLACES.intersection(following):
            added.extend(("member", "collaborator"))
        if word in ("say", "says") and following[:1] == ["about"] and "what" in lowered:
            added.append("search")
        if word == "per" and following and following[0] not in _PER_UNITS:
            added.extend(("aggregate", "group"))
    return list(dict.fromkeys(added))
