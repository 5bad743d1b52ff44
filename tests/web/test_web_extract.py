"""web_extract against a real HTTP server on 127.0.0.1 (tests/web/local_site.py): the article's
text without the navigation, a redirect chain, a 20 MB page cut, types it does not read, and
the address rules on every hop. The site is reached under test names ("news.example") that an
injected resolver maps to 127.0.0.1 and that the settings allow; the system's resolver knows
none of them, so a page that arrives proves the connection went to the checked address."""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import FrameType

import anyio
import pytest
from local_site import (
    ADVERT,
    ARTICLE_TEXT,
    BIG_BYTES,
    BOMB_BYTES,
    CZECH_TEXT,
    DRIP_BYTES,
    DRIP_PAUSE,
    FOOTER,
    KATAKANA_TEXT,
    LATIN1_TEXT,
    MARKED_TITLE,
    NAVIGATION,
    QUOTED_TEXT,
    SHORT_LATIN_TEXTS,
    UNDECLARED_TEXTS,
    LocalSite,
    gzip_bomb,
    local_site,
)

from hermes_core import Config, Host, ToolResult
from hermes_core.testing import HermesCli, make_host
from plugins_builtin.web import WebExtract, WebSettings, fetcher_of
from tests.peak_rss import peak_rss_growth

_NAMES = {"news.example": ["127.0.0.1"], "intranet.example": ["10.0.0.1"]}


class NamesForTests:
    """A resolver of test names (a fake of DNS): counts what it was asked."""

    def __init__(self, names: dict[str, list[str]] | None = None) -> None:
        self.names = names if names is not None else _NAMES
        self.asked: list[str] = []

    def __call__(self, host: str, port: int) -> Sequence[str]:
        self.asked.append(host)
        if host in self.names:
            return self.names[host]
        return [host]  # a literal address resolves to itself


@pytest.fixture(scope="module")
def site() -> Iterator[LocalSite]:
    with local_site() as running:
        yield running


def _extract(
    urls: list[str], resolver: NamesForTests | None = None, **settings: object
) -> ToolResult:
    chosen = WebSettings(allowed_hosts=["news.example"])
    chosen = dataclasses.replace(chosen, **settings)  # type: ignore[arg-type]
    handler = WebExtract(chosen, fetcher_of(chosen, resolver or NamesForTests()))
    return anyio.run(handler, urls)


def test_an_article_page_gives_its_text_and_title_without_navigation_or_ads(
    site: LocalSite,
) -> None:
    result = _extract([site.url("/article", "news.example")])

    text = result.text_content
    assert not result.is_error, text
    assert text.startswith("# Otters return to the valley")
    for paragraph in ARTICLE_TEXT:
        assert paragraph in text
    for left_out in [*NAVIGATION, ADVERT, FOOTER, "Local fair cancelled"]:
        assert left_out not in text


def test_the_title_is_the_pages_heading_given_once(site: LocalSite) -> None:
    # The <h1> (no site name: the URL names the site), not repeated as the text's first line:
    # the model reads each token it is given.
    result = _extract([site.url("/article", "news.example")])

    text = result.text_content
    assert not result.is_error, text
    assert result.structured["pages"][0]["title"] == "Otters return to the valley"
    assert text.count("Otters return to the valley") == 1, text[:300]
    body = text.split("\n\n", 1)[1]
    assert body.startswith(ARTICLE_TEXT[0]), body[:200]


def test_a_heading_the_text_gives_as_a_plain_line_is_not_repeated_either(
    site: LocalSite,
) -> None:
    result = _extract([site.url("/listing", "news.example")])

    text = result.text_content
    assert not result.is_error, text
    assert text.startswith("# Directory listing for /\n")
    assert text.count("Directory listing for /") == 1, text
    assert "article.html" in text


def test_the_connection_goes_to_the_checked_address_with_the_name_as_host(
    site: LocalSite,
) -> None:
    resolver = NamesForTests()
    site.hosts.clear()
    result = _extract([site.url("/article", "news.example")], resolver)

    assert not result.is_error, result.text_content
    assert resolver.asked == ["news.example"]
    assert site.hosts == [f"news.example:{site.port}"]


