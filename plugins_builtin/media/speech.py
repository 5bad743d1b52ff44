"""``text_to_speech`` and ``speech_to_text``: the user's own commands (espeak-ng, piper,
whisper.cpp...), named in ``plugins.entries.media``, run without a shell.

A command is split like a shell line once, when the settings are read; each call replaces the
placeholders inside the words (``{text}``, ``{text_file}``, ``{output}``, ``{input}``), so
nothing the model writes is ever parsed by a shell, and a text that would read as an option
(``-w /etc/passwd`` as the word ``{text}``) is refused. The command runs in its own process
group with a timeout (the whole group is killed when it passes); its output file is checked
before the tool answers.
"""

from __future__ import annotations

import signal
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import anyio

from hermes_core._plugin_support import path_refusal
from hermes_core.plugin import Environment, Session, Tool, ToolAnnotations, ToolResult

from .media_files import MediaRefused, beside, inside_session, output_path, placed
from .settings import MediaEntry

PLACEHOLDERS: Final = ("{text}", "{text_file}", "{output}", "{input}")
_STDERR_SHOWN: Final = 600
_TRANSCRIPT_CHARS: Final = 100_000
_TRANSCRIPT_BYTES: Final = 4 * _TRANSCRIPT_CHARS
"""The most a transcript may take, in UTF-8, on the command's output or in its file."""


class BadCommand(ValueError):
    """A command setting (``key``) that cannot be split or uses a placeholder its tool does
    not fill; the message says which, without the key."""

    def __init__(self, key: str, detail: str) -> None:
        self.key = key
        super().__init__(detail)


def command_words(template: str, key: str, allowed: tuple[str, ...]) -> list[str]:
    """``template`` split like a shell line; a :class:`BadCommand` for ``key`` when it cannot
    be or uses a placeholder its tool does not fill."""
    import shlex  # here, as asyncio and wave below: a plugin's imports are every start's

    try:
        words = shlex.split(template)
    except ValueError as exc:
        raise BadCommand(key, f"it cannot be split like a shell line: {exc}") from None
    if not words:
        raise BadCommand(key, "the command is empty")
    for word in words:
        for placeholder in PLACEHOLDERS:
            if placeholder in word and placeholder not in allowed:
                raise BadCommand(
                    key,
                    f"{placeholder} is not filled by this tool (it fills {', '.join(allowed)})",
                )
    return words


def filled(words: list[str], values: dict[str, str]) -> list[str]:
    """``words`` with the placeholders replaced; a word that is a whole placeholder must not
    become an option."""
    argv: list[str] = []
    for word in words:
        value = word
        for placeholder, replacement in values.items():
            value = value.replace(placeholder, replacement)
        if word in values and value.startswith("-") and word != value:
            raise MediaRefused(
                f"the value of {word} starts with '-', which the command would read as an "
                "option; rephrase it, or use {text_file} in the command"
            )
        argv.append(value)
    return argv


def _the_command(argv0: str, key: str) -> str:
    return f"the command {argv0!r} of plugins.entries.media.{key}"


def not_installed(argv0: str, key: str) -> str:
    """What a call says of a command ``argv0`` (of the setting ``key``) that is not found."""
    return f"{_the_command(argv0, key)} is not installed (not found on PATH)"


def command_found(template: str, key: str, env: Environment) -> str:
    """Where the first word of the command ``template`` (of ``key``) is found on ``PATH`` (a
    path with a ``/``: itself); a :class:`MediaRefused` saying what a call would say when it
    is not there or not executable."""
    import os
    import shutil

    argv0 = command_words(template, key, PLACEHOLDERS)[0]
    found = shutil.which(argv0, path=env.variables.get("PATH", os.defpath))
    if found is None:
        if "/" in argv0 and os.path.exists(argv0):
            raise MediaRefused(f"{_the_command(argv0, key)} cannot be run: it is not executable")
        raise MediaRefused(not_installed(argv0, key))
    return found


