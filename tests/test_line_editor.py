"""The chat's line editor fed the keys a terminal sends, in process: what each key does to the
line, what it draws, and the keys split across two reads as a terminal may hand them over.
The chat on a real pseudo-terminal is in ``tests/agent/test_cli_chat_editing.py``."""

from __future__ import annotations

import json
from pathlib import Path

from hermes_core._cli.chat_history import ChatHistory
from hermes_core._cli.line_editor import LineEditor, Typed

LEFT, UP, DOWN, DELETE = "\x1b[D", "\x1b[A", "\x1b[B", "\x1b[3~"


def editor(history: list[str] | None = None, columns: int = 80) -> tuple[LineEditor, list[str]]:
    drawn: list[str] = []
    return LineEditor(drawn.append, lambda: columns, history), drawn


def line(keys: str, history: list[str] | None = None) -> list[Typed]:
    return editor(history)[0].feed(keys)


def test_the_kill_keys_delete_to_the_ends_and_by_word() -> None:
    assert line("one two three\x17\r") == [("line", "one two ")]
    assert line("one two" + LEFT * 3 + "\x0b\r") == [("line", "one ")]
    assert line("one two" + LEFT * 3 + "\x15\r") == [("line", "two")]
    assert line("one two" + LEFT * 3 + "\x1bd\r") == [("line", "one ")]
    assert line("one two\x1b\x7f\r") == [("line", "one ")]
    assert line("abc" + LEFT * 2 + DELETE + "\x04\r") == [("line", "a")]


def test_ctrl_d_ends_input_on_an_empty_line_only() -> None:
    assert line("\x04") == [("end", "")]
    assert line("ab" + LEFT + "\x04\r") == [("line", "a")]


def test_down_past_the_newest_entry_gives_back_the_line_being_typed() -> None:
    assert line("dra" + UP + UP + DOWN + DOWN + "ft\r", ["old", "new"]) == [("line", "draft")]
    assert line(UP * 5 + "!\r", ["old", "new"]) == [("line", "old!")]


def test_ctrl_r_again_finds_an_older_match_and_ctrl_g_gives_up() -> None:
    history = ["make test", "git push", "make lint"]
    assert line("\x12make\x12\r", history) == [("line", "make test")]
    assert line("typed\x12git\x07\r", history) == [("line", "typed")]
    assert line("\x12push" + LEFT + "!\r", history) == [("line", "git pus!h")]
    assert line("\x12nothing like it\r", history) == [("line", "")]


def test_a_key_split_across_two_reads_is_one_key() -> None:
    edit, _ = editor()
    assert edit.feed("ab\x1b") == []
    assert edit.feed("[Dc\r") == [("line", "acb")]


def test_a_bracketed_paste_split_across_reads_is_one_paste() -> None:
    edit, _ = editor()
    assert edit.feed("x\x1b[200~one\ntw") == []
    assert edit.feed("o\x1b[2") == []
    assert edit.feed("01~y\r") == [("paste", "xone\ntwo"), ("line", "y")]


def test_a_pasted_line_is_put_on_the_line_without_its_control_characters() -> None:
    assert line("\x1b[200~a\x1b]52;c;x\x07b\x1b[201~\r") == [("line", "a]52;c;xb")]


def test_a_wrapped_line_is_redrawn_from_its_first_row() -> None:
    """10 columns, a 5-column prompt: the line's 8 characters take two rows, and Home goes
    up one row and right past the prompt."""
    edit, drawn = editor(columns=10)
    edit.origin = 5
    edit.feed("abcdefgh")
    drawn.clear()
    edit.feed("\x01")
    assert drawn == ["\r\x1b[1A\x1b[5C\x1b[Jabcdefgh\r\x1b[1A\x1b[5C"]
    assert edit.text == "abcdefgh"


def test_a_hidden_line_is_drawn_again_after_the_output_at_the_next_key() -> None:
    edit, drawn = editor()
    edit.feed("ab")
    assert edit.hide()
    edit.printed("partial answer")
    drawn.clear()
    edit.feed("c")
    assert "".join(drawn) == "\r\x1b[14C\x1b[Jab\r\x1b[16Cc"  # after the 14 columns printed
    assert edit.text == "abc"


