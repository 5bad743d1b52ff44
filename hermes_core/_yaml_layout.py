"""Reading and writing YAML so that an edited file keeps the user's layout.

ruamel.yaml's round-trip mode keeps comments, but attaches the blank lines and comments *below*
an entry to that entry, and writes an emptied block collection badly. The functions here move
that text to where a reader expects it when entries are added, replaced or removed, guess the
file's indentation, and map between round-trip nodes, plain values and line numbers. They serve
:mod:`hermes_core._config`; nothing here knows what a configuration key means.
"""

from __future__ import annotations

import contextlib
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ruamel.yaml import YAML

Loc = tuple[int | str, ...]


# A plain key takes its spaces before the ':' (stripped below): a lazy key followed by spaces
# overlapped with them, and a line of spaces without a ':' took quadratic time.
_KEY_LINE = re.compile(r"^(\s*)(?:-\s+)?(?:([^\s#'\"][^:#]*)|('[^']*'|\"[^\"]*\")\s*):(?:\s|$)")


def key_near_line(text: str, line: int) -> str | None:
    """The dotted key whose block holds ``line``, read from indentation (for YAML syntax errors,
    where no parse tree exists)."""
    stack: list[tuple[int, str]] = []
    for raw in text.splitlines()[:line]:
        match = _KEY_LINE.match(raw)
        if match is None:
            continue
        indent = len(match.group(1))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        key = match.group(2).rstrip() if match.group(2) is not None else match.group(3)
        stack.append((indent, key.strip("'\"")))
    return ".".join(key for _, key in stack) or None


def round_trip_yaml() -> YAML:
    """A round-trip loader and dumper that keeps quotes and never re-wraps long lines."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096
    return yaml


def plain(node: Any) -> Any:
    """Round-trip YAML nodes (``CommentedMap``, ``ScalarFloat``...) as plain Python values."""
    from ruamel.yaml.scalarbool import ScalarBoolean

    if isinstance(node, dict):
        return {plain(key): plain(value) for key, value in node.items()}
    if isinstance(node, list):
        return [plain(item) for item in node]
    if isinstance(node, ScalarBoolean):
        return bool(node)
    for kind in (bool, int, float, str):
        if isinstance(node, kind):
            return kind(node)
    return node


def line_of(document: Any, loc: Loc) -> int | None:
    """The 1-based line of the deepest part of ``loc`` found in a round-trip document."""
    line: int | None = None
    node = document
    for part in loc:
        position: Any = None
        lines = getattr(node, "lc", None)
        if isinstance(node, dict) and part in node:
            with contextlib.suppress(KeyError, TypeError, AttributeError):
                position = lines.key(part) if lines is not None else None
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            with contextlib.suppress(KeyError, TypeError, AttributeError):
                position = lines.item(part) if lines is not None else None
        else:
            break
        if position is not None:
            line = position[0] + 1
        node = node[part]
    return line


def guess_indent(text: str) -> tuple[int, int, int]:
    """(mapping indent, sequence indent, dash offset) as the file uses them, defaults 2, 2, 0."""
    mapping: int | None = None
    sequence: tuple[int, int] | None = None
    parent: int | None = None
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        if parent is not None and indent > parent:
            if stripped.startswith("- ") and sequence is None:
                after_dash = len(stripped) - len(stripped[1:].lstrip(" "))
                sequence = (indent - parent + after_dash, indent - parent)
            elif not stripped.startswith("-") and mapping is None:
                mapping = indent - parent
        parent = indent if stripped.endswith(":") and not stripped.startswith("- ") else None
        if mapping is not None and sequence is not None:
            break
    mapping = mapping or 2
    sequence_indent, offset = sequence or (mapping, 0)
    return mapping, max(sequence_indent, offset + 2), offset


def _round_trip(value: Any) -> Any:
    """Plain mappings and lists as round-trip nodes, which can carry comments."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(value, dict) and not isinstance(value, CommentedMap):
        return CommentedMap((key, _round_trip(item)) for key, item in value.items())
    if isinstance(value, list) and not isinstance(value, CommentedSeq):
        return CommentedSeq(_round_trip(item) for item in value)
    return value


def flow_when_empty(node: Any, marked: list[Any] | None = None) -> list[Any]:
    """Mark every empty block collection as flow style (``[]``, ``{}``) and return them: ruamel
    writes an emptied block collection after its key's comment, on a line of its own, which is
    not valid YAML. Undo with :func:`block_again` after dumping, so that an entry added later
    makes the collection a block again."""
    marked = [] if marked is None else marked
    style = getattr(node, "fa", None)
    if isinstance(node, dict | list) and style is not None:
        if not node and not style.flow_style():
            style.set_flow_style()
            marked.append(node)
        for child in node.values() if isinstance(node, dict) else node:
            flow_when_empty(child, marked)
    return marked


def block_again(marked: list[Any]) -> None:
    """Undo :func:`flow_when_empty`."""
    for node in marked:
        node.fa.set_block_style()


