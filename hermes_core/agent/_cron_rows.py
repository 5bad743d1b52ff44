"""The rows of the job store read back as :class:`CronJob` and :class:`CronRun`, checked.

The store is a file on disk: an edit by hand, another program or a damaged disk can leave a
column of the wrong type in it. Reading a row never fails for that. A job whose row cannot be
read whole is still a job, marked ``damaged`` (which column, and what it holds): it is listed
and can be removed, but never runs (the daemon pauses it with a failed run saying why), and the
fields it cannot give are narrowed to ones that grant nothing (no toolset, no next time). A run
row with a time that is no number shows no time. A job's ``cwd`` is ``NULL`` in a row made before
the column (the run works in its process's directory, as then) or an absolute path; its
``model`` is ``NULL`` (``model.model`` at run time) or one model name by the rule a job is made
by (:func:`~hermes_core.agent._model_names.model_problem`).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from hermes_core._redaction import shown_url
from hermes_core._shown import shown
from hermes_core.agent._model_names import MAX_MODEL, model_problem

__all__ = [
    "CronJob",
    "CronRun",
    "job_of",
    "last_run_of",
    "lease_ran_out",
    "local_time",
    "run_of",
]


@dataclass(frozen=True)
class CronJob:
    """One job: when it runs (``schedule``), what it asks (``prompt``), with which
    ``toolsets`` (``None``: every toolset but ``cron``), where its answer goes (``delivery``);
    ``next_run`` (epoch seconds) is ``None`` when nothing is left to run (a one-shot job that
    ran). ``cwd`` is the directory its runs work in (``None``: the running process's, a job
    made before jobs kept one); ``model`` the model of the configured provider its runs ask
    (``None``: ``model.model`` at run time). ``damaged`` says which column of its row could not
    be read (the job never runs)."""

    id: str
    name: str
    schedule: str
    prompt: str
    toolsets: tuple[str, ...] | None
    delivery: str
    paused: bool
    created: float
    next_run: float | None
    lease_owner: str | None
    cwd: str | None = None
    model: str | None = None
    damaged: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The job as the ``cronjob`` tool shows one it made or changed (times in local ISO
        8601); a listing adds each job's last run (:meth:`CronJobs.listing`)."""
        shown_job: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "schedule": self.schedule,
            "prompt": self.prompt,
            "toolsets": None if self.toolsets is None else list(self.toolsets),
            "delivery": shown_url(self.delivery),
            "cwd": self.cwd,
            "model": self.model,
            "state": self.state,
            "next_run": local_time(self.next_run),
        }
        if self.damaged is not None:
            shown_job["damaged"] = self.damaged
        return shown_job

    @property
    def state(self) -> str:
        """``damaged``, ``paused``, ``running``, ``done`` (a one-shot job that has run: no next
        time) or ``scheduled``."""
        if self.damaged is not None:
            return "damaged"
        if self.paused:
            return "paused"
        if self.lease_owner:
            return "running"
        return "done" if self.next_run is None else "scheduled"


@dataclass(frozen=True)
class CronRun:
    """One run of a job: the time it was ``due`` (``None`` for ``hermes cron run``), ``status``
    ``running``, ``ok`` or ``failed`` (``detail`` says why), the answer in ``output``."""

    id: int
    job_id: str
    due: float | None
    started: float
    finished: float | None
    owner: str
    status: str
    detail: str
    output: str


def local_time(moment: float | None) -> str:
    """Epoch seconds in local ISO 8601 (``-`` for none)."""
    if moment is None:
        return "-"
    return datetime.fromtimestamp(moment).astimezone().isoformat(timespec="seconds")


_IDENTIFIER: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


class _Reading:
    """One row's columns, each checked; what could not be read is noted in ``problems``."""

    def __init__(self, row: Any) -> None:
        self.row = row
        self.problems: list[str] = []

    def _bad(self, column: str, expected: str) -> None:
        self.problems.append(f"{column} is {shown(self.row[column])}, not {expected}")

    def text(self, column: str) -> str:
        value = self.row[column]
        if isinstance(value, str):
            return value
        self._bad(column, "text")
        return str(value)[:200]

    def identifier(self, column: str) -> str:
        # The id names the job's output folder: never a path, whatever an edit left.
        value = self.text(column)
        if not _IDENTIFIER.fullmatch(value):
            self._bad(column, "a job id (letters, digits, - and _)")
        return value

    def moment(self, column: str, *, optional: bool) -> float | None:
        value = self.row[column]
        if _number(value):
            return float(value)
        if optional and value is None:
            return None
        self._bad(column, "a time (epoch seconds)")
        return None

    def directory(self) -> str | None:
        value = self.row["cwd"]
        if value is None or (isinstance(value, str) and os.path.isabs(value) and "\0" not in value):
            return value
        self._bad("cwd", "an absolute directory path")
        return None

    def model(self) -> str | None:
        value = self.row["model"]
        if value is None or (model_problem(value) is None and value == value.strip()):
            return value  # type: ignore[no-any-return]
        self._bad("model", f"a model name (one word, at most {MAX_MODEL} characters)")
        return None  # none: the job is damaged and never runs

    def toolsets(self) -> tuple[str, ...] | None:
        value = self.row["toolsets"]
        if value is None:
            return None
        try:
            names = json.loads(value) if isinstance(value, str) else None
        except (ValueError, RecursionError):  # not JSON, or nested past what Python reads
            names = None
        if isinstance(names, list) and all(isinstance(name, str) and name for name in names):
            return tuple(names)
        self._bad("toolsets", "a JSON list of toolset names")
        return ()  # none: a damaged grant must never widen to every toolset


def job_of(row: Any) -> CronJob:
    """The job of a ``jobs`` row, ``damaged`` when a column could not be read."""
    reading = _Reading(row)
    owner = row["lease_owner"]
    job = CronJob(
        id=reading.identifier("id"),
        name=reading.text("name"),
        schedule=reading.text("schedule"),
        prompt=reading.text("prompt"),
        toolsets=reading.toolsets(),
        delivery=reading.text("delivery"),
        paused=row["paused"] != 0,
        created=reading.moment("created", optional=False) or 0.0,
        next_run=reading.moment("next_run", optional=True),
        lease_owner=owner if isinstance(owner, str) else None,
        cwd=reading.directory(),
        model=reading.model(),
    )
    if not reading.problems:
        return job
    return CronJob(**{**job.__dict__, "damaged": "; ".join(reading.problems)})


def lease_ran_out(row: Any, now: float) -> bool:
    """Whether the lease of a ``jobs`` row is over at ``now`` (one whose end is no number is:
    a damaged lease holds no job)."""
    until = row["lease_until"]
    return not _number(until) or until < now


def run_of(row: Any) -> CronRun:
    """The run of a ``runs`` row; a time that is no number is left out (``0`` or ``None``)."""
    times = {
        column: row[column] if _number(row[column]) else None
        for column in ("due", "started", "finished")
    }
    return CronRun(
        id=row["id"],
        job_id=str(row["job_id"]),
        due=times["due"],
        started=times["started"] or 0.0,
        finished=times["finished"],
        owner=str(row["owner"]),
        status=str(row["status"]),
        detail=str(row["detail"]),
        output=str(row["output"]),
    )


def last_run_of(row: Any) -> dict[str, Any] | None:
    """A job's latest run as a listing shows it: status, start (local ISO 8601), detail."""
    if row is None:
        return None
    run = run_of(row)
    return {"status": run.status, "started": local_time(run.started), "detail": run.detail}
