"""The sequence's text form, token labels and resizing (ui/sequence.py)."""

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention.sequence import TokenSequence
from ui.sequence import MAX_N, default_sequence, display_labels, format_matrix, parse_matrix, parse_number, parse_tokens


def test_parse_accepts_semicolons_newlines_and_commas_with_a_space():
    expected = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    assert np.array_equal(parse_matrix("1 0 0; 0 1 0"), expected)
    assert np.array_equal(parse_matrix("1, 0, 0\n0, 1, 0,\n"), expected)
    assert np.array_equal(parse_matrix("  1 0 0 ;; 0 1 0  "), expected)
    assert np.array_equal(parse_matrix("1,0,0;0,1,0", bare_commas=True), expected)  # the share link's form


@pytest.mark.parametrize(
    "typed, grid_says, box_adds",
    [
        ("3,5", "a decimal point, not a comma: 3.5", "2 numbers take a space after each comma: 3, 5"),
        ("-0,5", "a decimal point, not a comma: -0.5", "2 numbers take a space after each comma: -0, 5"),
        ("1,0,0", "a comma is not a digit", "3 numbers take a space after each comma: 1, 0, 0"),
    ],
)
def test_a_comma_between_digits_is_refused_by_the_grid_and_the_paste_box_alike(typed, grid_says, box_adds):
    # Issue #32: the grid refused 3,5 while the paste box read it as the two numbers 3 and 5.
    with pytest.raises(ValueError, match=re.escape(grid_says)) as cell:
        parse_number(typed, "Q, row 1 ('north'), column q1")
    assert box_adds not in str(cell.value)  # one cell holds one number: no advice about several
    with pytest.raises(ValueError, match=re.escape(f"'{typed}' is not a number ({grid_says}; {box_adds})")):
        parse_matrix(f"{typed} 1", name="Q")
    row = box_adds.rsplit(": ", 1)[1]
    assert parse_matrix(row, name="Q").size == int(box_adds[0])  # and what the message suggests is read


@pytest.mark.parametrize(
    "text, message",
    [
        ("1 x; 0 1", r"line 1 \(position 0\), value 2: 'x' is not a number"),
        ("1 0; 0", r"line 2 \(position 1\) has 1 value\(s\), expected 2"),
        ("nan 0; 0 1", "not a finite number"),
        ("inf 0; 0 1", "not a finite number"),
        ("1e9 0; 0 1", "too large"),
        ("", "no numbers"),
        (" ; \n", "no numbers"),
    ],
)
def test_parse_rejects_bad_text_with_a_message(text, message):
    with pytest.raises(ValueError, match=message):
        parse_matrix(text, rows=2, cols=2, name="Q")


def test_parse_checks_the_expected_shape():
    with pytest.raises(ValueError, match=r"3 row\(s\) given, expected 2"):
        parse_matrix("1 0; 0 1; 1 1", rows=2, cols=2)
    with pytest.raises(ValueError, match="expected 3"):
        parse_matrix("1 0; 0 1", rows=2, cols=3)


def test_parse_refuses_oversized_text_before_parsing():
    with pytest.raises(ValueError, match="characters long"):
        parse_matrix("1 " * 5000)
    with pytest.raises(ValueError, match="too large"):
        parse_matrix("; ".join(["1"] * (MAX_N + 1)))


@settings(max_examples=60, deadline=None)
@given(
    arrays(
        np.float64,
        st.tuples(st.integers(1, 6), st.integers(1, 6)),
        elements=st.floats(-1000, 1000, allow_nan=False, allow_infinity=False),
    )
)
def test_format_then_parse_gives_back_exactly_the_same_floats(a):
    assert np.array_equal(parse_matrix(format_matrix(a)), a)
    assert np.array_equal(parse_matrix(format_matrix(a, row_sep=";")), a)


def test_tokens_are_padded_or_cut_with_a_notice():
    assert parse_tokens("the cat sat", 3) == (("the", "cat", "sat"), None)
    tokens, notice = parse_tokens("the cat", 4)
    assert tokens == ("the", "cat", "t2", "t3") and "2 labels for 4" in notice
    tokens, notice = parse_tokens("a b c d e", 3)
    assert tokens == ("a", "b", "c") and "only the first 3" in notice


def test_resizing_keeps_the_values_that_still_fit():
    seq = default_sequence()
    bigger = seq.resized(6, 3, 5)
    assert bigger.q.shape == (6, 3) and bigger.v.shape == (6, 5) and bigger.n == 6
    assert np.array_equal(bigger.q[:4, :2], seq.q) and not bigger.q[4:].any() and not bigger.q[:, 2].any()
    assert bigger.tokens[:4] == seq.tokens
    smaller = bigger.resized(2, 1, 1)
    assert np.array_equal(smaller.k, seq.k[:2, :1]) and smaller.tokens == seq.tokens[:2]


