"""A Streamlit session without a browser: the messages a student's browser exchanges with the server.

The load test uses it to put 30 sessions on one server when the 30 browsers cannot run on the same
machine (on a 2-core machine, 30 headless Chromium pages need several times the CPU the server does,
and a classroom's browsers each run on their own laptop). It speaks Streamlit's own websocket protocol
(`/_stcore/stream`, binary protobufs from `streamlit.proto`: entry "browserless-session" of
ui/streamlit_internals, which pins those messages), as the frontend does:

- opening a page: a `rerun_script` BackMsg with the URL's path (`page_name`) and query string;
- using a widget: a `rerun_script` with the widgets' states, the changed one included (a toggle's
  `bool_value`, a button's `trigger_value`, a slider's `double_array_value`);
- going to another page: a `rerun_script` with the target's `page_script_hash`, from the app's
  `navigation` message;
- the query string the app writes (`page_info_changed`) is sent back on the next rerun, and large
  messages are cached by hash (`cached_message_hashes`), as the browser does.

Behind deploy/'s proxy it also does what a browser does there: it loads the page over HTTP first and keeps the
cookies it is given (the proxy's `attn_worker` names the worker its session lives on), sends them with the
websocket, and, when the connection drops (`reconnect=True`), reconnects as Streamlit's client does: it polls
`/_stcore/health` until it answers, opens a new websocket offering its old session id, then reruns the page
with its widgets' values and the link's query string (what app.py's ui/reconnect.py makes the browser do; a
run that the drop cut off is sent again the same way). Each recovery is recorded in `recoveries`.

A page that waits for its charts before drawing a heavy element (ui/after_charts.py: the Playground's grid on a
session's first visit) draws a small page script that asks for one more run once the browser has drawn the
charts; this client has no charts to draw, so it asks for that run as soon as the first one has finished, as a
browser on a fast machine would, and reports the two as one (`RunResult.signals`: the scripts it answered).

A run is done at its `script_finished` message (with the signal above: the second run's); its latency is from
sending the BackMsg to receiving that message (so a first Playground visit's holds both runs), so it holds the
server's whole work (queueing, the script, serialising) and the transfer, but not the browser's rendering.
Errors: an `exception` element, a run that did not finish successfully, the connection closing, or no answer
within the timeout.
"""

from __future__ import annotations

import asyncio
import time
import urllib.request
from dataclasses import dataclass, field
from http.cookies import SimpleCookie

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from ui.streamlit_internals import changed_sources, warn_once

_CHANGED = changed_sources("browserless-session")  # another Streamlit's messages may mean something else
if _CHANGED:
    warn_once("browserless-session", f"{', '.join(_CHANGED)} is not the pinned one")


# ui/after_charts.py's page script: its component's name (Streamlit may prefix it with the module's) and the event
# it sends once the page's charts are drawn (`setTriggerValue("drawn", true)`), as the browser writes it.
AFTER_CHARTS_COMPONENT = "attention_after_charts"
AFTER_CHARTS_EVENT = '[{"event":"drawn","value":true}]'
SIGNAL_ROUNDS = 3  # at most this many signal runs after one run (a page drawing its box again and again stops)


@dataclass
class Widget:
    kind: str  # "checkbox" (toggles too), "button", "slider", "radio", "popover" (a keyed one), ...
    id: str
    label: str
    proto: object
    fragment_id: str = ""  # the st.fragment it was drawn in, if any: using it reruns only that fragment


@dataclass
class RunResult:
    ms: float
    status: str  # "FINISHED_SUCCESSFULLY", ... or "closed" / "timeout"
    exceptions: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # st.error boxes (app-handled messages)
    page_hash: str = ""
    h1: str = ""
    messages: int = 0
    bytes: int = 0
    fragment: bool = False  # the run was a fragment's alone (st.fragment), not the whole page
    scripts: list[str] = field(default_factory=list)  # bodies of st.html elements drawn with JavaScript allowed
    signals: list[str] = field(default_factory=list)  # ids of ui/after_charts.py's page scripts answered (above)
    waiting: list[str] = field(default_factory=list)  # ids of those page scripts drawn by this run, not answered yet
    # label -> (id, the value the server sent for the browser to show, or None when it sent none: the box keeps its own)
    text_boxes: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    first_chart_at: float | None = None  # time.perf_counter() when the run's first plotly chart arrived


