"""What an ``execute_code`` script cannot reach: the host's secrets (its environment and memory),
another run's tool channel, approvals it was not given, life after its run, and the files it
leaves behind. Each check runs the real ``hermes`` command; the checks about another account's
reach drop to the user ``nobody`` (root can read any process's files)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import tempfile
import textwrap
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from accounts import NOBODY, NonRoot

from hermes_core.testing import HermesCli

pytestmark = pytest.mark.subprocess

TAG = "q7zx"
"""In every secret value, so a script can find the values without knowing them."""
SECRETS: Mapping[str, str] = {
    "OPENAI_API_KEY": f"sk-proj-{TAG}Aa1Bb2Cc3Dd4Ee5Ff6",
    "GITHUB_TOKEN": f"ghp_{TAG}0123456789abcdefABCDEF0123",
    "AWS_SECRET_ACCESS_KEY": f"wJalrXUtnFEMI/{TAG}/bPxRfiCYEXAMPLEKEY",
    "DB_PASSWORD": f"hunter2-{TAG}-correct-horse",
    "HERMES_CONNECTORS_TOKEN": f"hct_{TAG}_9f8e7d6c5b4a",
    "UPSTREAM_HEADER": f"Bearer eyJhbGciOiJIUzI1NiJ9.{TAG}.c2lnbmF0dXJl",
    "DATABASE_URL": f"postgres://app:pw-{TAG}-s3cret@db.internal:5432/app",
}
"""Seven shapes of secret: the scrub removes the first five by name and keeps the last two out
by its list of safe variables; the host process itself holds all seven."""


@pytest.fixture
def shared() -> Iterator[Path]:
    """A directory under /tmp that ``nobody`` owns (pytest's own tmp_path is 0700 root)."""
    root = Path(tempfile.mkdtemp(prefix="hermes-i27-", dir="/tmp"))
    os.chmod(root, 0o755)
    if os.geteuid() == 0:
        os.chown(root, NOBODY, NOBODY)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _cli_of(root: Path, config: Mapping[str, Any]) -> HermesCli:
    cli = HermesCli(root)
    (root / "tmp").mkdir()
    cli.config.write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML
    if os.geteuid() == 0:
        for path in (root / "tmp", cli.home, cli.work, cli.config):
            os.chown(path, NOBODY, NOBODY)
    return cli


def _call_execute_code(
    cli: HermesCli,
    code: str,
    *,
    as_user: NonRoot | None = None,
    extra: Mapping[str, str] | None = None,
    prefix: tuple[str, ...] = (),
) -> subprocess.Popen[str]:
    """``hermes tools call execute_code CODE --yes --json``, started (not waited for); run
    as the non-root user ``as_user`` when it is given, after ``prefix`` (``prlimit ...``)."""
    arguments = json.dumps({"code": textwrap.dedent(code)})
    command = cli.command("tools", "call", "execute_code", arguments, "--yes", "--json")
    if as_user is not None:
        command = [*as_user.prefix, as_user.python, *command[1:]]
    command = [*prefix, *command]
    variables = cli.variables(TMPDIR=str(cli.root / "tmp"), **(extra or {}))
    return subprocess.Popen(
        command,
        cwd=cli.work,
        env=variables,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _payload(process: subprocess.Popen[str], timeout: float = 90) -> dict[str, Any]:
    out, err = process.communicate(timeout=timeout)
    try:
        payload: dict[str, Any] = json.loads(out)
    except ValueError:
        pytest.fail(f"hermes printed no JSON (exit {process.returncode}):\n{out}\n{err}")
    return payload.get("structured") or json.loads(payload["content"][0]["text"])


# 2a: the host's environment and memory -----------------------------------------------------

_READ_ANCESTORS = f"""
    import os, re
    TAG = {TAG!r}.encode()
    TOKEN = re.compile(rb"[A-Za-z0-9_:/@.+=-]+")

    def tokens(data):
        found, at = set(), data.find(TAG)
        while at >= 0:
            window = data[max(0, at - 100) : at + 100]
            found.update(t for t in TOKEN.findall(window) if TAG in t)
            at = data.find(TAG, at + 1)
        return found

    def parent(pid):
        with open(f"/proc/{{pid}}/status") as status:
            for line in status:
                if line.startswith("PPid:"):
                    return int(line.split()[1])
        return 0

    def read(path):
        try:
            with open(path, "rb") as handle:
                return handle.read()
        except OSError:
            return b""

    def memory(pid):
        try:
            with open(f"/proc/{{pid}}/maps") as handle:
                maps = handle.read().splitlines()
            mem = open(f"/proc/{{pid}}/mem", "rb", buffering=0)
        except OSError:
            return None
        found = set()
        with mem:
            for line in maps:
                span, perms = line.split()[:2]
                start, end = (int(part, 16) for part in span.split("-"))
                if "r" not in perms or end - start > 1 << 28:
                    continue
                try:
                    mem.seek(start)
                    found |= tokens(mem.read(end - start))
                except (OSError, ValueError, OverflowError):
                    pass
        return found

    found, ancestors, read_mem = set(), [], []
    pid = parent(os.getpid())
    while pid > 1:
        ancestors.append(pid)
        seen = memory(pid)
        if seen is not None:
            read_mem.append(pid)
            found |= seen
        for name in ("environ", "cmdline"):
            found |= tokens(read(f"/proc/{{pid}}/{{name}}"))
        pid = parent(pid)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            found |= tokens(read(f"/proc/{{entry}}/environ"))
    found |= tokens(repr(dict(os.environ)).encode())
    print("ancestors", ancestors)
    print("memory read of", read_mem)
    for token in sorted(found):
        print("FOUND", token.decode(errors="replace"))
"""


@pytest.mark.parametrize("mode", ["project", "strict"])
def test_a_script_reads_no_secret_from_its_ancestors_environ_memory_or_cmdline(
    shared: Path, mode: str, non_root: NonRoot
) -> None:
    cli = _cli_of(shared, {"code_execution": {"mode": mode}})
    started = _call_execute_code(cli, _READ_ANCESTORS, as_user=non_root, extra=SECRETS)
    host_pid = started.pid  # setpriv execs hermes: the same process
    data = _payload(started)

    assert data["status"] == "success", data
    output = data["output"]
    walked = json.loads(output.splitlines()[0].removeprefix("ancestors "))
    assert host_pid in walked, output
    leaked = [name for name, value in SECRETS.items() if value in output]
    assert leaked == [], output


# 2b: the channel of a running script -------------------------------------------------------

_WAIT_FOR_THE_ATTACK = """
    import pathlib, time
    pathlib.Path({ready!r}).write_text("ready")
    deadline = time.time() + 30
    while not pathlib.Path({attacked!r}).exists() and time.time() < deadline:
        time.sleep(0.05)
    print("done")
"""

_ATTACKER = """
import json, os, socket, stat, sys, time
ready, attacked, searched = sys.argv[1], sys.argv[2], sys.argv[3]
deadline = time.time() + 30
while not os.path.exists(ready) and time.time() < deadline:
    time.sleep(0.05)
request = json.dumps({"tool": "read_file", "arguments": {"path": "private.txt"}}).encode()
replies, tried = [], 0

def attempt(sock):
    global tried
    tried += 1
    try:
        sock.settimeout(5)
        sock.sendall(request + b"\\n")
        reply = sock.makefile("rb").readline()
        if reply:
            replies.append(reply.decode(errors="replace"))
    except OSError:
        pass
    finally:
        sock.close()

# Every Unix socket on a path: under the run's TMPDIR, and every named one the kernel lists.
paths = set()
for folder, _, files in os.walk(searched):
    for name in files:
        path = os.path.join(folder, name)
        try:
            if stat.S_ISSOCK(os.lstat(path).st_mode):
                paths.add(path)
        except OSError:
            pass
with open("/proc/net/unix") as table:
    for line in table.read().splitlines()[1:]:
        fields = line.split()
        if len(fields) >= 8 and fields[7].startswith("/"):
            paths.add(fields[7])
for path in sorted(paths):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        continue
    attempt(sock)
# The descriptors of this user's processes: a socket there cannot be opened by path.
for pid in os.listdir("/proc"):
    if not pid.isdigit() or int(pid) == os.getpid():
        continue
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        continue
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:"):
                opened = os.open(f"/proc/{pid}/fd/{fd}", os.O_RDWR)
                attempt(socket.socket(fileno=opened))
        except OSError:
            pass
print(json.dumps({"tried": tried, "replies": replies}))
open(attacked, "w").close()
"""


def test_another_process_of_the_user_cannot_run_calls_in_a_running_scripts_session(
    shared: Path, non_root: NonRoot
) -> None:
    cli = _cli_of(shared, {})
    private = cli.work / "private.txt"
    private.write_text("the session's file\n")
    if os.geteuid() == 0:  # the script runs as nobody then; as another user, as that user
        os.chown(private, NOBODY, NOBODY)
    ready, attacked = shared / "tmp" / "ready", shared / "tmp" / "attacked"
    code = _WAIT_FOR_THE_ATTACK.format(ready=str(ready), attacked=str(attacked))
    started = _call_execute_code(cli, code, as_user=non_root)
    attacker = subprocess.run(
        [
            *non_root.prefix,
            non_root.python,
            "-c",
            _ATTACKER,
            str(ready),
            str(attacked),
            str(shared),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    data = _payload(started)

    assert attacker.returncode == 0, attacker.stderr
    seen = json.loads(attacker.stdout)
    assert seen["replies"] == [], seen
    assert data["status"] == "success", data
    assert data["tool_calls_made"] == 0
    activity = cli.log_dir / "activity.jsonl"
    names = [json.loads(line)["name"] for line in activity.read_text().splitlines()]
    assert names == ["execute_code"]


def test_a_forked_child_calls_tools_but_a_program_the_script_starts_cannot(
    hermes_cli: HermesCli,
) -> None:
    hermes_cli.config.write_text(json.dumps({"approvals": {"allow": ["execute_code"]}}))
    (hermes_cli.work / "notes.txt").write_text("still here\n")
    code = """
        import os, subprocess, sys
        import hermes_tools
        program = (
            "import sys; sys.path.insert(0, %r); import hermes_tools\\n"
            "try:\\n    hermes_tools.read_file(path='notes.txt'); print('program: called')\\n"
            "except hermes_tools.ToolError as error:\\n    print('program:', error.code)\\n"
        ) % os.path.dirname(hermes_tools.__file__)
        print(subprocess.run([sys.executable, "-c", program], capture_output=True,
                             text=True).stdout.strip(), flush=True)
        child = os.fork()
        if child == 0:
            print("child:", hermes_tools.read_file(path="notes.txt").strip(), flush=True)
            os._exit(0)
        os.waitpid(child, 0)
    """
    data = _payload(_call_execute_code(hermes_cli, code))

    assert data["status"] == "success", data
    lines = data["output"].splitlines()
    assert lines[0] == "program: RPC_CLOSED"
    assert lines[1] == "child: still here"
    assert data["tool_calls_made"] == 1


# A bad RPC line --------------------------------------------------------------------------


def test_a_200000_deep_request_line_gets_an_error_reply_and_the_run_goes_on(
    hermes_cli: HermesCli,
) -> None:
    hermes_cli.config.write_text(json.dumps({"approvals": {"allow": ["execute_code"]}}))
    (hermes_cli.work / "notes.txt").write_text("still here\n")
    code = """
        import json
        import hermes_tools
        _, sock, reader = hermes_tools._connected()
        sock.sendall(b"[" * 200_000 + b"]" * 200_000 + b"\\n")
        reply = json.loads(reader.readline())
        print(reply["code"])
        print(hermes_tools.read_file(path="notes.txt").strip())
    """
    data = _payload(_call_execute_code(hermes_cli, code))

    assert data["status"] == "success", data
    lines = data["output"].splitlines()
    assert lines[0] == "INVALID_REQUEST"
    assert "still here" in lines[-1]
    assert data["tool_calls_made"] == 1


HOST_FILES = 256
"""The host's descriptor limit in the test of a script holding connections (its script inherits
it): a script can then open more connections than the host has descriptors left."""


def test_a_script_holding_many_connections_is_refused_past_the_bound_and_the_host_works_on(
    hermes_cli: HermesCli,
) -> None:
    hermes_cli.config.write_text(json.dumps({"approvals": {"allow": ["execute_code"]}}))
    (hermes_cli.work / "notes.txt").write_text("still here\n")
    code = """
        import os, select, time
        import hermes_tools
        print(hermes_tools.read_file(path="notes.txt").strip(), flush=True)
        reading, writing = os.pipe()
        held = []
        while True:  # as many connections as the script's descriptors allow, each kept open
            try:
                held.append(hermes_tools._dial())
            except OSError:
                break
        refused, waiting = 0, {sock.fileno(): sock for sock in held}
        poller = select.poll()
        for fd in waiting:
            poller.register(fd, select.POLLIN)
        while events := poller.poll(500):  # until the host has nothing more to say
            for fd, _ in events:
                poller.unregister(fd)
                line = waiting.pop(fd).makefile("rb").readline()
                refused += b"TOO_MANY_CONNECTIONS" in line
        print(len(held), refused, len(waiting), flush=True)
        try:
            print(hermes_tools.read_file(path="notes.txt").strip(), flush=True)
        except hermes_tools.ToolError as error:
            print(error.code, error.message[:200], flush=True)
        child = os.fork()
        if child == 0:  # refused while the served connections are held, then served
            for sock in held:
                sock.close()  # its copies; its parent holds them still
            for _ in range(2):
                try:
                    print("child:", hermes_tools.read_file(path="notes.txt").strip(), flush=True)
                except hermes_tools.ToolError as error:
                    print("child:", error.code, flush=True)
                os.read(reading, 1)
            os._exit(0)
        time.sleep(0.5)
        for sock in held:
            sock.close()
        time.sleep(0.5)  # the host sees them closed
        os.write(writing, b"go")
        os.waitpid(child, 0)
    """
    limit = ("prlimit", f"--nofile={HOST_FILES}:{HOST_FILES}", "--")
    data = _payload(_call_execute_code(hermes_cli, code, prefix=limit))

    assert data["status"] == "success", data
    first, counts, last, refused_child, served_child = data["output"].splitlines()
    assert first == "still here"
    assert refused_child == "child: TOO_MANY_CONNECTIONS"
    assert served_child == "child: still here"
    held, refused, served = (int(number) for number in counts.split())
    assert held > 150, counts  # more than the host could hold beside its own descriptors
    assert served == 31, counts  # 32 at once, one of them the script's own
    assert refused == held - served, counts
    assert last == "still here", data["output"]
    assert data["tool_calls_made"] == 3


def test_long_requests_of_many_processes_are_read_one_at_a_time(hermes_cli: HermesCli) -> None:
    hermes_cli.config.write_text(
        json.dumps({"approvals": {"allow": ["execute_code", "write_file"]}})
    )
    code = """
        import os
        import hermes_tools

        def parent(pid):
            with open(f"/proc/{pid}/stat") as stat:
                return int(stat.read().rsplit(")", 1)[1].split()[1])

        def peak(pid):  # the most memory the process has held, in MiB
            with open(f"/proc/{pid}/status") as status:
                line = next(line for line in status if line.startswith("VmHWM:"))
            return int(line.split()[1]) // 1024

        host = parent(os.getppid())  # the script's parent is the runner, the host's child
        before = peak(host)
        content = "x" * (16 * 1024 * 1024)
        children = []
        for index in range(8):
            child = os.fork()
            if child == 0:
                try:
                    hermes_tools.write_file(path=f"big{index}.txt", content=content)
                except Exception as error:
                    print(error, flush=True)
                    os._exit(1)
                os._exit(0)
            children.append(child)
        failed = sum(os.waitpid(child, 0)[1] != 0 for child in children)
        print(failed, peak(host) - before, flush=True)
    """
    data = _payload(_call_execute_code(hermes_cli, code), timeout=180)

    assert data["status"] == "success", data
    failed, grown = (int(number) for number in data["output"].split())
    assert failed == 0
    assert data["tool_calls_made"] == 8
    assert all(
        (hermes_cli.work / f"big{index}.txt").stat().st_size == 16 << 20 for index in range(8)
    )
    # 8 requests of 16 MiB read at once are 128 MiB held together before any is parsed: the
    # peak grew by 207 to 312 MiB with the requests read together (5 runs), by 74 to 86 MiB
    # with one read at a time (3 runs).
    assert grown < 150, f"the host's peak grew by {grown} MiB"


# 3: --yes approves the named call only ---------------------------------------------------


def test_yes_approves_execute_code_but_leaves_the_scripts_calls_to_the_policy(
    hermes_cli: HermesCli,
) -> None:
    marker = hermes_cli.work / "ran"
    code = f"""
        import hermes_tools
        try:
            hermes_tools.terminal(command="touch {marker}")
            print("ran")
        except hermes_tools.ToolError as error:
            print(error.code)
    """
    data = _payload(_call_execute_code(hermes_cli, code))

    assert data["status"] == "success", data
    assert data["output"] == "DENIED\n"
    assert not marker.exists()


# 7: the timeout (and the script's end) reach every descendant -----------------------------

_SLEEPER = "3107"
"""How long the spawned processes sleep: also how a test tells them from other processes."""

_SPAWN_SIX_WAYS = """
    import os, subprocess, sys, time
    folder = {folder!r}
    def sleeper(name):
        return f"echo $$ > {{folder}}/{{name}}.pid; exec sleep {sleeper}"
    subprocess.Popen(["sh", "-c", sleeper("plain")])
    subprocess.Popen(f"nohup sh -c '{{sleeper('nohup')}}' >/dev/null 2>&1 &", shell=True)
    subprocess.Popen(["setsid", "sh", "-c", sleeper("setsid")])
    if os.fork() == 0:
        if os.fork() == 0:
            os.execvp("sh", ["sh", "-c", sleeper("double_fork")])
        os._exit(0)
    os.wait()
    subprocess.Popen(["sh", "-c", sleeper("setpgid")], preexec_fn=lambda: os.setpgid(0, 0))
    daemon = (
        "import os, time; open({{!r}}, 'w').write(str(os.getpid())); time.sleep({sleeper})"
    ).format(folder + "/daemon.pid")
    subprocess.Popen([sys.executable, "-c", daemon], start_new_session=True,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while len([name for name in os.listdir(folder) if name.endswith(".pid")]) < 6:
        time.sleep(0.02)
    time.sleep(0.2)  # every pid file written in full
    print("spawned")
    {then}
"""

SPAWN_METHODS = ("plain", "nohup", "setsid", "double_fork", "setpgid", "daemon")


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a live (not zombie) process of this test's sleepers."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            ours = _SLEEPER.encode() in handle.read()
    except OSError:
        return False
    return ours and state != "Z"


@pytest.mark.slow  # about 12 s: a script's whole process tree run out to its timeout
@pytest.mark.parametrize("ending", ["timeout", "exit"])
def test_every_process_a_script_started_is_dead_after_its_run(
    hermes_cli: HermesCli, ending: str
) -> None:
    # Long enough for six processes to start on a loaded machine before the timeout; the run
    # that exits ends as soon as they have.
    timeout = 10 if ending == "timeout" else 60
    settings = {"approvals": {"allow": ["execute_code"]}, "code_execution": {"timeout": timeout}}
    hermes_cli.config.write_text(json.dumps(settings))
    folder = hermes_cli.root / "pids"
    folder.mkdir()
    then = "time.sleep(60)" if ending == "timeout" else "pass"
    code = _SPAWN_SIX_WAYS.format(folder=str(folder), sleeper=_SLEEPER, then=then)
    pids: dict[str, int] = {}
    try:
        data = _payload(_call_execute_code(hermes_cli, code))
        pids = {path.stem: int(path.read_text()) for path in folder.glob("*.pid")}
        assert sorted(pids) == sorted(SPAWN_METHODS), data
        assert data["status"] == ("timeout" if ending == "timeout" else "success"), data
        deadline = time.monotonic() + 10  # a margin for a loaded machine; passing takes ms
        while time.monotonic() < deadline and any(_alive(pid) for pid in pids.values()):
            time.sleep(0.05)
        survivors = sorted(name for name, pid in pids.items() if _alive(pid))
        assert survivors == [], f"{len(survivors)} of 6 spawn methods survive: {survivors}"
    finally:
        for path in folder.glob("*.pid"):
            pid = int(path.read_text() or 0)
            if pid and _alive(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.slow  # about 7 s: the kill's grace period waited out
def test_a_script_sending_itself_sigterm_again_and_again_does_not_put_off_the_kill(
    hermes_cli: HermesCli,
) -> None:
    # Past the script's start and its sleeper's, even on a loaded machine.
    settings = {"approvals": {"allow": ["execute_code"]}, "code_execution": {"timeout": 5}}
    hermes_cli.config.write_text(json.dumps(settings))
    pid_file = hermes_cli.root / "escaped.pid"
    code = f"""
        import os, signal, subprocess, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        subprocess.Popen(["setsid", "sh", "-c", "echo $$ > {pid_file}; exec sleep {_SLEEPER}"])
        while True:
            time.sleep(0.2)
            os.killpg(0, signal.SIGTERM)
    """
    pid = 0
    try:
        started = time.monotonic()
        data = _payload(_call_execute_code(hermes_cli, code))
        pid = int(pid_file.read_text())
        assert data["status"] == "timeout", data
        # Put off by each SIGTERM, the kill would never come (the payload's 90 s would end
        # it); the margin is for a loaded machine's start of the CLI and the script.
        assert time.monotonic() - started < 60
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.05)
        assert not _alive(pid)
    finally:
        if pid and _alive(pid):
            os.kill(pid, signal.SIGKILL)


# 8: what a run leaves in the cache is the user's alone -------------------------------------


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_saved_script_output_and_background_logs_are_private(hermes_cli: HermesCli) -> None:
    settings = {"approvals": {"allow": ["execute_code", "process_manage"]}}
    hermes_cli.config.write_text(json.dumps(settings))
    data = _payload(_call_execute_code(hermes_cli, "print('x' * 60_000)"))
    hermes_cli.run(
        "tools", "call", "process_manage", json.dumps({"action": "start", "command": "echo hi"})
    )

    saved = Path(data["output_file"])
    assert _mode(saved) == 0o600
    assert _mode(saved.parent) == 0o700
    logs = list((hermes_cli.cache_dir / "processes").glob("*/p*.log"))
    assert logs, "process_manage wrote no log"
    for log in logs:
        assert _mode(log) == 0o600, log
        assert _mode(log.parent) == 0o700, log.parent
    assert _mode(hermes_cli.cache_dir / "processes") == 0o700
