"""The bundled approval policies, selected by ``approvals.policy``.

- ``manual``: ask for every call that is not read-only.
- ``annotations`` (default): ask when the tool is destructive or open-world; allow the rest.
- ``off``: allow everything.

``approvals.deny`` and ``approvals.allow`` are applied by the dispatcher around whichever policy
is selected, so none of these policies needs to look at them.
"""

from __future__ import annotations

from collections.abc import Sequence

from hermes_core import ApprovalPolicySpec, Decision, PluginContext, Session, ToolCall, hookimpl


class ManualPolicy:
    """Ask for every call that is not read-only."""

    def decide(self, call: ToolCall, session: Session) -> Decision:
        """Allow read-only tools, ask for the rest."""
        if call.tool.annotations.read_only:
            return Decision.allow()
        return Decision.ask(f"{call.name} is not read-only (approvals.policy: manual)")


class AnnotationsPolicy:
    """Ask for destructive or open-world tools; allow read-only and additive local ones."""

    def decide(self, call: ToolCall, session: Session) -> Decision:
        """Read the tool's annotations (a missing ``destructiveHint`` counts as destructive)."""
        hints = call.tool.annotations
        if hints.read_only:
            return Decision.allow()
        if hints.destructive:
            return Decision.ask(f"{call.name} may change or delete things (destructive)")
        if hints.open_world:
            return Decision.ask(f"{call.name} reaches outside this machine (open world)")
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
