"""The ``cron`` toolset: ``cronjob``, the model's hand on the jobs of ``hermes cron`` (deferred by
default, as the seeds defer event-triggered tools).

Actions: ``create`` (a ``schedule``, a ``prompt``, optional ``name``, ``toolsets`` and
``delivery``), ``list``, ``pause``, ``resume``, ``remove`` and ``run`` (due now: ``hermes cron
daemon`` runs it at its next look), the last four naming a ``job`` by id or name. The jobs are
the home's (``$HERMES_HOME/cron/jobs.db``), the same ``hermes cron list`` shows. A field that
cannot be used is an error naming it, a toolset no tool of the host has among them
(``ToolCaller.toolsets``). A job made here runs in the calling session's directory: the model
does not choose it, nor the job's model (the spend is the person's: ``hermes cron create
--model``; there is no such parameter, so one is refused and the job asks ``model.model``).
There is no ``update`` action: it would put the model's prompt or schedule on a job whose model
the person chose; editing is ``hermes cron edit``.
A job's own session is never granted this toolset (jobs cannot create jobs), nor is a child of
``delegate_task``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from hermes_core.plugin import (
    READ_ONLY_CALLS_META,
    Tool,
    ToolAnnotations,
    ToolCaller,
    ToolResult,
    hookimpl,
)

if TYPE_CHECKING:
    from hermes_core import Config, Environment
    from hermes_core.agent import CronJobs

_ACTIONS: Final = ("create", "list", "pause", "resume", "remove", "run")


def build_tool(home: Path, env: Environment | None = None) -> Tool:
    """The cronjob tool over the jobs of ``home`` (its ``cron/jobs.db``). With ``env``, a job
    it adds to a home inside the project while the gate is closed is stored with a warning in
    the answer that it will not run, and its list says so of the jobs it shows
    (:meth:`~hermes_core.agent.CronJobs.not_run`)."""

    def cronjob(
        caller: ToolCaller,
        action: str,
        job: str | None = None,
        schedule: str | None = None,
        prompt: str | None = None,
        name: str | None = None,
        toolsets: list[str] | None = None,
        delivery: str = "file",
    ) -> ToolResult:
        # Here, not at the top: the store brings sqlite3 and the schedule parser, which loading
        # the plugin (every command, a search included) does not need.
        from hermes_core.agent import CronJobs, JobError, job_toolsets

        known = None
        try:
            if action == "create":  # a toolset no tool has, or the session lacks, is refused
                known = job_toolsets(caller.toolsets(), caller.config)
                if (grant := caller.session.granted_toolsets) is not None:
                    toolsets = _within_grant(toolsets, grant, known)
            jobs = CronJobs(home)
            made = (toolsets, delivery, caller.session.cwd)
            done = _act(jobs, action, job, schedule, prompt, name, made, known)
            return _warned(done, jobs, env, action)
        except JobError as bad:
            return ToolResult.error("INVALID_ARGUMENTS", f"cronjob {action}: {bad}")

    return Tool(
        name="cronjob",
        description=(
            "Schedule a prompt to run later through the agent, unattended (no approvals asked: "
            "the configured non-interactive answer applies), and manage those jobs. "
            "action=create needs `schedule` (a cron expression '0 9 * * 1-5', an interval "
            "'every 30m', or one ISO time '2026-12-24T09:00') and `prompt` (self-contained: "
            "the job sees nothing of this conversation); `delivery` is 'file' (default), "
            "'stdout' or a webhook URL. action=list shows the jobs; pause, resume, remove and "
            "run (due now) name a `job` by id or name."
        ),
        parameters={
            "type": "object",
            "properties": {
                "action": {"enum": list(_ACTIONS)},
                "job": {"type": "string", "minLength": 1},
                "schedule": {"type": "string", "minLength": 1},
                "prompt": {"type": "string", "minLength": 1},
                "name": {"type": "string", "minLength": 1},
                "toolsets": {"type": "array", "items": {"type": "string"}},
                "delivery": {"type": "string", "minLength": 1},
            },
            "required": ["action"],
            "additionalProperties": False,
        },
        handler=cronjob,
        toolset="cron",
        source="builtin",
        source_name="cronjob",
        annotations=ToolAnnotations(read_only=False, destructive=True, idempotent=False),
        meta={READ_ONLY_CALLS_META: {"action": ["list"]}},
        timeout=30.0,
    )


def _warned(done: ToolResult, jobs: CronJobs, env: Environment | None, action: str) -> ToolResult:
    """``done``, ending with the warning that the jobs will not run (a home inside the project,
    its gate closed) after a ``create`` or a ``list`` that shows jobs: the model must not tell
    the person a job is scheduled that no daemon will run."""
    if env is None or action not in ("create", "list") or done.structured == {"jobs": []}:
        return done
    warning = jobs.not_run(env, "this job" if action == "create" else "these jobs")
    if warning is None:
        return done
    joint = " " if action == "create" else "\n"
    note = f"{done.text_content}{joint}Warning: {warning}"
    return ToolResult.text(note, structured=done.structured)


def _within_grant(
    toolsets: list[str] | None, grant: frozenset[str], known: frozenset[str]
) -> list[str]:
    """A job of a session with a grant runs with no toolset the session lacks (it would run
    unattended with tools its maker could not use): ``toolsets`` must be in ``grant``, and none
    given means the grant's toolsets a job may have (``known``: never ``cron``)."""
    from hermes_core.agent import JobError

    if toolsets is None:
        return sorted(grant & known)
    outside = [name for name in toolsets if isinstance(name, str) and name not in grant]
    if outside:
        named = ", ".join(repr(name) for name in outside)
        raise JobError(
            "toolsets",
            f"this session is not granted {named}, so its jobs cannot be either; "
            f"its toolsets: {', '.join(sorted(grant)) or 'none'}",
        )
    return toolsets


def _act(
    jobs: CronJobs,
    action: str,
    job: str | None,
    schedule: str | None,
    prompt: str | None,
    name: str | None,
    fields: tuple[list[str] | None, str, Path],
    known: frozenset[str] | None,
) -> ToolResult:
    if action == "create":
        toolsets, delivery, cwd = fields
        made = jobs.create(
            schedule,
            prompt,
            name=name,
            toolsets=toolsets,
            delivery=delivery,
            cwd=cwd,
            known_toolsets=known,
        )
        shown = made.to_json()
        note = f"Created job {made.id} ({made.name}); next run {shown['next_run']}."
        return ToolResult.text(note, structured=shown)
    if action == "list":
        listed = jobs.listing()  # each with its last run, as hermes cron list --json
        text = json.dumps(listed, indent=1) if listed else "No cron jobs."
        return ToolResult.text(text, structured={"jobs": listed})
    if job is None:
        from hermes_core.agent import JobError

        raise JobError("job", f"action {action!r} needs the job's id or name")
    method = {"pause": jobs.pause, "resume": jobs.resume, "remove": jobs.remove}
    changed = jobs.trigger(job) if action == "run" else method[action](job)
    done = {"pause": "paused", "resume": "resumed", "remove": "removed", "run": "due now"}
    result: dict[str, Any] = changed.to_json()
    note = f"Job {changed.id} ({changed.name}) {done[action]}."
    if action == "run":
        note += " hermes cron daemon runs it at its next look."
    return ToolResult.text(note, structured=result)


@hookimpl(trylast=True)
def hermes_tools(config: Config, env: Environment) -> Sequence[Tool]:
    """The cronjob tool over the home's jobs."""
    return [build_tool(env.home, env)]
