"""The agent's memory: the ``memory`` tool and the snapshot in the system prompt.

Two parts (:data:`~hermes_core.agent._memory_provider.MEMORY_TARGETS`): ``memory``, notes about
the work and the environment, and ``user``, what the agent learned about the person. Each has a
character budget (``memory.memory_chars``, ``memory.user_chars``): the sum of its entries'
lengths, which the tool enforces and reports with the exact counts. The actions are ``add``,
``replace`` and ``remove``; the last two find their entry by a substring (``old_text``) that
must match exactly one entry (two matches are refused, naming both). Content with a
prompt-injection shape, invisible characters or a secret is refused with the reason
(:mod:`~hermes_core.agent._memory_checks`).

The entries are kept by the memory provider ``memory.provider`` selects (a plugin kind; the
bundled ``file`` provider writes plain files under the home). The system prompt of a session
holds a :meth:`Memory.snapshot` taken when the session starts; writes during the session change
the store, not that prompt, so the prompt stays the same (and cacheable) for the whole session.
A part over its budget (edited by hand, a budget lowered) is cut in every snapshot, and said
there, but logged once for each state of it (:attr:`Memory.told`), not at every session's start.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from hermes_core._atomic_write import held_exclusively, write_atomically
from hermes_core._shown import shown
from hermes_core._tools import Tool, ToolAnnotations, ToolResult
from hermes_core.agent._memory_checks import refusal
from hermes_core.agent._memory_provider import MEMORY_TARGETS, MemoryProvider, MemoryTarget

if TYPE_CHECKING:
    from hermes_core._config.agent import MemoryConfig
    from hermes_core._host import Host
    from hermes_core._registry import Registry
    from hermes_core._session import Session

log = logging.getLogger(__name__)

TOOL_NAME: Final = "memory"
MEMORY_TOOLSET: Final = "memory"
"""The toolset of ``memory``: a child of ``delegate_task`` never gets it (no writes; it reads
the snapshot in its system prompt)."""

_TITLES: Final[dict[MemoryTarget, str]] = {
    "memory": "Notes about the work and the environment",
    "user": "About the user",
}
_SHOWN_ENTRY: Final = 80
"""Characters of an entry quoted in an answer (the entry a replace or remove matched)."""

DESCRIPTION: Final = (
    "Your persistent memory across sessions, shown in your system prompt at the start of each "
    "session. Two targets: 'memory' (notes about the work, the project and the environment: "
    "conventions, commands that work, pitfalls) and 'user' (the user's preferences and facts "
    "they told you). Keep entries short, factual and durable; not for task progress. "
    "action='add' with content; action='replace' with old_text (a substring of exactly one "
    "entry) and content; action='remove' with old_text. Each target has a character budget: "
    "when it is full, replace or remove entries first."
)
PARAMETERS: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["add", "replace", "remove"]},
        "target": {"type": "string", "enum": list(MEMORY_TARGETS)},
        "content": {"type": "string", "description": "The entry to add, or the new text."},
        "old_text": {
            "type": "string",
            "description": "For replace and remove: a substring of exactly one entry.",
        },
    },
    "required": ["action", "target"],
    "additionalProperties": False,
}


def _quoted(entry: str) -> str:
    return shown(entry if len(entry) <= _SHOWN_ENTRY else entry[:_SHOWN_ENTRY] + "...")


@dataclass(frozen=True)
class Memory:
    """The memory over ``provider`` with the character ``budgets`` of each target."""

    provider: MemoryProvider
    budgets: dict[MemoryTarget, int]
    lock: Path | None = None
    """A file locked around each change (its read and its write) when set: two processes of
    the same home (two chats, a chat and a cron job) then never write over each other's
    entries."""
    source: str = "the memory provider"
    """The provider as errors name it: ``memory provider 'file' (plugin 'memory')``."""
    told: Path | None = None
    """A file of the over-budget states already logged, one line a part (its name and a digest
    of its budget and entries), when set: the home's next processes log each state once too."""
    _told: dict[str, str | None] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @classmethod
    def configured(
        cls,
        provider: MemoryProvider,
        config: MemoryConfig,
        lock: Path | None = None,
        source: str = "the memory provider",
        told: Path | None = None,
    ) -> Memory:
        """The memory of the ``memory`` section over ``provider``, changed under ``lock``;
        ``source`` names the provider in errors; ``told`` keeps the over-budget states logged."""
        budgets: dict[MemoryTarget, int] = {
            "memory": config.memory_chars,
            "user": config.user_chars,
        }
        return cls(provider, budgets, lock, source, told)

    def load(self, target: MemoryTarget) -> list[str]:
        """The entries of ``target`` from the provider, checked: ``OSError`` or ``ValueError``
        when it cannot read them (its own, or one naming it when it raised something else or
        returned anything but a list of strings, which the tool would otherwise take apart
        and save back)."""
        call = f"load({target!r})"
        try:
            entries: object = self.provider.load(target)
        except (OSError, ValueError):
            raise  # the contract's errors, which name what and where
        except Exception as exc:
            raise ValueError(self._failed(call, exc)) from exc
        if not isinstance(entries, list | tuple):
            got = f"{type(entries).__name__} {shown(entries)}"
            raise ValueError(f"{self.source}: {call} returned {got}, not a list of strings")
        wrong = [entry for entry in entries if not isinstance(entry, str)]
        if wrong:
            got = f"a list holding {type(wrong[0]).__name__} {shown(wrong[0])}"
            raise ValueError(f"{self.source}: {call} returned {got}, not a list of strings")
        return list(entries)

    def _failed(self, call: str, exc: BaseException) -> str:
        return f"{self.source} failed: {call} raised {type(exc).__name__}: {exc}"

    def usage(self, entries: Sequence[str]) -> int:
        """The characters ``entries`` use of a budget: the sum of their lengths."""
        return sum(len(entry) for entry in entries)

    def _state(self, target: MemoryTarget, entries: Sequence[str]) -> str:
        used, budget = self.usage(entries), self.budgets[target]
        return f"{target}: {used}/{budget} characters, {_counted(len(entries), 'entry', 'entries')}"

    def snapshot(self, writable: bool = True) -> str | None:
        """The memory as the system prompt shows it, or ``None`` when both parts are empty;
        ``writable``: the session has the ``memory`` tool (a subagent's has not, and is told it
        cannot change what it reads).

        Each part shows at most its budget: its entries in order, each that still fits. A file
        edited by hand (or planted) never passed the tool's budget, and the snapshot goes into
        every prompt; what is left out is said there and logged."""
        parts = []
        for target in MEMORY_TARGETS:
            entries = self.load(target)
            if entries:
                parts.append(self._part(target, entries))
            else:
                self._first_told(target, None)
        if not parts:
            return None
        if writable:
            head = (
                "# Your memory\nWhat you saved with the memory tool in earlier sessions (as it "
                "was when this session started; what you change now shows in the next session)."
            )
        else:
            head = (
                "# Your memory\nWhat was saved with the memory tool in earlier sessions (as it "
                "was when this session started). This session has no memory tool: you cannot "
                "change it."
            )
        return "\n\n".join([head, *parts])

    def _part(self, target: MemoryTarget, entries: list[str]) -> str:
        budget, used = self.budgets[target], 0
        shown_entries, left = [], []
        for entry in entries:
            if entry and used + len(entry) <= budget:
                shown_entries.append(entry)
                used += len(entry)
            elif entry:
                left.append(entry)
        usage = self._state(target, entries)
        lines = [f"## {_TITLES[target]} ({usage})", *(f"§ {entry}" for entry in shown_entries)]
        if not left:
            self._first_told(target, None)  # within its budget: going over again is told
            return "\n".join(lines)
        count, size = _counted(len(left), "entry", "entries"), self.usage(left)
        if self._first_told(target, entries):
            log.warning(
                "%s: %s is over its budget: %s (%d characters) left out of the system prompt",
                self.source,
                usage,
                count,
                size,
            )
        verb = "was" if len(left) == 1 else "were"
        lines.append(
            f"({count} ({size} characters) {verb} left out: over the budget of {budget} "
            "characters; replace or remove entries with the memory tool)"
        )
        return "\n".join(lines)

    def _first_told(self, target: MemoryTarget, entries: Sequence[str] | None) -> bool:
        """Whether ``entries``, ``target``'s over its budget, are a state not logged yet (by
        this process, or one of the home's that kept it in :attr:`told`); keeps it. ``None``:
        the part is within its budget, and its state is forgotten (going over again is told)."""
        state = None
        if entries is not None:
            seen = json.dumps([self.budgets[target], list(entries)])  # ASCII: escapes included
            state = hashlib.sha256(seen.encode()).hexdigest()
        if target in self._told and self._told[target] == state:
            return False
        self._told[target] = state
        if self.told is None:
            return state is not None
        try:
            told = dict(line.split(" ", 1) for line in self.told.read_text("utf-8").splitlines())
        except (OSError, ValueError, UnicodeDecodeError):  # none yet, or not ours: start anew
            told = {}
        if told.get(target) == state or (state is None and target not in told):
            return False
        if state is None:
            del told[target]
        else:
            told[target] = state
        try:
            write_atomically(self.told, "".join(f"{k} {v}\n" for k, v in told.items()), mode=0o600)
        except OSError:  # a home that cannot be written: told again at the next start
            log.debug("%s cannot be written", self.told, exc_info=True)
        return state is not None

    def prompt_section(self, session: Session, *, writable: bool = True) -> str | None:
        """The snapshot, as a section of ``session``'s system prompt (``writable``: the session
        has the ``memory`` tool); left out, saying why in one line, when the provider cannot
        read it (the conversation still starts)."""
        try:
            return self.snapshot(writable)
        except (OSError, ValueError) as exc:
            log.warning("the memory was left out of the system prompt: %s", exc)
            log.debug("the memory provider's failure", exc_info=True)
            return None

    def apply(
        self,
        action: str,
        target: str,
        content: str | None = None,
        old_text: str | None = None,
    ) -> ToolResult:
        """Carry out one call of the ``memory`` tool; the answer says what changed and the
        exact counts, or why nothing did."""
        if target not in MEMORY_TARGETS:
            return _invalid(f"target must be one of {list(MEMORY_TARGETS)}, not {shown(target)}")
        part: MemoryTarget = "memory" if target == "memory" else "user"
        if action not in ("add", "replace", "remove"):
            return _invalid(f"action must be add, replace or remove, not {shown(action)}")
        try:
            with held_exclusively(self.lock) if self.lock is not None else nullcontext():
                return self._apply(part, action, content, old_text)
        except OSError as exc:  # the lock could not be taken: nothing was read or written
            return ToolResult.error("TOOL_ERROR", f"memory: {self.lock} cannot be locked: {exc}")

    def _apply(
        self, part: MemoryTarget, action: str, content: str | None, old_text: str | None
    ) -> ToolResult:
        try:
            entries = self.load(part)
        except (OSError, ValueError) as exc:
            return ToolResult.error("TOOL_ERROR", f"memory: the {part} part cannot be read: {exc}")
        if action == "add":
            return self._add(part, entries, content)
        return self._change(part, entries, action, content, old_text)

    def _add(self, part: MemoryTarget, entries: list[str], content: str | None) -> ToolResult:
        text = _text(content)
        if isinstance(text, ToolResult):
            return text
        if text in entries:
            return self._answer(part, entries, "already there; nothing changed")
        same = [entry for entry in entries if _folded(entry) == _folded(text)]
        if same:  # the model saving one fact again, worded alike: the budget is spent once
            return self._answer(
                part, entries, f"already there as {_quoted(same[0])}; nothing changed"
            )
        return self._save(part, entries, [*entries, text], f"added {len(text)} characters", text)

    def _change(
        self,
        part: MemoryTarget,
        entries: list[str],
        action: str,
        content: str | None,
        old_text: str | None,
    ) -> ToolResult:
        if not old_text:
            return _invalid(f"{action} needs old_text: a substring of the entry to {action}")
        matches = [n for n, entry in enumerate(entries) if old_text in entry]
        if not matches:
            return _invalid(f"no entry of {part} contains {shown(old_text)}; nothing changed")
        if len(matches) > 1:
            listed = "; ".join(f"{_quoted(entries[n])}" for n in matches)
            return _invalid(
                f"{shown(old_text)} matches {len(matches)} entries of {part}: {listed}. "
                "Give a longer old_text that matches only one; nothing changed"
            )
        index = matches[0]
        if action == "remove":
            kept = entries[:index] + entries[index + 1 :]
            return self._save(part, entries, kept, f"removed {_quoted(entries[index])}")
        text = _text(content)
        if isinstance(text, ToolResult):
            return text
        changed = [*entries[:index], text, *entries[index + 1 :]]
        return self._save(part, entries, changed, f"replaced {_quoted(entries[index])}", text)

    def _save(
        self, part: MemoryTarget, old: list[str], entries: list[str], what: str, new: str = ""
    ) -> ToolResult:
        """Save ``entries`` in place of ``old`` if they fit the budget and the ``new`` entry's
        text passes :func:`~hermes_core.agent._memory_checks.refusal`, in that order: the
        budget is a sum, text past it is refused without being scanned."""
        used, budget, before = self.usage(entries), self.budgets[part], self.usage(old)
        if used > budget and used > before:  # what shrinks a part over its budget is welcome
            return ToolResult.error(
                "DENIED",
                f"memory refused: {part} would use {used}/{budget} characters (it uses "
                f"{before} now; {used - budget} over its budget). Replace or remove "
                "entries first (shorter, merged, or no longer true); nothing changed.",
                structured={"target": part, "used": before, "would_use": used, "budget": budget},
            )
        why = refusal(new) if new else None
        if why is not None:
            return ToolResult.error(
                "DENIED", f"memory refused the entry: {why}. Nothing was written."
            )
        try:
            self.provider.save(part, entries)
        except (OSError, ValueError) as exc:
            return ToolResult.error("TOOL_ERROR", f"memory: {part} could not be saved: {exc}")
        except Exception as exc:  # outside the contract: named, as the tool's own error
            why = self._failed(f"save({part!r}, ...)", exc)
            return ToolResult.error("TOOL_ERROR", f"memory: {part} could not be saved: {why}")
        return self._answer(part, entries, what)

    def _answer(self, part: MemoryTarget, entries: list[str], what: str) -> ToolResult:
        used, budget = self.usage(entries), self.budgets[part]
        return ToolResult.text(
            f"memory: {what}. {self._state(part, entries)}.",
            structured={"target": part, "used": used, "budget": budget, "entries": len(entries)},
        )

    def tool(self) -> Tool:
        """The ``memory`` tool over this memory (a core tool: never deferred)."""

        def memory(
            action: str, target: str, content: str | None = None, old_text: str | None = None
        ) -> ToolResult:
            return self.apply(action, target, content, old_text)

        return Tool(
            TOOL_NAME,
            DESCRIPTION,
            PARAMETERS,
            handler=memory,
            toolset=MEMORY_TOOLSET,
            source="builtin",
            source_name="agent",
            annotations=ToolAnnotations(read_only=False, destructive=False, idempotent=False),
            core=True,
        )

    def register(self, registry: Registry) -> None:
        """Register :meth:`tool` (owner ``agent``) unless a tool ``memory`` already is."""
        if TOOL_NAME not in registry:
            registry.register(self.tool(), owner="agent")


