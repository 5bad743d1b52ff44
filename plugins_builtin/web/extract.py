"""A fetched page as text a model reads: the main text of an HTML page (trafilatura, the
navigation, ads and footers left out) as markdown with its title, plain text and JSON as they
are; bounded in characters, with a note saying what was cut."""

from __future__ import annotations

import codecs
import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hermes_core._plugin_support import shortened

if TYPE_CHECKING:
    from .fetch import Page

INSTALL: str = "pip install 'hermes-core-agent[web]'"
NO_TEXT: str = (
    "the page has no text as it was served: a page that builds itself with JavaScript "
    "shows its text in a browser (browser_navigate)"
)


NO_CHARSET: str = "the page names no charset and is not UTF-8: read as windows-1252"
_OTHER_SCRIPTS: dict[str, tuple[str, ...]] = {
    "Japanese": ("cp932", "shift_jis", "shift_jis_2004", "shift_jisx0213", "euc_jp"),
    "Japanese (EUC, ISO-2022)": ("euc_jis_2004", "euc_jisx0213", "iso2022_jp", "iso2022_jp_2"),
    "Chinese": ("gb2312", "gbk", "gb18030", "hz", "big5", "big5hkscs", "cp950"),
    "Korean": ("cp949", "euc_kr", "johab", "iso2022_kr"),
    "Cyrillic": ("cp1251", "koi8-r", "koi8-u", "iso8859-5", "cp866", "mac-cyrillic", "cp855"),
    "Greek": ("cp1253", "iso8859-7", "mac-greek"),
    "Hebrew": ("cp1255", "iso8859-8", "cp862"),
    "Arabic": ("cp1256", "iso8859-6", "cp720", "cp864"),
    "Thai": ("cp874", "tis-620"),
}
"""The charsets (Python's codec names) of scripts other than Latin a page naming none is read in
when its bytes show one (:func:`_undeclared`): CJK, Cyrillic, Greek, Hebrew, Arabic, Thai."""
_GUESSED_FROM = 20_000
"""How many bytes of a page naming no charset its charset is guessed from (a browser looks at
the first few kilobytes too)."""
_NON_ASCII_RUN = re.compile(rb"(?:[\x81-\x83][\x40-\x7e]|[\x80-\x9f\xa1-\xff])+")
"""Bytes no ASCII holds side by side (a no-break space, 0xA0, parts them: French puts one
inside its quotation marks), Shift_JIS's kana and signs taken whole: a first byte 0x81-0x83
(undefined in windows-1252, or a ``‚`` or ``ƒ`` no Latin text writes before a letter) and a
second in ASCII."""
_META_CHARSET = re.compile(rb"<meta\s[^>]*?charset\s*=\s*[\"']?\s*([-\w.:]+)", re.IGNORECASE)
"""A charset a page names in a ``<meta>`` (``charset=``, or the ``content`` of an
``http-equiv``), looked for in its first 1024 bytes as a browser does (WHATWG, "prescan")."""
MAX_TITLE = 300
"""The longest title given (as web_search's titles): a page's <title> may be megabytes."""
_COMPRESSED = (b"\x1f\x8b\x08", b"\x28\xb5\x2f\xfd")
"""How a gzip and a zstd file begin: a body trafilatura expands (up to ``max_bytes``)."""


@dataclass(frozen=True)
class Extracted:
    """A page's ``title`` (may be empty), its ``text`` within the cap, the ``chars`` it had
    before the cap and the ``notes`` saying what was cut or left out."""

    title: str
    text: str
    chars: int
    notes: list[str]


