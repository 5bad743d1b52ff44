"""``hermes doctor`` asks the enabled plugins too (``hermes_doctor_checks``): a third party's
checks (ok, warning, error, one that raises, returns junk or hangs, a hook that fails, a
plugin not enabled, never run), the browser's Chromium, media's commands, brave's key and a
SearXNG instance: a real HTTP server on 127.0.0.1 and a port where nothing listens. The real
command in this process, a real config.yaml in a temporary HERMES_HOME."""

from __future__ import annotations

import json
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from hermes_core.testing import HermesCli
from hermes_core.testing._cli_in_process import InProcessCli

pytestmark = pytest.mark.subprocess

CHECKS = """
import time
from pathlib import Path

from hermes_core.plugin import DoctorCheckSpec, DoctorResult, hookimpl

RAN = Path({ran!r})


def fine():
    return DoctorResult("ok", "the service answers")


async def stale():
    return DoctorResult("warning", "the cache is old\\x1b[31m", "thing refresh")


def broken():
    return DoctorResult("error", "no token: set THING_TOKEN")


def raises():
    raise RuntimeError("the check broke")


def hangs():
    time.sleep(3600)


def junk():
    return "fine"


def exits():
    raise SystemExit(3)


def online():
    (RAN / "online").write_text("sent")
    return DoctorResult("ok", "sent a request")


@hookimpl
def hermes_doctor_checks(context):
    assert context.plugin == "thing"
    return [
        DoctorCheckSpec("fine", fine),
        DoctorCheckSpec("stale", stale),
        DoctorCheckSpec("broken", broken),
        DoctorCheckSpec("raises", raises),
        DoctorCheckSpec("hangs", hangs),
        DoctorCheckSpec("junk", junk),
        DoctorCheckSpec("exits", exits),
        DoctorCheckSpec("online", online, network=True),
    ]
"""

HOOK_RAISES = """
from hermes_core.plugin import hookimpl


@hookimpl
def hermes_doctor_checks():
    raise ValueError("the hook broke")
"""

HOOK_JUNK = """
from hermes_core.plugin import hookimpl


@hookimpl
def hermes_doctor_checks():
    return "not a list"
"""

HOOK_TWICE = """
from hermes_core.plugin import DoctorCheckSpec, DoctorResult, hookimpl


@hookimpl
def hermes_doctor_checks():
    return [DoctorCheckSpec("a", lambda: DoctorResult("ok", "one"))] * 2
"""

HOOK_HANGS = """
import time

from hermes_core.plugin import hookimpl


@hookimpl
def hermes_doctor_checks():
    time.sleep(3600)
"""

NOT_ENABLED = """
from pathlib import Path

from hermes_core.plugin import DoctorCheckSpec, DoctorResult, hookimpl


@hookimpl
def hermes_doctor_checks():
    Path({ran!r}, "hook").write_text("ran")
    return [DoctorCheckSpec("x", lambda: DoctorResult("ok", "ran"))]
"""


@pytest.fixture
def cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


def write_config(cli: HermesCli, data: dict[str, Any]) -> None:
    cli.config.write_text(json.dumps(data), encoding="utf-8")


