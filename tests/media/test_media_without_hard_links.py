"""The media tools on a file system without hard links (FAT, exFAT, some network shares): what
they make still takes its name only where no file is, so a file that appears there at the last
moment is kept, never replaced.

No such file system can be mounted here, so its stand-in is ``os.link`` failing with
``EPERM``, as Linux's vfat does. The file that appears at the last moment is put there by an
audit hook (:func:`sys.addaudithook`) at the first ``open`` or ``rename`` of the target's name,
whatever call hermes makes to give its file that name: another program's write just before it."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_core import Environment, ToolResult
from hermes_core.testing import FakeModelServer

from .media_hosts import call, media_host

TTS = "sh -c 'printf audio > \"$1\"' sh {output}"
KEPT = (
    "text_to_speech: hello.txt already exists; give the name of a new file (the media tools "
    "never replace one)"
)


def _no_link(*args: object, **kwargs: object) -> None:
    raise PermissionError(errno.EPERM, "Operation not permitted")  # as vfat answers link(2)


_hooked: set[str] = set()
_arrival: dict[str, Any] = {}
"""The file another program writes at the last moment: ``target`` (its path) and ``bytes``."""


def _other_program(event: str, args: tuple[Any, ...]) -> None:
    if not _arrival or event not in ("open", "os.rename"):
        return
    named = args[0] if event == "open" else args[1]
    if not isinstance(named, (str, bytes, os.PathLike)) or os.fsdecode(named) != _arrival["target"]:
        return
    target, data = _arrival.pop("target"), _arrival.pop("bytes")  # once, and not for this write
    with open(target, "xb") as stream:
        stream.write(data)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """The session's working directory (the temporary home is in ``tmp_path`` too)."""
    (tmp_path / "work").mkdir()
    return tmp_path / "work"


@pytest.fixture
def without_hard_links(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(os, "link", _no_link)
    yield
    _arrival.clear()


def _arrives(target: Path, data: bytes) -> None:
    if "hooked" not in _hooked:  # once: an audit hook stays for the rest of the process
        sys.addaudithook(_other_program)
        _hooked.add("hooked")
    _arrival.update(target=str(target), bytes=data)


def _speak(env: Environment, cwd: Path, path: str) -> ToolResult:
    host = media_host(env, media={"tts_command": TTS, "tts_format": "txt"})
    try:
        return call(host, cwd, "text_to_speech", {"text": "hello", "path": path})
    finally:
        host.close()


@pytest.mark.usefixtures("without_hard_links")
def test_speech_without_hard_links_is_saved_under_its_name(
    hermes_env: Environment, work: Path
) -> None:
    result = _speak(hermes_env, work, "hello.txt")

    assert not result.is_error, result.text_content
    assert (work / "hello.txt").read_text(encoding="utf-8") == "audio"
    assert [path.name for path in work.iterdir()] == ["hello.txt"]  # no .part file left


@pytest.mark.usefixtures("without_hard_links")
def test_a_file_that_appears_at_the_last_moment_is_kept_without_hard_links(
    hermes_env: Environment, work: Path
) -> None:
    """Checked free, the name is taken just before the speech would get it: the check and a
    rename over it replaced the other program's file; now it is kept and the tool says so."""
    kept = work / "hello.txt"
    _arrives(kept, b"precious")

    result = _speak(hermes_env, work, "hello.txt")

    assert "target" not in _arrival, "the tool never gave its file the name"
    assert result.text_content == KEPT
    assert kept.read_bytes() == b"precious"
    assert [path.name for path in work.iterdir()] == ["hello.txt"]


def test_an_image_without_hard_links_is_saved_as_with_them(
    hermes_env: Environment, work: Path
) -> None:
    """The same bytes and permission bits as a hard link gives; a last-moment file is kept
    and none of the images is saved."""
    with FakeModelServer() as server:
        host = media_host(hermes_env, media={"image_base_url": server.openai_base_url})
        try:
            linked = call(host, work, "image_generate", {"prompt": "a fox", "path": "a.png"})
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(os, "link", _no_link)
                copied = call(host, work, "image_generate", {"prompt": "a fox", "path": "b.png"})
                _arrives(work / "c-2.png", b"precious")
                raced = call(
                    host,
                    work,
                    "image_generate",
                    {"prompt": "a fox", "path": "c.png", "count": 2},
                )
        finally:
            _arrival.clear()
            host.close()
    assert not linked.is_error, linked.text_content
    assert not copied.is_error, copied.text_content
    a, b = work / "a.png", work / "b.png"
    assert b.read_bytes() == a.read_bytes()
    assert b.stat().st_mode == a.stat().st_mode
    assert raced.text_content == (
        "image_generate: c-2.png already exists; give the name of a new file (the media "
        "tools never replace one)"
    )
    assert (work / "c-2.png").read_bytes() == b"precious"
    assert sorted(path.name for path in work.iterdir()) == ["a.png", "b.png", "c-2.png"]


_FULL_DISK_CLI = """
import errno, os, resource, runpy, signal, sys

def no_link(*args, **kwargs):
    raise PermissionError(errno.EPERM, "Operation not permitted")

os.link = no_link
# No disk fills here: a file size limit fails the copy's write as a full disk would (ENOSPC
# and EFBIG reach the tool alike), the command below lifting it for its own file.
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (65536, resource.RLIM_INFINITY))
sys.argv = ["hermes", *sys.argv[1:]]
runpy.run_module("hermes_core", run_name="__main__")
"""


@pytest.mark.subprocess
def test_speech_whose_copy_fails_is_one_line_and_leaves_nothing(tmp_path: Path, work: Path) -> None:
    """Without hard links the speech is copied to its name; a copy that failed (a full disk)
    was the generic `text_to_speech failed: OSError: ...`, unlike image_generate's; then one
    line that did not say what to do."""
    home = tmp_path / "home"
    home.mkdir()
    command = "sh -c 'ulimit -f unlimited; head -c 200000 /dev/zero > \"$1\"' sh {output}"
    media = f"      tts_command: {json.dumps(command)}\n      tts_format: txt\n"
    (home / "config.yaml").write_text(f"plugins:\n  entries:\n    media:\n{media}")
    arguments = '{"text": "hello", "path": "hello.txt"}'
    done = subprocess.run(
        [sys.executable, "-c", _FULL_DISK_CLI, "tools", "call", "text_to_speech", arguments],
        cwd=work,
        env={**os.environ, "HERMES_HOME": str(home), "HERMES_CACHE_DIR": str(tmp_path / "c")},
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    assert done.stderr == (
        "error (TOOL_ERROR): text_to_speech: could not write hello.txt: File too large; "
        "nothing was saved: ask the user to free space there, or give another path\n"
    )
    assert list(work.iterdir()) == []
