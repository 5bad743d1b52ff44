"""``TerminalForms``: an MCP server's form asked on the terminal, read from a pipe here."""

from __future__ import annotations

import io
import os

import anyio
import mcp_types

from hermes_core._mcp.terminal_form import TerminalForms

FORM = mcp_types.ElicitRequestFormParams(
    message="Which environment?",
    requested_schema={"type": "object", "properties": {"env": {"type": "string"}}},
)


def test_end_of_input_cancels_the_form_and_ends_its_line() -> None:
    """Ctrl-D echoes no line end: what followed was printed on the question's line
    (execwalk's walk, as at an approval question)."""
    reader, writer = os.pipe()
    os.close(writer)
    shown = io.StringIO()
    try:
        reply = anyio.run(TerminalForms(reader, shown).answer, "deploy", FORM)
    finally:
        os.close(reader)

    assert reply is not None
    assert reply.action == "cancel"
    assert shown.getvalue().endswith("[a]nswer, [d]ecline, [c]ancel: \nend of input: cancelled\n")
