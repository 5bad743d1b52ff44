"""How a script reaches the host: a descriptor it inherits, never a name.

For each run the host makes a socket pair; the script's end (the *channel*) is passed to the
runner and on to the script as an open descriptor, whose number the generated ``hermes_tools``
holds. A process of the script that calls a tool makes a socket pair of its own and sends one
end to the host over the channel (``SCM_RIGHTS``, one byte carrying it); the host serves each
end it receives as one connection (:func:`connections`). There is no path or port: another
process of the user has nothing to connect to, and a program the script starts does not get
the channel (it is close-on-exec in the script). A child the script forks shares it, and so
can call tools as the script does.
"""

from __future__ import annotations

import array
import os
import socket
from collections.abc import AsyncIterator
from typing import Final

import anyio
from anyio.abc import UNIXSocketStream

__all__ = ["channel_pair", "connections"]

_MAX_RIGHTS: Final = 4
"""Descriptors read with one byte (the client sends one; the kernel closes those past it)."""
_RECEIVE_FLAGS: Final = getattr(socket, "MSG_CMSG_CLOEXEC", 0)
"""Received descriptors are close-on-exec at once: no program the host starts inherits one."""


def channel_pair() -> tuple[socket.socket, socket.socket]:
    """``(host_end, script_end)``: the host reads connections from the first; the second is
    passed to the script (``pass_fds``) and closed in the host once the script has started."""
    host_end, script_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    host_end.setblocking(False)
    return host_end, script_end


def _descriptors(ancillary: list[tuple[int, int, bytes]]) -> list[int]:
    found = array.array("i")
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            found.frombytes(data[: len(data) - len(data) % found.itemsize])
    return list(found)


def _stream_socket(descriptor: int) -> socket.socket | None:
    """The connected Unix stream socket ``descriptor`` holds, else ``None`` (and it is closed):
    a script may send any descriptor, and only a socket pair end is served."""
    try:
        sock = socket.socket(fileno=descriptor)
    except OSError:
        os.close(descriptor)
        return None
    if sock.family != socket.AF_UNIX or sock.type != socket.SOCK_STREAM:
        sock.close()
        return None
    sock.set_inheritable(False)  # where MSG_CMSG_CLOEXEC is missing (macOS)
    return sock


async def connections(host_end: socket.socket) -> AsyncIterator[UNIXSocketStream]:
    """Each connection the script sends over the channel, until every process holding the
    script's end has closed it."""
    while True:
        await anyio.wait_readable(host_end)
        try:
            data, ancillary, _, _ = host_end.recvmsg(
                1, socket.CMSG_SPACE(_MAX_RIGHTS * array.array("i").itemsize), _RECEIVE_FLAGS
            )
        except (BlockingIOError, InterruptedError):
            continue
        except OSError:
            return
        descriptors = _descriptors(ancillary)
        if not data and not descriptors:
            return
        for descriptor in descriptors:
            sock = _stream_socket(descriptor)
            if sock is None:
                continue
            try:
                stream = await UNIXSocketStream.from_socket(sock)
            except (OSError, ValueError):
                sock.close()
                continue
            yield stream
