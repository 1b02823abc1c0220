"""The declared state and class questions of pages/induction.py (see ui/declared/__init__.py), with the run and
the measurement its questions read their true values from."""

from lessons.induction import (
    MAX_STEPS,
    Evaluation,
    InductionConfig,
    InductionRun,
    new_letters_reason,
    new_letters_room,
)
from locales import marked
from ui.induction_training import NotTrainedYet, measured, shipped_run, stored_run
from ui.page_questions import NotShownYet, ask_from
from ui.page_state import PageState
from ui.questions import induction as induction_questions
from ui.url import Choice, Int, Text

MODELS = ("shipped", "yours")
STEP_CHOICES = (250, 500, 1000, 2000)
MAX_TEXT = 200
MAX_NEW = 16
DEFAULT_TEXT = "q w e r t y u q w"
TRAINED = InductionConfig().decoder  # the model's shape, the shipped one's and any trained here (seed, steps vary)


def room_why(values, asked) -> str:
    """Why the number of new letters is lowered: it is bounded by the letters typed (new_letters_room)."""
    return new_letters_reason(values["text"], TRAINED)


STATE = PageState(
    "induction",
    model=Choice("shipped", choices=MODELS),
    seed=Int(0, lo=0, hi=9999),
    steps=Choice(2000, choices=STEP_CHOICES),
    at=Int(250, lo=0, hi=MAX_STEPS),
    text=Text(DEFAULT_TEXT, max_chars=MAX_TEXT),
    n_new=Int(
        5,
        lo=1,
        hi=lambda v: new_letters_room(v["text"], TRAINED, MAX_NEW),
        label=marked("New letters"),
        why=room_why,
    ),
)


def shown_run(values) -> tuple[InductionRun, tuple]:
    """The run the page shows for `values` and its key for `measured` (a class question's true value is read from
    them); ValueError if it shows none."""
    if values["model"] == "shipped":
        return shipped_run(), ("shipped",)
    config = InductionConfig(seed=int(values["seed"]), steps=int(values["steps"]))
    try:
        return stored_run(config), ("yours", config)
    except NotTrainedYet:
        raise NotShownYet(f"the model of seed {config.seed} and {config.steps} steps is not trained yet") from None


def shown_evaluation(values) -> Evaluation:
    """Section 4's measurement of the model shown for `values` (cached by the page's run)."""
    run, run_key = shown_run(values)
    return measured(run_key, run)


QUESTIONS = ask_from(STATE, "induction", *induction_questions.questions(lambda v: shown_run(v)[0], shown_evaluation))
