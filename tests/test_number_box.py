"""ui/number_box.py: a typed number is read by the grid's rule or refused with a message, never rewritten.

Streamlit's number_input read `1e3` as 1, `2.5` as 2 and `1,5` as 15 in a box of whole numbers, in the browser,
without a word (issue #32). Here: the reading itself (pure), the box in a one-box script, and the box on each
kind of page: a declared parameter, a bound that depends on another box, the shared editor's sizes (with a
callback), an optional fraction, and a box inside a section of a page.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest_helpers import chart_by_key, heatmap_z, number_box, open_page, reconnect, run_page, type_number
from ui.number_box import RECORDS, allowed, read_number, written

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------- the reading (pure)


@pytest.mark.parametrize(
    "typed, lo, hi, value",
    [
        ("1e3", 0, 9999, 1000),
        ("1E3", 0, 9999, 1000),
        ("1000.0", 0, 9999, 1000),  # a whole number, however it is written
        ("2.5e1", 0, 9999, 25),
        (" 7 ", 0, 9999, 7),
        ("+5", 0, 9999, 5),
        ("−3", -5, 5, -3),  # a Unicode minus, as the grid reads it
        ("-0", 0, 9, 0),
        ("9999", 0, 9999, 9999),
        ("0", 0, 9999, 0),
        ("7e-1", 0.0, 1.0, 0.7),
        (".5", 0.0, 1.0, 0.5),
        ("1", 0.0, 1.0, 1.0),
    ],
)
def test_a_number_is_read_exactly_as_the_grid_reads_it(typed, lo, hi, value):
    got = read_number(typed, "Seed", lo, hi)
    assert got == value and type(got) is type(value)  # an int box gives ints, a fraction box floats


@pytest.mark.parametrize(
    "typed, message",
    [
        ("2.5", "Seed: '2.5' is not a whole number"),
        ("1.0000000000000001", "is not a whole number"),  # read exactly: a float would call it 1
        ("1e-3", "is not a whole number"),
        ("1,5", "Seed: '1,5' is not a number (a comma is not a digit, and 1.5 is not a whole number)"),
        (
            "10,000",
            "Seed: '10,000' is not a number (no thousands separators: 10000; or a decimal point, not a comma: 10.000)",
        ),
        ("abc", "Seed: 'abc' is not a number"),
        ("0x10", "is not a number"),
        ("1_000", "is not a number"),
        ("5 6", "is not a number"),
        ("nan", "Seed: 'nan' is not a finite number"),
        ("-inf", "is not a finite number"),
        ("", "Seed: the box is empty"),
        ("   ", "Seed: the box is empty"),
        ("10000", "Seed: '10000' is more than 9999"),
        ("1e999999999", "is more than 9999"),
        ("9" * 5000, f"Seed: '{'9' * 20}…' is more than 9999"),  # quoted cut, and said to be cut
        ("7" * 21, f"Seed: '{'7' * 20}…' is more than 9999"),
        ("-1", "Seed: '-1' is less than 0"),
    ],
)
def test_anything_else_is_refused_naming_what_was_typed(typed, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        read_number(typed, "Seed", 0, 9999)


def test_a_fraction_box_takes_fractions_and_an_optional_box_takes_nothing():
    assert read_number("", "w", 0.0, 1.0, optional=True) is None
    with pytest.raises(ValueError, match=re.escape("w: '1.5' is more than 1")):
        read_number("1.5", "w", 0.0, 1.0, optional=True)
    with pytest.raises(ValueError, match="not a number"):
        read_number("70%", "w", 0.0, 1.0)
    with pytest.raises(ValueError, match=re.escape("w: '0,5' is not a number (a decimal point, not a comma: 0.5)")):
        read_number("0,5", "w", 0.0, 1.0)  # a fraction box suggests the fraction; a whole-number box would not
    assert allowed(0.0, 1.0, optional=True) == "a number from 0 to 1, or nothing"
    assert allowed(0, 10_000) == "a whole number from 0 to 10000"  # no thousands comma: the box refuses one
    assert [written(x) for x in (1000, 0.7, 1.0, None)] == ["1000", "0.7", "1", ""]


# ---------------------------------------------------------------- the box, alone


def one_box_script():
    import streamlit as st

    from ui.number_box import number_box

    st.session_state.setdefault("changes", 0)
    if st.button("Set 42", key="set"):
        st.session_state["n"] = 42  # a value set by something else than the box (a link, a button, a clamp)
    n = number_box(
        st,
        "Seed",
        key="n",
        min_value=0,
        max_value=9999,
        value=5,
        help="Seeds it.",
        on_change=lambda: st.session_state.update(changes=st.session_state["changes"] + 1),
    )
    st.markdown(f"computed with {n!r}")


@pytest.fixture
def one_box():
    return AppTest.from_function(one_box_script, default_timeout=30).run()


def shown(at) -> tuple[str, str, list[str]]:
    """What the box shows, what the script computed with, and the messages."""
    return number_box(at, "n").value, at.markdown[0].value, [e.value.replace("\\", "") for e in at.error]


def test_the_box_takes_1e3_as_1000_and_then_shows_1000(one_box):
    at = one_box
    assert shown(at) == ("5", "computed with 5", [])
    assert number_box(at, "n").help == "Seeds it. Type a whole number from 0 to 9999, then press Enter."
    type_number(at, "n", "1e3")
    assert shown(at) == ("1000", "computed with 1000", []) and at.session_state["changes"] == 1
    type_number(at, "n", "1000.0")  # the same number: nothing changed, no callback
    assert shown(at) == ("1000", "computed with 1000", []) and at.session_state["changes"] == 1


@pytest.mark.parametrize(
    "typed, why",
    [
        ("2.5", "Seed: '2.5' is not a whole number."),
        ("1,5", "Seed: '1,5' is not a number (a comma is not a digit, and 1.5 is not a whole number)."),
        ("abc", "Seed: 'abc' is not a number."),
        ("nan", "Seed: 'nan' is not a finite number."),
        ("", "Seed: the box is empty."),
        ("12345", "Seed: '12345' is more than 9999."),
    ],
)
def test_a_refused_text_stays_in_the_box_and_the_page_keeps_its_number(one_box, typed, why):
    at = type_number(one_box, "n", "7")
    type_number(at, "n", typed)
    box, computed, messages = shown(at)
    assert box == typed and computed == "computed with 7" and at.session_state["changes"] == 1
    assert messages == [f"{why} Allowed: a whole number from 0 to 9999. The page still uses 7."]
    at.run()  # another run of the page (another widget): the text and the message stay
    assert shown(at) == (typed, "computed with 7", messages)
    type_number(at, "n", "8")
    assert shown(at) == ("8", "computed with 8", [])


def test_a_value_set_elsewhere_replaces_a_refused_text(one_box):
    at = type_number(one_box, "n", "2.5")
    at.button(key="set").click().run()
    assert shown(at) == ("42", "computed with 42", [])


def test_a_refused_text_replaced_in_the_same_run_is_named(one_box):
    # Type 2.5 and press a button without Enter: leaving the box refuses 2.5 and the button sets 42 in the same
    # run, so the refusal was never on screen. The text must not vanish without a word.
    at = one_box
    number_box(at, "n").input("2.5")
    at.button(key="set").click().run()
    assert shown(at) == ("42", "computed with 42", [])
    assert [c.value.replace("\\", "") for c in at.caption] == ["Seed: '2.5' was not taken; the page now uses 42."]
    at.run()  # said once
    assert not at.caption


# ---------------------------------------------------------------- the box on the pages


@pytest.mark.parametrize(
    "page, key, link, typed, value",
    [
        ("pages/causal.py", "causal_seed", "seed", "1e1", 10),
        ("pages/pitfalls.py", "pitfalls_seed", "seed", "1e2", 100),
        ("pages/scaling.py", "scaling_seed", "seed", "1e3", 1000),
        ("pages/heads.py", "heads_seed", "seed", "7.0", 7),
        ("pages/block.py", "block_seed", "seed", "1e3", 1000),
        ("pages/induction.py", "induction_seed", "seed", "4.2e1", 42),
        ("pages/generation.py", "gen_top_k", "top_k", "3e0", 3),
        ("pages/positions.py", "pos_offset", "offset", "1e3", 1000),  # inside a section of the page
    ],
)
def test_every_page_reads_the_box_by_the_one_rule_and_its_link_follows(page, key, link, typed, value):
    at = open_page(page)
    before = at.session_state[key]
    type_number(at, key, "2.5")
    assert not at.exception and at.session_state[key] == before and number_box(at, key).value == "2.5"
    said = " ".join(e.value.replace("\\", "") for e in at.error)
    assert "'2.5' is not a whole number" in said and f"The page still uses {before}." in said
    assert at.query_params[link] == str(before)
    type_number(at, key, typed)
    assert not at.exception and not at.error
    assert at.session_state[key] == value and number_box(at, key).value == str(value)
    assert at.query_params[link] == str(value)


def test_the_playgrounds_sizes_take_1e1_and_refuse_a_fraction_keeping_the_sequence():
    at = run_page()
    before = at.session_state["seq"]
    type_number(at, "seq_n_in", "1e1")
    assert at.session_state["seq"].n == 10 and heatmap_z(chart_by_key(at, "pg_heatmap")).shape == (10, 10)
    assert number_box(at, "seq_n_in").value == "10"
    type_number(at, "seq_n_in", "4.5")
    assert at.session_state["seq"].n == 10 and number_box(at, "seq_n_in").value == "4.5"
    assert "positions n: '4.5' is not a whole number" in at.error[0].value.replace("\\", "")
    type_number(at, "seq_n_in", "4")  # the rows cut by 10 -> ... are back, as with any resize
    assert np.array_equal(at.session_state["seq"].q, before.q) and not at.error


def test_a_bound_that_depends_on_another_box_refuses_beyond_it_and_clamps_when_it_moves():
    at = open_page("pages/block.py")
    type_number(at, "block_d_ff", "100")  # typed beyond 4 × d_model = 64: refused, naming the bound
    assert at.session_state["block_d_ff"] == 64 and number_box(at, "block_d_ff").value == "100"
    assert "d_ff: '100' is more than 64" in at.error[0].value.replace("\\", "")
    type_number(at, "block_d_model", "8")  # the bound moves below the value: clamped and said, as before
    assert at.session_state["block_d_ff"] == 32 and number_box(at, "block_d_ff").value == "32" and not at.error
    assert any("d_ff lowered from 64 to 32" in c.value for c in at.caption)
    type_number(at, "block_d_model", "16")
    assert at.session_state["block_d_ff"] == 64 and number_box(at, "block_d_ff").value == "64"


def test_a_refused_text_is_read_again_when_the_bound_it_broke_moves():
    # d_ff 100 is refused while d_model = 16 allows 64. The student widens d_model: the message must name the
    # bound the box has now, and once 100 fits it is taken (Enter on the unchanged text sends nothing).
    at = open_page("pages/block.py")
    type_number(at, "block_d_ff", "100")
    type_number(at, "block_d_model", "20")  # at most 80: still refused, by today's bound
    said = " ".join(e.value.replace("\\", "") for e in at.error)
    assert "d_ff: '100' is more than 80. Allowed: a whole number from 1 to 80. The page still uses 64." in said
    assert at.session_state["block_d_ff"] == 64 and number_box(at, "block_d_ff").value == "100"
    type_number(at, "block_d_model", "32")  # at most 128: 100 fits
    assert not at.exception and not at.error
    assert at.session_state["block_d_ff"] == 100 and number_box(at, "block_d_ff").value == "100"
    assert at.query_params["d_ff"] == "100"  # the link says the number the page computes with
    assert any("d_ff: 100, as typed, is taken: it fits now" in c.value.replace("\\", "") for c in at.caption)
    at.run()  # said once: the next run has nothing to say
    assert not any("as typed, is taken" in c.value for c in at.caption) and at.session_state["block_d_ff"] == 100


@pytest.mark.parametrize("page", ["pages/causal.py", "pages/pitfalls.py", "app.py"])
def test_no_two_number_boxes_on_a_page_share_a_label(page):
    # /causal drew the editor's preset seed and the page's own seed both as "seed": a refusal naming "seed",
    # a screen reader or a finger on a label could not tell which box was meant.
    at = run_page() if page == "app.py" else open_page(page)
    labels = [x.label for x in at.text_input if str(x.key).endswith("_box")]
    assert len(labels) >= 2 and len(set(labels)) == len(labels), labels


def test_the_generation_layers_box_refuses_what_the_core_cannot_take():
    at = open_page("pages/generation.py")
    type_number(at, "gen_layers", "49")
    assert not at.exception and at.session_state["gen_layers"] == 32
    assert "layers: '49' is more than 48" in at.error[0].value.replace("\\", "")
    type_number(at, "gen_layers", "4.8e1")
    assert at.session_state["gen_layers"] == 48 and not at.error and at.query_params["layers"] == "48"


def test_the_predict_weight_is_an_optional_fraction():
    at = open_page("pages/predict.py")
    boxes = [x for x in at.text_input if str(x.key).startswith("predict_weight_")]
    key = boxes[0].key.removesuffix("_box")
    assert at.session_state[key] is None and "a number from 0 to 1, or nothing" in boxes[0].help
    type_number(at, key, "7e-1")
    assert at.session_state[key] == 0.7 and number_box(at, key).value == "0.7"
    type_number(at, key, "70%")
    assert at.session_state[key] == 0.7 and number_box(at, key).value == "70%"
    assert "'70%' is not a number" in at.error[0].value.replace("\\", "")
    type_number(at, key, "")  # emptied: no weight guessed
    assert at.session_state[key] is None and not at.error
    type_number(at, key, "0.5")
    assert key in at.session_state and key in at.session_state[RECORDS]
    at.selectbox(key="predict_puzzle").set_value("length").run()  # a new round: new boxes, the old ones forgotten
    assert not at.exception and key not in at.session_state and key not in at.session_state[RECORDS]


def test_a_typed_number_survives_a_reconnect_to_another_server():
    at = open_page("pages/heads.py")
    type_number(at, "heads_seed", "1.2e1")
    back = reconnect(at, "pages/heads.py")
    assert not back.exception and back.session_state["heads_seed"] == 12
    assert number_box(back, "heads_seed").value == "12" and back.query_params["seed"] == "12"


def test_no_page_draws_streamlits_number_input():
    sources = [*(ROOT / "pages").glob("*.py"), *(ROOT / "ui").glob("*.py")]
    assert sources
    for path in sources:
        text = path.read_text(encoding="utf-8")
        assert ".number_input(" not in text, f"{path.name}: use ui.number_box.number_box"


def test_a_refused_text_is_quoted_as_typed_never_as_markdown(one_box):
    typed = "![x](y) :red[1] $2$ and more words"
    at = type_number(one_box, "n", typed)
    assert number_box(at, "n").value == typed  # the box keeps it whole; the message quotes 20 characters and …
    message = at.error[0].value
    assert "'!\\[x\\](y) \\:red\\[1\\] \\$2\\$ …' is not a number" in message


def test_every_box_of_a_page_keeps_its_record_in_one_session_entry():
    """Streamlit copies every session entry twice a run: a box adds its value and its text (as any widget
    would), and its record (what its text was set to, whether it refused) goes into one entry for all boxes."""
    at = open_page("pages/block.py")
    boxes = [x.key.removesuffix("_box") for x in at.text_input if str(x.key).endswith("_box")]
    assert len(boxes) >= 2
    type_number(at, boxes[0], "abc")
    type_number(at, boxes[1], "1e9")
    assert len(at.error) == 2
    assert set(boxes) <= set(at.session_state[RECORDS])
    for key in boxes:
        others = [k for k in at.session_state if k.startswith(f"_{key}") or (key in k and k not in (key, f"{key}_box"))]
        assert others == [], others
