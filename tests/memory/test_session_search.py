"""``session_search`` over real transcripts and a real SQLite FTS5 database: the right session
first, incremental indexing, the current session left out, and the index safe with two
processes at once and a process killed mid-write."""

from __future__ import annotations

import importlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from hermes_core import Session
from hermes_core.agent import Message, TranscriptStore
from tests.memory.bundled import bundled
from tests.memory.session_corpus import TARGETS, write_corpus

REPO = Path(__file__).resolve().parents[2]
PLUGIN = bundled("session_search")
INDEX = importlib.import_module(f"{PLUGIN.__name__}.index")  # the plugin imports it lazily


def index_of(home: Path) -> Any:
    return INDEX.SessionIndex(home / "session_search.db", home / "sessions")


def files_indexed(home: Path) -> int:
    try:
        with sqlite3.connect(home / "session_search.db", timeout=15) as connection:
            (count,) = connection.execute("SELECT count(*) FROM files").fetchone()
    except sqlite3.OperationalError:  # not made yet
        return 0
    return int(count)


def indexed_rows(home: Path) -> int:
    with sqlite3.connect(home / "session_search.db") as connection:
        (count,) = connection.execute("SELECT count(*) FROM messages").fetchone()
    return int(count)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    home = tmp_path_factory.mktemp("home")
    return home, write_corpus(home / "sessions", 1000)


@pytest.mark.parametrize(("name", "question"), [(t[0], t[2]) for t in TARGETS])
def test_a_hand_written_question_finds_its_session_first_among_1000(
    corpus: tuple[Path, dict[str, str]], name: str, question: str
) -> None:
    home, ids = corpus
    index = index_of(home)
    try:
        index.update()
        hits = index.search(question, 5)
    finally:
        index.close()
    assert hits, f"nothing found for {question!r}"
    assert hits[0].session == ids[name], [hit.session for hit in hits]
    assert hits[0].started is not None
    assert "[" in hits[0].snippet


def conversation(home: Path, session: str, *texts: str) -> None:
    transcript = TranscriptStore(home / "sessions").open(session)
    transcript.start(session, model="fake-1")
    for text in texts:
        transcript.add(Message("user", text))


def test_a_session_of_one_message_is_said_to_have_one_message() -> None:
    hits = [
        INDEX.SessionHit("s1", None, 1, "the [parser]", -2.0),
        INDEX.SessionHit("s2", None, 3, "a [parser]", -1.0),
    ]

    answer = PLUGIN.render(hits, "parser")

    assert "1. session s1 (" in answer
    assert ", 1 message)" in answer
    assert ", 3 messages)" in answer


def test_indexing_is_incremental_and_reads_only_what_was_appended(tmp_path: Path) -> None:
    conversation(tmp_path, "a", "the parser crashes on empty input")
    conversation(tmp_path, "b", "deploy the website")
    index = index_of(tmp_path)
    try:
        assert index.update() == 2
        assert index.update() == 0  # nothing new: no file read again
        TranscriptStore(tmp_path / "sessions").open("b").add(
            Message("assistant", "the deploy needed a new parser version")
        )
        with (tmp_path / "sessions" / "a.jsonl").open("a", encoding="utf-8") as half:
            half.write('{"type": "message", "role": "user", "content": "half a li')  # being written
        assert index.update() == 1
        assert [hit.session for hit in index.search("parser", 5)] == ["a", "b"]
    finally:
        index.close()
    assert indexed_rows(tmp_path) == 3


def test_the_tool_leaves_out_the_session_asking_and_shows_dates_and_snippets(
    tmp_path: Path,
) -> None:
    import anyio

    from hermes_core import Config, Environment

    env = Environment(home=tmp_path / "home", cwd=tmp_path / "work", variables={})
    conversation(env.home, "earlier", "We picked Argon2id for the password hashes.")
    current = Session(cwd=tmp_path)
    conversation(env.home, current.id, "Which password hashing did we choose? Argon2id?")
    (tool,) = PLUGIN.hermes_tools(Config(), env)
    result = anyio.run(tool.handler, current, "argon2id password hashing")
    assert [found["session"] for found in result.structured["sessions"]] == ["earlier"]
    text = result.text_content
    assert text.startswith("1. session earlier (20")  # its date
    assert "[Argon2id]" in text
    assert current.id not in text


