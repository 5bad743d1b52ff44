"""The model's weights are checked against the upstream sha256 once per file version."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from hermes_search_hybrid.checksum import (
    UPSTREAM_SHA256,
    UPSTREAM_SIZE,
    ModelChecksumError,
    verify_weights,
)
from hermes_search_hybrid.model import WEIGHTS_FILE, default_model_dir


def weights_file(tmp_path: Path, content: bytes = b"weights") -> tuple[Path, str]:
    path = tmp_path / WEIGHTS_FILE
    path.write_bytes(content)
    return path, hashlib.sha256(content).hexdigest()


def test_installed_model_is_the_upstream_file(tmp_path: Path) -> None:
    weights = default_model_dir() / WEIGHTS_FILE

    assert weights.stat().st_size == UPSTREAM_SIZE
    assert verify_weights(weights, tmp_path / "verified.json") is True


def test_verified_file_is_not_hashed_again(tmp_path: Path) -> None:
    weights, digest = weights_file(tmp_path)
    record = tmp_path / "cache" / "verified.json"

    first = verify_weights(weights, record, digest)
    second = verify_weights(weights, record, digest)

    assert (first, second) == (True, False)
    assert json.loads(record.read_text(encoding="utf-8"))[0]["sha256"] == digest


def test_file_changed_after_its_verification_is_hashed_and_refused(tmp_path: Path) -> None:
    weights, digest = weights_file(tmp_path)
    record = tmp_path / "verified.json"
    verify_weights(weights, record, digest)
    weights.write_bytes(b"Weights")  # same size, new modification time
    os.utime(weights, ns=(0, weights.stat().st_mtime_ns + 1_000_000))

    with pytest.raises(
        ModelChecksumError, match=r"refusing to load .*: its sha256 is [0-9a-f]{64}"
    ):
        verify_weights(weights, record, digest)


def test_damaged_verification_record_only_costs_a_new_check(tmp_path: Path) -> None:
    weights, digest = weights_file(tmp_path)
    record = tmp_path / "verified.json"
    record.write_text("{not json", encoding="utf-8")

    assert verify_weights(weights, record, digest) is True
    assert verify_weights(weights, record, digest) is False


def test_missing_weights_are_an_error_naming_the_file(tmp_path: Path) -> None:
    with pytest.raises(ModelChecksumError, match=r"cannot read the model file .*model"):
        verify_weights(tmp_path / WEIGHTS_FILE, tmp_path / "verified.json", UPSTREAM_SHA256)
