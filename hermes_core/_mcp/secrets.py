"""Secrets in ``$HERMES_HOME/.env``, the one place hermes keeps them (never config.yaml).

:func:`move_secrets` takes the literal secrets out of a server entry (every literal ``env``
value, the literal value of a credential header such as ``Authorization``, the password and
secret query values of a ``url`` (``https://user:pass@host/mcp?token=t``) or of a URL in the
command's arguments, and the value of a secret flag there such as ``--api-key sk-...``) and puts
``${VAR}`` references in their place; :func:`save_secrets` writes the values to ``.env``
(:func:`save_home_secrets` to the home's, refused for a home inside the project while the
gate is closed: that ``.env`` is not read, and a secret there could be committed and pushed).
``hermes mcp add`` and ``hermes import-agent`` both go through them, and
:func:`describe_moved` is the one line that tells the user what went where.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_core._atomic_write import write_atomically
from hermes_core._dotenv import read_dotenv
from hermes_core._errors import HermesError
from hermes_core._project_trust import PROJECT_GATE_FLAG, project_refusal, project_root
from hermes_core._redaction import url_secrets

if TYPE_CHECKING:
    from hermes_core._paths import Environment

__all__ = ["MovedSecrets", "describe_moved", "move_secrets", "save_home_secrets", "save_secrets"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGNMENT = re.compile(r"\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=")
_CREDENTIAL_HEADER = re.compile(r"auth|token|key|secret|passw|cookie|session|credential", re.I)
"""Header names whose values are credentials: ``Authorization``, ``X-Api-Key``, ``Cookie``..."""
_SCHEME = re.compile(r"(Bearer|Basic|Token)(\s+)(\S+)", re.I)
"""``Bearer abc``: the scheme stays in config.yaml, only ``abc`` is the secret."""
_SECRET_FLAG = re.compile(
    r"--?(?:[A-Za-z0-9]+[-_])*(?:api[-_]?key|key|token|secret|passw(?:or)?d|pass|passphrase"
    r"|credentials?|auth|cookie)",
    re.I,
)
"""A command-line flag that takes a secret: ``--api-key``, ``--token``, ``-password``,
``--client-secret`` (not ``--token-file``, ``--keyboard``)."""
_HEADER_FLAGS = frozenset({"--header", "-H"})
"""Flags whose value is an HTTP header, ``Name: value`` (``mcp-remote URL --header ...``)."""
_HEADER = re.compile(r"([^:\s]+)(:\s*)(.*)", re.S)


@dataclass(frozen=True)
class MovedSecrets:
    """An entry with its literal secrets replaced by ``${VAR}`` references."""

    entry: dict[str, Any]
    to_save: dict[str, str] = field(default_factory=dict)
    """``VAR -> value`` that ``.env`` does not hold yet."""
    references: dict[str, str] = field(default_factory=dict)
    """``env.KEY`` or ``headers.NAME`` -> ``VAR``, for every value taken out."""


def _variable_name(text: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_]", "_", text).upper()
    return name if _NAME.fullmatch(name) else f"_{name}"


def _candidates(first: str, fallback: str) -> Iterator[str]:
    yield first
    if fallback != first:
        yield fallback
    for number in itertools.count(2):
        yield f"{fallback}_{number}"


def _choose(
    first: str,
    fallback: str,
    value: str,
    environment: Mapping[str, str],
    dotenv: Mapping[str, str],
) -> tuple[str, bool]:
    """The variable to hold ``value`` and whether ``.env`` must be written. A name taken with
    another value, in ``.env`` or in the environment (which ``${VAR}`` reads first), is not
    used; a name ``.env`` already holds with this value is reused."""
    for name in _candidates(first, fallback):
        if environment.get(name, value) != value or dotenv.get(name, value) != value:
            continue
        return name, name not in dotenv
    raise AssertionError("unreachable: the candidates never end")


def _is_literal(value: str) -> bool:
    return bool(value) and "${" not in value


def move_secrets(
    server: str,
    entry: Mapping[str, Any],
    *,
    environment: Mapping[str, str],
    dotenv: Mapping[str, str],
) -> MovedSecrets:
    """Take the literal secrets out of the ``mcp_servers`` entry of ``server``.

    A literal ``env`` value ``KEY: v`` becomes ``KEY: ${KEY}``; a literal credential header
    ``Authorization: Bearer t`` becomes ``Authorization: Bearer ${SERVER_AUTHORIZATION}``; the
    ``url`` ``https://user:p@host/mcp?token=t`` becomes ``https://user:${SERVER_URL_PASSWORD}@``
    ``host/mcp?token=${SERVER_URL_TOKEN}`` (what :func:`~hermes_core._redaction.url_secrets`
    finds, the rule :func:`~hermes_core._redaction.shown_url` hides); in ``args``,
    ``--api-key v`` becomes ``--api-key ${SERVER_API_KEY}`` (``--token=v`` likewise), and
    ``--header "Authorization: Bearer t"`` takes its secret out as a header does.
    ``environment`` and ``dotenv`` are the variables set now: a name either holds with another
    value is not used (``SERVER_KEY``, then ``SERVER_KEY_2``... instead). Values that already
    hold a ``${VAR}`` are left as they are.
    """
    moved = dict(entry)
    taken = dict(dotenv)
    to_save: dict[str, str] = {}
    references: dict[str, str] = {}

    prefix = _variable_name(server)

    def place(first: str, fallback: str, value: str, where: str) -> str:
        name, new = _choose(first, fallback, value, environment, taken)
        if new:
            to_save[name] = value
            taken[name] = value
        references[where] = name
        return f"${{{name}}}"

    def url_secret(where: str, name: str, value: str) -> str:
        """Secret ``name`` of the URL at ``where`` as a reference (:func:`url_secrets`)."""
        if not _is_literal(value):
            return value
        variable = f"{prefix}_URL_{_variable_name(name)}"
        return place(variable, variable, value, f"{where}.{name}")

    url = entry.get("url")
    if isinstance(url, str) and url:
        moved["url"] = url_secrets(url, partial(url_secret, "url"))

    env = entry.get("env")
    if isinstance(env, Mapping) and env:
        moved["env"] = {
            key: place(
                key if _NAME.fullmatch(key) else _variable_name(key),
                f"{prefix}_{_variable_name(key)}",
                value,
                f"env.{key}",
            )
            if isinstance(value, str) and _is_literal(value)
            else value
            for key, value in env.items()
        }

    def credential(name: str, value: str, where: str) -> str:
        """``value`` of credential header ``name`` with its secret as a reference."""
        preferred = f"{prefix}_{_variable_name(name)}"
        scheme = _SCHEME.fullmatch(value.strip())
        if scheme is None:
            return place(preferred, preferred, value, where)
        reference = place(preferred, preferred, scheme.group(3), where)
        return f"{scheme.group(1)}{scheme.group(2)}{reference}"

    args = entry.get("args")
    if isinstance(args, list) and args:
        moved["args"] = _moved_args(args, prefix, place, credential, url_secret)
    headers = entry.get("headers")
    if isinstance(headers, Mapping) and headers:
        kept: dict[str, Any] = {}
        for key, value in headers.items():
            if not (
                isinstance(value, str) and _is_literal(value) and _CREDENTIAL_HEADER.search(key)
            ):
                kept[key] = value
                continue
            kept[key] = credential(key, value, f"headers.{key}")
        moved["headers"] = kept
    return MovedSecrets(moved, to_save, references)


def _moved_args(
    args: list[Any],
    prefix: str,
    place: Callable[[str, str, str, str], str],
    credential: Callable[[str, str, str], str],
    url_secret: Callable[[str, str, str], str],
) -> list[Any]:
    """``args`` with the value of each secret flag (``--api-key v``, ``--token=v``), of each
    credential header given with ``--header`` and each secret of a URL (``mcp-remote
    https://me:pw@host/mcp``) replaced by a reference."""
    moved = list(args)
    for index, arg in enumerate(args):
        if isinstance(arg, str) and "://" in arg and not arg.startswith("-"):
            moved[index] = url_secrets(arg, partial(url_secret, f"args[{index}]"))
            continue
        if not isinstance(arg, str) or not arg.startswith("-"):
            continue
        flag, equals, value = arg.partition("=")
        if equals:
            if _SECRET_FLAG.fullmatch(flag) and _is_literal(value):
                name = f"{prefix}_{_variable_name(flag.lstrip('-'))}"
                moved[index] = f"{flag}={place(name, name, value, f'args[{index}]')}"
            elif "://" in value:
                moved[index] = f"{flag}={url_secrets(value, partial(url_secret, f'args[{index}]'))}"
            continue
        following = args[index + 1] if index + 1 < len(args) else None
        if not isinstance(following, str) or not _is_literal(following):
            continue
        where = f"args[{index + 1}]"
        if flag in _HEADER_FLAGS:
            header = _HEADER.fullmatch(following)
            if (
                header is not None
                and header.group(3)
                and _CREDENTIAL_HEADER.search(header.group(1))
            ):
                shown = credential(header.group(1), header.group(3), where)
                moved[index + 1] = f"{header.group(1)}{header.group(2)}{shown}"
        elif _SECRET_FLAG.fullmatch(flag) and not following.startswith("-"):
            name = f"{prefix}_{_variable_name(flag.lstrip('-'))}"
            moved[index + 1] = place(name, name, following, where)
    return moved


def describe_moved(
    references: Mapping[str, str], dotenv_path: Path, *, prefix: str = "", planned: bool = False
) -> str:
    """The one line saying which values were kept out of config.yaml, and as what (``planned``:
    would be, in a dry run)."""
    items = ", ".join(f"{prefix}{where} -> ${{{name}}}" for where, name in references.items())
    kept = "Secrets that would be kept" if planned else "Secrets kept"
    return f"{kept} out of config.yaml, in {dotenv_path}: {items}."


def _quoted(name: str, value: str) -> str:
    if "\n" in value or "\r" in value:
        raise HermesError(f"the value of {name} spans several lines; .env holds one line each")
    if value and not re.search(r"[\s#'\"]", value):
        return value
    # read_dotenv strips one pair of matching quotes and knows no escapes.
    if '"' not in value:
        return f'"{value}"'
    if "'" not in value:
        return f"'{value}'"
    raise HermesError(f"the value of {name} holds both kinds of quotes; .env cannot keep it")


def save_secrets(path: Path, values: Mapping[str, str]) -> None:
    """Set each ``NAME=value`` in the ``.env`` file ``path``: a line already setting the name is
    replaced in place, a new name is appended; every other line and comment is kept. The file
    is written atomically and is private to the user (0600), whatever its mode was. The
    existing file is read (and checked) first, so a malformed ``.env`` is reported and left as
    it was."""
    for name in values:
        if not _NAME.fullmatch(name):
            raise HermesError(f"not an environment variable name: {name!r}")
    read_dotenv(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        lines = []
    pending = {name: f"{name}={_quoted(name, value)}" for name, value in values.items()}
    kept: list[str] = []
    for line in lines:
        match = _ASSIGNMENT.match(line)
        if match is not None and match.group(1) in values:
            replacement = pending.pop(match.group(1), None)
            if replacement is not None:
                kept.append(replacement)
            continue
        kept.append(line)
    kept.extend(pending.values())
    write_atomically(path, "\n".join(kept) + "\n", mode=0o600)


def save_home_secrets(env: Environment, values: Mapping[str, str]) -> None:
    """:func:`save_secrets` to the home's ``.env``. Refused (:class:`HermesError`, nothing
    written) when that file is the project's while the gate is closed: it is not read then
    (:func:`~hermes_core._dotenv.dotenv_of`), so a secret written there would do nothing but
    wait to be committed and pushed with the repository."""
    path = env.dotenv_path
    if project_refusal(env, path, "the secrets file") is not None:
        raise HermesError(
            f"refusing to write secrets to {path} (in the project {project_root(env)}): it is "
            f"not read while the project gate is closed, and a secret there could be committed "
            f"with the repository; set {PROJECT_GATE_FLAG}=1 if this home is yours, or "
            "HERMES_HOME to a folder outside the project"
        )
    save_secrets(path, values)
