"""lessons/positions_text.py: the position lesson's paragraphs quote the numbers they are given, formatted as the page
shows them, with singular and plural right. (The page test, tests/test_page_positions.py, holds the numbers on screen
to the computations.)"""

from __future__ import annotations

import pytest

import lessons.positions_text as text
from attention.pretrained import MODEL_NAME
from lessons.positions import WORD_PIECES, TableReading, alibi_unmasked

CONSTANTS = {name: value for name, value in vars(text).items() if name.isupper() and isinstance(value, str)}


def test_every_paragraph_is_filled_in_and_names_the_model_where_it_speaks_of_it():
    assert len(CONSTANTS) >= 12
    for name, value in CONSTANTS.items():
        assert value.strip() and "{" not in value and "}" not in value, name  # an f-string that lost its f
        assert "  " not in value.replace("  \n", ""), name  # two joined string pieces, one space too many
    for name in ("LEARNED_INTRO", "LEARNED_NOT_INSTALLED", "LEARNED_COLUMN_MISSING"):
        assert MODEL_NAME in CONSTANTS[name]
    assert WORD_PIECES in text.LEARNED_HEAD_INTRO


def test_the_two_orders_are_on_two_lines_with_the_shuffle_number():
    shown = text.the_two_orders("the dog sat", 7, "sat the dog")
    assert shown == "**Original order:** the dog sat  \n**Shuffle 7:** sat the dog"


@pytest.mark.parametrize(("bound", "quoted"), [(0.0, "0"), (3.3e-16, "3.3e-16"), (1.234e-15, "1.2e-15")])
def test_the_rounding_caption_quotes_the_bound_without_rounding_it_to_zero(bound, quoted):
    caption = text.rounding_caption(bound, 8)
    assert f"(at most {quoted}) are rounding" in caption
    assert caption.endswith(" " + alibi_unmasked(8))
    assert alibi_unmasked(4) in text.rounding_caption(bound, 4)


def test_the_learned_columns_caption_names_the_head_chosen():
    assert f"{MODEL_NAME}'s first layer, head 5 (chosen in section 2)" in text.learned_columns_caption(5)
    assert "head 11 (" in text.learned_columns_caption(11)


def reading(norm_0=1.2468, norm_rest=0.8712, far=True) -> TableReading:
    distances = (1, 2, 3, 100, 200) if far else (1, 2, 3)
    cosines = (0.714, 0.5, 0.3, 0.12, 0.061) if far else (0.714, 0.5, 0.3)
    return TableReading(distances, cosines, norm_0, norm_rest, peaks=(10, 20, 31))


def test_the_learned_table_reading_quotes_its_reading():
    paragraph = text.learned_table_reading(reading())
    assert "(cosine 0.71 one step apart)" in paragraph
    assert (
        reading().ripple_text() in paragraph and "(mean cosine 0.12 at 100, 0.06 at 200 positions apart)" in paragraph
    )
    assert "its vector is 1.25 long, the others about 0.87." in paragraph
    assert "(show 128 positions or more" in text.learned_table_reading(reading(far=False))


def test_the_shift_matrix_caption_says_which_corner_is_drawn():
    caption = text.shift_matrix_caption(3, 64, 16)
    assert caption.startswith("M_3 for d = 64, its first 16 rows and columns")
    assert text.shift_matrix_caption(5, 8, 8).startswith("M_5 for d = 8, its first 8 rows")


@pytest.mark.parametrize(("shift", "table_d", "root"), [(3, 64, "√32 ≈ 5.66"), (10, 16, "√8 ≈ 2.83"), (1, 2, "√1 ≈ 1")])
def test_the_row_length_paragraph_moves_the_positions_by_the_shift_and_quotes_the_length(shift, table_d, root):
    paragraph = text.row_length_paragraph(shift, table_d)
    assert paragraph.startswith(f"M_{shift} does not depend on p: the same matrix moves position 0 to {shift}, and 50 ")
    assert f"and 50 to {50 + shift}." in paragraph
    assert paragraph.endswith(f"same length, √(d/2) = {root}.")


def test_the_rope_paragraph_quotes_the_first_word():
    assert "Word 1's query ('dog') against its own key" in text.rope_offset_paragraph("dog")


@pytest.mark.parametrize(
    ("window", "layers", "hops", "blank"),
    [
        (2, 1, "at most 1 position.", "not within 1 layer."),
        (3, 1, "at most 2 positions.", "not within 1 layer."),
        (5, 3, "at most 4 positions.", "not within 3 layers."),
        (1, 2, "at most 0 positions.", "not within 2 layers."),
    ],
)
def test_the_reach_paragraph_counts_hops_and_layers_in_the_singular_and_the_plural(window, layers, hops, blank):
    paragraph = text.reach_paragraph(window, layers)
    assert f"arrives through ℓ hops of {hops} Blank: {blank}" in paragraph


@pytest.mark.parametrize(
    ("number", "length", "padded", "heading"),
    [(1, 1, 4, "**Sequence 1**: 1 word, padded to 4"), (2, 3, 4, "**Sequence 2**: 3 words, padded to 4")],
)
def test_the_sequence_heading_counts_its_words(number, length, padded, heading):
    assert text.sequence_heading(number, length, padded) == heading


def test_a_shuffle_verdict_has_the_badge_of_its_outcome_and_the_methods_name():
    from lessons.positions import Toy, permutation, toy_shuffle_checks

    toy = Toy.build(("the", "dog", "sat", "down"), 8, 0)
    checks = toy_shuffle_checks(toy.x, toy.head, permutation(4, 3), 8)
    none, rope = text.shuffle_verdict(checks["none"], "none"), text.shuffle_verdict(checks["rope"], "rope")
    assert checks["none"].outcome == "only shuffled" and checks["rope"].outcome == "order was seen"
    assert none.startswith(text.BADGES["only shuffled"]) and "No positions: after undoing" in none
    assert rope.startswith(text.BADGES["order was seen"]) and "RoPE: after undoing" in rope
    same = toy_shuffle_checks(toy.x, toy.head, permutation(4, 0), 8)["alibi"]
    assert text.shuffle_verdict(same, "alibi").startswith(text.BADGES["unchanged"])


def test_the_padding_lengths_follow_the_words_and_say_why_they_were_lowered():
    from lessons.positions import DEFAULT_TEXT, half_the_words, word_count

    assert word_count({"text": "a b c d e"}) == 5 and half_the_words({"text": "a b c d e"}) == 2
    assert word_count({"text": "one"}) == len(DEFAULT_TEXT.split())  # unusable text: the default's count
    assert half_the_words({"text": "a b"}) == 1
    assert text.length_why({"text": "a b c"}, 9) == "the text has 3 words"
    assert text.window_why({"n": 1}, 3) == "a window holds at most the n = 1 position of the sequence"
