"""Numbers as the student writes them (issue #48): where the session's language writes a decimal comma (Spanish),
`3,5` is three and a half in every editor (the grid, the paste box, the number boxes) and the editors write their
numbers that way; in English `3,5` stays refused with its hint; a link's numbers are one format in every language."""

from __future__ import annotations

import numpy as np
import pytest

import locales
import ui.sequence
from tests.apptest_helpers import every_text, number_box, open_page, type_number
from tests.test_sequence import ACCEPTED, REFUSED
from ui import sequence_editor
from ui.number_box import read_number, written
from ui.sequence import default_sequence, format_matrix, format_number, parse_matrix, parse_number

KEY = "seq"


@pytest.fixture
def spanish(monkeypatch):
    monkeypatch.setattr(ui.sequence, "language", lambda: "es")


@pytest.fixture
def spanish_apptest(monkeypatch):
    """A Spanish page under AppTest: AppTest formats a selectbox's value again in the test's own thread, outside
    any session (English there), so the test speaks the page's language too."""
    monkeypatch.setattr(locales, "language", lambda: "es")


@pytest.mark.parametrize("lang", ["es", "zh_Hans"])
@pytest.mark.parametrize("typed, value", ACCEPTED)
def test_what_is_a_number_in_english_is_the_same_number_in_every_language(monkeypatch, lang, typed, value):
    monkeypatch.setattr(ui.sequence, "language", lambda: lang)
    assert parse_number(typed, "Q") == value and parse_matrix(typed, name="Q")[0, 0] == value


@pytest.mark.parametrize("lang", ["es", "zh_Hans"])
@pytest.mark.parametrize("typed, message", REFUSED)
def test_what_english_refuses_every_language_refuses(monkeypatch, lang, typed, message):
    monkeypatch.setattr(ui.sequence, "language", lambda: lang)
    with pytest.raises(ValueError, match="^Q: "):
        parse_number(typed, "Q")


def test_in_chinese_a_comma_is_refused_as_in_english(monkeypatch):
    monkeypatch.setattr(ui.sequence, "language", lambda: "zh_Hans")
    with pytest.raises(ValueError, match="not a number"):
        parse_number("3,5", "Q")


@pytest.mark.parametrize(
    "typed, value",
    [("3,5", 3.5), ("3.5", 3.5), ("-0,25", -0.25), ("−0,25", -0.25), (",5", 0.5), ("1,5e-3", 0.0015), ("1e3", 1000)],
)
def test_in_spanish_a_comma_or_a_point_is_the_decimal_mark(spanish, typed, value):
    assert parse_number(typed, "Q") == value


@pytest.mark.parametrize(
    "typed, hint",
    [
        ("1.000,5", "one decimal mark, ',' or '.', and no thousands separators"),
        ("1,000,000", "one decimal mark, ',' or '.', and no thousands separators"),
        ("3,5,1", "the comma is the decimal mark: numbers are separated by spaces"),
        ("3,5;", None),
        ("abc", None),
        ("nan", None),
    ],
)
def test_in_spanish_what_is_not_one_number_is_refused_and_says_why(spanish, typed, hint):
    with pytest.raises(ValueError, match="^Q: ") as err:
        parse_number(typed, "Q")
    if hint:
        assert f"({hint})" in str(err.value)


def test_in_english_a_comma_stays_refused_with_its_hint():
    with pytest.raises(ValueError, match=r"'3,5' is not a number \(a decimal point, not a comma: 3.5\)"):
        parse_number("3,5", "Q")


def test_in_spanish_the_paste_box_separates_numbers_by_spaces_and_rows_by_semicolons(spanish):
    assert parse_matrix("1,5 2; 3 4,25", 2, 2).tolist() == [[1.5, 2.0], [3.0, 4.25]]
    with pytest.raises(ValueError, match="the comma is the decimal mark"):
        parse_matrix("1,5,2; 3 4", 2, 2)  # two numbers joined by a comma: refused, never read as 1.5 and 2


