"""The decoder: shapes, causality, the KV cache, MHA / GQA / MQA, generation and the work counts."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention import layer_norm, multi_head_steps
from attention.decoder import (
    DecoderConfig,
    DecoderParams,
    KVCache,
    causal_offset_mask,
    decode_step_madds,
    decoder_forward,
    final_norm,
    generate,
    generation_steps,
    kv_cache_nbytes,
    next_token_probabilities,
)

TOL = 1e-12


def config(n_heads=4, n_kv_heads=2, *, mlp=False, final_norm=False, vocab=11, layers=2, d_model=8, positions=12):
    return DecoderConfig(vocab, layers, n_heads, n_kv_heads, d_model, positions, mlp, final_norm=final_norm)


def params_for(cfg, seed=0, dtype=np.float64):
    # larger embeddings than the default so attention is far from uniform and the tests see its pattern
    return DecoderParams.random(cfg, seed, dtype, token_std=1.0, position_std=1.0)


def naive_forward(ids, p: DecoderParams) -> np.ndarray:
    """The decoder written as loops, from the paper's formulas: one position, one head at a time."""
    c = p.config
    dh, g = c.d_head, c.group
    x = np.array([p.token_embedding[t] + p.position_embedding[i] for i, t in enumerate(ids)])
    for layer in p.layers:
        out = np.zeros_like(x)
        for i in range(len(ids)):
            heads = []
            for h in range(c.n_heads):
                kv = h // g
                q = x[i] @ layer.w_q[:, h * dh : (h + 1) * dh]
                ks = [x[j] @ layer.w_k[:, kv * dh : (kv + 1) * dh] for j in range(i + 1)]
                vs = [x[j] @ layer.w_v[:, kv * dh : (kv + 1) * dh] for j in range(i + 1)]
                s = np.array([q @ k / math.sqrt(dh) for k in ks])
                w = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
                heads.append(sum(wj * vj for wj, vj in zip(w, vs)))
            out[i] = x[i] + np.concatenate(heads) @ layer.w_o
        x = out
        if c.mlp:
            pre = x @ layer.w_1 + layer.b_1
            gelu = 0.5 * pre * (1 + np.vectorize(math.erf)(pre / math.sqrt(2)))
            x = x + gelu @ layer.w_2 + layer.b_2
    if c.final_norm:
        mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        x = (x - mu) / np.sqrt(var + 1e-5) * p.norm_gamma + p.norm_beta
    return x @ p.unembedding


# ---------------------------------------------------------------- shapes and the reference


@pytest.mark.parametrize("heads, kv", [(4, 4), (4, 2), (4, 1)])
@pytest.mark.parametrize("mlp, norm", [(False, False), (True, True)])
def test_the_decoder_equals_loops_over_positions_and_heads(heads, kv, mlp, norm):
    p = params_for(config(heads, kv, mlp=mlp, final_norm=norm), seed=3)
    ids = [3, 1, 4, 1, 5, 9, 2, 6]
    np.testing.assert_allclose(decoder_forward(ids, p).logits, naive_forward(ids, p), atol=1e-10)


def test_the_final_norm_is_the_projects_layer_norm():
    rng = np.random.default_rng(0)
    x, gamma, beta = rng.standard_normal((3, 5, 8)), rng.standard_normal(8), rng.standard_normal(8)
    np.testing.assert_allclose(final_norm(x, gamma, beta)[0], layer_norm(x, gamma, beta), atol=1e-12)


def test_shapes_of_the_output_and_the_cache():
    cfg = config(4, 2, mlp=True)
    out = decoder_forward([1, 2, 3, 4, 5], params_for(cfg))
    assert out.logits.shape == (5, 11) and out.attentions.shape == (2, 4, 5, 5)
    assert out.cache.shapes == ((2, 5, 2), (2, 5, 2)) and out.cache.n_total == 5
    assert all(v.shape == (2, 5, 2) for v in out.cache.values)
    assert out.cache.nbytes == 2 * 2 * 2 * 5 * 2 * 8 == kv_cache_nbytes(cfg, 5, 8)


def test_attention_is_causal_and_every_row_sums_to_one():
    a = decoder_forward([0, 5, 2, 7, 7, 1], params_for(config())).attentions
    np.testing.assert_allclose(a.sum(-1), 1.0, atol=1e-12)
    assert np.all(a[..., ~causal_offset_mask(6, 6)] == 0.0)  # exactly 0 above the diagonal