def test_wide_characters_take_two_columns() -> None:
    edit, drawn = editor()
    edit.feed("日本" + LEFT)
    assert drawn[-1].endswith("\r\x1b[2C")


def test_a_wide_character_that_does_not_fit_the_row_is_counted_on_the_next() -> None:
    """10 columns, a 5-column prompt: two wide characters end at column 9, the third does not
    fit the last cell, so the terminal puts it at the next row's start (columns 0 and 1); after
    Left and Right the cursor goes back after it, column 2, not onto its second half."""
    edit, drawn = editor(columns=10)
    edit.origin = 5
    edit.feed("一二三")
    drawn.clear()
    edit.feed(LEFT + "\x1b[C")
    assert drawn[-1].endswith("一二三\r\x1b[2C")
    drawn.clear()
    edit.feed("x")
    assert drawn == ["x"]
    drawn.clear()
    edit.feed("\x01")  # Home: up one row from column 3, past the prompt
    assert drawn == ["\r\x1b[1A\x1b[5C\x1b[J一二三x\r\x1b[1A\x1b[5C"]


def test_marks_that_take_no_column_are_not_counted() -> None:
    """A variation selector, a zero-width joiner, a Devanagari sign (combining class 0, yet no
    column of its own): the cursor goes back over the columns drawn, no more."""
    for text in ("a\ufe0f", "a\u200d", "\u0915\u0902"):
        edit, drawn = editor()
        edit.feed(text + "b" + LEFT)
        assert drawn[-1].endswith("\r\x1b[1C"), text


def test_left_and_backspace_take_a_character_with_its_combining_marks() -> None:
    """A decomposed é (e and U+0301): one Left goes before it, one Backspace deletes it
    whole, as readline does."""
    assert line("ae\u0301" + LEFT + "b\r") == [("line", "abe\u0301")]
    assert line("ae\u0301\x7f\r") == [("line", "a")]
    assert line("e\u0301b" + LEFT * 2 + "\x1b[C" + "x\r") == [("line", "e\u0301xb")]
    assert line("e\u0301b" + "\x01" + DELETE + "\r") == [("line", "b")]


def test_backspace_as_terminals_send_it_deletes_the_character_before_the_cursor() -> None:
    """Most terminals send DEL (0x7f) for Backspace, some Ctrl-H: either deletes, and neither
    (nor another control character, C1's included) is put on the line."""
    assert line("abc\x7f\r") == [("line", "ab")]
    assert line("abc" + LEFT + "\x08\r") == [("line", "ac")]
    assert line("a\x9bb\x85\r") == [("line", "ab")]


def test_keys_the_editor_does_not_bind_put_nothing_on_the_line_and_take_no_other_key() -> None:
    """F-keys, PageUp, Shift-arrows, Shift-Tab, a mouse report, as xterm, the Linux console
    and rxvt send them (rxvt ends its Shift, Ctrl and Ctrl-Shift keys with $, ^ and @):
    ignored, the key after them typed as usual."""
    keys = ["\x1bOP", "\x1b[15;2~", "\x1b[5~", "\x1b[1;2A", "\x1b[Z", "\x1b[[A", "\x1bO2P"]
    keys += ["\x1b[<0;3;4M", "\x1b[23$", "\x1b[7^", "\x1b[11@", "\x1b[a"]
    for key in keys:
        assert line("a" + key + "b\r") == [("line", "ab")], key


def test_a_history_line_with_control_characters_is_never_drawn(tmp_path: Path) -> None:
    """The editor never keeps a message with control characters (a paste of several lines is
    not kept, a one-line paste loses them), so a history line holding one was written by
    something else: an escape sequence in it would drive the terminal when Up draws it."""
    path = tmp_path / "chat_history"
    planted = "\x1b]0;pwned\x07ls \x1b[2J"
    path.write_text(
        "".join(json.dumps(entry) + "\n" for entry in ["mine", planted, "tab\there"]),
        encoding="utf-8",
    )
    assert ChatHistory(path).entries == ["mine", "tab\there"]


