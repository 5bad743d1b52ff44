"""config.yaml: the models, loading with located errors, and comment-preserving atomic saving."""

from __future__ import annotations

import os
import stat
import typing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML
from strength import STRENGTH

from hermes_core._config import (
    DEFAULT_DEFER,
    Config,
    ConfigDocument,
    ConfigWarning,
    edit_config,
    load_config,
)
from hermes_core._config.sections import Section, section_keys
from hermes_core._errors import ConfigError, ManagedConfigError
from hermes_core._paths import Environment

COMMENTED = """\
# hermes configuration, kept by hand
# second header line

plugins:
  # the ones I trust
  enabled:
  - alpha      # first
  - beta
  disabled: [gamma]   # flow style stays flow

tools:
  tool_search:
    threshold_pct: 5     # percent of the context window
    backend: "bm25"
    enabled: 'auto'
  connectors:
    enabled: true

mcp_servers:
  time:
    command: python3
    args: ["-m", "mcp_server_time", "--local-timezone", "UTC"]
    env: {TZ_EXTRA: "${TZ_EXTRA:-none}"}      # expanded at connect time

approvals:
  policy: annotations   # the default
"""


def write(home: Path, text: str) -> Path:
    path = home / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def make_env(home: Path, **variables: str) -> Environment:
    return Environment(home=home, cwd=home, variables={"HERMES_STRICT_PLUGINS": "1", **variables})


def temp_files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name != "config.yaml")


# ---------------------------------------------------------------------------------------------
# Loading


def test_missing_file_is_the_default_configuration(tmp_path: Path) -> None:
    assert load_config(tmp_path / "config.yaml") == Config()


def test_empty_file_is_the_default_configuration(tmp_path: Path) -> None:
    assert load_config(write(tmp_path, "# only a comment\n")) == Config()


def test_commented_file_loads_with_its_values(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, COMMENTED))
    assert config.plugins.enabled == ["alpha", "beta"]
    assert config.plugins.disabled == ["gamma"]
    assert config.mcp_servers["time"].env == {"TZ_EXTRA": "${TZ_EXTRA:-none}"}
    assert config.tools.tool_search.threshold_pct == 5.0


def test_bad_yaml_names_file_line_and_key(tmp_path: Path) -> None:
    path = write(tmp_path, "tools:\n  tool_search:\n    threshold_pct: 5: 6\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    error = caught.value
    assert (error.path, error.line, error.key) == (path, 3, "tools.tool_search.threshold_pct")
    assert str(error).startswith(f"{path}:3: tools.tool_search.threshold_pct: invalid YAML:")


def test_unclosed_flow_list_points_back_to_where_it_started(tmp_path: Path) -> None:
    path = write(tmp_path, "tools:\n  tool_search:\n    defer: [a, b\n  connectors: true\n")
    with pytest.raises(ConfigError, match="flow sequence started at line 3"):
        load_config(path)


def test_duplicate_key_is_a_yaml_error(tmp_path: Path) -> None:
    path = write(tmp_path, "plugins: {}\nplugins: {}\n")
    with pytest.raises(ConfigError, match="duplicate key") as caught:
        load_config(path)
    assert caught.value.line == 2


def test_top_level_that_is_not_a_mapping_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "- tools\n- plugins\n")
    with pytest.raises(ConfigError, match="expected a mapping of sections") as caught:
        load_config(path)
    assert caught.value.path == path


def test_wrong_type_at_threshold_pct_names_file_line_key_and_expectation(tmp_path: Path) -> None:
    path = write(tmp_path, "# comment\ntools:\n  tool_search:\n    threshold_pct: high\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == (
        f"{path}:4: tools.tool_search.threshold_pct: "
        "expected a number between 0 and 100, got 'high'"
    )
    assert (caught.value.line, caught.value.key) == (4, "tools.tool_search.threshold_pct")


def test_defer_given_as_a_string_is_an_error_showing_the_list_form(tmp_path: Path) -> None:
    path = write(tmp_path, "tools:\n  tool_search:\n    defer: todo_list\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == (
        f"{path}:3: tools.tool_search.defer: "
        "expected a list of names, got 'todo_list' (write [todo_list])"
    )


