"""2 · RoPE, rotary position embedding (Su et al. 2021): q and k rotated by their positions, so that a score
depends on the offset m − n only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention.positions import rope
from lessons.positions.toy import diff_text
from locales import marked, tr

ROPE_INTRO = marked(
    "Rotate q and k instead of adding anything to the embeddings: each pair (x₂ᵢ, x₂ᵢ₊₁) of a query or key at "
    "position p turns by the angle p θᵢ. The values are not rotated. A rotation keeps lengths, and the score "
    "of a rotated query with a rotated key sees only the **difference** of their angles. With R_p the rotation "
    "of every pair at position p, a query at position m and a key at position n score:"
)

OFFSETS = np.arange(-32, 33)  # the x axis of the page's curve of a score by offset (rope_score_by_offset)
ROPE_ROUNDING = 1e-9  # relative: the angles p·θ keep fewer digits as p grows (measured 3e-13 at p = 10^4)


@dataclass(frozen=True)
class RopeOffsetCheck:
    """RoPE scores with positions 0..n-1 and with every position moved by `offset`.

    Shapes: scores, moved (n, n); max_diff and norm_diff are rounding if RoPE does what it says."""

    offset: int
    scores: np.ndarray
    moved: np.ndarray
    max_diff: float
    norm_diff: float  # largest change of a vector's length made by the rotation

    @property
    def tolerance(self) -> float:
        return ROPE_ROUNDING * max(1.0, float(np.max(np.abs(self.scores))))

    @property
    def passed(self) -> bool:
        """The scores did not move, up to rounding: they depend on the offset m - n only."""
        return self.max_diff <= self.tolerance

    def sentence(self) -> str:
        """The check's outcome, as the page says it."""
        n = self.scores.shape[0]
        if not self.passed:
            return tr("The scores moved by {diff} when every position moved.", diff=diff_text(self.max_diff))
        values = dict(
            last=n - 1,
            first_moved=self.offset,
            last_moved=self.offset + n - 1,
            diff=diff_text(self.max_diff),
            norm=diff_text(self.norm_diff),
        )
        if self.norm_diff == 0:
            return tr(
                "Positions 0…{last} and {first_moved}…{last_moved} give the same scores: they differ by at most "
                "{diff} (rounding), and no vector's length changed at all.",
                **values,
            )
        return tr(
            "Positions 0…{last} and {first_moved}…{last_moved} give the same scores: they differ by at most "
            "{diff} (rounding), and no vector's length moved by more than {norm} (rounding).",
            **values,
        )


def rope_offset_check(q, k, offset: int) -> RopeOffsetCheck:
    """Rotate q and k at positions 0..n-1, then at offset..offset+n-1, and compare their scores q_m · k_n."""
    q, k = np.asarray(q, dtype=np.float64), np.asarray(k, dtype=np.float64)
    n = q.shape[0]
    scores = rope(q) @ rope(k).T  # (n, n)
    moved_positions = np.arange(n) + offset
    moved = rope(q, moved_positions) @ rope(k, moved_positions).T  # (n, n)
    norm_diff = float(np.max(np.abs(np.linalg.norm(rope(q, moved_positions), axis=-1) - np.linalg.norm(q, axis=-1))))
    return RopeOffsetCheck(offset, scores, moved, float(np.max(np.abs(moved - scores))), norm_diff)


def rope_offset_paragraph(first_word: str) -> str:
    """Introduces the score-by-offset curve of the first word's query against its own key (already escaped)."""
    return tr(
        "**The score depends on the offset alone.** Word 1's query ('{word}') against its own key, placed m − n "
        "positions apart: the score changes with the distance, the same wherever the pair stands.",
        word=first_word,
    )


def rope_score_by_offset(q_vec, k_vec, offsets) -> np.ndarray:
    """rope(q at position Δ) · rope(k at position 0) for each offset Δ: the score as a function of distance.

    Shapes: q_vec, k_vec (d,), offsets (m,) whole numbers -> (m,).
    """
    offsets = np.asarray(offsets)
    q_rot = rope(np.broadcast_to(q_vec, (len(offsets), len(q_vec))), offsets)  # (m, d): q at each position Δ
    return q_rot @ rope(np.asarray(k_vec)[None, :])[0]  # (m,)
