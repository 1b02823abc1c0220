"""Attention from scratch: entry point, shared state and navigation.

Run with `streamlit run app.py`. Every page is listed here explicitly (st.navigation does not
discover the pages/ folder). Pages read the shared state set up below and call the numpy core.
"""

import time
from pathlib import Path

import streamlit as st

from locales import language, tr
from ui import streamlit_internals
from ui.classroom_room import class_after_page, room_bar
from ui.classroom_session import in_room, is_teacher
from ui.lesson_editor import record_button
from ui.page_state import finish_run, start_run
from ui.presenter import presenter_controls, presenter_from_url, share_link
from ui.reconnect import rerun_after_reconnect
from ui.run_gate import run_gate
from ui.server_process import data_url, freeze_long_lived, limit_blas_threads, record_run_time
from ui.shared_state import SHARED, init_defaults, is_presenting, mark_app_entry, save_current

# A local file: a material-symbol favicon would be fetched from the internet by every browser.
FAVICON = Path(__file__).parent / "docs" / "favicon.png"
_run_started = time.perf_counter()
limit_blas_threads()
streamlit_internals.apply_once()  # the patches to Streamlit's server (ui/streamlit_internals)
freeze_long_lived()  # what the last run imported stays: the garbage collector stops walking it
st.set_page_config(
    page_title="Attention from scratch",
    page_icon=data_url(FAVICON),  # not the path: Streamlit would read and register the file on every run
    layout="wide",
    # the session's switch too: a view opened for this screen (a lesson's step, a solution shown, a question's hold)
    # comes without ?present=1 until the run writes it back, and the projector's sidebar must not open meanwhile
    initial_sidebar_state="collapsed" if presenter_from_url() or is_presenting() else "auto",
)
init_defaults()
mark_app_entry()
SHARED.load()  # presenter mode and the language, from the link: the navigation below is in that language

PAGES_KEY = "_navigation_pages"


def navigation_pages() -> dict[str, list[st.Page]]:
    """The pages by section, built once per session and language. st.Page finds its file on the disk (1.1 ms per
    run for twelve); st.navigation marks the page it picks on the object itself, so a session (which runs one
    script at a time) keeps its own."""
    built = st.session_state.get(PAGES_KEY)
    if built is None or built[0] != language():
        built = st.session_state[PAGES_KEY] = (language(), _pages())
    return built[1]


def _pages() -> dict[str, list[st.Page]]:
    return {
        tr("Attention by hand"): [
            st.Page(
                "pages/playground.py", title=tr("Playground"), icon=":material/grid_on:", default=True
            ),  # lives at /
            st.Page(
                "pages/predict.py",
                title=tr("Predict, then check"),
                icon=":material/psychology_alt:",
                url_path="predict",
            ),
        ],
        tr("Getting it right"): [
            st.Page(
                "pages/scaling.py", title=tr("Why divide by √d_k"), icon=":material/straighten:", url_path="scaling"
            ),
            st.Page("pages/causal.py", title=tr("Causal masking"), icon=":material/block:", url_path="causal"),
            st.Page("pages/pitfalls.py", title=tr("Pitfalls"), icon=":material/warning:", url_path="pitfalls"),
        ],
        tr("Inside the transformer"): [
            st.Page("pages/heads.py", title=tr("Multi-head attention"), icon=":material/hub:", url_path="heads"),
            st.Page(
                "pages/positions.py", title=tr("Where is position?"), icon=":material/pin_drop:", url_path="positions"
            ),
            st.Page(
                "pages/block.py", title=tr("The transformer block"), icon=":material/view_agenda:", url_path="block"
            ),
        ],
        tr("A model that learns"): [
            st.Page(
                "pages/induction.py",
                title=tr("Watch an induction head form"),
                icon=":material/school:",
                url_path="induction",
            ),
            st.Page(
                "pages/generation.py",
                title=tr("Generation and the KV cache"),
                icon=":material/memory:",
                url_path="generation",
            ),
        ],
        tr("A real model"): [
            st.Page(
                "pages/pretrained.py",
                title=tr("A real pretrained model"),
                icon=":material/smart_toy:",
                url_path="pretrained",
            ),
            st.Page(
                "pages/pretrained_deeper.py",
                title=tr("The real model, read deeper"),
                icon=":material/scatter_plot:",
                url_path="pretrained_deeper",  # as the file name: AppTest finds a page by it
            ),
        ],
        tr("Class mode"): [
            st.Page("pages/class.py", title=tr("Teach a class"), icon=":material/groups:", url_path="class"),
        ],
    }


pg = st.navigation(navigation_pages(), expanded=True)  # every page listed: "Teach a class" is never under "View more"
presenter_controls()
share_slot = st.sidebar.empty()  # filled after the page has written its state into the URL
st.sidebar.caption(
    tr(
        "Attention from scratch: every number on screen is computed by the project's own numpy core, "
        "no deep-learning framework."
    )
)
rerun_after_reconnect()  # a lost server (a worker behind deploy/'s proxy) comes back with the same view


def finish() -> None:
    """After the page: its declared state goes into the link, then the link is shown to share."""
    save_current()
    share_link(share_slot, pg.url_path)
    if is_teacher() or not in_room():  # a student following a room has the teacher's lesson
        record_button(pg.url_path, pg.title)
    class_after_page(pg.url_path)  # class mode: a teacher's view becomes the room's
    record_run_time((time.perf_counter() - _run_started) * 1000)


def after_section(started: float) -> None:
    """After a section of the page ran again alone (ui.page_state.section): its state goes into the link.
    It cannot redraw the sidebar: the share link there follows the browser's link
    (ui.streamlit_internals.browser.HISTORY_JS)."""
    save_current()
    class_after_page(
        pg.url_path, whole=False
    )  # class mode: a teacher's change within a section becomes the room's view
    record_run_time((time.perf_counter() - started) * 1000)


start_run(finish, after_section)
room_bar(pg.url_path, navigation_pages())  # class mode: the room's bar; a paused class sees the teacher's card
with run_gate():
    pg.run()
finish_run()  # a page that stopped early (ui.page_state.stop) has already finished
