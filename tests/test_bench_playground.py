"""bench/bench_playground.py's floor (bench/floor_app.py): it runs, with the toggle and the heatmap the benchmark
clicks and waits for. AppTest, no browser, no server."""

from streamlit.testing.v1 import AppTest

from bench.bench_playground import APPS


def test_the_floor_app_run_as_an_app_draws_its_toggle_and_heatmap():
    """bench/floor_app.py draws when Streamlit runs it (as `__main__`), and only then: imported, it draws nothing."""
    at = AppTest.from_file(str(APPS["floor"]), default_timeout=60).run()
    assert not at.exception
    assert [t.label for t in at.toggle] == ["Causal mask"] and len(at.get("plotly_chart")) == 1
