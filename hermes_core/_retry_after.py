"""A server's ``Retry-After`` header as seconds: the one reading of it, for the connector
gateway client and the model providers."""

from __future__ import annotations

import time

__all__ = ["retry_after_seconds"]


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """``Retry-After`` as seconds: a number of seconds or an HTTP date (counted from ``now``,
    default the current time); ``None`` when absent or unreadable. Never negative."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    # email.utils brings socket and calendar: imported by the one reading that needs it.
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))
