"""Test helpers for plugin authors, registered as a pytest plugin (entry point ``pytest11``)."""

from __future__ import annotations
