"""A student's answer to the open question, in the room's bar: a choice, a number, a row of weights, or a build
challenge checked on the student's own page; what was sent (the store's word, never the browser's), and the reveal.
Who the student is and how the bar follows the teacher are ui/classroom_student.py's."""

from __future__ import annotations

import math
from urllib.parse import urlencode

import streamlit as st

from classroom import errors
from classroom.questions import answer_label, is_right, option_texts, page_path, prompt_text, row_labels
from locales import num, sentence_space, tr
from ui.checks import outcome_box
from ui.classroom_open_question import answers_open, page_name
from ui.classroom_push import redraw_in
from ui.classroom_session import (
    LEFT_BEHIND,
    MESSAGE_KEY,
    SID_KEY,
    store,
)
from ui.number_box import number_box
from ui.page_questions import questions_named
from ui.page_state import declared
from ui.safe_text import escape_markdown

MINE_KEY = "class_mine"  # {question id: this student's answer}
UNSENT_KEY = "class_unsent"  # {question id: an answer the store could not take}: said until it is sent
PAGE_RUN_KEY = "_class_page_shown"  # the url_path of the page this student's last full run ran
LEFT_BEHIND += [MINE_KEY, UNSENT_KEY]


def answer_box(code: str, question) -> None:
    """The question asked now: the student's answer, changeable until the reveal, then the true value."""
    body, sid = question.body, st.session_state.get(SID_KEY)
    mine = st.session_state.setdefault(MINE_KEY, {})
    if question.id not in mine:
        try:
            mine[question.id] = store().my_answer(code, sid, question.id)
        except errors.ClassroomError:
            mine[question.id] = None
    st.markdown(
        tr("**Question {number}:** {prompt}", number=question.number, prompt=escape_markdown(prompt_text(body)))
    )
    first = body.get("again_of_number")
    if isinstance(body.get("again_of"), int) and not question.revealed:
        st.caption(
            tr(
                "Asked again: answer afresh. Your first answer stays with question {number}.",
                # the question asked again (not the one before this: Bring everyone can reopen an earlier step's)
                number=first if isinstance(first, int) and not isinstance(first, bool) else question.number - 1,
            )
        )
    if question.revealed:
        shown = store().current_view(code) if body["kind"] == "build" else None
        show_reveal(body, question.truth, mine[question.id], shown)
        return
    if not answers_open(st, question, f"s{question.id}"):
        if mine[question.id] is not None:
            st.caption(tr("Sent: {answer}.", answer=escape_markdown(answer_label(body, mine[question.id]))))
        return
    if body["kind"] == "build":
        build_box(code, question, mine[question.id])
        return
    key = f"class_answer_{question.id}"
    unsent = st.session_state.get(UNSENT_KEY, {}).get(question.id)
    chosen = unsent if unsent is not None else mine[question.id]  # what the box shows when it is drawn anew
    if body["kind"] == "row":
        row_editor(body, key, chosen)
    elif body["kind"] == "choice":
        labels = option_texts(body)
        options = list(range(len(labels)))
        st.radio(
            tr("Your answer"),
            options,
            index=None if chosen is None else int(chosen),
            format_func=lambda i: labels[i],
            key=key,
            horizontal=True,
        )
    else:
        lo, hi = float(body["lo"]), float(body["hi"])
        if key not in st.session_state and chosen is not None:
            st.session_state[key] = float(chosen)
        number_box(
            st,
            tr("Your answer (a number from {lo} to {hi})", lo=num(lo, "g"), hi=num(hi, "g")),
            key=key,
            min_value=lo,
            max_value=hi,
            optional=True,
            placeholder=tr("type it, e.g. {example}", example=num(0.35, "g")),
            help=tr(
                "Type the number you predict; within {tolerance} of the true value counts as right.",
                tolerance=num(body.get("tolerance", 0), "g"),
            ),
        )
    st.button(tr("Send my answer"), key=f"class_send_{question.id}", on_click=_send, args=(code, question.id, key))
    if unsent is not None:
        not_sent = escape_markdown(answer_label(body, unsent))
        if mine[question.id] is not None:
            st.warning(
                tr(
                    "Not sent: {answer}. Press **Send my answer** again (the teacher has {sent}).",
                    answer=not_sent,
                    sent=escape_markdown(answer_label(body, mine[question.id])),
                )
            )
        else:
            st.warning(tr("Not sent: {answer}. Press **Send my answer** again.", answer=not_sent))
    if mine[question.id] is not None:
        said = escape_markdown(answer_label(body, mine[question.id]))
        if question.closes_at is not None:
            st.caption(tr("Sent: {answer}. You can change it until the time is up (or the reveal).", answer=said))
        else:
            st.caption(tr("Sent: {answer}. You can change it until the reveal.", answer=said))


