"""How far a block of a test grows the peak resident memory of its process, or of a child
process (Linux)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class PeakRss:
    """How far the process' resident memory rose over what it was when the block began (MiB)."""

    grown = 0.0


def _status_mib(field: str, process: str = "self") -> float:
    status = Path(f"/proc/{process}/status").read_text(encoding="ascii")
    found = re.search(rf"^{field}:\s+(\d+) kB$", status, re.MULTILINE)
    assert found is not None, f"no {field} in /proc/{process}/status"
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


@contextmanager
def child_peak_rss_growth(pid: int) -> Iterator[PeakRss]:
    """The growth of process ``pid``'s peak RSS over the block, as :func:`peak_rss_growth`
    measures this process's; the process must outlive the block."""
    Path(f"/proc/{pid}/clear_refs").write_text("5", encoding="ascii")
    peak = PeakRss()
    before = _status_mib("VmRSS", str(pid))
    yield peak
    peak.grown = _status_mib("VmHWM", str(pid)) - before
