"""``image_generate``: the image provider named by ``plugins.entries.media.image_provider`` draws
(the bundled ``openai`` one against the images endpoint of the fake model server; a third-party
provider swapped in by name), the images are saved as files, and a hostile or failing server
gets a clear error with nothing of its choosing fetched or kept."""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from hermes_core import Environment
from hermes_core.testing import FakeModelServer, write_dir_plugin
from hermes_core.testing._fake_images import fake_png

from .media_hosts import call, media_host

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
KEY = "sk-test-images-0123456789abcdef"


def openai_media(server_url: str, **more: Any) -> dict[str, Any]:
    return {"image_base_url": server_url, "image_api_key_env": "TEST_IMAGES_KEY", **more}


def test_the_openai_provider_draws_and_the_images_are_saved_as_files(
    hermes_env: Environment, tmp_path: Path
) -> None:
    with FakeModelServer() as server:
        host = media_host(
            hermes_env,
            media=openai_media(server.openai_base_url, image_size="256x128"),
            variables={"TEST_IMAGES_KEY": KEY},
        )
        try:
            result = call(host, tmp_path, "image_generate", {"prompt": "a lighthouse at dusk"})
            into = call(
                host,
                tmp_path,
                "image_generate",
                {"prompt": "a fox", "count": 2, "path": "art/fox.png", "size": "64x64"},
            )
        finally:
            host.close()
        requests = server.requests
    assert not result.is_error, result.text_content
    [saved] = result.structured["paths"]
    path = Path(saved)
    assert path.is_relative_to(hermes_env.home / "media" / "images")
    assert path.read_bytes().startswith(PNG_SIGNATURE)
    assert (hermes_env.home / "media").stat().st_mode & 0o077 == 0
    assert requests[0].path == "/v1/images/generations"
    assert requests[0].body == {
        "model": "gpt-image-1",
        "prompt": "a lighthouse at dusk",
        "n": 1,
        "size": "256x128",
    }
    assert requests[0].api_key == KEY
    # art/ does not exist: refused before anything is drawn
    assert into.is_error
    assert "does not exist" in into.text_content
    assert len(requests) == 1


def test_count_and_path_write_numbered_files_inside_the_working_directory(
    hermes_env: Environment, tmp_path: Path
) -> None:
    (tmp_path / "art").mkdir()
    with FakeModelServer() as server:
        host = media_host(hermes_env, media=openai_media(server.openai_base_url))
        try:
            result = call(
                host,
                tmp_path,
                "image_generate",
                {"prompt": "a fox", "count": 2, "path": "art/fox.png", "size": "64x64"},
            )
            outside = call(host, tmp_path, "image_generate", {"prompt": "x", "path": "../x.png"})
        finally:
            host.close()
    assert result.structured["paths"] == [
        str((tmp_path / "art" / "fox-1.png").resolve()),
        str((tmp_path / "art" / "fox-2.png").resolve()),
    ]
    assert (tmp_path / "art" / "fox-2.png").read_bytes().startswith(PNG_SIGNATURE)
    assert outside.is_error
    assert "outside the working directory" in outside.text_content


THIRD_PARTY = """
from hermes_core.plugin import GeneratedImage, ImageProviderSpec, hookimpl
from hermes_core.testing._fake_images import fake_png


class Sketch:
    async def generate(self, request):
        image = fake_png(2, 2, (0, 0, 0))
        return [GeneratedImage(image, "image/png", "sketched: " + request.prompt)]

    async def aclose(self):
        pass


@hookimpl
def hermes_image_providers():
    return [ImageProviderSpec("sketch", lambda context: Sketch(), "draws black squares")]
"""


