"""The Playground's questions: about the vectors, the mask and the scaling it shows (its declared values `seq`,
`causal`, `scale`)."""

from __future__ import annotations

from ui.classroom_questions import argmax_question, row_question, weight_question
from ui.page_questions import Question, key_pick, query_pick


def questions(seq_of=lambda v: v["seq"]) -> tuple[Question, ...]:
    """The Playground's questions, about the sequence `seq_of(values)`."""

    def source(values) -> dict:
        return {"tokens": list(seq_of(values).tokens)}

    def argmax(values, picks):
        seq = seq_of(values)
        return argmax_question(
            seq, picks["query"], causal=bool(values["causal"]), scale=bool(values["scale"]), source=source(values)
        )

    def weight(values, picks):
        seq = seq_of(values)
        causal, scale = bool(values["causal"]), bool(values["scale"])
        return weight_question(seq, picks["query"], picks["key"], causal=causal, scale=scale, source=source(values))

    def row(values, picks):
        seq = seq_of(values)
        causal, scale = bool(values["causal"]), bool(values["scale"])
        return row_question(seq, picks["query"], causal=causal, scale=scale, source=source(values))

    return (
        Question("argmax", "Which key will a query attend to most?", argmax, (query_pick(seq_of),)),
        Question("row", "Predict a whole row of weights", row, (query_pick(seq_of),)),
        Question("weight", "What weight will a query give a key?", weight, (query_pick(seq_of), key_pick(seq_of))),
    )
