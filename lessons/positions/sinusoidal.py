"""2 · Sinusoidal positions (Vaswani et al. 2017): a fixed table of sines and cosines, added to the embeddings; a
shift by k positions is one rotation M_k, the same for every position.
"""

from __future__ import annotations

import numpy as np

from attention.positions import frequencies, sinusoidal_encoding
from lessons.positions.toy import diff_text
from locales import marked, num, tr

TABLE_POSITIONS = 100  # rows of the table the page draws, and the positions its shift is checked on

SINUSOIDAL_INTRO = marked(
    "No training: position p gets a fixed vector of sines and cosines, one frequency per pair of dimensions, "
    "from fast (θ₀ = 1 radian per position) to slow, and it is added to the embedding."
)

SHIFT_IS_ROTATION = marked(
    "**A shift is a rotation.** Pair i turns at θ_i = base^(−2i/d) radians per position, so moving k positions "
    "adds kθ_i to its angle. By the angle-sum formulas, each (sin, cos) pair is rotated by kθ_i: PE[p + k] is "
    "PE[p] times one fixed matrix M_k, the same for every p. That is why the paper hoped a model could learn to "
    "attend by relative position."
)

SHIFT_LATEX = (
    r"PE_{p+k} = PE_p\, M_k,\qquad M_k = \mathrm{diag}\!\left(\begin{pmatrix} \cos k\theta_i & -\sin k\theta_i \\"
    r" \sin k\theta_i & \cos k\theta_i \end{pmatrix}\right)_{i < d/2}"
)


def shift_matrix(k: int, d: int, base: float = 10000.0) -> np.ndarray:
    """M_k with PE[p + k] = PE[p] @ M_k for every p: one 2×2 rotation by k θ_i per pair (sin, cos).

    Shapes: -> (d, d), block diagonal, orthogonal; it depends on k, never on p.
    """
    m = np.zeros((d, d))
    for i, theta in enumerate(frequencies(d, base)):
        c, s = np.cos(k * theta), np.sin(k * theta)
        m[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [[c, -s], [s, c]]  # [sin a, cos a] @ this = [sin(a+b), cos(a+b)]
    return m


def shift_error(n: int, d: int, k: int, base: float = 10000.0) -> float:
    """The largest |PE[p + k] - PE[p] M_k| over positions p = 0..n-1 (rounding if the shift is a rotation)."""
    pe = sinusoidal_encoding(n + k, d, base)  # (n + k, d)
    return float(np.max(np.abs(pe[k:] - pe[:n] @ shift_matrix(k, d, base))))


def shift_matrix_caption(shift: int, table_d: int, shown: int) -> str:
    """What the drawn corner of M_shift is: its first `shown` rows and columns."""
    return tr(
        "M_{shift} for d = {d}, its first {shown} rows and columns (the fastest pairs): one 2×2 rotation per pair, "
        "zeros elsewhere.",
        shift=shift,
        d=table_d,
        shown=shown,
    )


def row_length(d: int) -> float:
    """The length of every row of the sinusoidal table of width d: d/2 pairs (sin, cos), each of length 1."""
    return float(np.sqrt(d / 2))


def row_length_paragraph(shift: int, table_d: int) -> str:
    """M_shift moves every position alike, and every row of the width-`table_d` table has the same length."""
    return tr(
        "M_{shift} does not depend on p: the same matrix moves position 0 to {shift}, and 50 to {moved_50}. "
        "Each 2×2 block keeps lengths, and each (sin, cos) pair has length 1, so every row of the table has the "
        "same length, √(d/2) = √{half} ≈ {length}.",
        shift=shift,
        moved_50=50 + shift,
        half=table_d // 2,
        length=num(row_length(table_d), ".3g"),
    )


SHIFT_ROUNDING = 1e-11  # measured: 1e-14 at d = 256, k = 64


def shift_sentence(n: int, d: int, k: int) -> tuple[bool, str]:
    """Whether PE[p + k] = PE[p] M_k for p = 0..n-1 up to rounding, and the sentence saying so."""
    error = shift_error(n, d, k)
    if error > SHIFT_ROUNDING:
        return False, tr("PE[p + {k}] and PE[p] M_{k} differ by {diff}.", k=k, diff=diff_text(error))
    return True, tr(
        "For every p from 0 to {last}, PE[p + {k}] = PE[p] M_{k} to within {diff} (rounding), with d = {d}.",
        last=n - 1,
        k=k,
        diff=diff_text(error),
        d=d,
    )
