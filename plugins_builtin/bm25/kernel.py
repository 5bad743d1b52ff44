"""The query loop the index uses: the C kernel (``_kernel.c``, compiled when hermes-core is
installed) or, when it was not built, its numpy reference (:mod:`.kernel_numpy`), the same rule
in another form with the same results. :data:`IMPLEMENTATION` says which is the default;
``BM25Index(kernel=...)`` takes either (to measure or compare them).

A library built from another ``_kernel.c`` than the one beside it (a checkout updated without
installing again) is not used: its arguments may differ from this ``index.py``'s. One warning
says so, and the numpy kernel answers.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from types import ModuleType
from typing import Final

from . import kernel_numpy

__all__ = ["DEFAULT", "IMPLEMENTATION", "KERNELS", "built_from", "scratch_bytes"]

logger = logging.getLogger(__name__)

SOURCE: Final = Path(__file__).with_name("_kernel.c")


def built_from(library: ModuleType, source: Path = SOURCE) -> bool:
    """Whether ``library`` was compiled from ``source`` as it is now (true when the source is
    not there to compare with)."""
    try:
        digest = hashlib.sha256(source.read_bytes()).hexdigest()
    except OSError:
        return True
    return getattr(library, "SOURCE_SHA256", "") == digest


def _compiled() -> ModuleType | None:
    try:
        from . import _kernel  # type: ignore[attr-defined]
    except ImportError:
        return None
    if not built_from(_kernel):
        logger.warning(
            "the compiled bm25 kernel %s was built from another %s; searches use the slower "
            "numpy kernel until hermes-core is installed again (pip install -e .)",
            _kernel.__file__,
            SOURCE.name,
        )
        return None
    return _kernel  # type: ignore[no-any-return]


KERNELS: Final[dict[str, ModuleType]] = {"numpy": kernel_numpy}
"""The kernels at hand by name: ``"numpy"`` always, ``"c"`` when it was built."""
if (_c := _compiled()) is not None:
    KERNELS["c"] = _c

DEFAULT: Final[ModuleType] = KERNELS.get("c", kernel_numpy)
"""The C kernel when it was built, else the numpy one."""

IMPLEMENTATION: Final[str] = DEFAULT.IMPLEMENTATION
"""``"c"`` or ``"numpy"``: the default kernel."""


def scratch_bytes(kernel: ModuleType, slots: int) -> int:
    """How many bytes of working memory ``kernel`` needs for ``slots`` documents."""
    return int(kernel.SCRATCH_HEADER) + int(kernel.SCRATCH_SLOT) * slots
