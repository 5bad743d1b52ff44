"""The CLI's hosts: every command builds its host with :func:`cli_host` (the file's path
given, plugin prints on stderr); :func:`run_with_host` starts the one of the configuration in
effect, hands it to the command's work and shuts it down (a read-only command starts no MCP
server its manifests answer for, and the collector is paused while it runs)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from hermes_core._cli.context import environment, load_config_in_effect

if TYPE_CHECKING:
    from hermes_core._config import Config
    from hermes_core._host import Host
    from hermes_core._paths import Environment

__all__ = ["cli_host", "run_with_host"]

T = TypeVar("T")


@contextmanager
def cli_host(config: Config, env: Environment, **options: Any) -> Iterator[Host]:
    """A host for ``config`` built as every command must build one, closed on the way out: with
    ``env.config_path``, so a configuration inside the project cannot open the project-plugin
    gate, and inside :func:`~hermes_core._cli.output.plugin_prints_to_stderr`, so what plugin
    code prints keeps off the command's standard output. ``options`` go to
    :class:`~hermes_core._host.Host` (``strict``, ``mcp_startup``...); the host is not started:
    ``async with`` it, or call ``start`` or ``load_plugins``."""
    from hermes_core._cli.output import plugin_prints_to_stderr
    from hermes_core._host import Host

    with plugin_prints_to_stderr():
        host = Host(config, env, config_path=env.config_path, **options)
        try:
            yield host
        finally:
            host.close()


def run_with_host(
    work: Callable[[Host], Awaitable[T]],
    *,
    read_only: bool = False,
    refresh: bool = False,
    wait_only: frozenset[str] | None = None,
    hold_background: bool = False,
) -> T:
    """Start the host of the configuration in effect, run ``work`` with it, shut it down.

    ``read_only``: ``work`` only reads tools, so MCP servers the cache answers for are not
    started; ``refresh``: every MCP server is reconnected and waited for; ``wait_only``: the
    start waits for these servers alone; ``hold_background``: the other servers are started
    only when a call or a search needs them (see :class:`~hermes_core._mcp.startup.McpStartup`).
    While the start waits for servers, their progress is drawn on the terminal (never into a
    pipe). What plugin code prints meanwhile goes to standard error
    (:func:`~hermes_core._cli.output.plugin_prints_to_stderr`).
    """
    import gc

    from hermes_core._gc_pause import collector_paused

    if not read_only:
        return _started_and_run(work, read_only, refresh, wait_only, hold_background)
    # A read-only command is one short process that makes little garbage, but with a large
    # catalog every collection it triggers walks millions of live objects (docs/performance.md),
    # and before that the imports and the configuration's load make only objects that live as
    # long as the process. What it made is frozen before the collector resumes, or its first
    # collection would walk all of it once more; the process ends soon after anyway.
    with collector_paused():
        result = _started_and_run(work, read_only, refresh, wait_only, hold_background)
        gc.freeze()
    return result


def _started_and_run(
    work: Callable[[Host], Awaitable[T]],
    read_only: bool,
    refresh: bool,
    wait_only: frozenset[str] | None,
    hold_background: bool,
) -> T:
    import anyio

    from hermes_core._cli.progress import connect_progress
    from hermes_core._mcp.startup import McpStartup

    env = environment()
    config = load_config_in_effect(env)
    startup = McpStartup(
        read_only=read_only, refresh=refresh, wait_only=wait_only, hold_background=hold_background
    )

    # Decided on the real streams: under plugin_prints_to_stderr stdout is stderr.
    progress = connect_progress() if config.mcp_servers else None

    async def main() -> T:
        try:
            with cli_host(config, env, mcp_startup=startup, mcp_progress=progress) as host:
                async with host:
                    if progress is not None:
                        progress.close()
                    host.prepare_tools()  # a configuration error exits 2 here, not as a tool error
                    return await work(host)
        finally:
            if progress is not None:
                progress.close()

    return anyio.run(main)
