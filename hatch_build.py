"""Build hook: compiles the bm25 engine's query kernel (``plugins_builtin/bm25/_kernel.c``) and
lays the bundled plugins into a regular wheel.

Run by hatchling for every wheel, editable or not (``pip install .``, ``pip install -e .``,
what nox does). The kernel uses only the CPython API, so the compiler and the Python headers
are all it needs: no numpy headers, no build dependency. The library is written next to its
source, where an editable install loads it; a regular wheel carries it as
``hermes_core/plugins_builtin/...`` with the plugins' other files (never caches, nor a kernel
built for another interpreter), and becomes platform-specific. When no compiler is found, the
install goes on with a warning and the engine uses its numpy implementation of the same rule
(slower; ``kernel.IMPLEMENTATION`` says which one runs).
"""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import sysconfig
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

PLUGINS = Path("plugins_builtin")
SOURCE = PLUGINS / "bm25" / "_kernel.c"
BUILT = (".so", ".pyd", ".dll", ".dylib", ".tmp", ".pyc")
"""Files under plugins_builtin/ that are built, not written: never copied into a wheel."""
SKIPPED = frozenset({"__pycache__", "tests"})
"""Folders under plugins_builtin/ never copied into a wheel: caches, and a plugin's own tests."""
# -ffp-contract=off: every floating-point operation as written (no fused multiply-add), so the
# kernel's scores are bit-identical to its numpy reference's.
FLAGS = ["-O2", "-fPIC", "-ffp-contract=off", "-std=c11", "-fvisibility=hidden"]


def compile_kernel(root: Path) -> Path:
    """Compile the kernel next to its source under ``root``; returns the library's path."""
    source = root / SOURCE
    target = source.with_name("_kernel" + str(sysconfig.get_config_var("EXT_SUFFIX")))
    linker = os.environ.get("LDSHARED") or str(sysconfig.get_config_var("LDSHARED") or "")
    command = shlex.split(linker) if linker else ["cc", "-shared"]
    if os.environ.get("CC"):  # a compiler the user chose replaces the one Python was built with
        command[0] = os.environ["CC"]
    include = sysconfig.get_paths()["include"]
    temporary = target.with_name(target.name + ".tmp")
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    subprocess.run(
        [
            *command,
            *FLAGS,
            f'-DHERMES_KERNEL_SOURCE_SHA256="{digest}"',
            "-I",
            include,
            str(source),
            "-o",
            str(temporary),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    os.replace(temporary, target)  # an import never sees half a library
    return target


class KernelBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    """Compiles the kernel before the wheel's files are collected."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        root = Path(self.root)
        try:
            built: Path | None = compile_kernel(root)
        except (OSError, subprocess.CalledProcessError) as error:
            built = None
            detail = getattr(error, "stderr", "") or str(error)
            self.app.display_warning(
                f"hermes-core: could not compile the bm25 kernel ({detail.strip()}); "
                "searches use its slower numpy implementation"
            )
        if version == "editable":
            return  # the plugins are read from the source tree
        for path in sorted((root / PLUGINS).rglob("*")):
            if (
                path.is_file()
                and not SKIPPED.intersection(path.relative_to(root).parts)
                and path.suffix not in BUILT
            ):
                relative = path.relative_to(root).as_posix()
                build_data["force_include"][str(path)] = f"hermes_core/{relative}"
        if built is not None:
            build_data["force_include"][str(built)] = (
                f"hermes_core/{built.relative_to(root).as_posix()}"
            )
            build_data["pure_python"] = False
            build_data["infer_tag"] = True
