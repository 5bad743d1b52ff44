"""Reading the YAML files hermes-core does not write itself, within fixed limits.

Plugin manifests come from whatever a project or a download carries, and ``config.yaml`` may be a
file of the project too (``HERMES_HOME=./.hermes``, ``--config``). Both are read here, by the
same rules, so that no file can exhaust the host:

- only a regular file is read (a FIFO would block every command), and at most a fixed number of
  bytes of it (:data:`MANIFEST_MAX_BYTES`, :data:`CONFIG_MAX_BYTES`): a larger file is refused
  unread;
- aliases (``*name``) are refused: a few hundred bytes of them expand to gigabytes;
- collections nested deeper than :data:`MAX_DEPTH` levels are refused before the parser
  recurses into them, and flow collections (``[[[...``) before the scanner reads past the
  level: ruamel's scanner runs about a thousand levels ahead of the parser, at a cost
  quadratic in the levels it holds;
- a plain number longer than :data:`MAX_NUMBER_CHARACTERS` is refused (Python cannot convert
  one of 4,300 digits, nor make a float of 400).

Each refusal is a :class:`YamlLimitError`, a ruamel ``MarkedYAMLError`` carrying the position,
so callers report it with the line like any syntax error.
"""

from __future__ import annotations

import os
import stat
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ruamel.yaml.composer import Composer
from ruamel.yaml.constructor import ConstructorError
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import AliasEvent
from ruamel.yaml.scanner import Scanner

from hermes_core._shown import PROBLEM_CHARACTERS, clipped

if TYPE_CHECKING:
    from ruamel.yaml import YAML
    from ruamel.yaml.nodes import ScalarNode

MANIFEST_MAX_BYTES = 64 * 1024
"""The largest ``plugin.yaml`` read; manifests are a few hundred bytes."""
CONFIG_MAX_BYTES = 1024 * 1024
"""The largest ``config.yaml`` read."""
MAX_DEPTH = 64
"""How deeply collections may nest (``a: {b: [c]}`` is 3 levels)."""
MAX_NUMBER_CHARACTERS = 100
"""The longest plain scalar read as a number."""

_NUMBER_TAGS = frozenset({"tag:yaml.org,2002:int", "tag:yaml.org,2002:float"})
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class YamlFileError(Exception):
    """A file that cannot be read as YAML text within the limits; the message does not name
    the file (the caller's error does)."""


class YamlLimitError(MarkedYAMLError):
    """A document refused by a limit; ``problem`` says which, ``problem_mark`` where."""

    def __init__(self, problem: str, mark: Any) -> None:
        super().__init__(problem=problem, problem_mark=mark)


def yaml_problem(exc: YAMLError) -> tuple[int | None, str]:
    """Where and what ``exc`` says, for a message: the 0-based line of its problem (``None``
    when it has no mark) and the problem, clipped (a document's text may be echoed in it)."""
    mark = getattr(exc, "problem_mark", None)
    problem = clipped(getattr(exc, "problem", None) or str(exc), PROBLEM_CHARACTERS)
    return (mark.line if mark is not None else None), problem