def test_odd_or_damaged_transcript_lines_never_stop_the_search(tmp_path: Path) -> None:
    import anyio

    from hermes_core import Config, Environment

    env = Environment(home=tmp_path / "home", cwd=tmp_path / "work", variables={})
    sessions = env.home / "sessions"
    conversation(env.home, "good", "The otters came back to the river.")
    # Half a character, as a model may write it: the transcript keeps its JSON escape.
    conversation(env.home, "odd", "otters \ud800 at the weir")
    lines = [
        {"type": "session", "model": {"not": "text"}, "parent": 7, "time": 10**400},
        {"type": "message", "role": ["user"], "content": "otters counted", "time": 10**400},
        {"type": "message", "role": "user", "content": {"otters": 1}, "time": "noon"},
    ]
    damaged = "\n".join(json.dumps(line) for line in lines) + "\n"
    (sessions / "damaged.jsonl").write_text(damaged, encoding="utf-8")
    (sessions / os.fsdecode(b"latin\xe9.jsonl")).write_bytes((sessions / "good.jsonl").read_bytes())
    (tool,) = PLUGIN.hermes_tools(Config(), env)

    result = anyio.run(tool.handler, Session(cwd=tmp_path), "otters")

    assert not result.is_error, result.text_content
    found = {hit["session"]: hit["snippet"] for hit in result.structured["sessions"]}
    assert set(found) == {"good", "odd", "damaged"}
    assert "\ufffd" in found["odd"]
    assert "[otters] counted" in found["damaged"]


def test_a_line_nested_too_deep_to_read_is_left_out_and_the_search_goes_on(
    tmp_path: Path,
) -> None:
    import anyio

    from hermes_core import Config, Environment

    # JSON nested past Python's recursion raises RecursionError, not ValueError: the line
    # stopped this search and, never read past, every later one.
    env = Environment(home=tmp_path / "home", cwd=tmp_path / "work", variables={})
    conversation(env.home, "good", "The otters came back to the river.")
    deep = "[" * 100_000 + "]" * 100_000
    message = {"type": "message", "role": "user", "content": "otters after it", "time": 1.0}
    text = f'{deep}\n{{"otters": {deep}}}\n{json.dumps(message)}\n'
    (env.home / "sessions" / "deep.jsonl").write_text(text, encoding="utf-8")
    (tool,) = PLUGIN.hermes_tools(Config(), env)

    first = anyio.run(tool.handler, Session(cwd=tmp_path), "otters")
    again = anyio.run(tool.handler, Session(cwd=tmp_path), "otters")

    for result in (first, again):
        assert not result.is_error, result.text_content
        assert {hit["session"] for hit in result.structured["sessions"]} == {"good", "deep"}


def test_an_index_that_is_not_a_database_is_named_with_the_fix_and_made_again_once_deleted(
    tmp_path: Path,
) -> None:
    import anyio

    from hermes_core import Config, Environment

    env = Environment(home=tmp_path / "home", cwd=tmp_path / "work", variables={})
    conversation(env.home, "earlier", "We picked Argon2id for the password hashes.")
    database = env.home / "session_search.db"
    database.write_bytes(b"a disk error left this here " * 200)
    (tool,) = PLUGIN.hermes_tools(Config(), env)

    refused = anyio.run(tool.handler, Session(cwd=tmp_path), "argon2id")
    database.unlink()
    answered = anyio.run(tool.handler, Session(cwd=tmp_path), "argon2id")

    assert refused.error_code == "TOOL_ERROR"
    assert str(database) in refused.text_content
    assert "file is not a database" in refused.text_content
    assert "delete it, and the next search makes it again" in refused.text_content
    assert [found["session"] for found in answered.structured["sessions"]] == ["earlier"]


