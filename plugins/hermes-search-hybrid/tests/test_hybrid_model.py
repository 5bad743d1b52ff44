"""The model on onnxruntime: the vectors sentence-transformers made on torch, one thread for a
query, and an install that brings neither torch nor sentence-transformers."""

from __future__ import annotations

import json
import re
from importlib import metadata
from pathlib import Path

import numpy as np
from hermes_search_hybrid.model import (
    DOCUMENT_MAX_TOKENS,
    QUERY_MAX_TOKENS,
    default_model_dir,
    load_encoder,
)
from hybrid_fixtures import DISTRIBUTION

REFERENCE = Path(__file__).resolve().parent / "data" / "reference_vectors.json"
"""Texts and their vectors as sentence-transformers 6.3 on torch 2.13 (CPU, float32) made them
with this model (README.md, "The model's files")."""
HEAVY = re.compile(r"^(torch|sentence-transformers|transformers|nvidia-.*|triton)$")


def test_vectors_are_those_of_sentence_transformers_on_torch(tmp_path: Path) -> None:
    reference = json.loads(REFERENCE.read_text(encoding="utf-8"))
    encoder = load_encoder(default_model_dir(), tmp_path / "verified.json")
    cuts = {"document": DOCUMENT_MAX_TOKENS, "query": QUERY_MAX_TOKENS}

    for kind, max_tokens in cuts.items():
        texts = [item["text"] for item in reference[kind]]
        expected = np.array([item["vector"] for item in reference[kind]], dtype=np.float32)
        batch = encoder.encode(texts, max_tokens=max_tokens, batch_size=2, parallel=True)
        alone = np.stack([encoder.encode([text], max_tokens=max_tokens)[0] for text in texts])

        assert np.abs(batch - expected).max() < 1e-5, kind
        assert np.abs(alone - expected).max() < 1e-5, kind  # padding changes nothing


def test_texts_the_cut_makes_alike_are_run_once(tmp_path: Path) -> None:
    encoder = load_encoder(default_model_dir(), tmp_path / "verified.json")
    long = "x " * 100  # far past 64 word pieces: what follows it is cut off
    before = encoder.pieces_run

    vectors = encoder.encode([long + "one", long + "two"], max_tokens=DOCUMENT_MAX_TOKENS)

    assert encoder.pieces_run - before == DOCUMENT_MAX_TOKENS  # one row of 64, not two
    assert np.array_equal(vectors[0], vectors[1])


def test_batches_are_texts_of_about_as_many_word_pieces(tmp_path: Path) -> None:
    # Long in characters and few word pieces, or the other way round: batches made by
    # characters would pad the short texts to the long ones.
    texts = {
        "internationalization internationalization": 6,
        "a b c d e f g h i j k l m n o": 17,
        "internationalization": 4,
        "a b c d e f g h": 10,
    }
    encoder = load_encoder(default_model_dir(), tmp_path / "verified.json")
    before = encoder.pieces_run

    encoder.encode(list(texts), max_tokens=DOCUMENT_MAX_TOKENS, batch_size=2)

    assert encoder.pieces_run - before == 2 * 17 + 2 * 6  # (17, 10) and (6, 4), each padded


def test_a_query_runs_on_one_thread(tmp_path: Path) -> None:
    encoder = load_encoder(default_model_dir(), tmp_path / "verified.json")

    options = encoder.session.get_session_options()

    assert (options.intra_op_num_threads, options.inter_op_num_threads) == (1, 1)


def requirements_installed(name: str, seen: set[str]) -> set[str]:
    """``name`` and every distribution it requires, installed here (extras and markers that do
    not hold left out), by normalised name."""
    from packaging.requirements import Requirement

    key = re.sub(r"[-_.]+", "-", name).lower()
    if key in seen:
        return seen
    seen.add(key)
    for line in metadata.requires(name) or []:
        requirement = Requirement(line)
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        try:
            requirements_installed(requirement.name, seen)
        except metadata.PackageNotFoundError:
            seen.add(f"missing:{requirement.name}")
    return seen


def test_the_plugin_requires_no_torch_nor_sentence_transformers() -> None:
    needed = requirements_installed(DISTRIBUTION, set())

    assert {"onnxruntime", "tokenizers", "numpy"} <= needed
    assert [name for name in needed if HEAVY.match(name) or name.startswith("missing:")] == []
