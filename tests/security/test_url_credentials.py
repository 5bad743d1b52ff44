"""A password written inside a configured URL (``model.base_url``, an MCP server's ``url``) is
never shown: not in an error message, not in ``hermes doctor``'s table or ``--json``, not in a
file hermes writes (the activity log, transcripts, caches). The user's name stays, as
:func:`hermes_core._redaction.redact_text` keeps it. The real ``hermes`` command (in this
process, as ``InProcessCli`` runs it) against a real :class:`FakeModelServer` on 127.0.0.1
reached through ``http://user:s3cret@127.0.0.1:PORT/v1``, a port where nothing listens, a real
HTTP server answering 200 with a web page, and an MCP ``url`` server that cannot be reached."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from hermes_core._redaction import shown_url
from hermes_core.testing import FakeModelServer, FakeTurn, HermesCli
from hermes_core.testing._cli_in_process import InProcessCli

pytestmark = pytest.mark.subprocess

PASSWORD = "s3cret"
SHOWN = "user:[redacted]@127.0.0.1"


@pytest.fixture
def cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


def with_password(url: str) -> str:
    return url.replace("http://", f"http://user:{PASSWORD}@", 1)


def write_model(cli: HermesCli, base_url: str, **extra: Any) -> None:
    model = {"provider": "openai", "model": "fake-model", "base_url": base_url, "max_retries": 0}
    cli.config.write_text(json.dumps({"model": {**model, **extra}}), encoding="utf-8")


def files_holding_the_password(cli: HermesCli) -> list[str]:
    """Every file under the test's folders (home, logs, cache, project) holding the password,
    but the configuration the user wrote it in."""
    return [
        str(path)
        for path in sorted(cli.root.rglob("*"))
        if path.is_file() and path != cli.config and PASSWORD.encode() in path.read_bytes()
    ]


def assert_never_shown(cli: HermesCli, *outputs: str) -> None:
    for output in outputs:
        assert PASSWORD not in output
    assert files_holding_the_password(cli) == []


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


class WebPage(BaseHTTPRequestHandler):
    """Answers every request 200 with a web page (a proxy's login page, no model API)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        body = b"<html><body>Sign in</body></html>"
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def web_page() -> Iterator[str]:
    served = ThreadingHTTPServer(("127.0.0.1", 0), WebPage)
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{served.server_address[1]}/v1"
    served.shutdown()
    served.server_close()


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://bob:hunter2@proxy.corp/v1", "https://bob:[redacted]@proxy.corp/v1"),
        ("https://:hunter2@proxy.corp:8443/v1", "https://:[redacted]@proxy.corp:8443/v1"),
        ("https://bob:p@ss@proxy.corp/v1", "https://bob:[redacted]@proxy.corp/v1"),
        ("https://bob@proxy.corp/v1", "https://bob@proxy.corp/v1"),
        ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
        ("https://host/hook?token=abc123", "https://host/hook?token=[redacted]"),
        ("http://[::1/v1 bob:hunter2@x", "http://[::1/v1 bob:hunter2@x"),
        ("http://u:hunter2@[::1/v1", "http://u:[redacted]@[::1/v1"),
        ("bob:hunter2@proxy.corp/v1", "bob:[redacted]@proxy.corp/v1"),
        ("https://proxy.corp:8443/v1?next=a@b", "https://proxy.corp:8443/v1?next=a@b"),
    ],
)
def test_shown_url_keeps_the_user_and_hides_the_password(url: str, shown: str) -> None:
    assert shown_url(url) == shown


def test_the_openai_sdk_sends_a_base_urls_user_and_password_as_basic_auth(
    cli: InProcessCli,
) -> None:
    with FakeModelServer([FakeTurn(text="Hello!")]) as server:
        write_model(cli, with_password(server.openai_base_url))
        done = cli.run("run", "Hi", env=cli.variables(OPENAI_API_KEY="sk-url-test-0123456789"))
        sent = server.requests[0].headers["authorization"]

    assert "Hello!" in done.stdout
    assert sent == "Basic dXNlcjpzM2NyZXQ="  # user:s3cret, in place of the key's Bearer
    assert_never_shown(cli, done.stdout, done.stderr)


def test_verbose_logs_name_the_base_url_without_its_password(cli: InProcessCli) -> None:
    with FakeModelServer([FakeTurn(text="Hello!")]) as server:
        write_model(cli, with_password(server.openai_base_url))
        done = cli.run(
            "--verbose", "run", "Hi", env=cli.variables(OPENAI_API_KEY="sk-url-test-0123456789")
        )

    assert "Hello!" in done.stdout
    assert f"http://{SHOWN}:" in done.stderr
    assert_never_shown(cli, done.stdout, done.stderr)


