"""Issue 27, point 8: the smaller ways another account or a log reader gets at what is the
user's. Hermes' own directories are private, a killed config edit leaves no temporary file
behind, secrets in commands and webhook URLs never reach the activity log, and a server's
``--api-key`` goes to ``$HERMES_HOME/.env``, never into config.yaml."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from accounts import AS_NOBODY, AS_ROOT, needs_another_account

from hermes_core._activity import ACTIVITY_LOG_NAME
from hermes_core._config import Config
from hermes_core._paths import Environment
from hermes_core._redaction import REDACTED
from hermes_core.testing import HermesCli, make_host
from hermes_core.testing._cli_in_process import InProcessCli

pytestmark = pytest.mark.subprocess

TOOLBOX = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "toolbox.py"


@pytest.fixture
def shared_root() -> Iterator[Path]:
    """A directory under /tmp that every account may traverse (pytest's tmp_path is 0700, so
    an attack run as another user would fail for the wrong reason)."""
    root = Path(tempfile.mkdtemp(dir="/tmp", prefix="hermes-i27-small-"))
    root.chmod(0o755)
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _cli(root: Path) -> HermesCli:
    """The real ``hermes`` with its home, cache and log directories not made yet."""
    cli = InProcessCli(root, home=root / "state" / "hermes-home", work=root / "project")
    cli.home.rmdir()  # HermesCli creates the home; hermes must make it (and state/) itself
    cli.home.parent.rmdir()
    return cli


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# $HERMES_HOME and hermes' own directories -------------------------------------------------


def test_hermes_creates_its_home_cache_and_log_directories_private(shared_root: Path) -> None:
    cli = _cli(shared_root)
    cli.run("config", "set", "approvals.timeout", "30")
    cli.run("--help")  # caches the plugin commands' help
    cli.run("tools", "call", "todo", '{"todos": []}', ok=False)

    made = {"home": cli.home, "cache": cli.cache_dir, "log": cli.log_dir}
    assert {name: oct(_mode(path)) for name, path in made.items()} == {
        name: "0o700" for name in made
    }
    # The missing parent hermes made on the way is not readable by others either.
    assert _mode(cli.home.parent) == 0o700
    if AS_ROOT:  # as another user, the modes above are what keeps others out
        attempt = subprocess.run(
            [*AS_NOBODY, "ls", str(cli.home)], capture_output=True, text=True, check=False
        )
        assert attempt.returncode != 0
        assert "config.yaml" not in attempt.stdout


def test_a_home_the_user_made_keeps_its_mode(shared_root: Path) -> None:
    cli = _cli(shared_root)
    cli.home.mkdir(parents=True)
    cli.home.chmod(0o750)
    cli.run("config", "set", "approvals.timeout", "30")
    assert _mode(cli.home) == 0o750
    assert _mode(cli.config) == 0o600


_KIT_HOST = textwrap.dedent(
    """
    import anyio
    from hermes_core.testing import make_host

    host = make_host()
    anyio.run(host.dispatch, "skills_list", {}, host.new_session())
    host.close()
    """
)


@needs_another_account
def test_the_testing_kits_folder_in_tmp_made_first_by_another_account_is_refused(
    shared_root: Path,
) -> None:
    # make_host's home, logs and cache are under one name in the temporary folder: another
    # account that makes it first links the activity log to a file of the user's.
    shared = shared_root / "tmp"
    shared.mkdir(mode=0o1777)
    shared.chmod(0o1777)
    victim = shared / "victim.txt"
    victim.write_text("the user's own file\n", encoding="utf-8")
    victim.chmod(0o600)
    plant = (
        "umask 0; for name in hermes-make-search-backend hermes-make-search-backend-$0; do "
        "mkdir -p $name/home/logs && ln -s ../../../victim.txt $name/home/logs/activity.jsonl; "
        "done"
    )
    subprocess.run([*AS_NOBODY, "sh", "-c", plant, str(os.geteuid())], cwd=shared, check=True)

    done = subprocess.run(
        [sys.executable, "-c", _KIT_HOST],
        env={**os.environ, "TMPDIR": str(shared)},
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert victim.read_text(encoding="utf-8") == "the user's own file\n"
    assert done.returncode != 0
    assert "belongs to another account (uid 65534)" in done.stderr
    assert "remove it" in done.stderr


def test_the_testing_kits_folder_in_tmp_is_the_users_alone(shared_root: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _KIT_HOST],
        env={**os.environ, "TMPDIR": str(shared_root)},
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert done.returncode == 0, done.stderr
    (made,) = shared_root.iterdir()
    assert made.name == f"hermes-make-search-backend-{os.geteuid()}"
    assert _mode(made) == 0o700
    assert (made / "home" / "logs" / ACTIVITY_LOG_NAME).is_file()


# Temporary files of killed config edits ---------------------------------------------------

_WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from hermes_core._atomic_write import write_atomically

    path = Path(sys.argv[1])
    filler = "# " + "x" * 200 + "\\n"
    n = 0
    while True:
        n += 1
        write_atomically(path, f"approvals:\\n  timeout: {n}\\n" + filler * 2500)
        if n == 1:
            print("writing", flush=True)  # started up: the next writes are under way
    """
)


