"""A cron expression's times across the changes of daylight saving time, in the machine's zone
(``TZ``, else ``/etc/localtime``): a daily job keeps its hour of the clock on the wall, the day
after a change as on every other, and a time the clock shows twice in autumn runs once."""

from __future__ import annotations

import os
import time
import zoneinfo
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from hermes_core.agent import CronJobs


@pytest.fixture
def berlin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def at(text: str) -> float:
    """Epoch seconds of ``text``, an ISO 8601 time with its offset."""
    return datetime.fromisoformat(text).timestamp()


def shown(moment: float | None) -> str:
    assert moment is not None
    return datetime.fromtimestamp(moment).astimezone().isoformat()


def runs(jobs: CronJobs, schedule: str, created: str, count: int) -> list[str]:
    """The times the daemon runs a job made at ``created``, each run starting on time."""
    job = jobs.create(schedule, "Sum up the logs", now=at(created))
    times = [job.next_run]
    for _ in range(count - 1):
        due = times[-1]
        assert due is not None
        ((_, run),) = jobs.claim_due("host:1", 60, now=due)
        jobs.finish(run, "ok")
        times.append(jobs.get(job.id).next_run)
    return [shown(moment) for moment in times]


def test_a_daily_job_keeps_its_hour_the_day_after_spring_forward(
    berlin: None, tmp_path: Path
) -> None:
    assert runs(CronJobs(tmp_path), "0 9 * * *", "2027-03-27T08:00:00+01:00", 3) == [
        "2027-03-27T09:00:00+01:00",
        "2027-03-28T09:00:00+02:00",  # not 10:00: the 09:00 of the day before, plus a day
        "2027-03-29T09:00:00+02:00",
    ]


def test_a_daily_job_keeps_its_hour_the_day_after_fall_back(berlin: None, tmp_path: Path) -> None:
    assert runs(CronJobs(tmp_path), "0 9 * * *", "2027-10-30T08:00:00+02:00", 3) == [
        "2027-10-30T09:00:00+02:00",
        "2027-10-31T09:00:00+01:00",  # not 08:00
        "2027-11-01T09:00:00+01:00",
    ]


def test_a_time_the_spring_change_skips_runs_once_when_the_clock_moves_past_it(
    berlin: None, tmp_path: Path
) -> None:
    assert runs(CronJobs(tmp_path), "30 2 * * *", "2027-03-27T12:00:00+01:00", 3) == [
        "2027-03-28T03:00:00+02:00",  # 02:30 never comes that night: at 03:00, once
        "2027-03-29T02:30:00+02:00",
        "2027-03-30T02:30:00+02:00",
    ]


def test_a_time_the_clock_shows_twice_in_autumn_runs_once(berlin: None, tmp_path: Path) -> None:
    assert runs(CronJobs(tmp_path), "30 2 * * *", "2027-10-30T12:00:00+02:00", 3) == [
        "2027-10-31T02:30:00+02:00",  # not again at 02:30+01:00, nor at 01:30 the next day
        "2027-11-01T02:30:00+01:00",
        "2027-11-02T02:30:00+01:00",
    ]


def test_a_job_of_every_hour_runs_in_both_hours_the_clock_shows_twice(
    berlin: None, tmp_path: Path
) -> None:
    assert runs(CronJobs(tmp_path), "0 * * * *", "2027-10-31T01:30:00+02:00", 4) == [
        "2027-10-31T02:00:00+02:00",
        "2027-10-31T02:00:00+01:00",  # an hour later: it runs each hour that passes
        "2027-10-31T03:00:00+01:00",
        "2027-10-31T04:00:00+01:00",
    ]


def test_a_zone_tz_cannot_name_keeps_the_offset_of_the_moment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TZ", "CET-1CEST,M3.5.0,M10.5.0/3")  # a POSIX rule: no zone file
    time.tzset()
    try:
        job = CronJobs(tmp_path).create("0 9 * * *", "Sum up", now=at("2027-06-01T08:00:00+02:00"))
        assert shown(job.next_run) == "2027-06-01T09:00:00+02:00"
    finally:
        monkeypatch.undo()
        time.tzset()


def test_a_tz_naming_a_zone_file_by_its_path_keeps_the_hour_too(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``TZ=:/etc/localtime``, a path to a zone file, as servers are often told to set it."""
    files = (Path(base, "Europe", "Berlin") for base in zoneinfo.TZPATH)
    berlin = next(path for path in files if path.is_file())
    monkeypatch.setenv("TZ", f":{berlin}")
    time.tzset()
    try:
        assert runs(CronJobs(tmp_path), "0 9 * * *", "2027-03-27T08:00:00+01:00", 2) == [
            "2027-03-27T09:00:00+01:00",
            "2027-03-28T09:00:00+02:00",
        ]
    finally:
        monkeypatch.undo()
        time.tzset()


def zone_file(name: str) -> Path:
    files = (Path(base, *name.split("/")) for base in zoneinfo.TZPATH)
    return next(path for path in files if path.is_file())


@pytest.mark.parametrize("how", ["replaced", "written over"])
def test_a_zone_file_changed_between_two_computations_is_read_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, how: str
) -> None:
    # The zone file is read once while it stays the same file, unchanged; the machine's zone
    # chosen again (the link /etc/localtime replaced, or the file written over) is seen.
    local = tmp_path / "localtime"
    local.write_bytes(zone_file("Europe/Berlin").read_bytes())
    monkeypatch.setenv("TZ", f":{local}")
    time.tzset()
    jobs, made = CronJobs(tmp_path / "home"), at("2027-01-04T01:00:00+00:00")
    try:
        in_berlin = jobs.create("0 9 * * *", "Sum up the logs", now=made).next_run
        tokyo = zone_file("Asia/Tokyo").read_bytes()
        if how == "replaced":
            (tmp_path / "new").write_bytes(tokyo)
            (tmp_path / "new").replace(local)
        else:
            local.write_bytes(tokyo)
            os.utime(local, ns=(1, 1))  # another time, even on a coarse clock
        in_tokyo = jobs.create("0 9 * * *", "Sum up the logs", now=made).next_run
    finally:
        monkeypatch.undo()
        time.tzset()
    assert in_berlin == at("2027-01-04T09:00:00+01:00")
    assert in_tokyo == at("2027-01-05T09:00:00+09:00")


@pytest.mark.parametrize(
    ("schedule", "expected"),
    [
        ("0 5-5 * * *", ["2027-01-03T05:00:00+01:00", "2027-01-04T05:00:00+01:00"]),
        ("0 9 * * 1-1", ["2027-01-04T09:00:00+01:00", "2027-01-11T09:00:00+01:00"]),
        ("0 9 * * mon-MON", ["2027-01-04T09:00:00+01:00", "2027-01-11T09:00:00+01:00"]),
        ("0 9 3-3/2 * *", ["2027-01-03T09:00:00+01:00", "2027-02-03T09:00:00+01:00"]),
        ("0 9 1,5-5 * *", ["2027-01-05T09:00:00+01:00", "2027-02-01T09:00:00+01:00"]),
    ],
)
def test_a_range_of_one_value_is_that_value(
    berlin: None, tmp_path: Path, schedule: str, expected: list[str]
) -> None:
    """croniter reads a range whose ends are one value (``5-5``) as ``*``: ``0 9 * * 1-1``
    ran every day, ``0 5-5 * * *`` every hour, with no word said."""
    assert runs(CronJobs(tmp_path), schedule, "2027-01-02T10:00:00+01:00", 2) == expected
