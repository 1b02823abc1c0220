"""The declared state and class questions of pages/positions.py (see ui/declared/__init__.py), with the shuffle
checks on the real model its questions read their true values from."""

from attention.pretrained import MODEL_NAME
from lessons.positions import masks, toy
from locales import marked
from ui.minilm import minilm_checks, model_or_reason
from ui.page_questions import ask_from
from ui.page_state import PageState
from ui.questions import positions as position_questions
from ui.url import Choice, Flag, Int, Text

MAX_TEXT_CHARS = 400
SHUFFLE_MAX = 9999
SEED_MAX = 9999
WITH_POSITIONS = ("sinusoidal", "rope", "alibi", "learned")

STATE = PageState(
    "pos",
    text=Text(toy.DEFAULT_TEXT, max_chars=MAX_TEXT_CHARS),
    d_model=Choice(16, choices=(8, 16, 32, 64)),
    seed=Int(0, lo=0, hi=SEED_MAX),
    shuffle=Int(1, lo=0, hi=SHUFFLE_MAX),  # 0: the original order
    method=Choice("sinusoidal", choices=WITH_POSITIONS),
    table_n=Choice(128, choices=(32, 64, 128, 256, 512)),
    head=Int(3, lo=1, hi=12),  # MiniLM's first layer, heads from 1; head 3 reads the previous token
    table_d=Choice(64, choices=(16, 32, 64, 128, 256)),
    shift=Int(3, lo=1, hi=64),
    offset=Int(5, lo=0, hi=10_000),
    heads=Int(8, lo=1, hi=16),
    alibi_scores=Flag(False),
    n=Int(16, lo=2, hi=32),
    window=Int(lambda v: min(3, v["n"]), lo=1, hi=lambda v: v["n"], label=marked("Window w"), why=masks.window_why),
    layers=Int(3, lo=1, hi=8),
    len_a=Int(toy.word_count, lo=1, hi=toy.word_count, label=marked("Sequence 1's length"), why=masks.length_why),
    len_b=Int(toy.half_the_words, lo=1, hi=toy.word_count, label=marked("Sequence 2's length"), why=masks.length_why),
    pad_causal=Flag(False),
)


def shown_minilm_checks(words, number: int, head: int):
    """The shuffle checks on the real model the page shows (a class question's true value is read from them)."""
    model, _ = model_or_reason()
    if model is None:
        raise ValueError(f"{MODEL_NAME} is not installed here: ask about the toy head")
    return minilm_checks(tuple(words), number, head)


QUESTIONS = ask_from(STATE, "positions", *position_questions.questions(shown_minilm_checks))
