"""``config.yaml``: its models, how it is loaded and validated, and how it is edited.

- :mod:`hermes_core._config.models`: one section per part of the file (:class:`Config` is the
  whole file), every key validated; :mod:`hermes_core._config.sections` is how;
- :mod:`hermes_core._config.errors`: validation, with errors in the user's words (the file, the
  line, the dotted key, what was expected);
- :mod:`hermes_core._config.document`: reading a file within fixed limits (:func:`load_config`)
  and editing it in place, comments and order kept (:class:`ConfigDocument`,
  :func:`edit_config`).

Everything is importable from here: ``from hermes_core._config import Config, load_config``.
"""

from __future__ import annotations

from hermes_core._config.document import (
    ConfigDocument,
    config_held_back,
    config_in_effect,
    config_in_effect_and_why,
    edit_config,
    load_config,
)
from hermes_core._config.models import (
    DEFAULT_DEFER,
    MCP_SERVER_NAME,
    MCP_SERVER_NAME_RULE,
    ApprovalsConfig,
    CatalogEntry,
    CodeExecutionConfig,
    Config,
    ConfigWarning,
    ConnectorsConfig,
    HooksConfig,
    InvalidConfig,
    McpOAuthConfig,
    McpServerConfig,
    PluginsConfig,
    ShellHook,
    SkillsConfig,
    ToolsConfig,
    ToolSearchConfig,
    check_mcp_server_name,
)

__all__ = [
    "DEFAULT_DEFER",
    "MCP_SERVER_NAME",
    "MCP_SERVER_NAME_RULE",
    "ApprovalsConfig",
    "CatalogEntry",
    "CodeExecutionConfig",
    "Config",
    "ConfigDocument",
    "ConfigWarning",
    "ConnectorsConfig",
    "HooksConfig",
    "InvalidConfig",
    "McpOAuthConfig",
    "McpServerConfig",
    "PluginsConfig",
    "ShellHook",
    "SkillsConfig",
    "ToolSearchConfig",
    "ToolsConfig",
    "check_mcp_server_name",
    "config_held_back",
    "config_in_effect",
    "config_in_effect_and_why",
    "edit_config",
    "load_config",
]
