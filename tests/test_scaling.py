"""lessons/scaling.py and figures/scaling.py: the measured case for 1/sqrt(d_k): variance, saturation,
entropy and softmax-Jacobian norms, plus the figures that draw them."""

import math

import numpy as np
import plotly.graph_objects as go
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats as scipy_stats

import lessons.scaling as scaling
from attention import softmax
from figures.scaling import (
    LOG_FLOOR,
    grad_norm_figure,
    jacobian_figure,
    loss_curves_figure,
    max_weight_figure,
    variance_figure,
    weights_by_d_k_figure,
)
from lessons.scaling import (
    MAX_DRAWS,
    SWEEP_D_KS,
    query_length_spread,
    random_dot_products,
    scaling_stats,
    softmax_jacobian_norm,
    standard_normal_f32,
)
from lessons.training import STUCK_JACOBIAN_BOUND, STUCK_WEIGHT

N_KEYS, N_SAMPLES = 16, 1000


@pytest.fixture(scope="module")
def sweep():
    """The page's default measurement: every power of 2 up to 4096, 16 keys, 1000 samples."""
    return scaling_stats(SWEEP_D_KS, n_keys=N_KEYS, n_samples=N_SAMPLES, seed=0)


# ---------------------------------------------------------------- the random numbers


def test_box_muller_draws_standard_normal_float32():
    z = standard_normal_f32(np.random.default_rng(0), (400, 501))  # odd size: one spare draw is dropped
    assert z.shape == (400, 501) and z.dtype == np.float32
    # n = 200,400: the standard error of the mean is 1/sqrt(n) = 0.0022, of the variance sqrt(2/n) = 0.0032
    assert abs(z.mean()) < 5 / math.sqrt(z.size)
    assert abs(z.var() - 1) < 5 * math.sqrt(2 / z.size)
    assert scipy_stats.kstest(z.ravel()[:50_000].astype(np.float64), "norm").pvalue > 1e-3
    assert np.abs(z).max() < 5.8  # float32 uniforms cap |z| at sqrt(2 ln 2^24) = 5.77


def test_same_seed_same_numbers_other_seed_other_numbers():
    a = random_dot_products((4, 64), 3, 100, seed=7)
    assert np.array_equal(a, random_dot_products((4, 64), 3, 100, seed=7))
    assert not np.array_equal(a, random_dot_products((4, 64), 3, 100, seed=8))
    assert a.shape == (2, 100, 3) and a.dtype == np.float64


def test_dot_products_are_prefixes_of_one_draw(monkeypatch):
    """Rebuild the full random vectors from every block drawn and compare with a plain np.dot loop."""
    blocks = []

    def recording(rng, shape):
        x = standard_normal_f32(rng, shape)
        blocks.append(x.copy())
        return x

    monkeypatch.setattr(scaling, "standard_normal_f32", recording)
    monkeypatch.setattr(scaling, "_BLOCK_FLOATS", 64)  # many small blocks, so blocks straddle every d_k
    d_ks, n_keys, n_samples = (1, 3, 8, 20), 2, 5  # one group of samples: the blocks come in order
    scores = random_dot_products(d_ks, n_keys, n_samples, seed=1)
    full = np.concatenate(blocks, axis=-1).astype(np.float64)  # (samples, 1 + keys, 20)
    for i, d in enumerate(d_ks):
        for s in range(n_samples):
            for j in range(n_keys):
                expected = np.dot(full[s, 0, :d], full[s, 1 + j, :d])
                assert scores[i, s, j] == pytest.approx(expected, rel=1e-5, abs=1e-5)


# ---------------------------------------------------------------- the claims


def test_variance_of_q_dot_k_is_d_k(sweep):
    """Var(q·k) = d_k within 5 standard errors of the estimate.

    For N(0, 1) components, s = q·k has E[s²] = d and E[s⁴] = 3d² + 6d, so one s² has variance
    2d² + 6d; two keys sharing a query have Cov(s_1², s_2²) = 2d. The mean of s² over n samples × m keys
    then has standard error sqrt((2d² + 6d + (m - 1)·2d) / (n·m)): about 1.1% of d for n = 1000, m = 16.
    5 standard errors make a false alarm about one in 1.7 million per d_k.
    """
    d = sweep.d_k.astype(float)
    se = np.sqrt((2 * d**2 + 6 * d + (N_KEYS - 1) * 2 * d) / (N_SAMPLES * N_KEYS))
    assert np.all(np.abs(sweep.variance - d) < 5 * se), (sweep.variance / d).round(3)
    np.testing.assert_array_equal(sweep.predicted_variance, d)


def test_unscaled_softmax_saturates_and_scaled_does_not(sweep):
    i = sweep.index(1024)
    assert sweep.max_weight_unscaled[i] > 0.9
    assert sweep.max_weight_scaled[i] < 0.4  # 16 keys with unit-variance scores: about 0.25
    assert np.all(np.diff(sweep.max_weight_unscaled) > 0)  # sharper at every step of the sweep
    np.testing.assert_allclose(sweep.max_weight_scaled[2:], sweep.max_weight_scaled[-1], rtol=0.1)


