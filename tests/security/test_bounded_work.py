"""Work that an input controls stays bounded and off the event loop (issue 27, point 6).

Who is not trusted here: an MCP server's schemas (a ``pattern`` that backtracks for ever), a
model's arguments (63 MB of text to log), a connector gateway's answers (300 MB, or hundreds of
thousands of tools). Each test drives the real path: a real MCP server as a child process, a
real host dispatching, a real HTTP server on 127.0.0.1; memory is measured in a child process
with ``resource.getrusage``.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest

from hermes_core import Host
from hermes_core._activity import ActivityLog
from hermes_core._specs import ActivityEvent
from hermes_core._validation import validate_arguments
from hermes_core.agent import Message, TranscriptStore
from hermes_core.connectors._service import MAX_HITS
from hermes_core.plugin import Config, Environment, Tool, hookimpl

pytestmark = pytest.mark.anyio

# The budgets below are CPU seconds of this process (``time.process_time``), not wall time:
# the rule is how much work an input can cause, and a loaded 2-core machine stretches wall
# time, not work. Unbounded, the patterns cost seconds to hours of CPU (19 s for the first).

BADTOOLS = Path(__file__).parents[1] / "mcp" / "servers" / "badtools.py"
"""A real MCP server (stdio) whose ``tools/list`` answers with the tools of a JSON file."""

NESTED_PLUS = r"^(a+)+$"
"""The pattern of the report: Python's ``re`` takes 19 s on 28 ``a`` and a ``!``."""
OVERLAPPING = r"^(a|aa)+$"
"""A pattern that backtracks exponentially in ``re`` and in ``regex`` alike."""


def _environment(root: Path, **variables: str) -> Environment:
    home, work = root / "home", root / "work"
    home.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    base = {
        "HERMES_STRICT_PLUGINS": "1",
        "HERMES_LOG_DIR": str(root / "logs"),
        "HERMES_CACHE_DIR": str(root / "cache"),
    }
    return Environment(home=home, cwd=work, variables={**base, **variables})


def _word_schema(pattern: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"word": {"type": "string", "pattern": pattern}},
        "required": ["word"],
    }


# Patterns of tool schemas ---------------------------------------------------------------------


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("pattern", "word", "said"),
    [
        pytest.param(NESTED_PLUS, "a" * 28 + "!", "does not match", id="nested-plus"),
        pytest.param(OVERLAPPING, "a" * 34 + "!", "took too long", id="overlapping"),
    ],
)
async def test_a_backtracking_pattern_of_an_mcp_tool_is_answered_within_a_second(
    tmp_path: Path, pattern: str, word: str, said: str
) -> None:
    listing = tmp_path / "listing.json"
    tools = [
        {"name": "match", "inputSchema": _word_schema(pattern)},
        {"name": "ok", "inputSchema": {"type": "object", "properties": {}}},
    ]
    listing.write_text(json.dumps(tools), encoding="utf-8")
    server = {"command": sys.executable, "args": [str(BADTOOLS), str(listing)]}
    config = Config.model_validate({"approvals": {"policy": "off"}, "mcp_servers": {"re": server}})
    async with Host(config, _environment(tmp_path)) as host:
        session = host.new_session()
        warm = await host.dispatch("mcp__re__match", {"word": "aa"}, session)
        assert warm.text_content == "called match"
        started = time.process_time()
        result = await host.dispatch("mcp__re__match", {"word": word}, session)
        elapsed = time.process_time() - started

    assert elapsed < 1.0, f"the call took {elapsed:.1f} s"
    assert result.error_code == "INVALID_ARGUMENTS"
    assert result.structured["path"] == "arguments.word"
    assert result.structured["rule"] == "pattern"
    assert said in result.structured["message"]


