"""The curated catalog shipped in the package, and the ``.env`` writer its installs use."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from hermes_core._config import McpServerConfig
from hermes_core._dotenv import read_dotenv
from hermes_core._errors import ConfigError, HermesError
from hermes_core._mcp.catalog import load_catalog, parse_catalog
from hermes_core._mcp.secrets import save_secrets
from hermes_core._paths import Environment


def test_shipped_catalog_entries_are_valid_server_entries() -> None:
    catalog = load_catalog()
    assert {"time", "git", "everything", "fetch", "filesystem", "github"} <= set(catalog)
    for server in catalog.values():
        McpServerConfig.model_validate(server.server_entry())
    assert catalog["github"].required_env == ("GITHUB_PERSONAL_ACCESS_TOKEN",)


@pytest.mark.subprocess
def test_python_placeholder_is_the_running_interpreter() -> None:
    entry = load_catalog()["time"].server_entry()
    assert entry == {"command": sys.executable, "args": ["-m", "mcp_server_time"]}


def test_required_env_becomes_templates_never_values() -> None:
    entry = load_catalog()["github"].server_entry()
    assert entry["env"] == {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_PERSONAL_ACCESS_TOKEN}"}


def test_malformed_catalog_entry_is_named() -> None:
    with pytest.raises(ConfigError, match=r"catalog\.box\.args: expected a list of strings"):
        parse_catalog(
            json.dumps({"box": {"description": "d", "install": "i", "command": "c", "args": 3}})
        )
    with pytest.raises(ConfigError, match=r"catalog\.box: unknown keys \['colour'\]"):
        parse_catalog(
            json.dumps({"box": {"description": "d", "install": "i", "command": "c", "colour": 1}})
        )


def test_catalog_file_from_the_environment_replaces_the_shipped_one(tmp_path: Path) -> None:
    own = tmp_path / "catalog.json"
    own.write_text(
        json.dumps({"ours": {"description": "d", "install": "i", "command": "ours-server"}}),
        encoding="utf-8",
    )
    env = Environment(home=tmp_path, cwd=tmp_path, variables={"HERMES_MCP_CATALOG": str(own)})
    assert list(load_catalog(env)) == ["ours"]
    own.write_text("{", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"catalog\.json: the MCP catalog is not valid JSON"):
        load_catalog(env)


def test_save_secrets_replaces_in_place_and_keeps_other_lines(tmp_path: Path) -> None:
    dotenv = tmp_path / ".env"
    dotenv.write_text("# secrets\nexport TOKEN=old\nOTHER=1\n", encoding="utf-8")
    save_secrets(dotenv, {"TOKEN": "new", "SPACED": "a b#c"})
    assert dotenv.read_text(encoding="utf-8") == ('# secrets\nTOKEN=new\nOTHER=1\nSPACED="a b#c"\n')
    assert read_dotenv(dotenv) == {"TOKEN": "new", "OTHER": "1", "SPACED": "a b#c"}


def test_save_secrets_refuses_what_dotenv_cannot_hold(tmp_path: Path) -> None:
    dotenv = tmp_path / ".env"
    with pytest.raises(HermesError, match="spans several lines"):
        save_secrets(dotenv, {"TOKEN": "a\nb"})
    with pytest.raises(HermesError, match="not an environment variable name"):
        save_secrets(dotenv, {"BAD-NAME": "x"})
    assert not dotenv.exists()


def test_save_secrets_leaves_a_malformed_dotenv_alone(tmp_path: Path) -> None:
    dotenv = tmp_path / ".env"
    dotenv.write_text("this is not a line of a .env file\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="expected KEY=VALUE"):
        save_secrets(dotenv, {"TOKEN": "x"})
    assert dotenv.read_text(encoding="utf-8") == "this is not a line of a .env file\n"
