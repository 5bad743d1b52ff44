"""The reference gateway for the connector tests, and hosts that use it.

:class:`Gateway` is a :class:`~hermes_core.testing._devgateway.DevGateway` serving on
127.0.0.1 in a thread (a real socket: every request goes over HTTP), with its test-only routes
at hand. :func:`connector_host` starts a real :class:`~hermes_core._host.Host` (the bundled
plugins, the ``http`` gateway among them) whose ``tools.connectors.url`` is that gateway, signed
in with a token, and with local tools from a real directory plugin. :class:`OffProtocolServer` is
a real HTTP server answering whatever a test tells it to (what a broken gateway would).
"""

from __future__ import annotations

import copy
import json
import select
import signal
import subprocess
import threading
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from hermes_core._config import Config
from hermes_core._host import Host
from hermes_core._paths import Environment
from hermes_core.connectors._signin import TOKEN_VARIABLE
from hermes_core.testing import HermesCli, write_dir_plugin
from hermes_core.testing._devgateway import DevGateway
from hermes_core.testing._gateway_fixtures import parse_fixtures

SEND_EMAIL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"to": {"type": "string"}, "subject": {"type": "string"}},
    "required": ["to"],
}

FIXTURE: dict[str, Any] = {
    "connectors": [
        {
            "slug": "gmail",
            "name": "Gmail",
            "connected": False,
            "tools": [
                {
                    "slug": "GMAIL_SEND_EMAIL",
                    "description": "Send an email from the user's Gmail account",
                    "input_schema": SEND_EMAIL_SCHEMA,
                    "annotations": {"destructiveHint": True},
                    "result": {"id": "msg-1", "status": "sent"},
                },
                {
                    "slug": "GMAIL_LIST_LABELS",
                    "description": "List the labels of the user's Gmail mailbox",
                    "result": {"labels": ["INBOX", "SENT"]},
                },
                {
                    "slug": "GMAIL_ARCHIVE_EMAIL",
                    "description": "Archive an email of the user's Gmail mailbox",
                    "result": {"archived": True},
                },
            ],
        },
        {
            "slug": "linear",
            "name": "Linear",
            "connected": True,
            "tools": [
                {
                    "slug": "LINEAR_CREATE_ISSUE",
                    "description": "Create an issue in a Linear team",
                    "input_schema": {
                        "type": "object",
                        "properties": {"title": {"type": "string"}},
                        "required": ["title"],
                    },
                    "result": {"id": "LIN-1"},
                }
            ],
        },
    ]
}
"""Gmail (not connected) and Linear (connected), as the issue's fixture format writes them."""

TOKEN = "dev-token"

LOCAL_TOOLS = """
from hermes_core.plugin import Tool, ToolAnnotations, hookimpl

NAMES = {names!r}


def make(name, description):
    def run(**arguments):
        return {{"ran": name, "arguments": arguments}}

    return Tool(
        name=name,
        description=description,
        handler=run,
        toolset="local",
        annotations=ToolAnnotations(read_only=True, destructive=False),
    )


@hookimpl
def hermes_tools(config, env):
    return [make(name, description) for name, description in NAMES.items()]
"""

GITHUB_TOOLS = {
    f"github_{verb}_issue": f"{verb.capitalize()} an issue of a GitHub repository"
    for verb in ("create", "update", "close", "list", "comment", "label", "assign", "lock")
}
"""Eight local tools sharing the words 'issue' and 'repository'."""


def fixture(*connectors: Mapping[str, Any], token: str | None = None) -> dict[str, Any]:
    """A fixture document of ``connectors`` (default: :data:`FIXTURE`'s)."""
    data: dict[str, Any] = {
        "connectors": [dict(c) for c in connectors] or copy.deepcopy(FIXTURE["connectors"])
    }
    if token is not None:
        data["token"] = token
    return data


class Gateway:
    """A reference gateway serving ``data`` on 127.0.0.1, with its test-only routes."""

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        self.server = DevGateway(parse_fixtures(copy.deepcopy(dict(data or FIXTURE))))
        self.url = self.server.url

    def __enter__(self) -> Gateway:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.close()

    def fault(self, slug: str, fault: str, **options: Any) -> None:
        """Inject a fault (``POST /_dev/faults``)."""
        answer = httpx.post(
            f"{self.url}_dev/faults", json={"slug": slug, "fault": fault, **options}
        )
        assert answer.status_code == 200, answer.text

    def requests(self, route: str | None = None) -> list[dict[str, Any]]:
        """The protocol requests received so far (of ``route``: search, schemas, execute,
        connections, list)."""
        seen = httpx.get(f"{self.url}_dev/requests").json()["requests"]
        return [r for r in seen if route is None or r["route"] == route]

    def forget_requests(self) -> None:
        """Start counting requests from zero."""
        httpx.delete(f"{self.url}_dev/requests").raise_for_status()

    def connections(self) -> dict[str, str]:
        """Each app's connection state."""
        state: dict[str, str] = httpx.get(f"{self.url}_dev/state").json()["connections"]
        return state

    @staticmethod
    def open(link: str) -> httpx.Response:
        """Open a ``connect_url`` as the user's browser would."""
        return httpx.get(link)


