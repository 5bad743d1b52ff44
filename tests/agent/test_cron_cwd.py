"""A cron job's working directory (docs/automation.md): a job remembers the directory it was
made in (the process's for ``hermes cron create``, ``--cwd DIR`` to choose, the session's for
the ``cronjob`` tool) and its run's file tools work there, whatever directory ``hermes cron
run`` is started in; a directory gone since fails the run naming it and keeps the job; a store
made before the column runs its jobs in the process's directory, as it did. Real SQLite files,
``hermes cron`` in this process, the test kit's ``FakeModelServer`` as the model."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from hermes_core.agent import CronJobs
from hermes_core.testing import FakeModelServer, FakeToolCall, FakeTurn
from hermes_core.testing._cli_in_process import InProcessCli


@pytest.fixture
def cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


def _dirs(tmp_path: Path) -> tuple[Path, Path]:
    """Two directories, each with its own notes.txt."""
    made, elsewhere = tmp_path / "project-a", tmp_path / "elsewhere"
    for folder in (made, elsewhere):
        folder.mkdir()
        (folder / "notes.txt").write_text(f"notes of {folder.name}\n", encoding="utf-8")
    return made, elsewhere


def _env(cli: InProcessCli, server: FakeModelServer) -> dict[str, str]:
    config = {
        "model": {"provider": "openai", "model": "fake-model", "base_url": server.openai_base_url},
        "tools": {"tool_search": {"defer": []}},
    }
    cli.config.write_text(json.dumps(config), encoding="utf-8")
    return cli.variables(OPENAI_API_KEY="sk-fake-key-for-tests")


def _reads_notes() -> list[FakeTurn]:
    return [
        FakeTurn(tool_calls=[FakeToolCall("read_file", {"path": "notes.txt"})]),
        FakeTurn(text="Read them."),
    ]


def _tool_results(server: FakeModelServer) -> list[str]:
    return [str(m["content"]) for m in server.requests[-1].messages if m.get("role") == "tool"]


def test_a_job_made_by_the_cli_runs_in_the_directory_it_was_made_in(
    cli: InProcessCli, tmp_path: Path
) -> None:
    made, elsewhere = _dirs(tmp_path)
    with FakeModelServer(_reads_notes()) as server:
        env = _env(cli, server)
        cli.work = made
        cli.run("cron", "create", "every 1h", "Sum up the notes", "--name", "notes", env=env)
        cli.work = elsewhere  # hermes cron run started somewhere else
        done = cli.run("cron", "run", "notes", env=env)
        results = _tool_results(server)

    assert "delivered to" in done.stderr
    assert len(results) == 1
    assert "notes of project-a" in results[0]
    (job,) = CronJobs(cli.home).jobs()
    assert job.cwd == str(made)


def test_cwd_chooses_the_directory_and_cron_list_shows_it(
    cli: InProcessCli, tmp_path: Path
) -> None:
    made, elsewhere = _dirs(tmp_path)
    with FakeModelServer(_reads_notes()) as server:
        env = _env(cli, server)
        cli.work = made
        cli.run(
            "cron", "create", "every 1h", "Sum up", "--name", "x", "--cwd", "../elsewhere", env=env
        )
        listed = cli.run("cron", "list", env=env).stdout
        (shown,) = cli.json("cron", "list", "--json", env=env)
        cli.run("cron", "run", "x", env=env)
        results = _tool_results(server)

    assert shown["cwd"] == str(elsewhere)
    assert "CWD" in listed.splitlines()[0]
    assert str(elsewhere) in listed
    assert "notes of elsewhere" in results[0]


def test_a_cwd_that_is_no_directory_is_refused_at_create(cli: InProcessCli, tmp_path: Path) -> None:
    done = cli.run(
        "cron", "create", "every 1h", "Sum up", "--cwd", str(tmp_path / "nope"), ok=False
    )

    assert done.returncode == 2
    assert "cwd" in done.stderr
    assert str(tmp_path / "nope") in done.stderr
    assert CronJobs(cli.home).jobs() == []


def test_a_run_whose_directory_is_gone_fails_naming_it_and_the_job_stays(
    cli: InProcessCli, tmp_path: Path
) -> None:
    made, elsewhere = _dirs(tmp_path)
    with FakeModelServer(_reads_notes()) as server:
        env = _env(cli, server)
        cli.work = made
        cli.run("cron", "create", "every 1h", "Sum up the notes", "--name", "notes", env=env)
        shutil.rmtree(made)
        cli.work = elsewhere
        done = cli.run("cron", "run", "notes", env=env, ok=False)
        asked = len(server.requests)

    assert done.returncode == 1
    assert asked == 0  # no model run in another directory
    (run,) = CronJobs(cli.home).runs("notes")
    assert run.status == "failed"
    assert str(made) in run.detail
    assert "no longer exists" in run.detail
    (job,) = CronJobs(cli.home).jobs()
    assert (job.name, job.state) == ("notes", "scheduled")


_OLD_SCHEMA = """
CREATE TABLE jobs (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, schedule TEXT NOT NULL, prompt TEXT NOT NULL,
    toolsets TEXT, delivery TEXT NOT NULL, paused INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL, next_run REAL, lease_owner TEXT, lease_until REAL);
