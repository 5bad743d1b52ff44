"""The sign-in file of an MCP server (``TokenFile``) is saved by several hermes processes at
once (a ``hermes serve`` refreshing its token while ``hermes tools call`` notes a step-up, or
rewrites a file an older hermes wrote): each save is a read, a change and a write under an
exclusive lock of ``.NAME.json.lock`` beside it, written atomically, so no process writes
over what another one just saved; nor does a save bring back a sign-in removed (``hermes mcp
logout``) or replaced by one to another URL since the process read it. Real child processes, a
real FIFO to hold one at the moment it has read the old file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
from mcp.shared.auth import OAuthToken

from hermes_core._atomic_write import held_exclusively, write_atomically
from hermes_core._mcp.tokens import TokenFile, sign_out, token_path
from hermes_core._paths import Environment

URL = "http://127.0.0.1:9/mcp"
PASSWORD = "pw-s3cret-91"

_SAVER = """
import sys
from pathlib import Path

import anyio
from mcp.shared.auth import OAuthToken

from hermes_core._mcp.tokens import TokenFile

path, url, mode, count = Path(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
store = TokenFile(path, url, None, redirect_uri="http://127.0.0.1/cb", keep_registration=False)
for number in range(count):
    if mode == "tokens":
        token = OAuthToken(access_token=f"at-{number}", token_type="Bearer")
        anyio.run(store.set_tokens, token)
    elif mode == "scope":
        store.want_scope(f"scope-{number}")
found = anyio.run(store.get_tokens)
print(found.access_token if found is not None else "none")
"""


def run_saver(path: Path, url: str, mode: str, count: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _SAVER, str(path), url, mode, str(count)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finished(process: subprocess.Popen[str]) -> str:
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 0, stderr
    return stdout.strip()


def signed_in(path: Path, url: str, access_token: str) -> None:
    record = {"url": url, "tokens": {"access_token": access_token, "token_type": "Bearer"}}
    write_atomically(path, json.dumps(record), mode=0o600)


def test_two_processes_saving_at_once_lose_neither_the_tokens_nor_the_scope(
    tmp_path: Path,
) -> None:
    path = tmp_path / "mcp-auth" / "remote.json"
    signed_in(path, URL, "at-first")

    refreshing = run_saver(path, URL, "tokens", 60)
    stepping_up = run_saver(path, URL, "scope", 60)
    finished(refreshing)
    finished(stepping_up)

    record = json.loads(path.read_text(encoding="utf-8"))
    assert record["tokens"]["access_token"] == "at-59"
    assert record["wanted_scope"] == "scope-59"
    assert record["url"] == URL
    assert sorted(os.listdir(path.parent)) == [".remote.json.lock", "remote.json"]


def test_rewriting_an_old_file_keeps_the_tokens_another_process_refreshed_meanwhile(
    tmp_path: Path,
) -> None:
    with_password = URL.replace("http://", f"http://user:{PASSWORD}@", 1)
    path = tmp_path / "mcp-auth" / "remote.json"
    path.parent.mkdir(mode=0o700)
    os.mkfifo(path)  # the reader waits here until the old file is given to it
    reader = run_saver(path, with_password, "read", 0)
    old = {"url": with_password, "tokens": {"access_token": "at-old", "token_type": "Bearer"}}

    with held_exclusively(path.with_name(".remote.json.lock")):  # a refresh, saving
        with path.open("w", encoding="utf-8") as fifo:
            fifo.write(json.dumps(old))
        signed_in(path, URL, "at-refreshed")

    assert finished(reader) == "at-refreshed"
    text = path.read_text(encoding="utf-8")
    assert json.loads(text)["tokens"]["access_token"] == "at-refreshed"
    assert PASSWORD not in text


def stored(path: Path, url: str, *, signing_in: bool = False) -> TokenFile:
    return TokenFile(
        path, url, None, redirect_uri="http://127.0.0.1/cb", keep_registration=signing_in
    )


def test_a_refresh_saved_after_a_logout_does_not_sign_in_again(tmp_path: Path) -> None:
    env = Environment(home=tmp_path / "home", cwd=tmp_path)
    path = token_path(env, "remote")
    signed_in(path, URL, "at-first")
    serving = stored(path, URL)  # a hermes serve that read the sign-in

    assert sign_out("remote", env)
    anyio.run(serving.set_tokens, OAuthToken(access_token="at-refreshed", token_type="Bearer"))

    assert not path.exists()


def test_a_refresh_for_the_old_url_keeps_a_sign_in_to_the_new_one(tmp_path: Path) -> None:
    path = tmp_path / "mcp-auth" / "remote.json"
    signed_in(path, URL, "at-old-url")
    serving = stored(path, URL)  # a hermes serve started before the url was changed
    new_url = "http://127.0.0.1:10/mcp"
    login = stored(path, new_url, signing_in=True)
    anyio.run(login.set_tokens, OAuthToken(access_token="at-new-url", token_type="Bearer"))

    anyio.run(serving.set_tokens, OAuthToken(access_token="at-refreshed", token_type="Bearer"))

    record = json.loads(path.read_text(encoding="utf-8"))
    assert record["url"] == new_url
    assert record["tokens"]["access_token"] == "at-new-url"


_TWO_CONNECTIONS = """
import sys
from pathlib import Path

import anyio
from mcp.shared.auth import OAuthToken

from hermes_core._mcp.tokens import TokenFile


async def main(path: Path, url: str) -> None:
    refreshing, stepping_up = (
        TokenFile(path, url, None, redirect_uri="http://127.0.0.1/cb", keep_registration=False)
        for _ in range(2)
    )
    async with refreshing.turn():
        stepping_up.want_scope("read write")  # another connection to the server, meanwhile
        await refreshing.set_tokens(OAuthToken(access_token="at-refreshed", token_type="Bearer"))
    async with stepping_up.turn():  # then the other one's turn
        found = stepping_up.newer_tokens(None)
    print(found.access_token if found is not None else "none")


anyio.run(main, Path(sys.argv[1]), sys.argv[2])
"""


def test_a_save_during_a_refresh_of_the_same_sign_in_in_one_process_goes_on(
    tmp_path: Path,
) -> None:
    # Two connections to one server in a process: the lock the refresh holds is this
    # process's; a save of the other one waiting for it would wait for ever.
    path = tmp_path / "mcp-auth" / "remote.json"
    signed_in(path, URL, "at-first")
    process = subprocess.Popen(
        [sys.executable, "-c", _TWO_CONNECTIONS, str(path), URL],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )

    assert finished(process) == "at-refreshed"
    record = json.loads(path.read_text(encoding="utf-8"))
    assert record["tokens"]["access_token"] == "at-refreshed"
    assert record["wanted_scope"] == "read write"
