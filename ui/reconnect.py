"""After the browser loses its server and reconnects (to the same worker or, behind deploy/'s proxy, to a
live one when its worker died), run the page again, as pressing R does.

Streamlit's client reconnects by itself, but reruns only if a run was cut off (frontend App.tsx,
handleConnectionStateChanged): otherwise it keeps the old page on screen and the server the browser now
talks to knows nothing of it until the next click, whose change the page would then read against the link
and drop. Running the page at once makes the new server draw the same view from the link and the
browser's widget values, so the next click works as before. Every page keeps its state in the link,
so nothing else is needed to come back to the same view.
"""

from __future__ import annotations

import streamlit as st

# A MutationObserver on the app's connection state (the data-test-connection-state attribute Streamlit
# sets on stApp); when it turns CONNECTED after being anything else, press R (Streamlit's rerun key: it
# sends the widgets' values, the page and the link's query string). Installed once per browser tab.
RECONNECT_JS = """<script>
(() => {
  if (window.__attnRerunAfterReconnect) return;
  window.__attnRerunAfterReconnect = true;
  let lost = false;
  const look = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    const state = app && app.getAttribute('data-test-connection-state');
    if (!state) return;
    if (state !== 'CONNECTED') { lost = true; return; }
    if (!lost) return;
    lost = false;
    window.__attnReconnectReruns = (window.__attnReconnectReruns || 0) + 1;
    const key = {key: 'r', code: 'KeyR', keyCode: 82, which: 82, bubbles: true};
    document.dispatchEvent(new KeyboardEvent('keydown', key));
    document.dispatchEvent(new KeyboardEvent('keyup', key));
  };
  new MutationObserver(look).observe(document.body, {
    subtree: true, attributes: true, attributeFilter: ['data-test-connection-state'],
  });
})();
</script>"""


def rerun_after_reconnect(where=st.sidebar) -> None:
    """Install the script (a fixed text: nothing from the user goes into it)."""
    where.html(RECONNECT_JS, unsafe_allow_javascript=True)