def _temporaries(home: Path) -> list[str]:
    return sorted(p.name for p in home.iterdir() if p.name.startswith(".config.yaml."))


def test_edits_killed_mid_write_leave_no_temporary_file_after_the_next_write(
    tmp_path: Path,
) -> None:
    cli = InProcessCli(tmp_path)
    config = cli.config
    config.write_text("approvals:\n  timeout: 1\n", encoding="utf-8")
    script = tmp_path / "writer.py"
    script.write_text(_WRITER, encoding="utf-8")
    left_behind = 0
    for round_ in range(30):
        writer = subprocess.Popen(
            [sys.executable, str(script), str(config)], stdout=subprocess.PIPE, text=True
        )
        assert writer.stdout is not None
        # Its first write done, however long the start took on a loaded machine; then a
        # little into one of the next writes.
        assert writer.stdout.readline() == "writing\n"
        time.sleep((round_ % 7) * 0.003)
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        writer.stdout.close()
        left_behind = max(left_behind, len(_temporaries(cli.home)))
        if left_behind:
            break
    assert left_behind > 0, "no kill landed mid-write: the test proves nothing"

    cli.run("config", "set", "approvals.timeout", "45")

    assert _temporaries(cli.home) == []
    assert cli.run("config", "validate").returncode == 0
    assert "timeout: 45" in config.read_text(encoding="utf-8")


