"""bench/bench_playground.py's `--where` report, from a made-up browser report (no browser, no server)."""

from bench.bench_playground import print_where


def report(clicks=None) -> dict:
    return {
        "where": {
            "ws": [[800.0, 390], [810.0, 4]],
            "long": [[900.0, 600.0], [2500.0, 80.0]],  # the second one comes after the heatmap was drawn
            "drawn": 2000.0,
        },
        "resources": [
            ["index.DormvYxC.js", 40.0, 140.0],  # the app's shell, before the first message
            ["Checkbox.CaT4asBe.js", 850.0, 870.0],
            ["useField.CsWac_7E.js", 860.0, 880.0],  # a shared helper, not an element
            ["PlotlyChart.D9Z0_fxz.js", 874.0, 1076.0],
            ["DataFrame.-f9-1zS0.js", 2100.0, 2200.0],  # asked for after the heatmap was drawn
        ],
        **({"clicks": clicks} if clicks else {}),
    }


def test_the_report_names_the_element_code_asked_for_between_the_first_message_and_the_heatmap(capsys):
    print_where("real", report())
    out = capsys.readouterr().out
    assert "first message   800 ms, 2 messages" in out
    assert "heatmap code asked   874, arrived  1076; heatmap drawn  2000 ms" in out
    assert "long tasks before it  600 ms" in out
    assert "(2): Checkbox PlotlyChart\n" in out
    assert "per click" not in out


def test_the_report_gives_the_median_click_in_messages_and_kilobytes(capsys):
    print_where("real", report(clicks=[[16, 10_000], [16, 9_800], [66, 30_000]]))
    assert "per click: 16 messages, 10.0 kB" in capsys.readouterr().out


def test_the_split_report_gives_each_parts_median_and_its_ratio_to_the_floor():
    from bench.bench_playground import split_lines

    served = {"real": [9.0, 10.0, 40.0], "floor": [15.0, 14.0, 16.0]}
    rows = {
        "real": [(50.0, 100.0, 150.0), (40.0, 90.0, 130.0), (60.0, 95.0, 155.0)],
        "floor": [(20.0, 80.0, 100.0), (25.0, 70.0, 95.0), (10.0, 75.0, 85.0)],
    }
    lines = split_lines(served, rows)
    assert lines[0] == "a click, split (3 clicks per app, medians):"
    assert lines[1].endswith("real   10.0 ms   floor   15.0 ms   (0.67)")  # medians, not means
    assert "last frame taken in" in lines[2] and lines[2].endswith("real   50.0 ms   floor   20.0 ms   (2.50)")
    assert lines[3].endswith("real   95.0 ms   floor   75.0 ms   (1.27)")
    assert lines[4].endswith("real  150.0 ms   floor   95.0 ms   (1.58)")
