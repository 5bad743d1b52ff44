"""The ``hermes`` command.

Subcommands are imported only when they run, so ``hermes --version`` and ``hermes plugins list``
never pay for the MCP SDK, numpy or jsonschema. ``hermes --help`` lists the commands of enabled
plugins from a cache (:mod:`hermes_core._cli.plugin_commands`), so it reads neither the
configuration's models nor the plugins unless what decides them changed.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import gc
import importlib
import io
import os
import sys
import threading
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from hermes_core._errors import HermesError
from hermes_core._version import __version__

if TYPE_CHECKING:
    from hermes_core._plugins.records import PluginRecord

# name -> "module:attribute" of a click command, imported on first use.
SUBCOMMANDS: dict[str, str] = {
    "acp": "hermes_core._cli.acp_cmd:acp",
    "chat": "hermes_core._cli.chat_cmd:chat",
    "config": "hermes_core._cli.config_cmd:config",
    "connectors": "hermes_core._cli.connectors_cmd:connectors",
    "cron": "hermes_core._cli.cron_cmd:cron",
    "doctor": "hermes_core._cli.doctor_cmd:doctor",
    "eval": "hermes_core._cli.eval_cmd:eval_group",
    "hooks": "hermes_core._cli.hooks_cmd:hooks",
    "import-agent": "hermes_core._cli.import_cmd:import_agent",
    "mcp": "hermes_core._cli.mcp_cmd:mcp",
    "memory": "hermes_core._cli.memory_cmd:memory",
    "plugins": "hermes_core._cli.plugins_cmd:plugins",
    "run": "hermes_core._cli.run_cmd:run",
    "serve": "hermes_core._cli.serve_cmd:serve",
    "sessions": "hermes_core._cli.sessions_cmd:sessions",
    "skills": "hermes_core._cli.skills_cmd:skills",
    "tools": "hermes_core._cli.tools_cmd:tools",
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported when they are used."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        names = {*SUBCOMMANDS, *super().list_commands(ctx)}
        # Help stays available with a broken config or plugin; running a command says why.
        with contextlib.suppress(HermesError):
            names |= set(_plugin_commands(ctx))
        return sorted(names)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The built-in commands and those of enabled plugins, with their short help; the
        plugins' come from the cache when it is still valid (see :mod:`plugin_commands`)."""
        shown: dict[str, click.Command] = {}
        for name in SUBCOMMANDS:
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                shown[name] = command
        with contextlib.suppress(HermesError):  # help stays available with a broken config
            for name, text in _plugin_help(ctx).items():
                # Only its help is needed here: a stand-in, the real one loads when it runs.
                shown.setdefault(name, click.Command(name, help=text))
        if not shown:
            return
        limit = formatter.width - 6 - max(len(name) for name in shown)
        rows = [(name, shown[name].get_short_help_str(limit)) for name in sorted(shown)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """As click does, and an unknown command names the closest known one."""
        name = click.utils.make_str(args[0])
        if (
            not ctx.resilient_parsing
            and not name.startswith("-")
            and self.get_command(ctx, name) is None
        ):
            from hermes_core._cli.output import did_you_mean

            hint = did_you_mean(name, self.list_commands(ctx))
            ctx.fail(f"No such command {name!r}.{hint}{_plugin_not_loaded(ctx, name, hint)}")
        return super().resolve_command(ctx, args)

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        """As click does, and a usage error in hermes' own options has its usage line."""
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as error:
            _find_command(error)
            raise

    def invoke(self, ctx: click.Context) -> Any:
        """As click does, a usage error of a command has its usage line, and ``-v`` given after
        a command says it goes before it."""
        try:
            return super().invoke(ctx)
        except click.NoSuchOption as error:
            where = error.ctx
            if error.option_name in ("-v", "--verbose") and where is not None and where is not ctx:
                root, command = where.command_path.split(" ", 1)
                said = (
                    f"{error.message} (-v/--verbose goes before the command: {root} -v {command})"
                )
                raise click.NoSuchOption(
                    error.option_name, said, error.possibilities, where
                ) from None
            raise
        except click.UsageError as error:
            _find_command(error)
            raise

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = SUBCOMMANDS.get(cmd_name)
        if target is None:
            command = super().get_command(ctx, cmd_name)
            if command is None:
                command = _plugin_commands(ctx).get(cmd_name)
            return command
        module_name, _, attribute = target.partition(":")
        command = getattr(importlib.import_module(module_name), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{target} is not a click command")
        return command


def _find_command(error: click.UsageError) -> None:
    """Give ``error`` the context of the command whose arguments it is about, so it is shown
    as every usage error is (the usage line, ``Try 'hermes ... --help'``): click's parser
    raises an option without its value, one given a value it takes none of, and an argument's
    wrong count without one. The command is the innermost one parsing when it was raised."""
    if error.ctx is None:
        for frame, _ in traceback.walk_tb(error.__traceback__):
            parsing = frame.f_locals.get("ctx")
            if isinstance(parsing, click.Context):
                error.ctx = parsing


def _plugin_commands(ctx: click.Context) -> dict[str, click.Command]:
    """Commands of enabled plugins (``hermes_cli_commands``), loaded once per invocation; a
    built-in command of the same name wins. Their short help is cached for ``--help``."""
    root = ctx.find_root()
    cache = root.meta.get("hermes.plugin_commands")
    if cache is None:
        _prepare_output(root)  # loading the plugins may warn, before hermes' callback runs
        from hermes_core._cli.context import environment
        from hermes_core._cli.plugin_commands import (
            command_help_key,
            plugin_commands,
            save_command_help,
        )

        env = environment()
        key = command_help_key(env)
        records: list[PluginRecord] = []
        cache = plugin_commands(env, records)
        root.meta["hermes.plugin_commands"] = cache
        root.meta["hermes.plugin_records"] = records
        save_command_help(env, key, {n: c for n, c in cache.items() if n not in SUBCOMMANDS})
    return {name: command for name, command in cache.items() if name not in SUBCOMMANDS}


def _plugin_not_loaded(ctx: click.Context, name: str, hint: str) -> str:
    """`` (plugin 'x' (user, /path) is not enabled: ...)`` when a plugin named like the missing
    command did not load; else, with no ``hint`` of a close command, `` Plugins that did not
    load may add it: ...`` (nothing else says which plugin adds a command before its code
    runs); else empty."""
    from hermes_core._plugins.explain import (
        may_register,
        may_register_text,
        unloaded_plugin,
        why_not_loaded,
    )

    records = ctx.find_root().meta.get("hermes.plugin_records", [])
    record = unloaded_plugin(records, name)
    if record is not None:
        return f" ({why_not_loaded(record)})"
    unloaded = [] if hint else may_register(records, "hermes_cli_commands")
    return may_register_text(unloaded, "add")[1:] if unloaded else ""


def _plugin_help(ctx: click.Context) -> dict[str, str]:
    """Short help of each command of an enabled plugin: from the cache when what decides the
    plugins has not changed, else from the loaded plugins (which refreshes the cache)."""
    from hermes_core._cli.context import environment
    from hermes_core._cli.plugin_commands import cached_command_help, short_help

    cached = cached_command_help(environment())
    if cached is not None:
        return {name: text for name, text in cached.items() if name not in SUBCOMMANDS}
    return {name: short_help(command) for name, command in _plugin_commands(ctx).items()}


def _change_directory(ctx: click.Context, param: click.Parameter, value: Path | None) -> None:
    if value is not None:
        os.chdir(value)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="hermes")
@click.option("-v", "--verbose", is_flag=True, help="Show tracebacks and debug detail.")
@click.option(
    "-C",
    "--directory",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    is_eager=True,  # the project (its plugins, for --help too) is the directory's
    expose_value=False,
    callback=_change_directory,
    help="Run as if started in this directory: the working directory of the tools and the "
    "project. Relative paths (--config's too) are read from there.",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, path_type=Path),
    is_eager=True,  # stored before --help lists the commands of the plugins it enables
    help="Configuration file to use instead of $HERMES_HOME/config.yaml (or HERMES_CONFIG).",
)
@click.pass_context
def cli(ctx: click.Context, verbose: bool, config_file: Path | None) -> None:
    """hermes-core: the tool layer of an LLM agent."""
    _prepare_output(ctx)


