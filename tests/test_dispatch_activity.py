"""The activity log: redaction of secrets and the JSON-lines writer."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from hermes_core._activity import ActivityLog
from hermes_core._redaction import REDACTED, redact
from hermes_core._specs import ActivityEvent


@pytest.mark.parametrize(
    "key",
    [
        "api_key",
        "API-KEY",
        "token",
        "github_token",
        "password",
        "passwd",
        "secret",
        "client_secret",
        "Authorization",
        "cookie",
        "aws_access_key",
        "private_key",
    ],
)
def test_values_under_secret_named_keys_are_redacted(key: str) -> None:
    assert redact({key: "abc", "city": "Paris"}) == {key: REDACTED, "city": "Paris"}


@pytest.mark.parametrize(
    "secret",
    [
        "sk-" + "a1B2" * 8,
        "ghp_" + "x" * 36,
        "AKIA" + "ABCDEFGHIJKLMNOP",
        "Bearer eyJhbGciOiJIUzI1NiJ9.payload.signature",
        "-----BEGIN RSA PRIVATE KEY-----",
    ],
)
def test_secret_looking_strings_are_redacted_wherever_they_are(secret: str) -> None:
    arguments = {"command": f"curl -H 'x: {secret}' https://example.org", "list": [secret]}

    redacted = redact(arguments)

    assert secret not in json.dumps(redacted)
    assert redacted["command"].startswith("curl -H 'x: ")
    assert redacted["list"] == [REDACTED]


def test_ordinary_arguments_are_kept() -> None:
    arguments = {"author": "Ann", "path": "src/tokens.py", "n": 3, "nested": {"keyword": "x"}}

    assert redact(arguments) == arguments


def _event(name: str, **arguments: object) -> ActivityEvent:
    return ActivityEvent(name, arguments, "ok", 1.5, "session-1", "files")


def test_log_writes_one_json_line_per_event_in_order(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "activity.jsonl"
    log = ActivityLog(path)
    for index in range(50):
        log.write(_event("read_file", path=f"f{index}.txt"))
    log.flush()

    records = [json.loads(line) for line in path.read_text().splitlines()]
    log.close()

    assert [r["arguments"]["path"] for r in records] == [f"f{i}.txt" for i in range(50)]
    assert set(records[0]) == {
        "time",
        "name",
        "status",
        "duration_ms",
        "session_id",
        "parent_id",
        "source",
        "message",
        "arguments",
    }
    assert records[0]["parent_id"] is None  # a session no one delegated


def test_unserializable_arguments_are_written_as_text(tmp_path: Path) -> None:
    path = tmp_path / "activity.jsonl"
    log = ActivityLog(path)

    log.write(_event("odd", value={1, 2}))
    log.close()

    (record,) = [json.loads(line) for line in path.read_text().splitlines()]
    assert record["name"] == "odd"
    assert "1, 2" in json.dumps(record["arguments"])


def test_close_writes_what_is_queued_and_later_writes_are_dropped(tmp_path: Path) -> None:
    path = tmp_path / "activity.jsonl"
    log = ActivityLog(path, interval=60)
    log.write(_event("first"))

    log.close()
    log.write(_event("after-close"))
    log.flush()

    assert [json.loads(line)["name"] for line in path.read_text().splitlines()] == ["first"]


@pytest.mark.parametrize(
    ("command", "secret", "kept"),
    [
        pytest.param("export OPENAI_API_KEY=abcd && run", "abcd", "OPENAI_API_KEY=", id="export"),
        pytest.param("PGPASSWORD=x psql -h db", "=x", "psql -h db", id="env-prefix"),
        pytest.param("./deploy --auth-token='a b c'", "a b c", "--auth-token=", id="quoted"),
        pytest.param("mysql -u root -phunter2 shop", "hunter2", "mysql -u root -p", id="mysql"),
        pytest.param("git clone https://bob:hunter2@git.example/x", "hunter2", "bob:", id="url"),
        pytest.param("curl -u alice:s3cret https://x.example", "s3cret", "-u alice:", id="curl"),
    ],
)
def test_secrets_assigned_in_commands_are_redacted(command: str, secret: str, kept: str) -> None:
    shown = redact({"command": command})["command"]

    assert secret not in shown
    assert kept in shown
    assert REDACTED in shown


def test_mysql_asking_for_its_password_and_author_assignments_are_kept() -> None:
    arguments = {"command": "mysql -u root -p shop; git log --author=ann"}

    assert redact(arguments) == arguments


def test_a_json_string_argument_is_redacted_as_data() -> None:
    shown = redact({"payload": '{"api_key": "abc123", "city": "Paris"}'})

    assert json.loads(shown["payload"]) == {"api_key": REDACTED, "city": "Paris"}


def test_the_error_message_in_the_activity_log_is_redacted(tmp_path: Path) -> None:
    from builders import build_harness

    from hermes_core._hookspecs import hookimpl
    from hermes_core._tools import Tool, ToolAnnotations

    class LeakyTools:
        @hookimpl
        def hermes_tools(self) -> list[Tool]:
            def connect() -> str:
                raise ConnectionError("login failed for postgres://app:hunter2@db/shop")

            return [Tool("connect", "x", handler=connect, annotations=ToolAnnotations(True))]

    harness = build_harness(tmp_path, plugins=[("leaky", LeakyTools())])
    try:
        result = harness.call("connect", {})
        (record,) = harness.activity()
    finally:
        harness.close()

    assert "hunter2" in result.text_content  # the model still sees what went wrong
    assert "hunter2" not in record["message"]
    assert "postgres://app:[redacted]@db/shop" in record["message"]


def test_one_unserializable_record_does_not_stop_the_writer(tmp_path: Path) -> None:
    path = tmp_path / "activity.jsonl"
    log = ActivityLog(path, interval=0.01)

    log.write(_event("huge", value=10**5000))
    log.flush()
    log.write(_event("after"))
    log.close()

    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [record["name"] for record in records] == ["huge", "after"]
    assert records[0]["arguments"].startswith("[not serializable")


def test_the_writer_thread_survives_an_unserializable_record(tmp_path: Path) -> None:
    path = tmp_path / "activity.jsonl"
    log = ActivityLog(path, interval=0.01)
    log.write(_event("huge", value=10**5000))
    for _ in range(500):  # the background thread writes it: wait until it has
        if path.exists():
            break
        threading.Event().wait(0.01)

    log.write(_event("after"))
    for _ in range(500):
        if "after" in path.read_text():
            break
        threading.Event().wait(0.01)

    try:
        assert log._thread is not None
        assert log._thread.is_alive()
        assert "after" in path.read_text()
    finally:
        log.close()


def test_a_lone_surrogate_in_one_event_loses_no_event_of_its_batch(tmp_path: Path) -> None:
    path = tmp_path / "activity.jsonl"
    log = ActivityLog(path, interval=60)  # one batch: everything is written by close()
    for index in range(11):
        log.write(_event("read_file", path="a\ud800.txt" if index == 5 else f"f{index}.txt"))

    log.close()

    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(records) == 11
    assert records[5]["arguments"]["path"] == "a\ud800.txt"  # written as the JSON escape \ud800
    assert [r["arguments"]["path"] for r in records[6:]] == [f"f{i}.txt" for i in range(6, 11)]


def test_the_log_and_the_directory_hermes_creates_for_it_are_private(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "activity.jsonl"
    log = ActivityLog(path)

    log.write(_event("read_file", path="a.txt"))
    log.close()

    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700


def test_in_an_existing_log_directory_only_the_new_log_file_is_made_private(tmp_path: Path) -> None:
    directory = tmp_path / "shared-logs"
    directory.mkdir()
    directory.chmod(0o755)
    log = ActivityLog(directory / "activity.jsonl")

    log.write(_event("read_file", path="a.txt"))
    log.close()

    assert directory.stat().st_mode & 0o777 == 0o755
    assert (directory / "activity.jsonl").stat().st_mode & 0o777 == 0o600


PRIVATE_KEY_BODY = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun"
PRIVATE_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    f"{PRIVATE_KEY_BODY}\nVbLqTVvDyvD0wjWGmrvQ4VQFXCT2EXAMPLEKEYBODY2oFNOb3yB\n"
    "-----END RSA PRIVATE KEY-----\n"
)
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk"
STRIPE = ("sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "sk_test_" + "51Hx" * 6, "rk_live_" + "Zx9" * 8)


def _command(text: str) -> tuple[str, dict[str, str]]:
    return "terminal", {"command": text}


def _content(path: str, text: str) -> tuple[str, dict[str, str]]:
    return "write_file", {"path": path, "content": text}


# Each shape: the call, the secrets that must not reach the log, and text around them that must.
SECRET_SHAPES = [
    pytest.param(
        _command("export OPENAI_API_KEY=abcd1234 && run"),
        ["abcd1234"],
        "OPENAI_API_KEY=",
        id="export-assignment",
    ),
    pytest.param(
        _command("PGPASSWORD=hunter2 psql -h db"), ["hunter2"], "psql -h db", id="env-prefix"
    ),
    pytest.param(
        _command("./deploy --auth-token='a b c' now"), ["a b c"], "--auth-token=", id="flag-equals"
    ),
    pytest.param(
        _command("mysql -u root -phunter2 shop"), ["hunter2"], "mysql -u root -p", id="mysql-p"
    ),
    pytest.param(
        _command("git clone https://bob:hunter2@git.example/x"),
        ["hunter2"],
        "https://bob:",
        id="url-credentials",
    ),
    pytest.param(
        _command("curl -u alice:s3cret https://x.example"), ["s3cret"], "-u alice:", id="curl-u"
    ),
    pytest.param(
        _command("curl 'https://api.example/v1/items?token=abc123def&page=2'"),
        ["abc123def"],
        "page=2",
        id="url-query-token",
    ),
    pytest.param(
        _command("curl -H 'Authorization: Bearer " + JWT + "' https://api.example"),
        [JWT, "dBjftJeZ4CVPmB92K27uhbUJU1p1r"],
        "https://api.example",
        id="authorization-bearer",
    ),
    pytest.param(
        _command("llm --prompt hi --note sk-" + "a1B2" * 8),
        ["a1B2a1B2"],
        "--note ",
        id="openai-sk",
    ),
    pytest.param(
        _command("gh api -H 'x: ghp_" + "x" * 36 + "' /user"), ["ghp_xxxx"], "/user", id="ghp"
    ),
    pytest.param(
        _command("echo github_pat_" + "11ABCDEFG" * 4 + " | gh auth login"),
        ["11ABCDEFG"],
        "gh auth login",
        id="github-pat",
    ),
    pytest.param(
        _command("slack-post xoxb-" + "1234567890-abcdefghij" + " '#general'"),
        ["abcdefghij"],
        "#general",
        id="slack-xoxb",
    ),
    pytest.param(
        _command("aws configure set aws_access_key_id AKIA" + "ABCDEFGHIJKLMNOP"),
        ["ABCDEFGHIJKLMNOP"],
        "aws configure set",
        id="aws-akia",
    ),
    pytest.param(
        _command("gcloud x --key AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"),
        ["9tSrke72PouQMnMX"],
        "gcloud x",
        id="google-aiza",
    ),
    pytest.param(
        _content("config.json", '{"api_key": "abc123secret", "city": "Paris"}'),
        ["abc123secret"],
        "Paris",
        id="json-in-a-string",
    ),
    pytest.param(
        _command("llm --api-key abc123secret --model m"),
        ["abc123secret"],
        "--model m",
        id="flag-api-key-space",
    ),
    pytest.param(
        _command("gh auth login --with-token gho_short1234 --hostname h"),
        ["gho_short1234"],
        "--hostname h",
        id="flag-with-token-space",
    ),
    pytest.param(
        _command("docker login --password hunter2 -u bob registry.example"),
        ["hunter2"],
        "-u bob registry.example",
        id="flag-password-space",
    ),
    pytest.param(
        _command("curl -H 'X-Api-Key: abc123secret' https://api.example"),
        ["abc123secret"],
        "X-Api-Key: ",
        id="header-x-api-key",
    ),
    pytest.param(
        _command('curl -H "Authorization: Bearer abc123" https://api.example'),
        ["abc123"],
        "Authorization: ",
        id="header-authorization-short-token",
    ),
    pytest.param(
        _content("deploy.txt", f"# deploy key\n{PRIVATE_KEY}# end\n"),
        [PRIVATE_KEY_BODY, "EXAMPLEKEYBODY"],
        "# end",
        id="private-key",
    ),
    pytest.param(
        _content("stripe.txt", "stripe keys:\n" + "\n".join(STRIPE)),
        [key[8:] for key in STRIPE],
        "stripe keys:",
        id="stripe",
    ),
    pytest.param(
        _command("huggingface-cli login --token-file x hf_" + "aBcD" * 9),
        ["aBcDaBcD"],
        "--token-file x",
        id="huggingface-hf",
    ),
    pytest.param(
        _command("git clone https://gitlab.example/x --config t=glpat-" + "Ab1_" * 5),
        ["Ab1_Ab1_"],
        "git clone",
        id="gitlab-glpat",
    ),
    pytest.param(_command("echo " + JWT + " > t"), [JWT[:40], JWT[-20:]], "> t", id="jwt"),
    pytest.param(
        _content("db.yaml", "db:\n  host: db.example\n  password: hunter2\n  port: 5432\n"),
        ["hunter2"],
        "port: 5432",
        id="yaml-password",
    ),
]


@pytest.mark.parametrize(("call", "secrets", "kept"), SECRET_SHAPES)
def test_secret_shapes_never_reach_the_activity_log_file(
    tmp_path: Path, call: tuple[str, dict[str, str]], secrets: list[str], kept: str
) -> None:
    from builders import build_harness

    harness = build_harness(tmp_path)  # non-interactive: the call is denied, and logged
    try:
        name, arguments = call
        result = harness.call(name, arguments)
        harness.dispatcher.activity_log.flush()
    finally:
        harness.close()

    assert result.error_code == "DENIED"
    text = (harness.env.log_dir / "activity.jsonl").read_text(encoding="utf-8")
    (record,) = [json.loads(line) for line in text.splitlines()]
    assert record["name"] == name
    shown = json.dumps(record["arguments"], ensure_ascii=False)
    for secret in secrets:
        assert secret not in text
    assert REDACTED in shown
    assert kept in shown


def test_secrets_inside_sets_and_objects_that_are_not_json_are_redacted(tmp_path: Path) -> None:
    token = "ghp_" + "s" * 36

    class Opaque:
        def __repr__(self) -> str:
            return f"Opaque(token={token})"

    path = tmp_path / "activity.jsonl"
    log = ActivityLog(path)
    log.write(_event("odd", **redact({"tags": {token}, "thing": Opaque(), "raw": token.encode()})))
    log.close()

    text = path.read_text(encoding="utf-8")
    assert "sssssssss" not in text
    assert json.loads(text)["arguments"]["tags"] == [REDACTED]


def test_an_event_with_arguments_nested_too_deeply_is_still_logged(tmp_path: Path) -> None:
    from builders import build_harness

    deep: list[object] = []
    for _ in range(5000):
        deep = [deep]
    harness = build_harness(tmp_path)
    try:
        result = harness.call("read_file", {"path": "x", "deep": deep})
        (record,) = harness.activity()
    finally:
        harness.close()

    assert result.error_code == "INVALID_ARGUMENTS"
    assert record["name"] == "read_file"
    assert record["arguments"]["path"] == "x"
    assert "[nested too deeply]" in json.dumps(record["arguments"])


def test_redacting_a_long_text_of_mysql_words_takes_linear_time() -> None:
    import time

    text = "mysql " * 20_000 + "x-p"  # every "mysql" once looked for its -p to the end
    started = time.process_time()

    assert redact(text) == text
    assert time.process_time() - started < 2.0  # ~28 s when each word scanned to the end
