"""ui.tables: Arrow tables reach the browser with the columns, types and values a DataFrame would send."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest_helpers import TIMEOUT
from ui.tables import arrow_rows, arrow_table

COLUMNS = {
    "head": range(1, 4),
    "token": ["the", "cat", "sat"],
    "weight": np.array([0.125, 0.5, 0.375]),
    "rounded": [round(x, 3) for x in (0.1234, 1 / 3, 2.0)],
    "check": ["✅", "❌", "—"],
    "float32": np.array([1.5, 2.5, 3.5], dtype=np.float32),
}


def _shown(make):
    """What st.dataframe sends for the table `make` builds, read back as the browser's data."""

    def app(make):
        import streamlit as st

        st.dataframe(make(), hide_index=True)

    at = AppTest.from_function(app, args=(make,), default_timeout=TIMEOUT).run()
    assert not at.exception
    return at.dataframe[0].value


def _as_dataframe():
    return pd.DataFrame({k: list(v) if isinstance(v, range) else v for k, v in COLUMNS.items()})


def _as_arrow():
    return arrow_table(COLUMNS)


def test_an_arrow_table_sends_what_the_dataframe_sent():
    ours, before = _shown(_as_arrow), _shown(_as_dataframe)
    assert list(ours.columns) == list(COLUMNS)
    pd.testing.assert_frame_equal(ours, before)
    assert ours["head"].tolist() == [1, 2, 3] and ours["weight"].tolist() == [0.125, 0.5, 0.375]


def test_rows_become_the_same_table_as_their_columns():
    rows = [{"position": i, "token": t, "diff": d} for i, (t, d) in enumerate(zip("abc", (0.0, 1e-16, 2.5)))]
    table = arrow_rows(rows)
    assert table.column_names == ["position", "token", "diff"]
    assert table.to_pylist() == rows
    assert table.equals(arrow_table({"position": [0, 1, 2], "token": list("abc"), "diff": [0.0, 1e-16, 2.5]}))


def test_columns_of_different_lengths_are_refused_by_name():
    with pytest.raises(ValueError, match=r"one length.*'a': 2.*'b': 3"):
        arrow_table({"a": [1, 2], "b": [1, 2, 3]})