class _PatternTools:
    """A plugin with a tool whose schema holds ``pattern`` and a tool without one."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern

    @hookimpl
    def hermes_tools(self) -> list[Tool]:
        return [
            Tool("match", "Match a word.", _word_schema(self.pattern), handler=lambda word: word),
            Tool("ping", "Answer pong.", handler=lambda: "pong"),
        ]


@pytest.mark.parametrize(
    ("pattern", "word"),
    [
        pytest.param(NESTED_PLUS, "a" * 25 + "!", id="nested-plus"),
        pytest.param(OVERLAPPING, "a" * 34 + "!", id="overlapping"),
    ],
)
async def test_a_backtracking_pattern_does_not_stall_another_call_of_the_host(
    tmp_path: Path, pattern: str, word: str
) -> None:
    host = Host(Config.model_validate({"approvals": {"policy": "off"}}), _environment(tmp_path))
    host.register(_PatternTools(pattern))
    async with host:
        session = host.new_session()
        assert (await host.dispatch("match", {"word": "aa"}, session)).text_content == "aa"
        assert (await host.dispatch("ping", {}, session)).text_content == "pong"
        slow: list[Any] = []

        async def backtrack() -> None:
            slow.append(await host.dispatch("match", {"word": word}, session))

        async with anyio.create_task_group() as group:
            started = time.perf_counter()
            group.start_soon(backtrack)
            await anyio.sleep(0.05)  # the slow call is under way
            pong = await host.dispatch("ping", {}, session)
            waited = time.perf_counter() - started

    assert pong.text_content == "pong"
    # Wall time (a wait, not work): the pattern's budget is 0.1 s; a pattern holding the GIL
    # unbounded would keep ping waiting for seconds (``re``: 2.4 s on 25 ``a``).
    assert waited < 1.0, f"ping waited {waited:.1f} s for the other call's pattern"
    assert slow[0].error_code == "INVALID_ARGUMENTS"


@pytest.mark.parametrize(
    "schema",
    [
        pytest.param(
            {"type": "object", "patternProperties": {OVERLAPPING: {"type": "integer"}}},
            id="patternProperties",
        ),
        pytest.param(
            {"type": "object", "propertyNames": {"pattern": OVERLAPPING}}, id="propertyNames"
        ),
        pytest.param(
            {
                "type": "object",
                "patternProperties": {OVERLAPPING: {"type": "integer"}},
                "additionalProperties": False,
            },
            id="additionalProperties",
        ),
    ],
)
def test_a_backtracking_pattern_on_argument_names_is_refused_within_a_second(
    schema: dict[str, Any],
) -> None:
    tool = Tool("keys", "Take keys.", schema)
    assert validate_arguments(tool, {"aa": 1}) is None  # jsonschema and regex are loaded
    started = time.process_time()
    problem = validate_arguments(tool, {"a" * 34 + "!": 1})
    elapsed = time.process_time() - started

    assert elapsed < 1.0, f"validation took {elapsed:.1f} s"
    assert problem is not None
    assert "took too long" in problem.message


def test_unevaluated_properties_beside_a_backtracking_pattern_never_stall_validation() -> None:
    # jsonschema matches patternProperties with ``re`` again for unevaluatedProperties: such a
    # schema is not used to judge (as a broken one), rather than checked without a budget.
    schema = {
        "type": "object",
        "patternProperties": {OVERLAPPING: {"type": "integer"}},
        "unevaluatedProperties": False,
    }
    tool = Tool("keys", "Take keys.", schema)
    assert validate_arguments(tool, {"aa": 1}) is None  # jsonschema is loaded
    started = time.process_time()
    problem = validate_arguments(tool, {"a" * 34 + "!": 1})
    elapsed = time.process_time() - started

    assert elapsed < 1.0, f"validation took {elapsed:.1f} s"
    assert problem is None


# The activity log ------------------------------------------------------------------------------

_MEASURE_LOGGING = textwrap.dedent(
    """
    import json, resource, sys, time
    from pathlib import Path

    import anyio

    from hermes_core import Config, Environment, Host, Tool
    from hermes_core.plugin import hookimpl

    root = Path(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


    class Store:
        @hookimpl
        def hermes_tools(self):
            schema = {"type": "object", "properties": {"text": {"type": "string"}}}
            return [Tool("store", "Store text.", schema, handler=lambda text: "stored")]


    def peak_kb():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


    async def main():
        env = Environment(
            home=root / "home",
            cwd=root,
            variables={"HERMES_LOG_DIR": str(root / "logs"), "HERMES_CACHE_DIR": str(root)},
        )
        host = Host(Config.model_validate({"approvals": {"policy": "off"}}), env)
        host.register(Store())
        async with host:
            session = host.new_session()
            await host.dispatch("store", {"text": "warm up"}, session)
            host.dispatcher.activity_log.flush()
            item = '{"token": "ghp_%s", "note": "%s"}' % ("Z" * 36, "n" * 60)
            text = '{"items": [' + ", ".join([item] * 550_000) + "]}"
            before = peak_kb()
            started = time.process_time()
            answer = await host.dispatch("store", {"text": text}, session)
            host.dispatcher.activity_log.flush()
            elapsed = time.process_time() - started
            growth = peak_kb() - before
        print(json.dumps({"answer": answer.text_content, "elapsed": elapsed,
                          "growth_kb": growth, "length": len(text)}))


    anyio.run(main)
    """
)


JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk"


def test_a_long_run_of_jwt_beginnings_in_a_tool_result_is_written_to_the_transcript_at_once(
    tmp_path: Path,
) -> None:
    # A transcript is redacted whole, and a tool's result is what a page or a file held. The
    # JWT shape looked for its '.' after every "eyJ" of a run: 200,000 characters of "-eyJ"
    # took 7 s (1 MB, minutes), with the GIL held.
    transcript = TranscriptStore(tmp_path / "sessions").open("s1")
    transcript.start("s1", model="fake-1")
    text = "-eyJ" * 50_000 + f" {JWT} the end"
    started = time.process_time()
    transcript.add(Message("tool", text, tool_call_id="c1", name="read_file"))
    elapsed = time.process_time() - started

    assert elapsed < 1.0, f"the transcript line took {elapsed:.1f} s"
    [kept] = transcript.messages()
    assert kept.content == "-eyJ" * 50_000 + " [redacted] the end"


@pytest.mark.subprocess
def test_a_63_mb_argument_is_logged_as_a_bounded_redacted_preview(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    script = tmp_path / "measure.py"
    script.write_text(_MEASURE_LOGGING, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=100,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    measured = json.loads(done.stdout.splitlines()[-1])
    (log,) = (tmp_path / "logs").rglob("activity.jsonl")  # in the home's folder
    lines = log.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[-1])

    assert measured["answer"] == "stored"
    assert measured["length"] > 63_000_000
    assert measured["elapsed"] < 1.0, measured
    assert measured["growth_kb"] < 100_000, measured
    assert len(lines[-1]) < 20_000
    assert "ghp_" not in lines[-1]
    assert "[redacted]" in lines[-1]
    assert f"{measured['length']:,} characters" in record["arguments"]["text"]


_PREVIEW = 4096
"""Characters of one string the activity log keeps (docs/tools.md, step 9)."""

_STRADDLING = [
    pytest.param("sk-" + "Ab1" * 12, id="sk-key"),
    pytest.param("ghp_" + "Q" * 36, id="github-token"),
    pytest.param("--api-key hunter2hunter2", id="flag"),
    pytest.param("PGPASSWORD=hunter2hunter2", id="assignment"),
    # Letters no hex id holds: a record's session and call ids (hex) held "cdef" of
    # "abcdef..." by chance (CI failed on it once).
    pytest.param("Authorization: Bearer ghijklmnopqrstuvwxyzghij", id="header"),
    pytest.param("https://ann:hunter2hunter2@example.org/", id="url"),
]


@pytest.mark.parametrize("secret", _STRADDLING)
async def test_a_secret_straddling_the_cut_of_a_preview_is_redacted(
    tmp_path: Path, secret: str
) -> None:
    host = Host(Config.model_validate({"approvals": {"policy": "off"}}), _environment(tmp_path))
    host.register(_PatternTools(".*"))
    async with host:
        session = host.new_session()
        for offset in range(-len(secret) - 2, 3):
            start = _PREVIEW + offset
            text = "x" * (start - 1) + " " + secret + " " + "y" * 200_000
            await host.dispatch("match", {"word": text}, session)
        host.dispatcher.activity_log.flush()
    lines = (host.env.log_dir / "activity.jsonl").read_text(encoding="utf-8").splitlines()

    body = "hunter2hunter2" if "hunter2" in secret else secret[-24:]
    pieces = {body[index : index + 4] for index in range(len(body) - 3)}
    assert len(lines) == len(secret) + 5
    for line in lines:
        assert len(line) < 2 * _PREVIEW
        leaked = sorted(piece for piece in pieces if piece in line)
        assert not leaked, line[_PREVIEW - 80 : _PREVIEW + 80]


def _event(index: int) -> ActivityEvent:
    return ActivityEvent("read_file", {"path": f"f{index:05}.txt"}, "ok", 1.0, "s", "files")


def test_the_activity_log_rotates_at_its_size_keeping_the_newest_files(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "activity.jsonl"
    log = ActivityLog(path, max_bytes=10_000, backups=3)  # type: ignore[call-arg]
    for index in range(1000):
        log.write(_event(index))
        log.flush()
    log.close()

    files = sorted(p.name for p in path.parent.iterdir())
    assert files == ["activity.jsonl", "activity.jsonl.1", "activity.jsonl.2", "activity.jsonl.3"]
    kept: list[str] = []
    for name in [*reversed(files[1:]), files[0]]:  # oldest first
        data = (path.parent / name).read_text(encoding="utf-8")
        assert len(data.encode()) <= 10_000
        kept.extend(json.loads(line)["arguments"]["path"] for line in data.splitlines())
    assert kept[-1] == "f00999.txt"
    assert kept == [f"f{i:05}.txt" for i in range(1000 - len(kept), 1000)]
    assert os.stat(path).st_mode & 0o777 == 0o600


# Connector gateway answers ------------------------------------------------------------------------


class _Gateway:
    """A real HTTP server on 127.0.0.1 speaking the gateway protocol: ``execute`` answers with a
    result whose text has ``result_bytes`` bytes, streamed in chunks (the server never holds it
    whole); ``search`` answers ``tools`` hits for every query."""

    def __init__(self, *, result_bytes: int = 10, tools: int = 0, gzip_layers: int = 0) -> None:
        self.result_bytes = result_bytes
        self.tools = tools
        self.gzip_layers = gzip_layers
        self._answers: dict[int, bytes] = {}
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                try:
                    if self.path.endswith("/execute"):
                        owner._execute()(self)
                    elif self.path.endswith("/search"):
                        owner._send(self, owner._search(len(body["queries"])))
                    else:
                        owner._send(self, {"error": {"code": "NOPE", "message": "no"}}, 404)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, body: Any, status: int = 200) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def _execute(self) -> Any:
        if self.gzip_layers:
            return self._gzipped()

        def answer(handler: BaseHTTPRequestHandler) -> None:
            head, tail = b'{"results": [{"data": "', b'"}]}'
            chunk = b"x" * (1 << 20)
            handler.send_response(200)
            handler.send_header("content-length", str(len(head) + self.result_bytes + len(tail)))
            handler.end_headers()
            handler.wfile.write(head)
            left = self.result_bytes
            while left > 0:
                handler.wfile.write(chunk[: min(left, len(chunk))])
                left -= len(chunk)
            handler.wfile.write(tail)

        return answer

    def _gzipped(self) -> Any:
        """The result in gzip (``gzip_layers`` times over), made once."""
        if -1 not in self._answers:
            packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
            parts = [packer.compress(b'{"results": [{"data": "')]
            parts += [packer.compress(b"x" * (1 << 20)) for _ in range(self.result_bytes >> 20)]
            data = b"".join([*parts, packer.compress(b'"}]}'), packer.flush()])
            for _ in range(self.gzip_layers - 1):
                again = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
                data = again.compress(data) + again.flush()
            self._answers[-1] = data
        data = self._answers[-1]

        def answer(handler: BaseHTTPRequestHandler) -> None:
            handler.send_response(200)
            handler.send_header("content-length", str(len(data)))
            handler.send_header("content-encoding", ", ".join(["gzip"] * self.gzip_layers))
            handler.end_headers()
            handler.wfile.write(data)

        return answer

    def _search(self, queries: int) -> bytes:
        """The search answer, made once: the host's time is measured, not this server's."""
        made = self._answers.get(queries)
        if made is None:
            slugs = [f"APP_FILE_REPORT_{index:06}" for index in range(self.tools)]
            schemas = {
                slug: {"connector": "app", "description": f"File report number {index}"}
                for index, slug in enumerate(slugs)
            }
            answer = {"results": [{"tools": slugs} for _ in range(queries)], "schemas": schemas}
            made = self._answers[queries] = json.dumps(answer).encode()
        return made

    def __enter__(self) -> _Gateway:
        if self.tools:
            self._search(1)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


_MEASURE_GATEWAY = textwrap.dedent(
    """
    import json, resource, sys, time
    from pathlib import Path

    import anyio

    from hermes_core import Config, Environment, Host

    root, url = Path(sys.argv[1]), sys.argv[2]
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


    async def main():
        env = Environment(
            home=root / "home",
            cwd=root,
            variables={
                "HERMES_LOG_DIR": str(root / "logs"),
                "HERMES_CACHE_DIR": str(root),
                "HERMES_CONNECTORS_TOKEN": "t0ken-for-the-test",
            },
        )
        data = {"approvals": {"policy": "off"}, "tools": {"connectors": {"url": url}}}
        async with Host(Config.model_validate(data), env) as host:
            session = host.new_session()
            call = {"name": "connectors__app__SEND", "arguments": {}}
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            started = time.perf_counter()
            result = await host.dispatch("tool_call", call, session)
            elapsed = time.perf_counter() - started
            growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
        print(json.dumps({"code": result.error_code, "message": result.error_message,
                          "elapsed": elapsed, "growth_kb": growth}))


    anyio.run(main)
    """
)


@pytest.mark.subprocess
def test_a_300_mb_gateway_answer_is_refused_at_the_cap_with_little_memory(
    tmp_path: Path,
) -> None:
    (tmp_path / "home").mkdir()
    script = tmp_path / "measure.py"
    script.write_text(_MEASURE_GATEWAY, encoding="utf-8")
    with _Gateway(result_bytes=300 << 20) as gateway:
        done = subprocess.run(
            [sys.executable, str(script), str(tmp_path), gateway.url],
            capture_output=True,
            text=True,
            timeout=100,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    measured = json.loads(done.stdout.splitlines()[-1])

    assert measured["growth_kb"] < 200_000, measured
    assert measured["code"] == "PROVIDER_ERROR", measured
    message = measured["message"]
    assert gateway.url in message
    assert "v1/connectors/execute" in message
    assert "more than 16 MiB" in message


@pytest.mark.subprocess
@pytest.mark.parametrize("layers", [1, 2], ids=["gzip", "gzip-in-gzip"])
def test_a_gzip_bomb_of_a_gateway_is_refused_with_little_memory(
    tmp_path: Path, layers: int
) -> None:
    # 300 MiB in about 300 KB of gzip (in 1 KB of gzip in gzip): httpx would expand each
    # chunk of the network whole, and both layers in one step.
    (tmp_path / "home").mkdir()
    script = tmp_path / "measure.py"
    script.write_text(_MEASURE_GATEWAY, encoding="utf-8")
    with _Gateway(result_bytes=300 << 20, gzip_layers=layers) as gateway:
        done = subprocess.run(
            [sys.executable, str(script), str(tmp_path), gateway.url],
            capture_output=True,
            text=True,
            timeout=100,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    measured = json.loads(done.stdout.splitlines()[-1])

    assert measured["growth_kb"] < 40_000, measured
    assert measured["code"] == "PROVIDER_ERROR", measured
    message = measured["message"]
    assert gateway.url in message
    if layers == 1:
        assert "more than 16 MiB" in message
    else:
        assert "content encoding is 'gzip, gzip'" in message


async def test_a_long_gateway_result_is_cut_like_an_mcp_result(tmp_path: Path) -> None:
    data = {"approvals": {"policy": "off"}, "tools": {"connectors": {}}}
    with _Gateway(result_bytes=2_000_000) as gateway:
        data["tools"]["connectors"]["url"] = gateway.url
        env = _environment(tmp_path, HERMES_CONNECTORS_TOKEN="t0ken-for-the-test")
        async with Host(Config.model_validate(data), env) as host:
            call = {"name": "connectors__app__SEND", "arguments": {}}
            result = await host.dispatch("tool_call", call, host.new_session())

    assert not result.is_error, result.error_message
    text = result.text_content
    assert len(text) < 100_500
    assert text.startswith('{"results":') or text.startswith("x")
    assert "1,900,000 of its 2,000,000 characters were cut" in text
    assert "tools.connectors.max_result_chars" in text


async def test_a_gateway_listing_a_huge_number_of_tools_is_ranked_within_the_budget(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = {"approvals": {"policy": "off"}, "tools": {"connectors": {}}}
    # 20,000 tools, 40 times the hits ranked (MAX_HITS): the cap, not the size, is the rule
    # (ranking 100,000 uncapped stayed inside the budget here; 400,000 took 40 s, see
    # docs/connectors.md), and the one tool holding the query's number is past the cap.
    with _Gateway(tools=20_000) as gateway:
        data["tools"]["connectors"]["url"] = gateway.url
        env = _environment(tmp_path, HERMES_CONNECTORS_TOKEN="t0ken-for-the-test")
        async with Host(Config.model_validate(data), env) as host:
            session = host.new_session()
            started = time.process_time()
            with caplog.at_level(logging.WARNING):
                result = await host.dispatch(
                    "tool_search", {"queries": ["file report 19999"]}, session
                )
            elapsed = time.process_time() - started

    assert not result.is_error, result.error_message
    assert elapsed < 10.0, f"the search took {elapsed:.1f} s"
    matches = result.structured["results"][0]["matches"]
    assert matches
    assert all(name.startswith("connectors__app__FILE_REPORT_") for name in matches)
    assert all(int(name.rpartition("_")[2]) < MAX_HITS for name in matches), matches
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert any("20,000" in message and "tools" in message for message in warned), warned
