"""Tool Search: the tokenizer, the BM25 index and its admission rules, the search backend
interface, the catalog listing and the bridge tools.

Import from the submodules (``hermes_core.search.backend``, ``hermes_core.search.bm25``...): this
package module stays empty so that importing one part does not load numpy for the others.
"""
