"""The real ``hermes`` command with a tool catalog: the second run answers from the catalog
cache exactly as the first, and a catalog changed since is read again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from hermes_core.testing import HermesCli

SAAS_CATALOG = Path(__file__).resolve().parents[2] / "shared" / "data" / "saas_openapi_catalog"


def test_a_second_hermes_answers_from_the_catalog_cache_and_a_changed_catalog_is_read_again(
    hermes_cli: HermesCli, tmp_path: Path
) -> None:
    source = SAAS_CATALOG / "catalog.json"
    assert source.is_file(), f"the SaaS catalog is read from {source} (../shared/data)"
    catalog = Path(shutil.copy(source, tmp_path / "catalog.json"))
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
    hermes_cli: HermesCli,
) -> None:
    catalog = hermes_cli.work / "catalog.json"
    catalog.write_bytes(b"\xff\xfe[")
    queries = hermes_cli.work / "queries.jsonl"
    queries.write_text('{"query": "create issue", "relevant": ["a"]}\n', encoding="utf-8")

    done = hermes_cli.run(
        "eval", "search", "--catalog", str(catalog), "--queries", str(queries), ok=False
    )

    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert f"{catalog}: not UTF-8 text: invalid start byte at byte 0" in done.stderr
