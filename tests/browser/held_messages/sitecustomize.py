"""Loaded (through PYTHONPATH) by the server of tests/browser/test_class_bar_race_browser.py only: each session's
messages wait while its script runs and HELD_MESSAGES_S seconds after, so that a fragment run the watcher pushes
the moment a full run ends starts before that run's messages have left the server. A busy machine does this by
chance (1 reveal in 16 on the 2-core test machine); here every reveal does it."""

import asyncio
import os
import time

from streamlit.runtime import app_session
from streamlit.runtime.scriptrunner import ScriptRunnerEvent

HOLD_S = float(os.environ["HELD_MESSAGES_S"])
_flush = app_session.AppSession.flush_browser_queue
_handle = app_session.AppSession._handle_scriptrunner_event_on_event_loop


def flush_browser_queue(self):
    if self._scriptrunner is not None or time.monotonic() < getattr(self, "_held_until", 0.0):
        return []
    return _flush(self)


def handle(self, sender, event, *args, **kwargs):
    result = _handle(self, sender, event, *args, **kwargs)
    if event == ScriptRunnerEvent.SHUTDOWN:  # the run ended: its messages wait HOLD_S more, then go
        self._held_until = time.monotonic() + HOLD_S
        if self._message_enqueued_callback:
            asyncio.get_running_loop().call_later(HOLD_S + 0.02, self._message_enqueued_callback)
    return result


app_session.AppSession.flush_browser_queue = flush_browser_queue
app_session.AppSession._handle_scriptrunner_event_on_event_loop = handle
