"""Short Python snippets that reproduce what a page shows, for students to paste and run.

Pure functions returning code as text; every literal comes from the page's state through repr(),
so user text can never become code. The tests run each snippet and compare with the page's numbers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ui.sequence import format_number


def _array(a: np.ndarray) -> str:
    rows = ", ".join("[" + ", ".join(format_number(x) for x in row) + "]" for row in np.asarray(a))
    return f"np.array([{rows}], dtype=float)"


def attention_snippet(tokens: Sequence[str], q, k, v, *, causal: bool, scale: bool) -> str:
    """Plain numpy: softmax(Q Kᵀ / sqrt(d_k)) V for this sequence (no project code needed)."""
    lines = [
        "import numpy as np",
        "",
        f"tokens = {list(tokens)!r}",
        f"Q = {_array(q)}  # (n, d_k)",
        f"K = {_array(k)}  # (n, d_k)",
        f"V = {_array(v)}  # (n, d_v)",
        "",
        "scores = Q @ K.T  # (n, n): every query dotted with every key",
    ]
    if scale:
        lines.append("scores = scores / np.sqrt(Q.shape[1])  # divide by sqrt(d_k)")
    if causal:
        lines += [
            "allowed = np.tril(np.ones(scores.shape, dtype=bool))  # True = may attend (j <= i)",
            "scores = np.where(allowed, scores, -np.inf)  # mask BEFORE the softmax",
        ]
    lines += [
        "weights = np.exp(scores - scores.max(axis=1, keepdims=True))",
        "weights = weights / weights.sum(axis=1, keepdims=True)  # each row sums to 1",
        "output = weights @ V  # (n, d_v)",
        "print(np.round(weights, 3))",
    ]
    return "\n".join(lines)


def heads_snippet(
    tokens: Sequence[str], *, d_model: int, n_heads: int, presets: Sequence[str], seed: int, causal: bool, scale: bool
) -> str:
    """The Multi-head page's computation with this project's `attention` package."""
    return "\n".join(
        [
            "from attention import multi_head_steps",
            "from lessons.head_library import embed_tokens, head_library_weights",
            "",
            f"tokens = {list(tokens)!r}",
            f"emb = embed_tokens(tokens, d_model={d_model}, seed={seed})  # X: (n, d_model)",
            f"hw = head_library_weights(emb, {list(presets)!r}, seed={seed})",
            f"steps = multi_head_steps(emb.x, hw.w_q, hw.w_k, hw.w_v, hw.w_o, n_heads={n_heads}, b_q=hw.b_q,",
            f"                         causal={causal}, scale={scale})",
            "weights = steps.weights  # (n_heads, n, n)",
            "output = steps.output  # (n, d_model)",
            "print(weights.round(3))",
        ]
    )


def block_snippet(
    tokens: Sequence[str],
    *,
    d_model: int,
    d_ff: int,
    n_heads: int,
    n_blocks: int,
    seed: int,
    causal: bool,
    activation: str,
    norm: str,
) -> str:
    """The Block page's stack with this project's `attention` package."""
    return "\n".join(
        [
            "from attention import transformer_block",
            "from lessons.head_library import embed_tokens, stack_params",
            "",
            f"tokens = {list(tokens)!r}",
            f"x = embed_tokens(tokens, d_model={d_model}, seed={seed}).x  # (n, d_model)",
            f"for params in stack_params(d_model={d_model}, d_ff={d_ff}, n_blocks={n_blocks}, seed={seed}):",
            f"    x, trace = transformer_block(x, params, n_heads={n_heads}, causal={causal},",
            f"                                 activation={activation!r}, norm={norm!r})",
            "    print([(step.name, step.shape) for step in trace.steps])",
            "print(x.shape)  # the same shape as the input: blocks stack",
        ]
    )


def scaling_snippet(*, n_keys: int, n_samples: int, seed: int, train_d_k: int, lr: float, steps: int) -> str:
    """The √d_k page's measurement and training with this project's `attention` package."""
    return "\n".join(
        [
            "from lessons.scaling import SWEEP_D_KS, scaling_stats",
            "from lessons.training import TrainingConfig, compare_scaling",
            "",
            f"stats = scaling_stats(SWEEP_D_KS, n_keys={n_keys}, n_samples={n_samples}, seed={seed})",
            "print(stats.d_k, stats.variance, stats.max_weight_unscaled, stats.max_weight_scaled)",
            f"c = compare_scaling(TrainingConfig(d_k={train_d_k}, steps={steps}, lr={lr!r}, seed={seed}))",
            "print(c.scaled.loss[-1], c.unscaled.loss[-1])",
        ]
    )


def pretrained_snippet(text: str, *, layer: int, head: int) -> str:
    """One head of all-MiniLM-L6-v2 on this text, run by this project's numpy core (layer, head from 1)."""
    return "\n".join(
        [
            "from attention.pretrained import load_minilm",
            "",
            f"run = load_minilm().run({text!r})",
            "print(run.tokens)",
            f"weights = run.attentions[{layer - 1}, {head - 1}]  # layer {layer}, head {head}: (n, n)",
            "print(weights.round(2))",
        ]
    )


