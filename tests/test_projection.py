"""PCA of a head's queries and keys: hand-computed cases, an independent eigen-decomposition, refusals."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention.pretrained import load_minilm
from lessons.projection import pca_2d, queries_and_keys

SETTINGS = settings(max_examples=40, deadline=None)


def test_a_cross_of_four_points_by_hand():
    # Mean 0. Spread along y: (4 + 4) / 4 = 2, along x: (1 + 1) / 4 = 0.5, along z: 0; so y is the
    # first axis, x the second, and the two keep everything.
    points = np.array([[1.0, 0, 0], [-1, 0, 0], [0, 2, 0], [0, -2, 0]])
    p = pca_2d(points)
    np.testing.assert_allclose(p.axes, [[0, 1, 0], [1, 0, 0]], atol=1e-12)
    np.testing.assert_allclose(p.coords, [[0, 1], [0, -1], [2, 0], [-2, 0]], atol=1e-12)
    np.testing.assert_allclose(p.variances, [2.0, 0.5, 0.0], atol=1e-12)
    assert p.share == pytest.approx(1.0)


def test_a_third_direction_is_the_share_left_out():
    # Six points on three axes with spreads 8/6 (y), 2/6 (x) and 0.5/6 (z): the picture keeps 10 / 10.5.
    points = np.array([[1.0, 0, 0], [-1, 0, 0], [0, 2, 0], [0, -2, 0], [0, 0, 0.5], [0, 0, -0.5]])
    assert pca_2d(points).share == pytest.approx(10 / 10.5, abs=1e-12)


def test_points_that_coincide_or_lie_in_one_dimension():
    same = pca_2d(np.ones((4, 3)))
    assert same.share == 1.0 and np.all(same.coords == 0)
    line = pca_2d(np.array([[1.0], [3.0], [5.0]]))  # d = 1: one real axis, the second is zero
    np.testing.assert_allclose(line.coords, [[-2, 0], [0, 0], [2, 0]], atol=1e-12)
    assert line.share == 1.0 and np.all(line.axes[1] == 0)
    single = pca_2d(np.array([[2.0, -1.0]]))
    assert single.coords.shape == (1, 2) and np.all(single.coords == 0)


def random_points(seed: int, m: int, d: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(m, d)) * rng.uniform(0.1, 5.0, d) + rng.normal(0, 3, d)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(3, 40), d=st.integers(2, 12))
def test_the_projection_is_the_centred_points_on_the_top_two_eigenvectors(seed, m, d):
    x = random_points(seed, m, d)
    p = pca_2d(x)
    centred = x - x.mean(axis=0)
    # independently: eigenvectors of the covariance matrix, largest eigenvalues first
    eigenvalues, eigenvectors = np.linalg.eigh(centred.T @ centred / m)  # ascending
    top = eigenvectors[:, ::-1][:, :2]  # (d, 2)
    expected = centred @ top  # (m, 2)
    signs = np.sign(np.sum(expected * p.coords, axis=0))  # an axis's sign is a convention
    np.testing.assert_allclose(p.coords, expected * signs, atol=1e-8)
    assert p.share == pytest.approx(eigenvalues[::-1][:2].sum() / eigenvalues.sum(), abs=1e-10)
    # the same as the SVD's first two components, U[:, :2] S[:2]
    u, s, _ = np.linalg.svd(centred, full_matrices=False)
    np.testing.assert_allclose(np.abs(p.coords), np.abs(u[:, :2] * s[:2]), atol=1e-8)
    # and the coordinates' own spread is the variance each axis keeps
    np.testing.assert_allclose(p.coords.var(axis=0), p.variances[:2], rtol=1e-8, atol=1e-12)


def test_signs_are_fixed_so_the_same_points_give_the_same_picture():
    x = random_points(3, 20, 5)
    again = pca_2d(x[::-1])  # the same points in another order
    np.testing.assert_allclose(pca_2d(x).coords, again.coords[::-1], atol=1e-10)
    largest = np.abs(pca_2d(x).axes).argmax(axis=1)
    assert (pca_2d(x).axes[[0, 1], largest] > 0).all()


def test_queries_and_keys_share_one_projection_queries_first():
    run = load_minilm().run("The animal didn't cross the street because it was too tired.")
    q, k = run.queries[3, 1], run.keys[3, 1]
    p = queries_and_keys(q, k)
    n = run.n_tokens
    assert p.coords.shape == (2 * n, 2) and 0 < p.share <= 1
    joint = np.concatenate([q, k]).astype(np.float64)
    np.testing.assert_allclose(p.coords[:n], (q - p.mean) @ p.axes.T, atol=1e-5)
    np.testing.assert_allclose(p.coords[n:], (k - p.mean) @ p.axes.T, atol=1e-5)
    np.testing.assert_allclose(p.mean, joint.mean(axis=0), atol=1e-6)


@pytest.mark.parametrize(
    "points, match",
    [
        (np.ones(3), r"points has shape \(3,\); expected \(m, d\)"),
        (np.ones((2, 2, 2)), "expected"),
        (np.zeros((0, 3)), "empty"),
        ([[1.0, np.nan]], "finite"),
        ([["a", "b"]], "dtype"),
    ],
)
def test_refuses_what_is_not_a_set_of_points(points, match):
    with pytest.raises(ValueError, match=match):
        pca_2d(points)


def test_refuses_queries_and_keys_of_different_widths():
    with pytest.raises(ValueError, match=r"queries has shape \(3, 4\) and keys \(3, 5\)"):
        queries_and_keys(np.ones((3, 4)), np.ones((3, 5)))
