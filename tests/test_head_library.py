"""The head library: embeddings with positions, hand-built heads that really show their pattern,
captions computed from weights, and stacks of blocks."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from attention import multi_head_steps, transformer_block
from lessons.head_library import (
    MAX_POSITIONS,
    POSITION_PERIODS,
    PRESET_LABELS,
    PRESETS,
    best_position_pairs,
    buildable_presets,
    embed_tokens,
    entropy_range,
    head_library_weights,
    position_frequencies,
    positional_margin,
    preset_bullets,
    preset_problem,
    residual_sources,
    run_stack,
    shift_rotation,
    stack_params,
    summarise_head,
    summary_table,
)

SENTENCE = ("the", "cat", "sat", "on", "the", "mat", "and", "the", "dog")
COMPASS = ("north", "east", "south", "west")
SIXTEEN = tuple(f"w{i}" for i in range(16))


def head_weights(tokens, d_model, presets, *, causal=False, scale=True, seed=0):
    """Every head's weights (n_heads, n, n) with the given presets."""
    emb = embed_tokens(tokens, d_model, seed)
    hw = head_library_weights(emb, presets, seed)
    steps = multi_head_steps(
        emb.x, hw.w_q, hw.w_k, hw.w_v, hw.w_o, len(presets), b_q=hw.b_q, causal=causal, scale=scale
    )
    return steps.weights


# ---------------------------------------------------------------- embeddings


def test_embedding_shape_and_columns():
    emb = embed_tokens(COMPASS, 16)
    assert emb.x.shape == (4, 16)
    assert len(emb.columns) == 16
    assert emb.n_position_pairs == 4 and emb.n_content_pairs == 4


def test_position_columns_are_sinusoids_of_the_position():
    emb = embed_tokens(SIXTEEN, 16)
    for k, omega in enumerate(position_frequencies(4)):
        np.testing.assert_allclose(emb.x[:, 2 * k], np.cos(omega * np.arange(16)))
        np.testing.assert_allclose(emb.x[:, 2 * k + 1], np.sin(omega * np.arange(16)))


def test_the_same_word_gets_the_same_content_wherever_it_is():
    emb = embed_tokens(SENTENCE, 12)
    c = emb.content_start
    np.testing.assert_array_equal(emb.x[0, c:], emb.x[4, c:])  # "the" at 0 and 4
    np.testing.assert_array_equal(emb.x[0, c:], emb.x[7, c:])
    assert not np.allclose(emb.x[0, c:], emb.x[1, c:])  # "the" vs "cat"
    assert not np.allclose(emb.x[0, :c], emb.x[4, :c])  # different positions


def test_embedding_is_deterministic_and_seeded():
    np.testing.assert_array_equal(embed_tokens(COMPASS, 8, 3).x, embed_tokens(COMPASS, 8, 3).x)
    assert not np.allclose(embed_tokens(COMPASS, 8, 3).x, embed_tokens(COMPASS, 8, 4).x)


@pytest.mark.parametrize("d_model", [4, 5, 7, 8, 13, 64])
def test_odd_and_small_widths(d_model):
    emb = embed_tokens(COMPASS, d_model)
    assert emb.x.shape == (4, d_model)
    assert emb.n_position_pairs >= 1
    assert 2 * emb.n_position_pairs + 2 * emb.n_content_pairs in (d_model, d_model - 1)


@pytest.mark.parametrize(
    "tokens, d_model, match",
    [
        ((), 8, "1 to 16"),
        (tuple("abcdefghijklmnopq"), 8, "1 to 16"),
        (COMPASS, 3, "at least 4"),
    ],
)
def test_embedding_rejects_bad_sizes(tokens, d_model, match):
    with pytest.raises(ValueError, match=match):
        embed_tokens(tokens, d_model)


def test_shift_rotation_moves_a_position_back():
    omega, a = 0.3, 1.7
    for shift in (0, 1, 2):
        got = np.array([np.cos(a), np.sin(a)]) @ shift_rotation(omega, shift)
        np.testing.assert_allclose(got, [np.cos(a - shift * omega), np.sin(a - shift * omega)])


