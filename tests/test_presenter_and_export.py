"""ui/presenter.py, figures/export.py and ui/export.py: presenter mode, the share link and the export of every
chart's numbers."""

import csv
import html
import io
import json

import numpy as np

from figures.export import figure_to_csv, figure_to_json
from figures.heatmaps import attention_heatmap
from tests.apptest_helpers import plotly_figures, run_page


def test_chart_numbers_export_exactly_with_their_labels():
    w = np.array([[1.0, 0.0], [0.25, 0.75]])
    fig = attention_heatmap(w, ["a", "b"], ["c", "d"])
    doc = json.loads(figure_to_json(fig))
    assert doc["axis_labels"] == {"xaxis": ["c", "d"], "yaxis": ["a", "b"]}
    assert np.array_equal(np.array(doc["traces"][0]["z"]), w)
    rows = [r for r in csv.DictReader(io.StringIO(figure_to_csv(fig))) if r["field"] == "z"]
    assert [(r["row"], r["column"], float(r["value"])) for r in rows] == [
        ("0", "0", 1.0),
        ("0", "1", 0.0),
        ("1", "0", 0.25),
        ("1", "1", 0.75),
    ]


def test_export_writes_minus_infinity_as_text():
    from figures.heatmaps import matrix_heatmap

    fig = matrix_heatmap(np.array([[1.0, -np.inf]]), ["a"], ["x", "y"])
    assert "NaN" not in figure_to_json(fig)  # -inf is drawn as a gap (NaN) and exported as the string "nan"


def test_presenter_mode_from_the_url_enlarges_chart_text():
    normal = run_page()
    presenting = run_page(query={"present": "1"})
    assert not presenting.exception
    assert presenting.sidebar.toggle(key="presenter").value is True
    assert normal.sidebar.toggle(key="presenter").value is False
    size = lambda at: plotly_figures(at)[0]["data"][0]["textfont"]["size"]  # noqa: E731
    assert size(presenting) > size(normal)
    assert presenting.query_params["present"] == "1"  # the page keeps it when it writes its own state


def test_switching_presenter_mode_on_and_off_in_the_sidebar():
    at = run_page()
    at.sidebar.toggle(key="presenter").set_value(True).run()
    assert not at.exception and at.query_params["present"] == "1"
    at.sidebar.toggle(key="presenter").set_value(False).run()
    assert "present" not in at.query_params


def test_a_malformed_presenter_flag_warns_and_stays_off():
    at = run_page(query={"present": "<script>alert(1)</script>"})
    assert not at.exception
    assert at.sidebar.toggle(key="presenter").value is False
    assert any("'present' should be 0 or 1" in w.value for w in at.sidebar.warning)


def test_the_share_link_carries_the_page_state():
    at = run_page()
    at.toggle(key="pg_causal").set_value(True).run()
    (box,) = [h.proto.body for h in at.sidebar.get("html") if "share-link" in h.proto.body]
    link = html.unescape(box.split("'share-link'>")[1].split("</div>")[0])
    assert "causal=1" in link and "tokens=north+east+south+west" in link


def test_every_chart_offers_its_numbers_as_files_when_its_box_or_menu_is_open():
    at = run_page()
    closed = [b.label for b in at.get("download_button")]
    assert "CSV" not in closed and "JSON" not in closed  # not drawn (nor registered) on every run
    at.session_state["pg_geometry_box"] = True  # the geometry view's own box, open
    # what opening them in the browser does: the heatmap's numbers box (its table and files), the geometry view's
    # Export menu (a chart without heatmaps)
    at.session_state["pg_heatmap_numbers"] = True
    at.session_state["pg_geometry_export"] = True
    at.run()
    labels = [b.label for b in at.get("download_button")]
    assert not at.exception and labels.count("CSV") == 2 and labels.count("JSON") == 2


def test_page_links_name_the_page_once_whatever_the_browser_reports():
    from ui.presenter import page_link

    params = {"n_heads": "4", "tokens": "a b"}
    expected = "http://h:1/heads?n_heads=4&tokens=a+b"
    assert page_link("http://h:1", "heads", params) == expected
    assert page_link("http://h:1/heads", "heads", params) == expected
    assert page_link("http://h:1/heads/", "heads", params) == expected
    assert page_link("http://h:1/", "", {"causal": "1"}) == "http://h:1/?causal=1"
    assert page_link("", "", {}) == "/"
    # a path that names no page (Streamlit showed the default page under it) is not repeated
    assert page_link("http://h:1/no_such_page/", "", {"causal": "1"}) == "http://h:1/?causal=1"
    assert page_link("http://h:1/causal", "heads", params) == expected
    # behind a base path (server.baseUrlPath), the link keeps it
    assert page_link("http://h:1/course/no_such_page", "", {}, base_path="/course/") == "http://h:1/course/"
    assert page_link("http://h:1/course/heads", "heads", params, base_path="course") == (
        "http://h:1/course/heads?n_heads=4&tokens=a+b"
    )


def test_exact_weights_export_reads_back_bit_for_bit():
    import csv
    import io

    import numpy as np

    from ui.export import attentions_csv, attentions_npz

    rng = np.random.default_rng(0)
    weights = rng.random((2, 3, 4, 4)).astype(np.float32)
    weights /= weights.sum(axis=-1, keepdims=True)
    tokens = ["[CLS]", 'a,"b"', "line\nbreak\r", "[SEP]"]  # commas, quotes and line breaks survive
    saved = np.load(io.BytesIO(attentions_npz(weights, tokens)))
    assert saved["attentions"].dtype == np.float32 and np.array_equal(saved["attentions"], weights)
    assert saved["tokens"].tolist() == tokens
    header, *rows = list(csv.reader(io.StringIO(attentions_csv(weights, tokens))))
    assert header[:4] == ["layer", "head", "query", "query_token"] and header[5] == 'key 1: a,"b"'
    assert len(rows) == 2 * 3 * 4
    for row in rows:
        layer, head, query = (int(x) for x in row[:3])  # layers and heads from 1, as on the page
        assert row[3] == tokens[query]
        back = np.array([float(x) for x in row[4:]], dtype=np.float32)
        assert np.array_equal(back, weights[layer - 1, head - 1, query])  # 9 digits: the same float32