def deeper_snippet(text: str, *, layer: int, head: int) -> str:
    """One head's queries and keys as points, and the rollout of the whole model, on this text (from 1)."""
    return "\n".join(
        [
            "import numpy as np",
            "",
            "from attention.pretrained import attention_rollout, load_minilm",
            "from lessons.projection import queries_and_keys",
            "",
            f"run = load_minilm().run({text!r})",
            f"q, k = run.queries[{layer - 1}, {head - 1}], run.keys[{layer - 1}, {head - 1}]"
            f"  # layer {layer}, head {head}: (n, d_head) each",
            "points = queries_and_keys(q, k)  # PCA: points.coords (2n, 2), the queries first",
            'print(f"the two axes keep {points.share:.1%} of the spread")',
            "rollout = attention_rollout(run.attentions)  # (n, n), rows sum to 1",
            "feed = rollout.mean(axis=0)  # the input tokens' shares in the mean-pooled output",
            "for i in np.argsort(-feed)[:5]:",
            "    print(i, run.tokens[i], round(float(feed[i]), 3))",
        ]
    )


def shuffle_snippet(words: Sequence[str], *, d_model: int, seed: int, shuffle: int, alibi_heads: int, head: int) -> str:
    """The position page's shuffle check, for the toy head and for MiniLM's first layer (head from 1)."""
    return "\n".join(
        [
            "from attention.pretrained import load_minilm",
            "from lessons.positions.shuffle import minilm_shuffle_check, permutation, shuffle_check",
            "from lessons.positions.toy import toy_head, word_vectors",
            "",
            f"words = {list(words)!r}",
            f"x = word_vectors(words, d_model={d_model}, seed={seed})  # (n, d_model): no position in it",
            f"head = toy_head({d_model}, seed={seed})  # W_Q, W_K, W_V of one head",
            f"perm = permutation(len(words), {shuffle})  # shuffled[i] = words[perm[i]]",
            "print([words[i] for i in perm])",
            'for method in ["none", "sinusoidal", "rope", "alibi"]:',
            f"    check = shuffle_check(x, head, perm, method, alibi_heads={alibi_heads})",
            '    print(method, check.max_diff, "passed" if check.passed else "failed")',
            "model = load_minilm()  # learned absolute: the real model's own table",
            "for positions in (False, True):",
            f"    check = minilm_shuffle_check(model, words, perm, head={head - 1}, positions=positions)",
            '    print("MiniLM, positions" if positions else "MiniLM, none", check.max_diff)',
        ]
    )


def four_ways_snippet(
    words: Sequence[str], *, d_model: int, seed: int, table_d: int, shift: int, offset: int, alibi_heads: int
) -> str:
    """The position page's three computed methods with this project's `attention` package."""
    return "\n".join(
        [
            "import numpy as np",
            "from attention import alibi_bias, alibi_slopes, sinusoidal_encoding",
            "from lessons.positions.rope import rope_offset_check",
            "from lessons.positions.sinusoidal import shift_matrix",
            "from lessons.positions.toy import toy_head, word_vectors",
            "",
            f"pe = sinusoidal_encoding(100, {table_d})  # (positions, d): added to the embeddings",
            f"m_k = shift_matrix({shift}, {table_d})  # PE[p + {shift}] = PE[p] @ m_k, the same matrix for every p",
            f"print(np.abs(pe[{shift}:] - pe[:-{shift}] @ m_k).max())",
            "",
            f"words = {list(words)!r}",
            f"x = word_vectors(words, d_model={d_model}, seed={seed})",
            f"head = toy_head({d_model}, seed={seed})",
            f"check = rope_offset_check(x @ head.w_q, x @ head.w_k, offset={offset})  # RoPE: every position + offset",
            "print(check.max_diff)  # rounding: the scores depend on m - n only",
            "",
            f"print(alibi_slopes({alibi_heads}))  # one slope per head",
            f"print(alibi_bias(len(words), {alibi_heads})[0])  # head 1's penalty -m (i - j), added to its scores",
        ]
    )