def test_a_404_names_the_base_url_without_its_password(cli: InProcessCli) -> None:
    with FakeModelServer([FakeTurn(error=404)]) as server:
        write_model(cli, with_password(server.openai_base_url))
        done = cli.run("run", "Hi", ok=False)

    assert done.returncode == 1
    assert "not found (HTTP 404)" in done.stderr
    assert SHOWN in done.stderr
    assert_never_shown(cli, done.stdout, done.stderr)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_404_of_a_base_url_without_v1_hints_at_it_without_the_password(
    cli: InProcessCli, provider: str
) -> None:
    with FakeModelServer([FakeTurn(error=404)]) as server:
        # openai: the host alone (its URL ends in /v1); anthropic: with /v1 (its SDK adds it)
        base_url = server.url if provider == "openai" else server.anthropic_base_url + "/v1"
        write_model(cli, with_password(base_url), provider=provider)
        done = cli.run("run", "Hi", ok=False, env=cli.variables(ANTHROPIC_API_KEY="sk-ant-x"))

    assert "its SDK adds /v1" in done.stderr or "usually ends in /v1" in done.stderr
    assert SHOWN in done.stderr
    assert_never_shown(cli, done.stdout, done.stderr)


def test_a_refused_port_names_the_base_url_without_its_password(cli: InProcessCli) -> None:
    write_model(cli, f"http://user:{PASSWORD}@127.0.0.1:{free_port()}/v1")

    done = cli.run("run", "Hi", ok=False)

    assert done.returncode == 1
    assert SHOWN in done.stderr
    assert_never_shown(cli, done.stdout, done.stderr)


def test_a_200_that_is_no_stream_names_the_base_url_without_its_password(
    cli: InProcessCli, web_page: str
) -> None:
    write_model(cli, with_password(web_page))

    done = cli.run("run", "Hi", ok=False)

    assert done.returncode == 1
    assert "text/html" in done.stderr
    assert SHOWN in done.stderr
    assert_never_shown(cli, done.stdout, done.stderr)


@pytest.mark.parametrize("as_json", [False, True])
def test_doctor_names_the_base_url_without_its_password(cli: InProcessCli, as_json: bool) -> None:
    with FakeModelServer() as server:
        write_model(cli, with_password(server.openai_base_url))
        args = ("doctor", "--json") if as_json else ("doctor",)
        done = cli.run(*args, ok=False, env=cli.variables(HERMES_STRICT_PLUGINS="0"))

    assert SHOWN in done.stdout
    assert_never_shown(cli, done.stdout, done.stderr)


def test_doctor_names_a_refused_base_url_without_its_password(cli: InProcessCli) -> None:
    write_model(cli, f"http://user:{PASSWORD}@127.0.0.1:{free_port()}/v1")

    done = cli.run("doctor", ok=False, env=cli.variables(HERMES_STRICT_PLUGINS="0"))

    assert SHOWN in done.stdout
    assert_never_shown(cli, done.stdout, done.stderr)


def write_mcp_server(cli: InProcessCli, url: str) -> None:
    servers = {"remote": {"url": url}}
    cli.config.write_text(json.dumps({"mcp_servers": servers}), encoding="utf-8")


@pytest.mark.parametrize(
    "args", [("mcp", "test", "remote"), ("mcp", "list"), ("mcp", "list", "--json")]
)
def test_an_mcp_url_server_that_cannot_connect_is_named_without_its_password(
    cli: InProcessCli, args: tuple[str, ...]
) -> None:
    write_mcp_server(cli, f"http://user:{PASSWORD}@127.0.0.1:{free_port()}/mcp")

    done = cli.run(*args, ok=False)

    assert_never_shown(cli, done.stdout, done.stderr)


def test_chats_model_command_names_the_base_url_without_its_password(
    hermes_cli: HermesCli,
) -> None:
    with FakeModelServer([FakeTurn(text="Hello!")]) as server:
        write_model(hermes_cli, with_password(server.openai_base_url))
        done = hermes_cli.run("chat", input="hi\n/model\n")

    assert f"of the provider openai at http://{SHOWN}:" in done.stderr
    assert_never_shown(hermes_cli, done.stdout, done.stderr)


@pytest.mark.parametrize("as_json", [False, True])
def test_config_show_names_configured_urls_without_their_passwords(
    cli: InProcessCli, as_json: bool
) -> None:
    model = {"provider": "openai", "model": "m", "base_url": f"http://user:{PASSWORD}@h/v1"}
    servers = {"remote": {"url": f"https://user:{PASSWORD}@mcp.example/mcp"}}
    config = {"model": model, "mcp_servers": servers}
    cli.config.write_text(json.dumps(config), encoding="utf-8")

    done = cli.run("config", "show", *(["--json"] if as_json else []))

    assert "http://user:[redacted]@h/v1" in done.stdout
    assert "https://user:[redacted]@mcp.example/mcp" in done.stdout
    assert_never_shown(cli, done.stdout, done.stderr)


@pytest.mark.parametrize("url", [f"ftp://user:{PASSWORD}@h/v1", f"user:{PASSWORD}@h/v1"])
def test_a_refused_base_url_is_quoted_without_its_password(cli: InProcessCli, url: str) -> None:
    write_model(cli, url)

    done = cli.run("config", "validate", ok=False)

    assert done.returncode != 0
    assert "model.base_url" in done.stdout + done.stderr
    assert_never_shown(cli, done.stdout, done.stderr)