def test_a_third_party_provider_is_swapped_in_by_name(
    hermes_env: Environment, tmp_path: Path
) -> None:
    write_dir_plugin(hermes_env.home / "plugins", "sketch", THIRD_PARTY)
    host = media_host(hermes_env, media={"image_provider": "sketch"}, enabled=("sketch",))
    try:
        result = call(host, tmp_path, "image_generate", {"prompt": "a cat"})
    finally:
        host.close()
    assert not result.is_error, result.text_content
    assert result.structured["provider"] == "sketch"
    assert "The service drew: sketched: a cat" in result.text_content
    assert Path(result.structured["paths"][0]).read_bytes().startswith(PNG_SIGNATURE)


def test_an_unknown_provider_name_is_a_config_error_listing_the_valid_ones(
    hermes_env: Environment, tmp_path: Path
) -> None:
    host = media_host(hermes_env, media={"image_provider": "dalle-local"})
    try:
        result = call(host, tmp_path, "image_generate", {"prompt": "a cat"})
    finally:
        host.close()
    assert result.error_code == "CONFIG_ERROR"
    assert "'dalle-local'" in result.text_content
    assert "openai" in result.text_content


class HostileImages(BaseHTTPRequestHandler):
    """A fake of a remote images API gone wrong: what it answers is the test's ``answer``."""

    answer: tuple[int, dict[str, Any]] = (200, {})

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        status, body = self.server.answer  # type: ignore[attr-defined]
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


@pytest.fixture
def hostile() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), HostileImages)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ((200, {"data": [{"url": "http://169.254.169.254/latest/meta-data"}]}), "not fetched"),
        ((200, {"data": [{"b64_json": "%%% not base64 %%%"}]}), "not base64"),
        ((200, {"data": [{"b64_json": "aGVsbG8="}]}), "not a PNG, JPEG, GIF or WebP"),
        ((200, {"images": []}), "no 'data' list"),
        ((401, {"error": {"message": f"Incorrect API key provided: {KEY}"}}), "image_api_key_env"),
        ((500, {"error": {"message": "overloaded"}}), "HTTP 500: overloaded"),
    ],
)
def test_a_hostile_or_failing_server_gets_a_clear_error_and_nothing_is_kept(
    answer: tuple[int, dict[str, Any]],
    said: str,
    hostile: ThreadingHTTPServer,
    hermes_env: Environment,
    tmp_path: Path,
) -> None:
    hostile.answer = answer  # type: ignore[attr-defined]
    url = f"http://127.0.0.1:{hostile.server_address[1]}/v1"
    host = media_host(hermes_env, media=openai_media(url), variables={"TEST_IMAGES_KEY": KEY})
    try:
        result = call(host, tmp_path, "image_generate", {"prompt": "a cat"})
    finally:
        host.close()
    assert result.is_error
    assert said in result.text_content
    assert KEY not in result.text_content
    assert not (hermes_env.home / "media" / "images").exists() or not any(
        (hermes_env.home / "media" / "images").iterdir()
    )


def test_a_server_that_draws_more_images_than_asked_keeps_only_the_count_asked(
    hostile: ThreadingHTTPServer, hermes_env: Environment, tmp_path: Path
) -> None:
    # The count is what the model asked for and what it was told it would get; extra images
    # would be files it never named.
    png = base64.b64encode(fake_png(2, 2, (9, 9, 9))).decode()
    hostile.answer = (200, {"data": [{"b64_json": png}] * 3})  # type: ignore[attr-defined]
    url = f"http://127.0.0.1:{hostile.server_address[1]}/v1"
    host = media_host(hermes_env, media=openai_media(url), variables={"TEST_IMAGES_KEY": KEY})
    try:
        result = call(host, tmp_path, "image_generate", {"prompt": "a cat", "count": 2})
    finally:
        host.close()
    assert not result.is_error, result.text_content
    assert len(result.structured["paths"]) == 2


