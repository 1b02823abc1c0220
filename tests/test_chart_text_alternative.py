"""Every heatmap has a text alternative (#32): a description and its exact numbers as a table, one keyboard
step away from the chart (ui.charts._numbers_box, figures.export.heatmap_tables)."""

import numpy as np
import pytest

from attention import attention_steps
from figures.export import figure_to_csv, heatmap_tables
from figures.heads import heads_grid
from figures.heatmaps import attention_heatmap
from harness.load.plan import PAGES
from tests.apptest_helpers import run_page
from ui.charts import NUMBERS_LABEL, without_template


def test_a_heatmap_becomes_a_described_table_of_its_exact_numbers():
    w = np.array([[1.0, 0.0], [0.25, 0.75]])
    fig = attention_heatmap(w, ["the", "the"], ["the", "the"], allowed=np.tril(np.ones((2, 2), bool)))
    (table,) = heatmap_tables(fig)
    assert table["values"] == [["1.000", "0.000"], ["0.250", "0.750"]]
    assert table["rows"] == table["columns"] == ["the", "the·2"]  # headers must differ; the words are kept
    assert "2 rows × 2 columns" in table["description"] and "from 0 to 1" in table["description"]


def test_a_masked_score_is_written_out_not_left_blank():
    fig = attention_heatmap(np.eye(2), list("ab"), list("ab"))
    fig_scores = {"data": [{**fig.spec["data"][0], "z": [[1.0, -np.inf], [0.5, 2.0]]}], "layout": fig.spec["layout"]}
    assert heatmap_tables(fig_scores)[0]["values"][0][1] == "−∞"


def test_a_hidden_value_is_written_as_its_cell_shows_it():
    # a class question hides a row (NaN): the table says ? as the heatmap's cells do, not NaN
    fig = attention_heatmap(np.array([[np.nan, np.nan], [0.25, 0.75]]), ["a", "b"], ["a", "b"])
    (table,) = heatmap_tables(fig)
    assert table["values"] == [["?", "?"], ["0.250", "0.750"]]


def test_small_multiples_give_one_table_per_head_named_by_its_title():
    w = np.random.default_rng(1).dirichlet(np.ones(3), size=(2, 3))
    tables = heatmap_tables(heads_grid(w, list("abc"), ["head one", "head two"]))
    assert [t["description"].split(":")[0] for t in tables] == ["head 1", "head 2"]
    np.testing.assert_allclose(np.array(tables[1]["values"], float), w[1], atol=5e-4)


def test_the_playground_heatmap_opens_its_numbers_as_a_table():
    at = run_page("pages/playground.py", state={"pg_heatmap_numbers": True})
    assert not at.exception
    seq = at.session_state["seq"]
    weights = attention_steps(seq.q, seq.k, seq.v).weights
    shown = [t.value for t in at.table]
    assert any(
        frame.shape == weights.shape and np.allclose(frame.to_numpy(float), weights, atol=5e-4) for frame in shown
    )
    closed = run_page("pages/playground.py")
    assert not closed.table  # drawn only while open
    assert any(e.label == NUMBERS_LABEL for e in closed.expander)
    # one control under a heatmap: its numbers box holds the files, no Export menu beside it
    assert [b.label for b in at.get("download_button")] == ["CSV", "JSON"]
    assert [p.proto.popover.label for p in closed.get("popover")] == []


@pytest.mark.parametrize("page", [p for p in PAGES if p not in ("class", "predict")])  # no chart until asked
def test_every_numbers_box_of_every_page_opens_as_tables_of_numbers(page):
    """Open every chart's "Numbers of this chart" box at once: each gives tables (or says why it cannot),
    whatever form the page's figures take (a plotly figure, or figure JSON with plotly's typed arrays)."""
    closed = run_page(f"pages/{page}.py")
    keys = [e.key for e in closed.expander if e.label == NUMBERS_LABEL]
    assert keys, f"{page}: no chart with a numbers box"
    at = run_page(f"pages/{page}.py", state={k: True for k in keys})
    assert not at.exception, f"{page}: {[e.value for e in at.exception]}"
    opened = [e for e in at.expander if e.label == NUMBERS_LABEL]
    for box in opened:
        tables = [*box.table, *box.dataframe]
        said = [c.value for c in box.caption]
        assert tables or any("no numbers to list" in s for s in said), f"{page}: {box.key} is empty"
        for table in box.table:
            assert table.value.size and not table.value.isna().any().any(), f"{page}: {box.key}"


def test_the_heatmaps_of_an_untitled_chart_are_named_by_their_number():
    w = np.eye(2)
    fig = {"data": [{"type": "heatmap", "z": w}, {"type": "heatmap", "z": w}]}
    assert [t["description"].split(":")[0] for t in heatmap_tables(fig)] == ["Heatmap 1", "Heatmap 2"]
    fig["layout"] = {"title": {"text": "Two"}}
    assert [t["description"].split(":")[0] for t in heatmap_tables(fig)] == ["Two, part 1", "Two, part 2"]


def test_figure_json_with_typed_arrays_gives_the_same_numbers_as_the_figure():
    """A page may hand over figure JSON (ui.charts.cached_figure), where plotly writes arrays as base64."""
    w = attention_steps(*np.random.default_rng(3).normal(size=(3, 4, 2)), causal=True).weights
    fig = attention_heatmap(w, list("abcd"), list("abcd"))
    as_json = without_template(fig.to_plotly_json())
    assert isinstance(as_json["data"][0]["z"], dict) and "bdata" in as_json["data"][0]["z"]
    assert heatmap_tables(as_json) == heatmap_tables(fig)
    assert figure_to_csv(as_json) == figure_to_csv(fig)
    assert ",z,3,3," in figure_to_csv(as_json)  # the weights are in the file, not left out
