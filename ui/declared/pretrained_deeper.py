"""The declared state and class questions of pages/pretrained_deeper.py (see ui/declared/__init__.py), with the
bounds its state reads off the real model (6 layers and 12 heads when it is not installed)."""

from attention.pretrained import EXAMPLE_SENTENCES, MAX_TOKENS
from lessons.reading import POOLS, QUERY_MODES, SENTENCE_PAIRS
from ui.minilm import MAX_TEXT_CHARS, n_heads, n_layers
from ui.page_questions import ask_from
from ui.page_state import PageState
from ui.questions import pretrained_deeper as deeper_questions
from ui.questions.pretrained import shown_reading
from ui.url import Choice, Flag, Int, Text

MAX_WORD_CHARS = 40


def fits_a_link(name: str):
    """A text goes into the share link only if the page can read it: a refused one would make a link too long to
    open (the page says so where the text is refused)."""
    return lambda values: len(values[name]) <= MAX_TEXT_CHARS


STATE = PageState(
    "ptd",
    text=Text(EXAMPLE_SENTENCES[0], max_chars=MAX_TEXT_CHARS, when=fits_a_link("text")),
    layer=Int(4, lo=1, hi=n_layers, listed=True),  # from 1, as on the other page
    head=Int(2, lo=1, hi=n_heads, listed=True),
    mean=Flag(False),
    rows=Choice("all", choices=QUERY_MODES),
    last=Int(8, lo=1, hi=MAX_TOKENS, when=lambda values: values["rows"] == "last"),  # in the link when in use
    word=Text("it", max_chars=MAX_WORD_CHARS, when=lambda values: values["rows"] == "word"),
    query=Int(-1, lo=-1, hi=MAX_TOKENS - 1),
    viz=Flag(False),
    pool=Choice("mean", choices=POOLS),
    a=Text(SENTENCE_PAIRS[next(iter(SENTENCE_PAIRS))][0], max_chars=MAX_TEXT_CHARS, when=fits_a_link("a")),
    b=Text(SENTENCE_PAIRS[next(iter(SENTENCE_PAIRS))][1], max_chars=MAX_TEXT_CHARS, when=fits_a_link("b")),
)
QUESTIONS = ask_from(STATE, "pretrained_deeper", *deeper_questions.questions(lambda text: shown_reading("ptd", text)))
