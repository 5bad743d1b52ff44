"""A run's lease when its daemon was asleep (a laptop's lid shut, a clock jump) or stuck (a
SIGSTOP): on the daemon's own machine a run whose daemon still runs is taken back only once the
daemon renewed no lease for ``cron.lease`` seconds of the machine's awake time (a suspended
machine's sleep does not count), and a pid now another process's is not the daemon; another
machine's lease still runs out by time, and so does one an older hermes wrote
(docs/automation.md, "How jobs run"). A daemon that wakes to find its run taken back writes
nothing more of it.

Real processes (``sleep`` children as lease holders, ``hermes cron daemon`` SIGSTOPped past a
short ``cron.lease``), real SQLite files, the test kit's ``FakeModelServer`` as the model."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from hermes_core.agent import CronJobs
from hermes_core.testing import FakeModelServer, FakeTurn, HermesCli

pytestmark = pytest.mark.subprocess

T0 = 1_800_000_000.0
LEASE = 3.0  # cron.lease's least: a daemon asleep longer than this has a lease that ran out


@pytest.fixture
def jobs(tmp_path: Path) -> CronJobs:
    return CronJobs(tmp_path / "home")


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    """A live process of this machine, not this test's."""
    process = subprocess.Popen(["sleep", "600"])
    yield process
    process.kill()
    process.wait()


def here(pid: int) -> str:
    return f"{socket.gethostname()}:{pid}"


def test_a_live_holders_lease_that_ran_out_is_not_taken_back_and_is_once_it_dies(
    jobs: CronJobs, sleeper: subprocess.Popen[bytes]
) -> None:
    job = jobs.create("every 1m", "Sum up the logs", now=T0)
    (_, run), *_ = jobs.claim_due(here(sleeper.pid), 600, now=T0 + 60)

    # An hour of wall time unrenewed, but not ten minutes of this machine's awake time (its
    # clock put forward, or the machine suspended): asleep, not gone, not stuck.
    assert jobs.recover(now=T0 + 60 + 3600) == []
    assert jobs.claim_due("elsewhere:1", 60, now=T0 + 60 + 3600) == []  # never run twice
    assert [r.status for r in jobs.runs()] == ["running"]

    sleeper.kill()
    sleeper.wait()
    (failed,) = jobs.recover(now=T0 + 60 + 3601)
    assert (failed.id, failed.status) == (run.id, "failed")
    assert jobs.get(job.id).lease_owner is None


def test_a_live_holder_that_renewed_nothing_for_its_lease_of_awake_time_is_taken_back(
    jobs: CronJobs, sleeper: subprocess.Popen[bytes]
) -> None:
    # A daemon stopped (SIGSTOP) or stuck while the machine runs: before, it kept its run, and
    # the job never ran again while it lived.
    job = jobs.create("every 1m", "Sum up the logs", now=T0)
    (_, run), *_ = jobs.claim_due(here(sleeper.pid), 0.1, now=T0 + 60)
    time.sleep(0.2)  # its lease's awake time passes, unrenewed

    (failed,) = jobs.recover(now=T0 + 61)

    assert (failed.id, failed.status) == (run.id, "failed")
    assert f"the daemon {here(sleeper.pid)} still runs but renewed no lease" in failed.detail
    assert "stopped or stuck" in failed.detail
    assert jobs.get(job.id).lease_owner is None


def test_a_daemons_own_look_keeps_its_runs_whose_awake_time_ran_out(
    jobs: CronJobs, sleeper: subprocess.Popen[bytes]
) -> None:
    # Its loop looking again is its loop running again: its runs live, and it renews next.
    jobs.create("every 1m", "Sum up the logs", now=T0)
    jobs.claim_due(here(sleeper.pid), 0.1, now=T0 + 60)
    time.sleep(0.2)

    assert jobs.claim_due(here(sleeper.pid), 60, now=T0 + 61) == []
    assert [r.status for r in jobs.runs()] == ["running"]


