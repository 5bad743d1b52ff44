"""A stand-in for the user's browser (``BROWSER="python browser.py"``): it opens the URL it is
given and follows every redirect, as a browser does after the user clicks "allow" on an
authorization server that approves at once, ending at hermes' loopback redirect listener.
Appends each URL it opened to ``$BROWSER_LOG`` when that is set."""

from __future__ import annotations

import os
import sys

import httpx

url = sys.argv[1]
log = os.environ.get("BROWSER_LOG")
if log:
    with open(log, "a", encoding="utf-8") as stream:
        stream.write(url + "\n")
response = httpx.get(url, follow_redirects=True, timeout=30)
sys.exit(0 if response.status_code < 400 else 1)
