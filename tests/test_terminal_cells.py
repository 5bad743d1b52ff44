"""The characters a person sees in a text (:func:`hermes_core._terminal_cells.characters`), what
the chat's line and every table are cut and measured by: flags are pairs of regional
indicators, however long their run."""

from __future__ import annotations

import time

from hypothesis import given
from hypothesis import strategies as st

from hermes_core._terminal_cells import cells, characters, cut, joins

FR, DE, IT = "\U0001f1eb\U0001f1f7", "\U0001f1e9\U0001f1ea", "\U0001f1ee\U0001f1f9"
LONE = "\U0001f1ee"  # a regional indicator without its pair


def test_an_odd_run_of_regional_indicators_ends_with_a_lone_one() -> None:
    """Indicators pair from the run's start: the last of an odd run is a character of its own,
    one cell (as terminals draw a lone indicator); a mark or a letter starts a new run."""
    assert list(characters(FR + DE + LONE)) == [FR, DE, LONE]
    assert cells(FR + DE + LONE) == 5
    assert list(characters("a" + FR + LONE + "b" + LONE + IT)) == [
        "a",
        FR,
        LONE,
        "b",
        LONE + IT[0],
        IT[1],
    ]
    assert list(characters(LONE + "\u0301" + FR)) == [LONE + "\u0301", FR]
    assert list(characters(LONE + "\u200d" + LONE)) == [LONE + "\u200d", LONE]
    assert cut(FR + DE + LONE, 5) == FR + DE + LONE
    assert cut(FR + DE + LONE + "x", 5) == FR + DE + "…"


def test_characters_end_where_a_character_does_not_join_the_one_before() -> None:
    """:func:`characters` and :func:`joins` are the one rule: each character starts where
    ``joins`` says the text's character does not belong to the one before it."""
    texts = [
        FR * 3 + LONE,
        LONE + FR + "\u0301" + FR + "\u200d" + FR,
        "\U0001f469\u200d\U0001f4bb" + FR + "\U0001f44d\U0001f3fd" + "\u2764\ufe0f",
        "\u1112\u1161\u11ab" + "\u0915\u093e" + "e\u0301" + "日本",
        "\U0001f468\u200d" * 5 + LONE * 5,
    ]
    for text in texts:
        starts = [at for at in range(len(text)) if not joins(text, at)]
        pieces = list(characters(text))
        assert "".join(pieces) == text
        assert [sum(map(len, pieces[:n])) for n in range(len(pieces))] == starts, ascii(text)


def test_a_long_run_of_flags_is_cut_into_characters_in_linear_time() -> None:
    """20,000 regional indicators (10,000 flags, a pasted line or a table's cell): each was
    asked whether it joins by counting the whole run before it, so the characters took time
    growing with the square of the run (10,000 indicators 17 s, 20,000 43 s)."""
    text = FR * 10_000 + LONE
    started = time.process_time()
    pieces = list(characters(text))
    shown = cut(text, 10_000)
    elapsed = time.process_time() - started

    assert elapsed < 2.0, f"the characters of 20,001 indicators took {elapsed:.1f} s"
    assert pieces == [FR] * 10_000 + [LONE]
    assert shown == FR * 4_999 + "…"


_MIXED = st.sampled_from(
    [
        "a",
        "é",
        "\u0301",  # a combining mark
        "\u200d",  # the zero width joiner
        "\ufe0f",
        "\U0001f3fd",  # a skin tone
        "\U0001f1eb",
        "\U0001f1f7",
        "\U0001f1e9",  # regional indicators
        "\U0001f468",
        "\U0001f469",
        "\u2764",  # pictographs
        "\u4e00",
        " ",
    ]
)


@given(st.lists(_MIXED, max_size=60).map("".join))
def test_characters_cut_where_joins_says_for_any_mix_of_flags_joiners_and_marks(
    text: str,
) -> None:
    """The linear cut (the run of indicators counted as the text is read) cuts where
    :func:`joins`, which counts each run back from its position, says: the rule of before."""
    expected: list[str] = []
    start = 0
    for at in range(1, len(text) + 1):
        if at == len(text) or not joins(text, at):
            expected.append(text[start:at])
            start = at
    assert list(characters(text)) == expected
