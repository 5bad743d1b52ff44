"""``hermes tools call`` and ``tools describe`` of a tool a bundled plugin provides only when it is
enabled and set up: the message names the plugin, why it has no such tool here and what to do
(the real ``hermes`` as a subprocess, a real configuration file)."""

from __future__ import annotations

import pytest

from hermes_core.testing import HermesCli

pytestmark = pytest.mark.subprocess


def test_calling_text_to_speech_without_its_command_names_the_media_plugin_and_the_setting(
    hermes_cli: HermesCli,
) -> None:
    done = hermes_cli.run("tools", "call", "text_to_speech", '{"text": "hi"}', ok=False)

    assert done.returncode == 1
    assert "There is no tool named 'text_to_speech'" in done.stderr
    assert "plugin 'media' (bundled" in done.stderr, done.stderr
    assert "plugins.entries.media.tts_command" in done.stderr
    assert str(hermes_cli.config) in done.stderr


def test_describing_a_tool_of_a_disabled_plugin_says_how_to_enable_it_in_which_file(
    hermes_cli: HermesCli,
) -> None:
    hermes_cli.config.write_text("plugins:\n  disabled: [web]\n", encoding="utf-8")

    done = hermes_cli.run("tools", "describe", "web_search", ok=False)

    assert done.returncode == 1
    line = done.stderr.strip()
    # tool_describe's own answer: the name is under errors, with why.
    assert line.startswith("web_search: 'web_search' is a tool of a plugin that did not load"), line
    assert "plugin 'web' (bundled" in line
    assert "disabled in plugins.disabled" in line
    assert "hermes plugins enable web" in line
    assert str(hermes_cli.config) in line

    called = hermes_cli.run("tools", "call", "web_search", '{"query": "x"}', ok=False)
    assert called.returncode == 1
    assert "hermes plugins enable web" in called.stderr, called.stderr

    # A name no plugin lists keeps its closest names, and no plugin is named.
    described = hermes_cli.run("tools", "describe", "session_serch", ok=False)
    assert described.returncode == 1
    assert described.stderr.strip() == "session_serch: not found. Did you mean 'session_search'?"
    called = hermes_cli.run("tools", "call", "todo_lis", "{}", ok=False)
    assert called.returncode == 1
    assert "Did you mean: todo_list" in called.stderr
    assert "plugin" not in called.stderr


@pytest.mark.parametrize(
    ("command", "why"),
    [
        pytest.param("espeak-ng {input}", "{input} is not filled by this tool", id="placeholder"),
        pytest.param(
            "espeak-ng 'unclosed",
            "cannot be split like a shell line: No closing quotation",
            id="unclosed-quote",
        ),
    ],
)
def test_a_broken_tts_command_leaves_out_text_to_speech_only_and_names_its_line(
    hermes_cli: HermesCli, command: str, why: str
) -> None:
    hermes_cli.config.write_text(
        f"plugins:\n  entries:\n    media:\n      tts_command: {command!r}\n",
        encoding="utf-8",
    )

    done = hermes_cli.run("tools", "list")

    assert "vision_analyze" in done.stdout
    assert "image_generate" in done.stdout
    assert "text_to_speech" not in done.stdout
    assert f"{hermes_cli.config}:4: plugins.entries.media.tts_command: " in done.stderr, done.stderr
    assert why in done.stderr
    assert "text_to_speech is not registered" in done.stderr


@pytest.mark.parametrize(
    ("entry", "key"),
    [
        pytest.param("terminal:\n      shell: /no/such/shell\n", "terminal.shell", id="shell"),
        pytest.param(
            "files:\n      allow_outside: ['~nobody_here/x']\n", "files.allow_outside", id="files"
        ),
    ],
)
def test_a_plugin_wide_setting_its_plugin_refuses_names_the_config_line(
    hermes_cli: HermesCli, entry: str, key: str
) -> None:
    # Every tool of the plugin depends on it, so the plugin fails; but with the line, as a
    # setting that settings_as refuses does.
    hermes_cli.config.write_text(f"plugins:\n  entries:\n    {entry}", encoding="utf-8")

    done = hermes_cli.run("tools", "list", ok=False)

    assert f"{hermes_cli.config}:4: plugins.entries.{key}: " in done.stderr, done.stderr