@dataclass(frozen=True)
class Ran:
    """How a command ended: its exit code (``None``: killed at the timeout, or for writing
    more than it may: ``overflow``), its output and the end of its error output."""

    code: int | None
    stdout: bytes
    stderr: str
    overflow: bool = False


async def run_command(
    argv: list[str], stdin: bytes | None, timeout: float, cwd: Path, key: str, stdout_cap: int
) -> Ran:
    """``argv`` (the command of ``plugins.entries.media.<key>``) in its own process group,
    ``stdin`` written to it; the group is killed at ``timeout``, or as soon as it writes more
    than ``stdout_cap`` bytes on its standard output (0: the output is not read). Only the end
    of its error output is kept. A command that is not found or cannot be run is a
    :class:`MediaRefused` naming it and the setting."""
    import asyncio

    command = _the_command(argv[0], key)
    pipe, devnull = asyncio.subprocess.PIPE, asyncio.subprocess.DEVNULL
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=pipe if stdin is not None else devnull,
            stdout=pipe if stdout_cap else devnull,
            stderr=pipe,
            cwd=cwd,
            start_new_session=True,
        )
    except FileNotFoundError:
        raise MediaRefused(not_installed(argv[0], key)) from None
    except PermissionError:
        named = cwd / argv[0] if "/" in argv[0] else None
        why = "a directory" if named is not None and named.is_dir() else "not executable"
        hint = " (chmod +x it)" if why == "not executable" else ""
        raise MediaRefused(f"{command} cannot be run: it is {why}{hint}") from None
    except OSError as exc:  # a script without its #! line: "Exec format error"
        raise MediaRefused(f"{command} cannot be run: {exc.strerror or exc}") from None
    from hermes_core._plugin_support import signal_group

    out = bytearray()
    err = bytearray()

    async def feed(data: bytes) -> None:
        if process.stdin is None:
            return
        try:
            process.stdin.write(data)
            await process.stdin.drain()
            process.stdin.close()
        except (BrokenPipeError, ConnectionResetError):
            pass  # it ended without reading it all: its exit code says how it went

    async def read_out() -> bool:
        while process.stdout is not None and (chunk := await process.stdout.read(1 << 16)):
            out.extend(chunk)
            if len(out) > stdout_cap:
                signal_group(process.pid, signal.SIGKILL)
                while await process.stdout.read(1 << 16):  # to its end: the pipe is closed
                    pass
                return True
        return False

    async def read_err() -> None:
        while process.stderr is not None and (chunk := await process.stderr.read(1 << 16)):
            err.extend(chunk)
            del err[: -4 * _STDERR_SHOWN]

    async def communicate() -> bool:
        tasks = [read_out(), read_err(), *([feed(stdin)] if stdin is not None else [])]
        overflow = bool((await asyncio.gather(*tasks))[0])
        await process.wait()
        return overflow

    try:
        overflow = await asyncio.wait_for(communicate(), timeout)
    except TimeoutError:
        signal_group(process.pid, signal.SIGKILL)
        await process.wait()
        return Ran(None, b"", "")
    except asyncio.CancelledError:  # the call was stopped: so is the command, all of it
        signal_group(process.pid, signal.SIGKILL)
        raise
    stderr = err.decode("utf-8", "replace")[-_STDERR_SHOWN:]
    if overflow:
        return Ran(None, b"", stderr, overflow=True)
    return Ran(process.returncode, bytes(out), stderr)


def _failed(tool: str, argv0: str, ran: Ran, timeout: float, key: str) -> ToolResult:
    if ran.overflow:
        return _too_long(tool, argv0, "its standard output")
    if ran.code is None:
        return ToolResult.error(
            "TOOL_ERROR",
            f"{tool}: {argv0} did not finish in {timeout:g} s (plugins.entries.media.{key}); "
            "its process group was killed",
        )
    tail = f": {ran.stderr.strip()}" if ran.stderr.strip() else ""
    return ToolResult.error("TOOL_ERROR", f"{tool}: {argv0} exited with {ran.code}{tail}")


