"""Cron jobs (docs/automation.md): the store's rules with real SQLite files under a temporary
home (a field that cannot be used is named; one claim per due time whoever asks; missed times
run once; a gone daemon's run is marked failed and its job runnable), and ``hermes cron`` in
this process against the test kit's ``FakeModelServer`` (no model can run here): a run through
the agent loop delivered to stdout, a file and a webhook (a real HTTP server on 127.0.0.1), and
a job's session that is never given the ``cronjob`` tool. The daemon in real subprocesses is in
``test_cron_daemon.py``."""

from __future__ import annotations

import json
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest

from hermes_core.agent import CronJobs, JobError
from hermes_core.agent._cron_rows import local_time
from hermes_core.testing import FakeModelServer, FakeTurn, HermesCli
from hermes_core.testing._cli_in_process import InProcessCli

T0 = 1_800_000_000.0
"""A fixed 'now' for the store's rules (epoch seconds)."""


@pytest.fixture
def jobs(tmp_path: Path) -> CronJobs:
    return CronJobs(tmp_path / "home")


@pytest.fixture
def cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


# A malformed field is named -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        ({"schedule": "every 61x"}, "schedule", "is not a schedule"),
        ({"schedule": "61 * * * *"}, "schedule", "its minute '61' is not valid (0-59)"),
        ({"schedule": "* * * *"}, "schedule", "is not a schedule"),
        ({"schedule": "2020-01-01T09:00"}, "schedule", "is in the past"),
        ({"schedule": "every 0s"}, "schedule", "at least 1 second"),
        ({"schedule": "0 9 31 2 *"}, "schedule", "never comes"),  # 31 February
        ({"schedule": "30 4 31 4 *"}, "schedule", "never comes"),  # 31 April
        ({"schedule": "every 100000000d"}, "schedule", "at most"),
        ({"schedule": "every " + "9" * 5000 + "s"}, "schedule", "at most"),
        ({"schedule": "9999-12-31T23:59:59-12:00"}, "schedule", "out of range"),
        ({"schedule": ""}, "schedule", "expected a cron expression"),
        ({"prompt": "   "}, "prompt", "expected the text"),
        # A model writes names too: one that moves the cursor or writes the clipboard (OSC 52)
        # would rewrite the lines of `hermes cron list` on the user's terminal.
        ({"name": "ok\r\x1b[2Kbackup"}, "name", "a control character ('\\r')"),
        ({"name": "x\x1b]52;c;ZXZpbA==\x07"}, "name", "a control character ('\\x1b')"),
        ({"name": "n" * 201}, "name", "201 characters; at most 200"),
        # A valid cron expression of 600,001 characters took 2 s to parse, at each run too.
        ({"schedule": "0," * 300_000 + "0 * * * *"}, "schedule", "600009 characters; at most"),
        ({"delivery": "https://example.org/" + "a" * 5000}, "delivery", "5020 characters; at"),
        ({"delivery": "ftp://example.org/x"}, "delivery", "expected 'file'"),
        ({"delivery": "https://"}, "delivery", "expected 'file'"),
        ({"toolsets": "files"}, "toolsets", "a list of toolset names"),
        ({"toolsets": ["files", "cron"]}, "toolsets", "jobs cannot make jobs"),
    ],
)
def test_a_field_that_cannot_be_used_is_refused_by_name(
    jobs: CronJobs, fields: dict[str, Any], field: str, words: str
) -> None:
    given: dict[str, Any] = {"schedule": "every 5m", "prompt": "Sum up the logs", **fields}
    schedule, prompt = given.pop("schedule"), given.pop("prompt")

    with pytest.raises(JobError) as refused:
        jobs.create(schedule, prompt, now=T0, **given)

    assert refused.value.field == field
    assert str(refused.value).startswith(f"{field}: ")
    assert words in str(refused.value)
    assert jobs.jobs() == []  # nothing half-made


def test_an_id_edited_into_a_path_is_damaged_and_never_runs(jobs: CronJobs) -> None:
    # The id names the job's output folder (cron/output/<id>/): '../x' would put a run's answer
    # beside the store, or anywhere the edit points.
    import sqlite3

    job = jobs.create("every 1m", "Sum up the logs", now=T0)
    with sqlite3.connect(jobs.path) as db:
        db.execute("UPDATE jobs SET id = '../../x' WHERE id = ?", (job.id,))

    (listed,) = jobs.jobs()
    claimed = jobs.claim_due("host:1", 60, now=T0 + 60)

    assert "id is '../../x', not a job id" in listed.damaged
    assert claimed == []


def test_a_hand_edited_schedule_that_never_comes_pauses_its_job_and_the_others_run(
    jobs: CronJobs,
) -> None:
    import sqlite3

    broken = jobs.create("every 1m", "Sum up the logs", now=T0)
    other = jobs.create("every 1m", "Check the disks", now=T0)
    with sqlite3.connect(jobs.path) as db:  # the user's edit: 31 February
        db.execute("UPDATE jobs SET schedule = '0 9 31 2 *' WHERE id = ?", (broken.id,))

    claimed = jobs.claim_due("host:1", 60, now=T0 + 60)

    assert [job.id for job, _ in claimed] == [other.id]
    assert jobs.get(broken.id).paused
    (failed,) = jobs.runs(broken.id)
    assert failed.status == "failed"
    assert "schedule: '0 9 31 2 *'" in failed.detail
    assert "never comes" in failed.detail


def test_a_hand_edited_schedule_too_long_to_parse_pauses_its_job_at_once(jobs: CronJobs) -> None:
    import sqlite3

    broken = jobs.create("every 1m", "Sum up the logs", now=T0)
    other = jobs.create("every 1m", "Check the disks", now=T0)
    with sqlite3.connect(jobs.path) as db:  # valid, and 2 s of parsing at each claim
        db.execute(
            "UPDATE jobs SET schedule = ? WHERE id = ?", ("0," * 300_000 + "0 * * * *", broken.id)
        )

    started = time.perf_counter()
    claimed = jobs.claim_due("host:1", 60, now=T0 + 60)
    spent = time.perf_counter() - started

    assert [job.id for job, _ in claimed] == [other.id]
    assert jobs.get(broken.id).paused
    (failed,) = jobs.runs(broken.id)
    assert "schedule: 600009 characters; at most" in failed.detail
    assert len(failed.detail) < 200  # the refusal does not quote the schedule back
    assert spent < 1.0


