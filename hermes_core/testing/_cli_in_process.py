"""``InProcessCli``: the ``hermes`` click group run in the test's own process, with what a
subprocess of :class:`~hermes_core.testing.HermesCli` would get: its environment (nothing else),
its working directory, an empty stdin or ``input``, stdout and stderr captured apart, the exit
status, and the interpreter's default warning filters.

A subprocess pays the interpreter's start, hermes' imports and the plugins' at every command;
in process they are paid once per test process. ``PYTHONPATH`` is put first on ``sys.path`` for
the command, as an interpreter puts it before its site-packages. What only a new interpreter can
show stays in subprocess tests: the other ``PYTHON*`` variables (a command given one runs as a
subprocess), a terminal, signals, the start-up itself.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import logging
import os
import signal
import subprocess
import sys
import traceback
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from click.testing import CliRunner

from hermes_core._gc_pause import end_start_pause
from hermes_core.testing._cli import HermesCli
from hermes_core.testing._files import forget_modules_under


class InProcessCli(HermesCli):
    """A :class:`~hermes_core.testing.HermesCli` whose :meth:`run` calls ``hermes`` in this
    process (``hermes_core._cli.main``) and returns the same
    :class:`subprocess.CompletedProcess`. :meth:`subprocess_run` still starts the real command.

    Between commands the process is put back as it was: ``os.environ``, the working directory,
    ``sys.path``, the root logger, the SIGINT/SIGTERM handlers; the modules imported from under
    ``root`` (the test's plugins) are forgotten, so the next command imports them afresh as a
    new process would.
    """

    def subprocess_run(
        self,
        *args: str,
        ok: bool = True,
        input: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        """The real ``hermes`` as a subprocess: :meth:`HermesCli.run`."""
        __tracebackhide__ = True
        return super().run(*args, ok=ok, input=input, env=env, timeout=timeout)

    def run(
        self,
        *args: str,
        ok: bool = True,
        input: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        """``hermes *args`` in this process, as :meth:`HermesCli.run` runs it in a subprocess
        (``timeout`` is left to pytest-timeout). ``PYTHONPATH`` in ``env`` goes first on
        ``sys.path``; with another ``PYTHON*`` variable, which only a new interpreter reads, it
        runs as a subprocess."""
        __tracebackhide__ = True
        variables = dict(env) if env is not None else self.variables()
        if any(name.startswith("PYTHON") and name != "PYTHONPATH" for name in variables):
            return self.subprocess_run(*args, ok=ok, input=input, env=variables, timeout=timeout)
        config = ["--config", str(self.config_file)] if self.config_file is not None else []
        with self._isolated(variables):
            status, stdout, stderr = _invoke([*config, *args], input)
        if ok and status != 0:
            pytest.fail(f"hermes {' '.join(args)} exited with {status}; stderr:\n{stderr}")
        return subprocess.CompletedProcess(self.command(*args), status, stdout, stderr)

    @contextlib.contextmanager
    def _isolated(self, variables: dict[str, str]) -> Iterator[None]:
        saved_environ = dict(os.environ)
        saved_cwd = os.getcwd()
        saved_path = list(sys.path)
        root = logging.getLogger()
        saved_logging = (list(root.handlers), root.level)
        saved_signals = {n: signal.getsignal(n) for n in (signal.SIGINT, signal.SIGTERM)}
        os.environ.clear()
        os.environ.update(variables)
        os.chdir(self.work)
        # An interpreter puts these before its site-packages; the worker's own path follows.
        python_path = variables.get("PYTHONPATH", "")
        sys.path[:0] = [os.path.abspath(entry) for entry in python_path.split(os.pathsep) if entry]
        importlib.invalidate_caches()  # plugin files written since the last command
        # hermes freezes the heap where its process ends (and after a server's start): this one
        # goes on, so the command freezes nothing, and what the test process froze (its
        # collection, conftest.py) stays frozen for its collections to skip.
        freeze = gc.freeze
        gc.freeze = _nothing_frozen
        try:
            with warnings.catch_warnings():
                # A new interpreter's filters, not pytest's "error".
                warnings.resetwarnings()
                for category in (DeprecationWarning, PendingDeprecationWarning, ResourceWarning):
                    warnings.simplefilter("ignore", category)
                yield
        finally:
            os.environ.clear()
            os.environ.update(saved_environ)
            os.chdir(saved_cwd)
            sys.path[:] = saved_path
            root.handlers[:] = saved_logging[0]
            root.setLevel(saved_logging[1])
            for number, handler in saved_signals.items():
                signal.signal(number, handler)
            forget_modules_under(self.root)
            # A serve stopped before it served ended its process with the collector paused
            # for its start; this one goes on, with the collector as a new process has it.
            end_start_pause()
            gc.freeze = freeze


def _nothing_frozen() -> None:
    """``gc.freeze`` while a command runs in process."""


def _invoke(argv: list[str], input: str | None) -> tuple[int, str, str]:
    """``hermes_core._cli.main(argv)`` with click's stream isolation: (status, stdout,
    stderr). An exception that escapes prints its traceback and exits 1, as in a process."""
    from hermes_core._cli import main

    runner = CliRunner()
    with runner.isolation(input=input or "") as (out, err, _):
        status: Any = 0
        try:
            main(argv)
        except SystemExit as exc:
            status = exc.code
        except Exception:  # what an uncaught exception does to a process
            traceback.print_exc(file=sys.stderr)
            status = 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
        if status is None:
            status = 0
        elif not isinstance(status, int):  # sys.exit("message")
            print(status, file=sys.stderr)
            sys.stderr.flush()
            status = 1
        return status, out.getvalue().decode(), err.getvalue().decode()
