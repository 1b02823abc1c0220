"""pages/scaling.py ("Why divide by √d_k") under AppTest: it runs, shows the core's numbers, survives extreme
settings and malformed URLs."""

import numpy as np
from streamlit.testing.v1 import AppTest

from lessons.scaling import DEFAULT_KEYS, MAX_DRAWS, SWEEP_D_KS, scaling_stats
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
    assert "trains worse" in texts(at.info)
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


def test_the_page_says_so_when_unscaled_is_not_worse():
    at = open_scaling({"tdk": "16"})  # at d_k = 16 the unscaled scores barely saturate
    assert not at.exception
    assert "does **not** train clearly worse" in texts(at.info)
    at = open_scaling({"tdk": "1", "steps": "50"})
    assert "the two runs are the same run" in texts(at.info)


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
