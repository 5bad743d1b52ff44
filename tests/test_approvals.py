"""Approval policies, allow and deny globs, remembered answers, the non-interactive answer."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from builders import Harness, build_harness, make_env

from hermes_core._approvals import (
    Answer,
    ApprovalRequest,
    Decision,
    GlobRules,
    call_subjects,
    matching_glob_every_segment_allows_any_segment_denies,
    remembered_subject,
)
from hermes_core._approvals.gate import ApprovalGate
from hermes_core._config import Config
from hermes_core._hookspecs import hookimpl
from hermes_core._session import Session
from hermes_core._specs import ApprovalPolicySpec, PreCallDirective, ToolCall
from hermes_core._tools import Tool


class FakePrompt:
    """Stands in for a person at a terminal: gives scripted answers and records the questions."""

    interactive = True

    def __init__(self, *answers: Answer | None, delay: float = 0.0) -> None:
        self.answers = list(answers)
        self.asked: list[ApprovalRequest] = []
        self.delay = delay

    async def ask(self, request: ApprovalRequest, timeout: float) -> Answer | None:
        self.asked.append(request)
        if self.delay:
            await anyio.sleep(self.delay)
        return self.answers.pop(0)


@pytest.fixture
def harnesses(tmp_path: Path) -> Iterator[Callable[..., Harness]]:
    made: list[Harness] = []

    def make(config: dict[str, Any] | None = None, **options: Any) -> Harness:
        harness = build_harness(tmp_path / f"h{len(made)}", config=config, **options)
        made.append(harness)
        return harness

    yield make
    for harness in made:
        harness.close()


def test_annotations_policy_runs_a_read_only_tool_without_asking(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses()
    (harness.env.cwd / "notes.txt").write_text("hello\n")
    prompt = FakePrompt()

    interactive = harness.call("read_file", {"path": "notes.txt"}, harness.session(prompt=prompt))
    unattended = harness.call("read_file", {"path": "notes.txt"}, harness.session())

    assert interactive.text_content == "hello\n"
    assert unattended.text_content == "hello\n"
    assert prompt.asked == []


@pytest.mark.subprocess
def test_terminal_in_a_non_interactive_session_is_denied_naming_the_tool_and_the_way_to_allow(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses()

    result = harness.call("terminal", {"command": "touch ran.txt"})

    assert result.error_code == "DENIED"
    assert "terminal" in result.text_content
    assert "approvals.allow" in result.text_content
    assert not (harness.env.cwd / "ran.txt").exists()
    assert harness.activity()[-1]["status"] == "denied"


@pytest.mark.subprocess
def test_deny_glob_over_the_command_refuses_even_under_policy_off(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses({"approvals": {"policy": "off", "deny": ["terminal:rm *"]}})
    victim = harness.env.cwd / "x"
    victim.mkdir()
    (victim / "keep.txt").write_text("precious")

    refused = harness.call("terminal", {"command": "rm -rf x"})
    allowed = harness.call("terminal", {"command": "ls x"})

    assert refused.error_code == "DENIED"
    assert "terminal:rm *" in refused.text_content
    assert (victim / "keep.txt").read_text() == "precious"
    assert not allowed.is_error
    assert "keep.txt" in allowed.text_content


def test_deny_glob_over_the_command_also_covers_background_processes(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses({"approvals": {"policy": "off", "deny": ["terminal:rm *"]}})

    result = harness.call("process_manage", {"action": "start", "command": "rm -rf x"})

    assert result.error_code == "DENIED"


def test_deny_glob_over_a_tool_name_wins_over_allow(harnesses: Callable[..., Harness]) -> None:
    harness = harnesses({"approvals": {"deny": ["read_*"], "allow": ["read_file"]}})

    result = harness.call("read_file", {"path": "anything"})

    assert result.error_code == "DENIED"
    assert "read_*" in result.text_content


@pytest.mark.subprocess
def test_allow_glob_lets_a_matching_command_run_without_asking(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses({"approvals": {"allow": ["terminal:echo *"]}})

    allowed = harness.call("terminal", {"command": "echo fine"})
    other = harness.call("terminal", {"command": "touch nope"})

    assert not allowed.is_error
    assert "fine" in allowed.text_content
    assert other.error_code == "DENIED"
    assert not (harness.env.cwd / "nope").exists()


@pytest.mark.subprocess
def test_non_interactive_allow_answer_lets_asked_calls_run(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses({"approvals": {"non_interactive": "allow"}})

    result = harness.call("terminal", {"command": "echo yes"})

    assert not result.is_error
    assert "yes" in result.text_content


def test_manual_policy_asks_for_every_tool_that_is_not_read_only(
    harnesses: Callable[..., Harness],
) -> None:
    manual = harnesses({"approvals": {"policy": "manual"}})
    annotations = harnesses()

    assert manual.call("todo_list", {}).error_code == "DENIED"
    assert not annotations.call("todo_list", {}).is_error
    assert not manual.call("search_files", {"glob": "*"}).is_error


@pytest.mark.subprocess
def test_session_answer_is_remembered_for_the_session_only(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses()
    prompt = FakePrompt("session")
    session = harness.session(prompt=prompt)

    first = harness.call("terminal", {"command": "echo one"}, session)
    again = harness.call("terminal", {"command": "echo one"}, session)
    other_session = harness.call("terminal", {"command": "echo one"}, harness.session())

    assert not first.is_error
    assert not again.is_error
    assert len(prompt.asked) == 1
    assert prompt.asked[0].tool_name == "terminal"
    assert prompt.asked[0].arguments == {"command": "echo one"}
    assert other_session.error_code == "DENIED"


@pytest.mark.subprocess
def test_once_answer_asks_again_next_time(harnesses: Callable[..., Harness]) -> None:
    harness = harnesses()
    prompt = FakePrompt("once", "deny")
    session = harness.session(prompt=prompt)

    first = harness.call("terminal", {"command": "echo one"}, session)
    second = harness.call("terminal", {"command": "echo one"}, session)

    assert not first.is_error
    assert second.error_code == "DENIED"
    assert "refused by the user" in second.text_content
    assert len(prompt.asked) == 2


@pytest.mark.subprocess
def test_unanswered_prompt_denies_after_the_approvals_timeout(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses({"approvals": {"timeout": 0.2}})
    prompt = FakePrompt("once", delay=30)

    result = harness.call("terminal", {"command": "touch late"}, harness.session(prompt=prompt))

    assert result.error_code == "DENIED"
    assert "within 0.2 s" in result.text_content
    assert not (harness.env.cwd / "late").exists()


def test_approve_directive_asks_even_for_a_read_only_tool(
    harnesses: Callable[..., Harness],
) -> None:
    class Careful:
        @hookimpl
        def hermes_pre_tool_call(self, call: ToolCall) -> PreCallDirective | None:
            if call.name == "read_file":
                return PreCallDirective.approve("reading is audited here")
            return None

    harness = harnesses(plugins=[("careful", Careful())])
    prompt = FakePrompt("deny")

    unattended = harness.call("read_file", {"path": "a.txt"})
    asked = harness.call("read_file", {"path": "a.txt"}, harness.session(prompt=prompt))

    assert unattended.error_code == "DENIED"
    assert asked.error_code == "DENIED"
    assert prompt.asked[0].reason == "reading is audited here"


class CustomPolicies:
    """A third-party policy plugin: one that refuses on weekends, one that crashes."""

    @hookimpl
    def hermes_approval_policies(self) -> list[ApprovalPolicySpec]:
        class Never:
            def decide(self, call: ToolCall, session: Session) -> Decision:
                return Decision.deny(f"{call.name}: nothing runs today")

        class Crashing:
            def decide(self, call: ToolCall, session: Session) -> Decision:
                raise RuntimeError("policy bug")

        class Slow:
            async def decide(self, call: ToolCall, session: Session) -> Decision:
                await anyio.sleep(30)
                return Decision.allow()

        class Garbage:
            def decide(self, call: ToolCall, session: Session) -> Any:
                return "yes"

        return [
            ApprovalPolicySpec("never", lambda context: Never()),
            ApprovalPolicySpec("crashing", lambda context: Crashing()),
            ApprovalPolicySpec("slow", lambda context: Slow()),
            ApprovalPolicySpec("garbage", lambda context: Garbage()),
        ]


def test_plugin_policy_is_selected_by_name(harnesses: Callable[..., Harness]) -> None:
    harness = harnesses({"approvals": {"policy": "never"}}, plugins=[("custom", CustomPolicies())])

    result = harness.call("read_file", {"path": "a.txt"})

    assert result.error_code == "DENIED"
    assert "nothing runs today" in result.text_content


def test_policy_exception_denies(harnesses: Callable[..., Harness]) -> None:
    harness = harnesses(
        {"approvals": {"policy": "crashing"}}, plugins=[("custom", CustomPolicies())]
    )
    (harness.env.cwd / "a.txt").write_text("a")

    result = harness.call("read_file", {"path": "a.txt"})

    assert result.error_code == "DENIED"
    assert "policy bug" in result.text_content


def test_policy_that_does_not_decide_in_time_denies(harnesses: Callable[..., Harness]) -> None:
    harness = harnesses(
        {"approvals": {"policy": "slow"}, "plugins": {"hook_timeout": 0.2}},
        plugins=[("custom", CustomPolicies())],
    )

    result = harness.call("todo_list", {})

    assert result.error_code == "DENIED"
    assert "did not decide within 0.2 s" in result.text_content


def _raise_line(nth: int) -> int:
    """The line of this file's ``nth`` raise of the policy bug: where a failure says it was."""
    lines = Path(__file__).read_text(encoding="utf-8").splitlines()
    raising = "raise RuntimeError(" + '"policy bug")'  # not this line's own text
    return [number for number, line in enumerate(lines, 1) if raising in line][nth]


