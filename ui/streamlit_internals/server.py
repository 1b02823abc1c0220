"""The two speed patches to the pinned Streamlit's server (entries "widgets-read-one-key" and
"script-events-in-batches" of ui/streamlit_internals), applied once per process by `apply_once` there.

**Widgets read one key** (`read_widget_keys_one_by_one`). Streamlit's selectbox, radio, number_input,
slider, text_input and text_area each ask, while they are drawn, whether their own key holds None in
Session State. They ask it of `filtered_state`, a dict that Streamlit builds afresh for every such widget
from every key in the session, each value read through the widget registry (streamlit/streamlit#9415 is
the same cost by another path). This app keeps every visited page's settings in the session, about 90
keys after five pages, so a page of 20 keyed widgets builds that dict 20 times per run. The widget modules
get a session whose `filtered_state` answers the same two questions (is the key set? to what?) for the
one key asked, through the session's own `in` and `[]`, which read the same stores in the same order;
everything else goes to Streamlit's session unchanged.

**A script's messages reach the event loop in batches** (`batch_script_events`). Every element a script
draws is a message that its thread hands to the server's event loop with `call_soon_threadsafe`, which
writes to the loop's wake-up pipe; on the loop, Streamlit queues it for the browser and wakes the loop
once more the same way, from the loop's own thread. Here the script thread hands over its callbacks
through one queue per loop and wakes the loop only when it is not already due to drain that queue, in
the order they came; the second wake-up is a plain `call_soon`.

The measured gains are in docs/maintenance.md; tests/test_streamlit_internals.py checks the answers against
Streamlit's own, the order and the error handling of the batches, and the replaced sources.
"""

from __future__ import annotations

import asyncio
import collections
import importlib
import threading
from collections.abc import Callable
from typing import Any

# module: how many times it reads filtered_state, each time only as `key in s` and `s[key]`
WIDGET_MODULES = {
    "streamlit.elements.widgets.radio": 1,
    "streamlit.elements.widgets.slider": 1,
    "streamlit.elements.widgets.number_input": 1,
    "streamlit.elements.widgets.selectbox": 1,
    "streamlit.elements.widgets.text_widgets": 2,
}


class OneKeyView:
    """The part of `filtered_state` a widget reads: `key in view` and `view[key]` for its own key."""

    __slots__ = ("_session",)

    def __init__(self, session: Any) -> None:
        self._session = session

    def __contains__(self, key: str) -> bool:
        return key in self._session

    def __getitem__(self, key: str) -> Any:
        return self._session[key]


class _WidgetSession:
    """Streamlit's session for one widget call, with `filtered_state` answered key by key."""

    __slots__ = ("_session",)

    def __init__(self, session: Any) -> None:
        self._session = session

    @property
    def filtered_state(self) -> OneKeyView:
        return OneKeyView(self._session)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


def read_widget_keys_one_by_one() -> None:
    """Give the six widget modules the key-by-key view; once per process (a second call changes nothing)."""
    for name in WIDGET_MODULES:
        module = importlib.import_module(name)
        original = module.get_session_state
        if getattr(original, "_reads_one_key", False):
            continue

        def get_session_state(original=original) -> _WidgetSession:
            return _WidgetSession(original())

        get_session_state._reads_one_key = True
        get_session_state.replaced = original
        module.get_session_state = get_session_state


# ---------------------------------------------------------------- the script thread's messages
class _Batch:
    """The callbacks script threads hand to one event loop, run there in the order they came."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.lock = threading.Lock()
        self.waiting: collections.deque[Callable[[], None]] = collections.deque()
        self.scheduled = False

    def add(self, callback: Callable[[], None]) -> None:
        with self.lock:
            self.waiting.append(callback)
            if self.scheduled:
                return  # the loop has been woken and has not drained yet: it will run this one too
            self.scheduled = True
        try:
            self.loop.call_soon_threadsafe(self.drain)
        except RuntimeError:  # the loop closed (shutdown): Streamlit drops these too
            with self.lock:
                self.waiting.clear()
                self.scheduled = False
            if not self.loop.is_closed():
                raise

    def drain(self) -> None:
        with self.lock:
            callbacks, self.waiting = self.waiting, collections.deque()
            self.scheduled = False
        for callback in callbacks:
            try:
                callback()
            except Exception as exc:  # as the loop reports a failing call_soon callback, and go on
                self.loop.call_exception_handler({"message": "Exception in a script event", "exception": exc})


_batches: dict[asyncio.AbstractEventLoop, _Batch] = {}  # bounded: one per event loop (Streamlit runs one)
_batches_lock = threading.Lock()


def _batch_for(loop: asyncio.AbstractEventLoop) -> _Batch:
    batch = _batches.get(loop)
    if batch is None:
        with _batches_lock:
            batch = _batches.setdefault(loop, _Batch(loop))
    return batch


def _call_soon_on_event_loop(self, callback: Callable[[], None]) -> None:
    _batch_for(self._event_loop).add(callback)


def _enqueued_some_message(self) -> None:
    objects = self._get_async_objs()
    try:
        here = asyncio.get_running_loop() is objects.eventloop
    except RuntimeError:
        here = False
    if here:  # on the loop already (it always is: AppSession enqueues there): no wake-up through the pipe
        objects.eventloop.call_soon(objects.need_send_data.set)
    else:
        objects.eventloop.call_soon_threadsafe(objects.need_send_data.set)


def batch_script_events() -> None:
    """Hand a script's messages to the event loop in batches; once per process."""
    from streamlit.runtime.app_session import AppSession
    from streamlit.runtime.runtime import Runtime

    if AppSession._call_soon_on_event_loop is not _call_soon_on_event_loop:
        _call_soon_on_event_loop.replaced = AppSession._call_soon_on_event_loop
        _enqueued_some_message.replaced = Runtime._enqueued_some_message
        AppSession._call_soon_on_event_loop = _call_soon_on_event_loop
        Runtime._enqueued_some_message = _enqueued_some_message
