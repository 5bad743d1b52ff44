"""How hard the suite's hypothesis properties try: a fifth of their examples in the default run,
all of them in ``nox -s tests_slow``."""

from __future__ import annotations

import pytest

STRENGTH = [pytest.param(1, id="default"), pytest.param(5, marks=pytest.mark.slow, id="full")]
"""Parametrize a property with this and multiply its default run's examples by the value:
drawing the examples is most of a property's CPU, so the default run (``-m "not slow"``) draws
a fifth and the slow session the full count, five times as many."""
