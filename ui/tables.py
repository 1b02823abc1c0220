"""Tables for st.dataframe as Arrow tables, the form Streamlit sends to the browser.

Streamlit turns a pandas DataFrame into Arrow on every run. For the small tables of this app, building the
DataFrame and converting it cost 0.6 ms a table on the server; building the Arrow table directly costs
0.03 ms and sends the same columns, types and values. Only for tables shown without an index
(`hide_index=True`): an Arrow table has no index to show.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa

from locales import tr


def arrow_table(columns: Mapping[str, Any]) -> pa.Table:
    """Columns in order, name -> values (a list, a range or a 1-D numpy array), as one Arrow table."""
    lengths = {name: len(values) for name, values in columns.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"the columns of a table must have one length; got {lengths}")
    return pa.table({name: list(v) if isinstance(v, range) else v for name, v in columns.items()})


def arrow_rows(rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """Rows (dicts with the same keys, in column order) as one Arrow table."""
    return pa.Table.from_pylist(list(rows))


def show_vectors(where, tokens, numbered: bool = False, number_format: str | None = None, **matrices) -> None:
    """In `where` (st or a column): token, then the matrices side by side, one row per position (columns token,
    q1.., k1.., v1.. for q=, k=, v=), narrow columns: one table where two or three would each need a column of the
    page. `numbered`: a first column "i", the position (0, 1, ...) that names q_0, k_0... elsewhere on the page."""
    import streamlit as st

    columns = {f"{name}{c + 1}": a[:, c] for name, a in matrices.items() for c in range(a.shape[1])}
    first = {"i": list(range(len(tokens)))} if numbered else {}
    where.dataframe(
        arrow_table({**first, "token": list(tokens), **columns}),
        hide_index=True,
        width="stretch",
        column_config={
            "i": st.column_config.NumberColumn("i", width=32),
            # Translators: a table's column header over the tokens (the words of the example)
            "token": st.column_config.TextColumn(tr("token"), width=68),
            **{c: st.column_config.NumberColumn(c, format=number_format, width=46) for c in columns},
        },
    )