def build_goal(body: dict):
    """The page of a build question's goal as this student's last run of it left it, and the goal's check:
    (PageState, check), or None while this student is on another page (the check reads that page's own values)."""
    source = body.get("source") or {}
    if page_name(st.session_state.get(PAGE_RUN_KEY) or "") != source.get("page"):
        return None
    found = questions_named(str(source.get("page")))
    page = declared(found.prefix) if found is not None else None
    if page is None:
        return None
    try:
        question = found.by_kind(source.get("question"))
    except ValueError:
        return None
    return (page, question.check) if question.check is not None else None


def build_box(code: str, question, mine) -> None:
    """A build question: the goal checked live on this student's own page, and Submit, which sends the page's link
    and the server's verdict on it (never the browser's word)."""
    found = build_goal(question.body)
    on_it = page_name(st.session_state.get(PAGE_RUN_KEY) or "") == (question.body.get("source") or {}).get("page")
    if found is None and on_it:
        # this run is the student's first of the challenge's page, whose state the page reads after this bar: the
        # watcher redraws the bar once the run has ended (a screen without a watcher, at its next run)
        st.caption(tr("Opening the challenge on this page…"))
        redraw_in(store(), 0.0)
    elif found is None:
        st.info(tr("Go to the page the challenge is on (follow the teacher) to build it there."))
    else:
        page, check = found
        solved, said = check(question.body["goal"], page.values())
        (st.success if solved else st.caption)(escape_markdown(said[:1].upper() + said[1:]))
        st.button(
            tr("Submit my solution"),
            key=f"class_submit_{question.id}",
            type="primary" if solved else "secondary",
            on_click=_submit,
            args=(code, question.id, question.body),
            help=tr(
                "Sends this page as it is now (its link) and the check's verdict; you can submit again until the "
                "teacher closes the challenge."
            ),
        )
    if mine is not None:
        if mine["solved"]:
            st.caption(tr("Submitted: solved. You can submit again."))
        else:
            st.caption(tr("Submitted: not solved yet. You can submit again."))


def _submit(code: str, qid: int, body: dict) -> None:
    found = build_goal(body)
    if found is None:
        st.session_state[MESSAGE_KEY] = tr("Nothing was sent: go to the page the challenge is on first.")
        return
    page, check = found
    solved, said = check(body["goal"], page.values())
    view = challenge_path(body) + "?" + urlencode(page.full_query())
    try:
        store().answer(code, st.session_state.get(SID_KEY), qid, {"view": view, "solved": solved, "said": said})
    except errors.StoreUnavailable:
        st.session_state[MESSAGE_KEY] = tr("Your solution was not sent: the class's connection is lost for now.")
        return
    except errors.ClassroomError as err:
        st.session_state[MESSAGE_KEY] = tr("Your solution was not taken: {error}.", error=str(err))
        return
    st.session_state.setdefault(MINE_KEY, {})[qid] = {"view": view, "solved": solved, "said": said}


def challenge_path(body: dict) -> str:
    """The path of a build challenge's page, as a solution's view names it."""
    return page_path(str((body.get("source") or {}).get("page")))


def row_editor(body: dict, key: str, chosen) -> None:
    """A row of weights, one slider per key, with its sum as the student drags; on Send the row is scaled to sum
    to 1 (`row_sent`), and the student sees that row before sending it."""
    n, labels = body["n"], row_labels(body)
    for j in range(n):
        if f"{key}_{j}" not in st.session_state:
            st.session_state[f"{key}_{j}"] = float(chosen[j]) if chosen is not None else 0.0
    columns = st.columns(min(n, 4))
    for j in range(n):
        columns[j % len(columns)].slider(labels[j], 0.0, 1.0, step=0.01, key=f"{key}_{j}")
    weights = [st.session_state[f"{key}_{j}"] for j in range(n)]
    total = sum(weights)
    if total > 0:
        sent = answer_label(body, row_sent(weights))
        st.caption(
            tr(
                "Sum: {total}. *Send my answer* sends this row scaled to sum to 1: {row}.",
                total=num(total, ".2f"),
                row=escape_markdown(sent),
            )
        )
    else:
        st.caption(tr("Sum: 0. Give at least one key some weight: a row of attention weights sums to 1."))


