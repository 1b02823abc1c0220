"""The position page ("Where is position?") under AppTest: every control, and the numbers its figures show."""

import numpy as np
import pytest

from attention.dot_product import padded_attention
from attention.positions import (
    ALIBI_LATEX,
    ROPE_LATEX,
    ROPE_OFFSET_LATEX,
    SINUSOIDAL_LATEX,
    alibi_slopes,
    rope,
    sinusoidal_encoding,
)
from attention.pretrained import load_minilm
from lessons.positions.alibi import alibi_reading, alibi_windows
from lessons.positions.learned import (
    POSITION_COSINE_LATEX,
    WORD_PIECES,
    minilm_head,
    minilm_pieces,
    position_similarity,
    ripple_peaks,
)
from lessons.positions.masks import REACH_LATEX, padded_batch, reach_span, window_reach
from lessons.positions.rope import rope_offset_check
from lessons.positions.shuffle import SHUFFLE_LATEX, permutation, shuffle_check
from lessons.positions.sinusoidal import SHIFT_LATEX, shift_matrix
from lessons.positions.toy import METHOD_LABELS, attend, parse_words, toy_head, word_vectors
from tests.apptest_helpers import chart_by_key, heatmap_z, open_page, plotly_values, type_number
from tests.apptest_helpers import table_with_column as frame

PAGE = "pages/positions.py"
WORDS = parse_words("the dog chased the cat up the tall tree")[0]


def texts(elements) -> list[str]:
    return [e.value for e in elements]


def verdicts(at) -> list[str]:
    """The shuffle checks' outcomes on screen, e.g. "passed: No positions: ..." or "failed: RoPE: ..."."""
    return [
        ("passed: " if "green-badge" in m.value else "failed: ") + m.value.split("] ", 1)[1]
        for m in at.markdown
        if "-badge[" in m.value
    ]


def toy(d_model=16, seed=0, words=WORDS):
    return word_vectors(words, d_model, seed), toy_head(d_model, seed)


@pytest.fixture(scope="module")
def page():
    """The page with its defaults, run once for the tests that only read it."""
    at = open_page(PAGE)
    assert not at.exception
    return at


def test_the_defaults_show_the_check_passing_without_positions_and_failing_with_them(page):
    assert page.title[0].value == "Where is position?"
    x, head = toy()
    check = shuffle_check(x, head, permutation(len(WORDS), 1), "none")
    np.testing.assert_allclose(heatmap_z(chart_by_key(page, "pos_shuffle_none_before")), check.before.weights)
    np.testing.assert_allclose(heatmap_z(chart_by_key(page, "pos_shuffle_none_after")), check.after.weights)
    passed, failed = verdicts(page)
    assert passed.startswith("passed: No positions: after undoing the shuffle, the outputs are the same (")
    wrong = shuffle_check(x, head, permutation(len(WORDS), 1), "sinusoidal").max_diff
    assert failed == f"failed: Sinusoidal: after undoing the shuffle, the outputs differ by up to **{wrong:.2g}**."
    assert not page.error  # a failing check is the lesson's result, not an error of the app
    table = frame(page, "largest difference after undoing the shuffle")
    assert list(table["check"]) == ["✓ only shuffled", "✗ order was seen", "✗ order was seen", "✗ order was seen",
                                    "✓ only shuffled", "✗ order was seen"]  # fmt: skip
    assert float(table["largest difference after undoing the shuffle"][0]) < 1e-12
    assert dict(page.query_params) == {
        "text": " ".join(WORDS), "d_model": "16", "seed": "0", "shuffle": "1", "method": "sinusoidal",
        "table_n": "128", "head": "3", "table_d": "64", "shift": "3", "offset": "5", "heads": "8",
        "alibi_scores": "0", "n": "16", "window": "3", "layers": "3", "len_a": "9", "len_b": "4", "pad_causal": "0",
    }  # fmt: skip


def test_the_shuffle_button_moves_the_words_and_the_check_follows():
    at = open_page(PAGE)
    at.button(key="pos_shuffle_button").click().run()
    assert not at.exception and at.session_state["pos_shuffle"] == 2
    perm = permutation(len(WORDS), 2)
    shuffled = " ".join(WORDS[i] for i in perm)
    assert any(f"Shuffle 2:** {shuffled}" in m.value for m in at.markdown)
    x, head = toy()
    check = shuffle_check(x, head, perm, "sinusoidal")
    np.testing.assert_allclose(heatmap_z(chart_by_key(at, "pos_shuffle_with_after")), check.after.weights)
    assert at.query_params["shuffle"] == "2"
    at.button(key="pos_reset_button").click().run()
    assert at.session_state["pos_shuffle"] == 0 and any("original order" in i.value for i in at.info)
    np.testing.assert_allclose(
        heatmap_z(chart_by_key(at, "pos_shuffle_with_after")), heatmap_z(chart_by_key(at, "pos_shuffle_with_before"))
    )
    type_number(at, "pos_shuffle", "7")
    assert at.query_params["shuffle"] == "7" and [v[:19] for v in verdicts(at)] == [
        "passed: No position",
        "failed: Sinusoidal:",
    ]


