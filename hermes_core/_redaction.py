"""Redaction: secret-named keys and secret-looking strings replaced before anything is logged.

The one place for the rule (the activity log's arguments and messages go through it): values
under a key naming a secret, credentials recognisable by their shape, values given to a secret's
name (``PGPASSWORD=x``, ``--api-key x``, ``X-Api-Key: x``), the password options of the commands
that take one, a URL query key naming a secret, and URLs whose path is the credential.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import regex

REDACTED: Final = "[redacted]"

_SECRET_KEY: Final = re.compile(
    r"(api[_-]?key|access[_-]?key|token|secret|passw(or)?d|passphrase|credential"
    r"|auth(?!ors?(?![a-z]))|cookie|private[_-]?key|session[_-]?key)",
    re.IGNORECASE,
)
"""A key naming a secret: ``api_key``, ``github_token``, ``Authorization``, not ``author``."""


def _alternation(*alternatives: str) -> str:
    """A regex matching any of ``alternatives`` (each starts with a plain character) that is not
    right after a letter or a digit (``task-...`` holds no ``sk-`` key), written to start with a
    character class of their first characters.

    Why: ``re`` jumps straight to the next position where a leading class matches, while an
    alternation is tried at every position of the text: on a long file the class makes the
    pattern twice as fast.
    """
    rests: dict[str, list[str]] = {}
    for alternative in alternatives:
        rests.setdefault(alternative[0], []).append(alternative[1:])
    branches = "|".join(f"(?<={first})(?:{'|'.join(rest)})" for first, rest in rests.items())
    return f"[{''.join(rests)}](?<![A-Za-z0-9].)(?:{branches})"


_SECRET_VALUE: Final = re.compile(
    _alternation(
        "sk-[A-Za-z0-9_-]{16,}",
        "sk_(?:live|test)_[A-Za-z0-9]{10,}",
        "rk_(?:live|test)_[A-Za-z0-9]{10,}",
        "whsec_[A-Za-z0-9]{20,}",
        "gh[pousr]_[A-Za-z0-9]{20,}",
        "github_pat_[A-Za-z0-9_]{20,}",
        "glpat-[A-Za-z0-9_-]{20,}",
        "hf_[A-Za-z0-9]{30,}",
        "npm_[A-Za-z0-9]{36}",
        "pypi-AgE[A-Za-z0-9_-]{50,}",
        "xox[abprs]-[A-Za-z0-9-]{10,}",
        "AKIA[0-9A-Z]{16}",
        "AIza[0-9A-Za-z_-]{30,}",
        r"hv[sbr]\.[A-Za-z0-9_-]{24,}",
        r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}",
        "shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
        "xapp-[0-9]-[A-Za-z0-9-]{10,}",
        # Only where a run of its characters starts: the '.' was looked for after every
        # "eyJ" of a run, and 200,000 characters of "-eyJ" took 7 s.
        r"eyJ(?<![A-Za-z0-9_-]eyJ)[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
        r"B(?i:earer|asic)\s+[A-Za-z0-9._~+/=-]{12,}",
        r"b(?i:earer|asic)\s+[A-Za-z0-9._~+/=-]{12,}",
    )
)
"""Credentials recognisable by their shape: OpenAI/Anthropic ``sk-``, Stripe ``sk_live_``,
``sk_test_``, ``rk_live_`` and ``whsec_``, GitHub, GitLab ``glpat-``, Hugging Face ``hf_``, npm,
PyPI, Slack ``xox?-`` and ``xapp-``, AWS ``AKIA``, Google ``AIza``, Vault ``hvs.``, SendGrid
``SG.``, Shopify ``shpat_``, JWTs (beginning a run of base64url characters), and
``Bearer``/``Basic`` credentials. Each shape is found in time linear in the text's length."""

_PRIVATE_KEY_BLOCK: Final = re.compile(
    r"-----BEGIN ([A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?)-----.*?(?:-----END \1-----|\Z)", re.DOTALL
)
"""A whole private key block, BEGIN line to END line (to the end of the text when cut off)."""

# The rules that find a secret by the name given to it. The three written with ``regex`` start
# at the ``=`` or ``:`` and look back for the name (``re`` has no variable-length lookbehind):
# starting at the rarer punctuation keeps them fast on long text.

_SECRET_WORDS: Final = ("key", "token", "secret", "pass", "credential", "auth", "cookie", "bearer")
"""Every rule of a secret's name needs one of these words (in any case) in the text."""

