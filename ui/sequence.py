"""The token sequence the pages edit: labels plus Q, K, V, and its text and URL forms.

Pure Python and numpy (no streamlit), so every parsing and encoding rule is tested directly.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np

from attention.examples import Example, compass, default_tokens

MAX_N = 16
MAX_D = 16
MAX_ABS_VALUE = 1000.0
MAX_TOKEN_CHARS = 24
MAX_PARAM_CHARS = 4000  # a URL parameter longer than this is refused before it is parsed


@dataclass(frozen=True)
class TokenSequence:
    """n positions, each with a token label, a query, a key and a value.

    Shapes: q (n, d_k), k (n, d_k), v (n, d_v); len(tokens) == n.
    """

    tokens: tuple[str, ...]
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray

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
        return {"q": self.q, "k": self.k, "v": self.v}[name]

    def with_matrix(self, name: str, value: np.ndarray) -> "TokenSequence":
        return replace(self, **{name: np.array(value, dtype=float)})

    def resized(self, n: int, d_k: int, d_v: int) -> "TokenSequence":
        """The same sequence at a new size, keeping every value that still fits (new entries are 0)."""
        tokens = tuple(self.tokens[:n]) + default_tokens(n)[len(self.tokens):]
        return TokenSequence(tokens, _fit(self.q, n, d_k), _fit(self.k, n, d_k), _fit(self.v, n, d_v))

    def over(self, under: "TokenSequence") -> "TokenSequence":
        """This sequence laid over `under`: its own values where it has them, `under`'s beyond its size.

        Shapes: the larger of the two in each of n, d_k, d_v. Used to bring back what a smaller size cut.
        """
        n, d_k, d_v = max(self.n, under.n), max(self.d_k, under.d_k), max(self.d_v, under.d_v)
        tokens = tuple(self.tokens) + tuple(under.tokens[self.n:])
        return TokenSequence(tokens, _overlay(self.q, under.q, n, d_k), _overlay(self.k, under.k, n, d_k),
                             _overlay(self.v, under.v, n, d_v))

    def equals(self, other: "TokenSequence") -> bool:
        return (self.tokens == other.tokens and all(
            np.array_equal(self.matrix(m), other.matrix(m)) for m in "qkv"))


def _fit(a: np.ndarray, rows: int, cols: int) -> np.ndarray:
    out = np.zeros((rows, cols))
    r, c = min(rows, a.shape[0]), min(cols, a.shape[1])
    out[:r, :c] = a[:r, :c]
    return out


def _overlay(top: np.ndarray, bottom: np.ndarray, rows: int, cols: int) -> np.ndarray:
    out = _fit(bottom, rows, cols)
    out[:top.shape[0], :top.shape[1]] = top
    return out


def from_example(example: Example) -> TokenSequence:
    return TokenSequence(tuple(example.tokens), np.array(example.q, float), np.array(example.k, float),
                         np.array(example.v, float))


def default_sequence() -> TokenSequence:
    """The Playground's starting point: the hand-built compass example."""
    return from_example(compass())


# ---------------------------------------------------------------- text form of a matrix

_ROW_SPLIT = re.compile(r"[;\n]")
_VALUE_SPLIT = re.compile(r"[\s,]+")


def parse_matrix(text: str, rows: int | None = None, cols: int | None = None, name: str = "matrix") -> np.ndarray:
    """Parse `1 0 0; 0 1 0` (or one row per line; commas allowed) into a float array.

    Raises ValueError with a message a student can act on: which row, which value, what was expected.
    Values must be finite and at most MAX_ABS_VALUE in size; with `rows`/`cols`, the shape must match.
    """
    if not isinstance(text, str):
        raise ValueError(f"{name}: expected text, got {type(text).__name__}")
    if len(text) > MAX_PARAM_CHARS:
        raise ValueError(f"{name}: the text is {len(text)} characters long; at most {MAX_PARAM_CHARS} are accepted")
    lines = [line.strip() for line in _ROW_SPLIT.split(text)]
    lines = [line for line in lines if line]
    if not lines:
        raise ValueError(f"{name}: no numbers found")
    values = [[_parse_number(tok, i, j, name) for j, tok in enumerate(_VALUE_SPLIT.split(line)) if tok]
              for i, line in enumerate(lines)]
    widths = {len(r) for r in values}
    if rows is not None and len(values) != rows:
        raise ValueError(f"{name}: {len(values)} row(s) given, expected {rows} (one per position)")
    expected = cols if cols is not None else len(values[0])
    for i, r in enumerate(values):
        if len(r) != expected:
            raise ValueError(f"{name}: row {i + 1} has {len(r)} value(s), expected {expected}")
    if len(widths) != 1:
        raise ValueError(f"{name}: rows have different lengths")
    if len(values) > MAX_N or expected > MAX_D:
        raise ValueError(f"{name}: {len(values)}×{expected} is too large; at most {MAX_N}×{MAX_D}")
    return np.array(values, dtype=float)


def _parse_number(tok: str, i: int, j: int, name: str) -> float:
    try:
        x = float(tok)
    except ValueError:
        raise ValueError(f"{name}: row {i + 1}, value {j + 1}: '{tok[:20]}' is not a number") from None
    if not np.isfinite(x):
        raise ValueError(f"{name}: row {i + 1}, value {j + 1}: '{tok[:20]}' is not a finite number")
    if abs(x) > MAX_ABS_VALUE:
        raise ValueError(f"{name}: row {i + 1}, value {j + 1}: {x:g} is too large (at most ±{MAX_ABS_VALUE:g})")
    return x


def format_number(x: float) -> str:
    """Shortest text that reads back as exactly the same float (1.0 -> '1', 0.1 -> '0.1')."""
    s = repr(float(x))
    return s[:-2] if s.endswith(".0") else s


def format_matrix(a: np.ndarray, row_sep: str = "\n") -> str:
    """The text form `parse_matrix` reads back exactly: values separated by spaces, rows by `row_sep`."""
    return row_sep.join(" ".join(format_number(x) for x in row) for row in np.asarray(a))


# ---------------------------------------------------------------- token labels

def parse_tokens(text: str, n: int) -> tuple[tuple[str, ...], str | None]:
    """Split space-separated labels; return (n labels, a notice or None).

    Missing labels are filled with t<i>; extra ones are ignored; overlong ones are cut.
    """
    words = [w[:MAX_TOKEN_CHARS] for w in text.split()]
    notice = None
    if len(words) < n:
        notice = f"{len(words)} label(s) for {n} positions: the rest are named t<i>."
    elif len(words) > n:
        notice = f"{len(words)} labels for {n} positions: only the first {n} are used."
    tokens = tuple(words[:n]) + default_tokens(n)[len(words[:n]):]
    return tokens, notice