def test_entropy_falls_unscaled_and_stays_scaled(sweep):
    assert np.all((sweep.entropy_unscaled >= 0) & (sweep.entropy_unscaled <= sweep.max_entropy + 1e-12))
    assert sweep.entropy_unscaled[sweep.index(4096)] < 0.1 * sweep.entropy_unscaled[sweep.index(4)]
    np.testing.assert_allclose(sweep.entropy_scaled[2:], sweep.entropy_scaled[-1], rtol=0.05)


def test_jacobian_norm_unscaled_falls_by_orders_of_magnitude(sweep):
    small, large = sweep.index(4), sweep.index(1024)
    # a typical sample: more than three orders of magnitude
    assert sweep.jacobian_median_unscaled[large] < 1e-3 * sweep.jacobian_median_unscaled[small]
    # the mean falls far less: rare samples where two keys nearly tie keep it up
    assert sweep.jacobian_norm_unscaled[large] < 0.25 * sweep.jacobian_norm_unscaled[small]
    assert sweep.jacobian_norm_unscaled[large] > 10 * sweep.jacobian_median_unscaled[large]
    np.testing.assert_allclose(sweep.jacobian_median_scaled[2:], sweep.jacobian_median_scaled[-1], rtol=0.1)


def test_d_k_1_is_the_same_scaled_or_not(sweep):
    i = sweep.index(1)
    assert sweep.max_weight_unscaled[i] == sweep.max_weight_scaled[i]
    np.testing.assert_array_equal(sweep.example_unscaled[i], sweep.example_scaled[i])


def test_the_example_is_sample_0_softmaxed(sweep):
    i = sweep.index(64)
    s = sweep.example_scores[i]
    np.testing.assert_allclose(sweep.example_unscaled[i], softmax(s))
    np.testing.assert_allclose(sweep.example_scaled[i], softmax(s / 8))


def test_extreme_settings_one_key_at_d_k_4096():
    stats = scaling_stats([4096], n_keys=1, n_samples=50, seed=0)
    assert stats.max_weight_unscaled[0] == stats.max_weight_scaled[0] == 1.0  # one key gets all the weight
    assert stats.entropy_unscaled[0] == 0.0 and stats.jacobian_norm_unscaled[0] == 0.0
    assert np.isfinite(stats.variance[0])


def test_index_names_what_was_measured(sweep):
    with pytest.raises(ValueError, match="d_k=3 was not measured"):
        sweep.index(3)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(d_ks=[0]), "each d_k must be at least 1"),
        (dict(d_ks=[4, 8192]), "d_k=8192 is too large: at most 4096"),
        (dict(d_ks=[]), "d_ks is empty"),
        (dict(d_ks="64"), "d_ks must be a list"),
        (dict(d_ks=[2.5]), "each d_k must be a whole number"),
        (dict(n_keys=0), "n_keys must be at least 1"),
        (dict(n_keys=257), "n_keys=257 is too large: at most 256"),
        (dict(n_samples=5001), "n_samples=5001 is too large: at most 5000"),
        (dict(n_keys=256, n_samples=5000), "too many"),
        (dict(seed=-1), "seed must be a whole number >= 0"),
    ],
)
def test_settings_are_validated(kwargs, message):
    with pytest.raises(ValueError, match=message):
        scaling_stats(**kwargs)


def test_the_draw_budget_allows_the_page_limits_one_at_a_time():
    assert 200 * 256 <= MAX_DRAWS and 5000 * 16 <= MAX_DRAWS


# ---------------------------------------------------------------- the Jacobian norm


def explicit_norm(p: np.ndarray) -> float:
    return float(np.linalg.norm(np.diag(p) - np.outer(p, p)))


