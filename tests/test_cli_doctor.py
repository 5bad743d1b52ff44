"""``hermes doctor``: one command that says what is wrong with a setup and what to do, each
check one line. The real command in this process, a real config.yaml in a temporary
HERMES_HOME, real plugin and skill folders, real MCP servers as child processes, a real model
API on 127.0.0.1 (:class:`FakeModelServer`) and a port where nothing listens."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from hermes_core.testing import FakeModelServer, HermesCli
from hermes_core.testing._cli_in_process import InProcessCli

pytestmark = pytest.mark.subprocess

REPO_ROOT = Path(__file__).resolve().parents[1]
TOOLBOX = REPO_ROOT / "tests" / "mcp" / "servers" / "toolbox.py"
KEY = "sk-doctor-test-key-0123456789"

BROKEN_PLUGIN = """
raise RuntimeError("the plugin's module is broken")
"""


@pytest.fixture
def cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


def write_config(cli: HermesCli, data: dict[str, Any]) -> None:
    cli.config.write_text(json.dumps(data), encoding="utf-8")


def model_section(server: FakeModelServer, model: str = "fake-model") -> dict[str, Any]:
    return {"provider": "openai", "model": model, "base_url": server.openai_base_url}


def with_key(cli: HermesCli, key: str = KEY) -> dict[str, str]:
    return cli.variables(OPENAI_API_KEY=key, HERMES_STRICT_PLUGINS="0")


def checks(cli: HermesCli, *args: str, env: dict[str, str]) -> dict[tuple[str, str], Any]:
    done = cli.run("doctor", "--json", *args, ok=False, env=env)
    report = json.loads(done.stdout)
    return {(check["group"], check["name"]): check for check in report["checks"]}


def snapshot(*roots: Path) -> dict[str, tuple[int, bytes]]:
    """Every file under ``roots`` with its mode and content (a folder: its mode)."""
    seen: dict[str, tuple[int, bytes]] = {}
    for root in roots:
        if not root.exists():
            continue
        for path in sorted(root.rglob("*")):
            info = path.lstat()
            data = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
            seen[str(path)] = (info.st_mode, data)
    return seen


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_fake_model_server_lists_its_models_as_both_apis_do() -> None:
    import httpx

    with FakeModelServer(models=["fake-model", "fake-small"]) as server:
        openai = httpx.get(
            f"{server.openai_base_url}/models", headers={"authorization": "Bearer k"}
        )
        anthropic = httpx.get(
            f"{server.anthropic_base_url}/v1/models",
            headers={"x-api-key": "k", "anthropic-version": "2023-06-01"},
        )
        recorded = server.requests

    assert openai.status_code == 200
    assert [model["id"] for model in openai.json()["data"]] == ["fake-model", "fake-small"]
    assert openai.json()["object"] == "list"
    assert anthropic.status_code == 200
    assert [model["id"] for model in anthropic.json()["data"]] == ["fake-model", "fake-small"]
    assert anthropic.json()["has_more"] is False
    assert [(r.path, r.api_key) for r in recorded] == [("/v1/models", "k")] * 2


def test_fake_model_server_with_a_key_refuses_another_with_401() -> None:
    import httpx

    with FakeModelServer(api_key="sk-right") as server:
        wrong = httpx.get(f"{server.openai_base_url}/models", headers={"authorization": "Bearer x"})
        right = httpx.get(
            f"{server.openai_base_url}/models", headers={"authorization": "Bearer sk-right"}
        )

    assert wrong.status_code == 401
    assert wrong.json()["error"]["type"] == "invalid_api_key"
    assert right.status_code == 200


def test_a_healthy_setup_is_ok_in_every_group_and_exits_0(cli: InProcessCli) -> None:
    skill = cli.home / "skills" / "release"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\ndescription: Cut a release.\n---\nSteps\n", "utf-8")
    with FakeModelServer(api_key=KEY) as server:
        write_config(
            cli,
            {
                "model": model_section(server),
                "mcp_servers": {"box": {"command": sys.executable, "args": [str(TOOLBOX)]}},
                "hooks": {"pre_tool_call": [{"command": "true"}]},
            },
        )
        cli.run("config", "validate", env=with_key(cli))  # what it may write, written before
        before = snapshot(cli.home, cli.cache_dir)
        done = cli.run("doctor", env=with_key(cli))
        report = json.loads(cli.run("doctor", "--json", env=with_key(cli)).stdout)
        after = snapshot(cli.home, cli.cache_dir)
        recorded = server.requests

    assert done.returncode == 0
    assert KEY not in done.stdout + done.stderr
    lines = done.stdout.splitlines()
    for group in ("configuration", "plugins", "model", "mcp", "hooks", "skills", "home"):
        assert any(line.startswith(f"{group} ") for line in lines), (group, lines)
    assert not [line for line in lines if " error " in line or " warning " in line]
    model = {c["name"]: c for c in report["checks"] if c["group"] == "model"}
    assert model["server"]["status"] == "ok"
    assert server.openai_base_url in model["server"]["message"]
    assert model["listed"]["status"] == "ok"
    (box,) = [c for c in report["checks"] if c["group"] == "mcp"]
    assert (box["name"], box["status"]) == ("box", "ok")
    assert "7 tools" in box["message"]
    assert set(report["checks"][0]) == {"group", "name", "status", "message", "hint"}
    assert report["ok"] is True
    # No token spent, no tool called, no hook run, nothing written.
    assert {(r.path, r.api_key) for r in recorded} == {("/v1/models", KEY)}
    assert after == before


def test_each_problem_is_an_error_naming_what_and_the_fix_and_exits_1(
    cli: InProcessCli, hermes_dir_plugin: Callable[..., Path]
) -> None:
    hermes_dir_plugin(cli.home / "plugins", "broken", BROKEN_PLUGIN)
    skill = cli.home / "skills" / "triage"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: triage\n---\nSteps\n", "utf-8")
    with FakeModelServer(api_key="sk-the-right-one") as server:
        write_config(
            cli,
            {
                "plugins": {"enabled": ["broken"]},
                "model": model_section(server),
                "mcp_servers": {
                    "dead": {"command": sys.executable, "args": ["-c", "import sys; sys.exit(3)"]}
                },
                "hooks": {"pre_tool_call": [{"command": "no-such-hook-command-xyz"}]},
            },
        )
        done = cli.run("doctor", ok=False, env=with_key(cli))
        found = checks(cli, env=with_key(cli))

    assert done.returncode == 1
    assert KEY not in done.stdout + done.stderr
    broken = found[("plugins", "broken")]
    assert broken["status"] == "error"
    assert "the plugin's module is broken" in broken["message"]
    model = found[("model", "server")]
    assert model["status"] == "error"
    assert "HTTP 401" in model["message"]
    assert "OPENAI_API_KEY" in model["message"]
    assert server.openai_base_url in model["message"]
    dead = found[("mcp", "dead")]
    assert dead["status"] == "error"
    assert "did not answer" in dead["message"]
    hook = found[("hooks", "hooks.pre_tool_call[0]")]
    assert hook["status"] == "error"
    assert "no-such-hook-command-xyz" in hook["message"]
    triage = found[("skills", "triage")]
    assert triage["status"] == "error"
    assert "description" in triage["message"]
    error_lines = [line for line in done.stdout.splitlines() if " error " in line]
    assert len(error_lines) == 5, done.stdout


def test_a_model_server_where_nothing_listens_says_to_start_it(cli: InProcessCli) -> None:
    base_url = f"http://127.0.0.1:{free_port()}/v1"
    write_config(cli, {"model": {"provider": "openai", "model": "m", "base_url": base_url}})

    found = checks(cli, env=with_key(cli))

    server = found[("model", "server")]
    assert server["status"] == "error"
    assert base_url in server["message"]
    assert "could not connect to the server" in server["message"]
    assert "check that the model server runs there" in server["message"]


def test_a_model_the_server_does_not_list_is_a_warning_only(cli: InProcessCli) -> None:
    with FakeModelServer(models=["other-model"]) as server:
        write_config(cli, {"model": model_section(server, "my-alias")})
        done = cli.run("doctor", env=with_key(cli))
        found = checks(cli, env=with_key(cli))

    assert done.returncode == 0
    listed = found[("model", "listed")]
    assert listed["status"] == "warning"
    assert "my-alias" in listed["message"]
    assert "other-model" in listed["message"]


def test_no_model_and_no_key_are_errors_naming_the_setting(cli: InProcessCli) -> None:
    write_config(cli, {"model": {"provider": "openai"}})
    found = checks(cli, env=cli.variables(HERMES_STRICT_PLUGINS="0"))
    assert found[("model", "model")]["status"] == "error"
    assert "model.model" in found[("model", "model")]["message"]

    write_config(cli, {"model": {"provider": "openai", "model": "gpt-4.1-mini"}})
    found = checks(cli, env=cli.variables(HERMES_STRICT_PLUGINS="0"))
    key = found[("model", "key")]
    assert key["status"] == "error"
    assert "OPENAI_API_KEY is not set" in key["message"]


def test_a_missing_key_points_to_no_command_that_answers_ok_about_it(cli: InProcessCli) -> None:
    write_config(cli, {"model": {"provider": "openai", "model": "gpt-4.1-mini"}})
    env = cli.variables(HERMES_STRICT_PLUGINS="0")
    key = checks(cli, env=env)[("model", "key")]
    validated = cli.run("config", "validate", env=env)
    assert validated.stdout.startswith("ok: ")
    assert key["status"] == "error"
    assert "set model.base_url" in key["message"]
    assert key["hint"] != "hermes config validate"


def test_offline_sends_no_request_and_starts_no_server(cli: InProcessCli, tmp_path: Path) -> None:
    marker = tmp_path / "server-started"
    with FakeModelServer() as server:
        write_config(
            cli,
            {
                "model": model_section(server),
                "mcp_servers": {
                    "box": {
                        "command": sys.executable,
                        "args": ["-c", f"open({str(marker)!r}, 'w')"],
                    }
                },
            },
        )
        done = cli.run("doctor", "--offline", env=with_key(cli))
        found = checks(cli, "--offline", env=with_key(cli))
        recorded = server.requests

    assert done.returncode == 0
    assert recorded == []
    assert not marker.exists()
    assert found[("model", "server")]["status"] == "not checked"
    assert found[("mcp", "box")]["status"] == "not checked"


def test_a_held_back_project_config_is_said_and_its_servers_not_started(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    cli = InProcessCli(tmp_path, home=repo / ".hermes", work=repo, user_home=tmp_path / "user")
    marker = tmp_path / "server-started"
    server = {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w')"]}
    write_config(cli, {"mcp_servers": {"box": server}})

    found = checks(cli, env=cli.variables(HERMES_STRICT_PLUGINS="0"))

    assert not marker.exists()
    project = found[("project", "config")]
    assert project["status"] == "warning"
    assert "HERMES_ENABLE_PROJECT_PLUGINS=1" in project["message"]
    box = found[("mcp", "box")]
    assert box["status"] == "warning"
    assert "will not be started" in box["message"]


@pytest.mark.parametrize("offline", [False, True], ids=["online", "offline"])
def test_a_server_the_project_gate_refuses_is_said_as_a_refusal_and_the_project_line_agrees(
    cli: InProcessCli, offline: bool
) -> None:
    """A ``uv run`` server started in a project holding a ``.venv`` is refused by the project
    gate (docs/security.md): doctor said it "did not answer the probe: not started: ..." (an
    error, as if it had been asked) and, in the same run, "nothing of a project's is held
    back". The server's line is the gate's refusal, a warning, online or not, and the
    project's line names the server it refuses."""
    (cli.work / ".venv").mkdir()
    write_config(cli, {"mcp_servers": {"srv": {"command": "uv", "args": ["run", "server.py"]}}})

    found = checks(cli, *(["--offline"] if offline else []), env=with_key(cli))

    server = found[("mcp", "srv")]
    assert server["status"] == "warning"
    assert server["message"].startswith("refused by the project gate (not started): `uv run`")
    assert "did not answer the probe" not in server["message"]
    assert "HERMES_ENABLE_PROJECT_PLUGINS=1" in server["message"]
    project = found[("project", "config")]
    assert "nothing of a project's is held back" not in project["message"]
    assert "MCP server 'srv'" in project["message"]


