"""Exceptions raised by hermes-core. Each names what went wrong and where."""

from __future__ import annotations

import sysconfig
import traceback
from pathlib import Path

_HERMES_CORE = Path(__file__).resolve().parent


class HermesError(Exception):
    """Base class of every error hermes-core raises on purpose."""


class ConfigError(HermesError):
    """A configuration file that cannot be read, parsed or validated.

    ``path`` is the file, ``line`` the 1-based line when known, ``key`` the dotted key
    (``tools.tool_search.threshold_pct``) when known.
    """

    def __init__(
        self,
        message: str,
        *,
        path: Path | None = None,
        line: int | None = None,
        key: str | None = None,
    ) -> None:
        self.path = path
        self.line = line
        self.key = key
        self.detail = message
        where = ""
        if path is not None:
            where = str(path)
            if line is not None:
                where += f":{line}"
            where += ": "
        if key:
            where += f"{key}: "
        super().__init__(f"{where}{message}")


class ManagedConfigError(HermesError):
    """The configuration is owned by Nix or an administrator (``HERMES_MANAGED`` is set)."""


class PluginError(HermesError):
    """A plugin that cannot be discovered, loaded, registered or built from; names the plugin.

    ``detail`` is the message without the plugin's name; ``trace`` the traceback of the
    plugin's own exception when there was one (``hermes -v`` shows it).
    """

    def __init__(self, plugin: str, message: str, *, trace: str | None = None) -> None:
        self.plugin = plugin
        self.detail = message
        self.trace = trace
        super().__init__(f"plugin {plugin!r}: {message}")


class PluginSettingsError(PluginError):
    """A plugin's settings (``plugins.entries.<name>``) that its typed settings class refuses
    (:meth:`~hermes_core._specs.PluginContext.settings_as`).

    The message lists every problem, each with the file and line when the settings were read
    from ``config.yaml`` and the dotted key; ``path``, ``line`` and ``key`` are those of the
    first problem, as for a :class:`ConfigError`.
    """

    def __init__(
        self,
        plugin: str,
        message: str,
        *,
        path: Path | None = None,
        line: int | None = None,
        key: str | None = None,
    ) -> None:
        self.path = path
        self.line = line
        self.key = key
        super().__init__(plugin, message)


class RegistrationError(HermesError):
    """Two plugins claim one name, or a configured name matches no registration."""


class UnloadedPluginError(RegistrationError):
    """A configured name that no loaded plugin registers while a plugin of that name exists but
    did not load (gated, disabled, not enabled, broken), or, when no plugin has that name, while
    plugins that may register it did not load; the message says which and why.

    The host contains it as it contains a factory that raises: the search backend that cannot
    be had makes ``tool_search`` an error and every other tool works. ``plugin`` is the name of
    the plugin of that name, else of the first plugin that may register it.
    """

    def __init__(self, message: str, *, plugin: str) -> None:
        self.plugin = plugin
        super().__init__(message)


def raised_at(error: BaseException, own: Path | None = None) -> str | None:
    """``/plugin/__init__.py, line 4``: where a plugin's ``error`` was raised, for a message.

    The line a ``SyntaxError`` names, else the innermost frame in ``own`` (the plugin's folder,
    the package holding its file, or a module file alone), else the innermost one outside
    hermes-core and Python's standard library (the plugin's, or a library it called that raised
    on its behalf); ``None`` when only those ran."""
    if isinstance(error, SyntaxError) and error.filename:
        return f"{error.filename}, line {error.lineno}"
    root = own if own is None or own.is_dir() else _package_of(own)
    if root is not None and _within(str(root), _HERMES_CORE):
        root = None  # an adapter of hermes-core's calling the plugin's code
    # Innermost first, each file judged once: a RecursionError's traceback holds a thousand
    # frames of one or two files, and a failing hook is asked this on every call.
    judged: dict[str, tuple[bool, bool]] = {}
    other: str | None = None
    for frame, line in reversed(list(traceback.walk_tb(error.__traceback__))):
        filename = frame.f_code.co_filename
        if filename not in judged:
            judged[filename] = (
                root is not None and _within(filename, root),
                not _ours_or_pythons(filename),
            )
        mine, theirs = judged[filename]
        if mine:
            return f"{filename}, line {line}"
        if theirs and other is None:
            other = f"{filename}, line {line}"
    return other


def _package_of(file: Path) -> Path:
    """The package folder holding ``file``; ``file`` itself when its folder is no package (a
    one-module distribution in site-packages, beside the libraries it calls)."""
    return file.parent if (file.parent / "__init__.py").is_file() else file


def _ours_or_pythons(filename: str) -> bool:
    """Whether ``filename`` is hermes-core's, or Python's own (``<frozen importlib._bootstrap>``,
    the standard library: importing a module that is not there fails in them), never where a
    plugin failed."""
    if filename.startswith("<") or _within(filename, _HERMES_CORE):
        return True
    paths = sysconfig.get_paths()
    installed = (Path(paths["purelib"]), Path(paths["platlib"]))
    return _within(filename, Path(paths["stdlib"])) and not any(
        _within(filename, root) for root in installed
    )


def _within(filename: str, root: Path) -> bool:
    try:
        return Path(filename).resolve().is_relative_to(root.resolve())
    except OSError:
        return False
