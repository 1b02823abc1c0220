"""The Playground's boxes that live in ui/ modules: the step-by-step tables (ui/playground_steps.py) and the fixed
matrix against attention (ui/playground_why.py)."""

import numpy as np

from attention import attention_steps
from figures.heatmaps import HIDDEN, MINUS_INF
from lessons.examples import random_example
from tests.apptest_helpers import open_page
from ui import classroom_open_question
from ui.playground_steps import matrix_table


def test_a_matrix_table_writes_minus_infinity_and_hidden_cells_and_numbers_repeated_labels():
    a = np.array([[1.23456, -np.inf], [np.nan, -0.0001]])
    table = matrix_table(a, ["the", "the"], ["x", "y"])
    assert table.values.tolist() == [["1.235", MINUS_INF], [HIDDEN, "0.000"]]  # never -0.000
    assert list(table.index) == ["the", "the·2"] and list(table.columns) == ["x", "y"]
    assert matrix_table(a, ["a", "b"], ["x", "y"], digits=1).iloc[0, 0] == "1.2"


def test_the_step_by_step_box_shows_the_cores_seven_matrices():
    seq = random_example(4, 3, 2, seed=5).seq
    at = open_page("pages/playground.py", state={"seq": seq, "pg_steps": True, "pg_causal": True})
    assert not at.exception
    steps = attention_steps(seq.q, seq.k, seq.v, causal=True, scale=True)
    tables = {t.value.shape: t.value for t in at.dataframe if "token" not in t.value.columns}
    weights = tables[(4, 5)]  # the weights with each row's sum
    np.testing.assert_allclose(weights.iloc[:, :4].astype(float).to_numpy(), steps.weights, atol=5e-4)
    assert list(weights.columns)[-1] == "row sum" and (weights.iloc[:, -1] == "1.000").all()
    assert any("−∞ above the diagonal" in m.value for m in at.markdown)
    assert any("**5. Masked scores** &nbsp; `4 × 4`" in m.value for m in at.markdown)
    closed = open_page("pages/playground.py", state={"seq": seq})
    assert not [t for t in closed.dataframe if "row sum" in t.value.columns]  # drawn only while open


def test_the_why_box_is_hidden_while_the_class_answers_and_shows_its_figures_otherwise(monkeypatch):
    seq = random_example(4, 2, 2, seed=1).seq
    at = open_page("pages/playground.py", state={"seq": seq, "pg_why": True})
    assert not at.exception
    assert not [c for c in at.caption if "Hidden while the class answers" in c.value]
    assert any("differ from A's by at most" in m.value for m in at.markdown)
    asked = {"page": "playground", "question": "argmax", "query": 1}
    monkeypatch.setattr(classroom_open_question, "asked_here", lambda: asked)
    hidden = open_page("pages/playground.py", state={"seq": seq, "pg_why": True})
    assert not hidden.exception
    assert [c for c in hidden.caption if "Hidden while the class answers the teacher's question" in c.value]
    assert not any("differ from A's by at most" in m.value for m in hidden.markdown)
    asked["query"] = 99  # a query the sequence does not have: no row gives its answer away, nothing is hidden
    shown = open_page("pages/playground.py", state={"seq": seq, "pg_why": True})
    assert any("differ from A's by at most" in m.value for m in shown.markdown)
