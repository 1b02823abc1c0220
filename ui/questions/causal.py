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
from locales import marked, num, tr, tr_n
from ui.classroom_questions import weights_thumbnail
from ui.page_questions import QUERY, Pick, Question, ask_labels, key_pick
from ui.safe_text import escape_markdown

WEIGHT_TOLERANCE = 0.05  # a weight this close to the true one counts as right
SENTENCE_CHARS = 60  # the longest the prompt quotes the sequence's labels
MASKS = (marked("causal mask on"), marked("mask off"))  # the Mask box's labels (English: shown as tr(m))
WEIGHT_PROMPT = marked(
    "Sequence '{sentence}', scaled by 1/√d_k, causal mask on (−∞ before the softmax): what weight will query {query} "
    "'{query_token}' give key {key} '{key_token}'? (The mask-off weights stay on screen.)"
)
CHANGES_PROMPTS = {  # with the mask on, and off
    True: marked(
        "Sequence '{sentence}', scaled by 1/√d_k, causal mask on: token {position} '{token}' alone gets new random q, "
        "k and v (its own random draw). Which outputs change at all, even by one bit?"
    ),
    False: marked(
        "Sequence '{sentence}', scaled by 1/√d_k, mask off: token {position} '{token}' alone gets new random q, k "
        "and v (its own random draw). Which outputs change at all, even by one bit?"
    ),
}
# The answers to "which outputs change?", filled by each option's own values
NONE_CHANGE = marked("none of them")
ONE_OUTPUT = marked("output {output} only")
OUTPUTS = marked("outputs {first}…{last}")
ONE_OUTPUT_NOT = marked("output {output} only (not {changed} itself)")
OUTPUTS_NOT = marked("outputs {first}…{last} (not {changed} itself)")
EVERY_OUTPUT = marked("every output, 0…{last}")


def sentence(tokens) -> str:
    """The sequence's labels as the prompt quotes them, cut to SENTENCE_CHARS."""
    text = " ".join(tokens)
    return text if len(text) <= SENTENCE_CHARS else text[: SENTENCE_CHARS - 1] + "…"


