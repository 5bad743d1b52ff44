"""The sentence-embedding model: all-MiniLM-L6-v2, its upstream files checked against their
sha256, run by onnxruntime with the Hugging Face tokenizer; no torch.

The plugin's ONNX graph (``model/graph.onnx``, written when the wheel is built) describes the
model's computation and reads every weight from the upstream ``model.safetensors`` at its
offset, so the file onnxruntime reads is the checked one. Pooling and normalisation are done
here as sentence-transformers does them for this model: the mean of the token vectors the
attention mask keeps, then unit length. Measured against sentence-transformers on torch: the
same vectors within 1e-5 (README.md, "The model's files").

onnxruntime is imported with ``ORT_DISABLE_TELEMETRY=1`` (unless the environment says
otherwise), and runs each call on one thread: a query is one short text, and a catalog's first
embedding runs its batches on as many threads as the process may use cores.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from hermes_search_hybrid.checksum import UPSTREAM_SHA256
from hermes_search_hybrid.weights import (
    TOKENIZER_FILE,
    WEIGHTS_FILE,
    checked_model_dir,
    default_model_dir,
    graph_file,
)

if TYPE_CHECKING:
    from onnxruntime import InferenceSession  # type: ignore[import-untyped]
    from tokenizers import Tokenizer

__all__ = [
    "DOCUMENT_MAX_TOKENS",
    "MODEL_ID",
    "QUERY_MAX_TOKENS",
    "WEIGHTS_FILE",
    "Encoder",
    "default_model_dir",
    "load_encoder",
    "pooled",
]

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
DOCUMENT_MAX_TOKENS = 64
"""Word pieces the model reads of a tool's text. Measured: 64, 128 and 256 give the same recall
on the eval sets, and 64 embeds a catalog several times faster than the model's 256."""
QUERY_MAX_TOKENS = 256
"""Word pieces the model reads of a query (its own limit): cutting long natural-language
requests to 64 cost half a point of recall@5 on toolbench, and a query is embedded once."""
TELEMETRY_VARIABLE = "ORT_DISABLE_TELEMETRY"
EXTERNAL_FOLDER = "session.model_external_initializers_file_folder_path"
"""onnxruntime's session setting for where a graph loaded from bytes finds its weights."""

Vectors = npt.NDArray[np.float32]


def _workers() -> int:
    """The cores this process may run on."""
    affinity = getattr(os, "sched_getaffinity", None)
    return max(1, len(affinity(0)) if affinity is not None else (os.cpu_count() or 1))


def pooled(hidden: npt.NDArray[np.float32], mask: npt.NDArray[np.int64]) -> Vectors:
    """Sentence vectors as sentence-transformers makes them for this model: the mean of the
    token vectors of ``hidden`` (batch x tokens x dimension) that ``mask`` keeps, each then
    divided by its length (at least 1e-12)."""
    weights = mask[..., None].astype(np.float32)
    sums = (hidden * weights).sum(axis=1)
    means = sums / np.clip(weights.sum(axis=1), 1e-9, None)
    lengths = np.linalg.norm(means, axis=1, keepdims=True)
    return np.ascontiguousarray(means / np.clip(lengths, 1e-12, None), dtype=np.float32)