@pytest.mark.parametrize("method, name", [("rope", "RoPE"), ("alibi", "ALiBi"), ("learned", "Learned absolute")])
def test_every_method_fails_the_check(method, name):
    at = open_page(PAGE, {"method": method})
    assert not at.exception
    passed, failed = verdicts(at)
    assert passed.startswith("passed: No positions:") and failed.startswith(f"failed: {name}: after undoing the")
    if method == "learned":  # both columns on the real model's word pieces
        model = load_minilm()
        ids = minilm_pieces(model, WORDS).ids
        np.testing.assert_allclose(
            heatmap_z(chart_by_key(at, "pos_shuffle_with_before")), minilm_head(model, ids, 2).weights, atol=1e-12
        )
        np.testing.assert_allclose(
            heatmap_z(chart_by_key(at, "pos_shuffle_none_before")),
            minilm_head(model, ids, 2, positions=False).weights,
            atol=1e-12,
        )


def test_words_width_and_seed_change_every_toy_figure():
    at = open_page(PAGE)
    at.text_input(key="pos_text").set_value("dog bites man").run()
    at.selectbox(key="pos_d_model").set_value(32).run()
    type_number(at, "pos_seed", "5")
    assert not at.exception and not at.error and verdicts(at)[1].startswith("failed: Sinusoidal:")
    words = ("dog", "bites", "man")
    x, head = toy(32, 5, words)
    grid = chart_by_key(at, "pos_four_ways")
    for trace, method in zip(grid["data"], ("none", "sinusoidal", "rope", "alibi")):
        np.testing.assert_allclose(plotly_values(trace["z"]), attend(x, head, method).weights, atol=1e-12)
    assert at.query_params["text"] == "dog bites man" and at.query_params["d_model"] == "32"
    assert at.slider(key="pos_len_a").value == 3  # the padded batch follows the shorter text


@pytest.mark.parametrize(
    "text, message",
    [("dog", "at least 2 words"), ("w " * 17, "at most 16 words"), ("a " + "y" * 30, "a word has 30 characters")],
)
def test_unusable_words_are_refused_with_a_message(text, message):
    at = open_page(PAGE)
    at.text_input(key="pos_text").set_value(text).run()
    assert not at.exception and any(message in e for e in texts(at.error))
    assert not at.get("plotly_chart")  # the page stopped after saying why
    assert at.query_params["text"] == text  # and the link holds what was typed


def test_the_learned_table_and_the_real_head():
    at = open_page(PAGE)
    at.selectbox(key="pos_table_n").set_value(32).run()
    at.slider(key="pos_head").set_value(5).run()
    assert not at.exception
    model = load_minilm()
    similarity = heatmap_z(chart_by_key(at, "pos_learned_similarity"))
    np.testing.assert_allclose(similarity, position_similarity(model.position_embeddings, 32))
    assert POSITION_COSINE_LATEX in [e.value.strip("$\n") for e in at.latex]  # the formula beside it, as it reads:
    e_pos = np.asarray(model.position_embeddings[:32], dtype=np.float64)
    norms = np.linalg.norm(e_pos, axis=1)
    np.testing.assert_allclose(similarity, e_pos @ e_pos.T / np.outer(norms, norms), rtol=0, atol=1e-9)
    ids = minilm_pieces(model, WORDS).ids
    for key, positions in (("pos_learned_with", True), ("pos_learned_without", False)):
        expected = minilm_head(model, ids, 4, positions=positions).weights
        np.testing.assert_allclose(heatmap_z(chart_by_key(at, key)), expected, atol=1e-12)
    table = frame(at, "distance q − p")
    assert table["distance q − p"].max() < 31
    assert any("show 128 positions or more" in m.value for m in at.markdown)  # no distance of 100 in 32 positions


def test_how_far_the_similarity_fades_is_read_from_the_table_shown():
    at = open_page(PAGE)
    at.selectbox(key="pos_table_n").set_value(512).run()
    table = frame(at, "distance q − p").set_index("distance q − p")["mean cosine (p ≥ 1)"]
    sentence = next(m.value for m in at.markdown if "fades slowly" in m.value)
    for d in (100, 200, 300):
        assert f"{table[d]:.2f} at {d}" in sentence


