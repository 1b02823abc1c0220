"""lessons/puzzles.py (and figures/predict.py's heatmap): predict-then-check puzzles: each one's intended answer, worked
out by hand, and the scoring of guesses."""

import math

import numpy as np
import pytest

from attention import attention_steps
from attention.sequence import TokenSequence
from figures.predict import guess_heatmap
from lessons.puzzles import PUZZLES, PUZZLES_BY_ID, custom_puzzle, score_guesses

# The key(s) each query should pick, reasoned on paper from q_i · k_j (a tie lists every tied key).
EXPECTED = {
    # q = east, north (short), west; keys east, north, west: each query points along its own key.
    "aligned": [{0}, {1}, {2}],
    # q_0 = (0,-2) faces away from k_0 = (0,2) (dot −4) and partly from k_2 = (−1,1) (dot −2); k_1 = (2,0) is
    # at right angles (dot 0), and 0 is the largest. q_1 = (2,0) is aligned with k_1 (dot 4). q_2 = (0,2) is
    # aligned with k_0 (dot 4 > 2 for k_2).
    "orthogonal": [{1}, {1}, {0}],
    # Compass keys of length 2: E, N, W, S. q_0 = (1,1) is half-way between E and N (dots 2 and 2): a tie.
    # q_1 = (0,3) points north, at k_1 (dot 6). q_2 = (−2,1) is nearest west, k_2 (dot 4 vs 2 for north).
    # q_3 = (1,−1) is half-way between E and S, k_0 and k_3 (2 and 2): a tie.
    "between": [{0, 1}, {1}, {2}, {0, 3}],
    # The long key k_1 = (4,3) wins for q_0 = (2,0) (8 vs 2 for the aligned short k_0), for q_1 = (0,2)
    # (6 vs 2 for the aligned k_2) and for q_3 = (1,1) (7); only q_2 = (−2,0) faces away from it (−8) and
    # takes the aligned k_3 = (−1,0) (2).
    "length": [{1}, {1}, {3}, {1}],
    # q_0 = (2,0,1,0): 3, 0, 2, 1 -> k_0. q_1 = (0,1,0,1): 0, 2, 1, 3 -> k_3 (beats the identical-direction k_1).
    # q_2 = (1,1,1,1): 2, 2, 2, 4 -> k_3. q_3 = (1,1,0,−1): 1, 0, 2, −3 -> k_2.
    "four-d": [{0}, {3}, {3}, {2}],
}


def test_every_puzzle_has_an_intended_answer_and_they_come_in_order():
    assert [p.id for p in PUZZLES] == list(EXPECTED)
    assert [p.title[0] for p in PUZZLES] == ["1", "2", "3", "4", "5"]  # rising difficulty, numbered


@pytest.mark.parametrize("puzzle", PUZZLES, ids=lambda p: p.id)
def test_puzzle_weights_peak_where_reasoned(puzzle):
    w = attention_steps(puzzle.seq.q, puzzle.seq.k, puzzle.seq.v).weights
    for i, expected in enumerate(EXPECTED[puzzle.id]):
        top = set(np.flatnonzero(w[i] >= w[i].max() - 1e-9))
        assert top == expected, f"{puzzle.id}: query {i}"


@pytest.mark.parametrize("puzzle", PUZZLES, ids=lambda p: p.id)
def test_puzzle_shape_and_its_aligned_and_orthogonal_pairs(puzzle):
    n, d_k = puzzle.seq.q.shape
    assert 3 <= n <= 4 and puzzle.seq.k.shape == (n, d_k) and len(puzzle.seq.tokens) == n
    np.testing.assert_array_equal(puzzle.seq.v, np.eye(n))  # one-hot values: the output row is the weight row
    dots = puzzle.seq.q @ puzzle.seq.k.T
    norms = np.outer(np.linalg.norm(puzzle.seq.q, axis=1), np.linalg.norm(puzzle.seq.k, axis=1))
    assert np.any(np.isclose(dots, norms)), "some query-key pair points the same way (cos = 1)"
    assert np.any(dots == 0.0), "some query-key pair is at right angles"
    assert puzzle.hint and puzzle.lesson