def connector_env(root: Path, *, token: str | None = TOKEN, **variables: str) -> Environment:
    """An environment in ``root`` (home, project, logs, cache), signed in with ``token``
    through ``HERMES_CONNECTORS_TOKEN`` when one is given."""
    home, work = root / "home", root / "work"
    home.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    base = {
        "HERMES_LOG_DIR": str(root / "logs"),
        "HERMES_CACHE_DIR": str(root / "cache"),
        "HERMES_STRICT_PLUGINS": "1",
    }
    if token is not None:
        base[TOKEN_VARIABLE] = token
    return Environment(home=home, cwd=work, variables={**base, **variables})


@asynccontextmanager
async def connector_host(
    root: Path,
    url: str | None,
    *,
    token: str | None = TOKEN,
    local: Mapping[str, str] | None = None,
    connectors: Mapping[str, Any] | None = None,
    env: Environment | None = None,
    **sections: Any,
) -> AsyncIterator[Host]:
    """A started host whose connectors go to ``url`` (none when ``None``), signed in with
    ``token``; ``local`` tools (name -> description) come from a directory plugin ``local``.
    ``sections`` are more of ``config.yaml`` (the approval policy is ``off`` unless given)."""
    environment = env or connector_env(root, token=token)
    data: dict[str, Any] = {"approvals": {"policy": "off"}, **sections}
    if local:
        write_dir_plugin(
            environment.user_plugins_dir, "local", LOCAL_TOOLS.format(names=dict(local))
        )
        plugins = dict(data.get("plugins", {}))
        plugins["enabled"] = [*plugins.get("enabled", []), "local"]
        data["plugins"] = plugins
    if url is not None or connectors:
        tools = dict(data.get("tools", {}))
        tools["connectors"] = {**({"url": url} if url else {}), **(connectors or {})}
        data["tools"] = tools
    async with Host(Config.model_validate(data), environment) as host:
        yield host


def payload(result: Any) -> dict[str, Any]:
    """A bridge result's JSON (its text and its structured content are the same)."""
    parsed: dict[str, Any] = json.loads(result.text_content)
    assert parsed == result.structured
    return parsed


def matches(answer: Mapping[str, Any], index: int = 0) -> list[str]:
    """The names a ``tool_search`` answer matched for query ``index``."""
    found: list[str] = answer["results"][index]["matches"]
    return found


def entries(answer: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    """The results of a connector batch answer."""
    found: Sequence[Mapping[str, Any]] = answer["results"]
    return found


class GatewayProcess:
    """``hermes connectors dev-gateway`` as a child process, as a user starts it: :attr:`url`
    is what it printed on standard error once it accepts connections."""

    def __init__(self, cli: HermesCli, data: Mapping[str, Any] | None = None) -> None:
        self.fixtures = cli.root / "fixtures.json"
        self.fixtures.write_text(json.dumps(data or FIXTURE), encoding="utf-8")
        self.process = cli.start(
            "connectors", "dev-gateway", "--fixtures", str(self.fixtures), stdout=subprocess.DEVNULL
        )
        self.first_line = self._first_line()
        self.url = self.first_line.removeprefix("listening on ")

    def _first_line(self) -> str:
        assert self.process.stderr is not None
        ready, _, _ = select.select([self.process.stderr], [], [], 30)
        if not ready:
            self.stop()
            raise AssertionError("hermes connectors dev-gateway printed nothing within 30 s")
        line = self.process.stderr.readline().rstrip("\n")
        if not line.startswith("listening on "):
            rest = self.process.communicate(timeout=10)[1]
            raise AssertionError(f"hermes connectors dev-gateway said {line!r}\n{rest}")
        return line

    def stop(self) -> int:
        """SIGTERM, then its exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=20)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            if self.process.stderr is not None:
                self.process.stderr.close()

    def __enter__(self) -> GatewayProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class OffProtocolServer:
    """A real HTTP server on 127.0.0.1 answering ``answers[path] = (status, body, headers)``
    (``body`` a JSON value, or ``bytes`` sent as is; a path with its query, such as
    ``/v1/connectors?cursor=c2``, is answered before the path alone); it records each request's
    path and headers, and each request's target (the path with its query) in ``targets``."""

    def __init__(self) -> None:
        self.answers: dict[str, tuple[int, Any, dict[str, str]]] = {}
        self.seen: list[tuple[str, dict[str, str]]] = []
        self.targets: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                self.rfile.read(length)
                path = self.path.split("?")[0]
                owner.targets.append(self.path)
                owner.seen.append((path, {k.lower(): v for k, v in self.headers.items()}))
                default = owner.answers.get(path, (404, {"error": {}}, {}))
                status, body, headers = owner.answers.get(self.path, default)
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def answer(self, route: str, status: int, body: Any, **headers: str) -> None:
        """Answer requests for ``route`` (relative to :attr:`url`) with ``status`` and ``body``."""
        self.answers[f"/{route}"] = (status, body, headers)

    def __enter__(self) -> OffProtocolServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
