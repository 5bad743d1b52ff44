"""Allow and deny globs over shell commands: every way of running a denied command is refused,
and a wildcard allow glob approves only commands it can read whole.

The probes run the real approval path: the terminal tool through the dispatcher, a real shell,
and a file the command must not have removed (or created)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from builders import Harness, build_harness

from hermes_core._approvals import GlobRules, read_command_line


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


ALLOW_ALL_BUT_RM = {"approvals": {"allow": ["terminal:*"], "deny": ["terminal:rm *"]}}

# Each removes the file ``x`` (or would, were it not refused), as a person or a model would try.
WAYS_OF_RUNNING_RM = [
    pytest.param("rm x", id="plain"),
    pytest.param("/bin/rm x", id="absolute-path"),
    pytest.param("./../../../../../../../bin/rm x", id="relative-path"),
    pytest.param("\\rm x", id="backslash"),
    pytest.param("'rm' x", id="single-quoted"),
    pytest.param('"rm" x', id="double-quoted"),
    pytest.param("r''m x", id="empty-quotes-inside"),
    pytest.param("r\\m x", id="escaped-letter"),
    pytest.param("r\\\nm x", id="line-continuation-inside"),
    pytest.param("command rm x", id="command"),
    pytest.param("command -p rm x", id="command-p"),
    pytest.param("builtin command rm x", id="builtin-command"),
    pytest.param("env rm x", id="env"),
    pytest.param("env -i rm x", id="env-i"),
    pytest.param("env - rm x", id="env-dash"),
    pytest.param("env -u HOME -- X=1 rm x", id="env-options-and-assignment"),
    pytest.param("X=1 rm x", id="assignment"),
    pytest.param("X=1 Y='a b' rm x", id="two-assignments"),
    pytest.param("$(echo rm) x", id="command-substitution"),
    pytest.param("`echo rm` x", id="backquotes"),
    pytest.param('"$(echo rm)" x', id="quoted-command-substitution"),
    pytest.param("echo $((rm x) )", id="subshell-looking-like-arithmetic"),
    pytest.param("echo $(( $(rm x) 1 ))", id="substitution-in-arithmetic"),
    pytest.param("RM=rm; $RM x", id="variable-as-command"),
    pytest.param("/bin/r? x", id="glob-as-command"),
    pytest.param("$'rm' x", id="ansi-c-quoting"),
    pytest.param("xargs rm", id="xargs"),
    pytest.param("echo x | xargs rm", id="pipe-into-xargs"),
    pytest.param("echo x | xargs -n 1 -I{} rm {}", id="xargs-options"),
    pytest.param("echo rm x | xargs env", id="xargs-into-a-wrapper"),
    pytest.param("echo rm x | xargs xargs", id="xargs-into-xargs"),
    pytest.param("echo 'rm x' | xargs sh -c", id="xargs-into-sh-c"),
    pytest.param("echo 'rm x' | xargs -I@ sh -c @", id="xargs-replace-into-sh-c"),
    pytest.param("echo rm | xargs -I% % x", id="xargs-replace-as-command"),
    pytest.param("rm\tx", id="tab"),
    pytest.param("sudo rm x", id="sudo"),
    pytest.param("sudo -u root rm x", id="sudo-user"),
    pytest.param("nice -n 5 rm x", id="nice"),
    pytest.param("nohup rm x", id="nohup"),
    pytest.param("exec rm x", id="exec"),
    pytest.param("time rm x", id="time"),
    pytest.param("timeout 5 rm x", id="timeout"),
    pytest.param("setsid -w rm x", id="setsid"),
    pytest.param("nohup nice env X=1 command rm x", id="wrappers-stacked"),
    pytest.param("ls; rm x", id="semicolon"),
    pytest.param("ls && rm x", id="and"),
    pytest.param("ls || rm x", id="or"),
    pytest.param("false || rm x", id="or-after-failure"),
    pytest.param("ls & rm x", id="background"),
    pytest.param("ls | rm x", id="pipe"),
    pytest.param("(rm x)", id="subshell"),
    pytest.param("{ rm x; }", id="group"),
    pytest.param("time { rm x; }", id="timed-group"),
    pytest.param("coproc rm x", id="coproc"),
    pytest.param("rm{,} x", id="brace-expansion"),
    pytest.param("rm${IFS}x", id="ifs"),
    pytest.param("if true; then rm x; fi", id="if"),
    pytest.param('for f in x; do rm "$f"; done', id="for"),
    pytest.param("f() { rm x; }; f", id="function"),
    pytest.param(">out rm x", id="redirection-first"),
    pytest.param("eval rm x", id="eval"),
    pytest.param("bash -c 'rm x'", id="bash-c"),
    pytest.param('sh -ec "rm x"', id="sh-ec"),
    pytest.param("bash -c \"sh -c 'nice rm x'\"", id="nested-shells"),
    pytest.param("echo rm x | sh", id="pipe-into-sh"),
    pytest.param("bash <<< 'rm x'", id="here-string-into-bash"),
    pytest.param("bash /dev/stdin <<< 'rm x'", id="bash-dev-stdin"),
    pytest.param("source /dev/stdin <<< 'rm x'", id="source-dev-stdin"),
    pytest.param(". /proc/self/fd/0 <<< 'rm x'", id="dot-proc-fd"),
    pytest.param("bash //dev/fd/0 <<< 'rm x'", id="bash-double-slash-dev-fd"),
    pytest.param("cat <<EOF | sh\nrm x\nEOF", id="here-document"),
    pytest.param("find . -name x -exec rm {} \\;", id="find-exec"),
    pytest.param("trap 'rm x' EXIT", id="trap"),
    pytest.param("ls\nrm x", id="newline"),
    pytest.param("ls\n\n  rm x  \n", id="blank-lines"),
    pytest.param("echo 'unbalanced; rm x", id="unbalanced-quote"),
]


@pytest.mark.subprocess
@pytest.mark.parametrize("command", WAYS_OF_RUNNING_RM)
def test_deny_rule_refuses_every_way_of_running_the_denied_command(
    harnesses: Callable[..., Harness], command: str
) -> None:
    harness = harnesses(ALLOW_ALL_BUT_RM)
    victim = harness.env.cwd / "x"
    victim.write_text("precious")

    result = harness.call("terminal", {"command": command})

    assert result.error_code == "DENIED", result.text_content
    assert "'terminal:rm *' in approvals.deny" in result.text_content
    assert victim.read_text() == "precious"


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("ls $(echo x)", "command substitution"),
        ("ls `echo x`", "command substitution"),
        ("diff <(ls) x", "process substitution"),
        ("cat <<EOF\nx\nEOF", "here-document"),
        ("eval ls", "eval"),
        ("$CMD x", "a command name known only when the shell runs it"),
        ("echo ls | bash", "a shell reading commands from its input"),
        ("echo 'x", "unbalanced quotes"),
    ],
)
def test_deny_rule_refuses_a_command_line_it_cannot_read_saying_why(
    harnesses: Callable[..., Harness], command: str, why: str
) -> None:
    harness = harnesses(ALLOW_ALL_BUT_RM)

    result = harness.call("terminal", {"command": command})

    assert result.error_code == "DENIED"
    assert "terminal:rm *" in result.text_content
    assert why in result.text_content


@pytest.mark.subprocess
@pytest.mark.parametrize(
    "command",
    [
        "ls x",
        "echo rm x",
        "grep -c rm x",
        "echo 'rm x; rm x'",
        "ls x # ; rm x",
        "X=rm ls x",
        "command -v rm",
        "[ -f x ] && echo kept",
        'echo $((1 + 2)) "$(( 3 * 4 ))"',
        "bash -c 'ls x'",
        "mkdir -p tools/dev && echo ls > tools/dev/list.sh && bash tools/dev/list.sh",
        "find . -name x -exec ls {} \\;",
    ],
)
def test_deny_rule_lets_commands_that_only_mention_the_denied_command_run(
    harnesses: Callable[..., Harness], command: str
) -> None:
    harness = harnesses(ALLOW_ALL_BUT_RM)
    (harness.env.cwd / "x").write_text("precious")

    result = harness.call("terminal", {"command": command})

    assert not result.is_error, result.text_content
    assert (harness.env.cwd / "x").read_text() == "precious"


@pytest.mark.subprocess
def test_deny_rule_with_a_wildcard_refuses_the_command_without_arguments(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses({"approvals": {"policy": "off", "deny": ["terminal:git push *"]}})

    result = harness.call("terminal", {"command": "git push"})

    assert result.error_code == "DENIED"


@pytest.mark.subprocess
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


@pytest.mark.subprocess
def test_catch_all_allow_glob_still_approves_every_command_line(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses({"approvals": {"allow": ["terminal:*"]}})

    result = harness.call("terminal", {"command": "echo one\necho $(echo two) > made.txt"})

    assert not result.is_error, result.text_content
    assert (harness.env.cwd / "made.txt").read_text() == "two\n"


@pytest.mark.subprocess
@pytest.mark.parametrize(
    "command",
    [
        'echo "$(touch pwned)"',
        "echo `touch pwned`",
        "echo <(touch pwned)",
        "eval touch pwned",
        "echo touch pwned | sh",
        "cat <<EOF | sh\ntouch pwned\nEOF",
        "ls $(touch pwned)",
    ],
)
def test_wildcard_allow_glob_never_approves_a_command_line_it_cannot_read(
    harnesses: Callable[..., Harness], command: str
) -> None:
    harness = harnesses(
        {
            "approvals": {
                "allow": [
                    "terminal:echo *",
                    "terminal:eval *",
                    "terminal:cat *",
                    "terminal:sh",
                    "terminal:ls *",
                ]
            }
        }
    )

    result = harness.call("terminal", {"command": command})

    assert result.error_code == "DENIED"
    assert "needs approval" in result.text_content
    assert not (harness.env.cwd / "pwned").exists()


@pytest.mark.subprocess
def test_allow_glob_reads_a_quoted_separator_as_part_of_an_argument(
    harnesses: Callable[..., Harness],
) -> None:
    harness = harnesses({"approvals": {"allow": ["terminal:echo *"]}})

    quoted = harness.call("terminal", {"command": "echo 'a; b' \"c && d\""})
    chained = harness.call("terminal", {"command": "echo 'a'; touch pwned"})

    assert not quoted.is_error, quoted.text_content
    assert "a; b c && d" in quoted.text_content
    assert chained.error_code == "DENIED"
    assert not (harness.env.cwd / "pwned").exists()


def test_command_line_reading_names_each_command_with_wrappers_looked_through() -> None:
    line = read_command_line("X=1 sudo -u root nice -n 5 /bin/rm -f 'a b' && ls | xargs rm")

    assert [segment.text for segment in line.segments] == [
        "X=1 sudo -u root nice -n 5 /bin/rm -f 'a b'",
        "ls",
        "xargs rm",
    ]
    assert line.segments[0].commands == (
        "sudo -u root nice -n 5 /bin/rm -f a b",
        "nice -n 5 /bin/rm -f a b",
        "rm -f a b",
        "/bin/rm -f a b",
    )
    assert line.segments[2].commands == ("xargs rm", "rm")
    assert line.unparseable == ""
    assert not line.redirects


def test_command_line_reading_follows_shell_c_into_the_nested_command_line() -> None:
    line = read_command_line("bash -c 'ls; rm x' && sh -c \"cd /tmp && rm -rf y\"")

    assert "rm x" in line.segments[0].commands
    assert "rm -rf y" in line.segments[1].commands
    assert read_command_line("sh -c 'echo $(rm x)'").unparseable == "command substitution"
    deep = "rm x"
    for _ in range(8):
        deep = "sh -c " + "'" + deep.replace("'", "'\\''") + "'"
    assert read_command_line(deep).unparseable == "shell commands nested too deep"


def test_command_line_reading_is_cached_for_the_deny_and_the_allow_pass() -> None:
    command = "git log -n 3 --oneline | head -3 && echo done"

    assert read_command_line(command) is read_command_line(command)


def test_a_hostile_command_line_costs_bounded_work_and_counts_as_unreadable() -> None:
    wrapped = "nice " * 20_000 + "rm x"

    line = read_command_line(wrapped)

    assert line.unparseable == "too many wrapped commands"
    assert len(line.segments[0].commands) <= 16


def test_glob_with_many_stars_matches_a_long_command_line_in_linear_time() -> None:
    import time

    rules = GlobRules(["terminal:*a*a*a*a*a*b"])
    started = time.perf_counter()

    found = rules.match(["terminal:" + "a" * 200_000])

    assert found is None
    assert time.perf_counter() - started < 2  # backtracking would take hours


def test_plain_command_lines_take_a_shortcut_that_reads_them_as_the_full_reader_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import random
    import re

    from hermes_core._approvals import shell, shell_words

    pieces = [
        "rm",
        "x",
        "-rf",
        "sudo",
        "-u",
        "nice",
        "xargs",
        "env",
        "A=1",
        "sh",
        "-c",
        "find",
        "-exec",
        "{}",
        "*.py",
        "[",
        "]",
        "!",
        "{",
        "}",
        "if",
        "then",
        "fi",
        "for",
        "do",
        "/bin/ls",
        "a,b",
        "~/x",
        ";",
        "&&",
        "||",
        "|",
        "&",
        "(",
        ")",
        "\n",
        "\t",
        " ",
    ]
    generator = random.Random(8)
    commands = [
        " ".join(generator.choice(pieces) for _ in range(generator.randint(0, 12)))
        for _ in range(2000)
    ]
    assert all(shell_words._PLAIN_LINE.fullmatch(command) for command in commands)

    shortcut = [shell._read(command, 0) for command in commands]
    monkeypatch.setattr(shell_words, "_PLAIN_LINE", re.compile("(?!)"))
    full = [shell._read(command, 0) for command in commands]

    assert shortcut == full
