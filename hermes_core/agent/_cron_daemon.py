"""``hermes cron daemon``: the scheduler, in the foreground (for systemd or a container).

Each look (every ``cron.poll_interval`` seconds at most, sooner when a job is due sooner, and
again whenever a run ends, as its job's next time then counts) claims
the due jobs (:meth:`~hermes_core.agent._cron_store.CronJobs.claim_due`: a lease per job, so
two daemons on one home never run the same job, and one job has one run at a time) and runs
each in its own task through the conversation loop (:func:`~hermes_core.agent._cron_runs.run_job`).
While runs last their leases are renewed every third of ``cron.lease`` seconds; a daemon that is
killed stops renewing, and the next look of any daemon (or ``hermes cron list``) marks its run
``failed`` and makes the job runnable again (:mod:`~hermes_core.agent._cron_lease`: on this
machine a daemon that still runs keeps its runs until it renewed none for ``cron.lease``
seconds of the machine's awake time: stopped or stuck, not asleep). A daemon that wakes to find
a run taken back stops it and writes nothing more of it. Stopping (SIGTERM, Ctrl-C) starts no
new run and stops the runs under way, each logged ``failed`` ("the daemon was stopped").
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

from hermes_core._shown import as_shown, printable
from hermes_core.agent._cron_lease import owner_name
from hermes_core.agent._cron_rows import CronJob, CronRun
from hermes_core.agent._cron_runs import TAKEN_BACK, leases_renewed, run_job
from hermes_core.agent._cron_schedule import JobError
from hermes_core.agent._cron_store import CronJobs

if TYPE_CHECKING:
    from hermes_core._host import Host
    from hermes_core.agent._agent import Agent


@dataclass
class CronDaemon:
    """Runs the due jobs of ``jobs`` with ``host`` and ``agent`` (``model.model``'s; ``None``
    when it is not set: only the jobs with a model of their own run) until :meth:`stop`.
    ``clock`` (epoch seconds) says when jobs are due: a test may pass its own."""

    host: Host
    agent: Agent | None
    jobs: CronJobs
    poll: float = 30.0
    lease: float = 60.0
    out: TextIO = field(default_factory=lambda: sys.stdout)
    log: TextIO = field(default_factory=lambda: sys.stderr)
    owner: str = field(default_factory=owner_name)
    clock: Callable[[], float] = time.time
    _stopping: asyncio.Event = field(default_factory=asyncio.Event)
    _wake: asyncio.Event = field(default_factory=asyncio.Event)
    _running: dict[int, asyncio.Task[None]] = field(default_factory=dict)
    _taken: set[int] = field(default_factory=set)

    def stop(self) -> None:
        """Start no new run; stop those under way."""
        self._stopping.set()
        self._wake.set()

    async def run(self) -> None:
        """Look for due jobs and run them until :meth:`stop`."""
        self.say(f"started ({self.owner}); jobs in {self.jobs.path}")
        if self.agent is None:
            self.say("model.model is not set: a job without a model of its own fails its runs")
        for run in self.jobs.recover():
            self.say(f"job {run.job_id} run {run.id}: failed: {run.detail}")
        held = self._running.keys
        async with leases_renewed(self.jobs, self.owner, self.lease, held=held, lost=self._lost):
            try:
                while not self._stopping.is_set():
                    try:
                        self._start_due()
                        wait = self._wait()
                    except JobError as exc:
                        # Locked by another process, or its disk full: the runs under way go
                        # on; stopping would cut them short for what may pass.
                        self.say(f"{exc}; looking again in {self.poll:g} s")
                        wait = self.poll
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._wake.wait(), wait)
                    self._wake.clear()
            finally:
                for task in list(self._running.values()):
                    task.cancel()
                await asyncio.gather(*self._running.values(), return_exceptions=True)
                self.say("stopped")

    def _start_due(self) -> None:
        for job, run in self.jobs.claim_due(self.owner, self.lease, now=self.clock()):
            self.say(f"job {job.id} ({printable(job.name)}) run {run.id}: started")
            self._running[run.id] = asyncio.create_task(self._run(job, run))

    def _wait(self) -> float:
        """Seconds until the next look: the next due job's time, at most ``poll``."""
        upcoming = [
            job.next_run
            for job in self.jobs.jobs()
            if not job.paused and job.lease_owner is None and job.next_run is not None
        ]
        if not upcoming:
            return self.poll
        return min(self.poll, max(0.01, min(upcoming) - self.clock() + 0.01))

    def _lost(self, runs: list[int]) -> None:
        """Stop the runs taken back while this daemon could not renew (asleep, stopped)."""
        for run in runs:
            if (task := self._running.get(run)) is not None:
                self._taken.add(run)
                task.cancel()

    async def _run(self, job: CronJob, run: CronRun) -> None:
        try:
            outcome = await run_job(self.host, self.agent, self.jobs, job, run, self.out)
        except asyncio.CancelledError:
            if run.id in self._taken:  # its log says failed already, maybe another run since
                self._taken.discard(run.id)
                self.say(f"job {job.id} run {run.id}: stopped: {TAKEN_BACK}")
                raise
            self.jobs.finish(run, "failed", "the daemon was stopped during the run")
            self.say(f"job {job.id} run {run.id}: failed: the daemon was stopped")
            raise
        finally:
            self._running.pop(run.id, None)
            self._wake.set()  # a running job is left out of _wait: its next time counts now
        self.say(f"job {job.id} run {run.id}: {outcome.status}: {outcome.detail}")

    def say(self, line: str) -> None:
        """One line of the daemon's log (stderr: the journal under systemd); on a terminal its
        control characters escaped (a run's detail may quote a provider's error text)."""
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        self.log.write(as_shown(self.log, f"{stamp} hermes cron: {line}") + "\n")
        self.log.flush()


__all__ = ["CronDaemon"]
