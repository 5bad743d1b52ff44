"""``python -m hermes_core``: the ``hermes`` command."""

from __future__ import annotations

from hermes_core.cli import main

if __name__ == "__main__":
    main()
