"""``${VAR}`` and ``${VAR:-default}`` in server entries, expanded at connect time.

Values come from the :class:`~hermes_core._paths.Environment` first, then from the user's
secrets file ``$HERMES_HOME/.env``. ``${VAR:-default}`` uses the default when the variable is
unset or empty; ``${VAR}`` of an unset variable is an error naming the server and the key.
Expansion happens on every connect, so a secret added to ``.env`` is picked up by the next
reconnect without a restart.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping

from hermes_core._config import McpServerConfig
from hermes_core._dotenv import dotenv_of
from hermes_core._errors import ConfigError
from hermes_core._paths import Environment

__all__ = [
    "expand_server_config",
    "expand_text",
    "server_variables",
    "variables_fingerprint",
]

_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def server_variables(env: Environment) -> dict[str, str]:
    """The variables ``${VAR}`` reads: ``$HERMES_HOME/.env`` overridden by the environment."""
    return {**dotenv_of(env), **env.variables}


def expand_text(text: str, variables: Mapping[str, str], *, key: str) -> str:
    """``text`` with every ``${VAR}`` and ``${VAR:-default}`` replaced.

    ``key`` is the dotted config key the text came from, used in the error for an unset
    variable without a default (:class:`~hermes_core._errors.ConfigError`).
    """

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = variables.get(name)
        if default is not None:
            return value if value else default
        if value is None:
            raise ConfigError(
                f"${{{name}}} is not set (set it in the environment or in $HERMES_HOME/.env, "
                f"or write ${{{name}:-default}})",
                key=key,
            )
        return value

    return _REFERENCE.sub(replace, text)


def expand_server_config(name: str, config: McpServerConfig, env: Environment) -> McpServerConfig:
    """A copy of the entry of server ``name`` with ``command``, ``args``, ``env``, ``cwd``,
    ``url``, ``headers`` and ``oauth``'s ``client_id`` and ``client_secret`` expanded; raises
    :class:`~hermes_core._errors.ConfigError`."""
    variables = server_variables(env)
    where = f"mcp_servers.{name}"

    def one(value: str | None, key: str) -> str | None:
        return None if value is None else expand_text(value, variables, key=f"{where}.{key}")

    def each(values: Mapping[str, str], key: str) -> dict[str, str]:
        return {k: expand_text(v, variables, key=f"{where}.{key}.{k}") for k, v in values.items()}

    oauth = config.oauth
    if oauth is not None:
        oauth = oauth.model_copy(
            update={
                "client_id": one(oauth.client_id, "oauth.client_id"),
                "client_secret": one(oauth.client_secret, "oauth.client_secret"),
            }
        )
    return config.model_copy(
        update={
            "oauth": oauth,
            "command": one(config.command, "command"),
            "args": [
                expand_text(arg, variables, key=f"{where}.args[{i}]")
                for i, arg in enumerate(config.args)
            ],
            "env": each(config.env, "env"),
            "cwd": one(config.cwd, "cwd"),
            "url": one(config.url, "url"),
            "headers": each(config.headers, "headers"),
        }
    )


def _texts(config: McpServerConfig) -> Iterator[str]:
    """Every text of the entry that ``${VAR}`` is expanded in."""
    for value in (config.command, config.cwd, config.url):
        if value is not None:
            yield value
    yield from config.args
    yield from config.env.values()
    yield from config.headers.values()
    if config.oauth is not None:
        for secret in (config.oauth.client_id, config.oauth.client_secret):
            if secret is not None:
                yield secret


def variables_fingerprint(config: McpServerConfig, env: Environment) -> str:
    """A hash of the variables the entry names in ``${VAR}``, each set or not and its value
    now (a ``.env`` that cannot be read counts with its error).

    A connect failure is recorded with it: when a variable is set, unset or changed since,
    the fingerprint differs and the record no longer stands for the server (what starts it is
    not what failed). Only the hash is kept, never a value.
    """
    names = sorted({m.group(1) for text in _texts(config) for m in _REFERENCE.finditer(text)})
    state: dict[str, str | None]
    if not names:
        state = {}
    else:
        try:
            variables = server_variables(env)
        except ConfigError as exc:
            state = {"": f"unreadable: {exc}"}
        else:
            state = {name: variables.get(name) for name in names}
    text = json.dumps(state, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()
