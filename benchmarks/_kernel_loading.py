"""Another revision's bm25 query kernel, compiled with the install's own flags
(``hatch_build.compile_kernel``) in that revision's tree and imported under a name of its own,
for the benchmarks that put two kernels side by side (``kernel_ab.py``, ``search.py
--baseline``)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from _baseline import ROOT

sys.path.insert(0, str(ROOT))
from hatch_build import compile_kernel  # the checkout's build hook


def load_kernel(root: Path, label: str) -> Any:
    """The kernel of the tree at ``root``, compiled there and imported under its own name."""
    library = compile_kernel(root)
    # The module's last name must be _kernel: that is what its init function is called after.
    spec = importlib.util.spec_from_file_location(f"hermes_kernel_{label}._kernel", library)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {library}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return Arity(module)


class Arity:
    """A kernel called with as many of ``search``'s arguments as it takes: the index passes
    today's, and an older kernel takes fewer (arguments are only ever added at the end, each
    off, as before, when left out)."""

    def __init__(self, module: ModuleType) -> None:
        self.module = module
        try:
            module.search()
        except TypeError as error:
            taken = re.search(r"takes (\d+) arguments", str(error))
        self.arguments = int(taken.group(1)) if taken else None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.module, name)

    def search(self, *arguments: Any) -> Any:
        return self.module.search(*arguments[: self.arguments])
