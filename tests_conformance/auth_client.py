"""The conformance suite's client for the ``auth/*`` scenarios: hermes' real client path.

``python auth_client.py URL`` (the suite appends its server's URL and sets
``MCP_CONFORMANCE_SCENARIO`` and ``MCP_CONFORMANCE_CONTEXT``). In a temporary home it writes a
hermes config with URL as the http server ``conf`` (with the pre-registered client of the
context, if it gives one, and a client ID metadata document URL), runs ``hermes mcp login conf``
with ``BROWSER`` set to ``tests/mcp/servers/browser.py`` (which follows the authorization URL's
redirects: the suite's authorization server approves at once, so this stands for the user
clicking "allow"), then ``hermes mcp test conf --json`` and ``hermes tools call`` of each tool.
When a call says to sign in again (a step-up to more scopes), it does what the user would: runs
``hermes mcp login conf`` again and repeats the call, once. Exits 0 when everything worked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
BROWSER = REPO_ROOT / "tests" / "mcp" / "servers" / "browser.py"
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
SIGN_IN_AGAIN = "run: hermes mcp login conf"


def _config(url: str, context: dict[str, str]) -> str:
    lines = ["mcp_servers:", "  conf:", f"    url: {json.dumps(url)}", "    oauth:"]
    lines.append(f"      client_metadata_url: {json.dumps(CLIENT_METADATA_URL)}")
    for key in ("client_id", "client_secret"):
        if context.get(key):
            lines.append(f"      {key}: {json.dumps(context[key])}")
    return "\n".join(lines) + "\n"


def main(url: str) -> int:
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    with tempfile.TemporaryDirectory(prefix="hermes-conformance-") as temporary:
        root = Path(temporary)
        home, work = root / "home", root / "work"
        home.mkdir()
        work.mkdir()
        (home / "config.yaml").write_text(_config(url, context), encoding="utf-8")
        env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": str(root),
            "HERMES_HOME": str(home),
            "HERMES_LOG_DIR": str(root / "logs"),
            "HERMES_CACHE_DIR": str(root / "cache"),
            "BROWSER": str(BROWSER),
        }

        def hermes(*args: str) -> subprocess.CompletedProcess[str]:
            done = subprocess.run(
                [sys.executable, "-m", "hermes_core", *args],
                cwd=work,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            print(f"$ hermes {' '.join(args)} -> {done.returncode}", file=sys.stderr)
            sys.stderr.write(done.stdout + done.stderr)
            return done

        if hermes("mcp", "login", "conf").returncode != 0:
            return 1
        listed = hermes("mcp", "test", "conf", "--json")
        if listed.returncode != 0:
            return 1
        failed = False
        for tool in json.loads(listed.stdout)["tools"]:
            call = ("tools", "call", f"mcp__conf__{tool['name']}", "{}", "--yes")
            done = hermes(*call)
            if done.returncode != 0 and SIGN_IN_AGAIN in done.stdout + done.stderr:
                if hermes("mcp", "login", "conf").returncode != 0:
                    return 1
                done = hermes(*call)
            failed = failed or done.returncode != 0
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[-1]))