BROKEN_SCHEMA = """
from hermes_core.plugin import Tool, ToolAnnotations, hookimpl

HINTS = ToolAnnotations(read_only=True, destructive=False)


@hookimpl
def hermes_tools():
    broken = {"type": "object", "properties": {"x": {"type": "strng"}}}
    sound = {"type": "object", "properties": {"x": {"type": "string"}}}
    return [
        Tool("loose", "Broken schema.", broken, handler=lambda x: f"got {x!r}", annotations=HINTS),
        Tool("tight", "Sound schema.", sound, handler=lambda x: f"got {x!r}", annotations=HINTS),
    ]
"""


def test_a_plugin_tool_whose_schema_is_not_json_schema_is_called_with_a_warning_naming_it(
    hermes_cli: HermesCli, hermes_dir_plugin
) -> None:
    hermes_dir_plugin(hermes_cli.home / "plugins", "sloppy", BROKEN_SCHEMA)
    hermes_cli.config.write_text("plugins:\n  enabled: [sloppy]\n", encoding="utf-8")

    done = hermes_cli.run("tools", "call", "loose", '{"x": 5}')

    # A broken schema never blocks the call (the tool decides), but its author hears of it, in
    # the words a core tool's schema is warned with at start: what to write instead ("'strng' is
    # not valid under any of the given schemas" said none).
    assert done.stdout.strip() == "got 5"
    assert (
        "hermes: warning: tool 'loose' of plugin 'sloppy': its parameters are not a valid JSON "
        "Schema, so its arguments are not checked (at properties.x.type: 'strng' is not a JSON "
        "Schema type: give one of array, boolean, integer, null, number, object, string)"
    ) in done.stderr, done.stderr
    sound = hermes_cli.run("tools", "call", "tight", '{"x": "a"}')
    assert sound.stdout.strip() == "got 'a'"
    assert "warning" not in sound.stderr, sound.stderr


MY_READ_FILE = """
from hermes_core.plugin import Tool, hookimpl


def _read(path: str) -> str:
    return "mine"

@hookimpl
def hermes_tools():
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    return [
        Tool(name="read_file", description="Read a file, my way.", parameters=schema,
             handler=_read),
        Tool(name="my_only", description="Mine alone.", parameters=schema, handler=_read),
    ]
"""


def test_a_user_plugin_overriding_a_bundled_tool_is_said_by_plugins_info_and_tools_list(
    hermes_cli: HermesCli, hermes_dir_plugin
) -> None:
    hermes_dir_plugin(hermes_cli.home / "plugins", "myread", MY_READ_FILE)
    hermes_cli.config.write_text("plugins:\n  enabled: [myread]\n", encoding="utf-8")

    info = hermes_cli.run("plugins", "info", "myread").stdout
    assert "overrides:       read_file (bundled plugin 'files')\n" in info, info
    bundled = hermes_cli.run("plugins", "info", "files").stdout
    assert "overridden:      read_file (by user plugin 'myread')\n" in bundled, bundled

    rows = {row["name"]: row for row in hermes_cli.json("tools", "list", "--json")}
    assert rows["read_file"]["overrides"] == {"owner": "files", "source": "bundled"}
    assert rows["my_only"]["overrides"] is None
    assert rows["write_file"]["overrides"] is None
    table = hermes_cli.run("tools", "list").stdout.splitlines()
    line = next(line for line in table if line.startswith("read_file "))
    assert "plugin (overrides bundled 'files')" in line, line
    assert "overrides" not in next(line for line in table if line.startswith("my_only "))


HUGE_BROKEN_SCHEMA = """
from hermes_core.plugin import Tool, ToolAnnotations, hookimpl

HINTS = ToolAnnotations(read_only=True, destructive=False)


@hookimpl
def hermes_tools():
    required = {f"k{index}": "v" * 50 for index in range(20000)}  # a mapping: not a list
    huge = {"type": "object", "properties": {"x": {"type": "string"}}, "required": required}
    return [Tool("huge", "Huge schema.", huge, handler=lambda x: f"got {x!r}", annotations=HINTS)]
"""


def test_the_warning_of_a_huge_broken_schema_is_one_short_line(
    hermes_cli: HermesCli, hermes_dir_plugin
) -> None:
    # jsonschema's message quotes the whole wrong value: a 1.2 MB warning line.
    hermes_dir_plugin(hermes_cli.home / "plugins", "sloppy", HUGE_BROKEN_SCHEMA)
    hermes_cli.config.write_text("plugins:\n  enabled: [sloppy]\n", encoding="utf-8")

    done = hermes_cli.run("tools", "call", "huge", '{"x": "a"}')

    assert done.stdout.strip() == "got 'a'"
    (warning,) = [line for line in done.stderr.splitlines() if "warning" in line]
    assert warning.startswith(
        "hermes: warning: tool 'huge' of plugin 'sloppy': its parameters are not a valid JSON "
        "Schema, so its arguments are not checked (at required: {'k0': "
    ), warning
    assert "characters)" in warning
    assert len(warning) < 500, len(warning)


