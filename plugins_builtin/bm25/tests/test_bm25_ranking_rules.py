"""The ranking rules of the default backend, one test each (docs/tool-search.md, "Ranking").

Catalogs are small and written here, or the real ones: the five MCP servers' tools as hermes
lists them (``benchmarks/data/mcp-servers/catalog.json``) and the SaaS catalog in
``../shared/data``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from bm25_modules import BM25Index, analysis

from hermes_core.search._backend import ToolDocument
from hermes_core.search._evaluation import catalog_documents, load_catalog

MCP_CATALOG = Path(__file__).resolve().parents[3] / "benchmarks/data/mcp-servers/catalog.json"


def _names(index: BM25Index, query: str, admission: str = "off", limit: int = 5) -> list[str]:
    return [hit.name for hit in index.search(query, limit, admission)]  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def mcp_servers() -> BM25Index:
    return BM25Index(catalog_documents(load_catalog(MCP_CATALOG)))


@pytest.fixture(scope="module")
def saas(data_dir: Path) -> BM25Index:
    path = data_dir / "saas_openapi_catalog" / "catalog.json"
    return BM25Index(catalog_documents(load_catalog(path)))


def test_field_weighting_ranks_a_tool_named_for_the_query_above_long_descriptions_of_it() -> None:
    filler = " ".join(f"detail{n}" for n in range(150))
    documents = [
        ToolDocument(
            f"tracker__note_{n}",
            f"Notes on an issue. Create one per issue; issue notes issue {filler}",
            "tracker",
        )
        for n in range(5)
    ]
    documents.append(
        ToolDocument("tracker__issues_create", f"Create an issue. {filler} {filler}", "tracker")
    )
    index = BM25Index(documents)
    assert _names(index, "create issue")[0] == "tracker__issues_create"


def test_saas_catalog_puts_github_issues_create_first_for_github_create_issue(
    saas: BM25Index,
) -> None:
    assert _names(saas, "github create issue")[0] == "github__issues_create"


def test_compound_time_zone_finds_a_tool_described_with_timezones() -> None:
    documents = [
        ToolDocument("convert", "Convert a time between timezones", "clock"),
        ToolDocument("dns_edit", "Edit a DNS zone file", "dns"),
        ToolDocument("clock_now", "The time now", "clock"),
    ]
    index = BM25Index(documents)
    assert _names(index, "time zone")[0] == "convert"
    assert _names(index, "timezone")[0] == "convert"
    assert index.search("time zone", 1, "off")[0].matched_tokens == ("time", "timezon")


def test_split_pullrequest_finds_a_tool_described_with_pull_request() -> None:
    documents = [
        ToolDocument("merge", "Merge a pull request", "git"),
        ToolDocument("pull", "Pull from a remote", "git"),
    ]
    index = BM25Index(documents)
    assert _names(index, "merge pullrequest")[0] == "merge"
    # No tool contains the word as written: it is still reported.
    assert index.unmatched_words("merge pullrequest", []) == ["pullrequest"]


def test_the_split_rule_tries_no_word_longer_than_its_bound() -> None:
    # Each try stems every cut of the word: a word of thousands of letters (pasted data, not a
    # compound) is taken whole, else a query costs time in its length squared.
    at_bound = "q" * (analysis.MAX_SPLIT_WORD - len("merge"))
    documents = [ToolDocument("merge", f"Merge {at_bound} {at_bound}q", "git")]
    index = BM25Index(documents)

    assert _names(index, f"merge{at_bound}") == ["merge"]  # at the bound: split, found
    assert _names(index, f"merge{at_bound}q") == []  # one letter over: taken whole


def test_argument_values_never_empty_the_result(mcp_servers: BM25Index) -> None:
    for query in ("current time tokyo", "what time is it in Tokyo", "read file config.yaml"):
        assert _names(mcp_servers, query), query
    assert _names(mcp_servers, "current time tokyo")[0] == "mcp__time__get_current_time"


def test_unmatched_names_a_service_no_tool_provides(mcp_servers: BM25Index) -> None:
    hits = mcp_servers.search("slack post message", 5, "off")
    assert hits  # tools sharing "post" or "message" still come back...
    assert mcp_servers.unmatched_words("slack post message", hits) == ["slack"]  # ...flagged


def test_unmatched_is_empty_when_the_results_hold_every_word(mcp_servers: BM25Index) -> None:
    hits = mcp_servers.search("git log", 5, "off")
    assert mcp_servers.unmatched_words("git log", hits) == []


def test_unmatched_without_results_names_the_words_no_tool_holds(mcp_servers: BM25Index) -> None:
    assert mcp_servers.search("zebra giraffe", 5, "off") == []
    assert mcp_servers.unmatched_words("zebra giraffe", []) == ["zebra", "giraffe"]


def test_strict_admission_still_returns_nothing_for_a_word_no_tool_holds(
    mcp_servers: BM25Index,
) -> None:
    assert _names(mcp_servers, "current time zanzibar", "strict") == []
    assert _names(mcp_servers, "current time zanzibar", "off")[0] == "mcp__time__get_current_time"


def test_equivalents_find_a_tool_that_uses_other_words(data_dir: Path, saas: BM25Index) -> None:
    # Jira calls a ticket an issue.
    path = data_dir / "saas_openapi_catalog" / "catalog.json"
    without = BM25Index(catalog_documents(load_catalog(path)), equivalents={})
    assert "jira__createIssue" not in _names(without, "jira create ticket")
    assert "jira__createIssue" in _names(saas, "jira create ticket")


def test_name_coverage_prefers_the_tool_the_query_names_whole() -> None:
    documents = [
        ToolDocument("ListQueueTags", "Lists the tags of a queue. A queue has tags.", "sqs"),
        ToolDocument("ListQueues", "Returns the queues of your account in a region.", "sqs"),
    ]
    index = BM25Index(documents)
    assert _names(index, "sqs list queues")[0] == "ListQueues"


def test_a_named_server_ranks_its_tools_first() -> None:
    documents = [
        ToolDocument("digitalocean__sshKeys_create", "Create a new SSH key", "digitalocean"),
        ToolDocument("digitalocean__droplets_list", "List droplets", "digitalocean"),
        ToolDocument("gitea__userCurrentPostKey", "Create a public key", "gitea"),
        ToolDocument("gitea__repoGet", "Get a repository", "gitea"),
    ]
    index = BM25Index(documents)
    assert _names(index, "gitea add ssh key")[0] == "gitea__userCurrentPostKey"
    assert _names(index, "add ssh key")[0] == "digitalocean__sshKeys_create"


def test_a_server_name_that_is_a_common_word_names_no_server() -> None:
    # "image" is the name of a server, but most tools holding "image" are elsewhere.
    documents = [
        ToolDocument("resize", "Resize an image", "image"),
        *(ToolDocument(f"photo_{n}", f"Crop image number {n}", "photos") for n in range(4)),
        ToolDocument("crop_image_exactly", "Crop an image exactly", "photos"),
    ]
    index = BM25Index(documents)
    assert _names(index, "crop image exactly")[0] == "crop_image_exactly"
