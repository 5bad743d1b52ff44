"""``Imported``: a module the suite's tests name at the top of a file but import at first use.

Every pytest worker collects every test file, so a third-party SDK a file imports at its top
(the model vendors' ``openai`` and ``anthropic``, the ACP SDK: 0.6 to 1.4 s of CPU each) is
imported by every worker, though only the workers that run that file's tests need it. The
suite's own; not on the face.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["Imported"]


class Imported:
    """Stands for the module ``name``: an attribute read imports it (once; Python keeps it).
    Names starting with ``_`` are not looked up: pytest reads such names of every object in a
    test module while collecting it."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("_"):
            raise AttributeError(attribute)
        return getattr(importlib.import_module(self._name), attribute)