def test_head_three_reads_the_previous_token_only_with_positions(page):
    assert any("mean weight on the previous token 1.00" in m.value for m in page.markdown)
    for key, title in (("pos_learned_with", "with E_pos (as trained)"), ("pos_learned_without", "without E_pos")):
        previous = np.mean(np.diag(heatmap_z(chart_by_key(page, key)), -1))  # the heatmap drawn under the title
        assert any(m.value == f"**{title}**: mean weight on the previous token {previous:.2f}" for m in page.markdown)


def test_sinusoidal_table_width_and_shift():
    at = open_page(PAGE)
    at.selectbox(key="pos_table_d").set_value(16).run()
    type_number(at, "pos_shift", "10")
    assert not at.exception
    np.testing.assert_allclose(heatmap_z(chart_by_key(at, "pos_sinusoidal_table")), sinusoidal_encoding(100, 16))
    shown = [s.replace("\\", "") for s in texts(at.success)]  # the page escapes the brackets for markdown
    assert any("PE[p + 10] = PE[p] M_10" in s and "d = 16" in s for s in shown)
    m = heatmap_z(chart_by_key(at, "pos_shift_matrix"))
    assert m.shape == (16, 16) and m[0, 0] == pytest.approx(np.cos(10))


def test_rope_offset_check_and_the_two_score_heatmaps():
    at = open_page(PAGE)
    type_number(at, "pos_offset", "1000")
    assert not at.exception
    x, head = toy()
    check = rope_offset_check(x @ head.w_q, x @ head.w_k, 1000)
    np.testing.assert_allclose(heatmap_z(chart_by_key(at, "pos_rope_scores")), check.scores)
    np.testing.assert_allclose(heatmap_z(chart_by_key(at, "pos_rope_moved")), check.moved)
    assert any(s.startswith("Positions 0…8 and 1000…1008 give the same scores") for s in texts(at.success))
    # a square chart has no axis titles: the heading says which way round, as the numbers are (row i: query i)
    q_rot, k_rot = rope(x @ head.w_q), rope(x @ head.w_k)
    np.testing.assert_allclose(heatmap_z(chart_by_key(at, "pos_rope_scores"))[2, 5], q_rot[2] @ k_rot[5])
    assert any(m.value.endswith("(q·k after rotation; rows: queries, columns: keys)") for m in at.markdown)


def test_alibi_heads_and_the_scores_toggle():
    at = open_page(PAGE)
    at.slider(key="pos_heads").set_value(12).run()
    assert not at.exception
    bars = chart_by_key(at, "pos_alibi_slopes")["data"][0]
    np.testing.assert_allclose(plotly_values(bars["y"]), alibi_slopes(12))
    grid = chart_by_key(at, "pos_alibi_heads")["data"]
    assert len(grid) == 12
    np.testing.assert_allclose(plotly_values(grid[0]["z"]), alibi_windows(len(WORDS), 12)[0], atol=1e-12)
    at.toggle(key="pos_alibi_scores").set_value(True).run()
    x, head = toy()
    expected = attend(x, head, "alibi", alibi_heads=12, alibi_head=11, causal=True).weights
    np.testing.assert_allclose(plotly_values(chart_by_key(at, "pos_alibi_heads")["data"][11]["z"]), expected)
    assert at.query_params["heads"] == "12" and at.query_params["alibi_scores"] == "1"


def test_the_sliding_window_reaches_one_window_per_layer():
    at = open_page(PAGE)
    at.slider(key="pos_n").set_value(20).run()
    at.slider(key="pos_window").set_value(4).run()
    at.slider(key="pos_layers").set_value(2).run()
    assert not at.exception
    z = heatmap_z(chart_by_key(at, "pos_window_reach"))
    expected = window_reach(20, 4, 2)
    np.testing.assert_array_equal(np.nan_to_num(z), expected)
    assert any("heard from 7 positions: L(w − 1) + 1 = 2·3 + 1 = 7" in s for s in texts(at.success))
    # 20 columns in half the page leave no room for numbers in the cells: the text speaks of colours, and names
    # the axes, whose titles a square chart drops
    trace = chart_by_key(at, "pos_window_reach")["data"][0]
    assert "texttemplate" not in trace and "title" not in chart_by_key(at, "pos_window_reach")["layout"]["xaxis"]
    said = next(m.value for m in at.markdown if "mask itself" in m.value)
    assert "Rows are queries i, columns keys j. A cell's colour is the first layer" in said and "marked" not in said
    assert "hops of at most 3 positions. Blank: not within 2 layers." in said
    at.slider(key="pos_n").set_value(3).run()  # a window wider than the sequence follows it down
    assert not at.exception and at.slider(key="pos_window").value == 3