def test_a_redirect_chain_is_followed_one_checked_hop_at_a_time(site: LocalSite) -> None:
    resolver = NamesForTests()
    result = _extract(
        [site.url("/r1", "news.example")], resolver, allowed_hosts=["news.example", "127.0.0.1"]
    )

    assert not result.is_error, result.text_content
    assert ARTICLE_TEXT[0] in result.text_content
    assert f"URL: {site.url('/article')}" in result.text_content
    assert "(redirected from" in result.text_content
    assert resolver.asked == ["news.example", "news.example", "127.0.0.1", "127.0.0.1"]


def test_a_redirect_loop_stops_at_max_redirects(site: LocalSite) -> None:
    result = _extract([site.url("/loop", "news.example")], max_redirects=3)

    assert result.error_code == "TOOL_ERROR"
    assert "more than 3 redirects" in result.text_content
    # The address in full, as the others in the result are (the answer said "/loop").
    assert f"(the last to {site.url('/loop', 'news.example')})" in result.text_content


@pytest.mark.parametrize(
    ("path", "address"),
    [
        ("/to-private", "10.0.0.1"),
        ("/to-loopback", "127.0.0.1"),
        ("/to-metadata", "169.254.169.254"),
    ],
)
def test_a_redirect_to_a_private_address_is_refused(
    site: LocalSite, path: str, address: str
) -> None:
    result = _extract([site.url(path, "news.example")])

    assert result.error_code == "DENIED"
    assert address in result.text_content
    assert "plugins.entries.web.allowed_hosts" in result.text_content


def test_a_20_mb_page_is_read_up_to_the_cap_and_said_to_be_cut(site: LocalSite) -> None:
    result = _extract([site.url("/big", "news.example")], max_bytes=200_000, max_chars=5000)

    assert not result.is_error, result.text_content
    text = result.text_content
    assert "Paragraph 0 of the very long page" in text
    assert "[cut: only the first 200000 bytes of the page were read]" in text
    assert "[cut: the first" in text
    assert len(text) < 6000
    assert result.structured["pages"][0]["cut"] is True
    assert site.big_bytes_sent[-1] < BIG_BYTES


def test_a_gzip_bomb_is_expanded_up_to_the_cap_only_and_gzip_in_gzip_is_refused(
    site: LocalSite,
) -> None:
    gzip_bomb()  # made, and trafilatura imported, before the measure
    assert not _extract([site.url("/article.gz", "news.example")]).is_error
    urls = [
        site.url(path, "news.example")
        for path in ("/bomb", "/bomb-in-gzip", "/article.br", "/article.gz", "/article.deflate")
    ]
    with peak_rss_growth() as peak:
        result = _extract(urls, max_bytes=200_000)

    # httpx expands each chunk of the network whole (64 KiB of gzip is 64 MiB of text) and a
    # chain of codings in one step (1 KB of gzip in gzip is the whole 256 MiB).
    assert peak.grown < 32, f"the peak RSS grew by {peak.grown:.0f} MiB"
    bomb, inner, brotli, gzipped, deflated = result.text_content.split("\n\n---\n\n")
    assert "[cut: only the first 200000 bytes of the page were read]" in bomb
    assert "content encoding is 'gzip, gzip'" in inner
    assert "content encoding is 'br'" in brotli
    assert ARTICLE_TEXT[0] in gzipped
    assert ARTICLE_TEXT[0] in deflated
    assert len(gzip_bomb()) < BOMB_BYTES // 500


def test_a_type_other_than_html_text_or_json_is_refused_before_its_body(site: LocalSite) -> None:
    result = _extract([site.url("/report.pdf", "news.example")])

    assert result.error_code == "TOOL_ERROR"
    assert "application/pdf" in result.text_content
    assert "reads HTML, plain text and JSON only" in result.text_content
    # ... and says what can read it instead, if anything
    assert "no hermes tool reads a PDF's text" in result.text_content
    assert "pdftotext" in result.text_content


def test_plain_text_and_json_pass_through_bounded(site: LocalSite) -> None:
    result = _extract(
        [
            site.url("/notes.txt", "news.example"),
            site.url("/data.json", "news.example"),
            site.url("/long.txt", "news.example"),
        ],
        max_chars=1000,
    )

    pages = result.text_content.split("\n\n---\n\n")
    assert "Plain notes: é" in pages[0]
    assert '{"otters": 42, "river": "Wye"}' in pages[1]
    assert "[cut: the first" in pages[2]
    assert "of 100000 characters are shown]" in pages[2]