def _prepare_output(root: click.Context) -> None:
    """Log records and configuration warnings as ``hermes: warning:`` lines (debug too with
    ``-v``), once: in hermes' callback, or before it when a command is looked up among the
    plugins' (click resolves the command first), whose loading may warn."""
    if root.meta.get("hermes.output_ready"):
        return
    root.meta["hermes.output_ready"] = True
    root.ensure_object(dict)
    root.obj["verbose"] = bool(root.params.get("verbose"))
    from hermes_core._cli.output import config_warnings_as_lines, configure_logging

    configure_logging()
    config_warnings_as_lines()


def main(argv: list[str] | None = None) -> Any:
    """The ``hermes`` command run in this process with ``argv`` (``sys.argv`` when not given);
    it ends with :class:`SystemExit`. Errors of hermes-core exit with status 2."""
    try:
        return cli.main(args=argv, prog_name="hermes", standalone_mode=True)
    except HermesError as exc:
        from hermes_core._cli.output import echo_shown

        # It may quote a file's text (a project's config.yaml naming an unknown key).
        echo_shown(f"hermes: error: {exc}", err=True)
        sys.exit(2)
    except (TypeError, ValueError, BaseExceptionGroup) as exc:
        # A group too: the MCP SDK builds its first pydantic model (which reads every installed
        # distribution's entry points) in a server's task, inside the supervisor's task group.
        from hermes_core._plugins.distributions import malformed_distribution

        broken = malformed_distribution(exc)
        if broken is None:
            raise
        click.echo(f"hermes: error: {broken}", err=True)
        sys.exit(2)
    finally:
        # The process ends here: the collection that finalization runs would walk every object
        # still alive (1.6 s with a 330,000-tool catalog) only to free what the OS reclaims.
        gc.freeze()