def test_a_configuration_error_is_named_and_the_checks_that_need_it_are_not_run(
    cli: InProcessCli,
) -> None:
    cli.config.write_text("model:\n  provider: openai\n  tempreature: 3\n", encoding="utf-8")

    done = cli.run("doctor", ok=False, env=cli.variables())
    found = checks(cli, env=cli.variables())

    assert done.returncode == 1
    config = found[("configuration", "file")]
    assert config["status"] == "error"
    assert f"{cli.config}:3" in config["message"]
    assert found[("model", "model")]["status"] == "not checked"


def test_a_configuration_with_two_errors_is_two_lines_each_with_its_line(
    cli: InProcessCli,
) -> None:
    cli.config.write_text(
        "model:\n  provider: openai\n  tempreature: 3\n  max_turns: many\n", encoding="utf-8"
    )

    done = cli.run("doctor", ok=False, env=cli.variables())
    report = json.loads(cli.run("doctor", "--json", ok=False, env=cli.variables()).stdout)

    said = [c["message"] for c in report["checks"] if c["group"] == "configuration"]
    assert len(said) == 2
    assert said[0].startswith(f"{cli.config}:3: ")
    assert said[1].startswith(f"{cli.config}:4: ")
    assert "\\n" not in done.stdout
    shown = next(line for line in done.stdout.splitlines() if "tempreature" in line)
    assert shown.startswith("configuration")


