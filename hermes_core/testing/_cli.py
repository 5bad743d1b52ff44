"""The real ``hermes`` command, run as a subprocess in temporary places, for tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from hermes_core._paths import Environment, home_tag

__all__ = ["HermesCli"]


class HermesCli:
    """The real ``hermes`` command (``python -m hermes_core``) run as a subprocess in temporary
    places under ``root``: ``home`` (``HERMES_HOME``), ``work`` (the working directory),
    ``user_home`` (``HOME``), and ``root/logs`` and ``root/cache`` (``HERMES_LOG_DIR``,
    ``HERMES_CACHE_DIR``; the logs go to this home's folder in ``root/logs``, :attr:`log_dir`).
    ``home`` and ``work`` are created; ``user_home`` is not.

    With ``config_file`` every command starts with ``--config FILE``; without it hermes reads
    ``home/config.yaml``. Either way :attr:`config` is the file it reads.
    """

    def __init__(
        self,
        root: Path,
        *,
        home: Path | None = None,
        work: Path | None = None,
        user_home: Path | None = None,
        config_file: Path | None = None,
    ) -> None:
        self.root = root
        self.home = home or root / "hermes-home"
        self.work = work or root / "project"
        self.user_home = user_home or root / "user-home"
        self.config_file = config_file
        self.home.mkdir(parents=True, exist_ok=True)
        self.work.mkdir(parents=True, exist_ok=True)

    def __repr__(self) -> str:
        return f"HermesCli(root={self.root!r})"

    @property
    def config(self) -> Path:
        """The configuration file the command reads: ``config_file`` or ``home/config.yaml``."""
        return self.config_file or self.home / "config.yaml"

    @property
    def log_dir(self) -> Path:
        """Where the command writes its logs (``activity.jsonl``, ``mcp-NAME.log``): this
        home's folder in ``HERMES_LOG_DIR`` (``root/logs``), as
        :attr:`~hermes_core._paths.Environment.log_dir` names it."""
        return self.root / "logs" / home_tag(self.home)

    @property
    def cache_dir(self) -> Path:
        """``HERMES_CACHE_DIR``: ``root/cache``."""
        return self.root / "cache"

    def variables(self, **extra: str) -> dict[str, str]:
        """The whole environment of the subprocess: ``PATH`` of this process, ``HOME``, the
        temporary ``HERMES_*`` locations and ``HERMES_STRICT_PLUGINS=1``, then ``extra`` (which
        may replace any of them). Nothing else leaks in from this process."""
        return {
            "PATH": Environment.from_process().get("PATH") or os.defpath,
            "HOME": str(self.user_home),
            "HERMES_HOME": str(self.home),
            "HERMES_LOG_DIR": str(self.root / "logs"),
            "HERMES_CACHE_DIR": str(self.cache_dir),
            "HERMES_STRICT_PLUGINS": "1",
            **extra,
        }

    def command(self, *args: str) -> list[str]:
        """``[python, "-m", "hermes_core", ("--config", FILE,) *args]``, e.g. to start with
        :class:`subprocess.Popen` or hand to an MCP client."""
        config = ["--config", str(self.config_file)] if self.config_file is not None else []
        return [sys.executable, "-m", "hermes_core", *config, *args]

    def run(
        self,
        *args: str,
        ok: bool = True,
        input: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        """Run ``hermes *args`` in :attr:`work` with ``env`` (default :meth:`variables`) and
        ``input`` on stdin (else an empty stdin, never a terminal), capturing stdout and stderr
        as text. With ``ok`` a non-zero exit fails the test, showing the command, its status
        and its stderr. ``timeout`` (seconds) only guards against a hung command."""
        __tracebackhide__ = True  # a failure points at the test's line, not at this helper
        done = subprocess.run(
            self.command(*args),
            cwd=self.work,
            env=dict(env) if env is not None else self.variables(),
            input=input,
            # Never the terminal pytest runs in: hermes must see no TTY unless a test gives one.
            stdin=subprocess.DEVNULL if input is None else None,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if ok and done.returncode != 0:
            pytest.fail(
                f"hermes {' '.join(args)} exited with {done.returncode}; stderr:\n{done.stderr}"
            )
        return done

    def start(
        self,
        *args: str,
        stdin: int = subprocess.DEVNULL,
        stdout: int = subprocess.PIPE,
        stderr: int = subprocess.PIPE,
        env: Mapping[str, str] | None = None,
    ) -> subprocess.Popen[str]:
        """Start ``hermes *args`` in :attr:`work` with ``env`` (default :meth:`variables`) and
        return it running: text streams, stdout and stderr piped and stdin empty unless given
        (``subprocess.PIPE`` to write to it). The caller waits for it and ends it."""
        return subprocess.Popen(
            self.command(*args),
            cwd=self.work,
            env=dict(env) if env is not None else self.variables(),
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            text=True,
        )

    def json(
        self,
        *args: str,
        input: str | None = None,
        env: Mapping[str, str] | None = None,
        exit_code: int = 0,
    ) -> Any:
        """Run ``hermes *args``, which must exit with ``exit_code`` (a list command exits 1
        after showing a broken row), and parse its stdout as JSON."""
        __tracebackhide__ = True
        done = self.run(*args, input=input, env=env, ok=False)
        if done.returncode != exit_code:
            pytest.fail(
                f"hermes {' '.join(args)} exited with {done.returncode}, not {exit_code};"
                f" stderr:\n{done.stderr}"
            )
        return json.loads(done.stdout)
