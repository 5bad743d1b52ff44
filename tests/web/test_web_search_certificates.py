"""A search provider behind HTTPS with a certificate this machine does not trust (a SearXNG
instance's own, self-signed): the error says so in one line and names SSL_CERT_FILE, not the raw
SSL error, and a hermes started with SSL_CERT_FILE naming that certificate reaches it; against a
real HTTPS server on 127.0.0.1 with a self-signed certificate."""

from __future__ import annotations

import datetime
import ipaddress
import json
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from hermes_core import Config, Environment
from hermes_core.testing import HermesCli, make_host


def _self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 signed by its own key, and that key (PEM files)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "searxng.test")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


class _Answer(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        found = {"url": "https://otters.example/", "title": "Otters", "content": "They swim."}
        body = json.dumps({"results": [found], "web": {"results": []}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The server's self-signed certificate (its own authority) and its key."""
    return _self_signed(tmp_path_factory.mktemp("certificate"))


@pytest.fixture(scope="module")
def https_url(certificate: tuple[Path, Path]) -> Iterator[str]:
    cert_file, key_file = certificate
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Answer)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.mark.parametrize(
    ("provider", "prefix"),
    [("searxng", "searxng at https://127.0.0.1:"), ("brave", "brave: ")],
)
def test_an_untrusted_certificate_is_said_with_what_to_do(
    tmp_path: Path, https_url: str, provider: str, prefix: str
) -> None:
    where = {"url": https_url} if provider == "searxng" else {"endpoint": f"{https_url}/search"}
    env = Environment(
        home=tmp_path / "home", cwd=tmp_path, variables={"BRAVE_API_KEY": "a-key-of-the-test"}
    )
    entries = {"web": {"search_provider": provider}, provider: where}
    host = make_host(Config.model_validate({"plugins": {"entries": entries}}), env)
    try:
        result = anyio.run(host.dispatch, "web_search", {"query": "otters"}, host.new_session())
    finally:
        host.close()
    assert result.is_error
    text = result.text_content
    assert text.startswith(prefix), text
    assert "certificate is not trusted (self-signed certificate)" in text
    assert "SSL_CERT_FILE" in text
    assert "[SSL: CERTIFICATE_VERIFY_FAILED]" not in text
    assert "\n" not in text


@pytest.mark.subprocess
def test_a_hermes_started_with_ssl_cert_file_naming_the_certificate_reaches_the_server(
    hermes_cli: HermesCli, https_url: str, certificate: tuple[Path, Path]
) -> None:
    """SSL_CERT_FILE is read when the process builds its TLS context: the hermes command given
    the server's certificate in it searches; the same command without it is refused in one
    line that names SSL_CERT_FILE."""
    hermes_cli.config.write_text(
        "plugins:\n  entries:\n    web:\n      search_provider: searxng\n"
        f"    searxng:\n      url: {https_url}\n",
        encoding="utf-8",
    )
    call = ("tools", "call", "web_search", '{"query": "otters"}')

    trusted = hermes_cli.run(
        *call, env=hermes_cli.variables(SSL_CERT_FILE=str(certificate[0])), ok=False
    )
    refused = hermes_cli.run(*call, ok=False)

    assert trusted.returncode == 0, trusted.stderr[-3000:]
    assert "https://otters.example/" in trusted.stdout
    assert refused.returncode != 0, refused.stdout
    assert "certificate is not trusted (self-signed certificate)" in refused.stderr
    assert "set SSL_CERT_FILE to a PEM file" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert "https://otters.example/" not in refused.stdout
