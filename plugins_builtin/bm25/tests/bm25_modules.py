"""The ``bm25`` plugin's modules, for the tests of its engine: imported by their package
(``plugins_builtin.bm25``, the checkout's root is on the path), as a plugin's own tests import
it."""

from __future__ import annotations

import os
import shlex
import shutil
import sysconfig
from pathlib import Path

import pytest

from plugins_builtin.bm25 import (
    admission,
    analysis,
    build,
    equivalents,
    fields,
    index,
    kernel,
    store,
    tokenize,
)

__all__ = [
    "KERNEL_BUILDABLE",
    "KERNEL_NAMES",
    "STRENGTH",
    "BM25Index",
    "admission",
    "analysis",
    "build",
    "equivalents",
    "fields",
    "index",
    "kernel",
    "needs_c_kernel",
    "store",
    "tokenize",
]

BM25Index = index.BM25Index


def _can_build_kernel() -> bool:
    """Whether an install here compiles the C kernel (hatch_build.py): Python's headers and the
    compiler Python was built with (or ``$CC``) are both at hand."""
    headers = Path(sysconfig.get_paths()["include"], "Python.h")
    compiler = os.environ.get("CC") or str(sysconfig.get_config_var("CC") or "cc")
    return headers.is_file() and shutil.which(shlex.split(compiler)[0]) is not None


KERNEL_BUILDABLE = _can_build_kernel()
"""Whether the install builds the C kernel here. A stock Debian or Ubuntu Python has no headers
without ``python3-dev``: there the install warns and every search runs the numpy kernel."""
KERNEL_NAMES = ("c", "numpy") if KERNEL_BUILDABLE else ("numpy",)
"""The kernels the install gives here."""
needs_c_kernel = pytest.mark.usefixtures("c_kernel_buildable")
"""For a test of the C kernel itself: where it cannot be built (no ``Python.h`` or no C
compiler) the test fails saying what to install, and where it can be and was not, it fails
too (``c_kernel_buildable`` in this folder's ``conftest.py``)."""
STRENGTH = [pytest.param(1, id="default"), pytest.param(5, marks=pytest.mark.slow, id="full")]
"""Parametrize a property with this and multiply its default run's examples by the value:
drawing the examples is most of a property's CPU, so the default run (``-m "not slow"``) draws
a fifth and ``nox -s tests_slow`` the full count (as ``tests/strength.py``)."""
