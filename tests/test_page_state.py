"""ui/page_state.py and the Params of ui/url.py: the codecs (pure), the widget helper with dependent bounds,
and the shared module that reads and writes every page's link."""

import re
from pathlib import Path

import pytest

from tests.apptest_helpers import open_page, reconnect
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
    layer = Int(4, lo=1, hi=lambda v: v["n"], listed=True)  # a selectbox of 1..n, as the model's layers
    assert layer.widget_args({"n": 6}) == {"options": range(1, 7)} and layer.fit(9, {"n": 6}) == 6


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
    assert dk.widget_args({}) == {"options": (1, 4, 16, 64, 256), "max_selections": 3}  # a multiselect's


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


def test_a_dependent_bound_fits_the_value_it_is_given():
    t = Int(0, lo=0, hi=lambda v: v["n"] - 2)
    assert [t.fit(x, {"n": 6}) for x in (-3, 0, 4, 9)] == [0, 0, 4, 4]
    assert t.bound_text(9, {"n": 6}) == "at most 4 here" and t.bound_text(-3, {"n": 6}) == "at least 0 here"
    samples = Choice(
        1000,
        choices=(10, 200, 1000, 5000),
        allowed=lambda v: tuple(s for s in (10, 200, 1000, 5000) if s * v["keys"] <= 60_000),
    )
    assert samples.options({"keys": 256}) == (10, 200) and samples.widget_args({"keys": 256}) == {"options": (10, 200)}
    assert samples.fit(5000, {"keys": 256}) == 200 and samples.fit(1000, {"keys": 8}) == 1000
    assert samples.fit(5000, {"keys": 6000}) == 10  # nothing at or below 5,000 but 10: the smallest allowed
    assert samples.bound_text(5000, {"keys": 256}) == "the choices here are 10, 200"
    word = Choice("b", choices=("a", "b", "c"), allowed=lambda v: v["ok"])
    assert word.fit("c", {"ok": ("a", "b")}) == "b" and word.fit("c", {"ok": ("a",)}) == "a"
    why = Int(0, lo=0, hi=3, why=lambda v, asked: f"{asked} is too many")
    assert why.bound_text(7, {}) == "7 is too many"


def _dependent_page():
    import streamlit as st

    from ui.page_state import PageState
    from ui.url import Int, Slots

    state = PageState(
        "dep",
        n=Int(8, lo=2, hi=16),
        t=Int(3, lo=0, hi=lambda v: v["n"] - 2, label="position t"),
        heads=Slots(("a", "b"), choices=("a", "b"), slots=2),
        half=Int(lambda v: v["n"] // 2, lo=1, hi=lambda v: v["n"], label="half"),
    )
    state.load()
    st.slider("n", **state.widget("n"))
    state.fit("t")  # as a page that uses t before its slider is drawn
    st.slider("t", **state.widget("t"))
    st.slider("half", **state.widget("half"))
    st.selectbox("head 1", **state.widget("heads", slot=1))
    state.notes()


def open_dependent_page():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_dependent_page, default_timeout=30)
    at.run()
    return at


def test_widget_gives_key_bounds_and_persistence_in_one_call():
    at = open_dependent_page()
    assert not at.exception
    t = at.slider(key="dep_t")
    assert (t.value, t.min, t.max) == (3, 0, 6)
    assert at.selectbox(key="dep_heads_1").value == "b" and at.selectbox(key="dep_heads_1").options == ["a", "b"]
    at.slider(key="dep_n").set_value(4).run()
    assert at.slider(key="dep_t").max == 2


def test_a_clamped_value_is_noted_and_comes_back_when_the_bound_allows_it():
    at = open_dependent_page()
    at.slider(key="dep_t").set_value(6).run()
    assert not at.caption
    at.slider(key="dep_n").set_value(4).run()
    assert not at.exception and at.slider(key="dep_t").value == 2
    assert [c.value for c in at.caption] == [
        "position t lowered from 6 to 2: at most 2 here. It goes back to 6 when that fits again."
    ]
    at.slider(key="dep_n").set_value(5).run()  # still too small for 6: held at the new bound, the note stays
    assert at.slider(key="dep_t").value == 3 and "lowered from 6 to 3" in at.caption[0].value
    at.slider(key="dep_n").set_value(16).run()
    assert at.slider(key="dep_t").value == 6 and not at.caption


