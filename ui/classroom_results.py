"""Class mode, a question's results as the teacher reads them: who answered and how (the distribution, anonymous;
the nicknames only if the teacher asks), the first vote beside the second when a question is asked again, a
challenge's gallery of solutions with Show this one, and the buttons that reveal, ask again or end the question.
The teacher's bar (ui/classroom_teacher.py) draws the panel compact, for the question asked now; the dashboard
(pages/class.py) draws it whole, and each lesson step's question while the students go at their own pace
(step_answers, step_question_panels). here_text says who is here, for the bar too.
"""

from __future__ import annotations

import streamlit as st

from classroom import errors
from classroom.questions import answer_label, is_right, prompt_text
from locales import marked, tr
from ui.classroom_open_question import answers_open
from ui.classroom_questions import common_miss, distribution_figure
from ui.classroom_session import LEFT_BEHIND, MESSAGE_KEY, SHOW_KEY, store
from ui.classroom_teacher_actions import teacher_action
from ui.page_questions import questions_named
from ui.safe_text import escape_markdown

NAMES_KEY = "class_show_names"
SHOWN_SOLUTION_KEY = "_class_shown"  # {question id: the view of the solution this teacher showed last}
LEFT_BEHIND += [SHOWN_SOLUTION_KEY]


def here_text(here: int, seats: int) -> str:
    """Who is in the room, as the teacher reads it: students here now, and seats ever made when there are more."""
    if seats == here:
        return tr("{here} here", here=here)
    return tr("{here} here ({seats} seats in all)", here=here, seats=seats)


def results_panel(code: str, key: str, qid: int, compact: bool = False, step: bool = False) -> None:
    """Here, answered, the distribution (anonymous), Reveal, and the nicknames only if the teacher asks. A `step`
    question (open on its lesson step while students go at their own pace) is revealed, never asked again or ended:
    those act on the whole class's question."""
    try:
        res = store().results(code, key, qid, names=st.session_state.get(NAMES_KEY, False))
    except (errors.ClassroomError, PermissionError) as err:
        st.warning(escape_markdown(str(err)))
        return
    q = res.question
    prompt, here = escape_markdown(prompt_text(q.body)), here_text(res.here, res.seats)
    if q.revealed and q.truth is not None:
        right = sum(bool(is_right(q.body, q.truth, v)) for v in res.values)
        summary = tr(
            "**Question {number}:** {prompt} · **{answered}** answered · {here} · revealed: **{right}** of {answered} "
            "right",
            number=q.number,
            prompt=prompt,
            answered=res.answered,
            here=here,
            right=right,
        )
    else:
        summary = tr(
            "**Question {number}:** {prompt} · **{answered}** answered · {here}",
            number=q.number,
            prompt=prompt,
            answered=res.answered,
            here=here,
        )
    st.markdown(summary)
    from ui.charts import chart  # here: ui.charts imports plotly helpers only pages with charts need

    if not q.revealed:
        answers_open(st, q, f"t{qid}")
    truth = q.truth if q.revealed else None
    first = _first_vote(code, key, q.body)
    if q.body["kind"] == "build":
        build_gallery(code, key, q, res, compact)
    elif first is None:
        chart(st, distribution_figure(q.body, res.values, truth), key=f"class_dist_{qid}", export=False)
    else:  # asked again: the first vote beside this one, on the same scale
        before, after = st.columns(2)
        before.markdown(
            tr(
                "**First vote** (question {number}): {answered} answered",
                number=first.question.number,
                answered=first.answered,
            )
        )
        chart(before, distribution_figure(q.body, first.values, truth), key=f"class_dist_first_{qid}", export=False)
        after.markdown(tr("**After discussion**: {answered} answered", answered=res.answered))
        chart(after, distribution_figure(q.body, res.values, truth), key=f"class_dist_{qid}", export=False)
    if q.body["kind"] == "row" and q.revealed:
        miss = common_miss(q.body, res.values, q.truth)
        st.markdown(
            escape_markdown(miss) if miss else tr("The class's mean row is within the tolerance of the true row.")
        )
    with st.container(horizontal=True):
        if not q.revealed:
            build = q.body["kind"] == "build"
            st.button(
                tr("Close the challenge") if build else tr("Reveal the answer to the class"),
                key=f"class_reveal_{qid}",
                type="primary",
                on_click=_reveal,
                args=(code, key, qid),
                help=tr("End the submissions: each student sees their own verdict.")
                if build
                else tr(
                    "End the answers and show the true value on every screen, and on the page the question is about."
                ),
            )
            if first is None and res.answered and q.body["kind"] != "build" and not step:
                st.button(
                    tr("Ask again"),
                    key=f"class_again_{qid}",
                    on_click=_ask_again,
                    args=(code, key, qid),
                    help=tr(
                        "Peer instruction: let the class discuss, then ask the same question again, without "
                        "revealing it. You see the two votes side by side; the first one stays in the answers file."
                    ),
                )
        if not step:
            st.button(
                tr("End question"),
                key=f"class_end_{qid}",
                on_click=teacher_action,
                args=("end",),
                help=tr(
                    "Take the question off the students' screens without revealing it: the page shows its answer "
                    "again on every screen; its answers stay in the CSV, without a true value."
                ),
            )
    if not compact:
        st.toggle(
            tr("Show nicknames"),
            key=NAMES_KEY,
            help=tr(
                "Nicknames beside the answers, on this screen: if this screen is projected, the class sees them. "
                "Students' screens never show them; the answers file always has them."
            ),
        )
        if res.names is not None:
            st.dataframe(
                {
                    # Translators: a table's column header
                    tr("student"): [n or tr("(anonymous)") for n in res.names],
                    # Translators: a table's column header
                    tr("answer"): [answer_label(q.body, v) for v in res.values],
                },
                hide_index=True,
            )


