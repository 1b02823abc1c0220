"""pages/scaling.py ("Why divide by √d_k") under AppTest: it runs, shows the core's numbers, survives extreme
settings and malformed URLs."""

import numpy as np
from streamlit.testing.v1 import AppTest

from lessons.scaling import DEFAULT_KEYS, MAX_DRAWS, SWEEP_D_KS, query_length_spread, scaling_stats
from lessons.training import ScalingComparison, TrainingConfig, compare_scaling
from tests.apptest_helpers import chart_by_key as chart
from tests.apptest_helpers import open_page
from tests.apptest_helpers import plotly_values as values

PAGE = "pages/scaling.py"


def open_scaling(query: dict[str, str] | None = None) -> AppTest:
    """Run app.py straight on the page, as opening /scaling?<query> in a browser would."""
    return open_page(PAGE, query)


def texts(elements) -> str:
    return " | ".join(str(e.value) for e in elements)


def test_default_page_shows_the_core_numbers_and_the_verdict():
    at = open_scaling()
    assert not at.exception and not at.error
    expected = scaling_stats(SWEEP_D_KS, n_keys=DEFAULT_KEYS, n_samples=1000, seed=0)
    fig = chart(at, "scaling_max_weight")
    np.testing.assert_allclose(values(fig["data"][0]["y"]), expected.max_weight_unscaled)
    np.testing.assert_allclose(values(fig["data"][1]["y"]), expected.max_weight_scaled)
    np.testing.assert_allclose(values(chart(at, "scaling_variance")["data"][1]["y"]), expected.variance)
    weights = chart(at, "scaling_weights")
    rows = [expected.index(d) for d in (4, 64, 1024)]
    np.testing.assert_allclose(values(weights["data"][0]["z"]), expected.example_unscaled[rows])
    for key in ("scaling_jacobian", "scaling_loss", "scaling_grad_norm"):
        assert chart(at, key)["data"]
    assert "The unscaled run's held-out loss is" in texts(at.info) and "times the scaled run's" in texts(at.info)
    assert dict(at.query_params) == {
        "dk": "4,64,1024",
        "keys": str(DEFAULT_KEYS),
        "samples": "1000",
        "seed": "0",
        "tdk": "256",
        "lr": "1",
        "steps": "300",
    }  # the settings travel with the link


def test_extreme_settings_by_widget_one_key_at_d_k_4096():
    at = open_scaling()
    at.multiselect(key="scaling_d_ks").set_value([4096])
    at.slider(key="scaling_keys").set_value(1)
    at.run()
    assert not at.exception and not at.error
    np.testing.assert_array_equal(values(chart(at, "scaling_weights")["data"][0]["z"]), [[1.0]])


def test_extreme_settings_from_the_url():
    at = open_scaling({"dk": "1,4096", "keys": "1", "samples": "5000", "tdk": "1024", "steps": "50", "lr": "3"})
    assert not at.exception and not at.error and not at.warning
    assert at.multiselect(key="scaling_d_ks").value == [1, 4096]
    assert at.slider(key="scaling_keys").value == 1
    assert at.select_slider(key="scaling_train_d_k").value == 1024
    assert chart(at, "scaling_loss")["data"]


def test_malformed_url_warns_and_falls_back_to_the_defaults():
    at = open_scaling(
        {"dk": "3,banana", "keys": "999", "samples": "7", "seed": "-4", "tdk": "4096", "lr": "nan", "steps": "<script>"}
    )
    assert not at.exception
    assert len(at.warning) == 7, texts(at.warning)
    assert "<script>" not in texts(at.warning)
    assert at.multiselect(key="scaling_d_ks").value == [4, 64, 1024]
    assert at.slider(key="scaling_keys").value == DEFAULT_KEYS
    assert at.select_slider(key="scaling_lr").value == 1.0
    assert at.slider(key="scaling_steps").value == 300


def test_an_empty_selection_asks_for_a_d_k():
    at = open_scaling()
    at.multiselect(key="scaling_d_ks").set_value([])
    at.run()
    assert not at.exception
    assert "Pick at least one d_k" in texts(at.warning)