def test_the_padded_batch():
    at = open_page(PAGE)
    at.slider(key="pos_len_a").set_value(6).run()
    at.slider(key="pos_len_b").set_value(2).run()
    at.toggle(key="pos_pad_causal").set_value(True).run()
    assert not at.exception
    x, lengths, _ = padded_batch([list(WORDS[:6]), list(WORDS[-2:])], 16, 0)
    head = toy_head(16, 0)
    result = padded_attention(x @ head.w_q, x @ head.w_k, x @ head.w_v, lengths, causal=True)
    for b in range(2):
        z = heatmap_z(chart_by_key(at, f"pos_padding_{b + 1}"))
        np.testing.assert_allclose(z, result.weights[b])
        assert np.all(np.isfinite(z)) and np.all(z[:, lengths[b] :] == 0.0)
    figure = chart_by_key(at, "pos_padding_2")
    assert len(figure["layout"]["shapes"]) == 4  # the four padded queries, greyed out
    assert any("Unused query rows: 4" in s for s in texts(at.success))


def test_a_link_restores_every_control():
    query = {
        "text": "a b c d e",
        "d_model": "8",
        "seed": "3",
        "shuffle": "9",
        "method": "rope",
        "table_n": "64",
        "head": "7",
        "table_d": "32",
        "shift": "2",
        "offset": "40",
        "heads": "5",
        "alibi_scores": "1",
        "n": "10",
        "window": "4",
        "layers": "5",
        "len_a": "5",
        "len_b": "1",
        "pad_causal": "1",
    }
    at = open_page(PAGE, query)
    assert not at.exception and not at.warning
    assert dict(at.query_params) == query
    assert at.selectbox(key="pos_method").value == "rope" and at.slider(key="pos_head").value == 7


def test_the_page_is_in_the_navigation():
    at = open_page("pages/positions.py")
    _, sections = at.session_state["_navigation_pages"]
    found = [(name, p.title, p.icon) for name, pages in sections.items() for p in pages if p.url_path == "positions"]
    assert found == [("Inside the transformer", "Where is position?", ":material/pin_drop:")]


def test_cached_heatmaps_still_get_their_cell_numbers_sized_for_presenter_mode(page):
    # The page caches its figures as JSON (z as plotly's typed array): chart() must still size their numbers.
    normal = chart_by_key(page, "pos_shuffle_none_before")["data"][0]
    presenting = chart_by_key(open_page(PAGE, {"present": "1"}), "pos_shuffle_none_before")["data"][0]
    assert normal["texttemplate"] and presenting["texttemplate"]
    assert presenting["textfont"]["size"] > normal["textfont"]["size"] >= 10
    assert chart_by_key(page, "pos_four_ways")["layout"]["template"] == {}  # Streamlit's theme styles it


def test_without_the_model_package_the_page_says_so_and_the_rest_works(monkeypatch):
    import streamlit as st

    import attention.pretrained as pretrained

    def missing():
        raise FileNotFoundError("the weights of all-MiniLM-L6-v2 were not found (test)")

    st.cache_resource.clear()
    st.cache_data.clear()
    monkeypatch.setattr(pretrained, "_load_cached", missing)
    try:
        at = open_page(PAGE, {"method": "learned"})
        assert not at.exception and not at.error
        assert any("not installed" in i.value for i in at.info)
        assert len(verdicts(at)) == 1  # the toy's check without positions; the learned one needs the model
        assert "pos_learned_similarity" not in str([c.proto.id for c in at.get("plotly_chart")])
        assert len(frame(at, "largest difference after undoing the shuffle")) == 4  # the toy's rows only
    finally:
        st.cache_resource.clear()
        st.cache_data.clear()


# ---------------------------------------------------------------- controls bounded by another control


class Browser:
    """What a browser shows in the sliders of an AppTest run, and the run it makes next.

    A slider keeps showing its own value while its widget id stays the same. A slider whose bound moved is a new
    widget to Streamlit (the bounds are part of its id): the browser draws it at the value the server sent with
    it, or else at its default, the minimum, and sends that back with the next run."""

    def __init__(self, at, *keys: str):
        self.at, self.keys, self.shown = at, keys, {}
        self.look()

    def look(self) -> None:
        shown = {}
        for key in self.keys:
            proto = self.at.slider(key=key).proto
            if proto.set_value or proto.id not in self.shown:
                shown[proto.id] = int((proto.value if proto.set_value else proto.default)[0])
            else:
                shown[proto.id] = self.shown[proto.id]
        self.shown = shown

    def __getitem__(self, key: str) -> int:
        return self.shown[self.at.slider(key=key).proto.id]

    def run(self, widget=None, value=None):
        """Change `widget` (or nothing), then run with every slider sending what it shows."""
        for key in self.keys:
            if widget is None or getattr(widget, "key", None) != key:
                self.at.slider(key=key).set_value(self[key])
        if widget is not None:
            widget.set_value(value)
            if getattr(widget, "key", None) in self.keys:  # the student moved this slider: it shows the new value
                self.shown[widget.proto.id] = value
        self.at.run()
        self.look()
        return self.at


