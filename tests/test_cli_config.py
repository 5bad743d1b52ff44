"""``hermes config path | show | set | validate``, run as a real subprocess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from hermes_core.testing import HermesCli
from hermes_core.testing._cli_in_process import InProcessCli

pytestmark = pytest.mark.subprocess

COMMENTED = """\
# my settings
tools:
  tool_search:
    threshold_pct: 5   # percent
plugins:
  enabled: []          # nothing yet
"""


@pytest.fixture
def hermes_cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    """``hermes`` run in this process (:class:`InProcessCli`); ``subprocess_run`` runs the
    real command."""
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


@pytest.fixture
def home(hermes_cli: HermesCli) -> Path:
    return hermes_cli.home


def write(home: Path, text: str) -> Path:
    path = home / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_config_path_prints_the_file_under_hermes_home(hermes_cli: HermesCli, home: Path) -> None:
    result = hermes_cli.run("config", "path")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"{home / 'config.yaml'}\n"


def test_validate_accepts_a_good_file(hermes_cli: HermesCli, home: Path) -> None:
    path = write(home, COMMENTED)
    result = hermes_cli.run("config", "validate")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"ok: {path}\n"


def test_validate_accepts_a_missing_file(hermes_cli: HermesCli, home: Path) -> None:
    result = hermes_cli.run("config", "validate")
    assert result.returncode == 0, result.stderr
    assert not (home / "config.yaml").exists()


def test_bad_yaml_exits_2_naming_file_line_and_key(hermes_cli: HermesCli, home: Path) -> None:
    path = write(home, "tools:\n  tool_search:\n    threshold_pct: 5: 6\n")
    result = hermes_cli.run("config", "validate", ok=False)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith(
        f"hermes: error: {path}:3: tools.tool_search.threshold_pct: invalid YAML:"
    )


@pytest.mark.parametrize(
    ("text", "line", "key"),
    [
        ("approvals:\n\tpolicy: manual\n", 2, "approvals.policy"),
        ("tools:\n  tool_search:\n  \t threshold_pct: 5\n", 3, "tools.tool_search.threshold_pct"),
    ],
)
def test_a_line_indented_with_a_tab_is_named_as_such(
    hermes_cli: HermesCli, home: Path, text: str, line: int, key: str
) -> None:
    """The parser's words, ``found character '\\t' that cannot start any token``, did not say
    that YAML indents with spaces only (journey3's walk)."""
    path = write(home, text)
    result = hermes_cli.run("config", "validate", ok=False)
    assert result.returncode == 2
    assert result.stderr == (
        f"hermes: error: {path}:{line}: {key}: invalid YAML: this line is indented with a tab; "
        "YAML indents with spaces only\n"
    )


def test_wrong_threshold_type_exits_2_naming_file_line_and_key(
    hermes_cli: HermesCli, home: Path
) -> None:
    path = write(home, "tools:\n  tool_search:\n    threshold_pct: high\n")
    result = hermes_cli.run("config", "validate", ok=False)
    assert result.returncode == 2
    assert result.stderr == (
        f"hermes: error: {path}:3: tools.tool_search.threshold_pct: "
        "expected a number between 0 and 100, got 'high'\n"
    )


def test_defer_as_a_string_exits_2_naming_file_line_and_key(
    hermes_cli: HermesCli, home: Path
) -> None:
    path = write(home, "# c\ntools:\n  tool_search:\n    defer: todo_list\n")
    result = hermes_cli.run("config", "show", ok=False)
    assert result.returncode == 2
    assert result.stdout == ""
    assert f"{path}:4: tools.tool_search.defer: expected a list of names" in result.stderr


def test_a_key_written_in_the_wrong_section_is_named_with_where_it_belongs(
    hermes_cli: HermesCli, home: Path
) -> None:
    """A known key one level off (left at the top, or under ``tools`` instead of
    ``tools.tool_search``) says where it goes: the message only listed the keys of the section
    it landed in, which did not name the one meant (journey3's walk)."""
    path = write(
        home,
        "approvals:\n  policy: manual\nnon_interactive: allow\n"
        "tools:\n  threshold_pct: 5\n  enabled: false\n",
    )
    result = hermes_cli.run("config", "validate", ok=False)
    set_result = hermes_cli.run("config", "set", "policy", "manual", ok=False)

    assert result.returncode == 2
    assert f"{path}:3: non_interactive: unknown key here, did you mean " in result.stderr
    assert "'approvals.non_interactive'? (known keys: agent, approvals," in result.stderr
    assert (
        f"{path}:5: tools.threshold_pct: unknown key here, did you mean "
        "'tools.tool_search.threshold_pct'? (known keys: catalogs," in result.stderr
    )
    assert (
        f"{path}:6: tools.enabled: unknown key here, did you mean one of "
        "'tools.tool_search.enabled', 'tools.connectors.enabled'? (known keys:" in result.stderr
    )
    assert set_result.returncode == 2
    assert "policy: unknown key here, did you mean 'approvals.policy'?" in set_result.stderr
    assert path.read_text().count("policy") == 1


def test_validate_reports_what_the_plugins_refuse_where_every_command_would_fail(
    hermes_cli: HermesCli, home: Path
) -> None:
    """An approval policy no plugin registers, and plugin settings their typed settings refuse,
    are configuration mistakes: ``validate`` said ``ok`` while every tool command then failed
    (or ran without ``execute_code``), naming the problem only there (journey3's walk)."""
    path = write(
        home,
        "approvals:\n  policy: manul\nplugins:\n  entries:\n    code_execution:\n"
        "      timeout: abc   # seconds\n      mod: strict\nmodel:\n  provider: openia\n",
    )
    result = hermes_cli.run("config", "validate", ok=False)

    assert result.returncode == 2
    assert result.stdout == ""
    assert (
        f"hermes: error: {path}:2: unknown approval policy 'manul' (set by approvals.policy)"
        in (result.stderr)
    )
    assert (
        f"{path}:6: plugins.entries.code_execution.timeout: expected a number greater than 0, "
        "got 'abc'" in result.stderr
    )
    assert f"{path}:7: plugins.entries.code_execution.mod: unknown key, did you mean 'mode'?" in (
        result.stderr
    )
    assert "unknown model provider 'openia' (set by model.provider)" in result.stderr


def test_validate_reports_a_web_search_or_image_provider_no_plugin_registers(
    hermes_cli: InProcessCli, home: Path
) -> None:
    """The other names a user selects from plugins, in the web and media plugins' settings:
    ``validate`` said ``ok`` while every ``web_search`` and ``image_generate`` call then failed
    (embed6's walk)."""
    entries = (
        "  entries:\n    web:\n      search_provider: serxng\n"
        "    media:\n      image_provider: opnai\n"
    )
    write(home, f"plugins:\n  disabled: [web, media]\n{entries}")
    disabled = hermes_cli.subprocess_run("config", "validate")  # their plugins' names alone
    path = write(home, f"plugins:\n{entries}")
    result = hermes_cli.subprocess_run("config", "validate", ok=False)

    assert disabled.stdout.startswith("ok: ")

    assert result.returncode == 2
    assert (
        f"hermes: error: {path}:4: unknown web search provider 'serxng' (set by "
        "plugins.entries.web.search_provider); valid names: brave, searxng. Did you mean "
        "'searxng'?"
    ) in result.stderr
    assert (
        f"hermes: error: {path}:6: unknown image provider 'opnai' (set by "
        "plugins.entries.media.image_provider); valid names: openai. Did you mean 'openai'?"
    ) in result.stderr


def test_a_mistyped_approval_policy_names_the_closest_one(
    hermes_cli: HermesCli, home: Path
) -> None:
    path = write(home, "approvals:\n  policy: manul\n")
    (hermes_cli.work / "notes.txt").write_text("hello\n")
    result = hermes_cli.run("tools", "call", "read_file", '{"path": "notes.txt"}', ok=False)
    assert result.returncode == 2
    assert result.stderr == (
        f"hermes: error: {path}:2: unknown approval policy 'manul' (set by approvals.policy); "
        "valid names: annotations, manual, off. Did you mean 'manual'?\n"
    )


@pytest.mark.parametrize(
    ("text", "line", "command"),
    [
        ("model:\n  model: m\n  provider: opnai\n", 3, ("run", "hello")),
        ("tools:\n  tool_search:\n    backend: bm52\n", 3, ("tools", "search", "read a file")),
    ],
    ids=["model.provider", "tools.tool_search.backend"],
)
def test_a_name_no_plugin_registers_is_named_where_it_is_written_by_every_command(
    hermes_cli: InProcessCli, home: Path, text: str, line: int, command: tuple[str, ...]
) -> None:
    """``hermes run`` and the tool commands named only the key of a mistyped name, where
    ``config validate`` named the file and the line too (docs/cli.md: every configuration
    error names the file, the line and the key) (execwalk's walk)."""
    path = write(home, text)
    result = hermes_cli.subprocess_run(*command, ok=False)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"hermes: error: {path}:{line}: unknown "), result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("base_url", ["127.0.0.1:8080/v1", "localhost:11434/v1", "ftp://host/v1"])