_NAME_END: Final = (
    r"(?:api[_-]?key|access[_-]?key|secret[_-]?key|private[_-]?key|session[_-]?key|token|secret"
    r"|passw(?:or)?d|passphrase|credentials?|authorization|auth|cookie|bearer)"
)
"""How the name of a secret ends, in ``NAME: value`` and ``--NAME value`` (``max_tokens``,
``--token-file`` and ``author`` do not end so)."""

_VALUE: Final = r"(\"[^\"]*\"|'[^']*'|[^\s;&|'\"]+)"
"""A value in a command: quoted, or up to a space, a quote or a shell operator."""

_SECRET_ASSIGNMENT: Final = (
    r"(?i)(?<=(?:key|token|secret|pass|passw(?:or)?d|passphrase|credentials?|auth)[ \t]*)"
    r"(?<![?&][A-Za-z0-9_.-]*)(=[ \t]*)" + _VALUE
)
"""``export OPENAI_API_KEY=abcd``, ``PGPASSWORD=x psql``, ``--password=x``, ``DB_PASS=x``,
``api_key = "x"``: a name ending with a secret word, ``=``, the value. Not a URL's query key
(``?monkey=1``), which :data:`_QUERY_PAIR` judges word by word: a variable's name glues its
words (``PGPASSWORD``), and a value hidden in a log for nothing costs less than one shown."""

_SECRET_LINE: Final = (
    r"(?im)(?<=^[ \t]*(?:-[ \t]+)?[\"']?[A-Za-z0-9_.-]*" + _NAME_END + r"[\"']?[ \t]*)"
    r"(:[ \t]+)([^\s#][^\n]*)"
)
"""A YAML-style line that begins with a secret's name (``  db_password: value``,
``- token: value``): the rest of the line goes, spaces and all."""

_SECRET_HEADER: Final = (
    r"(?i)(?<=" + _NAME_END + r"[\"']?[ \t]*)(:[ \t]*)"
    r"(\"[^\"\n]*\"|'[^'\n]*'|(?:(?:bearer|basic|token|digest)[ \t]+)?[^\s\"',;})]+)"
)
"""``X-Api-Key: value``, ``Authorization: Bearer value``, ``"password": "value"`` in text."""

_SECRET_FLAG: Final = re.compile(
    r"(?i)(-(?<!\S-)-?(?:[A-Za-z0-9]+[_-])*?" + _NAME_END + r"[ \t]+)(?![-<>|;&])" + _VALUE
)
"""``--api-key value``, ``--with-token value``, ``--password value``: a flag (after a space or at
the start) whose name ends with a secret word, then its value. ``-p value`` is not one:
``mkdir -p``, ``ssh -p 22`` and ``git add -p`` mean something else; see
:data:`_PASSWORD_OPTIONS`."""


def _password_option(command: str, option: str) -> re.Pattern[str]:
    """``option`` and its value, within 200 characters after ``command`` (unbounded, a text of
    many ``mysql`` words took quadratic time)."""
    return re.compile(rf"(\b(?:{command})\b[^\n;|&]{{0,200}}?\s{option})" + _VALUE)


_PASSWORD_OPTIONS: Final = (
    ("mysql", _password_option(r"mysql(?:dump|admin|sh)?", "-p")),
    ("7z", _password_option(r"7z[ar]?", "-p")),
    ("sshpass", _password_option("sshpass", r"-p[ \t]*")),
    (
        "login",
        _password_option(
            r"(?:docker|podman|nerdctl|buildah|skopeo|oras|helm[ \t]+registry)[ \t]+login",
            r"-p[ \t]*",
        ),
    ),
    ("twine", _password_option(r"twine[ \t]+(?:upload|register)", r"-p[ \t]*")),
    ("az", _password_option(r"az[ \t]+login", r"-p[ \t]*")),
    ("redis-cli", _password_option("redis-cli", r"-a[ \t]*")),
    ("ldap", _password_option("ldap[a-z]+", r"-w[ \t]*")),
    ("zip", _password_option("(?:un)?zip", r"-P[ \t]*")),
)
"""``(word, pattern)``: short options that give a password to these commands only, each tried
when its word is in the text: ``mysql -pSECRET`` (attached; ``mysql -p db`` asks for it),
``7z a -pSECRET``, ``sshpass -p SECRET``, ``docker login -p SECRET`` (podman, nerdctl, buildah,
skopeo, oras, ``helm registry login``), ``twine upload -p``, ``az login -p``, ``redis-cli -a``,
``ldapsearch -w``, ``zip -P``. Elsewhere ``-p`` is a port (``docker run -p 8080:80``,
``ssh -p 22``), ``mkdir -p`` or ``git add -p``."""

