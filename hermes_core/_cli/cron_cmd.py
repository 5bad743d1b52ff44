"""``hermes cron``: create, edit, list, pause, resume, remove and run the cron jobs of the home, and
``hermes cron daemon``, the scheduler (docs/automation.md).

A field that cannot be used (a malformed schedule, a delivery that is no URL) is an error naming
the field, exit status 2. ``hermes cron run JOB`` runs a job now in this process (its ``stdout``
delivery prints here): exit 0 when the run answered and was delivered, 1 when it failed.

The jobs of a home inside the project (``HERMES_HOME=./.hermes`` in a cloned repository) are
the repository's, planted or not: while the project gate is closed ``run`` and ``daemon`` refuse
(exit 2) naming the jobs file and the flag, ``list`` shows them saying they will not run, and
``create`` stores a job saying so (the ``cronjob`` tool too, in its answer: one wording,
:meth:`~hermes_core.agent.CronJobs.not_run`).
"""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from hermes_core._cli.chat_commands import checked_model
from hermes_core._shown import printable

if TYPE_CHECKING:
    from hermes_core._host import Host
    from hermes_core.agent._cron_store import CronJobs


def local_time(moment: float | None) -> str:
    from hermes_core.agent._cron_rows import local_time as shown

    return shown(moment)


def _store() -> CronJobs:
    from hermes_core._cli.context import environment
    from hermes_core.agent._cron_store import CronJobs

    return CronJobs(environment().home)


def _refuse_to_run(store: CronJobs) -> None:
    from hermes_core._cli.context import environment
    from hermes_core._cli.output import echo_shown
    from hermes_core._project_trust import project_refusal

    if (refusal := project_refusal(environment(), store.path, "the cron jobs file")) is not None:
        echo_shown(f"hermes: error: cron: no job is run: {refusal}", err=True)
        sys.exit(2)


def _warn_not_run(store: CronJobs, subject: str = "this job") -> None:
    from hermes_core._cli.context import environment
    from hermes_core._cli.output import echo_shown

    if (warning := store.not_run(environment(), subject)) is not None:
        echo_shown(f"hermes: warning: {warning}", err=True)


_Command = TypeVar("_Command", bound=Callable[..., Any])
_ModelCheck = Callable[[click.Context, click.Parameter, str | None], str | None]


def _job_options(
    *,
    name: str,
    toolset: str,
    deliver: str,
    cwd: str,
    model: str,
    model_callback: _ModelCheck,
    deliver_default: str | None = None,
) -> Callable[[_Command], _Command]:
    """The options ``cron create`` and ``cron edit`` share, in this order: ``--name``,
    ``--toolset`` (repeated), ``--deliver``, ``--cwd`` and ``-m``/``--model`` (checked by
    ``model_callback``), each with its command's help; ``deliver_default`` is create's, shown."""
    delivery: dict[str, Any] = {"help": deliver}
    if deliver_default is not None:
        delivery.update(default=deliver_default, show_default=True)
    options = (
        click.option("--name", help=name),
        click.option("--toolset", "toolsets", multiple=True, help=toolset),
        click.option("--deliver", "delivery", **delivery),
        click.option("--cwd", "cwd", metavar="DIR", help=cwd),
        click.option("-m", "--model", metavar="NAME", callback=model_callback, help=model),
    )

    def applied(command: _Command) -> _Command:
        for option in reversed(options):  # the last decorator applied is the first listed
            command = option(command)
        return command

    return applied


@click.group("cron")
def cron() -> None:
    """Jobs that run a prompt through the agent on a schedule, and their scheduler."""