DEEP_SCHEMA = """
from hermes_core.plugin import Tool, ToolAnnotations, hookimpl

HINTS = ToolAnnotations(read_only=True, destructive=False)


@hookimpl
def hermes_tools():
    deep = {"type": "string"}
    for _ in range(300):
        deep = {"type": "object", "properties": {"a": deep}}
    schema = {"type": "object", "properties": {"x": deep}}
    return [Tool("deep", "Deep schema.", schema, handler=lambda x: "ran", annotations=HINTS)]
"""


def test_a_plugin_tool_whose_schema_is_nested_too_deeply_is_called_with_a_warning(
    hermes_cli: HermesCli, hermes_dir_plugin
) -> None:
    # It was an INTERNAL_ERROR ("hermes-core failed while calling 'deep'") and a traceback.
    hermes_dir_plugin(hermes_cli.home / "plugins", "sloppy", DEEP_SCHEMA)
    hermes_cli.config.write_text("plugins:\n  enabled: [sloppy]\n", encoding="utf-8")

    done = hermes_cli.run("tools", "call", "deep", '{"x": {}}')

    assert done.stdout.strip() == "ran"
    assert done.stderr == (
        "hermes: warning: tool 'deep' of plugin 'sloppy': its parameters are nested too deeply "
        "to check as a JSON Schema, so its arguments are not checked\n"
    ), done.stderr


CORE_BROKEN_SCHEMA = """
from hermes_core.plugin import Tool, ToolAnnotations, hookimpl

HINTS = ToolAnnotations(read_only=True, destructive=False)


@hookimpl
def hermes_tools():
    broken = {"type": "object", "properties": {"x": {"type": "strng"}}}
    return [
        Tool("loose", "Broken schema.", broken, handler=lambda x: f"got {x!r}",
             annotations=HINTS, core=True),
    ]
"""

CORE_WARNING = (
    "hermes: warning: tool 'loose' of plugin 'sloppy': its parameters are not a valid JSON "
    "Schema, so its arguments are not checked (at properties.x.type: 'strng' is not a JSON "
    "Schema type: give one of array, boolean, integer, null, number, object, string)"
)


def test_a_core_plugin_tool_whose_schema_is_broken_is_warned_about_at_start_once(
    hermes_cli: HermesCli, hermes_dir_plugin
) -> None:
    # Its schema is in every model request, but the warning came only at its first call.
    hermes_dir_plugin(hermes_cli.home / "plugins", "sloppy", CORE_BROKEN_SCHEMA)
    hermes_cli.config.write_text("plugins:\n  enabled: [sloppy]\n", encoding="utf-8")

    listed = hermes_cli.run("tools", "list")
    assert [line for line in listed.stderr.splitlines() if "warning" in line] == [CORE_WARNING]

    called = hermes_cli.run("tools", "call", "loose", '{"x": 5}')
    assert called.stdout.strip() == "got 5"  # it never blocks the call
    assert [line for line in called.stderr.splitlines() if "warning" in line] == [CORE_WARNING]


CORE_SOUND_SCHEMA = """
from hermes_core.plugin import Tool, ToolAnnotations, hookimpl

HINTS = ToolAnnotations(read_only=True, destructive=False)


@hookimpl
def hermes_tools():
    sound = {"type": "object", "properties": {"x": {"type": ["string", "null"]}}}
    return [
        Tool("tight", "Sound schema.", sound, handler=lambda x: f"got {x!r}",
             annotations=HINTS, core=True),
    ]
"""


def test_checking_a_core_plugin_tools_schema_at_start_does_not_import_jsonschema(
    hermes_cli: HermesCli, hermes_dir_plugin
) -> None:
    # jsonschema costs ~45 ms to import: a start that calls no tool must not pay for it.
    hermes_dir_plugin(hermes_cli.home / "plugins", "sound", CORE_SOUND_SCHEMA)
    hermes_cli.config.write_text("plugins:\n  enabled: [sound]\n", encoding="utf-8")

    done = hermes_cli.run("tools", "list", env=hermes_cli.variables(PYTHONPROFILEIMPORTTIME="1"))

    assert "tight" in done.stdout
    imported = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()]
    assert "hermes_core._host" in imported  # the import times were written
    assert not any(name.startswith("jsonschema") for name in imported)
    assert "hermes: warning" not in done.stderr
