"""``HERMES_CACHE_DIR`` naming a regular file, not a directory: the real ``hermes`` warns once,
naming the file and that it is not a directory, leaves the file alone and works without a cache
(no warning that reads like a damaged cache)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from hermes_core.testing import HermesCli

pytestmark = pytest.mark.subprocess

SAAS_CATALOG = Path(__file__).resolve().parents[2] / "shared" / "data" / "saas_openapi_catalog"
TOOLBOX = Path(__file__).resolve().parent / "mcp" / "servers" / "toolbox.py"


def test_a_cache_path_that_is_a_file_is_one_clear_warning_and_the_file_is_kept(
    hermes_cli: HermesCli, tmp_path: Path
) -> None:
    # A catalog over the bm25 index's persisting size and an MCP server: the catalog cache, the
    # index cache and the tool manifests each want the cache directory.
    catalog = Path(shutil.copyfile(SAAS_CATALOG / "catalog.json", tmp_path / "catalog.json"))
    hermes_cli.config.write_text(
        json.dumps(
            {
                "tools": {"catalogs": [{"path": str(catalog)}]},
                "mcp_servers": {"box": {"command": sys.executable, "args": [str(TOOLBOX)]}},
            }
        ),
        encoding="utf-8",
    )
    cache_file = tmp_path / "cache-file"
    cache_file.write_text("my notes\n", encoding="utf-8")
    env = hermes_cli.variables(HERMES_CACHE_DIR=str(cache_file))

    for _ in range(2):  # the second run finds nothing cached either, and says the same
        done = hermes_cli.run("tools", "search", "github create issue", "--json", env=env)

        found = json.loads(done.stdout)
        assert found["results"][0]["matches"][0] == "github__issues_create"
        warnings = [line for line in done.stderr.splitlines() if line.strip()]
        assert len(warnings) == 1, done.stderr
        assert str(cache_file) in warnings[0]
        assert "is not a directory" in warnings[0]
        assert "nothing is lost" in warnings[0]
        assert cache_file.read_text(encoding="utf-8") == "my notes\n"
