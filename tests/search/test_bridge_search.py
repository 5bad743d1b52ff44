"""tool_search: argument shapes, limits, results, hints, the loop breaker, grants (connectors:
``tests/connectors/test_connector_search.py``)."""

from __future__ import annotations

import json
from typing import Any

import anyio
from bridge_fixtures import (
    core_tool,
    mcp_tool,
    plugin_tool,
    registry_of,
    session,
    tool_search,
)

from hermes_core._config import ToolSearchConfig
from hermes_core._registry import Registry
from hermes_core._session import Session
from hermes_core.search._toolsearch import ToolSearch


def _registry() -> Registry:
    issue_schema = {
        "type": "object",
        "properties": {"repo": {"type": "string"}, "title": {"type": "string"}},
        "required": ["repo", "title"],
    }
    return registry_of(
        [
            core_tool("read_file", "Read a file."),
            mcp_tool("github", "create_issue", "Create an issue in a repository.", issue_schema),
            mcp_tool("github", "list_issues", "List the issues of a repository."),
            mcp_tool("github", "merge_pull_request", "Merge a pull request."),
            mcp_tool("slack", "post_message", "Post a message to a Slack channel."),
            plugin_tool("weather", "forecast", "Weather forecast for a city."),
        ]
    )


def _search(search: ToolSearch, queries: Any, limit: Any = None, s: Session | None = None) -> Any:
    return anyio.run(search.search, queries, limit, s or session())


def test_search_result_shape() -> None:
    answer = _search(tool_search(_registry()), ["create issue"])
    assert answer["queries"] == ["create issue"]
    assert answer["total_available"] == 5
    assert answer["results"][0]["query"] == "create issue"
    assert answer["results"][0]["matches"][0] == "mcp__github__create_issue"
    assert answer["tools"]["mcp__github__create_issue"] == {
        "source": "mcp",
        "source_name": "github",
        "description": "Create an issue in a repository.",
        "required": ["repo", "title"],
    }


def test_bare_string_is_one_query() -> None:
    answer = _search(tool_search(_registry()), "slack message")
    assert answer["queries"] == ["slack message"]
    assert answer["results"][0]["matches"] == ["mcp__slack__post_message"]


def test_seven_queries_pass_and_eight_are_refused() -> None:
    search = tool_search(_registry())
    seven = _search(search, [f"issue {n}" for n in range(7)])
    assert len(seven["results"]) == 7
    eight = _search(search, [f"issue {n}" for n in range(8)])
    assert set(eight) == {"error", "code"}
    assert "at most 7" in eight["error"]
    assert "Nothing was searched" in eight["error"]


def test_limit_is_per_query_and_defaults_from_config() -> None:
    config = ToolSearchConfig(search_default_limit=2)
    search = tool_search(_registry(), config=config)
    answer = _search(search, ["github", "repository"])
    assert [len(result["matches"]) for result in answer["results"]] == [2, 2]
    assert len(_search(search, ["github"], 3)["results"][0]["matches"]) == 3


def test_limit_is_clamped_to_the_configured_maximum() -> None:
    config = ToolSearchConfig(max_search_limit=1)
    search = tool_search(_registry(), config=config)
    assert len(_search(search, ["github"], 50)["results"][0]["matches"]) == 1
    assert len(_search(search, ["github"], 0)["results"][0]["matches"]) == 1
    assert "limit must be a whole number" in _search(search, ["github"], "many")["error"]


def test_empty_match_lists_available_sources_with_a_hint() -> None:
    answer = _search(tool_search(_registry()), ["kubernetes"])
    result = answer["results"][0]
    assert result["matches"] == []
    assert result["available_sources"] == [
        {"name": "github", "tool_count": 3},
        {"name": "slack", "tool_count": 1},
        {"name": "weather", "tool_count": 1},
    ]
    assert "remain available" in result["hint"]
    assert "service name plus a concrete action and object" in result["hint"]
    assert answer["tools"] == {}


def test_matched_results_carry_no_hint() -> None:
    result = _search(tool_search(_registry()), ["forecast"])["results"][0]
    assert set(result) == {"query", "matches", "unmatched"}
    assert result["unmatched"] == []


def test_tool_description_is_capped_at_500_characters_and_required_at_32() -> None:
    schema = {
        "type": "object",
        "properties": {f"p{n}": {"type": "string"} for n in range(40)},
        "required": [f"p{n}" for n in range(40)],
    }
    long = "Synchronise everything. " + "word " * 200
    registry = registry_of([mcp_tool("sync", "synchronise_all", long, schema)])
    entry = _search(tool_search(registry), ["synchronise"])["tools"]["mcp__sync__synchronise_all"]
    assert len(entry["description"]) == 500
    assert entry["required"] == [f"p{n}" for n in range(32)]


def test_visible_tools_are_not_searched() -> None:
    answer = _search(tool_search(_registry()), ["read file"])
    assert answer["results"][0]["matches"] == []


