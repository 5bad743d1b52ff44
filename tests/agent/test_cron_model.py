"""A cron job's own model (docs/automation.md): ``hermes cron create --model NAME`` stores
NAME, ``hermes cron list`` (and ``--json``) shows it, and its runs ask model NAME of the
configured provider, the run's transcript header naming it; a job without one runs with
``model.model`` at run time, as before. NAME is refused by the rule of ``hermes run --model``
(blank, two words: exit 2, nothing stored); the store caps its length and reads a model edited
into no name as a damaged row, which never runs. The ``cronjob`` tool cannot set a job's model
(the spend is the person's). A store made before the column gets it, its jobs none.

Real ``hermes`` processes, real SQLite files, the test kit's ``FakeModelServer`` as the model."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_core.agent import CronJobs, JobError
from hermes_core.testing import FakeModelServer, FakeTurn, HermesCli

pytestmark = pytest.mark.subprocess

CONFIGURED = "fake-model"


class Served:
    """A home whose ``model`` section is the ``openai`` provider at ``server``."""

    def __init__(self, cli: HermesCli, server: FakeModelServer, model: str | None) -> None:
        self.cli = cli
        self.server = server
        section = {"provider": "openai", "base_url": server.openai_base_url}
        if model is not None:
            section["model"] = model
        cli.config.write_text(json.dumps({"model": section}), encoding="utf-8")
        self.env = cli.variables(OPENAI_API_KEY="sk-fake-key-for-tests")

    def run(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        return self.cli.run(*args, ok=ok, env=self.env)

    def models(self) -> list[str]:
        return [request.body["model"] for request in self.server.requests]

    def header_models(self) -> list[str]:
        """The ``model`` of every transcript's header lines, sorted."""
        found = []
        for path in (self.cli.home / "sessions").glob("*.jsonl"):
            for line in path.read_text(encoding="utf-8").splitlines():
                record = json.loads(line)
                if record["type"] == "session":
                    found.append(record["model"])
        return sorted(found)


@pytest.fixture
def served(hermes_cli: HermesCli) -> Iterator[Served]:
    with FakeModelServer() as server:
        yield Served(hermes_cli, server, CONFIGURED)


def test_a_job_with_a_model_runs_on_it_and_list_and_the_transcript_name_it(
    served: Served,
) -> None:
    served.server.add(FakeTurn(text="Summed up."))
    made = served.run("cron", "create", "every 1h", "Sum up", "--name", "cheap", "--model", "small")
    listed = served.run("cron", "list").stdout
    (shown,) = json.loads(served.run("cron", "list", "--json").stdout)
    done = served.run("cron", "run", "cheap")

    assert "created job" in made.stdout
    assert "MODEL" in listed.splitlines()[0]
    assert "small" in listed.splitlines()[1].split()
    assert shown["model"] == "small"
    assert "delivered to" in done.stderr
    assert served.models() == ["small"]
    assert served.header_models() == ["small"]
    (job,) = CronJobs(served.cli.home).jobs()
    assert job.model == "small"


def test_a_job_without_a_model_runs_on_model_model_at_run_time(served: Served) -> None:
    served.server.add(FakeTurn(text="Summed up."))
    served.run("cron", "create", "every 1h", "Sum up", "--name", "plain")
    (shown,) = json.loads(served.run("cron", "list", "--json").stdout)
    listed = served.run("cron", "list").stdout
    served.run("cron", "run", "plain")

    assert shown["model"] is None
    assert listed.splitlines()[0].split()[-1] == "MODEL"
    assert listed.splitlines()[1].split()[-1] == "-"
    assert served.models() == [CONFIGURED]
    assert served.header_models() == [CONFIGURED]


def test_a_job_with_a_model_runs_when_model_model_is_not_set(hermes_cli: HermesCli) -> None:
    with FakeModelServer([FakeTurn(text="Summed up.")]) as server:
        served = Served(hermes_cli, server, None)
        served.run("cron", "create", "every 1h", "Sum up", "--name", "own", "-m", "small")
        done = served.run("cron", "run", "own")

    assert "delivered to" in done.stderr
    assert served.models() == ["small"]


@pytest.mark.parametrize("name", ["two words", "  "])
def test_a_model_name_run_model_refuses_is_refused_and_nothing_is_stored(
    served: Served, name: str
) -> None:
    done = served.run("cron", "create", "every 1h", "Sum up", "--model", name, ok=False)

    assert done.returncode == 2
    assert "--model takes one name: --model NAME" in done.stderr
    assert CronJobs(served.cli.home).jobs() == []


def test_a_model_name_longer_than_the_cap_is_refused_naming_the_field(served: Served) -> None:
    done = served.run("cron", "create", "every 1h", "Sum up", "--model", "m" * 201, ok=False)

    assert done.returncode == 2
    assert "model" in done.stderr
    assert "201 characters; at most 200" in done.stderr
    assert CronJobs(served.cli.home).jobs() == []