def test_one_bad_url_among_good_ones_is_reported_beside_them(site: LocalSite) -> None:
    result = _extract([site.url("/article", "news.example"), site.url("/missing", "news.example")])

    assert not result.is_error
    assert ARTICLE_TEXT[0] in result.text_content
    assert "HTTP 404" in result.text_content


def test_a_page_dripping_slower_than_the_timeout_is_cut_off_and_the_others_are_kept(
    site: LocalSite,
) -> None:
    started = time.monotonic()
    result = _extract(
        [site.url("/drip", "news.example"), site.url("/article", "news.example")], timeout=1.0
    )
    took = time.monotonic() - started

    assert took < DRIP_BYTES * DRIP_PAUSE / 2  # 10 s of drip; each request has 1 s in all
    drip, article = result.text_content.split("\n\n---\n\n")
    assert "did not arrive whole within 1 s (plugins.entries.web.timeout)" in drip
    assert ARTICLE_TEXT[0] in article


def test_a_charset_no_codec_reads_is_read_as_utf8_with_a_note_beside_the_other_pages(
    site: LocalSite,
) -> None:
    config = {"plugins": {"entries": {"web": {"allowed_hosts": ["127.0.0.1"]}}}}
    host = make_host(Config.model_validate(config))
    try:
        urls = [site.url("/odd-charset.txt"), site.url("/rot13.txt"), site.url("/article")]
        result = _call(host, "web_extract", {"urls": urls})
    finally:
        host.close()

    assert not result.is_error, result.text_content
    odd, rot13, article = result.text_content.split("\n\n---\n\n")
    assert "Notes in an odd charset" in odd
    assert "x-no-such-codec" in odd
    assert "Abgrf" in rot13
    assert ARTICLE_TEXT[0] in article


def test_the_charset_the_server_names_reads_an_html_page_that_names_none(
    site: LocalSite,
) -> None:
    # trafilatura guessed windows-1250 for the Latin-1 bytes ("crčme brűlée"); a body that is
    # UTF-8 whatever the header says is still read as UTF-8.
    result = _extract(
        [site.url("/latin1", "news.example"), site.url("/utf8-said-latin1", "news.example")]
    )

    assert not result.is_error, result.text_content
    for page in result.text_content.split("\n\n---\n\n"):
        assert page.startswith("# Café crème\n"), page[:80]
        assert LATIN1_TEXT.strip() in page


def test_an_html_page_naming_no_charset_anywhere_and_not_utf8_is_read_as_windows_1252(
    site: LocalSite,
) -> None:
    """Latin-1 French with no charset in the header nor the page: trafilatura's guess read it
    as windows-1250 ("Café crčme", "brűlée"), and nothing said so. A browser reads it as
    windows-1252 (WHATWG: the default of a page that names none); a charset the page names in
    a ``<meta>`` (windows-1250 Czech, served with no charset) is still the one read."""
    paths = ("/latin1-undeclared", "/cp1250-in-meta")
    result = _extract([site.url(path, "news.example") for path in paths])

    assert not result.is_error, result.text_content
    french, czech = result.text_content.split("\n\n---\n\n")
    assert french.startswith("# Café crème\n"), french[:80]
    assert LATIN1_TEXT.strip() in french
    assert "[the page names no charset and is not UTF-8: read as windows-1252]" in french
    assert czech.startswith("# Žluťoučký kůň\n"), czech[:80]
    assert CZECH_TEXT.strip() in czech
    assert "windows-1252" not in czech


@pytest.mark.parametrize("charset", sorted(UNDECLARED_TEXTS))
def test_an_html_page_of_another_script_naming_no_charset_is_read_in_its_own(
    site: LocalSite, charset: str
) -> None:
    """A Japanese, Chinese, Korean or Russian page in its older charset (Shift_JIS, GBK,
    EUC-KR, windows-1251) that names none, and plain text alike: windows-1252 made every letter
    of it mojibake. A browser guesses these from the bytes (as trafilatura did for a page), and
    says nothing; the page is read in the charset its bytes show, and the note says which."""
    paths = (f"/undeclared-{charset}", f"/undeclared-{charset}.txt")
    result = _extract([site.url(path, "news.example") for path in paths])

    assert not result.is_error, result.text_content
    text = UNDECLARED_TEXTS[charset]
    page, plain = result.text_content.split("\n\n---\n\n")
    assert page.startswith(f"# {text[:8].strip()}\n"), page[:80]
    for got in (page, plain):
        assert text.strip() in got, got[:300]
        assert "the page names no charset and is not UTF-8: read as" in got
        assert "windows-1252" not in got


