"""'Ask the class' on the Predict page and the Playground: the teacher picks a query (and a key), the
question is built from what the page shows now, and its true value is computed by the attention core.

The page's own state is read from its declared session keys (pages/predict.py: predict_puzzle and
predict_seq; pages/playground.py: seq, pg_causal, pg_scale), so the pages themselves need no change.
"""

from __future__ import annotations

import streamlit as st

from attention.sequence import TokenSequence
from classroom import errors
from ui.classroom_questions import argmax_question, key_options, predict_question, weight_question
from ui.safe_text import escape_markdown

ASKING_PAGES = {"predict": "Predict, then check", "": "Playground"}
KINDS = {"argmax": "Which key will a query attend to most?", "weight": "What weight will a query give a key?"}


def page_sequence(url_path: str) -> tuple[TokenSequence | None, str | None]:
    """The sequence the page shows now, and the Predict page's puzzle id (None on the Playground)."""
    if url_path == "predict":
        puzzle = st.session_state.get("predict_puzzle", "aligned")
        if puzzle == "own":
            return st.session_state.get("predict_seq"), puzzle
        from lessons.puzzles import PUZZLES_BY_ID

        found = PUZZLES_BY_ID.get(puzzle)
        return (found.seq if found else None), puzzle
    return st.session_state.get("seq"), None


def build(url_path: str, kind: str, query: int, key: int) -> tuple[dict, int | float]:
    """The question and its true value, from the page's current state; ValueError naming a problem."""
    seq, puzzle = page_sequence(url_path)
    if not isinstance(seq, TokenSequence):
        raise ValueError("this page has no sequence to ask about yet")
    if url_path == "predict":
        return predict_question(puzzle, query, own=seq if puzzle == "own" else None)
    causal = bool(st.session_state.get("pg_causal", False))
    scale = bool(st.session_state.get("pg_scale", True))
    source = {"page": "playground", "tokens": list(seq.tokens)}
    if kind == "weight":
        return weight_question(seq, query, key, causal=causal, scale=scale, source=source)
    return argmax_question(seq, query, causal=causal, scale=scale, source=source)


ASK_BOX = "class_ask_box"  # the popover's open state: the Ask button closes it (programmatic close needs its key)
ASK_ERROR = "_class_ask_error"  # why the last Ask was refused, shown once in the popover (which stays open)


def ask_controls(url_path: str, code: str, teacher_key: str, store) -> None:
    """On an asking page: a popover to pose one question about what the page shows now (to `store`, a
    classroom.store.Store). Asking closes it, so the page and the answers arriving are in view again. Its
    controls are drawn only while it is open (opening it reruns the page): every element a page draws costs each
    of its runs, on the server and in the browser (docs/performance.md, "What the rest of the page costs a
    click")."""
    if url_path not in ASKING_PAGES:
        return
    seq, _ = page_sequence(url_path)
    if not isinstance(seq, TokenSequence):
        return
    n = len(seq.tokens)
    box = st.popover("Ask the class", icon=":material/quiz:", key=ASK_BOX, on_change="rerun")
    if not box.open:  # drawn only while open: each of the teacher's runs draws three or four elements fewer
        return
    with box:
        kinds = ["argmax"] if url_path == "predict" else list(KINDS)
        kind = st.radio("Question", kinds, format_func=KINDS.get, key="class_ask_kind")
        labels = [escape_markdown(label) for label in key_options(seq.tokens)]
        st.selectbox("Query", range(n), format_func=lambda i: f"q_{i} {labels[i][4:]}", key=f"class_ask_query_{n}")
        if kind == "weight":
            st.selectbox("Key", range(n), format_func=lambda j: labels[j], key=f"class_ask_key_{n}")
        error = st.session_state.pop(ASK_ERROR, None)
        if error:
            st.error(escape_markdown(f"Could not ask: {error}"))
        st.button("Ask", key="class_ask", type="primary", on_click=_ask, args=(url_path, code, teacher_key, store, n))


def _ask(url_path: str, code: str, teacher_key: str, store, n: int) -> None:
    """The Ask button (a callback, before the run: the teacher's bar drawn by this run shows the question)."""
    kind = st.session_state.get("class_ask_kind", "argmax")
    query = st.session_state.get(f"class_ask_query_{n}", 0)
    key = st.session_state.get(f"class_ask_key_{n}", 0) if kind == "weight" else 0
    try:
        question, truth = build(url_path, kind, query, key)
        store.ask(code, teacher_key, question, truth=truth)
    except (errors.ClassroomError, PermissionError, ValueError) as err:
        st.session_state[ASK_ERROR] = str(err)
    else:
        st.session_state[ASK_BOX] = False
