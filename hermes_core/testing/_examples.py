"""``examples``: how many examples a property test of the suite draws in this run.

The default run (``nox -s tests``) draws a quarter of a test's full count (at least 25): its
property tests are regression checks there, run on every change by four workers on two cores.
``nox -s tests_slow`` sets ``HERMES_FULL_PROPERTIES=1`` and runs every hypothesis test again at
its full count. The suite's own; not on the face.
"""

from __future__ import annotations

import os

__all__ = ["FULL_VARIABLE", "examples"]

FULL_VARIABLE = "HERMES_FULL_PROPERTIES"
"""Set to ``1``, every property test draws its full count."""


def examples(full: int) -> int:
    """``full`` when ``HERMES_FULL_PROPERTIES=1``, else a quarter of it (at least 25, at most
    ``full``)."""
    if os.environ.get(FULL_VARIABLE) == "1":
        return full
    return min(full, max(full // 4, 25))
