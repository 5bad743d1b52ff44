"""Tool Search, and the search backend author's face: the :class:`SearchBackend` contract
and the types it takes and returns (:class:`ToolDocument`, :class:`SearchHit`,
:class:`Admission`, :class:`KeyedDocuments`). A backend plugin registers a
``SearchBackendSpec`` (``hermes_core.plugin``) and checks itself with
``hermes_core.testing.search_backend_conformance``. The default engine is the bundled ``bm25``
plugin (``plugins_builtin/bm25``), which uses only the faces, as any backend plugin would.

The rest of this package (deferral, the catalog listing and tiers, the bridge tools, measuring
search quality) is the host's: hermes-core imports it from the submodules, and names are loaded
on first use, so importing one part does not load the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_core._exports import FACES, face_names, lazy_exports

if TYPE_CHECKING:
    from hermes_core.search._backend import (
        Admission as Admission,
    )
    from hermes_core.search._backend import (
        KeyedDocuments as KeyedDocuments,
    )
    from hermes_core.search._backend import (
        SearchBackend as SearchBackend,
    )
    from hermes_core.search._backend import (
        SearchHit as SearchHit,
    )
    from hermes_core.search._backend import (
        ToolDocument as ToolDocument,
    )

__all__ = face_names("hermes_core.search")

__getattr__, __dir__ = lazy_exports(__name__, FACES[__name__], __all__, globals())