def test_a_model_base_url_that_is_no_http_url_exits_2_naming_file_line_and_key(
    home: Path, tmp_path: Path, base_url: str
) -> None:
    """``model.base_url`` without its scheme (as llama.cpp and Ollama print their address) is
    refused where it is written, not sent to as a server that never answers, retried."""
    cli = HermesCli(tmp_path / "real", home=home)  # the real command, as a subprocess
    path = write(home, f"model:\n  model: qwen2.5:0.5b\n  base_url: {base_url}\n")
    for command in (("config", "validate"), ("run", "Hello?")):
        result = cli.run(*command, ok=False)
        assert result.returncode == 2, (command, result.stderr)
        assert result.stderr == (
            f"hermes: error: {path}:3: model.base_url: expected an http:// or https:// URL, "
            f"got '{base_url}'\n"
        )


@pytest.mark.parametrize(
    "written", ['"https://:8080/v1"', '"http://[::1/v1"', '" https://example.com/v1"']
)
def test_a_base_url_without_a_host_or_with_a_space_is_refused_as_no_http_url(
    hermes_cli: HermesCli, home: Path, written: str
) -> None:
    """No host (only a port), an unclosed IPv6 bracket, a space before the scheme: each was
    let through, then failed at the first request as a server that cannot be reached."""
    path = write(home, f"model:\n  model: qwen2.5:0.5b\n  base_url: {written}\n")
    result = hermes_cli.run("config", "validate", ok=False)
    assert result.returncode == 2, result.stderr
    assert result.stderr == (
        f"hermes: error: {path}:3: model.base_url: expected an http:// or https:// URL, "
        f"got '{written.strip(chr(34))}'\n"
    )


