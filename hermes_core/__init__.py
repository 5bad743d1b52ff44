"""hermes-core: the tool layer of an LLM agent.

Core tools stay visible; everything else is deferred behind ``tool_search``, ``tool_describe``
and ``tool_call``. Plugins are found by a pluggy host from five sources and stay disabled until
the user enables them. Every call goes through one dispatcher.

This module is the embedder's face: build a :class:`Host` from a :class:`Config` and an
:class:`Environment`, open sessions, assemble tools and dispatch calls
(``from hermes_core import Host, load_config``). The other audiences have their own faces
(docs/api.md): ``hermes_core.plugin`` (plugin authors), ``hermes_core.search`` (search
backends), ``hermes_core.connectors`` (connector gateways) and ``hermes_core.testing``. Names are
loaded on first use, so ``hermes --version`` pays for none of pydantic, numpy or the MCP SDK.
The names 0.1 exported here and other faces hold now still load, with a
:class:`DeprecationWarning` naming their new place, until 0.2.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_core._exports import DEPRECATED_IN_CORE, FACES, face_names, lazy_exports
from hermes_core._version import __version__ as __version__

if TYPE_CHECKING:
    from hermes_core._approvals.prompt import (
        ApprovalRequest as ApprovalRequest,
    )
    from hermes_core._approvals.prompt import (
        PromptTransport as PromptTransport,
    )
    from hermes_core._approvals.prompt import (
        TerminalPrompt as TerminalPrompt,
    )
    from hermes_core._config import (
        Config as Config,
    )
    from hermes_core._config import (
        ConfigDocument as ConfigDocument,
    )
    from hermes_core._config import (
        McpServerConfig as McpServerConfig,
    )
    from hermes_core._config import (
        edit_config as edit_config,
    )
    from hermes_core._config import (
        load_config as load_config,
    )
    from hermes_core._errors import (
        ConfigError as ConfigError,
    )
    from hermes_core._errors import (
        HermesError as HermesError,
    )
    from hermes_core._errors import (
        ManagedConfigError as ManagedConfigError,
    )
    from hermes_core._errors import (
        PluginError as PluginError,
    )
    from hermes_core._errors import (
        RegistrationError as RegistrationError,
    )
    from hermes_core._host import (
        Host as Host,
    )
    from hermes_core._mcp.status import (
        ServerStatus as ServerStatus,
    )
    from hermes_core._paths import (
        Environment as Environment,
    )
    from hermes_core._session import (
        Session as Session,
    )
    from hermes_core._skills.library import (
        SkillError as SkillError,
    )
    from hermes_core._tools import (
        Tool as Tool,
    )
    from hermes_core._tools import (
        ToolAnnotations as ToolAnnotations,
    )
    from hermes_core._tools import (
        ToolResult as ToolResult,
    )
    from hermes_core.search._assembly import (
        Assembly as Assembly,
    )

__all__ = face_names("hermes_core")

__getattr__, __dir__ = lazy_exports(
    __name__, FACES[__name__], __all__, globals(), DEPRECATED_IN_CORE
)
