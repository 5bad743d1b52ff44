"""The fixtures of browser_site.py, for every test of the browser tools."""

from browser_site import anyio_backend, chromium, host_factory, site

__all__ = ["anyio_backend", "chromium", "host_factory", "site"]
