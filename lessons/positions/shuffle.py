"""1 · Order is invisible: shuffle the words, run the head on them, undo the shuffle on the outputs and compare
(lessons/positions/__init__.py says why they match without positions); on the toy head and on MiniLM's first
layer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from attention.checks import check_positive_int
from attention.dot_product import AttentionSteps
from lessons.positions.alibi import alibi_unmasked
from lessons.positions.learned import minilm_head, minilm_pieces
from lessons.positions.toy import METHOD_LABELS, SHORT_NAMES, TOY_METHODS, ToyHead, attend, diff_text
from locales import marked, tr

INTRODUCTION = marked(
    "Attention compares every query with every key and averages the values. Nothing in that says **where** a "
    "token stands: to attention, a sentence is a bag of words. This is the first surprise of the mechanism, and "
    "one of the places where later models changed the original design (Vaswani et al. 2017), beside where the "
    "normalisation sits, the activation function, decoder-only stacks (one causal stack, no encoder) and shared "
    "key-value heads (grouped-query attention, Ainslie et al. 2023). Below: the proof that order is invisible, "
    "four ways models add it back, and masks that use position to limit what each token may read."
)

SHUFFLE_INTRO = marked(
    "Shuffle the words with a permutation matrix P (each row of P is a row of the identity, in a new order). The "
    "scores S = Q Kᵀ / √d (d: the length of q and k) become P S Pᵀ, the softmax of each row is shuffled the "
    "same way, and the output is P times the old output: each word's output vector is **unchanged**, only "
    "listed in a new order."
)

SHUFFLE_LATEX = (
    r"\mathrm{Attention}(PQ,\ PK,\ PV) = \mathrm{softmax}\!\left(\frac{P Q K^\top P^\top}{\sqrt{d}}\right) P V"
    r" = P\,\mathrm{Attention}(Q, K, V)"
)
ROUNDING = 1e-12  # relative: a difference this small is the order of the sums, not the positions


# ---------------------------------------------------------------- a shuffle


def permutation(n: int, shuffle: int) -> np.ndarray:
    """The shuffle number `shuffle` of n positions: 0 keeps the order, any other number a seeded permutation
    that moves at least one position (for n >= 2). Shapes: -> (n,), shuffled[i] = original[perm[i]]."""
    n = check_positive_int(n, "n")
    if shuffle == 0 or n == 1:
        return np.arange(n)
    perm = np.random.default_rng(shuffle).permutation(n)
    return np.roll(perm, 1) if np.array_equal(perm, np.arange(n)) else perm


def apply_permutation(items, perm) -> list:
    """`items` in the order `perm` gives: result[i] = items[perm[i]]."""
    return [items[i] for i in perm]


def is_original_order(perm) -> bool:
    """Whether `perm` leaves every position where it was."""
    perm = np.asarray(perm)
    return bool(np.array_equal(perm, np.arange(len(perm))))


def the_two_orders(original: str, shuffle: int, shuffled: str) -> str:
    """The words as typed and after shuffle number `shuffle`, on two lines (both already escaped)."""
    return tr(
        "**Original order:** {original}  \n**Shuffle {number}:** {shuffled}",
        original=original,
        number=shuffle,
        shuffled=shuffled,
    )


# ---------------------------------------------------------------- the check


@dataclass(frozen=True)
class ShuffleCheck:
    """Attention on the original order and on the shuffled order, and how far the outputs differ once the
    shuffle is undone. Shapes: perm (n,); undone (n, d_v) = the shuffled run's outputs put back in order."""

    perm: np.ndarray
    before: AttentionSteps
    after: AttentionSteps
    undone: np.ndarray
    max_diff: float
    same_input: bool = False  # the shuffle only swapped equal tokens: the model read the very same input

    @property
    def tolerance(self) -> float:
        return ROUNDING * max(1.0, float(np.max(np.abs(self.before.output))))

    @property
    def passed(self) -> bool:
        """Equal up to rounding: the outputs were only shuffled."""
        return self.max_diff <= self.tolerance

    @property
    def outcome(self) -> str:
        """What the check shows: "unchanged" (the input did not change, so there is nothing to see), "only
        shuffled" or "order was seen"."""
        if self.same_input:
            return "unchanged"
        return "only shuffled" if self.passed else "order was seen"


OUTCOME_HEADINGS = {  # English, marked: shown as tr(OUTCOME_HEADINGS[outcome])
    "unchanged": marked("the same input"),
    "only shuffled": marked("the same weights, moved"),
    "order was seen": marked("changed, not just moved"),
}
OUTCOME_CELLS = {  # English, marked: check_table translates them
    "unchanged": marked("– nothing moved"),
    "only shuffled": marked("✓ only shuffled"),
    "order was seen": marked("✗ order was seen"),
}


def shuffle_sentence(check: ShuffleCheck, what: str) -> str:
    """The check's outcome as the sentence the page shows beside its two heatmaps (`what`: the method)."""
    size = diff_text(check.max_diff)
    if check.outcome == "unchanged":
        return tr(
            "{method}: the shuffled tokens are the original ones in the original order (at most, equal tokens traded "
            "places), so the input and the weights are the same as before: nothing to compare. Shuffle again.",
            method=what,
        )
    if check.passed and check.max_diff == 0:
        return tr("{method}: after undoing the shuffle, the outputs are the same (exactly 0).", method=what)
    if check.passed:
        return tr(
            "{method}: after undoing the shuffle, the outputs are the same ({size}, rounding: the sums ran in another "
            "order).",
            method=what,
            size=size,
        )
    return tr("{method}: after undoing the shuffle, the outputs differ by up to **{size}**.", method=what, size=size)


