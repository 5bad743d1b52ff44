"""How a host starts its MCP servers: which to leave alone, connect behind it, or wait for.

A server goes through four states: *configured* (an entry of ``mcp_servers``), *known* (its
tools registered from its tool manifest, no process started), *connected* (a live session, its
real listing registered), *called* (a call needed it). :func:`start_plan` decides, for each
enabled server at start, from its manifest and the kind of host:

- a command that only reads (``tools search``, ``describe``, ``list``, ``assemble``, ``mcp
  list``) starts no server whose manifest is fresh (younger than ``manifest_max_age``), nor one
  whose connect failed less than ``retry_interval`` ago; it waits for the others;
- any other host registers the known tools at once and connects their servers in the
  background; it waits only for servers whose tools are unknown (``hermes serve`` waits for
  none: its clients are told when the tool list changes; ``hermes tools call`` only for the
  server of the tool it calls). A failed connect on record does not change that: such a host
  may call the server's tools, and a call needs the server (it may have been fixed since), so
  the retry interval holds back read-only commands only;
- ``--refresh`` reconnects and waits for every server, whatever the cache says.

A host made with ``hold_background`` (``hermes serve``, ``hermes tools call``) starts no
server planned for the background until something needs it: a call of one of its tools starts
that server alone, a search starts the servers whose tools are unknown (and waits for them at
most :data:`UNKNOWN_TOOLS_WAIT` seconds each), and ``hermes serve`` releases the rest once its
client has the tool list.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from hermes_core._config import McpServerConfig
    from hermes_core._mcp.manifests import ServerManifest
    from hermes_core._paths import Environment

__all__ = [
    "UNKNOWN_TOOLS_WAIT",
    "McpStartup",
    "StartPlan",
    "failed_recently",
    "failure_inputs",
    "start_plan",
    "without_stale_failure",
]

log = logging.getLogger("hermes_core._mcp")

UNKNOWN_TOOLS_WAIT = 5.0
"""Seconds a search (``tool_search``, ``tool_describe``) waits at most for a server whose tools
are not known yet (no manifest) and that is still making its first connect, when its
``connect_timeout`` is longer: a hung server must not hold every search for its whole
``connect_timeout``. The server keeps trying; its tools join the list once it answers."""

StartPlan = Literal["skip", "background", "wait"]
"""``skip``: start nothing (the known tools, or the recorded failure, answer); ``background``:
connect without holding up the start; ``wait``: the start waits for it (up to its
``connect_timeout``)."""


@dataclass(frozen=True)
class McpStartup:
    """What kind of host is starting its MCP servers.

    ``read_only``: the host only reads tools (search, describe, list, assemble), so servers the
    cache answers for are not started. ``refresh``: reconnect every server and wait for it.
    ``wait``: wait at start for servers whose tools are unknown (``False`` for ``hermes
    serve``, which announces list changes instead); ``wait_only``: when given, only for these
    servers (the others connect in the background). ``manifests``: read and write tool
    manifests at all. ``hold_background``: servers planned for the background are not started
    until the host releases them (``hermes serve`` does once its client has the tool list, so
    that server children do not compete with the handshake for the CPU); a call or a search
    that needs one starts it at once.
    """

    read_only: bool = False
    refresh: bool = False
    wait: bool = True
    wait_only: frozenset[str] | None = None
    manifests: bool = True
    hold_background: bool = False


def failure_inputs(server: str, config: McpServerConfig, env: Environment) -> str:
    """What a recorded connect failure of ``server`` depends on: the ``${VAR}`` values its
    entry names and, for a URL server, its sign-in (fingerprints, never the values)."""
    from hermes_core._mcp.expand import variables_fingerprint

    inputs = variables_fingerprint(config, env)
    if config.url is None:
        return inputs
    from hermes_core._mcp.tokens import sign_in_fingerprint

    return f"{inputs}:{sign_in_fingerprint(server, env)}"


def without_stale_failure(
    manifest: ServerManifest | None, inputs: Callable[[], str], server: str
) -> ServerManifest | None:
    """``manifest`` without its recorded failure when its :func:`failure_inputs` are not
    ``inputs()`` now (a variable set in the environment or ``.env`` since, or a new sign-in of
    a URL server, ``hermes mcp login``): the record tells of a server that is not the one that
    would start now. ``inputs`` is asked only when there is a failure on record."""
    if manifest is None or manifest.failure is None:
        return manifest
    if manifest.failure.inputs == inputs():
        return manifest
    log.debug("MCP server %r: its variables changed since its recorded failure", server)
    return None if manifest.tools is None else replace(manifest, failure=None)


def failed_recently(manifest: ServerManifest | None, config: McpServerConfig, now: float) -> bool:
    """Whether the manifest records a failed connect less than ``retry_interval`` ago."""
    if manifest is None or manifest.failure is None:
        return False
    return 0 <= now - manifest.failure.at < config.retry_interval


def start_plan(
    startup: McpStartup,
    manifest: ServerManifest | None,
    config: McpServerConfig,
    now: float,
    server: str = "",
) -> StartPlan:
    """The plan for one enabled server, named ``server`` (the rules of the module docstring);
    ``now`` is seconds since the epoch."""
    if startup.refresh:
        return "wait"
    known = manifest is not None and manifest.tools is not None
    if startup.read_only:
        age = manifest.age(now) if manifest is not None else None
        # A failure recorded after the listing (a new listing clears it) makes it doubtful.
        trusted = known and manifest is not None and manifest.failure is None
        fresh = trusted and age is not None and 0 <= age < config.manifest_max_age
        return "skip" if failed_recently(manifest, config, now) or fresh else "wait"
    waited = startup.wait and (startup.wait_only is None or server in startup.wait_only)
    if known or not waited:
        return "background"
    return "wait"