def _counted(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _folded(entry: str) -> str:
    """``entry`` as compared for a duplicate: casefolded, its spaces collapsed, a final stop
    (``.``, ``!``, ``;``) left out."""
    return " ".join(entry.casefold().split()).rstrip(".!;")


def _invalid(message: str) -> ToolResult:
    return ToolResult.error("INVALID_ARGUMENTS", f"memory: {message}")


def _text(content: str | None) -> str | ToolResult:
    """The entry ``content`` gives (stripped), or the error of an empty one."""
    text = (content or "").strip()
    return text or _invalid("content is empty: give the entry's text")


def selected_memory(host: Host) -> Memory | None:
    """The memory the host's ``memory`` section describes, over the provider ``memory.provider``
    names (built by its plugin's factory), or ``None`` when ``memory.enabled`` is false. Its
    changes take turns with those of the home's other processes through
    ``$HERMES_HOME/.memory.lock``, whatever the provider: the read and the write of one change
    are two calls of the provider.

    Raises :class:`~hermes_core._errors.RegistrationError` for a provider no loaded plugin
    registers (listing the valid names) and :class:`~hermes_core._errors.PluginError` for one
    its plugin cannot build."""
    from hermes_core._plugins.selection import build_selected

    section = host.config.memory
    if not section.enabled:
        return None
    provider: MemoryProvider = build_selected(
        host.registrations,
        "memory_provider",
        section.provider,
        host.plugin_context,
    )
    source = host.registrations.label("memory_provider", section.provider)
    home = host.env.data_home  # the user's, never a gated project home's
    return Memory.configured(
        provider, section, home / ".memory.lock", source, home / ".memory.told"
    )