@pytest.mark.parametrize("model", ["", "two words", "bad\x1bname", 42, "m" * 201])
def test_the_store_refuses_a_model_that_is_no_name(tmp_path: Path, model: object) -> None:
    jobs = CronJobs(tmp_path / "home")
    with pytest.raises(JobError, match=r"^model: "):
        jobs.create("every 1h", "Sum up", model=model)
    assert jobs.jobs() == []


def test_the_store_keeps_a_model_name_without_the_space_around_it(tmp_path: Path) -> None:
    jobs = CronJobs(tmp_path / "home")
    made = jobs.create("every 1h", "Sum up", model=" small\n")
    assert made.model == "small"
    assert made.to_json()["model"] == "small"


@pytest.mark.parametrize(
    ("stored", "shown"),
    # a column of TEXT keeps a number as text ('42'): bytes are what is stored as no text
    [(b"blob", "b'blob'"), ("two words", "'two words'"), ("m" * 201, "'mmm"), (" x", "' x'")],
)
def test_a_model_edited_into_no_name_makes_the_job_damaged_and_it_never_runs(
    tmp_path: Path, stored: object, shown: str
) -> None:
    jobs = CronJobs(tmp_path / "home")
    made = jobs.create("every 1h", "Sum up", model="small")
    with sqlite3.connect(jobs.path) as db:
        db.execute("UPDATE jobs SET model = ?", (stored,))
    db.close()

    (job,) = jobs.jobs()
    assert job.state == "damaged"
    assert job.damaged is not None
    assert job.damaged.startswith(f"model is {shown}")
    assert "not a model name" in job.damaged
    assert job.model is None
    with pytest.raises(JobError, match="damaged"):
        jobs.claim(made.id, "host:1", 60)
    assert jobs.claim_due("host:1", 60, now=time.time() + 7200) == []
    (paused,) = jobs.jobs()
    assert paused.paused


_OLD_STORES = {
    "before cwd": "",
    "before model": ", cwd TEXT",
}


@pytest.mark.parametrize("columns", list(_OLD_STORES.values()), ids=list(_OLD_STORES))
def test_a_store_made_before_the_column_gets_it_and_its_jobs_run_on_model_model(
    served: Served, columns: str
) -> None:
    store = served.cli.home / "cron" / "jobs.db"
    store.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(store) as db:
        db.executescript(
            f"""
            CREATE TABLE jobs (
                id TEXT PRIMARY KEY, name TEXT NOT NULL, schedule TEXT NOT NULL,
                prompt TEXT NOT NULL, toolsets TEXT, delivery TEXT NOT NULL,
                paused INTEGER NOT NULL DEFAULT 0, created REAL NOT NULL, next_run REAL,
                lease_owner TEXT, lease_until REAL{columns});
            CREATE TABLE runs (
                id INTEGER PRIMARY KEY AUTOINCREMENT, job_id TEXT NOT NULL, due REAL,
                started REAL NOT NULL, finished REAL, owner TEXT NOT NULL, status TEXT NOT NULL,
                detail TEXT NOT NULL DEFAULT '', output TEXT NOT NULL DEFAULT '');
            INSERT INTO jobs (id, name, schedule, prompt, delivery, created, next_run)
                VALUES ('old1', 'old', 'every 1h', 'Sum up', 'file', 1800000000, 1800003600);
            """
        )
    db.close()
    served.server.add(FakeTurn(text="Old."), FakeTurn(text="New."))
    (shown,) = json.loads(served.run("cron", "list", "--json").stdout)
    served.run("cron", "run", "old")
    served.run("cron", "create", "every 1h", "Sum up", "--name", "new", "--model", "small")
    served.run("cron", "run", "new")

    assert shown["model"] is None
    assert shown["state"] == "scheduled"
    assert served.models() == [CONFIGURED, "small"]
    kept = {job.name: job.model for job in CronJobs(served.cli.home).jobs()}
    assert kept == {"old": None, "new": "small"}


@pytest.mark.anyio
async def test_the_cronjob_tool_cannot_set_a_jobs_model(hermes_env: Any) -> None:
    from dataclasses import replace

    from hermes_core import Config
    from hermes_core.testing import make_host

    variables = {k: v for k, v in hermes_env.variables.items() if k != "HERMES_BUNDLED_PLUGINS"}
    config = Config.model_validate({"approvals": {"allow": ["cronjob"]}})
    host = make_host(config, replace(hermes_env, variables=variables))
    create = {"action": "create", "schedule": "every 1h", "prompt": "tidy up"}
    try:
        (tool,) = [tool for tool in host.registry.tools() if tool.name == "cronjob"]
        async with host.session(interactive=False) as session:
            refused = await host.dispatch("cronjob", {**create, "model": "big"}, session)
            made = await host.dispatch("cronjob", create, session)
    finally:
        host.close()

    assert "model" not in tool.parameters["properties"]
    assert refused.error_code is not None
    assert "model" in refused.text_content
    assert made.error_code is None, made.text_content
    (job,) = CronJobs(hermes_env.home).jobs()
    assert job.model is None
    assert made.structured is not None
    assert made.structured["model"] is None


