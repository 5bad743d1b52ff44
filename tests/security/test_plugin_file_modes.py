"""Code hermes runs from a folder (a directory plugin, a hook directory) is not run when another
local account could have written it: a file or folder of it, or a folder above it, writable by
others (a sticky folder such as ``/tmp`` aside) or owned by another account. Its plugin is an
``error`` naming the path and the fix, and none of its code runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from accounts import NOBODY, needs_another_account

from hermes_core import Environment
from hermes_core._config import Config, PluginsConfig
from hermes_core._plugins import load_plugins
from hermes_core.testing import write_dir_plugin
from hermes_core.testing._cli_in_process import InProcessCli


def _plugin(env: Environment, marker: Path) -> Path:
    code = f"open({str(marker)!r}, 'w').close()\n"
    return write_dir_plugin(env.user_plugins_dir, "helper", code, files={"lib/util.py": "X = 1\n"})


def _record(env: Environment) -> tuple[str, str]:
    loaded = load_plugins(Config(plugins=PluginsConfig(enabled=["helper"])), env, strict=False)
    record = loaded.get("helper")
    assert record is not None
    return record.status, record.message or ""


@pytest.mark.parametrize("which", ["folder", "init", "nested", "plugins-folder"])
def test_a_plugin_another_account_could_write_is_refused_and_never_run(
    hermes_env: Environment, tmp_path: Path, which: str
) -> None:
    marker = tmp_path / "ran"
    folder = _plugin(hermes_env, marker)
    target = {
        "folder": folder,
        "init": folder / "__init__.py",
        "nested": folder / "lib" / "util.py",
        "plugins-folder": folder.parent,
    }[which]
    target.chmod(0o777 if target.is_dir() else 0o666)
    status, message = _record(hermes_env)
    assert status == "error"
    assert f"{target} is writable by other accounts" in message
    assert f"chmod o-w {target}" in message
    assert not marker.exists()


def test_a_sticky_folder_above_a_plugin_is_not_its_weakness(
    hermes_env: Environment, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    folder = _plugin(hermes_env, marker)
    folder.parent.chmod(0o1777)  # as /tmp: others may add entries, never replace the user's
    assert _record(hermes_env) == ("enabled", "")
    assert marker.exists()


@needs_another_account
def test_a_plugin_file_of_another_account_is_refused_and_never_run(
    hermes_env: Environment, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    folder = _plugin(hermes_env, marker)
    os.chown(folder / "lib" / "util.py", NOBODY, NOBODY)
    status, message = _record(hermes_env)
    assert status == "error"
    assert f"{folder / 'lib' / 'util.py'} belongs to another account (uid {NOBODY})" in message
    assert not marker.exists()


@pytest.mark.parametrize("which", ["config", "folder-above"])
def test_a_config_or_dotenv_another_account_could_write_is_not_read(
    hermes_home: Path, hermes_project: Path, tmp_path: Path, which: str
) -> None:
    """config.yaml names commands hermes starts (MCP servers, shell hooks) and .env sets their
    variables: one another account could change is not read, and the command stops naming it."""
    hermes_cli = InProcessCli(tmp_path, home=hermes_home, work=hermes_project)
    config = hermes_cli.home / "config.yaml"
    config.write_text("mcp_servers: {}\n", encoding="utf-8")
    dotenv = hermes_cli.home / ".env"
    dotenv.write_text("GREETING=hello\n", encoding="utf-8")
    target = {"config": config, "folder-above": hermes_cli.home}[which]
    target.chmod(0o777 if target.is_dir() else 0o666)
    done = hermes_cli.run("plugins", "list", ok=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{target} is writable by other accounts" in done.stderr
    assert f"chmod o-w {target}" in done.stderr


def test_a_dotenv_another_account_could_write_gives_no_secret(hermes_env: Environment) -> None:
    """.env holds the keys of model providers and the variables of MCP servers: one another
    account could change is not read where a secret is looked up."""
    from hermes_core._dotenv import secret_variable
    from hermes_core._errors import ConfigError

    dotenv = hermes_env.dotenv_path
    dotenv.parent.mkdir(parents=True, exist_ok=True)
    dotenv.write_text("OPENAI_API_KEY=sk-from-the-file\n", encoding="utf-8")
    assert secret_variable(hermes_env, "OPENAI_API_KEY") == "sk-from-the-file"
    dotenv.chmod(0o646)
    with pytest.raises(ConfigError, match=f"{dotenv} is writable by other accounts"):
        secret_variable(hermes_env, "OPENAI_API_KEY")


@pytest.mark.parametrize("named_by", ["--config", "home"])
def test_a_config_linked_into_a_folder_another_account_could_write_is_not_read(
    hermes_home: Path, hermes_project: Path, tmp_path: Path, named_by: str
) -> None:
    """A config.yaml that is a link (a dotfiles checkout): what another account could change is
    the file hermes reads, the link's target, and the folders above that."""
    hermes_cli = InProcessCli(tmp_path, home=hermes_home, work=hermes_project)
    shared = tmp_path / "shared"
    shared.mkdir()
    target = shared / "hermes.yaml"
    target.write_text("mcp_servers: {}\n", encoding="utf-8")
    shared.chmod(0o777)
    link = hermes_cli.work / "link.yaml" if named_by == "--config" else hermes_cli.config
    link.unlink(missing_ok=True)
    link.symlink_to(target)
    given = ("--config", "link.yaml") if named_by == "--config" else ()
    done = hermes_cli.run(*given, "plugins", "list", ok=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{shared} is writable by other accounts" in done.stderr


def test_a_config_reached_through_a_link_in_a_folder_another_account_could_write_is_not_read(
    hermes_home: Path, hermes_project: Path, tmp_path: Path
) -> None:
    """config.yaml -> shared/hop -> dotfiles/hermes.yaml: the file and the folders above it are
    the user's, but another account could point ``hop`` at a file of its own."""
    hermes_cli = InProcessCli(tmp_path, home=hermes_home, work=hermes_project)
    target = tmp_path / "dotfiles" / "hermes.yaml"
    target.parent.mkdir()
    target.write_text("mcp_servers: {}\n", encoding="utf-8")
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "hop").symlink_to(target)
    shared.chmod(0o777)
    hermes_cli.config.unlink(missing_ok=True)
    hermes_cli.config.symlink_to(shared / "hop")
    done = hermes_cli.run("plugins", "list", ok=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{shared} is writable by other accounts" in done.stderr


def test_a_plugin_file_linked_into_a_folder_another_account_could_write_is_refused(
    hermes_env: Environment, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    folder = _plugin(hermes_env, marker)
    shared = tmp_path / "shared"
    shared.mkdir()
    moved = shared / "util.py"
    (folder / "lib" / "util.py").rename(moved)
    (folder / "lib" / "util.py").symlink_to(moved)
    shared.chmod(0o777)
    status, message = _record(hermes_env)
    assert status == "error"
    assert f"{shared} is writable by other accounts" in message
    assert not marker.exists()


@needs_another_account
def test_a_plugin_file_reached_through_a_link_of_another_account_is_refused(
    hermes_env: Environment, tmp_path: Path
) -> None:
    # The link lies in a sticky folder (as /tmp): its owner may still point it elsewhere.
    marker = tmp_path / "ran"
    folder = _plugin(hermes_env, marker)
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    kept = folder / "lib" / "kept.py"
    (folder / "lib" / "util.py").rename(kept)
    hop = sticky / "hop"
    hop.symlink_to(kept)
    os.lchown(hop, NOBODY, NOBODY)
    (folder / "lib" / "util.py").symlink_to(hop)
    status, message = _record(hermes_env)
    assert status == "error"
    assert f"{hop} belongs to another account (uid {NOBODY})" in message
    assert not marker.exists()
