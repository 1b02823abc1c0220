"""The declared state and class questions of pages/pitfalls.py (see ui/declared/__init__.py)."""

from lessons.pitfalls import transpose_hand_example
from ui.page_questions import ask_from
from ui.page_state import PageState
from ui.questions import pitfalls
from ui.url import Int, SequenceParam

SEED_MAX = 10_000
HAND_EXAMPLE, HAND_ANSWER = transpose_hand_example()
STATE = PageState(
    "pitfalls",
    seq=SequenceParam(lambda _: HAND_EXAMPLE.seq, key="pitfalls_seq"),  # the transpose demo's vectors
    seed=Int(0, lo=0, hi=SEED_MAX),
)
QUESTIONS = ask_from(STATE, "pitfalls", *pitfalls.questions())
