"""lessons.generation: the report behind the generation page, the cache check, the cache sizes and the timing."""

import numpy as np
import pytest

from attention.decoder import DecoderConfig, DecoderParams, decode_step_madds, decoder_forward, generate
from lessons.generation import (
    LLAMA2_7B,
    cache_check,
    cache_kinds,
    cache_verdict,
    context_timing,
    generation_report,
    last_step_work,
    measured_cache_bytes,
    step_attention_rows,
    weights_and_cache,
    work_per_new_token,
)

CONFIG = DecoderConfig(9, 2, 4, 2, 8, 24, True)


@pytest.fixture(scope="module")
def params():
    return DecoderParams.random(CONFIG, 1, np.float32, token_std=1.0, position_std=1.0)


def test_the_report_generates_the_cores_tokens_and_counts_each_step(params):
    r = generation_report(params, [1, 2, 3], 6, temperature=0.8, top_k=4, seed=5, repeats=2)
    np.testing.assert_array_equal(r.ids, generate(params, [1, 2, 3], 6, temperature=0.8, top_k=4, seed=5))
    assert r.same_tokens and r.prompt_length == 3 and len(r.steps) == 6
    assert r.ms_cached.shape == r.ms_uncached.shape == (6,) and np.all(r.ms_cached > 0)
    assert r.madds_cached[0] == r.madds_uncached[0]  # step 1 runs the whole prompt: nothing is cached yet
    assert list(r.madds_uncached[1:]) == [t * m for t, m in zip(range(4, 9), r.madds_cached[1:])]
    assert r.max_diff_float64 < 1e-12 and 1e-12 < r.max_diff_float32 < 1e-4
    work = last_step_work(r)
    assert f"step 6, 8 tokens): **{r.madds_cached[-1]:,}** with the cache, **{r.madds_uncached[-1]:,}** without" in work
    assert f"{r.madds_uncached[-1] / r.madds_cached[-1]:.0f} times more" in work
    assert f"differ in the last digits only ({r.max_diff_float32:.1e})" in cache_verdict(r)


def test_one_new_token_costs_the_same_with_the_cache_and_the_check_is_exact(params):
    r = generation_report(params, [1, 2, 3, 4], 1, repeats=1)
    whole_prompt = decode_step_madds(CONFIG, 4, use_cache=False).total
    assert r.madds_cached[0] == r.madds_uncached[0] == whole_prompt > decode_step_madds(CONFIG, 4, use_cache=True).total
    assert r.max_diff_float32 == 0.0 and r.max_diff_float64 == 0.0  # no token is decoded against the cache
    assert f"**{r.madds_cached[0]:,}** multiply-adds either way" in last_step_work(r)
    verdict = cache_verdict(r)
    assert "last digits" not in verdict and "equal too" in verdict


def test_the_cache_check_notices_a_wrong_cache(params, monkeypatch):
    p64 = params.astype(np.float64)
    ids = np.array([1, 2, 3, 4, 5, 6])
    assert cache_check(p64, ids, 2) < 1e-12
    import lessons.generation as lesson

    def forgetful(ids, p, cache=None):  # a broken cache: ignores it, so each token sees only itself
        return decoder_forward(ids, p)

    monkeypatch.setattr(lesson, "decoder_forward", forgetful)
    assert cache_check(p64, ids, 2) > 1e-3


def test_cache_sizes_of_mha_gqa_mqa_and_a_real_cache():
    kinds = cache_kinds(32, 32, 8, 128, 4096, 2)
    assert [k.nbytes for k in kinds] == [2**31, 2**29, 2**26]  # 2 GiB, 512 MiB, 64 MiB
    assert [k.n_kv_heads for k in kinds] == [32, 8, 1]
    measured, formula = measured_cache_bytes(8, 2, 4, 10)
    assert measured == formula == 2 * 2 * 2 * 10 * 4 * 4
    with pytest.raises(ValueError, match="does not divide"):
        cache_kinds(2, 8, 3, 16, 10, 4)


def test_context_timing_reports_each_length():
    t = context_timing(DecoderConfig(5, 1, 2, 2, 8, 64), [1, 8, 64], repeats=1)
    assert list(t.n_total) == [1, 8, 64] and np.all(t.ms_cached > 0) and np.all(t.ms_uncached > 0)
    assert t.madds_uncached[-1] == 64 * t.madds_cached[-1]


def test_the_7b_example_by_hand():
    weights, cache = weights_and_cache(LLAMA2_7B, 32768)
    assert weights == 6_738_415_616 * 2 and 12.5 * 2**30 < weights < 12.6 * 2**30  # float16 weights
    assert cache == 2 * 32 * 32 * 32768 * 128 * 2 == 16 * 2**30  # K and V, 32 layers, 32 heads, float16
    assert cache > weights  # "the cache can outgrow the weights"
    _, own = weights_and_cache(LLAMA2_7B, LLAMA2_7B.n_context)
    assert LLAMA2_7B.n_context == 4096 and own == cache // 8 == 2 * 2**30 < weights  # at its own context it does not


def test_the_step_rows_are_each_query_over_the_tokens_fed_so_far(params):
    r = generation_report(params, [1, 2, 3], 5, repeats=1)
    rows = step_attention_rows(r.steps)
    assert rows.shape == (CONFIG.n_layers * CONFIG.n_heads, 5, 3 + 5 - 1)
    full = decoder_forward(r.ids[:-1], params).attentions  # (layers, heads, 7, 7): every token fed in, at once
    for layer in range(CONFIG.n_layers):
        for head in range(CONFIG.n_heads):
            got = rows[layer * CONFIG.n_heads + head]  # layer-major: layer 1's heads first
            for s in range(5):  # step s is the query of position 2 + s, over the 3 + s positions so far
                np.testing.assert_allclose(got[s, : 3 + s], full[layer, head, 2 + s, : 3 + s], atol=1e-5)
                assert np.all(np.isnan(got[s, 3 + s :]))
    assert step_attention_rows(r.steps[:1]).shape == (CONFIG.n_layers * CONFIG.n_heads, 1, 3)  # the prompt only


def test_the_work_per_new_token_is_counted_at_lengths_up_to_the_longest():
    t, cached, uncached = work_per_new_token(CONFIG, longest=4096)  # far past CONFIG's 24 positions
    assert t[0] == 1 and t[-1] == 4096 and np.all(np.diff(t) > 0) and len(t) <= 40
    for n, with_cache, without in zip(t, cached, uncached):
        assert with_cache == decode_step_madds(CONFIG, int(n), use_cache=True).total
        assert without == decode_step_madds(CONFIG, int(n), use_cache=False).total
    assert cached[0] == uncached[0] and uncached[-1] > 1000 * cached[-1]  # one token alike; the gap grows with t