def test_a_value_left_at_its_default_follows_the_default_and_a_chosen_one_stays():
    at = open_dependent_page()
    assert at.slider(key="dep_half").value == 4
    at.slider(key="dep_n").set_value(16).run()
    assert at.slider(key="dep_half").value == 8 and not at.caption  # untouched: half of n, not a clamp
    at.slider(key="dep_half").set_value(5).run()
    at.slider(key="dep_n").set_value(12).run()
    assert at.slider(key="dep_half").value == 5  # chosen: it stays while it fits


def test_a_value_chosen_after_the_clamp_replaces_the_one_asked_before():
    at = open_dependent_page()
    at.slider(key="dep_t").set_value(6).run()
    at.slider(key="dep_n").set_value(4).run()
    at.slider(key="dep_t").set_value(1).run()
    assert not at.caption
    at.slider(key="dep_n").set_value(16).run()
    assert at.slider(key="dep_t").value == 1 and not at.caption


def test_a_reconnecting_browser_keeps_the_values_its_widgets_hold():
    # A new session knows a widget's value only once the widget is drawn (Streamlit keeps the browser's
    # values under the widgets' ids until then): widget() must not write the value it reads before that.
    at = open_dependent_page()
    at.slider(key="dep_n").set_value(12).run()
    at.slider(key="dep_t").set_value(9).run()
    at.selectbox(key="dep_heads_1").set_value("a").run()
    back = reconnect(at)
    assert not back.exception
    assert back.slider(key="dep_n").value == 12 and back.slider(key="dep_t").value == 9
    assert back.slider(key="dep_half").value == 6 and back.selectbox(key="dep_heads_1").value == "a"
    assert (back.slider(key="dep_t").min, back.slider(key="dep_t").max) == (0, 10) and not back.caption
    back.slider(key="dep_n").set_value(4).run()  # and the bounds keep holding in the new session
    assert back.slider(key="dep_t").value == 2 and "lowered from 9 to 2" in back.caption[0].value
    back.slider(key="dep_t").set_value(1).run()
    again = reconnect(back)  # t's default (3) is above n - 2 = 2: fitting it must not replace the browser's 1
    assert again.slider(key="dep_n").value == 4 and again.slider(key="dep_t").value == 1


# ---------------------------------------------------------------- the shared module, in the app


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_page_reads_or_writes_the_link_by_hand(page):
    declared = ROOT / "ui" / "declared" / page.name  # a lesson page's declaration (ui/declared/__init__.py)
    source = page.read_text(encoding="utf-8") + (declared.read_text(encoding="utf-8") if declared.exists() else "")
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


def test_a_page_drawn_again_on_another_server_shows_the_same_view():
    # tests/browser/test_deploy.py kills the worker behind /heads with the causal mask on: the browser
    # reconnects to the other worker and must see the mask still on, and the link must still say so.
    at = open_page("pages/heads.py", {"seed": "12"})
    at.toggle(key="heads_causal").set_value(True).run()
    at.slider(key="heads_n_heads").set_value(4).run()
    assert at.query_params["causal"] == "1"
    back = reconnect(at, "pages/heads.py")
    assert not back.exception
    assert back.toggle(key="heads_causal").value is True and back.slider(key="heads_n_heads").value == 4
    assert back.query_params["causal"] == "1" and back.query_params["n_heads"] == "4"
    assert back.query_params["seed"] == "12"


# ---------------------------------------------------------------- the cost of a run


