"""The bundled ``bm25`` plugin's modules, for the tests of its engine.

They are imported as the host imports them (under the plugin's private module name), never from
a path of the repository: the engine is a plugin like any other.
"""

from __future__ import annotations

from hermes_core.testing import search_backend_module

admission = search_backend_module("bm25", "admission")
analysis = search_backend_module("bm25", "analysis")
build = search_backend_module("bm25", "build")
equivalents = search_backend_module("bm25", "equivalents")
fields = search_backend_module("bm25", "fields")
index = search_backend_module("bm25", "index")
kernel = search_backend_module("bm25", "kernel")
store = search_backend_module("bm25", "store")
tokenize = search_backend_module("bm25", "tokenize")

BM25Index = index.BM25Index
