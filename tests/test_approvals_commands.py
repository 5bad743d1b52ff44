"""Allow and deny globs over shell commands: only ``<tool>:*`` approves a whole command line,
and no wildcard reaches past a newline.

The probes run the real approval path: the terminal tool through the dispatcher, a real shell,
and a file the command must not have created."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from builders import Harness, build_harness

from hermes_core.approvals import GlobRules


@pytest.fixture
def harnesses(tmp_path: Path) -> Iterator[Callable[..., Harness]]:
    made: list[Harness] = []

    def make(config: dict[str, Any] | None = None) -> Harness:
        harness = build_harness(tmp_path / f"h{len(made)}", config=config)
        made.append(harness)
        return harness

    yield make
    for harness in made:
        harness.close()


@pytest.mark.parametrize(
    "command",
    [
        "git status:; touch pwned",
        "git status:\ntouch pwned",
        "git status: && touch pwned",
        "git status: | touch pwned",
    ],
)
def test_allow_glob_ending_in_colon_star_does_not_approve_a_chained_command(
    harnesses: Callable[..., Harness], command: str
) -> None:
    harness = harnesses({"approvals": {"allow": ["terminal:git status:*"]}})

    result = harness.call("terminal", {"command": command})

    assert result.error_code == "DENIED"
    assert "needs approval" in result.text_content
    assert not (harness.env.cwd / "pwned").exists()


def test_star_in_a_glob_does_not_span_a_newline() -> None:
    rules = GlobRules(["terminal:echo *", "terminal:git status:*", "a?b", "a[!x]b"])

    assert rules.match(["terminal:echo a\ntouch pwned"]) is None
    assert rules.match(["terminal:git status:\ntouch pwned"]) is None
    assert rules.match(["a\nb"]) is None
    assert rules.match(["terminal:echo a b"]) == "terminal:echo *"
    assert rules.match(["a-b"]) == "a?b"


def test_catch_all_allow_glob_still_approves_every_command_line(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses({"approvals": {"allow": ["terminal:*"]}})

    result = harness.call("terminal", {"command": "echo one\necho $(echo two) > made.txt"})

    assert not result.is_error, result.text_content
    assert (harness.env.cwd / "made.txt").read_text() == "two\n"


def test_glob_with_many_stars_matches_a_long_command_line_in_linear_time() -> None:
    import time

    rules = GlobRules(["terminal:*a*a*a*a*a*b"])
    started = time.perf_counter()

    found = rules.match(["terminal:" + "a" * 200_000])

    assert found is None
    assert time.perf_counter() - started < 2  # backtracking would take hours
