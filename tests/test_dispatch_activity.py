"""The activity log: redaction of secrets and the JSON-lines writer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_core.activity import REDACTED, ActivityLog, redact
from hermes_core.specs import ActivityEvent


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
        "source",
        "message",
        "arguments",
    }


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
