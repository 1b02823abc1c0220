"""Attention masks. Convention everywhere: True = this query may attend to this key."""

from __future__ import annotations

import numpy as np

from .checks import check_positive_int


def causal_mask(n: int, m: int | None = None) -> np.ndarray:
    """Bool (n, m) mask, True where query i may attend to key j, that is j <= i.

    Shapes: -> (n, m), with m = n by default. Position i sees itself and everything before it,
    never the future: row i is True in columns 0..i.
    """
    n = check_positive_int(n, "n")
    m = n if m is None else check_positive_int(m, "m")
    return np.tri(n, m, dtype=bool)  # (n, m), ones on and below the diagonal
