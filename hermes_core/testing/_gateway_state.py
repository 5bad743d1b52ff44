"""What the reference gateway (:mod:`hermes_core.testing._devgateway`) knows and remembers:
its fixtures, each app's connection, the faults a test asked for, the requests received and
the answers already given; and the answers it builds from them, apart from HTTP."""

from __future__ import annotations

import copy
import re
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hermes_core.testing._gateway_fixtures import FixtureConnector, Fixtures, FixtureTool

__all__ = [
    "FAULTS",
    "PAGE_SIZE",
    "Answer",
    "Fault",
    "GatewayState",
    "Refused",
    "error_answer",
    "faulted",
    "missing_arguments",
    "required_field",
    "schema_of",
]

FAULTS = frozenset({"delay", "rate_limit", "error", "expired", "prefixed_not_found"})
"""The faults a test may ask for (``POST /_dev/faults``)."""
PAGE_SIZE = 25
"""Connectors per page of the connector list."""
_STOP_WORDS = frozenset({"the", "and", "for", "with", "from", "into", "that", "this", "your"})
_WORD = re.compile(r"[a-z0-9]+")


def _words(*texts: str) -> set[str]:
    words: set[str] = set()
    for text in texts:
        for word in _WORD.findall(text.lower()):
            words.add(word[:-1] if len(word) > 3 and word.endswith("s") else word)
    return words


class Refused(Exception):
    """An error answer: its HTTP status, code and message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


@dataclass
class Fault:
    slug: str
    fault: str
    ms: int = 0
    retry_after: float = 1.0
    times: int | None = None


@dataclass
class Answer:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


class GatewayState:
    """What the reference gateway knows and remembers, shared by its request threads."""

    def __init__(self, fixtures: Fixtures) -> None:
        self.fixtures = fixtures
        self.lock = threading.Lock()
        self.apps: dict[str, FixtureConnector] = {app.slug: app for app in fixtures.connectors}
        self.status: dict[str, str] = {
            app.slug: "active" if app.connected else "not_connected" for app in fixtures.connectors
        }
        self.faults: list[Fault] = []
        self.requests: list[dict[str, Any]] = []
        self.replies: dict[str, Answer] = {}
        self.literal: dict[tuple[str, str], FixtureTool] = {}
        """(connector, literal slug) -> tool, for tools under ``prefixed_not_found``..."""
        self.hidden: set[tuple[str, str]] = set()
        """...whose (connector, prefixed slug) then answers ``TOOL_NOT_FOUND``."""
        self._words = {
            (app.slug, tool.slug): _words(app.slug, app.name, tool.slug, tool.description)
            for app in fixtures.connectors
            for tool in app.tools
        }

    # Lookups ----------------------------------------------------------------------------------

    def tool(self, connector: str, slug: str) -> FixtureTool | None:
        """The tool ``slug`` of ``connector`` as a call asks for it."""
        app = self.apps.get(connector)
        if app is None or (connector, slug) in self.hidden:
            return None
        literal = self.literal.get((connector, slug))
        if literal is not None:
            return literal
        return next((tool for tool in app.tools if tool.slug == slug), None)

    def find(self, slug: str) -> tuple[FixtureConnector, FixtureTool] | None:
        """The app and tool of a tool slug, whichever app serves it."""
        for app in self.fixtures.connectors:
            for tool in app.tools:
                if tool.slug == slug:
                    return app, tool
        return None

    def search(self, use_case: str) -> list[tuple[FixtureConnector, FixtureTool]]:
        """The tools found for one use case, in fixture order."""
        wanted = {w for w in _words(use_case) if len(w) >= 3 and w not in _STOP_WORDS}
        return [
            (app, tool)
            for app in self.fixtures.connectors
            for tool in app.tools
            if wanted & self._words[(app.slug, tool.slug)]
        ]

    # Faults -----------------------------------------------------------------------------------

    def add_fault(self, data: Any) -> None:
        """Register a fault (``POST /_dev/faults``); ``expired`` and ``prefixed_not_found`` act
        at once."""
        if not isinstance(data, Mapping):
            raise Refused(400, "BAD_REQUEST", "a fault is an object {slug, fault, ...}")
        slug, kind = data.get("slug"), data.get("fault")
        if not isinstance(slug, str) or not slug:
            raise Refused(400, "BAD_REQUEST", "slug must be a tool slug, a connector or '*'")
        if kind not in FAULTS:
            raise Refused(400, "BAD_REQUEST", f"fault must be one of {sorted(FAULTS)}")
        if kind == "expired":
            connector = slug if slug in self.apps else None
            found = self.find(slug)
            connector = connector or (found[0].slug if found else None)
            if connector is None:
                raise Refused(400, "BAD_REQUEST", f"no connector or tool {slug!r}")
            self.status[connector] = "expired"
            return
        if kind == "prefixed_not_found":
            found = self.find(slug)
            prefix = found[0].slug.upper() + "_" if found else ""
            if found is None or not slug.startswith(prefix) or slug == prefix:
                raise Refused(400, "BAD_REQUEST", f"{slug!r} is no tool slug <CONNECTOR>_X")
            self.literal[(found[0].slug, slug[len(prefix) :])] = found[1]
            self.hidden.add((found[0].slug, slug))
            return
        times = data.get("times")
        fault = Fault(
            slug,
            kind,
            ms=int(data.get("ms", 0)),
            retry_after=float(data.get("retry_after", 1)),
            times=int(times) if times is not None else None,
        )
        self.faults.append(fault)

    def faults_for(self, concerned: Iterable[str]) -> list[Fault]:
        """The faults a request concerning these slugs gets (each used up by one)."""
        slugs = set(concerned) | {"*"}
        chosen = []
        for fault in self.faults:
            if fault.slug in slugs and (fault.times is None or fault.times > 0):
                if fault.times is not None:
                    fault.times -= 1
                chosen.append(fault)
        return chosen


def required_field(body: Any, name: str, kind: type) -> Any:
    value = body.get(name) if isinstance(body, Mapping) else None
    if not isinstance(value, kind):
        raise Refused(400, "BAD_REQUEST", f"the body needs {name!r} ({kind.__name__})")
    return value


def schema_of(app: FixtureConnector, tool: FixtureTool) -> dict[str, Any]:
    schema = {
        "connector": app.slug,
        "tool": tool.slug,
        "description": tool.description,
        "inputSchema": copy.deepcopy(dict(tool.input_schema)),
    }
    if tool.annotations:
        schema["annotations"] = copy.deepcopy(dict(tool.annotations))
    return schema


def missing_arguments(tool: FixtureTool, arguments: Mapping[str, Any]) -> list[str]:
    required = tool.input_schema.get("required")
    if not isinstance(required, list):
        return []
    return [str(name) for name in required if name not in arguments]


def error_answer(refused: Refused) -> Answer:
    return Answer(refused.status, {"error": {"code": refused.code, "message": refused.message}})


def faulted(answer: Answer, faults: list[Fault]) -> Answer:
    delay = sum(fault.ms for fault in faults if fault.fault == "delay")
    if delay:
        time.sleep(delay / 1000)
    for fault in faults:
        if fault.fault == "rate_limit":
            return Answer(
                429,
                {"error": {"code": "RATE_LIMITED", "message": "slow down"}},
                {"retry-after": f"{fault.retry_after:g}"},
            )
        if fault.fault == "error":
            return Answer(
                500, {"error": {"code": "INTERNAL", "message": "the gateway failed (a fault)"}}
            )
    return answer
