"""A configuration file the user named (``--config`` or ``HERMES_CONFIG``) must exist; only the
default location, ``$HERMES_HOME/config.yaml``, may be absent (it means the defaults)."""

from __future__ import annotations

import dataclasses
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from hermes_core._errors import ConfigError
from hermes_core._host import Host
from hermes_core._paths import Environment
from hermes_core.testing import HermesCli


def assert_names_missing(done, path: Path, named_by: str) -> None:  # type: ignore[no-untyped-def]
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr == f"hermes: error: {path}: no such file (named by {named_by})\n"


@pytest.mark.subprocess
def test_named_config_file_that_does_not_exist_exits_2_naming_it(hermes_cli: HermesCli) -> None:
    done = hermes_cli.run(
        "--config", "examples/quickstart.yml", "tools", "search", "weather", ok=False
    )

    assert_names_missing(done, hermes_cli.work / "examples" / "quickstart.yml", "--config")


@pytest.mark.subprocess
def test_config_validate_of_a_missing_named_file_exits_2(hermes_cli: HermesCli) -> None:
    missing = hermes_cli.root / "nosuch.yaml"

    named = hermes_cli.run("--config", str(missing), "config", "validate", ok=False)
    default = hermes_cli.run("config", "validate")

    assert_names_missing(named, missing, "--config")
    assert default.stdout == f"ok: {hermes_cli.home / 'config.yaml'}\n"


@pytest.mark.subprocess
@pytest.mark.parametrize("command", [("plugins", "list"), ("config", "validate"), ("mcp", "list")])
def test_hermes_config_naming_a_missing_file_exits_2(
    hermes_cli: HermesCli, command: tuple[str, ...]
) -> None:
    missing = hermes_cli.root / "team" / "hermes.yaml"

    done = hermes_cli.run(*command, ok=False, env=hermes_cli.variables(HERMES_CONFIG=str(missing)))

    assert_names_missing(done, missing, "HERMES_CONFIG")


@pytest.mark.subprocess
def test_named_config_is_not_created_by_an_edit(hermes_cli: HermesCli) -> None:
    missing = hermes_cli.root / "typo.yaml"

    done = hermes_cli.run("--config", str(missing), "plugins", "enable", "demo", ok=False)

    assert_names_missing(done, missing, "--config")
    assert not missing.exists()


def test_host_from_environment_refuses_a_missing_named_config(hermes_env: Environment) -> None:
    missing = hermes_env.home / "elsewhere.yaml"
    env = dataclasses.replace(
        hermes_env, variables={**hermes_env.variables, "HERMES_CONFIG": str(missing)}
    )

    with pytest.raises(ConfigError, match="no such file") as caught:
        Host.from_environment(env)

    assert caught.value.path == missing


@pytest.mark.subprocess
def test_a_config_file_given_by_process_substitution_is_named_as_given(
    hermes_cli: HermesCli,
) -> None:
    # bash hands hermes /dev/fd/63; resolved, that became /proc/PID/fd/pipe:[N], a path that
    # cannot be opened: "no such file", naming a path the user never saw.
    command = shlex.join(hermes_cli.command("--config", "CONFIG", "config", "validate"))
    command = command.replace("CONFIG", "<(echo 'model: {}')")
    done = subprocess.run(
        ["bash", "-c", command],
        env=hermes_cli.variables(),
        cwd=hermes_cli.work,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert done.returncode == 2, done.stderr
    assert re.fullmatch(
        r"hermes: error: /dev/fd/\d+: not a regular file \(a FIFO\), so it is not read\n",
        done.stderr,
    ), done.stderr


@pytest.mark.subprocess
def test_a_config_file_given_by_a_link_is_named_as_given(hermes_cli: HermesCli) -> None:
    target = hermes_cli.root / "dotfiles" / "hermes.yaml"
    target.parent.mkdir()
    target.write_text("tools: [\n", encoding="utf-8")
    (hermes_cli.work / "link.yaml").symlink_to(target)

    done = hermes_cli.run("--config", "link.yaml", "config", "validate", ok=False)

    assert done.returncode == 2
    assert done.stderr.startswith(f"hermes: error: {hermes_cli.work / 'link.yaml'}:"), done.stderr
    assert str(target) not in done.stderr
