"""The query loop the index uses: the C kernel (``_kernel.c``, compiled when hermes-core is
installed) or, when it was not built, its numpy reference (:mod:`.kernel_numpy`), the same rule
in another form with the same results. :data:`IMPLEMENTATION` says which is the default;
``BM25Index(kernel=...)`` takes either (to measure or compare them).
"""

from __future__ import annotations

from types import ModuleType
from typing import Final

from . import kernel_numpy

__all__ = ["DEFAULT", "IMPLEMENTATION", "KERNELS", "scratch_bytes"]


def _compiled() -> ModuleType | None:
    try:
        from . import _kernel  # type: ignore[attr-defined]
    except ImportError:
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