def step_answers(code: str, key: str, state) -> None:
    """While the students go through the lesson at their own pace (the dashboard's Answers): how many are on each
    step, and each step's question with its answers and its Reveal."""
    counts = store().step_counts(code, key)
    st.dataframe(
        {
            # Translators: a table's column header: the lesson's step
            tr("step"): [f"{n + 1}" for n in range(len(state.steps))],
            # Translators: a table's column header: the step's title
            tr("title"): [step.title for step in state.steps],
            # Translators: a table's column header: how many students are on this step now
            tr("here on it"): counts,
            # Translators: a table's column header
            tr("question"): [
                tr("question {number}", number=q.number) if (q := state.step_questions.get(n)) else ""
                for n in range(len(counts))
            ],
        },
        hide_index=True,
        key="class_step_counts",
    )
    step_question_panels(code, key, state.step_questions)


def step_question_panels(code: str, key: str, asked: dict) -> None:
    """Each of the lesson's questions `asked` ({step: question}), in an expander: its answers and its Reveal."""
    for n, question in sorted(asked.items()):
        if question.revealed:
            label = tr("Step {step}: question {number} (revealed)", step=n + 1, number=question.number)
        else:
            label = tr("Step {step}: question {number} (open)", step=n + 1, number=question.number)
        with st.expander(label):
            results_panel(code, key, question.id, compact=True, step=True)


GALLERY = 24  # the solutions a build question's gallery shows at most, solved ones first
SOLUTION_CAPTIONS = {  # (solved, shown on the class's screens now): a solution's caption in the gallery
    (True, False): marked("Solution {number} · solved"),
    (False, False): marked("Solution {number} · not yet"),
    (True, True): marked("Solution {number} · solved · shown"),
    (False, True): marked("Solution {number} · not yet · shown"),
}


def build_gallery(code: str, key: str, q, res, compact: bool) -> None:
    """A build question's results: how many solved it, and the solutions, anonymous, each as a small picture with
    Show this one (the class's view becomes that solution)."""
    solved = sum(bool(v["solved"]) for v in res.values)
    st.markdown(
        tr(
            "**{solved}** solved · **{unsolved}** submitted, not solved yet · {waiting} here have not submitted",
            solved=solved,
            unsolved=res.answered - solved,
            waiting=max(res.here - res.answered, 0),
        )
    )
    source = q.body.get("source") or {}
    declared_questions = questions_named(str(source.get("page")))
    # the page's declared state decodes a solution's view whether or not this tab has run that page
    page = declared_questions.state if declared_questions else None
    try:
        question = declared_questions.by_kind(source.get("question")) if declared_questions else None
    except ValueError:
        question = None
    # the solution this teacher showed (the room's view follows it only once the page has run), else the room's
    on_screen = st.session_state.get(SHOWN_SOLUTION_KEY, {}).get(q.id) or (
        store().current_view(code) if q.revealed else None
    )
    shown = sorted(enumerate(res.values), key=lambda item: not item[1]["solved"])[: GALLERY // (2 if compact else 1)]
    columns = st.columns(4)
    for place, (i, solution) in enumerate(shown):
        with columns[place % len(columns)]:
            st.caption(tr(SOLUTION_CAPTIONS[bool(solution["solved"]), solution["view"] == on_screen], number=i + 1))
            if question is not None and question.preview is not None and page is not None:
                from ui.charts import square_chart  # as in results_panel

                values, _ = page.decode_link(solution["view"])
                figure = question.preview(q.body["goal"], values)
                square_chart(st, figure, key=f"class_solution_{q.id}_{i}", export=False)
            st.button(
                tr("Show this one"),
                key=f"class_show_{q.id}_{i}",
                on_click=_show_solution,
                args=(code, key, q.id, solution["view"]),
                help=tr(
                    "This solution on your screen and every student's, without its author's name; it closes the "
                    "challenge."
                ),
            )


def _show_solution(code: str, key: str, qid: int, view: str) -> None:
    """Show this one: the challenge closes (its submissions end), and this screen opens the solution's view on its
    next run, which makes it the class's (lead_class)."""
    try:
        if not store().results(code, key, qid).question.revealed:
            store().reveal(code, key, qid)
    except (errors.ClassroomError, PermissionError) as err:
        st.session_state[MESSAGE_KEY] = tr("Could not show it: {error}.", error=err)
        return
    st.session_state[SHOW_KEY] = view
    st.session_state[SHOWN_SOLUTION_KEY] = {qid: view}  # bounded: the last question's only


def _first_vote(code: str, key: str, body: dict):
    """The results of the question this one asks again (None: it is asked for the first time, or they cannot be
    read)."""
    first = body.get("again_of")
    if not isinstance(first, int) or isinstance(first, bool):
        return None
    try:
        return store().results(code, key, first)
    except (errors.ClassroomError, PermissionError):
        return None


def _ask_again(code: str, key: str, qid: int) -> None:
    """The same question again (its prompt, its view and its true value), as a new question: the class answers it
    afresh, and the first vote stays with the first."""
    try:
        asked = store().results(code, key, qid).question
        again = {**asked.body, "again_of": qid, "again_of_number": asked.number}  # the number: what students read
        store().ask(code, key, again, truth=asked.truth)
    except (errors.ClassroomError, PermissionError, ValueError) as err:
        st.session_state[MESSAGE_KEY] = tr("Could not ask again: {error}.", error=err)


def _reveal(code: str, key: str, qid: int) -> None:
    try:
        store().reveal(code, key, qid)
    except (errors.ClassroomError, PermissionError) as err:
        st.session_state[MESSAGE_KEY] = tr("Could not reveal: {error}.", error=err)
