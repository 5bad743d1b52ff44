"""``model.base_url`` pointing at something that is no model API (a web page, a proxy's login
page, another JSON service): its 200 answer is not a stream of the provider's wire, and ``hermes
run`` must fail saying so, naming what came and the key to check, instead of printing an empty
answer and exiting 0. The real ``hermes`` command as a subprocess, against a real HTTP server
on 127.0.0.1 answering what such a server answers."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from hermes_core.testing import HermesCli

pytestmark = pytest.mark.subprocess

ANSWERS = {
    "html": ("text/html; charset=utf-8", b"<html><body><h1>Welcome to nginx!</h1></body></html>"),
    "json": ("application/json", b'{"status": "ok", "service": "inventory"}'),
}


class NotAModelServer(BaseHTTPRequestHandler):
    """Answers every POST with 200 and ``self.server.answer`` (content type, body)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        content_type, body = self.server.answer  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.fixture(params=sorted(ANSWERS))
def server(request: pytest.FixtureRequest) -> Iterator[ThreadingHTTPServer]:
    served = ThreadingHTTPServer(("127.0.0.1", 0), NotAModelServer)
    served.answer = ANSWERS[request.param]  # type: ignore[attr-defined]
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    yield served
    served.shutdown()
    served.server_close()


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_hermes_run_against_a_server_that_is_no_model_api_fails_naming_base_url(
    hermes_cli: HermesCli, server: ThreadingHTTPServer, provider: str
) -> None:
    url = f"http://127.0.0.1:{server.server_address[1]}"
    base_url = f"{url}/v1" if provider == "openai" else url
    model = {"provider": provider, "model": "some-model", "base_url": base_url, "max_retries": 0}
    hermes_cli.config.write_text(json.dumps({"model": model}), encoding="utf-8")

    done = hermes_cli.run("run", "Hello?", ok=False)

    content_type = server.answer[0].split(";")[0]  # type: ignore[attr-defined]
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    assert f"hermes: error: {provider}: model 'some-model' at {base_url}" in done.stderr
    assert content_type in done.stderr
    assert "check model.base_url" in done.stderr
    assert "stop: answer" not in done.stderr


class StaticSite(SimpleHTTPRequestHandler):
    """A plain web server (``python -m http.server``): a POST is answered 501; with
    ``self.server.status`` set, that status instead (nginx serving files answers 405)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        status = getattr(self.server, "status", None)
        if status is None:
            super().send_error(501, "Unsupported method ('POST')")
        else:
            self.send_error(status)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.mark.parametrize(("provider", "status"), [("openai", None), ("anthropic", 405)])
def test_a_web_server_that_takes_no_post_is_named_at_once_not_retried(
    hermes_cli: HermesCli, provider: str, status: int | None
) -> None:
    """``model.base_url`` at the wrong port, where a plain web server answers: its 501 (or
    405) was taken for a model server's passing failure, retried for seconds, and said
    "server error (HTTP 501): Error code: 501" without pointing at the setting."""
    served = ThreadingHTTPServer(("127.0.0.1", 0), StaticSite)
    served.status = status  # type: ignore[attr-defined]
    threading.Thread(target=served.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{served.server_address[1]}"
        base_url = f"{url}/v1" if provider == "openai" else url
        model = {"provider": provider, "model": "some-model", "base_url": base_url}
        hermes_cli.config.write_text(json.dumps({"model": model}), encoding="utf-8")
        done = hermes_cli.run("run", "Hello?", ok=False)
    finally:
        served.shutdown()
        served.server_close()

    assert done.returncode == 1, done.stderr
    assert "retrying" not in done.stderr
    assert f"(HTTP {status or 501})" in done.stderr
    assert "check model.base_url" in done.stderr
    assert "(1 model request, 0 tokens)" in done.stderr


@pytest.mark.parametrize(
    ("provider", "variable", "named"),
    [
        ("openai", "OPENAI_API_KEY", None),
        ("anthropic", "ANTHROPIC_API_KEY", None),
        ("openai", "MY_OPENAI_KEY", "MY_OPENAI_KEY"),
    ],
)
def test_no_key_for_the_vendors_own_api_is_a_configuration_error_naming_the_variable(
    hermes_cli: HermesCli, provider: str, variable: str, named: str | None
) -> None:
    """No ``model.base_url`` (the vendor's API) and no key in the environment nor in
    ``$HERMES_HOME/.env``: nothing is sent (a request without a key can only be refused, and
    with no network it would be retried as a connection error); the error names the variable
    and says a local server needs ``model.base_url`` instead."""
    model = {"provider": provider, "model": "some-model", "api_key_env": named}
    hermes_cli.config.write_text(json.dumps({"model": model}), encoding="utf-8")
    unset = {"OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": "", variable: ""}
    env = {key: value for key, value in hermes_cli.variables().items() if key not in unset}

    done = hermes_cli.run("run", "Hello?", ok=False, env=env)

    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"hermes: error: {provider}: no key: {variable} is not set")
    assert "$HERMES_HOME/.env" in done.stderr
    assert "model.base_url" in done.stderr
    assert "retrying" not in done.stderr
