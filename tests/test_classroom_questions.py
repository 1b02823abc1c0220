"""The questions built from the Predict page and the Playground, and the chart of a class's answers."""

import numpy as np
import pytest

from attention import attention_steps
from attention.sequence import TokenSequence
from classroom.questions import check_question, check_truth, option_texts, prompt_text
from lessons.puzzles import PUZZLES
from ui.classroom_questions import (
    argmax_question,
    counts,
    distribution_figure,
    predict_question,
    row_question,
    truth_bars,
    weight_question,
)


@pytest.mark.parametrize("puzzle", PUZZLES, ids=lambda p: p.id)
def test_a_predict_question_has_the_puzzles_keys_and_its_true_answer(puzzle):
    weights = attention_steps(puzzle.seq.q, puzzle.seq.k, puzzle.seq.v).weights
    for query in range(len(puzzle.seq.tokens)):
        question, truth = predict_question(puzzle.id, query)
        assert check_question(question) == question  # the store takes it as it is
        assert len(option_texts(question)) == len(puzzle.seq.tokens)
        assert truth and all(weights[query, t] >= weights[query].max() - 1e-9 for t in truth)
        assert sorted(set(range(len(puzzle.seq.tokens))) - set(truth)) == [
            j for j in range(len(puzzle.seq.tokens)) if weights[query, j] < weights[query].max() - 1e-9
        ], "every tied key is in the answer, no other"
        assert check_truth(question, truth) == truth


def test_a_playground_question_follows_the_mask_and_the_scaling():
    seq = TokenSequence(("a", "b", "c"), [[1, 0], [0, 1], [3, 3]], [[0, 1], [1, 0], [4, 4]], np.eye(3))
    # without the mask, query 1 attends most to key 2 (the longest key); with it, keys 0 and 1 only: key 0
    assert argmax_question(seq, 1, causal=False, scale=True, source={})[1] == [2]
    assert argmax_question(seq, 1, causal=True, scale=True, source={})[1] == [0]
    # what the mask alone answers is not asked: query 0's row, and a key after the query
    with pytest.raises(ValueError, match="query 0 reads only itself"):
        argmax_question(seq, 0, causal=True, scale=True, source={})
    with pytest.raises(ValueError, match="query 1 gives every later key exactly 0"):
        weight_question(seq, 1, 2, causal=True, scale=True, source={})
    with pytest.raises(ValueError, match="query 0 reads only itself"):
        row_question(seq, 0, causal=True, scale=True, source={})
    _, scaled = weight_question(seq, 1, 0, causal=False, scale=True, source={})
    _, raw = weight_question(seq, 1, 0, causal=False, scale=False, source={})
    assert scaled == pytest.approx(attention_steps(seq.q, seq.k, seq.v).weights[1, 0], abs=1e-15)
    assert raw == pytest.approx(attention_steps(seq.q, seq.k, seq.v, scale=False).weights[1, 0], abs=1e-15)
    assert raw != scaled
    with pytest.raises(ValueError, match="outside"):
        argmax_question(seq, 3, causal=False, scale=True, source={})


def test_the_distribution_counts_each_answer_in_its_bar():
    choice = {"kind": "choice", "prompt": "?", "options": ["a", "b", "c"]}
    assert counts(choice, [0, 2, 2, 2]) == (["a", "b", "c"], [1, 0, 3])
    number = {"kind": "number", "prompt": "?", "lo": 0.0, "hi": 1.0}
    labels, heights = counts(number, [0.0, 0.01, 0.51, 1.0])
    assert len(labels) == 20 and sum(heights) == 4
    assert heights[0] == 2 and heights[10] == 1 and heights[19] == 1  # 1.0 falls in the last bar
    assert truth_bars(number, 1.0) == [19] and truth_bars(number, 0.26) == [5] and truth_bars(choice, None) == []


def test_the_reveal_marks_the_true_bar():
    choice = {"kind": "choice", "prompt": "?", "options": ["a", "b", "c"]}
    before = distribution_figure(choice, [0, 1, 1])
    after = distribution_figure(choice, [0, 1, 1], truth=1)
    assert list(before["data"][0]["y"]) == [1, 2, 0] and "annotations" not in before["layout"]
    colours = after["data"][0]["marker"]["color"]
    assert colours[1] != colours[0] == colours[2]
    assert after["layout"]["annotations"][0]["text"] == "true: b"


def test_every_tied_key_is_right_on_the_playgrounds_default_example_mask_on_or_off():
    """The Playground's default example: query 3 'west' weighs 'north' and 'east' alike, with the mask and without."""
    from ui.sequence import default_sequence

    seq = default_sequence()
    west = seq.tokens.index("west")
    for causal in (False, True):
        question, truth = argmax_question(seq, west, causal=causal, scale=True, source={})
        weights = attention_steps(seq.q, seq.k, seq.v, causal=causal).weights[west]
        assert len(truth) >= 2 and [option_texts(question)[t] for t in truth][:2] == ["k_0 'north'", "k_1 'east'"]
        assert all(abs(weights[t] - weights.max()) <= 1e-12 for t in truth)


