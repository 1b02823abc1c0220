"""Recording a lesson: *Add this view to my lesson* in the sidebar of every lesson page appends the page as it is now
(its whole declared state) as a step of a lesson held in this browser tab; on /class a small editor names the lesson
and each step, reorders and deletes steps, writes the notes, picks a step's question among its page's own, checks the
lesson as `python -m classroom.decks check` does, and downloads it as a .toml file (or starts it in the room). A
lesson file uploaded there is opened for editing; downloading it again gives the same lesson.
"""

from __future__ import annotations

import itertools

import streamlit as st

from classroom.decks import MAX_STEPS, DeckError, deck_from_dict, page_of, parse_deck, to_toml
from locales import LANGUAGES, language, tr, tr_n
from ui.classroom_session import teacher_view
from ui.declared import PAGES, declared_page
from ui.number_box import number_box
from ui.safe_text import escape_markdown

DRAFT_KEY = "_lesson_draft"  # {"title", "level", "minutes", "language", "steps": [{"id", "title", "view", ...}]}
_ids = itertools.count(1)  # a step's widgets are keyed by its id, which a reorder keeps


def draft() -> dict:
    if DRAFT_KEY not in st.session_state:
        st.session_state[DRAFT_KEY] = {
            "title": tr("My lesson"),
            "level": "",
            "minutes": 20,
            "language": language(),  # a teacher writes their notes in the language they read the app in
            "steps": [],
        }
    return st.session_state[DRAFT_KEY]


# ------------------------------------------------------------------ recording, on every lesson page
def record_button(url_path: str, title: str) -> None:
    """In the sidebar, after a lesson page has run: add its view, as it is now, to this tab's lesson."""
    if (url_path or "playground") not in PAGES:
        return
    steps = draft()["steps"]
    st.sidebar.button(
        tr("Add this view to my lesson"),
        key="lesson_record",
        icon=":material/playlist_add:",
        on_click=_record,
        args=(url_path, title),
        disabled=len(steps) >= MAX_STEPS,
        help=tr(
            "A step of a lesson you can edit, download and run in a room (Teach a class). It keeps this page as it "
            "is now: every setting and the vectors."
        ),
    )
    if steps:
        st.sidebar.caption(
            tr_n(
                "Your lesson: {n} step. Edit and download it on *Teach a class*: this tab holds it until it is "
                "reloaded or closed.",
                "Your lesson: {n} steps. Edit and download it on *Teach a class*: this tab holds it until it is "
                "reloaded or closed.",
                len(steps),
                n=len(steps),
            )
        )


def _record(url_path: str, title: str) -> None:
    steps = draft()["steps"]
    if len(steps) < MAX_STEPS:
        steps.append({"id": next(_ids), "title": title, "view": teacher_view(url_path), "notes": ""})


# ------------------------------------------------------------------ the editor, on /class
def lesson_editor(start=None) -> None:
    """The lesson held in this tab: its name, its steps (each editable), its check, the download; `start(lesson)`,
    when given (in a room), runs it."""
    lesson = draft()
    n = len(lesson["steps"])
    label = tr_n(
        "Your lesson ({n} step): edit, download, or open a lesson file",
        "Your lesson ({n} steps): edit, download, or open a lesson file",
        n,
        n=n,
    )
    with st.expander(label):
        upload = st.file_uploader(tr("Open a lesson file to edit (.toml)"), type=["toml"], key="lesson_edit_file")
        if upload is not None and st.session_state.get("_lesson_edit_opened") != upload.file_id:
            try:
                opened = parse_deck(upload.getvalue(), declared_page)
            except DeckError as err:
                for problem in err.problems:
                    st.error(escape_markdown(problem), icon=":material/error:")
            else:
                st.session_state["_lesson_edit_opened"] = upload.file_id
                lesson.update(from_deck(opened.to_dict()))
                _forget_widgets()
        if not lesson["steps"]:
            st.caption(
                tr(
                    "No steps yet: on any lesson page, press *Add this view to my lesson* in the sidebar. This tab "
                    "holds the lesson until it is reloaded or closed: download it to keep it."
                )
            )
            return
        lesson["title"] = st.text_input(tr("Lesson title"), lesson["title"], key="lesson_edit_title", max_chars=80)
        lesson["level"] = st.text_input(
            tr("Who it is for"),
            lesson["level"],
            key="lesson_edit_level",
            max_chars=60,
            placeholder=tr("e.g. First contact"),
        )
        lesson["minutes"] = number_box(
            st,
            tr("Length (minutes)"),
            key="lesson_edit_minutes",
            min_value=1,
            max_value=240,
            value=int(lesson["minutes"]),
        )
        lesson["language"] = st.selectbox(
            tr("Notes written in"),
            list(LANGUAGES),
            index=list(LANGUAGES).index(lesson.get("language", "en")),
            format_func=LANGUAGES.__getitem__,
            key="lesson_edit_language",
            help=tr("The language of the lesson's titles and notes: a class reading another is told so."),
        )
        for n, step in enumerate(lesson["steps"]):
            _step_editor(n, step, len(lesson["steps"]))
        try:
            deck = deck_from_dict(as_document(lesson), declared_page)
        except DeckError as err:
            st.warning(tr("Not ready yet:"), icon=":material/edit_note:")
            for problem in err.problems:
                st.caption(escape_markdown(problem))
            return
        with st.container(horizontal=True):
            st.download_button(
                tr("Download the lesson (.toml)"),
                to_toml(deck),
                file_name="lesson.toml",
                mime="application/toml",
                key="lesson_edit_download",
                icon=":material/download:",
            )
            if start is not None:
                st.button(
                    tr("Start this lesson in the room"),
                    key="lesson_edit_start",
                    on_click=start,
                    args=(deck.to_dict(),),
                )
            st.button(tr("Clear the lesson"), key="lesson_edit_clear", on_click=_clear)


