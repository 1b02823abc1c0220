"""Generation and the KV cache, measured: the same tokens with and without the cache, the logits checked
against a full recomputation, the work per new token counted and timed, and the cache of MHA, GQA and MQA.

A decoder generates by appending its own prediction and running again. Without a cache, step t reruns
all t tokens; with one, it runs only the newest token against the keys and values kept from before,
which is exact (a token's key and value depend only on itself and the tokens before it: the mask
guarantees it). The first step has nothing cached yet: it runs the whole prompt either way.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from attention.checks import check_positive_int
from attention.decoder import (
    DecoderConfig,
    DecoderParams,
    GenerationStep,
    decode_step_madds,
    decoder_forward,
    generation_steps,
    kv_cache_nbytes,
)
from locales import num, sentence_space, tr

DTYPE_BYTES = {"float16": 2, "float32": 4, "float64": 8}  # bfloat16 takes 2 bytes too


@dataclass(frozen=True)
class KnownModel:
    """A published model's shape, for sizes quoted on the page."""

    name: str
    n_layers: int
    n_heads: int
    d_head: int
    n_params: int
    n_context: int  # the context length it was trained for


# Llama 2 7B (Touvron et al. 2023): 32 layers of 32 heads of 128, multi-head attention, 6,738,415,616 parameters,
# trained for a context of 4,096 tokens (their Table 1)
LLAMA2_7B = KnownModel("Llama 2 7B", 32, 32, 128, 6_738_415_616, 4096)


def weights_and_cache(model: KnownModel, n_total: int, itemsize: int = 2) -> tuple[int, int]:
    """(bytes of the model's weights, bytes of its multi-head KV cache after n_total tokens), at `itemsize` bytes
    per number."""
    (mha, *_) = cache_kinds(model.n_layers, model.n_heads, model.n_heads, model.d_head, n_total, itemsize)
    return model.n_params * itemsize, mha.nbytes


@dataclass(frozen=True)
class GenerationReport:
    """One generation, run twice (with and without the cache), and the check of the cache.

    Shapes: ids (p + n_new,) the prompt and the new tokens; steps as generated with the cache;
    ms_cached, ms_uncached (n_new,) the fastest of `repeats` timings of each step; madds_cached,
    madds_uncached (n_new,) the counted multiply-adds of each step (step 1 runs the whole prompt in both,
    since nothing is cached yet, so their first entries are equal). max_diff_float64 / float32: the
    largest |logit| difference between cached one-token-at-a-time decoding and recomputing the whole
    sequence, in each precision. same_tokens: whether both ways chose the same tokens.
    """

    prompt_length: int
    ids: np.ndarray
    steps: tuple[GenerationStep, ...]
    ms_cached: np.ndarray
    ms_uncached: np.ndarray
    madds_cached: np.ndarray
    madds_uncached: np.ndarray
    max_diff_float64: float
    max_diff_float32: float
    same_tokens: bool


def generation_report(
    params: DecoderParams,
    prompt_ids,
    n_new: int,
    *,
    temperature: float = 0.0,
    top_k: int | None = None,
    seed: int = 0,
    repeats: int = 3,
) -> GenerationReport:
    """Generate n_new tokens after the prompt with the cache and without; time each step (best of `repeats`);
    check the cached logits against a full recomputation in float64 and float32."""
    kwargs = dict(temperature=temperature, top_k=top_k, seed=seed)
    runs_cached = [generation_steps(params, prompt_ids, n_new, use_cache=True, **kwargs) for _ in range(repeats)]
    runs_full = [generation_steps(params, prompt_ids, n_new, use_cache=False, **kwargs) for _ in range(repeats)]
    steps = runs_cached[0]
    prompt = np.asarray(prompt_ids, dtype=np.intp)
    ids = np.concatenate([prompt, [s.token for s in steps]]).astype(np.intp)
    same = [s.token for s in steps] == [s.token for s in runs_full[0]]
    p = len(prompt)
    counts = [
        (
            decode_step_madds(params.config, p + i, use_cache=i > 0),  # step 1 fills the cache: the whole prompt
            decode_step_madds(params.config, p + i, use_cache=False),
        )
        for i in range(n_new)
    ]
    return GenerationReport(
        p,
        ids,
        steps,
        1000 * np.min([[s.seconds for s in run] for run in runs_cached], axis=0),
        1000 * np.min([[s.seconds for s in run] for run in runs_full], axis=0),
        np.array([c.total for c, _ in counts]),
        np.array([u.total for _, u in counts]),
        cache_check(params.astype(np.float64), ids[:-1], p),
        cache_check(params.astype(np.float32), ids[:-1], p),
        same,
    )