LENGTHS = ("pos_len_a", "pos_len_b")


@pytest.mark.parametrize("via_17", [False, True])
def test_padding_lengths_follow_the_text_from_16_words_to_7_without_a_crash(via_17):
    """Issue 32: 16 words then 7 (or 16, 17 refused, then 7) crashed the padding section with
    StreamlitValueAboveMaxError, after both lengths had silently become 1 on the way."""
    at = open_page(PAGE)
    browser = Browser(at, *LENGTHS)
    assert (browser["pos_len_a"], browser["pos_len_b"]) == (9, 4)
    browser.run(at.text_input(key="pos_text"), " ".join(f"w{i}" for i in range(16)))
    assert not at.exception and (browser["pos_len_a"], browser["pos_len_b"]) == (16, 8)  # all the words, and half
    browser.run()
    assert not at.exception and (browser["pos_len_a"], browser["pos_len_b"]) == (16, 8)
    assert (at.query_params["len_a"], at.query_params["len_b"]) == ("16", "8")
    if via_17:
        at.text_input(key="pos_text").set_value(" ".join(f"w{i}" for i in range(17))).run()
        assert not at.exception and any("at most 16 words" in e.value for e in at.error)
        at.text_input(key="pos_text").set_value(" ".join(f"v{i}" for i in range(7))).run()
        browser.look()
    else:
        browser.run(at.text_input(key="pos_text"), " ".join(f"v{i}" for i in range(7)))
    assert not at.exception and (browser["pos_len_a"], browser["pos_len_b"]) == (7, 3)
    browser.run()
    assert not at.exception and (browser["pos_len_a"], browser["pos_len_b"]) == (7, 3)
    assert not any("Sequence" in i.value for i in at.info)  # the defaults were followed: nothing to say


def test_a_length_the_student_chose_is_kept_said_when_it_cannot_be_and_comes_back():
    at = open_page(PAGE)
    browser = Browser(at, *LENGTHS)
    browser.run(at.slider(key="pos_len_a"), 6)
    browser.run(at.text_input(key="pos_text"), "a b c d")
    assert not at.exception and (browser["pos_len_a"], browser["pos_len_b"]) == (4, 2)
    notes = [i.value for i in at.info if i.value.startswith("Sequence")]
    assert notes == [
        "Sequence 1's length lowered from 6 to 4: the text has 4 words. It goes back to 6 when that fits again."
    ]
    browser.run()
    browser.run(at.text_input(key="pos_text"), " ".join(WORDS))
    assert not at.exception and (browser["pos_len_a"], browser["pos_len_b"]) == (6, 4)
    assert not any(i.value.startswith("Sequence") for i in at.info)
    x, lengths, _ = padded_batch([list(WORDS[:6]), list(WORDS[-4:])], 16, 0)
    head = toy_head(16, 0)
    expected = padded_attention(x @ head.w_q, x @ head.w_k, x @ head.w_v, lengths).weights[0]
    np.testing.assert_allclose(heatmap_z(chart_by_key(at, "pos_padding_1")), expected)


def test_the_window_comes_back_when_n_allows_it_and_says_so_meanwhile():
    at = open_page(PAGE, {"n": "16", "window": "10"})
    browser = Browser(at, "pos_n", "pos_window")
    assert browser["pos_window"] == 10
    browser.run(at.slider(key="pos_n"), 2)
    assert not at.exception and browser["pos_window"] == 2
    assert [i.value for i in at.info if "window" in i.value] == [
        "Window w lowered from 10 to 2: a window holds at most the n = 2 positions of the sequence. "
        "It goes back to 10 when that fits again."
    ]
    np.testing.assert_array_equal(np.nan_to_num(heatmap_z(chart_by_key(at, "pos_window_reach"))), window_reach(2, 2, 3))
    browser.run(at.slider(key="pos_n"), 32)
    assert not at.exception and browser["pos_window"] == 10 and at.query_params["window"] == "10"
    assert not any("window" in i.value for i in at.info)
    np.testing.assert_array_equal(
        np.nan_to_num(heatmap_z(chart_by_key(at, "pos_window_reach"))), window_reach(32, 10, 3)
    )


# ---------------------------------------------------------------- every sentence true (issue 31)


