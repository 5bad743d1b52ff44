"""Sessions: ``nox`` runs lint, typecheck and tests; ``nox -s tests`` runs the test suite only
(then the hybrid search plugin's tests, in ``tests_hybrid``) but the tests marked slow, which
``nox -s tests_slow`` runs (``.ci/run`` runs both); ``nox -s tests_browser`` runs the browser
tools in a real Chromium (``.ci/run`` runs it too); ``nox -s conformance`` runs the MCP
conformance suite against hermes' MCP client and ``hermes serve`` (not a default session: it
installs Node 22 and the suite with npm).

Every session runs on the Python that runs nox (3.11 to 3.13, as ``requires-python`` allows):
``python3 -m pip install nox && python3 -m nox`` tests the ``python3`` the user has."""

from __future__ import annotations

import os
import shutil

import nox

nox.options.sessions = ["lint", "typecheck", "tests"]
nox.options.reuse_existing_virtualenvs = True
# A session whose interpreter is missing fails: skipped, it would leave nox exiting 0.
nox.options.error_on_missing_interpreters = True

NPM_PACKAGES = (
    "@modelcontextprotocol/server-everything@2026.8.31",
    "@modelcontextprotocol/server-filesystem@2026.8.31",
    "@modelcontextprotocol/server-memory@2026.8.31",
    "@modelcontextprotocol/inspector@0.15.0",
    # The request dev sets' servers (benchmarks/mcp_request_catalog.py); github is also the
    # server of the multilingual search test (tests/mcp/test_multilingual_search.py).
    "@modelcontextprotocol/server-github@2025.4.8",
    "@modelcontextprotocol/server-gitlab@2025.4.25",
    "@modelcontextprotocol/server-slack@2025.4.25",
    "@modelcontextprotocol/server-google-maps@0.6.2",
    "@modelcontextprotocol/server-brave-search@0.6.2",
    "@notionhq/notion-mcp-server@2.5.2",
    # tests/security/test_project_launchers.py starts a real deno in a cloned repository (the
    # package ships deno's binary for the platform: about 90 MB installed).
    "deno@2.9.6",
)
# The Chromium executables the browser tools look for on PATH (plugins_builtin/browser).
BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# The MCP conformance suite and the Node it needs (22; the system's may be older).
CONFORMANCE_PACKAGES = ("node@22", "@modelcontextprotocol/conformance@0.1.16")


def _install_debian_packages(session: nox.Session, package: str, *commands: str) -> None:
    """The Debian ``package`` when none of its ``commands`` is on PATH: installed with apt-get
    when nox runs as root on a Debian machine (CI); otherwise the tests that need it fail
    saying the apt-get command."""
    if any(shutil.which(command) for command in commands):
        return
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        session.warn(f"{package} is missing: its tests will fail; `apt-get install {package}`")
        return
    environment = {"DEBIAN_FRONTEND": "noninteractive"}
    session.run("apt-get", "update", "-qq", external=True, env=environment)
    session.run("apt-get", "install", "-y", "-qq", package, external=True, env=environment)


def _install_test_dependencies(session: nox.Session) -> None:
    """hermes-core with its test extra, espeak-ng from Debian (the speech tests run it), and
    the MCP servers and clients from npm of the integration tests (without npm, the tests that
    need them fail and say how to install them)."""
    session.install("-e", ".[test]")
    _install_debian_packages(session, "espeak-ng", "espeak-ng")
    if shutil.which("npm"):
        session.run(
            "npm",
            "install",
            "--prefix",
            ".cache/npm",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            *NPM_PACKAGES,
            external=True,
        )


