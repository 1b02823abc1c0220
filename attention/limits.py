"""Size limits of the core's entry points: one request must not starve everyone else on a server.

Generous for teaching and benchmarking (8 heads × 512 × 512 is 2M scores), far below what would
take a shared classroom server down. The pages' own controls stay much smaller still.
"""

from __future__ import annotations

import math

MAX_POSITIONS = 4096  # sequence length n (and m)
MAX_DIM = 8192  # d_k, d_v, d_model, d_ff
MAX_SCORES = 2**25  # entries of the whole (..., n, m) score tensor: 128 MiB in float32


def check_positions(n: int, name: str) -> None:
    """Raise `ValueError` if a sequence of length `n` is longer than MAX_POSITIONS."""
    if n > MAX_POSITIONS:
        raise ValueError(f"{name} has {n} positions; at most {MAX_POSITIONS} are allowed (server limit)")


def check_dim(d: int, name: str) -> None:
    """Raise `ValueError` if a vector width `d` is larger than MAX_DIM."""
    if d > MAX_DIM:
        raise ValueError(f"{name} is {d} wide; at most {MAX_DIM} dimensions are allowed (server limit)")


def check_scores(shape: tuple[int, ...]) -> None:
    """Raise `ValueError` if a score tensor of `shape` would have more than MAX_SCORES entries."""
    size = math.prod(shape)
    if size > MAX_SCORES:
        raise ValueError(
            f"attention scores of shape {tuple(shape)} would have {size:,} entries; at most "
            f"{MAX_SCORES:,} are allowed (server limit: shorten the sequence or use fewer heads)"
        )
