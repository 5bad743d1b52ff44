"""Tool search in other languages over a real MCP server (npm's ``server-github``, whose tool
names and descriptions are English): the lexicon's action words find the tool, and words
nothing answers are reported in ``unmatched`` with a hint in the query's language."""

from __future__ import annotations

import json
from typing import Any

import pytest
from realservers import github_entry

from hermes_core._config import Config
from hermes_core._host import Host
from hermes_core._paths import Environment

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]


async def search(host: Host, query: str) -> dict[str, Any]:
    """The result of one query, searched as a model searches (default limit and settings)."""
    result = await host.dispatch("tool_search", {"queries": [query]}, host.new_session())
    found: dict[str, Any] = json.loads(result.text_content)["results"][0]
    return found


@pytest.mark.slow
async def test_other_languages_find_the_github_tools_and_report_what_nothing_holds(
    env: Environment,
) -> None:
    config = Config.model_validate({"mcp_servers": {"github": github_entry().model_dump()}})
    async with Host(config, env) as host:
        assert host.mcp_status()["github"].state == "connected"
        seed = await search(host, "创建 GitHub issue")  # the seed's own example
        assert seed["matches"][0] == "mcp__github__create_issue"
        assert seed["unmatched"] == []
        for query, first in [
            ("创建问题", "mcp__github__create_issue"),
            ("GitHub イシューを作成", "mcp__github__create_issue"),
            ("GitHub 이슈 생성해줘", "mcp__github__create_issue"),
            ("crear un issue en GitHub", "mcp__github__create_issue"),
            ("créer une issue GitHub", "mcp__github__create_issue"),
            ("GitHub Issue erstellen", "mcp__github__create_issue"),
            ("列出 pull requests", "mcp__github__list_pull_requests"),
            ("GitHub Branch erstellen", "mcp__github__create_branch"),
        ]:
            assert (await search(host, query))["matches"][0] == first, query

        unknown = await search(host, "部署服务器")  # "deploy server": no tool holds either word
        assert unknown["matches"] == []
        assert unknown["unmatched"] == ["部署服务器"]
        assert "部署服务器" in unknown["hint"]
        assert "没有" in unknown["hint"]  # the hint is written in Chinese