def cache_check(params: DecoderParams, ids: np.ndarray, prompt_length: int) -> float:
    """The largest |difference| between the logits of decoding with the cache (the prompt at once, then one
    token at a time, as generation does) and of running the whole sequence at once. Shapes: ids (n,)."""
    full = decoder_forward(ids, params).logits  # (n, vocab_size)
    out = decoder_forward(ids[:prompt_length], params)
    rows, cache = [out.logits], out.cache
    for token in ids[prompt_length:]:
        out = decoder_forward([token], params, cache)
        rows.append(out.logits)
        cache = out.cache
    return float(np.max(np.abs(np.concatenate(rows) - full)))


def step_attention_rows(steps: Sequence[GenerationStep]) -> np.ndarray:
    """Each step's attention row for every head of every layer, stacked: the weights of the query that chose the
    step's token over the tokens fed in so far, NaN where the step had not yet seen a position (each step's row is
    one position longer than the step before's, as the chosen token joins the sequence).

    Shapes: steps[s].attentions (n_layers, n_heads, p + s) for a prompt of p tokens -> (n_layers * n_heads,
    len(steps), p + len(steps) - 1), rows in layer-major order (layer 1's heads, then layer 2's...).
    """
    last = steps[-1].attentions  # the longest row: every token fed in
    n_rows = last.shape[0] * last.shape[1]
    rows = np.full((n_rows, len(steps), last.shape[-1]), np.nan)
    for s, step in enumerate(steps):
        row = step.attentions.reshape(n_rows, -1)  # (layers x heads, p + s)
        rows[:, s, : row.shape[1]] = row
    return rows


