"""What a script writes to stdout or stderr: read from its pipe into a file, kept up to a cap.

Past the cap (``code_execution.max_captured_bytes``) the bytes are still read,
so the script never blocks on a full pipe, but only counted; :attr:`Capture.over` tells the
supervisor to stop the script. A script printing without end costs neither disk nor memory
beyond the cap.
"""

from __future__ import annotations

from typing import IO

import anyio
from anyio.abc import ByteReceiveStream

_LAST_LINE_BYTES = 1024


class Capture:
    """One output stream of the script (``name``: ``stdout`` or ``stderr``), its first
    ``limit`` bytes kept in ``file``."""

    def __init__(self, name: str, file: IO[bytes], limit: int) -> None:
        self.name = name
        self.file = file
        self.limit = limit
        self.size = 0
        """Every byte read, kept or dropped."""
        self.done = anyio.Event()
        """Set when the stream has ended (every process holding it has exited)."""
        self.last_line = ""
        """The last non-empty line read so far (for progress reports)."""

    @property
    def kept(self) -> int:
        """How many bytes ``file`` holds."""
        return min(self.size, self.limit)

    @property
    def dropped(self) -> int:
        """How many bytes past the cap were read and dropped."""
        return self.size - self.kept

    @property
    def over(self) -> bool:
        """Whether the script wrote more than the cap."""
        return self.size > self.limit

    async def read(self, stream: ByteReceiveStream) -> None:
        """Read ``stream`` to its end."""
        try:
            async for chunk in stream:
                room = self.limit - self.size
                if room > 0:
                    self.file.write(chunk[:room])
                self.size += len(chunk)
                self._note_last_line(chunk)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
        finally:
            self.file.flush()
            self.done.set()

    def _note_last_line(self, chunk: bytes) -> None:
        lines = chunk[-_LAST_LINE_BYTES:].decode("utf-8", "replace").splitlines()
        last = next((line.strip() for line in reversed(lines) if line.strip()), "")
        if last:
            self.last_line = last
