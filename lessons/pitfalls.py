"""Three classic attention bugs, written out so a page can run them beside the correct version.

- Masking *after* the softmax: the future is zeroed too late, rows no longer sum to 1.
- Transposing the wrong matrix: Q K only runs when n == d_k, and then it silently computes nonsense;
  K Qᵀ always runs (for self-attention it is square), its rows sum to 1, and keys attend to queries.
- Reading the weights as an explanation: different inputs can share one attention pattern.

Also the check that catches a broken causal mask: outputs up to position t must not move, bit for
bit, when only tokens after t change. Mask convention everywhere: True = may attend.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attention.checks import as_real_array, check_positive_int
from attention.dot_product import AttentionSteps, attention_steps, check_qkv, scaled_dot_product_attention
from attention.masks import causal_mask
from attention.sequence import TokenSequence
from attention.stable_softmax import softmax
from lessons.examples import Example, random_example
from locales import num, tr

# The bug multiplies by a 0/1 mask B (1 = may attend); the causal formula adds M (0 or -inf). Two symbols:
# multiplying by M would give -inf, not 0.
MASK_AFTER_SOFTMAX_LATEX = (
    r"\tilde{A} = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) \odot B, \qquad "
    r"B_{ij} = \begin{cases} 1 & j \le i \\ 0 & j > i \end{cases}, \qquad "
    r"\text{leak}_i = 1 - \sum_j \tilde{A}_{ij}"
)
CAUSAL_LATEX = (
    r"A = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}} + M\right), \qquad "
    r"M_{ij} = \begin{cases} 0 & j \le i \\ -\infty & j > i \end{cases}"
)
WRONG_TRANSPOSE_LATEX = (
    r"\underbrace{Q K^\top}_{(n \times d_k)(d_k \times n) \,=\, n \times n}"
    r"\quad\text{vs.}\quad"
    r"\underbrace{Q K}_{(n \times d_k)(n \times d_k):\ \text{runs only if } d_k = n}"
    r"\quad\text{vs.}\quad"
    r"\underbrace{K Q^\top}_{(n \times d_k)(d_k \times n) \,=\, n \times n:\ \text{always runs}}"
)
ROW_SUM_TOLERANCE = 1e-9


def _scaled_scores(q: np.ndarray, k: np.ndarray, scale: bool) -> np.ndarray:
    scores = q @ k.T  # (n, m)
    return scores / math.sqrt(q.shape[-1]) if scale else scores


@dataclass(frozen=True)
class AfterSoftmaxMask:
    """The buggy causal attention: softmax over every key, then the masked weights set to 0.

    Shapes: full_weights, weights (n, m); output (n, d_v); row_sums, leak (n,).
    """

    full_weights: np.ndarray  # softmax over all keys, the future included (rows sum to 1)
    weights: np.ndarray  # full_weights with the masked entries zeroed, not renormalised
    output: np.ndarray  # weights @ V
    row_sums: np.ndarray  # sum of each row of `weights`: below 1 wherever the future had weight
    leak: np.ndarray  # weight mass that had gone to masked keys = 1 - row_sums


def mask_after_softmax(q, k, v, mask=None, *, scale: bool = True) -> AfterSoftmaxMask:
    """The bug: mask the weights after the softmax instead of the scores before it.

    Shapes: q (n, d_k), k (m, d_k), v (m, d_v), mask (n, m) bool, True = may attend (default: causal).
    The future's scores still enter every row's normalisation, so the kept weights are too small:
    a row sums to 1 - leak, and the output is shrunk towards 0.
    """
    q, k, v = check_qkv(q, k, v)
    _check_2d(q, k, v)
    n, m = q.shape[0], k.shape[0]
    mask = causal_mask(n, m) if mask is None else np.asarray(mask)
    if mask.dtype != np.bool_ or mask.shape != (n, m):
        raise ValueError(f"mask has shape {mask.shape} and dtype {mask.dtype}; expected bool ({n}, {m})")
    full = softmax(_scaled_scores(q, k, scale))  # (n, m), the future included
    weights = np.where(mask, full, 0.0)  # (n, m), zeroed too late
    leak = np.where(mask, 0.0, full).sum(axis=-1)  # (n,)
    return AfterSoftmaxMask(full, weights, weights @ v, weights.sum(axis=-1), leak)  # output (n, d_v)


def _check_2d(*arrays: np.ndarray) -> None:
    for name, a in zip("qkv", arrays):
        if a.ndim != 2:
            raise ValueError(f"{name} has shape {a.shape}; these demonstrations take one sequence, (positions, dims)")


def wrong_transpose_scores(q, k) -> np.ndarray:
    """The bug: Q K instead of Q Kᵀ. Shapes: q (n, d_k), k (n, d_k) -> (n, n), only when d_k == n.

    Raises ValueError (as numpy would) when the shapes do not allow it: with d_k != n the mistake is
    caught at once. With d_k == n the product is square and runs, and nothing but a predicted
    answer reveals that entry (i, j) is sum_c q_ic k_cj, which mixes positions with dimensions.
    """
    q, k = as_real_array(q, "q"), as_real_array(k, "k")
    _check_2d(q, k)
    n, d_k = q.shape
    if k.shape[0] != d_k:
        raise ValueError(  # shown on the Pitfalls page
            tr(
                "Q K is undefined: q is {n}×{d_k} and k is {k_rows}×{k_columns}, and a "
                "{n}×{d_k} matrix can only multiply one with {d_k} rows. The wrong product runs "
                "only when n = d_k: that is exactly when this bug hides.",
                n=n,
                d_k=d_k,
                k_rows=k.shape[0],
                k_columns=k.shape[1],
            )
        )
    return q @ k  # (n, d_k) @ (d_k == n, d_k) -> (n, n): runs, and means nothing


def wrong_transpose_attention(q, k, v, *, scale: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Attention with the transpose bug: returns (scores, weights, output) of softmax(Q K / sqrt(d_k)) V.

    Shapes: q, k (n, d_k) with d_k == n, v (n, d_v) -> scores, weights (n, n), output (n, d_v).
    """
    q, k, v = check_qkv(q, k, v)
    scores = wrong_transpose_scores(q, k)  # (n, n)
    weights = softmax(scores / math.sqrt(q.shape[1]) if scale else scores)  # (n, n), rows still sum to 1
    return scores, weights, weights @ v  # output (n, d_v)