def expected_verdict(d_k: int, lr: float, steps: int = 300, seed: int = 0) -> tuple[str, ScalingComparison]:
    """The training section's sentence, built here from the core's numbers (not from the page's code)."""
    c = compare_scaling(TrainingConfig(d_k=d_k, lr=lr, steps=steps, seed=seed))
    s, u = c.scaled, c.unscaled
    numbers = (
        f"held-out loss **{s.final_loss:.3g}** scaled vs **{u.final_loss:.3g}** unscaled, accuracy "
        f"**{s.final_accuracy:.1%}** vs **{u.final_accuracy:.1%}**"
    )
    return f"Measured at d_k = {d_k}, learning rate {lr:g}, {steps} steps, seed {seed}: {numbers}.", c


def ratio_text(ratio: float) -> str:
    return f"{ratio:.3g}" if ratio < 10 else f"{ratio:,.0f}"


def shown_verdict(d_k: int, lr: float) -> str:
    at = open_scaling({"tdk": str(d_k), "lr": f"{lr:g}"})
    assert not at.exception and not at.error
    (info,) = at.info
    return info.value


# Issue #50, finding 3: "At small d_k the unscaled scores barely saturate; try d_k = 256 or more" was untrue (the
# mean largest weight over 8 keys is 0.75 at d_k = 16 and 0.87 at 64), and at d_k = 64, lr 1 the page said "not
# clearly worse" of a loss 20 times higher while at lr 0.3 it said worse. The page now says what it measured.
NO_VERDICT = ("barely saturate", "Honestly", "clearly worse", "trains worse", "try d_k")


def test_d_k_16_lr_1_says_the_unscaled_loss_is_higher_and_by_how_much():
    shown = shown_verdict(16, 1.0)
    expected, c = expected_verdict(16, 1.0)
    assert shown.startswith(expected)
    ratio = c.unscaled.final_loss / c.scaled.final_loss
    assert ratio > 1 and f"The unscaled run's held-out loss is {ratio_text(ratio)} times the scaled run's." in shown
    stuck = c.unscaled.final_stuck
    assert stuck > 0 and f"{stuck:.1%} of the unscaled run's held-out examples are stuck" in shown
    assert not any(words in shown for words in NO_VERDICT)


def test_d_k_64_lr_1_says_the_unscaled_loss_is_20_times_higher():
    shown = shown_verdict(64, 1.0)
    expected, c = expected_verdict(64, 1.0)
    assert shown.startswith(expected)
    ratio = c.unscaled.final_loss / c.scaled.final_loss
    assert 15 < ratio < 25  # what the issue measured: 0.0082 against 0.0004
    assert f"The unscaled run's held-out loss is {ratio_text(ratio)} times the scaled run's." in shown
    assert "accuracy **100.0%** vs **99.6%**" in shown  # not "100 %" for both, as before
    assert not any(words in shown for words in NO_VERDICT)


def test_d_k_64_lr_0_3_says_the_unscaled_loss_is_higher_and_by_how_much():
    shown = shown_verdict(64, 0.3)
    expected, c = expected_verdict(64, 0.3)
    assert shown.startswith(expected)
    ratio = c.unscaled.final_loss / c.scaled.final_loss
    assert f"The unscaled run's held-out loss is {ratio_text(ratio)} times the scaled run's." in shown
    assert not any(words in shown for words in NO_VERDICT)


def test_d_k_16_lr_0_3_says_the_unscaled_loss_is_the_lower():
    """The caption under the verdict says that at some settings the unscaled run ends lower: this is one."""
    shown = shown_verdict(16, 0.3)
    expected, c = expected_verdict(16, 0.3)
    assert shown.startswith(expected)
    assert c.unscaled.final_loss < c.scaled.final_loss
    ratio = c.scaled.final_loss / c.unscaled.final_loss
    assert f"The unscaled run's held-out loss is the lower: the scaled run's is {ratio_text(ratio)} times it." in shown
    assert "No held-out example of either run is stuck" in shown and c.unscaled.final_stuck == 0
    assert not any(words in shown for words in NO_VERDICT)


def test_the_caption_under_the_verdict_is_true_of_the_settings_it_speaks_of():
    at = open_scaling({"tdk": "16", "lr": "0.3"})
    caption = "at some settings the unscaled run ends with the lower loss"
    assert any(caption in c.value for c in at.caption)
    _, c = expected_verdict(16, 0.3)  # one such setting (the test above reads it off the page)
    assert c.unscaled.final_loss < c.scaled.final_loss
    _, other = expected_verdict(16, 3.0)  # another learning rate, other numbers: here the unscaled run ends higher
    assert other.unscaled.final_loss > other.scaled.final_loss


