"""figures.base.figure returns a LazyFigure: plotly builds its objects only when something asks for them, and
then it is the go.Figure plotly would have built; ui.charts draws it without building it."""

from __future__ import annotations

import json
import threading

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from streamlit.testing.v1 import AppTest

from figures.base import LazyFigure, figure


def _parts():
    trace = dict(type="heatmap", z=np.arange(6.0).reshape(2, 3), texttemplate="%{z}", xaxis="x2")
    layout = dict(title=dict(text="t"), xaxis2=dict(title=dict(text="second")), annotations=[dict(text="a", x=0, y=0)])
    return [trace, dict(type="scatter", x=[0, 1], y=[2, 3])], layout


def _as_plotly_built_it(data, layout) -> go.Figure:  # what plotly builds from the same dicts
    return go.Figure({"data": data, "layout": {"template": pio.templates.default, **layout}})


def test_a_new_figure_holds_the_builders_own_dicts_and_no_plotly_objects():
    data, layout = _parts()
    fig = figure(data, layout)
    assert type(fig) is LazyFigure and isinstance(fig, go.Figure)
    assert fig.spec["data"][0] is data[0]  # not copied
    assert fig.spec["layout"]["annotations"] is layout["annotations"]
    assert "_data_objs" not in vars(fig)  # plotly has built nothing


def test_the_first_use_builds_it_into_the_figure_plotly_would_have_built():
    data, layout = _parts()
    fig = figure(data, layout)
    assert np.array_equal(fig.data[0].z, data[0]["z"])  # the first use
    assert type(fig) is go.Figure  # a plain go.Figure from now on
    assert fig.to_json() == _as_plotly_built_it(*_parts()).to_json()
    fig.update_layout(title=dict(text="changed"))  # it is a plain, mutable go.Figure now
    assert fig.layout.title.text == "changed"


def test_operators_and_copies_build_it_too():
    import copy
    import pickle

    reference = _as_plotly_built_it(*_parts())
    assert figure(*_parts()) == reference
    assert copy.deepcopy(figure(*_parts())).to_json() == copy.deepcopy(reference).to_json()
    assert pickle.loads(pickle.dumps(figure(*_parts()))).to_json() == pickle.loads(pickle.dumps(reference)).to_json()


def _touch_at_once(fig, n_threads: int = 4) -> tuple[list[int], list[Exception]]:
    start, results, errors = threading.Barrier(n_threads), [], []

    def touch():
        start.wait()
        try:
            results.append(len(fig.data))
        except Exception as exc:  # a half-built figure would raise here (AttributeError, RecursionError)
            errors.append(exc)

    threads = [threading.Thread(target=touch) for _ in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results, errors


def test_two_threads_touching_one_lazy_figure_at_once_both_see_it_built():
    """Threads take turns every microsecond here, so a figure switched to go.Figure before plotly finished building
    it (another thread then reads it half-built: '_data_objs' missing) is caught, not only now and then."""
    import sys

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(20):
            results, errors = _touch_at_once(figure(*_parts()))
            assert not errors and results == [2, 2, 2, 2]
    finally:
        sys.setswitchinterval(interval)


def test_chart_draws_a_lazy_figure_without_building_it_and_sends_what_plotly_would():
    def app():
        import plotly.io as pio
        import streamlit as st

        import ui.charts as charts
        from figures.base import LazyFigure, figure

        data = [dict(type="heatmap", z=[[1.0, 2.0], [3.0, 4.0]], texttemplate="%{z}")]
        fig = figure(data, dict(title=dict(text="t")))
        charts.chart(st, fig, key="lazy", share=0.5)
        st.session_state["still_lazy"] = type(fig) is LazyFigure
        import plotly.graph_objects as go

        built = go.Figure({"data": data, "layout": {"template": pio.templates.default, "title": {"text": "t"}}})
        charts.chart(st, built, key="built", share=0.5)

    at = AppTest.from_function(app, default_timeout=60).run()
    assert not at.exception
    assert at.session_state["still_lazy"]
    lazy, built = (json.loads(c.proto.spec) for c in at.get("plotly_chart"))
    assert lazy == built
