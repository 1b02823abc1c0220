"""The Predict page's question: about the puzzle it shows (its declared values `puzzle`, and `seq` when the puzzle is
the student's own vectors)."""

from __future__ import annotations

from attention.sequence import TokenSequence
from lessons.puzzles import PUZZLES_BY_ID
from locales import marked
from ui.classroom_questions import predict_question
from ui.page_questions import Question, query_pick


def questions(own: str) -> tuple[Question, ...]:
    """The Predict page's question, about the puzzle it shows (its declared values `puzzle`, and `seq` when the
    puzzle is `own`, the student's own vectors)."""

    def seq_of(values) -> TokenSequence:
        if values["puzzle"] == own:
            return values["seq"]
        return PUZZLES_BY_ID[values["puzzle"]].seq

    def argmax(values, picks):
        puzzle = values["puzzle"]
        return predict_question(puzzle, picks["query"], own=values["seq"] if puzzle == own else None)

    return (Question("argmax", marked("Which key will a query attend to most?"), argmax, (query_pick(seq_of),)),)
