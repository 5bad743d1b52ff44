"""Sessions: ``nox`` runs lint, typecheck and tests; ``nox -s tests`` runs the test suite only."""

from __future__ import annotations

import nox

nox.options.sessions = ["lint", "typecheck", "tests"]
nox.options.reuse_existing_virtualenvs = True

PYTHON = "3.11"


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """The test suite, against real plugin directories, distributions and child processes."""
    session.install("-e", ".[test]")
    session.run(
        "pytest",
        *session.posargs,
        env={"HERMES_STRICT_PLUGINS": "1"},
    )


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff: lint and formatting."""
    session.install("ruff>=0.6")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    """mypy strict on hermes_core/."""
    session.install("-e", ".[test]", "mypy>=1.11", "types-jsonschema")
    session.run("mypy")