def extract(page: Page, max_chars: int, max_bytes: int) -> Extracted:
    """The text of ``page``, cut at ``max_chars`` characters; a body that is a compressed file
    itself expands to ``max_bytes`` at most."""
    notes: list[str] = []
    if page.kind == "html":
        markup = _markup(page.body, page.charset, max_bytes, notes)
        title, text, whole = _html(markup) if markup is not None else ("", "", False)
        if markup is None:
            notes.append(
                f"the page is a compressed file that expands past max_bytes ({max_bytes:,} "
                "bytes), or to another compressed file: not read"
            )
        elif not text.strip():
            notes.append(NO_TEXT)
        elif whole:
            notes.append("no main article was found: this is the whole text of the page")
    else:
        charset = _bom(page.body) or page.charset
        if charset is None and page.content_type.startswith("text/") and not _utf8(page.body):
            # JSON is UTF-8 by its RFC; text with no name is read as a page naming none.
            charset = _undeclared(page.body, notes)
        title, text = "", _decoded(page.body, charset, notes)
    title = shortened(title, MAX_TITLE)  # the page's to choose, as its text is: bounded too
    chars = len(text)
    if chars > max_chars:
        cut_at = text.rfind(" ", max_chars - 200, max_chars)
        text = text[: cut_at if cut_at > 0 else max_chars].rstrip()
        notes.append(f"cut: the first {len(text)} of {chars} characters are shown")
    if page.cut:
        notes.append(f"cut: only the first {len(page.body)} bytes of the page were read")
    return Extracted(title, text, chars, notes)


def _decoded(body: bytes, charset: str | None, notes: list[str]) -> str:
    """``body`` in the charset the server named; one Python reads no text with (``rot13``, a
    made-up name) is the server's word, not a reason to fail: UTF-8, or windows-1252 for a
    body that is not UTF-8 (as one naming no charset), said in a note."""
    named = _as_browsers_read(charset or "utf-8")
    try:
        return body.decode(named, errors="replace")
    except LookupError:
        shown = f"the page's charset {named[:60]!r} is not a text encoding"
        if _utf8(body):
            notes.append(f"{shown}: read as UTF-8")
            return body.decode("utf-8", errors="replace")
        notes.append(f"{shown} and the page is not UTF-8: read as windows-1252")
        return body.decode("windows-1252", errors="replace")


def _as_browsers_read(charset: str) -> str:
    """``charset``, or windows-1252 for ISO-8859-1 and ASCII, which a browser reads as it
    (WHATWG's labels of windows-1252): pages said to be one are most often the other, and its
    bytes 0x80-0x9F are quotes, dashes and the euro sign, not control characters."""
    try:
        name = codecs.lookup(charset).name
    except LookupError:
        return charset
    return "windows-1252" if name in ("iso8859-1", "ascii") else charset


def _markup(body: bytes, charset: str | None, cap: int, notes: list[str]) -> str | None:
    """``body`` as text for trafilatura, or ``None`` for a compressed file that expands past
    ``cap`` bytes or to another compressed file. A body that is a compressed file (gzip,
    zlib, what trafilatura expands by its magic number, whatever charset the server named) is
    expanded first, to ``cap`` bytes at most: given bytes, trafilatura expands it to its own
    20 MB (56 KB read were 18 MB of HTML, 1 GB of memory and minutes of CPU). Then the charset
    the server named, else the one the page names in a ``<meta>``, when the body is not UTF-8;
    naming none that Python reads, windows-1252, as a browser reads it (WHATWG), said in a
    note (trafilatura ignores both: it reads UTF-8, else guesses, and guessed windows-1250 for
    Latin-1 French). A body in valid UTF-8 is UTF-8 whatever the header says: no page of
    another charset with a non-ASCII letter is valid UTF-8 by chance."""
    try:
        from trafilatura.utils import decode_file, handle_compressed_file
    except ImportError:  # a trafilatura that moved them: UTF-8, which it reads first too
        return body.decode("utf-8", errors="replace")
    if not _utf8(body):  # no compressed file is valid UTF-8
        expanded = handle_compressed_file(body, max_size=cap)  # the same bytes if it is none
        if expanded is not body:
            nested = handle_compressed_file(expanded, max_size=cap) is not expanded
            if nested or expanded.startswith(_COMPRESSED):
                return None  # a compressed file in a compressed file
            body = expanded
        elif body.startswith(_COMPRESSED):  # past the cap (or cut short by max_bytes)
            return None
    if _utf8(body):
        return decode_file(body, max_size=cap)
    # As a browser reads it: a BOM before the header, the header before the page's <meta>.
    charset = _bom(body) or charset or _meta_charset(body)
    if charset is None:
        return body.decode(_undeclared(body, notes), errors="replace")
    return _decoded(body, charset, notes)


