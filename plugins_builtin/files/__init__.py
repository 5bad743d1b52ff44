"""The ``files`` toolset: ``read_file``, ``write_file``, ``patch`` and ``search_files``.

Every path is resolved against the session's working directory (symbolic links followed) and
refused when it lands outside it, unless ``plugins.entries.files.allow_outside`` says otherwise:
``true`` allows any path, a list of directories adds those roots.

A leading ``~`` means the ``HOME`` variable of the host's environment (not the process's).
hermes' own credentials (``Environment.credential_paths``) are refused wherever they lie.

Settings (``plugins.entries.files``): ``allow_outside`` (``false``), ``max_read_bytes``
(100000), ``max_line_bytes`` (16384), ``max_search_results`` (200, also the schema's maximum of
``search_files``' ``max_results``), ``search_timeout`` (50
seconds: a ``search_files`` regex scan still running then stops with an error). A scan whose
call ends first (its timeout, the caller's cancel) stops at its next line.

Regexes run on the ``regex`` package with a deadline and the GIL released: Python's ``re``
holds the GIL through a catastrophic backtrack, which no worker-thread timeout can stop.
What ``search_files`` walks and matches is in :mod:`.scan`, how a write reaches the disk in
:mod:`.writing`.
"""

from __future__ import annotations

import errno
import io
import os
import stat
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, BinaryIO

import anyio.to_thread
from annotated_types import Ge

from hermes_core._plugin_support import (
    ClientIOError,
    client_files,
    path_refusal,
    setting_problem,
)
from hermes_core.plugin import PluginContext, Session, Tool, ToolAnnotations, ToolResult, hookimpl

from .scan import (
    SEARCH_MAX_FILES,
    SNIFF_BYTES,
    Glob,
    around_match,
    first_match,
    read_lines,
    text_lines,
    walk,
)
from .writing import atomic_write

if TYPE_CHECKING:
    import regex as regex_engine

    from hermes_core import Config, Environment

_PLUGIN = "files"
_PATCH_MAX_BYTES = 10 * 1024 * 1024
_HINT_SECONDS = 1.0
"""How long patch looks for its missing ``old_text`` with other whitespace."""


class Refused(Exception):
    """A request the tool will not carry out; the message tells the model what to do instead."""


def _allow_outside(value: Any) -> Any:
    if isinstance(value, bool) or (
        isinstance(value, list) and all(isinstance(item, str) for item in value)
    ):
        return value
    raise ValueError(f"expected true, false or a list of directories, got {value!r}")


def _search_seconds(value: Any) -> Any:
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < 86400:
        return value
    raise ValueError(f"expected a number of seconds above 0 and below 86400, got {value!r}")


@dataclass(frozen=True)
class FilesEntry:
    """What ``plugins.entries.files`` may set (checked by ``PluginContext.settings_as``)."""

    allow_outside: Annotated[Any, _allow_outside] = False
    """``true``: any path; a list of directories: those roots besides the working directory."""
    max_read_bytes: Annotated[int, Ge(1)] = 100_000
    max_line_bytes: Annotated[int, Ge(1)] = 16_384
    max_search_results: Annotated[int, Ge(1)] = 200
    search_timeout: Annotated[float, _search_seconds] = 50.0


HOME_KEYS = (".env", "auth.json", "serve-token", "mcp-auth")
"""The credentials a hermes home keeps (``Environment.credential_paths``), by name."""