@pytest.mark.parametrize(
    ("policy", "said"),
    [
        ("crashing", f"failed (RuntimeError: policy bug (at {__file__}, line {_raise_line(0)}))."),
        ("garbage", "gave no decision ('yes')."),
        ("slow", "did not decide within 0.2 s."),
    ],
)
def test_a_policy_that_fails_is_named_with_its_plugin(
    harnesses: Callable[..., Harness], policy: str, said: str
) -> None:
    harness = harnesses(
        {"approvals": {"policy": policy}, "plugins": {"hook_timeout": 0.2}},
        plugins=[("custom", CustomPolicies())],
    )

    result = harness.call("todo_list", {})

    assert result.error_code == "DENIED"
    assert result.text_content == (
        f"todo_list was refused: the approval policy {policy!r} (plugin 'custom') {said}"
    )


class CrashingPolicy:
    def decide(self, call: ToolCall, session: Session) -> Decision:
        raise RuntimeError("policy bug")


def test_a_policy_handed_in_code_that_fails_is_named_by_its_class(tmp_path: Path) -> None:
    gate = ApprovalGate(CrashingPolicy(), Config(), make_env(tmp_path), decide_timeout=1.0)
    call = ToolCall("todo_list", {}, Tool("todo_list", "The task list."))

    result = anyio.run(gate.check, call, Session(cwd=tmp_path), None)

    assert result is not None
    assert result.text_content == (
        "todo_list was refused: the approval policy CrashingPolicy failed "
        f"(RuntimeError: policy bug (at {__file__}, line {_raise_line(1)}))."
    )