def _undeclared(body: bytes, notes: list[str]) -> str:
    """The charset ``body``, a page naming none and not UTF-8, is read in, said in a note: the
    one its first bytes show when that is of another script than Latin (Shift_JIS, GBK,
    windows-1251: see :data:`_OTHER_SCRIPTS`) and they do not look Latin (:func:`_not_latin`),
    as a browser guesses them; else windows-1252, the web's default (WHATWG), where a guess
    between Latin charsets is wrong as often as not (windows-1250 for French)."""
    from charset_normalizer import from_bytes

    sample = body[:_GUESSED_FROM]
    if len(body) > _GUESSED_FROM and (line_end := sample.rfind(b"\n")) > 0:
        sample = sample[:line_end]  # not half a character of a multi-byte charset
    best = from_bytes(sample).best() if _not_latin(sample) else None
    if best is not None:
        guessed = codecs.lookup(best.encoding).name
        if any(guessed in names for names in _OTHER_SCRIPTS.values()):
            notes.append(
                f"the page names no charset and is not UTF-8: read as {guessed}, "
                "guessed from its bytes"
            )
            return guessed
    notes.append(NO_CHARSET)
    return "windows-1252"


def _not_latin(sample: bytes) -> bool:
    """Whether most of ``sample``'s bytes outside ASCII stand next to another: a CJK
    character's two bytes, a Cyrillic, Greek, Hebrew, Arabic or Thai word's letters do, a Latin
    text's accented letters mostly stand alone between ASCII ones (``très``, ``Smørrebrød``),
    which charset-normalizer read as Big5 or Johab in a short text."""
    runs = [len(run) for run in _NON_ASCII_RUN.findall(sample)]
    return 2 * sum(length for length in runs if length > 1) > sum(runs)


def _meta_charset(body: bytes) -> str | None:
    """The charset the page names in a ``<meta>`` of its first 1024 bytes, if any; a UTF-16
    one is UTF-8, as a browser takes it (a page whose ``<meta>`` can be read this way is not
    UTF-16)."""
    found = _META_CHARSET.search(body[:1024])
    if found is None:
        return None
    named = found.group(1).decode("ascii", errors="replace")
    return "utf-8" if named.lower().replace("_", "-").startswith("utf-16") else named


def _bom(body: bytes) -> str | None:
    """The charset the byte order mark ``body`` starts with names (UTF-16's; UTF-8's, which the
    UTF-8 reading drops), if any."""
    if body.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    return "utf-8-sig" if body.startswith(codecs.BOM_UTF8) else None


def _utf8(body: bytes) -> bool:
    """Whether ``body`` is valid UTF-8, but for a character cut at its end (``max_bytes``)."""
    try:
        codecs.getincrementaldecoder("utf-8")().decode(body, final=False)
    except UnicodeDecodeError:
        return False
    return True


def _html(markup: str) -> tuple[str, str, bool]:
    try:
        import trafilatura
    except ImportError as exc:
        raise RuntimeError(f"web_extract needs trafilatura: {INSTALL} ({exc})") from None
    _quiet("trafilatura")
    tree = trafilatura.load_html(markup)
    if tree is None:
        return "", trafilatura.html2txt(markup) or "", True
    # The title alone, not extract_metadata: that also hunts for dates and authors across the
    # whole page and costs as much as the extraction itself (benchmarks/web_extract.py).
    title = _title(tree)
    text = trafilatura.extract(
        tree, output_format="markdown", include_links=False, include_comments=False
    )
    if text:
        return title, _without_title(text, title), False
    return title, trafilatura.html2txt(markup) or "", True


def _without_title(text: str, title: str) -> str:
    """``text`` without its first line when that line says ``title`` again (a markdown
    heading, or a plain line where trafilatura kept the ``<h1>`` as one): the result's own
    first line is the title, and a model reads each token it is given."""
    first, _, rest = text.partition("\n")
    if title and first.lstrip("#").strip() == title.strip():
        return rest.lstrip("\n")
    return text


def _title(tree: Any) -> str:
    try:
        from trafilatura.metadata import extract_title
    except ImportError:  # a trafilatura that moved it: the page's <title>
        found = tree.findtext(".//title")
        return " ".join(found.split()) if isinstance(found, str) else ""
    return extract_title(tree) or ""


def _quiet(name: str) -> None:
    """The logger ``name`` left to its critical records, unless someone set its level: what
    trafilatura logs is about the page ("lxml parsing failed", "discarding data"), which the
    result's notes say, and on hermes' stderr it read as hermes' own errors."""
    logger = logging.getLogger(name)
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.CRITICAL)
