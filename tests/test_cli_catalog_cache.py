"""The real ``hermes`` command with a tool catalog: the second run answers from the catalog
cache exactly as the first, and a catalog changed since is read again."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from hermes_core.testing import HermesCli
from hermes_core.testing._cli_in_process import InProcessCli

pytestmark = pytest.mark.subprocess

SAAS_CATALOG = Path(__file__).resolve().parents[2] / "shared" / "data" / "saas_openapi_catalog"


@pytest.fixture
def hermes_cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    """``hermes`` run in this process (:class:`InProcessCli`); ``subprocess_run`` runs the
    real command."""
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


def test_a_second_hermes_answers_from_the_catalog_cache_and_a_changed_catalog_is_read_again(
    hermes_cli: HermesCli, tmp_path: Path
) -> None:
    source = SAAS_CATALOG / "catalog.json"
    assert source.is_file(), f"the SaaS catalog is read from {source} (../shared/data)"
    # copyfile, not copy: the shared data is read-only and the test rewrites its copy
    catalog = Path(shutil.copyfile(source, tmp_path / "catalog.json"))
    hermes_cli.config.write_text(f"tools:\n  catalogs:\n    - path: {catalog}\n")
    query = ("tools", "search", "github create issue", "list repositories", "--json")
    describe = ("tools", "describe", "github__issues_create", "--json")

    first, described = hermes_cli.json(*query), hermes_cli.json(*describe)
    assert first["results"][0]["matches"][0] == "github__issues_create"
    assert len(list((hermes_cli.cache_dir / "catalogs").glob("*.catalog"))) == 1
    assert hermes_cli.json(*query) == first
    assert hermes_cli.json(*describe) == described

    entries = json.loads(catalog.read_text(encoding="utf-8"))
    for entry in entries:
        if entry["name"] == "github__issues_create":
            entry["description"] = "Open a quokka report in a repository."
    catalog.write_text(json.dumps(entries), encoding="utf-8")
    changed = hermes_cli.json(*describe)
    assert changed["tools"]["github__issues_create"]["description"] == (
        "Open a quokka report in a repository."
    )
    found = hermes_cli.json("tools", "search", "quokka report", "--json")
    assert found["results"][0]["matches"][0] == "github__issues_create"


def test_eval_search_on_a_catalog_that_is_not_utf8_is_an_error_naming_the_file(
    hermes_cli: InProcessCli,
) -> None:
    catalog = hermes_cli.work / "catalog.json"
    catalog.write_bytes(b"\xff\xfe[")
    queries = hermes_cli.work / "queries.jsonl"
    queries.write_text('{"query": "create issue", "relevant": ["a"]}\n', encoding="utf-8")

    # The real command (the other tests run hermes in process): a clean exit status 2.
    done = hermes_cli.subprocess_run(
        "eval", "search", "--catalog", str(catalog), "--queries", str(queries), ok=False
    )

    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert f"{catalog}: not UTF-8 text: invalid start byte at byte 0" in done.stderr


def test_eval_search_measures_the_catalog_alone_not_the_users_mcp_servers(
    hermes_cli: HermesCli, tmp_path: Path
) -> None:
    catalog = tmp_path / "catalog.json"
    catalog.write_text(
        json.dumps(
            [
                {"name": "mcp__time__get_current_time", "description": "Current time in a zone."},
                {"name": "mcp__time__convert_time", "description": "Convert between zones."},
            ]
        ),
        encoding="utf-8",
    )
    queries = tmp_path / "queries.jsonl"
    queries.write_text(
        '{"query": "current time", "relevant": ["mcp__time__get_current_time"]}\n',
        encoding="utf-8",
    )
    marker = tmp_path / "started"
    # A server named as the catalog's tools are: measured with it, names would collide.
    start = (
        "import runpy, sys\n"
        "open(sys.argv[1], 'a').write('started')\n"
        "sys.argv = ['mcp-server-time', '--local-timezone', 'UTC']\n"
        "runpy.run_module('mcp_server_time', run_name='__main__')\n"
    )
    hermes_cli.config.write_text(
        json.dumps(
            {
                "mcp_servers": {
                    "time": {"command": sys.executable, "args": ["-c", start, str(marker)]}
                }
            }
        ),
        encoding="utf-8",
    )

    report = hermes_cli.json(
        "eval", "search", "--catalog", str(catalog), "--queries", str(queries), "--json"
    )

    assert report["hit@1"] == 100.0, report
    assert not marker.exists(), "eval started the user's MCP server"