_PAUSED_WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from hermes_core._atomic_write import write_bytes_atomically

    def chunks():
        yield b"approvals:\\n"
        print("writing", flush=True)
        sys.stdin.readline()  # the test writes the same file meanwhile
        yield b"  timeout: 77\\n"

    write_bytes_atomically(Path(sys.argv[1]), chunks())
    """
)


def test_a_live_writers_temporary_file_is_never_removed(tmp_path: Path) -> None:
    cli = InProcessCli(tmp_path)
    cli.config.write_text("approvals:\n  timeout: 1\n", encoding="utf-8")
    script = tmp_path / "paused.py"
    script.write_text(_PAUSED_WRITER, encoding="utf-8")
    with subprocess.Popen(
        [sys.executable, str(script), str(cli.config)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as writer:
        assert writer.stdout is not None
        assert writer.stdin is not None
        try:
            assert writer.stdout.readline() == "writing\n"
            (pending,) = _temporaries(cli.home)

            cli.run("config", "set", "approvals.timeout", "45")

            assert pending in _temporaries(cli.home)
            writer.stdin.write("go\n")
            writer.stdin.flush()
            assert writer.wait(timeout=30) == 0
        finally:
            if writer.poll() is None:
                writer.kill()
    assert cli.config.read_text(encoding="utf-8") == "approvals:\n  timeout: 77\n"
    assert _temporaries(cli.home) == []


# Redaction of the activity log -------------------------------------------------------------

SLACK_HOOK = "https://hooks.slack.com/services/T0123ABCD/B0456EFGH/abcdEFGHijklMNOPqrstUVWX"
DISCORD_HOOK = "https://discord.com/api/webhooks/123456789012345678/" + "AbC-dEf_" * 8
TELEGRAM_TOKEN = "123456789:AAH" + "tElEgRaMsEcReT" * 3

# Each: the command, what must not reach the log, what must (so the command stays readable).
COMMAND_SHAPES = [
    pytest.param(
        "docker login -u bob -p hunter2secret registry.example",
        ["hunter2secret"],
        "registry.example",
        id="docker-login-p",
    ),
    pytest.param(
        "docker login -p hunter2secret -u bob", ["hunter2secret"], "-u bob", id="docker-p-first"
    ),
    pytest.param(
        "podman login --username bob -p 'hunter2 secret' quay.io",
        ["hunter2"],
        "quay.io",
        id="podman-login-p-quoted",
    ),
    pytest.param(
        "docker login --password hunter2secret registry.example",
        ["hunter2secret"],
        "registry.example",
        id="docker-login-password",
    ),
    pytest.param(
        "docker login --password=hunter2secret", ["hunter2secret"], "docker login", id="password="
    ),
    pytest.param(
        "helm registry login -u bob -p hunter2secret ghcr.io",
        ["hunter2secret"],
        "ghcr.io",
        id="helm-registry-login-p",
    ),
    pytest.param(
        "twine upload -u __token__ -p hunter2secret dist/*",
        ["hunter2secret"],
        "dist/*",
        id="twine-p",
    ),
    pytest.param(
        "az login -u bob@example.org -p hunter2secret",
        ["hunter2secret"],
        "az login",
        id="az-login-p",
    ),
    pytest.param(
        "redis-cli -h cache -a hunter2secret ping", ["hunter2secret"], "ping", id="redis-cli-a"
    ),
    pytest.param(
        "ldapsearch -x -D cn=admin -w hunter2secret -b dc=example",
        ["hunter2secret"],
        "-b dc=example",
        id="ldapsearch-w",
    ),
    pytest.param(
        "zip -P hunter2secret backup.zip notes.txt", ["hunter2secret"], "backup.zip", id="zip-P"
    ),
    pytest.param("7z a -phunter2secret backup.7z dir", ["hunter2secret"], "backup.7z", id="7z-p"),
    pytest.param(
        "openssl enc -aes256 -pass pass:hunter2secret -in f",
        ["hunter2secret"],
        "-in f",
        id="openssl-pass",
    ),
    pytest.param(
        'curl -X POST -d \'{"text": "deployed"}\' ' + SLACK_HOOK,
        ["abcdEFGHijklMNOPqrstUVWX"],
        "hooks.slack.com/services/",
        id="slack-webhook",
    ),
    pytest.param(
        "export SLACK_URL=" + SLACK_HOOK.replace("https://", ""),
        ["abcdEFGHijklMNOPqrstUVWX"],
        "SLACK_URL=",
        id="slack-webhook-no-scheme",
    ),
    pytest.param(
        "curl -H 'Content-Type: application/json' -d @msg.json " + DISCORD_HOOK,
        ["AbC-dEf_"],
        "discord.com/api/webhooks/",
        id="discord-webhook",
    ),
    pytest.param(
        f"curl https://api.telegram.org/bot{TELEGRAM_TOKEN}/sendMessage -d text=hi",
        ["tElEgRaMsEcReT"],
        "/sendMessage",
        id="telegram-bot-token",
    ),
    pytest.param(
        "curl 'https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&sig=s1gn4tur3%2BsEcReT%3D'",
        ["s1gn4tur3"],
        "sv=2022-11-02",
        id="azure-sas-sig",
    ),
    pytest.param(
        "curl 'https://b.s3.amazonaws.com/f?X-Amz-Date=20260101&X-Amz-Signature=0123abcdef9876'",
        ["0123abcdef9876"],
        "X-Amz-Date=20260101",
        id="s3-presigned-signature",
    ),
    pytest.param(
        "vault login hvs.CAESIJlWhS0p1n9oE4rMZ5jV2X4Ks7s3cReTtOkEn",
        ["CAESIJlWhS0p1n9oE4rMZ5jV2X4Ks7s3cReTtOkEn"],
        "vault login",
        id="vault-token",
    ),
    pytest.param(
        "export SENDGRID=SG." + "aB1" * 8 + "." + "cD2eF3" * 8,
        ["cD2eF3cD2eF3"],
        "export SENDGRID=",
        id="sendgrid-key",
    ),
]

# Commands that look alike and hold no secret: redaction must leave them whole.
KEPT_COMMANDS = [
    "docker run -p 8080:80 nginx",
    "docker ps -a",
    "mkdir -p build/out",
    "zip -r backup.zip notes",
    "git add -p src",
    "curl https://hooks.example.org/services/status",
]


def _host_environment(root: Path) -> Environment:
    home, work = root / "home", root / "work"
    home.mkdir()
    work.mkdir()
    variables = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(home),
        "HERMES_HOME": str(home),
        "HERMES_LOG_DIR": str(root / "logs"),
        "HERMES_CACHE_DIR": str(root / "cache"),
        "HERMES_STRICT_PLUGINS": "1",
    }
    return Environment(home=home, cwd=work, variables=variables)


def _logged_terminal_calls(root: Path, commands: list[str]) -> tuple[str, list[dict[str, object]]]:
    """Each command given to the real ``terminal`` tool through a real host's dispatcher (no
    one to approve: denied, and logged); the activity log's text and its records."""
    env = _host_environment(root)
    host = make_host(Config(), env)
    try:
        for command in commands:
            session = host.new_session()
            result = anyio.run(host.dispatch, "terminal", {"command": command}, session)
            assert result.error_code == "DENIED"
        host.dispatcher.activity_log.flush()
    finally:
        host.close()
    text = (env.log_dir / ACTIVITY_LOG_NAME).read_text(encoding="utf-8")
    return text, [json.loads(line) for line in text.splitlines()]