def test_a_row_damaged_on_disk_is_listed_never_run_and_removable_and_the_others_run(
    cli: InProcessCli,
) -> None:
    import sqlite3

    jobs = CronJobs(cli.home)
    names = ["toolsets", "lease", "time", "fine"]
    made = {name: jobs.create("every 1m", f"Job {name}", name=name, now=T0) for name in names}
    damage = {
        "toolsets": "toolsets = '{\"not\": json'",  # what a hand edit left
        "lease": "lease_owner = 'host:1', lease_until = NULL",
        "time": "created = 'yesterday'",
    }
    with sqlite3.connect(jobs.path) as db:
        for name, change in damage.items():
            db.execute(f"UPDATE jobs SET {change} WHERE id = ?", (made[name].id,))

    listed = {
        job["name"]: job for job in json.loads(cli.run("cron", "list", "--json", ok=False).stdout)
    }
    claimed = jobs.claim_due("host:2", 60, now=T0 + 60)
    with pytest.raises(JobError, match=r"remove it \(hermes cron remove") as refused:
        jobs.claim(made["time"].id, "host:2", 60)  # hermes cron run
    cli.run("cron", "remove", made["toolsets"].id)

    assert listed["toolsets"]["state"] == "damaged"
    assert "toolsets is '{\"not\": json', not a JSON list" in listed["toolsets"]["damaged"]
    assert listed["toolsets"]["toolsets"] == []  # never every toolset
    assert "created is 'yesterday'" in listed["time"]["damaged"]
    assert listed["lease"]["state"] == "scheduled"  # a lease without an end holds no job
    assert sorted(job.name for job, _ in claimed) == ["fine", "lease"]
    (failed,) = jobs.runs(made["time"].id)
    assert failed.status == "failed"
    assert f"its row in {jobs.path} is damaged: created is 'yesterday'" in failed.detail
    assert jobs.get(made["time"].id).paused
    assert "cannot run: its row" in str(refused.value)
    assert "toolsets" not in {job.name for job in jobs.jobs()}


def test_cron_list_shows_every_row_then_exits_1_for_a_damaged_one_not_for_a_failed_run(
    cli: InProcessCli,
) -> None:
    # docs/cli.md's rule for list commands: a damaged row is broken (it never runs); a job whose
    # last run failed is not (the job is fine, its run was not).
    import sqlite3

    jobs = CronJobs(cli.home)
    names = ("failing", "broken")
    failing, broken = (jobs.create("every 1m", f"Job {n}", name=n, now=T0) for n in names)
    for _, run in jobs.claim_due("host:1", 60, now=T0 + 60):
        jobs.finish(run, "failed", "the model did not answer")
    fine = cli.subprocess_run("cron", "list", "--json")
    with sqlite3.connect(jobs.path) as db:
        db.execute("UPDATE jobs SET created = 'yesterday' WHERE id = ?", (broken.id,))
    table = cli.subprocess_run("cron", "list", ok=False)
    as_json = cli.subprocess_run("cron", "list", "--json", ok=False)

    assert {row["last_run"]["status"] for row in json.loads(fine.stdout)} == {"failed"}
    assert fine.returncode == 0
    assert table.returncode == as_json.returncode == 1, table.stderr
    assert failing.id in table.stdout
    assert broken.id in table.stdout
    assert "damaged" in table.stdout
    assert {row["name"] for row in json.loads(as_json.stdout)} == set(names)


def test_toolsets_nested_too_deep_to_read_are_a_damaged_row_and_the_others_run(
    cli: InProcessCli,
) -> None:
    # Past Python's recursion json.loads raises RecursionError, not ValueError: the row stopped
    # hermes cron list and every daemon's claim instead of being listed damaged.
    import sqlite3

    jobs = CronJobs(cli.home)
    deep, fine = (jobs.create("every 1m", f"Job {n}", name=n, now=T0) for n in ("deep", "fine"))
    with sqlite3.connect(jobs.path) as db:
        db.execute("UPDATE jobs SET toolsets = ? WHERE id = ?", ("[" * 100_000, deep.id))

    listed = {
        job["name"]: job for job in json.loads(cli.run("cron", "list", "--json", ok=False).stdout)
    }
    claimed = jobs.claim_due("host:2", 60, now=T0 + 60)

    assert listed["deep"]["state"] == "damaged"
    assert "not a JSON list" in listed["deep"]["damaged"]
    assert listed["deep"]["toolsets"] == []  # never every toolset
    assert [job.id for job, _ in claimed] == [fine.id]


def test_cron_list_shows_a_name_stored_with_control_characters_escaped(
    cli: InProcessCli,
) -> None:
    # A name in the store from before the rule, or written by hand: listed, never obeyed.
    import sqlite3

    cli_jobs = CronJobs(cli.home)
    job = cli_jobs.create("every 1h", "Sum up the logs", now=time.time())
    with sqlite3.connect(cli_jobs.path) as db:
        db.execute("UPDATE jobs SET name = ? WHERE id = ?", ("a\rb\x1b]52;c;ZQ==\x07", job.id))
    listed = cli.run("cron", "list").stdout
    assert "\x1b" not in listed
    assert "\r" not in listed
    assert "a\\rb\\x1b]52;c;ZQ==\\x07" in listed


def test_a_job_not_found_lists_the_stored_names_escaped(cli: InProcessCli) -> None:
    # The error for a JOB that matches none lists the jobs, names included: a stored name with
    # an escape sequence is shown, never obeyed, on the terminal as in cron list.
    import sqlite3

    cli_jobs = CronJobs(cli.home)
    job = cli_jobs.create("every 1h", "Sum up the logs", now=time.time())
    with sqlite3.connect(cli_jobs.path) as db:
        db.execute("UPDATE jobs SET name = ? WHERE id = ?", ("a\rb\x1b]52;c;ZQ==\x07", job.id))
    done = cli.run("cron", "pause", "nosuchjob", ok=False)
    assert done.returncode == 2
    assert "\x1b" not in done.stderr
    assert "\r" not in done.stderr
    assert f"{job.id} (a\\rb\\x1b]52;c;ZQ==\\x07)" in done.stderr


def test_a_damaged_id_with_control_characters_is_shown_escaped(cli: InProcessCli) -> None:
    # An id edited by hand is damaged and never runs, but the messages that name it (cron run
    # refusing it, cron remove) reach the terminal: its escape sequence is shown, never obeyed.
    import sqlite3

    cli_jobs = CronJobs(cli.home)
    job = cli_jobs.create("every 1h", "Sum up the logs", now=time.time())
    bad_id = "x\x1b]52;c;ZQ==\x07"
    with sqlite3.connect(cli_jobs.path) as db:
        db.execute("UPDATE jobs SET id = ? WHERE id = ?", (bad_id, job.id))
    with pytest.raises(JobError) as refused:
        cli_jobs.claim(bad_id, "host:1", 60)
    removed = cli.run("cron", "remove", bad_id)
    for said in (str(refused.value), removed.stdout):
        assert "\x1b" not in said
        assert "x\\x1b]52;c;ZQ==\\x07" in said
    assert "cannot run" in str(refused.value)
    assert "no cron jobs" in cli.run("cron", "list").stdout