def test_at_d_k_1_the_two_runs_are_one_run():
    at = open_scaling({"tdk": "1", "steps": "50"})
    assert "the two runs are the same run" in texts(at.info)
    assert any("at d_k = 1 the two runs are one run" in c.value for c in at.caption)


def test_the_gradient_caption_quotes_the_runs_it_was_drawn_from():
    at = open_scaling({"tdk": "64", "lr": "1"})
    _, c = expected_verdict(64, 1.0)
    caption = next(x.value for x in at.caption if x.value.startswith("The size of each step's gradient"))
    for name, run in (("Scaled", c.scaled), ("Unscaled", c.unscaled)):
        g = run.grad_norm
        low = int(np.argmin(g))
        assert (
            f"{name}: {g[0]:.2g} at step 1, {g[-1]:.2g} at step 300, smallest {g[low]:.2g} at step {low + 1}" in caption
        )
    zeros = int((c.unscaled.grad_norm == 0).sum())
    assert zeros > 0 and f"{zeros} steps exactly 0, drawn at the bottom" in caption
    assert "collapses" not in caption and "while the loss is still high" not in caption


def test_the_measurement_captions_quote_the_numbers_drawn():
    at = open_scaling({"seed": "3"})
    stats = scaling_stats(SWEEP_D_KS, n_keys=DEFAULT_KEYS, n_samples=1000, seed=3)
    captions = texts(at.caption)
    ratio = stats.variance / stats.d_k
    assert f"measured / d_k is between {ratio.min():.2f} and {ratio.max():.2f} at the 13 d_k values" in captions
    assert 0.9 < ratio.min() and ratio.max() < 1.15
    median = stats.jacobian_median_unscaled
    assert f"goes from {median[0]:.2g} at d_k = 1 to {median[-1]:.2g} at d_k = 4096" in captions
    assert f"the mean (dotted) ends at {stats.jacobian_norm_unscaled[-1]:.2g}, higher than the median" in captions
    scaled = stats.jacobian_median_scaled
    assert f"Scaled, the median stays between {scaled.min():.2g} and {scaled.max():.2g}" in captions
    rows = [stats.index(d) for d in (4, 64, 1024)]
    one = next(m.value for m in at.markdown if m.value.startswith("**One sample at each d_k.**"))
    largest = stats.example_unscaled[rows].max(axis=1)
    assert "unscaled: " + ", ".join(f"{w:.2f} at d_k = {d}" for d, w in zip((4, 64, 1024), largest)) in one


def test_with_one_key_the_captions_say_what_one_key_means():
    at = open_scaling({"keys": "1"})
    assert not at.exception
    captions = texts(at.caption)
    assert "With one key it is 0 at every d_k" in captions
    assert "With one key the largest weight is 1 at every d_k" in captions


def test_the_max_weight_caption_says_what_the_curves_measure():
    # Issue #13: "the scaled curve stays where it is at d_k = 1" was not what is measured (about 0.31 at
    # d_k = 1, 0.36 from d_k = 64 on, with 8 keys). The caption now quotes the numbers the chart was drawn from.
    at = open_scaling({"seed": "5"})
    stats = scaling_stats(SWEEP_D_KS, n_keys=DEFAULT_KEYS, n_samples=1000, seed=5)
    caption = next(c.value for c in at.caption if c.value.startswith("The average largest weight"))
    scaled, unscaled = stats.max_weight_scaled, stats.max_weight_unscaled
    assert f"Scaled it stays between {scaled.min():.2f} and {scaled.max():.2f}" in caption
    assert f"{scaled[0]:.2f} at d_k = 1" in caption and f"{unscaled[-1]:.2f} at 4096" in caption
    assert f"about {np.median(scaled[stats.index(64) :]):.2f} from d_k = 64" in caption
    assert 0.28 < scaled[0] < 0.33 and 0.34 < np.median(scaled[stats.index(64) :]) < 0.38  # what the issue measured
    assert "stays where it is" not in caption
    # the reason it gives for the low start, in numbers: a query's length spreads far more at d_k = 1 than at 64
    spread = f"its standard deviation is {query_length_spread(1):.2f} √d_k at d_k = 1 and {query_length_spread(64):.2f}"
    assert spread in caption and query_length_spread(1) > 5 * query_length_spread(64)
    assert f"Unscaled: {unscaled[0]:.2f} at d_k = 1, {unscaled[stats.index(64)]:.2f} at 64" in caption


