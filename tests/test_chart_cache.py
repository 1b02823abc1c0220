"""ui.charts.cached_figure and cached_weights_figure: a figure built once per inputs, as the builder makes it."""

from __future__ import annotations

import json

import numpy as np
import pytest
import streamlit as st
from plotly.utils import PlotlyJSONEncoder

from attention.dot_product import attention_steps
from figures.base import figure
from figures.steps import steps_heatmap
from locales import tr
from ui.charts import cached_figure, cached_weights_figure, square_cells

CALLS: list[float] = []  # the heights `line` was built with, cleared before each test


@pytest.fixture(autouse=True)
def fresh_cache():
    st.cache_data.clear()
    CALLS.clear()
    yield
    st.cache_data.clear()


def text(fig_part) -> str:
    """A part of a figure's JSON as text (its arrays as lists), to compare two figures."""
    return json.dumps(fig_part, cls=PlotlyJSONEncoder, sort_keys=True)


def line(height: float) -> dict:
    CALLS.append(height)
    return figure([dict(type="scatter", x=[0, 1], y=[0, height])], dict(height=300, title=dict(text="line")))


def other_line(height: float) -> dict:
    return figure([dict(type="scatter", x=[0, 1], y=[0, height])], dict(height=300, title=dict(text="other")))


def test_the_cached_figure_is_the_builders_with_an_empty_template():
    built = cached_figure(line, 2.0)
    expected = line(2.0).to_plotly_json()
    assert built["data"] == expected["data"] and built["layout"]["title"] == expected["layout"]["title"]
    assert built["layout"]["template"] == {}  # Streamlit's theme styles it


def test_a_figure_is_built_once_per_inputs():
    first = cached_figure(line, 1.0)
    assert cached_figure(line, 1.0) == first and CALLS == [1.0]
    cached_figure(line, 3.0)
    assert CALLS == [1.0, 3.0]


def test_two_builders_given_the_same_inputs_keep_their_own_figures():
    assert cached_figure(line, 1.0)["layout"]["title"]["text"] == "line"
    assert cached_figure(other_line, 1.0)["layout"]["title"]["text"] == "other"


def test_a_builder_without_a_name_of_its_own_is_refused():
    with pytest.raises(ValueError, match="module-level builder"):
        cached_figure(lambda h: line(h), 1.0)

    def local(h):
        return line(h)

    with pytest.raises(ValueError, match="local"):
        cached_figure(local, 1.0)


def test_the_cached_weights_figure_is_the_steps_heatmap_with_square_cells():
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((3, 4, 2))
    steps = attention_steps(q, k, v)
    labels = ["a", "b", "c", "d"]
    built = cached_weights_figure(steps, labels, 0.5)
    expected = steps_heatmap(steps, labels, **square_cells(4, 0.5, font_size=10)).to_plotly_json()
    assert text(built["data"]) == text(expected["data"]) and built["data"][0]["texttemplate"]
    assert text(built["layout"]["yaxis"]) == text(expected["layout"]["yaxis"]) and built["layout"]["template"] == {}
    narrow = cached_weights_figure(steps, labels, 0.1, font_size=14)  # no room for numbers in the cells
    expected = steps_heatmap(steps, labels, annotate=False, font_size=14, square=True).to_plotly_json()
    assert text(narrow["data"]) == text(expected["data"]) and not narrow["data"][0].get("texttemplate")


def titled(n: int) -> dict:
    """A figure whose title is in the session's language, as every page's builders write theirs (tr)."""
    CALLS.append(n)
    return figure([dict(type="scatter", x=[0, 1], y=[0, n])], dict(title=dict(text=tr("Eyes on the teacher"))))


def test_the_session_language_is_part_of_the_key(monkeypatch):
    """Students on the same view in three languages: each gets the figure in their own words, not the one another
    session built first for the same inputs."""
    import locales
    import ui.charts

    titles = {}
    for lang in ("en", "es", "zh_Hans", "es", "en"):
        monkeypatch.setattr(locales, "language", lambda lang=lang: lang)  # what tr() reads
        monkeypatch.setattr(ui.charts, "language", lambda lang=lang: lang)  # what the cache's key reads
        titles.setdefault(lang, set()).add(cached_figure(titled, 1)["layout"]["title"]["text"])
        assert titles[lang] == {tr("Eyes on the teacher")}
    assert len({next(iter(t)) for t in titles.values()}) == 3  # three languages, three titles
    assert CALLS == [1, 1, 1]  # built once per language: the second Spanish and English came from the cache
