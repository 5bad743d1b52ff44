"""``hermes cron edit JOB`` (docs/automation.md): a job's schedule, prompt, name, model,
delivery, directory or toolsets changed in place, its id and its log of runs kept. Each field
is checked by the rule ``hermes cron create`` applies (a bad one: exit 2 naming it, nothing
changed, the other fields given with it included); a new schedule gets its next time from now;
``--model -`` gives the job back to ``model.model``; a job that matches none is named.

Real ``hermes`` processes, real SQLite files, the test kit's ``FakeModelServer`` as the model."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_core.agent import CronJobs, JobError
from hermes_core.testing import FakeModelServer, FakeTurn, HermesCli

pytestmark = pytest.mark.subprocess

CONFIGURED = "fake-model"


class Served:
    """A home whose ``model`` section is the ``openai`` provider at ``server``."""

    def __init__(self, cli: HermesCli, server: FakeModelServer) -> None:
        self.cli = cli
        self.server = server
        section = {"provider": "openai", "base_url": server.openai_base_url, "model": CONFIGURED}
        cli.config.write_text(json.dumps({"model": section}), encoding="utf-8")
        self.env = cli.variables(OPENAI_API_KEY="sk-fake-key-for-tests")
        self.jobs = CronJobs(cli.home)

    def run(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        return self.cli.run(*args, ok=ok, env=self.env)

    def asked(self) -> list[tuple[str, str]]:
        """The model and the last user message of each request the server got."""
        return [
            (request.body["model"], request.body["messages"][-1]["content"])
            for request in self.server.requests
        ]


@pytest.fixture
def served(hermes_cli: HermesCli) -> Iterator[Served]:
    with FakeModelServer() as server:
        yield Served(hermes_cli, server)


def test_edit_changes_the_fields_given_and_keeps_the_id_and_the_runs(served: Served) -> None:
    served.server.add(FakeTurn(text="Before."), FakeTurn(text="After."))
    served.run("cron", "create", "every 1h", "Sum up the logs", "--name", "logs")
    served.run("cron", "run", "logs")
    (before,) = served.jobs.jobs()
    started = time.time()
    edited = served.run(
        "cron", "edit", "logs", "--schedule", "every 2h", "--prompt", "Count the errors",
        "--name", "errors", "--model", "small",
    )  # fmt: skip
    served.run("cron", "run", "errors")
    (after,) = served.jobs.jobs()

    assert edited.stdout.startswith(f"edited job {before.id} (errors); next run ")
    assert after.id == before.id
    assert (after.schedule, after.prompt, after.name, after.model) == (
        "every 2h",
        "Count the errors",
        "errors",
        "small",
    )
    assert after.delivery == before.delivery
    assert after.cwd == before.cwd
    assert after.next_run is not None
    assert started + 7200 <= after.next_run <= time.time() + 7200
    assert [run.status for run in served.jobs.runs(before.id)] == ["ok", "ok"]
    assert served.asked() == [(CONFIGURED, "Sum up the logs"), ("small", "Count the errors")]


def test_edit_model_dash_gives_the_job_back_to_model_model(served: Served) -> None:
    served.server.add(FakeTurn(text="Done."))
    served.run("cron", "create", "every 1h", "Sum up", "--name", "own", "--model", "small")
    served.run("cron", "edit", "own", "--model", "-")
    listed = served.run("cron", "list").stdout
    served.run("cron", "run", "own")

    (job,) = served.jobs.jobs()
    assert job.model is None
    assert listed.splitlines()[1].split()[-1] == "-"
    assert served.asked() == [(CONFIGURED, "Sum up")]


def test_edit_of_the_prompt_alone_keeps_the_schedule_and_its_next_time(served: Served) -> None:
    served.run("cron", "create", "0 9 * * 1-5", "Sum up", "--name", "daily")
    (before,) = served.jobs.jobs()
    served.run("cron", "edit", "daily", "--prompt", "Sum up briefly")
    (after,) = served.jobs.jobs()

    assert after.prompt == "Sum up briefly"
    assert (after.schedule, after.next_run, after.created) == (
        before.schedule,
        before.next_run,
        before.created,
    )


def test_edit_of_a_paused_job_keeps_it_paused(served: Served) -> None:
    served.run("cron", "create", "every 1h", "Sum up", "--name", "held")
    served.run("cron", "pause", "held")
    done = served.run("cron", "edit", "held", "--schedule", "every 5m")

    (job,) = served.jobs.jobs()
    assert job.paused
    assert job.schedule == "every 5m"
    # It said "next run <time>", as if the job would run then.
    assert done.stdout == (
        f"edited job {job.id} (held); it stays paused: hermes cron resume {job.id} runs it again\n"
    )


def test_edit_to_a_missing_directory_says_what_to_do(served: Served, tmp_path: Path) -> None:
    served.run("cron", "create", "every 1h", "Sum up", "--name", "kept")
    missing = tmp_path / "missing"

    done = served.run("cron", "edit", "kept", "--cwd", str(missing), ok=False)

    assert done.returncode == 2
    assert (
        f"cwd: {missing} is not a directory: create it, or give an existing directory"
        in done.stderr
    )


@pytest.mark.parametrize(
    ("option", "value", "words"),
    [
        ("--schedule", "every 61x", "schedule: 'every 61x' is not a schedule"),
        ("--schedule", "2020-01-01T09:00", "schedule: '2020-01-01T09:00' is in the past"),
        ("--prompt", "   ", "prompt: expected the text"),
        ("--name", "n" * 201, "name: 201 characters; at most 200"),
        ("--model", "two words", "--model takes one name: --model NAME"),
        ("--deliver", "ftp://example.org/x", "delivery: expected 'file'"),
        ("--cwd", "/no/such/directory", "cwd: /no/such/directory is not a directory"),
        ("--toolset", "cron", "jobs cannot make jobs"),
    ],
)
def test_a_field_create_refuses_is_refused_and_nothing_changes(
    served: Served, option: str, value: str, words: str
) -> None:
    served.run("cron", "create", "every 1h", "Sum up", "--name", "kept", "--model", "small")
    (before,) = served.jobs.jobs()
    # a valid change given with the bad one is not made either: all or nothing
    done = served.run("cron", "edit", "kept", "--prompt", "Changed", option, value, ok=False)

    assert done.returncode == 2
    assert words in done.stderr
    assert served.jobs.jobs() == [before]


def test_edit_of_an_unknown_job_names_it_and_the_jobs(served: Served) -> None:
    served.run("cron", "create", "every 1h", "Sum up", "--name", "known")
    done = served.run("cron", "edit", "nosuch", "--prompt", "x", ok=False)

    assert done.returncode == 2
    assert "hermes: error: job: 'nosuch' matches no job; the jobs: " in done.stderr
    assert "(known)" in done.stderr


def test_edit_with_nothing_to_change_is_a_usage_error(served: Served) -> None:
    served.run("cron", "create", "every 1h", "Sum up", "--name", "same")
    (before,) = served.jobs.jobs()
    done = served.run("cron", "edit", "same", ok=False)

    assert done.returncode == 2
    assert "nothing to change" in done.stderr
    assert "--schedule" in done.stderr
    assert served.jobs.jobs() == [before]


def test_the_store_edits_in_one_transaction_and_refuses_a_removed_job(tmp_path: Path) -> None:
    jobs = CronJobs(tmp_path / "home")
    made = jobs.create("every 1h", "Sum up", name="one", now=1_800_000_000.0)
    edited = jobs.edit(made.id, schedule="every 2h", now=1_800_000_100.0)
    jobs.remove(made.id)

    assert edited.next_run == 1_800_000_100.0 + 7200
    with pytest.raises(JobError, match="matches no job"):
        jobs.edit(made.id, prompt="Sum up again")
    assert jobs.jobs() == []
