"""Plugin manifests and ``config.yaml`` are read within fixed limits, by one reader.

A file larger than the limit is refused unread, so is anything but a regular file (a FIFO would
block); aliases, nesting deeper than the limit and overlong numbers are refused while parsing,
each with a message naming the file and the line; no message shows a value whole.
"""

from __future__ import annotations

import itertools
import json
import os
import resource
import subprocess
from pathlib import Path
from typing import Any

import pytest

from hermes_core._config import ConfigDocument, InvalidConfig, ToolSearchConfig, load_config
from hermes_core._errors import ConfigError
from hermes_core._plugins import ManifestError, load_manifest
from hermes_core._yaml_limits import CONFIG_MAX_BYTES, MANIFEST_MAX_BYTES, MAX_DEPTH
from hermes_core.testing import HermesCli, write_dir_plugin
from hermes_core.testing._cli_in_process import InProcessCli


@pytest.fixture
def hermes_cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    """``hermes`` run in this process (:class:`InProcessCli`); ``subprocess_run`` runs the
    real command."""
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


def alias_bomb(key: str) -> str:
    """Nine levels of nine aliases: a few hundred bytes that expand to 9**9 strings."""
    letters = "abcdefghi"
    lines = ["a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]"]
    for previous, letter in itertools.pairwise(letters):
        lines.append(f"{letter}: &{letter} [" + ",".join([f"*{previous}"] * 9) + "]")
    lines.append(f"{key}: *i")
    return "\n".join(lines) + "\n"


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


MEMORY_CAP = 1 << 30


