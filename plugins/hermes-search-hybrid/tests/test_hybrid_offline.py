"""Nothing is downloaded or recorded: the model loads and answers in a process that cannot open
a socket, with an empty home, imports neither torch nor sentence-transformers, and leaves
nothing under the home (onnxruntime's telemetry is off)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pexpect
from hermes_search_hybrid.backend import PROGRESS_MIN_TOOLS
from hybrid_fixtures import MISMATCH_QUERY

TESTS = Path(__file__).resolve().parent

# Runs in a child process: refuses (and records) every attempt to reach the network, then
# builds the backend through a real host and searches.
NO_NETWORK = textwrap.dedent(
    """
    import json, os, socket, sys
    attempts = []
    def refuse(*args, **kwargs):
        attempts.append(repr(args[1:] if args else kwargs))
        raise OSError("the network is off in this test")
    socket.socket.connect = refuse
    socket.socket.connect_ex = refuse
    socket.create_connection = refuse
    socket.getaddrinfo = refuse
    sys.path.insert(0, sys.argv[1])
    from pathlib import Path
    from hybrid_fixtures import TOOLS, build_backend
    backend = build_backend(Path(sys.argv[2]))
    backend.build(TOOLS)
    hits = [hit.name for hit in backend.search(sys.argv[3], 3, "off")]
    print(json.dumps({
        "attempts": attempts,
        "hits": hits,
        "telemetry": os.environ.get("ORT_DISABLE_TELEMETRY"),
        "imported": sorted(sys.modules),
    }))
    """
)


def child_environment(tmp_path: Path) -> dict[str, str]:
    """The test's PATH and a fresh HOME and Hugging Face cache; no offline switch is set, and
    onnxruntime's telemetry switch is not either."""
    variables = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(tmp_path / "user-home"),
        "HF_HOME": str(tmp_path / "hf-home"),
    }
    return variables


def test_model_loads_and_answers_without_the_network(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            NO_NETWORK,
            str(TESTS),
            str(tmp_path / "root"),
            MISMATCH_QUERY,
        ],
        env=child_environment(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["attempts"] == []
    assert report["hits"][0] == "send_sms"
    assert report["telemetry"] == "1"
    assert "onnxruntime" in report["imported"]
    assert not {"torch", "sentence_transformers", "transformers"} & set(report["imported"])
    written = [path for path in tmp_path.glob("*-home/**/*") if path.is_file()]
    assert written == []


# Builds a catalog large enough for a progress bar in a child process.
LARGE_CATALOG = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[1])
    from pathlib import Path
    from hermes_core.search import ToolDocument
    from hybrid_fixtures import build_backend
    backend = build_backend(Path(sys.argv[2]))
    count = int(sys.argv[3])
    jobs = [ToolDocument(f"tool_{i}", f"Does job {i}.", "jobs", ("id",)) for i in range(count)]
    backend.build(jobs)  # two texts a tool: its whole text and its summary
    print("embedded", backend.documents_embedded)
    """
)


def test_first_embedding_of_a_large_catalog_shows_progress_on_a_terminal_only(
    tmp_path: Path,
) -> None:
    count = str(PROGRESS_MIN_TOOLS)
    arguments = ["-c", LARGE_CATALOG, str(TESTS)]
    terminal = pexpect.spawn(
        sys.executable,
        [*arguments, str(tmp_path / "terminal"), count],
        env=child_environment(tmp_path),
        encoding="utf-8",
        timeout=300,
    )
    terminal.expect(r"hybrid: embedding tools: .*" + count + "/" + count)
    terminal.expect("embedded " + count)
    terminal.expect(pexpect.EOF)
    piped = subprocess.run(
        [sys.executable, *arguments, str(tmp_path / "piped"), count],
        env=child_environment(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )

    assert piped.returncode == 0, piped.stderr
    assert piped.stdout == f"embedded {count}\n"
    assert piped.stderr == ""
