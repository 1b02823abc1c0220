"""pages/positions.py's sections (ui.page_state.section) as a browser drives them, over Streamlit's protocol:
the ALiBi heads' switch reruns its heatmaps alone, and the link still gets the page's whole state."""

from __future__ import annotations

from urllib.parse import parse_qs

from harness.protocol import ProtocolSession
from tests.browser.conftest import run_async


def test_the_alibi_switch_reruns_the_heads_alone_and_the_heads_slider_the_whole_page(app_url):
    async def scenario():
        s = ProtocolSession(app_url)
        await s.connect("positions")
        try:
            full = await s.open("positions", query_string="heads=4")
            switched, was, now = await s.toggle("Add the toy head's scores")
            after_switch = parse_qs(s.query_string)
            whole = await s.slide("Heads H", 1)  # sections 1 and 2 read H: the whole page
            return full, (switched, was, now), after_switch, whole, parse_qs(s.query_string)
        finally:
            await s.close()

    full, (switched, was, now), after_switch, whole, last = run_async(scenario())
    assert full.status == "FINISHED_SUCCESSFULLY" and not full.fragment and not full.exceptions
    assert switched.fragment and not switched.exceptions and (was, now) == (False, True)
    assert switched.messages < full.messages / 4  # the other sections were not sent again
    assert after_switch["alibi_scores"] == ["1"] and after_switch["heads"] == ["4"] and after_switch["text"]
    assert whole.status == "FINISHED_SUCCESSFULLY" and not whole.fragment and not whole.exceptions
    assert last["heads"] == ["5"] and last["alibi_scores"] == ["1"]  # a full run keeps what the section set
