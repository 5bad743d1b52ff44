"""The bundled memory provider ``file`` (``memory.provider: file``, the default): the agent's
memory as two plain text files under the home, which the user may read and edit.

``$HERMES_HOME/memories/MEMORY.md`` holds the target ``memory`` (notes about the work and the
environment), ``USER.md`` the target ``user``. Entries are separated by a line holding only
``§``; blank entries are ignored, so an edit by hand only has to keep that separator. Every
save replaces the file atomically (a temporary file, fsync, rename): a process killed while
writing leaves the old file or the new one. The files are private to the user (``0600``).

A home inside the project (``HERMES_HOME=./.hermes`` in a cloned repository) holds the
repository's files, not the user's: the memory goes into every system prompt with the weight of
what the model itself saved, so a planted one is not read, and nothing is written there, while
the project gate is closed (as for the home's ``config.yaml``, ``.env``, plugins and skills).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from hermes_core._plugin_support import project_refusal, write_atomically
from hermes_core.agent import MemoryTarget
from hermes_core.plugin import (
    DoctorCheckSpec,
    DoctorResult,
    MemoryProviderSpec,
    PluginContext,
    hookimpl,
)

if TYPE_CHECKING:
    from hermes_core import Environment

SEPARATOR: Final = "§"
"""The line between two entries."""
FILE_NAMES: Final[dict[MemoryTarget, str]] = {"memory": "MEMORY.md", "user": "USER.md"}
_MODE: Final = 0o600


class FileMemoryProvider:
    """The memory in ``directory`` (``$HERMES_HOME/memories``), one file per target; with
    ``env``, a file that is the project's is neither read nor written while its gate is closed
    (``ValueError`` saying so)."""

    def __init__(self, directory: Path, env: Environment | None = None) -> None:
        self.directory = directory
        self.env = env

    def _refused(self, path: Path) -> None:
        refusal = None if self.env is None else project_refusal(self.env, path, "the memory file")
        if refusal is not None:
            raise ValueError(refusal)

    def path(self, target: MemoryTarget) -> Path:
        """The file of ``target``."""
        if target not in FILE_NAMES:
            raise ValueError(f"unknown memory target {target!r}: use 'memory' or 'user'")
        return self.directory / FILE_NAMES[target]

    def load(self, target: MemoryTarget) -> list[str]:
        """The entries of ``target``'s file (``[]`` when it does not exist)."""
        path = self.path(target)
        if path.exists():  # none: nothing planted to keep out, and no warning at every start
            self._refused(path)
        try:
            # utf-8-sig: the byte order mark an editor on Windows starts the file with is no text.
            text = path.read_text(encoding="utf-8-sig")
        except FileNotFoundError:
            return []
        except UnicodeDecodeError as exc:
            byte = exc.object[exc.start : exc.start + 1].hex()
            raise ValueError(
                f"{path} is not UTF-8 text (byte 0x{byte} at offset {exc.start}): save it as "
                f"UTF-8 (entries separated by a line holding only {SEPARATOR})"
            ) from None
        entries: list[str] = []
        current: list[str] = []
        for line in text.splitlines():
            if line.strip() == SEPARATOR:
                entries.append("\n".join(current).strip())
                current = []
            else:
                current.append(line)
        entries.append("\n".join(current).strip())
        return [entry for entry in entries if entry]

    def save(self, target: MemoryTarget, entries: Sequence[str]) -> None:
        """Replace ``target``'s file with ``entries``, atomically."""
        path = self.path(target)
        self._refused(path)
        for entry in entries:
            if any(line.strip() == SEPARATOR for line in entry.splitlines()):
                raise ValueError(f"an entry may not hold a line of only {SEPARATOR!r}")
        body = f"\n{SEPARATOR}\n".join(entry.strip() for entry in entries)
        write_atomically(path, body + "\n" if body else "", mode=_MODE)


def file_provider(context: PluginContext) -> FileMemoryProvider:
    """The ``file`` provider of the home in ``context``."""
    return FileMemoryProvider(context.env.home / "memories", context.env)


@hookimpl(trylast=True)
def hermes_memory_providers() -> list[MemoryProviderSpec]:
    """The ``file`` memory provider."""
    return [
        MemoryProviderSpec(
            "file", factory=file_provider, description="plain files under $HERMES_HOME/memories"
        )
    ]


@hookimpl(trylast=True)
def hermes_doctor_checks(context: PluginContext) -> list[DoctorCheckSpec]:
    """``hermes doctor``, when the memory is on and kept by ``file``: each file read as the
    agent reads it at start (nothing is written)."""
    memory = context.config.memory
    if not memory.enabled or memory.provider != "file":
        return []

    def files() -> DoctorResult:
        provider = file_provider(context)
        said = []
        for target, name in FILE_NAMES.items():
            try:
                count = len(provider.load(target))
            except (ValueError, OSError) as exc:
                # A project's home, its gate closed: held back, as its config.yaml is.
                held_back = project_refusal(context.env, provider.path(target), "the memory file")
                return DoctorResult(
                    "warning" if held_back is not None else "error", str(exc), "hermes memory list"
                )
            said.append(f"{name}: {count} {'entry' if count == 1 else 'entries'}")
        return DoctorResult("ok", f"{', '.join(said)} ({provider.directory})")

    return [DoctorCheckSpec("files", files)]