def masked_weight(seq: TokenSequence, query: int, key: int) -> tuple[dict, float]:
    """'With the mask on, what weight will query i give key j?' and its true value, the page's masked weight. Query 0
    and the keys after the query are refused: the page says their weights (1 and exactly 0)."""
    n = seq.n
    if not (0 <= query < n and 0 <= key < n):
        raise ValueError(
            tr("query {query} and key {key} must be positions from 0 to {last}", query=query, key=key, last=n - 1)
        )
    if query == 0:
        raise ValueError(tr("query 0 sees only itself (the page says its weight is 1): pick a later query"))
    if key > query:
        raise ValueError(
            tr("key {key} is after query {query}: the mask gives it exactly 0, as the page says", key=key, query=query)
        )
    weights = attention_steps(seq.q, seq.k, seq.v, causal=True, scale=True).weights  # (n, n)
    tok = seq.tokens
    body = {
        "kind": "number",
        "prompt": WEIGHT_PROMPT,
        "values": {
            "sentence": sentence(tok),
            "query": query,
            "query_token": tok[query],
            "key": key,
            "key_token": tok[key],
        },
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


def output_options(n: int, p: int) -> list[tuple[str, dict, frozenset[int]]]:
    """The answers offered to 'which outputs change?' for token p of n, each a message with its own values and the
    positions it names; no two name the same positions."""

    def span(a: int, b: int) -> tuple[str, dict]:
        return (ONE_OUTPUT, {"output": a}) if a == b else (OUTPUTS, {"first": a, "last": b})

    def span_not(a: int, b: int) -> tuple[str, dict]:
        if a == b:
            return ONE_OUTPUT_NOT, {"output": a, "changed": p}
        return OUTPUTS_NOT, {"first": a, "last": b, "changed": p}

    offered = [
        ((NONE_CHANGE, {}), frozenset()),
        ((ONE_OUTPUT, {"output": p}), frozenset({p})),
        (span(0, p), frozenset(range(p + 1))),
        (span(p, n - 1), frozenset(range(p, n))),
        (span_not(p + 1, n - 1) if p < n - 1 else None, frozenset(range(p + 1, n))),
        (span_not(0, p - 1) if p > 0 else None, frozenset(range(p))),
        ((EVERY_OUTPUT, {"last": n - 1}), frozenset(range(n))),
    ]
    options, seen = [], set()
    for label, positions in offered:
        if label and positions not in seen:
            seen.add(positions)
            options.append((*label, positions))
    return options


def outputs_question(seq: TokenSequence, p: int, causal: bool, seed: int) -> tuple[dict, list[int]]:
    """'Token p gets new random q, k and v: which outputs change?' and its answer, the option naming exactly the
    positions whose output moved."""
    n = seq.n
    if n < 2:
        raise ValueError(
            tr(
                "with a single position there is only one output, the changed token's own, and it moves: nothing to "
                "ask; give the sequence 2 positions or more"
            )
        )
    if not 0 <= p < n:
        raise ValueError(tr("token {token} is outside 0..{last}", token=p, last=n - 1))
    moved = frozenset(changed_outputs(seq, p, causal, seed))
    options = output_options(n, p)
    truth = [i for i, (*_, positions) in enumerate(options) if positions == moved]
    if not truth:
        raise ValueError(
            tr(
                "the change moved outputs {outputs}, which no answer names: try another seed",
                outputs=str(sorted(moved)),
            )
        )
    tok = seq.tokens
    body = {
        "kind": "choice",
        "prompt": CHANGES_PROMPTS[bool(causal)],
        "values": {"sentence": sentence(tok), "position": p, "token": tok[p]},
        "options": [label for label, _, _ in options],
        "option_values": [own for _, own, _ in options],
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

    query = Pick("query", QUERY, queries, lambda v: [ask_labels(seq_of(v).tokens)[0][i] for i in queries(v)])
    token = Pick(
        "token",
        marked("Token that changes"),
        lambda v: range(seq_of(v).n),
        lambda v: [
            escape_markdown(tr("token {position} '{token}'", position=i, token=t)[:80])
            for i, t in enumerate(seq_of(v).tokens)
        ],
    )
    # Translators: the box where the teacher picks the causal mask on or off
    mask = Pick("mask", marked("Mask"), lambda v: [1, 0], lambda v: [tr(m) for m in MASKS])
    return (
        Question(
            "weight",
            marked("With the mask on, what weight will a query give a key?"),
            weight,
            (query, key_pick(seq_of)),
        ),
        Question("changes", marked("One token changes: which outputs change?"), changes, (token, mask)),
    )


# ---------------------------------------------------------------- build it: a leak a student makes by editing
LEAK_AT_LEAST = 0.5  # "leak" goal: the share of the row's weight the bug must lose
LEAK_PROMPT = marked(
    "Build it on the Causal masking page (scaled by 1/√d_k): edit the vectors so that masking after the softmax "
    "(section 3's bug) leaks at least {at_least} of query {query}'s weight (row {query} of section 3's leak table, "
    "counting the top row as 0). Submit when the check says solved."
)


def check_leak(goal: dict, values) -> tuple[bool, str]:
    """Whether the causal page's `values` (a student's own) reach `goal`: masked after the (scaled) softmax, query
    `goal["query"]`'s row loses at least `goal["at_least"]` (section 3's leak column)."""
    seq, query = values["seq"], goal["query"]
    if query >= seq.n - 1:
        return False, tr_n(
            "not yet: the sequence needs a token after query {query} (it has {n} tokens)",
            "not yet: the sequence needs a token after query {query} (it has {n} tokens)",
            seq.n,
            query=query,
            n=seq.n,
        )
    leak = float(mask_after_softmax(seq.q, seq.k, seq.v, scale=True).leak[query])
    at_least = num(goal["at_least"], "g")
    if leak >= goal["at_least"]:
        return True, tr(
            "solved: query {query}'s leak (row {query} of the leak table, from 0) is {leak} ≥ {at_least}",
            query=query,
            leak=num(leak, ".3f"),
            at_least=at_least,
        )
    shown = num(leak, ".3f") if round(leak, 3) < goal["at_least"] else num(leak, ".6f")  # never "0.500, below 0.5"
    return False, tr(
        "not yet: query {query}'s leak (row {query} of the leak table, from 0) is {leak}, below {at_least}",
        query=query,
        leak=shown,
        at_least=at_least,
    )


def leak_figure(goal: dict, values) -> dict:
    """A solution as the teacher's gallery shows it: the buggy weights (softmax, then the future zeroed)."""
    seq = values["seq"]
    return weights_thumbnail(mask_after_softmax(seq.q, seq.k, seq.v, scale=True).weights)


def build_questions(seq_of=lambda v: v["seq"]) -> tuple[Question, ...]:
    """The causal page's challenge: each student edits their own copy of the sequence (section 0's editor)."""

    def leak(values, picks):
        seq, query = seq_of(values), picks["query"]
        if seq.n < 2:
            raise ValueError(
                tr("with a single position there is no later key to leak from: give the sequence 2 or more")
            )
        if not 0 <= query < seq.n - 1:
            raise ValueError(
                tr("query {query} has no later key to leak from: pick a query before the last", query=query)
            )
        goal = {"name": "leak", "query": query, "at_least": LEAK_AT_LEAST}
        solved, said = check_leak(goal, values)
        if solved:
            raise ValueError(tr("it is already true on this page ({said}): pick another query", said=said))
        body = {
            "kind": "build",
            "prompt": LEAK_PROMPT,
            "values": {"at_least": LEAK_AT_LEAST, "query": query},
            "goal": goal,
            "source": {"goal": "leak"},
        }
        return body, None

    def queries(values) -> range:  # the last query sees every key: nothing to leak
        return range(max(seq_of(values).n - 1, 1))

    query = Pick("query", QUERY, queries, lambda v: [ask_labels(seq_of(v).tokens)[0][i] for i in queries(v)])
    return (
        Question(
            "build_leak",
            marked("Build it: make the bug leak a query's weight"),
            leak,
            (query,),
            check_leak,
            leak_figure,
        ),
    )
