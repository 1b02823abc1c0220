"""The causal page's questions, about the sequence it shows (its declared values `seq` and `seed`; the page always
scales by 1/√d_k):

- "weight": with the mask on, what weight will query i give key j? The mask-off weights stay on screen: the answer
  is that row renormalised over the keys that remain, which is the page's first idea.
- "changes": token p gets new random q, k and v: which outputs change at all, with the mask on (or off)? The page's
  second idea, the check that the future cannot leak, turned round. The question draws its own new numbers
  (randomise_at, from the page's seed), not the page's Randomise button (which changes every token after t): its
  prompt does not name a seed, and its answer does not depend on the draw.
- "build_leak", a challenge: edit the vectors so that masking after the softmax (section 3's bug) loses at least
  LEAK_AT_LEAST of query i's weight: the leak is the weight the future had, so query i must look ahead.
"""

from __future__ import annotations

import numpy as np

from attention import attention_steps, scaled_dot_product_attention
from attention.sequence import TokenSequence
from lessons.pitfalls import causal_attention, invariance_check, mask_after_softmax, randomise_at
from ui.classroom_questions import weights_thumbnail
from ui.page_questions import Pick, Question, ask_labels, key_pick
from ui.safe_text import escape_markdown

WEIGHT_TOLERANCE = 0.05  # a weight this close to the true one counts as right
SENTENCE_CHARS = 60  # the longest the prompt quotes the sequence's labels
MASKS = ("causal mask on", "mask off")


def sentence(tokens) -> str:
    """The sequence's labels as the prompt quotes them, cut to SENTENCE_CHARS."""
    text = " ".join(tokens)
    return text if len(text) <= SENTENCE_CHARS else text[: SENTENCE_CHARS - 1] + "…"


def masked_weight(seq: TokenSequence, query: int, key: int) -> tuple[dict, float]:
    """'With the mask on, what weight will query i give key j?' and its true value, the page's masked weight. Query 0
    and the keys after the query are refused: the page says their weights (1 and exactly 0)."""
    n = seq.n
    if not (0 <= query < n and 0 <= key < n):
        raise ValueError(f"query {query} and key {key} must be positions from 0 to {n - 1}")
    if query == 0:
        raise ValueError("query 0 sees only itself (the page says its weight is 1): pick a later query")
    if key > query:
        raise ValueError(f"key {key} is after query {query}: the mask gives it exactly 0, as the page says")
    weights = attention_steps(seq.q, seq.k, seq.v, causal=True, scale=True).weights  # (n, n)
    tok = seq.tokens
    prompt = (
        f"Sequence '{sentence(tok)}', scaled by 1/√d_k, causal mask on (−∞ before the softmax): what weight will "
        f"query {query} '{tok[query]}' give key {key} '{tok[key]}'? (The mask-off weights stay on screen.)"
    )
    body = {
        "kind": "number",
        "prompt": prompt,
        "lo": 0.0,
        "hi": 1.0,
        "tolerance": WEIGHT_TOLERANCE,
        "source": {"tokens": list(tok), "query": query, "key": key, "causal": True, "scale": True},
    }
    return body, float(weights[query, key])


def attention_off(q, k, v, *, scale: bool = True) -> np.ndarray:
    """Attention's output with no mask, for the invariance check's `attend`."""
    return scaled_dot_product_attention(q, k, v, scale=scale)[0]


def changed_outputs(seq: TokenSequence, p: int, causal: bool, seed: int) -> list[int]:
    """The positions whose output moves at all (bit for bit) when token p alone gets new random q, k, v (`seed`)."""
    before = (seq.q, seq.k, seq.v)
    attend = causal_attention if causal else attention_off
    check = invariance_check(before, randomise_at(*before, p, seed), p, attend=attend)
    return [int(i) for i in np.flatnonzero(check.diff != 0.0)]


def output_options(n: int, p: int) -> list[tuple[str, frozenset[int]]]:
    """The answers offered to 'which outputs change?' for token p of n, each with the positions it names; no two name
    the same positions."""

    def span(a: int, b: int) -> str:
        return f"output {a} only" if a == b else f"outputs {a}…{b}"

    offered = [
        ("none of them", frozenset()),
        (f"output {p} only", frozenset({p})),
        (span(0, p), frozenset(range(p + 1))),
        (span(p, n - 1), frozenset(range(p, n))),
        (f"{span(p + 1, n - 1)} (not {p} itself)" if p < n - 1 else "", frozenset(range(p + 1, n))),
        (f"{span(0, p - 1)} (not {p} itself)" if p > 0 else "", frozenset(range(p))),
        (f"every output, 0…{n - 1}", frozenset(range(n))),
    ]
    options, seen = [], set()
    for label, positions in offered:
        if label and positions not in seen:
            seen.add(positions)
            options.append((label, positions))
    return options