def test_scoring_a_hand_computed_two_by_two():
    # q = k = identity, no scaling: row 0 scores (1, 0) -> weights e/(e+1) = 0.7311 and 1/(e+1) = 0.2689.
    q = k = np.eye(2)
    steps = attention_steps(q, k, np.eye(2), scale=False)
    results = score_guesses(steps.weights, [0, 0], [0.7, None], steps.scores, ["a", "b"])
    first, second = results
    assert first.correct and first.best == (0,)
    assert first.top_weight == pytest.approx(math.e / (math.e + 1))
    assert first.weight_error == pytest.approx(math.e / (math.e + 1) - 0.7) and first.weight_close
    assert "q_0·k_0 = 1" in first.explanation and first.explanation.startswith("Right")
    assert not second.correct and second.best == (1,) and second.guessed_weight is None
    assert second.weight_close is None
    # the miss is explained with the real dot products of row 1
    assert "You picked k_0 'a' (q_1·k_0 = 0" in second.explanation
    assert "q_1·k_1 = 1 is the largest" in second.explanation and "k_1 'b'" in second.explanation


def test_any_key_in_a_tie_counts_as_correct():
    puzzle = PUZZLES_BY_ID["between"]
    steps = attention_steps(puzzle.seq.q, puzzle.seq.k, puzzle.seq.v)
    for guess_0 in (0, 1):  # q_0 = (1, 1) is equally close to k_0 and k_1
        r = score_guesses(steps.weights, [guess_0, 1, 2, 3], None, steps.scores)[0]
        assert r.correct and r.best == (0, 1) and "tie" in r.explanation
    assert not score_guesses(steps.weights, [2, 1, 2, 3], None, steps.scores)[0].correct


def test_a_far_off_weight_guess_is_marked_off():
    puzzle = PUZZLES_BY_ID["length"]
    steps = attention_steps(puzzle.seq.q, puzzle.seq.k, puzzle.seq.v)
    r = score_guesses(steps.weights, [1, 1, 3, 1], [0.3, 0.9, 0.77, 1.0], steps.scores)
    assert [x.correct for x in r] == [True] * 4
    assert r[0].weight_close is False and "off by" in r[0].explanation  # the real weight is 0.982
    assert r[1].weight_close and r[2].weight_close


@pytest.mark.parametrize(
    "guesses, weights, message",
    [
        ([0, 1], None, "2 guesses for 3 queries"),
        ([0, 1, 3], None, "expected a key index from 0 to 2"),
        ([0, 1, True], None, "expected a key index"),
        ([0, 1, 2], [0.5, 1.5, None], "between 0 and 1"),
        ([0, 1, 2], [0.5], "1 guessed weights for 3 queries"),
    ],
)
def test_bad_guesses_are_refused_with_a_message(guesses, weights, message):
    puzzle = PUZZLES_BY_ID["aligned"]
    steps = attention_steps(puzzle.seq.q, puzzle.seq.k, puzzle.seq.v)
    with pytest.raises(ValueError, match=message):
        score_guesses(steps.weights, guesses, weights, steps.scores)


def test_mismatched_scores_are_refused():
    with pytest.raises(ValueError, match="same"):
        score_guesses(np.eye(3), [0, 1, 2], None, np.eye(2))


def test_custom_puzzle_takes_the_vectors_as_they_are():
    seq = TokenSequence(("x", "y"), [[1, 0], [0, 1]], [[0, 1], [1, 0]], [[1], [2]])
    p = custom_puzzle(seq)
    assert p.id == "own" and p.seq is seq and p.seq.q.dtype == float
    with pytest.raises(ValueError, match="finite"):  # a sequence with NaN cannot even be built
        custom_puzzle(TokenSequence(("x",), [[np.nan]], [[1.0]], [[1.0]]))


def test_guess_heatmap_boxes_each_guess_in_its_row():
    w = np.array([[0.9, 0.1], [0.2, 0.8]])
    fig = guess_heatmap(w, ["a", "b"], [0, 0], [True, False])
    boxes = [(s.x0 + 0.46, s.y0 + 0.46, s.line.color) for s in fig.layout.shapes]
    assert boxes == [(0, 0, "#2ca02c"), (0, 1, "#d62728")]  # query 0 right at key 0; query 1 wrong at key 0
