"""The parsed manifests kept between processes (hermes_core/_plugins/manifest_cache.py): used
only for the very text they were parsed from, checked as a fresh parse is, and never in the
way when the file is damaged."""

from __future__ import annotations

import hashlib
import json
import stat
from pathlib import Path

import pytest

import hermes_core._yaml_limits
from hermes_core._paths import Environment
from hermes_core._plugins import discover
from hermes_core._plugins import manifest as manifest_module
from hermes_core._plugins.manifest_cache import CACHE_FILE
from hermes_core.testing import write_dir_plugin


def cache_file(env: Environment) -> Path:
    return env.cache_dir / CACHE_FILE


def key_of(path: Path) -> str:
    return hashlib.sha256(path.read_text(encoding="utf-8").encode("utf-8")).hexdigest()


def next_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget what this process parsed, as a new ``hermes`` command starts with nothing."""
    monkeypatch.setattr(manifest_module, "_PARSED", {})


def no_yaml_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object) -> None:
        raise AssertionError("a manifest was parsed again")

    monkeypatch.setattr(hermes_core._yaml_limits, "load_limited", refuse)


def test_a_later_command_parses_no_manifest_an_earlier_one_parsed(
    hermes_env: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_dir_plugin(hermes_env.user_plugins_dir, "demo", manifest={"version": "1.10"})
    first = {c.name: c.manifest for c in discover(hermes_env).candidates}
    next_process(monkeypatch)
    no_yaml_parse(monkeypatch)

    again = {c.name: c.manifest for c in discover(hermes_env).candidates}

    assert again == first
    assert again["demo"] is not None
    assert again["demo"].version == "1.10"  # as written, not the float 1.1
    assert stat.S_IMODE(cache_file(hermes_env).stat().st_mode) == 0o600


def test_a_changed_manifest_is_parsed_again(
    hermes_env: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = write_dir_plugin(hermes_env.user_plugins_dir, "demo")
    discover(hermes_env)
    next_process(monkeypatch)
    (directory / "plugin.yaml").write_text("name: demo\nversion: '2.0'\n", encoding="utf-8")

    (found,) = [c for c in discover(hermes_env).candidates if c.name == "demo"]

    assert found.manifest is not None
    assert found.manifest.version == "2.0"


def test_a_tampered_entry_is_checked_as_a_fresh_parse_is(
    hermes_env: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = write_dir_plugin(hermes_env.user_plugins_dir, "demo")
    discover(hermes_env)
    document = json.loads(cache_file(hermes_env).read_text(encoding="utf-8"))
    document["entries"][key_of(directory / "plugin.yaml")] = {"name": "demo", "version": ["x"]}
    cache_file(hermes_env).write_text(json.dumps(document), encoding="utf-8")
    next_process(monkeypatch)

    (found,) = [c for c in discover(hermes_env).candidates if c.name == "demo"]

    assert found.manifest is None
    assert found.error is not None
    assert str(directory / "plugin.yaml") in found.error


@pytest.mark.parametrize(
    "damage",
    ["not json {", '{"format": 99, "entries": {}}', '["a list"]', "[" * 100_000, "x" * (5 << 20)],
    ids=["not-json", "other-format", "not-an-object", "nested-too-deep", "too-large"],
)
def test_a_damaged_cache_file_is_ignored_and_replaced(
    hermes_env: Environment, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    write_dir_plugin(hermes_env.user_plugins_dir, "demo")
    cache_file(hermes_env).parent.mkdir(parents=True, exist_ok=True)
    cache_file(hermes_env).write_text(damage, encoding="utf-8")

    names = [c.name for c in discover(hermes_env).candidates if c.error is None]

    assert "demo" in names
    document = json.loads(cache_file(hermes_env).read_text(encoding="utf-8"))
    assert document["format"] == 1
    next_process(monkeypatch)
    no_yaml_parse(monkeypatch)
    assert "demo" in [c.name for c in discover(hermes_env).candidates]


def test_a_cache_that_cannot_be_written_costs_nothing_but_time(
    hermes_env: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_dir_plugin(hermes_env.user_plugins_dir, "demo")
    cache_file(hermes_env).mkdir(parents=True)  # a directory where the file would go

    first = [c.name for c in discover(hermes_env).candidates if c.error is None]
    next_process(monkeypatch)

    assert "demo" in first
    assert [c.name for c in discover(hermes_env).candidates if c.error is None] == first