def renew_empty(holder: Any, key: Any) -> None:
    """Replace the emptied collection at ``holder[key]`` with a fresh empty one: ruamel keeps
    the comments of deleted entries on the old one and writes them around ``[]`` badly."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    fresh = CommentedMap() if isinstance(holder[key], dict) else CommentedSeq()
    fresh.fa.set_flow_style()
    holder[key] = fresh
    give_trailing(holder, key, _take_leading(holder, key))


def _is_block(value: Any) -> bool:
    style = getattr(value, "fa", None)
    return (
        isinstance(value, dict | list)
        and bool(value)
        and style is not None
        and not (style.flow_style())
    )


def _take_leading(mapping: Any, key: Any) -> str:
    """Detach the comment lines kept between ``key:`` and the first entry of a block collection
    that is no longer one; ruamel would write them before the new value, breaking the line."""
    slots = mapping.ca.items.get(key)
    if slots is None or len(slots) < 4 or slots[3] is None or _is_block(mapping[key]):
        return ""
    text = "".join(token.value for token in slots[3] if token is not None)
    slots[3] = None
    return text


def _last_key(node: Any) -> Any:
    return next(reversed(node)) if isinstance(node, dict) else len(node) - 1


def _trailing_slot(node: Any, key: Any) -> tuple[list[Any], int]:
    """Where ruamel keeps the text that follows entry ``key`` of ``node``: the comment slot of
    the last line of that entry (inside a nested block collection if it is one)."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    value = node[key]
    while _is_block(value):
        node, key = value, _last_key(value)
        value = node[key]
    if isinstance(value, CommentedMap | CommentedSeq) and not isinstance(node, dict):
        # A flow or empty collection that is a list item carries its own end-of-line comment;
        # as a mapping value, the emitter reads it from the mapping's slot for the key.
        if value.ca.comment is None:
            value.ca.comment = [None, None]
        comment: list[Any] = value.ca.comment
        return comment, 0
    slots: list[Any] = node.ca.items.setdefault(key, [None, None, None, None])
    return slots, 2 if isinstance(node, dict) else 0


def take_trailing(node: Any, key: Any) -> str:
    """Detach the lines after entry ``key`` (blank lines, comments about what comes next),
    keeping its end-of-line comment. ruamel attaches those lines to the entry above them, so an
    entry added or removed below would otherwise land after them or take them along."""
    slots, index = _trailing_slot(node, key)
    token = slots[index]
    if token is None:
        return ""
    text: str = token.value
    end = text.find("\n")
    if end < 0 or end + 1 == len(text):
        return ""
    token.value = text[: end + 1]
    return text[end + 1 :]


def give_trailing(node: Any, key: Any, text: str) -> None:
    """Attach lines detached by :func:`take_trailing` after entry ``key``."""
    if not text:
        return
    from ruamel.yaml.error import CommentMark
    from ruamel.yaml.tokens import CommentToken

    slots, index = _trailing_slot(node, key)
    token = slots[index]
    if token is None:
        slots[index] = CommentToken("\n" + text, CommentMark(0))
    else:
        head: str = token.value
        token.value = (head if head.endswith("\n") else head + "\n") + text


def insert(mapping: Any, key: str, value: Any) -> None:
    """``mapping[key] = value``, keeping the lines that followed the replaced entry (or the
    mapping's last entry, for a new key) after the new one."""
    value = _round_trip(value)
    anchor = key if key in mapping else (list(mapping)[-1] if mapping else None)
    carry = take_trailing(mapping, anchor) if anchor is not None else ""
    mapping[key] = value
    give_trailing(mapping, key, _take_leading(mapping, key) + carry)


def _leading(node: Any, key: Any) -> str:
    """The comment lines ruamel keeps above entry ``key`` (not the first one) as its own."""
    slots = node.ca.items.get(key)
    if not slots or len(slots) < 2 or not slots[1]:
        return ""
    return "".join(" " * token.column + token.value for token in slots[1] if token is not None)


def _give_leading(node: Any, key: Any, text: str) -> None:
    """Put comment lines (already indented) above entry ``key``."""
    from ruamel.yaml.error import CommentMark
    from ruamel.yaml.tokens import CommentToken

    slots: list[Any] = node.ca.items.setdefault(key, [None, None, None, None])
    while len(slots) < 2:
        slots.append(None)
    slots[1] = [CommentToken(text, CommentMark(0)), *(slots[1] or [])]


def remove(node: Any, key: Any) -> str:
    """Delete entry ``key`` of a mapping or list (an index). Its end-of-line comment and the
    comments inside it go with it; the comment lines above and below it stay, after the
    previous entry or above the next one.

    Returns those lines when ``node`` is left empty: only the caller, which holds ``node``, can
    put them after it (with :func:`renew_empty` and :func:`give_trailing`).
    """
    mapping = isinstance(node, dict)
    keys = list(node) if mapping else list(range(len(node)))
    position = keys.index(key)
    kept = _leading(node, key) + take_trailing(node, key)
    del node[key]
    if mapping:
        # CommentedMap keeps the comment slots of a deleted key; a later key of that name
        # would inherit them.
        node.ca.items.pop(key, None)
    if not node:
        return kept
    if kept and position > 0:
        give_trailing(node, keys[position - 1], kept)
    elif kept:
        _give_leading(node, keys[1] if mapping else 0, kept)
    return ""


def preamble(text: str) -> str:
    """The text ruamel drops on loading: a whole file of comments (a starter config with every
    setting commented out), or everything up to a ``---`` line that starts the document (a
    comment on that line ruamel keeps itself)."""
    kept = ""
    seen = 0
    for line in text.splitlines(keepends=True):
        bare = line.split("#", 1)[0].strip()
        if bare == "---":
            kept = text[:seen] + "---\n"
        elif bare and not bare.startswith("%"):
            return kept
        seen += len(line)
    return text if text.strip() else ""


def take_all_comments(node: Any, middle: str = "") -> str:
    """Detach the comments of an emptied collection as text: those above its first entry,
    then ``middle``, then those at its end (the close of a file)."""

    def text_of(tokens: Any) -> str:
        return "".join(" " * token.column + token.value for token in tokens or [] if token)

    head = text_of(node.ca.comment[1]) if node.ca.comment and len(node.ca.comment) > 1 else ""
    tail = text_of(node.ca.end)
    node.ca.comment = None
    node.ca.end = []
    return head + middle + tail