def test_over_keeps_its_own_values_and_fills_the_rest_from_under():
    whole = default_sequence().resized(6, 3, 5).with_matrix("q", np.arange(18.0).reshape(6, 3))
    small = whole.resized(2, 1, 5).with_matrix("q", [[-1.0], [-2.0]])
    merged = small.over(whole)
    assert merged.q.shape == (6, 3) and merged.v.shape == (6, 5) and merged.tokens == whole.tokens
    assert merged.q[:2, 0].tolist() == [-1.0, -2.0]  # its own edits win
    assert np.array_equal(merged.q[:2, 1:], whole.q[:2, 1:]) and np.array_equal(merged.q[2:], whole.q[2:])
    assert np.array_equal(merged.k, whole.k) and np.array_equal(merged.v, whole.v)
    bigger = whole.resized(8, 3, 5)
    assert np.array_equal(bigger.over(small).q, bigger.q)  # nothing of a smaller `under` shows through


def test_with_matrix_replaces_only_that_matrix():
    seq = default_sequence()
    new = seq.with_matrix("k", np.ones((4, 2)))
    assert np.array_equal(new.k, np.ones((4, 2))) and np.array_equal(new.q, seq.q)
    assert isinstance(new, TokenSequence) and not new.equals(seq)


# --- one parser for the grid and the paste box (issue #19) ---------------------------------------


# What a student types and the number it is, in every language (tests/test_decimal_comma.py reads them in each).
ACCEPTED = [
    ("1e3", 1000.0),
    ("1e-3", 0.001),
    ("1E3", 1000.0),
    ("−1", -1.0),
    ("–2.5", -2.5),
    ("－3", -3.0),
    (" 2 ", 2.0),
    (".5", 0.5),
    ("5.", 5.0),
    ("+3", 3.0),
    ("-0", 0.0),
    ("1000", 1000.0),
    ("-1e3", -1000.0),
    ("0.1", 0.1),
]
# Refused in every language (a comma's refusals are English's: in Spanish the comma is the decimal mark).
REFUSED = [
    ("0.1+0.2", "not a number"),
    ("1001", "too large"),
    ("1e309", "too large"),
    ("-inf", "not a finite number"),
    ("nan", "not a finite number"),
    ("Infinity", "not a finite number"),
    ("1_000", "not a number"),
    ("½", "not a number"),
    ("١", "not a number"),
    ("0x10", "not a number"),
    ("", "not a number"),
    ("abc", "not a number"),
    ("1e3e3", "not a number"),
]


@pytest.mark.parametrize("typed, value", ACCEPTED)
def test_what_a_student_types_is_the_number_they_meant(typed, value):
    assert parse_number(typed, "Q, row 1") == value
    assert parse_matrix(typed, name="Q")[0, 0] == value  # the paste box reads a single value the same way


@pytest.mark.parametrize(
    "typed, message",
    [
        ("3,5", "not a number (a decimal point, not a comma: 3.5)"),
        ("1,", "not a number (a decimal point, not a comma: 1.)"),
        *REFUSED,
    ],
)
def test_anything_else_is_refused_with_a_message_naming_the_cell(typed, message):
    with pytest.raises(ValueError, match=re.escape(message)) as err:
        parse_number(typed, "Q, row 2 ('east'), column q1")
    assert str(err.value).startswith("Q, row 2 ('east'), column q1: ")


def test_the_paste_box_refuses_the_same_strings_naming_row_and_value():
    with pytest.raises(ValueError, match=r"Q: line 2 \(position 1\), value 1: '1e309' is too large"):
        parse_matrix("1 2; 1e309 0", name="Q")
    assert parse_matrix("−1 1e3; .5 −2e-1", name="Q").tolist() == [[-1.0, 1000.0], [0.5, -0.2]]


def test_repeated_labels_are_numbered_for_display_only():
    tokens = ("the", "cat", "sat", "on", "the", "mat")
    assert display_labels(tokens) == ["the", "cat", "sat", "on", "the·2", "mat"]
    assert display_labels(("a",) * 4) == ["a", "a·2", "a·3", "a·4"]
    assert len(set(display_labels(("a", "a·2", "a")))) == 3  # even when someone types "a·2" by hand


def test_cut_labels_are_announced():
    tokens, notice = parse_tokens("short " + "x" * 30, 2)
    assert tokens == ("short", "x" * 24) and "1 label longer than 24 characters was cut" in notice