@cron.command("create")
@click.argument("schedule")
@click.argument("prompt")
@_job_options(
    name="A short name (default: the prompt's first words).",
    toolset="A toolset the job may use (repeat; default: all but cron, which no job gets).",
    deliver="Where each answer goes: file ($HERMES_HOME/cron/output), stdout, or a webhook URL.",
    deliver_default="file",
    cwd="The directory its runs work in (default: this one).",
    model="The model of the configured provider its runs ask (default: model.model then).",
    model_callback=checked_model,
)
def create(
    schedule: str,
    prompt: str,
    name: str | None,
    toolsets: tuple[str, ...],
    delivery: str,
    cwd: str | None,
    model: str | None,
) -> None:
    """Create a job: SCHEDULE is a cron expression ('0 9 * * 1-5'), an interval ('every 30m')
    or one ISO 8601 time ('2026-12-24T09:00'); PROMPT is what the model is asked. Its runs
    work in this directory, or --cwd's, wherever the daemon runs, and ask --model's model, or
    model.model at the time of the run."""
    from pathlib import Path

    known = _known_toolsets() if toolsets else None
    store = _store()
    job = store.create(
        schedule,
        prompt,
        name=name,
        toolsets=list(toolsets) or None,
        delivery=delivery,
        cwd=Path.cwd() if cwd is None else cwd,
        model=model,
        known_toolsets=known,
    )
    click.echo(f"created job {job.id} ({job.name}); next run {local_time(job.next_run)}")
    _warn_not_run(store)


def _edited_model(context: click.Context, option: click.Parameter, name: str | None) -> str | None:
    """``--model`` of ``cron edit``: ``-`` (clear it) as given, else :func:`checked_model`."""
    return "-" if name is not None and name.strip() == "-" else checked_model(context, option, name)


@cron.command("edit")
@click.argument("job")
@click.option("--schedule", metavar="SCHEDULE", help="A new schedule (its next run: from now).")
@click.option("--prompt", metavar="PROMPT", help="A new prompt.")
@_job_options(
    name="A new name.",
    toolset="The toolsets the job may use instead of its own (repeat).",
    deliver="Where its answers go: file, stdout, or a URL.",
    cwd="The directory its runs work in.",
    model="The model its runs ask (-: none, model.model at run time).",
    model_callback=_edited_model,
)
def edit(
    job: str,
    schedule: str | None,
    prompt: str | None,
    name: str | None,
    toolsets: tuple[str, ...],
    delivery: str | None,
    cwd: str | None,
    model: str | None,
) -> None:
    """Change JOB (its id or its name) in place, keeping its id, state and runs: each option
    given is checked as create checks it, and nothing changes when one is refused."""
    from hermes_core.agent._cron_store import UNCHANGED

    given = (schedule, prompt, name, delivery, cwd, model)
    if not toolsets and all(value is None for value in given):
        raise click.UsageError(
            "nothing to change: give --schedule, --prompt, --name, --toolset, --deliver, --cwd "
            "or --model"
        )
    known = _known_toolsets() if toolsets else None
    store = _store()
    changed = store.edit(
        job,
        schedule=schedule,
        prompt=prompt,
        name=name,
        toolsets=list(toolsets) or None,
        delivery=delivery,
        cwd=cwd,
        model=UNCHANGED if model is None else None if model == "-" else model,
        known_toolsets=known,
    )
    shown = f"edited job {printable(changed.id)} ({printable(changed.name)})"
    if changed.paused:  # its next time is kept for resume, but nothing runs then
        resume = f"hermes cron resume {printable(changed.id)}"
        click.echo(f"{shown}; it stays paused: {resume} runs it again")
    else:
        click.echo(f"{shown}; next run {local_time(changed.next_run)}")
    _warn_not_run(store)


def _known_toolsets() -> frozenset[str]:
    """The toolsets a job may name here: the host's plugins and catalogs loaded, its MCP
    servers not started (each configured one's toolset counts, its tools listed or not)."""
    from hermes_core._cli.context import environment, load_config_in_effect
    from hermes_core._cli.host_runs import cli_host
    from hermes_core._toolsets import grantable_toolsets
    from hermes_core.agent._cron_toolsets import job_toolsets

    env = environment()
    config = load_config_in_effect(env)
    with cli_host(config, env) as host:
        host.start()
        return job_toolsets(grantable_toolsets(host.registry.tools(), config), config)


@cron.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of objects.")
def list_command(as_json: bool) -> None:
    """One row per job: id, name, schedule, state, next run, last outcome, directory, model
    (- for model.model at run time); exit 1 when a job's row is damaged (never when its last
    run failed: the job is fine)."""
    from hermes_core._cli.output import exit_if_broken

    store = _store()
    store.recover()
    jobs = store.listing()
    if jobs:
        _warn_not_run(store, "these jobs")
    if as_json:
        click.echo(json.dumps(jobs, indent=2))
    elif not jobs:
        click.echo("no cron jobs (hermes cron create SCHEDULE PROMPT)")
    else:
        _table(jobs)
    exit_if_broken(jobs, lambda job: job["state"] == "damaged")


