"""Predict, then check: small hand-built attention puzzles and the scoring of a student's guesses.

Each puzzle is a short sequence (3 or 4 positions) with hand-chosen queries and keys: at least one
query-key pair points the same way (aligned) and one pair is at right angles (orthogonal). The
student guesses, for every query, which key gets the largest weight; `score_guesses` marks the
guesses and explains every miss with the actual dot products.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from attention.checks import as_real_array
from attention.sequence import TokenSequence
from locales import marked, num, tr

PREDICT_LATEX = (
    r"s_{ij} = \frac{q_i \cdot k_j}{\sqrt{d_k}}, \qquad "
    r"w_{ij} = \frac{e^{s_{ij}}}{\sum_{l} e^{s_{il}}}, \qquad "
    r"\arg\max_j w_{ij} = \arg\max_j \, q_i \cdot k_j"
)
TIE_TOLERANCE = 1e-9  # keys whose weights are this close to the row's maximum all count as "the largest"
CLOSE_WEIGHT = 0.1  # a guessed weight within this of the real one counts as close


@dataclass(frozen=True)
class Puzzle:
    """One predict-then-check exercise on a short sequence `seq`."""

    id: str
    title: str
    hint: str
    lesson: str  # what the puzzle teaches, shown after the reveal
    seq: TokenSequence


def _puzzle(id_: str, title: str, hint: str, lesson: str, tokens, q, k) -> Puzzle:
    return Puzzle(id_, title, hint, lesson, TokenSequence(tokens, q, k, np.eye(len(tokens))))  # one-hot values


PUZZLES: tuple[Puzzle, ...] = (
    _puzzle(
        "aligned",
        marked("1 · Obvious alignment"),
        marked("Each query points along one of the keys. A dot product is largest when the arrows point the same way."),
        marked("An aligned pair has the largest dot product |q||k|; an orthogonal pair scores exactly 0."),
        ("east", "north", "west"),
        q=[[2, 0], [0, 1], [-1, 0]],
        k=[[2, 0], [0, 2], [-2, 0]],
    ),
    _puzzle(
        "orthogonal",
        marked("2 · Nothing points its way"),  # a title that names no answer: it is on screen while the class predicts
        marked(
            "Look at the first query: no key points its way. Which is better, a key at right angles or one "
            "pointing partly backwards?"
        ),
        marked(
            "When nothing is aligned, the least negative dot product wins: 0 (orthogonal) beats −2 or −4 "
            "(pointing away). Two queries can pick the same key, and a key can be picked by nobody."
        ),
        ("up", "right", "back"),
        q=[[0, -2], [2, 0], [0, 2]],
        k=[[0, 2], [2, 0], [-1, 1]],
    ),
    _puzzle(
        "between",
        marked("3 · Between two keys"),
        marked("Some queries point exactly half-way between two keys. What happens to a tie?"),
        marked(
            "Equal dot products give exactly equal weights: a query half-way between two keys splits its "
            "attention between them (and either counts as the right answer)."
        ),
        ("E", "N", "W", "S"),
        q=[[1, 1], [0, 3], [-2, 1], [1, -1]],
        k=[[2, 0], [0, 2], [-2, 0], [0, -2]],
    ),
    _puzzle(
        "length",
        marked("4 · Short and long keys"),
        marked("The dot product is |q| |k| cos θ: the length of a key counts as much as its direction."),
        marked(
            "The long key (4, 3) is only roughly aligned with most queries, yet its length makes its dot products "
            "the largest: a perfectly aligned short key (1, 0) loses to it."
        ),
        ("short", "long", "side", "back"),
        q=[[2, 0], [0, 2], [-2, 0], [1, 1]],
        k=[[1, 0], [4, 3], [0, 1], [-1, 0]],
    ),
    _puzzle(
        "four-d",
        marked("5 · Four dimensions"),
        marked(
            "No pictures in 4-D: multiply component by component and add. Watch the last key's long last component."
        ),
        marked(
            "In any dimension the rule is the same arithmetic: q · k = Σ q_c k_c. The query identical in direction "
            "to a key (q_1 and k_1) still loses to a longer key that shares one of its components."
        ),
        ("the", "cat", "sat", "down"),
        q=[[2, 0, 1, 0], [0, 1, 0, 1], [1, 1, 1, 1], [1, 1, 0, -1]],
        k=[[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0], [0, 0, 1, 3]],
    ),
)
PUZZLES_BY_ID = {p.id: p for p in PUZZLES}


def custom_puzzle(seq: TokenSequence) -> Puzzle:
    """A puzzle made from the student's own vectors (e.g. the Playground's sequence)."""
    return Puzzle(
        "own",
        marked("Make your own"),
        marked("These are your own vectors: compute q_i · k_j for each key."),
        marked("Your own example: the largest dot product in each row wins."),
        seq,
    )


@dataclass(frozen=True)
class GuessResult:
    """The verdict on one query's guess."""

    query: int
    guess: int  # the key the student picked
    best: tuple[int, ...]  # every key sharing the largest weight (several on a tie)
    correct: bool
    top_weight: float  # the largest weight in the row
    guessed_weight: float | None  # the student's guess of that weight, if any
    weight_error: float | None  # |guessed_weight - top_weight|
    explanation: str

    @property
    def weight_close(self) -> bool | None:
        return None if self.weight_error is None else self.weight_error <= CLOSE_WEIGHT