def test_each_of_doctors_own_groups_has_a_line_even_when_the_configuration_is_unreadable(
    cli: InProcessCli,
) -> None:
    # OWN_GROUPS is the one list of doctor's own groups (docs/cli.md names each, a plugin named
    # like one is shown with its source): it must be what doctor really reports.
    from hermes_core._cli.doctor_checks import OWN_GROUPS

    cli.config.write_text("model: [\n", encoding="utf-8")

    found = checks(cli, env=cli.variables())

    assert sorted({group for group, _ in found}) == sorted(OWN_GROUPS)


def test_a_home_others_could_write_is_an_error_with_the_chmod(cli: InProcessCli) -> None:
    mode = cli.home.stat().st_mode
    os.chmod(cli.home, mode | 0o002)
    try:
        found = checks(cli, "--offline", env=cli.variables())
    finally:
        os.chmod(cli.home, mode)

    home = found[("home", "permissions")]
    assert home["status"] == "error"
    assert f"chmod o-w {cli.home}" in home["message"]


def test_the_anthropic_provider_is_asked_for_its_models_too(cli: InProcessCli) -> None:
    with FakeModelServer(models=["claude-fake"], api_key=KEY) as server:
        section = {"provider": "anthropic", "model": "claude-fake"}
        write_config(cli, {"model": {**section, "base_url": server.anthropic_base_url}})
        found = checks(cli, env=cli.variables(ANTHROPIC_API_KEY=KEY))
        recorded = server.requests

    assert found[("model", "server")]["status"] == "ok"
    assert found[("model", "listed")]["status"] == "ok"
    assert [(r.wire, r.path, r.api_key) for r in recorded] == [("anthropic", "/v1/models", KEY)]


