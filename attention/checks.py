"""Input validation shared by the core's public functions ("checks at the door").

Every public function turns its array arguments into real floating arrays here, so that bad
input fails early with a `ValueError` that names the argument, its shape and what was expected.
Internal helpers trust the arrays they are handed: each argument is checked once, where it enters.

`checks_off()` switches every check here off, for one purpose: a benchmark measuring what the
checks cost (bench/bench_pretrained.py). Nothing in the app or the tests relies on it otherwise.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_enabled = True


@contextmanager
def checks_off() -> Iterator[None]:
    """Within this block every check passes without looking (for measuring their cost only)."""
    global _enabled
    saved, _enabled = _enabled, False
    try:
        yield
    finally:
        _enabled = saved


def as_real_array(x, name: str, *, allow_neg_inf: bool = False) -> np.ndarray:
    """Return `x` as a float32 or float64 array, or raise `ValueError` naming `name`.

    float32 and float64 are kept as they are; integers (and float16) become float64.
    Booleans, complex numbers, strings and objects are refused, and so are NaN and inf
    (with `allow_neg_inf`, -inf is allowed: it is how a masked score is written).
    """
    if not _enabled:
        a = np.asarray(x)
        return a if a.dtype in FLOAT_DTYPES else a.astype(np.float64)
    try:
        a = np.asarray(x)
    except (ValueError, TypeError) as err:  # ragged lists, unconvertible objects
        raise ValueError(f"{name} is not a rectangular array of numbers ({err})") from None
    if np.issubdtype(a.dtype, np.complexfloating):
        raise ValueError(f"{name} is complex ({a.dtype}); attention needs real numbers")
    if a.dtype == np.bool_ or not (np.issubdtype(a.dtype, np.integer) or np.issubdtype(a.dtype, np.floating)):
        raise ValueError(f"{name} has dtype {a.dtype}; expected real numbers (float32 or float64)")
    if a.dtype not in FLOAT_DTYPES:
        a = a.astype(np.float64)
    check_finite(a, name, allow_neg_inf=allow_neg_inf)
    return a


def check_finite(a: np.ndarray, name: str, *, allow_neg_inf: bool = False) -> None:
    """Raise `ValueError` if `a` holds NaN or inf (or only NaN and +inf with `allow_neg_inf`)."""
    if not _enabled:
        return
    ok = np.isfinite(a)
    if allow_neg_inf:
        ok |= np.isneginf(a)
    if not ok.all():
        where = tuple(int(i) for i in np.argwhere(~ok)[0])
        raise ValueError(f"{name} contains {a[where]} at index {where}; every value must be finite")


def check_ndim(a: np.ndarray, name: str, min_ndim: int, what: str) -> None:
    """Raise `ValueError` unless `a` has at least `min_ndim` axes; `what` describes them."""
    if not _enabled:
        return
    if a.ndim < min_ndim:
        raise ValueError(f"{name} has shape {a.shape}; expected {what}")


def check_not_empty(a: np.ndarray, name: str) -> None:
    """Raise `ValueError` if any axis of `a` has length 0."""
    if not _enabled:
        return
    if a.size == 0:
        raise ValueError(f"{name} has shape {a.shape}: it is empty; every axis needs at least one entry")


def check_shape(a: np.ndarray, name: str, expected: tuple[int, ...]) -> None:
    """Raise `ValueError` unless `a.shape == expected`."""
    if not _enabled:
        return
    if a.shape != tuple(expected):
        raise ValueError(f"{name} has shape {a.shape}; expected {tuple(expected)}")


def check_positive_int(value, name: str) -> int:
    """Return `value` as an int if it is a whole number >= 1, else raise `ValueError`."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}")
    return int(value)


def check_result(a: np.ndarray, what: str) -> np.ndarray:
    """Return `a` if every value is finite, else raise `ValueError`: the inputs were finite but so
    large that `what` overflowed. The core never hands back NaN or inf silently."""
    if _enabled and not np.isfinite(a).all():
        where = tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])
        raise ValueError(
            f"{what} overflowed to {a[where]} at index {where} (shape {a.shape}): "
            f"the inputs are too large for {a.dtype}"
        )
    return a


def result_dtype(*arrays: np.ndarray) -> np.dtype:
    """The float dtype the result of combining `arrays` should have (float32 only if all are)."""
    return np.result_type(*arrays)
