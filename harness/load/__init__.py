"""Load test: N concurrent browser sessions against one local `streamlit run app.py`. Prints figures; not a CI test.

    python bench/load_test.py [--sessions 30] [--interactions 10] [--pages playground,causal,heads,...]
                              [--waves 2] [--port 0] [--ttl 10] [--think 1.0] [--timeout 1800]
                              [--snapshot [REV]] [--nice-browser 19] [--browsers K] [--out FILE]   (--help: all)

`--snapshot` serves a copy of the last commit (or of commit REV) instead of the working tree (Streamlit reloads
files that change, so other people's edits in progress would otherwise reach the server mid-run);
`--nice-browser 19` runs Chromium below the server's priority, to see the server's side of 30 sessions
when the browsers, which need far more CPU than the server, share its 2 cores; `--browsers K` makes only
K of the N sessions Chromium pages and the others browser-less sessions speaking Streamlit's websocket
protocol (harness/protocol.py: the same page visits and widget changes, the same messages, no rendering),
which is how a classroom loads the server when each browser runs on its own laptop.

What it does (issue #8):
1. starts ONE server on 127.0.0.1 with harness/servers.py's start_server, passing
   `--server.disconnectedSessionTTL <ttl>` (a documented Streamlit option, default 120 s: how long the
   server keeps a closed tab's session for a reconnect) so that the memory of closed sessions can be
   seen coming back within the run; a background thread reads the server's VmRSS (plus any child
   process) from /proc every 100 ms;
2. one warm-up session visits every selected page and does every action once (the first visit of a
   page fills the server's caches: the pretrained model, cache_data entries); the memory baseline is
   taken after it closed and its session expired;
3. `--waves` times: N sessions at once, each its own context in ONE headless Chromium (Playwright's
   async API, asyncio.gather), each opening the app and doing `--interactions` interactions:
   alternately going to another page by its sidebar link and using an option of the page it is on
   (Playground: "Causal mask" / "Divide by √d_k"; Causal: "Randomise later tokens"; Heads:
   "Causal mask" / "Divide by √d_head"; Block: "Causal mask"; Pretrained: "Hide [CLS] and [SEP]" /
   "Compare with a second head"; Scaling: the "keys per query" slider by keyboard; Predict and
   Pitfalls have navigation only). Between interactions a session waits `--think` s (±50 %);
4. after each wave's contexts are closed: wait for the TTL, open and close one short session (Streamlit
   only drops expired sessions from its store when it next writes to it, see
   streamlit/runtime/caching/ttl_cache.py), and read the memory again.

Latency of an interaction (browser-less sessions: BackMsg sent -> `script_finished` received, reported
apart) = from the click (or key press) in the page until the app is idle again (script
not running, no skeleton) with the changed content on screen: for an option, until some plotly chart's
data (z, x, y) differs from before; for a page change, until the URL path is the new page's and its
title (h1) has replaced the old one. The state must then hold for a short settle time, which is not
counted. The first load of the app in each session is reported apart, not as an interaction.

Errors: any `[data-testid="stException"]`, a timeout, a page crash, an uncaught page error, a console
message of level "error", a failed request or HTTP status >= 400, a websocket closed before the session
ended, a toggle that did not change, a traceback in the server's output. Not counted (listed apart):
the 404s of `/<page>/_stcore/health` and `/<page>/_stcore/host-config` that Streamlit's frontend makes on
every deep link while it probes for a base path (streamlit/streamlit#7074).

Through deploy/'s proxy (issue #17): `--workers K` starts `deploy/serve.py --workers K` (nginx in front of K
workers, each with the same TTL) instead of one server, and every session goes through nginx: the figures are then
the whole tree's (supervisor, nginx, workers), and the report adds script runs per second (throughput). Run it with
1 and with 2 workers, same sessions, to compare. Throughput is given over the whole wave and over its steady
state: from the moment the last session has loaded the app to the moment the first one has finished. A short
wave's start (every session loading the app, not counted as interactions) and tail (the last sessions alone,
a worker idle) weigh more with more workers, since the wave is shorter.
`--kill-worker S` kills (SIGKILL) the worker holding the most sessions S seconds into the first wave: the report
counts the sessions that were on it, those that came back to their view (the browser-less ones reconnect as the
browser does: harness/protocol.py; the Chromium pages rerun by app.py's ui/reconnect.py), the time each took, and
the errors a user would have seen. `--mischief` adds one more browser-less session, the "mischievous student", who
goes from page to page doing each page's heaviest reachable interaction (MISCHIEF below) while the class works;
its own latencies are reported apart, not in the class's p95.

Targets: zero errors, p95 interaction latency <= 2 s (over the completed interactions; every planned
interaction must complete), memory after the sessions closed within `--mem-margin-mb` of the baseline and,
with 2+ waves, the last wave settling no more than half that margin above the highest level settled
before it (baseline or an earlier wave): a leak of 1 MiB per session would show as +30 MiB per wave of 30.
Chromium runs on the same machine as the server, so the latency includes the browser's own work for all
N pages: the output shows how the machine's CPU time split between the server, Chromium and the rest.

    plan.py       the pages, what a session does on each, the order of its visits, the mischievous student's plan
    sessions.py   a Chromium page, a browser-less session, the mischievous student, and what each records
    processes.py  the server's process tree, its memory and CPU, the machine's speed, the server's output
    report.py     latency percentiles, memory, throughput over the steady window, failover, the JSON summary
    run.py        the run itself: server start-up (harness/servers.py), warm-up, waves, memory, report

The same modules serve the benchmarks that load a class otherwise (bench/load/classroom.py, class mode's load test:
`python -m bench.load.classroom`; bench/soak.py, bench/bench_mischief.py, bench/compare_revisions.py) and the tests.
"""
