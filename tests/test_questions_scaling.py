"""The scaling page's question (ui/questions/scaling.py): the average largest weight at one d_k, unscaled or
scaled, is the page's own measurement, checked here against an independent draw; the page hides its measurements
on every screen while the class answers, and shows them again after the reveal."""

from __future__ import annotations

import numpy as np
import pytest

from classroom.questions import prompt_text
from lessons.scaling import sweep_stats
from tests.apptest_helpers import every_text
from tests.classroom_asking import ask, hidden_on, reveal
from ui.questions.scaling import largest_weight


def independent_largest_weight(d_k: int, n_keys: int, scaled: bool, draws: int = 4000) -> float:
    """The average largest softmax weight of q·k_j (/√d_k if scaled), q and k with independent N(0, 1) components,
    from this test's own generator."""
    rng = np.random.default_rng(12345)
    q = rng.standard_normal((draws, 1, d_k))
    k = rng.standard_normal((draws, n_keys, d_k))
    scores = (q * k).sum(-1) / (np.sqrt(d_k) if scaled else 1.0)  # (draws, n_keys)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    return float(weights.max(-1).mean())


@pytest.mark.parametrize(("d_k", "scaled"), [(1024, False), (1024, True), (4, False), (64, True)])
def test_the_true_value_is_the_measured_average_and_agrees_with_an_independent_draw(d_k, scaled):
    stats = sweep_stats((8, 1000, 0))
    body, truth = largest_weight(stats, d_k, scaled)
    column = stats.max_weight_scaled if scaled else stats.max_weight_unscaled
    assert truth == column[stats.index(d_k)]
    assert truth == pytest.approx(independent_largest_weight(d_k, 8, scaled), abs=0.03)
    assert body["kind"] == "number" and (body["lo"], body["hi"]) == (0.0, 1.0)
    for named in ("8 keys", f"d_k = {d_k}", "1000 draws", "seed 0", "scaled by 1/√d_k" if scaled else "unscaled"):
        assert named in prompt_text(body)


def test_the_prompt_names_the_distribution_the_measurement_draws_from():
    """The average largest weight depends on how q and k are drawn (lessons/scaling.py draws independent standard
    normal components): the prompt says so, not a bare "random", and fits the classroom's 300 characters."""
    for stats in (sweep_stats((8, 1000, 0)), sweep_stats((64, 1250, 9999))):
        body, _ = largest_weight(stats, 4096, True)
        assert prompt_text(body).startswith("q and k with independent standard normal components, ")
        assert "Random" not in prompt_text(body) and len(prompt_text(body)) <= 300
        assert f"{1 / stats.n_keys:.3g}: uniform" in prompt_text(body)


def test_unscaled_the_largest_weight_heads_for_1_and_scaled_it_does_not():
    stats = sweep_stats((8, 1000, 0))
    assert largest_weight(stats, 1024, False)[1] > 0.9
    assert largest_weight(stats, 1024, True)[1] < 0.7
    with pytest.raises(ValueError, match="one key"):
        largest_weight(sweep_stats((1, 100, 0)), 64, False)
    with pytest.raises(ValueError, match="was not measured"):
        largest_weight(stats, 3, False)


def test_asked_in_a_room_the_measurements_are_hidden_until_the_reveal(room):
    teacher, student, code = room
    teacher.switch_page("pages/scaling.py").run()
    student.run()
    assert [t.value for t in student.title] == [t.value for t in teacher.title]
    assert "All the numbers" in every_text(student)
    question = ask(teacher, "largest", d_k=1024, scaled=0)
    stats = sweep_stats((8, 1000, 0))
    assert question.truth == pytest.approx(stats.max_weight_unscaled[stats.index(1024)], abs=1e-12)
    for screen in (student, teacher):
        screen.run()
        assert not screen.exception and hidden_on(screen)
        assert "All the numbers" not in every_text(screen) and not screen.dataframe
        assert f"{question.truth:.2f}" not in every_text(screen).replace("0.00", "")
    reveal(teacher, question)
    student.run()
    assert not hidden_on(student) and "All the numbers" in every_text(student)
