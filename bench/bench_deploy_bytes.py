"""Bytes on the wire for a first and a second visit, through deploy/'s proxy and straight to one worker,
measured in Chromium with the DevTools protocol. Prints figures; not a test.

    python bench/bench_deploy_bytes.py [--path causal] [--pages playground,scaling,...]

For each way in (the proxy, then a bare `streamlit run` on one port, the reference) and each visit:
- first visit: a fresh browser context (empty cache) opens the page and waits until the app is idle;
  then it goes through the other pages listed in --pages by the sidebar, as a student clicking around would
  (each page may load code of its own, such as plotly's bundle);
- second visit: the same context (its cache kept) opens the first page again in a new tab.
HTTP bytes = the sum of `encodedDataLength` of every finished request (Network.loadingFinished: headers and
body as they crossed the wire, compressed if they were); websocket bytes = the payload of every frame received
(Network.webSocketFrameReceived; the app's own messages, which the proxy passes on unchanged).
Target (issue #17): first visit through the proxy <= 3.5 MB of HTTP, the second near zero.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.browser import CHROMIUM, CHROMIUM_ARGS, wait_idle  # noqa: E402
from harness.servers import free_port, serve_dirs, start_server, wait_until_healthy  # noqa: E402

TARGET_FIRST_MB = 3.5


def start_proxy(workers: int = 1) -> tuple[subprocess.Popen, str]:
    port = free_port()
    run_dir = Path(f"/tmp/attention-bench-bytes-{port}")
    cmd = [sys.executable, str(ROOT / "deploy" / "serve.py"), "--workers", str(workers), "--port", str(port)]
    cmd += ["--address", "127.0.0.1", "--worker-port", str(free_port()), *serve_dirs(run_dir)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    wait_until_healthy(proc, url + "/healthz", 120, lambda: proc.stdout.read().decode(errors="replace"), 0.2)
    return proc, url


class Meter:
    """Counts bytes of one tab from its DevTools session."""

    def __init__(self, context, page):
        self.http = 0
        self.ws = 0
        self.requests = 0
        self.cached = 0
        self.largest: list[tuple[int, str]] = []
        self._urls: dict[str, str] = {}
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.on("Network.requestWillBeSent", lambda e: self._urls.__setitem__(e["requestId"], e["request"]["url"]))
        cdp.on("Network.requestServedFromCache", lambda e: self._count_cached())
        cdp.on("Network.loadingFinished", self._finished)
        cdp.on("Network.webSocketFrameReceived", self._frame)

    def _count_cached(self) -> None:
        self.cached += 1

    def _finished(self, e) -> None:
        n = int(e.get("encodedDataLength", 0))
        self.http += n
        self.requests += 1
        self.largest.append((n, self._urls.get(e["requestId"], "?")))

    def _frame(self, e) -> None:
        data = e["response"].get("payloadData", "")
        # binary frames come base64-encoded: 4 characters per 3 bytes
        self.ws += len(data) * 3 // 4 if e["response"].get("opcode") == 2 else len(data)


def visit(context, url: str, path: str, others: list[str]) -> Meter:
    page = context.new_page()
    page.set_default_timeout(60_000)
    meter = Meter(context, page)
    page.goto(f"{url}/{path}")
    wait_idle(page, timeout=90_000)
    for other in others:
        page.locator(f'[data-testid="stSidebarNav"] a[href="{url}/{other}"]').click()
        page.wait_for_url(f"**/{other}*")
        wait_idle(page, timeout=90_000)
    page.wait_for_timeout(500)
    page.close()
    return meter


def measure(browser, url: str, path: str, others: list[str]) -> tuple[Meter, Meter]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        first = visit(context, url, path, others)
        second = visit(context, url, path, [])
    finally:
        context.close()
    return first, second


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", default="causal", help="the page opened first (its url_path; '' = Playground)")
    parser.add_argument(
        "--pages",
        default="scaling,pretrained,induction",
        help="pages visited after it by the sidebar in the first visit (comma-separated url paths)",
    )
    args = parser.parse_args()
    others = [p for p in args.pages.split(",") if p]
    from playwright.sync_api import sync_playwright

    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    proxy, proxy_url = start_proxy()
    direct, direct_url = start_server()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            rows = {}
            for name, url in (("through the proxy", proxy_url), ("straight to one worker", direct_url)):
                rows[name] = measure(browser, url, args.path, others)
            browser.close()
    finally:
        for proc in (proxy, direct):
            proc.terminate()
            proc.wait(timeout=20)
    route = " -> ".join(["/" + args.path, *("/" + o for o in others)])
    print(f"first visit: {route}; second visit: /{args.path} again in a new tab of the same browser profile")
    for name, (first, second) in rows.items():
        print(
            f"{name:<24} first visit: HTTP {first.http / 1e6:6.2f} MB in {first.requests} requests, websocket "
            f"{first.ws / 1e6:.2f} MB | second visit: HTTP {second.http / 1e3:7.1f} kB in {second.requests} "
            f"requests ({second.cached} from cache), websocket {second.ws / 1e6:.2f} MB"
        )
    first, second = rows["through the proxy"]
    ref = rows["straight to one worker"][0]
    print(f"proxy / straight, first visit HTTP bytes: {first.http / ref.http:.2f}")
    print("largest transfers through the proxy, first visit:")
    for n, u in sorted(first.largest, reverse=True)[:6]:
        print(f"    {n / 1e3:8.1f} kB  {u.split('?')[0][-70:]}")
    ok = first.http <= TARGET_FIRST_MB * 1e6
    verdict = "PASS" if ok else "FAIL"
    print(f"{verdict}  first visit through the proxy <= {TARGET_FIRST_MB} MB: {first.http / 1e6:.2f} MB")
    print("load average at the end: " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
