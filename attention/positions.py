"""Where is position? Four ways to tell attention the order of its tokens.

Attention by itself has no idea of order: shuffle the tokens and the outputs are shuffled the same
way, nothing else changes. A model must add position information somewhere:

    learned absolute:  a table E_pos (max_positions, d_model) learned in training, added to the embeddings
                       (all-MiniLM-L6-v2 has one: attention.pretrained, `position_embeddings`)
    sinusoidal:        PE[p, 2i] = sin(p θ_i), PE[p, 2i+1] = cos(p θ_i), added to the embeddings (Vaswani et al. 2017)
    RoPE:              rotate each pair (x[2i], x[2i+1]) of q and k at position p by the angle p θ_i
                       (Su et al. 2021, RoFormer): q_m · k_n then depends on m - n only
    ALiBi:             add -m_h (i - j) to head h's scores, m_h = 2^(-8h/H) for H a power of two
                       (Press et al. 2022; other H: `alibi_slopes`)

with θ_i = base^(-2i/d), base = 10000. Pairs are interleaved, (x[0], x[1]), (x[2], x[3]), ...
"""

from __future__ import annotations

import math

import numpy as np

from .checks import as_real_array, check_ndim, check_not_empty, check_positive_int
from .limits import check_dim, check_positions

SINUSOIDAL_LATEX = (
    r"PE_{p,\,2i} = \sin\!\left(\frac{p}{\mathrm{base}^{2i/d}}\right),\qquad "
    r"PE_{p,\,2i+1} = \cos\!\left(\frac{p}{\mathrm{base}^{2i/d}}\right),\qquad \mathrm{base} = 10000"
)
ROPE_LATEX = (
    r"\begin{pmatrix} x'_{2i} \\ x'_{2i+1} \end{pmatrix} = "
    r"\begin{pmatrix} \cos p\theta_i & -\sin p\theta_i \\ \sin p\theta_i & \cos p\theta_i \end{pmatrix}"
    r"\begin{pmatrix} x_{2i} \\ x_{2i+1} \end{pmatrix},\qquad \theta_i = \mathrm{base}^{-2i/d}"
)
ROPE_OFFSET_LATEX = (
    r"\langle R_m q,\ R_n k \rangle = \langle q,\ R_m^\top R_n k \rangle = \langle q,\ R_{n-m}\, k \rangle"
)
ALIBI_LATEX = (
    r"\mathrm{softmax}\!\left(\frac{q_i K^\top}{\sqrt{d_k}} - m_h\,(i - j)\right),\qquad "
    r"m_h = 2^{-8h/H},\ h = 1, \dots, H\quad (H \text{ a power of two})"
)

MAX_ABS_POSITION = 2**31 - 1  # beyond this, float64 keeps too few digits of the angle p·θ_0
MAX_ALIBI_HEADS = 1024


def frequencies(d: int, base: float = 10000.0) -> np.ndarray:
    """θ_i = base^(-2i/d) for i = 0 .. d/2 - 1: one angular frequency per pair of dimensions.

    Shapes: -> (d // 2,), from 1 down towards 1/base. Arguments already checked.
    """
    return base ** (-np.arange(0, d, 2, dtype=np.float64) / d)  # (d/2,)


def sinusoidal_encoding(n: int, d: int, base: float = 10000.0) -> np.ndarray:
    """The sinusoidal position table of Vaswani et al.: row p is added to the embedding at position p.

    Shapes: -> (n, d) float64, d even: PE[p, 2i] = sin(p θ_i), PE[p, 2i+1] = cos(p θ_i).
    Raises `ValueError` for n < 1, an odd or non-positive d, or a base that is not a finite number > 1.
    """
    n = check_positive_int(n, "n")
    check_positions(n, "n")
    d = _check_even(d, "d")
    base = _check_base(base)
    angles = np.arange(n, dtype=np.float64)[:, None] * frequencies(d, base)  # (n, d/2)
    pe = np.empty((n, d))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles)
    return pe


def rope(x, positions=None, base: float = 10000.0) -> np.ndarray:
    """Rotary position embedding: rotate each pair (x[..., 2i], x[..., 2i+1]) at position p by p θ_i.

    Shapes: x (..., n, d) with d even; positions (n,), or any shape broadcastable to x.shape[:-1],
    whole numbers, 0..n-1 by default -> x's shape and dtype. Rotations keep every pair's length, so
    norms are preserved, and rope(q, m) · rope(k, n) depends on m - n only.
    Raises `ValueError` for an odd d, non-integer positions or positions of the wrong shape.
    """
    x = as_real_array(x, "x")
    check_ndim(x, "x", 2, "(..., n, d): positions, then dimensions")
    check_not_empty(x, "x")
    d = _check_even(x.shape[-1], "x's last axis d")
    base = _check_base(base)
    positions = _check_positions(positions, x.shape[:-1])
    angles = positions[..., None] * frequencies(d, base)  # (..., n, d/2)
    cos, sin = np.cos(angles).astype(x.dtype), np.sin(angles).astype(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]  # (..., n, d/2): the first and second member of each pair
    out = np.empty_like(x)  # positions broadcast to x.shape[:-1], so the result has x's shape
    out[..., 0::2] = even * cos - odd * sin  # (..., n, d/2)
    out[..., 1::2] = even * sin + odd * cos  # (..., n, d/2)
    return out


