"""How far a block of a test grows the process' peak resident memory (Linux)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class PeakRss:
    """How far the process' resident memory rose over what it was when the block began (MiB)."""

    grown = 0.0


def _status_mib(field: str) -> float:
    status = Path("/proc/self/status").read_text(encoding="ascii")
    found = re.search(rf"^{field}:\s+(\d+) kB$", status, re.MULTILINE)
    assert found is not None, f"no {field} in /proc/self/status"
    return int(found.group(1)) / 1024


@contextmanager
def peak_rss_growth() -> Iterator[PeakRss]:
    """The growth of the process' peak RSS over the block, from its RSS at the start. The peak
    (VmHWM) is reset first (Linux 4.0+: ``/proc/self/clear_refs``); ``ru_maxrss`` is not, and
    only rises, so a larger peak of an earlier test in the same worker would hide the block's."""
    Path("/proc/self/clear_refs").write_text("5", encoding="ascii")
    peak = PeakRss()
    before = _status_mib("VmRSS")
    yield peak
    peak.grown = _status_mib("VmHWM") - before
