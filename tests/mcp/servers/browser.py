#!/usr/bin/env python3
"""A stand-in for the user's browser (``BROWSER=/path/to/browser.py``; it is executable, as
``webbrowser`` runs ``$BROWSER`` as one program): it opens the URL it is given and follows every
redirect, as a browser does after the user clicks "allow" on an authorization server that
approves at once, ending at hermes' loopback redirect listener. Appends each URL it opened to
``$BROWSER_LOG`` when that is set. The standard library only: any Python 3 runs it."""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request

url = sys.argv[1]
log = os.environ.get("BROWSER_LOG")
if log:
    with open(log, "a", encoding="utf-8") as stream:
        stream.write(url + "\n")
try:
    with urllib.request.urlopen(url, timeout=30) as response:  # follows redirects
        response.read()
except urllib.error.URLError as exc:
    print(f"browser.py: {url}: {exc}", file=sys.stderr)
    sys.exit(1)