def test_a_links_numbers_are_one_format_in_every_language(spanish):
    assert parse_matrix("1,0;0,1", bare_commas=True).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert parse_matrix("0.5,1;2,3", bare_commas=True).tolist() == [[0.5, 1.0], [2.0, 3.0]]


def test_what_an_editor_writes_in_spanish_reads_back_exactly(spanish):
    values = np.random.default_rng(0).normal(size=(4, 3)) * np.array([1e-7, 1.0, 300.0])
    text = format_matrix(values, comma=True)
    assert "," in text and "." not in text
    assert np.array_equal(parse_matrix(text, 4, 3), values)


def test_a_number_box_reads_and_writes_the_decimal_comma_in_spanish(spanish, monkeypatch):
    import ui.number_box

    monkeypatch.setattr(ui.number_box, "decimal_comma", lambda: True)
    assert read_number("0,7", "weight", 0.0, 1.0) == 0.7
    assert written(0.7) == "0,7" and written(3) == "3"
    with pytest.raises(ValueError, match="'1,5' is more than 1"):
        read_number("1,5", "weight", 0.0, 1.0)


def test_the_predict_pages_weight_box_takes_0_7_written_the_spanish_way(spanish_apptest):
    at = open_page("pages/predict.py", query={"lang": "es"})
    key = next(x.key for x in at.text_input if str(x.key).startswith("predict_weight_")).removesuffix("_box")
    assert "0,7" in number_box(at, key).placeholder  # the example is written the Spanish way too
    at = type_number(at, key, "0,7")
    assert not at.exception
    assert at.session_state[key] == 0.7 and number_box(at, key).value == "0,7"


def test_the_paste_box_in_spanish_takes_decimal_commas_and_says_so(spanish_apptest):
    at = open_page("pages/playground.py", query={"lang": "es"})
    seq_key = next(x.key for x in at.text_area if str(x.key).endswith("_text_q")).removesuffix("_text_q")
    assert at.text_area(key=f"{seq_key}_text_q").value == format_matrix(at.session_state[seq_key].q, comma=True)
    n, d_k = at.session_state[seq_key].q.shape
    rows = "\n".join(" ".join("0,5" if j == 0 else "1" for j in range(d_k)) for _ in range(n))
    at = at.text_area(key=f"{seq_key}_text_q").input(rows).run()
    assert not at.exception
    assert (at.session_state[seq_key].q[:, 0] == 0.5).all()
    assert "3,5" in every_text(at)  # the caption says how numbers are written here


@pytest.fixture
def session(monkeypatch):
    state: dict = {}
    monkeypatch.setattr(sequence_editor.st, "session_state", state)
    import ui.sequence_reset

    monkeypatch.setattr(ui.sequence_reset.st, "session_state", state)
    sequence_editor.reset_sequence(KEY, default_sequence())
    return state


def test_the_grid_in_spanish_takes_3_5_and_its_texts_follow_a_change_of_language(session, monkeypatch):
    assert "." in session[f"{KEY}_text_q"] or "," not in session[f"{KEY}_text_q"]  # written in English
    monkeypatch.setattr(ui.sequence, "language", lambda: "es")
    session[f"{KEY}_text_k"] = "1,5 x"  # a refused text stays as typed, with its message
    session[f"{KEY}_err_k"] = "K: 'x' is not a number"
    sequence_editor._ensure_widget_state(KEY)
    assert session[f"{KEY}_text_q"] == format_matrix(session[KEY].q, comma=True)
    assert session[f"{KEY}_text_k"] == "1,5 x"
    seq = session[KEY]
    grid_key = f"{KEY}_grid_{seq.n}x{seq.d_k}x{seq.d_v}_r{session[f'{KEY}_rev']}"
    session[grid_key] = {"edited_rows": {0: {"q1": "3,5"}}}
    sequence_editor._on_grid(KEY, grid_key)
    assert session[KEY].q[0, 0] == 3.5
    assert format_number(3.5, comma=True) == "3,5"
