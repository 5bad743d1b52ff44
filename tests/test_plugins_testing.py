"""The test helpers of ``hermes_core.testing`` that plugin authors rely on."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from hermes_core.testing import forget_modules_under


def test_forget_modules_under_keeps_modules_of_a_sibling_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inside, sibling = tmp_path / "plug", tmp_path / "plug-sibling"
    for folder, module in ((inside, "forget_probe_inside"), (sibling, "forget_probe_sibling")):
        folder.mkdir()
        (folder / f"{module}.py").write_text("VALUE = 1\n", encoding="utf-8")
        monkeypatch.syspath_prepend(str(folder))
    try:
        importlib.import_module("forget_probe_inside")
        importlib.import_module("forget_probe_sibling")

        forget_modules_under(inside)

        assert "forget_probe_inside" not in sys.modules
        assert "forget_probe_sibling" in sys.modules
    finally:
        sys.modules.pop("forget_probe_inside", None)
        sys.modules.pop("forget_probe_sibling", None)