def test_set_parses_a_yaml_number_and_keeps_comments(hermes_cli: HermesCli, home: Path) -> None:
    path = write(home, COMMENTED)
    result = hermes_cli.run("config", "set", "tools.tool_search.threshold_pct", "7.5")
    assert result.returncode == 0, result.stderr
    assert path.read_text(encoding="utf-8") == COMMENTED.replace(
        "threshold_pct: 5   #", "threshold_pct: 7.5 #"
    )


def test_set_parses_a_flow_list(hermes_cli: HermesCli, home: Path) -> None:
    path = write(home, COMMENTED)
    result = hermes_cli.run("config", "set", "plugins.enabled", "[a, b]")
    assert result.returncode == 0, result.stderr
    assert "# nothing yet" in path.read_text(encoding="utf-8")
    shown = hermes_cli.json("config", "show", "--json")
    assert shown["plugins"]["enabled"] == ["a", "b"]


def test_set_creates_the_file_and_its_sections(hermes_cli: HermesCli, home: Path) -> None:
    result = hermes_cli.run("config", "set", "approvals.policy", "manual")
    assert result.returncode == 0, result.stderr
    assert (home / "config.yaml").read_text(encoding="utf-8") == "approvals:\n  policy: manual\n"


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("tools.tool_search.threshold_pct", "high", "expected a number between 0 and 100"),
        ("tools.tool_search.defer", "todo_list", "expected a list of names"),
        ("tools.tool_search.treshold_pct", "5", "did you mean 'threshold_pct'"),
        ("tools.tool_search.threshold_pct.deeper", "5", "holds 5, not a mapping"),
    ],
)
def test_set_invalid_value_exits_2_and_writes_nothing(
    hermes_cli: HermesCli, home: Path, key: str, value: str, message: str
) -> None:
    path = write(home, COMMENTED)
    result = hermes_cli.run("config", "set", key, value, ok=False)
    assert result.returncode == 2
    assert result.stderr.startswith(f"hermes: error: {path}")
    assert message in result.stderr
    assert path.read_text(encoding="utf-8") == COMMENTED
    assert sorted(p.name for p in home.iterdir()) == ["config.yaml"]