def checks(cli: HermesCli, *args: str, env: dict[str, str]) -> dict[tuple[str, str], Any]:
    done = cli.run("doctor", "--json", *args, ok=False, env=env)
    report = json.loads(done.stdout)
    return {(check["group"], check["name"]): check for check in report["checks"]}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_a_plugins_checks_are_lines_under_its_name_and_its_failures_errors_naming_it(
    cli: InProcessCli, hermes_dir_plugin: Callable[..., Path], tmp_path: Path
) -> None:
    ran = tmp_path / "ran"
    ran.mkdir()
    plugins = cli.home / "plugins"
    hermes_dir_plugin(plugins, "thing", CHECKS.format(ran=str(ran)))
    hermes_dir_plugin(plugins, "hook-raises", HOOK_RAISES)
    hermes_dir_plugin(plugins, "hook-junk", HOOK_JUNK)
    hermes_dir_plugin(plugins, "hook-hangs", HOOK_HANGS)
    hermes_dir_plugin(plugins, "hook-twice", HOOK_TWICE)
    hermes_dir_plugin(plugins, "idle", NOT_ENABLED.format(ran=str(ran)))
    enabled = ["thing", "hook-raises", "hook-junk", "hook-hangs", "hook-twice"]
    write_config(cli, {"plugins": {"enabled": enabled, "hook_timeout": 1}})
    env = cli.variables(HERMES_STRICT_PLUGINS="0")

    found = checks(cli, env=env)
    table = cli.run("doctor", ok=False, env=env)

    assert table.returncode == 1
    assert found[("thing", "fine")]["status"] == "ok"
    assert found[("thing", "fine")]["message"] == "the service answers"
    assert found[("thing", "stale")]["status"] == "warning"
    assert found[("thing", "stale")]["message"] == "the cache is old\x1b[31m"
    assert found[("thing", "stale")]["hint"] == "thing refresh"
    assert found[("thing", "broken")]["status"] == "error"
    raised = found[("thing", "raises")]
    assert raised["status"] == "error"
    assert "plugin 'thing'" in raised["message"]
    assert "RuntimeError: the check broke" in raised["message"]
    hung = found[("thing", "hangs")]
    assert hung["status"] == "error"
    assert "no answer within 1 s (plugins.hook_timeout)" in hung["message"]
    assert "DoctorResult" in found[("thing", "junk")]["message"]
    assert found[("thing", "junk")]["status"] == "error"
    assert found[("thing", "exits")]["status"] == "error"
    assert "raised SystemExit: 3" in found[("thing", "exits")]["message"]
    assert found[("thing", "online")]["status"] == "ok"
    for plugin, said in (
        ("hook-raises", "ValueError: the hook broke"),
        ("hook-junk", "must return a list of DoctorCheckSpec, got str"),
        ("hook-hangs", "no answer within 1 s"),
        ("hook-twice", "returned the check name 'a' twice"),
    ):
        (line,) = [check for (group, _), check in found.items() if group == plugin]
        assert line["status"] == "error", line
        assert f"plugin {plugin!r}" in line["message"]
        assert said in line["message"]
        assert "\n" not in line["message"]
    assert not [group for group, _ in found if group == "idle"]
    assert sorted(path.name for path in ran.iterdir()) == ["online"]
    assert "\x1b" not in table.stdout
    assert "the cache is old\\x1b[31m (see: thing refresh)" in table.stdout
    assert "Traceback" not in table.stderr


def test_offline_a_check_that_sends_requests_is_not_run(
    cli: InProcessCli, hermes_dir_plugin: Callable[..., Path], tmp_path: Path
) -> None:
    ran = tmp_path / "ran"
    ran.mkdir()
    hermes_dir_plugin(cli.home / "plugins", "thing", CHECKS.format(ran=str(ran)))
    write_config(cli, {"plugins": {"enabled": ["thing"], "hook_timeout": 1}})

    found = checks(cli, "--offline", env=cli.variables(HERMES_STRICT_PLUGINS="0"))

    assert found[("thing", "online")]["status"] == "not checked"
    assert "--offline" in found[("thing", "online")]["message"]
    assert found[("thing", "fine")]["status"] == "ok"
    assert list(ran.iterdir()) == []


def test_the_browser_names_a_chromium_that_is_not_there_and_playwright(
    cli: InProcessCli, tmp_path: Path
) -> None:
    write_config(cli, {"plugins": {"enabled": ["browser"]}})
    variables = cli.variables(HERMES_BROWSER_EXECUTABLE=str(tmp_path / "no" / "chromium"))

    found = checks(cli, "--offline", env=variables)

    chromium = found[("browser", "chromium")]
    assert chromium["status"] == "error"
    assert (
        f"HERMES_BROWSER_EXECUTABLE names {str(tmp_path / 'no' / 'chromium')!r}"
        in (chromium["message"])
    )
    playwright = found[("browser", "playwright")]
    assert playwright["status"] in ("ok", "error")
    if playwright["status"] == "error":  # not installed here: the install command of the docs
        assert "pip install 'hermes-core-agent[browser]'" in playwright["message"]


def test_the_browser_names_the_chromium_it_found(cli: InProcessCli, tmp_path: Path) -> None:
    chromium = tmp_path / "bin" / "chromium"
    chromium.parent.mkdir()
    chromium.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    chromium.chmod(0o755)
    write_config(cli, {"plugins": {"enabled": ["browser"]}})
    variables = cli.variables(PATH=f"{chromium.parent}:/usr/bin:/bin")

    found = checks(cli, "--offline", env=variables)

    assert found[("browser", "chromium")]["status"] == "ok"
    assert str(chromium) in found[("browser", "chromium")]["message"]