def test_command_subjects_cover_the_tool_and_the_terminal_namespace() -> None:
    tool = Tool("process_manage", "x", meta={"shell_command_argument": "command"})
    call = ToolCall("process_manage", {"action": "start", "command": " rm -rf / "}, tool)

    assert call_subjects(call) == (
        "process_manage",
        "process_manage:rm -rf /",
        "terminal:rm -rf /",
    )
    assert GlobRules(["terminal:rm *"]).match(call_subjects(call)) == "terminal:rm *"
    assert GlobRules(["terminal:ls *"]).match(call_subjects(call)) is None


def _shell_call(command: str, name: str = "terminal") -> ToolCall:
    tool = Tool(name, "x", meta={"shell_command_argument": "command"})
    return ToolCall(name, {"command": command}, tool)


@pytest.mark.subprocess
def test_matching_glob_every_segment_allows_any_segment_denies() -> None:
    allow = GlobRules(["terminal:ls *", "terminal:git status", "terminal:echo *"])
    deny = GlobRules(["terminal:rm *"])

    def allowed(command: str) -> str | None:
        found = matching_glob_every_segment_allows_any_segment_denies(
            allow, _shell_call(command), deny=False
        )
        return None if found is None else found.pattern

    def denied(command: str, name: str = "terminal") -> str | None:
        found = matching_glob_every_segment_allows_any_segment_denies(
            deny, _shell_call(command, name), deny=True
        )
        return None if found is None else found.pattern

    assert allowed("ls -l") == "terminal:ls *"
    assert allowed("ls . && git status") == "terminal:ls *"
    assert allowed("ls . && rm x") is None
    assert allowed("ls . ; rm x") is None
    assert allowed("ls | sh") is None
    assert allowed("ls\nrm x") is None
    assert allowed("echo $(rm x)") is None
    assert allowed("echo `rm x`") is None
    assert allowed("ls > ~/.bashrc") is None
    assert allowed("ls < /etc/passwd") is None
    assert denied("ls; rm -rf x") == "terminal:rm *"
    assert denied("ls && rm -rf x") == "terminal:rm *"
    assert denied("ls\nrm x") == "terminal:rm *"
    assert denied("echo $(rm x)") == "terminal:rm *"
    assert denied("true | rm x", name="process_manage") == "terminal:rm *"
    assert denied("ls -l") is None


