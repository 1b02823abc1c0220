"""Softmax along an axis, numerically stable.

    softmax(x)_i = exp(x_i - max_j x_j) / sum_k exp(x_k - max_j x_j)

Subtracting the row maximum changes nothing mathematically (it cancels between numerator and
denominator) but keeps every exponent <= 0, so exp never overflows, even for logits of 1e4.
"""

from __future__ import annotations

import numpy as np

from .checks import as_real_array, check_not_empty

SOFTMAX_LATEX = (  # two lines: one is wider than the Playground's column of controls (300 px)
    r"\begin{aligned} \mathrm{softmax}(x)_i &= \frac{e^{x_i}}{\sum_k e^{x_k}} \\"
    r" &= \frac{e^{x_i - \max_j x_j}}{\sum_k e^{x_k - \max_j x_j}} \end{aligned}"
)


def softmax(x, axis: int = -1) -> np.ndarray:
    """Softmax of `x` along `axis`; -inf entries get weight exactly 0.

    Shapes: x (...) -> same shape; every slice along `axis` sums to 1.
    Raises `ValueError` for NaN, +inf, an empty axis, or a slice that is entirely -inf
    (a fully masked row has nothing to attend to).
    """
    x = as_real_array(x, "x", allow_neg_inf=True)
    if x.ndim == 0:
        raise ValueError("x is a scalar; softmax needs at least one axis")
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis={axis!r} does not exist for x of shape {x.shape}")
    check_not_empty(x, "x")
    return softmax_inplace(x.copy(), axis=int(axis))


def softmax_inplace(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Softmax of a float array `x` along `axis`, overwriting `x` (no validation of the input).

    The core's attention uses this on its own freshly computed scores: three passes over the
    scores (max, exp, normalise) and no temporary array of their size.
    """
    row_max = x.max(axis=axis, keepdims=True)
    if not np.isfinite(row_max).all():
        _explain_bad_rows(row_max, axis)
    x -= row_max
    np.exp(x, out=x)
    x *= np.reciprocal(x.sum(axis=axis, keepdims=True))
    return x


def _explain_bad_rows(row_max: np.ndarray, axis: int) -> None:
    """Raise the `ValueError` that says why some row's maximum is not finite."""
    where = np.argwhere(~np.isfinite(row_max))[0]
    value = row_max[tuple(where)]
    row = tuple(int(i) for i in np.delete(where, axis))  # drop the kept axis of length 1
    if np.isneginf(value):
        raise ValueError(
            f"the slice at index {row} along axis {axis} is entirely -inf: every position is masked, "
            "so there is nothing to attend to"
        )
    raise ValueError(f"the slice at index {row} along axis {axis} has maximum {value}: the scores overflowed")