def test_a_short_latin_text_naming_no_charset_is_read_as_windows_1252_not_a_cjk_guess(
    site: LocalSite,
) -> None:
    """One sentence of French, Swedish or Danish in windows-1252 naming no charset, as plain text
    or a page: charset-normalizer's guess from so few bytes is Big5 or Johab, and each accented
    letter and the one after it were read as one Chinese or Korean character ('ド va tr鋊 bien').
    A Latin text's accented letters stand alone between ASCII letters, as no CJK, Cyrillic or
    Greek text's do: read as windows-1252."""
    paths = [f"/short-latin-{index}.txt" for index in range(len(SHORT_LATIN_TEXTS))]
    result = _extract([site.url(path, "news.example") for path in [*paths, "/short-latin-page"]])

    assert not result.is_error, result.text_content
    *texts, page = result.text_content.split("\n\n---\n\n")
    assert page.startswith("# Smørrebrød\n"), page
    assert "Smørrebrød er godt." in page, page
    assert "read as windows-1252" in page
    for text, got in zip(SHORT_LATIN_TEXTS, texts, strict=True):
        assert f"\n\n{text}\n\n" in got, got
        assert "[the page names no charset and is not UTF-8: read as windows-1252]" in got


def test_katakana_naming_no_charset_is_read_in_shift_jis(site: LocalSite) -> None:
    """Katakana alone in Shift_JIS (a title, a product's name): each character's second byte is
    in ASCII, so its first stands alone as a Latin accented letter does, but is one (0x81-0x83)
    windows-1252 leaves undefined or gives a sign no Latin text writes before a letter."""
    result = _extract([site.url("/katakana.txt", "news.example")])

    assert not result.is_error, result.text_content
    assert f"\n\n{KATAKANA_TEXT}\n\n" in result.text_content, result.text_content
    assert "read as cp932, guessed from its bytes" in result.text_content


def test_an_html_page_in_a_charset_no_codec_reads_is_read_as_one_naming_none(
    site: LocalSite,
) -> None:
    # As plain text is: a made-up charset says no more than none.
    result = _extract([site.url("/latin1-odd-charset", "news.example")])

    assert not result.is_error, result.text_content
    assert result.text_content.startswith("# Café crème\n"), result.text_content[:80]
    assert LATIN1_TEXT.strip() in result.text_content
    assert (
        "[the page's charset 'x-foo' is not a text encoding and the page is not UTF-8: read as "
        "windows-1252]"
    ) in result.text_content


def test_a_page_said_to_be_iso_8859_1_or_ascii_is_read_as_windows_1252(site: LocalSite) -> None:
    """As a browser reads them (WHATWG: these names are windows-1252's labels): read as
    ISO-8859-1, the curly quotes, dash and euro sign of a windows-1252 page were control
    characters, which extraction dropped ("Its the best caf\u00e9 in town  5  a cup"); plain
    text said to be ASCII had a U+FFFD for each of them and its accents."""
    paths = ("/cp1252-said-latin1", "/cp1252-said-ascii.txt")
    result = _extract([site.url(path, "news.example") for path in paths])

    assert not result.is_error, result.text_content
    page, text = result.text_content.split("\n\n---\n\n")
    assert page.startswith("# Caf\u00e9 \u201cNord\u201d\n"), ascii(page[:80])
    assert QUOTED_TEXT.strip() in page
    assert QUOTED_TEXT.strip() in text


def test_a_byte_order_mark_wins_over_the_charset_the_server_names(site: LocalSite) -> None:
    # A UTF-16 file (a BOM first) served with the server's default charset was read in that
    # charset: U+FFFD for each accent of the page, a NUL between each letter of the text. A
    # browser reads the BOM first (WHATWG, "decode").
    paths = ("/utf16-said-utf8", "/utf16-said-latin1.txt")
    result = _extract([site.url(path, "news.example") for path in paths])

    assert not result.is_error, result.text_content
    page, text = result.text_content.split("\n\n---\n\n")
    assert page.startswith("# Café crème\n"), page[:80]
    assert LATIN1_TEXT.strip() in page
    assert LATIN1_TEXT.strip() in text
    assert "\x00" not in text