@dataclass(frozen=True)
class FileSettings:
    """``plugins.entries.files``, validated, with the roots resolved."""

    allow_anywhere: bool = False
    extra_roots: tuple[Path, ...] = ()
    max_read_bytes: int = 100_000
    max_line_bytes: int = 16_384
    max_search_results: int = 200
    search_timeout: float = 50.0
    home: Path | None = None
    """The ``HOME`` of the host's environment, for a leading ``~``; ``None`` when unset."""
    credentials: tuple[Path, ...] = ()
    """hermes' credential files and directories (resolved), refused wherever they are."""
    gated_homes: Path | None = None
    """The user's ``~/.hermes/projects`` (resolved): each folder in it holds the sign-ins of a
    home in a project (:data:`HOME_KEYS`), one made after the host started too."""

    @classmethod
    def from_entry(cls, entry: FilesEntry, env: Environment) -> FileSettings:
        """The settings of ``entry``, its ``allow_outside`` roots resolved against the
        environment's working directory; a root that cannot be is a ``ValueError`` (of
        ``allow_outside``: the only key refused here)."""
        home_text = env.get("HOME")
        home = Path(home_text) if home_text else None
        roots: list[Path] = []
        if not isinstance(entry.allow_outside, bool):
            for item in entry.allow_outside:
                try:
                    root = expand_home(item, home)
                except Refused as exc:
                    raise ValueError(str(exc)) from None
                roots.append((root if root.is_absolute() else env.cwd / root).resolve())
        return cls(
            entry.allow_outside is True,
            tuple(roots),
            max_read_bytes=entry.max_read_bytes,
            max_line_bytes=entry.max_line_bytes,
            max_search_results=entry.max_search_results,
            search_timeout=float(entry.search_timeout),
            home=home,
            # realpath: a looping link there must not fail the plugin (resolve() raises).
            credentials=tuple(Path(os.path.realpath(path)) for path in env.credential_paths),
            gated_homes=(
                Path(os.path.realpath(env.user_home / ".hermes" / "projects"))
                if env.user_home is not None
                else None
            ),
        )


def expand_home(raw: str, home: Path | None) -> Path:
    """``raw`` with a leading ``~`` or ``~/`` replaced by ``home`` (the environment's ``HOME``).

    ``~user`` and a ``~`` without a known home are refused rather than guessed.
    """
    if raw != "~" and not raw.startswith("~/"):
        if raw.startswith("~"):
            raise Refused(f"{raw}: '~user' paths are not supported; give the full path")
        return Path(raw)
    if home is None:
        raise Refused(f"{raw}: HOME is not set in the environment, so '~' cannot be expanded")
    return home / raw[2:] if raw != "~" else home