class EndlessImages(BaseHTTPRequestHandler):
    """A fake of a remote images API gone wrong: a 200 whose JSON never ends (64 MiB, chunked,
    no length announced), or a 500 whose error message is 1 MB; it counts what it sent."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        if self.server.mode == "error":  # type: ignore[attr-defined]
            data = json.dumps({"error": {"message": "overloaded " + "x" * 1_000_000}}).encode()
            self.send_response(500)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        block = b'{"data": [{"b64_json": "' + b"A" * (1 << 20)
        try:
            for _ in range(64):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(block), block))
                self.server.sent += len(block)  # type: ignore[attr-defined]
                block = b"A" * (1 << 20)
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


@pytest.mark.parametrize("mode", ["endless", "error"])
def test_an_enormous_answer_of_the_image_server_is_refused_at_a_cap_and_never_kept_whole(
    mode: str, hermes_env: Environment, tmp_path: Path
) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), EndlessImages)
    server.mode, server.sent = mode, 0  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    media = openai_media(url, max_image_bytes=100_000)
    host = media_host(hermes_env, media=media, variables={"TEST_IMAGES_KEY": KEY})
    try:
        result = call(host, tmp_path, "image_generate", {"prompt": "a cat"})
    finally:
        host.close()
        server.shutdown()
        server.server_close()

    assert result.is_error
    assert len(result.text_content) < 1000, result.text_content[:200]
    if mode == "endless":
        assert "more than 1,181,912 bytes" in result.text_content  # 1 image's base64 + 1 MiB
        assert server.sent < 32 << 20  # it stopped reading long before the 64 MiB
    else:
        assert "HTTP 500: overloaded xxx" in result.text_content
    assert not (hermes_env.home / "media" / "images").exists() or not any(
        (hermes_env.home / "media" / "images").iterdir()
    )


def test_an_image_server_url_with_a_password_is_named_without_it(
    hermes_env: Environment, tmp_path: Path
) -> None:
    with FakeModelServer() as server:
        port = server.url.rsplit(":", 1)[1]
    url = f"http://user:s3cret@127.0.0.1:{port}/v1"  # closed: nothing listens there now
    host = media_host(hermes_env, media=openai_media(url), variables={"TEST_IMAGES_KEY": KEY})
    try:
        result = call(host, tmp_path, "image_generate", {"prompt": "a cat"})
    finally:
        host.close()
    assert result.is_error
    assert "openai images at http://user:[redacted]@127.0.0.1:" in result.text_content
    assert "s3cret" not in result.text_content


def test_a_path_that_exists_is_refused_before_anything_is_drawn(
    hermes_env: Environment, tmp_path: Path
) -> None:
    # The project's own files are never replaced by an image: each name the images would take
    # (fox-2.png of count 2 too) is checked before the provider is asked.
    (tmp_path / "README.md").write_text("precious", encoding="utf-8")
    (tmp_path / "fox-2.png").write_bytes(b"mine")
    with FakeModelServer() as server:
        host = media_host(hermes_env, media=openai_media(server.openai_base_url))
        try:
            readme = call(host, tmp_path, "image_generate", {"prompt": "x", "path": "README.md"})
            fox = call(
                host, tmp_path, "image_generate", {"prompt": "x", "path": "fox.png", "count": 2}
            )
        finally:
            host.close()
        requests = server.requests
    assert readme.error_code == "INVALID_ARGUMENTS", readme.text_content
    assert readme.text_content == (
        "image_generate: README.md already exists; give the name of a new file (the media "
        "tools never replace one)"
    )
    assert fox.error_code == "INVALID_ARGUMENTS", fox.text_content
    assert "fox-2.png already exists" in fox.text_content
    assert not requests
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == "precious"
    assert (tmp_path / "fox-2.png").read_bytes() == b"mine"
    assert not (tmp_path / "fox-1.png").exists()


def test_numbered_names_number_the_file_not_a_dotted_directory(
    hermes_env: Environment, tmp_path: Path
) -> None:
    (tmp_path / "v1.d").mkdir()
    with FakeModelServer() as server:
        host = media_host(hermes_env, media=openai_media(server.openai_base_url))
        try:
            result = call(
                host, tmp_path, "image_generate", {"prompt": "x", "path": "v1.d/fox", "count": 2}
            )
        finally:
            host.close()
    assert not result.is_error, result.text_content
    assert result.structured["paths"] == [
        str((tmp_path / "v1.d" / "fox-1").resolve()),
        str((tmp_path / "v1.d" / "fox-2").resolve()),
    ]


class SlowOrOddImages(BaseHTTPRequestHandler):
    """A fake of a remote images API: ``mode`` says how it goes wrong (a status and JSON body
    with headers, silence, or an answer dripped a byte every 0.3 s for 6 s)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        mode = self.server.mode  # type: ignore[attr-defined]
        try:
            if mode == "silent":
                time.sleep(4)
                return
            if mode == "drip":
                self.send_response(200)
                self.send_header("content-length", "100")
                self.end_headers()
                for _ in range(20):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.3)
                return
            status, body, headers = mode
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            for name, value in {**headers, "content-length": str(len(data))}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