COMMANDS = ("/help", "/stop", "/compact", "/new", "/resume", "/exit")


def completing(keys: str) -> tuple[list[Typed], str]:
    """``keys`` fed to an editor whose Tab completes the chat's commands; what they completed
    and all that was drawn."""
    edit, drawn = editor()
    edit.commands = lambda: COMMANDS
    return edit.feed(keys), "".join(drawn)


def test_tab_completes_a_chat_command() -> None:
    assert completing("/com\t\r")[0] == [("line", "/compact")]
    assert completing("/e\t\r")[0] == [("line", "/exit")]


def test_tab_completes_the_common_prefix_and_a_second_tab_lists_the_matches() -> None:
    edit, drawn = editor()
    edit.commands = lambda: ("/resume", "/reset", "/help")
    edit.printed("you> ")
    assert edit.feed("/r\t") == []
    assert edit.text == "/res"
    drawn.clear()
    assert edit.feed("\t") == []
    listed = "".join(drawn)
    assert "/resume  /reset\r\nyou> " in listed
    assert listed.rindex("/res") > listed.index("you> ")
    assert edit.feed("u\t\r") == [("line", "/resume")]


def test_tab_outside_a_command_word_is_a_tab_in_the_message() -> None:
    """As before the editor, when the terminal's line mode put a tab in the line: on any
    line but a ``/`` word starting a command (a path, a word no command starts with)."""
    assert completing("say\t\r")[0] == [("line", "say\t")]
    assert completing("/resume \t\r")[0] == [("line", "/resume \t")]
    for word in ("/usr/lo", "/xyz", "/compactly"):
        typed, drawn = completing(word + "\t\r")
        assert typed == [("line", word + "\t")], word
        assert "\x07" not in drawn, word


def test_tab_after_a_command_s_full_name_rings_the_bell() -> None:
    typed, drawn = completing("/exit\t\r")
    assert typed == [("line", "/exit")]
    assert "\x07" in drawn


def test_tab_completes_nothing_where_the_editor_has_no_commands() -> None:
    assert line("/com\t\r") == [("line", "/com\t")]


def test_a_resize_draws_the_wrapped_line_again_at_the_new_width() -> None:
    """10 columns, a 5-column prompt: 8 characters end on the second row, column 3. At 20
    columns the terminal rewraps them onto the prompt's row: the line is drawn again from
    there, the cursor after it (column 13), no row above it touched; at 6 columns it is
    drawn again over three rows."""
    width = [10]
    drawn: list[str] = []
    edit = LineEditor(drawn.append, lambda: width[0])
    edit.origin = 5
    edit.feed("abcdefgh")
    width[0] = 20
    drawn.clear()
    edit.resized()
    assert drawn == ["\r\x1b[5C\x1b[Jabcdefgh\r\x1b[13C"]
    width[0] = 6
    drawn.clear()
    edit.resized()
    assert drawn == ["\r\x1b[2A\x1b[5C\x1b[Jabcdefgh\r\x1b[1C"]
    assert edit.feed("\r") == [("line", "abcdefgh")]


def test_a_line_filling_its_row_wraps_as_the_terminal_wraps_it() -> None:
    """At the last column the cursor is put on the next row by a space the terminal wraps
    (then a carriage return), not by a new line: a terminal that rewraps its rows on a resize
    keeps the line one line."""
    edit, drawn = editor(columns=10)
    edit.origin = 5
    edit.feed("abcde")
    assert drawn == ["abcde \r"]
    edit.feed("f")
    assert drawn[-1] == "f"
    assert edit.feed("\r") == [("line", "abcdef")]


def test_a_bracketed_paste_goes_in_at_the_cursor() -> None:
    paste = "\x1b[200~{}\x1b[201~"
    assert line("ab" + LEFT + paste.format("one\ntwo")) == [("paste", "aone\ntwob")]
    assert line("ab" + LEFT + paste.format("one\ntwo\n")) == [("paste", "aone\ntwo\nb")]
    assert line("ab" + LEFT + paste.format("xy") + "\r") == [("line", "axyb")]