def _table(jobs: list[dict[str, Any]]) -> None:
    from hermes_core._cli.output import columns

    rows = [["ID", "NAME", "SCHEDULE", "STATE", "NEXT RUN", "LAST RUN", "CWD", "MODEL"]]
    for job in jobs:
        last = job["last_run"]
        outcome = f"{last['status']} {last['started']}" if last else "-"
        cwd = "-" if job["cwd"] is None else job["cwd"]
        model = "-" if job["model"] is None else job["model"]
        row = [job["id"], job["name"], job["schedule"], job["state"], job["next_run"], outcome]
        rows.append([*row, cwd, model])
    click.echo(columns(rows, free=(1, 6)))  # the name, the directory


@cron.command("runs")
@click.argument("job", required=False)
@click.option(
    "--limit",
    default=20,
    show_default=True,
    type=click.IntRange(min=1),
    help="How many runs to show.",
)
def runs_command(job: str | None, limit: int) -> None:
    """The latest runs (of JOB) with their outcome, newest first."""
    from hermes_core._cli.output import columns

    store = _store()
    store.recover()
    rows = [["RUN", "JOB", "STARTED", "STATUS", "DETAIL"]]
    for run in store.runs(job, limit=limit):
        rows.append([str(run.id), run.job_id, local_time(run.started), run.status, run.detail])
    click.echo(columns(rows) if len(rows) > 1 else "no runs yet")


def _change(verb: str, method: str, doc: str) -> click.Command:
    @click.argument("job")
    def command(job: str) -> None:
        changed = getattr(_store(), method)(job)
        click.echo(f"{verb} job {printable(changed.id)} ({printable(changed.name)})")

    command.__doc__ = f"{doc} (JOB: its id or its name)."
    return cron.command(method)(command)


pause = _change("paused", "pause", "Stop JOB from running until it is resumed")
resume = _change("resumed", "resume", "Let JOB run again, from its schedule's next time")
remove = _change("removed", "remove", "Delete JOB and the log of its runs")


@cron.command("run")
@click.argument("job")
def run_command(job: str) -> None:
    """Run JOB now in this process, whenever it is due (its next time is unchanged)."""
    from hermes_core._cli.output import echo_shown
    from hermes_core._cli.run_cmd import run_agent_host
    from hermes_core.agent._agent import Agent
    from hermes_core.agent._cron_lease import owner_name
    from hermes_core.agent._cron_runs import leases_renewed, run_job

    store = _store()
    _refuse_to_run(store)
    found = store.get(job)
    answers = sys.stdout  # a stdout delivery's, before run_agent_host sends sys.stdout to stderr

    async def work(host: Host, _forms: object) -> int:
        agent = Agent.from_host(host, model=found.model)  # model.model may be unset then
        lease = host.config.cron.lease
        run = store.claim(found.id, owner_name(), lease)
        try:
            async with leases_renewed(store, run.owner, lease):
                outcome = await run_job(host, agent, store, found, run, answers)
        finally:
            await agent.aclose()
        echo_shown(f"hermes cron: job {found.id} run {run.id}: {outcome.detail}", err=True)
        return 0 if outcome.status == "ok" else 1

    sys.exit(run_agent_host(work))


@cron.command("daemon")
def daemon() -> None:
    """Run due jobs until stopped (SIGTERM or Ctrl-C), in the foreground: for systemd or a
    container. Two daemons on one home never run the same job."""
    import asyncio

    from hermes_core._cli.run_cmd import build_agent, run_agent_host
    from hermes_core.agent._cron_daemon import CronDaemon

    store = _store()
    _refuse_to_run(store)
    answers = sys.stdout  # stdout deliveries', before run_agent_host sends sys.stdout to stderr

    async def work(host: Host, _forms: object) -> int:
        # Without model.model the jobs with a model of their own still run; the others fail.
        agent = build_agent(host) if host.config.model.model else None
        section = host.config.cron
        scheduler = CronDaemon(
            host, agent, store, poll=section.poll_interval, lease=section.lease, out=answers
        )
        loop = asyncio.get_running_loop()
        for number in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(number, scheduler.stop)
        try:
            await scheduler.run()
        finally:
            for number in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(number)
            if agent is not None:
                await agent.aclose()
        return 0

    sys.exit(run_agent_host(work))
