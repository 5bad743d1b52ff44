"""``hermes sessions delete`` and ``prune`` tell the enabled plugins what they deleted
(``hermes_transcripts_deleted``): the real ``session_search`` plugin drops those sessions'
rows from its real index (SQLite FTS5) before the command returns, so a deleted conversation's
text is gone from the index file's bytes at once; another plugin's failing observer stops
nothing. Real transcripts, ``hermes`` run in this process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_core.agent._transcripts import Transcript
from hermes_core.agent._wire import Message
from hermes_core.testing._cli_in_process import InProcessCli
from hermes_core.testing._files import write_dir_plugin
from tests.agent.test_cli_sessions import DAY, write
from tests.memory.bundled import bundled

pytestmark = pytest.mark.subprocess

INDEX: Any = __import__(f"{bundled('session_search').__name__}.index", fromlist=["SessionIndex"])
SECRET = b"hunter2secret"


@pytest.fixture
def hermes_cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


def indexed(cli: InProcessCli) -> Any:
    """The index of ``cli``'s home, brought up to date and left open (as a chat's search
    leaves it)."""
    index = INDEX.SessionIndex(cli.home / "session_search.db", cli.home / "sessions")
    index.update()
    return index


def index_bytes(cli: InProcessCli) -> bytes:
    """Every byte of the index's files (the database and SQLite's write-ahead log)."""
    files = [cli.home / "session_search.db", cli.home / "session_search.db-wal"]
    return b"".join(path.read_bytes() for path in files if path.exists())


def test_delete_drops_the_index_rows_before_it_returns(hermes_cli: InProcessCli) -> None:
    write(hermes_cli, "aaa111", "the pasted password hunter2secret zanzibar", "noted")
    write(hermes_cli, "ddd444", "subagent saw hunter2secret", parent="aaa111")
    write(hermes_cli, "bbb222", "zanzibar stays")
    indexed(hermes_cli).close()
    assert SECRET in index_bytes(hermes_cli)
    hermes_cli.run("sessions", "delete", "aaa111", "--yes")
    assert SECRET not in index_bytes(hermes_cli)
    index = INDEX.SessionIndex(hermes_cli.home / "session_search.db", hermes_cli.home / "sessions")
    try:  # not updated first: what the file holds now
        assert [hit.session for hit in index.search("zanzibar", 10)] == ["bbb222"]
    finally:
        index.close()


def test_prune_drops_the_index_rows_before_it_returns(hermes_cli: InProcessCli) -> None:
    write(hermes_cli, "aaa111", "old hunter2secret", age=40 * DAY)
    write(hermes_cli, "bbb222", "recent")
    indexed(hermes_cli).close()
    hermes_cli.run("sessions", "prune", "--older-than", "30d", "--yes")
    assert SECRET not in index_bytes(hermes_cli)


def test_the_rows_leave_the_file_while_another_hermes_holds_the_index_open(
    hermes_cli: InProcessCli,
) -> None:
    """A chat that searched keeps its connection open: the pages written by the deletion wait
    in the write-ahead log, and the database file kept the old ones until a checkpoint."""
    write(hermes_cli, "aaa111", "the pasted password hunter2secret zanzibar")
    write(hermes_cli, "bbb222", "zanzibar stays")
    chat = indexed(hermes_cli)
    try:
        assert sorted(hit.session for hit in chat.search("zanzibar", 10)) == ["aaa111", "bbb222"]
        hermes_cli.run("sessions", "delete", "aaa111", "--yes")
        assert SECRET not in index_bytes(hermes_cli)
        assert [hit.session for hit in chat.search("zanzibar", 10)] == ["bbb222"]
    finally:
        chat.close()


OBSERVER = """
import json
import os
from pathlib import Path

from hermes_core.plugin import hookimpl


@hookimpl
def hermes_transcripts_deleted(env, session_ids):
    told = Path(os.environ["TOLD"])
    present = [(env.data_home / "sessions" / f"{one}.jsonl").exists() for one in session_ids]
    told.write_text(json.dumps({"ids": sorted(session_ids), "present": present}))
"""

FAILING = """
from hermes_core.plugin import hookimpl


@hookimpl
def hermes_transcripts_deleted(session_ids):
    raise RuntimeError("the backup disk is full")