@pytest.mark.parametrize(
    ("mode", "key", "said"),
    [
        (
            (401, {"error": {"message": "You didn't provide an API key."}}, {}),
            None,
            "HTTP 401: You didn't provide an API key. (TEST_IMAGES_KEY is not set: set it in "
            "the environment or $HERMES_HOME/.env; plugins.entries.media.image_api_key_env "
            "names the variable)",
        ),
        (
            (401, {"error": {"message": "Incorrect API key provided."}}, {}),
            KEY,
            "HTTP 401: Incorrect API key provided. (check the key in TEST_IMAGES_KEY, the "
            "variable plugins.entries.media.image_api_key_env names)",
        ),
        (
            (429, {"error": {"message": "Rate limit reached"}}, {"retry-after": "20"}),
            KEY,
            "HTTP 429: Rate limit reached (the server asks to wait 20 s before trying again)",
        ),
        (
            (502, b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n</html>\r\n", {}),
            KEY,
            "HTTP 502: <html> <head><title>502 Bad Gateway</title></head> </html>",
        ),
        ((200, {"data": [{}]}, {}), KEY, "an image has no b64_json data: not an images API answer"),
        ((200, {"data": [5]}, {}), KEY, "an image has no b64_json data: not an images API answer"),
        (
            "silent",
            KEY,
            "no answer within 1 s (plugins.entries.media.image_timeout); try again, or raise it",
        ),
        (
            "drip",
            KEY,
            "no answer within 1 s (plugins.entries.media.image_timeout); try again, or raise it",
        ),
    ],
    ids=["401-unset", "401-wrong", "429", "502-lines", "no-data", "not-a-dict", "silent", "drip"],
)
def test_a_refusing_slow_or_odd_server_is_named_in_one_line_saying_what_to_do(
    mode: Any, key: str | None, said: str, hermes_env: Environment, tmp_path: Path
) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), SlowOrOddImages)
    server.mode = mode  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    variables = {"TEST_IMAGES_KEY": key} if key else {}
    host = media_host(hermes_env, media=openai_media(url, image_timeout=1), variables=variables)
    try:
        result = call(host, tmp_path, "image_generate", {"prompt": "a cat"})
    finally:
        host.close()
        server.shutdown()
        server.server_close()
    assert result.error_code == "TOOL_ERROR", result.text_content
    assert result.text_content == f"image_generate: openai images at {url}: {said}"


def test_a_name_too_long_or_the_working_directory_itself_is_refused_in_one_short_line(
    hermes_env: Environment, tmp_path: Path
) -> None:
    long = "a" * 300 + ".png"
    with FakeModelServer() as server:
        host = media_host(
            hermes_env, media=openai_media(server.openai_base_url, tts_command="true {output}")
        )
        try:
            drawn = call(host, tmp_path, "image_generate", {"prompt": "x", "path": long})
            spoken = call(host, tmp_path, "text_to_speech", {"text": "x", "path": long})
            itself = call(host, tmp_path, "image_generate", {"prompt": "x", "path": "."})
        finally:
            host.close()
        requests = server.requests
    shown = "a" * 74 + "..."
    assert drawn.error_code == "INVALID_ARGUMENTS", drawn.text_content
    assert drawn.text_content == f"image_generate: {shown} cannot be used: File name too long"
    assert spoken.error_code == "INVALID_ARGUMENTS", spoken.text_content
    assert spoken.text_content == f"text_to_speech: {shown} cannot be used: File name too long"
    assert itself.error_code == "INVALID_ARGUMENTS", itself.text_content
    assert itself.text_content == (
        "image_generate: . is the working directory itself; name a file in it"
    )
    assert not requests


