"""The test harness: the code that starts the app's servers, drives headless Chromium and speaks Streamlit's
websocket protocol without a browser. The tests (tests/, tests/browser/) and the benchmarks (bench/) both use it;
it imports neither (tests/test_imports.py).

    servers.py      start `streamlit run app.py` or deploy/serve.py's proxy on a free port, a snapshot of a commit
    browser.py      the Chromium to drive, its flags, and waiting for the app to be idle in a page
    protocol.py     ProtocolSession: a browser-less session speaking Streamlit's websocket protocol as a browser does
    load/           the load runner: a session's plan, Chromium and browser-less sessions, process CPU/RSS, report
    speed_probe.py  how fast this machine is right now (a fixed piece of work, sampled beside a server)
    machine.py      the machine a benchmark's figures depend on (Python, numpy, CPUs, BLAS threads, load)
    timing.py       median and best of repeated calls, after a warm-up
    children.py     the one-line JSON conversation with a benchmark's child process
"""