CREATE TABLE runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, job_id TEXT NOT NULL, due REAL, started REAL NOT NULL,
    finished REAL, owner TEXT NOT NULL, status TEXT NOT NULL, detail TEXT NOT NULL DEFAULT '',
    output TEXT NOT NULL DEFAULT '');
INSERT INTO jobs (id, name, schedule, prompt, delivery, created, next_run)
    VALUES ('old1', 'old', 'every 1h', 'Sum up the notes', 'file', 1800000000, 1800003600);
"""


def test_a_store_made_before_the_column_keeps_its_jobs_running_in_the_process_directory(
    cli: InProcessCli, tmp_path: Path
) -> None:
    made, elsewhere = _dirs(tmp_path)
    store = cli.home / "cron" / "jobs.db"
    store.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(store) as db:
        db.executescript(_OLD_SCHEMA)
    db.close()
    with FakeModelServer(_reads_notes()) as server:
        env = _env(cli, server)
        cli.work = elsewhere
        (shown,) = cli.json("cron", "list", "--json", env=env)
        cli.run("cron", "run", "old", env=env)
        results = _tool_results(server)
        cli.work = made
        cli.run("cron", "create", "every 1h", "New one", "--name", "new", env=env)

    assert shown["cwd"] is None
    assert "notes of elsewhere" in results[0]
    kept = {job.name: job.cwd for job in CronJobs(cli.home).jobs()}
    assert kept == {"old": None, "new": str(made)}


@pytest.mark.anyio
async def test_the_cronjob_tool_gives_a_job_its_sessions_directory(
    hermes_env: Any, tmp_path: Path
) -> None:
    from dataclasses import replace

    from hermes_core import Config
    from hermes_core.testing import make_host

    made, _ = _dirs(tmp_path)
    variables = {k: v for k, v in hermes_env.variables.items() if k != "HERMES_BUNDLED_PLUGINS"}
    config = Config.model_validate({"approvals": {"allow": ["cronjob"]}})
    host = make_host(config, replace(hermes_env, variables=variables))
    create = {"action": "create", "schedule": "every 1h", "prompt": "tidy up"}
    try:
        async with host.session(cwd=made, interactive=False) as session:
            result = await host.dispatch("cronjob", create, session)
    finally:
        host.close()

    assert result.error_code is None, result.text_content
    (job,) = CronJobs(hermes_env.home).jobs()
    assert job.cwd == str(made)
    assert result.structured is not None
    assert result.structured["cwd"] == str(made)


@pytest.mark.parametrize("stored", ["relative/dir", 42])
def test_a_cwd_edited_into_no_absolute_path_makes_the_job_damaged(
    tmp_path: Path, stored: object
) -> None:
    from hermes_core.agent import JobError

    jobs = CronJobs(tmp_path / "home")
    made = jobs.create("every 1h", "Sum up", cwd=tmp_path)
    with sqlite3.connect(jobs.path) as db:
        db.execute("UPDATE jobs SET cwd = ?", (stored,))
    db.close()

    (job,) = jobs.jobs()
    assert job.state == "damaged"
    assert job.damaged is not None
    assert job.damaged.startswith("cwd is ")
    with pytest.raises(JobError, match="damaged"):
        jobs.claim(made.id, "host:1", 60)