HUGE_DRAWER = """
from hermes_core.plugin import GeneratedImage, ImageProviderSpec, hookimpl
from hermes_core.testing._fake_images import fake_png


class Huge:
    async def generate(self, request):
        return [GeneratedImage(fake_png(2, 2, (0, 0, 0)) + b"\\0" * 5000, "image/png")]

    async def aclose(self):
        pass


@hookimpl
def hermes_image_providers():
    return [ImageProviderSpec("huge", lambda context: Huge(), "draws too much")]
"""


def test_an_image_over_max_image_bytes_from_any_provider_is_not_kept(
    hermes_env: Environment, tmp_path: Path
) -> None:
    # max_image_bytes is what image_generate keeps, whichever provider drew it.
    write_dir_plugin(hermes_env.home / "plugins", "huge", HUGE_DRAWER)
    media = {"image_provider": "huge", "max_image_bytes": 1024}
    host = media_host(hermes_env, media=media, enabled=("huge",))
    try:
        result = call(host, tmp_path, "image_generate", {"prompt": "a cat", "path": "cat.png"})
    finally:
        host.close()
    assert result.error_code == "TOOL_ERROR", result.text_content
    assert result.text_content.startswith(
        "image_generate: image provider 'huge' drew an image of 5,"
    )
    assert result.text_content.endswith(
        " bytes, over plugins.entries.media.max_image_bytes (1,024); nothing was saved"
    )
    assert not (tmp_path / "cat.png").exists()


RACER = """
from pathlib import Path

from hermes_core.plugin import GeneratedImage, ImageProviderSpec, hookimpl
from hermes_core.testing._fake_images import fake_png


class Racer:
    async def generate(self, request):
        # Another program writes the second name while the images are drawn.
        Path({taken!r}).write_bytes(b"precious")
        return [GeneratedImage(fake_png(2, 2, (0, 0, 0)), "image/png")] * request.count

    async def aclose(self):
        pass


@hookimpl
def hermes_image_providers():
    return [ImageProviderSpec("racer", lambda context: Racer(), "races")]
"""


def test_a_file_that_appears_while_the_images_are_drawn_is_kept_and_none_is_saved(
    hermes_env: Environment, tmp_path: Path
) -> None:
    taken = tmp_path / "fox-2.png"
    write_dir_plugin(hermes_env.home / "plugins", "racer", RACER.format(taken=str(taken)))
    host = media_host(hermes_env, media={"image_provider": "racer"}, enabled=("racer",))
    try:
        arguments = {"prompt": "a fox", "path": "fox.png", "count": 2}
        result = call(host, tmp_path, "image_generate", arguments)
    finally:
        host.close()
    assert result.error_code == "TOOL_ERROR", result.text_content
    assert result.text_content == (
        "image_generate: fox-2.png already exists; give the name of a new file (the media "
        "tools never replace one)"
    )
    assert taken.read_bytes() == b"precious"
    assert [path.name for path in tmp_path.iterdir() if "fox" in path.name] == ["fox-2.png"]


JPEG_DRAWER = """
from hermes_core.plugin import GeneratedImage, ImageProviderSpec, hookimpl


class Jpeg:
    async def generate(self, request):
        image = b"\\xff\\xd8\\xff\\xe0" + bytes(16)
        return [GeneratedImage(image, "image/jpeg") for _ in range(request.count)]

    async def aclose(self):
        pass


@hookimpl
def hermes_image_providers():
    return [ImageProviderSpec("jpeg", lambda context: Jpeg(), "draws JPEG images")]
"""