def test_the_cli_names_the_malformed_schedule_and_exits_2(cli: InProcessCli) -> None:
    done = cli.run("cron", "create", "every 61x", "Sum up the logs", ok=False)

    assert done.returncode == 2
    assert done.stderr.startswith("hermes: error: schedule: 'every 61x' is not a schedule")
    assert "every 30m" in done.stderr  # the forms allowed
    assert "no cron jobs" in cli.run("cron", "list").stdout


@pytest.mark.parametrize(
    ("schedule", "words"),
    [
        ("2027-02-30T09:00", "'2027-02-30T09:00' is no time: day is out of range for month"),
        ("2027-12-24T25:00", "'2027-12-24T25:00' is no time: hour must be in 0..23"),
    ],
)
def test_a_one_shot_time_no_calendar_has_says_which_part_is_wrong(
    jobs: CronJobs, schedule: str, words: str
) -> None:
    with pytest.raises(JobError) as refused:
        jobs.create(schedule, "Sum up the logs", now=T0)
    assert str(refused.value) == f"schedule: {words}"


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("schedule", "words"),
    [
        ("0 8 * * 8", "its day of week '8' is not valid (0-7 or sun-sat; 0 and 7 are Sunday)"),
        ("61 * * * *", "its minute '61' is not valid (0-59)"),
        ("0 25 * * 1-5", "its hour '25' is not valid (0-23)"),
        ("0 8 32 * *", "its day of month '32' is not valid (1-31)"),
        ("0 8 * 13 *", "its month '13' is not valid (1-12 or jan-dec)"),
        ("*/0 * * * *", "its minute '*/0' is not valid (0-59)"),
        ("0 8 * * mon-fry", "its day of week 'mon-fry' is not valid"),
        ("0 0 8 * * 1", "it has 6 fields; a cron expression has five: minute, hour, day of month"),
    ],
)
def test_a_cron_expression_refused_names_its_field_and_range(
    hermes_home: Path, tmp_path: Path, schedule: str, words: str
) -> None:
    """Five fields croniter refuses: the person (``hermes cron create``) and the model (the
    ``cronjob`` tool) are told which field and what it takes, not "expected five fields"."""
    cli = HermesCli(tmp_path, home=hermes_home)  # the real command, as a subprocess
    expected = f"schedule: {schedule!r}: {words}"

    made = cli.run("cron", "create", schedule, "Sum up the logs", ok=False)
    arguments = json.dumps({"action": "create", "schedule": schedule, "prompt": "Sum up the logs"})
    called = cli.run("tools", "call", "cronjob", arguments, "--yes", ok=False)

    assert made.returncode == 2
    assert made.stderr.startswith(f"hermes: error: {expected}"), made.stderr
    assert called.returncode == 1
    assert called.stderr.startswith(f"error (INVALID_ARGUMENTS): cronjob create: {expected}")
    assert "no cron jobs" in cli.run("cron", "list").stdout


def test_without_croniter_a_cron_expression_says_to_install_our_cron_extra(
    jobs: CronJobs, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "croniter", None)  # import croniter: ImportError

    with pytest.raises(JobError) as refused:
        jobs.create("0 9 * * 1-5", "Sum up the logs", now=T0)

    assert refused.value.field == "schedule"
    # hermes-core on PyPI is another project (tests/test_distribution_names.py): ours is
    # hermes-core-agent, and its extra is what brings croniter.
    assert "pip install 'hermes-core-agent[cron]'" in str(refused.value)
    assert jobs.create("every 5m", "Intervals need no croniter", now=T0).schedule == "every 5m"


def test_each_form_of_schedule_gives_its_first_time(jobs: CronJobs) -> None:
    every = jobs.create("every 90s", "a", now=T0)
    cron = jobs.create("*/15 * * * *", "b", now=T0)
    later = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(T0 + 3600))
    once = jobs.create(later, "c", now=T0)

    assert every.next_run == T0 + 90
    assert cron.next_run is not None
    assert T0 < cron.next_run <= T0 + 900
    assert time.localtime(cron.next_run).tm_min % 15 == 0
    assert once.next_run == T0 + 3600


# One claim per due time --------------------------------------------------------------------


def test_a_due_job_is_claimed_once_whoever_asks_and_its_next_time_moves_on(
    jobs: CronJobs,
) -> None:
    job = jobs.create("every 1m", "Sum up the logs", now=T0)

    first = jobs.claim_due("host:1", 60, now=T0 + 60)
    second = jobs.claim_due("host:2", 60, now=T0 + 60)  # another daemon, same tick
    assert [(claimed.id, run.status) for claimed, run in first] == [(job.id, "running")]
    assert second == []
    jobs.finish(first[0][1], "ok", "delivered")
    assert jobs.claim_due("host:2", 60, now=T0 + 61) == []  # the tick is spent
    assert jobs.get(job.id).next_run == T0 + 120
    assert len(jobs.claim_due("host:2", 60, now=T0 + 120)) == 1


