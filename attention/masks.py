"""Attention masks. Convention everywhere: True = this query may attend to this key."""

from __future__ import annotations

import numpy as np

from .checks import check_positive_int
from .limits import check_positions


def causal_mask(n: int, m: int | None = None) -> np.ndarray:
    """Bool (n, m) mask, True where query i may attend to key j, that is j <= i.

    Shapes: -> (n, m), with m = n by default. Position i sees itself and everything before it,
    never the future: row i is True in columns 0..i.
    """
    n = check_positive_int(n, "n")
    m = n if m is None else check_positive_int(m, "m")
    return np.tri(n, m, dtype=bool)  # (n, m), ones on and below the diagonal


def sliding_window_mask(n: int, window: int) -> np.ndarray:
    """Bool (n, n) causal mask of width `window`: query i may attend to key j when i - window < j <= i.

    Shapes: -> (n, n). Each query sees itself and the window - 1 keys before it (as in local-attention
    models); window >= n is the plain causal mask. Information still travels further, one window per
    layer: after L layers, position i has heard from positions down to i - L·(window - 1).
    """
    n = check_positive_int(n, "n")
    check_positions(n, "n")
    window = check_positive_int(window, "window")
    i, j = np.indices((n, n))  # (n, n) each
    return (j <= i) & (j > i - window)  # (n, n)


def sequence_mask(lengths, n: int) -> np.ndarray:
    """Bool (batch, n): True at the real tokens of each sequence in a batch padded to length n.

    Shapes: lengths (batch,) whole numbers in 1..n -> (batch, n); row b is True in columns 0..lengths[b]-1.
    Raises `ValueError` naming a length that is not a whole number or lies outside 1..n.
    """
    n = check_positive_int(n, "n")
    check_positions(n, "n")
    lengths = _check_lengths(lengths, n)
    return np.arange(n) < lengths[:, None]  # (batch, n)


def padding_mask(lengths, n: int) -> np.ndarray:
    """Bool (batch, n, n) key mask for a batch padded to length n: True where key j is a real token.

    Shapes: lengths (batch,) whole numbers in 1..n -> (batch, n, n), mask[b, i, j] = j < lengths[b].
    Only keys are masked, so padded keys get weight exactly 0 and every query row, a padded one too,
    still has its sequence's real keys (never an empty row, never NaN). A padded *query* row is still
    computed and means nothing: `attention.dot_product.padded_attention` reports it as unused.
    """
    keys = sequence_mask(lengths, n)  # (batch, n)
    return np.broadcast_to(keys[:, None, :], (keys.shape[0], n, n)).copy()  # (batch, n, n): the same row per query


def _check_lengths(lengths, n: int) -> np.ndarray:
    a = np.asarray(lengths)
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"lengths has shape {a.shape}; expected one length per sequence, (batch,) with batch >= 1")
    if a.dtype == np.bool_ or not (np.issubdtype(a.dtype, np.integer) or np.issubdtype(a.dtype, np.floating)):
        raise ValueError(f"lengths has dtype {a.dtype}; expected whole numbers")
    whole = np.isfinite(a) & (a == np.round(np.where(np.isfinite(a), a, 0)))
    if not whole.all():
        raise ValueError(f"lengths contains {a[~whole][0]}; every length must be a whole number")
    outside = (a < 1) | (a > n)
    if outside.any():
        b = int(np.argmax(outside))
        raise ValueError(f"lengths[{b}]={a[b]:g} is outside 1..{n}: each sequence needs 1 to n={n} real tokens")
    return a.astype(np.int64)