def test_loop_breaker_stops_searches_past_the_per_turn_limit() -> None:
    config = ToolSearchConfig(max_searches_per_turn=3)
    search = tool_search(_registry(), config=config)
    conversation = session()
    for _ in range(3):
        assert "error" not in _search(search, ["issue"], s=conversation)
    stopped = _search(search, ["issue"], s=conversation)
    assert stopped["code"] == "SEARCH_LIMIT"
    assert "act on the tools already found, or ask the user" in stopped["error"]
    conversation.next_turn()
    assert "error" not in _search(search, ["issue"], s=conversation)


def test_a_refused_search_does_not_count_toward_the_loop_breaker() -> None:
    config = ToolSearchConfig(max_searches_per_turn=2)
    search = tool_search(_registry(), config=config)
    conversation = session()
    for _ in range(3):
        refused = _search(search, [f"q{n}" for n in range(8)], s=conversation)
        assert "at most 7" in refused["error"]
    for _ in range(2):
        assert "error" not in _search(search, ["issue"], s=conversation)
    assert _search(search, ["issue"], s=conversation)["code"] == "SEARCH_LIMIT"


def test_session_grant_hides_tools_from_search() -> None:
    conversation = session(granted_toolsets=frozenset({"core", "mcp-slack"}))
    search = tool_search(_registry())
    answer = _search(search, ["issue", "message"], s=conversation)
    assert answer["results"][0]["matches"] == []
    assert answer["results"][1]["matches"] == ["mcp__slack__post_message"]
    assert answer["total_available"] == 1
    assert answer["results"][0]["available_sources"] == [{"name": "slack", "tool_count": 1}]


def test_grant_filter_still_fills_the_limit() -> None:
    tools = [mcp_tool("hidden", f"issue_tool_{n}", "Issue tool.") for n in range(10)]
    tools += [mcp_tool("shown", f"issue_tool_{n}", "Issue tool too.") for n in range(3)]
    conversation = session(granted_toolsets=frozenset({"mcp-shown"}))
    answer = _search(tool_search(registry_of(tools)), ["issue"], 3, conversation)
    assert len(answer["results"][0]["matches"]) == 3
    assert all(name.startswith("mcp__shown__") for name in answer["results"][0]["matches"])


def test_search_result_is_a_tool_result_of_compact_json() -> None:
    search = tool_search(_registry())
    search_tool = search.bridge_tools()[0]
    assert search_tool.handler is not None
    result = anyio.run(lambda: search_tool.handler(session=session(), queries=["forecast"]))
    assert not result.is_error
    assert json.loads(result.text_content) == result.structured
    assert ", " not in result.text_content
    assert '": ' not in result.text_content


def test_search_error_is_an_error_tool_result() -> None:
    search_tool = tool_search(_registry()).bridge_tools()[0]
    assert search_tool.handler is not None
    result = anyio.run(lambda: search_tool.handler(session=session(), queries=[]))
    assert result.is_error
    assert json.loads(result.text_content)["error"] == result.error_message


def test_tools_outside_the_grant_do_not_shape_a_restricted_sessions_search() -> None:
    from engine import BM25Index

    # In the grant "g": x holds "beta", y holds "alpha" and "beta". Outside it, eleven tools
    # hold "alpha", so over the whole catalog "beta" is the rarest token; within the grant
    # "alpha" is.
    tools = [
        plugin_tool("g", "tool_x", "Beta gamma."),
        plugin_tool("g", "tool_y", "Alpha beta."),
        *(plugin_tool("other", f"other_{n}", "Alpha delta.") for n in range(11)),
    ]
    registry = registry_of(tools)
    restricted = session(granted_toolsets=frozenset({"g"}))
    shared = tool_search(registry, config=ToolSearchConfig(admission="strict"))
    own = tool_search(registry, config=ToolSearchConfig(admission="strict"), new_backend=BM25Index)
    assert _search(shared, ["alpha beta"], s=restricted)["results"][0]["matches"] == [
        "tool_y",
        "tool_x",
    ]
    assert _search(own, ["alpha beta"], s=restricted)["results"][0]["matches"] == ["tool_y"]
    everyone = _search(own, ["alpha beta"])["results"][0]["matches"]
    assert set(everyone) == {"tool_x", "tool_y"}


def test_a_word_only_tools_outside_the_matches_hold_is_unmatched_but_never_called_absent() -> None:
    # "slack" is unmatched (the one github match does not hold it), yet the slack server has a
    # tool: telling the model that no source provides Slack would lose it.
    answer = _search(tool_search(_registry()), ["github create issue slack"], 1)

    (result,) = answer["results"]
    assert result["matches"][0] == "mcp__github__create_issue"
    assert "mcp__slack__post_message" not in result["matches"]
    assert result["unmatched"] == ["slack"]
    assert "No tool contains" not in result["hint"]
    assert "None of these matches contains 'slack', but other tools do" in result["hint"]