def test_web_says_whether_web_extract_can_extract_and_the_extra_that_brings_it(
    cli: InProcessCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    installed = checks(cli, "--offline", env=cli.variables())
    monkeypatch.setitem(sys.modules, "trafilatura", None)  # as if the extra were not installed
    missing = checks(cli, "--offline", env=cli.variables())

    assert installed[("web", "extraction")]["status"] == "ok"
    assert missing[("web", "extraction")]["status"] == "not checked"
    assert missing[("web", "extraction")]["message"] == (
        "web_extract cannot read pages: trafilatura is not installed: "
        "pip install 'hermes-core-agent[web]' (docs/web.md); web_search does not need it"
    )


def test_media_names_a_command_that_is_not_installed_with_its_setting(
    cli: InProcessCli,
) -> None:
    media = {
        "tts_command": "no-such-speaker-xyz {text} {output}",
        "stt_command": f"{sys.executable} {{input}}",
    }
    write_config(cli, {"plugins": {"enabled": ["media"], "entries": {"media": media}}})

    found = checks(cli, "--offline", env=cli.variables())

    tts = found[("media", "tts_command")]
    assert tts["status"] == "error"
    assert "'no-such-speaker-xyz'" in tts["message"]
    assert "plugins.entries.media.tts_command" in tts["message"]
    assert "not found on PATH" in tts["message"]
    assert found[("media", "stt_command")]["status"] == "ok"
    assert sys.executable in found[("media", "stt_command")]["message"]


def web_search_with(provider: str, entries: dict[str, Any] | None = None) -> dict[str, Any]:
    entries = {"web": {"search_provider": provider}, **(entries or {})}
    return {"plugins": {"enabled": ["web", provider], "entries": entries}}


def test_brave_says_whether_its_key_is_set_never_showing_it(cli: InProcessCli) -> None:
    write_config(cli, {"plugins": {"enabled": ["web", "brave"]}})
    unused = checks(cli, "--offline", env=cli.variables())
    write_config(cli, web_search_with("brave"))

    missing = checks(cli, "--offline", env=cli.variables())
    present = checks(cli, "--offline", env=cli.variables(BRAVE_API_KEY="bsk-secret-0123"))

    assert not [group for group, _ in unused if group == "brave"]  # not web_search's provider

    assert missing[("brave", "key")]["status"] == "error"
    assert "BRAVE_API_KEY" in missing[("brave", "key")]["message"]
    assert present[("brave", "key")]["status"] == "ok"
    assert "bsk-secret-0123" not in json.dumps(list(present.values()))


class _Searxng(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps({"results": [{"url": "https://a.example", "title": "A"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def searxng() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Searxng)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_searxng_asks_its_instance_unless_offline(cli: InProcessCli, searxng: str) -> None:
    def configured(url: str | None) -> None:
        write_config(cli, web_search_with("searxng", {"searxng": {"url": url}} if url else {}))

    configured(searxng)
    answered = checks(cli, env=cli.variables())
    offline = checks(cli, "--offline", env=cli.variables())
    closed = f"http://127.0.0.1:{free_port()}"
    configured(closed)
    refused = checks(cli, env=cli.variables())
    configured(None)
    unset = checks(cli, env=cli.variables())

    assert answered[("searxng", "url")]["status"] == "ok"
    assert answered[("searxng", "instance")]["status"] == "ok"
    assert searxng in answered[("searxng", "instance")]["message"]
    assert offline[("searxng", "instance")]["status"] == "not checked"
    assert refused[("searxng", "instance")]["status"] == "error"
    assert closed in refused[("searxng", "instance")]["message"]
    assert unset[("searxng", "url")]["status"] == "error"
    assert "plugins.entries.searxng.url" in unset[("searxng", "url")]["message"]
    assert unset[("searxng", "instance")]["status"] == "not checked"


def test_the_file_memory_says_what_it_holds_and_a_file_it_cannot_read(
    cli: InProcessCli,
) -> None:
    memories = cli.home / "memories"
    memories.mkdir()
    (memories / "USER.md").write_text("Prefers tabs\n§\nLives in Lyon\n", encoding="utf-8")
    readable = checks(cli, "--offline", env=cli.variables())
    (memories / "MEMORY.md").write_bytes(b"the build \xff uses make\n")

    unreadable = checks(cli, "--offline", env=cli.variables())
    write_config(cli, {"memory": {"enabled": False}})
    off = checks(cli, "--offline", env=cli.variables())

    assert readable[("memory", "files")]["status"] == "ok"
    assert "USER.md: 2 entries" in readable[("memory", "files")]["message"]
    assert unreadable[("memory", "files")]["status"] == "error"
    assert (
        "MEMORY.md is not UTF-8 text (byte 0xff at offset 10)"
        in (unreadable[("memory", "files")]["message"])
    )
    assert unreadable[("memory", "files")]["hint"] == "hermes memory list"
    assert not [group for group, _ in off if group == "memory"]


PRINTS = """
from hermes_core.plugin import DoctorCheckSpec, DoctorResult, hookimpl

print("noisy: imported")


def run():
    print("noisy: checking")
    return DoctorResult("ok", "quiet enough")


@hookimpl
def hermes_doctor_checks():
    print("noisy: asked for checks")
    return [DoctorCheckSpec("noise", run)]
"""


def test_what_a_plugin_prints_goes_to_stderr_and_leaves_the_json_whole(
    cli: InProcessCli, hermes_dir_plugin: Callable[..., Path]
) -> None:
    hermes_dir_plugin(cli.home / "plugins", "noisy", PRINTS)
    write_config(cli, {"plugins": {"enabled": ["noisy"]}})

    done = cli.run("doctor", "--json", "--offline", ok=False)

    report = json.loads(done.stdout)
    (noise,) = [c for c in report["checks"] if (c["group"], c["name"]) == ("noisy", "noise")]
    assert noise["message"] == "quiet enough"
    for said in ("noisy: imported", "noisy: asked for checks", "noisy: checking"):
        assert said in done.stderr


def test_the_image_key_is_a_warning_only_when_image_gen_is_enabled_by_name(
    cli: InProcessCli,
) -> None:
    key = "sk-image-key-0123456789"
    by_default = checks(cli, "--offline", env=cli.variables())
    with_a_key = checks(cli, "--offline", env=cli.variables(OPENAI_API_KEY=key))
    write_config(cli, {"tools": {"enabled_toolsets": ["file", "image_gen"]}})
    named = checks(cli, "--offline", env=cli.variables())
    write_config(cli, {"tools": {"disabled_toolsets": ["image_gen"]}})
    off = checks(cli, "--offline", env=cli.variables())
    local = {"image_base_url": "http://127.0.0.1:8080/v1"}
    write_config(cli, {"plugins": {"entries": {"media": local}}})
    served_here = checks(cli, "--offline", env=cli.variables())

    unset = by_default[("media", "image_key")]
    assert unset["status"] == "not checked"
    assert "OPENAI_API_KEY" in unset["message"]
    assert "plugins.entries.media.image_api_key_env" in unset["message"]
    assert "image_generate" in unset["message"]
    assert with_a_key[("media", "image_key")]["status"] == "ok"
    assert "OPENAI_API_KEY" in with_a_key[("media", "image_key")]["message"]
    assert key not in json.dumps(list(with_a_key.values()))
    assert named[("media", "image_key")]["status"] == "warning"
    assert "OPENAI_API_KEY is not set" in named[("media", "image_key")]["message"]
    assert ("media", "image_key") not in off
    assert served_here[("media", "image_key")]["status"] == "ok"
    assert "http://127.0.0.1:8080/v1" in served_here[("media", "image_key")]["message"]


OVERRIDE = """
from hermes_core.plugin import DoctorCheckSpec, DoctorResult, hookimpl


@hookimpl
def hermes_doctor_checks():
    return [DoctorCheckSpec("mine", lambda: DoctorResult("ok", "the user's own"))]
"""


def test_a_user_plugin_named_like_a_bundled_one_or_a_doctor_group_is_shown_as_the_users(
    cli: InProcessCli, hermes_dir_plugin: Callable[..., Path]
) -> None:
    """A user's ``memory`` beats the bundled one, and a user's ``hooks`` shares its name with
    doctor's own group: their lines name the source and the folder, so neither reads as
    hermes's own."""
    plugins = cli.home / "plugins"
    memory = hermes_dir_plugin(plugins, "memory", OVERRIDE)
    hooks = hermes_dir_plugin(plugins, "hooks", OVERRIDE)
    thing = hermes_dir_plugin(plugins, "thing", OVERRIDE)
    write_config(cli, {"plugins": {"enabled": ["memory", "hooks", "thing"]}})
    env = cli.variables(HERMES_STRICT_PLUGINS="0")

    found = checks(cli, "--offline", env=env)
    table = cli.run("doctor", "--offline", ok=False, env=env).stdout

    assert found[(f"memory (user plugin {memory})", "mine")]["message"] == "the user's own"
    assert found[(f"hooks (user plugin {hooks})", "mine")]["message"] == "the user's own"
    # A plugin whose name nothing else has keeps its name alone.
    assert found[("thing", "mine")]["message"] == "the user's own"
    assert str(thing) not in table
    assert f"memory (user plugin {memory})" in table


def test_web_says_a_trafilatura_that_does_not_import(
    cli: InProcessCli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Installed but broken (lxml 5.2 moved lxml.html.clean out, and trafilatura imports it):
    # the doctor found the package and said ok, while every web_extract call failed.
    broken = tmp_path / "site" / "trafilatura"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text(
        "raise ImportError('lxml.html.clean module is now a separate project lxml_html_clean')\n",
        encoding="utf-8",
    )
    for name in [name for name in sys.modules if name.split(".")[0] == "trafilatura"]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(broken.parent))

    found = checks(cli, "--offline", env=cli.variables())

    assert found[("web", "extraction")]["status"] == "warning"
    assert found[("web", "extraction")]["message"] == (
        "web_extract cannot read pages: trafilatura does not import (lxml.html.clean module is "
        "now a separate project lxml_html_clean): pip install 'hermes-core-agent[web]' "
        "(docs/web.md) in the Python that runs hermes; web_search does not need it"
    )
