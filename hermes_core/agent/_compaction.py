"""Long conversations: what to say when one no longer fits in the model's context window."""

from __future__ import annotations

from hermes_core.agent._wire import ModelError


def overflow_detail(error: ModelError, context_length: int) -> str:
    """The stop line's detail for a request the server refused for its size (``error``, a
    :func:`~hermes_core.agent._http_errors.overflowed` one): what happened, in the server's
    words, and the three ways on."""
    return (
        f"{error}: compact the conversation (/compact in hermes chat) or start a new "
        f"conversation; model.context_length ({context_length}) should be the model's real "
        "window, so that hermes compacts before a request overflows it"
    )
