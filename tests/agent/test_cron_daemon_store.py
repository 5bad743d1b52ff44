"""The daemon's loop when its job store is locked by another process past the wait (a
``sqlite3`` shell holding a write open), in process with a real SQLite store and a real second
connection holding the lock: it says so in one line and looks again at its next poll, keeping
the runs under way and its leases, instead of stopping."""

from __future__ import annotations

import asyncio
import io
import sqlite3
import time
from pathlib import Path
from typing import Any

from hermes_core.agent import CronJobs
from hermes_core.agent._cron_daemon import CronDaemon


async def _said(log: io.StringIO, words: str, running: asyncio.Task[Any]) -> None:
    """Until the daemon's log has ``words`` (or the daemon ended: the test says why)."""
    while words not in log.getvalue() and not running.done():
        await asyncio.sleep(0.02)


def test_the_daemon_says_a_locked_store_and_looks_again_at_its_next_poll(
    tmp_path: Path,
) -> None:
    jobs = CronJobs(tmp_path, lock_wait=0.2)
    log = io.StringIO()
    daemon = CronDaemon(host=None, agent=None, jobs=jobs, poll=0.05, log=log)  # type: ignore[arg-type]

    async def main() -> None:
        running = asyncio.create_task(daemon.run())
        await _said(log, "started", running)
        holder = sqlite3.connect(jobs.path, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        await _said(log, "is locked by another process", running)
        holder.execute("COMMIT")
        holder.close()
        assert not running.done(), log.getvalue()
        job = jobs.create("every 1h", "Sum up the logs", now=time.time() - 3600)
        await _said(log, f"job {job.id}", running)
        assert not running.done(), log.getvalue()
        daemon.stop()
        await running

    asyncio.run(main())

    said = log.getvalue()
    locked = [line for line in said.splitlines() if "is locked by another process" in line]
    assert locked, said
    assert f"store: {jobs.path} is locked by another process (still after 0.2 s)" in locked[0]
    assert "looking again" in locked[0]
    assert said.rstrip().endswith("hermes cron: stopped")
