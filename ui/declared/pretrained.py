"""The declared state and class questions of pages/pretrained.py (see ui/declared/__init__.py), with the bounds its
state reads off the real model (6 layers and 12 heads when it is not installed)."""

from attention.pretrained import EXAMPLE_SENTENCES, MAX_TOKENS
from lessons.reading import shown_positions
from locales import marked, tr
from ui.minilm import MAX_TEXT_CHARS, encode, model_or_reason, n_heads, n_layers
from ui.page_questions import ask_from
from ui.page_state import PageState
from ui.questions import pretrained as pretrained_questions
from ui.url import Choice, Flag, Int, Text


def lines_choices(values) -> tuple[int, ...]:
    """What the "Lines from" box offers: every token (-1), or one of the tokens on display. Read only where the
    box is drawn, after the text was read: the model's reading of it is cached. Every position if the model is not
    installed (the page says so, and keeps the link, as it does for n_layers and n_heads)."""
    try:
        run = encode(values["text"])
    except FileNotFoundError:
        return (-1, *range(MAX_TOKENS))
    return (-1, *shown_positions(run.tokens, values["hide"]))


def lines_why(values, asked: int) -> str:
    """Why the query of the lines moved from `asked`."""
    n = len(encode(values["text"]).tokens)
    if asked < n:
        return tr("[CLS] and [SEP] are hidden")
    if values["hide"]:
        return tr("this text has {n} tokens, and [SEP] is hidden", n=n)
    return tr("this text has {n} tokens", n=n)


def token_text(i: int) -> str:
    return tr("every token") if i == -1 else tr("token {position}", position=i)


STATE = PageState(
    "pt",
    text=Text(EXAMPLE_SENTENCES[0], max_chars=MAX_TEXT_CHARS),
    a=Text("A man is playing a guitar.", max_chars=MAX_TEXT_CHARS),
    b=Text("Someone is playing an instrument.", max_chars=MAX_TEXT_CHARS),
    layer=Int(4, lo=1, hi=n_layers, listed=True),  # layers and heads count from 1 everywhere on this page
    head=Int(2, lo=1, hi=n_heads, listed=True),
    layer2=Int(1, lo=1, hi=n_layers, listed=True),
    head2=Int(3, lo=1, hi=n_heads, listed=True),
    hide=Flag(False),
    compare=Flag(False),
    focus=Choice(  # after the text and the hide switch, which decide what it offers
        -1,
        choices=(-1, *range(MAX_TOKENS)),
        allowed=lines_choices,
        label=marked("Lines from"),  # made at import: the note that names it shows tr(label)
        why=lines_why,
        shown=token_text,
    ),
)


def tokens_of(text: str) -> list[str]:
    """The tokens the model reads `text` as (the tokenizer alone); ValueError when the model is not installed."""
    model, why_not = model_or_reason()
    if model is None:
        raise ValueError(str(why_not))
    return model.tokenize(text)[0]


QUESTIONS = ask_from(
    STATE,
    "pretrained",
    *pretrained_questions.questions(lambda text: pretrained_questions.shown_reading("pt", text), tokens_of),
)
