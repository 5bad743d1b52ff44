"""Where the model's files are, and whether they are the upstream ones: what the factory
checks before anything heavy is imported."""

from __future__ import annotations

from pathlib import Path

from hermes_search_hybrid.checksum import (
    TOKENIZER_FILE,
    TOKENIZER_SHA256,
    UPSTREAM_SHA256,
    WEIGHTS_FILE,
    verify_weights,
)

__all__ = [
    "GRAPH_FILE",
    "TOKENIZER_FILE",
    "WEIGHTS_FILE",
    "checked_model_dir",
    "default_model_dir",
    "graph_file",
]

GRAPH_FILE = "graph.onnx"
"""The ONNX graph of the model's computation, with no weights in it (they are read from
``model.safetensors``); the plugin's own file, written when its wheel is built."""

_PACKAGE_MODEL = Path(__file__).resolve().with_name("model")


def default_model_dir() -> Path:
    """The model folder inside the installed plugin (its wheel carries the upstream files)."""
    return _PACKAGE_MODEL


def graph_file() -> Path:
    """The plugin's ONNX graph of the model (``model/graph.onnx`` in the package)."""
    return _PACKAGE_MODEL / GRAPH_FILE


def checked_model_dir(model_dir: Path | None, record_file: Path) -> Path:
    """``model_dir`` (default: the installed plugin's), resolved, once its weights and its
    tokenizer were found to be the upstream files (remembered in ``record_file``, so the 90 MB
    are hashed once).

    Raises :class:`FileNotFoundError` when the folder, or the plugin, lacks a file of the model
    and :class:`~hermes_search_hybrid.checksum.ModelChecksumError` when a file differs.
    """
    directory = (model_dir or default_model_dir()).resolve()
    for name in (WEIGHTS_FILE, TOKENIZER_FILE):
        if not (directory / name).is_file():
            raise FileNotFoundError(
                f"no model at {directory}: {name} is missing (the plugin's wheel carries the "
                "model: pip install --force-reinstall hermes-core-search-hybrid)"
            )
    if not graph_file().is_file():
        raise FileNotFoundError(
            f"the plugin has no model graph ({graph_file()} is missing): it was installed "
            "without its build step; pip install --force-reinstall hermes-core-search-hybrid"
        )
    verify_weights(directory / WEIGHTS_FILE, record_file, UPSTREAM_SHA256)
    verify_weights(directory / TOKENIZER_FILE, record_file, TOKENIZER_SHA256)
    return directory
