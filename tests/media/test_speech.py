"""``text_to_speech`` and ``speech_to_text``: the user's own commands, run without a shell.
Text to speech with espeak-ng (a real one, installed from Debian by the test setup) writes a WAV
whose duration grows with the text; the model's text never becomes an option or a shell word; a
command that hangs is killed with its whole process group; failures say what failed."""

from __future__ import annotations

import os
import shutil
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from hermes_core import Environment, Host, PluginError, ToolResult

from .media_hosts import call, media_host

ESPEAK_FILE = "espeak-ng -w {output} -f {text_file}"


@pytest.fixture
def espeak() -> str:
    found = shutil.which("espeak-ng")
    if found is None:
        pytest.fail("espeak-ng is missing: install it with `apt-get install espeak-ng`")
    return found


def speak(env: Environment, cwd: Path, text: str, command: str, **more: object) -> ToolResult:
    host = media_host(env, media={"tts_command": command, **more})
    try:
        return call(host, cwd, "text_to_speech", {"text": text})
    finally:
        host.close()


def test_espeak_writes_a_wav_whose_duration_grows_with_the_text(
    espeak: str, hermes_env: Environment, tmp_path: Path
) -> None:
    short = speak(hermes_env, tmp_path, "Hello.", ESPEAK_FILE)
    long = speak(
        hermes_env,
        tmp_path,
        "Hello. The build finished without errors, all four hundred tests passed, and the "
        "release notes are ready for review in the docs folder.",
        "espeak-ng -w {output} --stdin",  # no text placeholder: the text goes to stdin
    )
    for result in (short, long):
        assert not result.is_error, result.text_content
    short_path = Path(short.structured["path"])
    assert short_path.read_bytes()[:4] == b"RIFF"
    assert short_path.is_relative_to(hermes_env.home / "media" / "speech")
    seconds = short.structured["seconds"], long.structured["seconds"]
    assert 0.2 < seconds[0] < seconds[1] / 3
    # The model reads the text, not the structured result: the duration is said there too.
    assert short.text_content == f"Saved the speech ({seconds[0]:.1f} s) to {short_path}"


def test_text_that_would_read_as_an_option_is_refused(
    espeak: str, hermes_env: Environment, tmp_path: Path
) -> None:
    result = speak(hermes_env, tmp_path, "-w /tmp/owned.wav hi", "espeak-ng -w {output} {text}")
    assert result.is_error
    assert "starts with '-'" in result.text_content
    assert not Path("/tmp/owned.wav").exists()