def test_both_ties_of_the_between_two_keys_puzzle_are_right():
    """The puzzle's own lesson says either key counts: q0 weighs k0 and k1 alike, q3 k0 and k3."""
    from lessons.puzzles import PUZZLES_BY_ID

    tied = [p for p in PUZZLES_BY_ID.values() if "half-way" in p.hint or "tie" in p.lesson.lower()]
    assert tied, "the puzzle with ties"
    puzzle = tied[0]
    assert predict_question(puzzle.id, 0)[1] == [0, 1]
    assert predict_question(puzzle.id, 3)[1] == [0, 3]


def test_a_prompt_names_the_state_its_answer_depends_on():
    seq = TokenSequence(("a", "b", "c"), [[1, 0], [0, 1], [3, 3]], [[0, 1], [1, 0], [4, 4]], np.eye(3))
    masked, _ = argmax_question(seq, 1, causal=True, scale=False, source={})
    assert prompt_text(masked).startswith(
        "Playground, tokens 'a b c' (causal mask on, not scaled): which key will query 1"
    )
    plain, _ = weight_question(seq, 1, 0, causal=False, scale=True, source={})
    assert prompt_text(plain).startswith(
        "Playground, tokens 'a b c' (no mask, scaled by 1/√d_k): what weight will query 1 'b' give key 0 'a'"
    )
    long = TokenSequence(tuple("abcdefghijklmnop"), np.eye(16)[:, :2], np.eye(16)[:, :2], np.eye(16))
    long = TokenSequence(tuple(f"word{i:02d}long" for i in range(16)), long.q, long.k, long.v)
    prompt = prompt_text(row_question(long, 15, causal=False, scale=True, source={})[0])
    assert len(prompt) <= 300 and prompt.endswith("counts as right)") and "…" in prompt  # tokens cut, not the ask
    assert plain["tolerance"] == 0.05
    from lessons.puzzles import PUZZLES

    asked, _ = predict_question(PUZZLES[0].id, 0)
    assert prompt_text(asked).startswith(f"Puzzle '{PUZZLES[0].title}' (no mask, scaled by 1/√d_k): which key")


def test_the_reveal_marks_every_tied_bar():
    choice = {"kind": "choice", "prompt": "?", "options": ["a", "b", "c"]}
    fig = distribution_figure(choice, [0, 1, 2], truth=[0, 2])
    colours = fig["data"][0]["marker"]["color"]
    assert colours[0] == colours[2] != colours[1]
    assert [a["text"] for a in fig["layout"]["annotations"]] == ["true: a", "true: c"]


def test_a_tie_is_within_the_tolerance_and_no_wider():
    from lessons.puzzles import TIE_TOLERANCE
    from ui.classroom_questions import top_keys

    assert top_keys(np.array([0.5, 0.5 - TIE_TOLERANCE / 10, 0.0])) == [0, 1], "a hair below is a tie (rounding)"
    assert top_keys(np.array([0.5, 0.5 - TIE_TOLERANCE * 10, 0.0])) == [0], "clearly below is not"


def test_hidden_rows_hide_every_matrix_computed_from_the_scores_and_nothing_else():
    from figures.steps import hidden_rows

    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((4, 3)), rng.standard_normal((4, 3)), rng.standard_normal((4, 2))
    steps = attention_steps(q, k, v, causal=True)
    shown = hidden_rows(steps, {1})
    for name in ("scores", "scaled", "masked", "weights", "output"):
        hidden, full = getattr(shown, name), getattr(steps, name)
        assert np.isnan(hidden[1]).all(), name  # the output row gives the weights away (V known)
        np.testing.assert_array_equal(np.delete(hidden, 1, axis=0), np.delete(full, 1, axis=0))
    np.testing.assert_array_equal(shown.q, steps.q)
    assert hidden_rows(steps, set()) is steps


@pytest.mark.parametrize("value", [0.0, 0.05, 0.3, 0.35, 0.7, 0.95, 1.0, 0.123])
def test_an_answer_equal_to_the_true_value_is_counted_in_the_bar_drawn_green(value):
    number = {"kind": "number", "prompt": "?", "lo": 0.0, "hi": 1.0}
    _, heights = counts(number, [value])
    (green,) = truth_bars(number, value)
    assert heights[green] == 1, (value, heights)


def test_a_box_is_read_as_its_option_or_from_its_label_or_refused():
    """A click on Ask can overtake the run that draws the Ask box: the callback then reads a box's raw value from the
    browser, its label, not its option (the crash this replaced compared "q_2 'north'" with an int)."""
    from ui.classroom_ask import picked
    from ui.page_questions import ask_labels
    from ui.questions import playground

    kinds = {q.kind: q.title for q in playground.questions()}

    queries, keys = ask_labels(["the", "cat", "the", "x" * 200])
    assert queries[:3] == ["q_0 'the'", "q_1 'cat'", "q_2 'the'"] and keys[2] == "k_2 'the'"
    assert len(set(queries)) == len(set(keys)) == 4  # a repeated word is still a distinct label
    positions = list(range(4))
    assert picked(2, positions, queries, "query") == 2
    assert picked("q_2 'the'", positions, queries, "query") == 2 and picked("k_0 'the'", positions, keys, "key") == 0
    assert picked(kinds["weight"], list(kinds), list(kinds.values()), "question") == "weight"
    for bad in (4, -1, "2", "x", None, True, 2.0, "", "k_2 'the'"):
        with pytest.raises(ValueError, match="pick a query from the list"):
            picked(bad, positions, queries, "query")
