"""Signalling a child's whole process group: what MCP stdio servers, terminal commands and
``execute_code`` scripts leave behind is ended with them."""

from __future__ import annotations

import os


def signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to the process group ``pgid`` (``0`` only checks it); ``False`` when the
    group has no member left."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # a member changed its credentials: it exists, but is not ours to signal
    return True
