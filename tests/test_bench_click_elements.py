"""bench/bench_click_elements.py's apps: each runs, has the section the click toggles, and holds the elements it is
named for (a variant that failed or drew fewer would measure nothing). AppTest, no browser, no server."""

import pytest
from streamlit.testing.v1 import AppTest

from bench.bench_click_elements import KINDS, write_variants
from bench.bench_playground import APPS

COUNT = 5
DRAWN = {  # the kinds drawn once per element, and how AppTest lists them
    "markdown": "markdown",
    "markdown with $math$": "markdown",
    "caption": "caption",
    "latex": "latex",
    "text input": "text_input",
    "button": "button",
    "select box": "selectbox",
}


@pytest.fixture(scope="module")
def scripts(tmp_path_factory):
    return write_variants(tmp_path_factory.mktemp("variants"), COUNT)


@pytest.mark.parametrize("kind", list(KINDS))
def test_each_variant_runs_with_the_toggle_the_heatmap_and_its_elements(scripts, kind):
    at = AppTest.from_file(str(scripts[kind]), default_timeout=60).run()
    assert not at.exception
    assert [t.label for t in at.toggle] == ["Causal mask"]
    assert len(at.get("plotly_chart")) == 1
    if kind in DRAWN:
        assert len(getattr(at, DRAWN[kind])) == COUNT
    if kind.startswith("grid"):
        assert len(at.dataframe) == 1
    if kind == "13 page links instead":
        assert len(at.get("page_link")) == 13


def test_the_toggle_redraws_the_heatmap_masked(scripts):
    at = AppTest.from_file(str(scripts["latex"]), default_timeout=60).run()
    before = at.get("plotly_chart")[0].proto.spec
    at.toggle[0].set_value(True).run()
    assert not at.exception
    after = at.get("plotly_chart")[0].proto.spec
    assert after != before
    assert '"0.00"' in after and '"0.00"' not in before  # the future's weights are 0 once masked


def test_the_floor_app_run_as_an_app_draws_its_toggle_and_heatmap():
    """bench/floor_app.py draws when Streamlit runs it (as `__main__`), and only then: imported, it draws nothing."""
    at = AppTest.from_file(str(APPS["floor"]), default_timeout=60).run()
    assert not at.exception
    assert [t.label for t in at.toggle] == ["Causal mask"] and len(at.get("plotly_chart")) == 1
