"""Lazily loaded names of a package's face: ``__getattr__`` and ``__dir__`` for a package
that re-exports names of its modules and imports each module only when one of its names is
first used (so ``hermes --version`` pays for none of pydantic, numpy or the MCP SDK)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from importlib import import_module
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, str], names: Sequence[str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package``: ``exports`` maps each
    exported name to the module that defines it, ``names`` is the package's ``__all__`` and
    ``namespace`` its ``globals()``, where a loaded name is kept (the next lookup does not
    come back here)."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__