def induction_snippet(*, model: str, seed: int, steps: int, text: str, n_new: int) -> str:
    """The induction page: the model (shipped, or trained with this seed), its measurement and your letters."""
    if model == "yours":
        lines = [
            f"run = train_induction(InductionConfig(seed={seed}, steps={steps}))  # about 15 s per 2000 steps",
            "params = run.params",
        ]
    else:
        lines = ["params = load_induction_model()  # lessons/data/induction_model.npz (scripts/train_induction.py)"]
    return "\n".join(
        [
            "from attention.decoder import decoder_forward, generate",
            "from lessons.induction import (",
            "    InductionConfig, evaluate, ids_to_letters, letters_to_ids, load_induction_model, train_induction",
            ")",
            "",
            *lines,
            "result = evaluate(params, half=10, n_sequences=500, seed=12345)",
            "print(result.accuracy_first, result.accuracy_repeated)  # first half near 1/26, repeated near 1",
            "print(result.previous_token.round(2))  # (layers, heads)",
            "print(result.induction.round(2))",
            f"prompt = letters_to_ids({text!r})",
            f"completed = generate(params, prompt, {n_new})",
            "print(' '.join(ids_to_letters(completed)))",
            "attentions = decoder_forward(completed[:-1], params).attentions  # (layers, heads, n, n)",
        ]
    )


def generation_snippet(*, prompt: str, n_new: int, temperature: float, top_k: int | None, seed: int) -> str:
    """The generation page: generate with and without the cache, check the cache, measure it."""
    return "\n".join(
        [
            "import numpy as np",
            "from attention.decoder import decoder_forward, generate",
            "from lessons.generation import cache_check",
            "from lessons.induction import ids_to_letters, letters_to_ids, load_induction_model",
            "",
            "params = load_induction_model()",
            f"prompt = letters_to_ids({prompt!r})",
            f"settings = dict(temperature={temperature!r}, top_k={top_k!r}, seed={seed})",
            f"ids = generate(params, prompt, {n_new}, **settings)",
            "print(' '.join(ids_to_letters(ids)))",
            f"print((ids == generate(params, prompt, {n_new}, use_cache=False, **settings)).all())  # same tokens",
            "difference = cache_check(params.astype(np.float64), ids[:-1], len(prompt))",
            "print(difference, difference < 1e-12)  # cached decoding == recomputing everything",
            "cache = decoder_forward(ids[:-1], params).cache",
            "print(cache.shapes, cache.nbytes)  # per layer (n_kv_heads, n_total, d_head); bytes",
        ]
    )


def masks_snippet(
    *, n: int, window: int, layers: int, sequences: Sequence[Sequence[str]], d_model: int, seed: int, causal: bool
) -> str:
    """The position page's sliding window and padded batch with this project's `attention` package."""
    return "\n".join(
        [
            "from attention import padded_attention, sliding_window_mask",
            "from lessons.positions.masks import padded_batch, reach_span, window_reach",
            "from lessons.positions.toy import toy_head",
            "",
            f"print(sliding_window_mask({n}, {window}).astype(int))  # True = may attend: i - {window} < j <= i",
            f"first = window_reach({n}, {window}, {layers})  # first layer by which key j reaches query i (0: none)",
            "print(first)",
            f"print(reach_span({window}, {layers}))  # positions heard from after {layers} layers",
            "",
            f"x, lengths, labels = padded_batch({[list(s) for s in sequences]!r}, d_model={d_model}, seed={seed})",
            f"head = toy_head({d_model}, seed={seed})",
            f"result = padded_attention(x @ head.w_q, x @ head.w_k, x @ head.w_v, lengths, causal={causal})",
            "print(result.used)  # False: a padded query, its row reported as 0",
            "print(result.weights.round(2))  # padded keys: exactly 0",
        ]
    )
