"""App-wide server behaviour set up by app.py."""

from threadpoolctl import threadpool_info

from tests.apptest_helpers import run_page


def test_the_app_runs_blas_on_one_thread_per_process():
    at = run_page()
    assert not at.exception
    blas = [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]
    assert blas and all(n == 1 for n in blas)


def test_each_run_records_its_server_time():
    from ui.state import RUN_TIMES_MS

    before = len(RUN_TIMES_MS)
    at = run_page()
    at.run()
    assert len(RUN_TIMES_MS) >= min(before + 2, RUN_TIMES_MS.maxlen) and RUN_TIMES_MS[-1] > 0