_PASSWORD_OPTION_GATE: Final = re.compile(r"-(?<=\s-)[pPaw]")
"""What each of :data:`_PASSWORD_OPTIONS` needs, searched once before any is tried (starting at
the ``-``, rarer than a space, makes it 20 times faster on source code)."""

_OPENSSL_PASS: Final = re.compile(r"(-pass(?:in|out)?[ \t]+pass:)" + _VALUE)
"""``openssl ... -pass pass:SECRET`` (``env:NAME`` and ``file:PATH`` name no secret)."""

_CREDENTIAL_URLS: Final = (
    (
        "hooks.slack.com/",
        re.compile(r"(hooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9_@./-]+"),
    ),
    ("/api/webhooks/", re.compile(r"(discord(?:app)?\.com/api/webhooks/)[A-Za-z0-9_@./-]+")),
    (".webhook.office.com/", re.compile(r"(\.webhook\.office\.com/webhookb2/)[A-Za-z0-9_@./-]+")),
    ("api.telegram.org/", re.compile(r"(api\.telegram\.org/(?:file/)?bot)[0-9]+:[A-Za-z0-9_-]+")),
)
"""``(marker, pattern)``: URLs whose path is the credential, each tried when its marker is in
the text: Slack and Discord webhooks, Microsoft Teams incoming webhooks, and a Telegram bot's
token in the Bot API's URL (its method, ``/sendMessage``, stays)."""

_URL_CREDENTIALS: Final = re.compile(r"(://[^/\s:@]*):([^/\s@]+)@")
_URL_PASSWORD: Final = re.compile(
    r"^\s*((?:[A-Za-z][A-Za-z0-9+.-]*://)?[^/?#\s:@]*):([^/?#\s]*)@(?=[^/?#\s@]*(?:[/?#]|$))"
)
"""The user part of a URL that is all of a text (:func:`shown_url`), scheme or not: its
password runs to the last ``@`` before the path (``p@ss`` is one, as ``urlsplit`` reads it)."""
_QUERY_PAIR: Final = re.compile(r"(?<=[?&])([A-Za-z][A-Za-z0-9_.-]*)=([^&\s'\"#<>`]+)")
"""A ``key=value`` of a URL's query in text, scheme or not (``/api?token=x``)."""
_KEY_WORD: Final = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")
"""A word of a key: ``api_key``, ``apiKey``, ``APIKey``, ``X-Amz-Signature`` split as said."""
_SECRET_KEY_WORDS: Final = frozenset(
    {
        *("key", "token", "secret", "password", "passwd", "pwd", "pass", "passphrase"),
        *("credential", "credentials", "auth", "authorization", "jwt", "session", "sig"),
        *("signature", "cookie"),
    }
)
_KEY_WORD_PREFIXES: Final = (
    *("api", "access", "auth", "client", "private", "refresh", "session", "secret", "oauth"),
    *("app", "bot", "user", "admin", "db", "master", "id", "bearer"),
)
"""What a secret word is glued to in a lower-case key: ``apikey``, ``accesstoken``,
``secretkey``, ``dbpass``."""
_GLUED_SECRET_KEYS: Final = frozenset({"sessionid", "jsessionid", "phpsessid"})
"""Session cookies' names, whole words of one key (Django's, Java's, PHP's)."""
_ABOUT_A_SECRET: Final = frozenset(
    {
        *("count", "type", "hint", "length", "size", "limit", "expiry", "expires", "ttl"),
        *("name", "url", "uri", "endpoint", "format", "version", "method", "mode"),
    }
)
"""A last word that makes the value something told of a secret, not the secret:
``session_count``, ``token_type``, ``token_type_hint``, ``auth_method``, ``token_url``."""


@functools.lru_cache(maxsize=1024)
def secret_query_key(key: str) -> bool:
    """Whether the value of the URL query key ``key`` is a secret: one of its words (split on
    ``_``, ``-``, ``.`` and camelCase) is a secret word (``key``, ``token``, ``secret``,
    ``password``, ``passwd``, ``pwd``, ``pass``, ``passphrase``, ``credential(s)``, ``auth``,
    ``authorization``, ``jwt``, ``session``, ``sig``, ``signature``, ``cookie``), or one glued
    to one of :data:`_KEY_WORD_PREFIXES` (``apikey``, ``secretkey``, ``dbpass``), or the key is
    ``code`` (an Azure Functions key, an OAuth code). A word that only ends like one is none:
    ``monkey``, ``bypass``, ``max_tokens``, ``zip_code``; nor a key whose last word says what
    of a secret its value tells (``session_count``, ``token_type``, ``auth_method``). A
    session cookie's name (``sessionid``, ``PHPSESSID``) is one."""
    if key.lower() == "code":
        return True
    words = [word.lower() for word in _KEY_WORD.findall(key)]
    if len(words) > 1 and words[-1] in _ABOUT_A_SECRET:
        return False
    for word in words:
        if word in _SECRET_KEY_WORDS or word in _GLUED_SECRET_KEYS:
            return True
        for prefix in _KEY_WORD_PREFIXES:
            if word.startswith(prefix) and word[len(prefix) :] in _SECRET_KEY_WORDS:
                return True
    return False


