"""app.py and ui/server_process.py: the server-wide behaviour app.py sets up (BLAS threads, run times, pages)."""

from threadpoolctl import threadpool_info

from tests.apptest_helpers import run_page


def test_the_app_runs_blas_on_one_thread_per_process():
    at = run_page()
    assert not at.exception
    blas = [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]
    assert blas and all(n == 1 for n in blas)


def test_each_run_records_its_server_time():
    from ui.server_process import RUN_TIMES_MS

    before = len(RUN_TIMES_MS)
    at = run_page()
    at.run()
    assert len(RUN_TIMES_MS) >= min(before + 2, RUN_TIMES_MS.maxlen) and RUN_TIMES_MS[-1] > 0


def test_a_session_builds_its_pages_once_and_keeps_them_to_itself():
    """st.Page objects are built on a session's first run and reused (st.Page reads the disk); another
    session gets its own, since st.navigation marks the page it picks on the object."""
    at = run_page()

    def built(session) -> list:
        language, pages = session.session_state["_navigation_pages"]
        assert language == session.session_state["language"], "built in the session's language"
        return [p for section in pages.values() for p in section]

    first = built(at)
    assert len(first) == 13  # with class mode's page
    at.switch_page("pages/causal.py").run()
    assert not at.exception
    assert all(a is b for a, b in zip(first, built(at)))
    other = run_page()
    theirs = built(other)
    assert not any(a is b for a, b in zip(first, theirs))
    assert [p.url_path for p in theirs] == [p.url_path for p in first]
    at.session_state["language"] = "es"
    at.run()
    spanish = built(at)
    assert [p.title for p in spanish][:2] == ["Zona de pruebas", "Predice y comprueba"], "built again in Spanish"
    assert [p.url_path for p in spanish] == [p.url_path for p in first], "the same links in every language"


def test_the_browser_tests_visit_every_page_a_student_reads():
    """tests/browser/conftest.PAGES, which the phone, projector and accessibility tests walk, is the navigation
    without /class (a room's page, with a test of its own): a new page cannot be left out of them."""
    from tests.browser.conftest import PAGES

    at = run_page()
    paths = [p.url_path for section in at.session_state["_navigation_pages"][1].values() for p in section]
    assert sorted(PAGES) == sorted(p for p in paths if p != "class")