@settings(deadline=None, max_examples=80)
@given(arrays(np.float64, st.integers(1, 10), elements=st.floats(-20, 20)))
def test_jacobian_norm_matches_the_explicit_matrix(s):
    p = softmax(s)
    assert softmax_jacobian_norm(p) == pytest.approx(explicit_norm(p), rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("gap", [1.0, 30.0, 300.0])
def test_jacobian_norm_stays_accurate_when_saturated(gap):
    # Two keys: J = p1 p2 [[1, -1], [-1, 1]], so ‖J‖ = 2 p1 p2 exactly; at gap 300 that is 1e-130,
    # far below the 1e-16 that 1 - p_max computed by subtraction could resolve.
    p2 = 1 / (1 + math.exp(gap))
    expected = 2 * (1 - p2) * p2
    assert softmax_jacobian_norm(softmax(np.array([gap, 0.0]))) == pytest.approx(expected, rel=1e-12)


def test_jacobian_norm_works_on_batches():
    p = softmax(np.random.default_rng(0).standard_normal((3, 4, 5)))
    norms = softmax_jacobian_norm(p)
    assert norms.shape == (3, 4)
    assert norms[2, 1] == pytest.approx(explicit_norm(p[2, 1]))


# ---------------------------------------------------------------- figures


def test_weights_figure_shares_one_colour_scale_from_0_to_1(sweep):
    rows = [sweep.index(d) for d in (4, 64, 1024)]
    fig = weights_by_d_k_figure(
        [4, 64, 1024], sweep.example_unscaled[rows], sweep.example_scaled[rows], sweep.example_scores[rows]
    )
    heatmaps = [t for t in fig.data if isinstance(t, go.Heatmap)]
    assert len(heatmaps) == 2 and {t.coloraxis for t in heatmaps} == {"coloraxis"}
    assert (fig.layout.coloraxis.cmin, fig.layout.coloraxis.cmax) == (0.0, 1.0)
    np.testing.assert_array_equal(heatmaps[0].z, sweep.example_unscaled[rows])
    np.testing.assert_array_equal(heatmaps[1].z, sweep.example_scaled[rows])
    assert "q·k" in heatmaps[1].customdata[0][0] and "÷ √4" in heatmaps[1].customdata[0][0]


def test_weights_figure_drops_the_numbers_for_many_keys():
    w = np.full((1, 64), 1 / 64)
    fig = weights_by_d_k_figure([4096], w, w)
    assert fig.data[0].text is None


def test_curve_figures_plot_the_numbers_they_are_given(sweep):
    fig = max_weight_figure(sweep.d_k, sweep.max_weight_unscaled, sweep.max_weight_scaled, 16)
    assert fig.layout.xaxis.type == "log"
    assert [t.name for t in fig.data] == ["unscaled", "scaled"]
    np.testing.assert_array_equal(fig.data[0].y, sweep.max_weight_unscaled)
    fig = variance_figure(sweep.d_k, sweep.variance)
    np.testing.assert_array_equal(fig.data[0].y, sweep.d_k)  # the line y = d_k
    np.testing.assert_array_equal(fig.data[1].y, sweep.variance)
    fig = jacobian_figure(
        sweep.d_k,
        sweep.jacobian_median_unscaled,
        sweep.jacobian_median_scaled,
        sweep.jacobian_norm_unscaled,
        sweep.jacobian_norm_scaled,
    )
    assert len(fig.data) == 4 and fig.layout.yaxis.type == "log"


def test_training_figures_draw_exact_zeros_at_the_floor():
    fig = grad_norm_figure(np.array([1.0, 0.5, 0.25]), np.array([2.0, 0.0, 0.0]))
    unscaled = next(t for t in fig.data if t.name == "unscaled (each step)")
    np.testing.assert_array_equal(unscaled.y, [2.0, LOG_FLOOR, LOG_FLOOR])
    median = next(t for t in fig.data if t.name == "unscaled (running median)")
    np.testing.assert_array_equal(median.y, [2.0, (2.0 + LOG_FLOOR) / 2, LOG_FLOOR])
    fig = loss_curves_figure(np.array([1.0, 0.1, 0.01]), np.array([1.0, 0.9, 0.8]))
    assert list(fig.data[0].x) == [1, 2, 3]


def test_the_settled_scaled_max_weight_is_the_median_from_d_k_64_on():
    stats = scaling_stats((1, 4, 64, 256, 1024), n_keys=8, n_samples=200, seed=1)
    assert stats.settled_max_weight_scaled == np.median(stats.max_weight_scaled[2:])
    few = scaling_stats((1, 4), n_keys=8, n_samples=200, seed=1)  # 64 not measured: the last d_k's
    assert few.settled_max_weight_scaled == few.max_weight_scaled[-1]


# ---------------------------------------------------------------- the numbers the page's sentences quote


@settings(deadline=None, max_examples=200)
@given(arrays(np.float64, st.integers(2, 12), elements=st.floats(-60, 60)))
def test_the_jacobian_norm_is_below_twice_the_weight_off_the_largest(s):
    """‖diag(p) − p pᵀ‖ < 2 (1 − p_max): the bound the scaling page quotes for a stuck example."""
    p = softmax(s)
    rest = np.sort(p)[:-1].sum()  # 1 − p_max, summed rather than subtracted
    assert softmax_jacobian_norm(p) <= 2 * rest * (1 + 1e-12)


def test_a_stuck_example_passes_back_less_than_the_quoted_fraction():
    assert STUCK_JACOBIAN_BOUND == pytest.approx(2 * (1 - STUCK_WEIGHT)) and f"{STUCK_JACOBIAN_BOUND:.2g}" == "0.02"
    for m in (3, 8, 64):  # the most a stuck row can keep: just over STUCK_WEIGHT, the rest spread over m - 1 keys
        p = np.full(m, (1 - STUCK_WEIGHT) / (m - 1))
        p[0] = STUCK_WEIGHT
        assert softmax_jacobian_norm(p) < STUCK_JACOBIAN_BOUND
        j = np.diag(p) - np.outer(p, p)
        assert np.linalg.norm(j, 2) <= softmax_jacobian_norm(p)  # the gradient's factor is at most the norm


@pytest.mark.parametrize("d_k", [1, 2, 3, 64, 4096])
def test_query_length_spread_is_the_chi_distributions(d_k):
    expected = scipy_stats.chi(d_k).std() / math.sqrt(d_k)
    assert query_length_spread(d_k) == pytest.approx(expected, rel=1e-9)