def test_every_problem_is_reported_one_per_line(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "tools:\n"
        "  tool_search:\n"
        "    defer: todo_list\n"
        "    threshold_pct: high\n"
        "approvals:\n"
        "  non_interactive: maybe\n",
    )
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    lines = str(caught.value).splitlines()
    assert lines[0] == f"{path}: 3 problems:"
    assert lines[1].startswith(f"{path}:3: tools.tool_search.defer: expected a list of names")
    assert lines[2].startswith(f"{path}:4: tools.tool_search.threshold_pct: expected a number")
    assert lines[3] == (
        f"{path}:6: approvals.non_interactive: expected one of 'deny' or 'allow', got 'maybe'"
    )
    assert (caught.value.line, caught.value.key) == (3, "tools.tool_search.defer")


def test_unknown_key_suggests_the_closest_known_key(tmp_path: Path) -> None:
    path = write(tmp_path, "tools:\n  tool_search:\n    treshold_pct: 5\n")
    with pytest.raises(ConfigError, match="did you mean 'threshold_pct'") as caught:
        load_config(path)
    assert (caught.value.line, caught.value.key) == (3, "tools.tool_search.treshold_pct")


def test_error_inside_a_list_entry_names_the_index(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "hooks:\n  pre_tool_call:\n    - command: ./ok.sh\n    - match: 'terminal'\n",
    )
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == f"{path}:4: hooks.pre_tool_call[1].command: this key is required"


def test_plugin_entries_are_keyed_by_the_normalized_plugin_name(tmp_path: Path) -> None:
    path = write(tmp_path, "plugins:\n  entries:\n    Settings_Demo:\n      units: metric\n")

    config = load_config(path)

    assert config.plugins.entries == {"settings-demo": {"units": "metric"}}


def test_two_entries_for_one_plugin_are_an_error_naming_both_spellings(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "plugins:\n  entries:\n    settings_demo: {units: metric}\n"
        "    settings-demo: {units: imperial}\n",
    )
    with pytest.raises(ConfigError, match="'settings_demo' and 'settings-demo'") as caught:
        load_config(path)
    assert caught.value.key == "plugins.entries"
    assert str(path) in str(caught.value)


def test_mcp_server_needs_exactly_one_transport(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "mcp_servers:\n  both:\n    command: x\n    url: http://127.0.0.1:1/mcp\n",
    )
    with pytest.raises(ConfigError, match="exactly one of 'command'") as caught:
        load_config(path)
    assert (caught.value.line, caught.value.key) == (2, "mcp_servers.both")


def test_the_code_execution_section_still_works_with_a_warning_saying_where_it_moved(
    tmp_path: Path,
) -> None:
    path = write(tmp_path, "approvals:\n  policy: manual\ncode_execution:\n  timeout: 9\n")
    with pytest.warns(ConfigWarning) as record:
        config = load_config(path)
    assert config.code_execution.timeout == 9
    assert [str(w.message) for w in record] == [
        f"{path}:3: code_execution: this section is deprecated: move its keys under "
        "plugins.entries.code_execution (read from here for one more release)"
    ]


def test_unknown_enabled_text_means_auto_with_a_warning_naming_file_line_and_key(
    tmp_path: Path,
) -> None:
    path = write(tmp_path, "tools:\n  tool_search:\n    enabled: maybe\n")
    with pytest.warns(ConfigWarning) as record:
        config = load_config(path)
    assert config.tools.tool_search.enabled == "auto"
    assert [str(w.message) for w in record] == [
        f"{path}:3: tools.tool_search.enabled: unknown value 'maybe', using 'auto'"
        " (expected auto, on or off)"
    ]


@pytest.mark.parametrize(
    ("written", "effective"),
    [("true", "auto"), ("false", "off"), ("on", "on"), ("OFF", "off"), ("auto", "auto")],
)
def test_enabled_accepts_yaml_booleans_and_words(
    tmp_path: Path, written: str, effective: str
) -> None:
    path = write(tmp_path, f"tools:\n  tool_search:\n    enabled: {written}\n")
    assert load_config(path).tools.tool_search.enabled == effective