def test_set_value_that_is_not_yaml_is_a_usage_error(hermes_cli: HermesCli, home: Path) -> None:
    path = write(home, COMMENTED)
    result = hermes_cli.run("config", "set", "plugins.enabled", "[a, b", ok=False)
    assert result.returncode == 2
    assert "not a YAML value" in result.stderr
    assert path.read_text(encoding="utf-8") == COMMENTED


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("model.model", "", "an empty value is not a model name"),
        ("model.model", "   ", "an empty value is not a model name"),
        ("tools.tool_search.threshold_pct", "", "VALUE is empty"),
    ],
)
def test_set_an_empty_value_says_so_instead_of_blaming_the_file(
    hermes_cli: HermesCli, home: Path, key: str, value: str, words: str
) -> None:
    """An empty VALUE reads as YAML's null: the error is about what was typed, not a line of
    config.yaml that was never written."""
    path = write(home, COMMENTED)
    result = hermes_cli.run("config", "set", key, value, ok=False)
    assert result.returncode == 2
    assert words in result.stderr
    assert "got null" not in result.stderr
    assert f"{path}:" not in result.stderr
    assert path.read_text(encoding="utf-8") == COMMENTED


@pytest.mark.parametrize("key", ["plugins.disabled", "plugins.enabled"])
def test_a_list_whose_last_entry_was_deleted_reads_as_empty_and_can_be_added_to(
    hermes_cli: HermesCli, home: Path, key: str
) -> None:
    """Deleting the last ``- name`` line leaves ``disabled:`` holding YAML's null: an empty
    list, so every command still runs and ``plugins enable`` / ``config set`` write a list."""
    path = write(home, "plugins:\n  disabled:\n  enabled:\n")
    listed = hermes_cli.subprocess_run("plugins", "list")
    assert "expected a list" not in listed.stderr
    hermes_cli.run("config", "validate")
    command = "disable" if key == "plugins.disabled" else "enable"
    hermes_cli.run("plugins", command, "todo")  # memory's provider is in use: not disabled
    written = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    assert written["plugins"][key.split(".")[1]] == ["todo"]
    hermes_cli.run("config", "set", key, "[a, b]")
    written = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    assert written["plugins"][key.split(".")[1]] == ["a", "b"]


def test_a_list_key_holding_another_scalar_is_still_refused(
    hermes_cli: HermesCli, home: Path
) -> None:
    path = write(home, "plugins:\n  disabled: 3\n")
    result = hermes_cli.run("config", "validate", ok=False)
    assert result.returncode == 2
    assert f"{path}:2: plugins.disabled: expected a list of names, got 3" in result.stderr


