"""One run of a cron job: its prompt through the conversation loop, nobody at the keyboard,
then its answer delivered (:func:`run_job`).

The run's session is non-interactive: approvals are answered by ``approvals.non_interactive``
(``deny`` by default), ``clarify`` gets no answer, and its grant never holds the ``cron``
toolset, so **a job cannot create jobs** (:func:`job_grant`), and a toolset of the job's that
no tool has now fails the run, naming it. The session works in the job's directory
(:func:`job_directory`; one gone since fails the run, naming it, and keeps the job); the host
is the running process's, built in its own directory, so a job's directory that is a project
brings none of that project's extensions, trusted or not. A job with a model of its own asks
that model of the configured provider (:func:`job_agent`; its transcript's header names it),
one without asks ``model.model`` at run time (not set: its run fails, saying so; the daemon
runs the others). Its delegations are waited for,
as ``hermes run`` does. The answer goes where the job says (:func:`deliver`): a file under
``$HERMES_HOME/cron/output/<job id>/``, the stdout of the process that ran it, or a webhook URL
(a JSON POST with ``httpx``: a network egress the user configured; when it fails, the
answer is kept in the file a ``file`` delivery writes and the failed run says where). The
delivery is checked again before each run by the rule the job was made by
(:func:`~hermes_core.agent._cron_fields.check_delivery`): one edited into the store since fails
the run, naming it, with no model run and nothing sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable, Collection
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Final, TextIO

from hermes_core._atomic_write import write_atomically
from hermes_core._encodable import encodable
from hermes_core._private_files import private_dir
from hermes_core._shown import as_shown, printable
from hermes_core._tls import tls_context
from hermes_core._toolsets import grantable_toolsets, registered_toolsets
from hermes_core.agent._cron_fields import check_delivery
from hermes_core.agent._cron_schedule import JobError
from hermes_core.agent._cron_toolsets import CRON_TOOLSET, check_toolsets, job_toolsets
from hermes_core.agent._events import Finished

if TYPE_CHECKING:
    from hermes_core._host import Host
    from hermes_core.agent._agent import Agent
    from hermes_core.agent._cron_rows import CronJob, CronRun
    from hermes_core.agent._cron_store import CronJobs

NOBODY: Final = "a cron job runs with nobody to answer questions"
TAKEN_BACK: Final = (
    "the run was taken back while its process could not renew its lease (stopped or stuck "
    "past cron.lease, or asleep past it as another machine or an older hermes sees it): its "
    "answer is not delivered"
)
WEBHOOK_TIMEOUT: Final = 30.0


@dataclass(frozen=True)
class RunOutcome:
    """How a run ended: ``status`` ``ok`` or ``failed``, ``detail`` in words, the answer."""

    status: str
    detail: str
    output: str


def job_grant(host: Host, job: CronJob) -> frozenset[str]:
    """The toolsets a job's session may use: the job's own (or every registered one), never
    the ``cron`` toolset. A job naming a toolset that no tool has now (a plugin removed since
    it was made) is a :class:`JobError` naming it: its run fails rather than run without those
    tools."""
    wanted = job.toolsets
    if wanted is None:
        return registered_toolsets(host.registry.tools()) - {CRON_TOOLSET}
    grantable = grantable_toolsets(host.registry.tools(), host.config)
    check_toolsets(wanted, job_toolsets(grantable, host.config))
    return frozenset(wanted) - {CRON_TOOLSET}


def job_directory(job: CronJob) -> Path | None:
    """The directory a run of ``job`` works in (``None``: the host's, for a job made before
    jobs kept one); a :class:`JobError` naming it when it is gone: no run somewhere else."""
    if job.cwd is None:
        return None
    directory = Path(job.cwd)
    if not directory.is_dir():
        raise JobError(
            "cwd",
            f"the job's directory {printable(job.cwd)} no longer exists (or is no directory); "
            f"make it again, or give the job another (hermes cron edit {printable(job.id)} "
            "--cwd DIR)",
        )
    return directory


async def run_job(
    host: Host, agent: Agent | None, jobs: CronJobs, job: CronJob, run: CronRun, out: TextIO
) -> RunOutcome:
    """Run ``job`` (its claimed ``run``), deliver its answer, log the outcome in ``jobs``
    (a run taken back meanwhile is neither delivered nor logged over: :data:`TAKEN_BACK`).
    ``agent`` is ``model.model``'s (``None``: not set, and a job without a model of its own
    fails its run, saying so)."""
    try:
        # The store may have been edited since the job was made: the rule it was made by
        # again, before a model run whose answer would have nowhere to go.
        check_delivery(job.delivery, quoted=False)
        finished = await _converse(host, agent, job)
        # A lone surrogate (a model's JSON may hold "\ud800") in no UTF-8 file, terminal or
        # SQLite text: the answer cost a run.
        text = "" if finished is None else encodable(finished.text)
        if finished is None or not finished.complete:
            stop = "no answer" if finished is None else f"{finished.stop}: {finished.detail}"
            detail = f"the run ended without an answer ({stop}){_own_model(job, finished)}"
            outcome = RunOutcome("failed", detail, text)
        elif not jobs.holds(run):  # the job may be running again elsewhere: one delivery
            outcome = RunOutcome("failed", TAKEN_BACK, "")
        else:
            outcome = await _delivered(jobs.path.parent, job, run, text, out)
    except JobError as refused:  # a toolset no tool has, a directory gone, a delivery: no run
        outcome = RunOutcome("failed", f"the job cannot run: {refused}", "")
    except Exception as error:  # one run's failure is logged; the daemon goes on
        outcome = RunOutcome("failed", f"{type(error).__name__}: {error}", "")
    jobs.finish(run, outcome.status, outcome.detail, outcome.output)
    return outcome


def _own_model(job: CronJob, finished: Finished | None) -> str:
    """What a model error of a job with its own model adds: the error's words name
    ``model.model``, which this job does not ask."""
    if job.model is None or finished is None or finished.stop != "error":
        return ""
    return (
        f"; this job asks its own model {job.model!r}, not model.model: to change it, "
        f"hermes cron edit {printable(job.id)} --model NAME (--model -: model.model)"
    )


@asynccontextmanager
async def leases_renewed(
    jobs: CronJobs,
    owner: str,
    lease: float,
    *,
    held: Callable[[], Collection[int]] = tuple,
    lost: Callable[[list[int]], None] | None = None,
) -> AsyncIterator[None]:
    """In the block, ``owner``'s leases are renewed every third of ``lease`` seconds, so a
    run longer than ``lease`` keeps its job (a process that is gone stops renewing). After
    each renewal ``lost`` is given the runs among ``held()`` (read on the loop, before the
    renewal's thread) taken back meanwhile (the process asleep past its lease, another machine
    or an older hermes taking it back), if any."""

    async def renew() -> None:
        wait = lease / 3
        while True:
            await asyncio.sleep(wait)
            # In a thread: a store locked by another process keeps this one waiting (up to its
            # lock_wait), not the runs. Locked past that wait (or a full disk), it is tried
            # again a second later: a third of the lease later could be past the lease's end,
            # the run then taken back as stuck.
            try:
                # held() read here, on the loop: the daemon's is a live view of its runs,
                # which end on the loop while the thread reads them.
                running = tuple(held())
                taken = await asyncio.to_thread(jobs.renew, owner, lease, held=running)
            except JobError:
                wait = min(1.0, lease / 3)
                continue
            wait = lease / 3
            if taken and lost is not None:
                lost(taken)

    task = asyncio.create_task(renew())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


@asynccontextmanager
async def job_agent(host: Host, agent: Agent | None, job: CronJob) -> AsyncIterator[Agent]:
    """The agent a run of ``job`` asks: ``agent`` for a job without a model of its own (or
    with ``agent``'s), else one asking the job's model of the configured provider
    (``Agent.from_host(host, model=...)``, as ``--model``), closed after the run. A job
    without a model when ``agent`` is ``None`` (``model.model`` not set) is a :class:`JobError`
    saying how to give it one."""
    wanted = job.model
    if wanted is None or (agent is not None and wanted == agent.model.model):
        if agent is None:
            raise JobError(
                "model",
                "this job names no model and model.model is not set in the daemon's "
                "configuration: set it (hermes config set model.model NAME) and restart the "
                f"daemon, or give the job one (hermes cron edit {printable(job.id)} --model NAME)",
            )
        yield agent
        return
    from hermes_core.agent._agent import Agent

    own = Agent.from_host(host, model=wanted)
    try:
        yield own
    finally:
        await own.aclose()


async def _converse(host: Host, agent: Agent | None, job: CronJob) -> Finished | None:
    from hermes_core._approvals.prompt import NonInteractivePrompt
    from hermes_core._approvals.questions import NobodyToAsk, attach_questions
    from hermes_core.agent._settling import send_until_settled

    prompt = NonInteractivePrompt(host.config.approvals.non_interactive)
    finished: Finished | None = None
    grant = job_grant(host, job)
    cwd = job_directory(job)
    async with (
        job_agent(host, agent, job) as asked,
        host.session(cwd=cwd, interactive=False, prompt=prompt, granted_toolsets=grant) as session,
    ):
        session.state["cron.job"] = job.id
        attach_questions(session, NobodyToAsk(NOBODY))
        conversation = asked.conversation(session, job=job.id)
        try:
            async for event in send_until_settled(conversation, job.prompt):
                if isinstance(event, Finished):
                    finished = event
        finally:
            await conversation.aclose()
    return finished


async def _delivered(
    cron_dir: Path, job: CronJob, run: CronRun, text: str, out: TextIO
) -> RunOutcome:
    try:
        where = await deliver(cron_dir, job, run, text, out)
    except DeliveryError as failed:
        # The answer cost a model run: a webhook that is down must not throw it away.
        kept = _to_file(cron_dir, job, run, text)
        return RunOutcome("failed", f"{failed}; the answer was kept in {kept}", text)
    return RunOutcome("ok", f"delivered to {where}", text)


async def deliver(cron_dir: Path, job: CronJob, run: CronRun, text: str, out: TextIO) -> str:
    """Send ``text`` where ``job.delivery`` says; returns where it went (a failure raises)."""
    started = datetime.fromtimestamp(run.started, UTC)
    if job.delivery == "stdout":
        out.write(
            f"## {printable(job.name)} ({job.id}, run {run.id}, {started:%Y-%m-%d %H:%M:%S}Z)\n"
        )
        out.write(as_shown(out, text.rstrip("\n")) + "\n")  # on a terminal, not obeyed by it
        out.flush()
        return "stdout"
    if job.delivery == "file":
        return str(_to_file(cron_dir, job, run, text))
    import httpx

    payload = {
        "job": {"id": job.id, "name": job.name, "schedule": job.schedule},
        "run": {"id": run.id, "started": started.isoformat()},
        "output": text,
        "sent": time.time(),
    }
    try:
        async with httpx.AsyncClient(
            timeout=WEBHOOK_TIMEOUT, follow_redirects=False, verify=tls_context()
        ) as client:
            answer = await client.post(job.delivery, content=json.dumps(payload), headers=_JSON)
    except httpx.HTTPError as failed:  # its message may quote the URL, which may hold a token
        raise DeliveryError(f"the webhook could not be reached ({type(failed).__name__})") from None
    if answer.status_code >= 300:
        raise DeliveryError(f"the webhook answered HTTP {answer.status_code}")
    return f"webhook (HTTP {answer.status_code})"


def _to_file(cron_dir: Path, job: CronJob, run: CronRun, text: str) -> Path:
    """Write ``text`` to the run's file under ``cron/output/<job id>/`` (``0600``)."""
    started = datetime.fromtimestamp(run.started, UTC)
    folder = private_dir(cron_dir / "output" / job.id)
    path = folder / f"{started:%Y%m%dT%H%M%SZ}-run{run.id}.md"
    write_atomically(path, text.rstrip("\n") + "\n", mode=0o600)
    return path


_JSON: Final = {"content-type": "application/json"}


class DeliveryError(RuntimeError):
    """A run's answer could not be delivered."""


__all__ = [
    "TAKEN_BACK",
    "DeliveryError",
    "RunOutcome",
    "deliver",
    "job_agent",
    "job_directory",
    "job_grant",
    "leases_renewed",
    "run_job",
]
