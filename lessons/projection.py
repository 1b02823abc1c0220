"""Queries and keys as points: a head's 2n vectors of d_head numbers, drawn in 2-D by PCA.

PCA, by the singular value decomposition of the centred points (numpy only):

    X_c = X - mean(X) = U S Vᵀ,    coordinates = X_c V[:, :2] = U[:, :2] S[:2]

The two axes are the directions along which the points spread most; the share of the spread they
keep is (s_1² + s_2²) / Σ s_i². Everything else is dropped, so two points close on the picture may be
far apart in the dimensions left out (never the reverse: a projection never lengthens a distance). And
attention does not use closeness at all: a query's score for a key is their dot product q·k/√d_head,
which also grows with the vectors' lengths. A picture of the points is a map; the weights are the territory.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention.checks import as_real_array, check_not_empty

PCA_LATEX = (
    r"X_c = X - \bar{x} = U S V^\top,\quad \text{coordinates} = X_c\, V_{:,1:2},\quad"
    r"\text{share kept} = \frac{s_1^2 + s_2^2}{\sum_i s_i^2}"
)


@dataclass(frozen=True)
class Projection:
    """Points projected on their two principal axes.

    Shapes: coords (m, 2); axes (2, d), unit rows (a zero row where the points span fewer than 2
    directions); mean (d,); variances (min(m, d),), the spread along every principal axis, largest
    first (s_i² / m). `share` = variances[:2].sum() / variances.sum(), 1.0 when all points coincide.
    """

    coords: np.ndarray
    axes: np.ndarray
    mean: np.ndarray
    variances: np.ndarray
    share: float


def pca_2d(points) -> Projection:
    """The 2-D PCA of `points` by numpy's SVD, in float64. Shapes: points (m, d) -> Projection.

    Each axis's sign is fixed so that its largest component is positive (an SVD's signs are arbitrary),
    so the same points always give the same picture.
    """
    x = as_real_array(points, "points")
    if x.ndim != 2:
        raise ValueError(f"points has shape {x.shape}; expected (m, d): m points of d numbers")
    check_not_empty(x, "points")
    m, d = x.shape
    x = x.astype(np.float64)
    mean = x.mean(axis=0)  # (d,)
    centred = x - mean  # (m, d)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)  # s (r,), vt (r, d), r = min(m, d)
    axes = np.zeros((2, d))
    k = min(2, vt.shape[0])
    axes[:k] = vt[:k]
    biggest = np.abs(axes).argmax(axis=1)  # (2,)
    axes *= np.where(axes[np.arange(2), biggest] < 0, -1.0, 1.0)[:, None]  # the largest component positive
    coords = centred @ axes.T  # (m, 2)
    variances = s**2 / m  # (r,)
    total = variances.sum()
    share = float(variances[:2].sum() / total) if total > 0 else 1.0
    return Projection(coords, axes, mean, variances, share)


def queries_and_keys(queries, keys) -> Projection:
    """One projection for a head's queries and keys together, so both live on the same two axes.

    Shapes: queries (n, d_head), keys (m, d_head) -> coords (n + m, 2): the queries first, then the keys.
    """
    q = as_real_array(queries, "queries")
    k = as_real_array(keys, "keys")
    if q.ndim != 2 or k.ndim != 2 or q.shape[1] != k.shape[1]:
        raise ValueError(f"queries has shape {q.shape} and keys {k.shape}; expected (n, d_head) and (m, d_head)")
    return pca_2d(np.concatenate([q, k]))  # (n + m, d_head)


def query_readout(queries, keys, coords: np.ndarray, query: int, key_positions) -> list[dict]:
    """What the picture says about one query's keys beside what attention computes: for each key in
    `key_positions`, its score q·k/√d_head (what the softmax reads) and its distance and closeness rank
    (1 = nearest) among all key points on the picture.

    Shapes: queries (n, d_head), keys (n, d_head), coords (2n, 2) from `queries_and_keys`, queries first.
    """
    q = np.asarray(queries, dtype=np.float64)
    k = np.asarray(keys, dtype=np.float64)
    n, d_head = q.shape
    scores = k @ q[query] / np.sqrt(d_head)  # (n,)
    distances = np.linalg.norm(coords[n:] - coords[query], axis=1)  # (n,): the query's point to every key's
    ranks = np.empty(n, dtype=int)
    ranks[np.argsort(distances, kind="stable")] = np.arange(1, n + 1)
    return [
        {"key": int(j), "score": float(scores[j]), "distance": float(distances[j]), "closeness_rank": int(ranks[j])}
        for j in key_positions
    ]