def test_a_renewal_a_locked_store_kept_waiting_is_tried_again_at_once(tmp_path: Path) -> None:
    """A renewal that waited out the store's lock (another process writing past ``lock_wait``)
    was tried again a third of the lease later only, past the end of the lease's awake time:
    the live daemon's run could be taken back as stuck while it ran. Tried again at once, it
    renews as soon as the lock is let go."""
    import asyncio

    from hermes_core.agent._cron_lease import lease_over, owner_name
    from hermes_core.agent._cron_runs import leases_renewed

    lease = 9.0  # renewed every 3 s; the lock is held from 2.5 s to 7.5 s, waited on 4 s
    jobs = CronJobs(tmp_path / "home", lock_wait=4.0)
    jobs.create("every 1m", "Sum up the logs", now=T0)
    assert jobs.claim_due(owner_name(), lease, now=T0 + 60)
    claimed = time.monotonic()
    locker = sqlite3.connect(jobs.path, isolation_level=None, check_same_thread=False)

    def hold_the_lock() -> None:
        time.sleep(2.5)
        locker.execute("BEGIN IMMEDIATE")
        time.sleep(5.0)
        locker.execute("COMMIT")

    holder = threading.Thread(target=hold_the_lock)

    async def daemon() -> str | None:
        async with leases_renewed(jobs, owner_name(), lease):
            while time.monotonic() < claimed + lease + 0.6:  # past the first lease's end
                await asyncio.sleep(0.1)
            with sqlite3.connect(jobs.path) as db:
                db.row_factory = sqlite3.Row
                row = db.execute("SELECT * FROM jobs").fetchone()
            db.close()
            return lease_over(row, time.time())

    holder.start()
    try:
        over = asyncio.run(daemon())
    finally:
        holder.join()
        locker.close()

    assert over is None, over


def test_a_run_ending_while_a_renewal_checks_the_held_runs_stops_no_renewal(
    tmp_path: Path,
) -> None:
    """The daemon gives the renewal its running tasks' ids as a live view of a dict
    (``self._running.keys``); read in the renewal's thread while a run ended on the loop, the
    view raised ``dictionary changed size during iteration``: that renewal and every later one
    were lost (the daemon's other runs taken back as stuck once their lease ran out) and the
    daemon's stop ended in that traceback. The ids are read on the loop, before the thread."""
    import asyncio

    from hermes_core.agent._cron_lease import owner_name
    from hermes_core.agent._cron_runs import leases_renewed

    lease = 0.9  # renewed every 0.3 s
    jobs = CronJobs(tmp_path / "home")
    jobs.create("every 1m", "Sum up the logs", now=time.time() - 120)
    ((_, run),) = jobs.claim_due(owner_name(), lease)
    checking, ended = threading.Event(), threading.Event()

    class RunId(int):
        """A run id that lets the loop end a run while the renewal's thread checks it."""

        def __conform__(self, protocol: object) -> int:  # sqlite3 asks it, binding the id
            if not checking.is_set():
                checking.set()
                ended.wait(10)
            return int(self)

    running: dict[int, None] = {RunId(run.id): None, RunId(run.id + 1): None}

    def lease_until() -> float:
        with closing(sqlite3.connect(jobs.path)) as db:
            return float(db.execute("SELECT lease_until FROM jobs").fetchone()[0])

    async def daemon() -> list[float]:
        async with leases_renewed(jobs, owner_name(), lease, held=running.keys):
            await asyncio.to_thread(checking.wait, 10)
            running.pop(run.id + 1)  # a run ends on the loop
            ended.set()
            seen = [lease_until()]
            deadline = time.monotonic() + 5  # the renewal under way, then the next
            while len(seen) < 3 and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
                if (now := lease_until()) != seen[-1]:
                    seen.append(now)
            return seen

    seen = asyncio.run(daemon())

    assert len(seen) == 3, seen
    assert seen[0] < seen[1] < seen[2], seen