def test_the_daemon_runs_each_job_on_its_own_model(served: Served) -> None:
    served.server.add(FakeTurn(text="One."), FakeTurn(text="Two."))
    served.run("cron", "create", "every 1h", "Sum up", "--name", "own", "--model", "small")
    served.run("cron", "create", "every 1h", "Sum up", "--name", "plain")
    jobs = CronJobs(served.cli.home)
    for job in ("own", "plain"):
        jobs.trigger(job)
    config = json.loads(served.cli.config.read_text(encoding="utf-8"))
    config["cron"] = {"poll_interval": 1, "lease": 30}
    served.cli.config.write_text(json.dumps(config), encoding="utf-8")
    log = served.cli.root / "daemon.log"
    with log.open("wb") as out:
        daemon = subprocess.Popen(
            served.cli.command("cron", "daemon"),
            env=served.env,
            cwd=served.cli.work,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60  # only a guard against a daemon that never runs them
        while [run.status for run in jobs.runs()] != ["ok", "ok"]:
            assert daemon.poll() is None, log.read_text(encoding="utf-8")
            assert time.monotonic() < deadline, log.read_text(encoding="utf-8")
            time.sleep(0.2)
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)

    assert sorted(served.models()) == [CONFIGURED, "small"]
    assert served.header_models() == [CONFIGURED, "small"]


def test_a_run_whose_own_model_the_server_refuses_says_it_is_the_jobs_model(
    served: Served,
) -> None:
    served.server.add(FakeTurn(error=404, error_message="The model `nosuch` does not exist"))
    served.run("cron", "create", "every 1h", "Sum up", "--name", "own", "--model", "nosuch")
    (job,) = CronJobs(served.cli.home).jobs()
    done = served.run("cron", "run", "own", ok=False)
    (run,) = CronJobs(served.cli.home).runs()

    assert done.returncode == 1
    assert "not found (HTTP 404)" in run.detail
    said = (
        "this job asks its own model 'nosuch', not model.model: to change it, "
        f"hermes cron edit {job.id} --model NAME (--model -: model.model)"
    )
    assert run.detail.endswith(said)
    assert said in done.stderr


def test_the_daemon_starts_without_model_model_and_only_a_job_without_a_model_fails(
    hermes_cli: HermesCli,
) -> None:
    with FakeModelServer([FakeTurn(text="Summed up.")]) as server:
        served = Served(hermes_cli, server, None)
        served.run("cron", "create", "every 1h", "Sum up", "--name", "own", "--model", "small")
        served.run("cron", "create", "every 1h", "Sum up", "--name", "plain")
        jobs = CronJobs(served.cli.home)
        ids = {job.name: job.id for job in jobs.jobs()}
        for job in ("own", "plain"):
            jobs.trigger(job)
        config = json.loads(served.cli.config.read_text(encoding="utf-8"))
        config["cron"] = {"poll_interval": 1, "lease": 30}
        served.cli.config.write_text(json.dumps(config), encoding="utf-8")
        log = served.cli.root / "daemon.log"
        with log.open("wb") as out:
            daemon = subprocess.Popen(
                served.cli.command("cron", "daemon"),
                env=served.env,
                cwd=served.cli.work,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        try:
            deadline = time.monotonic() + 60  # only a guard against a daemon that never runs them
            while sorted(run.status for run in jobs.runs()) != ["failed", "ok"]:
                assert daemon.poll() is None, log.read_text(encoding="utf-8")
                assert time.monotonic() < deadline, log.read_text(encoding="utf-8")
                time.sleep(0.2)
            running = daemon.poll() is None
        finally:
            daemon.terminate()
            daemon.wait(timeout=30)

    assert running
    (own,) = jobs.runs(ids["own"])
    (plain,) = jobs.runs(ids["plain"])
    assert own.status == "ok"
    assert plain.detail == (
        "the job cannot run: model: this job names no model and model.model is not set in the "
        "daemon's configuration: set it (hermes config set model.model NAME) and restart the "
        f"daemon, or give the job one (hermes cron edit {ids['plain']} --model NAME)"
    )
    assert plain.detail in log.read_text(encoding="utf-8")
    assert served.models() == ["small"]