def test_set_is_refused_when_the_config_is_managed(hermes_cli: HermesCli, home: Path) -> None:
    path = write(home, COMMENTED)
    result = hermes_cli.run(
        "config",
        "set",
        "approvals.policy",
        "off",
        ok=False,
        env=hermes_cli.variables(HERMES_MANAGED="1"),
    )
    assert result.returncode == 2
    assert "managed by Nix or an administrator" in result.stderr
    assert path.read_text(encoding="utf-8") == COMMENTED


def test_show_prints_the_effective_configuration_with_defaults(
    hermes_cli: HermesCli, home: Path
) -> None:
    write(home, COMMENTED)
    result = hermes_cli.run("config", "show")
    assert result.returncode == 0, result.stderr
    shown = YAML(typ="safe").load(result.stdout)
    assert shown["tools"]["tool_search"]["threshold_pct"] == 5.0
    assert shown["tools"]["tool_search"]["listing_max_tokens"] == 4000
    assert shown["tools"]["connectors"]["url"] is None
    assert shown["approvals"]["non_interactive"] == "deny"
    assert list(shown) == [
        "tools",
        "plugins",
        "mcp_servers",
        "approvals",
        "code_execution",
        "hooks",
        "skills",
        "model",
        "agent",
        "delegation",
        "cron",
        "memory",
    ]
    assert shown["model"]["provider"] == "openai"
    assert shown["delegation"]["max_concurrent"] == 3


def test_show_json_matches_show_yaml(hermes_cli: HermesCli, home: Path) -> None:
    write(home, COMMENTED)
    as_json = hermes_cli.json("config", "show", "--json")
    as_yaml = YAML(typ="safe").load(hermes_cli.run("config", "show").stdout)
    assert as_json == as_yaml


def test_setting_a_key_of_the_deprecated_code_execution_section_works_and_warns(
    hermes_cli: HermesCli, home: Path
) -> None:
    path = write(home, COMMENTED)
    result = hermes_cli.run("config", "set", "code_execution.timeout", "9")
    assert result.returncode == 0, result.stderr
    assert "code_execution:\n  timeout: 9\n" in path.read_text(encoding="utf-8")
    assert "code_execution: this section is deprecated: move its keys under " in result.stderr
    assert "plugins.entries.code_execution" in result.stderr


def test_unknown_enabled_text_is_a_warning_line_on_stderr(
    hermes_cli: HermesCli, home: Path
) -> None:
    path = write(home, "tools:\n  tool_search:\n    enabled: maybe\n")
    result = hermes_cli.run("config", "validate")
    assert result.returncode == 0
    assert result.stdout == f"ok: {path}\n"
    assert result.stderr == (
        f"hermes: warning: {path}:3: tools.tool_search.enabled: unknown value 'maybe', "
        "using 'auto' (expected auto, on or off)\n"
    )


def test_config_command_module_imports_neither_pydantic_nor_ruamel(home: Path) -> None:
    probe = (
        "import sys, hermes_core._cli.config_cmd; "
        "print(sorted(m for m in ('pydantic', 'ruamel.yaml') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=home
    )
    assert result.stdout == "[]\n"


def test_validate_names_the_file_and_line_of_a_name_no_plugin_registers(
    hermes_cli: InProcessCli, home: Path
) -> None:
    """Every configuration error names the file, the line and the key (docs/cli.md); a name no
    plugin registers named only its key, not where it is written."""
    path = write(
        home,
        "model:\n  provider: opnai\napprovals:\n  policy: manul\nplugins:\n  entries:\n"
        "    web:\n      search_provider: bravo\n",
    )
    result = hermes_cli.subprocess_run("config", "validate", ok=False)

    assert result.returncode == 2
    assert f"hermes: error: {path}:2: unknown model provider 'opnai' (set by model.provider)" in (
        result.stderr
    )
    assert f"hermes: error: {path}:4: unknown approval policy 'manul'" in result.stderr
    assert f"hermes: error: {path}:8: unknown web search provider 'bravo'" in result.stderr
