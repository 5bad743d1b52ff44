"""The bundled approval policies, selected by ``approvals.policy``.

- ``manual``: ask for every call that is not read-only.
- ``annotations`` (default): ask when the tool is destructive or open-world; allow the rest.
- ``off``: allow everything.

They read the call's hints (:attr:`~hermes_core._specs.ToolCall.annotations`: a call a tool
marks as only reading is read-only). ``approvals.deny`` and ``approvals.allow`` are applied by
the dispatcher around whichever policy is selected, so none of these policies needs to look at
them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hermes_core.plugin import (
    HINTS_META,
    ApprovalPolicySpec,
    Decision,
    PluginContext,
    Session,
    ToolCall,
    hookimpl,
)


def _hint(call: ToolCall, hint: str, word: str) -> str:
    """``word`` (``destructive``), or for hints someone else stated (a connector gateway)
    whether they stated it or it is MCP's default."""
    source = call.tool.meta.get(HINTS_META)
    if not isinstance(source, Mapping):
        return word
    by = source.get("by", "its source")
    stated = source.get("stated", ())
    if hint in stated:
        return f"{by} marks it {word}"
    default = f"counted as {word}, as MCP says a missing hint is"
    if not source.get("seen", True):
        return f"{by} has not described it to hermes yet (tool_describe it first): {default}"
    missing = "no hints" if not stated else f"no {hint}"
    return f"{by} states {missing}: {default}"


class ManualPolicy:
    """Ask for every call that is not read-only."""

    def decide(self, call: ToolCall, session: Session) -> Decision:
        """Allow read-only tools, ask for the rest."""
        if call.annotations.read_only:
            return Decision.allow()
        return Decision.ask(f"{call.name} is not read-only (approvals.policy: manual)")


class AnnotationsPolicy:
    """Ask for destructive or open-world tools; allow read-only and additive local ones."""

    def decide(self, call: ToolCall, session: Session) -> Decision:
        """Read the tool's annotations (a missing ``destructiveHint`` counts as destructive)."""
        hints = call.annotations
        if hints.read_only:
            return Decision.allow()
        if hints.destructive:
            why = _hint(call, "destructiveHint", "destructive")
            return Decision.ask(f"{call.name} may change or delete things ({why})")
        if hints.open_world:
            why = _hint(call, "openWorldHint", "open world")
            return Decision.ask(f"{call.name} reaches outside this machine ({why})")
        return Decision.allow()


class OffPolicy:
    """Allow every call (``approvals.deny`` still refuses)."""

    def decide(self, call: ToolCall, session: Session) -> Decision:
        """Allow."""
        return Decision.allow()


def _manual(context: PluginContext) -> ManualPolicy:
    return ManualPolicy()


def _annotations(context: PluginContext) -> AnnotationsPolicy:
    return AnnotationsPolicy()


def _off(context: PluginContext) -> OffPolicy:
    return OffPolicy()


@hookimpl(trylast=True)
def hermes_approval_policies() -> Sequence[ApprovalPolicySpec]:
    """The three bundled policies."""
    return [
        ApprovalPolicySpec("manual", _manual, "ask for every call that is not read-only"),
        ApprovalPolicySpec(
            "annotations", _annotations, "ask for destructive or open-world tools (default)"
        ),
        ApprovalPolicySpec("off", _off, "allow everything except approvals.deny"),
    ]