def work_per_new_token(
    config: DecoderConfig, longest: int = 4096, points: int = 40
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The multiply-adds of producing one new token after t tokens, with the cache and without, for t from 1 to
    `longest` spaced evenly on a log scale, on a model of `config`'s shape given room for `longest` positions.

    Shapes: returns (t, with_cache, without) of (T,) each, T <= points (the lengths rounded down, repeats
    dropped).
    """
    t = np.unique(np.geomspace(1, longest, points).astype(int))
    big = replace(config, max_positions=longest)  # this model's shape, with room for long contexts
    cached = np.array([decode_step_madds(big, int(n), use_cache=True).total for n in t])
    uncached = np.array([decode_step_madds(big, int(n), use_cache=False).total for n in t])
    return t, cached, uncached


@dataclass(frozen=True)
class ContextTiming:
    """One decoding step at several context lengths, with and without the cache, on a model of `config`.

    Shapes: n_total, ms_cached, ms_uncached, madds_cached, madds_uncached (T,).
    """

    config: DecoderConfig
    n_total: np.ndarray
    ms_cached: np.ndarray
    ms_uncached: np.ndarray
    madds_cached: np.ndarray
    madds_uncached: np.ndarray


def time_decoding_step(params: DecoderParams, n_total: int, repeats: int = 5) -> tuple[float, float]:
    """(ms with the cache, ms without) of producing the logits of token n_total, the best of `repeats`.

    With: one token against a cache of n_total - 1 (filled beforehand, not timed); without: all n_total tokens.
    """
    ids = np.random.default_rng(n_total).integers(0, params.config.vocab_size, n_total)
    cache = decoder_forward(ids[:-1], params).cache if n_total > 1 else None
    best = [np.inf, np.inf]
    for _ in range(check_positive_int(repeats, "repeats")):
        for k, run in enumerate(
            (lambda: decoder_forward(ids[-1:], params, cache), lambda: decoder_forward(ids, params))
        ):
            t0 = time.perf_counter()
            run()
            best[k] = min(best[k], time.perf_counter() - t0)
    return 1000 * best[0], 1000 * best[1]


def context_timing(config: DecoderConfig, lengths, *, seed: int = 0, repeats: int = 5) -> ContextTiming:
    """Time one decoding step at each context length in `lengths` on random float32 weights of `config`."""
    params = DecoderParams.random(config, seed, np.float32)
    lengths = np.array([check_positive_int(int(t), "each length") for t in lengths])
    times = np.array([time_decoding_step(params, int(t), repeats) for t in lengths])  # (T, 2)
    return ContextTiming(
        config,
        lengths,
        times[:, 0],
        times[:, 1],
        np.array([decode_step_madds(config, int(t), use_cache=True).total for t in lengths]),
        np.array([decode_step_madds(config, int(t), use_cache=False).total for t in lengths]),
    )


@dataclass(frozen=True)
class CacheKind:
    """One way of sharing keys and values: its name, n_kv_heads and the cache's bytes at the chosen length."""

    name: str
    n_kv_heads: int
    nbytes: int


def cache_kinds(
    n_layers: int, n_heads: int, gqa_kv_heads: int, d_head: int, n_total: int, itemsize: int
) -> list[CacheKind]:
    """MHA (n_kv = n_heads), GQA (n_kv = gqa_kv_heads) and MQA (n_kv = 1) of the same shape: the KV cache of each.

    `ValueError` if gqa_kv_heads does not divide n_heads (or the shape is out of range).
    """
    kinds = []
    for name, kv in (("MHA", n_heads), ("GQA", gqa_kv_heads), ("MQA", 1)):
        config = DecoderConfig(2, n_layers, n_heads, kv, n_heads * d_head, 8)
        kinds.append(CacheKind(f"{name} (n_kv = {kv})", kv, kv_cache_nbytes(config, n_total, itemsize)))
    return kinds


def measured_cache_bytes(n_heads: int, n_kv_heads: int, d_head: int, n_total: int) -> tuple[int, int]:
    """(bytes of a real float32 cache after n_total tokens, the formula's bytes) for a 2-layer model of this
    head shape: the formula the comparison uses, checked on arrays that exist."""
    config = DecoderConfig(26, 2, n_heads, n_kv_heads, n_heads * d_head, n_total)
    params = DecoderParams.random(config, 0, np.float32)
    ids = np.random.default_rng(0).integers(0, 26, n_total)
    return decoder_forward(ids, params).cache.nbytes, kv_cache_nbytes(config, n_total, 4)


def last_step_work(report: GenerationReport) -> str:
    """What the counts say of the last step's work. Step 1 has nothing cached: it runs the whole prompt with the
    cache or without, so a single new token costs the same both ways."""
    n_new = len(report.steps)
    tokens = report.prompt_length + n_new - 1
    cached, full = int(report.madds_cached[-1]), int(report.madds_uncached[-1])
    if n_new == 1:
        return tr(
            "Your only step is step 1, and it runs the whole prompt of {tokens} tokens with the cache or without "
            "(nothing is cached yet): **{cached}** multiply-adds either way. The cache pays from step 2 on.",
            tokens=tokens,
            cached=num(cached, ","),
        )
    return tr(
        "Your last step (step {step}, {tokens} tokens): **{cached}** with the cache, **{full}** without, {ratio} "
        "times more.",
        step=n_new,
        tokens=tokens,
        cached=num(cached, ","),
        full=num(full, ","),
        ratio=num(full / cached, ".0f"),
    )


def cache_verdict(report: GenerationReport) -> str:
    """What the check of the cache found, in words that match its two numbers."""
    d64, d32 = report.max_diff_float64, report.max_diff_float32
    said = tr(
        "Equal to {difference} in float64 (below 1e-12): the cache changes how much is computed, not what.",
        difference=num(d64, ".1e"),
    )
    if d32 > 0:
        return (
            said
            + sentence_space()
            + tr(
                "In float32 the two differ in the last digits only ({difference}), because the same sums are added "
                "in a different order.",
                difference=num(d32, ".1e"),
            )
        )
    if len(report.steps) == 1:
        return (
            said
            + sentence_space()
            + tr(
                "In float32 they are equal too: with one new token, no token is decoded against the cache (step 1 "
                "runs the whole prompt, the same sums as the full run)."
            )
        )
    return (
        said
        + sentence_space()
        + tr("In float32 they are equal too: here the two orders of the sums happen to round alike.")
    )
