"""ui.charts.chart sends Streamlit exactly the figure plotly's own path would, without its copies.

chart() hands st.plotly_chart a ready dict instead of a Figure (whose to_dict() deep-copies every trace
and the template). These tests draw the same figures both ways in one app and compare what reaches the
browser, including numpy arrays (sent as typed arrays), templates given by name, presenter mode's larger
text on every axis, and cell numbers sized to the chart's share of the page.
"""

from __future__ import annotations

import json

import numpy as np
from streamlit.testing.v1 import AppTest


def _both_ways(presenting: bool, share: float | None):
    def app(presenting, share):
        import numpy as np
        import plotly.graph_objects as go
        import streamlit as st

        import ui.charts as charts
        from figures.base import figure

        def build(named_template=True):  # as figures.base builds them; without: as it built them before
            make = (
                figure
                if named_template
                else lambda data, layout: go.Figure(dict(data=data, layout=layout), _validate=False)
            )
            return make(
                [
                    dict(
                        type="heatmap",
                        z=np.arange(6.0).reshape(2, 3),
                        texttemplate="%{z}",
                        xaxis="x2",
                        text=np.array([["a<br>1", "b", "c"], ["d", "e", "f"]], dtype=object),  # hover text
                        customdata=np.array([[True, False, True], [False, True, False]]),
                    ),
                    dict(type="scatter", x=np.arange(3), y=[1, 2, 3], marker=dict(color=np.array([1.0, 2.0, 3.0]))),
                ],
                dict(
                    title=dict(text="t"), xaxis=dict(title=dict(text="first")), xaxis2=dict(title=dict(text="second"))
                ),
            )

        def reference(fig):  # what chart() did with plotly's own update functions (on a figure built for it)
            if presenting:
                fig.update_layout(font=dict(size=charts.PRESENTER_FONT))
                fig.update_xaxes(tickfont=dict(size=charts.PRESENTER_FONT), title_font=dict(size=charts.PRESENTER_FONT))
                fig.update_yaxes(tickfont=dict(size=charts.PRESENTER_FONT), title_font=dict(size=charts.PRESENTER_FONT))
            if share is not None:
                for trace in fig.data:
                    if trace.type == "heatmap":
                        font = charts.cell_font(len(trace.z[0]), share)
                        if font is None:
                            trace.texttemplate = None
                        else:
                            trace.textfont = dict(size=font)
            return fig

        before = charts.is_presenting
        charts.is_presenting = lambda: presenting
        try:
            fig = build()
            charts.chart(st, fig, key="ours", export=False, share=share)
            st.session_state["unchanged"] = isinstance(fig.data[0].z, np.ndarray) and fig.layout.font.size is None
            st.plotly_chart(reference(build(named_template=False)), key="theirs")
        finally:
            charts.is_presenting = before

    at = AppTest.from_function(app, args=(presenting, share), default_timeout=60).run()
    assert not at.exception
    ours, theirs = (json.loads(c.proto.spec) for c in at.get("plotly_chart"))
    # plotly sends the template's trace defaults for every trace type; chart() only the figure's types' (the
    # others apply to no trace): the same chart. Compared with that part cut from plotly's, all else equal.
    types = {trace["type"] for trace in theirs["data"]}
    assert set(ours["layout"]["template"]["data"]) == types < set(theirs["layout"]["template"]["data"])
    template = theirs["layout"]["template"]
    template["data"] = {t: v for t, v in template["data"].items() if t in types}
    return ours, theirs, at.session_state["unchanged"]


def test_the_same_figure_reaches_the_browser_as_through_plotlys_own_path():
    ours, theirs, unchanged = _both_ways(presenting=False, share=None)
    assert ours == theirs
    assert "bdata" in json.dumps(ours["data"][0]["z"])  # numpy arrays travel as typed arrays, as plotly sends them
    assert isinstance(ours["layout"]["template"], dict) and ours["layout"]["template"]["layout"]  # the contents
    assert unchanged  # the caller's figure is not altered


def test_presenter_mode_enlarges_every_axis_as_plotly_would():
    ours, theirs, unchanged = _both_ways(presenting=True, share=None)
    assert ours["layout"]["xaxis2"]["title"]["font"]["size"] == 18
    assert ours == theirs
    assert unchanged


def test_cell_numbers_are_sized_or_hidden_by_the_share_as_plotly_would():
    for share in (1.0, 0.02):
        ours, theirs, _ = _both_ways(presenting=False, share=share)
        theirs["data"][0] = {k: v for k, v in theirs["data"][0].items() if v is not None}  # None = unset
        assert ours == theirs
    assert "texttemplate" not in ours["data"][0]  # 2 % of the page: too small for a number


