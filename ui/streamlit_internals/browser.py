"""The scripts that rely on Streamlit's frontend (entries "reconnect-rerun", "one-history-entry-per-page" and
"plotly-chart-drawn" of ui/streamlit_internals): an attribute its app shell sets, its rerun key, its calls to the
browser's history API, and the property plotly.js sets on a chart it has drawn. All are fixed texts: nothing from
the user goes into them.
"""

import json

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


# One history entry per page visit. Streamlit pushes one entry when the page changes and another when the
# page then writes its state into the link, so Back would stay on the same page. A change of the link that
# no user action caused since the last page change (the state written on arrival) replaces the entry
# instead; every deliberate change adds one.
# Streamlit's client sometimes writes a new page's state into the link before it moves the link to the new
# page (the two messages of the page's first run arrive together, and the move waits for React): that
# write adds an entry holding the new page's state under the old page's path, and Back would open the old
# page with the new page's state. When the move follows such an entry, with the same state and no user
# action between them, it takes that entry's place instead of adding one after it.
# A page change also scrolls the page's main area to its top (Streamlit does so for a sidebar link only).
# The sidebar's share link follows a change of the link within the page: a section of a page redrawn alone
# (ui.page_state.section) writes the page's state into the link but cannot redraw the sidebar, so its query
# is taken from the browser's own link; the part before it stays the server's. A page change redraws it.
# Our own constant script: no user text in it.
HISTORY_JS = """
<script>
(() => {
  const w = window.parent && window.parent !== window ? window.parent : window;
  if (w.__attentionHistory) return;
  w.__attentionHistory = true;
  const push = w.history.pushState.bind(w.history), replace = w.history.replaceState.bind(w.history);
  // The user's actions are counted, not timed: an action and a write of the link may share a millisecond.
  let actions = 0, arrived = 0;  // arrived: the count at the last page change
  for (const type of ["pointerdown", "keydown"]) w.addEventListener(type, () => { actions += 1; }, true);
  const followLink = (before) => {
    if (w.location.pathname !== before) return;  // another page: it draws its own share link
    for (const el of w.document.querySelectorAll("[data-testid='share-link']")) {
      el.textContent = el.textContent.split("?")[0] + w.location.search;
    }
  };
  w.history.replaceState = function (state, title, url) {
    const before = w.location.pathname, result = replace(state, title, url);
    followLink(before);
    return result;
  };
  let stray = null;  // the last entry a write of the link added within a page: its link and when
  w.history.pushState = function (state, title, url) {
    const next = new URL(url, w.location.href), before = w.location.pathname;
    if (next.pathname !== before) {
      const raced = stray && stray.href === w.location.href && actions === stray.actions && Date.now() - stray.at < 3000
        && next.search !== "" && next.search === w.location.search;
      arrived = actions;
      stray = null;
      const result = raced ? replace(state, title, url) : push(state, title, url);
      // A new page opens at its top, as a sidebar link opens it; Streamlit keeps the old page's scroll when the
      // move is the script's (a lesson started low on /class, the teacher's move reaching a student).
      const main = w.document.querySelector('[data-testid="stMain"]');
      if (main) main.scrollTop = 0;
      return result;
    }
    if (actions === arrived) return w.history.replaceState(state, title, url);
    const result = push(state, title, url);
    stray = {href: w.location.href, at: Date.now(), actions};
    followLink(before);
    return result;
  };
})();
</script>
"""


# Class mode: a student follows the teacher by a history entry and a popstate, as Back does (data-test-script-state).
def move_script(view: str) -> str:
    """A script that takes this browser to `view` (a link within the app, checked by the store) the way
    Back and Forward do: a new history entry, then a popstate event, which Streamlit's client answers with a
    run of that page marked as history navigation (ui.page_state.load then takes the whole state from the
    link). No reload: the session and its room stay."""
    base = "/" + st.get_option("server.baseUrlPath").strip("/") if st.get_option("server.baseUrlPath") else ""
    target = json.dumps(base + view).replace("<", "\\u003c")
    # It waits for the run that drew it to end: a popstate during a run is sometimes dropped.
    return (
        "<script>(() => { const url = " + target + ", started = Date.now();"
        " const go = () => {"
        "  if (location.pathname + location.search === url) return;"
        "  const app = document.querySelector('[data-testid=\"stApp\"]');"
        "  if (app && app.getAttribute('data-test-script-state') === 'running' && Date.now() - started < 5000)"
        "   return setTimeout(go, 50);"
        "  history.pushState(null, '', url); dispatchEvent(new PopStateEvent('popstate', {state: null}));"
        " };"
        " setTimeout(go, 50);"
        " })();</script>"
    )


def charts_drawn_script(give_up_ms: int) -> str:
    """A component's script (st.components.v2) that sends its trigger "drawn" once every chart on the page is drawn,
    or after `give_up_ms` whatever they are (ui/after_charts.py). A chart counts as drawn once plotly.js has laid out
    its data (the `_fullData` it sets on the chart's element, in the plotly.js that Streamlit's frontend bundles);
    one animation frame more lets it paint (not in a hidden tab, where it would wait until the tab is shown). It
    polls every 50 ms: timers keep running in a background tab (slower), animation frames stop there."""
    return f"""
export default function ({{ setTriggerValue }}) {{
  const start = performance.now();
  let done = false;
  const drawn = () => {{
    const charts = [...document.querySelectorAll('.js-plotly-plot')];
    return charts.length > 0 && charts.every((c) => c._fullData);
  }};
  const poll = () => {{
    if (done) return;
    if (drawn() || performance.now() - start > {int(give_up_ms)}) {{
      done = true;
      const send = () => setTriggerValue("drawn", true);
      if (document.hidden) send(); else requestAnimationFrame(() => setTimeout(send, 0));
    }} else {{
      setTimeout(poll, 50);
    }}
  }};
  poll();
  return () => {{ done = true; }};
}}
"""