WRITER = """
import importlib, importlib.util, sys
from pathlib import Path
spec = importlib.util.spec_from_file_location(
    "session_search_plugin", sys.argv[1], submodule_search_locations=[str(Path(sys.argv[1]).parent)]
)
module = importlib.util.module_from_spec(spec)
sys.modules["session_search_plugin"] = module
spec.loader.exec_module(module)
home = Path(sys.argv[2])
index_module = importlib.import_module("session_search_plugin.index")
index = index_module.SessionIndex(home / "session_search.db", home / "sessions")
print("ready", flush=True)
for _ in range(int(sys.argv[3])):
    index.update()
print("done", flush=True)
"""


def writer(tmp_path: Path, home: Path, rounds: int) -> subprocess.Popen[str]:
    script = tmp_path / "writer.py"
    script.write_text(WRITER, encoding="utf-8")
    init = REPO / "plugins_builtin" / "session_search" / "__init__.py"
    return subprocess.Popen(
        [sys.executable, str(script), str(init), str(home), str(rounds)],
        stdout=subprocess.PIPE,
        text=True,
    )


def test_opening_the_index_while_another_process_holds_the_new_database_waits_for_it(
    tmp_path: Path,
) -> None:
    """A process opening the index while another holds the new database waits for it (its
    busy timeout) and then indexes, in WAL mode, instead of failing."""
    import threading

    home = tmp_path / "home"
    write_corpus(home / "sessions", 40, seed=1)
    database = home / "session_search.db"
    holder = sqlite3.connect(database, isolation_level=None, check_same_thread=False)
    holder.execute("CREATE TABLE held (x)")
    holder.execute("BEGIN EXCLUSIVE")  # what the other process's first statements hold
    releasing = threading.Timer(0.5, holder.execute, ("COMMIT",))
    releasing.start()
    index = index_of(home)
    try:
        assert index.update() > 0
        assert index.connection().execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        releasing.join()
        index.close()
        holder.close()


