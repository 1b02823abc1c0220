"""The declared state and class questions of pages/causal.py (see ui/declared/__init__.py)."""

from lessons.pitfalls import leak_example
from locales import marked, tr
from ui.page_questions import ask_from
from ui.page_state import PageState
from ui.questions import causal
from ui.url import Int, SequenceParam

SEED_MAX = 10_000


def last_t(values) -> int:
    """The last position that still has a later token to change."""
    return max(values["seq"].n - 2, 0)


STATE = PageState(
    "causal",
    seq=SequenceParam(lambda _: leak_example().seq, key="causal_seq"),  # a bad link falls back to this page's own
    t=Int(
        lambda v: min(2, last_t(v)),
        lo=0,
        hi=last_t,
        label=marked("position t"),  # translated where the note shows it
        why=lambda v, asked: tr("position {position} is the last one that has a later token", position=last_t(v)),
    ),
    seed=Int(0, lo=0, hi=SEED_MAX),
)
QUESTIONS = ask_from(STATE, "causal", *causal.questions(), *causal.build_questions())