@pytest.mark.subprocess
def test_a_catch_all_or_an_exact_allow_glob_approves_a_whole_command_line() -> None:
    chained = "make > log.txt && rm -f tmp"

    catch_all = matching_glob_every_segment_allows_any_segment_denies(
        GlobRules(["terminal:*"]), _shell_call(chained), deny=False
    )
    exact = matching_glob_every_segment_allows_any_segment_denies(
        GlobRules([remembered_subject(_shell_call(chained))]), _shell_call(chained), deny=False
    )

    assert catch_all is not None
    assert catch_all.pattern == "terminal:*"
    assert exact is not None
    assert exact.pattern == "terminal:" + chained


@pytest.mark.subprocess
def test_a_chained_command_is_not_run_on_a_wildcard_allow_nor_past_a_deny(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses(
        {
            "approvals": {
                "policy": "manual",
                "allow": ["terminal:ls *", "terminal:touch *"],
                "deny": ["terminal:rm *"],
            }
        }
    )
    (harness.env.cwd / "keep.txt").write_text("keep\n")

    listed = harness.call("terminal", {"command": "ls ."})
    chained = harness.call("terminal", {"command": "ls . && echo hi > made.txt"})
    removed = harness.call("terminal", {"command": "ls; rm -f keep.txt"})

    assert not listed.is_error
    assert chained.error_code == "DENIED"
    assert "needs approval" in chained.text_content
    assert removed.error_code == "DENIED"
    assert "'terminal:rm *' in approvals.deny" in removed.text_content
    assert not (harness.env.cwd / "made.txt").exists()
    assert (harness.env.cwd / "keep.txt").exists()


@pytest.mark.subprocess
def test_a_session_answer_for_a_command_with_glob_characters_is_remembered(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses({"approvals": {"policy": "manual"}})
    (harness.env.cwd / "a.txt").write_text("a\n")
    prompt = FakePrompt("session")
    session = harness.session(prompt=prompt)

    first = harness.call("terminal", {"command": "cat *.txt"}, session)
    second = harness.call("terminal", {"command": "cat *.txt"}, session)

    assert first.text_content.startswith("a")
    assert second.text_content.startswith("a")
    assert len(prompt.asked) == 1


def test_the_denial_hint_for_a_tool_without_a_command_names_a_pattern_that_works(
    tmp_path: Path,
) -> None:
    harness = build_harness(tmp_path, config={"approvals": {"policy": "manual"}})
    try:
        denied = harness.call("todo_list", {})
        assert denied.error_code == "DENIED"
        assert "add 'todo_list' to approvals.allow" in (denied.error_message or "")
        assert "todo_list:*" not in (denied.error_message or "")
        allowed = build_harness(
            tmp_path / "allowed",
            config={"approvals": {"policy": "manual", "allow": ["todo_list"]}},
        )
        try:
            assert not allowed.call("todo_list", {}).is_error
        finally:
            allowed.close()
    finally:
        harness.close()
