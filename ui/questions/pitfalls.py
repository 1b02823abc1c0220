"""The pitfalls page's questions, about the vectors of its first section (its declared value `seq`; the page scales
by 1/√d_k and masks nothing there):

- "kq": the code computes softmax(K Qᵀ / √d_k) by mistake and uses its row i as query i's weights: which column
  (key position) is largest there? The right weights stay on screen: the bug's row i is their scores' column i
  (key i against every query), which the class has to see.
- "leak": the future masked after the softmax: what does row i sum to? The right (unmasked) weights stay on screen:
  what is left of row i is its weights on keys 0..i, the rest leaked. Row 0 is not asked: what is left of it is
  one weight, which the Right heatmap prints; nor the last row, which has no future (the page says it sums to 1).

The page's other two sections are not asked about: they show the Causal masking page's and the Playground's
sequences, which this page does not declare (a student's may differ from the teacher's).
"""

from __future__ import annotations

from attention.sequence import TokenSequence
from lessons.pitfalls import key_query_attention, mask_after_softmax
from locales import marked, tr
from ui.classroom_questions import top_keys
from ui.page_questions import QUERY, Pick, Question, ask_labels, key_options, query_pick, token_options

LEAK_TOLERANCE = 0.05  # a row sum this close to the true one counts as right
SENTENCE_CHARS = 60  # the longest the prompt quotes the sequence's labels
KQ_PROMPT = marked(
    "Section 1's vectors ('{sentence}', no mask): the code computes softmax(K Qᵀ/√d_k) by mistake, not "
    "softmax(Q Kᵀ/√d_k), and uses its row {query} as the weights of query {query} ('{query_token}'). Which column "
    "(key position) is largest there?"
)
LEAK_PROMPT = marked(
    "Section 1's vectors ('{sentence}'), scaled by 1/√d_k: the code takes the softmax over every key, then sets the "
    "weights of the keys after each query to 0. What does row {query} ('{query_token}') sum to?"
)


def sentence(tokens) -> str:
    """The sequence's labels as the prompt quotes them, cut to SENTENCE_CHARS."""
    text = " ".join(tokens)
    return text if len(text) <= SENTENCE_CHARS else text[: SENTENCE_CHARS - 1] + "…"


def check_query(seq: TokenSequence, query: int) -> None:
    if seq.n < 2:
        raise ValueError(tr("a sequence of one position has one key: give the vectors at least 2 positions"))
    if not 0 <= query < seq.n:
        raise ValueError(tr("query {query} is outside 0..{last}", query=query, last=seq.n - 1))


def transpose_argmax(seq: TokenSequence, query: int) -> tuple[dict, list[int]]:
    """'The code computes softmax(K Qᵀ/√d_k) and uses its row i as query i's weights: which column (key position) is
    largest there?' and its answer, every column with the largest weight of the bug's row i (several on a tie). That
    row holds key i against every query (the page's words), but the code weighs the values with it, column j
    weighing v_j, as if it were query i's weights over the keys."""
    check_query(seq, query)
    _, weights, _ = key_query_attention(seq.q, seq.k, seq.v)  # (n, n), row i: key i against every query
    tok = seq.tokens
    body = {
        "kind": "choice",
        "prompt": KQ_PROMPT,
        "values": {"sentence": sentence(tok), "query": query, "query_token": tok[query]},
        **token_options(key_options(tok)),
        "source": {"tokens": list(tok), "query": query, "scale": True},
    }
    return body, top_keys(weights[query])


def leaked_row_sum(seq: TokenSequence, query: int) -> tuple[dict, float]:
    """'Masked after the softmax, what does row i sum to?' and its true value, the bug's row sum. Row 0 is refused:
    what is left of it is its weight on key 0, one cell of the Right heatmap; and the last row: the page says it
    still sums to 1."""
    check_query(seq, query)
    if seq.n < 3:
        raise ValueError(
            tr(
                "with 2 positions, row 0 keeps one weight, which the Right heatmap prints, and row 1 has no future: "
                "give the vectors at least 3 positions"
            )
        )
    if query == 0:
        raise ValueError(tr("row 0 keeps only its weight on key 0, which the Right heatmap prints: pick a later query"))
    if query == seq.n - 1:
        raise ValueError(tr("the last row has no future: it still sums to 1, as the page says; pick an earlier query"))
    bug = mask_after_softmax(seq.q, seq.k, seq.v)
    tok = seq.tokens
    body = {
        "kind": "number",
        "prompt": LEAK_PROMPT,
        "values": {"sentence": sentence(tok), "query": query, "query_token": tok[query]},
        "lo": 0.0,
        "hi": 1.0,
        "tolerance": LEAK_TOLERANCE,
        "source": {"tokens": list(tok), "query": query, "scale": True},
    }
    return body, float(bug.row_sums[query])


def questions(seq_of=lambda v: v["seq"]) -> tuple[Question, ...]:
    """The pitfalls page's questions, about the vectors `seq_of(values)` of its first section."""

    def kq(values, picks):
        return transpose_argmax(seq_of(values), picks["query"])

    def leak(values, picks):
        return leaked_row_sum(seq_of(values), picks["query"])

    def leaking(values) -> range:  # row 0's sum is one cell of the Right heatmap, the last row's the page says (1);
        n = seq_of(values).n  # fewer than 3 positions: query 0, whose build says why not
        return range(1, n - 1) if n > 2 else range(1)

    leaking_query = Pick("query", QUERY, leaking, lambda v: [ask_labels(seq_of(v).tokens)[0][i] for i in leaking(v)])
    return (
        Question("kq", marked("K Qᵀ by mistake: which key wins a row?"), kq, (query_pick(seq_of),)),
        Question("leak", marked("Masked after the softmax: what does a row sum to?"), leak, (leaking_query,)),
    )