def run() -> NoReturn:
    """The ``hermes`` console script (and ``python -m hermes_core``): :func:`main` in a process
    of its own, which ends without the interpreter's teardown once the output is flushed.

    Freeing every module and object one by one at exit (pydantic's, numpy's, the catalog's)
    takes tens of milliseconds that the OS would reclaim at once. The exit functions still run
    (log files are flushed and closed); an exit the teardown could matter to, with a thread
    still running (one whose work was abandoned aside) or output that cannot be flushed, ends
    the ordinary way.

    A process started with a standard stream closed gets it back: see :func:`_reopen_closed`.
    """
    _reopen_closed()
    try:
        main()
    except SystemExit as stop:
        code = 0 if stop.code is None else stop.code
    else:
        code = 0
    running = [t for t in threading.enumerate() if t.is_alive() and not _abandoned(t)]
    if not isinstance(code, int) or not 0 <= code <= 255 or running != [threading.main_thread()]:
        sys.exit(code)
    if not _flushed():
        sys.exit(code)  # a closed pipe: Python's own exit reports it, as it always did
    atexit._run_exitfuncs()
    _flushed()  # what the exit functions wrote
    os._exit(code)


def _reopen_closed() -> None:
    """Each standard stream the process started without (``<&-``, ``>&-``, ``2>&-``: Python
    makes it ``None``) is ``/dev/null`` on its own descriptor, so the next file opened never
    takes it (a child process, an MCP server or a command of the terminal tool, inherits
    descriptors 0 to 2), and no command meets ``None`` where it writes or asks for a terminal.

    Stdin reads as ``/dev/null``, stderr loses what it is written. Stdout refuses what it is
    written as a pipe whose reader has gone (:class:`_ClosedStdout`): the answer cannot be
    shown, and the command ends as it does then (exit 1, silent), every command alike.
    Descriptors are taken lowest first, hence the order.
    """
    if sys.stdin is None:
        sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 (the process's stdin)
    if sys.stdout is None:
        sys.stdout = _ClosedStdout(open(os.devnull, "wb"), encoding="utf-8")  # noqa: SIM115
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (the process's)


class _ClosedStdout(io.TextIOWrapper):
    """The stdout of a process started without one: writing text to it fails as writing to a
    pipe whose reader has gone does, which click ends with exit status 1 and no message
    (``hermes run`` and ``chat`` refuse before asking a model: ``output.refuse_closed_stdout``
    reads ``closed_at_start``)."""

    closed_at_start = True

    def write(self, text: str) -> int:
        raise BrokenPipeError(errno.EPIPE, "standard output is closed")


def _abandoned(thread: threading.Thread) -> bool:
    """Whether the process may end without waiting for ``thread``: a daemon thread, or an
    anyio worker thread still running once the event loop has ended. Nothing awaits such a
    thread's work any more: a timeout or a cancellation abandoned it (a plain ``handle()`` of a
    hook directory that never returns, a synchronous tool handler past its timeout), and
    waiting for it kept the command running after it had answered, forever for one that never
    returns."""
    return thread.daemon or thread.name == _ANYIO_WORKER


_ANYIO_WORKER = "AnyIO worker thread"


def _flushed() -> bool:
    """Flush standard output and error (either may be ``None``: a closed descriptor at start);
    whether both went through."""
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return False
    return True
