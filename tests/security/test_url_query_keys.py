"""Which query keys of a URL hold a secret (``url_secrets``, the one rule): a key whose words,
split on ``_``, ``-``, ``.`` and camelCase, include a secret word (``key``, ``token``,
``secret``, ``password``, ``auth``, ``jwt``, ``session``, ``sig``, ``signature``...), or a
glued name of one (``apikey``, ``accesstoken``), or the whole key ``code`` (an Azure Functions
key, an OAuth code); never a word that merely ends like one (``monkey``, ``bypass``). The table
is checked both ways through what shows a URL (``shown_url``), what writes the activity log
(``redact_text``) and what ``hermes mcp add`` moves to ``.env`` (the real command)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from hermes_core._redaction import redact_text, shown_url, url_secrets
from hermes_core.testing._cli_in_process import InProcessCli

SECRET_KEYS = (
    "token",
    "key",
    "api_key",
    "apiKey",
    "APIKey",
    "apikey",
    "API_KEY",
    "x-api-key",
    "access_token",
    "accessToken",
    "accesstoken",
    "auth",
    "auth_token",
    "jwt",
    "session",
    "sessionId",
    "session_id",
    "sig",
    "signature",
    "X-Amz-Signature",
    "secret",
    "client_secret",
    "password",
    "passwd",
    "pwd",
    "pass",
    "credential",
    "X-Amz-Credential",
    "code",
    "secretkey",
    "oauthtoken",
    "dbpass",
    "userpassword",
    "sessionid",
    "PHPSESSID",
    "jsessionid",
    "session_token",
    "X-Amz-Security-Token",
)
"""Keys whose value is a secret."""

PLAIN_KEYS = (
    "monkey",
    "bypass",
    "compass",
    "turkey",
    "author",
    "authors",
    "max_tokens",
    "design",
    "signal",
    "mode",
    "passenger",
    "tokenizer",
    "keyboard",
    "zip_code",
    "country_code",
    "page",
    "session_count",
    "token_type",
    "token_type_hint",
    "key_length",
    "auth_method",
    "token_url",
)
"""Keys whose value is not: words that only end or begin like a secret word, ``code`` in a
longer name (``zip_code``), and a secret word followed by one saying what of it the value
tells (``session_count``, ``token_type``)."""

VALUE = "v4lue-x9"


def _hidden(key: str) -> bool:
    url = f"https://mcp.example/mcp?{key}={VALUE}&mode=fast"
    found: list[str] = []

    def replace(name: str, value: str) -> str:
        found.append(name)
        return "[moved]"

    url_secrets(url, replace)
    shown = shown_url(url)
    logged = redact_text(f"curl -s '{url}'")
    assert (VALUE in shown) == (found == []), shown
    assert (VALUE in logged) == (found == []), logged
    return found == [key]


@pytest.mark.parametrize("key", SECRET_KEYS)
def test_a_query_key_naming_a_secret_is_hidden_wherever_the_url_is_shown(key: str) -> None:
    assert _hidden(key)


@pytest.mark.parametrize("key", PLAIN_KEYS)
def test_a_query_key_that_only_ends_like_a_secret_word_is_kept(key: str) -> None:
    assert not _hidden(key)


def test_mcp_add_moves_secret_query_values_and_keeps_plain_ones(tmp_path: Path) -> None:
    cli = InProcessCli(tmp_path, home=tmp_path / "home" / ".hermes", user_home=tmp_path / "home")
    url = "https://mcp.example/mcp?monkey=m1&bypass=b1&session=s1&jwt=j1&signature=g1&code=c1"

    cli.run("mcp", "add", "remote", "--url", url)

    data: dict[str, Any] = YAML(typ="safe").load(cli.config.read_text(encoding="utf-8"))
    assert data["mcp_servers"]["remote"]["url"] == (
        "https://mcp.example/mcp?monkey=m1&bypass=b1&session=${REMOTE_URL_SESSION}"
        "&jwt=${REMOTE_URL_JWT}&signature=${REMOTE_URL_SIGNATURE}&code=${REMOTE_URL_CODE}"
    )
    assert (cli.home / ".env").read_text(encoding="utf-8") == (
        "REMOTE_URL_SESSION=s1\nREMOTE_URL_JWT=j1\nREMOTE_URL_SIGNATURE=g1\nREMOTE_URL_CODE=c1\n"
    )
