"""The questions built from the Predict page and the Playground, and the chart of a class's answers."""

import numpy as np
import pytest

from attention import attention_steps
from attention.sequence import TokenSequence
from classroom.questions import check_answer, check_question
from lessons.puzzles import PUZZLES
from ui.classroom_questions import (
    argmax_question,
    counts,
    distribution_figure,
    predict_question,
    truth_bar,
    weight_question,
)


@pytest.mark.parametrize("puzzle", PUZZLES, ids=lambda p: p.id)
def test_a_predict_question_has_the_puzzles_keys_and_its_true_answer(puzzle):
    weights = attention_steps(puzzle.seq.q, puzzle.seq.k, puzzle.seq.v).weights
    for query in range(len(puzzle.seq.tokens)):
        question, truth = predict_question(puzzle.id, query)
        assert check_question(question) == question  # the store takes it as it is
        assert len(question["options"]) == len(puzzle.seq.tokens)
        assert weights[query, truth] == weights[query].max()
        assert check_answer(question, truth) == truth


def test_a_playground_question_follows_the_mask_and_the_scaling():
    seq = TokenSequence(("a", "b", "c"), [[1, 0], [0, 1], [3, 3]], [[0, 1], [1, 0], [4, 4]], np.eye(3))
    # without the mask, query 0 attends most to key 2 (the longest key); with it, only key 0 is allowed
    assert argmax_question(seq, 0, causal=False, scale=True, source={})[1] == 2
    assert argmax_question(seq, 0, causal=True, scale=True, source={})[1] == 0
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
    assert truth_bar(number, 1.0) == 19 and truth_bar(number, 0.26) == 5 and truth_bar(choice, None) is None


def test_the_reveal_marks_the_true_bar():
    choice = {"kind": "choice", "prompt": "?", "options": ["a", "b", "c"]}
    before = distribution_figure(choice, [0, 1, 1])
    after = distribution_figure(choice, [0, 1, 1], truth=1)
    assert list(before["data"][0]["y"]) == [1, 2, 0] and "annotations" not in before["layout"]
    colours = after["data"][0]["marker"]["color"]
    assert colours[1] != colours[0] == colours[2]
    assert after["layout"]["annotations"][0]["text"] == "true: b"
