"""The todo toolset: the session's task list."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from builders import Harness, build_harness


@pytest.fixture
def todo(tmp_path: Path) -> Iterator[Harness]:
    harness = build_harness(tmp_path, bundled=("approvals", "todo"))
    yield harness
    harness.close()


def test_todo_list_replaces_merges_and_shows_per_session(todo: Harness) -> None:
    session = todo.session()
    todo.call(
        "todo_list",
        {"todos": [{"id": "a", "content": "write tests"}, {"id": "b", "content": "ship"}]},
        session,
    )
    merged = todo.call(
        "todo_list",
        {
            "todos": [
                {"id": "a", "content": "write tests", "status": "completed"},
                {"content": "celebrate"},
            ],
            "merge": "true",
        },
        session,
    )
    shown = todo.call("todo_list", {}, session)
    other = todo.call("todo_list", {}, todo.session())

    assert [(i["id"], i["status"]) for i in merged.structured] == [
        ("a", "completed"),
        ("b", "pending"),
        ("3", "pending"),
    ]
    assert shown.text_content.splitlines() == [
        "[x] a. write tests",
        "[ ] b. ship",
        "[ ] 3. celebrate",
        "1/3 completed",
    ]
    assert other.text_content == "the task list is empty"


def test_todo_list_rejects_an_unknown_status(todo: Harness) -> None:
    result = todo.call("todo_list", {"todos": [{"content": "x", "status": "someday"}]})

    assert result.error_code == "INVALID_ARGUMENTS"
    assert "arguments.todos[0].status" in result.text_content


def test_todo_list_is_not_core_and_runs_without_asking(todo: Harness) -> None:
    tool = todo.registry.get("todo_list")

    assert tool is not None
    assert not tool.core
    assert not tool.annotations.destructive
    assert not todo.call("todo_list", {}).is_error


def test_a_thousand_items_are_kept_and_one_item_of_a_megabyte_is_refused(todo: Harness) -> None:
    session = todo.session()
    many = [{"content": f"task {number}"} for number in range(1000)]

    kept = todo.call("todo_list", {"todos": many}, session)
    huge = todo.call("todo_list", {"todos": [{"content": "x" * 1_000_000}]}, session)
    shown = todo.call("todo_list", {}, session)

    assert len(kept.structured) == 1000
    assert kept.text_content.endswith("0/1000 completed")
    # Every later call shows the whole list back: a megabyte item would fill the context.
    assert huge.error_code == "INVALID_ARGUMENTS"
    assert "arguments.todos[0].content" in huge.text_content
    assert len(shown.structured) == 1000
