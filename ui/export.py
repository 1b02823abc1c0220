"""The numbers behind a page, as CSV and JSON for download. Pure functions (no streamlit)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence

import numpy as np


def _jsonable(a: np.ndarray) -> list:
    """Nested lists with -inf written as the string "-inf" (JSON has no infinities)."""
    return [[x if np.isfinite(x) else str(x) for x in row] for row in np.asarray(a, dtype=float).tolist()]


def matrices_to_json(tokens: Sequence[str], matrices: Mapping[str, np.ndarray], **settings) -> str:
    """{"tokens": [...], "settings": {...}, "matrices": {name: rows}} as indented JSON."""
    return json.dumps(
        {
            "tokens": list(tokens),
            "settings": settings,
            "matrices": {name: _jsonable(a) for name, a in matrices.items()},
        },
        indent=2,
    )


def matrices_to_csv(tokens: Sequence[str], matrices: Mapping[str, np.ndarray]) -> str:
    """One tidy table: matrix, row, row_token, column, value (one line per entry)."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["matrix", "row", "row_token", "column", "value"])
    for name, a in matrices.items():
        for i, row in enumerate(np.asarray(a, dtype=float)):
            for j, x in enumerate(row):
                writer.writerow([name, i, tokens[i] if i < len(tokens) else "", j, repr(float(x))])
    return buf.getvalue()