def test_two_daemons_claiming_at_once_from_threads_run_each_tick_once(
    jobs: CronJobs, tmp_path: Path
) -> None:
    jobs.create("every 1m", "Sum up the logs", now=T0)
    claims: list[tuple[str, float]] = []
    start = threading.Barrier(4)

    def daemon(name: str) -> None:
        store = CronJobs(tmp_path / "home")  # its own connections, as another process has
        start.wait()
        # The threads' clocks run apart (each its own 20 minutes): a lease longer than them
        # all, or one ahead takes back a slower one's live run as ran out (and its finish,
        # coming after, writes nothing over the failed entry).
        for tick in range(1, 21):
            for _, run in store.claim_due(name, 3600, now=T0 + 60 * tick):
                claims.append((name, T0 + 60 * tick))
                store.finish(run, "ok")

    threads = [threading.Thread(target=daemon, args=(f"host:{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    ticks = sorted(at for _, at in claims)
    assert len(ticks) == len(set(ticks))  # never twice for one tick
    runs = jobs.runs(limit=100)
    assert len(runs) == len(claims)
    assert {run.status for run in runs} == {"ok"}


def test_a_job_under_a_live_lease_is_not_claimed_even_when_due_again(jobs: CronJobs) -> None:
    jobs.create("every 1m", "Sum up the logs", now=T0)
    (_, run), *_ = jobs.claim_due("elsewhere:1", 300, now=T0 + 60)

    assert jobs.claim_due("host:2", 60, now=T0 + 130) == []  # one run at a time
    jobs.finish(run, "ok")
    assert len(jobs.claim_due("host:2", 60, now=T0 + 130)) == 1  # the missed tick, once


def test_missed_times_run_once_never_caught_up(jobs: CronJobs) -> None:
    job = jobs.create("every 1m", "Sum up the logs", now=T0)

    claimed = jobs.claim_due("host:1", 60, now=T0 + 600 + 5)  # ten ticks missed
    assert len(claimed) == 1
    jobs.finish(claimed[0][1], "ok")
    assert jobs.claim_due("host:1", 60, now=T0 + 600 + 6) == []
    assert jobs.get(job.id).next_run == T0 + 660  # the grid's next time after now


def test_a_one_shot_job_runs_once(jobs: CronJobs) -> None:
    later = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(T0 + 60))
    job = jobs.create(later, "Say goodbye", now=T0)

    (_, run), *_ = jobs.claim_due("host:1", 60, now=T0 + 61)
    jobs.finish(run, "ok")

    assert jobs.get(job.id).next_run is None
    assert jobs.claim_due("host:1", 60, now=T0 + 10_000) == []


def test_a_one_shot_job_that_ran_is_listed_done_not_scheduled(jobs: CronJobs) -> None:
    later = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(T0 + 60))
    job = jobs.create(later, "Say goodbye", now=T0)
    (before,) = jobs.listing()

    (_, run), *_ = jobs.claim_due("host:1", 60, now=T0 + 61)
    jobs.finish(run, "ok")
    (after,) = jobs.listing()

    assert (before["state"], after["state"]) == ("scheduled", "done")
    assert (after["id"], after["next_run"], after["last_run"]["status"]) == (job.id, "-", "ok")


@pytest.mark.parametrize(
    ("prompt", "name"),
    [
        (
            "Is https://example.org up? Say only up or down.",
            "Is https://example.org up? Say only up",
        ),
        ("Sum  up\nthe logs", "Sum up the logs"),
        ("Check " + "x" * 34 + " now", "Check " + "x" * 34),  # exactly 40 characters
        ("y" * 60 + " then", "y" * 40),  # a first word longer than a name: cut
        ("Say \x1b[31mred\x1b[0m now", "Say \\x1b[31mred\\x1b[0m now"),  # escaped, not refused
    ],
)
def test_a_default_name_is_the_prompts_first_whole_words(
    jobs: CronJobs, prompt: str, name: str
) -> None:
    assert jobs.create("every 1h", prompt, now=T0).name == name


def test_paused_jobs_wait_and_resume_from_the_next_time(jobs: CronJobs) -> None:
    job = jobs.create("every 1m", "Sum up the logs", now=T0)
    jobs.pause(job.id)

    assert jobs.claim_due("host:1", 60, now=T0 + 600) == []
    resumed = jobs.resume(job.name, now=T0 + 630)
    assert not resumed.paused
    assert resumed.next_run == T0 + 690


# A daemon that is gone -----------------------------------------------------------------------


def dead_pid() -> int:
    """The pid of a process that has ended (and was reaped)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_a_run_whose_daemon_died_is_marked_failed_and_the_job_runs_again(
    jobs: CronJobs,
) -> None:
    import socket

    job = jobs.create("every 1m", "Sum up the logs", now=T0)
    owner = f"{socket.gethostname()}:{dead_pid()}"
    (_, run), *_ = jobs.claim_due(owner, 3600, now=T0 + 60)  # a lease far from running out

    marked = jobs.recover(now=T0 + 61)

    assert [(r.id, r.status) for r in marked] == [(run.id, "failed")]
    assert "stopped during the run" in marked[0].detail
    assert jobs.get(job.id).lease_owner is None
    assert len(jobs.claim_due("host:2", 60, now=T0 + 120)) == 1


def test_a_lease_of_another_machine_is_taken_back_only_when_it_runs_out(
    jobs: CronJobs,
) -> None:
    jobs.create("every 1m", "Sum up the logs", now=T0)
    jobs.claim_due("other-machine:1", 90, now=T0 + 60)

    assert jobs.recover(now=T0 + 100) == []  # its pid cannot be checked from here
    (failed,) = jobs.recover(now=T0 + 151)
    assert failed.status == "failed"
    assert [run.status for run in jobs.runs()] == ["failed"]


def test_a_renewed_lease_keeps_its_job_past_its_first_term(jobs: CronJobs) -> None:
    jobs.create("every 1m", "Sum up the logs", now=T0)
    jobs.claim_due("other-machine:1", 30, now=T0 + 60)

    jobs.renew("other-machine:1", 30, now=T0 + 80)  # a long run's heartbeat

    assert jobs.recover(now=T0 + 100) == []
    assert jobs.claim_due("host:2", 60, now=T0 + 105) == []  # due, but still its own
    assert [run.status for run in jobs.runs()] == ["running"]


def test_a_store_that_is_not_sqlite_is_an_error_naming_the_file(jobs: CronJobs) -> None:
    jobs.path.parent.mkdir(parents=True)
    jobs.path.write_text("not a database, " * 100, encoding="utf-8")

    with pytest.raises(JobError, match="cannot be read as a job store") as refused:
        jobs.jobs()
    assert str(jobs.path) in str(refused.value)


HOLD_LOCK = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
for statement in sys.argv[2:]:
    db.execute(statement)
db.execute("UPDATE jobs SET name = name")
print("held", flush=True)
sys.stdin.read()
"""


@pytest.mark.parametrize(
    "lock",
    [["BEGIN IMMEDIATE"], ["PRAGMA locking_mode=EXCLUSIVE", "BEGIN EXCLUSIVE"]],
    ids=["a write under way", "an exclusive lock"],
)
def test_a_store_another_process_keeps_locked_is_an_error_naming_the_file_and_what_to_do(
    tmp_path: Path, lock: list[str]
) -> None:
    home = tmp_path / "home"
    CronJobs(home).create("every 1h", "Sum up the logs", now=T0)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(home / "cron" / "jobs.db"), *lock],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "held\n"
        jobs = CronJobs(home, lock_wait=0.2)
        for change in (lambda: jobs.create("every 1h", "Another", now=T0), jobs.recover):
            with pytest.raises(JobError) as refused:
                change()
            message = str(refused.value)
            assert message.startswith(f"store: {home / 'cron' / 'jobs.db'} is locked by ")
            assert "try again" in message
            assert "\n" not in message
    finally:
        holder.communicate("")
    assert [job.prompt for job in CronJobs(home).jobs()] == ["Sum up the logs"]


