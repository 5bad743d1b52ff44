"""Tool Search: deferral, the catalog listing and tiers, the bridge tools, the search backend
interface and measuring search quality. The default ranking engine is the bundled ``bm25``
plugin (``plugins_builtin/bm25``), which uses only the public API, as any backend plugin would.

Import from the submodules (``hermes_core.search.backend``, ``hermes_core.search.assembly``...):
this package module stays empty so that importing one part does not load the others.
"""
