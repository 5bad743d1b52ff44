"""The version of hermes-core, in a module of its own so that the modules that print or check it
need not import the package's public face."""

__all__ = ["__version__"]

__version__ = "0.1.0"
"""Kept equal to ``version`` in ``pyproject.toml`` (a test checks it)."""
