"""Sections of the system prompt contributed when a session starts.

A :data:`PromptSection` is called once, when a conversation is made, with its session; what it
returns is appended to the system prompt (``None`` or empty: nothing). The prompt is then fixed
for the whole conversation: a section that changes later (the memory the agent writes) shows in
the next session, and the prompt prefix stays cacheable. A section that fails is left out and
logged: the conversation still starts.

The sentences the agent itself adds say only what the session really has: how to use its tools
(the bridge's three only when its tool list holds them, none at all for a session without
tools), the skills that load and when to read one (:func:`skills_index`, when the tool list
holds ``skill_view``), and :func:`size_warning` when ``model.context_length`` is below what a
request needs before its first message.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hermes_core._host import Host
    from hermes_core._paths import Environment
    from hermes_core._session import Session
    from hermes_core._skills.library import SkillsState
    from hermes_core._tools import Tool

log = logging.getLogger(__name__)

DEFAULT_SYSTEM_PROMPT = "You are Hermes, an agent that gets things done."
"""The default prompt's first line; how to use the tools follows it, said for what each
session's tool list holds (:func:`tool_guidance`)."""

PromptSection = Callable[["Session"], "str | None"]
"""Called with a new conversation's session: the text to append to its system prompt, or
``None``."""


def with_sections(base: str, sections: Iterable[PromptSection], session: Session) -> str:
    """``base`` followed by what each of ``sections`` returns for ``session``, a blank line
    between them."""
    parts = [base]
    for section in sections:
        try:
            text = section(session)
        except Exception:  # one broken section must not stop the conversation
            log.warning("a system prompt section failed; left out", exc_info=True)
            continue
        if text and text.strip():
            parts.append(text.strip())
    return "\n\n".join(parts)


def tool_guidance(tools: Collection[str]) -> str:
    """How to use the tools of a session whose tool list holds ``tools`` (names): the bridge
    (``tool_search``, ``tool_describe``, ``tool_call``) is named only when the list holds it."""
    if not tools:
        return "You have no tools in this session: work from what you are given."
    text = "Use the tools in your list directly."
    if "tool_search" in tools:
        text += (
            " When the tool you need is not in your list, find it with tool_search, read its "
            "parameters with tool_describe and run it with tool_call."
        )
    return f"{text} When you are done, answer plainly, without a tool call."


SKILL_DESCRIPTION_SHOWN = 1024
"""How many characters of a skill's description the system prompt shows (the Agent Skills
format's longest description)."""
SKILLS_INDEX_CHARACTERS = 16_000
"""How many characters the skills' lines take at most; the skills past it are counted, and
``skills_list`` lists them all."""


def skills_index(env: Environment, tools: Collection[str]) -> str | None:
    """The skills of ``env`` that load, by name and description, and when to read one, for a
    session whose tool list holds ``skill_view`` (``tools``: its names); ``None`` without it
    or without skills. Read by the skills toolset's reader, so a broken skill, or the
    project's with the gate closed, is not named; nor is one whose front matter says
    ``disable-model-invocation: true`` (Claude Code's)."""
    from hermes_core._skills.library import skills_state

    if "skill_view" not in tools:
        return None
    # Made once while no SKILL.md changes: every conversation, each subagent's too, asks for
    # it, and parsing a skill's front matter takes about 1.5 ms (15 s for 10,000 skills).
    state = skills_state(env.skills_dir, env)
    key = str(env.skills_dir)
    with _indexes_lock:
        made = _indexes.get(key)
    if state is not None and made is not None and made[0] == state:
        return made[1]
    text = _skills_index_text(env)
    with _indexes_lock:
        _indexes.pop(key, None)
        if state is not None:
            _indexes[key] = (state, text)
            while len(_indexes) > _INDEXES_KEPT:
                del _indexes[next(iter(_indexes))]
    return text


_INDEXES_KEPT = 8
"""Skills folders whose section is kept (one for a process serving one home)."""
_indexes: dict[str, tuple[SkillsState, str | None]] = {}
_indexes_lock = threading.Lock()


def _skills_index_text(env: Environment) -> str | None:
    from hermes_core._shown import printable
    from hermes_core._skills.library import load_skills

    skills, _ = load_skills(env.skills_dir, env)
    # Claude Code's key for a skill only the person starts: the model is not offered it.
    skills = [
        skill for skill in skills if skill.metadata.get("disable-model-invocation") is not True
    ]
    if not skills:
        return None
    lines = [
        "Skills: instructions and files for kinds of task. When the task matches one, read it "
        "with skill_view(name) before you start, and follow it:"
    ]
    used = 0
    for skill in skills:
        description = printable(" ".join(skill.description.split()))
        if len(description) > SKILL_DESCRIPTION_SHOWN:
            description = description[: SKILL_DESCRIPTION_SHOWN - 1] + "…"
        line = f"- {skill.name}: {description}"
        if used + len(line) > SKILLS_INDEX_CHARACTERS:
            break
        lines.append(line)
        used += len(line) + 1
    if (left := len(skills) - (len(lines) - 1)) > 0:
        lines.append(f"- and {left} more: skills_list lists them all")
    return "\n".join(lines)


def request_tokens(system: str, tools: Iterable[Tool]) -> int:
    """Tokens of a request before its first message: the system prompt and the tools' schemas,
    each counted as the tool search counts them (:mod:`hermes_core.search._render`)."""
    from hermes_core.search._render import estimate_tokens, tool_tokens

    return estimate_tokens(system) + sum(tool_tokens(tool) for tool in tools)


def size_warning(context_length: int, tokens: int, tool_count: int) -> str | None:
    """What to say when a request of ``tokens`` (``tool_count`` tools) does not fit in
    ``model.context_length``; ``None`` when it does."""
    if tokens <= context_length:
        return None
    return (
        f"model.context_length is {context_length} tokens, but each request of this "
        f"conversation needs about {tokens:,} before any message (the system prompt and "
        f"{tool_count} tools' schemas): raise model.context_length to the model's real context "
        "window (`hermes config set model.context_length N`), or turn toolsets off "
        "(tools.disabled_toolsets) so fewer tools are sent"
    )


def oversized_warning(
    host: Host, context_length: int, system_prompt: str, session: Session
) -> str | None:
    """:func:`size_warning` for a request of ``system_prompt`` and the tools ``host``
    assembles for ``session``; ``None`` too when the tools could not be measured (the first
    request reports an assembly that fails)."""
    try:
        tools = host.assemble(context_length, session).tools
    except Exception:
        log.debug("the tools could not be measured", exc_info=True)
        return None
    return size_warning(context_length, request_tokens(system_prompt, tools), len(tools))


def subagent_prompt(has_tools: bool) -> str:
    """What a subagent is told of its role; the tools and the files it changed only when its
    session has tools (``toolsets: []`` grants none)."""
    head = (
        "You are a subagent: another agent gave you one task, below, and knows only what your "
        "final answer says."
    )
    if not has_tools:
        return (
            f"{head} Do the task from its goal and context, without asking questions (nobody "
            "can answer them), then answer with a short report: what you found, and anything "
            "left undone."
        )
    return (
        f"{head} Do the task with your tools, without asking questions (nobody can answer "
        "them), then answer with a short report: what you did, what you found, the files you "
        "changed, and anything left undone."
    )
