"""Figures in a narrow chart (figures.base.for_narrow_screen): small multiples reflow, titles stay on their subplot;
which figures need it (figures.base.readable_width) and how ui.charts.chart draws them for every width."""

import copy
import json

import numpy as np

from figures.base import _cells, for_narrow_screen, validated, wrap_title
from figures.heads import heads_grid
from figures.induction import filmstrip_figure
from figures.scaling import weights_by_d_k_figure


def columns_of(layout: dict) -> set[tuple[float, float]]:
    return {tuple(round(v, 3) for v in layout[k]["domain"]) for k in layout if k.startswith("xaxis")}


def test_small_multiples_reflow_to_two_columns_in_reading_order_with_their_titles():
    weights = np.random.default_rng(0).dirichlet(np.ones(4), size=(4, 4))
    fig = heads_grid(weights, list("abcd"), ["previous token", "first token", "itself", "most similar word"])
    before = copy.deepcopy(fig.spec["layout"])
    out = for_narrow_screen(fig.spec)
    assert str(fig.spec["layout"]) == str(before)  # the cached figure is not altered
    layout = out["layout"]
    assert len(columns_of(layout)) == 2 and len(columns_of(fig.spec["layout"])) == 4
    cells, _ = _cells(out["data"], layout)
    for k, title in enumerate(layout["annotations"]):  # each title still centred above its own head
        (x0, x1), (_, y1) = cells[(f"xaxis{k + 1 if k else ''}", f"yaxis{k + 1 if k else ''}")]
        assert abs(title["x"] - (x0 + x1) / 2) < 1e-9 and abs(title["y"] - y1) < 1e-9
    assert [round(c["y"], 3) for c in layout["annotations"]][::2] != [1.0, 1.0]  # heads 3 and 4 went below
    assert layout["height"] > fig.spec["layout"]["height"]
    validated(type(fig)(out))  # still a valid plotly figure


def test_a_grid_with_row_labels_reflows_in_blocks_of_columns_repeating_its_labels():
    fig = filmstrip_figure(np.full((6, 2, 1, 3, 3), 1 / 3), [0, 50, 100, 150, 200, 250], list("abc"))
    layout = for_narrow_screen(fig.spec)["layout"]
    assert len(columns_of(layout)) == 2
    labels = [a for a in layout["annotations"] if a.get("textangle") == -90]
    assert len(labels) == 2 * 3  # each of the 2 heads' labels beside each of the 3 blocks of 2 steps
    steps = [a["text"] for a in layout["annotations"] if a["text"].startswith("step")]
    assert steps == [f"step {s}" for s in (0, 50, 100, 150, 200, 250)]


def test_shared_axes_are_not_reflowed_but_their_titles_wrap():
    weights = np.full((2, 4), 0.25)
    fig = weights_by_d_k_figure([2, 64], weights, weights)
    layout = for_narrow_screen(fig.spec, width_px=200)["layout"]
    assert columns_of(layout) == columns_of(fig.spec["layout"])
    assert any("<br>" in a["text"] for a in layout["annotations"])


def test_explicit_ticks_thin_out_and_titles_wrap_at_spaces():
    weights = np.full((1, 16, 16), 1 / 16)
    fig = heads_grid(weights, [f"token{i}" for i in range(16)], ["one head with a long title"], columns=1)
    axis = for_narrow_screen(fig.spec, width_px=220)["layout"]["xaxis"]
    assert len(axis["tickvals"]) <= 220 // 28 and axis["tickvals"][:2] == [0, 3]
    assert len(axis["ticktext"]) == len(axis["tickvals"])
    assert wrap_title("scaled: softmax(q·k / √d_k)", 12) == "scaled:<br>softmax(q·k<br>/ √d_k)"
    assert wrap_title("<b>L1 H2</b> prev<br>x", 40) == "<b>L1 H2</b> prev<br>x"