def test_listing_false_means_off(tmp_path: Path) -> None:
    path = write(tmp_path, "tools:\n  tool_search:\n    listing: false\n")
    assert load_config(path).tools.tool_search.listing == "off"


def test_tool_search_defaults_match_the_spec_and_the_search_quality_issue() -> None:
    search = Config().tools.tool_search
    assert search.model_dump() == {
        "enabled": "auto",
        "threshold_pct": 5.0,
        "listing": "auto",
        "listing_max_tokens": 4000,
        "search_default_limit": 5,
        "max_search_limit": 25,
        "defer": list(DEFAULT_DEFER),
        "always_visible": [],
        "backend": "bm25",
        # The search-quality issue: a word no tool holds must not empty the result.
        "admission": "off",
        "max_searches_per_turn": 8,
    }
    assert DEFAULT_DEFER == (
        "todo_list",
        "process_manage",
        "cronjob",
        "image_generate",
        "computer_use",
        "manage_connections",
    )


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("threshold_pct", "-1", "expected a number between 0 and 100, got -1"),
        ("threshold_pct", "100.5", "expected a number between 0 and 100, got 100.5"),
        ("threshold_pct", "true", "expected a number between 0 and 100, got true"),
        ("threshold_pct", ".nan", "expected a number between 0 and 100, got nan"),
        ("listing_max_tokens", "199", "expected a whole number between 200 and 60000, got 199"),
        ("listing_max_tokens", "60001", "between 200 and 60000, got 60001"),
        ("listing_max_tokens", "500.5", "expected a whole number between 200 and 60000"),
        ("max_search_limit", "0", "expected a whole number between 1 and 50, got 0"),
        ("max_search_limit", "51", "expected a whole number between 1 and 50, got 51"),
        ("max_searches_per_turn", "0", "expected a whole number of at least 1, got 0"),
        ("admission", "loose", "expected one of 'strict', 'lenient' or 'off', got 'loose'"),
        ("listing", "sometimes", "expected one of 'auto', 'on' or 'off', got 'sometimes'"),
        ("always_visible", "mcp__github__*", "expected a list of names"),
        ("backend", "[bm25]", "expected text, got a list"),
    ],
)
def test_tool_search_rules_are_enforced(
    tmp_path: Path, key: str, value: str, expected: str
) -> None:
    path = write(tmp_path, f"tools:\n  tool_search:\n    {key}: {value}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert caught.value.key == f"tools.tool_search.{key}"
    assert caught.value.line == 3
    assert expected in str(caught.value)


def test_whole_float_is_accepted_as_an_integer(tmp_path: Path) -> None:
    path = write(tmp_path, "tools:\n  tool_search:\n    listing_max_tokens: 5000.0\n")
    assert load_config(path).tools.tool_search.listing_max_tokens == 5000


@pytest.mark.parametrize(
    ("limits", "effective"),
    [
        ("search_default_limit: 40", 25),
        ("search_default_limit: 0", 1),
        ("{search_default_limit: 9, max_search_limit: 6}", 6),
    ],
)
def test_search_default_limit_is_clamped_to_max_search_limit(
    tmp_path: Path, limits: str, effective: int
) -> None:
    body = limits if limits.startswith("{") else "{" + limits + "}"
    path = write(tmp_path, f"tools:\n  tool_search: {body}\n")
    assert load_config(path).tools.tool_search.search_default_limit == effective


def test_user_defer_list_replaces_the_default(tmp_path: Path) -> None:
    path = write(tmp_path, "tools:\n  tool_search:\n    defer: [todo_list]\n")
    assert load_config(path).tools.tool_search.defer == ["todo_list"]
    path = write(tmp_path, "tools:\n  tool_search:\n    defer: []\n")
    assert load_config(path).tools.tool_search.defer == []


@pytest.mark.parametrize(
    ("written", "enabled"), [("false", False), ("true", True), ("{enabled: false}", False)]
)
def test_connectors_accepts_a_bool_or_a_mapping(
    tmp_path: Path, written: str, enabled: bool
) -> None:
    path = write(tmp_path, f"tools:\n  connectors: {written}\n")
    assert load_config(path).tools.connectors.enabled is enabled


def test_non_utf8_file_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_bytes(b"tools:\n  backend: \xff\xfe\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(path)


# ---------------------------------------------------------------------------------------------
# Editing


def test_unchanged_document_dumps_byte_for_byte(tmp_path: Path) -> None:
    path = write(tmp_path, COMMENTED)
    assert ConfigDocument.load(path).dumps() == COMMENTED


def test_edit_keeps_comments_and_key_order(tmp_path: Path) -> None:
    path = write(tmp_path, COMMENTED)
    document = ConfigDocument.load(path)
    document.set("tools.tool_search.threshold_pct", 7.5)
    assert document.add_to_list("plugins.enabled", "zeta")
    assert document.add_to_list("plugins.disabled", "delta")
    document.set("approvals.policy", "manual")
    document.save()
    expected = (
        COMMENTED.replace("  - beta\n", "  - beta\n  - zeta\n")
        .replace("[gamma]   #", "[gamma, delta] #")
        .replace("threshold_pct: 5     #", "threshold_pct: 7.5   #")
        .replace("policy: annotations   #", "policy: manual        #")
    )
    assert path.read_text(encoding="utf-8") == expected


def test_edit_keeps_the_files_indentation(tmp_path: Path) -> None:
    text = (
        "tools:\n"
        "    tool_search:\n"
        "        defer:\n"
        "          - todo_list   # keep\n"
        "plugins:\n"
        "    enabled:\n"
        "      - a\n"
    )
    path = write(tmp_path, text)
    document = ConfigDocument.load(path)
    document.add_to_list("plugins.enabled", "b")
    document.save()
    assert path.read_text(encoding="utf-8") == text + "      - b\n"


def test_set_creates_intermediate_mappings(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    document = ConfigDocument.load(path)
    document.set("tools.tool_search.threshold_pct", 2.5)
    document.save()
    assert path.read_text(encoding="utf-8") == "tools:\n  tool_search:\n    threshold_pct: 2.5\n"
    assert load_config(path).tools.tool_search.threshold_pct == 2.5


def test_set_through_a_scalar_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "tools:\n  tool_search: off\n")
    document = ConfigDocument.load(path)
    with pytest.raises(
        ConfigError, match=r"tools\.tool_search holds 'off', not a mapping"
    ) as caught:
        document.set("tools.tool_search.threshold_pct", 3)
    assert caught.value.line == 2


def test_get_returns_plain_values_and_none_when_absent(tmp_path: Path) -> None:
    document = ConfigDocument.load(write(tmp_path, COMMENTED))
    enabled = document.get("plugins.enabled")
    assert enabled == ["alpha", "beta"]
    assert type(enabled) is list
    assert document.get("tools.tool_search.threshold_pct") == 5
    assert document.get("tools.tool_search.nothing") is None
    assert document.get("absent.section.key") is None


def test_add_to_list_appends_only_when_absent(tmp_path: Path) -> None:
    document = ConfigDocument.load(write(tmp_path, COMMENTED))
    assert document.add_to_list("plugins.enabled", "alpha") is False
    assert document.changed is False
    assert document.add_to_list("approvals.allow", "read_*") is True
    assert document.get("approvals.allow") == ["read_*"]


def test_add_to_list_on_a_scalar_is_an_error(tmp_path: Path) -> None:
    document = ConfigDocument.load(write(tmp_path, "plugins:\n  enabled: alpha\n"))
    with pytest.raises(ConfigError, match="expected a list, got 'alpha'") as caught:
        document.add_to_list("plugins.enabled", "beta")
    assert (caught.value.line, caught.value.key) == (2, "plugins.enabled")


def test_remove_from_list_removes_every_copy(tmp_path: Path) -> None:
    path = write(tmp_path, "plugins:\n  enabled: [a, b, a]  # mine\n")
    document = ConfigDocument.load(path)
    assert document.remove_from_list("plugins.enabled", "a") is True
    assert document.remove_from_list("plugins.enabled", "a") is False
    assert document.remove_from_list("plugins.disabled", "a") is False
    document.save()
    assert path.read_text(encoding="utf-8") == "plugins:\n  enabled: [b]        # mine\n"


def test_delete_removes_a_key_and_reports_whether_it_was_there(tmp_path: Path) -> None:
    path = write(tmp_path, "approvals:\n  policy: manual\n  timeout: 30\n")
    document = ConfigDocument.load(path)
    assert document.delete("approvals.policy") is True
    assert document.delete("approvals.policy") is False
    assert document.delete("nothing.here") is False
    document.save()
    assert path.read_text(encoding="utf-8") == "approvals:\n  timeout: 30\n"


def test_validate_names_the_line_of_the_edited_key(tmp_path: Path) -> None:
    path = write(tmp_path, "# c\ntools:\n  tool_search:\n    threshold_pct: 5\n")
    document = ConfigDocument.load(path)
    document.set("tools.tool_search.threshold_pct", "high")
    with pytest.raises(ConfigError) as caught:
        document.validate()
    assert (caught.value.path, caught.value.line) == (path, 4)


SECTIONED = """\
# top comment

plugins:
  enabled:   # trusted
  - alpha
  - beta

  # why gamma is off
  disabled: [gamma]   # flow

tools:
  tool_search:
    threshold_pct: 5

# closing comment
"""


def edited(tmp_path: Path, *edits: tuple[str, str, object]) -> str:
    path = write(tmp_path, SECTIONED)
    document = ConfigDocument.load(path)
    for method, key, value in edits:
        getattr(document, method)(key, *([] if method == "delete" else [value]))
    document.save()
    return path.read_text(encoding="utf-8")


def test_new_key_goes_before_the_blank_line_that_ends_its_section(tmp_path: Path) -> None:
    text = edited(tmp_path, ("set", "plugins.hook_timeout", 5))
    assert text == SECTIONED.replace(
        "  disabled: [gamma]   # flow\n", "  disabled: [gamma]   # flow\n  hook_timeout: 5\n"
    )


def test_append_to_a_block_list_keeps_the_blank_line_and_comment_after_it(
    tmp_path: Path,
) -> None:
    text = edited(tmp_path, ("add_to_list", "plugins.enabled", "zeta"))
    assert text == SECTIONED.replace("  - beta\n", "  - beta\n  - zeta\n")


def test_new_section_goes_before_the_files_closing_comment(tmp_path: Path) -> None:
    text = edited(tmp_path, ("add_to_list", "approvals.allow", "read_*"))
    assert text == SECTIONED.replace(
        "    threshold_pct: 5\n", "    threshold_pct: 5\napprovals:\n  allow:\n  - read_*\n"
    )


def test_emptying_a_block_list_writes_an_empty_list_keeping_comments(tmp_path: Path) -> None:
    text = edited(
        tmp_path,
        ("remove_from_list", "plugins.enabled", "alpha"),
        ("remove_from_list", "plugins.enabled", "beta"),
    )
    assert text == SECTIONED.replace(
        "  enabled:   # trusted\n  - alpha\n  - beta\n", "  enabled: [] # trusted\n"
    )
    assert load_config(tmp_path / "config.yaml").plugins.enabled == []


def test_delete_keeps_the_comment_above_the_next_key(tmp_path: Path) -> None:
    text = edited(tmp_path, ("delete", "plugins.disabled", None))
    assert text == SECTIONED.replace("  disabled: [gamma]   # flow\n", "")


def test_deleting_the_only_key_leaves_an_empty_mapping(tmp_path: Path) -> None:
    text = edited(tmp_path, ("delete", "tools.tool_search.threshold_pct", None))
    assert text == SECTIONED.replace(
        "  tool_search:\n    threshold_pct: 5\n", "  tool_search: {}\n"
    )


def test_save_never_writes_text_that_reads_back_differently(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, SECTIONED)
    document = ConfigDocument.load(path)
    document.set("approvals.policy", "manual")
    # Stands in for a serializer fault that drops an entry.
    monkeypatch.setattr(ConfigDocument, "dumps", lambda self: "plugins: {}\n")
    with pytest.raises(ConfigError, match="without changing its meaning"):
        document.save()
    assert path.read_text(encoding="utf-8") == SECTIONED


# ---------------------------------------------------------------------------------------------
# Saving


def test_save_refuses_an_invalid_document_and_writes_nothing(tmp_path: Path) -> None:
    path = write(tmp_path, COMMENTED)
    document = ConfigDocument.load(path)
    document.set("tools.tool_search.defer", "todo_list")
    with pytest.raises(ConfigError, match="expected a list of names"):
        document.save()
    assert path.read_text(encoding="utf-8") == COMMENTED
    assert temp_files(tmp_path) == []


def test_crash_in_rename_leaves_old_file_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, COMMENTED)
    document = ConfigDocument.load(path)
    document.set("approvals.policy", "manual")

    def crash(source: str, destination: str) -> None:
        raise OSError("simulated crash during rename")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="simulated crash"):
        document.save()
    assert path.read_text(encoding="utf-8") == COMMENTED
    assert temp_files(tmp_path) == []


