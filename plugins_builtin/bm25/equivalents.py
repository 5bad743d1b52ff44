"""The lexical equivalence table: words a query may use for what tools call otherwise.

One group a line, phrases separated by commas. A query word that is one of a group's phrases
also searches for the words of the group's other phrases, each at :data:`EQUIVALENT_WEIGHT` of
its own weight (``jira create ticket`` also looks for "issue"; ``github open pr`` for "pull" and
"request"). Only single-word phrases are looked up; any phrase may be what they expand to. The
index ranks a word's equivalents together as one *expansion token* (:func:`expansion_token`),
whose postings it merges once per change of the index.

The table is general API and tool vocabulary (verbs of create/read/update/delete, common
objects, abbreviations), not a list of this project's tools. It was measured on every eval set
(docs/tool-search.md): it helps the keyword sets and the natural-language sets alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from .tokenize import split_words, stem

__all__ = [
    "EQUIVALENTS",
    "EQUIVALENT_WEIGHT",
    "EXPANSION_MARK",
    "Equivalents",
    "equivalent_words",
    "expansion_token",
]

EQUIVALENT_WEIGHT: Final = 0.4
"""How much an equivalent counts, relative to the query word it stands for."""

_TABLE = """
create, add, new, insert, make, post, register, open
delete, remove, destroy, trash, drop, erase, wipe, purge
update, edit, modify, patch, change, set, rename, reschedule
get, fetch, retrieve, read, show, view, lookup, describe
list, enumerate, all, browse
send, post, publish
search, find, query, lookup, filter
start, begin, launch, run, trigger
stop, end, halt, cancel, abort, terminate, kill
upload, put
download, get, fetch
image, picture, photo
message, text, sms
email, mail
user, member, account
ticket, issue
complete, finish, done, close, resolve
schedule, book, plan
copy, duplicate, clone
subscribe, subscription, follow, watch
unsubscribe, unfollow, unwatch
member, participant, attendee, invitee, collaborator
content, item, children, entry
history, log, timeline
current, now, today, latest
directory, folder, dir
file, document, doc
move, transfer, migrate
approve, accept, confirm
reject, decline, deny
comment, reply, note
repository, repo
organization, org
permission, access, role
remember, store, save, memorize
recall, retrieve, remember
quota, usage, limit
count, total, number
tag, label
disable, deactivate, off
enable, activate, on
invite, share
call, phone, dial
chart, graph, plot
weather, forecast
price, cost
buy, purchase, order
pr, pull request
db, database
config, configuration
env, environment
auth, authentication
k8s, kubernetes
msg, message
dm, direct message
mkdir, create directory
ls, list directory
rm, delete
mv, move
cp, copy
cat, read file
info, information
stats, statistics
id, identifier
url, link
vm, virtual machine, droplet, instance
bug, issue, ticket
notify, ping, tell, announce, send message, post message
reaction, react, emoji, thumbs
elevation, altitude, height
directions, route, navigate, itinerary
distance, far, closer, farther
readme, file
task, todo, reminder
remember, memory
press, hit, keystroke
dialog, alert, popup, modal
close, dismiss
schema, structure
execute, evaluate, eval, run
"""


def _parse(table: str) -> dict[str, tuple[tuple[str, ...], ...]]:
    expansions: dict[str, list[tuple[str, ...]]] = {}
    for line in table.strip().splitlines():
        phrases = [tuple(stem(word) for word in split_words(text)) for text in line.split(",")]
        phrases = [phrase for phrase in phrases if phrase]
        for phrase in phrases:
            if len(phrase) != 1:
                continue
            known = expansions.setdefault(phrase[0], [])
            known.extend(other for other in phrases if other != phrase and other not in known)
    return {word: tuple(found) for word, found in expansions.items()}


Equivalents = Mapping[str, tuple[tuple[str, ...], ...]]
"""Stemmed words and the stemmed phrases each also searches for."""

EQUIVALENTS: Final[Equivalents] = _parse(_TABLE)
"""The table above, parsed."""

EXPANSION_MARK: Final = "~"
"""The first character of an expansion token (no word token has it: they are letters and
digits)."""


def expansion_token(token: str) -> str:
    """The token that stands for ``token``'s equivalents (``~creat`` for "create")."""
    return EXPANSION_MARK + token


def equivalent_words(table: Equivalents, token: str) -> tuple[str, ...]:
    """The distinct stems of ``token``'s equivalent phrases, without ``token`` itself."""
    words = (word for phrase in table.get(token, ()) for word in phrase)
    return tuple(word for word in dict.fromkeys(words) if word != token)