def test_a_base_url_without_the_api_path_is_a_404_naming_the_url_meant(
    cli: InProcessCli,
) -> None:
    with FakeModelServer() as server:
        section = {"provider": "openai", "model": "fake-model", "base_url": server.url}
        write_config(cli, {"model": section})
        found = checks(cli, env=with_key(cli))

    message = found[("model", "server")]["message"]
    assert found[("model", "server")]["status"] == "error"
    assert "HTTP 404" in message
    assert f"{server.url}/v1" in message


def test_doctor_runs_no_hook_and_no_plugin_the_configuration_does_not_enable(
    cli: InProcessCli, hermes_dir_plugin: Callable[..., Path], tmp_path: Path
) -> None:
    ran = tmp_path / "ran"
    ran.mkdir()
    sneaky = f"open({str(ran / 'plugin')!r}, 'w')\n"
    hermes_dir_plugin(cli.home / "plugins", "sneaky", sneaky)
    hook = {"command": f"touch {ran / 'hook'}"}
    write_config(cli, {"hooks": {"pre_tool_call": [hook], "session_start": [hook]}})

    done = cli.run("doctor", "--offline", ok=False, env=cli.variables())

    assert list(ran.iterdir()) == []
    assert "Traceback" not in done.stderr


def test_text_from_outside_is_shown_escaped_on_the_table_and_exact_in_json(
    cli: InProcessCli,
) -> None:
    name = "evil\x1b]52;c;aGk=\x07"
    skill = cli.home / "skills" / name
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: x\n---\n", "utf-8")

    done = cli.run("doctor", "--offline", ok=False, env=cli.variables())
    found = checks(cli, "--offline", env=cli.variables())

    assert "\x1b" not in done.stdout
    assert "\\x1b]52" in done.stdout
    assert found[("skills", name)]["status"] == "error"