def test_crash_after_partial_write_leaves_old_file_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, COMMENTED)
    document = ConfigDocument.load(path)
    document.set("approvals.policy", "manual")
    seen: list[tuple[str, int]] = []

    def crash(descriptor: int) -> None:
        # The temporary file exists and holds the new text when the crash happens.
        seen.extend((name, (tmp_path / name).stat().st_size) for name in temp_files(tmp_path))
        raise OSError("simulated crash before the data reached the disk")

    monkeypatch.setattr(os, "fsync", crash)
    with pytest.raises(OSError, match="simulated crash"):
        document.save()
    assert len(seen) == 1
    assert seen[0][0].startswith(".config.yaml.")
    assert seen[0][1] > 0
    assert path.read_text(encoding="utf-8") == COMMENTED
    assert temp_files(tmp_path) == []


def test_save_keeps_the_file_mode(tmp_path: Path) -> None:
    path = write(tmp_path, COMMENTED)
    path.chmod(0o640)
    document = ConfigDocument.load(path)
    document.set("approvals.policy", "manual")
    document.save()
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_new_file_is_private_to_the_user(tmp_path: Path) -> None:
    path = tmp_path / "home" / "config.yaml"
    document = ConfigDocument.load(path)
    document.set("approvals.policy", "manual")
    document.save()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_config(path).approvals.policy == "manual"