def test_a_small_heatmap_is_readable_at_every_width_and_small_multiples_are_not():
    from figures.base import NARROWEST_PX, readable_width
    from figures.positions import four_ways_figure
    from ui.charts import WIDTH_BREAKPOINTS, width_breakpoint

    words = "the dog chased the cat up the tall tree".split()
    methods = ["no position information", "sinusoidal (added to X)", "RoPE (rotates q and k)", "ALiBi"]
    four = four_ways_figure(np.full((4, 9, 9), 1 / 9), words, methods).spec
    need = readable_width(four)
    # four titles in lines of up to 14 characters (12 px) side by side, with the colour bar and word labels beside
    # them: more than a phone's column, less than a laptop's (a 1280 px window with the sidebar open: about 820 px)
    assert 4 * 14 * 0.6 * 12 / 0.97 < need < 800
    assert width_breakpoint(four) == min(b for b in WIDTH_BREAKPOINTS if b >= need)
    single = heads_grid(np.full((1, 4, 4), 0.25), list("abcd"), ["one head"], columns=1).spec
    assert readable_width(single) <= NARROWEST_PX and width_breakpoint(single) is None


def test_reflowed_rows_leave_room_for_the_tick_labels_above_and_the_titles_below():
    words = ["the", "dog", "chased", "the", "cat", "up", "the", "tall", "tree"]
    titles = ["no position information", "sinusoidal (added to X)", "RoPE (rotates q and k)", "ALiBi (bias)"]
    fig = heads_grid(np.full((4, 9, 9), 1 / 9), words, titles, columns=4)
    layout = for_narrow_screen(fig.spec, width_px=200)["layout"]
    margin = layout["margin"]
    plot_h = layout["height"] - margin["t"] - margin["b"]
    first, second = layout["yaxis"]["domain"], layout["yaxis3"]["domain"]
    gap_px = (first[0] - second[1]) * plot_h
    lines = max(a["text"].count("<br>") + 1 for a in layout["annotations"])
    assert lines == 2  # "no position<br>information" in a subplot 84 px wide
    assert gap_px >= lines * 16 + 28  # two lines of title under level tick labels with their tick marks


def test_numbers_that_no_longer_fit_their_cells_get_smaller_or_are_left_to_the_hover():
    from figures.heads import head_split_figure

    fig = head_split_figure(np.linspace(-1, 1, 64).reshape(4, 16), 4, list("abcd"))
    assert "texttemplate" in fig.spec["data"][0]
    assert "texttemplate" not in for_narrow_screen(fig.spec, width_px=220)["data"][0]  # 14 px cells, "-0.43"
    wide = for_narrow_screen(fig.spec, width_px=1000)["data"][0]  # 62 px cells: as they were
    assert "texttemplate" in wide and wide["textfont"] == fig.spec["data"][0]["textfont"]
    smaller = for_narrow_screen(fig.spec, width_px=480)["data"][0]  # 30 px cells: "-1.00" at 10 px is 30 px
    assert "texttemplate" in smaller and 8 <= smaller["textfont"]["size"] < 10
    assert 5 * 0.6 * smaller["textfont"]["size"] + 2 <= 480 / 16
    assert "texttemplate" in fig.spec["data"][0]  # the cached figure is not altered


def test_a_figure_not_readable_in_a_narrow_column_is_drawn_twice_for_the_page_to_choose():
    from streamlit.testing.v1 import AppTest

    def app():
        import numpy as np
        import streamlit as st

        import ui.charts as charts
        from figures.heads import heads_grid

        four = np.full((4, 9, 9), 1 / 9)
        words = "the dog chased the cat up the tall tree".split()
        charts.chart(st, heads_grid(four, words, ["previous token"] * 4), key="grid")
        charts.chart(st, heads_grid(np.full((1, 4, 4), 0.25), list("abcd"), ["one"], columns=1), key="one")

    at = AppTest.from_function(app, default_timeout=60).run()
    assert not at.exception
    ids = [c.proto.id.rsplit("-", 1)[-1] for c in at.get("plotly_chart")]
    assert ids == ["grid", "grid_narrow", "one"]
    wide, narrow = (json.loads(c.proto.spec)["layout"] for c in at.get("plotly_chart")[:2])
    assert len(columns_of(wide)) == 4 and len(columns_of(narrow)) == 2


