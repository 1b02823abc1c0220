"""ui/minilm_inputs.py: the example and pair menus of the two pretrained pages, and the strip of tokens."""

from streamlit.testing.v1 import AppTest

from ui.minilm_inputs import tokens_strip


def _menus_page():
    import streamlit as st

    from ui.minilm_inputs import example_menu, pair_menu
    from ui.page_state import PageState
    from ui.url import Text

    state = PageState("menus", text=Text("start"), a=Text("left"), b=Text("right"))
    state.load()
    example_menu(state, "text", {"Short": "a short text", "Long": "a long text"}, key="menus_example", help="h1")
    st.text_area("Text", **state.widget("text"))
    pair_menu(state, ("a", "b"), {"Pair one": ("one A", "one B")}, key="menus_pair", help="h2")
    st.text_input("A", **state.widget("a"))
    st.text_input("B", **state.widget("b"))


def open_menus() -> AppTest:
    at = AppTest.from_function(_menus_page, default_timeout=30)
    at.run()
    assert not at.exception
    return at


def test_an_example_is_copied_into_its_box_and_the_menu_goes_back_to_its_placeholder():
    at = open_menus()
    menu = at.selectbox(key="menus_example")
    assert menu.value is None and menu.options == ["Short", "Long"] and menu.help == "h1"
    assert menu.placeholder == "Load an example…" and menu.label == "Load an example"
    menu.set_value("Long").run()
    assert at.text_area(key="menus_text").value == "a long text"  # the text, not its label
    assert at.selectbox(key="menus_example").value is None
    at.text_area(key="menus_text").set_value("edited").run()
    at.selectbox(key="menus_example").set_value("Long").run()  # the same pick again brings the text back
    assert at.text_area(key="menus_text").value == "a long text"
    assert (at.text_input(key="menus_a").value, at.text_input(key="menus_b").value) == ("left", "right")


def test_a_pair_is_copied_into_both_boxes_and_the_menu_goes_back_to_its_placeholder():
    at = open_menus()
    menu = at.selectbox(key="menus_pair")
    assert menu.label == "Load a pair" and menu.placeholder == "Load a pair…" and menu.help == "h2"
    menu.set_value("Pair one").run()
    assert (at.text_input(key="menus_a").value, at.text_input(key="menus_b").value) == ("one A", "one B")
    assert at.selectbox(key="menus_pair").value is None
    assert at.text_area(key="menus_text").value == "start"


def test_the_tokens_strip_numbers_each_token_and_escapes_it():
    strip = tokens_strip(["[CLS]", "<b>x</b>", "[SEP]"], [101, 7, 102])
    assert "<span title='position 1, id 7'>&lt;b&gt;x&lt;/b&gt;<small>1 · 7</small></span>" in strip
    assert strip.count("<span") == 3 and "<b>" not in strip and "<script" not in strip
