"""ui/charts.py on every page: every chart goes through plotly's JSON encoding at the first try.

plotly encodes a figure with orjson (when installed, as requirements.txt has it); a figure orjson refuses
(a numpy array of Python objects: hover text, booleans) is cleaned as a whole and encoded again. That
doubled the work on every heatmap, and orjson before 3.9.6 kept every refused array: the hover text of
every heatmap drawn stayed in the worker's memory (about 0.8 MiB per session). ui/charts.py sends such
arrays as lists. This opens every page as it first shows and counts plotly's clean-ups.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import plotly.io._json as plotly_json
import pytest

from tests.apptest_helpers import open_page

# The class page draws a chart only once a question is asked (tests/test_classroom_pages.py checks it).
PAGES = sorted(p.name for p in (Path(__file__).resolve().parents[1] / "pages").glob("*.py") if p.name != "class.py")


def test_plotly_encodes_with_orjson_at_least_the_fixed_version():
    assert tuple(int(x) for x in orjson.__version__.split(".")[:3]) >= (3, 9, 6)
    assert plotly_json.config.default_engine in ("auto", "orjson")  # plotly picks orjson when it is there


@pytest.mark.parametrize("page", PAGES)
def test_no_chart_needs_plotlys_clean_up(page, monkeypatch):
    cleaned = []
    original = plotly_json.clean_to_json_compatible

    def counting(obj, **kwargs):
        cleaned.append(type(obj).__name__)
        return original(obj, **kwargs)

    monkeypatch.setattr(plotly_json, "clean_to_json_compatible", counting)
    at = open_page(f"pages/{page}")
    assert not at.exception
    charts = at.get("plotly_chart")
    assert charts, f"{page} drew no chart: nothing was checked"
    assert cleaned == [], f"{page}: {len(cleaned)} of {len(charts)} charts were refused by orjson and cleaned"