def test_save_writes_through_a_symlink(tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = write(dotfiles, COMMENTED)
    home = tmp_path / "home"
    home.mkdir()
    link = home / "config.yaml"
    link.symlink_to(real)
    document = ConfigDocument.load(link)
    document.set("approvals.policy", "manual")
    document.save()
    assert link.is_symlink()
    assert load_config(real).approvals.policy == "manual"


# ---------------------------------------------------------------------------------------------
# edit_config


def test_edit_config_saves_on_clean_exit(tmp_path: Path) -> None:
    path = write(tmp_path, COMMENTED)
    with edit_config(make_env(tmp_path)) as document:
        document.add_to_list("plugins.enabled", "zeta")
    assert load_config(path).plugins.enabled == ["alpha", "beta", "zeta"]
    assert "# the ones I trust" in path.read_text(encoding="utf-8")


def test_edit_config_writes_nothing_when_the_block_raises(tmp_path: Path) -> None:
    path = write(tmp_path, COMMENTED)

    def change_then_fail() -> None:
        with edit_config(make_env(tmp_path)) as document:
            document.add_to_list("plugins.enabled", "zeta")
            raise RuntimeError("the caller changed its mind")

    with pytest.raises(RuntimeError):
        change_then_fail()
    assert path.read_text(encoding="utf-8") == COMMENTED


def test_edit_config_without_a_change_writes_nothing(tmp_path: Path) -> None:
    with edit_config(make_env(tmp_path)) as document:
        assert document.add_to_list("plugins.enabled", "x")
        assert document.remove_from_list("plugins.enabled", "x")
    # Changed and changed back: saved. A document that never changed is not written at all.
    assert (tmp_path / "config.yaml").exists()
    other = tmp_path / "other"
    other.mkdir()
    with edit_config(make_env(other)) as document:
        assert document.get("plugins.enabled") is None
    assert not (other / "config.yaml").exists()


def test_managed_config_refuses_edit(tmp_path: Path) -> None:
    path = write(tmp_path, COMMENTED)
    with (
        pytest.raises(ManagedConfigError, match="managed by Nix or an administrator") as caught,
        edit_config(make_env(tmp_path, HERMES_MANAGED="1")),
    ):
        pytest.fail("the block must not run when the configuration is managed")
    assert "HERMES_MANAGED" in str(caught.value)
    assert str(path) in str(caught.value)
    assert path.read_text(encoding="utf-8") == COMMENTED


def test_managed_flag_false_allows_edit(tmp_path: Path) -> None:
    with edit_config(make_env(tmp_path, HERMES_MANAGED="0")) as document:
        document.set("approvals.policy", "off")
    assert load_config(tmp_path / "config.yaml").approvals.policy == "off"


# ---------------------------------------------------------------------------------------------
# The reference page stays true to the models

DOCS = Path(__file__).resolve().parent.parent / "docs" / "configuration.md"


def test_documented_example_is_a_valid_configuration(tmp_path: Path) -> None:
    text = DOCS.read_text(encoding="utf-8")
    example = text.split("```yaml\n", 1)[1].split("```", 1)[0]
    config = load_config(write(tmp_path, example))
    assert config.mcp_servers["remote"].url == "http://127.0.0.1:8765/mcp"


def test_every_configuration_key_is_documented() -> None:
    text = DOCS.read_text(encoding="utf-8")
    sections: list[type[Section]] = [Config]
    missing = []
    while sections:
        section = sections.pop()
        for name, key in section_keys(section).items():
            if f"`{name}`" not in text:
                missing.append(f"{section.__name__}.{name}")
            for inner in (key.annotation, *typing.get_args(key.annotation)):
                for candidate in (inner, *typing.get_args(inner)):
                    if isinstance(candidate, type) and issubclass(candidate, Section):
                        sections.append(candidate)
    assert missing == []


# ---------------------------------------------------------------------------------------------
# Any sequence of edits saves, and reads back as exactly what was edited

_NAMES = st.sampled_from(["alpha", "beta", "gamma", "delta"])
_LIST_KEYS = st.sampled_from(
    ["plugins.enabled", "plugins.disabled", "approvals.allow", "hooks.enabled"]
)
_EDITS = st.one_of(
    st.tuples(st.just("add_to_list"), _LIST_KEYS, _NAMES),
    st.tuples(st.just("remove_from_list"), _LIST_KEYS, _NAMES),
    st.tuples(
        st.just("set"),
        st.sampled_from(["tools.tool_search.threshold_pct", "plugins.hook_timeout"]),
        st.integers(1, 50),
    ),
    st.tuples(st.just("set"), _LIST_KEYS, st.lists(_NAMES, max_size=3)),
    st.tuples(
        st.just("set"),
        st.just("mcp_servers.git"),
        st.fixed_dictionaries({"command": st.just("uvx"), "args": st.lists(_NAMES, max_size=2)}),
    ),
    st.tuples(
        st.just("set"),
        st.just("tools.tool_search"),
        st.dictionaries(st.just("threshold_pct"), st.integers(0, 9)),
    ),
    st.tuples(
        st.just("delete"),
        st.sampled_from(
            ["plugins", "plugins.enabled", "plugins.disabled", "tools.tool_search", "approvals"]
        ),
        st.none(),
    ),
)


def _expected_after(data: dict[str, Any], method: str, key: str, value: Any) -> None:
    *path, last = key.split(".")
    node = data
    for part in path:
        if method in ("delete", "remove_from_list") and part not in node:
            return
        node = node.setdefault(part, {})
    if method == "set":
        node[last] = value
    elif method == "delete":
        node.pop(last, None)
    elif method == "add_to_list" and value not in node.setdefault(last, []):
        node[last].append(value)
    elif method == "remove_from_list" and last in node:
        node[last] = [item for item in node[last] if item != value]


INDENTED = """\
# four-space style
plugins:
    enabled:
        # listed one per line
        - alpha   # first
        - beta
    disabled:
      - gamma

approvals:
    allow: []   # nothing yet
hooks:
    enabled:
    - delta
"""


FLOWING = """\
# flow style
plugins: {enabled: [alpha], disabled: []}   # one line
tools: {tool_search: {threshold_pct: 5}}
hooks:
  enabled: [delta, beta]
approvals: {}
"""


@pytest.mark.parametrize("strength", STRENGTH)
def test_any_sequence_of_edits_reads_back_as_edited(
    tmp_path_factory: pytest.TempPathFactory, strength: int
) -> None:
    @settings(max_examples=16 * strength, deadline=None)
    @given(
        edits=st.lists(_EDITS, min_size=1, max_size=8),
        text=st.sampled_from([SECTIONED, COMMENTED, INDENTED, FLOWING]),
    )
    def check(edits: list[tuple[str, str, Any]], text: str) -> None:
        _edits_read_back_as_edited(tmp_path_factory, edits, text)

    check()


def _edits_read_back_as_edited(
    tmp_path_factory: pytest.TempPathFactory, edits: list[tuple[str, str, Any]], text: str
) -> None:
    path = write(tmp_path_factory.mktemp("home"), text)
    expected = YAML(typ="safe").load(text)
    document = ConfigDocument.load(path)
    for method, key, value in edits:
        getattr(document, method)(key, *([] if method == "delete" else [value]))
        _expected_after(expected, method, key, value)
    document.save()
    saved = path.read_text(encoding="utf-8")
    assert (YAML(typ="safe").load(saved) or {}) == expected
    assert saved.startswith(text.splitlines()[0] + "\n")


def test_unknown_enabled_text_in_code_warns_naming_the_key() -> None:
    with pytest.warns(ConfigWarning, match=r"^tools\.tool_search\.enabled: unknown value 'maybe'"):
        config = Config.model_validate({"tools": {"tool_search": {"enabled": "maybe"}}})
    assert config.tools.tool_search.enabled == "auto"


@pytest.mark.parametrize(
    ("rule", "hint"),
    [
        ("Bash(rm:*)", "for a shell command, 'terminal:rm *'"),
        ("Bash(git status)", "for a shell command, 'terminal:git status'"),
        ("Read(./src/**)", "for a shell command, 'terminal:COMMAND'"),
    ],
)
@pytest.mark.parametrize("key", ["allow", "deny"])
def test_a_claude_code_permission_rule_is_refused_saying_what_hermes_matches(
    tmp_path: Path, key: str, rule: str, hint: str
) -> None:
    """``Bash(rm:*)`` in ``approvals.deny`` was taken as a glob over tool names, which no tool
    name matches (they are letters, digits, ``_`` and ``-``): the rule a Claude Code user
    copied silently refused nothing (execwalk's walk)."""
    path = write(tmp_path, f'approvals:\n  policy: manual\n  {key}: [read_file, "{rule}"]\n')
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:3: approvals.{key}: '{rule}' is a Claude Code rule"), message
    assert hint in message
    assert (caught.value.line, caught.value.key) == (3, f"approvals.{key}")


def test_parentheses_in_the_command_of_a_terminal_rule_are_a_command(tmp_path: Path) -> None:
    path = write(
        tmp_path, 'approvals:\n  allow: ["terminal:echo $(date)", "mcp__*"]\n  deny: ["t(x)*"]\n'
    )
    with pytest.raises(ConfigError, match=r"approvals\.deny: 't\(x\)\*'"):
        load_config(path)
    path.write_text('approvals:\n  allow: ["terminal:echo $(date)", "mcp__*"]\n')
    assert load_config(path).approvals.allow == ["terminal:echo $(date)", "mcp__*"]