class FileTools:
    """The handlers, sharing one :class:`FileSettings`."""

    def __init__(self, settings: FileSettings) -> None:
        self.settings = settings
        # By text: a search asks for each file, and comparing it with each of the user's many
        # homes' credentials (four a project) cost seconds a search; a lookup per parent does not.
        self._credentials = {str(item): item for item in settings.credentials}
        self._gated = str(settings.gated_homes) if settings.gated_homes is not None else None

    # Paths ------------------------------------------------------------------------------------

    def resolve(self, session: Session, raw: str) -> Path:
        """``raw`` resolved against the session directory; refused outside the allowed roots."""
        if not raw or "\x00" in raw:
            raise Refused("the path is empty or contains a NUL character")
        try:
            os.fsencode(raw)  # an undecodable byte's escape (U+DC80..U+DCFF) names it back
        except UnicodeEncodeError as exc:
            raise Refused(_half_character(raw, exc, "path")) from None
        candidate = expand_home(raw, self.settings.home)
        if not candidate.is_absolute():
            candidate = session.cwd / candidate
        try:
            resolved = candidate.resolve()
        except (RuntimeError, OSError) as exc:  # Python 3.11 raises RuntimeError, 3.13 ELOOP
            if isinstance(exc, OSError) and exc.errno != errno.ELOOP:
                raise
            raise Refused(
                f"{raw} is a symbolic link that loops (or its path goes through one); point "
                "the link at a real file or remove it"
            ) from None
        if (credential := self.credential_of(resolved)) is not None:
            raise Refused(
                f"{raw} is one of hermes' credentials ({credential.name}); the file tools "
                "neither read nor write them: ask the user to do what is needed there"
            )
        if self.settings.allow_anywhere:
            return resolved
        for root in (session.cwd.resolve(), *self.settings.extra_roots):
            if resolved == root or resolved.is_relative_to(root):
                return resolved
        raise Refused(
            f"{raw} is outside the working directory {session.cwd}; file tools stay inside it "
            "unless plugins.entries.files.allow_outside allows more"
        )

    def credential_of(
        self, path: Path, files: dict[tuple[int, int], Path] | None = None
    ) -> Path | None:
        """The credential of hermes' the resolved ``path`` is or lies in, else ``None``: by
        its path, or as the same file (``files``: :meth:`credential_files`) by another name,
        which no path comparison sees (a hard link; ``.ENV`` on a case-insensitive file
        system)."""
        text, below = str(path), ""
        while text != below:  # the path, then each folder up to the root
            if (item := self._credentials.get(text)) is not None:
                return item
            up = os.path.dirname(text)
            if os.path.basename(text) in HOME_KEYS and os.path.dirname(up) == self._gated:
                return Path(text)
            text, below = up, text
        files = self.credential_files() if files is None else files
        if not files:
            return None
        try:
            status = path.stat()
        except OSError:  # nothing there (a file to create) or out of reach: no file of hermes'
            return None
        return files.get((status.st_dev, status.st_ino))

    def credential_files(self) -> dict[tuple[int, int], Path]:
        """The credentials there are now, by device and inode (``mcp-auth`` and its files)."""
        found: dict[tuple[int, int], Path] = {}
        items = list(self.settings.credentials)
        if self.settings.gated_homes is not None:  # listed now: a folder may be new
            try:
                folders = [p for p in self.settings.gated_homes.iterdir() if p.is_dir()]
            except OSError:  # none yet, or out of reach
                folders = []
            items += [folder / name for folder in folders for name in HOME_KEYS]
        for item in items:
            try:
                inside = list(item.iterdir()) if item.is_dir() else []
                for path in (item, *inside):
                    status = path.stat()
                    found[(status.st_dev, status.st_ino)] = item
            except OSError:
                continue
        return found

    def shown(self, session: Session, path: Path) -> str:
        """``path`` relative to the session directory when it is inside it."""
        try:
            return str(path.relative_to(session.cwd.resolve()))
        except ValueError:
            return str(path)

    # read_file --------------------------------------------------------------------------------

    async def read_file(
        self, session: Session, path: str, offset: int = 1, limit: int = 2000
    ) -> ToolResult:
        """Lines ``offset`` .. ``offset + limit - 1`` of a text file, within the size cap; read
        through the session's client when it has one (an editor: unsaved changes included)."""
        if (refused := path_refusal("read_file", path=path)) is not None:
            return refused
        client = client_files(session)
        if client is None:
            return await anyio.to_thread.run_sync(self._read_here, session, path, offset, limit)
        try:
            target = self.resolve(session, path)
            _check_regular(target, path, "read_file")
            data = (await client.read_text(target)).encode("utf-8")
            _check_text(data[:SNIFF_BYTES], path, "read_file reads")
        except (Refused, OSError) as exc:
            return _refused("read_file", exc)
        except ClientIOError as exc:
            return ToolResult.error(
                "TOOL_ERROR", f"read_file: the client could not read {path}: {exc}"
            )
        return self._read_lines(session, target, io.BytesIO(data), offset, limit)

    def _read_here(self, session: Session, path: str, offset: int, limit: int) -> ToolResult:
        try:
            target = self.resolve(session, path)
            _check_regular(target, path, "read_file")
            with target.open("rb") as handle:
                _check_text(handle.read(SNIFF_BYTES), path, "read_file reads")
                handle.seek(0)
                return self._read_lines(session, target, handle, offset, limit)
        except (Refused, OSError) as exc:
            return _refused("read_file", exc)

    def _read_lines(
        self, session: Session, target: Path, handle: BinaryIO, offset: int, limit: int
    ) -> ToolResult:
        settings = self.settings
        lines = read_lines(handle, settings.max_line_bytes)
        for seen in range(offset - 1):
            if next(lines, None) is None:
                return ToolResult.text(
                    f"[{self.shown(session, target)} has {seen} lines; offset {offset} is past "
                    "the end]",
                    structured={"path": str(target), "start_line": offset, "end_line": seen},
                )
        pieces: list[str] = []
        used = 0
        note = ""
        end = offset - 1
        for raw, cut in lines:
            if pieces and used + len(raw) > settings.max_read_bytes:
                note = (
                    f"[output stopped at the {settings.max_read_bytes}-byte cap after line "
                    f"{end}; continue with offset={end + 1}]"
                )
                break
            text = raw.decode("utf-8", "replace")
            if cut:
                text = f"{text} [line cut at {settings.max_line_bytes} bytes]\n"
            pieces.append(text)
            used += len(raw)
            end += 1
            if end - offset + 1 >= limit:
                if next(lines, None) is not None:
                    note = f"[more lines follow; continue with offset={end + 1}]"
                break
        body = "".join(pieces)
        if offset == 1 and not body:
            body = f"[{self.shown(session, target)} is empty]"
        if note:
            body = f"{body}{'' if body.endswith(chr(10)) else chr(10)}\n{note}"
        return ToolResult.text(
            body,
            structured={
                "path": str(target),
                "start_line": offset,
                "end_line": end,
                "truncated": bool(note),
            },
        )

    # write_file -------------------------------------------------------------------------------

    async def write_file(self, session: Session, path: str, content: str) -> ToolResult:
        """Replace (or create) a file with ``content``, creating parent directories; through
        the session's client when it writes the session's files (an editor over ACP)."""
        if (refused := path_refusal("write_file", path=path)) is not None:
            return refused
        client = client_files(session)
        if client is None:
            return await anyio.to_thread.run_sync(self._write_here, session, path, content)
        try:
            _utf8(content, "content")
            target, existed = self._write_target(session, path)
            # As a write here makes them: fs/write_text_file only writes the file.
            target.parent.mkdir(parents=True, exist_ok=True)
            await client.write_text(target, content)
        except (Refused, OSError) as exc:
            return _refused("write_file", exc)
        except ClientIOError as exc:
            return ToolResult.error(
                "TOOL_ERROR", f"write_file: the client could not write {path}: {exc}"
            )
        return self._written(session, target, len(content.encode("utf-8")), existed)

    def _write_target(self, session: Session, path: str) -> tuple[Path, bool]:
        """The resolved file to write and whether it exists; refused as :meth:`resolve` says,
        for a directory, for what is not a regular file (the rename would replace a FIFO or a
        device such as ``/dev/null`` with a file) and for a file that is not writable."""
        target = self.resolve(session, path)
        if target.is_dir():
            raise Refused(f"{path} is a directory")
        existed = target.exists()
        if existed:
            kind = _special_kind(target.stat().st_mode)
            if kind:
                raise Refused(
                    f"{path} is {kind}, not a regular file; write_file writes regular files only"
                )
            _check_writable(target, path)
        return target, existed

    def _write_here(self, session: Session, path: str, content: str) -> ToolResult:
        try:
            data = _utf8(content, "content")
            target, existed = self._write_target(session, path)
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(target, data)
        except (Refused, OSError) as exc:
            return _refused("write_file", exc)
        return self._written(session, target, len(data), existed)

    def _written(self, session: Session, target: Path, size: int, existed: bool) -> ToolResult:
        verb = "replaced" if existed else "created"
        return ToolResult.text(
            f"{verb} {self.shown(session, target)} ({size} bytes)",
            structured={"path": str(target), "bytes": size, "created": not existed},
        )

    # patch ------------------------------------------------------------------------------------

    async def patch(self, session: Session, path: str, old_text: str, new_text: str) -> ToolResult:
        """Replace the one exact occurrence of ``old_text`` with ``new_text``; the edited file
        is written through the session's client when it writes the session's files."""
        if (refused := path_refusal("patch", path=path)) is not None:
            return refused
        client = client_files(session)
        if client is None:
            return await anyio.to_thread.run_sync(
                self._patch_here, session, path, old_text, new_text
            )
        try:
            target = self.resolve(session, path)
            current = await client.read_text(target) if target.is_file() else None
            target, text, first_line = self._patched(session, path, old_text, new_text, current)
            await client.write_text(target, text)
        except (Refused, OSError) as exc:
            return _refused("patch", exc)
        except ClientIOError as exc:
            return ToolResult.error("TOOL_ERROR", f"patch: the client could not edit {path}: {exc}")
        return self._patch_result(session, target, first_line, new_text)

    def _patch_here(self, session: Session, path: str, old_text: str, new_text: str) -> ToolResult:
        try:
            target, text, first_line = self._patched(session, path, old_text, new_text)
            atomic_write(target, text.encode("utf-8"))
        except (Refused, OSError) as exc:
            return _refused("patch", exc)
        return self._patch_result(session, target, first_line, new_text)

    def _patch_result(
        self, session: Session, target: Path, first_line: int, new_text: str
    ) -> ToolResult:
        last_line = first_line + new_text.count("\n")
        return ToolResult.text(
            f"patched {self.shown(session, target)} at line {first_line}",
            structured={"path": str(target), "first_line": first_line, "last_line": last_line},
        )

    def _patched(
        self,
        session: Session,
        path: str,
        old_text: str,
        new_text: str,
        current: str | None = None,
    ) -> tuple[Path, str, int]:
        """The file, its text with the one occurrence replaced, and the line it starts at;
        ``Refused`` for a missing, binary, oversized or unwritable file and for an
        ``old_text`` found zero or several times. ``current`` is its text as the session's
        client has it (an editor's buffer), else it is read from the disk."""
        target = self.resolve(session, path)
        _check_regular(target, path, "patch")
        _check_writable(target, path)
        data = current.encode("utf-8") if current is not None else None
        size = len(data) if data is not None else target.stat().st_size
        if size > _PATCH_MAX_BYTES:
            raise Refused(f"{path} is larger than {_PATCH_MAX_BYTES} bytes; patch refuses it")
        if data is None:
            data = target.read_bytes()
        _check_text(data, path, "patch edits")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise Refused(f"{path} is not UTF-8 text; patch edits text files only") from None
        if not old_text:
            raise Refused("old_text is empty; give the exact text to replace")
        _utf8(new_text, "new_text")
        count = text.count(old_text)
        if count == 0 and "\r\n" in text and "\n" in old_text and "\r" not in old_text:
            # A model writes LF; the file's CRLF lines are matched, and written, as CRLF.
            old_text, new_text = (part.replace("\n", "\r\n") for part in (old_text, new_text))
            count = text.count(old_text)
        if count == 0:
            raise Refused(
                f"old_text was not found in {path}{_whitespace_hint(text, old_text)}; read the "
                "file and copy the exact text, whitespace included"
            )
        if count > 1:
            raise Refused(
                f"old_text appears {count} times in {path}; include more surrounding lines "
                "so it matches exactly once"
            )
        start = text.index(old_text)
        first_line = text.count("\n", 0, start) + 1
        return target, text.replace(old_text, new_text, 1), first_line

    # search_files -----------------------------------------------------------------------------

    async def search_files(
        self,
        session: Session,
        pattern: str | None = None,
        path: str = ".",
        glob: str | None = None,
        ignore_case: bool = False,
        max_results: int = 50,
    ) -> ToolResult:
        """Files matching ``glob`` and, with ``pattern``, the lines matching that regex."""
        # The scan runs in a thread no cancellation can stop: when the call ends (a timeout, the
        # caller's cancel), the event tells it to stop at its next line or file.
        stop = threading.Event()
        search = partial(
            self._search_here, session, pattern, path, glob, ignore_case, max_results, stop
        )
        try:
            return await anyio.to_thread.run_sync(search, abandon_on_cancel=True)
        finally:
            stop.set()

    def _search_here(
        self,
        session: Session,
        pattern: str | None,
        path: str,
        glob: str | None,
        ignore_case: bool,
        max_results: int,
        stop: threading.Event,
    ) -> ToolResult:
        if (refused := path_refusal("search_files", path=path)) is not None:
            return refused
        try:
            root = self.resolve(session, path)
            if not root.exists():
                raise Refused(f"{path} does not exist")
            regex = None
            if pattern is not None:
                import regex as regex_engine  # 20 ms at import, paid by searches alone

                try:
                    regex = regex_engine.compile(
                        pattern, regex_engine.IGNORECASE if ignore_case else 0
                    )
                except (regex_engine.error, ValueError, OverflowError) as exc:
                    raise Refused(f"pattern is not a valid regular expression: {exc}") from None
            try:
                selected = Glob.parse(glob) if glob else None
            except ValueError as exc:
                raise Refused(str(exc)) from None
            limit = min(max_results, self.settings.max_search_results)
            deadline = time.monotonic() + self.settings.search_timeout
            hits, stopped = self._search(session, root, regex, selected, limit, deadline, stop)
        except (Refused, OSError) as exc:
            return _refused("search_files", exc)
        lines = [hit["text"] for hit in hits]
        if not hits:
            lines.append("no matches")
        if stopped:
            lines.append(f"[{stopped}; narrow the pattern, glob or path]")
        return ToolResult.text(
            "\n".join(lines),
            structured={"matches": hits, "truncated": bool(stopped)},
        )

    def _search(
        self,
        session: Session,
        root: Path,
        regex: regex_engine.Pattern[str] | None,
        glob: Glob | None,
        limit: int,
        deadline: float,
        stop: threading.Event,
    ) -> tuple[list[dict[str, Any]], str]:
        """The hits, and why the search stopped early (``""`` when it did not)."""
        hits: list[dict[str, Any]] = []
        full = f"stopped after {limit} results"
        ended = "stopped: the call had ended"  # seen by no one: the call's result is given
        credentials = self.credential_files()
        for scanned, file in enumerate(walk(root)):
            if stop.is_set():
                return hits, ended
            if scanned >= SEARCH_MAX_FILES:
                return hits, f"stopped after looking at {SEARCH_MAX_FILES} files"
            if self.credential_of(file, credentials) is not None:
                continue  # under a resolved root, only a link (below) hides where it leads
            if file.is_symlink():
                try:
                    self.resolve(session, str(file))
                except Refused:
                    continue  # a link inside leading outside: not ours to read
            shown = self.shown(session, file)
            if glob is not None and not glob.matches(file, root, shown):
                continue
            if regex is None:
                if len(hits) >= limit:
                    return hits, full
                hits.append({"path": shown, "text": shown})
                continue
            for line_no, line in text_lines(file):
                if stop.is_set():
                    return hits, ended
                try:
                    found = first_match(regex, line, deadline)
                except TimeoutError:
                    raise Refused(
                        f"the pattern took too long (stopped at {shown}:{line_no}); it probably "
                        "backtracks catastrophically (nested repetition such as (a+)+); simplify "
                        "it or narrow the path"
                    ) from None
                if found is not None:
                    if len(hits) >= limit:
                        return hits, full
                    snippet = around_match(line.rstrip("\r\n"), found)
                    hits.append(
                        {"path": shown, "line": line_no, "text": f"{shown}:{line_no}: {snippet}"}
                    )
        return hits, ""