def test_every_reachable_combination_of_keys_and_samples_runs():
    # Issue #19: 256 keys × 5000 samples could be chosen and was then refused ("too many").
    at = open_scaling({"keys": "256", "samples": "5000"})
    assert not at.exception and not at.error
    assert at.select_slider(key="scaling_samples").value == 200  # lowered, with a note saying why
    assert any(
        "Samples per d_k lowered from 5,000 to 200: with 256 keys, 5,000 samples would be 1,280,000 draws" in c.value
        for c in at.caption
    )
    assert at.query_params["samples"] == "200"
    for keys in (1, 60, 128, 256):
        at.slider(key="scaling_keys").set_value(keys).run()
        assert not at.exception and not at.error
        options = at.select_slider(key="scaling_samples").options
        assert all(int(s) * keys <= MAX_DRAWS for s in options)
    at.slider(key="scaling_keys").set_value(16).run()  # 16 × 5,000 fits: the samples asked for come back
    assert at.select_slider(key="scaling_samples").value == 5000 and not any("Samples" in c.value for c in at.caption)


def test_a_large_sweep_is_measured_in_a_niced_child_and_a_small_one_here(monkeypatch):
    """A run holds its worker's one run slot: the largest sweeps (up to 2 s of CPU) go to a child at nice 19,
    so that the class's clicks need not queue behind them (issue #17); the numbers are the same."""
    import ui.background

    calls = []
    real = ui.background.run_niced

    def recording(fn, config, on_step=None, on_queue=None):
        calls.append((fn.__name__, config))
        return real(fn, config, on_step, on_queue)

    monkeypatch.setattr(ui.background, "run_niced", recording)
    at = open_scaling({"keys": "256", "samples": "200", "seed": "4242", "dk": "4,4096"})
    assert not at.exception and not at.error
    assert calls == [("sweep_stats", (256, 200, 4242))]
    expected = scaling_stats(SWEEP_D_KS, n_keys=256, n_samples=200, seed=4242)  # measured here, in-process
    np.testing.assert_array_equal(values(chart(at, "scaling_variance")["data"][1]["y"]), expected.variance)
    weights = chart(at, "scaling_weights")
    np.testing.assert_array_equal(values(weights["data"][0]["z"]), expected.example_unscaled[[2, 12]])

    calls.clear()
    at = open_scaling({"keys": "8", "samples": "1000", "seed": "4243"})  # the default size: 8,000 draws
    assert not at.exception and not at.error and calls == []


def test_the_max_weight_caption_explains_a_dip_only_where_the_numbers_show_one():
    """'It is lower at small d_k' is said only when the scaled largest weight at d_k = 1, as shown, is below the
    settled one; and the uniform weight is 1/n to three digits (1/256 is 0.00391, not 0.00)."""
    seen = set()
    for query in ({}, {"keys": "256", "samples": "100", "seed": "1"}):
        at = open_scaling(query)
        assert not at.exception
        stats = scaling_stats(
            n_keys=int(query.get("keys", DEFAULT_KEYS)),
            n_samples=int(query.get("samples", 1000)),
            seed=int(query.get("seed", 0)),
        )
        dips = round(stats.max_weight_scaled[0], 2) < round(stats.settled_max_weight_scaled, 2)
        caption = next(c.value for c in at.caption if c.value.startswith("The average largest weight"))
        assert ("It is lower at small d_k" in caption) == dips
        seen.add(dips)
        n = stats.n_keys
        assert f"1/{n} = {1 / n:.3g} uniform" in caption
    assert seen == {True, False}, "one setting with the dip, one without (the review's seed 1 at 256 keys)"


def test_at_d_k_1_the_loss_caption_says_the_two_curves_are_one():
    at = open_scaling({"tdk": "1", "steps": "50"})
    assert any("the two curves are one" in c.value for c in at.caption)
    assert not any("only the 1/√d_k differs" in c.value for c in at.caption)
