"""The frame of hermes' cache files: a framed file reads back, and each way one can be wrong is
refused with its reason."""

from __future__ import annotations

import json
import zlib

import pytest

from hermes_core._cache_files import CACHE_FRAME_SIZE, CacheFileError, cache_frame, read_cache_frame

MAGIC = b"TESTFILE"


def framed(header: object = None, body: bytes = b"payload", version: int = 3) -> bytes:
    text = json.dumps({"kind": "test"} if header is None else header).encode()
    checksum = zlib.crc32(body, zlib.crc32(text))
    total = CACHE_FRAME_SIZE + len(text) + len(body)
    return cache_frame(MAGIC, version, len(text), total, checksum) + text + body


def read(data: bytes) -> tuple[dict[str, object], int, int]:
    return read_cache_frame(data, magic=MAGIC, version=3, kind="test file")


def test_a_framed_file_reads_back_its_header_and_where_its_body_starts() -> None:
    data = framed()
    header, header_length, total = read(data)
    assert header == {"kind": "test"}
    assert total == len(data)
    assert data[CACHE_FRAME_SIZE + header_length :] == b"payload"


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda data: data[:-3], "it is truncated"),
        (lambda data: data[:10], "it is truncated"),
        (lambda data: data + b"x", "it has trailing bytes"),
        (lambda data: b"OTHERKND" + data[8:], "it is not a test file"),
        (lambda data: data[:-1] + bytes([data[-1] ^ 1]), "it is corrupt"),
        (lambda data: framed(version=2), "it is of format version 2, not 3"),
        (lambda data: framed(header=[1, 2]), "its header is unreadable"),
    ],
    ids=["truncated", "shorter-than-a-frame", "trailing", "magic", "flipped", "version", "header"],
)
def test_a_damaged_file_is_refused_with_its_reason(damage: object, reason: str) -> None:
    with pytest.raises(CacheFileError, match=reason):
        read(damage(framed()))  # type: ignore[operator]
