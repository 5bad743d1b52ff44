"""Approval policies and prompt transports.

A policy (selected by ``approvals.policy``, registered by plugins through
``hermes_approval_policies``) answers allow, deny or ask for each call; an ask goes to the
session's :class:`~hermes_core._approvals.prompt.PromptTransport` (a terminal, an MCP client's
elicitation form, or the non-interactive answer). Names are loaded on first use, so a command
that checks no shell command does not import the shell reader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_core._exports import lazy_exports

if TYPE_CHECKING:
    from hermes_core._approvals.policy import (
        ApprovalPolicy,
        Decision,
        GlobRules,
        call_subjects,
        glob_escape,
        glob_regex,
        matching_glob_every_segment_allows_any_segment_denies,
        remembered_subject,
    )
    from hermes_core._approvals.prompt import (
        Answer,
        ApprovalRequest,
        ElicitationPrompt,
        ElicitReply,
        NonInteractivePrompt,
        PromptTransport,
        TerminalPrompt,
    )
    from hermes_core._approvals.shell import (
        CommandLine,
        ShellSegment,
        read_command_line,
        shell_segments,
    )

_EXPORTS: dict[str, str] = {
    "Answer": "hermes_core._approvals.prompt",
    "ApprovalPolicy": "hermes_core._approvals.policy",
    "ApprovalRequest": "hermes_core._approvals.prompt",
    "CommandLine": "hermes_core._approvals.shell",
    "Decision": "hermes_core._approvals.policy",
    "ElicitReply": "hermes_core._approvals.prompt",
    "ElicitationPrompt": "hermes_core._approvals.prompt",
    "GlobRules": "hermes_core._approvals.policy",
    "NonInteractivePrompt": "hermes_core._approvals.prompt",
    "PromptTransport": "hermes_core._approvals.prompt",
    "ShellSegment": "hermes_core._approvals.shell",
    "TerminalPrompt": "hermes_core._approvals.prompt",
    "call_subjects": "hermes_core._approvals.policy",
    "glob_escape": "hermes_core._approvals.policy",
    "glob_regex": "hermes_core._approvals.policy",
    "matching_glob_every_segment_allows_any_segment_denies": "hermes_core._approvals.policy",
    "read_command_line": "hermes_core._approvals.shell",
    "remembered_subject": "hermes_core._approvals.policy",
    "shell_segments": "hermes_core._approvals.shell",
}

__all__ = [
    "Answer",
    "ApprovalPolicy",
    "ApprovalRequest",
    "CommandLine",
    "Decision",
    "ElicitReply",
    "ElicitationPrompt",
    "GlobRules",
    "NonInteractivePrompt",
    "PromptTransport",
    "ShellSegment",
    "TerminalPrompt",
    "call_subjects",
    "glob_escape",
    "glob_regex",
    "matching_glob_every_segment_allows_any_segment_denies",
    "read_command_line",
    "remembered_subject",
    "shell_segments",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__, globals())