def test_a_name_no_plugin_registers_is_one_error_with_its_line(cli: InProcessCli) -> None:
    cli.config.write_text("tools:\n  tool_search:\n    backend: nosuch\n", encoding="utf-8")

    done = cli.run("doctor", "--offline", ok=False, env=cli.variables())

    said = [line for line in done.stdout.splitlines() if "unknown search backend" in line]
    assert len(said) == 1, done.stdout
    assert said[0].split()[:3] == ["configuration", "plugins", "error"]
    assert f"{cli.config}:3: " in said[0]


PROVIDERS = """
from hermes_core.plugin import ModelProviderSpec, hookimpl


class Plain:
    async def stream(self, request):
        yield None

    async def aclose(self):
        pass


class Raising(Plain):
    async def list_models(self):
        raise RuntimeError("the listing broke")


@hookimpl
def hermes_model_providers():
    return [
        ModelProviderSpec("plain", factory=lambda context: Plain()),
        ModelProviderSpec("raising", factory=lambda context: Raising()),
    ]
"""


@pytest.mark.parametrize(
    ("provider", "status", "said"),
    [
        ("plain", "not checked", "the plain provider offers no model listing"),
        ("raising", "error", "RuntimeError: the listing broke"),
    ],
)
def test_a_provider_without_a_listing_is_not_checked_and_one_that_raises_is_an_error(
    cli: InProcessCli,
    hermes_dir_plugin: Callable[..., Path],
    provider: str,
    status: str,
    said: str,
) -> None:
    hermes_dir_plugin(cli.home / "plugins", "providers", PROVIDERS)
    model = {"provider": provider, "model": "m"}
    write_config(cli, {"plugins": {"enabled": ["providers"]}, "model": model})

    done = cli.run("doctor", "--json", ok=False, env=cli.variables())
    found = {(c["group"], c["name"]): c for c in json.loads(done.stdout)["checks"]}

    assert "Traceback" not in done.stderr
    assert found[("model", "server")]["status"] == status
    assert said in found[("model", "server")]["message"]


NO_LISTINGS = {
    "a web page": ("text/html; charset=utf-8", b"<html><body><h1>Welcome!</h1></body></html>"),
    "not JSON": ("application/json", b"not json {"),
    "a JSON list": ("application/json", b'[{"id": "m"}]'),
    "entries without an id": ("application/json", b'{"object": "list", "data": [{"name": "m"}]}'),
    "names alone": ("application/json", b'{"object": "list", "data": ["m"]}'),
}


class NoListingServer(BaseHTTPRequestHandler):
    """Answers every GET with 200 and ``self.server.answer`` (content type, body): a web
    server, another service, or a model server of its own shape where the listing is."""

    def do_GET(self) -> None:
        content_type, body = self.server.answer  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("answer", sorted(NO_LISTINGS))
def test_a_200_that_is_no_model_listing_is_an_error_saying_to_check_base_url(
    cli: InProcessCli, provider: str, answer: str
) -> None:
    served = ThreadingHTTPServer(("127.0.0.1", 0), NoListingServer)
    served.answer = NO_LISTINGS[answer]  # type: ignore[attr-defined]
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{served.server_address[1]}"
        base_url = f"{url}/v1" if provider == "openai" else url
        write_config(cli, {"model": {"provider": provider, "model": "m", "base_url": base_url}})
        variables = cli.variables(OPENAI_API_KEY=KEY, ANTHROPIC_API_KEY=KEY)
        found = checks(cli, env=variables)
    finally:
        served.shutdown()
        served.server_close()

    server = found[("model", "server")]
    assert server["status"] == "error"
    assert server["message"].startswith(f"{provider}: model 'm' at {base_url}: ")
    assert "is no model listing" in server["message"]
    assert "check model.base_url" in server["message"]
    assert "list_models raised" not in server["message"]
    assert server["hint"] != "hermes plugins list"
    assert ("model", "listed") not in found