def test_a_dict_figure_gets_the_default_template_and_keeps_an_explicit_one():
    from ui.charts import _spec

    assert isinstance(_spec({"data": [], "layout": {}})["layout"]["template"], dict)
    explicit = {"data": {"bar": [{"type": "bar"}], "heatmap": [{"type": "heatmap"}]}, "layout": {"font": {}}}
    kept = _spec({"data": [{"type": "heatmap", "z": [[1]]}], "layout": {"template": explicit}})["layout"]["template"]
    assert kept == {"data": {"heatmap": [{"type": "heatmap"}]}, "layout": {"font": {}}}  # only the types drawn
    assert set(explicit["data"]) == {"bar", "heatmap"}  # the caller's template is not altered
    assert _spec({"data": [], "layout": {"template": {}}})["layout"]["template"] == {}
    z = np.ones((2, 2))
    spec = _spec({"data": [{"type": "heatmap", "z": z}], "layout": {}})
    assert isinstance(spec["data"][0]["z"], dict) and spec["data"][0]["z"]["shape"] == "2, 2"


def test_every_array_is_one_plotlys_fast_encoder_takes_at_the_first_try():
    """Hover text and booleans (arrays of Python objects to plotly) go as lists. As arrays, orjson refuses
    the figure: plotly then cleans it all and encodes it again, and orjson < 3.9.6 leaked every refused array."""
    import orjson
    import plotly.io as pio

    from figures.heatmaps import attention_heatmap
    from ui.charts import _spec
    from ui.streamlit_internals.plotly_chart import PreparedFigure

    weights = np.full((3, 3), 1 / 3)
    fig = attention_heatmap(weights, ["a", "b", "c"], ["a", "b", "c"], scores=np.zeros((3, 3)))
    spec = _spec(fig)
    assert isinstance(spec["data"][0]["text"], list)  # the hover text
    assert spec["data"][0]["text"][0][0] == fig.data[0].text[0][0]
    orjson.dumps(spec, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY)  # raises TypeError if not
    ours, theirs = json.loads(pio.to_json(PreparedFigure(spec), validate=False)), json.loads(fig.to_json())
    assert ours["data"] == theirs["data"]  # the same JSON as plotly's own path (the template: tested above)


def _plotlys_way(v):
    from _plotly_utils.utils import to_typed_array_spec

    new = to_typed_array_spec(v)
    return new.tolist() if isinstance(new, np.ndarray) and new.dtype.kind not in "iuf" else new


def test_numpy_arrays_become_the_typed_arrays_plotly_would_make():
    """ui.charts encodes numpy arrays itself (plotly's way goes through narwhals' checks): the same dtype
    codes, bytes, shapes and 64-bit downcasts, for every kind of array a figure can hold."""
    from ui.charts import _typed_array

    rng = np.random.default_rng(0)
    wide = rng.random((4, 6))
    cases = {
        "float64 2-D": wide,
        "float32": wide.astype(np.float32),
        "float16": wide.astype(np.float16),
        "transposed (not contiguous)": wide.T,
        "every other column": wide[:, ::2],
        "3-D": rng.random((2, 3, 4)),
        "int64 small": np.arange(-5, 5),
        "int64 int16-sized": np.array([-300, 30000]),
        "int64 int32-sized": np.array([0, 2**31 - 1]),
        "int64 too big for int32": np.array([0, 2**40]),
        "uint64 small": np.arange(5, dtype=np.uint64),
        "uint64 too big": np.array([0, 2**40], dtype=np.uint64),
        "int32": np.arange(7, dtype=np.int32),
        "uint8": np.arange(7, dtype=np.uint8),
        "bool": np.array([[True, False], [False, True]]),
        "text": np.array(["a", "b<br>c"]),
        "objects": np.array([["a", 1], ["b", 2.5]], dtype=object),
        "empty float": np.zeros(0),
        "empty 2-D": np.zeros((0, 3)),
    }
    for name, v in cases.items():
        ours, theirs = _typed_array(v), _plotlys_way(v)
        if isinstance(theirs, np.ndarray):
            assert isinstance(ours, np.ndarray) and ours.dtype == theirs.dtype, name
            np.testing.assert_array_equal(ours, theirs, err_msg=name)
        else:
            assert ours == theirs, name
