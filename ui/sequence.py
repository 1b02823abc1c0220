"""The text forms of the sequence the pages edit (attention.sequence.TokenSequence): matrices as text,
token labels, and the limits of what the editor accepts.

Pure Python and numpy (no streamlit), so every parsing and encoding rule is tested directly.
"""

from __future__ import annotations

import re

import numpy as np

from attention.sequence import TokenSequence, default_tokens
from lessons.examples import compass

MAX_N = 16
MAX_D = 16
MAX_ABS_VALUE = 1000.0
MAX_TOKEN_CHARS = 24
MAX_PARAM_CHARS = 4000  # a URL parameter longer than this is refused before it is parsed


def default_sequence() -> TokenSequence:
    """The Playground's starting point: the hand-built compass example."""
    return compass().seq


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
    values = [
        [_parse_number(tok, i, j, name) for j, tok in enumerate(_VALUE_SPLIT.split(line)) if tok]
        for i, line in enumerate(lines)
    ]
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
    tokens = tuple(words[:n]) + default_tokens(n)[len(words[:n]) :]
    return tokens, notice
