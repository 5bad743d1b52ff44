"""The files toolset: read_file, write_file, patch and search_files, through the dispatcher."""

from __future__ import annotations

import os
import stat
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from builders import Harness, build_harness, make_env

from hermes_core._config import Config
from hermes_core._errors import HermesError
from hermes_core._paths import Environment
from hermes_core._tools import ToolResult

WRITE_OK = {"approvals": {"allow": ["write_file", "patch"]}}


@pytest.fixture
def harnesses(tmp_path: Path) -> Iterator[Callable[..., Harness]]:
    made: list[Harness] = []

    def make(config: dict[str, Any] | None = None) -> Harness:
        harness = build_harness(tmp_path, config=config or WRITE_OK)
        made.append(harness)
        return harness

    yield make
    for harness in made:
        harness.close()


@pytest.fixture
def files(harnesses: Callable[..., Harness]) -> Harness:
    return harnesses()


def _patch_refused(files: Harness, path: str, old: str, new: str = "NEW") -> str:
    result = files.call("patch", {"path": path, "old_text": old, "new_text": new})
    assert result.is_error
    assert result.error_code == "TOOL_ERROR"
    return result.text_content


def test_patch_with_missing_text_is_an_error_and_leaves_the_file(files: Harness) -> None:
    target = files.env.cwd / "a.py"
    target.write_bytes(b"x = 1\ny = 2\n")

    message = _patch_refused(files, "a.py", "z = 3")

    assert "not found" in message
    assert "a.py" in message
    assert target.read_bytes() == b"x = 1\ny = 2\n"


def test_patch_with_a_double_match_is_an_error_and_leaves_the_file(files: Harness) -> None:
    target = files.env.cwd / "a.py"
    target.write_bytes(b"x = 1\nx = 1\n")

    message = _patch_refused(files, "a.py", "x = 1")

    assert "appears 2 times" in message
    assert target.read_bytes() == b"x = 1\nx = 1\n"


def test_patch_of_a_binary_file_is_refused(files: Harness) -> None:
    target = files.env.cwd / "blob.bin"
    data = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR old"
    target.write_bytes(data)

    message = _patch_refused(files, "blob.bin", "old")

    assert "binary" in message
    assert target.read_bytes() == data


def test_patch_outside_the_working_directory_is_refused(files: Harness, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"secret = 1\n")

    by_dots = _patch_refused(files, "../outside.txt", "secret = 1")
    by_absolute = _patch_refused(files, str(outside), "secret = 1")

    assert "outside the working directory" in by_dots
    assert "outside the working directory" in by_absolute
    assert outside.read_bytes() == b"secret = 1\n"


def test_symlink_leading_outside_the_working_directory_is_refused(
    files: Harness, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    (files.env.cwd / "link.txt").symlink_to(outside)

    result = files.call("read_file", {"path": "link.txt"})

    assert result.is_error
    assert "outside the working directory" in result.text_content


def test_a_path_of_100000_characters_is_refused_without_being_echoed_whole(files: Harness) -> None:
    result = files.call("read_file", {"path": "a" * 100_000})

    assert result.is_error
    assert result.text_content.startswith("read_file: OSError: File name too long: ")
    assert result.text_content.endswith(" characters)")  # how long the cut path was
    assert len(result.text_content) < 500


def test_patch_replaces_the_single_match_keeping_everything_else(files: Harness) -> None:
    target = files.env.cwd / "a.py"
    target.write_bytes(b"a = 1\r\nb = 2\r\nc = 3\r\n")
    target.chmod(0o640)

    result = files.call("patch", {"path": "a.py", "old_text": "b = 2", "new_text": "b = 20"})

    assert not result.is_error, result.text_content
    assert result.structured["first_line"] == 2
    assert target.read_bytes() == b"a = 1\r\nb = 20\r\nc = 3\r\n"
    assert target.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in files.env.cwd.iterdir()) == ["a.py"]


def test_read_file_of_a_50_mb_file_returns_a_bounded_slice_without_loading_it(
    files: Harness,
) -> None:
    big = files.env.cwd / "big.log"
    line = b"0123456789" * 9 + b"abcdefghi\n"  # 100 bytes
    with big.open("wb") as handle:
        for _ in range(500):
            handle.write(line * 1000)
    assert big.stat().st_size == 50_000_000

    tracemalloc.start()
    try:
        result = files.call("read_file", {"path": "big.log", "limit": 100000})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert not result.is_error
    cap = 100_000
    body, _, note = result.text_content.rpartition("\n\n")
    assert len(body.encode()) <= cap
    assert "byte cap" in note
    assert "continue with offset=1001" in note
    assert result.structured["truncated"] is True
    assert peak < 10_000_000, f"peak {peak} bytes: the file was read into memory"


