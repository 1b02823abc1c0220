"""lessons/positions/sinusoidal.py: a shift of the sinusoidal table is a rotation, and every row has the length
the page quotes."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention.positions import sinusoidal_encoding
from lessons.positions.sinusoidal import (
    row_length,
    row_length_paragraph,
    shift_error,
    shift_matrix,
    shift_matrix_caption,
)

SETTINGS = settings(max_examples=30, deadline=None)


@SETTINGS
@given(st.integers(1, 64), st.integers(1, 32).map(lambda h: 2 * h), st.integers(0, 500))
def test_the_sinusoidal_shift_is_a_rotation_for_every_position(n, d, k):
    assert shift_error(n, d, k) <= 1e-11
    m = shift_matrix(k, d)
    np.testing.assert_allclose(m.T @ m, np.eye(d), atol=1e-12)


def test_shift_matrix_by_hand():
    # d = 2, θ_0 = 1: a shift by k is a rotation by k radians of (sin p, cos p).
    np.testing.assert_allclose(shift_matrix(1, 2), [[math.cos(1), -math.sin(1)], [math.sin(1), math.cos(1)]])


@pytest.mark.parametrize("d", [16, 32, 64, 256])
def test_every_sinusoidal_row_has_the_length_the_page_quotes(d):
    lengths = np.linalg.norm(sinusoidal_encoding(100, d), axis=1)
    np.testing.assert_allclose(lengths, row_length(d))


def test_the_shift_matrix_caption_says_which_corner_is_drawn():
    caption = shift_matrix_caption(3, 64, 16)
    assert caption.startswith("M_3 for d = 64, its first 16 rows and columns")
    assert shift_matrix_caption(5, 8, 8).startswith("M_5 for d = 8, its first 8 rows")


@pytest.mark.parametrize(("shift", "table_d", "root"), [(3, 64, "√32 ≈ 5.66"), (10, 16, "√8 ≈ 2.83"), (1, 2, "√1 ≈ 1")])
def test_the_row_length_paragraph_moves_the_positions_by_the_shift_and_quotes_the_length(shift, table_d, root):
    paragraph = row_length_paragraph(shift, table_d)
    assert paragraph.startswith(f"M_{shift} does not depend on p: the same matrix moves position 0 to {shift}, and 50 ")
    assert f"and 50 to {50 + shift}." in paragraph
    assert paragraph.endswith(f"same length, √(d/2) = {root}.")