def _too_long(tool: str, argv0: str, where: str) -> ToolResult:
    return ToolResult.error(
        "TOOL_ERROR",
        f"{tool}: {argv0} wrote more than {_TRANSCRIPT_BYTES:,} bytes to {where} (a transcript "
        f"is kept up to {_TRANSCRIPT_CHARS:,} characters); it was stopped",
    )


def wav_seconds(path: Path) -> float:
    """The duration of the WAV file ``path``; a :class:`MediaRefused` when it is none."""
    import wave

    try:
        with wave.open(str(path), "rb") as audio:
            rate = audio.getframerate()
            return audio.getnframes() / rate if rate else 0.0
    except (wave.Error, EOFError) as exc:
        why = f" ({exc})" if str(exc) else ""
        raise MediaRefused(f"the command's output is not a WAV file{why}") from None


async def _spoken(
    ran: Ran, argv0: str, made: Path, target: Path, path: str | None, suffix: str, entry: MediaEntry
) -> ToolResult:
    """What ``text_to_speech`` answers after ``tts_command`` ran (``ran``) to write ``made``:
    moved to ``target`` (``path`` named it) when it is worth keeping, otherwise removed."""
    if ran.code != 0:
        made.unlink(missing_ok=True)
        return _failed("text_to_speech", argv0, ran, entry.tts_timeout, "tts_timeout")
    if not made.is_file() or made.stat().st_size == 0:
        made.unlink(missing_ok=True)
        return ToolResult.error("TOOL_ERROR", f"text_to_speech: {argv0} wrote nothing to {target}")
    structured: dict[str, object] = {"path": str(target), "bytes": made.stat().st_size}
    try:
        if suffix == "wav":
            structured["seconds"] = round(await anyio.to_thread.run_sync(wav_seconds, made), 3)
        if path:
            placed(made, target, path)
    except (MediaRefused, OSError) as exc:
        made.unlink(missing_ok=True)
        return ToolResult.error("TOOL_ERROR", f"text_to_speech: {exc}")
    said = f" ({structured['seconds']:.1f} s)" if "seconds" in structured else ""
    return ToolResult.text(f"Saved the speech{said} to {target}", structured=structured)


def build_speech_tool(entry: MediaEntry, env: Environment) -> Tool:
    """``text_to_speech`` running ``entry.tts_command``."""
    words = command_words(entry.tts_command, "tts_command", ("{text}", "{text_file}", "{output}"))
    if not any("{output}" in word for word in words):
        raise BadCommand(
            "tts_command",
            "it has no {output}, where the command must write the audio (espeak-ng -w {output} "
            "...)",
        )
    suffix = entry.tts_format.lstrip(".") or "wav"

    async def text_to_speech(session: Session, text: str, path: str | None = None) -> ToolResult:
        if (refused := path_refusal("text_to_speech", path=path)) is not None:
            return refused
        from hermes_core._plugin_support import encodable

        text = encodable(text.strip())  # JSON allows a lone surrogate; UTF-8 holds none
        if not text:
            return ToolResult.error("INVALID_ARGUMENTS", "text_to_speech: the text is empty")
        if "\x00" in text:
            return ToolResult.error(
                "INVALID_ARGUMENTS",
                "text_to_speech: the text holds a NUL character (\\x00), which no command's "
                "argument or text can hold; remove it",
            )
        if len(text) > entry.max_speech_chars:
            return ToolResult.error(
                "INVALID_ARGUMENTS",
                f"text_to_speech: {len(text):,} characters, over the {entry.max_speech_chars:,}"
                " the settings allow (plugins.entries.media.max_speech_chars)",
            )
        with tempfile.TemporaryDirectory(prefix="hermes-tts-") as scratch:
            text_file = Path(scratch) / "text.txt"
            text_file.write_text(text, encoding="utf-8")
            try:
                target = output_path(session, env, "speech", suffix, path)
                # The command writes a new file of its own, named path once it succeeded: a
                # file that appears there meanwhile is neither replaced nor removed.
                made = beside(target) if path else target
                values = {"{text}": text, "{text_file}": str(text_file), "{output}": str(made)}
                argv = filled(words, values)
            except MediaRefused as exc:
                return ToolResult.error("INVALID_ARGUMENTS", f"text_to_speech: {exc}")
            piped = not any(p in w for w in words for p in ("{text}", "{text_file}"))
            try:
                ran = await run_command(
                    argv,
                    text.encode() if piped else None,
                    entry.tts_timeout,
                    session.cwd,
                    "tts_command",
                    0,  # the audio goes to {output}: what it prints is not read
                )
                return await _spoken(ran, argv[0], made, target, path, suffix, entry)
            except MediaRefused as exc:
                return ToolResult.error("CONFIG_ERROR", f"text_to_speech: {exc}")
            finally:
                if made != target:
                    made.unlink(missing_ok=True)

    return Tool(
        name="text_to_speech",
        description="Speak a text aloud into an audio file (returns its path).",
        parameters={
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "What to say."},
                "path": {
                    "type": "string",
                    "description": "Where to save it in the working directory (default: "
                    "hermes' media folder).",
                },
            },
            "required": ["text"],
            "additionalProperties": False,
        },
        handler=text_to_speech,
        toolset="tts",
        source="builtin",
        source_name="media",
        core=True,
        annotations=ToolAnnotations(destructive=False),
        timeout=entry.tts_timeout + 15,
    )