def read_limited(path: Path, max_bytes: int) -> str | None:
    """The UTF-8 text of the regular file at ``path``, line endings as written; ``None`` when
    nothing is there.

    Raises :class:`YamlFileError` for anything but a regular file (opened without blocking, so
    a FIFO is refused, not waited on), for a file larger than ``max_bytes`` (refused unread),
    for text that is not UTF-8, and when the file cannot be read.
    """
    try:
        descriptor = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise YamlFileError(f"cannot be read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise YamlFileError(f"not a regular file ({_kind(info.st_mode)}), so it is not read")
        if info.st_size > max_bytes:
            raise YamlFileError(_too_large(max_bytes, info.st_size))
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes:
            chunk = os.read(descriptor, max_bytes + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise YamlFileError(f"cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(descriptor)
    if size > max_bytes:  # it grew while being read
        raise YamlFileError(_too_large(max_bytes, None))
    data = b"".join(chunks)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise YamlFileError(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _too_large(max_bytes: int, size: int | None) -> str:
    found = f" ({size} bytes)" if size is not None else ""
    return f"larger than {max_bytes} bytes{found}, so it is not read"


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file"


def limited(yaml: YAML) -> YAML:
    """``yaml`` (a pure-Python ruamel loader) with this module's limits on what it loads.

    A value its constructor cannot build (``2024-13-45`` as a date, ``!!int x``) becomes a
    ``ConstructorError`` with the position instead of a bare ``ValueError``.
    """
    yaml.Composer = LimitedComposer
    yaml.Scanner = _mixed(_FlowDepthScanning, yaml.Scanner or Scanner)  # ruamel's pure default
    yaml.Constructor = _mixed(_MarkedConstruction, yaml.Constructor)
    return yaml


def manifest_yaml() -> YAML:
    """A safe YAML loader for manifests that reads numbers and dates as the text written, so
    ``version: 1.10`` is ``"1.10"`` (not the float ``1.1``), within the limits of
    this module (no aliases, bounded nesting and numbers). Plugin manifests, hook
    directories' manifests and skills' front matter are read with it.

    A ruamel ``YAML`` is not thread-safe: build one per discovery (about 1 ms) and pass it to
    :func:`~hermes_core._plugins.manifest.load_manifest`, never share one between threads.
    """
    from ruamel.yaml import YAML
    from ruamel.yaml.constructor import SafeConstructor

    class ManifestConstructor(SafeConstructor):
        """Scalars a manifest holds as text (versions) stay the text written."""

    def as_written(constructor: SafeConstructor, node: ScalarNode) -> str:
        return str(constructor.construct_scalar(node))

    for tag in ("int", "float", "timestamp"):
        ManifestConstructor.add_constructor(f"tag:yaml.org,2002:{tag}", as_written)
    # Pure Python: the limits live in the composer, which the C loader would replace.
    yaml = YAML(typ="safe", pure=True)
    yaml.Constructor = ManifestConstructor
    return limited(yaml)


@cache
def _mixed(mixin: type, base: type) -> type:
    """``base`` with ``mixin`` before it (``base`` itself when it has it already), made once per
    pair: every loader of a process shares the class."""
    if issubclass(base, mixin):
        return base
    return type(f"Limited{base.__name__}", (mixin, base), {})


def load_limited(yaml: YAML, text: str) -> Any:
    """``yaml.load(text)`` where every failure is a ruamel ``YAMLError``: a constructor's
    ``ValueError`` that escaped :func:`limited`'s marking becomes one too (without a line)."""
    from ruamel.yaml.error import YAMLError

    try:
        return yaml.load(text)
    except YAMLError:
        raise
    except (ValueError, OverflowError) as exc:
        raise YAMLError(f"a value cannot be read: {clipped(str(exc))}") from None


class LimitedComposer(Composer):
    """A composer refusing aliases, nesting deeper than :data:`MAX_DEPTH` and overlong
    numbers, before anything is built from them."""

    def __init__(self, loader: Any = None) -> None:
        super().__init__(loader)
        self._nesting = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.parser.check_event(AliasEvent):
            event = self.parser.peek_event()
            raise YamlLimitError(
                f"alias *{clipped(str(event.anchor))} refused: hermes-core reads YAML without "
                "aliases (write the value out in full)",
                event.start_mark,
            )
        return super().compose_node(parent, index)

    def compose_scalar_node(self, anchor: Any) -> Any:
        node = super().compose_scalar_node(anchor)
        if (
            node.style is None
            and len(node.value) > MAX_NUMBER_CHARACTERS
            and str(node.tag) in _NUMBER_TAGS
        ):
            raise YamlLimitError(
                f"a number of {len(node.value)} characters refused "
                f"(at most {MAX_NUMBER_CHARACTERS})",
                node.start_mark,
            )
        return node

    def compose_sequence_node(self, anchor: Any) -> Any:
        self._enter()
        try:
            return super().compose_sequence_node(anchor)
        finally:
            self._nesting -= 1

    def compose_mapping_node(self, anchor: Any) -> Any:
        self._enter()
        try:
            return super().compose_mapping_node(anchor)
        finally:
            self._nesting -= 1

    def _enter(self) -> None:
        self._nesting += 1
        if self._nesting > MAX_DEPTH:
            self._nesting -= 1
            raise YamlLimitError(
                f"nested deeper than {MAX_DEPTH} levels", self.parser.peek_event().start_mark
            )


class _FlowDepthScanning:
    """Mixed into a ruamel scanner: a flow collection opened deeper than :data:`MAX_DEPTH`
    levels is refused where it opens. The scanner reads ahead of the composer, keeping one
    possible key for each open level and checking every one at each token, so 20,000 ``[``
    cost it 0.85 s of CPU before the composer's own check was reached."""

    def fetch_flow_collection_start(self, token_class: Any, to_push: str) -> None:
        if self.flow_level >= MAX_DEPTH:  # type: ignore[attr-defined]
            raise YamlLimitError(
                f"nested deeper than {MAX_DEPTH} levels",
                self.reader.get_mark(),  # type: ignore[attr-defined]
            )
        super().fetch_flow_collection_start(token_class, to_push=to_push)  # type: ignore[misc]


class _MarkedConstruction:
    """Mixed into a ruamel constructor: a scalar it cannot build is an error at its position."""

    def construct_non_recursive_object(self, node: Any, tag: Any = None) -> Any:
        try:
            return super().construct_non_recursive_object(node, tag)  # type: ignore[misc]
        except (ValueError, OverflowError) as exc:
            raise ConstructorError(
                problem=f"cannot be read: {clipped(str(exc))}", problem_mark=node.start_mark
            ) from None