def _counting_page():
    import streamlit as st

    from ui.page_state import PageState
    from ui.url import Int

    reads = st.session_state.setdefault("reads", [])

    def counted(name, value):
        def default(values):
            reads.append(name)
            return value(values)

        return default

    state = PageState(
        "cnt",
        **{f"p{i}": Int(counted(f"p{i}", lambda v, i=i: i), lo=0, hi=lambda v, i=i: 10 + i) for i in range(6)},
    )
    state.load()
    reads.clear()
    state["p2"]
    st.session_state["reads_in_run"] = list(reads)
    if "p0_after_write" not in st.session_state:
        state.set("p0", 7)
        st.session_state["p0_after_write"] = state["p5"], state.values()["p0"]
    for i in range(6):
        st.slider(f"p{i}", **state.widget(f"p{i}"))
    st.session_state["records"] = sorted(k for k in st.session_state if k.startswith("_cnt"))


def test_a_value_reads_only_those_declared_before_it_and_a_write_is_read_back_in_the_same_run():
    """A default may depend on earlier values only: reading p2 reads p0, p1 and p2, never the three after it.
    A write through the state is read back in the same run."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_counting_page, default_timeout=30).run()
    assert not at.exception
    assert at.session_state["reads_in_run"] == ["p0", "p1", "p2"]
    assert at.session_state["p0_after_write"] == (5, 7)
    assert at.slider(key="cnt_p0").value == 7
    at.slider(key="cnt_p3").set_value(9).run()
    assert at.session_state["reads_in_run"] == ["p0", "p1", "p2"]
    assert [at.slider(key=f"cnt_p{i}").value for i in range(6)] == [7, 1, 2, 9, 4, 5]


def test_a_page_keeps_its_records_in_a_fixed_number_of_session_entries():
    """Streamlit copies every session entry twice a run: PageState's records (defaults, the bounds each widget
    was drawn with) live in one entry per page, however many parameters it declares."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_counting_page, default_timeout=30).run()
    assert at.session_state["records"] == ["_cnt_book"]


def test_a_first_run_stopped_while_reading_the_link_reads_it_again_on_the_next(monkeypatch):
    """A browser that reconnects to a live worker asks its new session for two runs at once, and Streamlit stops
    the first at its next st call or session-state access: here while the page reads its link. The next run
    must still take the link's values, and the stopped run must not have written the defaults into the link."""
    import streamlit as st

    import ui.page_state as page_state

    real, calls = page_state.browser_widget_keys, []

    def stopped_once():
        calls.append(1)
        if len(calls) == 2:  # the page's own state (app.py's shared state reads the link first)
            st.rerun()  # what Streamlit raises at a yield point when a newer run is asked for
        return real()

    monkeypatch.setattr(page_state, "browser_widget_keys", stopped_once)
    at = open_page("pages/heads.py", {"seed": "7", "n_heads": "2"})
    assert not at.exception and len(calls) == 3  # stopped while the page read its link, which it read again
    assert at.session_state["heads_seed"] == 7 and at.session_state["heads_n_heads"] == 2
    assert at.query_params["seed"] == "7" and at.query_params["n_heads"] == "2"


def test_decode_reads_a_link_as_a_first_run_would_without_the_session():
    """A link decoded on its own (a student's solution, a deck's step): every value in declared order, the missing
    ones at their default, a bound that depends on an earlier value applied, a bad value named and defaulted, as
    the page's first run reads the same link."""
    from ui.page_state import PageState
    from ui.url import Flag, Int

    state = PageState("dec", n=Int(4, lo=1, hi=8), t=Int(0, lo=0, hi=lambda v: v["n"] - 1), on=Flag(False))
    values, warnings = state.decode({"n": "3", "t": "2", "on": "1"})
    assert values == {"n": 3, "t": 2, "on": True} and warnings == []
    values, warnings = state.decode({"n": "2", "t": "5"})
    assert values == {"n": 2, "t": 0, "on": False} and "'t'=5 is outside 0..1" in warnings[0]  # n decides t's bound
    values, warnings = state.decode({"n": "x"})
    assert values["n"] == 4 and any("n" in w for w in warnings)