SDK_PROBE = (
    "import json, sys\n"
    "from hermes_core._cli import main\n"
    "try:\n    main(['doctor', '--offline', '--json'])\n"
    "except SystemExit:\n    pass\n"
    "print(json.dumps(sorted({'openai', 'anthropic', 'mcp'} & set(sys.modules))))\n"
)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_offline_imports_neither_the_model_sdk_nor_the_mcp_sdk_and_still_checks_the_key(
    cli: InProcessCli, provider: str
) -> None:
    variable = f"{provider.upper()}_API_KEY"
    write_config(cli, {"model": {"provider": provider, "model": "m"}})

    def probe(env: dict[str, str]) -> tuple[dict[tuple[str, str], Any], list[str]]:
        done = subprocess.run(
            [sys.executable, "-c", SDK_PROBE],
            cwd=cli.work,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        *report, loaded = done.stdout.splitlines()
        found = json.loads("\n".join(report))["checks"]
        return {(c["group"], c["name"]): c for c in found}, json.loads(loaded)

    with_a_key, loaded = probe(cli.variables(**{variable: KEY}))
    without, loaded_without = probe(cli.variables())

    assert loaded == loaded_without == []
    assert with_a_key[("model", "key")]["status"] == "ok"
    assert without[("model", "key")]["status"] == "error"
    assert f"{variable} is not set" in without[("model", "key")]["message"]
    assert KEY not in json.dumps(list(with_a_key.values()))


@pytest.mark.parametrize(
    ("section", "key"),
    [
        pytest.param(
            {"plugins": {"entries": {"code_execution": {"tools": "LIST"}}}},
            "plugins.entries.code_execution.tools",
            id="entry",
        ),
        pytest.param({"code_execution": {"tools": "LIST"}}, "code_execution.tools", id="moved"),
    ],
)
def test_code_execution_tools_naming_unknown_tools_is_a_warning_naming_them_and_where(
    cli: InProcessCli, section: dict[str, Any], key: str
) -> None:
    names = ["read_file", "no_such_tool", "terminl"]
    text = json.dumps(section).replace('"LIST"', json.dumps(names))
    cli.config.write_text(text, encoding="utf-8")

    found = checks(cli, "--offline", env=cli.variables(HERMES_STRICT_PLUGINS="0"))

    check = found[("plugins", "code_execution.tools")]
    assert check["status"] == "warning"
    assert "'no_such_tool'" in check["message"]
    assert "'terminl'" in check["message"]
    assert "'read_file'" not in check["message"]
    assert key in check["message"]
    assert str(cli.config) in check["message"]
    assert "terminal" in check["message"]  # did you mean


def test_code_execution_tools_naming_known_tools_says_nothing(cli: InProcessCli) -> None:
    write_config(cli, {"plugins": {"entries": {"code_execution": {"tools": ["read_file"]}}}})

    found = checks(cli, "--offline", env=cli.variables(HERMES_STRICT_PLUGINS="0"))

    assert ("plugins", "code_execution.tools") not in found


@pytest.mark.parametrize("offline", [[], ["--offline"]])
def test_a_provider_named_as_its_broken_plugin_is_a_model_error_not_a_traceback(
    cli: InProcessCli, hermes_dir_plugin: Callable[..., Path], offline: list[str]
) -> None:
    hermes_dir_plugin(cli.home / "plugins", "broken", BROKEN_PLUGIN)
    model = {"provider": "broken", "model": "m"}  # named as its plugin
    write_config(cli, {"plugins": {"enabled": ["broken"]}, "model": model})

    done = cli.run("doctor", "--json", *offline, ok=False, env=cli.variables())
    found = {(c["group"], c["name"]): c for c in json.loads(done.stdout)["checks"]}

    assert "Traceback" not in done.stderr
    assert done.returncode == 1
    provider = found[("model", "provider")]
    assert provider["status"] == "error"
    assert "broken" in provider["message"]
    assert provider["hint"] == "hermes plugins list"
