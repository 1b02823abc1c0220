"""The pretrained page's questions, about all-MiniLM-L6-v2 as the page shows it:

- "attend": which token one of the page's heads (head A, or B when it compares two; its declared `layer`, `head`,
  `layer2`, `head2`) gives the most weight from one token of the sentence (`text`), with [CLS] and [SEP] or without
  them (`hide`), as its heatmap shows;
- "similarity": the cosine similarity of the embeddings of sentences A and B (`a`, `b`), as its metric shows.

Their true values are read from the model's readings of those texts that the asking teacher's page showed last
(`keep_shown`, `shown_reading`, shared with the Read deeper page): asking never runs the model (0.5 s or more a text),
and a text the page has not finished reading cannot be asked about yet."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention.pretrained import MODEL_NAME, MiniLMRun, cosine_similarity, read_model_config
from lessons.reading import shown_positions
from locales import marked, tr
from ui.classroom_questions import top_keys
from ui.classroom_session import is_teacher
from ui.page_questions import QUERY, NotShownYet, Pick, Question, ask_labels, key_options, token_options

MAX_OPTIONS = 64  # a choice question's limit (classroom/questions.py)
SIMILARITY_TOLERANCE = 0.1  # an answer this close to the true cosine counts as right
QUOTED_CHARS = 90  # a prompt quotes a text up to this long, and the start of a longer one
SIMILARITY_QUOTED_CHARS = 54  # the similarity prompt quotes two texts: each up to this long
MODEL = MODEL_NAME.rsplit("/", 1)[-1]  # "all-MiniLM-L6-v2": a prompt has 300 characters
ATTEND_PROMPTS = {  # by whether [CLS] and [SEP] are hidden
    False: marked(
        "{model} reads {text} ({n} tokens). Layer {layer}, head {head}: from token {query} {token}, which token gets "
        "the most weight?"
    ),
    True: marked(
        "{model} reads {text} ({n} tokens, [CLS] and [SEP] hidden). Layer {layer}, head {head}: from token {query} "
        "{token}, which token gets the most weight?"
    ),
}
# the cosine runs from −1 to 1 (the answer's bounds); the embedding is the model's mean pooling, named
SIMILARITY_PROMPT = marked(
    "Sentence A: {a}; sentence B: {b}. What is the cosine similarity of their {model} embeddings (the mean of the "
    "last layer's token vectors)? 1: same direction, 0: unrelated, −1: opposite"
)


def keep_shown(prefix: str, readings: dict[str, MiniLMRun | None]) -> None:
    """After a page has drawn: the model's readings it showed, by text, for the class questions to read. Kept only
    in a teacher's session (the one that asks), and only the page's latest ones: a student's would hold its
    readings (up to 19 MB each) for nothing."""
    if is_teacher():
        st.session_state[f"_{prefix}_shown_readings"] = {t: r for t, r in readings.items() if r is not None}


def shown_reading(prefix: str, text: str) -> MiniLMRun:
    """The model's reading of `text` as the page of `prefix` showed it last; ValueError when the model is not
    installed (the page shows none) or the page has not shown it (yet)."""
    try:
        read_model_config()
    except FileNotFoundError:
        raise ValueError(
            tr("the weights of {model} are not installed here: the page shows no model", model=MODEL_NAME)
        ) from None
    reading = st.session_state.get(f"_{prefix}_shown_readings", {}).get(text)
    if reading is None:
        raise NotShownYet(tr("still computing: ask again once the page shows it"))
    return reading


def quoted(text: str, most: int = QUOTED_CHARS) -> str:
    """A text as a prompt quotes it: whole, or its start (`most` characters in all)."""
    text = " ".join(text.split())
    return f"'{text}'" if len(text) <= most else f"'{text[: most - 1].rstrip()}…'"


def attend(run: MiniLMRun, layer: int, head: int, hide: bool, query: int) -> tuple[dict, list[int]]:
    """'From token i, which token does head (layer, head) give the most weight?' (layer, head from 1) on the model's
    reading `run`, over the tokens on show (without [CLS] and [SEP] when `hide`: each row rescaled, which keeps its
    order), and its answer: the options of the largest weight (several on a tie)."""
    tokens = run.tokens
    shown = shown_positions(tokens, hide)
    if query not in shown:
        raise ValueError(f"token {query} is not one of the tokens on show")
    if len(shown) > MAX_OPTIONS:
        raise ValueError(
            tr(
                "{n} tokens are on show, more than a question's {most} answers: shorten it",
                n=len(shown),
                most=MAX_OPTIONS,
            )
        )
    if not (1 <= layer <= run.attentions.shape[0] and 1 <= head <= run.attentions.shape[1]):
        raise ValueError(f"layer {layer}, head {head} is not one of the model's (counted from 1)")
    row = run.attentions[layer - 1, head - 1, query, shown]  # (m,) the query's weights on the tokens on show
    body = {
        "kind": "choice",
        "prompt": ATTEND_PROMPTS[bool(hide) and len(shown) < len(tokens)],
        "values": {
            "model": MODEL,
            "text": quoted(run.text),
            "n": len(tokens),
            "layer": layer,
            "head": head,
            "query": query,
            "token": quoted(tokens[query], 40),
        },
        **token_options(key_options(tokens)[i] for i in shown),
        "source": {"layer": layer, "head": head, "hide": hide},
    }
    return body, top_keys(np.asarray(row, dtype=np.float64))


def similarity(run_a: MiniLMRun, run_b: MiniLMRun) -> tuple[dict, float]:
    """'What is the cosine similarity of the two sentences' embeddings?' and its true value."""
    body = {
        "kind": "number",
        "prompt": SIMILARITY_PROMPT,
        "values": {
            "a": quoted(run_a.text, SIMILARITY_QUOTED_CHARS),
            "b": quoted(run_b.text, SIMILARITY_QUOTED_CHARS),
            "model": MODEL,
        },
        "lo": -1.0,
        "hi": 1.0,
        "tolerance": SIMILARITY_TOLERANCE,
    }
    return body, cosine_similarity(run_a.embedding, run_b.embedding)


