"""Why attention divides by sqrt(d_k): measure what happens to random scores without it.

Draw a query q and n keys k_j with independent N(0, 1) components. Each score q·k_j is a sum of
d_k independent products q_i k_i, and since q_i and k_i are independent with mean 0 and variance 1,
each product has mean 0 and variance E[q_i²] E[k_i²] = 1 (the mean zero matters: in general
Var(q_i k_i) = E[q_i²] E[k_i²] - E[q_i]² E[k_i]²). So

    Var(q·k) = d_k.

Unscaled, the scores spread out as d_k grows, the softmax puts almost all weight on one key, and
its Jacobian diag(p) - p pᵀ (what the gradient is multiplied by on its way back) goes to 0.
Divided by sqrt(d_k), the scores have variance 1 at every d_k and none of that happens.

The statistics are measured, not derived: every score is a real dot product of random vectors.
For speed the components are float32, drawn in cache-sized blocks by Box-Muller from
`np.random.default_rng` uniforms on a few threads, and each sample is one 4096-dimensional draw
read at every d_k of the sweep (the first d_k components of a random vector are a random d_k-vector),
so a whole sweep costs one draw at the largest d_k.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from scipy.special import entr

from attention.checks import check_positive_int
from attention.stable_softmax import softmax
from locales import num, tr

MAX_D_K = 4096
DEFAULT_KEYS = 8  # a short sentence; the whole sweep at 1000 samples then redraws in well under 0.5 s here
MAX_KEYS = 256
MAX_SAMPLES = 5000
MAX_DRAWS = 5000 * 16  # n_samples * n_keys: the slowest sweep (to d_k 4096) then takes about 2.1 s of CPU, about
# as long as one student's click may hold the class's worker (issue #17)
SAMPLE_COUNTS = (100, 200, 500, 1000, 2000, 5000)  # the samples per d_k a page offers


def sample_counts_within(n_keys: int) -> tuple[int, ...]:
    """The SAMPLE_COUNTS that keep n_keys × samples within MAX_DRAWS (the smallest if none does), so every
    count a page offers runs."""
    return tuple(s for s in SAMPLE_COUNTS if s * n_keys <= MAX_DRAWS) or SAMPLE_COUNTS[:1]


SWEEP_D_KS = tuple(2**i for i in range(13))  # 1, 2, 4, ..., 4096: the log-spaced sweep the curves use

VARIANCE_LATEX = (
    r"\operatorname{Var}(q \cdot k) = \sum_{i=1}^{d_k} \operatorname{Var}(q_i k_i)"
    r" = \sum_{i=1}^{d_k} \left(\mathbb{E}[q_i^2]\,\mathbb{E}[k_i^2] - \mathbb{E}[q_i]^2\,\mathbb{E}[k_i]^2\right)"
    r" = \sum_{i=1}^{d_k} (1 \cdot 1 - 0) = d_k"
)
SCALED_LATEX = r"\operatorname{Var}\!\left(\frac{q \cdot k}{\sqrt{d_k}}\right) = \frac{d_k}{d_k} = 1"
ENTROPY_LATEX = r"H(p) = -\sum_j p_j \log p_j \quad (\text{from } 0 \text{ for one-hot to } \log n \text{ for uniform})"
JACOBIAN_LATEX = r"\frac{\partial p}{\partial s} = \operatorname{diag}(p) - p\,p^\top"

_SAMPLES_PER_TASK = 40  # fixed, so the numbers do not depend on how many threads ran them
_BLOCK_FLOATS = 1 << 18  # about 1 MB of float32 per generated block: stays in cache
_TWO_PI = np.float32(2.0 * math.pi)


@dataclass(frozen=True)
class ScalingStats:
    """What random q and K do to the softmax at each d_k, measured over many samples.

    Shapes: d_k and every per-d_k statistic (n_d,); example_* (n_d, n_keys): sample 0's raw scores
    q·k_j and its weights unscaled and scaled. Means are over the n_samples draws; `variance` is over
    all n_samples * n_keys scores. Jacobian norms are Frobenius norms of diag(p) - p pᵀ.
    """

    d_k: np.ndarray
    n_keys: int
    n_samples: int
    seed: int
    variance: np.ndarray
    max_weight_unscaled: np.ndarray
    max_weight_scaled: np.ndarray
    entropy_unscaled: np.ndarray
    entropy_scaled: np.ndarray
    jacobian_norm_unscaled: np.ndarray
    jacobian_norm_scaled: np.ndarray
    jacobian_median_unscaled: np.ndarray
    jacobian_median_scaled: np.ndarray
    example_scores: np.ndarray
    example_unscaled: np.ndarray
    example_scaled: np.ndarray

    @property
    def predicted_variance(self) -> np.ndarray:
        """The theory: Var(q·k) = d_k. Shapes: (n_d,)."""
        return self.d_k.astype(np.float64)

    @property
    def max_entropy(self) -> float:
        """log(n_keys), the entropy of uniform weights (the most spread out they can be)."""
        return math.log(self.n_keys)

    @property
    def settled_max_weight_scaled(self) -> float:
        """The median scaled largest weight from d_k = 64 on (the last d_k's if 64 was not measured): by then
        every query's length has settled near √d_k, so the scaled value no longer depends on d_k."""
        scaled = self.max_weight_scaled
        return float(np.median(scaled[self.index(64) :] if 64 in self.d_k else scaled[-1:]))

    def index(self, d_k: int) -> int:
        """The row of `d_k` in every per-d_k array; `ValueError` if it was not measured."""
        hits = np.flatnonzero(self.d_k == d_k)
        if hits.size == 0:
            raise ValueError(f"d_k={d_k} was not measured; measured: {self.d_k.tolist()}")
        return int(hits[0])


def check_sweep(d_ks, n_keys, n_samples, seed) -> tuple[tuple[int, ...], int, int, int]:
    """Validate the sweep settings; return (sorted unique d_ks, n_keys, n_samples, seed).

    Raises `ValueError` naming the setting and its allowed range.
    """
    if isinstance(d_ks, (str, bytes)) or not hasattr(d_ks, "__iter__"):
        raise ValueError(f"d_ks must be a list of whole numbers, got {d_ks!r}")
    d_ks = tuple(sorted({check_positive_int(d, "each d_k") for d in d_ks}))
    if not d_ks:
        raise ValueError("d_ks is empty: give at least one d_k")
    if d_ks[-1] > MAX_D_K:
        raise ValueError(f"d_k={d_ks[-1]} is too large: at most {MAX_D_K}")
    n_keys = check_positive_int(n_keys, "n_keys")
    n_samples = check_positive_int(n_samples, "n_samples")
    if n_keys > MAX_KEYS:
        raise ValueError(f"n_keys={n_keys} is too large: at most {MAX_KEYS}")
    if n_samples > MAX_SAMPLES:
        raise ValueError(f"n_samples={n_samples} is too large: at most {MAX_SAMPLES}")
    if n_samples * n_keys > MAX_DRAWS:
        raise ValueError(
            f"n_samples × n_keys = {n_samples} × {n_keys} = {n_samples * n_keys:,} is too many: "
            f"at most {MAX_DRAWS:,} (lower the samples or the keys)"
        )
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a whole number >= 0, got {seed!r}")
    return d_ks, n_keys, n_samples, int(seed)


def scaling_stats(d_ks=SWEEP_D_KS, *, n_keys: int = DEFAULT_KEYS, n_samples: int = 1000, seed: int = 0) -> ScalingStats:
    """Measure Var(q·k), max weight, entropy and softmax-Jacobian norm at each d_k, unscaled and scaled.

    Shapes: d_ks (n_d,) whole numbers in 1..4096 -> ScalingStats with per-d_k arrays (n_d,).
    Same seed, same numbers. Scaled means softmax(q·k / sqrt(d_k)); unscaled means softmax(q·k).
    """
    d_ks, n_keys, n_samples, seed = check_sweep(d_ks, n_keys, n_samples, seed)
    scores = random_dot_products(d_ks, n_keys, n_samples, seed)  # (n_d, samples, keys)
    d = np.array(d_ks)
    scaled = scores / np.sqrt(d)[:, None, None]  # (n_d, samples, keys)
    p_unscaled, p_scaled = softmax(scores), softmax(scaled)
    j_unscaled, j_scaled = softmax_jacobian_norm(p_unscaled), softmax_jacobian_norm(p_scaled)  # (n_d, samples)
    return ScalingStats(
        d_k=d,
        n_keys=n_keys,
        n_samples=n_samples,
        seed=seed,
        variance=scores.reshape(len(d), -1).var(axis=1, ddof=1),  # over samples * keys
        max_weight_unscaled=p_unscaled.max(axis=-1).mean(axis=1),
        max_weight_scaled=p_scaled.max(axis=-1).mean(axis=1),
        entropy_unscaled=entr(p_unscaled).sum(axis=-1).mean(axis=1),
        entropy_scaled=entr(p_scaled).sum(axis=-1).mean(axis=1),
        jacobian_norm_unscaled=j_unscaled.mean(axis=1),
        jacobian_norm_scaled=j_scaled.mean(axis=1),
        jacobian_median_unscaled=np.median(j_unscaled, axis=1),
        jacobian_median_scaled=np.median(j_scaled, axis=1),
        example_scores=scores[:, 0],
        example_unscaled=p_unscaled[:, 0],
        example_scaled=p_scaled[:, 0],
    )


def sweep_stats(config: tuple[int, int, int], on_step=None) -> ScalingStats:
    """`scaling_stats` over the whole sweep for config = (n_keys, n_samples, seed), in the form
    ui.background.run_niced calls (the scaling page measures its largest sweeps in a child process)."""
    n_keys, n_samples, seed = config
    return scaling_stats(SWEEP_D_KS, n_keys=n_keys, n_samples=n_samples, seed=seed)


def softmax_jacobian_norm(p: np.ndarray) -> np.ndarray:
    """Frobenius norm of J = diag(p) - p pᵀ for each row of weights, without building J.

    Shapes: p (..., m), rows sum to 1 -> (...,).
    ||J||² = Σ_i p_i² ((1 - p_i)² + Σ_{j≠i} p_j²). Near one-hot, 1 - p_max and Σ_{j≠max} p_j² are
    summed from the small weights rather than subtracted from 1, so tiny norms (1e-30) stay accurate.
    """
    p = np.asarray(p, dtype=np.float64)
    is_max = np.arange(p.shape[-1]) == p.argmax(axis=-1)[..., None]  # (..., m)
    p2 = p * p
    rest = np.where(is_max, 0.0, p).sum(axis=-1, keepdims=True)  # 1 - p_max, accurately
    rest2 = np.where(is_max, 0.0, p2).sum(axis=-1, keepdims=True)  # Σ p_j² over j ≠ max
    one_minus_p = np.where(is_max, rest, 1.0 - p)  # only p_max can be close to 1
    others2 = np.where(is_max, rest2, rest2 + p2.max(axis=-1, keepdims=True) - p2)  # Σ_{j≠i} p_j²
    return np.sqrt((p2 * (one_minus_p**2 + others2)).sum(axis=-1))


def query_length_spread(d_k: int) -> float:
    """The standard deviation of a random query's length |q| as a fraction of √d_k, for N(0, 1) components.

    |q| follows the chi distribution with d_k degrees of freedom: variance d_k - 2 (Γ((d_k+1)/2) / Γ(d_k/2))².
    About 0.60 at d_k = 1 and 1/sqrt(2 d_k) for large d_k: why the scaled weights depend on d_k only when it
    is small (a short query scores every key alike).
    """
    d_k = check_positive_int(d_k, "d_k")
    mean = math.sqrt(2) * math.exp(math.lgamma((d_k + 1) / 2) - math.lgamma(d_k / 2))
    return math.sqrt(max(d_k - mean * mean, 0.0) / d_k)


def random_dot_products(d_ks, n_keys: int, n_samples: int, seed: int) -> np.ndarray:
    """Real dot products of random q and k_j with N(0, 1) components, read at every d_k.

    Shapes: d_ks (n_d,) sorted, unique -> scores (n_d, n_samples, n_keys), float64.
    Sample s at d_k uses the first d_k components of the same draw, so the curves over d_k are
    smooth (common random numbers) while each d_k on its own is an exact sample.
    Samples are drawn in fixed groups with their own child seed, so threads do not change the result.
    """
    d_ks, n_keys, n_samples, seed = check_sweep(d_ks, n_keys, n_samples, seed)
    starts = range(0, n_samples, _SAMPLES_PER_TASK)
    seeds = np.random.SeedSequence(seed).spawn(len(starts))
    sizes = [min(_SAMPLES_PER_TASK, n_samples - s) for s in starts]
    workers = max(1, min(4, os.cpu_count() or 1, len(sizes)))
    with ThreadPoolExecutor(workers) as pool:  # numpy releases the GIL while drawing and multiplying
        parts = list(pool.map(lambda a: _dot_products_group(d_ks, n_keys, *a), zip(sizes, seeds)))
    return np.concatenate(parts, axis=1)  # (n_d, n_samples, n_keys)


def _dot_products_group(d_ks: tuple[int, ...], n_keys: int, c: int, seed: np.random.SeedSequence) -> np.ndarray:
    """Scores of `c` samples: draw the components block by block and accumulate the dot products.

    Shapes: -> (n_d, c, n_keys).
    """
    rng = np.random.default_rng(seed)
    out = np.empty((len(d_ks), c, n_keys))
    running = np.zeros((c, n_keys))  # q·k over the components drawn so far
    width = max(1, _BLOCK_FLOATS // (c * (n_keys + 1)))
    done = 0
    for i, d in enumerate(d_ks):
        while done < d:
            w = min(width, d - done)
            x = standard_normal_f32(rng, (c, n_keys + 1, w))  # row 0 is q, rows 1.. are the keys
            running += np.matmul(x[:, 1:], x[:, 0, :, None])[..., 0]  # (c, n_keys, w) @ (c, w, 1) -> (c, n_keys)
            done += w
        out[i] = running
    return out


def standard_normal_f32(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """N(0, 1) float32 samples by Box-Muller: z = sqrt(-2 ln(1 - u1)) · (cos, sin)(2π u2).

    Shapes: -> `shape`. About 3x faster here than `rng.standard_normal(dtype=np.float32)`: two cheap
    uniforms and four vectorised functions per pair. float32 uniforms cap |z| at 5.77 (a tail of 8e-9).
    """
    n = math.prod(shape)
    out = np.empty(n + n % 2, dtype=np.float32)
    rng.random(out=out, dtype=np.float32)  # uniforms in [0, 1)
    h = out.size // 2
    r, theta = out[:h], out[h:]
    np.negative(r, out=r)
    np.log1p(r, out=r)  # ln(1 - u1), finite since 1 - u1 > 0
    r *= np.float32(-2.0)
    np.sqrt(r, out=r)
    theta *= _TWO_PI
    cos = np.cos(theta)
    np.sin(theta, out=theta)
    theta *= r  # second half: r sin(θ)
    r *= cos  # first half: r cos(θ)
    return out[:n].reshape(shape)


# ---------------------------------------------------------------- what the page says of a measurement
def one_sample_text(stats: ScalingStats, shown: list[int]) -> str:
    """What the one-sample heatmap shows: each row's largest weight, unscaled and scaled."""
    rows = [stats.index(d) for d in shown]

    def largest(weights: np.ndarray) -> str:
        # Translators: the separator between the items of a list of numbers ("0.93 at d_k = 4, 0.51 at d_k = 64"); a
        # language that writes a decimal comma may prefer "; "
        separator = tr(", ")
        return separator.join(
            tr("{weight} at d_k = {d_k}", weight=num(w, ".2f"), d_k=d) for d, w in zip(shown, weights[rows].max(axis=1))
        )

    return tr(
        "**One sample at each d_k.** Each row is the same random query and keys cut to d_k dimensions. The "
        "largest weight of each row, unscaled: {unscaled}; divided by √d_k: {scaled}.",
        unscaled=largest(stats.example_unscaled),
        scaled=largest(stats.example_scaled),
    )


def variance_caption(stats: ScalingStats) -> str:
    """How close the measured variance is to the line y = d_k, in the numbers drawn."""
    ratio = stats.variance / stats.predicted_variance
    return tr(
        "The measured variance of q·k beside the line y = d_k: measured / d_k is between {low} and {high} at the "
        "{count} d_k values ({scores} scores each). Dividing the scores by √d_k divides their variance by d_k.",
        low=num(ratio.min(), ".2f"),
        high=num(ratio.max(), ".2f"),
        count=ratio.size,
        scores=num(stats.n_samples * stats.n_keys, ","),
    )


def jacobian_caption(stats: ScalingStats) -> str:
    """What the Jacobian chart shows, in the numbers it was drawn from."""
    what = tr("The norm of diag(p) − p pᵀ, which every gradient is multiplied by on its way back through the softmax.")
    if stats.n_keys == 1:
        # Translators: {previous} is the sentence "The norm of diag(p) − p pᵀ, which every gradient is multiplied by..."
        return tr(
            "{previous} With one key it is 0 at every d_k, scaled or not (drawn at the bottom of the log axis).",
            previous=what,
        )
    median, mean, scaled = stats.jacobian_median_unscaled, stats.jacobian_norm_unscaled, stats.jacobian_median_scaled
    values = dict(
        previous=what,
        median_first=num(median[0], ".2g"),
        first=stats.d_k[0],
        median_last=num(median[-1], ".2g"),
        last=stats.d_k[-1],
        mean_last=num(mean[-1], ".2g"),
        scaled_low=num(scaled.min(), ".2g"),
        scaled_high=num(scaled.max(), ".2g"),
    )
    if mean[-1] > median[-1]:
        # Translators: {previous} is the sentence "The norm of diag(p) − p pᵀ, which every gradient is multiplied by..."
        return tr(
            "{previous} Unscaled, the median over the samples (solid) goes from {median_first} at d_k = {first} to "
            "{median_last} at d_k = {last}; the mean (dotted) ends at {mean_last}, higher than the median: the rare "
            "samples whose two largest scores nearly tie still pass gradient. Scaled, the median stays between "
            "{scaled_low} and {scaled_high}.",
            **values,
        )
    # Translators: {previous} is the sentence "The norm of diag(p) − p pᵀ, which every gradient is multiplied by..."
    return tr(
        "{previous} Unscaled, the median over the samples (solid) goes from {median_first} at d_k = {first} to "
        "{median_last} at d_k = {last}; the mean (dotted) ends at {mean_last}. Scaled, the median stays between "
        "{scaled_low} and {scaled_high}.",
        **values,
    )


def max_weight_caption(stats: ScalingStats) -> str:
    """What the max-weight chart shows, in the numbers it was drawn from."""
    unscaled, scaled = stats.max_weight_unscaled, stats.max_weight_scaled
    if stats.n_keys == 1:
        return tr("With one key the largest weight is 1 at every d_k, scaled or not.")
    settled = stats.settled_max_weight_scaled
    text = tr(
        "The average largest weight over {n_keys} keys (1 would be one-hot, 1/{n_keys} = {uniform} uniform). "
        "Unscaled: {unscaled_first} at d_k = 1, {unscaled_64} at 64, {unscaled_last} at {last}. Scaled it stays "
        "between {scaled_low} and {scaled_high} at every d_k: {scaled_first} at d_k = 1 (where both are the same), "
        "then about {settled} from d_k = 64 on.",
        n_keys=stats.n_keys,
        uniform=num(1 / stats.n_keys, ".3g"),
        unscaled_first=num(unscaled[0], ".2f"),
        unscaled_64=num(unscaled[stats.index(64)], ".2f"),
        unscaled_last=num(unscaled[-1], ".2f"),
        last=stats.d_k[-1],
        scaled_low=num(scaled.min(), ".2f"),
        scaled_high=num(scaled.max(), ".2f"),
        scaled_first=num(scaled[0], ".2f"),
        settled=num(settled, ".2f"),
    )
    if round(scaled[0], 2) < round(settled, 2):  # said only when the two numbers shown say it
        # Translators: {previous} is the caption's sentences above ("The average largest weight over...")
        text = tr(
            "{previous} It is lower at small d_k because there a query's length varies a lot from one draw to the next "
            "(a short query scores every key alike): its standard deviation is {spread_1} √d_k at d_k = 1 and "
            "{spread_64} √d_k at d_k = 64.",
            previous=text,
            spread_1=num(query_length_spread(1), ".2f"),
            spread_64=num(query_length_spread(64), ".2f"),
        )
    return text