def build_transcription_tool(entry: MediaEntry, env: Environment) -> Tool:
    """``speech_to_text`` running ``entry.stt_command``."""
    words = command_words(entry.stt_command, "stt_command", ("{input}", "{output}"))
    to_file = any("{output}" in word for word in words)

    async def speech_to_text(session: Session, audio: str) -> ToolResult:
        if (refused := path_refusal("speech_to_text", audio=audio)) is not None:
            return refused
        try:
            source = inside_session(session, audio)
            if not source.is_file():
                raise MediaRefused(f"{audio} does not exist or is not a regular file")
        except MediaRefused as exc:
            return ToolResult.error("INVALID_ARGUMENTS", f"speech_to_text: {exc}")
        with tempfile.TemporaryDirectory(prefix="hermes-stt-") as scratch:
            output = Path(scratch) / "transcript.txt"
            argv = filled(words, {"{input}": str(source), "{output}": str(output)})
            try:
                ran = await run_command(
                    argv, None, entry.stt_timeout, session.cwd, "stt_command", _TRANSCRIPT_BYTES
                )
            except MediaRefused as exc:
                return ToolResult.error("CONFIG_ERROR", f"speech_to_text: {exc}")
            if ran.code != 0:
                return _failed("speech_to_text", argv[0], ran, entry.stt_timeout, "stt_timeout")
            if to_file:
                if not output.is_file():
                    return ToolResult.error(
                        "TOOL_ERROR", f"speech_to_text: {argv[0]} wrote no transcript"
                    )
                with output.open("rb") as stream:
                    raw = stream.read(_TRANSCRIPT_BYTES + 1)
                if len(raw) > _TRANSCRIPT_BYTES:
                    return _too_long("speech_to_text", argv[0], "its transcript file")
            else:
                raw = ran.stdout
        transcript = raw.decode("utf-8", "replace").strip()[:_TRANSCRIPT_CHARS]
        return ToolResult.text(transcript, structured={"audio": audio, "chars": len(transcript)})

    return Tool(
        name="speech_to_text",
        description="Transcribe an audio file of the working directory to text.",
        parameters={
            "type": "object",
            "properties": {"audio": {"type": "string", "description": "The audio file's path."}},
            "required": ["audio"],
            "additionalProperties": False,
        },
        handler=speech_to_text,
        toolset="tts",
        source="builtin",
        source_name="media",
        core=True,
        annotations=ToolAnnotations(read_only=True, destructive=False),
        timeout=entry.stt_timeout + 15,
    )