def test_the_shift_matrix_drawn_is_the_corner_of_the_one_checked(page):
    """At the default d = 64 the matrix drawn is the corner of M_k for d = 64, which the success box checks; the
    one built for d = 16 differs from it by up to 1.2."""
    drawn = heatmap_z(chart_by_key(page, "pos_shift_matrix"))
    np.testing.assert_allclose(drawn, shift_matrix(3, 64)[:16, :16])
    assert np.abs(drawn - shift_matrix(3, 16)).max() > 1
    assert any("M_3 for d = 64, its first 16 rows and columns" in c.value for c in page.caption)
    assert any("with d = 64" in s.value for s in page.success)


@pytest.mark.parametrize("heads", [1, 2, 8, 12])
def test_what_the_alibi_sentences_say_is_what_the_slopes_on_screen_do(heads):
    at = open_page(PAGE, {"heads": str(heads)})
    assert not at.exception
    slopes = plotly_values(chart_by_key(at, "pos_alibi_slopes")["data"][0]["y"])
    np.testing.assert_allclose(slopes, alibi_slopes(heads))
    sentence = next(m.value for m in at.markdown if "the word 8 back gets" in m.value)
    assert sentence == " ".join(alibi_reading(slopes, len(WORDS)))
    steep, flat = int(np.argmax(slopes)) + 1, int(np.argmin(slopes)) + 1
    if heads > 1:
        assert f"Head {steep} is the steepest" in sentence and f"Head {flat} is the flattest" in sentence
    # the window each head makes, drawn below, is the one the sentence describes: the farthest word's weight
    windows = chart_by_key(at, "pos_alibi_heads")["data"]
    farthest = plotly_values(windows[flat - 1]["z"])[-1]
    assert f"= {farthest[0] / farthest[-1]:.2g} times the weight" in sentence
    assert not any("almost everywhere" in m.value or "spread evenly" in m.value for m in [*at.markdown, *at.caption])


def test_the_four_ways_grid_names_its_methods_not_heads(page):
    for trace, method in zip(chart_by_key(page, "pos_four_ways")["data"], ("none", "sinusoidal", "rope", "alibi")):
        assert trace["name"] == METHOD_LABELS[method]
        assert all(c.startswith(METHOD_LABELS[method] + ": query ") for row in trace["customdata"] for c in row)


def test_alibi_without_the_causal_mask_is_said_where_it_runs(page):
    said = [c.value for c in page.caption if "without the causal mask" in c.value]
    assert len(said) == 2  # under the check table (section 1) and under the four ways (section 2)
    assert all(f"sections 1 and 2 is head 1 of H = 8 (m = {alibi_slopes(8)[0]:.3g}), run without" in c for c in said)
    x, head = toy()
    alibi = attend(x, head, "alibi", alibi_heads=8)
    assert np.array_equal(alibi.masked[0], alibi.scaled[0])  # the first query: no bias at all
    assert np.all(alibi.weights[0, 1:] > 0)  # and it reads the words after it
    assert any("the heatmaps below use the causal mask" in m.value for m in page.markdown)


def test_the_introduction_does_not_overstate_and_the_terms_are_defined(page):
    text = " ".join(m.value for m in page.markdown)
    assert "differs most" not in text and "grouped-query attention, Ainslie et al. 2023" in text
    assert "LN is layer normalisation" in text and "E_type is BERT's segment vector" in text
    assert "between [CLS] and [SEP], the marker tokens" in text and "[CLS] (the marker token" in text
    # the symbols the formulas use, said in words before them: S, R_p with m and n, ALiBi's distance i − j
    assert "The scores S = Q Kᵀ / √d (d: the length of q and k) become P S Pᵀ" in text
    assert "With R_p the rotation of every pair at position p, a query at position m and a key at position n" in text
    assert "A key i − j positions before query i loses m_h·(i − j) of score" in text
    assert "decoder-only stacks (one causal stack, no encoder)" in text


def test_the_ripple_and_the_rounding_sentences_quote_the_numbers_on_screen(page):
    model = load_minilm()
    peaks = ripple_peaks(position_similarity(model.position_embeddings, 128))
    sentence = next(m.value for m in page.markdown if "it ripples" in m.value)
    assert f"distances {', '.join(map(str, peaks[:-1]))} and {peaks[-1]} (about every 6 positions" in sentence
    assert (peaks[-1] - peaks[0]) / (len(peaks) - 1) == pytest.approx(6, abs=0.5)
    table = frame(page, "largest difference after undoing the shuffle")
    passed = table[table["check"] == "✓ only shuffled"]["largest difference after undoing the shuffle"]
    largest = max(float(d) for d in passed)
    assert any(f"The differences marked ✓ (at most {largest:.2g})" in c.value for c in page.caption)
    assert any(
        f"{reach_span(4096, 32):,} positions" in c.value and "Jiang et al. 2023" in c.value for c in page.caption
    )
    assert reach_span(4096, 32) == 131_041  # the paper's "about 131K"
    assert any("rounds L·w = 131,072 to 'approximately 131K'" in c.value for c in page.caption)


