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


CSV_MAX_WEIGHTS = 72 * 128 * 128  # past this (about 15 MB of text) the exact weights come as .npz only


def attentions_npz(attentions: np.ndarray, tokens: Sequence[str]) -> bytes:
    """Every head's weights, bit for bit, as a NumPy .npz: `attentions` (n_layers, n_heads, n, n) float32
    (indices from 0) and `tokens` (n,). Read back with np.load(path)["attentions"]."""
    buf = io.BytesIO()
    np.savez(buf, attentions=np.asarray(attentions), tokens=np.array(list(tokens), dtype=str))
    return buf.getvalue()


def attentions_csv(attentions: np.ndarray, tokens: Sequence[str]) -> str:
    """Every head's weights as CSV, one line per (layer, head, query), one column per key; layers and
    heads counted from 1 as on the page. 9 significant digits: a float32 written so reads back unchanged.

    Shapes: attentions (n_layers, n_heads, n, n); tokens n strings (quoted as CSV needs).
    """
    n_layers, n_heads, n, _ = attentions.shape
    head = io.StringIO()
    writer = csv.writer(head)  # lines end in \r\n, as RFC 4180 says; a field holding \r or \n is quoted
    writer.writerow(["layer", "head", "query", "query_token", *(f"key {j}: {tok}" for j, tok in enumerate(tokens))])
    quoted = []
    for tok in tokens:  # each token quoted once, the way the csv module quotes it
        cell = io.StringIO()
        csv.writer(cell).writerow([tok])
        quoted.append(cell.getvalue().removesuffix("\r\n"))
    numbers = io.StringIO()
    np.savetxt(numbers, np.asarray(attentions).reshape(-1, n), fmt="%.9g", delimiter=",")  # (L*H*n, n)
    lines = numbers.getvalue().splitlines()
    body = (
        f"{layer + 1},{h + 1},{i},{quoted[i]},{lines[(layer * n_heads + h) * n + i]}"
        for layer in range(n_layers)
        for h in range(n_heads)
        for i in range(n)
    )
    return head.getvalue() + "\r\n".join(body) + "\r\n"