@pytest.mark.slow
@pytest.mark.subprocess
def test_two_processes_indexing_at_once_lose_nothing_and_index_nothing_twice(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    write_corpus(home / "sessions", 400, seed=3)
    processes = [writer(tmp_path, home, 30) for _ in range(2)]
    try:
        store = TranscriptStore(home / "sessions")
        for number in range(100):  # a third writer: the conversations going on meanwhile
            store.open(f"s{number % 400:05d}").add(Message("user", f"later message {number}"))
        for process in processes:
            assert process.stdout is not None
            assert process.stdout.read().split() == ["ready", "done"]
            assert process.wait() == 0
    finally:  # a failed writer must not outlive its test (and warn in another one)
        for process in processes:
            process.kill()
            process.wait()
            if process.stdout is not None:
                process.stdout.close()
    index = index_of(home)
    try:
        index.update()
    finally:
        index.close()
    assert indexed_rows(home) == 400 * 2 + 100


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_process_killed_while_indexing_leaves_an_index_the_next_update_completes(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    write_corpus(home / "sessions", 3000, seed=5)
    process = writer(tmp_path, home, 1)
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready"
    while files_indexed(home) < 100:  # part of the way through its 3,000 transactions
        time.sleep(0.01)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    process.stdout.close()
    assert files_indexed(home) < 3000
    index = index_of(home)
    try:
        index.update()
        assert index.search("pg_upgrade", 1)
    finally:
        index.close()
    assert indexed_rows(home) == 3000 * 2


@pytest.mark.anyio
async def test_through_the_loop_a_later_conversation_finds_an_earlier_one(
    bundled_env: Any,
) -> None:
    from hermes_core import Config
    from hermes_core.agent import Agent, ModelSettings, ToolFinished
    from hermes_core.testing import FakeModelProvider, fake_turn, make_host

    model = FakeModelProvider.scripted(
        fake_turn("Noted: the staging database is on port 6543."),
        fake_turn("", ("session_search", {"query": "staging database port"})),
        fake_turn("It is 6543."),
    )
    host = make_host(Config(), bundled_env)
    store = TranscriptStore(bundled_env.home / "sessions")
    agent = Agent(host, model, ModelSettings("fake", "fake-1"), transcripts=store)
    try:
        async with host.session() as first:
            async for _ in agent.conversation(first).send("The staging database uses port 6543."):
                pass
        async with host.session() as second:
            events = [e async for e in agent.conversation(second).send("Which port was it?")]
    finally:
        host.close()
    (found,) = [event for event in events if isinstance(event, ToolFinished)]
    assert found.error_code is None, found.text
    assert found.text.startswith(f"1. session {first.id} (")
    assert second.id not in found.text
    assert "[staging] [database] uses [port] 6543" in found.text


def test_session_search_and_memory_are_never_deferred_by_default(make_memory_host: Any) -> None:
    from hermes_core.agent import Agent, ModelSettings
    from hermes_core.agent._memory import selected_memory
    from hermes_core.testing import FakeModelProvider

    host = make_memory_host({"tools": {"tool_search": {"enabled": "on"}}})
    Agent(
        host, FakeModelProvider.scripted(), ModelSettings("fake", "m"), memory=selected_memory(host)
    )
    visible = {tool.name for tool in host.assemble(128_000, host.new_session()).tools}
    assert {"session_search", "memory"} <= visible


@pytest.mark.anyio
async def test_a_summary_of_the_top_sessions_is_asked_of_the_sessions_model_bounded_in_tokens(
    bundled_env: Any,
) -> None:
    from hermes_core import Config
    from hermes_core.agent import Agent, ModelSettings, ToolFinished
    from hermes_core.testing import FakeModelProvider, fake_turn, make_host

    asked = {"query": "staging database port", "summarize": True}
    model = FakeModelProvider.scripted(
        fake_turn("Noted."),
        fake_turn("", ("session_search", asked)),
        fake_turn("The staging database listens on port 6543."),  # the summary
        fake_turn("It is 6543."),
    )
    config = Config.model_validate(
        {"plugins": {"entries": {"session_search": {"summary_tokens": 120}}}}
    )
    host = make_host(config, bundled_env)
    store = TranscriptStore(bundled_env.home / "sessions")
    agent = Agent(host, model, ModelSettings("fake", "fake-1"), transcripts=store)
    try:
        async with host.session() as first:
            async for _ in agent.conversation(first).send("The staging database uses port 6543."):
                pass
        async with host.session() as second:
            events = [e async for e in agent.conversation(second).send("Which port was it?")]
    finally:
        host.close()
    (found,) = [event for event in events if isinstance(event, ToolFinished)]
    assert found.text.startswith("Summary: The staging database listens on port 6543.\n\n1. ")
    summary_request = model.requests[2]
    assert summary_request.tools == ()
    assert summary_request.max_tokens == 120
    assert "The staging database uses port 6543." in summary_request.messages[0].content
    assert second.id not in summary_request.messages[0].content


def test_outside_a_conversation_there_is_no_summary_but_the_search_answers(
    tmp_path: Path,
) -> None:
    import anyio

    from hermes_core import Config, Environment

    env = Environment(home=tmp_path / "home", cwd=tmp_path / "work", variables={})
    conversation(env.home, "earlier", "We picked Argon2id for the password hashes.")
    (tool,) = PLUGIN.hermes_tools(Config(), env)
    result = anyio.run(lambda: tool.handler(Session(cwd=tmp_path), "argon2id", None, True))
    assert result.structured["summary"] is None
    assert result.text_content.startswith("1. session earlier")


@pytest.mark.parametrize("earlier", [False, True], ids=["new", "left-by-an-earlier-version"])
def test_every_file_of_the_index_is_private_while_it_is_open(tmp_path: Path, earlier: bool) -> None:
    """The index holds the transcripts' text (0600 files): its database and SQLite's -wal and
    -shm files beside it are 0600 too, whatever the umask, also when an earlier version left
    them readable by others."""
    conversation(tmp_path, "a", "the staging database password rotation plan")
    database = tmp_path / "session_search.db"
    if earlier:
        made = sqlite3.connect(database)
        made.execute("PRAGMA journal_mode = WAL")
        made.execute("CREATE TABLE kept (x)")
        made.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{database}{suffix}").touch()
            os.chmod(f"{database}{suffix}", 0o644)
    old = os.umask(0o022)
    index = index_of(tmp_path)
    try:
        index.update()
        assert index.search("rotation plan", 5)
        files = sorted(tmp_path.glob("session_search.db*"))
        modes = {path.name: oct(path.stat().st_mode & 0o777) for path in files}
    finally:
        index.close()
        os.umask(old)
    assert set(modes) >= {"session_search.db", "session_search.db-wal", "session_search.db-shm"}
    assert set(modes.values()) == {"0o600"}, modes


@pytest.mark.anyio
async def test_a_query_past_the_bridges_2000_characters_is_refused_before_any_search(
    make_memory_host: Any, bundled_env: Any
) -> None:
    # 100,000 words once held the index's lock for 9 s; a request never needs more than the
    # 2,000 characters tool_search takes.
    conversation(bundled_env.home, "earlier", "We picked Argon2id for the password hashes.")
    host = make_memory_host()
    session = host.new_session()
    refused = await host.dispatch("session_search", {"query": "argon2id " * 20_000}, session)
    assert refused.error_code == "INVALID_ARGUMENTS"
    assert refused.structured["path"] == "arguments.query"
    longest = "argon2id " + "x" * 1991
    assert len(longest) == 2000
    found = await host.dispatch("session_search", {"query": longest}, session)
    assert found.error_code is None, found.text_content
    assert [hit["session"] for hit in found.structured["sessions"]] == ["earlier"]


def _taken_up(path: Path, *records: dict[str, Any]) -> None:
    with path.open("a", encoding="utf-8") as transcript:
        transcript.writelines(json.dumps(record) + "\n" for record in records)


def test_a_conversation_taken_up_again_started_with_its_first_header_and_runs_with_its_last(
    tmp_path: Path,
) -> None:
    """A transcript holds a header per process that took the conversation up (``--resume``,
    ``session/load``). The search reports when it started (the first header's time) and the
    model it last ran with (the latest header's, as resuming reads it), whether the index read
    the headers in one update or one by one as the file grew."""
    import anyio

    from hermes_core import Config, Environment

    env = Environment(home=tmp_path / "home", cwd=tmp_path / "work", variables={})
    sessions = env.home / "sessions"
    sessions.mkdir(parents=True, mode=0o700)

    def header(name: str, model: str, moment: float) -> dict[str, Any]:
        return {"type": "session", "id": name, "model": model, "parent": None, "time": moment}

    def said(text: str, moment: float) -> dict[str, Any]:
        return {"type": "message", "role": "user", "content": text, "time": moment}

    first = (1_000_000.0, "old-model")
    later = (2_000_000.0, "new-model")
    _taken_up(sessions / "whole.jsonl", header("whole", first[1], first[0]), said("kiwi", 1))
    _taken_up(sessions / "whole.jsonl", header("whole", later[1], later[0]), said("kiwi", 2))
    _taken_up(sessions / "grown.jsonl", header("grown", first[1], first[0]), said("kiwi", 1))
    index = index_of(env.home)
    try:
        index.update()
        _taken_up(sessions / "grown.jsonl", header("grown", later[1], later[0]), said("kiwi", 2))
        index.update()
        hits = {hit.session: hit for hit in index.search("kiwi", 5)}
    finally:
        index.close()
    assert {name: (hit.started, hit.model, hit.messages) for name, hit in hits.items()} == {
        "whole": (first[0], later[1], 2),
        "grown": (first[0], later[1], 2),
    }
    (tool,) = PLUGIN.hermes_tools(Config(), env)
    result = anyio.run(tool.handler, Session(cwd=tmp_path), "kiwi")
    found = {
        hit["session"]: (hit["started"], hit["model"]) for hit in result.structured["sessions"]
    }
    assert found == {"whole": (first[0], later[1]), "grown": (first[0], later[1])}


def test_a_transcript_replaced_by_another_is_dated_by_the_new_one(tmp_path: Path) -> None:
    """A file replaced (a new inode: restored from a backup, copied over) is read again whole,
    its start and model with it: nothing of the file it replaced is kept."""
    sessions = tmp_path / "sessions"
    sessions.mkdir(mode=0o700)
    path = sessions / "moved.jsonl"

    def transcript(model: str, moment: float, text: str) -> str:
        header = {"type": "session", "id": "moved", "model": model, "time": moment}
        message = {"type": "message", "role": "user", "content": text, "time": moment}
        return json.dumps(header) + "\n" + json.dumps(message) + "\n"

    path.write_text(transcript("old-model", 1_000_000.0, "kiwi"), encoding="utf-8")
    index = index_of(tmp_path)
    try:
        index.update()
        replacement = sessions / "replacement"
        replacement.write_text(transcript("new-model", 3_000_000.0, "kiwi again"), "utf-8")
        replacement.replace(path)
        index.update()
        [hit] = index.search("kiwi", 5)
    finally:
        index.close()
    assert (hit.started, hit.messages, hit.snippet) == (3_000_000.0, 1, "[kiwi] again")
    assert hit.model == "new-model"


def test_a_hit_names_the_conversation_s_latest_title_also_one_given_after_indexing(
    tmp_path: Path,
) -> None:
    import anyio

    from hermes_core import Config, Environment

    env = Environment(home=tmp_path / "home", cwd=tmp_path / "work", variables={})
    conversation(env.home, "named", "the kiwi harvest")
    conversation(env.home, "plain", "more kiwi")
    store = TranscriptStore(env.home / "sessions")
    store.open("named").titled("Orchard")
    index = index_of(env.home)
    try:
        index.update()
        store.open("named").titled("Kiwi orchard")  # renamed after it was indexed
        index.update()
        hits = {hit.session: hit.title for hit in index.search("kiwi", 5)}
    finally:
        index.close()
    assert hits == {"named": "Kiwi orchard", "plain": None}
    (tool,) = PLUGIN.hermes_tools(Config(), env)
    result = anyio.run(tool.handler, Session(cwd=tmp_path), "kiwi")
    assert {hit["session"]: hit["title"] for hit in result.structured["sessions"]} == hits
    assert 'session named "Kiwi orchard" (' in result.text_content


def test_a_title_cleared_after_indexing_is_gone_from_the_hits(tmp_path: Path) -> None:
    """``hermes sessions rename --clear``: a title record of none, read by a later update; a
    later part without any title record leaves the title as it was."""
    home = tmp_path / "home"
    conversation(home, "named", "the kiwi harvest")
    conversation(home, "other", "more kiwi")
    store = TranscriptStore(home / "sessions")
    store.open("named").titled("Orchard")
    store.open("other").titled("Grove")
    index = index_of(home)
    try:
        index.update()
        store.open("named").titled(None)
        store.open("other").add(Message("user", "kiwi once more"))
        index.update()
        hits = {hit.session: hit.title for hit in index.search("kiwi", 5)}
    finally:
        index.close()
    assert hits == {"named": None, "other": "Grove"}
