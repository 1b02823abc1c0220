"""Declared page state: a page lists its state once; the URL, session keys and widget keys follow.

    STATE = PageState("heads", d_model=Int(16, lo=4, hi=64), causal=Flag(False), ...)
    STATE.load()                                    # first line of the page's body
    number_box(st, "d_model", **STATE.widget("d_model"))    # key, bounds and persistence (ui/number_box.py)
    STATE.notes()                                   # which values are held inside their bounds, and why

- `load()` reads the link on the page's first run in a session: each parameter in the order declared
  (later bounds may depend on earlier values); a bad value falls back to its default and the page
  shows which parameter was refused and why. On later runs it only fills in values that are missing.
  A browser that reconnects to another server (a new session) sends its widgets' values with its first
  run there: those win over the link, and `widget()` writes nothing over them.
- A bound may depend on earlier values (`hi=lambda v: v["n"] - 2`). When a value falls outside it, the
  declaration's `fit` brings it inside when `widget()` (or `fit()`) is called, before the widget is drawn,
  and `notes()` says so while it lasts.
  The value that was asked is remembered: when the bound allows it again, it comes back, unless the
  student chose another value in between. A value still at its default follows the default when a
  default that depends on earlier values changes.
- The session key (and the widget key) of `name` is "<prefix>_<name>", unless the declaration gives
  its own `key=` (the shared sequence "seq", or a key that links and tests name). A number box keeps its
  typed text under its own key beside it (ui/number_box.py); the number stays under this one.
- After the page has run, app.py calls `ui.shared_state.save_current()`, which writes exactly this page's state
  (and the shared state) into the link, also after a page's `stop()`. No page reads or writes
  st.query_params.
- A part of a page whose widgets change nothing else can be a `section` (an st.fragment): those widgets
  rerun it alone, and the link is written after it as after the whole page.

Streamlit's own `bind="query-params"` is not used: it drops a bad value from the link without a word
and makes the link's names the widget keys, which breaks the guarantees above; and matrices, labels
and sentences have no widget to bind. Widgets keep `persist_state="session"` (given by `widget()`).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl

import streamlit as st

from locales import tr
from ui.run_gate import run_gate
from ui.safe_text import escape_markdown
from ui.sequence_reset import reset_sequence
from ui.streamlit_internals.session import browser_widget_keys, history_navigation, running_alone
from ui.url import Param, SequenceParam, Slots, value_text

LOADED_KEY = "_page_state_loaded"  # the pages whose link was read in this session
DECLARED_KEY = "_page_state_declared"  # {prefix: PageState} of every page that ran in this session
HOLD_KEY = "_page_state_hold"  # (query, note): the view the page running now is held to (class mode sets it)
CURRENT_KEY = "_page_state_current"  # the PageState of the page running now (app.py writes its link)


class PageState:
    """The declared state of one page: `prefix` for its session keys, then name=Param pairs in order.

    `prefix=None` declares state shared by every page (app.py's presenter switch): its keys are the bare
    names, and its link parameters are written beside whichever page's.
    """

    def __init__(self, prefix: str | None, **params: Param) -> None:
        self.prefix = prefix
        self.params: dict[str, Param] = params

    # ------------------------------------------------------------ names
    def key(self, name: str) -> str:
        """The session key, which is also the widget key, of the parameter `name` (for Slots, the
        widget of slot i has the key `key(name)_i`). A sequence's `key=` is the editor's whole key."""
        param = self._param(name)
        if isinstance(param, SequenceParam) or self.prefix is None:
            return param.key or name
        return f"{self.prefix}_{param.key or name}"

    def _session_keys(self, name: str, param: Param) -> list[str]:
        """The session (and widget) keys that hold `name`: one, or one per slot of a Slots."""
        key = self.key(name)
        return [f"{key}_{i}" for i in range(param.slots)] if isinstance(param, Slots) else [key]

    def bounds(self, name: str) -> dict:
        """The widget arguments the declaration fixes (min_value/max_value, or options)."""
        return self._param(name).widget_args(self.values(through=name))

    def widget(self, name: str, slot: int | None = None) -> dict:
        """Everything the declaration fixes for the widget of `name`: its key, its bounds or options (the
        value brought inside them first), its persistence across pages, and `disabled` while the page is held (a
        class question about it is open). For a Slots, the widget of `slot`."""
        param = self._param(name)
        values = self.values(through=name)
        held = {"disabled": True} if self.held else {}  # a class question about this page is open
        if isinstance(param, Slots):
            return {"key": f"{self.key(name)}_{slot}", "options": param.choices, "persist_state": "session", **held}
        value = self._fit(name, param, values)
        args = param.widget_args(values)
        key, drawn = self.key(name), self._book("drawn_with")
        if self._sent_by_browser(name):
            drawn[key] = args  # the browser's value stands (see _sent_by_browser)
        # A slider whose bounds moved is a new widget to Streamlit (its min/max are part of its identity, see
        # slider.py's key_as_main_identity) and would start at its minimum: set its value again first.
        elif drawn.get(key) != args:
            st.session_state[key] = value
            drawn[key] = args
        return {"key": self.key(name), **args, "persist_state": "session", **held}

    def _param(self, name: str) -> Param:
        try:
            return self.params[name]
        except KeyError:
            raise KeyError(f"{self.prefix}: no parameter {name!r}; declared: {', '.join(self.params)}") from None

    # ------------------------------------------------------------ values
    def __getitem__(self, name: str) -> Any:
        """The current value of `name` (its default if nothing set it yet)."""
        param = self._param(name)  # an unknown name: the KeyError that lists the declared ones
        if not callable(param.default):  # a fixed default: no earlier value is needed to read it
            return self._read(name, param, {})
        return self.values(through=name)[name]

    def values(self, through: str | None = None) -> dict[str, Any]:
        """The current values in declared order, all of them or up to and including `through`.

        A default or a bound may depend on the values declared before it, never after, so stopping at
        `through` gives the same values and reads only those.
        """
        values: dict[str, Any] = {}
        for name, param in self.params.items():
            values[name] = self._read(name, param, values)
            if name == through:
                break
        return values

    def _read(self, name: str, param: Param, values: Mapping[str, Any]) -> Any:
        default = _default(param, values)
        if isinstance(param, Slots):
            return tuple(st.session_state.get(k, d) for k, d in zip(self._session_keys(name, param), default))
        return st.session_state.get(self.key(name), default)

    def _is_set(self, name: str, param: Param) -> bool:
        return self._session_keys(name, param)[0] in st.session_state

    def set(self, name: str, value: Any) -> None:
        """Set a value (before its widget is drawn, or from a callback)."""
        param, key = self._param(name), self.key(name)
        if isinstance(param, SequenceParam):
            reset_sequence(key, value)
        elif isinstance(param, Slots):
            for slot_key, item in zip(self._session_keys(name, param), value):
                st.session_state[slot_key] = item
        else:
            st.session_state[key] = value

    # ------------------------------------------------------------ dependent bounds
    def fit(self, name: str) -> Any:
        """Bring `name` inside the bounds its declaration gives for the current earlier values (before its
        widget is drawn) and return it; `widget()` does this itself. For a value the page uses without
        drawing its widget."""
        param = self._param(name)
        return self._fit(name, param, self.values(through=name))

    def _fit(self, name: str, param: Param, values: dict[str, Any]) -> Any:
        if isinstance(param, (SequenceParam, Slots)) or self._sent_by_browser(name):
            return values[name]
        key, value = self.key(name), values[name]
        default = _default(param, values)
        defaults, asked_key = self._book("default"), self._asked_key(name)
        last_default = defaults.get(key, _MISSING)
        defaults[key] = default
        if last_default is _MISSING:
            last_default = default
        held = st.session_state.get(asked_key)
        asked, given = (value, value) if held is None else held
        if given != value:  # the value is not the one fit() gave: the student (or a link) chose it, so it is asked
            asked = value
        elif asked == last_default:  # never chosen (it is the default earlier values gave): it follows the default
            asked = default
        fitted = param.fit(asked, values)
        if fitted != asked:
            if held != (asked, fitted):
                st.session_state[asked_key] = (asked, fitted)
        elif held is not None:
            del st.session_state[asked_key]
        if fitted != value:
            st.session_state[key] = fitted
        values[name] = fitted
        return fitted

    def _sent_by_browser(self, name: str) -> bool:
        """Whether a reconnecting browser sent the value of `name`'s widget with this run (load() keeps the keys).
        Session state cannot read that value until the widget is drawn (it reads the default till then), and a
        value written before would replace the browser's: nothing is fitted or written. The browser drew the
        widget inside these same bounds, from the same earlier values, which it sent too."""
        return self.key(name) in self._book("browser_sent")

    def _book(self, record: str) -> Any:
        """One of this page's records: by session key, the default each value last had ("default") and the
        bounds each widget was last drawn with ("drawn_with"); the widget keys a reconnecting browser sent
        with this run ("browser_sent"); the warnings from reading the link ("url_warnings")."""
        return self._records()[record]

    def _records(self) -> dict[str, Any]:
        """All of this page's records, in one session entry rather than one per parameter and record:
        Streamlit copies every session entry twice a run, and these doubled the entries of a session that
        had seen every page."""
        book = st.session_state.get(self._book_key)
        if book is None:
            book = {"default": {}, "drawn_with": {}, "browser_sent": set(), "url_warnings": []}
            st.session_state[self._book_key] = book
        return book

    def _asked_key(self, name: str) -> str:
        return f"_{self.key(name)}_asked"

    def note(self, name: str) -> str | None:
        """What the page says while `name` is held inside a bound below (or above) what was asked."""
        held = st.session_state.get(self._asked_key(name))
        if held is None:
            return None
        asked, given = held
        param = self._param(name)
        numbers = param.shown is None and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in held)
        reason = param.bound_text(asked, self.values(through=name))
        text = param.shown or value_text
        values = {"label": _label(param, name), "asked": text(asked), "given": text(given), "reason": reason}
        if not numbers:
            return tr(
                "{label} changed from {asked} to {given}: {reason}. It goes back to {asked} when that fits again.",
                **values,
            )
        if given < asked:
            return tr(
                "{label} lowered from {asked} to {given}: {reason}. It goes back to {asked} when that fits again.",
                **values,
            )
        return tr(
            "{label} raised from {asked} to {given}: {reason}. It goes back to {asked} when that fits again.", **values
        )

    def notes(self, where=st, names: tuple[str, ...] | None = None) -> None:
        """Show the note of every parameter (or of `names`) held inside a bound, as a caption in `where`."""
        for name in names or tuple(self.params):
            text = self.note(name)
            if text:
                where.caption(text)  # page-declared words and validated values only

    # ------------------------------------------------------------ the link
    def load(self) -> None:
        """Take the state from the link on this page's first run in the session, and again when the browser
        went Back or Forward to it (the link then says which view to restore, as it does for Streamlit's own
        bound widgets: what it leaves out goes back to its default); fill in missing values.
        A page's state becomes the one app.py writes into the link after the run."""
        loaded = st.session_state.setdefault(LOADED_KEY, set())
        first, navigated = self.prefix not in loaded, history_navigation()
        link = st.query_params.to_dict() if first or navigated else {}
        held = held_to() if self.prefix is not None else None
        if held is not None and (first or self.full_query() != held[0]):
            first, navigated, link = False, True, dict(held[0])  # the view it is held to, as Back would restore it
        sent = browser_widget_keys() if first and not navigated else set()
        self._records()["browser_sent"] = sent  # for widget(), in this run only
        warnings: list[str] = []
        values: dict[str, Any] = {}
        for name, param in self.params.items():
            warnings += _repeated(param.url_names(name), link)
            if sent.intersection(self._session_keys(name, param)):
                pass  # a reconnecting browser's own value (browser_widget_keys)
            elif any(u in link for u in param.url_names(name)):
                self.set(name, param.decode(link, name, values, warnings))
            elif navigated and not first or not self._is_set(name, param):
                self.set(name, _default(param, values))
            values[name] = self._read(name, param, values)
        self._records()["link_read"] = bool(first or navigated)
        if first or navigated:
            self._records()["url_warnings"] = warnings
        # Only now is the link read and this page the one app.py writes into the link after the run: a run stopped
        # while reading it (a reconnecting browser asks for two runs at once, and Streamlit stops the first) leaves
        # the link as it was, and the next run reads it again.
        loaded.add(self.prefix)
        if self.prefix is not None:
            st.session_state[CURRENT_KEY] = self
            st.session_state.setdefault(DECLARED_KEY, {})[self.prefix] = self

    @property
    def link_read(self) -> bool:
        """Whether this run's `load` took the state from a link (a first visit, Back or Forward, a class's move or
        a view shown to it) rather than from the page's own widgets."""
        return bool(self._records().get("link_read"))

    def decode(self, query: Mapping[str, str]) -> tuple[dict[str, Any], list[str]]:
        """The values a link's `query` gives this page, as its first run would read them (each parameter in the
        declared order, missing ones at their default, each brought inside its bounds), and the link's warnings,
        with a note for each value brought inside a bound (as the page's note says it); nothing read from or
        written to the session."""
        warnings: list[str] = []
        values: dict[str, Any] = {}
        for name, param in self.params.items():
            if any(u in query for u in param.url_names(name)):
                value = param.decode(query, name, values, warnings)
            else:
                value = _default(param, values)
            values[name] = param.fit(value, values)
            if values[name] is not value and values[name] != value:  # fit() returns what fits as it is
                text = param.shown or value_text
                warnings.append(
                    tr(
                        "{label} {asked} does not fit here ({reason}): the page shows {given}",
                        label=_label(param, name),
                        asked=text(value),
                        reason=param.bound_text(value, values),
                        given=text(values[name]),
                    )
                )
        return values, warnings

    def decode_link(self, link: str) -> tuple[dict[str, Any], list[str]]:
        """`decode` of a relative link of this page ("/causal?t=2": its query)."""
        return self.decode(dict(parse_qsl(link.partition("?")[2])))

    def show_warnings(self, where=st) -> None:
        """Show the warnings collected when the link was read (every run until the page is left), and why the page
        is held, while it is."""
        for warning in self._book("url_warnings"):
            where.warning(escape_markdown(warning), icon=":material/link:")  # it may quote the link's text
        held = held_to()
        if held is not None and self.prefix is not None:
            where.info(held[1], icon=":material/lock:")  # class mode's own words

    @property
    def held(self) -> bool:
        """Whether this page is held to a view now (a class question about it is open): its controls are shown
        but not changed (a page passes `disabled=STATE.held`; a change that gets through is undone on the next
        run)."""
        return held_to() is not None and self.prefix is not None

    @property
    def _book_key(self) -> str:
        return f"_{self.prefix}_book"

    def encode(self, every: bool = False, values: Mapping[str, Any] | None = None) -> dict[str, str]:
        """The link's query for the current values (or for `values`, as `decode` gives them): of the parameters whose
        `when` holds, or of `every` one (a view another browser takes whole, defaults included: class mode)."""
        values, query = self.values() if values is None else values, {}
        for name, param in self.params.items():
            if every or param.when is None or param.when(values):
                value = values[name]
                if isinstance(param, Slots) and param.count is not None:
                    value = value[: param.count(values)]
                query |= param.encode(value, name)
        return query

    def state_keys(self) -> list[str]:
        """The session (and widget) keys of the declared state: one per parameter, one per slot of a Slots."""
        return [key for name, param in self.params.items() for key in self._session_keys(name, param)]

    def full_query(self) -> dict[str, str]:
        """The query of every parameter, defaults included: the view as another browser must take it whole."""
        return self.encode(every=True)


def declared(prefix: str) -> PageState | None:
    """The declared state of the page `prefix` as it last ran in this session (None: it has not run yet): what
    another part of the app reads of a page's state, by its parameters' names."""
    return st.session_state.get(DECLARED_KEY, {}).get(prefix)


def hold(query: dict[str, str] | None, note: str = "") -> None:
    """Hold the page that runs next to the view `query` (every parameter of its declared state, as `full_query`
    gives them), saying `note` on it; None lets it go. Class mode holds the page a question is about."""
    if query is None:
        st.session_state.pop(HOLD_KEY, None)
    else:
        st.session_state[HOLD_KEY] = (dict(query), note)


def held_to() -> tuple[dict[str, str], str] | None:
    return st.session_state.get(HOLD_KEY)


def _repeated(names: tuple[str, ...] | list[str], link: Mapping[str, str]) -> list[str]:
    """A warning for each of `names` the link gives more than once with different values: the last counts
    (as for every parameter Streamlit reads), and the page says so rather than drop the others silently."""
    warnings = []
    for url_name in names:
        if url_name in link and len(set(given := st.query_params.get_all(url_name))) > 1:
            warnings.append(
                tr(
                    "URL parameter '{name}' is given {count} times; the last one counts.",
                    name=url_name,  # a declared name: repr() wrote it in single quotes too
                    count=len(given),
                )
            )
    return warnings


def _label(param: Param, name: str) -> str:
    """How a note names a parameter: its declared label (marked for the catalogue), translated, else its name."""
    return tr(param.label) if param.label else name


def _default(param: Param, values: Mapping[str, Any]) -> Any:
    return param.default_value(values)


FINISH_KEY = "_page_state_finish"
AFTER_SECTION_KEY = "_page_state_after_section"


def start_run(finish, after_section=None) -> None:
    """Called by app.py before the page runs: `finish()` will write the link (and whatever else app.py
    does after a page), once, after the page, whether it ends or stops. `after_section(started)` does the
    same after a `section` of the page ran again on its own (`started`: time.perf_counter() at its start)."""
    st.session_state.pop(CURRENT_KEY, None)  # a page that declares no state writes none into the link
    st.session_state[FINISH_KEY] = finish
    st.session_state[AFTER_SECTION_KEY] = after_section


_MISSING = object()  # a session-state key not set yet


def section(body):
    """A part of a page that its own widgets redraw alone (an st.fragment), with the page's link kept whole.

    A student's click on a widget inside it reruns only `body`, with the arguments of the page's last full
    run, instead of the whole page: on a long page the other sections cost the server most of such a run.
    `body` must read what its widgets change (session state, the page's PageState) inside itself and leave
    nothing the rest of the page uses, or rerun the whole page when something drawn outside it shows its result
    (pages/playground.py's `weights_section`). After it ran alone, app.py's `after_section` writes the page's state
    into the link, as after a full run (the sidebar's share link follows the link in the browser: a fragment
    cannot redraw the sidebar), and the run holds the process's run slot, as a page's does. A full run of
    the page runs `body` inline, as a plain call, in a container of its own: a click on the section made while a
    full run draws is run after it, and may start before that run's messages have left the server, which makes
    Streamlit drop the run's deltas of the section and the browser clear its block as stale (see
    ui.classroom_session.pushed_or_timed); in its own container nothing after it moves up in its place.
    """

    @functools.wraps(body)
    def run(*args, **kwargs):
        if not running_alone():
            return body(*args, **kwargs)
        started = time.perf_counter()
        with run_gate():
            try:
                return body(*args, **kwargs)
            finally:
                after = st.session_state.get(AFTER_SECTION_KEY)
                if after is not None:
                    after(started)

    fragment = st.fragment(run)

    @functools.wraps(body)
    def placed(*args, **kwargs):
        if running_alone():  # Streamlit runs the fragment alone by itself, in the place its full run gave it
            return fragment(*args, **kwargs)
        with st.container():
            return fragment(*args, **kwargs)

    return placed


def finish_run() -> None:
    """Run the `finish` given to start_run, unless it already ran in this run."""
    finish = st.session_state.pop(FINISH_KEY, None)
    if finish is not None:
        finish()


def stop() -> None:
    """Stop the page here, like st.stop(), after its state went into the link: once st.stop() has been
    called, Streamlit sends nothing more, not even a change of the link."""
    finish_run()
    st.stop()
