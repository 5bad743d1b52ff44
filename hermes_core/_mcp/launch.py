"""How a stdio server is started: its working directory, its environment and its arguments;
and, in one table, what a launcher started in a project whose gate is closed gets.

A server of the user's starts in the working directory, which may be a project whose gate is
closed (a cloned repository); so does a shell hook. Some launchers look there first for what
they run, and :data:`LAUNCHERS` says, for each, what keeps them from running what the project
plants under the program's name (:func:`project_guard`):

- Python run as a module, a string or its standard input (``python3 -m NAME``) puts the
  directory first on ``sys.path``: it gets ``PYTHONSAFEPATH=1``
  (:func:`~hermes_core._mcp.interpreter.imports_from_working_directory`), and ``-P`` when
  given ``-E``, which makes it ignore the variable.
- ``npx``, and ``npm exec`` (``npm x``) which it runs, look in the directory's
  ``node_modules`` and read its ``.npmrc`` (which may name another registry): they get
  ``--prefix`` the user's home directory, unless given one, and ``npm_config_globalconfig``
  naming the global npmrc that prefix hides (:func:`.interpreter.npm_global_config`).
- ``deno run`` of a package or a URL (``npm:``, ``jsr:``, ``https:``) and ``deno x`` read the
  directory's ``deno.json`` (an import map may name the project's file for the package), its
  ``package.json`` with ``node_modules``, and its ``.npmrc``: they get ``--no-config``, unless
  given a configuration (``--config``, ``--import-map``). A local file is not changed: deno
  reads the configuration beside it, not the directory's.

Each is also read behind ``env``, its options and its assignments (``env A=1 npx ...``:
:func:`~hermes_core._mcp.interpreter.run_by_env`), in the folder ``env -C DIR`` moves to;
behind ``env -i``, which starts it with an empty environment, the guard's variables become
assignments of ``env``'s (``env -i PYTHONSAFEPATH=1 python3 -m NAME``).

Some launchers no argument or variable keeps out of the directory alone; they are not started
where the directory, or a folder above it (below the user's home: the user's own
``~/.python-version`` or ``~/.npmrc`` is no project's), holds what they read (:class:`Reads`),
and are started as written where it holds none:

- ``uv run`` (``python3 -m uv run`` too; behind any global option of uv's) finds the
  directory's project (``pyproject.toml``), its ``uv.toml``, its ``.python-version`` and its
  ``.venv``, whose ``python`` it runs to ask its version even with ``--no-project
  --no-config``, from the directory upward (checked with uv 0.13); given ``--directory DIR``,
  from ``DIR`` upward (a folder outside the project starts it as written).
- ``pnpm dlx`` (``pnpx``) reads the directory's ``.npmrc`` (its registry, a pnpmfile) and
  ``pnpm-workspace.yaml`` (pnpm's settings), ``DIR``'s given ``-C DIR``; ``yarn dlx`` runs
  the file its ``.yarnrc.yml`` names as ``yarnPath`` in place of yarn, and the plugins it lists
  (``YARN_IGNORE_PATH`` keeps out the first only); ``bunx`` (``bun x``) runs the package of
  the directory's ``node_modules`` first and reads its ``bunfig.toml`` (checked with pnpm 12
  and Yarn 4; bun's from its documentation).

``uvx`` and ``uv tool run`` are in neither: they read only the user's and the system's uv
configuration, never the directory's (uv's own rule for its tool commands). Nor are ``pnpm
exec``, ``yarn exec`` and ``bun run``, which exist to run the project's own commands, as ``npm
run`` does; nor a ``package.json`` whose ``packageManager`` corepack reads: it names one of the
registry's versions (corepack refuses a URL there, checked with corepack 0.34).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Final

from hermes_core._mcp.interpreter import (
    NPM_GLOBAL_CONFIG,
    SAFE_PATH,
    clears_environment,
    env_directory,
    ignores_environment,
    imports_from_working_directory,
    install_remedy,
    module_run,
    npm_global_config,
    run_by_env,
    split_by_env,
)
from hermes_core._project_trust import PROJECT_GATE_FLAG, gate_is_open, project_owns

if TYPE_CHECKING:
    from hermes_core._config import McpServerConfig
    from hermes_core._paths import Environment

__all__ = [
    "LAUNCHERS",
    "LaunchGuard",
    "Reads",
    "child_environment",
    "launch_args",
    "launch_refusal",
    "missing_module_note",
    "project_file",
    "project_guard",
    "server_cwd",
]

_NPX: Final = frozenset({"npx", "npx.cmd"})
_NPM: Final = frozenset({"npm", "npm.cmd"})
_DENO: Final = frozenset({"deno", "deno.exe"})
# The options of `deno run` and `deno x` whose value is the next word (deno 2.9 --help).
# fmt: off
_DENO_VALUED: Final = frozenset({
    "-c", "--config", "--import-map", "--ext", "--node-modules-linker", "--cert",
    "--min-dep-age", "--inspect-publish-uid", "--location", "--seed", "--preload", "--require",
    "--conditions", "-p", "--package",
})
# uv's global options that take no value (uv 0.13): any other takes the next word, so one uv
# does not list in its help (`--preview-features X`) does not hide the command after it.
_UV_FLAGS: Final = frozenset({
    "--quiet", "--verbose", "--offline", "--no-progress", "--no-config", "--no-cache",
    "--native-tls", "--system-certs", "--preview", "--no-preview", "--isolated",
    "--managed-python", "--no-managed-python", "--no-python-downloads", "--show-settings",
    "--no-installer-metadata", "--help", "--version",
})
# fmt: on
_UV: Final = frozenset({"uv", "uv.exe"})
_PNPM: Final = frozenset({"pnpm", "pnpm.cmd"})
_PNPX: Final = frozenset({"pnpx", "pnpx.cmd"})
_PNPM_VALUED: Final = frozenset({"-C", "--dir", "-F", "--filter", "--reporter", "--loglevel"})
_YARN: Final = frozenset({"yarn", "yarn.cmd"})
_BUN: Final = frozenset({"bun", "bun.exe"})
_BUNX: Final = frozenset({"bunx", "bunx.exe"})


@dataclass(frozen=True)
class Reads:
    """What a launcher that no argument keeps out of its working directory reads there or in a
    folder above it: ``files``, by name. It is not started where a project holds one
    (:func:`project_guard`); ``remedy`` is its own way out, if it has one."""

    launcher: str
    files: tuple[str, ...]
    remedy: str = ""
    directory: str | None = None
    """The folder it reads instead of its working directory, relative to it (``--directory``)."""


@dataclass(frozen=True)
class LaunchGuard:
    """What a launcher started in a project whose gate is closed gets: ``args`` in place of its
    own arguments (``None``: its own), ``variables`` in its environment (a value the user sets
    wins); or ``refusal``, why it is not started at all (a launcher of :class:`Reads`)."""

    args: tuple[str, ...] | None = None
    variables: Mapping[str, str] = field(default_factory=dict)
    reads: Reads | None = None
    keeps_out: tuple[str, ...] = ()
    """The files ``args`` keep the launcher from reading, by name, in its working directory or
    a folder above it (:func:`project_file`); empty when they cannot be named (``python -E``:
    any module)."""
    refusal: str | None = None


def _python(command: str, args: Sequence[str], home: Path) -> LaunchGuard | None:
    if not imports_from_working_directory(command, args):
        return None
    if ignores_environment(args):  # -E: the variable is ignored, -P is not (Python 3.11+)
        return LaunchGuard(args=("-P", *args), variables={SAFE_PATH: "1"})
    return LaunchGuard(variables={SAFE_PATH: "1"})


def _npx(command: str, args: Sequence[str], home: Path) -> LaunchGuard | None:
    name = PurePath(command).name
    if name in _NPX:
        at = 0
    elif name in _NPM:  # `npm exec` (`npm x`): npx's own command; npm's options may come first
        words = [index for index, arg in enumerate(args) if not arg.startswith("-")]
        if not words or args[words[0]] not in ("exec", "x"):
            return None
        at = words[0] + 1
    else:
        return None
    if any(arg == "--prefix" or arg.startswith("--prefix=") for arg in args):
        return None
    return LaunchGuard(
        args=(*args[:at], "--prefix", str(home), *args[at:]),
        keeps_out=("package.json", "node_modules", ".npmrc"),
    )


def _deno(command: str, args: Sequence[str], home: Path) -> LaunchGuard | None:
    if PurePath(command).name not in _DENO or not args or args[0] not in ("run", "x"):
        return None
    options, main = _deno_options(args[1:])
    if {"-c", "--config", "--no-config", "--import-map"} & options:
        return None  # the user's own choice of configuration
    if args[0] == "run" and not (main or "").startswith(("npm:", "jsr:", "http:", "https:")):
        return None  # a local file: deno reads the configuration beside it, not the project's
    return LaunchGuard(
        args=(args[0], "--no-config", *args[1:]),
        keeps_out=("deno.json", "deno.jsonc", "package.json", "node_modules", ".npmrc"),
    )


def _deno_options(args: Sequence[str]) -> tuple[set[str], str | None]:
    """The options (without their values) before ``deno run``'s or ``deno x``'s module, and
    the module."""
    options: set[str] = set()
    taking_value = False
    for arg in args:
        if taking_value:
            taking_value = False
        elif arg.startswith("-"):
            name = arg.split("=", 1)[0]
            options.add(name)
            taking_value = name in _DENO_VALUED and "=" not in arg
        else:
            return options, arg
    return options, None


def _subcommand(args: Sequence[str], valued: frozenset[str]) -> str | None:
    """The first word of ``args`` that is neither an option nor the value of one of ``valued``."""
    taking_value = False
    for arg in args:
        if taking_value:
            taking_value = False
        elif arg.startswith("-"):
            taking_value = arg in valued
        else:
            return arg
    return None


def _uv_command_at(args: Sequence[str]) -> int:
    """Where uv's command (``run``, ``tool``...) is in ``args``, after its global options;
    ``len(args)`` when there is none."""
    taking_value = False
    for index, arg in enumerate(args):
        if taking_value:
            taking_value = False
        elif not arg.startswith("-"):
            return index
        elif arg.startswith("--"):
            taking_value = "=" not in arg and arg not in _UV_FLAGS
        else:  # `-qv` takes no value, `-p` and `-qp` the next word, `-p3.12` its own
            taking_value = arg.find("p") == len(arg) - 1
    return len(args)


def _uv(command: str, args: Sequence[str], home: Path) -> LaunchGuard | None:
    command, args = module_run(command, args)  # `python3 -m uv run ...` is uv's own
    at = _uv_command_at(args)
    if PurePath(command).name not in _UV or at == len(args) or args[at] != "run":
        return None
    directory, taking_value = None, False
    for index, arg in enumerate(args):  # uv's options, then run's up to the command it runs
        if taking_value:
            directory, taking_value = arg, False
        elif arg.startswith("--directory="):
            directory = arg.split("=", 1)[1]
        elif arg == "--directory":
            taking_value = True
        elif index > at and not arg.startswith("-"):
            break
    files = ("pyproject.toml", "uv.toml", ".python-version", ".python-versions", ".venv")
    remedy = "start it as `uv --directory /path/to/server run ...`, "
    return LaunchGuard(reads=Reads("uv run", files, remedy, directory))


def _node_runner(command: str, args: Sequence[str], home: Path) -> LaunchGuard | None:
    name = PurePath(command).name
    if name in _PNPX or (name in _PNPM and _subcommand(args, _PNPM_VALUED) == "dlx"):
        launcher = "pnpx" if name in _PNPX else "pnpm dlx"
        files = (".npmrc", "pnpm-workspace.yaml")
        return LaunchGuard(reads=Reads(launcher, files, directory=_pnpm_directory(args)))
    if name in _YARN and _subcommand(args, frozenset({"--cwd"})) == "dlx":
        return LaunchGuard(reads=Reads("yarn dlx", (".yarnrc.yml",)))
    if name in _BUNX or (name in _BUN and _subcommand(args, frozenset({"--cwd"})) == "x"):
        launcher = "bunx" if name in _BUNX else "bun x"
        return LaunchGuard(reads=Reads(launcher, ("node_modules", "bunfig.toml")))
    return None


def _pnpm_directory(args: Sequence[str]) -> str | None:
    """The folder pnpm given ``args`` works in (``-C DIR``, ``--dir DIR``), or ``None``."""
    found, rest = None, list(args)
    while rest and (arg := rest.pop(0)).startswith("-"):
        if arg in ("-C", "--dir"):
            found = rest.pop(0) if rest else None
        elif arg.startswith(("--dir=", "-C")):
            found = arg[2:] if arg.startswith("-C") else arg.partition("=")[2]
        elif arg in _PNPM_VALUED:
            rest = rest[1:]
    return found


_Guarding = Callable[[str, Sequence[str], Path], LaunchGuard | None]

LAUNCHERS: Final[tuple[tuple[str, _Guarding], ...]] = (
    ("uv run, python -m uv run", _uv),  # before Python's: `python3 -m uv run` is refused
    ("python -m NAME, -c CODE, standard input", _python),
    ("npx PACKAGE, npm exec, npm x", _npx),
    ("deno run npm:/jsr:/URL, deno x", _deno),
    ("pnpm dlx, pnpx, yarn dlx, bunx, bun x", _node_runner),
)
"""Each launcher that looks in its working directory first, with what gives its guard for a
command, its arguments and the user's home (``None``: not this one): what keeps it out, or,
for one that nothing keeps out, what it reads there (:class:`Reads`)."""


_SERVER_WAYS_OUT: Final = (
    "give the server a `cwd` of your own, start it by the path of its installed command"
)
"""What a refusal says a server can do instead (a shell hook's are its own)."""


def project_guard(
    command: str, args: Sequence[str], cwd: Path, env: Environment, ways_out: str = _SERVER_WAYS_OUT
) -> LaunchGuard:
    """The guard of :data:`LAUNCHERS` that ``command`` run with ``args`` in ``cwd`` gets when
    ``cwd`` is the project's and the gate is closed; an empty one otherwise. A refusal says
    ``ways_out``, then the launcher's own remedy and the gate's."""
    if gate_is_open(env):
        return LaunchGuard()
    if (split := split_by_env(command, args)) is not None:
        return _split_refusal(split, cwd, env, ways_out)
    home = env.user_home or Path(env.cwd.anchor)
    before: tuple[str, ...] = ()
    run, run_args = run_by_env(command, args)  # `env A=1 npx ...`: the launcher is npx
    if run_args is not args:
        before = tuple(args[: len(args) - len(run_args)])
        command, args = run, run_args
        if (moved := env_directory(before[:-1])) is not None:  # `env -C DIR`: it runs in DIR
            cwd = cwd / Path(moved).expanduser()
    for _, guarding in LAUNCHERS:
        guard = guarding(command, args, home)
        if guard is None:
            continue
        if guard.reads is not None and guard.reads.directory is not None:
            cwd = cwd / Path(guard.reads.directory).expanduser()  # `uv --directory DIR`
        if not project_owns(env, cwd):
            return LaunchGuard()
        if guard.reads is not None:
            return _refused(guard.reads, cwd, env, ways_out)
        if guarding is _npx and (config := npm_global_config(env.get("PATH"))) is not None:
            guard = replace(guard, variables={NPM_GLOBAL_CONFIG: config})
        if before and clears_environment(before[:-1]):  # `env -i`: only its assignments pass
            given = {arg.split("=", 1)[0] for arg in before if "=" in arg}
            passed = tuple(f"{k}={v}" for k, v in guard.variables.items() if k not in given)
            if passed or guard.args is not None:
                run_with = (before[-1], *(args if guard.args is None else guard.args))
                return replace(guard, args=(*before[:-1], *passed, *run_with))
        return guard if guard.args is None else replace(guard, args=(*before, *guard.args))
    return LaunchGuard()


def _split_refusal(split: list[str], cwd: Path, env: Environment, ways_out: str) -> LaunchGuard:
    """``env -S STRING``'s guard: none where what it runs needs none; else a refusal, as the
    guard cannot be put into the string (``env -S 'python3 -m NAME'``)."""
    inner = project_guard(split[0], split[1:], cwd, env, ways_out) if split else LaunchGuard()
    if inner.refusal is not None or (inner.args is None and not inner.variables):
        return inner
    return LaunchGuard(
        refusal=(
            f"not started: `env -S` runs {split[0]}, which reads what a cloned repository can "
            f"plant in {cwd}, and the project gate is closed there: give env its command as "
            f"words of their own, not one `-S` string (hermes then guards {split[0]}), or "
            f"set {PROJECT_GATE_FLAG}=1 in the environment for a project you trust"
        )
    )


def project_file(files: Sequence[str], cwd: Path, env: Environment) -> Path | None:
    """The first of ``files`` (names) that ``cwd``, or a folder above it below the user's home,
    holds, nearest first; ``None`` where none does."""
    home = env.user_home
    here = Path(os.path.abspath(cwd))
    for folder in (here, *here.parents):
        if folder == Path(folder.anchor) or (home is not None and _holds(folder, home)):
            break  # the user's own home and what holds it are no project's
        found = next((folder / n for n in files if os.path.lexists(folder / n)), None)
        if found is not None:
            return found
    return None


def _refused(reads: Reads, cwd: Path, env: Environment, ways_out: str) -> LaunchGuard:
    """The refusal of a launcher of :class:`Reads` whose working directory ``cwd``, or a folder
    above it below the user's home, holds one of its files; an empty guard where none does."""
    found = project_file(reads.files, cwd, env)
    if found is None:
        return LaunchGuard()
    return LaunchGuard(
        refusal=(
            f"not started: `{reads.launcher}` reads {found}, which a cloned repository can "
            f"plant, and the project gate is closed in {Path(os.path.abspath(cwd))}: "
            f"{reads.remedy}{ways_out}, or set {PROJECT_GATE_FLAG}=1 in the environment for a "
            "project you trust"
        )
    )


def server_cwd(config: McpServerConfig, env: Environment) -> Path:
    """The working directory of the server: its ``cwd``, relative to hermes's, else hermes's."""
    return env.cwd if config.cwd is None else env.cwd / Path(config.cwd).expanduser()


def _guard(config: McpServerConfig, env: Environment) -> LaunchGuard:
    assert config.command is not None
    return project_guard(config.command, config.args, server_cwd(config, env), env)


def _holds(folder: Path, path: Path) -> bool:
    """Whether ``folder`` is ``path`` or holds it, as written or resolved."""
    return path.is_relative_to(folder) or path.resolve().is_relative_to(folder.resolve())


def launch_refusal(config: McpServerConfig, env: Environment) -> str | None:
    """Why the server is not started (:func:`project_guard`: a launcher that reads what the
    project plants), or ``None``."""
    return _guard(config, env).refusal


def child_environment(config: McpServerConfig, env: Environment) -> dict[str, str]:
    """The small safe environment the SDK gives a server (``HOME``, ``PATH``...), plus the
    entry's ``env``: secrets go in ``env`` only. The safe variables are the host's
    ``Environment``'s, not the process's, so that each host's servers see that host's (the SDK
    reads ``os.environ``); a value that is a shell function (``()...``) is left out, as the SDK
    leaves it out. In a gated project, the variables of the launcher's guard
    (:func:`project_guard`) come between the two: the entry's ``env`` can set them itself."""
    # Imported here: a shell hook asks this module for its guard, and needs no MCP SDK.
    from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS

    safe = {
        name: value
        for name in DEFAULT_INHERITED_ENV_VARS
        if (value := env.get(name)) is not None and not value.startswith("()")
    }
    return safe | dict(_guard(config, env).variables) | dict(config.env)


def launch_args(config: McpServerConfig, env: Environment) -> list[str]:
    """The server's arguments: its ``args``, or those of the launcher's guard in a gated project
    (:func:`project_guard`: ``npx --prefix HOME``, ``deno run --no-config``)."""
    guarded = _guard(config, env).args
    return list(config.args) if guarded is None else list(guarded)


def missing_module_note(
    command: str, args: Sequence[str], cwd: Path, env: Environment, module: str, found: str
) -> str:
    """``the interpreter FOUND has no module named MODULE``, for the Python ``command`` (as
    ``found`` on the child's ``PATH``) of a server that could not import ``module``, and the
    pip command; or, when its working directory ``cwd`` holds that module but is the project's
    with the gate closed (:func:`project_guard` gave it ``PYTHONSAFEPATH``), that this is why."""
    said = f"the interpreter {found} has no module named {module!r}"
    top = cwd / module.split(".")[0]
    guarded = SAFE_PATH in project_guard(command, args, cwd, env).variables
    if guarded and (top.is_dir() or top.with_name(f"{top.name}.py").is_file()):
        return (
            f"{said}: {top.name} in {cwd} is the project's, which a server imports only when "
            f"{PROJECT_GATE_FLAG}=1 is set in the environment (for a project you trust)"
        )
    return f"{said}: {install_remedy(found)}"
