"""execute_code at the edges of its RPC and its capture: tool results that are not UTF-8, a
script that writes without end, a request larger than the socket takes; real scripts in real
child processes."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from builders import Harness, run_script, script_harnesses, script_payload

from hermes_core._config import Config, InvalidConfig


@pytest.fixture
def harnesses(tmp_path: Path) -> Iterator[Callable[..., Harness]]:
    yield from script_harnesses(tmp_path)


run = run_script
payload = script_payload


# Tool results that are not UTF-8 ---------------------------------------------------------------


def test_a_tool_result_that_is_not_utf8_reaches_the_script_as_a_direct_call_gives_it(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses()
    (harness.env.cwd / "sub").mkdir()
    (Path(os.fsdecode(bytes(harness.env.cwd / "sub") + b"/bad\xff.txt"))).write_text("hello\n")
    direct = harness.call("search_files", {"pattern": "hello", "path": "sub"})
    assert "\udcff" in direct.text_content  # the file name is not UTF-8

    result = run(
        harness,
        """
        import json
        from hermes_tools import read_file, search_files
        hits = search_files(pattern="hello", path="sub")
        print(json.dumps({"text": hits, "data": hits.data}))
        print(json.dumps(read_file(path=hits.data["matches"][0]["path"])))
        """,
    )

    data = payload(result)
    assert data["status"] == "success", data
    seen, content = data["output"].splitlines()
    assert json.loads(seen) == {"text": direct.text_content, "data": direct.structured}
    assert json.loads(content) == "hello\n"  # and a name from a result works as an argument
    assert data["tool_calls_made"] == 2


# The size of what a script writes ----------------------------------------------------------------


def captured_at_most(limit: int) -> dict[str, Any]:
    # With a timeout of 3 s: a script the cap stops ends with "error", one it misses "timeout".
    return {"code_execution": {"max_captured_bytes": limit, "timeout": 3}}


def test_a_script_writing_past_max_captured_bytes_is_stopped_and_told_how_much_was_cut(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses(captured_at_most(1_000_000))

    result = run(
        harness,
        """
        import sys, time, hermes_tools
        print(hermes_tools.__file__, flush=True)
        for _ in range(200):  # 13 MB, then it would wait for the timeout
            sys.stdout.write("x" * 65536)
        time.sleep(60)
        """,
    )

    data = payload(result)
    assert data["status"] == "error"
    assert result.error_code == "SCRIPT_ERROR"
    assert data["error"].startswith("the script was stopped: it wrote more than 1000000 bytes to ")
    assert "stdout (code_execution.max_captured_bytes)" in data["error"]
    saved = Path(data["output_file"])
    assert saved.stat().st_size == 1_000_000
    assert sorted(saved.parent.iterdir()) == [saved]
    output = data["output"]
    assert len(output) < 51_000
    dropped = int(output.rsplit("[... output cut: ", 1)[1].split(" ", 1)[0])
    assert dropped > 0
    assert output.endswith(
        f"[... output cut: {dropped} more bytes were dropped; the first 1000000 bytes are in "
        f"{saved} ...]\n"
    )
    assert f"{dropped} bytes past it were dropped" in data["error"]
    run_directory = Path(output.splitlines()[0]).parent
    assert run_directory.name.startswith("hermes-exec-")
    assert not run_directory.exists()  # the run's temporary files are gone


def test_stderr_past_max_captured_bytes_stops_the_script_too(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses(captured_at_most(200_000))

    result = run(
        harness,
        """
        import sys, time
        print("started", flush=True)
        for _ in range(100):
            sys.stderr.write("warning " * 8192)
        time.sleep(60)
        """,
    )

    data = payload(result)
    assert data["status"] == "error"
    assert data["output"] == "started\n"
    assert "wrote more than 200000 bytes to stderr" in data["error"]
    assert len(data["stderr"]) < 10_200
    assert "[... output cut: " in data["stderr"]


def test_max_captured_bytes_must_be_a_positive_integer() -> None:
    with pytest.raises(InvalidConfig, match=r"max_captured_bytes"):
        Config.model_validate(captured_at_most(0))


@pytest.mark.subprocess
def test_the_cache_keeps_the_20_newest_saved_outputs(harnesses: Callable[..., Harness]) -> None:
    harness = harnesses()
    saved_dir = harness.env.cache_dir / "execute_code"
    saved_dir.mkdir(parents=True)
    older = []
    for age in range(25):  # earlier runs' outputs, the oldest first
        path = saved_dir / f"output-earlier{age:02d}.txt"
        path.write_text("x")
        os.utime(path, (1_000_000 + age, 1_000_000 + age))
        older.append(path)

    data = payload(run(harness, 'print("x" * 60_000)'))

    new = Path(data["output_file"])
    assert new.exists()
    kept = sorted(p for p in saved_dir.iterdir() if p != new)
    assert kept == older[-19:]  # with the new one, 20: the oldest 6 are gone


# The size of a request ------------------------------------------------------------------------


@pytest.mark.subprocess
def test_an_oversized_request_fails_that_call_only_naming_the_limit(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses()
    (harness.env.cwd / "a.txt").write_text("still here\n")

    result = run(
        harness,
        """
        import hermes_tools
        for attempt in range(2):
            try:
                hermes_tools.write_file(path="big.txt", content="x" * 70_000_000)
            except hermes_tools.ToolError as error:
                print(error.code, error.message)
        print(hermes_tools.read_file(path="a.txt"), end="")
        """,
    )

    data = payload(result)
    assert data["status"] == "success", data
    first, second, last = data["output"].splitlines()
    assert first == second
    assert first.startswith("INVALID_REQUEST write_file was not called: the request is 70000")
    assert "more than the 67108864 bytes (64 MiB) one call may send" in first
    assert last == "still here"
    assert data["tool_calls_made"] == 1
    assert not (harness.env.cwd / "big.txt").exists()
    assert [e["name"] for e in harness.activity()] == ["read_file", "execute_code"]