def row_sent(weights: list[float]) -> list[float] | None:
    """The row a student's sliders send: scaled to sum to 1 (None: every weight is 0, nothing to scale)."""
    total = math.fsum(weights)
    return [w / total for w in weights] if total > 0 else None


def _send(code: str, qid: int, key: str) -> None:
    value = st.session_state.get(key)
    if f"{key}_0" in st.session_state:  # a row question's sliders
        value = row_sent([st.session_state[k] for k in _row_keys(key)])
    if value is None:
        st.session_state[MESSAGE_KEY] = tr("Pick or type an answer first: nothing was sent.")
        return
    try:
        store().answer(code, st.session_state.get(SID_KEY), qid, value)
    except errors.StoreUnavailable:
        # kept under the box until it is sent: a message alone would be gone with the next redraw of the bar
        st.session_state.setdefault(UNSENT_KEY, {})[qid] = value
        st.session_state[MESSAGE_KEY] = tr("Your answer was not sent: the class's connection is lost for now.")
        return
    except errors.ClassroomError as err:
        st.session_state[MESSAGE_KEY] = tr("Your answer was not taken: {error}.", error=str(err))
        return
    st.session_state.setdefault(MINE_KEY, {})[qid] = value
    st.session_state.get(UNSENT_KEY, {}).pop(qid, None)


def _row_keys(key: str) -> list[str]:
    keys, j = [], 0
    while f"{key}_{j}" in st.session_state:
        keys.append(f"{key}_{j}")
        j += 1
    return keys


def show_reveal(body: dict, truth, mine, shown_view: str | None = None) -> None:
    """The answer and this student's own, once revealed; a build challenge's: whose solution the page shows
    (`shown_view`, the room's view: the one the teacher chose to show, if any)."""
    if body["kind"] == "build":
        if mine is not None and shown_view == mine["view"]:
            on_screen = sentence_space() + tr("Every screen shows your solution now (without your name).")
        elif shown_view is not None and shown_view.partition("?")[0] == challenge_path(body):
            on_screen = sentence_space() + tr(
                "The page shows a classmate's solution, chosen by the teacher (no name), not yours."
            )
        else:
            on_screen = ""
        if mine is None:
            st.info(tr("The teacher has closed the challenge: you did not submit a solution.") + on_screen)
        else:
            outcome_box(
                st,
                bool(mine["solved"]),
                tr("The challenge is closed. Your solution: {said}.", said=escape_markdown(mine["said"])) + on_screen,
            )
        return
    if truth is None:
        st.info(tr("The teacher has closed this question."))
        return
    said = None if mine is None else answer_label(body, mine)
    shown = answer_label(body, truth)
    tolerance = num(body.get("tolerance", 0), "g")
    if body["kind"] == "choice" and isinstance(truth, list) and len(truth) > 1:
        shown = tr("{answer} (a tie: each of them is right)", answer=shown)
    elif body["kind"] == "number":
        shown = tr("{answer} (within {tolerance} counts as right)", answer=num(truth, ".3f"), tolerance=tolerance)
    elif body["kind"] == "row":
        labels = row_labels(body)
        shown = tr(
            "{row} (each weight within {tolerance} of it counts as right)",
            row=_weights(labels, truth),
            tolerance=tolerance,
        )
        said = None if mine is None else _weights(labels, mine)
    said = tr("You did not answer.") if mine is None else tr("You said {answer}.", answer=escape_markdown(said))
    text = tr("The answer: **{answer}**. {said}", answer=escape_markdown(shown), said=said)
    outcome_box(st, bool(is_right(body, truth, mine)), text)


def _weights(labels: list[str], row) -> str:
    """A row of weights with its keys' labels: "north 0.25, east 0.75" (the labels are tokens: never translated)."""
    return tr(", ").join(f"{label} {num(w, '.2f')}" for label, w in zip(labels, row))