@nox.session
def tests(session: nox.Session) -> None:
    """The test suite, against real plugin directories, distributions and child processes."""
    _install_test_dependencies(session)
    # The whole suite on at least four pytest-xdist workers, one per core on a larger machine:
    # most tests wait on child processes, so on two cores two workers left them idle a
    # quarter of the time (docs/performance.md: 222 s with two workers, 198 s with four).
    # Tests picked by hand run in one process. The tests marked slow (seconds each for one
    # rule: a virtualenv built, mypy, the MCP Inspector, OAuth logins, hypothesis at full
    # strength) run in ``tests_slow``, which ``.ci/run`` runs.
    workers = str(max(4, os.cpu_count() or 1))
    whole = [] if session.posargs else ["-n", workers, "-m", "not slow"]
    session.run(
        "pytest",
        *whole,
        *session.posargs,
        env={"HERMES_STRICT_PLUGINS": "1"},
    )
    if not session.posargs:  # the whole suite, not a file picked by hand: the plugin's too
        session.notify("tests_hybrid")


@nox.session
def tests_slow(session: nox.Session) -> None:
    """The tests marked ``slow``, which ``nox -s tests`` leaves out (``.ci/run`` runs both):
    the README's first Quickstart command in a fresh virtualenv, the example plugin under mypy
    strict, the MCP Inspector over stdio, OAuth logins and real MCP servers started and ended,
    the C kernel and the catalog cache under hypothesis, the largest search quality set."""
    _install_test_dependencies(session)
    # The second request set's eight servers, pinned in its script, for its slow catalog check.
    if shutil.which("npm"):
        session.run("python", "benchmarks/mcp_request_catalog2.py", "--install")
    session.run(
        "pytest",
        "-n",
        "auto",
        "-m",
        "slow",
        *session.posargs,
        env={"HERMES_STRICT_PLUGINS": "1"},
    )


@nox.session
def tests_hybrid(session: nox.Session) -> None:
    """The tests of plugins/hermes-search-hybrid, with the plugin installed by pip as a user
    installs it. They run in a virtualenv of their own (``nox -s tests`` queues this session
    after its own run) because every test that lists plugins would see an installed pip
    plugin, and the core suite's tests assume that none is installed."""
    session.install("-e", ".[test]")
    # onnxruntime, tokenizers and numpy; the build lays the model's checked files into the
    # plugin (plugins/hermes-search-hybrid/hatch_build.py). No torch.
    session.install("-e", "plugins/hermes-search-hybrid")
    # Typed like the bundled plugins; checked here, where its dependencies are installed.
    session.run("mypy", "--strict", "plugins/hermes-search-hybrid/hermes_search_hybrid")
    session.run(
        "pytest",
        "plugins/hermes-search-hybrid/tests",
        *session.posargs,
        env={"HERMES_STRICT_PLUGINS": "1"},
    )


@nox.session
def tests_browser(session: nox.Session) -> None:
    """The browser tools' tests (plugins_builtin/browser/tests) in a real headless Chromium:
    the user's own, as the tools find it (``chromium`` on PATH, or HERMES_BROWSER_EXECUTABLE).
    Missing, it is installed from Debian when the session runs as root (CI); otherwise the
    tests fail with the command that installs it."""
    session.install("-e", ".[test,browser]")
    if not os.environ.get("HERMES_BROWSER_EXECUTABLE"):
        _install_debian_packages(session, "chromium", *BROWSER_NAMES)
    session.run(
        "pytest",
        "plugins_builtin/browser/tests",
        *session.posargs,
        env={"HERMES_STRICT_PLUGINS": "1"},
    )


@nox.session
def conformance(session: nox.Session) -> None:
    """``@modelcontextprotocol/conformance`` scenarios: hermes' MCP client against the suite's
    servers (authorization, elicitation) and the suite against ``hermes serve`` over HTTP."""
    session.install("-e", ".[test]")
    session.run(
        "npm",
        "install",
        "--prefix",
        ".cache/conformance",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        *CONFORMANCE_PACKAGES,
        external=True,
    )
    session.run("pytest", "tests_conformance", "-n", "2", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff: lint and formatting."""
    session.install("ruff==0.17.6")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy strict on hermes_core/, the bundled plugins (plugins_builtin/) and examples/ (with
    the extras the bundled plugins import lazily: Playwright is typed)."""
    session.install("-e", ".[test,browser]", "mypy==2.4.1", "types-jsonschema", "types-regex")
    session.run("mypy")
