"""Normalization of MCP call outcomes into ``ToolResult``."""

from __future__ import annotations

import mcp_types
from mcp import MCPError

from hermes_core._mcp.results import (
    MCP_ERROR,
    TIMEOUT,
    TOOL_ERROR,
    UNAVAILABLE,
    normalize_call_result,
    protocol_error_result,
)


def test_text_and_structured_content_are_kept() -> None:
    result = normalize_call_result(
        mcp_types.CallToolResult(
            content=[mcp_types.TextContent(type="text", text="3")],
            structured_content={"sum": 3},
        )
    )
    assert result.content == [{"type": "text", "text": "3"}]
    assert result.structured == {"sum": 3}
    assert not result.is_error


def test_image_and_embedded_resource_blocks_keep_wire_shape() -> None:
    result = normalize_call_result(
        mcp_types.CallToolResult(
            content=[
                mcp_types.ImageContent(type="image", data="aGk=", mime_type="image/png"),
                mcp_types.EmbeddedResource(
                    type="resource",
                    resource=mcp_types.TextResourceContents(uri="file:///a.txt", text="hello"),
                ),
            ]
        )
    )
    assert result.content == [
        {"type": "image", "data": "aGk=", "mimeType": "image/png"},
        {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "hello"}},
    ]


def test_structured_only_result_gets_a_text_block() -> None:
    result = normalize_call_result(
        mcp_types.CallToolResult(content=[], structured_content={"ok": True})
    )
    assert result.text_content == '{"ok": true}'


def test_is_error_becomes_tool_error_with_the_message() -> None:
    result = normalize_call_result(
        mcp_types.CallToolResult(
            content=[mcp_types.TextContent(type="text", text="disk full")], is_error=True
        )
    )
    assert (result.is_error, result.error_code, result.error_message) == (
        True,
        TOOL_ERROR,
        "disk full",
    )


def test_timeout_error_names_server_and_timeout() -> None:
    error = MCPError(code=mcp_types.REQUEST_TIMEOUT, message="Request 'tools/call' timed out")
    result = protocol_error_result("slow", "sleep", error, timeout=2.5)
    assert result.error_code == TIMEOUT
    assert "'slow'" in (result.error_message or "")
    assert "2.5 s" in (result.error_message or "")


def test_connection_closed_is_unavailable() -> None:
    error = MCPError(code=mcp_types.CONNECTION_CLOSED, message="Connection closed")
    result = protocol_error_result("gone", "echo", error, timeout=1)
    assert result.error_code == UNAVAILABLE
    assert "'gone'" in (result.error_message or "")


def test_other_protocol_errors_are_error_results() -> None:
    error = MCPError(code=mcp_types.INVALID_PARAMS, message="Unknown tool: nope")
    result = protocol_error_result("box", "nope", error, timeout=1)
    assert result.error_code == MCP_ERROR
    assert "Unknown tool: nope" in (result.error_message or "")


def test_resource_links_count_in_the_cut_of_what_the_model_reads() -> None:
    """A resource link has no ``data`` nor ``resource``: it counted nothing against
    ``max_result_chars``, harmless while the model read only text blocks, but the model reads
    each link's line now (``ToolResult.model_text``): 50 links naming 10,000 characters each
    reached it as 501,539 characters past a cut of 100,000."""
    links = [
        {"type": "resource_link", "uri": f"file:///r{i}", "name": "n" * 10_000} for i in range(50)
    ]
    answer = mcp_types.CallToolResult.model_validate({"content": links})

    result = normalize_call_result(answer, server="acme", limit=100_000)

    assert len(result.model_text) < 100_500, len(result.model_text)
    assert "mcp_servers.acme.max_result_chars" in result.model_text
    assert "file:///r0, nnn" in result.model_text


def test_an_images_mime_type_counts_in_the_cut_of_what_the_model_reads() -> None:
    """An image counted only its base64 data against ``max_result_chars``; the model reads its
    line now (``[image: MIME, N bytes]``): 1,000 images of 4 characters of data, each naming
    a MIME type of 1,006 characters, reached it as 1,024,999 characters past a cut of
    100,000."""
    image = {"type": "image", "data": "aGk=", "mimeType": "image/" + "x" * 1_000}
    answer = mcp_types.CallToolResult.model_validate({"content": [image] * 1_000})

    result = normalize_call_result(answer, server="acme", limit=100_000)

    assert len(result.model_text) < 100_500, len(result.model_text)
    assert "mcp_servers.acme.max_result_chars" in result.model_text
    assert result.model_text.startswith("[image: image/xxx")


def test_an_images_size_is_counted_without_a_copy_of_its_bytes() -> None:
    """The cut and the model's line say an image's size: counted from its base64, not decoded
    (a 50 MB image was decoded whole, once for each)."""
    import base64
    import tracemalloc

    from hermes_core._block_lines import block_line

    image = {"type": "image", "data": base64.b64encode(bytes(37_000_000)).decode()}
    tracemalloc.start()
    try:
        line = block_line({**image, "mimeType": "image/png"})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert line == "[image: image/png, 37,000,000 bytes]"
    assert peak < 1_000_000, f"{peak:,} bytes"


def test_the_note_says_what_was_cut_when_whole_blocks_were_left_out() -> None:
    """A text of 90,000 characters and 20 images of 13,336 characters of base64 each, under a
    limit of 100,000: the text was kept and every image left out, but the note said 256,720
    characters were cut (the total less the limit, not less what was kept) and nothing of the
    images, so the model did not know it missed 20 of them."""
    import base64

    data = base64.b64encode(bytes(10_000)).decode()
    content = [{"type": "text", "text": "t" * 90_000}]
    content += [{"type": "image", "data": data, "mimeType": "image/png"}] * 20
    answer = mcp_types.CallToolResult.model_validate({"content": content})

    result = normalize_call_result(answer, server="acme", limit=100_000)

    assert [block["type"] for block in result.content] == ["text", "text"]
    assert result.content[-1]["text"] == (
        "[... this result was longer than mcp_servers.acme.max_result_chars (100,000): "
        "266,720 of its 356,720 characters were cut (left out whole: 20 image blocks); "
        "ask the tool for less (a page, a filter, a range)]"
    )


def test_base64_wrapped_in_lines_is_counted_as_its_bytes() -> None:
    """Some servers send MIME-style base64, in lines of 76 with a last newline
    (``base64.encodebytes``): decoders skip the whitespace, but the model read
    ``[image: image/png, 13,512 characters that are not base64]``. URL-safe base64 is no
    base64 an MCP client reads, and is said so."""
    import base64

    from hermes_core._block_lines import block_line

    wrapped = base64.encodebytes(bytes(10_001)).decode()
    assert block_line({"type": "image", "data": wrapped, "mimeType": "image/png"}) == (
        "[image: image/png, 10,001 bytes]"
    )
    crlf = wrapped.replace("\n", "\r\n")
    assert block_line({"type": "audio", "data": crlf, "mimeType": "audio/wav"}) == (
        "[audio: audio/wav, 10,001 bytes]"
    )
    url_safe = base64.urlsafe_b64encode(b"\xfb\xff" * 3).decode()
    assert block_line({"type": "image", "data": url_safe, "mimeType": "image/png"}) == (
        "[image: image/png, 8 characters that are not base64]"
    )