@settings(deadline=None, max_examples=25)
@given(
    ids=st.lists(st.integers(0, 10), min_size=2, max_size=12),
    t=st.integers(0, 10),
    other=st.integers(0, 10),
    kind=st.sampled_from([(4, 4), (4, 2), (4, 1)]),
)
def test_changing_a_later_token_never_moves_an_earlier_prediction(ids, t, other, kind):
    t = t % (len(ids) - 1)
    p = params_for(config(*kind, mlp=True, final_norm=True), seed=1)
    changed = list(ids)
    changed[t + 1] = other
    a, b = decoder_forward(ids, p), decoder_forward(changed, p)
    np.testing.assert_array_equal(a.logits[: t + 1], b.logits[: t + 1])
    np.testing.assert_array_equal(a.attentions[:, :, : t + 1], b.attentions[:, :, : t + 1])


# ---------------------------------------------------------------- the KV cache


@settings(deadline=None, max_examples=30)
@given(
    ids=st.lists(st.integers(0, 10), min_size=1, max_size=12),
    cuts=st.lists(st.integers(1, 11), max_size=4),
    kind=st.sampled_from([(4, 4), (4, 2), (4, 1), (2, 1)]),
    extras=st.sampled_from([(False, False), (True, False), (True, True)]),
)
def test_decoding_in_pieces_with_the_cache_equals_the_whole_sequence(ids, cuts, kind, extras):
    p = params_for(config(*kind, mlp=extras[0], final_norm=extras[1]), seed=2)
    full = decoder_forward(ids, p)
    bounds = sorted({0, len(ids), *(c for c in cuts if c < len(ids))})
    cache, rows, attn = None, [], []
    for a, b in zip(bounds, bounds[1:]):
        out = decoder_forward(ids[a:b], p, cache)
        assert out.attentions.shape == (2, kind[0], b - a, b)
        cache, rows, attn = out.cache, rows + [out.logits], attn + [out.attentions[..., :b]]
    assert np.max(np.abs(np.concatenate(rows) - full.logits)) < TOL
    for piece, (a, b) in zip(attn, zip(bounds, bounds[1:])):
        assert np.max(np.abs(piece - full.attentions[:, :, a:b, :b])) < TOL
    for k_cached, k_full in zip(cache.keys, full.cache.keys):
        assert np.max(np.abs(k_cached - k_full)) < TOL


def test_one_token_at_a_time_gives_the_logits_of_the_whole_sequence_to_1e_12():
    p = params_for(config(8, 2, mlp=True, final_norm=True, d_model=16, positions=40), seed=5)
    ids = np.random.default_rng(0).integers(0, 11, 40)
    full, cache, rows = decoder_forward(ids, p), None, []
    for t in ids:
        out = decoder_forward([t], p, cache)
        cache, rows = out.cache, rows + [out.logits[0]]
    assert np.max(np.abs(np.array(rows) - full.logits)) < TOL
    assert cache.n_total == 40 and cache.nbytes == kv_cache_nbytes(p.config, 40, 8)


def test_decoding_leaves_the_old_cache_as_it_was():
    p = params_for(config())
    first = decoder_forward([1, 2, 3], p).cache
    keys = [k.copy() for k in first.keys]
    second = decoder_forward([4], p, first).cache
    assert first.n_total == 3 and second.n_total == 4
    assert all(np.array_equal(a, b) for a, b in zip(first.keys, keys))
    np.testing.assert_array_equal(second.keys[0][:, :3], first.keys[0])  # old rows kept, one row added


def test_an_empty_cache_is_the_same_as_no_cache():
    p = params_for(config())
    a = decoder_forward([1, 2, 3], p)
    b = decoder_forward([1, 2, 3], p, KVCache.empty(p.config, np.float64))
    np.testing.assert_array_equal(a.logits, b.logits)


# ---------------------------------------------------------------- MHA, GQA, MQA


def test_with_as_many_kv_heads_as_heads_a_layer_is_the_projects_multi_head_attention():
    cfg = config(4, 4, layers=1)
    p = params_for(cfg, seed=4)
    ids = [2, 7, 1, 8, 2, 8]
    x = p.token_embedding[ids] + p.position_embedding[:6]
    layer = p.layers[0]
    mha = multi_head_steps(x, layer.w_q, layer.w_k, layer.w_v, layer.w_o, 4, causal=True)
    out = decoder_forward(ids, p)
    np.testing.assert_allclose(out.logits, (x + mha.output) @ p.unembedding, atol=1e-12)
    np.testing.assert_allclose(out.attentions[0], mha.weights, atol=1e-12)