def _utf8(text: str, name: str) -> bytes:
    """``text`` in UTF-8; ``Refused`` naming the argument ``name`` when it holds a lone
    surrogate (half of an emoji's pair, written apart), which UTF-8 cannot hold."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise Refused(_half_character(text, exc, name)) from None


def _half_character(text: str, exc: UnicodeEncodeError, name: str) -> str:
    half = f"\\u{ord(text[exc.start]):04x}"
    return (
        f"{name} holds half a character ({half}, a lone surrogate) at character {exc.start}, "
        "which UTF-8 cannot hold; send the whole character or leave it out"
    )


def _special_kind(mode: int) -> str:
    """What a file of ``mode`` is when it is neither a regular file nor a directory, else ``""``."""
    kinds = (
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((name for test, name in kinds if test(mode)), "")


def _check_regular(target: Path, raw: str, tool: str) -> None:
    """Refuse a path that is not a regular file, saying what it is (a directory, a FIFO, a
    device...) when it exists."""
    if target.is_dir():
        raise Refused(f"{raw} is a directory; list it with search_files (path and glob)")
    try:
        mode = target.stat().st_mode
    except OSError:
        mode = 0
    if kind := _special_kind(mode):
        verb = "edits" if tool == "patch" else "reads"
        raise Refused(f"{raw} is {kind}, not a regular file; {tool} {verb} regular files only")
    if not stat.S_ISREG(mode):
        raise Refused(f"{raw} does not exist or is not a regular file")


def _whitespace_hint(text: str, old_text: str) -> str:
    """Where ``old_text`` is in ``text`` when whitespace is ignored, said as ``; line N has it
    with other whitespace ...`` (a tab for spaces is a model's usual slip); ``""`` when it is
    nowhere or the look takes over a second (many words over many near misses)."""
    import regex as regex_engine

    words = old_text.split()
    if not words:
        return ""
    loose = regex_engine.compile(r"\s+".join(regex_engine.escape(word) for word in words))
    try:
        found = loose.search(text, timeout=_HINT_SECONDS, concurrent=True)
    except TimeoutError:
        return ""
    if found is None:
        return ""
    line = text.count("\n", 0, found.start()) + 1
    return f"; line {line} has it with other whitespace (tabs, spaces or line breaks)"


def _check_text(head: bytes, raw: str, verb: str) -> None:
    """Refuse a file whose first bytes ``head`` say it is not UTF-8 text: UTF-16 (or UTF-32)
    by its byte-order mark, binary by a NUL byte; ``verb`` says what the tool does."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise Refused(
            f"{raw} is UTF-16 (or UTF-32) text, by its byte-order mark; {verb} UTF-8 text only: "
            f"read it with terminal (iconv -f UTF-16 -t UTF-8 '{raw}')"
        )
    if b"\x00" in head:
        raise Refused(f"{raw} looks like a binary file; {verb} text files only")


