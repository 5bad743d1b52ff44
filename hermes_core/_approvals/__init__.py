"""Approval policies and prompt transports.

A policy (selected by ``approvals.policy``, registered by plugins through
``hermes_approval_policies``) answers allow, deny or ask for each call; an ask goes to the
session's :class:`~hermes_core._approvals.prompt.PromptTransport` (a terminal, an MCP client's
elicitation form, or the non-interactive answer).
"""

from __future__ import annotations

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