def test_read_file_with_one_huge_line_cuts_the_line(files: Harness) -> None:
    (files.env.cwd / "one.txt").write_bytes(b"x" * 3_000_000)

    result = files.call("read_file", {"path": "one.txt"})

    assert not result.is_error
    assert "[line cut at 16384 bytes]" in result.text_content
    assert len(result.text_content) < 20_000


def test_read_file_line_ranges(files: Harness) -> None:
    (files.env.cwd / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))

    middle = files.call("read_file", {"path": "n.txt", "offset": 3, "limit": 2})
    tail = files.call("read_file", {"path": "n.txt", "offset": 9})
    past = files.call("read_file", {"path": "n.txt", "offset": 50})

    assert middle.text_content == "line 3\nline 4\n\n[more lines follow; continue with offset=5]"
    assert tail.text_content == "line 9\nline 10\n"
    assert "has 10 lines" in past.text_content


def test_read_file_refuses_binary_and_missing_files(files: Harness) -> None:
    (files.env.cwd / "b.bin").write_bytes(b"\x00\x01\x02")

    binary = files.call("read_file", {"path": "b.bin"})
    missing = files.call("read_file", {"path": "nope.txt"})

    assert binary.is_error
    assert "binary" in binary.text_content
    assert missing.is_error
    assert "does not exist" in missing.text_content


def test_write_file_creates_directories_and_replaces_atomically(files: Harness) -> None:
    created = files.call("write_file", {"path": "src/pkg/mod.py", "content": "print('hé')\n"})
    replaced = files.call("write_file", {"path": "src/pkg/mod.py", "content": "pass\n"})

    assert created.structured["created"] is True
    assert replaced.structured["created"] is False
    assert (files.env.cwd / "src/pkg/mod.py").read_text() == "pass\n"
    assert [p.name for p in (files.env.cwd / "src/pkg").iterdir()] == ["mod.py"]


