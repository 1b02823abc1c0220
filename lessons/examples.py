"""Hand-built and random example sequences: the presets the pages start from.

Each example is a named `TokenSequence`: one short sequence for self-attention, position i with
token i, query q[i], key k[i] and value v[i].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention.checks import check_positive_int
from attention.sequence import TokenSequence, default_tokens
from locales import tr


@dataclass(frozen=True)
class Example:
    """A named example sequence, with a sentence saying what it shows (both in the language of the session that
    made it)."""

    name: str
    description: str
    seq: TokenSequence


def compass() -> Example:
    """The hand-built example: four keys pointing north, east, south and west (d_k = 2).

    Every weight can be predicted on paper: a query aligned with a key gets a large weight,
    one orthogonal to it (dot product 0) a small one, one opposite to it a tiny one.
    """
    tokens = ("north", "east", "south", "west")
    k = np.array([[0.0, 2.0], [2.0, 0.0], [0.0, -2.0], [-2.0, 0.0]])  # (4, 2): the four compass directions
    q = np.array(
        [
            [0.0, 2.0],  # north looks north: aligned with its own key
            [0.0, 2.0],  # east also looks north: aligned with north's key, orthogonal to its own
            [2.0, 0.0],  # south looks east: aligned with east's key
            [1.0, 1.0],  # west looks north-east: half-way between north and east, so both equally
        ]
    )
    v = np.eye(4)  # one-hot values: each output row *is* that query's row of weights
    return Example(
        tr("Hand-built (compass)"),
        tr("Aligned pairs get large weights, orthogonal pairs small ones."),
        TokenSequence(tokens, q, k, v),
    )


def identical_keys(n: int = 4, d_k: int = 2, d_v: int = 2, seed: int = 0) -> Example:
    """Every key the same: each query scores every key equally, so every weight is 1/n."""
    rng = np.random.default_rng(seed)
    q = np.round(rng.standard_normal((n, d_k)), 2)
    k = np.tile(np.round(rng.standard_normal(d_k), 2), (n, 1))  # (n, d_k), all rows equal
    v = np.round(rng.standard_normal((n, d_v)), 2)
    return Example(
        tr("Identical keys"),
        tr("All keys are equal, so every query spreads its weight uniformly (1/n each)."),
        TokenSequence(default_tokens(n), q, k, v),
    )


def dominant_key(n: int = 4, d_k: int = 2, d_v: int = 2, seed: int = 0, position: int | None = None) -> Example:
    """One key is long and points where every query points: everyone attends to it."""
    n = check_positive_int(n, "n")
    position = n - 1 if position is None else position
    q = np.ones((n, d_k))  # every query points along (1, 1, ..., 1)
    k = np.zeros((n, d_k))
    k[position] = 3.0  # (d_k,), long and aligned with every query
    rng = np.random.default_rng(seed)
    v = np.round(rng.standard_normal((n, d_v)), 2)
    return Example(
        tr("One dominant key"),
        tr("Key {position} is long and aligned with every query: all of them attend to it.", position=position),
        TokenSequence(default_tokens(n), q, k, v),
    )


def random_example(n: int = 4, d_k: int = 2, d_v: int = 2, seed: int = 0) -> Example:
    """Unit-variance random q, k, v (rounded to 2 decimals so they can be read and shared)."""
    rng = np.random.default_rng(seed)
    q, k = (np.round(rng.standard_normal((n, d_k)), 2) for _ in range(2))
    v = np.round(rng.standard_normal((n, d_v)), 2)
    return Example(
        tr("Random (seed {seed})", seed=seed),
        tr("Random vectors with unit-variance components."),
        TokenSequence(default_tokens(n), q, k, v),
    )
