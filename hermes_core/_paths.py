"""Where hermes-core reads and writes, and the one place that reads the process environment."""

from __future__ import annotations

import functools
import hashlib
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

_TRUE_WORDS = frozenset({"1", "true", "yes", "on"})


def is_truthy(value: str | None) -> bool:
    """Whether an environment flag is set: ``1``, ``true``, ``yes`` or ``on`` in any case."""
    return value is not None and value.strip().lower() in _TRUE_WORDS


@dataclass(frozen=True)
class Environment:
    """Everything hermes-core takes from the process: home, working directory, variables, Python.

    Build one with :meth:`from_process` in a program, or directly in tests. No other code in
    hermes-core reads ``os.environ``; it asks an ``Environment``.
    """

    home: Path
    cwd: Path
    variables: Mapping[str, str] = field(default_factory=dict)
    python_version: tuple[int, int] = (sys.version_info.major, sys.version_info.minor)
    config_file: Path | None = None
    """An explicit configuration file (``hermes --config FILE``); else ``HERMES_CONFIG``; else
    ``$HERMES_HOME/config.yaml``."""
    user_home: Path | None = None
    """The user's own home directory (``~``), ``None`` when unknown. Working from it is not
    working in a project: ``./.hermes/plugins`` there is the user's, not a project's."""

    @classmethod
    def from_process(cls, *, config_file: Path | None = None) -> Environment:
        """The environment of the running process (``HERMES_HOME`` defaults to ``~/.hermes``)."""
        variables = MappingProxyType(dict(os.environ))
        try:
            user_home: Path | None = Path.home()
        except RuntimeError:  # no HOME and no passwd entry: only HERMES_HOME names a home
            user_home = None
        home_text = variables.get("HERMES_HOME")
        home = Path(home_text).expanduser() if home_text else (user_home or Path.home()) / ".hermes"
        return cls(
            home=home,
            cwd=Path.cwd(),
            variables=variables,
            config_file=config_file,
            user_home=user_home,
        )

    def get(self, name: str, default: str | None = None) -> str | None:
        """One environment variable, or ``default``."""
        return self.variables.get(name, default)

    def flag(self, name: str) -> bool:
        """Whether a boolean environment flag such as ``HERMES_STRICT_PLUGINS`` is set."""
        return is_truthy(self.variables.get(name))

    @property
    def config_path(self) -> Path:
        """The configuration file: ``config_file``, else ``HERMES_CONFIG``, else
        ``$HERMES_HOME/config.yaml``."""
        if self.config_file is not None:
            return self.config_file
        named = self.variables.get("HERMES_CONFIG")
        if named:
            return Path(named).expanduser()
        return self.home / "config.yaml"

    @property
    def config_named_by(self) -> str | None:
        """What named :attr:`config_path`: ``"--config"`` (``config_file``),
        ``"HERMES_CONFIG"``, or ``None`` for the default ``$HERMES_HOME/config.yaml``."""
        if self.config_file is not None:
            return "--config"
        if self.variables.get("HERMES_CONFIG"):
            return "HERMES_CONFIG"
        return None

    def check_config_file(self) -> None:
        """Raise :class:`~hermes_core._errors.ConfigError` when the configuration file was named
        (``--config``, ``HERMES_CONFIG``) and nothing is there: a mistyped path must not
        silently mean the defaults. Only the default location may be absent."""
        path = self.config_path
        named_by = self.config_named_by
        if named_by is None or os.path.exists(path):
            return
        if os.path.realpath(path) == os.path.realpath(self.home / "config.yaml"):
            return  # the default location, named explicitly
        from hermes_core._errors import ConfigError

        raise ConfigError(f"no such file (named by {named_by})", path=path)

    @property
    def dotenv_path(self) -> Path:
        """The user's secrets file, ``$HERMES_HOME/.env``."""
        return self.home / ".env"

    @property
    def serve_token_path(self) -> Path:
        """The bearer token of ``hermes serve --transport http``, ``$HERMES_HOME/serve-token``
        (0600; ``hermes serve token`` prints it), in :attr:`data_home`: a credential of the
        user's, never in a repository's tree."""
        return self.data_home / "serve-token"

    @property
    def connectors_auth_path(self) -> Path:
        """The hosted connectors' sign-in, ``$HERMES_HOME/auth.json``, in :attr:`data_home`."""
        return self.data_home / "auth.json"

    @property
    def mcp_tokens_dir(self) -> Path:
        """The MCP servers' sign-ins, ``$HERMES_HOME/mcp-auth/NAME.json``, in :attr:`data_home`."""
        return self.data_home / "mcp-auth"

    @property
    def credential_paths(self) -> tuple[Path, ...]:
        """hermes' own credentials, which the file tools neither read nor write: the
        :attr:`dotenv_path`, :attr:`connectors_auth_path`, :attr:`serve_token_path` and
        :attr:`mcp_tokens_dir`; and the same of the user's other homes, which are keys all
        the same: the user's ``~/.hermes`` (when ``HERMES_HOME`` names another) and each
        folder of ``~/.hermes/projects`` (the :attr:`data_home` of a home in a project)."""
        paths = [
            self.dotenv_path,
            self.connectors_auth_path,
            self.serve_token_path,
            self.mcp_tokens_dir,
        ]
        if self.user_home is not None:
            default = self.user_home / ".hermes"
            try:
                gated = sorted(p for p in (default / "projects").iterdir() if p.is_dir())
            except OSError:  # none yet, or out of reach
                gated = []
            for folder in (default, *gated):
                paths += [folder / ".env", folder / "auth.json", folder / "serve-token"]
                paths.append(folder / "mcp-auth")
        return tuple(dict.fromkeys(paths))

    @property
    def hooks_dir(self) -> Path:
        """Hook directories, ``$HERMES_HOME/hooks`` (``<name>/HOOK.yaml`` each)."""
        return self.home / "hooks"

    @property
    def skills_dir(self) -> Path:
        """Skills, ``$HERMES_HOME/skills`` (``<name>/SKILL.md`` each)."""
        return self.home / "skills"

    @property
    def user_plugins_dir(self) -> Path:
        """Directory plugins of the user, ``$HERMES_HOME/plugins``."""
        return self.home / "plugins"

    @property
    def project_plugins_dir(self) -> Path:
        """Directory plugins carried by the project, ``./.hermes/plugins``."""
        return self.cwd / ".hermes" / "plugins"

    @property
    def bundled_plugins_dir(self) -> Path:
        """The bundled plugins: ``HERMES_BUNDLED_PLUGINS`` or the ones shipped with the package."""
        override = self.variables.get("HERMES_BUNDLED_PLUGINS")
        if override:
            return Path(override)
        package_dir = Path(__file__).resolve().parent
        installed = package_dir / "plugins_builtin"
        return installed if installed.is_dir() else package_dir.parent / "plugins_builtin"

    @property
    def nix_store_paths(self) -> list[Path]:
        """Store paths listed in ``HERMES_NIX_PLUGINS`` (an ``os.pathsep`` list)."""
        raw = self.variables.get("HERMES_NIX_PLUGINS", "")
        return [Path(part) for part in raw.split(os.pathsep) if part]

    @functools.cached_property
    def data_home(self) -> Path:
        """Where hermes keeps what it writes on its own (logs, caches, transcripts and their
        index, generated media): the home, except for a home inside the project while the
        project gate is closed (a home committed into a repository, or one a clone planted),
        whose data go to its own folder in the user's ``~/.hermes/projects/<home tag>``
        (:func:`home_tag`; for a home the project links out of it, a tag of the link's own
        path: where it leads may be another project's home, whose folder holds the user's
        conversations there): nothing of the user's lands in the repository's tree, and
        nothing the repository planted there is read back as the user's. The home itself
        when the user's home directory is unknown."""
        from hermes_core._project_trust import gate_is_open

        own = self._own_folder()
        return self.home if own is None or gate_is_open(self) else own

    @property
    def gated_data_home(self) -> Path | None:
        """Where :attr:`data_home` was while the project gate was closed, now that it is
        open (the user's ``~/.hermes/projects/<home tag>`` of a home inside the project): what
        hermes wrote there then is still there, not in the home; ``None`` otherwise."""
        from hermes_core._project_trust import gate_is_open

        return self._own_folder() if gate_is_open(self) else None

    def _own_folder(self) -> Path | None:
        from hermes_core._project_trust import project_owns, project_root

        if self.user_home is None or not project_owns(self, self.home):
            return None
        project = project_root(self)
        real = Path(os.path.realpath(self.home))
        if project is None or real.is_relative_to(project):
            tag = home_tag(self.home)
        else:  # a link out of the project: where it leads may be another project's home
            tag = _tag(os.path.abspath(self.home))
        return self.user_home / ".hermes" / "projects" / tag

    @property
    def cache_dir(self) -> Path:
        """The cache directory: ``HERMES_CACHE_DIR``, else ``cache`` in :attr:`data_home`
        (``$HERMES_HOME/cache``). What it holds is keyed by its content (a manifest by what
        starts its server, an index by its catalog), so homes pointing ``HERMES_CACHE_DIR`` at
        one directory only evict each other's entries."""
        override = self.variables.get("HERMES_CACHE_DIR")
        return Path(override) if override else self.data_home / "cache"

    @property
    def log_dir(self) -> Path:
        """This home's log directory: ``logs`` in :attr:`data_home` (``$HERMES_HOME/logs``),
        or with ``HERMES_LOG_DIR`` this home's own folder in it, ``$HERMES_LOG_DIR/<home
        tag>`` (:func:`home_tag`). The logs hold every call's arguments and the servers'
        output: two homes never share one, even when ``HERMES_LOG_DIR`` names one directory
        for both."""
        override = self.variables.get("HERMES_LOG_DIR")
        return Path(override) / home_tag(self.home) if override else self.data_home / "logs"


def home_tag(home: Path) -> str:
    """The name of ``home``'s folder in a log directory that homes share: the home folder's
    name (no leading dot) and a hash of its real path, e.g. ``hermes-3f2a9c1b7d4e``."""
    return _tag(os.path.realpath(home))


def _tag(path: str) -> str:
    digest = hashlib.sha256(os.fsencode(path)).hexdigest()[:12]
    return f"{os.path.basename(path).lstrip('.') or 'home'}-{digest}"
