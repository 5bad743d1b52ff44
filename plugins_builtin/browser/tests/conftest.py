"""The fixtures of browser_site.py, for every test of the browser tools."""

from browser_site import chromium, host_factory, site

__all__ = ["chromium", "host_factory", "site"]
