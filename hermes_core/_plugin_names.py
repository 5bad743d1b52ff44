"""The plugin name rule, shared by manifests and ``config.yaml`` without importing either."""

from __future__ import annotations

import re

_SEPARATORS = re.compile(r"[-_.]+")


def normalize_name(name: str) -> str:
    """A plugin name as compared everywhere: lowercase, runs of ``-``, ``_``, ``.`` become ``-``."""
    return _SEPARATORS.sub("-", name).lower()
