"""The cron jobs of one home and the log of their runs: one SQLite database,
``$HERMES_HOME/cron/jobs.db`` (:class:`CronJobs`).

Every change is one SQLite transaction, so a crash leaves the store as it was before or after
it, never half-written; two processes (two daemons, a daemon and ``hermes cron create``) may use
it at once. A run is claimed with a **lease** on its job's row (:meth:`CronJobs.claim_due`):
the claiming daemon's ``host:pid``, renewed while the run lasts; a job under a live lease is
never claimed again, so two daemons never run the same job. A lease whose daemon is gone (its
pid is dead on this host, or the lease ran out unrenewed: a SIGKILL, a lost machine) or stuck
(on this host, no renewal for its lease of awake time; the rule is
:func:`~hermes_core.agent._cron_lease.lease_over`) is taken back (:meth:`CronJobs.recover`):
that run is marked ``failed`` and the job is runnable again at its next time. A run taken back
is never finished over (:meth:`CronJobs.finish` writes nothing of it).

A job keeps the directory it was made in (``cwd``). A store made before that column gets it on
first open (:mod:`~hermes_core.agent._cron_migrations`, which opens the store): its jobs have
none, and run in the directory of the process that runs them, as they did.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from collections.abc import Collection, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from hermes_core._shown import printable
from hermes_core.agent._cron_fields import (
    DELIVERIES,
    check_cwd,
    check_delivery,
    check_model,
    check_name,
    check_prompt,
)
from hermes_core.agent._cron_lease import awake_stamp, lease_over, start_of
from hermes_core.agent._cron_migrations import LOCK_WAIT, open_store, store_error
from hermes_core.agent._cron_rows import (
    CronJob,
    CronRun,
    job_of,
    last_run_of,
    run_of,
)
from hermes_core.agent._cron_schedule import JobError, parse_schedule
from hermes_core.agent._cron_toolsets import check_toolsets

if TYPE_CHECKING:
    from hermes_core._paths import Environment

UNCHANGED: Final = object()
"""What :meth:`CronJobs.edit` takes for a model left as it is (``None`` clears it)."""


class CronJobs:
    """The jobs and runs of the home ``home`` (``home/cron/jobs.db``, made on first use); a
    change waits up to ``lock_wait`` seconds for another process's write to end."""

    def __init__(self, home: Path, *, lock_wait: float = LOCK_WAIT) -> None:
        self.path = home / "cron" / "jobs.db"
        self.lock_wait = lock_wait

    def not_run(self, env: Environment, subject: str = "this job") -> str | None:
        """``"<subject> will not run: <why>"`` for the jobs of a home inside the project while
        its gate is closed (``hermes cron run`` and ``daemon`` refuse them), else ``None``: the
        one wording of ``hermes cron create`` and ``list`` and the ``cronjob`` tool."""
        from hermes_core._project_trust import project_refusal

        refusal = project_refusal(env, self.path, "the cron jobs file")
        return None if refusal is None else f"{subject} will not run: {refusal}"

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One transaction that takes the write lock at once (``BEGIN IMMEDIATE``)."""
        with closing(self._connect()) as db:
            try:
                db.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as bad:
                raise store_error(self.path, bad, self.lock_wait) from None
            try:
                yield db
                db.execute("COMMIT")
            except BaseException as bad:
                if db.in_transaction:  # SQLite rolls back on its own after some errors
                    db.execute("ROLLBACK")
                if isinstance(bad, sqlite3.OperationalError):  # a full disk, a lock
                    raise store_error(self.path, bad, self.lock_wait) from None
                raise

    def _connect(self) -> sqlite3.Connection:
        return open_store(self.path, self.lock_wait)

    # Jobs ------------------------------------------------------------------------------------

    def create(
        self,
        schedule: object,
        prompt: object,
        *,
        name: object = None,
        toolsets: object = None,
        delivery: object = "file",
        cwd: object = None,
        model: object = None,
        now: float | None = None,
        known_toolsets: Collection[str] | None = None,
    ) -> CronJob:
        """A new job, each field checked (a :class:`JobError` names the first bad one); its
        ``toolsets`` among ``known_toolsets`` when given (:func:`~hermes_core.agent._cron_toolsets.
        job_toolsets`: a toolset no tool has would give the job no tool of it). Its runs work
        in ``cwd`` (a directory; ``None``: the directory of the process that runs it) and ask
        ``model`` of the configured provider (``None``: ``model.model`` at run time)."""
        now = time.time() if now is None else now
        parsed = parse_schedule(schedule, now)
        prompt = check_prompt(prompt)
        if name is not None:
            check_name(name)
        chosen = check_toolsets(toolsets, known_toolsets)
        where = check_delivery(delivery)
        directory = check_cwd(cwd)
        chosen_model = check_model(model)
        job_id = uuid.uuid4().hex[:8]
        text = " ".join(prompt.split())  # the default name: its first whole words, 40 at most
        cut = text[:41].rsplit(" ", 1)[0] if len(text) > 40 and " " in text[:41] else text[:40]
        label = str(name).strip() if name is not None else printable(cut)
        with self._write() as db:
            db.execute(
                "INSERT INTO jobs (id, name, schedule, prompt, toolsets, delivery, created,"
                " next_run, cwd, model) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    job_id,
                    label,
                    parsed.text,
                    prompt,
                    None if chosen is None else json.dumps(chosen),
                    where,
                    now,
                    parsed.first(now),
                    directory,
                    chosen_model,
                ),
            )
        return self.get(job_id)

    def edit(
        self,
        job: str,
        *,
        schedule: object = None,
        prompt: object = None,
        name: object = None,
        toolsets: object = None,
        delivery: object = None,
        cwd: object = None,
        model: object = UNCHANGED,
        now: float | None = None,
        known_toolsets: Collection[str] | None = None,
    ) -> CronJob:
        """``job`` (its id or unique name) with the fields given changed, each checked by
        :meth:`create`'s rule, in one transaction: a :class:`JobError` naming the first bad
        field changes nothing. ``None`` (``model``: :data:`UNCHANGED`) keeps a field; ``model=
        None`` gives the job back to ``model.model``. A new schedule's next time is its first
        after ``now``; the job's id, state (paused or not) and runs are kept."""
        now = time.time() if now is None else now
        changes: dict[str, object] = {}
        if schedule is not None:
            parsed = parse_schedule(schedule, now)
            changes.update(schedule=parsed.text, next_run=parsed.first(now))
        if prompt is not None:
            changes["prompt"] = check_prompt(prompt)
        if name is not None:
            check_name(name)
            changes["name"] = str(name).strip()
        if toolsets is not None:
            changes["toolsets"] = json.dumps(check_toolsets(toolsets, known_toolsets))
        if delivery is not None:
            changes["delivery"] = check_delivery(delivery)
        if cwd is not None:
            changes["cwd"] = check_cwd(cwd)
        if model is not UNCHANGED:
            changes["model"] = check_model(model)
        found = self.get(job)
        if not changes:
            raise JobError("job", f"nothing to change in {printable(found.id)}")
        assigned = ", ".join(f"{column} = ?" for column in changes)  # the names above, no input
        with self._write() as db:
            cursor = db.execute(
                f"UPDATE jobs SET {assigned} WHERE id = ?", (*changes.values(), found.id)
            )
            if not cursor.rowcount:
                raise JobError("job", f"{job!r} matches no job (it was removed meanwhile)")
        return self.get(found.id)

    def jobs(self) -> list[CronJob]:
        """Every job, oldest first."""
        with closing(self._connect()) as db:
            rows = db.execute("SELECT * FROM jobs ORDER BY created, id").fetchall()
        return [job_of(row) for row in rows]

    def listing(self) -> list[dict[str, Any]]:
        """Every job as :meth:`CronJob.to_json` shows it, with ``last_run``: the ``status``,
        ``started`` (local ISO 8601) and ``detail`` of its latest run, or ``None`` (what
        ``hermes cron list`` and the ``cronjob`` tool's ``list`` show)."""
        with closing(self._connect()) as db:
            latest = "SELECT * FROM runs WHERE id IN (SELECT MAX(id) FROM runs GROUP BY job_id)"
            last = {row["job_id"]: row for row in db.execute(latest).fetchall()}
        return [{**job.to_json(), "last_run": last_run_of(last.get(job.id))} for job in self.jobs()]

    def get(self, job: str) -> CronJob:
        """The job whose id (or unique name) is ``job``; a :class:`JobError` when none is."""
        found = [j for j in self.jobs() if j.id == job] or [j for j in self.jobs() if j.name == job]
        if len(found) != 1:
            known = ", ".join(printable(f"{j.id} ({j.name})") for j in self.jobs()) or "none"
            why = "is ambiguous" if found else "matches no job"
            raise JobError("job", f"{job!r} {why}; the jobs: {known}")
        return found[0]

    def pause(self, job: str) -> CronJob:
        """Stop ``job`` from running until :meth:`resume` (a run under way finishes)."""
        return self._update(job, "UPDATE jobs SET paused = 1 WHERE id = ?")

    def resume(self, job: str, *, now: float | None = None) -> CronJob:
        """Let ``job`` run again, from its schedule's next time after now."""
        found = self.get(job)
        now = time.time() if now is None else now
        schedule = parse_schedule(found.schedule, found.created)
        following = schedule.following(now, now) if schedule.kind != "at" else found.next_run
        with self._write() as db:
            db.execute(
                "UPDATE jobs SET paused = 0, next_run = ? WHERE id = ?", (following, found.id)
            )
        return self.get(found.id)

    def trigger(self, job: str, *, now: float | None = None) -> CronJob:
        """Make ``job`` due now: a daemon runs it at its next look."""
        now = time.time() if now is None else now
        return self._update(job, "UPDATE jobs SET next_run = ? WHERE id = ?", now)

    def remove(self, job: str) -> CronJob:
        """Delete ``job`` and its runs' log."""
        found = self.get(job)
        with self._write() as db:
            db.execute("DELETE FROM jobs WHERE id = ?", (found.id,))
            db.execute("DELETE FROM runs WHERE job_id = ?", (found.id,))
        return found

    def _update(self, job: str, statement: str, *values: Any) -> CronJob:
        found = self.get(job)
        with self._write() as db:
            db.execute(statement, (*values, found.id))
        return self.get(found.id)

    # Runs ------------------------------------------------------------------------------------

    def recover(self, *, now: float | None = None) -> list[CronRun]:
        """Take back the leases of daemons that are gone or stuck: their runs are marked
        ``failed`` and their jobs are runnable again at their next time. Returns the runs so
        marked."""
        now = time.time() if now is None else now
        with self._write() as db:
            return self._recover(db, now)

    def _recover(self, db: sqlite3.Connection, now: float, keep: str = "") -> list[CronRun]:
        """:meth:`recover`, but the leases of ``keep`` (the daemon looking: its runs live)."""
        rows = db.execute("SELECT * FROM jobs WHERE lease_owner IS NOT NULL").fetchall()
        stale = [(row, why) for row in rows if (why := lease_over(row, now)) is not None]
        marked: list[CronRun] = []
        for row, why in stale:
            if row["lease_owner"] == keep:
                continue
            runs = db.execute(
                "SELECT * FROM runs WHERE job_id = ? AND owner = ? AND status = 'running'",
                (row["id"], row["lease_owner"]),
            ).fetchall()
            for run in runs:
                db.execute(
                    "UPDATE runs SET status = 'failed', finished = ?, detail = ? WHERE id = ?",
                    (now, why, run["id"]),
                )
                marked.append(run_of({**dict(run), "status": "failed", "detail": why}))
            db.execute(f"UPDATE jobs SET {_NO_LEASE} WHERE id = ?", (row["id"],))
        return marked

    def claim_due(
        self, owner: str, lease: float, *, now: float | None = None
    ) -> list[tuple[CronJob, CronRun]]:
        """Claim every job due at ``now`` that no live daemon holds: each gets ``owner``'s
        lease for ``lease`` seconds, its next time (:meth:`Schedule.following`: missed times
        are skipped) and a ``running`` run. Gone daemons' leases are taken back first."""
        now = time.time() if now is None else now
        claimed = []
        with self._write() as db:
            self._recover(db, now, keep=owner)
            due = db.execute(
                "SELECT * FROM jobs WHERE paused = 0 AND lease_owner IS NULL"
                " AND next_run IS NOT NULL AND next_run <= ? ORDER BY next_run",
                (now,),
            ).fetchall()
            for row in due:
                try:
                    if (damaged := job_of(row).damaged) is not None:
                        raise JobError("store", f"its row in {self.path} is damaged: {damaged}")
                    schedule = parse_schedule(row["schedule"], row["created"])
                    following = schedule.following(row["next_run"], now)
                except JobError as bad:  # a row edited by hand: the job waits, paused
                    db.execute("UPDATE jobs SET paused = 1 WHERE id = ?", (row["id"],))
                    self._log(db, row["id"], None, owner, now, "failed", f"job paused: {bad}")
                    continue
                db.execute(
                    f"UPDATE jobs SET {_LEASE}, next_run = ? WHERE id = ?",
                    (*_lease_of(owner, now, lease), following, row["id"]),
                )
                run = self._log(db, row["id"], row["next_run"], owner, now, "running", "")
                claimed.append((job_of({**dict(row), "lease_owner": owner}), run))
        return claimed

    def claim(self, job: str, owner: str, lease: float, *, now: float | None = None) -> CronRun:
        """Claim ``job`` to run it now, whenever it is due (``hermes cron run``); a
        :class:`JobError` when a live daemon is running it."""
        found = self.get(job)
        if found.damaged is not None:
            raise JobError(
                "job",
                f"{printable(found.id)} cannot run: its row in {self.path} is damaged: "
                f"{found.damaged}; remove it (hermes cron remove {printable(found.id)})",
            )
        now = time.time() if now is None else now
        with self._write() as db:
            self._recover(db, now)
            taken = db.execute(
                f"UPDATE jobs SET {_LEASE} WHERE id = ? AND lease_owner IS NULL",
                (*_lease_of(owner, now, lease), found.id),
            ).rowcount
            if not taken:
                holder = db.execute("SELECT lease_owner FROM jobs WHERE id = ?", (found.id,))
                raise JobError("job", f"{found.id} is running now (in {holder.fetchone()[0]})")
            return self._log(db, found.id, None, owner, now, "running", "")

    def renew(
        self, owner: str, lease: float, *, now: float | None = None, held: Collection[int] = ()
    ) -> list[int]:
        """Extend ``owner``'s leases by ``lease`` seconds from now (a daemon's heartbeat).
        Returns the runs among ``held`` (ids) that ``owner`` holds no more: taken back while
        it could not renew (stopped or stuck past its lease, or asleep past it as another
        machine or an older hermes sees it)."""
        now = time.time() if now is None else now
        with self._write() as db:
            db.execute(
                "UPDATE jobs SET lease_until = ?, lease_awake = ? WHERE lease_owner = ?",
                (now + lease, awake_stamp(now + lease, lease), owner),
            )
            return [run for run in held if not self._holds(db, run, owner)]

    def holds(self, run: CronRun) -> bool:
        """Whether ``run`` was not taken back (a run whose job was removed meanwhile was not)."""
        with closing(self._connect()) as db:
            return self._holds(db, run.id, run.owner)

    def _holds(self, db: sqlite3.Connection, run: int, owner: str) -> bool:
        found = db.execute(
            "SELECT runs.status, jobs.lease_owner FROM runs LEFT JOIN jobs"
            " ON jobs.id = runs.job_id WHERE runs.id = ? AND runs.owner = ?",
            (run, owner),
        ).fetchone()
        return found is None or (found[0] == "running" and found[1] == owner)

    def finish(self, run: CronRun, status: str, detail: str = "", output: str = "") -> bool:
        """End ``run`` with ``status`` (``ok`` or ``failed``) and release its job's lease;
        ``False``, nothing written, when the run was taken back meanwhile (it ended
        ``failed``, and its job may run again under another lease)."""
        with self._write() as db:
            if not self._holds(db, run.id, run.owner):
                return False
            db.execute(
                "UPDATE runs SET status = ?, finished = ?, detail = ?, output = ? WHERE id = ?",
                (status, time.time(), detail, output, run.id),
            )
            db.execute(
                f"UPDATE jobs SET {_NO_LEASE} WHERE id = ? AND lease_owner = ?",
                (run.job_id, run.owner),
            )
        return True

    def runs(self, job: str | None = None, *, limit: int = 50) -> list[CronRun]:
        """The latest runs (of ``job``), newest first."""
        with closing(self._connect()) as db:
            if job is None:
                rows = db.execute("SELECT * FROM runs ORDER BY id DESC LIMIT ?", (limit,))
            else:
                found = self.get(job).id
                rows = db.execute(
                    "SELECT * FROM runs WHERE job_id = ? ORDER BY id DESC LIMIT ?",
                    (found, limit),
                )
            return [run_of(row) for row in rows.fetchall()]

    def _log(
        self,
        db: sqlite3.Connection,
        job_id: str,
        due: float | None,
        owner: str,
        now: float,
        status: str,
        detail: str,
    ) -> CronRun:
        cursor = db.execute(
            "INSERT INTO runs (job_id, due, started, owner, status, detail, finished)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (job_id, due, now, owner, status, detail, None if status == "running" else now),
        )
        row = db.execute("SELECT * FROM runs WHERE id = ?", (cursor.lastrowid,)).fetchone()
        return run_of(row)


_LEASE: Final = "lease_owner = ?, lease_until = ?, lease_start = ?, lease_awake = ?"
_NO_LEASE: Final = "lease_owner = NULL, lease_until = NULL, lease_start = NULL, lease_awake = NULL"


def _lease_of(owner: str, now: float, lease: float) -> tuple[str, float, str | None, str]:
    """The values of :data:`_LEASE` for ``owner`` claiming at ``now`` for ``lease`` s."""
    return owner, now + lease, start_of(owner), awake_stamp(now + lease, lease)


__all__ = [
    "DELIVERIES",
    "UNCHANGED",
    "CronJobs",
    "check_delivery",
]
