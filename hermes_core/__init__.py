"""hermes-core: the tool layer of an LLM agent.

Core tools stay visible; everything else is deferred behind ``tool_search``, ``tool_describe``
and ``tool_call``. Plugins are found by a pluggy host from five sources and stay disabled until
the user enables them. Every call goes through one dispatcher.

This module stays tiny on purpose: ``hermes --version`` must not pay for pydantic, numpy or the
MCP SDK. Import the public API from the submodules (``hermes_core.host``, ``hermes_core.tools``,
``hermes_core.config``, ``hermes_core.specs``).
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