@pytest.mark.parametrize(("command", "secrets", "kept"), COMMAND_SHAPES)
def test_secrets_in_commands_and_webhook_urls_never_reach_the_activity_log(
    tmp_path: Path, command: str, secrets: list[str], kept: str
) -> None:
    text, records = _logged_terminal_calls(tmp_path, [command])

    (record,) = records
    shown = json.dumps(record["arguments"], ensure_ascii=False)
    for secret in secrets:
        assert secret not in text
    assert REDACTED in shown
    assert kept in shown


def test_commands_that_only_look_alike_are_logged_whole(tmp_path: Path) -> None:
    _, records = _logged_terminal_calls(tmp_path, KEPT_COMMANDS)

    assert [record["arguments"] for record in records] == [
        {"command": command} for command in KEPT_COMMANDS
    ]


# hermes mcp add: a server's own --api-key ---------------------------------------------------

_CHECKING_SERVER = textwrap.dedent(
    """
    import os, sys
    expected = EXPECTED
    given = sys.argv[sys.argv.index("--api-key") + 1]
    if given != expected:
        sys.exit(f"wrong --api-key: {given!r}")
    os.execv(sys.executable, [sys.executable, TOOLBOX])
    """
)


def _checking_server(root: Path, key: str) -> Path:
    """A real stdio MCP server (the tests' toolbox) that refuses to start unless its
    ``--api-key`` is ``key``."""
    script = root / "keyed_server.py"
    text = _CHECKING_SERVER.replace("TOOLBOX", repr(str(TOOLBOX)))
    script.write_text(text.replace("EXPECTED", repr(key)), encoding="utf-8")
    return script


def test_mcp_add_puts_a_servers_api_key_in_dotenv_and_a_reference_in_config(
    tmp_path: Path,
) -> None:
    key = "sk-" + "live" * 6
    cli = InProcessCli(tmp_path)
    server = _checking_server(tmp_path, key)

    done = cli.run("mcp", "add", "keyed", "--", sys.executable, str(server), "--api-key", key)

    config_text = cli.config.read_text(encoding="utf-8")
    assert key not in config_text
    assert "${KEYED_API_KEY}" in config_text
    dotenv = cli.home / ".env"
    assert _mode(dotenv) == 0o600
    assert dotenv.read_text(encoding="utf-8") == f"KEYED_API_KEY={key}\n"
    assert "args[2] -> ${KEYED_API_KEY}" in done.stdout
    # The reference resolves from .env when hermes starts the server.
    probe = cli.run("mcp", "test", "keyed", ok=False)
    assert probe.returncode == 0, probe.stderr
    assert "connected and listed" in probe.stdout


def test_mcp_add_moves_an_attached_api_key_and_keeps_a_reference_given_as_is(
    tmp_path: Path,
) -> None:
    cli = InProcessCli(tmp_path)
    cli.run("mcp", "add", "one", "--", "server", "--token=ghp_" + "t" * 36, "--port", "3000")
    cli.run("mcp", "add", "two", "--", "server", "--api-key", "${MY_OWN_KEY}")

    config_text = cli.config.read_text(encoding="utf-8")
    assert "ghp_" not in config_text
    assert "--token=${ONE_TOKEN}" in config_text
    assert "${MY_OWN_KEY}" in config_text
    assert (cli.home / ".env").read_text(encoding="utf-8") == f"ONE_TOKEN=ghp_{'t' * 36}\n"


def test_mcp_add_moves_a_credential_header_given_to_mcp_remote(tmp_path: Path) -> None:
    cli = InProcessCli(tmp_path)
    url = "https://mcp.example/sse"
    cli.run(
        "mcp",
        "add",
        "remote",
        "--",
        "npx",
        "mcp-remote",
        url,
        "--header",
        "Authorization: Bearer abc123secret",
        "--header",
        "Accept: text/event-stream",
        "--token-file",
        "/etc/remote.token",
    )

    config_text = cli.config.read_text(encoding="utf-8")
    assert "abc123secret" not in config_text
    assert "Authorization: Bearer ${REMOTE_AUTHORIZATION}" in config_text
    for kept in ("Accept: text/event-stream", "/etc/remote.token", url):
        assert kept in config_text
    assert (cli.home / ".env").read_text(encoding="utf-8") == "REMOTE_AUTHORIZATION=abc123secret\n"
