"""bench/soak.py's verdict: the growth from minute `warm` to the last minute, from the samples."""

from __future__ import annotations

import pytest

from bench.soak import growth


def samples(kib_at_minute) -> list[tuple[float, int, int]]:
    """A sample every 10 s for 30 minutes, `kib_at_minute(t)` each (worker and tree alike)."""
    return [(t, kib_at_minute(t / 60), kib_at_minute(t / 60)) for t in range(0, 30 * 60 + 1, 10)]


def test_a_flat_curve_after_the_warm_up_has_no_growth():
    start, end, grew, highest = growth(samples(lambda m: 100_000 if m < 4 else 200_000), warm_s=300)
    assert (start, end, grew, highest) == (200_000, 200_000, 0.0, 0.0)  # the climb before minute 5 is not counted


def test_a_steady_leak_shows_as_growth_from_minute_five():
    start, end, grew, highest = growth(samples(lambda m: int(200_000 + 1_000 * m)), warm_s=300)
    assert start == 205_000 and end == pytest.approx(229_500, abs=1_000)  # the last minute's median
    assert grew == pytest.approx(end / start - 1) and grew > 0.1
    assert highest == pytest.approx(230_000 / 205_000 - 1)