def shuffle_giving(n: int, perm: list[int]) -> int:
    """The shuffle number whose permutation of n words is `perm`."""
    return next(s for s in range(1, 10_000) if permutation(n, s).tolist() == perm)


@pytest.mark.parametrize(
    "text, method, perm",
    [("你 好 dog", "learned", [1, 0, 2]), ("😀 🙂", "learned", [1, 0]), ("the cat the", "sinusoidal", [2, 1, 0])],
)
def test_a_shuffle_that_only_swaps_equal_tokens_is_not_called_a_change(text, method, perm):
    """Issue 32: two [UNK] shuffled to an identical heatmap were headed "changed, not just moved" and badged
    "order was seen". A shuffle that leaves the input as it was has nothing to show, and the page says so."""
    words = parse_words(text)[0]
    at = open_page(PAGE, {"text": text, "method": method, "shuffle": str(shuffle_giving(len(words), perm))})
    assert not at.exception
    before, after = (heatmap_z(chart_by_key(at, f"pos_shuffle_with_{k}")) for k in ("before", "after"))
    np.testing.assert_array_equal(before, after)  # the charts: nothing moved
    assert not any("changed, not just moved" in m.value for m in at.markdown)
    assert sum("**: the same input" in m.value for m in at.markdown) == 2  # both columns' headings
    said = [m.value for m in at.markdown if "nothing to compare" in m.value]
    assert len(said) == 2 and all(v.startswith(":gray-badge[") for v in said)
    assert "order was seen" not in " ".join(m.value for m in at.markdown if "-badge[" in m.value)
    table = frame(at, "largest difference after undoing the shuffle")
    checks = list(table["check"])
    differences = list(table["largest difference after undoing the shuffle"])
    assert [d for d, c in zip(differences, checks) if c == "– nothing moved"] == ["–"] * checks.count("– nothing moved")
    if method == "learned":
        assert "[UNK]" in minilm_pieces(load_minilm(), words).tokens
        unknown = [e.value for e in [*at.info, *at.caption] if "UNK\\] is the tokenizer's unknown token" in e.value]
        assert len(unknown) == 2 and all(w in unknown[0] for w in words if w != "dog")  # section 1 and the real head
        assert checks[-2:] == ["– nothing moved", "– nothing moved"]
    else:
        assert checks[:4] == ["– nothing moved"] * 4


def test_word_pieces_are_defined_where_they_are_used_and_do_split_a_rarer_word():
    pieces = minilm_pieces(load_minilm(), ["the", "unbelievably"])
    assert pieces.word_of.tolist().count(0) == 1 and pieces.word_of.tolist().count(1) > 1  # one piece; several
    for query in ({}, {"method": "learned"}):
        at = open_page(PAGE, query)
        shown = [e.value for e in [*at.markdown, *at.caption] if "word pieces" in e.value]
        assert shown and all(WORD_PIECES in v for v in shown)


def test_unknown_tokens_are_named_only_when_there_are_some():
    at = open_page(PAGE, {"method": "learned"})
    assert not any("UNK" in e.value for e in [*at.info, *at.caption])