_CURL_USER: Final = re.compile(r"(-(?<!\S-)(?:u|-user)(?:\s+|=)?[\"']?[^\s:\"']+):([^\s\"']+)")

MAX_DEPTH: Final = 64
"""Data nested deeper than this is shown as :data:`TOO_DEEP` (it cannot be a real argument,
and redacting it must not overflow the stack)."""
TOO_DEEP: Final = "[nested too deeply]"


def redact(value: Any, _depth: int = 0) -> Any:
    """A copy of ``value`` where secret-named keys and secret-looking strings are replaced.

    A key is secret-named when it contains ``key``-like words (``api_key``, ``token``,
    ``password``, ``secret``, ``auth``...); a string is secret-looking when it holds a known
    credential shape (``sk-...``, ``ghp_...``, ``glpat-...``, a JWT, ``Bearer ...``, a whole
    private key block), or gives one to a secret name (``PGPASSWORD=x``, ``--api-key x``,
    ``X-Api-Key: x``, a YAML line ``password: x``, ``mysql -px``, ``docker login -p x``,
    ``https://user:pass@``, ``curl -u u:p``, a query key naming a secret, ``?token=x``,
    ``?sig=x``: :func:`secret_query_key`), or is a URL whose path is the credential (Slack,
    Discord and Teams webhooks, Telegram bot URLs). A string
    holding a JSON object or array is parsed and redacted as data. Data nested deeper than
    :data:`MAX_DEPTH` becomes :data:`TOO_DEEP`: it cannot overflow the stack.
    """
    if isinstance(value, str):
        return redact_text(value)
    if value is None or isinstance(value, int | float):  # before the slower ``Mapping`` check
        return value
    if isinstance(value, Mapping):
        if _depth >= MAX_DEPTH:
            return TOO_DEEP
        return {
            key: REDACTED if hides_value(key, item) else redact(item, _depth + 1)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple | set | frozenset):
        if _depth >= MAX_DEPTH:
            return TOO_DEEP
        return [redact(item, _depth + 1) for item in value]
    return value


def hides_value(key: object, value: Any) -> bool:
    """Whether ``value``, found under ``key`` in a mapping, is replaced whole by
    :data:`REDACTED`: the key names a secret and the value is not empty."""
    return _is_secret_key(key) and not _is_blank(value)


@functools.lru_cache(maxsize=1024)
def _is_secret_key(key: object) -> bool:
    # Cached: tools are called with the same few argument names over and over.
    return isinstance(key, str) and _SECRET_KEY.search(key) is not None


def _is_blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value)


@functools.cache
def _compiled(pattern: str) -> regex.Pattern[str]:
    """``pattern`` (one whose look-behind varies in width, which ``re`` refuses) compiled with
    the ``regex`` package, imported only once a text names a secret: its import and these
    compilations cost 25 ms, which every command that logs would otherwise pay at start."""
    import regex

    return regex.compile(pattern)