def test_the_slowest_sinusoid_never_repeats_within_16_positions():
    assert POSITION_PERIODS[0] > 2 * (MAX_POSITIONS - 1)
    deltas = range(-2 * MAX_POSITIONS + 1, 2 * MAX_POSITIONS)
    assert positional_margin(position_frequencies(1), deltas) > 0
    start, margin = best_position_pairs(4, 1, range(-3, 4))  # 4 tokens: a faster sinusoid separates better
    assert start > 0 and margin > positional_margin(position_frequencies(1), range(-3, 4))


# ---------------------------------------------------------------- the presets really show their pattern

SIZES = [(16, 4), (16, 8), (8, 4), (4, 2), (64, 8), (12, 6), (10, 1)]


@pytest.mark.parametrize("tokens", [COMPASS, SENTENCE, SIXTEEN])
@pytest.mark.parametrize("d_model, n_heads", SIZES)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("scale", [True, False])
def test_positional_presets(tokens, d_model, n_heads, causal, scale):
    presets = ("previous", "first", "self")
    presets = (presets * 3)[:n_heads]
    w = head_weights(tokens, d_model, presets, causal=causal, scale=scale)
    n = len(tokens)
    rows = np.arange(n)
    for h, preset in enumerate(presets):
        best = w[h].argmax(axis=1)
        if preset == "previous":
            np.testing.assert_array_equal(best[1:], rows[1:] - 1)
            assert w[h][rows[1:], rows[1:] - 1].min() > 0.9
        elif preset == "first":
            np.testing.assert_array_equal(best, 0)
            assert w[h][:, 0].min() > 0.9
        else:
            np.testing.assert_array_equal(best, rows)
            assert np.diag(w[h]).min() > 0.9


@pytest.mark.parametrize("causal", [False, True])
def test_self_looks_at_its_own_position_even_for_a_repeated_word(causal):
    w = head_weights(SENTENCE, 16, ("self", "uniform"), causal=causal)[0]
    assert w[4, 4] > 0.9 and w[4, 0] < 0.05 and w[0, 4] < 0.05


@pytest.mark.parametrize("tokens", [COMPASS, SENTENCE, SIXTEEN])
@pytest.mark.parametrize("causal", [False, True])
def test_uniform_spreads_weight_evenly(tokens, causal):
    w = head_weights(tokens, 16, ("uniform", "random"), causal=causal)[0]
    n = len(tokens)
    expected = np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None] if causal else np.full((n, n), 1 / n)
    np.testing.assert_allclose(w, expected, atol=1e-12)