def _check_writable(target: Path, raw: str) -> None:
    """Refuse to replace a file its permissions say is not writable (a 0444 file).

    A file with no write bit at all is refused even for root, who may write anything: the
    mode says nobody meant it to change."""
    if not os.access(target, os.W_OK) or not target.stat().st_mode & 0o222:
        raise Refused(
            f"{raw} is not writable (mode {stat.filemode(target.stat().st_mode)}); change its "
            "permissions first if it should be edited"
        )


def _refused(tool: str, exc: Exception) -> ToolResult:
    if isinstance(exc, Refused):
        message = str(exc)
    elif isinstance(exc, OSError) and exc.strerror:
        # Not str(exc): it repeats the path whole, and a model may send one of a megabyte.
        where = f": {_cut(str(exc.filename))}" if exc.filename is not None else ""
        message = f"{type(exc).__name__}: {exc.strerror}{where}"
    else:
        message = f"{type(exc).__name__}: {_cut(str(exc))}"
    return ToolResult.error("TOOL_ERROR", f"{tool}: {message}")


def _cut(text: str, limit: int = 300) -> str:
    if len(text) <= limit:
        return text
    return f"{text[: limit - 60]}…{text[-40:]} ({len(text):,} characters)"


def build_tools(settings: FileSettings) -> Sequence[Tool]:
    """The four file tools over one set of settings."""
    handlers = FileTools(settings)
    read_only = ToolAnnotations(read_only=True, destructive=False, idempotent=True)
    writes = ToolAnnotations(read_only=False, destructive=True, idempotent=True)
    common: dict[str, Any] = {
        "toolset": "files",
        "source": "builtin",
        "source_name": _PLUGIN,
        "core": True,
        "timeout": 60.0,
    }
    return [
        Tool(
            name="read_file",
            description=(
                "Read a text file in the working directory. Returns up to `limit` lines from "
                "line `offset` (1-based); long output is cut with a note saying how to continue."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "File path, relative or absolute."},
                    "offset": {"type": "integer", "minimum": 1, "default": 1},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100000, "default": 2000},
                },
                "required": ["path"],
                "additionalProperties": False,
            },
            handler=handlers.read_file,
            annotations=read_only,
            **common,
        ),
        Tool(
            name="write_file",
            description="Create or replace a text file with the given content (UTF-8).",
            parameters={
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "content": {"type": "string"},
                },
                "required": ["path", "content"],
                "additionalProperties": False,
            },
            handler=handlers.write_file,
            annotations=writes,
            **common,
        ),
        Tool(
            name="patch",
            description=(
                "Edit a text file by replacing one exact occurrence of old_text with new_text. "
                "Fails, leaving the file untouched, when old_text is missing or not unique."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "old_text": {"type": "string", "minLength": 1},
                    "new_text": {"type": "string"},
                },
                "required": ["path", "old_text", "new_text"],
                "additionalProperties": False,
            },
            handler=handlers.patch,
            annotations=writes,
            **common,
        ),
        Tool(
            name="search_files",
            description=(
                "Find files by glob ('*.py': by name, at any depth; 'src/**/*.py': by path, ** "
                "for any directories; '*.{ts,tsx}', '!*.md' for all but those) and, with "
                "`pattern`, lines matching a regular expression. "
                "Output is bounded by max_results."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "pattern": {"type": ["string", "null"]},
                    "path": {"type": "string", "default": "."},
                    "glob": {"type": ["string", "null"]},
                    "ignore_case": {"type": "boolean", "default": False},
                    # The schema's maximum is the setting: a larger value is refused, never
                    # cut silently to fewer results than the model asked for.
                    "max_results": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": settings.max_search_results,
                        "default": min(50, settings.max_search_results),
                    },
                },
                "additionalProperties": False,
            },
            handler=handlers.search_files,
            annotations=read_only,
            **{**common, "timeout": max(60.0, settings.search_timeout + 10.0)},
        ),
    ]


@hookimpl(trylast=True)
def hermes_tools(config: Config, env: Environment) -> Sequence[Tool]:
    """The file tools, configured from ``plugins.entries.files``."""
    entry = PluginContext.of(_PLUGIN, config, env).settings_as(FilesEntry)
    try:
        settings = FileSettings.from_entry(entry, env)
    except ValueError as exc:  # every file tool reads the roots: the plugin fails, located
        raise setting_problem(config, _PLUGIN, "allow_outside", str(exc)) from None
    return build_tools(settings)