def alibi_slopes(n_heads: int) -> np.ndarray:
    """ALiBi's slope per head, as Press et al. give them.

    For H a power of two, the paper's: m_h = 2^(-8h/H), h = 1..H (H = 8: 1/2, 1/4, ..., 1/256). Otherwise
    (the paper trains powers of two only) the workaround in the authors' code, get_slopes: the slopes of the
    nearest smaller power of two P, then every other slope of 2P, until there are H.
    Shapes: -> (n_heads,) float64, in the paper's order (decreasing when H is a power of two).
    Raises `ValueError` unless 1 <= n_heads <= 1024.
    """
    n_heads = check_positive_int(n_heads, "n_heads")
    if n_heads > MAX_ALIBI_HEADS:
        raise ValueError(f"n_heads={n_heads}; at most {MAX_ALIBI_HEADS} heads are allowed")
    return np.array(_slopes(n_heads))


def _slopes(n_heads: int) -> list[float]:
    power = 2 ** math.floor(math.log2(n_heads))  # the largest power of two <= n_heads
    slopes = [2.0 ** (-8.0 * h / power) for h in range(1, power + 1)]
    if power == n_heads:
        return slopes
    return slopes + _slopes(2 * power)[0::2][: n_heads - power]  # the in-between slopes of twice as many heads


def alibi_bias(n: int, n_heads: int) -> np.ndarray:
    """The bias ALiBi adds to each head's scores: bias[h, i, j] = -slopes[h] · (i - j) for j <= i.

    A key d positions back costs head h a score of m_h · d, so its weight shrinks by e^(-m_h d):
    each head has its own recency window, about 1/m_h positions. Entries above the diagonal (the future)
    are 0: ALiBi is made for causal models, whose causal mask hides them.
    Shapes: -> (n_heads, n, n) float64, to add to scores of shape (..., n_heads, n, n).
    """
    n = check_positive_int(n, "n")
    check_positions(n, "n")
    slopes = alibi_slopes(n_heads)  # (H,)
    i, j = np.indices((n, n))  # (n, n) each
    distance = np.maximum(i - j, 0)  # (n, n): how far back key j lies; 0 on and above the diagonal
    return 0.0 - slopes[:, None, None] * distance  # (H, n, n); 0.0 - x, so that no entry is -0.0


# ---------------------------------------------------------------- checks at the door


def _check_even(d, name: str) -> int:
    d = check_positive_int(d, name)
    if d % 2:
        raise ValueError(f"{name}={d} is odd; position encodings work on pairs of dimensions, so it must be even")
    check_dim(d, name)
    return d


def _check_base(base) -> float:
    if isinstance(base, (bool, np.bool_)) or not isinstance(base, (int, float, np.integer, np.floating)):
        raise ValueError(f"base must be a number, got {base!r}")
    if not (math.isfinite(base) and base > 1):
        raise ValueError(f"base={base!r}; expected a finite number greater than 1 (the papers use 10000)")
    return float(base)


def _check_positions(positions, shape: tuple[int, ...]) -> np.ndarray:
    """Positions as float64 of a shape broadcastable to `shape` (the default 0..n-1 if None)."""
    n = shape[-1]
    if positions is None:
        return np.arange(n, dtype=np.float64)
    p = np.asarray(positions)
    if p.dtype == np.bool_ or not (np.issubdtype(p.dtype, np.integer) or np.issubdtype(p.dtype, np.floating)):
        raise ValueError(f"positions has dtype {p.dtype}; expected whole numbers")
    if np.issubdtype(p.dtype, np.floating):
        whole = np.isfinite(p) & (p == np.round(np.where(np.isfinite(p), p, 0.0)))
        if not whole.all():
            raise ValueError(f"positions contains {p[~whole].flat[0]}; positions must be whole numbers")
    try:
        fits = p.ndim >= 1 and p.shape[-1] == n and np.broadcast_shapes(p.shape, shape) == tuple(shape)
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"positions has shape {p.shape}; expected ({n},) or a shape broadcastable to {tuple(shape)}")
    if p.size and np.abs(p).max() > MAX_ABS_POSITION:
        raise ValueError(f"positions reach {np.abs(p).max():g}; at most {MAX_ABS_POSITION} in size are allowed")
    return p.astype(np.float64)
