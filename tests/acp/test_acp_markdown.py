"""What a tool call shows, as an editor draws it: Zed renders every text of a tool call as
Markdown, so a command, code, a tool's result, a progress report and an approval question go
as fenced code blocks (a fence longer than any run of backticks in them), shown as written:
line breaks kept, ``*``, ``_``, ``#`` and ``<tags>`` not taken for formatting. A subagent's
answer, Markdown a model wrote, goes as it is. In process, over a loopback socket pair, with
the real bundled tools; the model is a fake (no model can run here)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from acp_client import serving

from hermes_core import Environment
from hermes_core.testing import FakeModelProvider, fake_turn

pytestmark = pytest.mark.anyio

OUTPUT = "# not a heading\n*kept* _as_ <b>written</b>\n```\nfenced inside\n```"
COMMAND = f"printf '%s\\n' '{OUTPUT}' > /dev/null; cat out.txt; echo a*b*c"
CODE = "# a comment, no heading\nprint(2 * 3 * 4)\n"


def _unfenced(text: str) -> tuple[str, str]:
    """The info string and the text inside a fenced code block that ``text`` must be whole;
    its fence is longer than any run of backticks inside."""
    match = re.fullmatch(r"(`{3,})([^`\n]*)\n(.*)\n\1", text, re.DOTALL)
    assert match, f"not one fenced code block: {text!r}"
    fence, info, inside = match.groups()
    assert all(len(run) < len(fence) for run in re.findall(r"`+", inside)), text
    return info, inside


def _texts(content: list[Any] | None) -> list[str]:
    return [item.content.text for item in content or [] if item.type == "content"]


async def test_a_command_its_output_and_code_are_fenced_as_written(acp_env: Environment) -> None:
    (acp_env.cwd / "out.txt").write_text(OUTPUT + "\n", encoding="utf-8")
    model = FakeModelProvider.scripted(
        fake_turn("", ("terminal", {"command": COMMAND}), ("execute_code", {"code": CODE})),
        "Done.",
    )
    async with serving(acp_env, model) as served:
        session_id = await served.start(acp_env.cwd)
        answer = await served.say(session_id, "run them")
        client = served.client
    assert answer.stop_reason == "end_turn"
    ends = [
        u
        for u in client.updates
        if u.session_update == "tool_call_update" and u.status in ("completed", "failed")
    ]
    command, code = (_texts(update.content) for update in ends)
    assert [_unfenced(text)[1] for text in command[:1]] == [f"$ {COMMAND}"]
    assert OUTPUT in _unfenced(command[1])[1]  # the whole output, backticks and all
    assert "a*b*c" in _unfenced(command[1])[1]
    assert _unfenced(code[0]) == ("python", CODE.rstrip("\n"))
    # The model reads the result as the tool wrote it, no fence added.
    assert not model.requests[1].messages[-2].content.startswith("`")
    # The person approving saw the command whole, as a code block too.
    for tool_call, _options in client.permissions:
        for text in _texts(tool_call.content):
            _unfenced(text)


async def test_a_failed_call_and_a_read_file_are_fenced(acp_env: Environment) -> None:
    (acp_env.cwd / "notes.md").write_text("# Title\n\n* item\n", encoding="utf-8")
    model = FakeModelProvider.scripted(
        fake_turn(
            "",
            ("read_file", {"path": "notes.md"}),
            ("read_file", {"path": "missing_file_*.md"}),
        ),
        "Read.",
    )
    async with serving(acp_env, model) as served:
        session_id = await served.start(acp_env.cwd)
        await served.say(session_id, "read")
        client = served.client
    ends = [
        u
        for u in client.updates
        if u.session_update == "tool_call_update" and u.status in ("completed", "failed")
    ]
    assert [u.status for u in ends] == ["completed", "failed"]
    read, failed = (_texts(update.content) for update in ends)
    assert "# Title\n\n* item" in _unfenced(read[0])[1]
    assert "missing_file_*.md" in _unfenced(failed[0])[1]


async def test_a_title_shows_its_command_and_path_as_code(acp_env: Environment) -> None:
    """Zed renders a call's title as Markdown too: the command and the path it names go in a
    code span, whose backticks outnumber any run inside (padded when it starts or ends with
    one), so ``a*b*c`` keeps its stars and a backtick of the command stays shown."""
    (acp_env.cwd / "a_b_*.txt").write_text("x\n", encoding="utf-8")
    model = FakeModelProvider.scripted(
        fake_turn(
            "",
            ("terminal", {"command": "echo a*b*c `whoami`"}),
            ("read_file", {"path": "a_b_*.txt"}),
        ),
        "Done.",
    )
    async with serving(acp_env, model) as served:
        session_id = await served.start(acp_env.cwd)
        await served.say(session_id, "go")
        client = served.client
    titles = [u.title for u in client.updates if u.session_update == "tool_call"]
    assert titles == ["terminal: `` echo a*b*c `whoami` ``", "read_file `a_b_*.txt`"]
    [(asked, _options)] = client.permissions
    assert asked.title == titles[0]