def redact_text(text: str) -> str:
    """``text`` with what :func:`redact` finds in a string replaced (a JSON object or array in
    it is parsed and redacted as data)."""
    stripped = text.strip()
    if stripped[:1] in ("{", "[") and stripped[-1:] in ("}", "]"):
        try:
            parsed = json.loads(stripped)
        except (ValueError, RecursionError):
            pass
        else:
            cleaned = redact(parsed)
            if cleaned != parsed:
                return json.dumps(cleaned, ensure_ascii=False)
    # Cheap membership tests first: most arguments hold none of these, and each regex walks the
    # whole text.
    if len(text) >= 16:
        if "PRIVATE KEY" in text:
            text = _PRIVATE_KEY_BLOCK.sub(REDACTED, text)
        text = _SECRET_VALUE.sub(REDACTED, text)
    assigns, names, flags = "=" in text, ":" in text, "-" in text
    if (assigns or names or flags) and _names_a_secret(text):
        if assigns:
            text = _compiled(_SECRET_ASSIGNMENT).sub(_keep_name, text)
        if names:
            text = _compiled(_SECRET_LINE).sub(_keep_name, text)
            text = _compiled(_SECRET_HEADER).sub(_keep_name, text)
        if flags:
            text = _SECRET_FLAG.sub(_keep_name, text)
    if flags and _PASSWORD_OPTION_GATE.search(text) is not None:
        for word, pattern in _PASSWORD_OPTIONS:
            if word in text:
                text = pattern.sub(_keep_name, text)
        if "pass:" in text:
            text = _OPENSSL_PASS.sub(_keep_name, text)
    if "-u" in text:
        text = _CURL_USER.sub(_keep_user, text)
    if "://" in text:
        text = _URL_CREDENTIALS.sub(_keep_url_user, text)
    if assigns and ("?" in text or "&" in text):
        text = _QUERY_PAIR.sub(_keep_query_key, text)
    if "hook" in text or "telegram" in text:
        for marker, pattern in _CREDENTIAL_URLS:
            if marker in text:
                text = pattern.sub(_keep_name, text)
    return text


# Functions, not ``\1`` templates: ``re`` parses a template on every call, matched or not,
# which costs more than the search on short text.


def _keep_name(match: re.Match[str] | regex.Match[str]) -> str:
    return match.group(1) + REDACTED


def _keep_query_key(match: re.Match[str]) -> str:
    if not secret_query_key(match.group(1)):
        return match.group()
    return f"{match.group(1)}={REDACTED}"


def _keep_user(match: re.Match[str]) -> str:
    return f"{match.group(1)}:{REDACTED}"


def _keep_url_user(match: re.Match[str]) -> str:
    return f"{match.group(1)}:{REDACTED}@"


def _names_a_secret(text: str) -> bool:
    lowered = text.lower()
    return any(word in lowered for word in _SECRET_WORDS)


def url_secrets(url: str, replace: Callable[[str, str], str]) -> str:
    """``url`` with each of its secrets replaced by ``replace(name, value)``: the password of
    its user part (``name`` is ``password``), with or without a scheme, and the value of each
    query key that names a secret (:func:`secret_query_key`; ``name`` is the key: ``token``,
    ``api_key``, ``access_token``, ``session``, ``sig``...). The one rule of what in a URL is a
    secret: :func:`shown_url` hides them, ``hermes mcp add`` moves them to ``.env``, an MCP
    sign-in is kept without them.
    """
    rest, hash_mark, fragment = url.partition("#")  # a user part holds neither ``#`` nor ``?``
    base, question_mark, query = rest.partition("?")
    found = _URL_PASSWORD.match(base)
    if found is not None:
        secret = replace("password", found.group(2))
        base = f"{base[: found.start(2)]}{secret}{base[found.end(2) :]}"
    if query:
        pairs = []
        for pair in query.split("&"):
            key, equals, value = pair.partition("=")
            if value and secret_query_key(key):
                pair = f"{key}{equals}{replace(key, value)}"
            pairs.append(pair)
        query = "&".join(pairs)
    return f"{base}{question_mark}{query}{hash_mark}{fragment}"


def shown_url(url: str) -> str:
    """``url`` as it may be shown in a message, a log line or a file hermes writes: its secrets
    (:func:`url_secrets`: the password of its user part, ``?token=``...) replaced by
    :data:`REDACTED` (the user kept, as :func:`redact_text` does), with or without a scheme
    (``user:pass@host/v1``, refused as no URL, is quoted so too), and whatever else
    :func:`redact_text` finds (a webhook's path)."""
    return redact_text(url_secrets(url, _redacted))


def _redacted(_name: str, _value: str) -> str:
    return REDACTED


_URL_IN_TEXT: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]+")


def urls_shown_in(text: str) -> str:
    """``text`` with the secrets of every URL in it (:func:`url_secrets`) replaced by
    :data:`REDACTED`, and nothing else changed: for a log line, where a library names the URL
    it requests (``HTTP Request: POST https://user:pass@host/v1``)."""
    if "://" not in text:
        return text
    return _URL_IN_TEXT.sub(lambda found: url_secrets(found.group(), _redacted), text)


def shown_urls(value: Any) -> Any:
    """A copy of ``value`` (JSON-like data: a configuration as ``hermes config show`` prints it)
    where every string holding a URL goes through :func:`shown_url`; nothing else changes."""
    if isinstance(value, str):
        return shown_url(value) if "://" in value else value
    if isinstance(value, Mapping):
        return {key: shown_urls(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [shown_urls(item) for item in value]
    return value