def test_plain_text_without_a_charset_and_not_utf8_is_read_as_windows_1252_with_a_note(
    site: LocalSite,
) -> None:
    # It was read as UTF-8, each accented letter a U+FFFD, and nothing said so.
    result = _extract([site.url("/latin1.txt", "news.example")])

    assert not result.is_error, result.text_content
    assert LATIN1_TEXT.strip() in result.text_content
    assert "[the page names no charset and is not UTF-8: read as windows-1252]" in (
        result.text_content
    )


def test_plain_text_in_a_charset_no_codec_reads_and_not_utf8_is_read_as_windows_1252(
    site: LocalSite,
) -> None:
    # A made-up charset says no more than none: it was read as UTF-8, each accented letter a
    # U+FFFD, where the same text with no charset named is read as windows-1252.
    result = _extract([site.url("/latin1-odd-charset.txt", "news.example")])

    assert not result.is_error, result.text_content
    assert LATIN1_TEXT.strip() in result.text_content
    assert (
        "[the page's charset 'x-foo' is not a text encoding and the page is not UTF-8: read as "
        "windows-1252]"
    ) in result.text_content


def test_a_gzip_file_served_as_html_expands_no_further_than_max_bytes(site: LocalSite) -> None:
    # trafilatura expands a body that is a gzip (or zstd, brotli, zlib) file itself, up to its
    # own 20 MB: 56 KB on the wire were 18 MB of HTML, 1 GB of memory and 4 minutes of CPU.
    result = _extract([site.url("/gzip-as-html", "news.example")], max_bytes=100_000)

    (page,) = result.structured["pages"]
    assert page.get("chars", 0) <= 100_000, page
    assert (
        "[the page is a compressed file that expands past max_bytes (100,000 bytes), or to "
        "another compressed file: not read]"
    ) in result.text_content
    within = _extract([site.url("/gzip-as-html", "news.example")], max_bytes=2_000_000)
    # Within the cap it is read, as trafilatura reads such a body.
    assert "Otter 0 of the valley, counted again" in within.text_content


def test_a_gzip_file_served_as_html_with_a_charset_is_read_as_one_without(
    site: LocalSite,
) -> None:
    # Served as text/html; charset=utf-8 (what most servers add), the same gzip file was read
    # as UTF-8 text, none found, and the note said it expanded past max_bytes, which it did not.
    urls = [
        site.url(path, "news.example") for path in ("/gzip-as-utf8-html", "/gzip-in-gzip-as-html")
    ]
    result = _extract(urls, max_bytes=2_000_000)

    within, nested = result.text_content.split("\n\n---\n\n")
    assert "Otter 0 of the valley, counted again" in within
    assert "max_bytes" not in within
    assert (
        "[the page is a compressed file that expands past max_bytes (2,000,000 bytes), or to "
        "another compressed file: not read]"
    ) in nested
    # The inner file within the cap, the one it holds past it: not read all the same.
    assert (
        "another compressed file: not read]" in _extract(urls[1:], max_bytes=100_000).text_content
    )


def test_a_pages_title_is_bounded_as_its_text_is(site: LocalSite) -> None:
    # An 800,000-character <title> came back whole, past max_chars (20000).
    result = _extract([site.url("/huge-title", "news.example")])

    assert not result.is_error, result.text_content
    (page,) = result.structured["pages"]
    assert len(page["title"]) <= 300
    assert page["title"].startswith("Read me Read me")
    assert len(result.text_content) < 2_000
    assert ARTICLE_TEXT[1] in result.text_content


def test_a_long_title_is_cut_between_the_letters_a_reader_sees(site: LocalSite) -> None:
    # A title of "e" + combining acute was cut after an "e" and before its accent: the last
    # letter of the title shown was another letter.
    urls = [site.url(path, "news.example") for path in ("/marked-title", "/one-word-title")]
    result = _extract([*urls, site.url("/cjk-title", "news.example")])

    assert not result.is_error, result.text_content
    marked, word, cjk = (page["title"] for page in result.structured["pages"])
    assert len(marked) <= 300
    assert marked.endswith("...")
    assert MARKED_TITLE.startswith(marked.removesuffix("...")), marked[-8:]
    assert marked.removesuffix("...").endswith("e\u0301")
    assert word == "W" * 297 + "..."
    assert cjk == ("川獺の谷" * 200)[:297] + "..."


def _extracting() -> bool:
    """Whether a thread of this process is in ``extract`` (trafilatura's work on a page)."""
    for top in sys._current_frames().values():
        frame: FrameType | None = top
        while frame is not None:
            code = frame.f_code
            if code.co_name == "extract" and code.co_filename.endswith("web/extract.py"):
                return True
            frame = frame.f_back
    return False


