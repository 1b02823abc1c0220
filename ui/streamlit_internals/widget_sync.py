"""A widget's value set by the app is sent to the browser again until the browser has it (entry
"values-sent-until-the-browser-has-them" of ui/streamlit_internals).

When the app sets a widget's value through session state (a number box writing the number it holds, a link or
the teacher's view read into a page's controls), Streamlit sends it to the browser once, with that run's element
(`set_value`); later runs' elements carry only the widget's constructor default. If the next run starts before the
browser has drawn that element (a click while the page is still arriving: the teacher opening "Ask the class"
then picking a question), the browser mounts the widget from the later element, at its default: empty number
boxes, token labels t0, t1, ... on the projector. Worse, the browser then sends that default back with its next
click, and Streamlit takes it as the student's own change: the page computed from values nobody chose.

Streamlit 1.67 re-sends a value on a remount only in some cases (`SessionState.register_widget`,
`restored_session_state_value`: a value kept under its user key, or a widget with `persist_state`); a value
set by the app and compacted under the widget's id is not one of them. This makes the rule whole: a value
Streamlit sent to the browser is sent again with each run until the browser reports the widget's value with a
run of its own (it reports every widget it has drawn). A widget the browser has drawn is never sent a value
it did not ask for, so nothing a student is typing is overwritten.
"""

from __future__ import annotations

import dataclasses

# the widget ids sent and not yet reported, in the session's own state (SessionState has __slots__: no attribute of
# ours, no weak reference); Streamlit's compaction carries it from run to run like any entry the app set
UNCONFIRMED = "_attention_unconfirmed_widgets"


def send_until_confirmed() -> None:
    """Wrap `SessionState.register_widget` once per process (see the module's docstring)."""
    from streamlit.runtime.state.session_state import SessionState

    original = getattr(SessionState.register_widget, "replaced", SessionState.register_widget)
    if SessionState.register_widget is not original:
        return

    def register_widget(self, metadata, user_key):
        # the browser sent this widget's value with this run: it has drawn the widget (read before Streamlit
        # stores a first value of its own)
        reported = metadata.id in self._new_widget_state.states
        result = original(self, metadata, user_key)
        unconfirmed = self._old_state.get(UNCONFIRMED)
        if not isinstance(unconfirmed, set):
            unconfirmed = self._old_state[UNCONFIRMED] = set()
        if result.value_changed:
            unconfirmed.add(metadata.id)
        elif reported:
            unconfirmed.discard(metadata.id)
        elif metadata.id in unconfirmed:
            result = dataclasses.replace(result, value_changed=True)
        return result

    register_widget.replaced = original
    SessionState.register_widget = register_widget
