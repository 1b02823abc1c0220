"""The declared state and class questions of pages/playground.py (see ui/declared/__init__.py)."""

from locales import marked
from ui.page_questions import ask_from
from ui.page_state import PageState
from ui.questions import playground
from ui.sequence import default_sequence
from ui.shared_state import SEQUENCE_KEY
from ui.url import Flag, Int, SequenceParam

# The seven steps, as the walkthrough names them (shown translated: tr(STEPS[i]); the symbols are not in the catalogue).
# Translators: "mask" is the step that applies the causal mask (a noun), a short label of the step picker
STEPS = ("Q", "Kᵀ", "Q Kᵀ", "÷ √d_k", marked("mask"), "softmax", "@ V")
WEIGHTS_STEP = 6
STATE = PageState(
    "pg",
    seq=SequenceParam(lambda _: default_sequence(), key=SEQUENCE_KEY),  # shared with the other pages
    causal=Flag(False),
    scale=Flag(True),
    # the step the presenter's big figure shows (1..7); in the link only when it is not the weights
    step=Int(WEIGHTS_STEP, lo=1, hi=len(STEPS), when=lambda v: v["step"] != WEIGHTS_STEP),
)
QUESTIONS = ask_from(STATE, "playground", *playground.questions(), *playground.build_questions())