def outputs_question(seq: TokenSequence, p: int, causal: bool, seed: int) -> tuple[dict, list[int]]:
    """'Token p gets new random q, k and v: which outputs change?' and its answer, the option naming exactly the
    positions whose output moved."""
    n = seq.n
    if n < 2:
        raise ValueError(
            "with a single position there is only one output, the changed token's own, and it moves: nothing to "
            "ask; give the sequence 2 positions or more"
        )
    if not 0 <= p < n:
        raise ValueError(f"token {p} is outside 0..{n - 1}")
    moved = frozenset(changed_outputs(seq, p, causal, seed))
    options = output_options(n, p)
    truth = [i for i, (_, positions) in enumerate(options) if positions == moved]
    if not truth:
        raise ValueError(f"the change moved outputs {sorted(moved)}, which no answer names: try another seed")
    tok = seq.tokens
    prompt = (
        f"Sequence '{sentence(tok)}', scaled by 1/√d_k, {MASKS[0] if causal else MASKS[1]}: token {p} '{tok[p]}' "
        f"alone gets new random q, k and v (its own random draw). Which outputs change at all, even by one bit?"
    )
    body = {
        "kind": "choice",
        "prompt": prompt,
        "options": [label for label, _ in options],
        "source": {"tokens": list(tok), "token": p, "causal": causal, "scale": True, "seed": seed},
    }
    return body, truth


def questions(seq_of=lambda v: v["seq"]) -> tuple[Question, ...]:
    """The causal page's questions, about the sequence `seq_of(values)` and the page's seed."""

    def weight(values, picks):
        return masked_weight(seq_of(values), picks["query"], picks["key"])

    def changes(values, picks):
        return outputs_question(seq_of(values), picks["token"], bool(picks["mask"]), int(values["seed"]))

    def queries(values) -> range:  # query 0's weight the page says (1); one position: its build says why not
        n = seq_of(values).n
        return range(1, n) if n > 1 else range(1)

    query = Pick("query", "Query", queries, lambda v: [ask_labels(seq_of(v).tokens)[0][i] for i in queries(v)])
    token = Pick(
        "token",
        "Token that changes",
        lambda v: range(seq_of(v).n),
        lambda v: [escape_markdown(f"token {i} '{t}'"[:80]) for i, t in enumerate(seq_of(v).tokens)],
    )
    mask = Pick("mask", "Mask", lambda v: [1, 0], lambda v: list(MASKS))
    return (
        Question("weight", "With the mask on, what weight will a query give a key?", weight, (query, key_pick(seq_of))),
        Question("changes", "One token changes: which outputs change?", changes, (token, mask)),
    )


# ---------------------------------------------------------------- build it: a leak a student makes by editing
LEAK_AT_LEAST = 0.5  # "leak" goal: the share of the row's weight the bug must lose


def check_leak(goal: dict, values) -> tuple[bool, str]:
    """Whether the causal page's `values` (a student's own) reach `goal`: masked after the (scaled) softmax, query
    `goal["query"]`'s row loses at least `goal["at_least"]` (section 3's leak column)."""
    seq, query = values["seq"], goal["query"]
    if query >= seq.n - 1:
        return False, f"not yet: the sequence needs a token after query {query} (it has {seq.n} tokens)"
    leak = float(mask_after_softmax(seq.q, seq.k, seq.v, scale=True).leak[query])
    row = f"query {query}'s leak (row {query} of the leak table, from 0)"
    if leak >= goal["at_least"]:
        return True, f"solved: {row} is {leak:.3f} ≥ {goal['at_least']:g}"
    shown = f"{leak:.3f}" if round(leak, 3) < goal["at_least"] else f"{leak:.6f}"  # never "0.500, below 0.5"
    return False, f"not yet: {row} is {shown}, below {goal['at_least']:g}"


def leak_figure(goal: dict, values) -> dict:
    """A solution as the teacher's gallery shows it: the buggy weights (softmax, then the future zeroed)."""
    seq = values["seq"]
    return weights_thumbnail(mask_after_softmax(seq.q, seq.k, seq.v, scale=True).weights)


def build_questions(seq_of=lambda v: v["seq"]) -> tuple[Question, ...]:
    """The causal page's challenge: each student edits their own copy of the sequence (section 0's editor)."""

    def leak(values, picks):
        seq, query = seq_of(values), picks["query"]
        if seq.n < 2:
            raise ValueError("with a single position there is no later key to leak from: give the sequence 2 or more")
        if not 0 <= query < seq.n - 1:
            raise ValueError(f"query {query} has no later key to leak from: pick a query before the last")
        goal = {"name": "leak", "query": query, "at_least": LEAK_AT_LEAST}
        solved, said = check_leak(goal, values)
        if solved:
            raise ValueError(f"it is already true on this page ({said}): pick another query")
        prompt = (
            f"Build it on the Causal masking page (scaled by 1/√d_k): edit the vectors so that masking after the "
            f"softmax (section 3's bug) leaks at least {LEAK_AT_LEAST:g} of query {query}'s weight (row {query} of "
            "section 3's leak table, counting the top row as 0). Submit when the check says solved."
        )
        return {"kind": "build", "prompt": prompt, "goal": goal, "source": {"goal": "leak"}}, None

    def queries(values) -> range:  # the last query sees every key: nothing to leak
        return range(max(seq_of(values).n - 1, 1))

    query = Pick("query", "Query", queries, lambda v: [ask_labels(seq_of(v).tokens)[0][i] for i in queries(v)])
    return (
        Question("build_leak", "Build it: make the bug leak a query's weight", leak, (query,), check_leak, leak_figure),
    )