def test_a_lease_naming_a_pid_now_another_process_is_taken_back_before_it_runs_out(
    jobs: CronJobs, sleeper: subprocess.Popen[bytes]
) -> None:
    jobs.create("every 1m", "Sum up the logs", now=T0)
    (_, run), *_ = jobs.claim_due(here(os.getpid()), 3600, now=T0 + 60)
    with sqlite3.connect(jobs.path) as db:  # the daemon died, its pid went to another process
        db.execute("UPDATE jobs SET lease_owner = ?", (here(sleeper.pid),))
        db.execute("UPDATE runs SET owner = ?", (here(sleeper.pid),))
    db.close()

    (failed,) = jobs.recover(now=T0 + 61)  # the lease is far from running out

    assert (failed.id, failed.status) == (run.id, "failed")
    assert "stopped during the run" in failed.detail


def test_a_lease_an_older_hermes_wrote_keeps_todays_rule(
    jobs: CronJobs, sleeper: subprocess.Popen[bytes]
) -> None:
    jobs.path.parent.mkdir(parents=True)
    with sqlite3.connect(jobs.path) as db:
        db.executescript(
            f"""
            CREATE TABLE jobs (
                id TEXT PRIMARY KEY, name TEXT NOT NULL, schedule TEXT NOT NULL,
                prompt TEXT NOT NULL, toolsets TEXT, delivery TEXT NOT NULL,
                paused INTEGER NOT NULL DEFAULT 0, created REAL NOT NULL, next_run REAL,
                lease_owner TEXT, lease_until REAL, cwd TEXT, model TEXT);
            CREATE TABLE runs (
                id INTEGER PRIMARY KEY AUTOINCREMENT, job_id TEXT NOT NULL, due REAL,
                started REAL NOT NULL, finished REAL, owner TEXT NOT NULL, status TEXT NOT NULL,
                detail TEXT NOT NULL DEFAULT '', output TEXT NOT NULL DEFAULT '');
            INSERT INTO jobs (id, name, schedule, prompt, delivery, created, next_run,
                lease_owner, lease_until)
                VALUES ('old1', 'old', 'every 1h', 'Sum up', 'file', {T0}, {T0 + 3600},
                '{here(sleeper.pid)}', {T0 + 60});
            INSERT INTO runs (job_id, started, owner, status)
                VALUES ('old1', {T0}, '{here(sleeper.pid)}', 'running');
            """
        )
    db.close()

    assert jobs.recover(now=T0 + 30) == []  # its holder lives and its lease runs
    (failed,) = jobs.recover(now=T0 + 61)  # no start time to tell: it ran out, as before
    assert failed.status == "failed"


def test_another_machines_lease_still_runs_out_by_time(jobs: CronJobs) -> None:
    jobs.create("every 1m", "Sum up the logs", now=T0)
    jobs.claim_due("other-machine:1", 90, now=T0 + 60)

    assert jobs.recover(now=T0 + 100) == []
    (failed,) = jobs.recover(now=T0 + 151)
    assert failed.status == "failed"


def test_a_run_taken_back_meanwhile_is_not_finished_over_nor_its_lease_released(
    jobs: CronJobs,
) -> None:
    job = jobs.create("every 1m", "Sum up the logs", now=T0)
    (_, run), *_ = jobs.claim_due("other-machine:1", 30, now=T0 + 60)
    (taken,) = jobs.recover(now=T0 + 100)  # asleep past its lease
    assert jobs.claim_due("other-machine:2", 30, now=T0 + 120) != []

    jobs.finish(run, "ok", "delivered to stdout", "the answer")  # the first daemon wakes

    first, second = sorted(jobs.runs(), key=lambda r: r.id)
    assert (first.status, first.detail) == ("failed", taken.detail)
    assert second.status == "running"
    assert jobs.get(job.id).lease_owner == "other-machine:2"


# Real daemons -------------------------------------------------------------------------------


