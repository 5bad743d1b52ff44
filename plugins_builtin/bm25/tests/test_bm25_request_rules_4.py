"""The ranking rules for users' requests of round 4 (issue 32; docs/tool-search.md,
"Requests"), one test each, on small catalogs of services no request set asks of (a calendar, a
CRM, a cloud console, a database, a task list): each rule was written for a class of misses of
request set 2's probe and must help a request to any service alike.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from bm25_modules import BM25Index, analysis

from hermes_core.search._backend import ToolDocument
from hermes_core.search._evaluation import catalog_documents, load_catalog

SERVERS_CATALOG = Path(__file__).resolve().parents[3] / "benchmarks/data/mcp-servers/catalog.json"


def _tool(name: str, description: str, *parameters: str) -> ToolDocument:
    group = name.split("__")[0]
    return ToolDocument(name, description, group, parameter_names=parameters)


SERVICES = [
    _tool("calendar__create_event", "Create a calendar event", "title", "start"),
    _tool("calendar__update_event", "Update an event: its time, title or attendees", "id"),
    _tool("calendar__list_events", "List the events of a calendar", "calendar_id"),
    _tool("calendar__get_event", "Get an event by id", "id"),
    _tool("crm__create_deal", "Create a deal in the pipeline", "title", "value"),
    _tool("crm__get_deal", "Get a deal by id", "id"),
    _tool("crm__list_deals", "List deals of the pipeline", "stage"),
    _tool("crm__count_deals", "Get the number of deals matching a filter", "filter"),
    _tool("crm__delete_invoice", "Delete an invoice", "id"),
    _tool("crm__get_invoice", "Get an invoice of the old billing system", "id"),
    _tool("crm__add_note", "Add a note to a deal or a contact", "deal_id", "body"),
    _tool("crm__list_notes", "List notes of a deal", "deal_id"),
    _tool("crm__update_profile", "Update the user's profile: name, visibility", "visibility"),
    _tool("crm__create_profile", "Create a profile for a new contact", "name"),
    _tool("cloud__create_server", "Create a new server in a region", "region", "size"),
    _tool("cloud__get_server", "Get a server's details", "id"),
    _tool("cloud__stop_server", "Stop a running server", "id"),
    _tool("cloud__get_bucket_size", "Gets the storage size of a bucket", "bucket"),
    _tool("cloud__list_buckets", "List the buckets of a project", "project"),
    _tool("cloud__list_team_members", "List the members of a team", "team"),
    _tool("cloud__get_team", "Get a team: its name and settings", "team"),
    _tool("db__describe_table", "Describe a table's schema", "table"),
    _tool("db__list_tables", "List the tables of a database", "database"),
    _tool("db__aggregate", "Run an aggregation over a table's rows, grouped by a column", "table"),
    _tool("db__count_rows", "Count the rows of a table", "table"),
    _tool("db__execute_sql", "Execute a SQL statement", "sql"),
    _tool("tasks__create_task", "Create a new task in a list", "content", "due"),
    _tool("tasks__list_tasks", "List the tasks of a list", "list_id"),
    _tool("git__push", "Push commits of a branch to its remote", "branch"),
    _tool("web__open_page", "Navigate the browser to a URL", "url"),
    _tool("web__new_tab", "Open a new browser tab", "index"),
    _tool("web__handle_dialog", "Accept or dismiss a dialog", "accept"),
    _tool("web__press_key", "Press a key on the keyboard", "key"),
    _tool("web__type_text", "Type text into a field and submit", "text", "submit"),
    _tool("docs__search_docs", "Search the documentation for a topic", "query"),
    _tool("docs__get_page", "Get a page of the handbook by its path", "path"),
    _tool("mail__send_email", "Send an email to an address", "to", "subject"),
    _tool("mail__list_contacts", "List contacts and their email addresses", "query"),
    _tool("shop__update_order", "Update an order: status, the sales region", "order_id"),
]


@pytest.fixture(scope="module")
def services() -> BM25Index:
    return BM25Index(SERVICES)


def _names(index: BM25Index, query: str, limit: int = 5) -> list[str]:
    return [hit.name for hit in index.search(query, limit, "off")]


def _words(query: str) -> list[str]:
    """The tokens ``query`` is ranked with, against a vocabulary that holds its words."""
    known = {stem for word in query.lower().split() for stem in analysis.stem_words([word])}
    known |= {"url", "email", "creat", "remind", "updat", "reschedul", "delet", "count", "list"}
    return list(analysis.analyze_query(query, known.__contains__).tokens)


def test_a_quoted_value_is_an_argument() -> None:
    assert _words("rename the 'Quarterly review' meeting to 'Planning'") == ["renam", "meet"]
    # An apostrophe opens no quote, and a request that is all quotes keeps its words.
    assert _words("what's on the calendar") == ["s", "calendar"]
    assert "quarter" in _words("'Quarterly review'")


def test_a_quoted_title_no_longer_picks_a_tool(services: BM25Index) -> None:
    # The title's words ("sales", "region") are the shop tool's; the request is a calendar's.
    query = "add 'review sales per region' to the calendar"
    assert _names(services, query)[0] == "calendar__create_event"


@pytest.mark.parametrize(
    ("query", "kind"),
    [
        ("open https://acme.io/pricing in the browser", "url"),
        ("go to news.example.org", "url"),
        ("write to bob@acme.com about the contract", "email"),
    ],
)
def test_an_address_is_its_kind(query: str, kind: str) -> None:
    words = _words(query)
    assert kind in words
    assert "acm" not in words
    assert "exampl" not in words


def test_an_address_finds_the_tool_that_takes_one(services: BM25Index) -> None:
    assert _names(services, "open example.com in the browser")[0] == "web__open_page"


@pytest.mark.parametrize(
    ("query", "tool"),
    [
        ("get rid of the old invoice", "crm__delete_invoice"),
        ("spin up a server in frankfurt", "cloud__create_server"),
        ("shut down the staging server", "cloud__stop_server"),
        ("leave a note on the Acme deal", "crm__add_note"),
        ("hit enter", "web__press_key"),
    ],
)
def test_a_phrasal_verb_is_its_verb(services: BM25Index, query: str, tool: str) -> None:
    assert _names(services, query)[0] == tool


def test_remind_me_creates_a_reminder_whose_text_is_an_argument(services: BM25Index) -> None:
    # "push" and "branch" are the git tool's words: they are the reminder's text.
    assert _words("remind me to push the branch tonight") == ["creat", "remind"]
    assert _names(services, "remind me to push the branch tonight")[0] == "tasks__create_task"


@pytest.mark.parametrize(
    "query", ["push the review event to thursday", "move my dentist event to next friday"]
)
def test_moving_a_thing_to_a_date_reschedules_it(services: BM25Index, query: str) -> None:
    assert _names(services, query)[0] == "calendar__update_event"


def test_push_without_a_date_is_left_a_word(services: BM25Index) -> None:
    assert _names(services, "push the branch to origin")[0] == "git__push"


@pytest.mark.parametrize(
    ("query", "tool"),
    [
        ("how many deals are still open", "crm__count_deals"),
        ("how big is the backups bucket", "cloud__get_bucket_size"),
        ("how much space do the logs take up", "cloud__get_bucket_size"),
        ("what columns does the orders table have", "db__describe_table"),
        ("who else is on the design team", "cloud__list_team_members"),
        ("total revenue per region from the orders table", "db__aggregate"),
        ("what does the handbook say about parental leave", "docs__search_docs"),
    ],
)
def test_a_question_asks_for_its_action(services: BM25Index, query: str, tool: str) -> None:
    assert _names(services, query)[0] == tool


def test_per_a_unit_is_no_grouping() -> None:
    assert "aggreg" not in _words("show 50 results per page")


def test_make_the_updates_and_make_a_creates(services: BM25Index) -> None:
    assert _names(services, "make my profile private")[0] == "crm__update_profile"
    assert _names(services, "make a profile for the new contact")[0] == "crm__create_profile"


@pytest.mark.parametrize(
    ("query", "tool"),
    [
        ("new todo for oat milk", "tasks__create_task"),
        ("close the cookie popup", "web__handle_dialog"),
        ("dismiss the alert", "web__handle_dialog"),
    ],
)
def test_users_words_meet_the_api_words_of_round_4(
    services: BM25Index, query: str, tool: str
) -> None:
    assert _names(services, query)[0] == tool


def test_remember_names_the_memory_server() -> None:
    index = BM25Index(catalog_documents(load_catalog(SERVERS_CATALOG)))
    top = _names(index, "remember my sister lives in Oslo", limit=3)
    assert all(name.startswith("mcp__memory__") for name in top)


def test_to_run_code_is_to_evaluate_or_execute_it() -> None:
    index = BM25Index(
        [
            _tool("page__evaluate", "Evaluate an expression on the page", "expression"),
            _tool("page__get_title", "Get the title of the page"),
        ]
    )
    assert _names(index, "run this snippet in the page")[0] == "page__evaluate"


def test_how_many_units_asks_for_a_measure_not_a_count() -> None:
    assert "durat" in _words("how many hours does the flight take")
    assert "count" not in _words("how many hours does the flight take")
    assert "distanc" in _words("how many miles is the ride")


def test_what_was_said_asks_for_the_messages(services: BM25Index) -> None:
    index = BM25Index(
        [
            _tool("chat__channel_history", "Get the recent messages of a channel", "channel"),
            _tool("chat__list_channels", "List the channels of the workspace"),
            _tool("chat__set_topic", "Set a channel's topic", "channel", "topic"),
        ]
    )
    assert _names(index, "what was discussed in #design yesterday")[0] == "chat__channel_history"


def test_up_to_date_is_latest_and_bring_it_up_to_date_updates() -> None:
    index = BM25Index(
        [
            _tool("repo__update_branch", "Update a branch with its base branch", "branch"),
            _tool("repo__get_branch", "Get a branch", "branch"),
            _tool("docs__latest_docs", "Get the latest documentation of a library", "library"),
            _tool("tasks__filter", "Filter tasks by due date", "date"),
        ]
    )
    assert _names(index, "bring my feature branch up to date")[0] == "repo__update_branch"
    assert _names(index, "up-to-date docs of numpy")[0] == "docs__latest_docs"


def test_things_in_the_plural_and_no_action_ask_for_a_listing() -> None:
    index = BM25Index(
        [
            _tool("cloud__list_clusters", "List the clusters of a project", "project"),
            _tool("cloud__update_cluster", "Update a cluster's node pools", "cluster"),
            _tool("cloud__upgrade_cluster", "Upgrade a cluster to a new version", "cluster"),
            _tool("cloud__get_cluster", "Get a cluster", "cluster"),
        ]
    )
    assert _names(index, "acme kubernetes clusters")[0] == "cloud__list_clusters"
    assert _names(index, "which clusters do we have")[0] == "cloud__list_clusters"


def test_an_action_or_a_long_description_adds_no_listing() -> None:
    assert "list" not in _words("upgrade clusters")
    assert "list" not in _words("good sushi restaurants in downtown seattle")
    assert "list" not in _words("how many clusters")
    assert "list" not in _words("clusters")  # one word alone: its tools, whatever they do


def test_a_quoted_name_of_a_tool_stays_and_a_quoted_address_is_its_kind() -> None:
    words = _words("fetch 'https://example.com' with the 'Get Content' API")
    assert words[:2] == ["fetch", "url"]
    assert "content" in words


def test_an_action_in_another_language_or_a_plural_noun_verb_decides() -> None:
    # 创建 is "create" (the lexicon): no listing; "labels" is a thing, not the verb "label".
    assert "list" not in _words("创建目录 logs")
    index = BM25Index(
        [
            _tool("notes__list_labels", "List the labels", "page"),
            _tool("notes__update_label", "Update a label", "label"),
            _tool("notes__delete_label", "Delete a label", "label"),
        ]
    )
    assert _names(index, "which labels am I using?")[0] == "notes__list_labels"
