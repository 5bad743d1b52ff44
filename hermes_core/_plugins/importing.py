"""Importing one plugin's code: a directory under a private module name, a distribution
through its entry point.

Directory plugins are imported as ``hermes_plugins.<source>.<name>`` so that relative imports work
and two sources never collide; pip and Nix plugins through their entry point, from their own
distribution's directory (a copy of the same module elsewhere on ``sys.path`` never stands in).
Nothing here decides *whether* a plugin may run: :mod:`hermes_core._plugins.loader` does.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
import types
from pathlib import Path

from hermes_core._errors import PluginError, raised_at
from hermes_core._plugins.candidates import Candidate

NAMESPACE = "hermes_plugins"


def import_plugin(candidate: Candidate) -> object:
    """Import one plugin and return the object to register (its module, or the entry point's
    attribute; an instance of it when that is a class).

    A Nix plugin's ``site-packages`` joins the end of ``sys.path`` (for the modules it
    imports), and its top-level module is imported from that directory itself: a pip copy of
    the same module earlier on ``sys.path`` never stands in for it. A plugin whose top-level
    module is already imported from another place than its own distribution fails with an
    :class:`ImportError` naming both places.
    """
    entry_point = candidate.entry_point
    if entry_point is not None:
        top = entry_point.module.partition(".")[0]
        if candidate.site_dir is not None:
            if str(candidate.site_dir) not in sys.path:
                sys.path.append(str(candidate.site_dir))
                importlib.invalidate_caches()
            own = importlib.machinery.PathFinder.find_spec(top, [str(candidate.site_dir)])
            if own is None:
                raise ImportError(f"module {top!r} is not in {candidate.site_dir}", name=top)
        else:
            own = _own_module_spec(candidate, top)
        _check_imported_copy(top, own)
        if own is not None and own.origin is not None and top not in sys.modules:
            _import_module(top, own)
        loaded: object = entry_point.load()
        if isinstance(loaded, type):
            return _instance(entry_point.value, loaded)
        return loaded
    if candidate.directory is None:
        raise PluginError(candidate.name, "neither a directory nor an entry point")
    return _import_directory(candidate, candidate.directory)


def import_failure(candidate: Candidate, error: BaseException) -> str:
    """``import failed: RuntimeError: why (at /plugin/__init__.py, line 4)``: what importing
    ``candidate`` raised and where, short. The place is the line a ``SyntaxError`` names, else
    the innermost frame in the plugin's own files (else the innermost one outside hermes-core: a
    library it called raised on its behalf; none when only hermes-core's own code ran, as when
    a class an entry point names cannot be made without arguments)."""
    failed = f"import failed: {type(error).__name__}: {error}"
    entry_point = candidate.entry_point
    if entry_point is not None and _names_missing(error, entry_point.module):
        dist = entry_point.dist
        of = f" of {dist.metadata.get('Name')} {dist.version}" if dist is not None else ""
        return (
            f"{failed} (the entry point {entry_point.name} = {entry_point.value}{of}: reinstall "
            "it, or uninstall it)"
        )
    where = raised_at(error, candidate.path)
    return failed + (f" (at {where})" if where else "")


def _names_missing(error: BaseException, module: str) -> bool:
    """Whether ``error`` says that ``module`` (or a package holding it) is not installed: the
    entry point names what is not there, and no line of the plugin's is at fault."""
    missing = error.name if isinstance(error, ModuleNotFoundError) else None
    return bool(missing) and (module == missing or module.startswith(f"{missing}."))


def _instance(target: str, cls: type) -> object:
    """An instance of the class an entry point names: its ``@hookimpl`` methods are bound
    methods only on an instance (registered as the class, each call would miss ``self``)."""
    try:
        return cls()
    except TypeError as exc:
        raise TypeError(
            f"entry point {target!r} names a class, which hermes-core makes with no arguments: "
            f"{exc}; give its __init__ defaults, or point the entry point at an instance"
        ) from exc


def _own_module_spec(candidate: Candidate, top: str) -> importlib.machinery.ModuleSpec | None:
    """The module spec of a pip plugin's top-level module in its distribution's own directory, or
    ``None`` when the distribution does not hold it there (an editable install)."""
    dist = candidate.entry_point.dist if candidate.entry_point is not None else None
    if dist is None:
        return None
    base = str(dist.locate_file(""))
    return importlib.machinery.PathFinder.find_spec(top, [base])


def _check_imported_copy(top: str, own: importlib.machinery.ModuleSpec | None) -> None:
    """Raise :class:`ImportError` when ``sys.modules`` holds ``top`` from elsewhere than
    ``own`` (namespace packages, whose portions may live anywhere, are not compared)."""
    existing = sys.modules.get(top)
    if existing is None or own is None or own.origin is None:
        return
    origin = getattr(getattr(existing, "__spec__", None), "origin", None)
    if origin is None or not Path(origin).is_file():
        return
    if _same_file(Path(origin), Path(own.origin)):
        return
    raise ImportError(
        f"module {top!r} is already imported from {origin}, so this plugin's own copy at "
        f"{own.origin} cannot load; keep one copy of {top!r} (uninstall the other distribution)",
        name=top,
    )


def _import_module(name: str, module_spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
    """Import the module ``name`` from ``module_spec``, whatever ``sys.path`` would find; nothing is
    left in ``sys.modules`` when it fails."""
    if module_spec.loader is None:
        raise ImportError(f"cannot import {name!r} from {module_spec.origin}", name=name)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except BaseException:
        forget_module(name)
        raise
    return module


def _same_file(first: Path, second: Path) -> bool:
    try:
        return first.resolve() == second.resolve()
    except OSError:
        return first == second


def module_name(candidate: Candidate) -> str:
    """The private module name of a directory plugin: ``hermes_plugins.<source>.<name>``."""
    return f"{NAMESPACE}.{candidate.source}.{candidate.name.replace('-', '_')}"


def _import_directory(candidate: Candidate, directory: Path) -> types.ModuleType:
    name = module_name(candidate)
    init = directory / "__init__.py"
    existing = sys.modules.get(name)
    if existing is not None and getattr(existing, "__file__", None) == str(init):
        return existing
    forget_module(name)
    parent = _namespace(name.rpartition(".")[0])
    module_spec = importlib.util.spec_from_file_location(
        name, init, submodule_search_locations=[str(directory)]
    )
    if module_spec is None:
        raise ImportError(f"cannot import {init}")
    module = _import_module(name, module_spec)
    setattr(parent, name.rpartition(".")[2], module)
    return module


def _namespace(dotted: str) -> types.ModuleType:
    """The empty package modules above a directory plugin (``hermes_plugins.user``)."""
    parent: types.ModuleType | None = None
    prefix = ""
    for part in dotted.split("."):
        prefix = f"{prefix}.{part}" if prefix else part
        module = sys.modules.get(prefix)
        if module is None:
            module = types.ModuleType(prefix, "Private namespace of hermes-core directory plugins.")
            module.__path__ = []
            sys.modules[prefix] = module
            if parent is not None:
                setattr(parent, part, module)
        parent = module
    assert parent is not None
    return parent


def forget_module(name: str) -> None:
    """Drop a module and its submodules from ``sys.modules``."""
    for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[loaded]
