"""lessons/heads.py: the multi-head page's split of d_model into heads and what each head runs, each sentence and
equation said as the page's switches make it true."""

from __future__ import annotations

import numpy as np
import pytest

from attention import attention_steps, split_heads
from lessons.heads import (
    attention_latex,
    how_each_head_attends,
    or_list,
    scores_title,
    split_problem,
    split_table,
)


def test_or_list_joins_the_last_with_or():
    assert or_list([7]) == "7"
    assert or_list([1, 2]) == "1 or 2"
    assert or_list([1, 2, 4]) == "1, 2 or 4"


@pytest.mark.parametrize(
    "d_model, n_heads, max_heads, choices",
    [(12, 5, 8, "1, 2, 3, 4 or 6"), (24, 5, 8, "1, 2, 3, 4, 6 or 8"), (24, 5, 4, "1, 2, 3 or 4"), (7, 2, 8, "1 or 7")],
)
def test_a_split_that_does_not_divide_names_every_head_count_that_does(d_model, n_heads, max_heads, choices):
    problem = split_problem(d_model, n_heads, max_heads)
    assert problem.startswith(f"**d_model = {d_model} cannot be split into {n_heads} heads**")
    assert f"choose {choices} heads (or change d_model to a multiple of {n_heads})" in problem
    for h in map(int, choices.replace(" or ", ", ").split(", ")):  # each one offered does split it
        assert split_problem(d_model, h, max_heads) is None and h <= max_heads


@pytest.mark.parametrize("d_model, n_heads", [(16, 4), (16, 1), (24, 3), (64, 8)])
def test_a_split_that_divides_has_no_problem(d_model, n_heads):
    assert split_problem(d_model, n_heads, 8) is None


def test_the_split_table_gives_each_head_its_own_columns_and_shape():
    n, d_model, n_heads = 5, 24, 3
    q = np.arange(n * d_model, dtype=float).reshape(n, d_model)
    q_heads = split_heads(q, n_heads)  # (3, 5, 8)
    table = split_table(q_heads)
    assert list(table) == ["head", "columns of Q, K, V", "Q_h, K_h, V_h shape"]
    assert table["head"] == [1, 2, 3]
    assert table["columns of Q, K, V"] == ["0 … 7", "8 … 15", "16 … 23"]
    assert table["Q_h, K_h, V_h shape"] == ["(5, 8)"] * 3
    for h, columns in enumerate(table["columns of Q, K, V"]):  # the columns said are the ones the head holds
        first, last = map(int, columns.split(" … "))
        np.testing.assert_array_equal(q_heads[h], q[:, first : last + 1])


@pytest.mark.parametrize("scale", [True, False])
@pytest.mark.parametrize("causal", [False, True])
def test_the_formula_and_the_sentences_say_what_the_switches_run(scale, causal):
    formula, sentence = attention_latex(causal, scale), how_each_head_attends(causal, scale, 4)
    title = scores_title(scale, causal, 4)
    assert formula.startswith(r"\mathrm{head}_h = \mathrm{softmax}")
    assert (r"\sqrt{d_{head}}" in formula) == scale and ("/ √4" in title) == scale
    assert ("its scores divided by √d_head = √4" in sentence) == scale
    assert ("**not** divided by √d_head" in sentence) == (not scale)
    assert ("+ M" in formula and r"-\infty & j > i" in formula) == causal
    assert ("the causal mask" in sentence) == causal and ("(masked)" in title) == causal
    # and what they say is what the core runs: scores q k^T (divided by √d_head or not), masked above the diagonal
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((3, 5, 4))
    steps = attention_steps(q, k, v, causal=causal, scale=scale)
    scores = q @ k.T / (np.sqrt(4) if scale else 1.0)
    if causal:
        scores = np.where(np.tril(np.ones((5, 5), dtype=bool)), scores, -np.inf)
    np.testing.assert_allclose(steps.masked, scores, atol=1e-12)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    np.testing.assert_allclose(steps.output, weights / weights.sum(axis=1, keepdims=True) @ v, atol=1e-12)