def test_write_file_is_destructive_so_a_non_interactive_session_is_asked_and_denied(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses({"approvals": {"policy": "annotations"}})

    result = harness.call("write_file", {"path": "new.txt", "content": "x"})

    assert result.error_code == "DENIED"
    assert not (harness.env.cwd / "new.txt").exists()


def test_search_files_by_glob_and_regex_is_bounded(files: Harness) -> None:
    root = files.env.cwd
    (root / "pkg").mkdir()
    (root / "pkg" / "a.py").write_text("import os\nTODO = 1\n")
    (root / "pkg" / "b.txt").write_text("TODO later\n")
    (root / ".git").mkdir()
    (root / ".git" / "c.py").write_text("TODO hidden\n")
    (root / "many.py").write_text("".join(f"TODO {i}\n" for i in range(100)))

    by_glob = files.call("search_files", {"glob": "*.py"})
    by_regex = files.call("search_files", {"pattern": r"^TODO\b", "glob": "pkg/*"})
    bounded = files.call("search_files", {"pattern": "TODO", "max_results": 5})
    bad = files.call("search_files", {"pattern": "("})

    assert [m["path"] for m in by_glob.structured["matches"]] == ["many.py", "pkg/a.py"]
    assert [m["text"] for m in by_regex.structured["matches"]] == [
        "pkg/a.py:2: TODO = 1",
        "pkg/b.txt:1: TODO later",
    ]
    assert len(bounded.structured["matches"]) == 5
    assert bounded.structured["truncated"]
    assert "stopped after 5 results" in bounded.text_content
    assert bad.is_error
    assert "not a valid regular expression" in bad.text_content


def test_allow_outside_lists_extra_roots(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "doc.txt").write_text("shared doc\n")
    (tmp_path / "private.txt").write_text("private\n")
    config = {"plugins": {"entries": {"files": {"allow_outside": [str(shared)]}}}}
    harness = build_harness(tmp_path, config=config)
    try:
        inside_root = harness.call("read_file", {"path": str(shared / "doc.txt")})
        elsewhere = harness.call("read_file", {"path": str(tmp_path / "private.txt")})
    finally:
        harness.close()

    assert inside_root.text_content == "shared doc\n"
    assert elsewhere.is_error


def test_bad_files_settings_name_the_key(tmp_path: Path) -> None:
    config = Config.model_validate({"plugins": {"entries": {"files": {"allow_outside": "yes"}}}})

    with pytest.raises((ValueError, HermesError), match=r"plugins\.entries\.files\.allow_outside"):
        build_harness(tmp_path, config=config, env=make_env(tmp_path))


def test_search_files_skips_links_leading_outside(files: Harness, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("password = hunter2\n")
    (files.env.cwd / "notes.txt").write_text("password policy\n")
    (files.env.cwd / "leak.txt").symlink_to(secret)

    result = files.call("search_files", {"pattern": "password"})

    assert [m["path"] for m in result.structured["matches"]] == ["notes.txt"]


def test_a_backtracking_search_pattern_stops_at_its_deadline_while_the_host_runs_on(
    tmp_path: Path,
) -> None:
    # The search spins a core until its deadline: half a second (the CPU the test costs) is
    # still ten times the other task's wait.
    config = {"plugins": {"entries": {"files": {"search_timeout": 0.5}}}}
    harness = build_harness(tmp_path, config=config)
    (harness.env.cwd / "input.txt").write_text("a" * 40 + "\n")
    finished: list[str] = []
    results: dict[str, ToolResult] = {}

    async def search(pattern: str) -> None:
        results[pattern] = await harness.dispatcher.dispatch(
            "search_files", {"pattern": pattern}, harness.session()
        )
        finished.append(pattern)

    async def other_task() -> None:
        await anyio.sleep(0.05)
        finished.append("other task")

    async def main() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(search, "(a|aa)+b")
            group.start_soon(other_task)
        await search("(a+)+b")

    try:
        anyio.run(main)
    finally:
        harness.close()

    # Python's re would hold the GIL for ~2**40 steps: the other task could not run at all.
    assert finished == ["other task", "(a|aa)+b", "(a+)+b"]
    stopped = results["(a|aa)+b"]
    assert stopped.error_code == "TOOL_ERROR"
    assert "took too long" in stopped.text_content
    assert results["(a+)+b"].text_content == "no matches"


def _threads_searching() -> list[str]:
    """Names of the threads whose stack is inside the files plugin's search scan."""
    frames = sys._current_frames()
    names = []
    for thread in threading.enumerate():
        frame = frames.get(thread.ident or -1)
        while frame is not None:
            if frame.f_code.co_name == "_search" and "files" in frame.f_code.co_filename:
                names.append(thread.name)
                break
            frame = frame.f_back
    return names


def test_a_search_cancelled_by_its_caller_stops_its_scan_thread(tmp_path: Path) -> None:
    # 4000 lines at ~30 ms each: two minutes of scanning, far past the second it is given.
    harness = build_harness(tmp_path)
    for index in range(20):
        (harness.env.cwd / f"f{index:02}.txt").write_text(("a" * 22 + "\n") * 200)

    async def main() -> None:
        with anyio.move_on_after(1.0):
            await harness.dispatcher.dispatch(
                "search_files", {"pattern": "(a|aa)+b"}, harness.session()
            )

    try:
        anyio.run(main)
        for _ in range(50):
            if not _threads_searching():
                break
            time.sleep(0.1)
        assert _threads_searching() == []
    finally:
        harness.close()


def test_search_files_skips_fifos_instead_of_blocking(files: Harness) -> None:
    os.mkfifo(files.env.cwd / "pipe")
    (files.env.cwd / "notes.txt").write_text("needle\n")

    result = files.call("search_files", {"pattern": "needle"})

    assert [m["path"] for m in result.structured["matches"]] == ["notes.txt"]


def test_write_file_creates_new_files_with_the_umask_mode(files: Harness) -> None:
    previous = os.umask(0o027)
    try:
        result = files.call("write_file", {"path": "new.txt", "content": "x"})
    finally:
        os.umask(previous)

    assert not result.is_error
    assert stat.S_IMODE((files.env.cwd / "new.txt").stat().st_mode) == 0o640


def test_write_file_keeps_the_mode_of_an_existing_file(files: Harness) -> None:
    target = files.env.cwd / "script.sh"
    target.write_text("old\n")
    target.chmod(0o751)

    files.call("write_file", {"path": "script.sh", "content": "new\n"})

    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    assert target.read_text() == "new\n"


def test_write_file_and_patch_refuse_a_read_only_file(files: Harness) -> None:
    target = files.env.cwd / "locked.txt"
    target.write_text("keep me\n")
    target.chmod(0o444)

    written = files.call("write_file", {"path": "locked.txt", "content": "gone"})
    patched = files.call("patch", {"path": "locked.txt", "old_text": "keep", "new_text": "lose"})

    assert written.error_code == "TOOL_ERROR"
    assert "not writable" in written.text_content
    assert patched.error_code == "TOOL_ERROR"
    assert "not writable" in patched.text_content
    assert target.read_text() == "keep me\n"


def test_patch_through_a_hard_link_edits_every_link(files: Harness) -> None:
    first = files.env.cwd / "first.txt"
    first.write_text("value = 1\n")
    second = files.env.cwd / "second.txt"
    os.link(first, second)

    result = files.call("patch", {"path": "first.txt", "old_text": "1", "new_text": "2"})

    assert not result.is_error
    assert second.read_text() == "value = 2\n"
    assert first.stat().st_ino == second.stat().st_ino


def test_tilde_means_the_home_of_the_environment_not_of_the_process(files: Harness) -> None:
    home = Path(files.env.variables["HOME"])
    home_file = home / "inside-home.txt"
    home_file.write_text("from the environment's home\n")
    config = {**WRITE_OK, "plugins": {"entries": {"files": {"allow_outside": True}}}}
    harness = build_harness(home.parent / "other", config=config, env=files.env)
    try:
        result = harness.call("read_file", {"path": "~/inside-home.txt"})
        other_user = harness.call("read_file", {"path": "~root/x"})
    finally:
        harness.close()

    assert result.text_content == "from the environment's home\n"
    assert other_user.error_code == "TOOL_ERROR"
    assert "'~user' paths are not supported" in other_user.text_content


def test_search_files_matches_whole_long_lines_not_their_first_16_kb(files: Harness) -> None:
    # A minified bundle: one line of 20,000 characters ending in a marker.
    (files.env.cwd / "bundle.js").write_text("a" * 20_000 + "!END\n")

    ends_in_a = files.call("search_files", {"pattern": "a$"})
    marker = files.call("search_files", {"pattern": "!END"})

    assert ends_in_a.structured["matches"] == []
    assert [m["line"] for m in marker.structured["matches"]] == [1]
    # The line shown is the part around the match, not its first 240 characters of a's.
    assert marker.structured["matches"][0]["text"].endswith("a!END")


def test_search_files_stopped_by_the_file_cap_says_so_not_a_result_count(files: Harness) -> None:
    tree = files.env.cwd / "tree"
    (tree / "a").mkdir(parents=True)
    (tree / "a" / "hit.txt").write_text("needle\n")
    crowd = tree / "b"
    crowd.mkdir()
    for number in range(20_001):
        (crowd / f"f{number}").touch()

    result = files.call("search_files", {"pattern": "needle", "path": "tree"})

    assert [m["path"] for m in result.structured["matches"]] == ["tree/a/hit.txt"]
    assert result.structured["truncated"]
    assert "stopped after 50 results" not in result.text_content
    assert "20000 files" in result.text_content


def test_write_file_and_patch_keep_the_owner_and_group_of_an_existing_file(
    files: Harness,
) -> None:
    target = files.env.cwd / "theirs.txt"
    target.write_text("value = 1\n")
    # Root may give the file away; another user keeps their own (the rename would too).
    owner = (65534, 65534) if os.geteuid() == 0 else (os.geteuid(), os.getegid())
    os.chown(target, *owner)

    written = files.call("write_file", {"path": "theirs.txt", "content": "value = 1\n"})
    patched = files.call("patch", {"path": "theirs.txt", "old_text": "1", "new_text": "2"})

    assert not written.is_error
    assert not patched.is_error
    assert (target.stat().st_uid, target.stat().st_gid) == owner
    assert target.read_text() == "value = 2\n"


def test_patch_of_a_crlf_file_takes_old_text_with_lf_and_keeps_crlf(files: Harness) -> None:
    target = files.env.cwd / "win.py"
    target.write_bytes(b"def f():\r\n    return 1\r\n\r\nx = f()\r\n")

    result = files.call(
        "patch",
        {
            "path": "win.py",
            "old_text": "def f():\n    return 1\n",
            "new_text": "def f():\n    return 2\n",
        },
    )

    assert not result.is_error, result.text_content
    assert target.read_bytes() == b"def f():\r\n    return 2\r\n\r\nx = f()\r\n"


def test_the_file_tools_neither_read_nor_write_hermes_credentials_in_the_project(
    tmp_path: Path,
) -> None:
    # hermes started in the home directory: ~/.hermes, with its keys, lies in the project.
    project = tmp_path / "me"
    hermes_home = project / ".hermes"
    hermes_home.mkdir(parents=True)
    env = Environment(
        home=hermes_home,
        cwd=project,
        variables={**make_env(tmp_path).variables, "HOME": str(project)},
    )
    env.dotenv_path.write_text("OPENAI_API_KEY=sk-dotenv\n")
    (env.data_home / "auth.json").write_text('{"connectors": {"token": "sk-auth"}}\n')
    (env.data_home / "mcp-auth").mkdir(parents=True, exist_ok=True)
    (env.data_home / "mcp-auth" / "github.json").write_text('{"access_token": "sk-mcp"}\n')
    env.serve_token_path.write_text("sk-serve\n")
    (project / "notes.txt").write_text("sk-notes\n")
    (project / "env-link").symlink_to(env.dotenv_path)
    credentials = [env.dotenv_path, env.data_home / "auth.json", env.serve_token_path]
    credentials.append(env.data_home / "mcp-auth" / "github.json")
    harness = build_harness(tmp_path, config=WRITE_OK, env=env)
    try:
        reads = [harness.call("read_file", {"path": str(path)}) for path in credentials]
        reads.append(harness.call("read_file", {"path": "~/.hermes/.env"}))
        reads.append(harness.call("read_file", {"path": "env-link"}))
        found = harness.call("search_files", {"pattern": "sk-"})
        listed = harness.call("search_files", {"glob": "*"})
        written = harness.call("write_file", {"path": ".hermes/.env", "content": "X=1\n"})
        patched = harness.call(
            "patch", {"path": ".hermes/.env", "old_text": "sk-dotenv", "new_text": "sk-evil"}
        )
    finally:
        harness.close()

    for result in [*reads, written, patched]:
        assert result.error_code == "TOOL_ERROR"
        assert "credentials" in result.text_content
        assert "sk-" not in result.text_content
    assert [m["path"] for m in found.structured["matches"]] == ["notes.txt"]
    assert all(".hermes" not in m["path"] for m in listed.structured["matches"])
    assert env.dotenv_path.read_text() == "OPENAI_API_KEY=sk-dotenv\n"


def test_the_credentials_refused_are_where_their_owners_keep_them(tmp_path: Path) -> None:
    from hermes_core._mcp.tokens import token_path
    from hermes_core.connectors._signin import auth_path

    env = make_env(tmp_path)

    assert auth_path(env) in env.credential_paths
    assert token_path(env, "github").parent in env.credential_paths


def test_read_file_and_patch_say_a_utf16_file_is_utf16_not_binary(files: Harness) -> None:
    # As Windows tools write it (PowerShell's Out-File, regedit): a BOM, then UTF-16LE.
    (files.env.cwd / "notes.txt").write_bytes("hello\r\nworld\r\n".encode("utf-16"))

    read = files.call("read_file", {"path": "notes.txt"})
    patched = files.call("patch", {"path": "notes.txt", "old_text": "hello", "new_text": "hi"})

    for result in (read, patched):
        assert result.error_code == "TOOL_ERROR"
        assert "binary" not in result.text_content
        assert "UTF-16" in result.text_content
        assert "iconv" in result.text_content


def test_read_file_says_a_file_is_empty_and_a_directory_is_one(files: Harness) -> None:
    (files.env.cwd / "empty.txt").touch()
    (files.env.cwd / "src").mkdir()

    empty = files.call("read_file", {"path": "empty.txt"})
    directory = files.call("read_file", {"path": "src"})

    assert not empty.is_error
    assert empty.text_content == "[empty.txt is empty]"
    assert directory.error_code == "TOOL_ERROR"
    assert "src is a directory" in directory.text_content
    assert "search_files" in directory.text_content


def test_patch_missing_old_text_names_the_line_that_differs_only_in_whitespace(
    files: Harness,
) -> None:
    target = files.env.cwd / "tabs.py"
    target.write_text("import os\n\ndef f():\n\treturn 1\n")

    message = _patch_refused(files, "tabs.py", "def f():\n    return 1")

    assert "not found" in message
    assert "line 3" in message
    assert "whitespace" in message
    assert target.read_text() == "import os\n\ndef f():\n\treturn 1\n"


def test_write_file_and_patch_say_half_a_character_cannot_be_written(files: Harness) -> None:
    target = files.env.cwd / "a.txt"
    target.write_text("smile: x\n")

    written = files.call("write_file", {"path": "a.txt", "content": "smile: \ud83d\n"})
    patched = files.call("patch", {"path": "a.txt", "old_text": "x", "new_text": "\ud83d"})

    for result in (written, patched):
        assert result.error_code == "TOOL_ERROR"
        assert "UnicodeEncodeError" not in result.text_content
        assert "half a character" in result.text_content
        assert "\\ud83d" in result.text_content
    assert target.read_text() == "smile: x\n"


def test_a_symlink_loop_is_refused_by_name_and_does_not_stop_a_search(files: Harness) -> None:
    root = files.env.cwd
    (root / "loop1").symlink_to("loop2")
    (root / "loop2").symlink_to("loop1")
    (root / "notes.txt").write_text("needle\n")

    read = files.call("read_file", {"path": "loop1"})
    found = files.call("search_files", {"pattern": "needle"})

    assert read.error_code == "TOOL_ERROR"
    assert "loop1 is a symbolic link that loops" in read.text_content
    assert "RuntimeError" not in read.text_content
    assert not found.is_error, found.text_content
    assert [m["path"] for m in found.structured["matches"]] == ["notes.txt"]


def test_search_files_globs_read_star_and_double_star_as_path_globs(files: Harness) -> None:
    root = files.env.cwd
    for name in ("top.py", "src/a.py", "src/pkg/b.py", "src/pkg/c.txt"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).touch()

    def listed(glob: str, path: str = ".") -> list[str]:
        result = files.call("search_files", {"glob": glob, "path": path})
        return [m["path"] for m in result.structured["matches"]]

    # ** is zero or more directories, * stays within one: as git, ripgrep and shells read them.
    assert listed("**/*.py") == ["top.py", "src/a.py", "src/pkg/b.py"]
    assert listed("src/**/*.py") == ["src/a.py", "src/pkg/b.py"]
    assert listed("src/*.py") == ["src/a.py"]
    assert listed("src/**") == ["src/a.py", "src/pkg/b.py", "src/pkg/c.txt"]
    assert listed("*.py") == ["top.py", "src/a.py", "src/pkg/b.py"]
    # Relative to the path searched as well as to the working directory.
    assert listed("pkg/*.py", path="src") == ["src/pkg/b.py"]


def test_write_file_refuses_to_replace_what_is_not_a_regular_file(files: Harness) -> None:
    # A FIFO here; /dev/null under allow_outside: true was replaced by a regular file alike.
    fifo = files.env.cwd / "pipe"
    os.mkfifo(fifo)

    result = files.call("write_file", {"path": "pipe", "content": "x"})

    assert result.error_code == "TOOL_ERROR"
    assert "pipe is a FIFO (named pipe), not a regular file" in result.text_content
    assert stat.S_ISFIFO(fifo.stat().st_mode)


@pytest.mark.parametrize("tool", ["read_file", "patch"])
def test_read_file_and_patch_say_what_a_fifo_or_a_device_is(
    harnesses: Callable[..., Harness], tool: str
) -> None:
    # Both said "does not exist or is not a regular file", though it exists; write_file says
    # what it is.
    files = harnesses({**WRITE_OK, "plugins": {"entries": {"files": {"allow_outside": True}}}})
    os.mkfifo(files.env.cwd / "pipe")
    extra = {"old_text": "a", "new_text": "b"} if tool == "patch" else {}

    fifo = files.call(tool, {"path": "pipe", **extra})
    device = files.call(tool, {"path": "/dev/null", **extra})

    assert fifo.error_code == device.error_code == "TOOL_ERROR"
    verb = {"read_file": "reads", "patch": "edits"}[tool]
    assert fifo.text_content == (
        f"{tool}: pipe is a FIFO (named pipe), not a regular file; {tool} {verb} regular files only"
    )
    assert "/dev/null is a character device, not a regular file" in device.text_content


@pytest.mark.parametrize("tool", ["read_file", "write_file", "patch", "search_files"])
def test_a_path_holding_half_a_character_is_refused_naming_it(files: Harness, tool: str) -> None:
    # "read_file failed: UnicodeEncodeError: 'utf-8' codec can't encode character..." before.
    arguments = {"read_file": {}, "write_file": {"content": "x"}, "search_files": {}}.get(
        tool, {"old_text": "a", "new_text": "b"}
    )

    result = files.call(tool, {"path": "a\ud800.txt", **arguments})

    assert result.error_code == "TOOL_ERROR"
    assert result.text_content == (
        f"{tool}: path holds half a character (\\ud800, a lone surrogate) at character 1, "
        "which UTF-8 cannot hold; send the whole character or leave it out"
    )
    assert [entry.name for entry in files.env.cwd.iterdir()] == []


def test_a_file_name_that_is_no_utf8_is_read_by_its_escaped_name(files: Harness) -> None:
    # Such a name (Latin-1 bytes) is listed with its byte as a surrogate (\udce9 for \xe9),
    # which names the file back: not half a character.
    (files.env.cwd / os.fsdecode(b"caf\xe9.txt")).write_text("menu\n")

    listed = files.call("search_files", {"glob": "caf*"})
    read = files.call("read_file", {"path": "caf\udce9.txt"})

    assert listed.structured["matches"] == [{"path": "caf\udce9.txt", "text": "caf\udce9.txt"}]
    assert read.text_content == "menu\n"


def test_search_files_reads_braces_negation_and_anchors_as_ripgrep_does(files: Harness) -> None:
    root = files.env.cwd
    for name in ("top.py", "a.ts", "b.tsx", "src/a.py", "src/pkg/b.py", "lib/src/c.py"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).touch()

    def listed(glob: str) -> list[str]:
        result = files.call("search_files", {"glob": glob})
        assert not result.is_error, result.text_content
        return [m["path"] for m in result.structured["matches"]]

    # Each of these matched nothing, and "no matches" told the model there were no such files.
    assert listed("*.{ts,tsx}") == ["a.ts", "b.tsx"]
    assert listed("{src,lib}/**/*.py") == ["lib/src/c.py", "src/a.py", "src/pkg/b.py"]
    assert listed("!*.py") == ["a.ts", "b.tsx"]
    assert listed("/top.py") == ["top.py"]
    assert listed("/src/*.py") == ["src/a.py"]
    assert listed("src/") == ["src/a.py", "src/pkg/b.py"]
    # A trailing / in braces too (this matched nothing: the alternative kept its empty name).
    assert listed("{src/,lib/}") == ["lib/src/c.py", "src/a.py", "src/pkg/b.py"]


def test_search_files_reads_an_escaped_or_bracketed_brace_as_itself(files: Harness) -> None:
    """As in ripgrep, a backslash makes the next character plain and a brace inside
    ``[...]`` is one: a file named with braces, a star or a leading ``!`` can be named."""
    root = files.env.cwd
    for name in ("{a,b}.txt", "a.txt", "b.txt", "*.md", "x.md", "!important.md", "c,d.txt"):
        (root / name).touch()

    def listed(glob: str) -> list[str]:
        result = files.call("search_files", {"glob": glob})
        assert not result.is_error, result.text_content
        return [m["path"] for m in result.structured["matches"]]

    # Each of these matched nothing, or other files: "no matches" said no such file was there.
    assert listed("\\{a,b}.txt") == ["{a,b}.txt"]
    assert listed("[{]a,b[}].txt") == ["{a,b}.txt"]
    assert listed("\\*.md") == ["*.md"]
    assert listed("\\!important.md") == ["!important.md"]
    assert listed("{c\\,d,a}.txt") == ["a.txt", "c,d.txt"]
    assert listed("*.{md,txt}") == sorted(
        ["!important.md", "*.md", "a.txt", "b.txt", "c,d.txt", "x.md", "{a,b}.txt"]
    )


def test_search_files_refuses_a_glob_of_too_many_alternatives_at_once(files: Harness) -> None:
    (files.env.cwd / "a.py").touch()

    result = files.call("search_files", {"glob": "{a,b}" * 30 + ".py"})

    assert result.error_code == "TOOL_ERROR"
    assert "alternatives" in result.text_content


def test_a_write_in_place_that_cannot_grow_the_file_leaves_it_as_it_was(tmp_path: Path) -> None:
    """No disk fills here: a file size limit (RLIMIT_FSIZE) fails the write as a full disk
    does, in the process of the command alone. A file with two hard links is written in
    place (no temporary file to throw away), so a write failing half-way left half of it."""
    import resource
    import signal
    import subprocess
    import sys

    project = tmp_path / "project"
    project.mkdir()
    target = project / "notes.txt"
    target.write_text("old notes\n")
    os.link(target, project / "notes-link.txt")
    variables = {**os.environ, "HOME": str(tmp_path), "HERMES_HOME": str(tmp_path / "hermes")}

    def small_files() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))

    arguments = '{"path": "notes.txt", "content": "%s"}' % ("new " * 25000)
    done = subprocess.run(
        [sys.executable, "-m", "hermes_core", "tools", "call", "write_file", arguments, "--yes"],
        env=variables,
        cwd=project,
        preexec_fn=small_files,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert done.returncode != 0
    assert f"write_file: OSError: File too large: {target}" in done.stderr
    assert target.read_text() == "old notes\n"


def test_a_credential_by_another_name_is_refused_too(tmp_path: Path) -> None:
    """A hard link in the project to ~/.hermes/.env (or, on a case-insensitive file system,
    ~/.hermes/.ENV: the same file under a name no path comparison sees) is the same file."""
    project = tmp_path / "project"
    project.mkdir()
    hermes_home = tmp_path / "me" / ".hermes"
    hermes_home.mkdir(parents=True)
    env = Environment(
        home=hermes_home,
        cwd=project,
        variables={**make_env(tmp_path).variables, "HOME": str(tmp_path / "me")},
    )
    env.dotenv_path.write_text("OPENAI_API_KEY=sk-dotenv\n")
    os.link(env.dotenv_path, project / "keys.txt")
    harness = build_harness(tmp_path, config=WRITE_OK, env=env)
    try:
        read = harness.call("read_file", {"path": "keys.txt"})
        found = harness.call("search_files", {"pattern": "sk-"})
        written = harness.call("write_file", {"path": "keys.txt", "content": "X=1\n"})
    finally:
        harness.close()

    for result in (read, written):
        assert result.error_code == "TOOL_ERROR"
        assert "keys.txt is one of hermes' credentials (.env)" in result.text_content
    assert found.structured["matches"] == []
    assert env.dotenv_path.read_text() == "OPENAI_API_KEY=sk-dotenv\n"


def test_the_keys_of_the_users_other_hermes_homes_are_refused_too(tmp_path: Path) -> None:
    """hermes started in the home directory with HERMES_HOME naming another home: ~/.hermes
    still holds the user's keys, and ~/.hermes/projects/<tag> the sign-ins of the homes
    that lie in projects (their data_home)."""
    me = tmp_path / "me"
    default = me / ".hermes"
    (default / "projects" / "hermes-3f2a9c1b7d4e").mkdir(parents=True)
    (default / ".env").write_text("OPENAI_API_KEY=sk-default\n")
    (default / "projects" / "hermes-3f2a9c1b7d4e" / "auth.json").write_text('{"t": "sk-gated"}')
    env = Environment(
        home=tmp_path / "other-home",
        cwd=me,
        variables={**make_env(tmp_path).variables, "HOME": str(me)},
        user_home=me,
    )
    harness = build_harness(tmp_path, config=WRITE_OK, env=env)
    try:
        reads = [
            harness.call("read_file", {"path": "~/.hermes/.env"}),
            harness.call("read_file", {"path": ".hermes/projects/hermes-3f2a9c1b7d4e/auth.json"}),
        ]
        found = harness.call("search_files", {"pattern": "sk-"})
    finally:
        harness.close()

    for result in reads:
        assert result.error_code == "TOOL_ERROR"
        assert "one of hermes' credentials" in result.text_content
    assert found.structured["matches"] == []


def test_the_sign_ins_of_a_home_made_after_the_host_started_are_refused_too(
    tmp_path: Path,
) -> None:
    """A project run for the first time while a host runs (``hermes serve``, an editor's
    session) gets its folder in ~/.hermes/projects then: its sign-ins are keys all the same."""
    me = tmp_path / "me"
    default = me / ".hermes"
    (default / "projects").mkdir(parents=True)
    env = Environment(
        home=tmp_path / "other-home",
        cwd=me,
        variables={**make_env(tmp_path).variables, "HOME": str(me)},
        user_home=me,
    )
    harness = build_harness(tmp_path, config=WRITE_OK, env=env)
    try:
        later = default / "projects" / "hermes-0a1b2c3d4e5f"
        (later / "mcp-auth").mkdir(parents=True)
        (later / "auth.json").write_text('{"t": "sk-later"}')
        (later / "mcp-auth" / "server.json").write_text('{"t": "sk-later"}')
        os.link(later / "auth.json", me / "notes.json")
        reads = [
            harness.call("read_file", {"path": ".hermes/projects/hermes-0a1b2c3d4e5f/auth.json"}),
            harness.call(
                "read_file", {"path": "~/.hermes/projects/hermes-0a1b2c3d4e5f/mcp-auth/server.json"}
            ),
            harness.call("read_file", {"path": "notes.json"}),
        ]
        found = harness.call("search_files", {"pattern": "sk-"})
    finally:
        harness.close()

    # Each was read: the folder was not there when the file tools listed hermes' credentials.
    for result in reads:
        assert result.error_code == "TOOL_ERROR", result.text_content
        assert "one of hermes' credentials" in result.text_content
    assert found.structured["matches"] == []
