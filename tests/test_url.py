"""URL query <-> page state (ui/url.py): round trips, and strangers' strings falling back safely."""

import numpy as np
import pytest

from lessons.examples import random_example
from ui.sequence import default_sequence
from ui.url import decode_choice, decode_flag, decode_int, decode_sequence, encode_sequence


def test_a_sequence_survives_the_round_trip_through_the_url_exactly():
    seq = random_example(7, 5, 3, seed=11).seq.with_matrix("q", np.full((7, 5), 1 / 3))
    warnings = []
    back = decode_sequence(encode_sequence(seq), warnings)
    assert warnings == [] and back.equals(seq)


def test_no_parameters_give_the_default_without_a_warning():
    warnings = []
    assert decode_sequence({}, warnings).equals(default_sequence()) and warnings == []


@pytest.mark.parametrize(
    "params, fragment",
    [
        ({"q": "1,x", "k": "1,0", "v": "1"}, "is not a number"),
        ({"q": "1,0;0,1", "k": "1,0", "v": "1;1"}, "q is 2×2 but k is 1×2"),
        ({"q": "nan,0", "k": "1,0", "v": "1"}, "not a finite number"),
        ({"q": "1,0", "k": "1,0"}, "'v' is missing"),
        ({"q": ";".join(["1"] * 40), "k": "1", "v": "1"}, "too large"),
        ({"q": "1," * 3000, "k": "1", "v": "1"}, "characters long"),
    ],
)
def test_a_bad_sequence_falls_back_to_the_default_with_a_warning(params, fragment):
    warnings = []
    assert decode_sequence(params, warnings).equals(default_sequence())
    assert len(warnings) == 1 and fragment in warnings[0]


def test_wrong_token_count_keeps_the_vectors_and_warns():
    warnings = []
    seq = decode_sequence({"q": "1;2", "k": "3;4", "v": "5;6", "tokens": "only"}, warnings)
    assert seq.tokens == ("only", "t1") and np.array_equal(seq.k, [[3], [4]])
    assert "1 label for 2" in warnings[0]


def test_labels_only_relabel_the_example():
    warnings = []
    seq = decode_sequence({"tokens": "a b c d"}, warnings)
    base = default_sequence()
    assert seq.tokens == ("a", "b", "c", "d") and warnings == []
    assert all(np.array_equal(seq.matrix(m), base.matrix(m)) for m in "qkv")
    seq = decode_sequence({"tokens": "a b c d e f"}, warnings)
    assert seq.tokens == ("a", "b", "c", "d") and "6 labels for 4 positions" in warnings[0]


def test_script_like_tokens_are_kept_as_plain_text():
    seq = decode_sequence({"q": "1", "k": "1", "v": "1", "tokens": "<img src=x onerror=alert(1)>"}, [])
    assert seq.tokens == ("<img",)  # split on spaces and kept verbatim; figures escape it on display


def test_flags_and_ints_validate_and_fall_back():
    w = []
    assert decode_flag({"causal": "1"}, "causal", False, w) is True
    assert decode_flag({"causal": "off"}, "causal", True, w) is False
    assert decode_flag({"causal": "maybe"}, "causal", True, w) is True and "0 or 1" in w[-1]
    assert decode_int({"n": "12"}, "n", 4, 1, 16, w) == 12
    assert decode_int({"n": "99"}, "n", 4, 1, 16, w) == 4 and "outside 1..16" in w[-1]
    assert decode_int({"n": "1e3"}, "n", 4, 1, 16, w) == 4 and "'n'=1e3 is outside 1..16" in w[-1]


@pytest.mark.parametrize("text, value", [("1e3", 1000), ("1000.0", 1000), (" 7 ", 7), ("+5", 5), ("−0", 0)])
def test_a_link_takes_a_whole_number_as_the_number_boxes_read_it(text, value):
    w = []
    assert decode_int({"seed": text}, "seed", 4, 0, 9999, w) == value and not w


@pytest.mark.parametrize("text", ["1_000", "٣", "７", "2.5", "1,5", "0x10", "nan", "", "1e999999999"])
def test_a_link_refuses_what_a_number_box_refuses(text):
    # Python's int() took 1_000, Arabic-Indic 3 and a full-width 7: a link opened a value the box refuses.
    w = []
    assert decode_int({"seed": text}, "seed", 4, 0, 9999, w) == 4 and len(w) == 1


def test_choices_validate_and_fall_back():
    w = []
    assert decode_choice({"norm": "pre"}, "norm", ("post", "pre"), "post", w) == "pre"
    assert decode_choice({"norm": "<b>"}, "norm", ("post", "pre"), "post", w) == "post"


def test_a_bad_choice_in_a_link_lists_what_the_page_offers_in_a_line():
    """/pretrained?focus=abc listed all 257 values the parameter can ever take (-1 to 255) over ten lines; the note
    now names those this text offers (-1 and its 16 tokens' positions), the middle left out."""
    from ui.declared import declared_page

    values, warnings = declared_page("pretrained").state.decode_link("/pretrained?focus=abc")
    assert values["focus"] == -1
    assert warnings == ["URL parameter 'focus' should be one of -1, 0, … 15; using -1."]
    w = []
    assert decode_choice({"c": "x"}, "c", ("a", "b", "c"), "a", w) == "a" and w == [
        "URL parameter 'c' should be one of a, b, c; using a."
    ]