def test_output_that_fills_its_row_is_not_drawn_over() -> None:
    """A streamed answer's piece ends at the row's last column: the terminal waits to wrap,
    its cursor still on that row, where a carriage return would go back to the answer's
    start and the line erase it. A space the terminal wraps first puts the line on the next
    row."""
    edit, drawn = editor(columns=10)
    edit.feed("ab")
    assert edit.hide()
    edit.printed("0123456789")
    drawn.clear()
    edit.redraw()
    assert drawn == [" \r\x1b[Jab\r\x1b[2C"]
    assert edit.hide()
    assert drawn[-1] == "\r\x1b[J"


def test_ctrl_y_puts_back_what_the_last_kills_took() -> None:
    """As readline: what a kill key took is yanked back at the cursor; kills one after the
    other take one text together (two Ctrl-W: both words)."""
    assert line("abc\x15x\x19\r") == [("line", "xabc")]
    assert line("one two three\x17\x17\x19\r") == [("line", "one two three")]
    assert line("one two" + LEFT * 3 + "\x0b\x01\x19\r") == [("line", "twoone ")]
    assert line("one two" + "\x01\x1bd\x1bd\x19\r") == [("line", "one two")]
    assert line("one two\x17x\x17\x19\r") == [("line", "one x")]
    assert line("\x19ok\r") == [("line", "ok")]


def test_ctrl_l_clears_the_screen_and_draws_the_prompt_and_the_line_at_its_top() -> None:
    edit, drawn = editor()
    edit.printed("you> ")
    edit.feed("ab" + LEFT)
    drawn.clear()
    assert edit.feed("\x0c") == []
    assert drawn == ["\x1b[H\x1b[2Jyou> \r\x1b[5C\x1b[Jab\r\x1b[6C"]
    assert edit.feed("\r") == [("line", "ab")]


def test_output_with_a_tab_puts_the_line_after_the_tab_stop() -> None:
    """A streamed answer's tab (code, a table) moves the terminal's cursor to the next tab
    stop, every 8 columns: the line is drawn there, and erased from there before the next
    piece, not over the answer."""
    edit, drawn = editor()
    edit.feed("ab")
    assert edit.hide()
    edit.printed("\tx")
    drawn.clear()
    edit.redraw()
    assert drawn == ["\r\x1b[9C\x1b[Jab\r\x1b[11C"]
    assert edit.hide()
    edit.printed("yz\t")
    assert edit.origin == 16


def test_alt_with_an_arrow_sent_as_escape_and_the_arrow_s_sequence_moves_by_word() -> None:
    """iTerm2 with Option as Esc+ sends Option-Left as ESC and Left's own sequence: a word
    back, as Alt-B (the sequence's ``[D`` was typed into the line); another key sent so
    puts nothing on the line."""
    assert line("one two" + "\x1b\x1b[D" + "x\r") == [("line", "one xtwo")]
    assert line("one two" + "\x01\x1b\x1bOC" + "x\r") == [("line", "onex two")]
    assert line("a" + "\x1b\x1b[A" + "b\r") == [("line", "ab")]
    edit, _ = editor()
    assert edit.feed("ab\x1b\x1b") == []
    assert edit.feed("[Dc\r") == [("line", "cab")]


def test_an_emoji_sequence_takes_the_two_columns_of_one_emoji() -> None:
    """A person coding (woman, joiner, laptop), a rainbow flag (flag, variation selector,
    joiner, rainbow), a flag (two regional indicators), a thumb with a skin tone, a heart with
    its emoji variation selector: each one emoji of two cells, as terminals draw them."""
    for text in ("👩\u200d💻", "🏳\ufe0f\u200d🌈", "🇫🇷", "👍🏽", "❤\ufe0f"):
        edit, drawn = editor()
        edit.feed(text + "b" + LEFT)
        assert drawn[-1].endswith("\r\x1b[2C"), text