class ProtocolSession:
    """One browser-less session: connect(), open(path), toggle(label), click(label), slide(label), goto(path)."""

    def __init__(self, base_url: str, timeout: float = 60.0, reconnect: bool = False):
        self.base_url = base_url.rstrip("/")
        self.ws_url = base_url.replace("http", "ws", 1).rstrip("/") + "/_stcore/stream"
        self.timeout = timeout
        self.reconnect = reconnect
        self.ws = None
        self.cookies: dict[str, str] = {}
        self.worker = ""  # the proxy's X-Attention-Worker of the websocket, if behind deploy/'s proxy
        self.session_id = ""
        self.recoveries: list[dict] = []  # {lost_at, recovered_at, status, h1, h1_before, worker_before, ...}
        self.h1 = ""  # the title of the page drawn last
        self._lock = asyncio.Lock()
        self._closing = False
        self._watcher = None
        self.query_string = ""
        self.page_hash = ""
        self.pages: dict[str, str] = {}  # url path -> page script hash
        self.widgets: dict[str, Widget] = {}  # label -> widget of the current page
        self.states: dict[str, WidgetState] = {}  # widget id -> the value this session gave it
        self.cached: set[str] = set()  # hashes of large messages already received
        self.auto_reruns: dict[str, float] = {}  # fragment id -> interval, s (st.fragment(run_every=...))

    @property
    def connected(self) -> bool:
        """The websocket is open (or being reopened after a drop): False once close() was called."""
        return self.ws is not None and not self._closing

    async def connect(self, path: str = "") -> None:
        """Load the page over HTTP (its cookies), then open the websocket, as a browser does."""
        await asyncio.to_thread(self._http_get, f"/{path}")
        await self._open_websocket()

    async def close(self) -> None:
        self._closing = True
        if self._watcher is not None:
            self._watcher.cancel()
        if self.ws is not None:
            await self.ws.close()
            self.ws = None

    def _http_get(self, path: str) -> int:
        """GET base_url + path with this session's cookies; keeps the cookies it sets. Returns the status."""
        req = urllib.request.Request(self.base_url + path, headers=self._cookie_header())
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                self._keep_cookies(r.headers.get_all("Set-Cookie") or [])
                r.read()
                return r.status
        except urllib.error.HTTPError as exc:
            return exc.code

    def _cookie_header(self) -> dict[str, str]:
        return {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())} if self.cookies else {}

    def _keep_cookies(self, headers: list[str]) -> None:
        for header in headers:
            for name, morsel in SimpleCookie(header).items():
                self.cookies[name] = morsel.value

    async def _open_websocket(self) -> None:
        from websockets.asyncio.client import connect

        # Streamlit's client offers ["streamlit", <xsrf token>, <session id to resume>] as subprotocols
        offer = ["streamlit", "placeholder", self.session_id] if self.session_id else ["streamlit"]
        self.ws = await connect(
            self.ws_url,
            subprotocols=offer,
            max_size=None,
            open_timeout=self.timeout,
            ping_interval=None,
            origin=self.base_url,
            additional_headers=self._cookie_header(),
        )
        headers = self.ws.response.headers
        self._keep_cookies(headers.get_all("Set-Cookie"))
        self.worker = headers.get("X-Attention-Worker", "")
        if self.reconnect:
            self._watcher = asyncio.ensure_future(self._watch(self.ws))

    async def _watch(self, ws) -> None:
        """Like the browser: a dropped connection is noticed at once and recovered, even between clicks."""
        await ws.wait_closed()
        if self._closing:
            return
        async with self._lock:
            if self.ws is ws and not self._closing:
                await self._recover(lost_at=time.perf_counter())

    async def _recover(self, lost_at: float, cut_off: BackMsg | None = None, navigating: bool = False) -> RunResult:
        """Poll the health check until it answers, reconnect offering the old session id, rerun the page: the
        request whose run was cut off (`cut_off`: sent again, as the browser does), or the page as it is."""
        before, h1_before = self.worker, self.h1
        msg = cut_off if cut_off is not None else self._rerun_msg()
        # the new server has none of this session's fragments: the page runs whole, as the browser's rerun after
        # a reconnect does (the widgets' states, a click's included, go with it)
        msg.rerun_script.fragment_id = ""
        page_asked = msg.rerun_script.page_script_hash or self.page_hash
        deadline = lost_at + self.timeout
        delay = 0.25
        while time.perf_counter() < deadline:
            if await asyncio.to_thread(self._http_get, "/_stcore/health") == 200:
                try:
                    await self._open_websocket()
                    break
                except OSError:
                    pass
            await asyncio.sleep(delay)
            delay = min(delay * 1.5, 2.0)
        else:
            result = RunResult(ms=0.0, status="closed (no server answered)")
            self.recoveries.append({"lost_at": lost_at, "recovered_at": None, "status": result.status})
            return result
        result = await self._send_rerun(msg)
        self.recoveries.append(
            {
                "lost_at": lost_at,
                "page_asked": page_asked,  # the page the session was on, or was going to when the run was cut
                "page_after": result.page_hash or self.page_hash,
                "navigating": navigating,  # a page change was cut off: a new title is right
                "recovered_at": time.perf_counter(),
                "status": result.status,
                "h1": result.h1,
                "h1_before": h1_before,
                "exceptions": result.exceptions,
                "worker_before": before,
                "worker_after": self.worker,
            }
        )
        return result

    # -------------------------------------------------------------- what a user does

    async def open(self, path: str, query_string: str = "") -> RunResult:
        """Open the app at /<path>?<query_string>, as typing the URL does."""
        self.query_string = query_string
        return await self._rerun(page_name=path, page_hash="")

    async def goto(self, path: str) -> RunResult:
        """Go to another page by its sidebar link."""
        page_hash = self.pages.get(path)
        if page_hash is None:
            raise ValueError(f"no page at /{path}; the app lists {sorted(self.pages)}")
        self.states = {}
        self.query_string = ""
        return await self._rerun(page_name=path, page_hash=page_hash)

    async def toggle(self, label: str) -> tuple[RunResult, bool, bool]:
        """Flip a checkbox or toggle; returns (run, value before, value the next run drew it with)."""
        w = self._widget(label, "checkbox")
        was = self._checkbox_value(w)
        self.states[w.id] = WidgetState(id=w.id, bool_value=not was)
        result = await self._rerun(fragment_id=w.fragment_id)
        now = self._checkbox_value(self.widgets[label]) if label in self.widgets else was
        return result, was, now

    async def click(self, label: str) -> RunResult:
        w = self._widget(label, "button")
        trigger = WidgetState(id=w.id, trigger_value=True)
        return await self._rerun(extra=[trigger], fragment_id=w.fragment_id)  # a trigger is sent once, not kept

    async def open_popover(self, label: str) -> RunResult:
        """Open a keyed popover whose content is drawn only while it is open (its on_change reruns the page, as
        the browser's click on it does)."""
        w = self._widget(label, "popover")
        self.states[w.id] = WidgetState(id=w.id, bool_value=True)
        return await self._rerun(fragment_id=w.fragment_id)

    async def slide(self, label: str, step: int) -> RunResult:
        """Move a numeric slider `step` steps (negative: left), staying within its range."""
        w = self._widget(label, "slider")
        p = w.proto
        current = list(p.value) if p.set_value else list(p.default)
        if p.options:  # a select_slider: values are option indices
            new = min(max(int(current[0]) + step, 0), len(p.options) - 1)
        else:
            new = min(max(current[0] + step * p.step, p.min), p.max)
        self.states[w.id] = WidgetState(id=w.id, double_array_value={"data": [float(new)]})
        return await self._rerun(fragment_id=w.fragment_id)

    async def select(self, label: str, index: int) -> RunResult:
        """Pick option `index` of a radio (as clicking it does: a rerun, of its fragment if it is in one). Streamlit
        1.67's radio sends the option's text (string_value), as its frontend does."""
        w = self._widget(label, "radio")
        self.states[w.id] = WidgetState(id=w.id, string_value=w.proto.options[index])
        return await self._rerun(fragment_id=w.fragment_id)

    async def tick(self, fragment_id: str) -> RunResult:
        """One timer rerun of a fragment drawn with `run_every` (what the browser's setInterval sends)."""
        return await self._rerun(fragment_id=fragment_id, auto=True)

    async def pushed(self, timeout: float) -> RunResult | None:
        """A run the server started by itself (class mode pushes the teacher's actions to a student's bar, see
        ui/classroom_push.py), read to its end; None if none began within `timeout` s. A browser draws such a
        run as it draws one it asked for."""
        from websockets.exceptions import ConnectionClosed

        async with self._lock:
            deadline = time.perf_counter() + timeout
            while True:  # a run begins with new_session; what the last run sent after its end is passed over
                try:  # cancelling recv() loses nothing
                    first = await asyncio.wait_for(self.ws.recv(), timeout=max(0.0, deadline - time.perf_counter()))
                except asyncio.TimeoutError:
                    return None
                except ConnectionClosed as exc:
                    return RunResult(ms=0.0, status=f"closed ({exc})")
                fm = ForwardMsg()
                fm.ParseFromString(first)
                if fm.WhichOneof("type") == "new_session":
                    break
            t0 = time.perf_counter()
            try:
                result = await asyncio.wait_for(self._until_finished(first), timeout=self.timeout)
            except asyncio.TimeoutError:
                return RunResult(ms=(time.perf_counter() - t0) * 1000, status="timeout")
            result.ms = (time.perf_counter() - t0) * 1000
            return result

    async def history_move(self, link: str) -> RunResult:
        """Go to `link` ("/path?query") as a popstate does (Back, Forward, or a script's pushState): a run of
        that page with the link's query string, marked as history navigation."""
        path, _, query = link.partition("?")
        path = path.strip("/")
        page_hash = self.pages.get(path)
        if page_hash is None:
            raise ValueError(f"no page at /{path}; the app lists {sorted(self.pages)}")
        self.states = {}
        self.query_string = query
        return await self._rerun(page_name=path, page_hash=page_hash, history=True)

    def page_path(self) -> str | None:
        """The url path of the page drawn last ("" for the default page)."""
        return next((path for path, h in self.pages.items() if h == self.page_hash), None)

    async def use(self, kind: str, label: str, step: int = 1) -> tuple[RunResult, bool | None, bool | None]:
        """Use one of harness/load/plan.py's ACTIONS: flip a toggle, click a button or move a slider `step` steps.
        Returns the run and, for a toggle, its value before and after (None otherwise)."""
        if kind == "toggle":
            return await self.toggle(label)
        if kind == "button":
            return await self.click(label), None, None
        return await self.slide(label, step), None, None

    # -------------------------------------------------------------- protocol

    def _widget(self, label: str, kind: str) -> Widget:
        w = self.widgets.get(label)
        if w is None or w.kind != kind:
            have = sorted(f"{x.kind} {x.label!r}" for x in self.widgets.values())
            raise LookupError(f"no {kind} labelled {label!r} on this page; it has {have}")
        return w

    def _checkbox_value(self, w: Widget) -> bool:
        state = self.states.get(w.id)
        if state is not None:
            return state.bool_value
        return bool(w.proto.value) if w.proto.set_value else bool(w.proto.default)

    def _rerun_msg(
        self,
        page_name: str | None = None,
        page_hash: str | None = None,
        extra: list[WidgetState] = (),
        fragment_id: str = "",
        auto: bool = False,
        history: bool = False,
    ) -> BackMsg:
        """What the browser sends: a widget inside an st.fragment names that fragment, and the server then
        reruns only it (the states of every widget on the page are sent all the same)."""
        msg = BackMsg()
        rs = msg.rerun_script
        rs.fragment_id = fragment_id
        rs.query_string = self.query_string
        rs.page_script_hash = self.page_hash if page_hash is None else page_hash
        rs.page_name = page_name or ""
        rs.is_auto_rerun = auto
        rs.is_history_navigation = history
        for state in [*self.states.values(), *extra]:
            rs.widget_states.widgets.append(state)
        rs.cached_message_hashes.extend(sorted(self.cached))
        return msg

    async def _rerun(
        self,
        page_name: str | None = None,
        page_hash: str | None = None,
        extra: list[WidgetState] = (),
        fragment_id: str = "",
        auto: bool = False,
        history: bool = False,
    ) -> RunResult:
        async with self._lock:
            t0 = time.perf_counter()
            msg = self._rerun_msg(page_name, page_hash, extra, fragment_id, auto, history)
            # (open and goto name the page: the playground's name is "", so the hash says it was a page change)
            result = await self._send_recovering(msg, navigating=page_hash is not None)
            for _ in range(SIGNAL_ROUNDS):  # the page draws its box once per session: one round, in practice
                if not result.waiting or result.status != "FINISHED_SUCCESSFULLY" or self._closing:
                    break
                then = await self._send_recovering(self._rerun_msg(extra=self.signals(result.waiting)))
                result = self._merged(result, then)
            result.ms = (time.perf_counter() - t0) * 1000
            return result

    async def _send_recovering(self, msg: BackMsg, navigating: bool = False) -> RunResult:
        """`_send_rerun`; if the connection drops during the run, reconnect and send it again, as the browser does."""
        result = await self._send_rerun(msg)
        if self.reconnect and result.status.startswith("closed") and not self._closing:
            result = await self._recover(lost_at=time.perf_counter(), cut_off=msg, navigating=navigating)
        return result

    @staticmethod
    def signals(ids: list[str]) -> list[WidgetState]:
        """What ui/after_charts.py's page script sends once the charts are drawn: its "drawn" event, a trigger
        (`setTriggerValue`), which Streamlit's components v2 carry in one widget per component, named
        `$$STREAMLIT_INTERNAL_KEY_<component id>__events`, as a JSON list of events."""
        return [
            WidgetState(id=f"$$STREAMLIT_INTERNAL_KEY_{i}__events", json_trigger_value=AFTER_CHARTS_EVENT) for i in ids
        ]

    @staticmethod
    def _merged(first: RunResult, then: RunResult) -> RunResult:
        """`first` and the run its page script asked for (`then`), as one: what the page ended with is `then`'s."""
        then.signals = first.signals + first.waiting
        then.exceptions = first.exceptions + then.exceptions
        then.errors = first.errors + then.errors
        then.messages += first.messages
        then.bytes += first.bytes
        then.scripts = first.scripts + then.scripts
        then.page_hash = then.page_hash or first.page_hash
        then.h1 = then.h1 or first.h1
        return then

    async def _send_rerun(self, msg: BackMsg) -> RunResult:
        from websockets.exceptions import ConnectionClosed

        t0 = time.perf_counter()
        try:
            await self.ws.send(msg.SerializeToString())
        except ConnectionClosed as exc:
            return RunResult(ms=0.0, status=f"closed ({exc})")
        try:
            result = await asyncio.wait_for(self._until_finished(), timeout=self.timeout)
        except asyncio.TimeoutError:
            return RunResult(ms=(time.perf_counter() - t0) * 1000, status="timeout")
        result.ms = (time.perf_counter() - t0) * 1000
        return result

    async def _until_finished(self, first: bytes | None = None) -> RunResult:
        from websockets.exceptions import ConnectionClosed

        result = RunResult(ms=0.0, status="")
        widgets: dict[str, Widget] = {}
        auto_reruns: dict[str, float] = {}
        while True:
            try:
                raw, first = (first, None) if first is not None else (await self.ws.recv(), None)
            except ConnectionClosed as exc:
                result.status = f"closed ({exc})"
                return result
            result.messages += 1
            result.bytes += len(raw)
            fm = ForwardMsg()
            fm.ParseFromString(raw)
            if fm.metadata.cacheable and fm.hash:
                self.cached.add(fm.hash)
            kind = fm.WhichOneof("type")
            if kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
                self._read_element(fm.delta.new_element, widgets, result, fm.delta.fragment_id)
            elif kind == "delta" and fm.delta.WhichOneof("type") == "add_block":
                popover = fm.delta.add_block.popover if fm.delta.add_block.WhichOneof("type") == "popover" else None
                if popover is not None and popover.id and popover.label not in widgets:  # a keyed popover
                    widgets[popover.label] = Widget("popover", popover.id, popover.label, popover, fm.delta.fragment_id)
            elif kind == "new_session" and fm.new_session.initialize.session_id:
                self.session_id = fm.new_session.initialize.session_id
            elif kind == "auto_rerun":
                auto_reruns[fm.auto_rerun.fragment_id] = fm.auto_rerun.interval
            elif kind == "page_info_changed":
                self.query_string = fm.page_info_changed.query_string
            elif kind == "navigation":
                self.pages = {p.url_pathname: p.page_script_hash for p in fm.navigation.app_pages}
                self.page_hash = fm.navigation.page_script_hash
                result.page_hash = self.page_hash
            elif kind == "script_finished":
                status = ForwardMsg.ScriptFinishedStatus.Name(fm.script_finished)
                if status == "FINISHED_EARLY_FOR_RERUN":
                    continue  # the app called st.rerun(): the next run follows
                if status == "FINISHED_FRAGMENT_RUN_SUCCESSFULLY":
                    # only the fragment was drawn again: the rest of the page, its widgets included, stays
                    result.status, result.fragment = "FINISHED_SUCCESSFULLY", True
                    self.widgets = {**self.widgets, **widgets}
                    self.auto_reruns |= auto_reruns
                    return result
                result.status = status
                self.h1 = result.h1 or self.h1
                self.widgets = widgets
                self.auto_reruns = auto_reruns  # a full run names every timer its page keeps
                live = {w.id for w in widgets.values()}
                self.states = {k: v for k, v in self.states.items() if k in live}
                return result

    @staticmethod
    def _read_element(el, widgets: dict[str, Widget], result: RunResult, fragment_id: str = "") -> None:
        kind = el.WhichOneof("type")
        if kind == "exception":
            result.exceptions.append(f"{el.exception.type}: {el.exception.message}"[:300])
        elif kind == "alert" and el.alert.format == el.alert.ERROR:
            result.errors.append(el.alert.body[:200])
        elif kind == "plotly_chart" and result.first_chart_at is None:
            result.first_chart_at = time.perf_counter()
        elif kind == "heading" and el.heading.tag == "h1" and not result.h1:
            result.h1 = el.heading.body
        elif kind == "html" and el.html.unsafe_allow_javascript:
            result.scripts.append(el.html.body)
        elif kind == "bidi_component" and el.bidi_component.component_name.endswith(AFTER_CHARTS_COMPONENT):
            result.waiting.append(el.bidi_component.id)
        elif kind == "text_input":
            box = el.text_input
            result.text_boxes.setdefault(box.label, (box.id, box.value if box.set_value else None))
        elif kind in ("checkbox", "button", "slider", "radio"):
            proto = getattr(el, kind)
            if proto.label not in widgets:
                widgets[proto.label] = Widget(kind, proto.id, proto.label, proto, fragment_id)
