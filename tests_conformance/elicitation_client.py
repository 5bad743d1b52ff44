"""The client command of the conformance scenario ``elicitation-sep1034-client-defaults``:
hermes' real client path, run by the suite as ``python elicitation_client.py SERVER_URL``.

It writes a hermes configuration (in a temporary home) whose MCP server ``conformance`` is the
suite's server, then runs ``hermes tools call mcp__conformance__test_client_elicitation_defaults``
on a pseudo-terminal (pexpect), as a person would: the suite's server asks a form, hermes asks
it on the terminal, and the person chooses to answer and presses Enter at every field, taking
each default. The suite checks the defaults reached its server (SEP-1034)."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import pexpect

from hermes_core.testing import HermesCli

TOOL = "mcp__conformance__test_client_elicitation_defaults"


def main(url: str) -> int:
    with tempfile.TemporaryDirectory(prefix="hermes-conformance-") as temporary:
        root = Path(temporary)
        cli = HermesCli(root, config_file=root / "config.yaml")
        config = {
            "plugins": {"enabled": ["approvals"]},
            "mcp_servers": {"conformance": {"url": url}},
        }
        cli.config.write_text(json.dumps(config), encoding="utf-8")
        # --yes: the approval of this one call (its tool has no annotations: destructive).
        command = cli.command("tools", "call", "--yes", TOOL, "{}")
        child = pexpect.spawn(
            command[0],
            command[1:],
            cwd=str(cli.work),
            env=cli.variables(TERM="dumb"),
            encoding="utf-8",
            timeout=60,
            logfile=sys.stderr,
        )
        child.expect(r"\[a\]nswer, \[d\]ecline, \[c\]ancel: ")
        child.sendline("a")
        while child.expect([r": $", pexpect.EOF]) == 0:
            child.sendline("")  # Enter: the field's default
        child.close()
        return int(child.exitstatus or 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[-1]))
