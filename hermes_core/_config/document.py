"""Reading ``config.yaml`` and editing it in place.

:func:`load_config` reads a file within the limits of :mod:`hermes_core._yaml_limits` and
validates it. Edits go through :class:`ConfigDocument`, a round-trip (ruamel.yaml) view that keeps
the user's comments, key order and indentation; :func:`edit_config` writes it atomically
(temporary file, fsync, rename) after the edited document validated.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_core import _yaml_layout as yaml_layout
from hermes_core._atomic_write import write_atomically
from hermes_core._config.errors import validate_document
from hermes_core._config.models import Config
from hermes_core._errors import ConfigError, ManagedConfigError
from hermes_core._shown import PROBLEM_CHARACTERS, clipped, shown

if TYPE_CHECKING:
    from hermes_core._paths import Environment


def _read_text(path: Path) -> str | None:
    """The file's text with its line endings as written, ``None`` when it does not exist.

    At most :data:`~hermes_core._yaml_limits.CONFIG_MAX_BYTES` are read: a larger file, or
    anything but a regular file (a FIFO), is a ``ConfigError`` and is not read.
    """
    from hermes_core._yaml_limits import CONFIG_MAX_BYTES, YamlFileError, read_limited

    try:
        return read_limited(path, CONFIG_MAX_BYTES)
    except YamlFileError as exc:
        raise ConfigError(str(exc), path=path) from None


def _tab_indented(text: str, line: int) -> int | None:
    """The 1-based line, ``line`` or the first non-blank one after it (the parser may stop at
    the blank line before it), whose indentation holds a tab, if that is where it stopped: it
    says only that a tab "cannot start any token"."""
    for number, content in enumerate(text.splitlines()[line - 1 :], start=line):
        if content.strip():
            indentation = content[: len(content) - len(content.lstrip(" \t"))]
            return number if "\t" in indentation else None
    return None


def _parse(text: str, path: Path) -> Any:
    """Round-trip parse the text of a config file to a mapping (empty file -> empty mapping),
    within the limits of :mod:`hermes_core._yaml_limits` (no aliases, bounded nesting and
    numbers)."""
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    from hermes_core._yaml_limits import YamlLimitError, limited, load_limited

    try:
        data = load_limited(limited(yaml_layout.round_trip_yaml()), text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = clipped(exc.problem or exc.context or "cannot be parsed", PROBLEM_CHARACTERS)
        start = exc.context_mark
        if exc.problem and exc.context and start is not None and start.line + 1 != line:
            problem += f" ({exc.context} started at line {start.line + 1})"
        tabbed = _tab_indented(text, line) if line is not None else None
        if tabbed is not None:
            line = tabbed
            problem = "this line is indented with a tab; YAML indents with spaces only"
        key = yaml_layout.key_near_line(text, line) if line is not None else None
        key = clipped(key) if key is not None else None
        what = "" if isinstance(exc, YamlLimitError) else "invalid YAML: "
        raise ConfigError(f"{what}{problem}", path=path, line=line, key=key) from None
    except YAMLError as exc:
        raise ConfigError(
            f"invalid YAML: {clipped(str(exc), PROBLEM_CHARACTERS)}", path=path
        ) from None
    if data is None:
        return CommentedMap()
    if not isinstance(data, dict):
        raise ConfigError(
            f"expected a mapping of sections (tools:, plugins:...) at the top, got {shown(data)}",
            path=path,
            line=1,
        )
    return data


def load_config(path: Path) -> Config:
    """Load and validate ``path``; a missing or empty file is the default configuration.

    Raises :class:`~hermes_core._errors.ConfigError` naming the file, the line and the dotted key,
    with every problem of the file (one per line) when there are several. A value accepted with a
    fallback issues a :class:`ConfigWarning` naming the file, the line and the key.
    """
    text = _read_text(path)
    if text is None:
        return Config()
    from hermes_core._private_files import refuse_if_others_could_write

    refuse_if_others_could_write(path)
    return validate_document(_parse(text, path), path)


def config_in_effect(env: Environment) -> Config:
    """The configuration of ``env.config_path`` as every command and
    :meth:`Host.from_environment <hermes_core._host.Host.from_environment>` read it.

    A file that is the project's (``HERMES_HOME=./.hermes`` in a cloned repository:
    :func:`~hermes_core._project_trust.config_refusal`) is read only with the project gate
    open: any of its settings can act for the project (approvals turned off, a provider's
    endpoint handed the user's key, a command to run), not only its plugins, hooks and MCP
    servers. Otherwise a :class:`ConfigWarning` names the file and the gate, and the defaults
    apply.
    """
    return config_in_effect_and_why(env)[0]


def config_in_effect_and_why(env: Environment) -> tuple[Config, str | None]:
    """:func:`config_in_effect` and, when the file is not in effect, why
    (:func:`config_held_back`; ``None`` when it is read), the gate asked once."""
    import warnings

    from hermes_core._config.models import ConfigWarning

    refusal = config_held_back(env)
    if refusal is not None:
        warnings.warn(
            ConfigWarning(f"{refusal}; not read: the defaults apply", key=""), stacklevel=3
        )
        return Config(), refusal
    return load_config(env.config_path), None


def config_held_back(env: Environment) -> str | None:
    """Why the file ``env.config_path`` is not in effect (:func:`config_in_effect`): it is
    the project's and the project gate is closed; ``None`` when it is read."""
    from hermes_core._project_trust import config_refusal

    path = env.config_path
    return config_refusal(env, path, "the config file") if path.exists() else None


# --------------------------------------------------------------------------------------------
# Editing and saving


class ConfigDocument:
    """A round-trip (ruamel.yaml) view of config.yaml for edits that keep comments and order.

    Keys are dotted (``tools.tool_search.threshold_pct``). Values are stored as given: nothing
    is parsed here (the ``hermes config set`` command parses its text argument as YAML).
    """

    def __init__(self, path: Path, data: Any, *, text: str = "") -> None:
        self.path = path
        self._data = data
        self._newline = "\r\n" if "\r\n" in text else "\n"
        text = text.replace("\r\n", "\n")
        self._indent = yaml_layout.guess_indent(text)
        # What ruamel drops on loading, written back before the document.
        self._preamble = yaml_layout.preamble(text)
        self.changed = False

    @classmethod
    def load(cls, path: Path) -> ConfigDocument:
        """Read ``path``; a missing file is an empty document. Bad YAML raises ``ConfigError``."""
        text = _read_text(path) or ""
        # ruamel keeps the carriage returns in comments; the dump writes them back (dumps).
        return cls(path, _parse(text.replace("\r\n", "\n"), path), text=text)

    def _parts(self, key: str) -> list[str]:
        parts = key.split(".")
        if not key or any(not part for part in parts):
            raise ConfigError(f"not a dotted key: {shown(key)}", path=self.path)
        return parts

    def _find(self, key: str) -> tuple[Any, str]:
        """The mapping that holds the last part of ``key`` and that part; ``None`` for the
        mapping when anything on the way is absent or not a mapping (nothing is there)."""
        *path, last = self._parts(key)
        node = self._data
        for part in path:
            node = node.get(part) if isinstance(node, dict) else None
        return (node if isinstance(node, dict) else None), last

    def _walk(self, key: str) -> tuple[Any, str]:
        """The mapping that holds the last part of ``key`` and that part; ``None`` for the
        mapping when one on the way is absent. A non-mapping on the way is a ``ConfigError``:
        a value cannot be put there."""
        parts = self._parts(key)
        node = self._data
        for depth, part in enumerate(parts[:-1]):
            child = node.get(part)
            if child is None:
                return None, parts[-1]
            if not isinstance(child, dict):
                where = ".".join(parts[: depth + 1])
                raise ConfigError(
                    f"cannot set {key}: {where} holds {shown(child)}, not a mapping",
                    path=self.path,
                    line=yaml_layout.line_of(self._data, tuple(parts[: depth + 1])),
                    key=where,
                )
            node = child
        return node, parts[-1]

    def _place(self, key: str, value: Any) -> None:
        """Set ``key``, inserting the missing mappings on the way as one new entry."""
        parts = key.split(".")
        holder: Any = None
        node = self._data
        for depth, part in enumerate(parts[:-1]):
            if node.get(part) is None:
                for inner in reversed(parts[depth + 1 :]):
                    value = {inner: value}
                parts = parts[: depth + 1]
                break
            holder, node = node, node[part]
        if node or holder is None:
            yaml_layout.insert(node, parts[-1], value)
            return
        # An empty mapping ({}) becomes a block: the lines after it move below its new entry.
        holder_key = parts[-2]
        carry = yaml_layout.take_trailing(holder, holder_key)
        yaml_layout.insert(node, parts[-1], value)
        yaml_layout.give_trailing(holder, holder_key, carry)

    def get(self, key: str) -> Any:
        """The value at a dotted key as plain Python data, ``None`` when absent (also when a
        key on the way holds a scalar: ``tools.connectors.url`` with ``connectors: false``)."""
        parent, last = self._find(key)
        if parent is None:
            return None
        return yaml_layout.plain(parent.get(last))

    def set(self, key: str, value: Any) -> None:
        """Set a dotted key, creating the mappings on the way. An existing key keeps its place
        and its comments; a new key goes at the end of its section, before the blank lines and
        comments that followed the section."""
        self._walk(key)
        self._place(key, value)
        self.changed = True

    def _list_at(self, key: str, *, create: bool) -> tuple[Any, str, list[Any] | None]:
        """The mapping holding ``key``, its last part, and the list there (``None`` if absent).
        A value that is not a list is a ``ConfigError``; so is a scalar on the way when the list
        is to be created."""
        parent, last = self._walk(key) if create else self._find(key)
        current = None if parent is None else parent.get(last)
        if current is None:
            return parent, last, None
        if not isinstance(current, list):
            raise ConfigError(
                f"expected a list, got {shown(current)}",
                path=self.path,
                line=yaml_layout.line_of(self._data, tuple(key.split("."))),
                key=key,
            )
        return parent, last, current

    def add_to_list(self, key: str, value: str) -> bool:
        """Append ``value`` to the list at ``key`` (created if absent) unless it is already
        there. True when the document changed."""
        parent, last, items = self._list_at(key, create=True)
        if items is None:
            self._place(key, [value])
            self.changed = True
            return True
        if value in items:
            return False
        # Through the parent: an empty list ([]) becomes a block, and the lines after it move.
        carry = yaml_layout.take_trailing(parent, last)
        items.append(value)
        yaml_layout.give_trailing(parent, last, carry)
        self.changed = True
        return True

    def remove_from_list(self, key: str, value: str) -> bool:
        """Remove every ``value`` from the list at ``key``. True when the document changed."""
        parent, last, items = self._list_at(key, create=False)
        if items is None or value not in items:
            return False
        for index in reversed([i for i, item in enumerate(items) if item == value]):
            # del (in remove, not list.remove) so that ruamel shifts the comments of later items.
            left = yaml_layout.remove(items, index)
            if not items:
                yaml_layout.renew_empty(parent, last)
                yaml_layout.give_trailing(parent, last, left)
        self.changed = True
        return True

    def delete(self, key: str) -> bool:
        """Remove a dotted key. True when it was there."""
        parent, last = self._find(key)
        if parent is None or last not in parent:
            return False
        left = yaml_layout.remove(parent, last)
        if parent is self._data and not parent:
            # An empty document is written as its comments alone, so they all become text.
            self._preamble = _joined(self._preamble, yaml_layout.take_all_comments(parent, left))
        elif not parent:
            holder, holder_key = self._find(key.rpartition(".")[0])
            yaml_layout.renew_empty(holder, holder_key)
            yaml_layout.give_trailing(holder, holder_key, left)
        self.changed = True
        return True

    def validate(self) -> Config:
        """The edited document as a :class:`Config`; ``ConfigError`` naming line and key if not."""
        return validate_document(self._data, self.path)

    def as_saved(self) -> Config:
        """The edited document as :func:`load_config` will read it once saved: from the text
        :meth:`save` writes, so that a problem found in it names the line it will be on (a key
        just added has none yet). Its warnings are :meth:`validate`'s, not said twice."""
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return validate_document(_parse(self.dumps(), self.path), self.path)

    def dumps(self) -> str:
        """The document as YAML text, with the file's comments, order and indentation."""
        yaml = yaml_layout.round_trip_yaml()
        mapping, sequence, offset = self._indent
        yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
        stream = io.StringIO()
        if self._data or not self._preamble:
            marked = yaml_layout.flow_when_empty(self._data)
            try:
                yaml.dump(self._data, stream)
            finally:
                yaml_layout.block_again(marked)
        text = _joined(self._preamble, stream.getvalue())
        return text.replace("\n", self._newline) if self._newline != "\n" else text

    def save(self) -> None:
        """Validate, then write atomically: temporary file in the same directory, fsync,
        ``os.replace``; the file mode is kept and no temporary file is ever left behind."""
        self.validate()
        text = self.dumps()
        # Comment handling in ruamel has sharp edges: never write text that reads back as
        # anything but the validated document.
        try:
            same = yaml_layout.plain(_parse(text, self.path)) == yaml_layout.plain(self._data)
        except ConfigError:
            same = False
        if not same:
            raise ConfigError(
                "the edited document could not be written without changing its meaning; "
                "nothing was written (please report this with your config.yaml)",
                path=self.path,
            )
        write_atomically(self.path, text)
        self.changed = False


def _joined(head: str, tail: str) -> str:
    """Two pieces of YAML text, the first ending its last line."""
    if head and tail and not head.endswith("\n"):
        head += "\n"
    return head + tail


_MANAGED_MESSAGE = (
    "{path} is managed by Nix or an administrator (HERMES_MANAGED is set), so hermes does not "
    "edit it. Change the configuration where it is defined (your Nix module or home-manager "
    "settings), or ask your administrator."
)


@contextmanager
def edit_config(env: Environment) -> Iterator[ConfigDocument]:
    """Load env.config_path, yield the document, save on clean exit. Refuses (ManagedConfigError,
    message says the config is managed by Nix or an administrator and how to change it) when
    env.flag('HERMES_MANAGED').

    Nothing is written when the block raises, when validation fails, or when nothing changed.
    """
    if env.flag("HERMES_MANAGED"):
        raise ManagedConfigError(_MANAGED_MESSAGE.format(path=env.config_path))
    document = ConfigDocument.load(env.config_path)
    yield document
    if document.changed:
        document.save()


__all__ = [
    "ConfigDocument",
    "config_held_back",
    "config_in_effect",
    "config_in_effect_and_why",
    "edit_config",
    "load_config",
]