def test_a_grid_without_tick_labels_gets_none_where_it_reflows():
    fig = filmstrip_figure(np.full((6, 2, 1, 3, 3), 1 / 3), [0, 50, 100, 150, 200, 250], list("abc"))
    layout = for_narrow_screen(fig.spec)["layout"]
    assert not any(layout[k].get("showticklabels", True) for k in layout if k.startswith("yaxis"))


def test_a_long_axis_title_wraps_to_its_axis_and_makes_the_figure_need_a_wider_chart():
    from figures.base import NARROWEST_PX, readable_width

    fig = heads_grid(np.full((1, 3, 3), 1 / 3), list("abc"), ["h"], columns=1)
    long = "head (each thumbnail: 16 queries down × 16 keys across)"
    spec = {"data": fig.spec["data"], "layout": {**fig.spec["layout"], "xaxis": {**fig.spec["layout"]["xaxis"]}}}
    assert readable_width(spec) <= NARROWEST_PX
    spec["layout"]["xaxis"]["title"] = long
    assert readable_width(spec) > NARROWEST_PX  # 55 characters of 12 px: about 400 px
    title = for_narrow_screen(spec, width_px=200)["layout"]["xaxis"]["title"]["text"]
    assert title.replace("<br>", " ") == long and all(len(line) <= 200 / 7.2 for line in title.split("<br>"))


def test_a_chart_the_page_reads_clicks_from_is_drawn_once():
    from streamlit.testing.v1 import AppTest

    def app():
        import numpy as np
        import streamlit as st

        import ui.charts as charts
        from figures.heads import heads_grid

        words = "the dog chased the cat up the tall tree".split()
        grid = heads_grid(np.full((4, 9, 9), 1 / 9), words, ["previous token"] * 4)
        charts.chart(st, grid, key="grid", on_select="rerun", selection_mode="points")

    at = AppTest.from_function(app, default_timeout=60).run()
    assert not at.exception
    assert [c.proto.id.rsplit("-", 1)[-1] for c in at.get("plotly_chart")] == ["grid"]


def test_the_clickable_heads_overview_is_readable_in_the_narrowest_chart():
    from figures.base import NARROWEST_PX, readable_width
    from figures.pretrained import overview_figure

    for n in (16, 256):
        attentions = np.full((6, 12, n, n), 1 / n)
        assert readable_width(overview_figure(attentions, [f"t{i}" for i in range(n)]).spec) <= NARROWEST_PX


def test_numbers_alone_never_draw_a_chart_twice():
    """A second chart costs the server as much as the first (server CPU per run +15 % over the load test's mix when
    every annotated heatmap had a twin): a single heatmap whose numbers do not fit a phone's cells is drawn once,
    its numbers on hover and in the numbers box; a grid that needs fewer columns still gets its twin."""
    from figures.base import NARROWEST_PX, readable_width
    from figures.heads import head_split_figure
    from ui.charts import width_breakpoint

    split = head_split_figure(np.linspace(-1, 1, 64).reshape(4, 16), 4, list("abcd")).spec
    assert readable_width(split) > NARROWEST_PX >= readable_width(split, numbers=False)
    assert width_breakpoint(split) is None
    grid = heads_grid(np.full((4, 9, 9), 1 / 9), "the dog chased the cat up the tall tree".split(), ["t"] * 4).spec
    assert width_breakpoint(grid) is not None


