"""The Predict page under AppTest: nothing is revealed before a guess for every query, then the score is right."""

import numpy as np

from attention import attention_steps
from lessons.examples import random_example
from lessons.puzzles import PUZZLES_BY_ID
from tests.apptest_helpers import chart_by_key, heatmap_z, open_page
from ui.url import encode_sequence

PAGE = "pages/predict.py"


def guess_boxes(at):
    return [s for s in at.selectbox if str(s.key).startswith("predict_guess_")]


def weight_boxes(at):
    return [x for x in at.text_input if str(x.key).startswith("predict_weight_")]  # number boxes (text)


def has_heatmap(at) -> bool:
    return any(c.proto.id.endswith("-predict_heatmap") for c in at.get("plotly_chart"))


def guess(at, keys, weights=None):
    for i, j in enumerate(keys):
        guess_boxes(at)[i].set_value(j).run()
    for i, w in enumerate(weights or []):
        weight_boxes(at)[i].input("" if w is None else str(w)).run()
    return at


def test_nothing_is_revealed_before_every_query_has_a_guess():
    at = open_page(PAGE)
    assert not at.exception
    assert at.selectbox(key="predict_puzzle").value == "aligned"
    assert len(guess_boxes(at)) == 3 and all(s.value is None for s in guess_boxes(at))
    assert at.button(key="predict_reveal").disabled and not has_heatmap(at) and not at.metric
    assert any("if you cannot predict the output, you are testing nothing" in i.value for i in at.info)
    guess(at, [0, 1])  # two of three queries
    assert at.button(key="predict_reveal").disabled and not has_heatmap(at)
    assert any("1 more query" in c.value for c in at.caption)


def test_reveal_scores_the_guesses_and_explains_the_misses():
    at = open_page(PAGE)
    guess(at, [0, 0, 2], [0.9, None, 0.2])  # query 1 is wrong: q_1 = (0, 1) points at k_1 = (0, 2)
    assert not at.button(key="predict_reveal").disabled
    at.button(key="predict_reveal").click().run()
    assert not at.exception and has_heatmap(at)
    p = PUZZLES_BY_ID["aligned"]
    expected = attention_steps(p.seq.q, p.seq.k, p.seq.v).weights
    np.testing.assert_allclose(heatmap_z(chart_by_key(at, "predict_heatmap")), expected, atol=1e-12)
    assert at.metric[0].value == "2 / 3"
    assert len(at.success) == 2 and len(at.error) == 1
    miss = at.error[0].value
    assert "You picked k_0 'east' (q_1·k_0 = 0" in miss and "q_1·k_1 = 2 is the largest" in miss
    assert "off by" in at.success[1].value  # guessed 0.2 for a top weight of 0.768
    assert all(s.disabled for s in guess_boxes(at))  # guesses are frozen once revealed


def test_changing_the_puzzle_hides_the_reveal_again():
    at = open_page(PAGE)
    guess(at, [0, 1, 2])
    at.button(key="predict_reveal").click().run()
    assert has_heatmap(at) and at.metric[0].value == "3 / 3"
    at.selectbox(key="predict_puzzle").set_value("length").run()
    assert not at.exception and not has_heatmap(at)
    assert len(guess_boxes(at)) == 4 and all(s.value is None for s in guess_boxes(at))
    assert at.query_params["puzzle"] == "length"
    # the hardest trap of this puzzle: the long key k_1 beats the aligned short k_0 for q_0
    guess(at, [0, 1, 3, 1])
    at.button(key="predict_reveal").click().run()
    assert at.metric[0].value == "3 / 4" and "q_0·k_1 = 8 is the largest" in at.error[0].value


def test_try_again_clears_the_guesses():
    at = open_page(PAGE)
    guess(at, [0, 1, 2])
    at.button(key="predict_reveal").click().run()
    at.button(key="predict_again").click().run()
    assert not has_heatmap(at) and all(s.value is None for s in guess_boxes(at))


def test_make_your_own_copies_the_playground_vectors():
    seq = random_example(4, 3, 2, seed=2).seq
    at = open_page(PAGE, state={"seq": seq})
    at.selectbox(key="predict_puzzle").set_value("own").run()
    assert not at.exception and at.session_state["predict_seq"].equals(seq)
    best = attention_steps(seq.q, seq.k, seq.v).weights.argmax(axis=1)
    guess(at, [int(j) for j in best])
    at.button(key="predict_reveal").click().run()
    assert at.metric[0].value == "4 / 4"
    np.testing.assert_allclose(
        heatmap_z(chart_by_key(at, "predict_heatmap")), attention_steps(seq.q, seq.k, seq.v).weights, atol=1e-12
    )
    assert at.query_params["puzzle"] == "own" and at.query_params["q"] == encode_sequence(seq)["q"]


def test_editing_your_own_vectors_after_the_reveal_hides_it():
    at = open_page(PAGE, query={"puzzle": "own"})
    guess(at, [0, 0, 0, 0])
    at.button(key="predict_reveal").click().run()
    assert has_heatmap(at)
    at.text_area(key="predict_seq_text_k").set_value("1 0; 0 1; 1 0; 0 1").run()
    assert not at.exception and not has_heatmap(at)


def test_the_url_picks_the_puzzle_and_a_bad_one_warns():
    at = open_page(PAGE, query={"puzzle": "four-d"})
    assert at.selectbox(key="predict_puzzle").value == "four-d" and not at.warning
    at = open_page(PAGE, query={"puzzle": "<b>nope</b>"})
    assert not at.exception and at.selectbox(key="predict_puzzle").value == "aligned"
    assert any("'puzzle' should be one of" in w.value for w in at.warning)
