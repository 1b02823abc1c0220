"""Declared page state: the codecs (pure) and the shared module that reads and writes every page's link."""

import re
from pathlib import Path

import pytest

from tests.apptest_helpers import open_page
from ui.url import Choice, ChoiceList, Flag, Int, SequenceParam, Slots, Text

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "pages").glob("*.py"))


def decode(param, query, name="x", values=None):
    warnings: list[str] = []
    return param.decode(query, name, values or {}, warnings), warnings


# ---------------------------------------------------------------- codecs


def test_int_bounds_may_depend_on_earlier_values():
    t = Int(lambda v: min(2, v["n"] - 2), lo=0, hi=lambda v: v["n"] - 2)
    assert decode(t, {"t": "3"}, "t", {"n": 6}) == (3, [])
    value, warnings = decode(t, {"t": "5"}, "t", {"n": 6})
    assert value == 2 and warnings == ["URL parameter 't'=5 is outside 0..4; using 2."]
    value, warnings = decode(t, {"t": "1"}, "t", {"n": 2})  # n = 2: t can only be 0
    assert value == 0 and "outside 0..0" in warnings[0]
    assert t.widget_args({"n": 6}) == {"min_value": 0, "max_value": 4}


def test_a_float_choice_reads_back_the_number_it_wrote():
    lr = Choice(1.0, choices=(0.1, 0.3, 1.0, 3.0))
    assert lr.encode(0.3, "lr") == {"lr": "0.3"} and lr.encode(3.0, "lr") == {"lr": "3"}
    for text, number in (("0.3", 0.3), ("3", 3.0), ("3.0", 3.0), ("1e0", 1.0)):
        assert decode(lr, {"lr": text}, "lr") == (number, [])
    for bad in ("0.2", "abc", "3" + " " * 20, "nan"):
        value, warnings = decode(lr, {"lr": bad}, "lr")
        assert value == 1.0 and "'lr'" in warnings[0]


def test_a_choice_list_is_read_whole_or_refused_whole():
    dk = ChoiceList([4, 64], url="dk", choices=(1, 4, 16, 64, 256), max_items=3, sort_unique=True)
    assert decode(dk, {"dk": "64,4,4"}, "d_ks") == ([4, 64], [])
    assert decode(dk, {"dk": ""}, "d_ks") == ([], [])  # a cleared selection is a choice too
    for bad in ("4,5", "1,4,16,64", "²", "4;64", "4," * 100):
        value, warnings = decode(dk, {"dk": bad}, "d_ks")
        assert value == [4, 64] and warnings and "'dk'" in warnings[0]
    assert dk.encode([4, 64], "d_ks") == {"dk": "4,64"}


def test_slots_fill_the_rest_from_the_default_and_write_only_the_counted_ones():
    presets = Slots(("a", "b", "c"), choices=("a", "b", "c"), slots=3, count=lambda v: v["n"])
    assert decode(presets, {"presets": "c"}, "presets") == (("c", "b", "c"), [])
    value, warnings = decode(presets, {"presets": "c,<b>"}, "presets")
    assert value == ("a", "b", "c") and "'presets'" in warnings[0]
    assert presets.encode(("c", "b"), "presets") == {"presets": "c,b"}


def test_text_is_kept_exactly_or_refused_whole():
    text = Text("default", max_chars=10)
    assert decode(text, {"text": " a <b> c "}, "text") == (" a <b> c ", [])
    value, warnings = decode(text, {"text": "x" * 11}, "text")
    assert value == "default" and "longer than 10" in warnings[0]


def test_flags_and_sequences_name_their_link_parameters():
    assert Flag(False, url="present").url_names("presenter") == ("present",)
    assert set(SequenceParam(None).url_names("seq")) == {"tokens", "q", "k", "v"}


def test_reading_one_value_reads_only_the_values_declared_before_it():
    from ui.page_state import PageState

    read: list[str] = []

    def default(name, value):
        def resolve(values):
            read.append(name)
            return value(values)

        return resolve

    state = PageState(
        "t",
        n=Int(default("n", lambda v: 6), lo=1, hi=10),
        t=Int(default("t", lambda v: v["n"] - 2), lo=0, hi=lambda v: v["n"] - 2),
        later=Int(default("later", lambda v: 1 / 0), lo=0, hi=1),  # would raise if read
    )
    assert state["t"] == 4 and read == ["n", "t"]
    assert state.bounds("t") == {"min_value": 0, "max_value": 4}
    assert state.values(through="n") == {"n": 6}
    with pytest.raises(KeyError, match="declared: n, t, later"):
        state["nope"]


# ---------------------------------------------------------------- the shared module, in the app


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_page_reads_or_writes_the_link_by_hand(page):
    source = page.read_text(encoding="utf-8")
    assert "query_params" not in source
    assert not re.search(r"_url_read|load_from_url|save_to_url|write_page_params", source)
    assert "STATE = PageState(" in source  # every page declares its state


def test_a_page_that_stops_early_still_writes_its_state_into_the_link():
    # 6 heads do not divide d_model = 16: the heads page says so and stops (st.stop()), yet the link
    # holds the page's whole state, so the student can share exactly what they see.
    at = open_page("pages/heads.py", {"n_heads": "6", "seed": "12"})
    assert not at.exception and at.error
    assert at.query_params["n_heads"] == "6" and at.query_params["seed"] == "12" and at.query_params["d_model"] == "16"


def test_the_link_is_read_on_the_first_run_only_and_written_after_every_run():
    at = open_page("pages/block.py", {"blocks": "7", "act": "gelu"})
    assert at.slider(key="block_n_blocks").value == 7 and at.selectbox(key="block_activation").value == "gelu"
    at.query_params["blocks"] = "2"  # a later change of the link by anything but the page is not read again
    at.slider(key="block_n_blocks").set_value(9).run()
    assert at.slider(key="block_n_blocks").value == 9 and at.query_params["blocks"] == "9"
    assert at.query_params["act"] == "gelu"


def test_presenter_mode_rides_along_with_every_page():
    at = open_page("pages/causal.py", {"present": "1", "t": "3"})
    assert at.toggle(key="presenter").value is True
    assert at.query_params["present"] == "1" and at.query_params["t"] == "3"
    at.toggle(key="presenter").set_value(False).run()
    assert "present" not in at.query_params and at.query_params["t"] == "3"