@pytest.mark.parametrize("d_model, n_heads", [(16, 4), (16, 8), (64, 8), (8, 2), (32, 1)])
@pytest.mark.parametrize("causal", [False, True])
def test_most_similar_attends_to_the_most_similar_word(d_model, n_heads, causal):
    presets = ("similar",) + ("random",) * (n_heads - 1)
    emb = embed_tokens(SENTENCE, d_model)
    w = head_weights(SENTENCE, d_model, presets, causal=causal)[0]
    d_head = d_model // n_heads
    pairs = min(emb.n_content_pairs, d_head // 2)
    e = emb.x[:, emb.content_start : emb.content_start + 2 * pairs]  # the word columns this head reads
    similarity = e @ e.T  # (n, n)
    n = len(SENTENCE)
    for i in range(n):
        visible = np.arange(i + 1) if causal else np.arange(n)
        most_similar = visible[np.isclose(similarity[i, visible], similarity[i, visible].max())]
        assert w[i].argmax() in most_similar
        copies = [j for j in visible if SENTENCE[j] == SENTENCE[i]]
        np.testing.assert_allclose(w[i, copies], w[i, copies[0]])  # every copy of the word alike
        assert i in most_similar  # a word is always among the most similar to itself


def test_most_similar_shares_weight_between_copies_of_a_word():
    w = head_weights(SENTENCE, 64, ("similar", "random"))[0]
    the = [0, 4, 7]
    assert w[0, the].sum() > 0.9
    np.testing.assert_allclose(w[0, the], w[0, the].sum() / 3)


@settings(max_examples=40, deadline=None)
@given(
    tokens=st.lists(st.sampled_from(["a", "b", "c", "the", "x"]), min_size=2, max_size=16),
    d_head=st.sampled_from([2, 4, 8]),
    n_heads=st.integers(1, 4),
    seed=st.integers(0, 50),
    causal=st.booleans(),
    data=st.data(),
)
def test_presets_hold_for_any_sequence(tokens, d_head, n_heads, seed, causal, data):
    assume(d_head * n_heads >= 4)
    presets = tuple(data.draw(st.lists(st.sampled_from(PRESETS), min_size=n_heads, max_size=n_heads)))
    w = head_weights(tokens, d_head * n_heads, presets, causal=causal, seed=seed)
    emb = embed_tokens(tokens, d_head * n_heads, seed)
    e = emb.x[:, emb.content_start : emb.content_start + 2 * min(emb.n_content_pairs, d_head // 2)]
    similarity = e @ e.T  # (n, n): what the "similar" head compares
    n = len(tokens)
    for h, preset in enumerate(presets):
        best = w[h].argmax(axis=1)
        if preset == "previous":
            assert (best[1:] == np.arange(n - 1)).all()
        elif preset == "first":
            assert (best == 0).all()
        elif preset == "self":
            assert (best == np.arange(n)).all()
        elif preset == "similar" and e.shape[1]:
            for i in range(n):
                visible = similarity[i, : i + 1] if causal else similarity[i]
                assert np.isclose(similarity[i, best[i]], visible.max())
        np.testing.assert_allclose(w[h].sum(axis=1), 1.0)


def test_a_preset_that_does_not_fit_its_head_is_refused_with_a_reason():
    emb = embed_tokens(COMPASS, 8)
    assert preset_problem("previous", 1, emb) is not None
    assert "d_head = 1" in preset_problem("self", 1, emb)
    kept, why = buildable_presets(("self", "uniform", "previous"), 1, emb)
    assert kept == ("random", "uniform", "random") and why[1] is None and "d_head = 1" in why[0] and why[2]
    assert preset_problem("first", 1, emb) is None and preset_problem("uniform", 1, emb) is None
    assert preset_problem("nonsense", 2, emb).startswith("unknown preset")
    with pytest.raises(ValueError, match="head 2"):
        head_library_weights(emb, ["first"] + ["previous"] * 7)
    with pytest.raises(ValueError, match="not divisible"):
        head_library_weights(emb, ["random"] * 3)


def test_first_token_works_with_one_column_per_head():
    w = head_weights(COMPASS, 4, ("first", "uniform", "random", "first"))
    assert (w[0].argmax(axis=1) == 0).all() and (w[3].argmax(axis=1) == 0).all()


def test_random_heads_and_value_projections_are_seeded():
    emb = embed_tokens(COMPASS, 8)
    a, b = head_library_weights(emb, ["random"] * 2, 1), head_library_weights(emb, ["random"] * 2, 1)
    np.testing.assert_array_equal(a.w_q, b.w_q)
    assert not np.allclose(a.w_v, head_library_weights(emb, ["random"] * 2, 2).w_v)


@pytest.mark.parametrize("causal", [False, True])
def test_the_preset_list_names_every_preset_once_and_says_the_uniform_weights_the_mask_gives(causal):
    bullets = preset_bullets(causal).split("\n")
    named = [b.removeprefix("- **").split("**")[0] for b in bullets]
    assert all(b.startswith("- **") for b in bullets)
    assert sorted(named) == sorted(PRESET_LABELS.values())
    uniform = next(b for b in bullets if b.startswith("- **uniform**"))
    n = len(SENTENCE)
    w = head_weights(SENTENCE, 16, ("uniform", "random"), causal=causal)[0]
    if causal:  # what the bullet says each key of row i gets, and what the head gives
        assert "1/(i + 1)" in uniform and "1/n" not in uniform
        np.testing.assert_allclose(w, np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None], atol=1e-12)
    else:
        assert "every weight is 1/n" in uniform and "1/(i + 1)" not in uniform
        np.testing.assert_allclose(w, np.full((n, n), 1 / n), atol=1e-12)
    similar = next(b for b in bullets if b.startswith("- **most similar word**"))
    assert ("every copy of itself at or before it" in similar) == causal


# ---------------------------------------------------------------- captions from weights


def test_uniform_weights_have_maximal_entropy():
    s = summarise_head(np.full((4, 4), 0.25))
    assert s.entropy_bits == pytest.approx(2.0)
    assert s.normalised_entropy == pytest.approx(1.0)
    assert s.mean_distance == pytest.approx((0 + 1 + 2 + 3 + 1 + 0 + 1 + 2) * 2 / 4 / 4)  # 1.25
    assert s.pattern == "uniform"


def test_identity_weights_have_zero_entropy_and_distance():
    s = summarise_head(np.eye(5))
    assert s.entropy_bits == 0.0 and s.normalised_entropy == 0.0 and s.mean_distance == 0.0
    assert (s.pattern, s.share) == ("self", 1.0)
    assert s.caption.startswith("self (100%)") and "H = 0.00 bits" in s.caption


def test_previous_token_weights():
    w = np.eye(4, k=-1)
    w[0, 0] = 1.0  # row 0 has no previous token
    s = summarise_head(w)
    assert s.mean_distance == pytest.approx(3 / 4)
    assert (s.pattern, s.share) == ("previous", 1.0)


def test_first_token_weights():
    w = np.zeros((3, 3))
    w[:, 0] = 1.0
    s = summarise_head(w)
    assert s.pattern == "first" and s.mean_distance == pytest.approx((0 + 1 + 2) / 3)


def test_causal_uniform_is_maximal_for_what_each_row_can_see():
    w = np.tril(np.ones((4, 4))) / np.arange(1, 5)[:, None]
    s = summarise_head(w, causal=True)
    assert s.normalised_entropy == pytest.approx(1.0)
    assert s.entropy_bits == pytest.approx(np.mean([0, 1, np.log2(3), 2]))
    assert s.pattern == "uniform"
    assert summarise_head(w, causal=False).normalised_entropy < 1.0


def test_same_word_is_recognised_only_with_repeated_tokens():
    tokens = ("a", "b", "a")
    w = np.array([[0.5, 0, 0.5], [0, 1, 0], [0.5, 0, 0.5]])
    assert summarise_head(w, tokens=tokens).pattern == "same word"
    assert summarise_head(w).pattern != "same word"


def test_half_and_half_is_mixed():
    w = np.array([[1, 0, 0], [0.5, 0.5, 0], [0, 0.6, 0.4]])
    assert summarise_head(w).pattern in ("mixed", "self", "previous")
    assert summarise_head(np.array([[0.4, 0.3, 0.3], [0.3, 0.4, 0.3], [0.1, 0.3, 0.6]])).pattern in ("mixed", "uniform")


def test_summary_rejects_non_square():
    with pytest.raises(ValueError, match="square"):
        summarise_head(np.ones((2, 3)) / 3)


@pytest.mark.parametrize("n", [2, 5, 9])
def test_the_entropy_range_quotes_the_entropy_of_even_weights(n):
    even = summarise_head(np.full((n, n), 1 / n))  # spread evenly over every key: the most a row can have
    assert f"log₂ {n} = {even.entropy_bits:.2f} bits: spread evenly over the {n} keys" in entropy_range(False, n)
    assert entropy_range(False, n).startswith("0 bits: all weight on one key")
    causal = entropy_range(True, n)  # row i sees i + 1 keys: its largest entropy is log2(i + 1)
    assert "log₂(i + 1) bits for row i" in causal and f"log₂ {n} =" not in causal
    rows = summarise_head(np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None], causal=True)
    assert rows.entropy_bits == pytest.approx(np.mean(np.log2(np.arange(1, n + 1))))


def test_the_entropy_range_of_one_key():
    assert entropy_range(False, 1) == entropy_range(True, 1) == "0 bits: one key, which gets all the weight"


def test_the_summary_table_lists_each_heads_preset_and_its_summary_rounded():
    presets = ("previous", "uniform", "self")
    weights = head_weights(SENTENCE, 12, presets)
    summaries = [summarise_head(w, tokens=SENTENCE) for w in weights]
    table = summary_table(presets, summaries)
    assert list(table) == ["head", "preset", "caption", "entropy (bits)", "entropy / max", "mean |i−j|"]
    assert table["head"] == [1, 2, 3]
    assert table["preset"] == ["previous token", "uniform", "itself"]
    assert table["caption"] == [s.caption for s in summaries]
    assert table["caption"][1].startswith("uniform (")
    for column, field in (("entropy (bits)", "entropy_bits"), ("entropy / max", "normalised_entropy")):
        assert table[column] == [round(getattr(s, field), 3) for s in summaries]
    assert table["entropy (bits)"][1] == pytest.approx(np.log2(len(SENTENCE)), abs=5e-4)  # uniform: log2 n
    assert table["mean |i−j|"] == [round(s.mean_distance, 3) for s in summaries]
    assert table["mean |i−j|"][2] < 0.1 < table["mean |i−j|"][0]  # itself: on the diagonal; previous: one step off


# ---------------------------------------------------------------- stacks


def test_block_k_is_the_same_whatever_the_stack_height():
    short, tall = stack_params(8, 16, 2, seed=5), stack_params(8, 16, 12, seed=5)
    assert len(tall) == 12
    for a, b in zip(short, tall[:2]):
        np.testing.assert_array_equal(a.w_q, b.w_q)
        np.testing.assert_array_equal(a.w_2, b.w_2)


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_a_stack_keeps_the_shape_and_equals_blocks_applied_by_hand(norm):
    x = embed_tokens(SENTENCE, 16).x
    blocks = stack_params(16, 32, 3)
    run = run_stack(x, blocks, 4, norm=norm, causal=True)
    assert run.states.shape == (4, 9, 16)
    y = x
    for params, trace in zip(blocks, run.traces):
        y, expected = transformer_block(y, params, 4, norm=norm, causal=True)
        np.testing.assert_array_equal(trace.weights, expected.weights)
    np.testing.assert_array_equal(run.states[-1], y)


def test_post_norm_stream_stays_at_sqrt_d_model_and_pre_norm_grows():
    x = embed_tokens(SIXTEEN, 16).x
    blocks = stack_params(16, 64, 12)
    post = run_stack(x, blocks, 4, norm="post").residual_norms
    pre = run_stack(x, blocks, 4, norm="pre").residual_norms
    assert post.shape == pre.shape == (13,)
    np.testing.assert_allclose(post[1:], np.sqrt(16), rtol=1e-3)
    assert pre[-1] > 2 * pre[0] and pre[-1] > post[-1]


def test_residual_sources_are_read_from_the_trace():
    x = embed_tokens(COMPASS, 8).x
    (params,) = stack_params(8, 16, 1)
    _, post = transformer_block(x, params, 2, norm="post")
    _, pre = transformer_block(x, params, 2, norm="pre")
    assert residual_sources(post) == {"residual_1": "input", "residual_2": "norm_1"}
    assert residual_sources(pre) == {"residual_1": "input", "residual_2": "residual_1"}


def test_the_library_imports_neither_streamlit_nor_plotly():
    code = (
        "import sys, lessons.head_library; "
        "bad = [m for m in ('streamlit', 'plotly') if m in sys.modules]; assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