def key_query_attention(q, k, v, *, scale: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The other wrong transpose: softmax(K Qᵀ / sqrt(d_k)) V. Returns (scores, weights, output).

    Shapes: q (n, d_k), k (n, d_k), v (n, d_v) -> scores, weights (n, n), output (n, d_v). For
    self-attention K Qᵀ is square whatever n and d_k are, so it always runs and its rows sum to 1; but
    it is (Q Kᵀ)ᵀ: row i holds key i dotted with every query, so each *key* spreads weight over the queries.
    """
    q, k, v = check_qkv(q, k, v)
    _check_2d(q, k, v)
    if q.shape[0] != k.shape[0]:
        raise ValueError(
            f"K Qᵀ is {k.shape[0]}×{q.shape[0]}, but its rows must weigh the {v.shape[0]} values: "
            "this demonstration takes self-attention (as many queries as keys)"
        )
    scores = _scaled_scores(k, q, scale)  # (n, n) = (Q Kᵀ)ᵀ / sqrt(d_k)
    weights = softmax(scores)  # (n, n), rows sum to 1: it passes the row-sum check
    return scores, weights, weights @ v  # output (n, d_v)


@dataclass(frozen=True)
class Check:
    """One sanity check: what was checked, whether it passed, and the numbers behind the verdict."""

    name: str
    passed: bool
    detail: str


def sanity_checks(scores: np.ndarray, weights: np.ndarray, n: int, m: int) -> tuple[Check, Check]:
    """The shape and row-sum checks every attention implementation must pass (necessary, not sufficient).

    Shapes: scores, weights should be (n, m).
    """
    shape_ok = scores.shape == (n, m) and weights.shape == (n, m)
    sums = weights.sum(axis=-1)
    sums_ok = shape_ok and bool(np.all(np.abs(sums - 1.0) <= ROW_SUM_TOLERANCE))
    worst = float(np.max(np.abs(sums - 1.0)))
    return (
        Check(
            tr("scores are (n, n)"),
            shape_ok,
            tr("shape {shape}, expected ({n}, {m})", shape=str(scores.shape), n=n, m=m),
        ),
        Check(
            tr("every row of weights sums to 1"),
            sums_ok,
            tr("largest |row sum − 1| = {worst}", worst=num(worst, ".1e")),
        ),
    )


def transpose_hand_example() -> tuple[Example, tuple[int, ...]]:
    """A 3×3 example whose answer is known on paper, and that answer (the key each query picks).

    Query i is the unit vector e_i ("I look for feature i"); key j carries feature j+1 (mod 3) with
    length 3. So query i finds its feature in key i-1 (mod 3): the predicted argmaxes are (2, 0, 1).
    K is not symmetric, so Q K (whose row i is key i, because Q = I) picks (1, 2, 0) instead.
    """
    q = np.eye(3)  # (3, 3): query i looks for feature i
    k = 3.0 * np.roll(np.eye(3), 1, axis=1)  # (3, 3): key j has feature (j + 1) mod 3
    v = np.eye(3)  # one-hot values: the output row is the weight row
    example = Example(
        "Transpose hand example",
        "Query i looks for feature i; key j carries feature j+1 (mod 3).",
        TokenSequence(("a", "b", "c"), q, k, v),
    )
    return example, (2, 0, 1)


def prediction_check(weights: np.ndarray, expected_argmax) -> Check:
    """Does each query's largest weight sit on the key predicted by hand? Shapes: weights (n, m)."""
    got = tuple(int(j) for j in np.argmax(weights, axis=-1))
    expected = tuple(int(j) for j in expected_argmax)
    return Check(
        tr("hand example comes out as predicted"),
        got == expected,
        tr("queries pick keys {got}, predicted {expected}", got=str(got), expected=str(expected)),
    )


SAME_WEIGHTS_TOLERANCE = 1e-12  # wrong weights this close to the right ones: the example cannot tell them apart


@dataclass(frozen=True)
class TransposeComparison:
    """The right scores Q Kᵀ beside the wrong Q K and K Qᵀ on one sequence, each judged by the same checks:
    the shape, the row sums (on the sequence) and the predicted answer of the 3×3 hand example.

    Shapes: weights (n, n). Q K runs only when n = d_k: otherwise `wrong_weights` is None, `wrong_error`
    says why, and its first two checks are None (the third runs on the hand example, where it does run).
    """

    right: AttentionSteps
    wrong_weights: np.ndarray | None
    wrong_error: str | None
    kq_weights: np.ndarray
    right_checks: tuple[Check, ...]
    wrong_checks: tuple[Check | None, ...]
    kq_checks: tuple[Check, ...]
    wrong_looks_right: bool  # Q K gives the right weights here: this sequence cannot catch it
    kq_looks_right: bool  # the same for K Qᵀ


def compare_transposes(q, k, v) -> TransposeComparison:
    """Run the right product and both wrong transposes on q, k, v and judge each (see TransposeComparison).

    Shapes: q (n, d_k), k (n, d_k), v (n, d_v). Raises ValueError for q, k, v attention itself refuses.
    """
    right = attention_steps(q, k, v)
    n = right.weights.shape[0]
    kq_scores, kq_weights, _ = key_query_attention(q, k, v)
    try:
        wrong_scores, wrong_weights, _ = wrong_transpose_attention(q, k, v)
        wrong_error = None
    except ValueError as err:
        wrong_scores = wrong_weights = None
        wrong_error = str(err)
    hand, answer = transpose_hand_example()
    hq, hk, hv = hand.seq.q, hand.seq.k, hand.seq.v
    hand_checks = [
        prediction_check(weights, answer)
        for weights in (
            attention_steps(hq, hk, hv).weights,
            wrong_transpose_attention(hq, hk, hv)[1],
            key_query_attention(hq, hk, hv)[1],
        )
    ]

    def looks_right(weights) -> bool:
        return weights is not None and bool(row_max_abs_diff(right.weights, weights).max() < SAME_WEIGHTS_TOLERANCE)

    wrong_sanity = (None, None) if wrong_weights is None else sanity_checks(wrong_scores, wrong_weights, n, n)
    return TransposeComparison(
        right=right,
        wrong_weights=wrong_weights,
        wrong_error=wrong_error,
        kq_weights=kq_weights,
        right_checks=(*sanity_checks(right.scores, right.weights, n, n), hand_checks[0]),
        wrong_checks=(*wrong_sanity, hand_checks[1]),
        kq_checks=(*sanity_checks(kq_scores, kq_weights, n, n), hand_checks[2]),
        wrong_looks_right=looks_right(wrong_weights),
        kq_looks_right=looks_right(kq_weights),
    )


def row_max_abs_diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per position, the largest |a - b| over its row. Shapes: a, b (n, d) -> (n,)."""
    if a.shape != b.shape:
        raise ValueError(f"cannot compare a {a.shape} result with a {b.shape} one")
    return np.abs(a - b).max(axis=-1)


@dataclass(frozen=True)
class InvarianceResult:
    """Causal outputs before and after a change, and whether positions up to t stayed put.

    Shapes: before, after (n, d_v); diff (n,).
    """

    t: int
    before: np.ndarray
    after: np.ndarray
    diff: np.ndarray  # per position, max |after - before|
    first_changed_input: int | None  # the earliest position whose q, k or v differ (None: no change)

    @property
    def passed(self) -> bool:
        """True iff every output at positions 0..t is unchanged, bit for bit (== 0, no tolerance)."""
        return bool(np.all(self.diff[: self.t + 1] == 0.0))

    @property
    def later_changed(self) -> bool:
        """True if some output after t moved (the change did reach the later positions)."""
        return bool(np.any(self.diff[self.t + 1 :] != 0.0))

    @property
    def changed_up_to_t(self) -> bool:
        """True if an input at a position 0..t itself changed: then its output may move and the check
        says nothing about the mask."""
        return self.first_changed_input is not None and self.first_changed_input <= self.t


def causal_attention(q, k, v, *, scale: bool = True) -> np.ndarray:
    """The correct causal attention's output: the reference the pages display, with causal=True."""
    return scaled_dot_product_attention(q, k, v, causal=True, scale=scale)[0]


def after_softmax_attention(q, k, v, *, scale: bool = True) -> np.ndarray:
    """The buggy causal attention's output (masked after the softmax)."""
    return mask_after_softmax(q, k, v, scale=scale).output


def invariance_check(
    before: tuple, after: tuple, t: int, *, scale: bool = True, attend=causal_attention
) -> InvarianceResult:
    """Run causal attention on (q, k, v) before and after a change and compare outputs per position.

    Shapes: before and after are (q (n, d_k), k (n, d_k), v (n, d_v)) of the same shapes; 0 <= t < n.
    With a correct mask, changing only positions > t leaves outputs 0..t exactly as they were.
    `attend(q, k, v, scale=...)` is the implementation on trial (the correct one by default).
    """
    old, new = check_qkv(*before), check_qkv(*after)
    for name, a, b in zip("qkv", old, new):
        if a.shape != b.shape:
            raise ValueError(f"{name} was {a.shape} before and is {b.shape} after: compare sequences of one size")
    t = check_position(t, old[0].shape[0])
    out_old = attend(*old, scale=scale)
    out_new = attend(*new, scale=scale)
    changed = np.flatnonzero(np.any([np.any(a != b, axis=-1) for a, b in zip(old, new)], axis=0))
    first = int(changed[0]) if changed.size else None
    return InvarianceResult(t, out_old, out_new, row_max_abs_diff(out_old, out_new), first)


def randomise_after(q, k, v, t: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Copies of q, k, v with every row after position t replaced by new random values (2 decimals).

    Shapes: q (n, d_k), k (n, d_k), v (n, d_v) -> the same shapes; rows 0..t are untouched.
    """
    q, k, v = check_qkv(q, k, v)
    t = check_position(t, q.shape[0])
    rng = np.random.default_rng(seed)
    out = []
    for a in (q, k, v):
        a = a.copy()
        a[t + 1 :] = np.round(rng.standard_normal(a[t + 1 :].shape) * 1.5, 2)  # (n - t - 1, d)
        out.append(a)
    return tuple(out)


def randomise_at(q, k, v, p: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Copies of q, k, v with the row of position p alone replaced by new random values (2 decimals).

    Shapes: q (n, d_k), k (n, d_k), v (n, d_v) -> the same shapes; every other row is untouched.
    """
    q, k, v = check_qkv(q, k, v)
    p = check_position(p, q.shape[0])
    rng = np.random.default_rng(seed)
    out = []
    for a in (q, k, v):
        a = a.copy()
        a[p] = np.round(rng.standard_normal(a.shape[1]) * 1.5, 2)  # (d,)
        out.append(a)
    return tuple(out)


def small_leak_example() -> Example:
    """A causal sequence whose after-softmax leak is only a few percent, so the bug looks like noise.

    q = 4·I, k = 3·I (d_k = 6): each query finds only its own key (score 12, scaled 12/√6 ≈ 4.9), every
    other key scores 0. Row i leaks (5 - i) / (e^4.9 + 5): 3.2 % at the first token, 0.7 % at the fifth, so the buggy
    outputs sit within a few hundredths of the correct ones; yet they still depend on the future tokens,
    and the invariance check catches that exactly.
    """
    tokens = ("The", "cat", "sat", "on", "the", "mat")
    q, k = 4.0 * np.eye(len(tokens)), 3.0 * np.eye(len(tokens))  # (6, 6) each
    v = np.round(np.random.default_rng(3).standard_normal((len(tokens), 2)), 2)  # (6, 2)
    return Example("Small leak", "A leak of a few percent: the bug looks like noise.", TokenSequence(tokens, q, k, v))


@dataclass(frozen=True)
class SmallLeak:
    """The small-leak example run both ways: how little the bug changes, and the check that still catches it.

    `checks`: the invariance check of the correct ("correct") and the buggy ("bug") implementation when the
    tokens after `t` are randomised.
    """

    t: int
    largest_leak: float  # the largest weight the bug lost in any row
    largest_drift: float  # the largest |buggy output − correct output|
    checks: dict[str, InvarianceResult]


def small_leak(t: int = 2, seed: int = 0) -> SmallLeak:
    """Run small_leak_example() correctly and with the mask after the softmax, and check both at t."""
    seq = small_leak_example().seq
    q, k, v = seq.q, seq.k, seq.v
    bug = mask_after_softmax(q, k, v)
    drift = float(row_max_abs_diff(bug.output, causal_attention(q, k, v)).max())
    later = randomise_after(q, k, v, t, seed=seed)
    checks = {
        name: invariance_check((q, k, v), later, t, attend=attend)
        for name, attend in (("correct", causal_attention), ("bug", after_softmax_attention))
    }
    return SmallLeak(t, float(bug.leak.max()), drift, checks)


def leak_example() -> Example:
    """The causal pages' starting sequence: 6 random tokens, d_k = 3, d_v = 2 (seed 7)."""
    example = random_example(6, 3, 2, seed=7)
    return Example(
        "Causal example",
        "Six random tokens to mask.",
        example.seq.with_tokens(("The", "cat", "sat", "on", "the", "mat")),
    )


@dataclass(frozen=True)
class PatternTwin:
    """Two different inputs with the same attention pattern and different outputs.

    Shapes: inputs (q, k, v) each (n, d_k), (n, d_k), (n, d_v); weights (n, n); outputs (n, d_v).
    """

    a: tuple[np.ndarray, np.ndarray, np.ndarray]
    b: tuple[np.ndarray, np.ndarray, np.ndarray]
    rotation: np.ndarray  # (d_k, d_k) a rotation (orthogonal, det +1 for d_k > 1): q_b = q_a R, k_b = k_a R
    weights_a: np.ndarray
    weights_b: np.ndarray
    output_a: np.ndarray
    output_b: np.ndarray


def same_pattern_different_output(q, k, v, seed: int = 0, *, scale: bool = True) -> PatternTwin:
    """Input B = (Q R, K R, new V) for a random rotation R (det +1; ±1 when d_k = 1): new vectors, the same
    weights.

    (Q R)(K R)ᵀ = Q R Rᵀ Kᵀ = Q Kᵀ, so every score, and so every weight, is the same (up to rounding);
    B's values are new random numbers, so the outputs differ. Shapes: as PatternTwin.
    """
    q, k, v = check_qkv(q, k, v)
    _check_2d(q, k, v)
    rng = np.random.default_rng(seed)
    d_k = q.shape[1]
    r, upper = np.linalg.qr(rng.standard_normal((d_k, d_k)))  # (d_k, d_k), r orthogonal
    r = r * np.sign(np.diag(upper))  # a uniformly random orthogonal matrix: a rotation or a reflection
    if d_k > 1 and np.linalg.det(r) < 0:
        r[:, 0] = -r[:, 0]  # flip one axis: a reflection becomes a rotation (det +1), still uniformly random
    # (with d_k = 1 the only rotation is the identity: R = ±1 stays, and the page says "orthogonal")
    v_b = np.round(rng.standard_normal(v.shape) * 2.0, 2)  # (n, d_v): what B's tokens carry
    b = (q @ r, k @ r, v_b)  # (n, d_k) @ (d_k, d_k) -> (n, d_k) each
    out_a, w_a = scaled_dot_product_attention(q, k, v, scale=scale)
    out_b, w_b = scaled_dot_product_attention(*b, scale=scale)
    return PatternTwin((q, k, v), b, r, w_a, w_b, out_a, out_b)


def check_position(t, n: int) -> int:
    """t as a position index 0..n-1, or ValueError."""
    n = check_positive_int(n, "n")
    if isinstance(t, bool) or not isinstance(t, (int, np.integer)) or not 0 <= t < n:
        raise ValueError(f"t must be a position from 0 to {n - 1}, got {t!r}")
    return int(t)
