"""The option values of ``hermes mcp add`` and ``hermes mcp catalog install``: a server's name,
``KEY=VALUE`` pairs and HTTP headers, each refused with the option's name when malformed."""

from __future__ import annotations

from collections.abc import Sequence

import click

__all__ = ["check_name", "headers_option", "pairs_option"]


def check_name(name: str) -> None:
    """Refuse ``name`` (the ``NAME`` argument) unless it is a valid MCP server name."""
    from hermes_core._config import MCP_SERVER_NAME_RULE, check_mcp_server_name

    try:
        check_mcp_server_name(name)
    except ValueError:
        raise click.BadParameter(MCP_SERVER_NAME_RULE, param_hint="NAME") from None


def pairs_option(values: Sequence[str], option: str) -> dict[str, str]:
    """``KEY=VALUE`` option values as a mapping; a value without ``=`` is refused."""
    pairs: dict[str, str] = {}
    for value in values:
        key, found, rest = value.partition("=")
        key = key.strip()
        if not found or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {value!r}", param_hint=option)
        pairs[key] = rest
    return pairs


def headers_option(values: Sequence[str]) -> dict[str, str]:
    """``--header`` values as a mapping: ``K=V``, or ``K: V`` as curl and the MCP clients write
    a header (a header's name holds neither ``:`` nor ``=``, so the first of them splits)."""
    headers: dict[str, str] = {}
    for value in values:
        colon, equals = value.find(":"), value.find("=")
        if colon != -1 and (equals == -1 or colon < equals):
            key, rest = value[:colon].strip(), value[colon + 1 :].lstrip()
        else:
            key, _, rest = value.partition("=")
            key = key.strip()
        if not key or (colon == -1 and equals == -1):
            raise click.BadParameter(  # the value is not shown: it may be a credential
                "expected K=V or 'K: V': a value holds neither", param_hint="--header"
            )
        headers[key] = rest
    return headers