def test_a_call_stopped_during_a_long_extraction_returns_without_waiting_for_it(
    site: LocalSite,
) -> None:
    """A call stopped (its timeout, Ctrl-C) while trafilatura works on a page waited for the
    extraction to end: stopped 2 s in, a 2 MB page of one-letter paragraphs held it 20 s. It
    returns at once now, the extraction ending in its thread (docs/security.md says so)."""
    settings = WebSettings(allowed_hosts=["news.example"])
    handler = WebExtract(settings, fetcher_of(settings, NamesForTests()))

    async def stopped_while_extracting() -> bool:
        with anyio.CancelScope() as scope:

            async def stop_once_extracting() -> None:
                while not _extracting():
                    await anyio.sleep(0.01)
                scope.cancel()

            async with anyio.create_task_group() as group:
                group.start_soon(stop_once_extracting)
                await handler([site.url("/slow-to-extract", "news.example")])
        return _extracting()

    try:
        assert anyio.run(stopped_while_extracting), "the call waited for the extraction's end"
    finally:
        for _ in range(12_000):  # its end, not to take the CPU of the tests that follow
            if not _extracting():
                break
            time.sleep(0.01)


def test_a_page_that_cannot_be_extracted_fails_its_url_and_the_others_are_kept(
    site: LocalSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "trafilatura", None)  # the extra is not installed

    result = _extract(
        [site.url("/article", "news.example"), site.url("/notes.txt", "news.example")]
    )

    assert not result.is_error, result.text_content
    article, notes = result.text_content.split("\n\n---\n\n")
    assert "error: RuntimeError: web_extract needs trafilatura: pip install" in article
    assert "Plain notes: é" in notes


def _call(host: Host, name: str, arguments: dict[str, object]) -> ToolResult:
    return anyio.run(host.dispatch, name, arguments, host.new_session())


@pytest.fixture(scope="module")
def web() -> Iterator[Host]:
    host = make_host()
    yield host
    host.close()


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9/",
        "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
        "http://10.0.0.1/",
        "http://[::1]/",
        "file:///etc/passwd",
    ],
)
def test_the_bundled_tool_refuses_the_machine_its_network_and_metadata(web: Host, url: str) -> None:
    result = _call(web, "web_extract", {"urls": [url]})

    assert result.error_code == "DENIED"
    assert "plugins.entries.web.allowed_hosts" in result.text_content


def test_a_host_that_does_not_resolve_is_a_lookup_failure_not_a_refusal(web: Host) -> None:
    # .invalid never resolves (RFC 6761). The user cannot mend it with allowed_hosts, so the
    # answer must not send them there: it is the name, or this machine's DNS.
    result = _call(web, "web_extract", {"urls": ["http://nosuchhost.invalid/page"]})

    assert result.error_code == "TOOL_ERROR"
    assert "nosuchhost.invalid does not resolve" in result.text_content
    assert "allowed_hosts" not in result.text_content
    assert "local network" not in result.text_content


def test_a_host_the_user_allows_in_config_is_fetched(site: LocalSite) -> None:
    config = {"plugins": {"entries": {"web": {"allowed_hosts": ["127.0.0.1"]}}}}
    host = make_host(Config.model_validate(config))
    try:
        result = _call(host, "web_extract", {"urls": [site.url("/article")]})
    finally:
        host.close()

    assert not result.is_error, result.text_content
    assert ARTICLE_TEXT[1] in result.text_content


@pytest.mark.parametrize("path", ["/app", "/unclosed", "/empty"])
def test_a_page_without_text_says_so_and_prints_nothing_on_the_terminal(
    site: LocalSite, tmp_path: Path, path: str
) -> None:
    cli = HermesCli(tmp_path)
    cli.config.write_text(
        "plugins:\n  entries:\n    web:\n      allowed_hosts: [127.0.0.1]\n", encoding="utf-8"
    )
    done = cli.run("tools", "call", "web_extract", f'{{"urls": ["{site.url(path)}"]}}')

    # trafilatura's own log lines ("lxml parsing failed", "discarding data") are about the
    # page, and printed by hermes they read as hermes' errors.
    assert done.stderr == ""
    assert "no text as it was served" in done.stdout, done.stdout
    assert "browser_navigate" in done.stdout  # where a page built by JavaScript can be read
    assert "this is the whole text of the page" not in done.stdout