@dataclass
class Encoder:
    """A loaded model: texts in, unit-length float32 vectors out.

    ``key`` names the model, its weights and how texts are cut, so a cached vector is used only
    for the model that made it. ``texts_embedded`` counts the texts the model has embedded;
    ``pieces_run`` the word pieces it has run, the batches' padding included.
    """

    session: InferenceSession
    tokenizer_file: Path
    key: str
    dimension: int
    texts_embedded: int = 0
    pieces_run: int = 0
    _tokenizers: dict[int, Tokenizer] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def _tokenizer(self, max_tokens: int) -> Tokenizer:
        """The tokenizer that cuts a text to ``max_tokens`` word pieces, special ones included
        (one per cut: a tokenizer's truncation is its own state)."""
        with self._lock:
            tokenizer = self._tokenizers.get(max_tokens)
            if tokenizer is None:
                from tokenizers import Tokenizer

                tokenizer = Tokenizer.from_file(str(self.tokenizer_file))
                tokenizer.no_padding()
                tokenizer.enable_truncation(max_length=max_tokens)
                self._tokenizers[max_tokens] = tokenizer
        return tokenizer

    def _run(self, sequences: Sequence[Sequence[int]]) -> Vectors:
        """The vectors of one batch of word-piece ``sequences``, padded to its longest."""
        width = max(len(sequence) for sequence in sequences)
        ids = np.zeros((len(sequences), width), dtype=np.int64)
        mask = np.zeros((len(sequences), width), dtype=np.int64)
        for row, sequence in enumerate(sequences):
            ids[row, : len(sequence)] = sequence
            mask[row, : len(sequence)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        (hidden,) = self.session.run(None, feeds)
        with self._lock:
            self.pieces_run += ids.size
        return pooled(hidden, mask)

    def encode(
        self,
        texts: Sequence[str],
        *,
        max_tokens: int,
        batch_size: int = 32,
        parallel: bool = False,
    ) -> Vectors:
        """The vectors of ``texts``, one row each, in order, each text cut to ``max_tokens``
        word pieces (a text is stripped first, as sentence-transformers does). Texts the cut
        makes alike are run once; the rest in batches of ``batch_size`` of about as many word
        pieces; with ``parallel``, several batches at once, one a core."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        tokenizer = self._tokenizer(max_tokens)
        # One text at a time: a batch call starts the tokenizer's own thread pool, after which
        # every fork of this process (an MCP server started) prints a warning.
        distinct: dict[tuple[int, ...], int] = {}
        rows = [
            distinct.setdefault(tuple(tokenizer.encode(text.strip()).ids), len(distinct))
            for text in texts
        ]
        sequences = list(distinct)
        # A batch is padded to its longest: measured on the SaaS catalog's texts, batches of
        # about as many word pieces run 15 to 20 % more texts a CPU second than batches of
        # about as many characters (docs/performance.md, "Hybrid search").
        order = sorted(range(len(sequences)), key=lambda index: -len(sequences[index]))
        batches = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
        workers = min(_workers(), len(batches)) if parallel else 1

        def run(batch: list[int]) -> Vectors:
            return self._run([sequences[index] for index in batch])

        if workers > 1:
            with ThreadPoolExecutor(workers, thread_name_prefix="hybrid-embed") as pool:
                results = list(pool.map(run, batches))
        else:
            results = [run(batch) for batch in batches]
        vectors = np.empty((len(sequences), self.dimension), dtype=np.float32)
        for batch, result in zip(batches, results, strict=True):
            vectors[batch] = result
        with self._lock:
            self.texts_embedded += len(texts)
        return vectors[rows]

    @staticmethod
    def similarities(matrix: Vectors, queries: Vectors) -> Vectors:
        """Each row's greatest cosine similarity to one of the ``queries`` (unit vectors, one
        row each): ``max(matrix @ queries.T, axis=1)``."""
        if len(queries) == 1:
            return np.asarray(matrix @ queries[0], dtype=np.float32)
        return np.asarray((matrix @ queries.T).max(axis=1), dtype=np.float32)


_LOADED: dict[Path, Encoder] = {}
_LOADING = threading.Lock()


def load_encoder(model_dir: Path, record_file: Path) -> Encoder:
    """The encoder of the model in ``model_dir``, after checking its weights and tokenizer
    against the upstream sha256 (remembered in ``record_file``). Loaded once per process and
    directory.

    Raises :class:`~hermes_search_hybrid.checksum.ModelChecksumError` when a file is not the
    upstream one, and :class:`FileNotFoundError` when the folder holds no model.
    """
    directory = checked_model_dir(model_dir, record_file)
    with _LOADING:
        encoder = _LOADED.get(directory)
        if encoder is None:
            encoder = _load(directory)
            _LOADED[directory] = encoder
    return encoder


def _load(directory: Path) -> Encoder:
    # onnxruntime reads this when it is imported; otherwise it may record a device id on disk.
    os.environ.setdefault(TELEMETRY_VARIABLE, "1")
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # errors only: nothing on a user's terminal otherwise
    options.add_session_config_entry(EXTERNAL_FOLDER, str(directory))
    session = onnxruntime.InferenceSession(
        graph_file().read_bytes(), options, providers=["CPUExecutionProvider"]
    )
    dimension = int(session.get_outputs()[0].shape[-1])
    # The key the sentence-transformers build of this plugin used for the same float32
    # vectors, so that caches made before the change are still used.
    identity = (
        f"{MODEL_ID}\n{UPSTREAM_SHA256}\nmax_tokens={DOCUMENT_MAX_TOKENS}\nnormalized\n"
        "bfloat16=False"
    )
    key = hashlib.sha256(identity.encode("utf-8")).hexdigest()[:16]
    return Encoder(
        session=session, tokenizer_file=directory / TOKENIZER_FILE, key=key, dimension=dimension
    )