def test_a_query_that_is_a_tools_exact_name_leaves_no_word_unmatched() -> None:
    # The name is indexed without its mcp__ prefix: "mcp" was left unmatched, and the hint
    # told the model that no tool contains it, of the very tool it named.
    search = tool_search(_registry())
    for query in ("mcp__github__create_issue", " MCP__GitHub__Create_Issue "):
        (result,) = _search(search, [query])["results"]

        assert result["matches"][0] == "mcp__github__create_issue"
        assert result["unmatched"] == []
        assert "hint" not in result


def test_mcp_in_a_query_is_matched_by_any_mcp_tool_and_other_words_still_judged() -> None:
    # A server's prefix as the listing shows it ("mcp__github"), or "mcp" as a word: it is in
    # every MCP tool's name, never a service the model is missing.
    search = tool_search(_registry())
    (result,) = _search(search, ["mcp__github__"])["results"]
    assert result["matches"][0].startswith("mcp__github__")
    assert (result["unmatched"], "hint" in result) == ([], False)

    (result,) = _search(search, ["mcp__github quokka"])["results"]
    assert result["unmatched"] == ["quokka"]
    (result,) = _search(search, ["mcp github issue"])["results"]
    assert result["unmatched"] == []
    # Where no match is an MCP tool, "mcp" is judged as any other word.
    (result,) = _search(search, ["mcp weather forecast"], 1)["results"]
    assert (result["matches"], result["unmatched"]) == (["forecast"], ["mcp"])


def test_a_word_no_tool_holds_is_called_absent_beside_one_held_elsewhere() -> None:
    answer = _search(tool_search(_registry()), ["github create issue slack quokka"], 1)

    (result,) = answer["results"]
    assert result["unmatched"] == ["slack", "quokka"]
    assert result["hint"].startswith("No tool contains 'quokka'. If that names a service")
    assert "None of these matches contains 'slack', but other tools do" in result["hint"]


def test_a_query_longer_than_the_limit_is_refused_and_nothing_is_searched() -> None:
    search = tool_search(_registry())

    answer = _search(search, ["github create issue", "x" * 40_000])

    assert set(answer) == {"error", "code"}
    assert "a query of 40,000 characters was sent; each is at most 2,000" in answer["error"]
    assert "Nothing was searched" in answer["error"]
    assert len(json.dumps(answer)) < 1000  # the query is not echoed back


def test_blank_queries_are_said_to_be_blank_and_an_empty_list_empty() -> None:
    # [""] was answered "queries is empty", though a query was sent.
    search = tool_search(_registry())

    blank = _search(search, ["", "  "])
    empty = _search(search, [])

    assert blank["error"] == (
        "every query sent (2) is blank: send at least one keyword query, "
        'e.g. {"queries": ["github create issue"]}'
    )
    assert empty["error"] == "queries is empty: send at least one keyword query"
    assert _search(search, ["", "slack message"])["queries"] == ["slack message"]


def test_a_misnamed_queries_key_is_named_with_the_call_to_send_instead() -> None:
    # Models send {"query": "..."}; "queries must be a list" would not say the key is wrong.
    search_tool = tool_search(_registry()).bridge_tools()[0]
    assert search_tool.name == "tool_search"
    assert search_tool.handler is not None

    def sent(**arguments: Any) -> Any:
        return anyio.run(lambda: search_tool.handler(session=session(), **arguments)).structured

    assert sent(query="create issue") == {
        "error": 'tool_search takes "queries", not "query". Nothing was searched: send '
        '{"queries": ["create issue"]}',
        "code": "INVALID_ARGUMENTS",
    }
    assert 'not "q", "top_k"' in sent(q=["a", "b"], top_k=3)["error"]
    assert 'send {"queries": ["a", "b"]}' in sent(q=["a", "b"], top_k=3)["error"]


def test_a_limit_that_is_no_number_is_quoted_as_the_model_wrote_it() -> None:
    # The model writes JSON: true and "many", not Python's True and 'many'.
    search = tool_search(_registry())
    assert _search(search, ["github"], True)["error"] == (
        "limit must be a whole number such as 5, not true"
    )
    assert _search(search, ["github"], "many")["error"] == (
        'limit must be a whole number such as 5, not "many"'
    )


def test_a_description_holding_a_lone_surrogate_is_searched_as_the_others() -> None:
    # A plugin's description with half a character (\ud83d, JSON allows it) failed every
    # search: "tool_search failed: UnicodeEncodeError", the other tools unreachable too.
    registry = registry_of(
        [
            plugin_tool("weather", "forecast", "Weather forecast \ud83d for a city."),
            plugin_tool("weather", "alerts", "Storm alerts for a région \ud83d."),
            mcp_tool("slack", "post_message", "Post a message to a Slack channel."),
        ]
    )
    search = tool_search(registry)

    answer = _search(search, ["forecast", "storm alerts", "slack message", "city \ud800"])

    matches = [entry["matches"][:1] for entry in answer["results"]]
    assert matches == [["forecast"], ["alerts"], ["mcp__slack__post_message"], ["forecast"]]