def test_a_store_that_cannot_grow_is_a_one_line_error_and_keeps_the_jobs_it_had(
    hermes_cli: HermesCli,
) -> None:
    """No disk fills here: a file size limit (RLIMIT_FSIZE) fails the store's writes as a full
    disk does, in the process of the command alone."""

    def small_files() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))

    hermes_cli.run("cron", "create", "every 1h", "Sum up the logs")
    for number in range(20):
        done = subprocess.run(
            hermes_cli.command("cron", "create", "every 1h", "a" * 19000 + str(number)),
            env=hermes_cli.variables(),
            cwd=hermes_cli.work,
            preexec_fn=small_files,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode:
            break
    assert done.returncode == 2, done.stderr
    store = hermes_cli.home / "cron" / "jobs.db"
    assert done.stderr.startswith(f"hermes: error: store: {store} could not be written ")
    assert "free some space" in done.stderr
    assert done.stderr.count("\n") == 1
    prompts = [job.prompt for job in CronJobs(hermes_cli.home).jobs()]
    assert prompts == ["Sum up the logs"] + ["a" * 19000 + str(n) for n in range(number)]


# hermes cron, through the agent loop --------------------------------------------------------


def model_config(server: FakeModelServer, **sections: Any) -> dict[str, Any]:
    return {
        "model": {"provider": "openai", "model": "fake-model", "base_url": server.openai_base_url},
        **sections,
    }


def write_config(cli: InProcessCli, config: dict[str, Any]) -> dict[str, str]:
    cli.config.write_text(json.dumps(config), encoding="utf-8")
    return cli.variables(OPENAI_API_KEY="sk-fake-key-for-tests")


def test_cron_run_runs_a_job_now_and_delivers_to_stdout_and_the_log(cli: InProcessCli) -> None:
    with FakeModelServer([FakeTurn(text="3 errors in the logs today.")]) as server:
        env = write_config(cli, model_config(server))
        cli.run("cron", "create", "every 1h", "Sum up the logs", "--deliver", "stdout", env=env)
        (job,) = json.loads(cli.run("cron", "list", "--json", env=env).stdout)
        done = cli.run("cron", "run", job["name"], env=env)
        (request,) = server.requests

    assert request.first_user_text == "Sum up the logs"
    assert "3 errors in the logs today." in done.stdout
    assert f"job {job['id']} run 1: delivered to stdout" in done.stderr
    listed = cli.run("cron", "runs", env=env).stdout
    assert "ok" in listed.splitlines()[1]


@pytest.mark.parametrize("limit", ["0", "-1"])
def test_cron_runs_with_a_limit_below_one_is_a_usage_error(cli: InProcessCli, limit: str) -> None:
    # --limit 0 printed "no runs yet" whatever the log held, and -1 every run (SQLite's LIMIT).
    done = cli.run("cron", "runs", "--limit", limit, ok=False)

    assert done.returncode == 2
    assert "Invalid value for '--limit'" in done.stderr


def test_cron_list_json_and_the_cronjob_tools_list_show_each_jobs_last_run(
    cli: InProcessCli,
) -> None:
    with FakeModelServer([FakeTurn(text="All quiet.")]) as server:
        env = write_config(cli, model_config(server))
        cli.run("cron", "create", "every 1h", "Sum up the logs", "--name", "ran", env=env)
        cli.run("cron", "create", "every 1h", "Check the disks", "--name", "waits", env=env)
        cli.run("cron", "run", "ran", env=env)
    (run,) = CronJobs(cli.home).runs("ran")

    ran, waits = cli.json("cron", "list", "--json", env=env)
    listed = cli.json("tools", "call", "cronjob", '{"action": "list"}', "--json", env=env)

    expected = {"status": run.status, "started": local_time(run.started), "detail": run.detail}
    assert run.status == "ok"
    assert (ran["name"], ran["last_run"]) == ("ran", expected)
    assert (waits["name"], waits["last_run"]) == ("waits", None)
    assert listed["structured"]["jobs"] == [ran, waits]


def test_a_file_delivery_lands_under_the_home(cli: InProcessCli) -> None:
    with FakeModelServer([FakeTurn(text="All quiet.")]) as server:
        env = write_config(cli, model_config(server))
        cli.run("cron", "create", "every 1h", "Sum up the logs", "--name", "logs", env=env)
        cli.run("cron", "run", "logs", env=env)

    (written,) = (cli.home / "cron" / "output").rglob("*.md")
    assert written.read_text(encoding="utf-8") == "All quiet.\n"
    assert written.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("delivery", ["file", "stdout"])
def test_an_answer_with_a_lone_surrogate_is_delivered_with_a_replacement_character(
    cli: InProcessCli, delivery: str
) -> None:
    # A model's JSON may hold "\ud800", which no UTF-8 file or terminal can take: the run
    # failed at the write and the answer, which cost a model run, was lost.
    with FakeModelServer([FakeTurn(text="Disk \ud800 full.")]) as server:
        env = write_config(cli, model_config(server))
        cli.run(
            "cron",
            "create",
            "every 1h",
            "Check the disks",
            "--name",
            "disks",
            "--deliver",
            delivery,
            env=env,
        )
        done = cli.run("cron", "run", "disks", env=env)
    (run,) = CronJobs(cli.home).runs("disks")

    assert run.status == "ok", run.detail
    if delivery == "file":
        (written,) = (cli.home / "cron" / "output").rglob("*.md")
        assert written.read_text(encoding="utf-8") == "Disk \ufffd full.\n"
    else:
        assert "Disk \ufffd full." in done.stdout


@pytest.fixture
def webhook() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A real HTTP server on 127.0.0.1 recording the JSON bodies POSTed to it."""
    received: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers["content-length"])
            received.append(json.loads(self.rfile.read(length)))
            self.send_response(204)
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/hook", received
    server.shutdown()
    server.server_close()


def test_a_webhook_delivery_posts_the_answer(
    cli: InProcessCli, webhook: tuple[str, list[dict[str, Any]]]
) -> None:
    url, received = webhook
    with FakeModelServer([FakeTurn(text="Deployed fine.")]) as server:
        env = write_config(cli, model_config(server))
        cli.run("cron", "create", "every 1h", "Check the deploy", "--deliver", url, env=env)
        cli.run("cron", "run", "Check the deploy", env=env)

    (body,) = received
    assert body["output"] == "Deployed fine."
    assert body["job"]["schedule"] == "every 1h"


def test_a_failed_delivery_fails_the_run(cli: InProcessCli) -> None:
    with FakeModelServer([FakeTurn(text="Deployed fine.")]) as server:
        env = write_config(cli, model_config(server))
        url = f"{server.openai_base_url}/no-such-hook"  # answers an error status
        cli.run("cron", "create", "every 1h", "Check the deploy", "--deliver", url, env=env)
        done = cli.run("cron", "run", "Check the deploy", env=env, ok=False)

    assert done.returncode == 1
    assert "the webhook answered HTTP" in done.stderr
    assert "failed" in cli.run("cron", "runs", env=env).stdout


def test_a_failed_webhook_delivery_keeps_the_answer_in_a_file_and_says_where(
    cli: InProcessCli,
) -> None:
    with FakeModelServer([FakeTurn(text="Deployed fine.")]) as server:
        env = write_config(cli, model_config(server))
        url = f"{server.openai_base_url}/no-such-hook"  # answers an error status
        cli.run("cron", "create", "every 1h", "Check the deploy", "--deliver", url, env=env)
        done = cli.run("cron", "run", "Check the deploy", env=env, ok=False)

    (kept,) = (cli.home / "cron" / "output").rglob("*.md")
    assert kept.read_text(encoding="utf-8") == "Deployed fine.\n"
    assert kept.stat().st_mode & 0o777 == 0o600
    (run,) = CronJobs(cli.home).runs("Check the deploy")
    assert (run.status, run.output) == ("failed", "Deployed fine.")
    assert run.detail.startswith("the webhook answered HTTP 404")
    assert f"the answer was kept in {kept}" in run.detail
    assert f"the answer was kept in {kept}" in done.stderr


def test_a_webhook_urls_password_is_never_shown_nor_written_but_in_the_job_store(
    cli: InProcessCli, webhook: tuple[str, list[dict[str, Any]]]
) -> None:
    url, received = webhook
    with_password = url.replace("http://", "http://user:s3cret@", 1)
    with FakeModelServer([FakeTurn(text="Deployed fine.")] * 2) as server:
        env = write_config(cli, model_config(server))
        failing = f"{server.openai_base_url}/no-such-hook".replace("http://", "http://u:s3cret@")
        outputs = [
            cli.run("cron", "create", "every 1h", "Hook", "--deliver", with_password, env=env),
            cli.run("cron", "create", "every 1h", "Failing", "--deliver", failing, env=env),
            cli.run(
                "cron", "create", "every 1h", "Bad", "--deliver", "http://u:s3cret@[::1", ok=False
            ),
            cli.run("cron", "run", "Hook", env=env),
            cli.run("cron", "run", "Failing", env=env, ok=False),
            cli.run("cron", "list", env=env),
            cli.run("cron", "list", "--json", env=env),
            cli.run("cron", "runs", env=env),
        ]

    assert len(received) == 1
    listed = json.loads(outputs[-2].stdout)
    assert {job["delivery"] for job in listed} == {
        url.replace("http://", "http://user:[redacted]@", 1),
        failing.replace("s3cret", "[redacted]"),
    }
    for done in outputs:
        assert "s3cret" not in done.stdout + done.stderr
    store = cli.home / "cron"
    written = [
        path
        for path in cli.root.rglob("*")
        if path.is_file()
        and path != cli.config
        and not path.name.startswith("jobs.db")
        and b"s3cret" in path.read_bytes()
    ]
    assert written == [], store


@pytest.mark.parametrize("scheme", ["HTTP", "Http", "hTTp"])
def test_a_webhook_url_with_its_scheme_in_capitals_is_accepted_stored_in_lowercase_and_posted_to(
    cli: InProcessCli, webhook: tuple[str, list[dict[str, Any]]], scheme: str
) -> None:
    url, received = webhook
    given = scheme + url.removeprefix("http")  # a scheme is case-insensitive (RFC 3986 3.1)
    with FakeModelServer([FakeTurn(text="Deployed fine.")]) as server:
        env = write_config(cli, model_config(server))
        cli.run("cron", "create", "every 1h", "Check the deploy", "--deliver", given, env=env)
        cli.run("cron", "run", "Check the deploy", env=env)

    (job,) = CronJobs(cli.home).jobs()
    assert job.delivery == url
    (body,) = received
    assert body["output"] == "Deployed fine."


@pytest.mark.parametrize(
    "delivery",
    ["HTTPS://example.org/" + "a" * 2100, "FTP://example.org/hook", "HTTPS://", "Https:///hook"],
    ids=["too-long", "another-scheme", "no-host", "empty-host"],
)
def test_a_webhook_url_with_its_scheme_in_capitals_keeps_every_other_rule(
    cli: InProcessCli, delivery: str
) -> None:
    done = cli.run("cron", "create", "every 1h", "Check", "--deliver", delivery, ok=False)

    assert done.returncode != 0
    assert "delivery" in done.stderr
    assert CronJobs(cli.home).jobs() == []


@pytest.mark.parametrize(
    ("edited", "words"),
    [
        # What `hermes cron create` refuses.
        ("{url}?pad=" + "a" * 2100, "characters; at most 2048"),
        ("ftp://{host}/hook", "expected 'file'"),
    ],
    ids=["too-long", "another-scheme"],
)
def test_a_webhook_url_edited_in_the_store_is_checked_again_when_the_job_runs(
    cli: InProcessCli, webhook: tuple[str, list[dict[str, Any]]], edited: str, words: str
) -> None:
    import sqlite3

    url, received = webhook
    with FakeModelServer([FakeTurn(text="Deployed fine.")]) as server:
        env = write_config(cli, model_config(server))
        cli.run("cron", "create", "every 1h", "Check the deploy", "--deliver", url, env=env)
        stored = edited.format(url=url, host=url.split("/")[2])
        with sqlite3.connect(CronJobs(cli.home).path) as db:  # the user's edit, after the check
            db.execute("UPDATE jobs SET delivery = ?", (stored,))
        done = cli.run("cron", "run", "Check the deploy", env=env, ok=False)

    assert received == []  # nothing sent
    assert server.requests == []  # and no model run spent on an answer with nowhere to go
    assert done.returncode == 1
    (run,) = CronJobs(cli.home).runs("Check the deploy")
    assert run.status == "failed"
    assert run.detail.startswith("the job cannot run: delivery: ")
    assert words in run.detail
    assert run.detail in done.stderr
    assert stored not in run.detail  # the daemon logs the detail: never a webhook's URL


def test_a_jobs_session_never_has_the_cronjob_tool(cli: InProcessCli) -> None:
    turns = [FakeTurn(text="ran"), FakeTurn(text="chatted")]
    with FakeModelServer(turns) as server:
        env = write_config(cli, model_config(server, tools={"tool_search": {"defer": []}}))
        cli.run("cron", "create", "every 1h", "Sum up the logs", env=env)
        cli.run("cron", "run", "Sum up the logs", env=env)
        cli.run("run", "Hello", env=env)
        job_request, chat_request = server.requests

    assert "cronjob" in chat_request.tool_names  # a person's session has it
    assert "cronjob" not in job_request.tool_names
    assert "read_file" in job_request.tool_names  # the rest is granted


WEATHER_PLUGIN = """
from hermes_core.plugin import Tool, ToolAnnotations, hookimpl


@hookimpl
def hermes_tools(config, env):
    reads = ToolAnnotations(read_only=True, destructive=False)
    return [Tool("weather_now", "The weather now.", handler=lambda: "sunny",
                 annotations=reads, toolset="weather")]
"""


def test_a_job_whose_toolset_no_tool_has_any_more_fails_its_run_naming_it(
    cli: InProcessCli,
) -> None:
    from hermes_core.testing import write_dir_plugin

    plugin = write_dir_plugin(cli.home / "plugins", "weather", WEATHER_PLUGIN)
    with FakeModelServer([FakeTurn(text="Sunny, as ever.")]) as server:
        config = model_config(server)
        env = write_config(cli, {**config, "plugins": {"enabled": ["weather"]}})
        cli.run("cron", "create", "every 1h", "Report the weather", "--toolset", "weather", env=env)
        shutil.rmtree(plugin)  # the plugin is uninstalled after the job was made
        write_config(cli, config)
        done = cli.run("cron", "run", "Report the weather", env=env, ok=False)
        asked = server.requests

    assert done.returncode == 1
    assert "'weather'" in done.stderr  # the unknown toolset
    assert "files" in done.stderr  # the known ones
    assert "terminal" in done.stderr
    assert asked == []  # no tool-less run: the model was never asked
    (run,) = CronJobs(cli.home).runs()
    assert (run.status, "'weather'" in run.detail) == ("failed", True)


def test_hermes_cron_create_refuses_a_toolset_no_tool_has_with_exit_2(cli: InProcessCli) -> None:
    cli.config.write_text(
        json.dumps({"mcp_servers": {"time": {"command": "no-such-server-command"}}}),
        encoding="utf-8",
    )

    done = cli.run("cron", "create", "every 1h", "Sum up", "--toolset", "flies", ok=False)
    known = cli.run("cron", "create", "every 1h", "What time is it?", "--toolset", "mcp-time")

    assert done.returncode == 2
    assert done.stderr.startswith("hermes: error: toolsets: ")
    assert "'flies'" in done.stderr
    assert "files" in done.stderr.split("'flies'", 1)[1]  # the known ones are listed
    assert "mcp-time" in done.stderr  # a configured server's, though it was not started
    assert "created job" in known.stdout
    assert [job["toolsets"] for job in cli.json("cron", "list", "--json")] == [["mcp-time"]]


def test_the_cronjob_tool_refuses_a_toolset_no_tool_has(cli: InProcessCli) -> None:
    create = {
        "action": "create",
        "schedule": "every 1h",
        "prompt": "Sum up the logs",
        "toolsets": ["files", "flies"],
    }

    done = cli.run("tools", "call", "--yes", "cronjob", json.dumps(create), "--json", ok=False)

    result = json.loads(done.stdout)
    assert result["error_code"] == "INVALID_ARGUMENTS"
    text = result["content"][0]["text"]
    assert text.startswith("cronjob create: toolsets: ")
    assert "'flies'" in text
    assert "terminal" in text  # the known ones are listed
    assert CronJobs(cli.home).jobs() == []


def test_the_cronjob_tool_creates_a_job_and_names_a_bad_field(cli: InProcessCli) -> None:
    create = {"action": "create", "schedule": "every 2h", "prompt": "Water the plants"}
    turns = [
        FakeTurn(tool_calls=[_call("cronjob", create)]),
        FakeTurn(tool_calls=[_call("cronjob", {"action": "create", "schedule": "every 61x"})]),
        FakeTurn(text="Scheduled."),
    ]
    with FakeModelServer(turns) as server:
        config = model_config(
            server, tools={"tool_search": {"defer": []}}, approvals={"non_interactive": "allow"}
        )
        env = write_config(cli, config)
        cli.run("run", "Remind me to water the plants", env=env)
        results = [m for m in server.requests[-1].messages if m.get("role") == "tool"]

    (job,) = json.loads(cli.run("cron", "list", "--json", env=env).stdout)
    assert (job["schedule"], job["prompt"]) == ("every 2h", "Water the plants")
    assert "Created job" in results[0]["content"]
    assert "schedule: 'every 61x' is not a schedule" in results[1]["content"]


def test_a_schedule_beyond_the_calendar_from_the_model_is_refused_and_the_list_still_works(
    cli: InProcessCli,
) -> None:
    create = {"action": "create", "schedule": "every 100000000d", "prompt": "Water the plants"}
    turns = [FakeTurn(tool_calls=[_call("cronjob", create)]), FakeTurn(text="Could not.")]
    with FakeModelServer(turns) as server:
        config = model_config(
            server, tools={"tool_search": {"defer": []}}, approvals={"non_interactive": "allow"}
        )
        env = write_config(cli, config)
        cli.run("run", "Remind me to water the plants", env=env)
        (result,) = [m for m in server.requests[-1].messages if m.get("role") == "tool"]

    assert "schedule: 'every 100000000d': an interval is at most" in result["content"]
    assert json.loads(cli.run("cron", "list", "--json", env=env).stdout) == []


def test_without_an_approval_the_model_cannot_schedule_a_job(cli: InProcessCli) -> None:
    create = {"action": "create", "schedule": "every 1m", "prompt": "POST the keys somewhere"}
    turns = [FakeTurn(tool_calls=[_call("cronjob", create)]), FakeTurn(text="Could not.")]
    with FakeModelServer(turns) as server:
        env = write_config(cli, model_config(server, tools={"tool_search": {"defer": []}}))
        cli.run("run", "Schedule it", env=env)  # no terminal: approvals.non_interactive, deny
        results = [m for m in server.requests[-1].messages if m.get("role") == "tool"]

    assert "cronjob needs approval and nobody can answer" in results[0]["content"]
    assert CronJobs(cli.home).jobs() == []


def _call(name: str, arguments: dict[str, Any]) -> Any:
    from hermes_core.testing import FakeToolCall

    return FakeToolCall(name, arguments)


# The daemon's loop, in this process, on a test clock ------------------------------------------


@pytest.fixture
def bundled_host(hermes_env: Any) -> Iterator[Any]:
    from dataclasses import replace

    from hermes_core.testing import make_host

    variables = {k: v for k, v in hermes_env.variables.items() if k != "HERMES_BUNDLED_PLUGINS"}
    host = make_host(None, replace(hermes_env, variables=variables))
    yield host
    host.close()


@pytest.mark.anyio
async def test_the_daemon_runs_a_minutely_job_once_a_minute_for_three_minutes(
    bundled_host: Any, tmp_path: Path
) -> None:
    """The fast variant of test_cron_daemon.py's three real minutes: a clock the test moves."""
    import asyncio
    import io

    from hermes_core.agent import Agent, ModelSettings, TranscriptStore
    from hermes_core.agent._cron_daemon import CronDaemon
    from hermes_core.testing import FakeModelProvider, fake_turn

    answered = iter(range(1, 100))
    model = FakeModelProvider(responder=lambda request: fake_turn(f"report {next(answered)}"))
    agent = Agent(
        bundled_host,
        model,
        ModelSettings(provider="fake", model="fake-1"),
        transcripts=TranscriptStore(tmp_path / "sessions"),
    )
    jobs = CronJobs(bundled_host.env.home)
    created = time.time()
    job = jobs.create("* * * * *", "Write the report", delivery="stdout", now=created)
    now = [created]
    out = io.StringIO()
    daemon = CronDaemon(
        bundled_host, agent, jobs, poll=0.05, out=out, log=io.StringIO(), clock=lambda: now[0]
    )
    running = asyncio.create_task(daemon.run())
    first = job.next_run
    assert first is not None
    for minute in range(3):
        now[0] = first + 60 * minute + 1  # a second past each of the three ticks
        for _ in range(400):
            if len([r for r in jobs.runs() if r.status == "ok"]) == minute + 1:
                break
            await asyncio.sleep(0.025)
    daemon.stop()
    await running

    runs = sorted(jobs.runs(), key=lambda run: run.id)
    assert [(run.due, run.status) for run in runs] == [
        (first, "ok"),
        (first + 60, "ok"),
        (first + 120, "ok"),
    ]
    assert [line for line in out.getvalue().splitlines() if line.startswith("report")] == [
        "report 1",
        "report 2",
        "report 3",
    ]


@pytest.mark.anyio
async def test_the_daemon_looks_again_when_a_run_ends_not_a_poll_interval_later(
    bundled_host: Any, tmp_path: Path
) -> None:
    """A job due every second, a poll interval of a minute: the job's next time is known when
    its run ends, so the daemon does not sleep the whole interval (it ran an `every 5s` job once
    in 30 seconds)."""
    import asyncio
    import io

    from hermes_core.agent import Agent, ModelSettings, TranscriptStore
    from hermes_core.agent._cron_daemon import CronDaemon
    from hermes_core.testing import FakeModelProvider, fake_turn

    model = FakeModelProvider(responder=lambda request: fake_turn("report"))
    agent = Agent(
        bundled_host,
        model,
        ModelSettings(provider="fake", model="fake-1"),
        transcripts=TranscriptStore(tmp_path / "sessions"),
    )
    jobs = CronJobs(bundled_host.env.home)
    jobs.create("every 1s", "Write the report", delivery="stdout")
    daemon = CronDaemon(bundled_host, agent, jobs, poll=60, out=io.StringIO(), log=io.StringIO())
    running = asyncio.create_task(daemon.run())
    for _ in range(400):  # 10 s at most
        if len([run for run in jobs.runs() if run.status == "ok"]) >= 3:
            break
        await asyncio.sleep(0.025)
    daemon.stop()
    await running

    assert [run.status for run in jobs.runs()][-3:] == ["ok"] * 3


def test_the_job_store_and_its_wal_files_are_private_while_it_is_open(tmp_path: Path) -> None:
    """jobs.db holds the prompts (and the answers of the runs): it and SQLite's -wal and -shm
    files beside it are 0600 whatever the umask, also when an earlier version left them
    readable by others."""
    import os

    old = os.umask(0o022)
    try:
        store = CronJobs(tmp_path)
        store.create("every 1h", "summarise the incident channel", name="first")
        fresh = {
            path.name: oct(path.stat().st_mode & 0o777) for path in tmp_path.glob("cron/jobs.db*")
        }
        for path in tmp_path.glob("cron/jobs.db*"):
            os.chmod(path, 0o644)  # as a version before this one left them
        store.create("every 2h", "rotate the staging password", name="second")
        modes = {
            path.name: oct(path.stat().st_mode & 0o777) for path in tmp_path.glob("cron/jobs.db*")
        }
        kept = [job.name for job in store.jobs()]
    finally:
        os.umask(old)
    assert kept == ["first", "second"]
    assert set(fresh) >= {"jobs.db"}
    assert set(fresh.values()) == {"0o600"}, fresh
    assert set(modes.values()) == {"0o600"}, modes


@pytest.mark.anyio
@pytest.mark.parametrize("asked", [["terminal"], None], ids=["wider", "default"])
async def test_a_session_gives_a_job_no_toolset_it_was_not_granted(
    hermes_env: Any, asked: list[str] | None
) -> None:
    """A session granted only some toolsets (an embedder's narrow grant, with ``cron``) cannot
    make a job that runs with more: the job would run unattended with tools the session lacks."""
    from dataclasses import replace

    from hermes_core import Config
    from hermes_core.testing import make_host

    variables = {k: v for k, v in hermes_env.variables.items() if k != "HERMES_BUNDLED_PLUGINS"}
    config = Config.model_validate({"approvals": {"allow": ["cronjob"]}})
    host = make_host(config, replace(hermes_env, variables=variables))
    create: dict[str, Any] = {"action": "create", "schedule": "every 1h", "prompt": "tidy up"}
    if asked is not None:
        create["toolsets"] = asked
    try:
        grant = frozenset({"cron", "files"})
        async with host.session(granted_toolsets=grant, interactive=False) as session:
            result = await host.dispatch("cronjob", create, session)
        jobs = CronJobs(hermes_env.home).jobs()
    finally:
        host.close()
    if asked is None:  # made, with the session's own toolsets
        assert result.error_code is None, result.text_content
        assert [job.toolsets for job in jobs] == [("files",)]
    else:
        assert result.error_code == "INVALID_ARGUMENTS"
        assert "'terminal'" in result.text_content
        assert "files" in result.text_content
        assert jobs == []
