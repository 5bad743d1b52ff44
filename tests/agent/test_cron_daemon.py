"""``hermes cron daemon`` as real processes (the process boundary is the point: two daemons on
one home, a daemon SIGKILLed mid-run), with the test kit's ``FakeModelServer`` as the model (no
model can run here). The store's rules are checked fast in ``test_cron.py``; these take
minutes or seconds of wall time and are marked slow."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_core.agent import CronJobs, CronRun
from hermes_core.testing import FakeModelServer, FakeTurn, HermesCli
from hermes_core.testing._fake_model import RecordedRequest

pytestmark = [pytest.mark.subprocess, pytest.mark.slow]


class Daemons:
    """``hermes cron daemon`` processes of one home, their stderr kept in files."""

    def __init__(self, cli: HermesCli, env: dict[str, str]) -> None:
        self.cli = cli
        self.env = env
        self.processes: list[subprocess.Popen[bytes]] = []

    def start(self) -> subprocess.Popen[bytes]:
        with (self.cli.root / f"daemon-{len(self.processes)}.log").open("wb") as log:
            process = subprocess.Popen(
                self.cli.command("cron", "daemon"),
                env=self.env,
                cwd=self.cli.work,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self.processes.append(process)
        return process

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def logs(self) -> str:
        return "\n".join(
            (self.cli.root / f"daemon-{n}.log").read_text(encoding="utf-8", errors="replace")
            for n in range(len(self.processes))
        )


@pytest.fixture
def daemons(hermes_cli: HermesCli) -> Iterator[list[Daemons]]:
    made: list[Daemons] = []
    yield made
    for group in made:
        group.stop()


def configure(cli: HermesCli, server: FakeModelServer, poll: float) -> dict[str, str]:
    config = {
        "model": {"provider": "openai", "model": "fake-model", "base_url": server.openai_base_url},
        "cron": {"poll_interval": poll, "lease": 30},
    }
    cli.config.write_text(json.dumps(config), encoding="utf-8")
    return cli.variables(OPENAI_API_KEY="sk-fake-key-for-tests")


def wait_until(condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def answers() -> Any:
    count = iter(range(1, 1000))
    lock = threading.Lock()

    def respond(request: RecordedRequest) -> FakeTurn:
        with lock:
            return FakeTurn(text=f"report {next(count)}")

    return respond


@pytest.mark.timeout(480)
def test_a_job_every_minute_runs_three_times_in_three_minutes_once_per_tick_under_two_daemons(
    hermes_cli: HermesCli, daemons: list[Daemons]
) -> None:
    with FakeModelServer(responder=answers()) as server:
        env = configure(hermes_cli, server, poll=5)
        hermes_cli.run("cron", "create", "* * * * *", "Write the report", env=env)
        jobs = CronJobs(hermes_cli.home)
        (job,) = jobs.jobs()
        window_end = job.created + 180  # exactly 3 minute boundaries in (created, created + 180]
        group = Daemons(hermes_cli, env)
        daemons.append(group)
        group.start()
        group.start()

        def in_window() -> list[CronRun]:
            return [r for r in jobs.runs(limit=100) if r.due is not None and r.due <= window_end]

        wait_until(lambda: time.time() > window_end + 1, 240, "three minutes")
        wait_until(
            lambda: len(in_window()) >= 3 and all(r.status != "running" for r in in_window()),
            90,
            "the third run to end",
        )
        group.stop()
        logs = group.logs()

    runs = in_window()
    assert len(runs) == 3, logs
    assert [run.status for run in runs] == ["ok"] * 3, logs
    dues = [run.due for run in jobs.runs(limit=100)]
    assert len(dues) == len(set(dues))  # no tick ran twice, whichever daemon took it
    assert len({run.owner for run in jobs.runs(limit=100)}) >= 1
    delivered = sorted((hermes_cli.home / "cron" / "output" / job.id).glob("*.md"))
    assert len(delivered) == len(jobs.runs(limit=100)) >= 3
    texts = {path.read_text(encoding="utf-8").strip() for path in delivered}
    assert len(texts) == len(delivered)  # each run's own answer
    assert all(text.startswith("report ") for text in texts)
    assert logs.count("started (") == 2


def test_a_daemon_killed_mid_run_leaves_the_run_failed_and_the_job_runnable(
    hermes_cli: HermesCli, daemons: list[Daemons]
) -> None:
    held = threading.Event()
    with FakeModelServer([FakeTurn(text="never sent", gate=held)]) as server:
        env = configure(hermes_cli, server, poll=1)
        hermes_cli.run("cron", "create", "every 2s", "Write the report", env=env)
        jobs = CronJobs(hermes_cli.home)
        group = Daemons(hermes_cli, env)
        daemons.append(group)
        first = group.start()
        server.wait_for_requests(1, timeout=60)  # the run is under way, its answer held
        (running,) = jobs.runs()
        assert running.status == "running"

        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
        listed = json.loads(hermes_cli.run("cron", "list", "--json", env=env).stdout)
        (failed,) = jobs.runs()

        assert listed[0]["state"] == "scheduled"  # runnable, no lease left
        assert (failed.id, failed.status) == (running.id, "failed")
        assert "stopped during the run" in failed.detail

        server.add(FakeTurn(text="report after the kill"))
        group.start()
        wait_until(lambda: any(r.status == "ok" for r in jobs.runs()), 60, "a run after the kill")
        held.set()
        group.stop()

    ok = [run for run in jobs.runs() if run.status == "ok"]
    assert ok[0].output == "report after the kill"


def test_stopping_the_daemon_stops_its_run_and_logs_it_failed(
    hermes_cli: HermesCli, daemons: list[Daemons], tmp_path: Path
) -> None:
    held = threading.Event()
    with FakeModelServer([FakeTurn(text="never sent", gate=held)]) as server:
        env = configure(hermes_cli, server, poll=1)
        hermes_cli.run("cron", "create", "every 1s", "Write the report", env=env)
        group = Daemons(hermes_cli, env)
        daemons.append(group)
        process = group.start()
        server.wait_for_requests(1, timeout=60)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
        held.set()

    (run,) = CronJobs(hermes_cli.home).runs()
    assert (run.status, run.detail) == ("failed", "the daemon was stopped during the run")
    assert "stopped" in group.logs()


def test_the_daemon_runs_a_job_in_its_directory_and_loads_none_of_its_project_plugins(
    hermes_cli: HermesCli, daemons: list[Daemons], tmp_path: Path
) -> None:
    """A job made for another directory (``--cwd``) reads that directory's files, wherever the
    daemon was started; that directory's project plugins are not loaded (the host is the
    daemon's, built in its own directory; the gate is not opened by a job)."""
    from hermes_core.testing import FakeToolCall, write_dir_plugin

    project = tmp_path / "project-a"
    (project / ".git").mkdir(parents=True)
    (project / "notes.txt").write_text("notes of project-a\n", encoding="utf-8")
    (hermes_cli.work / "notes.txt").write_text("notes of the daemon's directory\n", "utf-8")
    marker = tmp_path / "spy-loaded"
    spy = f"from pathlib import Path\nPath({str(marker)!r}).write_text('loaded')\n"
    write_dir_plugin(project / ".hermes" / "plugins", "spy", spy)
    turns = [
        FakeTurn(tool_calls=[FakeToolCall("read_file", {"path": "notes.txt"})]),
        FakeTurn(text="Read them."),
    ]
    with FakeModelServer(turns) as server:
        env = configure(hermes_cli, server, poll=1)
        config = json.loads(hermes_cli.config.read_text(encoding="utf-8"))
        config["tools"] = {"tool_search": {"defer": []}}
        config["plugins"] = {"enabled": ["spy"]}
        hermes_cli.config.write_text(json.dumps(config), encoding="utf-8")
        hermes_cli.run("cron", "create", "every 1h", "Sum up", "--cwd", str(project), env=env)
        jobs = CronJobs(hermes_cli.home)
        (job,) = jobs.jobs()
        jobs.trigger(job.id)
        group = Daemons(hermes_cli, env)
        daemons.append(group)
        group.start()
        wait_until(lambda: any(r.status != "running" for r in jobs.runs()), 60, "the run")
        group.stop()
        results = [m for m in server.requests[-1].messages if m.get("role") == "tool"]

    (run,) = jobs.runs()
    assert run.status == "ok", group.logs()
    assert "notes of project-a" in str(results[0]["content"])
    assert not marker.exists()