@pytest.mark.parametrize("kv", [2, 1])
def test_grouped_query_attention_is_multi_head_attention_with_each_kv_head_repeated_for_its_group(kv):
    gqa = params_for(config(4, kv, mlp=True), seed=6)
    arrays = gqa.arrays()
    dh, group = 2, 4 // kv
    for i in range(2):
        for name in ("w_k", "w_v"):
            w = arrays[f"layers.{i}.{name}"]
            arrays[f"layers.{i}.{name}"] = np.concatenate(
                [w[:, (h // group) * dh : (h // group + 1) * dh] for h in range(4)], axis=1
            )  # query head h reads kv head h // group
    mha = DecoderParams.from_arrays(config(4, 4, mlp=True), arrays)
    ids = [5, 3, 5, 0, 10, 3]
    a, b = decoder_forward(ids, gqa), decoder_forward(ids, mha)
    np.testing.assert_allclose(a.logits, b.logits, atol=1e-12)
    np.testing.assert_allclose(a.attentions, b.attentions, atol=1e-12)
    assert a.cache.nbytes * group == b.cache.nbytes  # the point of GQA: a cache `group` times smaller


def test_cache_bytes_of_mha_gqa_mqa():
    sizes = [kv_cache_nbytes(config(8, kv, d_model=64), 1000, 2) for kv in (8, 2, 1)]
    assert sizes == [2 * 2 * 8 * 1000 * 8 * 2, 2 * 2 * 2 * 1000 * 8 * 2, 2 * 2 * 1 * 1000 * 8 * 2]


def test_attention_kind():
    assert [config(4, kv).attention_kind for kv in (4, 2, 1)] == ["MHA", "GQA", "MQA"]


# ---------------------------------------------------------------- dtypes and checks at the door


def test_float32_in_float32_out_and_close_to_float64():
    p = params_for(config(mlp=True, final_norm=True))
    ids = [1, 2, 3, 4]
    a, b = decoder_forward(ids, p.astype(np.float32)), decoder_forward(ids, p)
    assert a.logits.dtype == a.attentions.dtype == a.cache.keys[0].dtype == np.float32
    np.testing.assert_allclose(a.logits, b.logits, atol=1e-4)


@pytest.mark.parametrize(
    "ids, message",
    [
        ([], "expected (n,)"),
        ([[1, 2]], "expected (n,)"),
        ([1.5], "whole token numbers"),
        (["a"], "whole token numbers"),
        ([True], "whole token numbers"),
        ([11], "tokens go from 0 to vocab_size - 1 = 10"),
        ([-1], "tokens go from 0"),
        (list(range(11)) + [0, 1], "max_positions = 12"),
    ],
)
def test_bad_ids_are_refused_with_a_message(ids, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        decoder_forward(ids, params_for(config()))


def test_a_cache_that_does_not_fit_is_refused():
    p = params_for(config())
    cache = decoder_forward(list(range(10)), p).cache
    with pytest.raises(ValueError, match="10 cached \\+ 3 new tokens"):
        decoder_forward([1, 2, 3], p, cache)
    with pytest.raises(ValueError, match="dtype"):
        decoder_forward([1], p.astype(np.float32), cache)
    with pytest.raises(ValueError, match="2 layers"):
        decoder_forward([1], params_for(config(layers=3)), cache)
    with pytest.raises(ValueError, match="KVCache"):
        decoder_forward([1], p, cache={"keys": []})


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(n_heads=4, n_kv_heads=3), "does not divide n_heads"),
        (dict(n_heads=3, n_kv_heads=3), "not divisible by n_heads"),
        (dict(n_heads=0, n_kv_heads=1), "at least 1"),
        (dict(n_heads=4, n_kv_heads=4, max_positions=10**6), "too large"),
        (dict(n_heads=4, n_kv_heads=4, mlp="yes"), "True or False"),
    ],
)
def test_bad_configs_are_refused(kwargs, message):
    base = dict(vocab_size=5, n_layers=1, d_model=8, max_positions=8)
    with pytest.raises(ValueError, match=message):
        DecoderConfig(**(base | kwargs))


def test_bad_parameters_are_refused_when_made():
    p = params_for(config())
    arrays = p.arrays()
    with pytest.raises(ValueError, match="layers.0.w_q has shape"):
        DecoderParams.from_arrays(p.config, arrays | {"layers.0.w_q": np.zeros((8, 7))})
    with pytest.raises(ValueError, match="same dtype"):
        DecoderParams.from_arrays(p.config, arrays | {"unembedding": arrays["unembedding"].astype(np.float32)})
    with pytest.raises(ValueError, match="NaN|nan"):
        DecoderParams.from_arrays(p.config, arrays | {"token_embedding": np.full((11, 8), np.nan)})
    with pytest.raises(ValueError, match="missing"):
        DecoderParams.from_arrays(p.config, {k: v for k, v in arrays.items() if k != "unembedding"})


# ---------------------------------------------------------------- generation


def test_next_token_probabilities_by_hand():
    z = np.array([1.0, 3.0, 2.0, 3.0])
    np.testing.assert_array_equal(next_token_probabilities(z), [0, 1, 0, 0])  # greedy: the first of a tie
    e = np.exp([1.0, 3.0, 2.0, 3.0])
    np.testing.assert_allclose(next_token_probabilities(z, 1.0), e / e.sum())
    top2 = np.exp([3.0, 3.0]) / np.exp([3.0, 3.0]).sum()
    np.testing.assert_allclose(next_token_probabilities(z, 1.0, 2), [0, top2[0], 0, top2[1]])
    hot = np.exp(np.array([1.0, 3.0, 2.0, 3.0]) / 0.5)
    np.testing.assert_allclose(next_token_probabilities(z, 0.5), hot / hot.sum())


@pytest.mark.parametrize(
    "temperature, top_k, message",
    [
        (-1, None, "temperature"),
        (float("nan"), None, "temperature"),
        (1.0, 0, "at least 1"),
        (1.0, 5, "more than the 4"),
    ],
)
def test_bad_sampling_settings_are_refused(temperature, top_k, message):
    with pytest.raises(ValueError, match=message):
        next_token_probabilities(np.zeros(4), temperature, top_k)


@pytest.mark.parametrize("temperature, top_k", [(0.0, None), (1.0, None), (0.7, 3), (2.0, 1)])
def test_generation_with_and_without_the_cache_gives_the_same_tokens(temperature, top_k):
    p = params_for(config(4, 2, mlp=True, positions=20), seed=7)
    kwargs = dict(temperature=temperature, top_k=top_k, seed=11)
    a = generate(p, [1, 2, 3], 10, **kwargs)
    assert len(a) == 13 and list(a[:3]) == [1, 2, 3]
    np.testing.assert_array_equal(a, generate(p, [1, 2, 3], 10, use_cache=False, **kwargs))
    np.testing.assert_array_equal(a, generate(p, [1, 2, 3], 10, **kwargs))  # same seed, same tokens


def test_top_1_sampling_is_greedy_and_greedy_follows_the_logits():
    p = params_for(config(positions=20), seed=8)
    greedy = generate(p, [4, 4], 8)
    np.testing.assert_array_equal(generate(p, [4, 4], 8, temperature=1.5, top_k=1, seed=3), greedy)
    logits = decoder_forward(greedy[:-1], p).logits
    np.testing.assert_array_equal(greedy[2:], logits[1:].argmax(axis=1))


def test_each_step_records_its_attention_row_and_the_growing_cache():
    p = params_for(config(4, 2), seed=9)
    steps = generation_steps(p, [1, 2, 3], 4)
    assert [s.cache_shape for s in steps] == [(2, 3, 2), (2, 4, 2), (2, 5, 2), (2, 6, 2)]
    assert [s.cache_nbytes for s in steps] == [kv_cache_nbytes(p.config, n, 8) for n in (3, 4, 5, 6)]
    ids = generate(p, [1, 2, 3], 4)
    full = decoder_forward(ids[:-1], p).attentions  # (layers, heads, 6, 6)
    for i, s in enumerate(steps):
        np.testing.assert_allclose(s.attentions, full[:, :, 2 + i, : 3 + i], atol=1e-12)
    assert all(s.cache_shape is None for s in generation_steps(p, [1, 2, 3], 2, use_cache=False))


def test_generation_that_would_run_past_the_positions_is_refused():
    p = params_for(config(positions=6))
    assert len(generate(p, [1, 2, 3], 4)) == 7  # the last token is never fed back: 6 positions suffice
    with pytest.raises(ValueError, match="max_positions = 6"):
        generate(p, [1, 2, 3], 5)
    with pytest.raises(ValueError, match="n_new"):
        generate(p, [1, 2, 3], 0)


# ---------------------------------------------------------------- counting the work


def test_multiply_adds_by_hand():
    cfg = DecoderConfig(3, 1, 2, 1, 4, 8)  # d_head 2, one kv head
    cached = decode_step_madds(cfg, 3, use_cache=True)
    # one row: x (4) @ W_q (4x4) + W_k, W_v (4x2 each) = 16 + 8 + 8; scores 2 heads x 3 keys x 2;
    # mixing the same; W_o 4x4 = 16; unembedding 4x3 = 12
    assert (cached.projections, cached.scores, cached.mixing, cached.output, cached.unembedding) == (32, 12, 12, 16, 12)
    full = decode_step_madds(cfg, 3, use_cache=False)
    assert (full.projections, full.scores, full.mixing, full.output, full.unembedding) == (96, 36, 36, 48, 36)
    assert full.total == 252 and cached.total == 84


def test_without_the_cache_the_work_per_token_grows_quadratically():
    cfg = config(8, 2, mlp=True, d_model=64, positions=2048)
    with_cache = [decode_step_madds(cfg, t, use_cache=True).total for t in (512, 1024)]
    without = [decode_step_madds(cfg, t, use_cache=False).total for t in (512, 1024)]
    assert with_cache[1] / with_cache[0] < 2 and without[1] / without[0] > 2
    assert without[1] == 1024 * with_cache[1]  # every part is redone for all 1024 rows instead of one