def _step_editor(n: int, step: dict, count: int) -> None:
    sid = step["id"]
    with st.container(border=True, key=f"lesson_edit_step_{sid}"):
        view = step["view"].replace("`", "%60")  # shown as code, where Markdown's escapes would show as backslashes
        st.markdown(tr("**Step {step}** · `{view}`", step=n + 1, view=view if len(view) <= 80 else view[:79] + "…"))
        # Translators: the label of a step's title box
        step["title"] = st.text_input(tr("Title"), step["title"], key=f"lesson_edit_{sid}_title", max_chars=80)
        step["notes"] = st.text_area(
            tr("Your notes (the teacher's only)"), step.get("notes", ""), key=f"lesson_edit_{sid}_notes"
        )
        step["student_notes"] = st.text_area(
            tr("Notes for a student working alone (optional)"),
            step.get("student_notes", ""),
            key=f"lesson_edit_{sid}_student",
        )
        step["question"] = _question_picker(step)
        with st.container(horizontal=True):
            # Translators: a button: move this step up in the lesson
            st.button(tr("Up"), key=f"lesson_edit_{sid}_up", disabled=n == 0, on_click=_move, args=(n, -1))
            # Translators: a button: move this step down in the lesson
            st.button(tr("Down"), key=f"lesson_edit_{sid}_down", disabled=n == count - 1, on_click=_move, args=(n, 1))
            # Translators: a button: delete this step
            st.button(tr("Delete"), key=f"lesson_edit_{sid}_delete", on_click=_delete, args=(n,))


def _question_picker(step: dict) -> dict | None:
    """The step's question: none, or one of its page's, with the picks it takes (the options the step's view
    offers)."""
    sid, page = step["id"], page_of(step["view"])
    try:
        declared = declared_page(page)
        values, _ = declared.state.decode_link(step["view"])
    except ValueError:
        return step.get("question")
    kinds = [None, *(q.kind for q in declared.questions)]
    titles = {None: tr("No question"), **{q.kind: tr(q.title) for q in declared.questions}}
    current = step.get("question") or {}
    kind = st.selectbox(
        # Translators: the label of the box that picks a step's question
        tr("Question"),
        kinds,
        index=kinds.index(current.get("kind")) if current.get("kind") in kinds else 0,
        format_func=titles.get,
        key=f"lesson_edit_{sid}_kind",
    )
    if kind is None:
        return None
    question = {"kind": kind}
    for pick in declared.by_kind(kind).picks:
        options, labels = list(pick.options(values)), list(pick.labels(values))
        shown = current.get(pick.name)
        question[pick.name] = st.selectbox(
            tr(pick.label),
            options,
            index=options.index(shown) if shown in options else 0,
            format_func=dict(zip(options, labels)).get,
            key=f"lesson_edit_{sid}_{pick.name}_{len(options)}",
        )
    return question


def as_document(lesson: dict) -> dict:
    """The lesson held here as a deck's plain data (what `deck_from_dict` checks and `to_toml` writes)."""
    steps = []
    for step in lesson["steps"]:
        entry = {"title": step["title"], "view": step["view"]}
        for field in ("notes", "student_notes"):
            if step.get(field):
                entry[field] = step[field]
        if step.get("question"):
            entry["question"] = dict(step["question"])
        steps.append(entry)
    return {
        "title": lesson["title"],
        "level": lesson["level"],
        "minutes": int(lesson["minutes"]),
        "language": lesson.get("language", "en"),
        "step": steps,
    }


def from_deck(data: dict) -> dict:
    """A deck's plain data as the lesson held here (each step given an id for its widgets)."""
    return {
        "title": data["title"],
        "level": data["level"],
        "minutes": data["minutes"],
        "language": data.get("language", "en"),
        "steps": [
            {
                "id": next(_ids),
                "title": s["title"],
                "view": s["view"],
                "notes": s.get("notes", ""),
                "student_notes": s.get("student_notes", ""),
                "question": s.get("question"),
            }
            for s in data["step"]
        ],
    }


def _move(n: int, by: int) -> None:
    steps = draft()["steps"]
    steps[n], steps[n + by] = steps[n + by], steps[n]


def _delete(n: int) -> None:
    draft()["steps"].pop(n)


def _clear() -> None:
    st.session_state.pop(DRAFT_KEY, None)
    _forget_widgets()


def _forget_widgets() -> None:
    """The editor's boxes show the lesson held here again (after it was replaced), not what they held."""
    for key in [k for k in st.session_state if str(k).startswith("lesson_edit_") and k != "lesson_edit_file"]:
        del st.session_state[key]