def score_guesses(weights, guessed_argmax, guessed_weights, scores, labels=None) -> tuple[GuessResult, ...]:
    """Mark each query's guessed key (and optional guessed top weight) against the real weights.

    Shapes: weights (n, m), scores (n, m) raw q_i · k_j, guessed_argmax n ints in 0..m-1,
    guessed_weights n floats in [0, 1] or None. A tie (weights within TIE_TOLERANCE of the maximum)
    accepts any of the tied keys. Each explanation names the actual dot products q_i · k_j.
    """
    weights, scores = as_real_array(weights, "weights"), as_real_array(scores, "scores")
    if weights.ndim != 2 or weights.shape != scores.shape:
        raise ValueError(f"weights {weights.shape} and scores {scores.shape} must be the same (n, m) matrix")
    n, m = weights.shape
    guesses = _check_guesses(guessed_argmax, n, m)
    guessed_weights = [None] * n if guessed_weights is None else list(guessed_weights)
    if len(guessed_weights) != n:
        raise ValueError(f"{len(guessed_weights)} guessed weights for {n} queries")
    labels = [f"k_{j}" for j in range(m)] if labels is None else [str(s) for s in labels]
    return tuple(
        _score_row(i, weights[i], scores[i], guesses[i], _check_weight(guessed_weights[i], i), labels) for i in range(n)
    )


def _check_guesses(guessed_argmax, n: int, m: int) -> list[int]:
    guesses = list(guessed_argmax)
    if len(guesses) != n:
        raise ValueError(f"{len(guesses)} guesses for {n} queries: guess one key per query")
    for i, g in enumerate(guesses):
        if isinstance(g, bool) or not isinstance(g, (int, np.integer)) or not 0 <= g < m:
            raise ValueError(f"guess for query {i} is {g!r}; expected a key index from 0 to {m - 1}")
    return [int(g) for g in guesses]


def _check_weight(w, i: int) -> float | None:
    if w is None:
        return None
    w = float(w)
    if not 0.0 <= w <= 1.0:
        raise ValueError(f"guessed weight for query {i} is {w}; a weight lies between 0 and 1")
    return w


def and_list(left: str, right: str) -> str:
    """Two names joined by "and" (reduced over a list: "k_0 'E' and k_1 'N' and k_2 'W'")."""
    # Translators: two keys that tie, "k_0 'E' and k_1 'N'" (a longer list repeats it: "a and b and c")
    return tr("{left} and {right}", left=left, right=right)


def _score_row(
    i: int, w: np.ndarray, s: np.ndarray, guess: int, guessed_weight: float | None, labels: list[str]
) -> GuessResult:
    """One query: which keys share the top weight, was the guess among them, and why."""
    top = float(w.max())
    best = tuple(int(j) for j in np.flatnonzero(w >= top - TIE_TOLERANCE))
    correct = guess in best
    dot = lambda j: f"q_{i}·k_{j} = {num(s[j], '.3g')}"  # noqa: E731
    name = lambda j: f"k_{j} '{labels[j]}'"  # noqa: E731
    # Translators: the separator between the items of a list of numbers ("q_0·k_0 = 2, q_0·k_1 = 0"); a language
    # that writes a decimal comma may prefer "; "
    separator = tr(", ")
    row = separator.join(dot(j) for j in range(len(w)))
    if len(best) > 1:
        values = dict(
            products=" = ".join(f"q_{i}·k_{j}" for j in best),
            score=num(s[best[0]], ".3g"),
            keys=functools.reduce(and_list, map(name, best)),
            weight=num(top, ".3f"),
        )
        if correct:
            text = tr(
                "Right. {products} = {score} tie for the largest dot product, so {keys} share the top weight "
                "({weight} each); any of them counts.",
                **values,
            )
        else:
            text = tr(
                "You picked {guess} ({guess_product}, weight {guess_weight}), but {products} = {score} tie for the "
                "largest dot product, so {keys} share the top weight ({weight} each); any of them counts. "
                "All of row {row_number}: {row}.",
                guess=name(guess),
                guess_product=dot(guess),
                guess_weight=num(w[guess], ".3f"),
                row_number=i,
                row=row,
                **values,
            )
    elif correct:
        text = tr(
            "Right. {product} is the largest dot product, so {key} gets the most weight ({weight}).",
            product=dot(best[0]),
            key=name(best[0]),
            weight=num(top, ".3f"),
        )
    else:
        text = tr(
            "You picked {guess} ({guess_product}, weight {guess_weight}), but {product} is the largest dot product, "
            "so {key} gets the most weight ({weight}). All of row {row_number}: {row}.",
            guess=name(guess),
            guess_product=dot(guess),
            guess_weight=num(w[guess], ".3f"),
            product=dot(best[0]),
            key=name(best[0]),
            weight=num(top, ".3f"),
            row_number=i,
            row=row,
        )
    error = None if guessed_weight is None else abs(guessed_weight - top)
    if error is not None:
        values = dict(
            previous=text, guessed=num(guessed_weight, ".2f"), weight=num(top, ".3f"), error=num(error, ".3f")
        )
        if error <= CLOSE_WEIGHT:
            # Translators: {previous} is the explanation above, one or more whole sentences
            text = tr("{previous} You guessed a top weight of {guessed}; it is {weight} (close by {error}).", **values)
        else:
            # Translators: {previous} is the explanation above, one or more whole sentences
            text = tr("{previous} You guessed a top weight of {guessed}; it is {weight} (off by {error}).", **values)
    return GuessResult(i, guess, best, correct, top, guessed_weight, error, text)