def configure(cli: HermesCli, server: FakeModelServer) -> dict[str, str]:
    config = {
        "model": {"provider": "openai", "model": "fake-model", "base_url": server.openai_base_url},
        "cron": {"poll_interval": 1, "lease": LEASE},
    }
    cli.config.write_text(json.dumps(config), encoding="utf-8")
    return cli.variables(OPENAI_API_KEY="sk-fake-key-for-tests")


def wait_until(condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


class Daemon:
    """One ``hermes cron daemon``, its stderr kept in a file."""

    def __init__(self, cli: HermesCli, env: dict[str, str]) -> None:
        self.log = cli.root / "daemon.log"
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                cli.command("cron", "daemon"),
                env=env,
                cwd=cli.work,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def lines(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def end(self) -> None:
        self.process.send_signal(signal.SIGCONT)
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def lease_until(jobs: CronJobs) -> float:
    with sqlite3.connect(jobs.path) as db:
        (until,) = db.execute("SELECT lease_until FROM jobs").fetchone()
    db.close()
    return float(until)


def asleep_past_its_lease(
    cli: HermesCli, env: dict[str, str], server: FakeModelServer
) -> tuple[Daemon, CronJobs, str]:
    """A daemon with a run under way (its answer held), SIGSTOPped until its lease ran out."""
    cli.run("cron", "create", "every 1h", "Write the report", env=env)
    jobs = CronJobs(cli.home)
    (job,) = jobs.jobs()
    jobs.trigger(job.id)
    daemon = Daemon(cli, env)
    server.wait_for_requests(1, timeout=60)
    daemon.process.send_signal(signal.SIGSTOP)
    until = lease_until(jobs)
    wait_until(lambda: time.time() > until + 1, 30, "the lease to run out")
    return daemon, jobs, job.id


@pytest.mark.slow
def test_a_daemon_stopped_past_its_lease_has_its_run_taken_back_and_writes_nothing_over_it(
    hermes_cli: HermesCli,
) -> None:
    # Before, a daemon SIGSTOPped (or stuck) kept its run for as long as it lived: `hermes cron
    # list` said running, `hermes cron run` was refused, and the job never ran again.
    held = threading.Event()
    turns = [FakeTurn(text="the report", gate=held), FakeTurn(text="the second report")]
    with FakeModelServer(turns) as server:
        env = configure(hermes_cli, server)
        daemon, jobs, job = asleep_past_its_lease(hermes_cli, env, server)
        try:
            listed = json.loads(hermes_cli.run("cron", "list", "--json", env=env).stdout)
            again = hermes_cli.run("cron", "run", job, env=env, ok=False)
            daemon.process.send_signal(signal.SIGCONT)
            held.set()
            wait_until(lambda: "was taken back" in daemon.lines(), 60, "the daemon to see it")
        finally:
            daemon.end()
        requests = len(server.requests)

    assert listed[0]["state"] != "running", daemon.lines()
    assert listed[0]["last_run"]["status"] == "failed"
    assert "renewed no lease" in listed[0]["last_run"]["detail"]
    assert again.returncode == 0, again.stderr
    first, second = sorted(jobs.runs(), key=lambda run: run.id)
    assert (first.status, first.output) == ("failed", ""), daemon.lines()
    assert "stopped or stuck" in first.detail
    assert (second.status, second.output) == ("ok", "the second report")
    assert requests == 2
    assert jobs.get(job).lease_owner is None


@pytest.mark.slow
def test_a_daemon_that_wakes_to_its_run_taken_back_writes_nothing_of_it(
    hermes_cli: HermesCli,
) -> None:
    held = threading.Event()
    with FakeModelServer([FakeTurn(text="the report", gate=held)]) as server:
        env = configure(hermes_cli, server)
        daemon, jobs, job = asleep_past_its_lease(hermes_cli, env, server)
        try:
            with sqlite3.connect(jobs.path) as db:  # what an older hermes's look does
                db.execute(
                    "UPDATE runs SET status = 'failed', finished = ?, detail = 'taken back'",
                    (time.time(),),
                )
                db.execute("UPDATE jobs SET lease_owner = NULL, lease_until = NULL")
            db.close()
            daemon.process.send_signal(signal.SIGCONT)
            held.set()
            wait_until(lambda: "was taken back" in daemon.lines(), 60, "the daemon to see it")
        finally:
            daemon.end()

    (run,) = jobs.runs()
    assert (run.status, run.detail, run.output) == ("failed", "taken back", ""), daemon.lines()
    assert not (hermes_cli.home / "cron" / "output" / job).exists()
    assert jobs.get(job).lease_owner is None


HOLDER = """
import sys, time
from pathlib import Path

from hermes_core.agent import CronJobs
from hermes_core.agent._cron_lease import owner_name

jobs = CronJobs(Path(sys.argv[1]))
jobs.create("every 1m", "Sum up the logs", now=float(sys.argv[2]))
jobs.claim_due(owner_name(), 3600, now=float(sys.argv[2]) + 60)
print(owner_name(), flush=True)
time.sleep(600)
"""


def free_pid() -> int:
    """A pid no process of this namespace has."""
    for pid in range(30000, 1000, -1):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        except PermissionError:
            continue
    raise AssertionError("no free pid below 30000")


@pytest.mark.parametrize("pid_here", ["another process", "no process"])
def test_a_lease_held_in_another_pid_namespace_of_the_same_host_name_keeps_the_time_rule(
    jobs: CronJobs, pid_here: str
) -> None:
    # A container sharing the host's name (docker --network host) and the home: its pids are
    # not this namespace's, so neither its start nor whether it runs can be checked here;
    # taking its run back while it runs would run the job twice.
    home, pid = str(jobs.path.parent.parent), 1 if pid_here == "another process" else free_pid()
    script = f'echo {pid - 1} > /proc/sys/kernel/ns_last_pid; "$@"' if pid > 1 else 'exec "$@"'
    command = [sys.executable, "-c", HOLDER, home, str(T0)]
    # As root, a pid namespace of its own; otherwise inside a user namespace of its own, where
    # the test is root enough to make one.
    user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
    unshare = [
        "unshare",
        *user,
        "--pid",
        "--fork",
        "--kill-child",
        "--mount-proc",
        "sh",
        "-c",
        script,
        "sh",
        *command,
    ]
    with subprocess.Popen(unshare, stdout=subprocess.PIPE) as holder:
        try:
            assert holder.stdout is not None
            said = holder.stdout.readline().decode().strip()
            if not said and holder.wait() != 0:
                pytest.fail(
                    "`unshare --pid --fork --mount-proc` could not make a pid namespace: run the "
                    "tests as root, or allow unprivileged user namespaces "
                    "(sysctl kernel.unprivileged_userns_clone=1); util-linux provides unshare"
                )
            assert said == here(pid)

            assert jobs.recover(now=T0 + 61) == []  # alive there, its lease far from running out
            assert [r.status for r in jobs.runs()] == ["running"]
            (failed,) = jobs.recover(now=T0 + 60 + 3601)  # ran out unrenewed: as elsewhere
            assert failed.status == "failed"
        finally:
            holder.kill()


def test_a_lease_of_a_previous_boot_is_over_though_its_pid_runs_again(
    jobs: CronJobs, sleeper: subprocess.Popen[bytes]
) -> None:
    jobs.create("every 1m", "Sum up the logs", now=T0)
    (_, run), *_ = jobs.claim_due(here(sleeper.pid), 3600, now=T0 + 60)
    with sqlite3.connect(jobs.path) as db:  # written before this machine's last reboot
        db.execute("UPDATE jobs SET lease_start = 'a-boot-before:pid:[1]:123'")
    db.close()

    (failed,) = jobs.recover(now=T0 + 61)  # far from running out: its daemon went with the boot

    assert (failed.id, failed.status) == (run.id, "failed")