def test_a_narrow_layout_is_worked_out_once_per_layout_and_serves_other_numbers(monkeypatch):
    """Every run of every session showing the same figure had the server estimate its readable width and reflow
    its layout (5-8 % of a page's run): now once per layout and trace places; the twin it gives is the one
    for_narrow_screen gives, with the numbers of the figure drawn, and a caller changing its figure afterwards
    changes nothing remembered."""
    import figures.base as base
    import ui.charts as charts
    from figures.base import NARROWEST_PX, side_px

    calls = []
    real = base.readable_width
    monkeypatch.setattr(charts, "readable_width", lambda *a, **k: calls.append(1) or real(*a, **k))
    monkeypatch.setattr(charts, "_narrow_fits", charts.OrderedDict())
    words = "the dog chased the cat up the tall tree".split()
    first = heads_grid(np.full((4, 9, 9), 1 / 9), words, ["previous token"] * 4).spec
    rng = np.random.default_rng(0)
    other = heads_grid(rng.dirichlet(np.ones(9), size=(4, 9)), words, ["previous token"] * 4).spec
    breakpoint, layout, plot_px = charts._narrow_fit(first)
    assert charts._narrow_fit(other)[1] is layout and len(calls) == 1  # other numbers, the same layout: no work
    expected = for_narrow_screen(other, width_px=NARROWEST_PX - side_px(other))
    assert plot_px == NARROWEST_PX - side_px(other)
    assert breakpoint == charts.width_breakpoint(other)  # (its own estimate: one call more)
    drawn = {"data": base.numbers_that_fit(other["data"], layout, plot_px), "layout": layout}
    assert json.dumps(drawn, sort_keys=True, default=repr) == json.dumps(
        {**expected, "layout": {k: v for k, v in expected["layout"].items() if k != "template"}},
        sort_keys=True,
        default=repr,
    )
    first["layout"]["xaxis"]["ticktext"][0] = "changed"  # the caller's figure, altered after it was drawn
    assert "changed" not in json.dumps(layout["xaxis"])
    renamed = heads_grid(np.full((4, 9, 9), 1 / 9), words, ["next token"] * 4).spec  # another layout: worked out
    charts._narrow_fit(renamed)
    assert len(calls) == 3
    single = heads_grid(np.full((1, 4, 4), 0.25), list("abcd"), ["one"], columns=1).spec
    assert charts._narrow_fit(single) is None and charts._narrow_fit(single) is None and len(calls) == 4


def test_a_page_drawing_a_figure_again_sends_the_same_twin():
    from streamlit.testing.v1 import AppTest

    def app():
        import numpy as np
        import streamlit as st

        import ui.charts as charts
        from figures.heads import heads_grid

        seed = st.session_state.setdefault("seed", 0)
        weights = np.random.default_rng(seed).dirichlet(np.ones(9), size=(4, 9))
        words = "the dog chased the cat up the tall tree".split()
        charts.chart(st, heads_grid(weights, words, ["previous token"] * 4), key="grid")

    at = AppTest.from_function(app, default_timeout=60).run()
    first = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    at.session_state["seed"] = 1
    at.run()
    second = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert not at.exception and len(first) == len(second) == 2
    assert first[1]["layout"] == second[1]["layout"] and len(columns_of(second[1]["layout"])) == 2
    assert first[1]["data"][0]["z"] != second[1]["data"][0]["z"]  # the numbers drawn are this run's
    assert second[1]["data"][0]["z"] == second[0]["data"][0]["z"]


def test_thinned_tick_labels_never_show_a_repeated_word_where_another_choice_shows_none():
    words = "the dog chased the cat up the tall tree".split()
    fig = heads_grid(np.full((4, 9, 9), 1 / 9), words, ["previous token"] * 4)
    axis = for_narrow_screen(fig.spec, width_px=220)["layout"]["xaxis"]  # a 2-column reflow: about 3 labels each
    shown = axis["ticktext"]
    assert 2 <= len(shown) < len(words) and len(set(shown)) == len(shown), shown
    assert [words[int(v)] for v in axis["tickvals"]] == shown  # each label still at its own word
    steps = {b - a for a, b in zip(axis["tickvals"], axis["tickvals"][1:], strict=False)}
    assert len(steps) == 1  # evenly spaced
    same = heads_grid(np.full((1, 9, 9), 1 / 9), ["a"] * 9, ["one"], columns=1)  # no choice avoids repeats
    assert for_narrow_screen(same.spec, width_px=120)["layout"]["xaxis"]["tickvals"][0] == 0


def test_a_chinese_title_breaks_between_characters_each_as_wide_as_two_letters():
    title = "每一层第一个注意力头的注意力权重，以及它们的和。"
    lines = wrap_title(title, 20).split("<br>")
    assert len(lines) == 3 and "".join(lines) == title  # broken where Chinese has no spaces, nothing lost or added
    assert all(len(line) * 2 <= 20 for line in lines)  # each character as wide as two letters
    assert not any(line[0] in "，。" for line in lines)  # punctuation never starts a line
    assert wrap_title("注意力 attention weights", 12) == "注意力<br>attention<br>weights"