def test_every_formula_on_screen_runs_against_the_core(page):
    """Each formula the page shows, written out in numpy as it reads, against the code the page runs."""
    shown = [e.value.strip("$\n") for e in page.latex]
    for latex in (SHUFFLE_LATEX, SINUSOIDAL_LATEX, SHIFT_LATEX, ROPE_LATEX, ROPE_OFFSET_LATEX, ALIBI_LATEX):
        assert latex in shown
    assert REACH_LATEX in shown
    rng = np.random.default_rng(0)
    d, base, i = 16, 10000.0, np.arange(8)
    theta = base ** (-2 * i / d)  # θ_i = base^(−2i/d)
    p = np.arange(60)[:, None]
    pe = np.empty((60, d))
    pe[:, 0::2], pe[:, 1::2] = np.sin(p / base ** (2 * i / d)), np.cos(p / base ** (2 * i / d))
    np.testing.assert_allclose(sinusoidal_encoding(60, d), pe, atol=1e-12)  # SINUSOIDAL_LATEX
    k = 7
    m_k = np.zeros((d, d))
    for j, t in enumerate(theta):
        m_k[2 * j : 2 * j + 2, 2 * j : 2 * j + 2] = [[np.cos(k * t), -np.sin(k * t)], [np.sin(k * t), np.cos(k * t)]]
    np.testing.assert_allclose(pe[k:], pe[:-k] @ m_k, atol=1e-12)  # SHIFT_LATEX: PE_{p+k} = PE_p M_k
    np.testing.assert_allclose(shift_matrix(k, d), m_k, atol=1e-15)
    x = rng.standard_normal((5, d))
    rotated = np.stack(
        [
            np.concatenate(
                [
                    [[np.cos(q * t), -np.sin(q * t)], [np.sin(q * t), np.cos(q * t)]] @ x[q, 2 * j : 2 * j + 2]
                    for j, t in enumerate(theta)
                ]  # fmt: skip
            )
            for q in range(5)
        ]
    )
    np.testing.assert_allclose(rope(x), rotated, atol=1e-12)  # ROPE_LATEX, pair by pair
    q_vec, k_vec = rng.standard_normal((2, 1, d))
    for m, n in ((3, 10), (12, 4)):  # ROPE_OFFSET_LATEX: <R_m q, R_n k> = <q, R_{n−m} k>
        left = rope(q_vec, np.array([m]))[0] @ rope(k_vec, np.array([n]))[0]
        assert left == pytest.approx(q_vec[0] @ rope(k_vec, np.array([n - m]))[0], abs=1e-12)
    x, head = toy()
    q, k_, n_words = x @ head.w_q, x @ head.w_k, len(WORDS)
    for h in (1, 8):  # ALIBI_LATEX with H = 8, a power of two, and the causal mask of the heatmaps
        scores = q @ k_.T / np.sqrt(q.shape[1]) - 2 ** (-8 * h / 8) * (np.arange(n_words)[:, None] - np.arange(n_words))
        scores[np.triu_indices(n_words, 1)] = -np.inf
        weights = np.exp(scores - scores.max(axis=1, keepdims=True))
        weights /= weights.sum(axis=1, keepdims=True)
        steps = attend(x, head, "alibi", alibi_heads=8, alibi_head=h - 1, causal=True)
        np.testing.assert_allclose(steps.weights, weights, atol=1e-12)
    perm = permutation(n_words, 3)  # SHUFFLE_LATEX: Attention(PQ, PK, PV) = P Attention(Q, K, V)
    check = shuffle_check(x, head, perm)
    np.testing.assert_allclose(check.after.output, check.before.output[perm], atol=1e-12)
    for window, layers in ((3, 2), (4, 5)):  # REACH_LATEX: i − L(w − 1) ≤ j ≤ i
        first = window_reach(40, window, layers)
        np.testing.assert_array_equal(np.flatnonzero(first[-1]), np.arange(39 - layers * (window - 1), 40))


def test_the_sinusoidal_sentences_quote_the_table_drawn():
    at = open_page(PAGE, {"table_d": "32"})
    table = heatmap_z(chart_by_key(at, "pos_sinusoidal_table"))
    lengths = np.linalg.norm(table, axis=1)
    assert np.allclose(lengths, lengths[0])  # every row the same length...
    assert any(f"√(d/2) = √16 ≈ {lengths[0]:.3g}." in m.value for m in at.markdown)  # ...the one quoted
    assert table[1, 0] == pytest.approx(np.sin(1.0)) and any(
        "θ₀ = 1 radian per position" in m.value for m in at.markdown
    )
    assert np.allclose(alibi_slopes(8), [2.0**-e for e in range(1, 9)])  # the slider's help: 1/2, 1/4, …, 1/256


def test_the_learned_table_sentence_quotes_the_table_and_every_paper_is_named(page):
    model = load_minilm()
    table = np.asarray(model.position_embeddings[:128], dtype=np.float64)  # the default 128 positions shown
    sims = position_similarity(table, 128)
    norms = np.linalg.norm(table, axis=1)
    sentence = next(m.value for m in page.markdown if "one step apart" in m.value)
    assert f"(cosine {np.mean(np.diag(sims, 1)[1:]):.2f} one step apart)" in sentence
    assert f"its vector is {norms[0]:.2f} long, the others about {np.median(norms[1:]):.2f}." in sentence
    # "unlike the rest": position 0 is over three times longer than any other, and far less like its neighbour
    assert norms[0] > 3 * norms[1:].max() and sims[0, 1] < np.mean(np.diag(sims, 1)[1:]) - 0.5
    headings = " ".join(h.value for h in page.subheader)
    for paper in ("Vaswani et al. 2017", "Su et al. 2021, RoFormer", "Press et al. 2022"):
        assert paper in headings
    text = " ".join(m.value for m in page.markdown)
    assert "BERT-style models (Devlin et al. 2019)" in text and "Ainslie et al. 2023" in text
    assert any("Jiang et al. 2023" in c.value for c in page.caption)
    assert any("a word then sees only itself and the words before it" in c.value for c in page.caption)
    # the paper's slopes are for powers of two; other H come from the authors' code, and the help says so
    assert (
        "the workaround in the authors' code (the paper trains powers of two only)" in page.slider(key="pos_heads").help
    )
