"""``hermes eval search`` as a user runs it (the real command, a subprocess): the search backend
is built once per set, and on a terminal the run shows how many queries are done."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from terminal_runs import run_on_terminal

from hermes_core.testing import HermesCli

pytestmark = pytest.mark.subprocess

COUNTED_BACKEND = """
from pathlib import Path

from hermes_core.plugin import SearchBackendSpec, hookimpl

BUILDS = Path({builds!r})


def make(context):
    with BUILDS.open("a", encoding="utf-8") as file:
        file.write("built\\n")
    return context.search_backend("bm25")


@hookimpl
def hermes_search_backends():
    return [SearchBackendSpec("counted", factory=make)]
"""


def _eval_files(folder: Path) -> tuple[Path, Path]:
    catalog = folder / "catalog.json"
    catalog.write_text(
        json.dumps(
            [
                {"name": "get_current_time", "description": "Current time in a time zone."},
                {"name": "convert_time", "description": "Convert a time between zones."},
                {"name": "send_email", "description": "Send an email message."},
            ]
        ),
        encoding="utf-8",
    )
    lines = [
        {"query": "current time", "relevant": ["get_current_time"]},
        {"query": "convert time zone", "relevant": ["convert_time"]},
        {"query": "email someone", "relevant": ["send_email"]},
    ]
    queries = folder / "queries.jsonl"
    queries.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return catalog, queries


def test_eval_search_builds_the_search_backend_once(
    hermes_cli: HermesCli, hermes_dir_plugin: Callable[..., Path], tmp_path: Path
) -> None:
    builds = tmp_path / "builds.txt"
    hermes_dir_plugin(
        hermes_cli.home / "plugins", "counted", COUNTED_BACKEND.format(builds=str(builds))
    )
    hermes_cli.config.write_text(
        "plugins:\n  enabled: [counted]\ntools:\n  tool_search:\n    backend: counted\n",
        encoding="utf-8",
    )
    catalog, queries = _eval_files(tmp_path)

    done = hermes_cli.run(
        "eval", "search", "--catalog", str(catalog), "--queries", str(queries), "--json"
    )

    assert json.loads(done.stdout)["hit@1"] == 100.0
    assert builds.read_text(encoding="utf-8").splitlines() == ["built"]


def test_eval_search_shows_the_queries_done_on_a_terminal_and_never_with_json(
    hermes_cli: HermesCli, tmp_path: Path
) -> None:
    catalog, queries = _eval_files(tmp_path)
    args = ("eval", "search", "--catalog", str(catalog), "--queries", str(queries))

    drawn, printed = run_on_terminal(hermes_cli, *args, stdout_too=False)
    assert "3/3 queries" in drawn, drawn
    assert drawn.endswith("\r\x1b[K"), repr(drawn)  # taken off before the figures
    assert "hit@1:" in printed

    drawn, printed = run_on_terminal(hermes_cli, *args, "--json", stdout_too=False)
    assert drawn == ""
    assert json.loads(printed)["queries"] == 3


def test_eval_search_never_lets_a_config_inside_the_project_enable_project_plugins(
    hermes_cli: HermesCli, hermes_dir_plugin: Callable[..., Path], tmp_path: Path
) -> None:
    # HERMES_HOME=./.hermes makes the project's config.yaml the config; every command refuses
    # its plugins.enabled for project plugins, but eval built its host without the config's
    # path, as if the config were the user's own, and the project's code ran.
    inside = hermes_cli.work / ".hermes"
    ran = tmp_path / "ran.txt"
    hermes_dir_plugin(
        inside / "plugins",
        "local-tool",
        f"from pathlib import Path\nPath({str(ran)!r}).write_text('ran')\n",
    )
    (inside / "config.yaml").write_text("plugins:\n  enabled: [local-tool]\n", encoding="utf-8")
    catalog, queries = _eval_files(tmp_path)
    variables = hermes_cli.variables(HERMES_HOME=str(inside), HERMES_ENABLE_PROJECT_PLUGINS="1")

    hermes_cli.run(
        "eval", "search", "--catalog", str(catalog), "--queries", str(queries), env=variables
    )

    assert not ran.exists()
