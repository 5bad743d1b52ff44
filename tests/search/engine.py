"""A concrete search backend for the tests of the core's search layer: the bundled bm25
engine's class, got through the public test kit (the engine's own tests are beside it, in
``plugins_builtin/bm25/tests``)."""

from __future__ import annotations

from hermes_core.testing import make_search_backend

BM25Index = type(make_search_backend("bm25"))