"""


def test_every_enabled_plugin_is_told_and_a_failing_one_stops_nothing(
    hermes_cli: InProcessCli, tmp_path: Path
) -> None:
    write_dir_plugin(hermes_cli.home / "plugins", "observer", OBSERVER)
    failing = write_dir_plugin(hermes_cli.home / "plugins", "failing", FAILING) / "__init__.py"
    write_dir_plugin(hermes_cli.home / "plugins", "idle", OBSERVER)  # not enabled: not told
    hermes_cli.config.write_text("plugins:\n  enabled: [observer, failing]\n", encoding="utf-8")
    write(hermes_cli, "aaa111", "the pasted password hunter2secret")
    write(hermes_cli, "ddd444", "its subagent", parent="aaa111")
    write(hermes_cli, "bbb222", "kept")
    indexed(hermes_cli).close()
    told = tmp_path / "told.json"
    done = hermes_cli.run(
        "sessions", "delete", "aaa111", "--yes", env=hermes_cli.variables(TOLD=str(told))
    )
    assert "deleted 1 conversation and 1 subagent conversation" in done.stdout
    assert json.loads(told.read_text()) == {"ids": ["aaa111", "ddd444"], "present": [False, False]}
    assert (
        "hermes: warning: plugin 'failing': observer hook failed: RuntimeError: "
        f"the backup disk is full (at {failing}, line 7); fix or disable it (hermes plugins "
        "disable failing)"
    ) in done.stderr.splitlines()
    assert SECRET not in index_bytes(hermes_cli)


def bytes_read() -> int:
    """What this process has read so far (``rchar``: every read, from the page cache too)."""
    io = Path("/proc/self/io").read_text(encoding="utf-8")
    return int(next(line for line in io.splitlines() if line.startswith("rchar:")).split()[1])


def test_continue_reads_only_the_ends_of_a_2_gb_transcript_of_another_directory(
    hermes_cli: InProcessCli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--continue`` looks for this directory's latest conversation through the others'
    headers; a large one of another directory, appended to last, was read whole (from its end
    back to its only header, at its start)."""
    from hermes_core._cli.resuming import resumed
    from hermes_core.agent._transcripts import TranscriptStore

    here = write(hermes_cli, "aaa111", "this directory's", "ok", age=DAY)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    large = write(hermes_cli, "bbb222", "another directory's", cwd=elsewhere)
    with large.open("r+b") as file:  # sparse: 2 GB of a damaged line, no disk spent
        file.seek(2 * 1024**3)
        file.write(b"\n")
    Transcript(large).add(Message("user", "the end"))
    monkeypatch.chdir(hermes_cli.work)
    before = bytes_read()
    found = resumed(TranscriptStore(here.parent), last=True, session=None, model="fake-1")
    assert bytes_read() - before < 64 * 1024**2
    assert found is not None
    assert found.session_id == "aaa111"


def test_a_configuration_that_cannot_be_read_still_deletes_and_says_who_was_not_told(
    hermes_cli: InProcessCli,
) -> None:
    """The plugins are loaded from the configuration after the files are gone: one that does
    not parse made the delete an error (exit 2) though it had deleted."""
    path = write(hermes_cli, "aaa111", "the pasted password hunter2secret")
    hermes_cli.config.write_text("model: [\n", encoding="utf-8")
    done = hermes_cli.run("sessions", "delete", "aaa111", "--yes")
    assert not path.exists()
    assert "deleted 1 conversation" in done.stdout
    [warned] = [line for line in done.stderr.splitlines() if "was told" in line]
    assert warned.startswith("hermes: warning: no plugin was told of the deletion: ")
    assert "config.yaml" in warned
    assert "session_search" in warned


def test_resume_s_listings_read_only_the_ends_of_a_2_gb_transcript(
    hermes_cli: InProcessCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``/resume``'s listing and ``--resume``'s answer to an unknown id show each conversation
    listed with its messages counted, which read a 2 GB one whole."""
    from hermes_core._cli.resuming import ResumeCommand, ResumeError, resumed
    from hermes_core.agent._transcripts import TranscriptStore

    write(hermes_cli, "aaa111", "a small one", "ok", age=DAY)
    large = write(hermes_cli, "bbb222", "the start of a long one")
    with large.open("r+b") as file:  # sparse: 2 GB of a damaged line, no disk spent
        file.seek(2 * 1024**3)
        file.write(b"\n")
    Transcript(large).add(Message("user", "the end"))
    store = TranscriptStore(large.parent)
    monkeypatch.chdir(hermes_cli.work)
    before = bytes_read()
    listing = ResumeCommand(store, "fake-1").listing("zzz999")
    with pytest.raises(ResumeError) as unknown:
        resumed(store, last=False, session="zzz", model="fake-1")
    assert bytes_read() - before < 64 * 1024**2
    for shown in ("\n".join(listing), str(unknown.value)):
        [line] = [line for line in shown.splitlines() if "bbb222" in line]
        assert "the start of a long one" in line
        assert "2.0 GB, not counted" in line
        [small] = [line for line in shown.splitlines() if "aaa111" in line]
        assert "2 messages" in small
