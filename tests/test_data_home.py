"""``Environment.data_home``: where hermes keeps what it writes on its own. The home, except a
home inside the project while the project gate is closed, whose logs, caches and transcripts go
to its own folder in the user's ``~/.hermes/projects/`` (the subprocess proof is
tests/agent/test_project_home_writes.py). Real directories, no process."""

from __future__ import annotations

from pathlib import Path

from hermes_core import Environment
from hermes_core._mcp.tokens import token_path
from hermes_core._paths import home_tag
from hermes_core.agent import TranscriptStore
from hermes_core.connectors._signin import auth_path

GATE = {"HERMES_ENABLE_PROJECT_PLUGINS": "1"}


def environment(
    tmp_path: Path, home: Path, *, known_user: bool = True, **variables: str
) -> Environment:
    repo = tmp_path / "repo"
    repo.mkdir(exist_ok=True)
    user = tmp_path / "user" if known_user else None
    return Environment(home=home, cwd=repo, variables=variables, user_home=user)


def test_a_home_outside_the_project_keeps_its_own_data(tmp_path: Path) -> None:
    env = environment(tmp_path, tmp_path / "hermes-home")
    assert env.data_home == tmp_path / "hermes-home"
    assert env.log_dir == tmp_path / "hermes-home" / "logs"
    assert env.cache_dir == tmp_path / "hermes-home" / "cache"


def test_a_gated_project_home_keeps_its_data_in_the_users_own_folder_for_it(
    tmp_path: Path,
) -> None:
    home = tmp_path / "repo" / ".hermes"
    env = environment(tmp_path, home)
    own = tmp_path / "user" / ".hermes" / "projects" / home_tag(home)
    assert env.data_home == own
    assert (env.log_dir, env.cache_dir) == (own / "logs", own / "cache")
    store = TranscriptStore.of_home(env)
    assert (store.directory, store.refusal) == (own / "sessions", None)
    named = environment(tmp_path, home, HERMES_LOG_DIR=str(tmp_path / "logs"))
    assert named.log_dir == tmp_path / "logs" / home_tag(home)  # the user's choice stands


def test_an_open_gate_makes_a_project_home_the_home_hermes_writes_in(tmp_path: Path) -> None:
    home = tmp_path / "repo" / ".hermes"
    assert environment(tmp_path, home, **GATE).data_home == home


def test_without_a_known_user_home_a_project_home_is_written_but_not_read_back(
    tmp_path: Path,
) -> None:
    home = tmp_path / "repo" / ".hermes"
    env = environment(tmp_path, home, known_user=False)
    assert env.data_home == home
    store = TranscriptStore.of_home(env)
    assert store.directory == home / "sessions"
    assert store.refusal is not None
    assert store.refusal.startswith(f"the transcripts folder at {home / 'sessions'} (in the ")


def test_a_gated_project_homes_credentials_are_the_users_own(tmp_path: Path) -> None:
    home = tmp_path / "repo" / ".hermes"
    own = tmp_path / "user" / ".hermes" / "projects" / home_tag(home)
    env = environment(tmp_path, home)
    assert env.serve_token_path == own / "serve-token"
    assert token_path(env, "github") == own / "mcp-auth" / "github.json"
    assert auth_path(env) == own / "auth.json"
    opened = environment(tmp_path, home, **GATE)
    assert auth_path(opened) == home / "auth.json"


def test_a_project_home_linked_to_another_projects_home_keeps_its_own_folder(
    tmp_path: Path,
) -> None:
    # A clone shipping .hermes -> ../work/.hermes, worked in with HERMES_HOME=./.hermes, must
    # not keep its data in (nor read back, by session_search or --continue) the folder of the
    # home it links to: the user's conversations in the project beside it.
    user = tmp_path / "user"
    work, clone = tmp_path / "work", tmp_path / "clone"
    (work / ".hermes").mkdir(parents=True)
    clone.mkdir()
    (clone / ".hermes").symlink_to(Path("..") / "work" / ".hermes")
    in_work = Environment(home=work / ".hermes", cwd=work, user_home=user)
    in_clone = Environment(home=clone / ".hermes", cwd=clone, user_home=user)

    projects = user / ".hermes" / "projects"
    assert in_work.data_home == projects / home_tag(work / ".hermes")
    assert in_clone.data_home.parent == projects
    assert in_clone.data_home != in_work.data_home
    assert TranscriptStore.of_home(in_clone).directory == in_clone.data_home / "sessions"