def run_capped(cli: HermesCli, *args: str, **variables: str) -> subprocess.CompletedProcess[str]:
    """``hermes *args`` with its address space capped at 1 GiB, so that a blow-up fails this
    test instead of exhausting the machine."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))

    return subprocess.run(
        cli.command(*args),
        cwd=cli.work,
        env=cli.variables(**variables),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        preexec_fn=cap,
    )


def rows(done: subprocess.CompletedProcess[str]) -> dict[tuple[str, str], dict[str, Any]]:
    listed = json.loads(done.stdout)
    # docs/cli.md's rule for list commands: every row shown, then exit 1 when one is broken.
    broken = any(r["status"] == "error" for r in listed)
    assert done.returncode == int(broken), done.stderr[-2000:]
    return {(r["name"], r["source"]): r for r in listed}


# Manifests ---------------------------------------------------------------------------------


@pytest.mark.subprocess
def test_manifest_alias_bomb_is_refused(hermes_cli: HermesCli) -> None:
    text = "name: bomb\n" + alias_bomb("kind")
    assert len(text.encode()) < 400
    project_plugins = hermes_cli.work / ".hermes" / "plugins"
    write_dir_plugin(project_plugins, "bomb", manifest=text)

    gated = rows(run_capped(hermes_cli, "plugins", "list", "--json", "--all"))
    opened = rows(
        run_capped(
            hermes_cli, "plugins", "list", "--json", "--all", HERMES_ENABLE_PROJECT_PLUGINS="1"
        )
    )

    assert gated["bomb", "project"]["status"] == "gated"
    row = opened["bomb", "project"]
    assert row["status"] == "error"
    manifest = project_plugins / "bomb" / "plugin.yaml"
    assert f"{manifest}:3:" in row["error"]
    assert "alias" in row["error"]
    assert len(row["error"]) < 500


@pytest.mark.subprocess
def test_manifest_nested_deeper_than_the_limit_is_refused(hermes_cli: HermesCli) -> None:
    plugins = hermes_cli.home / "plugins"
    # 30,000 levels fit in the size limit; the 50,000 do not (refused unread).
    write_dir_plugin(plugins, "deep", manifest="name: deep\nx: " + nested(30_000))
    write_dir_plugin(plugins, "deeper", manifest="name: deeper\nx: " + nested(50_000))
    write_dir_plugin(plugins, "fine")

    listed = rows(run_capped(hermes_cli, "plugins", "list", "--json"))
    served = run_capped(hermes_cli, "serve", HERMES_STRICT_PLUGINS="0")

    deep = listed["deep", "user"]
    assert deep["status"] == "error"
    assert f"plugin.yaml:2: nested deeper than {MAX_DEPTH} levels" in deep["error"]
    assert listed["deeper", "user"]["status"] == "error"
    assert listed["fine", "user"]["status"] == "not enabled"
    assert served.returncode == 0, served.stderr[-2000:]
    assert "RecursionError" not in served.stderr
    assert "Traceback" not in served.stderr


@pytest.mark.subprocess
def test_manifest_larger_than_the_limit_is_refused_unread(hermes_cli: HermesCli) -> None:
    directory = write_dir_plugin(hermes_cli.home / "plugins", "big")
    with (directory / "plugin.yaml").open("w", encoding="utf-8") as stream:
        stream.write('name: big\ndescription: "')
        for _ in range(50):
            stream.write("x" * 1_000_000)
        stream.write('"\n')

    listed = rows(run_capped(hermes_cli, "plugins", "list", "--json"))

    row = listed["big", "user"]
    assert row["status"] == "error"
    assert f"larger than {MANIFEST_MAX_BYTES} bytes" in row["error"]
    assert len(row["error"]) < 500


def test_manifest_error_shows_a_long_value_shortened(tmp_path: Path) -> None:
    path = tmp_path / "plugin.yaml"
    path.write_text("name: long\nkind: " + "k" * 40_000 + "\n", encoding="utf-8")

    with pytest.raises(ManifestError) as caught:
        load_manifest(path)

    message = str(caught.value)
    assert "kind: must be 'general', 'backend' or 'toolset'" in message
    assert "40000 characters" in message
    assert len(message) < len(str(path)) + 200


def test_manifest_unknown_keys_are_shown_shortened(tmp_path: Path) -> None:
    path = tmp_path / "plugin.yaml"
    path.write_text("name: keys\n? " + "u" * 20_000 + "\n: 1\n", encoding="utf-8")

    manifest = load_manifest(path)

    (warning,) = manifest.warnings
    assert "20000 characters" in warning
    assert len(warning) < len(str(path)) + 200


def test_manifest_that_is_not_a_regular_file_is_refused_without_blocking(tmp_path: Path) -> None:
    path = tmp_path / "plugin.yaml"
    os.mkfifo(path)

    with pytest.raises(ManifestError, match="not a regular file"):
        load_manifest(path)


# config.yaml -------------------------------------------------------------------------------


def write_config(cli: HermesCli, text: str) -> Path:
    cli.config.write_text(text, encoding="utf-8")
    return cli.config


def assert_refused(done: subprocess.CompletedProcess[str], where: str, *words: str) -> None:
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.startswith(f"hermes: error: {where}"), done.stderr[:500]
    for word in words:
        assert word in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr) < 1000


@pytest.mark.subprocess
def test_config_nested_deeper_than_the_limit_is_refused(hermes_cli: HermesCli) -> None:
    path = write_config(hermes_cli, "tools: " + nested(20_000) + "\n")

    for command in (("config", "validate"), ("plugins", "list"), ("tools", "list")):
        done = run_capped(hermes_cli, *command)
        assert_refused(done, f"{path}:1:", f"nested deeper than {MAX_DEPTH} levels")


def test_flow_nesting_is_refused_where_it_passes_the_limit_before_deeper_text_is_read(
    tmp_path: Path,
) -> None:
    # ruamel's scanner reads about a thousand levels ahead of the parser, at a cost quadratic
    # in the levels it holds open (20,000 took 0.85 s of CPU to refuse): the refusal comes where
    # the level past the limit opens, before the scanner reaches text it would refuse itself.
    config = tmp_path / "config.yaml"
    config.write_text("tools: " + "[" * 100 + "`" + "]" * 100 + "\n", encoding="utf-8")
    manifest = tmp_path / "plugin.yaml"
    manifest.write_text("name: deep\nx: " + "{a: " * 100 + "`" + "}" * 100 + "\n", "utf-8")

    with pytest.raises(ConfigError, match=f"nested deeper than {MAX_DEPTH} levels") as caught:
        load_config(config)
    with pytest.raises(ManifestError, match=f"nested deeper than {MAX_DEPTH} levels"):
        load_manifest(manifest)

    assert caught.value.line == 1


@pytest.mark.subprocess
def test_config_number_with_5000_digits_is_refused(hermes_cli: HermesCli) -> None:
    path = write_config(hermes_cli, "tools:\n  tool_search:\n    threshold_pct: " + "9" * 5000)

    done = run_capped(hermes_cli, "config", "validate")

    assert_refused(done, f"{path}:3:", "number", "5000 characters")


def test_number_rule_refuses_an_integer_too_large_for_a_float() -> None:
    with pytest.raises(InvalidConfig, match="expected a whole number between 200 and 60000"):
        ToolSearchConfig.model_validate({"listing_max_tokens": 10**400})


@pytest.mark.subprocess
def test_config_fifo_is_refused_without_waiting_for_a_writer(hermes_cli: HermesCli) -> None:
    os.mkfifo(hermes_cli.config)

    for command in (("config", "validate"), ("tools", "list"), ("plugins", "enable", "x")):
        done = hermes_cli.run(*command, ok=False, timeout=30)
        assert_refused(done, f"{hermes_cli.config}:", "not a regular file")


@pytest.mark.subprocess
def test_config_larger_than_the_limit_is_refused_unread(hermes_cli: HermesCli) -> None:
    path = write_config(hermes_cli, "tools:\n  tool_search:\n    enabled: " + "x" * 5_000_000)

    done = run_capped(hermes_cli, "config", "validate")

    assert_refused(done, f"{path}:", f"larger than {CONFIG_MAX_BYTES} bytes")


LONG = "v" * (CONFIG_MAX_BYTES // 4)
# A key longer than 1024 characters must be written as an explicit key (``? key``).


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("text", "words"),
    [
        (f"tools:\n  tool_search:\n    listing: {LONG}\n", ["expected one of"]),
        (f"plugins:\n  enabled: {LONG}\n", ["expected a list of names"]),
        (f"? {LONG}\n: 1\n", ["unknown key"]),
        (f"mcp_servers:\n  ? {LONG[:-1]}!\n  : {{command: x}}\n", ["MCP server name"]),
        (
            f"plugins:\n  entries:\n    ? {LONG}\n    : {{}}\n    ? {LONG.upper()}\n    : {{}}\n",
            ["same plugin"],
        ),
    ],
    ids=["value", "names-list", "unknown-key", "server-name", "entry-names"],
)
def test_config_error_shows_a_long_bad_value_shortened(
    hermes_cli: HermesCli, text: str, words: list[str]
) -> None:
    path = write_config(hermes_cli, text)

    done = run_capped(hermes_cli, "config", "validate")

    assert_refused(done, f"{path}:", *words, f"{len(LONG)} characters")


@pytest.mark.subprocess
def test_config_warning_shows_a_long_value_shortened(hermes_cli: HermesCli) -> None:
    write_config(hermes_cli, "tools:\n  tool_search:\n    enabled: " + "w" * 100_000 + "\n")

    done = run_capped(hermes_cli, "config", "validate")

    assert done.returncode == 0, done.stderr[-2000:]
    assert "using 'auto'" in done.stderr
    assert len(done.stderr) < 1000


def test_config_alias_is_refused_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("approvals:\n  allow: &tools [read_file]\n  deny: *tools\n", encoding="utf-8")

    with pytest.raises(ConfigError) as caught:
        load_config(path)
    with pytest.raises(ConfigError):
        ConfigDocument.load(path)

    assert caught.value.line == 3
    assert "alias" in str(caught.value)


@pytest.mark.subprocess
def test_config_alias_bomb_is_refused(hermes_cli: HermesCli) -> None:
    path = write_config(hermes_cli, alias_bomb("plugins"))

    done = run_capped(hermes_cli, "config", "validate")

    assert_refused(done, f"{path}:2:", "alias")


def test_many_config_problems_are_listed_up_to_a_limit(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("".join(f"unknown_{index}: 1\n" for index in range(5000)), encoding="utf-8")

    with pytest.raises(ConfigError) as caught:
        load_config(path)

    message = str(caught.value)
    assert message.count("\n") < 30
    assert "5000 problems" in message
    assert "more" in message


@pytest.mark.parametrize(
    ("value", "problem"), [("2024-13-45", "month must be in 1..12"), ("!!int x", "invalid literal")]
)
def test_config_value_yaml_cannot_build_is_an_error_naming_the_line(
    tmp_path: Path, value: str, problem: str
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(f"tools:\n  tool_search:\n    backend: {value}\n", encoding="utf-8")

    with pytest.raises(ConfigError, match=problem) as caught:
        load_config(path)

    assert (caught.value.line, caught.value.key) == (3, "tools.tool_search.backend")


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("[" * 2_000 + "]" * 2_000, "nested"),
        ("&a [1, *a]", "alias"),
        ("9" * 5_000, "number of 5000 characters"),
    ],
)
def test_config_set_value_is_read_within_the_same_limits(
    hermes_cli: HermesCli, value: str, message: str
) -> None:
    done = hermes_cli.run("config", "set", "tools.tool_search.defer", value, ok=False)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert message in done.stderr
    assert len(done.stderr) < 1000
    assert not hermes_cli.config.exists()
