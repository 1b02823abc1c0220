"""A token sequence for self-attention: n positions, each with a label, a query, a key and a value.

The one type every part of the app uses for "tokens with their q, k, v": the lessons' examples and
puzzles, the pages' editor, the URL. Position i has label tokens[i], query q[i], key k[i] and
value v[i]; the labels are only names, the vectors are what attention computes with.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .checks import as_real_array, check_not_empty


@dataclass(frozen=True, eq=False)  # eq=False: arrays do not compare with ==; use `equals`
class TokenSequence:
    """n labelled positions with their vectors, checked when built.

    Shapes: q (n, d_k), k (n, d_k), v (n, d_v), float64; len(tokens) == n >= 1.
    Raises `ValueError` naming the part that does not fit (a shape, a NaN, a missing label).
    """

    tokens: tuple[str, ...]
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray

    def __post_init__(self) -> None:
        tokens = tuple(str(t) for t in self.tokens)
        arrays = {}
        for name in "qkv":
            a = as_real_array(getattr(self, name), name).astype(np.float64)
            if a.ndim != 2:
                raise ValueError(f"{name} has shape {a.shape}; expected (positions, dimensions)")
            check_not_empty(a, name)
            arrays[name] = a
        q, k, v = arrays["q"], arrays["k"], arrays["v"]
        if k.shape != q.shape:
            raise ValueError(f"k has shape {k.shape} but q has {q.shape}: one key per query, of the same length")
        if v.shape[0] != q.shape[0]:
            raise ValueError(f"v has {v.shape[0]} rows but q has {q.shape[0]}: one value per position")
        if len(tokens) != q.shape[0]:
            raise ValueError(f"{len(tokens)} labels for {q.shape[0]} positions: give one label per position")
        object.__setattr__(self, "tokens", tokens)
        for name, a in arrays.items():
            object.__setattr__(self, name, a)

    @property
    def n(self) -> int:
        return len(self.tokens)

    @property
    def d_k(self) -> int:
        return self.q.shape[1]

    @property
    def d_v(self) -> int:
        return self.v.shape[1]

    def matrix(self, name: str) -> np.ndarray:
        """q, k or v by name."""
        return {"q": self.q, "k": self.k, "v": self.v}[name]

    def with_matrix(self, name: str, value) -> TokenSequence:
        """A copy with q, k or v replaced."""
        return replace(self, **{name: np.array(value, dtype=float)})

    def with_tokens(self, tokens) -> TokenSequence:
        """A copy with new labels (the vectors unchanged)."""
        return replace(self, tokens=tuple(tokens))

    def resized(self, n: int, d_k: int, d_v: int) -> TokenSequence:
        """The same sequence at a new size, keeping every value that still fits (new entries are 0)."""
        tokens = tuple(self.tokens[:n]) + default_tokens(n)[len(self.tokens) :]
        return TokenSequence(tokens, _fit(self.q, n, d_k), _fit(self.k, n, d_k), _fit(self.v, n, d_v))

    def over(self, under: TokenSequence) -> TokenSequence:
        """This sequence laid over `under`: its own values where it has them, `under`'s beyond its size.

        Shapes: the larger of the two in each of n, d_k, d_v. Used to bring back what a smaller size cut.
        """
        n, d_k, d_v = max(self.n, under.n), max(self.d_k, under.d_k), max(self.d_v, under.d_v)
        tokens = tuple(self.tokens) + tuple(under.tokens[self.n :])
        return TokenSequence(
            tokens,
            _overlay(self.q, under.q, n, d_k),
            _overlay(self.k, under.k, n, d_k),
            _overlay(self.v, under.v, n, d_v),
        )

    def equals(self, other: TokenSequence) -> bool:
        """Same labels and exactly the same numbers."""
        return self.tokens == other.tokens and all(np.array_equal(self.matrix(m), other.matrix(m)) for m in "qkv")


def default_tokens(n: int) -> tuple[str, ...]:
    """Placeholder labels t0, t1, ... for n positions."""
    return tuple(f"t{i}" for i in range(n))


def _fit(a: np.ndarray, rows: int, cols: int) -> np.ndarray:
    out = np.zeros((rows, cols))
    r, c = min(rows, a.shape[0]), min(cols, a.shape[1])
    out[:r, :c] = a[:r, :c]
    return out


def _overlay(top: np.ndarray, bottom: np.ndarray, rows: int, cols: int) -> np.ndarray:
    out = _fit(bottom, rows, cols)
    out[: top.shape[0], : top.shape[1]] = top
    return out