def test_an_image_extension_of_another_type_is_replaced_by_the_drawn_ones_and_said(
    hermes_env: Environment, tmp_path: Path
) -> None:
    # A file named .png holding JPEG bytes would mislead every program that trusts the name.
    write_dir_plugin(hermes_env.home / "plugins", "jpeg", JPEG_DRAWER)
    host = media_host(hermes_env, media={"image_provider": "jpeg"}, enabled=("jpeg",))
    try:
        fox = call(host, tmp_path, "image_generate", {"prompt": "a fox", "path": "fox.png"})
        two = call(host, tmp_path, "image_generate", {"prompt": "x", "path": "a.PNG", "count": 2})
        jpeg = call(host, tmp_path, "image_generate", {"prompt": "a cat", "path": "cat.jpeg"})
        bare = call(host, tmp_path, "image_generate", {"prompt": "an owl", "path": "owl"})
    finally:
        host.close()
    assert not fox.is_error, fox.text_content
    saved = tmp_path.resolve() / "fox.jpg"
    assert fox.structured["paths"] == [str(saved)]
    assert saved.read_bytes().startswith(b"\xff\xd8\xff")
    assert not (tmp_path / "fox.png").exists()
    assert fox.text_content == (
        f"Saved 1 image(s):\n{saved}\nThe service drew JPEG, not PNG: fox.png was saved as fox.jpg."
    )
    assert [Path(p).name for p in two.structured["paths"]] == ["a-1.jpg", "a-2.jpg"]
    assert "a-1.PNG was saved as a-1.jpg, a-2.PNG as a-2.jpg." in two.text_content
    # An extension of the drawn type, or none, is the name asked for.
    assert jpeg.structured["paths"] == [str(tmp_path.resolve() / "cat.jpeg")]
    assert jpeg.text_content.count("\n") == 1
    assert bare.structured["paths"] == [str(tmp_path.resolve() / "owl")]


def test_a_lone_surrogate_in_the_prompt_is_sent_as_a_replacement_character(
    hermes_env: Environment, tmp_path: Path
) -> None:
    # JSON allows a lone surrogate; no request can carry one as UTF-8: U+FFFD, as every model
    # request and MCP call sends one (hermes_core/_encodable.py).
    with FakeModelServer() as server:
        host = media_host(hermes_env, media=openai_media(server.openai_base_url))
        try:
            result = call(host, tmp_path, "image_generate", {"prompt": "a fox \ud800 at dusk"})
        finally:
            host.close()
        requests = server.requests
    assert not result.is_error, result.text_content
    assert requests[0].body["prompt"] == "a fox \ufffd at dusk"


def test_a_file_already_under_the_drawn_types_name_is_kept_and_none_is_saved(
    hermes_env: Environment, tmp_path: Path
) -> None:
    # hen.png is free when asked, but the service draws JPEG and hen-2.jpg is taken.
    (tmp_path / "hen-2.jpg").write_bytes(b"mine")
    write_dir_plugin(hermes_env.home / "plugins", "jpeg", JPEG_DRAWER)
    host = media_host(hermes_env, media={"image_provider": "jpeg"}, enabled=("jpeg",))
    try:
        arguments = {"prompt": "a hen", "path": "hen.png", "count": 2}
        result = call(host, tmp_path, "image_generate", arguments)
    finally:
        host.close()
    assert result.error_code == "TOOL_ERROR", result.text_content
    assert result.text_content == (
        "image_generate: hen-2.jpg already exists; give the name of a new file (the media "
        "tools never replace one)"
    )
    assert (tmp_path / "hen-2.jpg").read_bytes() == b"mine"
    assert [path.name for path in tmp_path.iterdir() if "hen" in path.name] == ["hen-2.jpg"]
