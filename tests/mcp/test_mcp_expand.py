"""``${VAR}`` and ``${VAR:-default}`` in server entries, from the environment and ``.env``."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core._config import McpServerConfig
from hermes_core._dotenv import read_dotenv
from hermes_core._errors import ConfigError
from hermes_core._mcp.expand import expand_server_config, expand_text
from hermes_core._paths import Environment


def test_variable_is_replaced() -> None:
    assert expand_text("Bearer ${TOKEN}", {"TOKEN": "abc"}, key="k") == "Bearer abc"


def test_default_is_used_when_unset_or_empty() -> None:
    assert expand_text("${TZ_EXTRA:-none}", {}, key="k") == "none"
    assert expand_text("${TZ_EXTRA:-none}", {"TZ_EXTRA": ""}, key="k") == "none"
    assert expand_text("${TZ_EXTRA:-none}", {"TZ_EXTRA": "x"}, key="k") == "x"


def test_unset_variable_without_default_names_the_key() -> None:
    with pytest.raises(ConfigError) as caught:
        expand_text("Bearer ${REMOTE_TOKEN}", {}, key="mcp_servers.remote.headers.Authorization")
    message = str(caught.value)
    assert "mcp_servers.remote.headers.Authorization" in message
    assert "${REMOTE_TOKEN} is not set" in message


def test_text_without_references_is_unchanged() -> None:
    assert expand_text("price $5 and $HOME", {}, key="k") == "price $5 and $HOME"


def test_dotenv_reads_comments_quotes_and_export(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_text(
        "# secrets\n\nA=1\nexport B = two\nC=\"with # hash\"\nD='single'\nE=plain # note\n",
        encoding="utf-8",
    )
    assert read_dotenv(path) == {
        "A": "1",
        "B": "two",
        "C": "with # hash",
        "D": "single",
        "E": "plain",
    }


def test_missing_dotenv_is_empty(tmp_path: Path) -> None:
    assert read_dotenv(tmp_path / ".env") == {}


def test_bad_dotenv_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_text("A=1\nthis is not an assignment\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        read_dotenv(path)
    assert f"{path}:2" in str(caught.value)


def test_secrets_file_fills_variables_and_environment_wins(env: Environment) -> None:
    env.dotenv_path.write_text("REMOTE_TOKEN=from-dotenv\nHERMES_STRICT_PLUGINS=0\n")
    entry = McpServerConfig(
        url="http://127.0.0.1:1/mcp",
        headers={"Authorization": "Bearer ${REMOTE_TOKEN}", "X-Strict": "${HERMES_STRICT_PLUGINS}"},
    )
    expanded = expand_server_config("remote", entry, env)
    assert expanded.headers == {"Authorization": "Bearer from-dotenv", "X-Strict": "1"}


def test_every_string_field_is_expanded(env: Environment) -> None:
    variables = {"BIN": "python3", "ARG": "-m", "DIR": "sub", "V": "value"}
    env = Environment(home=env.home, cwd=env.cwd, variables=variables)
    entry = McpServerConfig(command="${BIN}", args=["${ARG}", "x"], env={"K": "${V}"}, cwd="${DIR}")
    expanded = expand_server_config("s", entry, env)
    assert (expanded.command, expanded.args, expanded.env, expanded.cwd) == (
        "python3",
        ["-m", "x"],
        {"K": "value"},
        "sub",
    )
    assert entry.command == "${BIN}", "the configured entry itself is left unexpanded"
