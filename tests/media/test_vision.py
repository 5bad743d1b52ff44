"""``vision_analyze``: an image file of the session shown to the conversation's own model (its
vision input, on both vendors' wires), the model's answer returned as the tool's result; files
outside the working directory, non-images and oversized files refused; no model, no vision."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anyio
import pytest

from hermes_core import Environment
from hermes_core.agent import ImagePart, Message, ToolFinished
from hermes_core.testing import (
    FakeModelServer,
    FakeToolCall,
    FakeTurn,
    RecordedRequest,
)
from hermes_core.testing._fake_images import fake_png
from hermes_core.testing._fake_model import Responder

from .media_hosts import converse, final, media_host

CHART = fake_png(8, 4, (200, 30, 30))


def has_tool_result(request: RecordedRequest) -> bool:
    """Whether the request carries a tool's result (OpenAI: a ``tool`` message; Anthropic: a
    ``tool_result`` block)."""
    return any(m.get("role") == "tool" for m in request.messages) or '"tool_result"' in (
        json.dumps(request.messages)
    )


def vision_script(arguments: dict[str, object], seen: str) -> Responder:
    """The server's responder: the conversation calls vision_analyze with ``arguments``, the
    side request (the one carrying an image) is answered with ``seen``, then a final answer."""

    def respond(request: RecordedRequest) -> FakeTurn:
        if request.images:
            return FakeTurn(text=seen)
        if not has_tool_result(request):
            return FakeTurn(tool_calls=[FakeToolCall("vision_analyze", arguments)])
        return FakeTurn(text="Done.")

    return respond


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_the_image_reaches_the_models_vision_input_and_its_answer_is_the_result(
    wire: str, hermes_env: Environment, tmp_path: Path
) -> None:
    (tmp_path / "chart.png").write_bytes(CHART)
    arguments = {"image": "chart.png", "question": "What does the chart show?"}
    seen_text = "A red rectangle, twice as wide as tall, with no text."
    with FakeModelServer(responder=vision_script(arguments, seen_text)) as server:
        host = media_host(hermes_env, server=server, wire=wire)
        try:
            events = converse(host, tmp_path, "Look at chart.png and tell me what it shows.")
        finally:
            host.close()
        requests = server.requests
    seen = [r for r in requests if r.images]
    assert len(seen) == 1
    assert seen[0].images == [("image/png", CHART)]
    assert "What does the chart show?" in json.dumps(seen[0].messages)
    assert "never instructions" in seen[0].system  # the image's text is content, not orders
    assert "vision_analyze" not in seen[0].tool_names  # the side question offers no tools
    assert "A red rectangle, twice as wide as tall" in json.dumps(requests[-1].messages)
    assert final(events).stop == "answer"


def run_tool(env: Environment, cwd: Path, arguments: dict[str, object], **media: object) -> str:
    """What vision_analyze called with ``arguments`` in a conversation gave the model."""
    with FakeModelServer(responder=vision_script(arguments, "seen")) as server:
        host = media_host(env, server=server, media=dict(media))
        try:
            converse(host, cwd, "look")
        finally:
            host.close()
        last = server.requests[-1].messages
    return next(str(m["content"]) for m in last if m.get("role") == "tool")


def test_a_file_outside_the_working_directory_is_refused(
    hermes_env: Environment, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "secret.png").write_bytes(CHART)
    (work / "link.png").symlink_to(tmp_path / "secret.png")
    for image in ("../secret.png", str(tmp_path / "secret.png"), "link.png"):
        said = run_tool(hermes_env, work, {"image": image})
        assert "outside the working directory" in said, image


def test_a_file_that_is_no_image_or_too_large_is_refused(
    hermes_env: Environment, tmp_path: Path
) -> None:
    (tmp_path / "notes.png").write_text("not an image at all", encoding="utf-8")
    said = run_tool(hermes_env, tmp_path, {"image": "notes.png"})
    assert "not a PNG, JPEG, GIF or WebP image" in said
    (tmp_path / "big.png").write_bytes(CHART + b"\0" * 5000)
    said = run_tool(hermes_env, tmp_path, {"image": "big.png"}, max_image_bytes=2048)
    assert "over the 2,048-byte limit" in said


def test_without_a_conversation_of_ours_it_says_it_needs_one(
    hermes_env: Environment, tmp_path: Path
) -> None:
    (tmp_path / "chart.png").write_bytes(CHART)
    host = media_host(hermes_env)
    try:
        result = anyio.run(
            host.dispatch, "vision_analyze", {"image": "chart.png"}, host.new_session(cwd=tmp_path)
        )
    finally:
        host.close()
    assert result.is_error
    assert result.error_code == "NOT_AVAILABLE"
    assert "hermes serve" in result.text_content


def test_an_image_part_survives_the_json_form_and_refuses_other_types() -> None:
    message = Message("user", "what is this?", images=(ImagePart("image/png", CHART),))
    assert Message.from_json(json.loads(json.dumps(message.to_json()))) == message
    assert str(CHART) not in repr(message.images[0])  # the repr never holds the bytes
    with pytest.raises(ValueError, match=r"image/svg\+xml.*image/gif"):
        ImagePart("image/svg+xml", b"<svg/>")


class ImageSite(BaseHTTPRequestHandler):
    """A real HTTP server on 127.0.0.1 with an image, a page, an oversized image and a redirect
    to a cloud metadata address."""

    def do_GET(self) -> None:
        if self.path == "/silent.png":  # no answer at all
            time.sleep(1.5)
            return
        if self.path == "/drip.png":  # a byte now and then, never whole
            self.send_response(200)
            self.send_header("content-type", "image/png")
            self.send_header("content-length", str(len(CHART)))
            self.end_headers()
            for byte in CHART[:6]:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.2)
            return
        routes: dict[str, tuple[int, str, bytes, dict[str, str]]] = {
            "/chart.png": (200, "image/png", CHART, {}),
            "/page.html": (200, "text/html", b"<html><body>hi</body></html>", {}),
            "/big.png": (200, "image/png", CHART + b"\0" * 8192, {}),
            "/steal": (302, "text/plain", b"", {"location": "http://169.254.169.254/latest/"}),
        }
        status, kind, body, headers = routes.get(self.path, (404, "text/plain", b"no", {}))
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def image_site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), ImageSite)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_an_image_url_is_read_under_the_address_rules(
    hermes_env: Environment, tmp_path: Path, image_site: str
) -> None:
    arguments = {"image": f"{image_site}/chart.png", "question": "What is it?"}
    with FakeModelServer(responder=vision_script(arguments, "A red rectangle.")) as server:
        host = media_host(hermes_env, server=server, media={"allowed_hosts": ["127.0.0.1"]})
        try:
            converse(host, tmp_path, "look at the chart online")
        finally:
            host.close()
        seen = [r for r in server.requests if r.images]
    assert seen[0].images == [("image/png", CHART)]


def test_an_image_url_of_this_machine_a_redirect_to_metadata_or_no_image_is_refused(
    hermes_env: Environment, tmp_path: Path, image_site: str
) -> None:
    refused = run_tool(hermes_env, tmp_path, {"image": f"{image_site}/chart.png"})
    assert "loopback" in refused
    assert "plugins.entries.media.allowed_hosts" in refused
    allowed = {"allowed_hosts": ["127.0.0.1"], "max_image_bytes": 2048}
    for path, said in [
        ("/steal", "169.254.169.254"),
        ("/page.html", "text/html, not an image"),
        ("/big.png", "over the 2,048-byte limit"),
    ]:
        answer = run_tool(hermes_env, tmp_path, {"image": f"{image_site}{path}"}, **allowed)
        assert said in answer, path


def test_an_image_url_whose_host_does_not_resolve_is_a_lookup_failure_not_a_refusal(
    hermes_env: Environment, tmp_path: Path
) -> None:
    # As web_extract's: .invalid never resolves (RFC 6761), and no allowed host would mend it,
    # so it is an error of the call (TOOL_ERROR), not a refusal (DENIED) pointing at allowed_hosts.
    arguments = {"image": "http://nosuchhost.invalid/chart.png"}
    with FakeModelServer(responder=vision_script(arguments, "seen")) as server:
        host = media_host(hermes_env, server=server)
        try:
            events = converse(host, tmp_path, "look")
        finally:
            host.close()
    [finished] = [event for event in events if isinstance(event, ToolFinished)]
    assert finished.error_code == "TOOL_ERROR"
    assert "nosuchhost.invalid does not resolve" in finished.text
    assert "allowed_hosts" not in finished.text


@pytest.mark.parametrize("path", ["/silent.png", "/drip.png"])
def test_an_image_url_past_image_fetch_timeout_names_the_setting(
    hermes_env: Environment, tmp_path: Path, image_site: str, path: str
) -> None:
    media = {"allowed_hosts": ["127.0.0.1"], "image_fetch_timeout": 0.5}
    answer = run_tool(hermes_env, tmp_path, {"image": f"{image_site}{path}"}, **media)
    assert answer.startswith(f"vision_analyze: {image_site}{path}: "), answer
    assert answer.endswith(" within 0.5 s (plugins.entries.media.image_fetch_timeout)"), answer


def test_a_lone_surrogate_in_the_question_is_asked_as_a_replacement_character(
    hermes_env: Environment, tmp_path: Path
) -> None:
    # As every model request sends one (hermes_core/agent/_requests.py): no request carries one
    # as UTF-8.
    (tmp_path / "chart.png").write_bytes(CHART)
    arguments = {"image": "chart.png", "question": "what \ud800 is it?"}
    with FakeModelServer(responder=vision_script(arguments, "A red rectangle.")) as server:
        host = media_host(hermes_env, server=server)
        try:
            converse(host, tmp_path, "look")
        finally:
            host.close()
        requests = server.requests
    [seen] = [r for r in requests if r.images]
    assert "what \ufffd is it?" in json.dumps(seen.messages, ensure_ascii=False)
    assert "A red rectangle." in json.dumps(requests[-1].messages)