def test_shell_words_in_the_text_are_only_words(hermes_env: Environment, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    script = tmp_path / "tts.py"
    script.write_text(
        "import sys, pathlib\npathlib.Path(sys.argv[1]).write_text(sys.argv[2])\n",
        encoding="utf-8",
    )
    text = f"hi; touch {marker} $(touch {marker}) `touch {marker}`"
    result = speak(
        hermes_env,
        tmp_path,
        text,
        f"{sys.executable} {script} {{output}} {{text}}",
        tts_format="txt",
    )
    assert not result.is_error, result.text_content
    assert Path(result.structured["path"]).read_text() == text
    assert not marker.exists()


def test_a_command_that_hangs_is_killed_with_its_process_group(
    hermes_env: Environment, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    command = f"sh -c 'sleep 60 & echo $! > {pids}; wait' {{output}} {{text}}"
    result = speak(hermes_env, tmp_path, "hello", command, tts_timeout=1)
    assert result.is_error
    assert result.text_content == (
        "text_to_speech: sh did not finish in 1 s (plugins.entries.media.tts_timeout); its "
        "process group was killed"
    )
    child = int(pids.read_text())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and Path(f"/proc/{child}").exists():
        if Path(f"/proc/{child}/stat").read_text().split()[2] == "Z":
            break  # a zombie waiting for init: it no longer runs
        time.sleep(0.05)
    alive = Path(f"/proc/{child}").exists() and (
        Path(f"/proc/{child}/stat").read_text().split()[2] != "Z"
    )
    assert not alive


@pytest.mark.parametrize(
    ("command", "said"),
    [
        ("hermes-no-such-tts {output}", "is not installed"),
        (
            "sh -c 'echo the voice is missing >&2; exit 3' {output} {text}",
            "exited with 3: the voice is",
        ),
        ("sh -c 'echo not audio > \"$0\"' {output}", "is not a WAV file"),
        ("sh -c 'true' {output}", "wrote nothing"),
    ],
)
def test_a_failing_command_says_what_failed_and_leaves_no_file(
    command: str, said: str, hermes_env: Environment, tmp_path: Path
) -> None:
    result = speak(hermes_env, tmp_path, "hello", command)
    assert result.is_error
    assert said in result.text_content
    speech = hermes_env.home / "media" / "speech"
    assert not speech.exists() or not any(speech.iterdir())


def test_a_command_that_cannot_be_run_names_it_and_the_setting(
    hermes_env: Environment, tmp_path: Path
) -> None:
    # A script the user wrote but did not make executable, and a directory named by mistake.
    script = tmp_path / "speak.sh"
    script.write_text('#!/bin/sh\nespeak-ng -w "$1" hello\n', encoding="utf-8")
    script.chmod(0o644)
    not_executable = speak(hermes_env, tmp_path, "hello", f"{script} {{output}}")
    directory = speak(hermes_env, tmp_path, "hello", f"{tmp_path} {{output}}")
    missing = speak(hermes_env, tmp_path, "hello", "hermes-no-such-tts {output}")

    assert not_executable.error_code == "CONFIG_ERROR", not_executable.text_content
    assert not_executable.text_content == (
        f"text_to_speech: the command {str(script)!r} of plugins.entries.media.tts_command "
        "cannot be run: it is not executable (chmod +x it)"
    )
    assert directory.error_code == "CONFIG_ERROR", directory.text_content
    assert directory.text_content == (
        f"text_to_speech: the command {str(tmp_path)!r} of plugins.entries.media.tts_command "
        "cannot be run: it is a directory"
    )
    assert missing.text_content == (
        "text_to_speech: the command 'hermes-no-such-tts' of plugins.entries.media.tts_command "
        "is not installed (not found on PATH)"
    )


def test_without_a_command_there_is_no_tool(hermes_env: Environment, tmp_path: Path) -> None:
    host = media_host(hermes_env)
    try:
        names = set(host.registry.names())
    finally:
        host.close()
    assert "image_generate" in names
    assert "text_to_speech" not in names
    assert "speech_to_text" not in names


def test_a_command_that_cannot_be_used_leaves_out_its_tool_only_naming_the_setting(
    hermes_env: Environment, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    broken = {"tts_command": "espeak-ng 'unclosed", "stt_command": "whisper {text}"}
    with caplog.at_level("WARNING"):
        host = media_host(hermes_env, media=broken)
    try:
        names = set(host.registry.names())
    finally:
        host.close()
    assert {"vision_analyze", "image_generate"} <= names
    assert not {"text_to_speech", "speech_to_text"} & names
    warned = caplog.text
    assert "plugins.entries.media.tts_command: it cannot be split like a shell line" in warned
    assert "plugins.entries.media.stt_command: {text} is not filled by this tool" in warned
    assert "speech_to_text is not registered" in warned


def test_speech_to_text_returns_what_the_command_transcribed(
    hermes_env: Environment, tmp_path: Path
) -> None:
    # The user's transcriber (a script standing in for whisper.cpp, which is not installed
    # here): reads the audio file it is given, prints the transcript or writes it to {output}.
    script = tmp_path / "stt.py"
    script.write_text(
        "import sys, pathlib\n"
        "heard = 'heard %d bytes' % len(pathlib.Path(sys.argv[1]).read_bytes())\n"
        "if len(sys.argv) > 2:\n"
        "    pathlib.Path(sys.argv[2]).write_text(heard)\n"
        "else:\n"
        "    print(heard)\n",
        encoding="utf-8",
    )
    (tmp_path / "memo.wav").write_bytes(b"RIFF" + b"\0" * 96)
    for command in (
        f"{sys.executable} {script} {{input}}",
        f"{sys.executable} {script} {{input}} {{output}}",
    ):
        host = media_host(hermes_env, media={"stt_command": command})
        try:
            result = call(host, tmp_path, "speech_to_text", {"audio": "memo.wav"})
            outside = call(host, tmp_path, "speech_to_text", {"audio": "/etc/passwd"})
        finally:
            host.close()
        assert result.text_content == "heard 100 bytes"
        assert outside.is_error
        assert "outside the working directory" in outside.text_content
    assert os.path.exists(tmp_path / "memo.wav")


def test_a_path_that_exists_is_refused_and_the_file_is_kept(
    hermes_env: Environment, tmp_path: Path
) -> None:
    # A model that names a file of the project (by mistake, or told to by what it read): the
    # command is not run, and a command that then fails cannot take the file with it.
    readme = tmp_path / "README.md"
    readme.write_text("precious", encoding="utf-8")
    ran = tmp_path / "ran"
    for command in (f"sh -c 'touch {ran}; exit 3' {{output}}", f"touch {ran} {{output}}"):
        result = speak_to(hermes_env, tmp_path, "hello", command, "README.md", tts_format="txt")
        assert result.error_code == "INVALID_ARGUMENTS", result.text_content
        assert result.text_content == (
            "text_to_speech: README.md already exists; give the name of a new file (the media "
            "tools never replace one)"
        )
    assert readme.read_text(encoding="utf-8") == "precious"
    assert not ran.exists()


def test_a_file_that_appears_while_the_command_runs_is_never_replaced_nor_removed(
    hermes_env: Environment, tmp_path: Path
) -> None:
    # Another program (or a parallel call) writes the file after the check, while the command
    # runs: it keeps its file, whether the command then succeeds or fails.
    kept = tmp_path / "hello.txt"
    other = f"printf precious > {kept}"
    said = []
    for command in (
        f"sh -c '{other}; printf audio > \"$1\"' sh {{output}}",
        f"sh -c '{other}; exit 3' sh {{output}}",
    ):
        kept.unlink(missing_ok=True)
        result = speak_to(hermes_env, tmp_path, "hello", command, "hello.txt", tts_format="txt")
        assert result.is_error, result.text_content
        assert kept.read_text(encoding="utf-8") == "precious"
        assert [path.name for path in tmp_path.iterdir() if "hello" in path.name] == ["hello.txt"]
        said.append(result.text_content)
    assert said == [
        "text_to_speech: hello.txt already exists; give the name of a new file (the media "
        "tools never replace one)",
        "text_to_speech: sh exited with 3",
    ]


def speak_to(
    env: Environment, cwd: Path, text: str, command: str, path: str, **more: object
) -> ToolResult:
    host = media_host(env, media={"tts_command": command, **more})
    try:
        return call(host, cwd, "text_to_speech", {"text": text, "path": path})
    finally:
        host.close()


@pytest.mark.parametrize("where", ["stdout", "output"])
def test_a_transcriber_that_writes_without_end_is_stopped_at_a_cap(
    where: str, hermes_env: Environment, tmp_path: Path
) -> None:
    # 30 MB of output for a transcript of at most 100,000 characters: it is never held whole.
    (tmp_path / "memo.wav").write_bytes(b"RIFF" + b"\0" * 96)
    writes = "head -c 30000000 /dev/zero" + (' > "$1"' if where == "output" else "")
    command = f"sh -c '{writes}' sh {{output}} {{input}}"
    if where == "stdout":
        command = f"sh -c '{writes}' sh {{input}}"
    host = media_host(hermes_env, media={"stt_command": command})
    try:
        result = call(host, tmp_path, "speech_to_text", {"audio": "memo.wav"})
    finally:
        host.close()
    assert result.error_code == "TOOL_ERROR", result.text_content[:200]
    named = "its standard output" if where == "stdout" else "its transcript file"
    assert result.text_content == (
        f"speech_to_text: sh wrote more than 400,000 bytes to {named} (a transcript is kept "
        "up to 100,000 characters); it was stopped"
    )


def test_a_text_with_a_nul_or_a_lone_surrogate_is_refused_or_mended_in_one_line(
    hermes_env: Environment, tmp_path: Path
) -> None:
    # JSON lets a model send both; neither may reach the command's argv as an internal error.
    command = 'sh -c \'printf %s "$1" > "$0"\' {output} {text}'
    nul = speak(hermes_env, tmp_path, "hi\x00there", command, tts_format="txt")
    lone = speak(hermes_env, tmp_path, "say \ud800 this", command, tts_format="txt")
    assert nul.error_code == "INVALID_ARGUMENTS", nul.text_content
    assert nul.text_content == (
        "text_to_speech: the text holds a NUL character (\\x00), which no command's argument "
        "or text can hold; remove it"
    )
    assert not lone.is_error, lone.text_content
    # The one rule for text that leaves for a peer (hermes_core/_encodable.py): U+FFFD.
    assert Path(lone.structured["path"]).read_text(encoding="utf-8") == "say \ufffd this"


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (
            "tts_format: wav/../../../x",
            "plugins.entries.media.tts_format: expected a file extension such as wav or mp3 "
            "(letters and digits), got 'wav/../../../x'",
        ),
        (
            "image_base_url: api.openai.com/v1",
            "plugins.entries.media.image_base_url: expected an http:// or https:// URL, got "
            "'api.openai.com/v1'",
        ),
        (
            "image_size: big",
            "plugins.entries.media.image_size: expected WIDTHxHEIGHT such as 1024x1024, or "
            "nothing, got 'big'",
        ),
    ],
)
def test_a_format_or_size_setting_that_is_no_such_thing_names_its_file_line_and_key(
    line: str, said: str, hermes_env: Environment
) -> None:
    # Checked when the settings are read, not left to a call: a format with '/' would write
    # the speech outside the media folder, and a bad size was blamed on the model's argument.
    hermes_env.config_path.write_text(
        f"plugins:\n  entries:\n    media:\n      {line}\n", encoding="utf-8"
    )
    with pytest.raises(PluginError) as caught:
        start_from_file(hermes_env)
    assert f"{hermes_env.config_path}:4: {said}" in str(caught.value)


def start_from_file(env: Environment) -> None:
    """A host started over ``env``'s own ``config.yaml`` (its lines named in errors) with the
    bundled plugins, strict, then closed."""
    kept = {k: v for k, v in env.variables.items() if k != "HERMES_BUNDLED_PLUGINS"}
    strict = replace(env, variables={**kept, "HERMES_STRICT_PLUGINS": "1"})
    host = Host.from_environment(strict)
    try:
        host.start()
    finally:
        host.close()


def test_a_speech_command_without_output_is_left_out_saying_where_the_audio_goes(
    hermes_env: Environment, caplog: pytest.LogCaptureFixture
) -> None:
    # `espeak-ng {text}` plays the text aloud and writes no file: every call would fail with
    # "wrote nothing", naming neither the setting nor {output}.
    with caplog.at_level("WARNING"):
        host = media_host(hermes_env, media={"tts_command": "espeak-ng {text}"})
    try:
        names = set(host.registry.names())
    finally:
        host.close()
    assert "text_to_speech" not in names
    assert (
        "plugins.entries.media.tts_command: it has no {output}, where the command must write "
        "the audio (espeak-ng -w {output} ...): text_to_speech is not registered"
    ) in caplog.text