def test_left_and_backspace_take_an_emoji_sequence_whole() -> None:
    assert line("a👩\u200d💻\x7f\r") == [("line", "a")]
    assert line("🇫🇷🇩🇪" + LEFT + "x\r") == [("line", "🇫🇷x🇩🇪")]
    assert line("👍🏽b" + LEFT * 2 + DELETE + "\r") == [("line", "b")]


HANGUL = "\u1112\u1161\u11ab"  # 한 typed as three conjoining jamo: leading, vowel, trailing
DEVANAGARI = "\u0915\u093e"  # का: the letter ka and its vowel sign aa, a spacing mark (Mc)


def test_a_hangul_syllable_of_conjoining_jamo_is_one_character_of_two_cells() -> None:
    """A leading jamo with its vowel (and a trailing jamo): one syllable, drawn in the leading
    jamo's two cells (the others take none, as xterm, VTE and kitty draw them); Left and
    Backspace take it whole."""
    for text in (HANGUL, "\u1100\u1161", "\ud558\u11ab"):  # the last: 하 precomposed, and ㄴ
        edit, drawn = editor()
        edit.feed(text + "b" + LEFT)
        assert drawn[-1].endswith("\r\x1b[2C"), ascii(text)
    assert line("a" + HANGUL + "\x7f\r") == [("line", "a")]
    assert line(HANGUL + "b" + LEFT * 2 + "x\r") == [("line", "x" + HANGUL + "b")]


def test_a_spacing_mark_belongs_to_its_letter_and_takes_its_own_cell() -> None:
    """A Devanagari vowel sign after its consonant (category Mc): one character with it, as
    UAX #29 groups them, so Left and Backspace take the syllable whole; the sign takes a cell
    of its own, as terminals draw it (wcwidth 1)."""
    edit, drawn = editor()
    edit.feed(DEVANAGARI + "b" + LEFT)
    assert drawn[-1].endswith("\r\x1b[2C")
    assert line("a" + DEVANAGARI + "\x7f\r") == [("line", "a")]
    assert line("a\u0915\u094c" + LEFT + "x\r") == [("line", "ax\u0915\u094c")]
    assert line("\u0915\u093f\u0902b" + LEFT * 2 + DELETE + "\r") == [("line", "b")]


def test_ctrl_r_draws_its_search_over_the_prompt_and_ctrl_g_puts_the_prompt_back() -> None:
    """As readline: ``(reverse-i-search)`q': match`` from the row's start, where ``you> `` was
    (not after it); ``failed`` when nothing matches; Ctrl-G draws the prompt and the line
    typed before the search again."""
    edit, drawn = editor(["make test", "git push"])
    edit.printed("you> ")
    edit.feed("typed\x12ma")
    assert drawn[-1].endswith("\r\x1b[J(reverse-i-search)`ma': make test\r\x1b[24C"), drawn
    drawn.clear()
    edit.feed("z")
    assert "\x1b[J(failed reverse-i-search)`maz': typed" in drawn[-1], drawn
    drawn.clear()
    edit.feed("\x07")
    assert drawn[-1].endswith("\r\x1b[Jyou> \r\x1b[5C\x1b[Jtyped\r\x1b[10C"), drawn
    assert edit.feed("\r") == [("line", "typed")]


def test_escape_in_a_search_gives_it_up_and_a_found_line_taken_is_drawn_after_the_prompt() -> None:
    history = ["make test", "git push"]
    edit, drawn = editor(history)
    edit.printed("you> ")
    assert edit.feed("typed\x12git\x1b") == []  # Escape: a lone ESC, nothing after it
    assert drawn[-1].endswith("\r\x1b[Jyou> \r\x1b[5C\x1b[Jtyped\r\x1b[10C"), drawn
    assert edit.feed("!\r") == [("line", "typed!")]
    assert line("typed\x12git\x1b", history) == []
    edit, drawn = editor(history)
    edit.printed("you> ")
    assert edit.feed("\x12git" + LEFT + "!\r") == [("line", "git pus!h")]
    assert "you> \r\x1b[5C\x1b[Jgit push" in "".join(drawn), drawn
