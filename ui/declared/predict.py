"""The declared state and class questions of pages/predict.py (see ui/declared/__init__.py)."""

import streamlit as st

from lessons.puzzles import PUZZLES
from ui.page_questions import ask_from
from ui.page_state import PageState
from ui.questions import predict
from ui.sequence import default_sequence
from ui.shared_state import SEQUENCE_KEY
from ui.url import Choice, SequenceParam

OWN = "own"
CHOICES = (*(p.id for p in PUZZLES), OWN)
STATE = PageState(
    "predict",
    puzzle=Choice(CHOICES[0], choices=CHOICES),
    # the "make your own" vectors (in the link only then); they start as the Playground's
    seq=SequenceParam(
        lambda _: st.session_state.get(SEQUENCE_KEY) or default_sequence(),
        key="predict_seq",
        when=lambda v: v["puzzle"] == OWN,
    ),
)
QUESTIONS = ask_from(STATE, "predict", *predict.questions(OWN))