BADGES = {  # English, marked: shown as tr(BADGES[outcome])
    # Translators: a Streamlit badge: translate only the words after the icon's name
    "unchanged": marked(":gray-badge[:material/drag_handle: nothing moved]"),
    # Translators: a Streamlit badge: translate only the words after the icon's name
    "only shuffled": marked(":green-badge[:material/check_circle: only shuffled]"),
    # Translators: a Streamlit badge: translate only the words after the icon's name
    "order was seen": marked(":red-badge[:material/cancel: order was seen]"),
}


def shuffle_verdict(check: ShuffleCheck, method: str) -> str:
    """The shuffle check's outcome with its badge (`method`: "none" or a way of adding position). Shown in a plain
    box, not an error: a failing check is what the section sets out to show, not something that went wrong."""
    return f"{tr(BADGES[check.outcome])} {shuffle_sentence(check, tr(SHORT_NAMES[method]))}"


def compare_shuffled(
    before: AttentionSteps, after: AttentionSteps, perm: np.ndarray, same_input: bool = False
) -> ShuffleCheck:
    """Undo `perm` on the shuffled run's outputs and compare with the original run's."""
    undone = np.empty_like(after.output)
    undone[perm] = after.output  # shuffled position i held original position perm[i]
    return ShuffleCheck(perm, before, after, undone, float(np.max(np.abs(undone - before.output))), same_input)


def shuffle_check(x, head: ToyHead, perm, method: str = "none", **kwargs) -> ShuffleCheck:
    """Run the toy head on X and on the shuffled X[perm] (positions are added after shuffling, as a model
    would: position p is wherever a word now stands), and compare. kwargs as `attend`."""
    x, perm = np.asarray(x, dtype=np.float64), np.asarray(perm)
    before, after = attend(x, head, method, **kwargs), attend(x[perm], head, method, **kwargs)
    return compare_shuffled(before, after, perm, same_input=bool(np.array_equal(x, x[perm])))


def toy_shuffle_checks(x, head: ToyHead, perm, alibi_heads: int = 8) -> dict[str, ShuffleCheck]:
    """The shuffle check of the toy head with each of TOY_METHODS (ALiBi: head 1 of `alibi_heads`, unmasked)."""
    return {m: shuffle_check(x, head, perm, m, alibi_heads=alibi_heads) for m in TOY_METHODS}


def minilm_shuffle_check(model, words, perm, head: int, *, positions: bool = True) -> ShuffleCheck:
    """The shuffle check on MiniLM's first layer: the words shuffled by `perm`, [CLS] and [SEP] kept in place."""
    words, perm = list(words), np.asarray(perm)
    before = minilm_pieces(model, words)
    after = minilm_pieces(model, apply_permutation(words, perm))
    blocks = [np.flatnonzero(before.word_of == w) for w in range(len(words))]  # each word's tokens, in order
    token_perm = np.concatenate([[0], *[blocks[w] for w in perm], [len(before.ids) - 1]])  # shuffled t <- original
    return compare_shuffled(
        minilm_head(model, before.ids, head, positions=positions),
        minilm_head(model, after.ids, head, positions=positions),
        token_perm,
        same_input=bool(np.array_equal(before.ids, after.ids)),  # e.g. two words the tokenizer reads as [UNK]
    )


# ---------------------------------------------------------------- the check table


CheckRow = tuple[str, str, ShuffleCheck]  # (model, position information, its check): a row of the check table


def check_rows(toy: dict[str, ShuffleCheck], real: Sequence[ShuffleCheck] = (), real_name: str = "") -> list[CheckRow]:
    """The check table's rows: the toy head with each of TOY_METHODS, then `real` (a trained model's head
    `real_name` without and with its learned table), if given."""
    rows = [(tr("toy head"), tr(METHOD_LABELS[m]), toy[m]) for m in TOY_METHODS]
    rows += [(real_name, tr(METHOD_LABELS[m]), check) for m, check in zip(("none", "learned"), real)]
    return rows


def check_table(rows: Sequence[CheckRow]) -> dict[str, list[str]]:
    """The check table's columns: what each row ran, the largest difference after undoing the shuffle ("–"
    when the input did not change: nothing to compare) and the outcome."""
    return {
        # Translators: a table's column: which model ran the check
        tr("model"): [model for model, _, _ in rows],
        # Translators: a table's column: which way of adding position the check ran with
        tr("position information"): [label for _, label, _ in rows],
        tr("largest difference after undoing the shuffle"): [
            "–" if check.outcome == "unchanged" else diff_text(check.max_diff) for _, _, check in rows
        ],
        # Translators: a table's column: the outcome of the check
        tr("check"): [tr(OUTCOME_CELLS[check.outcome]) for _, _, check in rows],
    }


def rounding_bound(rows: Sequence[CheckRow]) -> float:
    """The largest difference among the checks that came out "only shuffled" (0 if none did): the rounding
    that the sums over keys run in another order make, which the page quotes under the table."""
    return max((check.max_diff for _, _, check in rows if check.outcome == "only shuffled"), default=0.0)


def rounding_caption(bound: float, alibi_heads: int) -> str:
    """Why the differences marked ✓ (at most `bound`, `rounding_bound`) are not position, and why
    the check runs without the causal mask."""
    why = tr(
        "The differences marked ✓ (at most {bound}) are rounding (the sums over keys run "
        "in another order), not position. The causal mask would break the symmetry too (a word then sees only "
        "itself and the words before it), which is why this check runs without it.",
        bound=diff_text(bound),
    )
    return f"{why} {alibi_unmasked(alibi_heads)}"