def heads_shown(values) -> list[tuple[int, int]]:
    """The heads the page shows up close: head A, and head B when it compares two (layer, head from 1)."""
    heads = [(values["layer"], values["head"])]
    if values["compare"]:
        heads.append((values["layer2"], values["head2"]))
    return heads


def questions(reading_of, tokens_of=None) -> tuple[Question, ...]:
    """`reading_of(text)`: the model's reading of `text` as the page showed it (ValueError if it shows none);
    `tokens_of(text)`: its tokens before the page has shown it (the tokenizer alone: a lesson deck's question names
    a token of a page that has not run), ValueError when the model is not installed."""

    def shown_tokens(values) -> tuple[list[str], list[int]]:
        try:
            tokens = reading_of(values["text"]).tokens
        except NotShownYet:
            try:
                tokens = tokens_of(values["text"]) if tokens_of is not None else ["[CLS]"]
            except ValueError:
                tokens = ["[CLS]"]
        except ValueError:  # Ask says why: the box offers the one query a sentence always has
            return ["[CLS]"], [0]
        return tokens, shown_positions(tokens, values["hide"])

    def query_labels(values) -> list[str]:
        tokens, shown = shown_tokens(values)
        labels = ask_labels(tokens)[0]
        return [labels[i] for i in shown]

    def build_attend(values, picks):
        layer, head = heads_shown(values)[picks["which"]]
        return attend(reading_of(values["text"]), layer, head, values["hide"], picks["query"])

    def build_similarity(values, picks):
        return similarity(reading_of(values["a"]), reading_of(values["b"]))

    which = Pick(
        "which",
        marked("Head"),
        lambda v: range(len(heads_shown(v))),
        lambda v: [
            tr("head {which}: layer {layer}, head {head}", which="AB"[i], layer=lay, head=h)
            for i, (lay, h) in enumerate(heads_shown(v))
        ],
    )
    query = Pick("query", QUERY, lambda v: shown_tokens(v)[1], query_labels)
    return (
        Question("attend", marked("Which token does a head read most from one token?"), build_attend, (which, query)),
        Question("similarity", marked("How similar are the two sentences' embeddings?"), build_similarity),
    )
