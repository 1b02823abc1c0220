"""The "Watch an induction head form" page under AppTest: the shipped model's numbers, every control, training."""

import numpy as np
import pytest

from attention.decoder import decoder_forward, generate
from lessons.induction import (
    ROLE_THRESHOLD,
    InductionConfig,
    chance_loss,
    evaluate,
    first_half_floor,
    first_half_verdict,
    formation_index,
    ids_to_letters,
    letters_to_ids,
    load_induction_model,
    load_run,
    loss_fall,
    trained_length,
)
from tests.apptest_helpers import (
    chart_by_key,
    heatmap_z,
    number_box,
    open_page,
    plotly_values,
    table_with_column,
    type_number,
)

PAGE = "pages/induction.py"
CHARTS = (
    "induction_loss",
    "induction_filmstrip",
    "induction_grid",
    "induction_scores",
    "induction_accuracy",
    "induction_own_grid",
)


def texts(elements) -> str:
    return " | ".join(str(e.value) for e in elements)


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


@pytest.fixture(scope="module")
def shipped():
    return load_run()


def test_the_shipped_model_opens_with_every_chart_and_its_measured_numbers(shipped):
    at = open_page(PAGE)
    assert not at.exception and not at.error and not at.warning
    for key in CHARTS:
        assert chart_by_key(at, key)["data"], key
    expected = evaluate(load_induction_model(), half=10, n_sequences=500, seed=12345)
    shown = metrics(at)
    assert shown["accuracy, repeated half"] == f"{expected.accuracy_repeated:.1%}"
    assert shown["accuracy, first half"] == f"{expected.accuracy_first:.1%}"
    assert float(shown["accuracy, repeated half"].rstrip("%")) >= 90
    loss = chart_by_key(at, "induction_loss")
    np.testing.assert_allclose(plotly_values(loss["data"][0]["y"]), shipped.loss_first)
    np.testing.assert_allclose(plotly_values(loss["data"][2]["y"]), shipped.loss_repeated)
    k = list(shipped.checkpoint_steps).index(250)
    np.testing.assert_allclose(heatmap_z(chart_by_key(at, "induction_grid")), shipped.attentions[k, 0, 0])
    final = table_with_column(at, "what it does")
    assert "induction head" in set(final["what it does"])
    assert dict(at.query_params) == {
        "model": "shipped",
        "seed": "0",
        "steps": "2000",
        "at": "250",
        "text": "q w e r t y u q w",
        "n_new": "5",
    }


def test_the_checkpoint_slider_shows_that_steps_patterns(shipped):
    at = open_page(PAGE)
    at.select_slider(key="induction_at").set_value(2000).run()
    assert not at.exception
    grid = chart_by_key(at, "induction_grid")
    layer2 = [plotly_values(t["z"]) for t in grid["data"]][2]
    np.testing.assert_allclose(layer2, shipped.attentions[-1, 1, 0])
    assert at.query_params["at"] == "2000"
    assert any("L2 H1: prev" in a["text"] for a in grid["layout"]["annotations"])


def test_a_step_between_checkpoints_moves_to_the_nearest_and_says_so():
    at = open_page(PAGE, {"at": "173"})
    assert not at.exception and not at.warning
    assert at.select_slider(key="induction_at").value == 150
    assert "Step 173 is not one of this run's checkpoints" in texts(at.caption)
    assert at.query_params["at"] == "150"


def test_your_own_sequence_is_completed_by_the_model():
    at = open_page(PAGE)
    at.text_input(key="induction_text").set_value("zxcvbnm zx").run()
    type_number(at, "induction_n_new", "7")
    assert not at.exception and not at.error
    expected = ids_to_letters(generate(load_induction_model(), letters_to_ids("zxcvbnmzx"), 7))
    assert expected[9:] == list("cvbnmzx")  # the model continues the repeat
    assert f"→ {' '.join('**' + x + '**' for x in expected[9:])}" in texts(at.markdown)
    z = heatmap_z(chart_by_key(at, "induction_own_grid"))
    attn = decoder_forward(letters_to_ids("".join(expected[:-1])), load_induction_model()).attentions
    np.testing.assert_allclose(z, attn[0, 0], atol=1e-6)


@pytest.mark.parametrize(
    "text, message",
    [
        ("abc1", "'1' is not one of the model's tokens"),
        ("   ", "type at least one letter"),
        ("abcdefghijklmnopqrstuvwxyzabcdef", "positions"),
        ("<img src=x>", "is not one of the model's tokens"),
    ],
)
def test_text_the_model_cannot_take_gets_a_message(text, message):
    at = open_page(PAGE)
    at.text_input(key="induction_text").set_value(text).run()
    assert not at.exception
    assert message in texts(at.error).replace("\\", "")
    assert "<img" not in texts(at.error)  # shown as text: markdown escaped


def test_a_sequence_without_repeats_says_there_is_nothing_to_score():
    at = open_page(PAGE, {"text": "abc", "n_new": "1"})
    assert not at.exception and not at.error
    assert "No letter repeats" in texts(at.caption)


def test_the_first_half_is_measured_against_chance_and_its_floor():
    at = open_page(PAGE)
    floor, chance = first_half_floor(26, 10), chance_loss(26)
    assert floor < chance
    assert f"log 26 = {chance:.2f} nats" in texts(at.markdown)
    assert f"{floor:.2f} nats for 10 letters" in texts(at.markdown)
    evaluation = evaluate(load_induction_model(), half=10, n_sequences=500, seed=12345)
    verdict = first_half_verdict(evaluation, 26, (4, 16))
    assert "halves of 4 to 16 letters" in verdict and "halves of 4 to 16 letters" in texts(at.markdown)
    assert verdict in texts(at.caption)
    # the shipped model sits above chance because it favours the letters it has already seen
    assert evaluation.loss_first > chance and evaluation.seen_first > evaluation.seen_uniform
    assert "sits above chance" in verdict and "favours letters it has already seen" in verdict
    assert "near chance" not in texts(at.caption)


def test_the_numbers_in_the_help_texts_come_from_the_shipped_run(shipped):
    at = open_page(PAGE)
    steps_help = at.select_slider(key="induction_steps").help
    assert f"The shipped model's {shipped.config.steps} took {shipped.seconds:.0f} s" in steps_help
    assert f"(seed {shipped.config.seed}, {shipped.config.steps} steps)" in at.radio(key="induction_model").help
    helps = {m.label: m.help for m in at.metric}
    assert helps["accuracy, first half"] == f"Chance is 1/26 = {1 / 26:.1%}."
    assert f"log 26 = {chance_loss(26):.2f} nats" in helps["loss, first half"]
    assert f"{first_half_floor(26, 10):.2f}" in helps["loss, first half"]
    assert "averaged over 64 fixed sequences of 2 × 10 letters" in texts(at.caption)
    new = number_box(at, "induction_n_new")  # its help says the bounds it has
    assert new.help == "How many letters the model adds. Type a whole number from 1 to 16, then press Enter."


def test_the_longest_input_is_the_longest_training_fed():
    at = open_page(PAGE, {"text": "abcdefghijklmnopqrstuvwxyzabcde", "n_new": "1"})  # 31 letters, nothing fed back
    assert not at.exception and not at.error
    type_number(at, "induction_n_new", "2")  # the first new letter would sit at position 32: the box's bound
    assert "'2' is more than 1" in texts(at.error) and at.session_state["induction_n_new"] == 1
    at.text_input(key="induction_text").set_value("abcdefghijklmnopqrstuvwxyzabcdef").run()  # 32: no room at all
    assert "need 32 positions" in texts(at.error) and "at most 31 tokens" in texts(at.error)


def test_the_new_letters_are_held_inside_the_trained_positions_and_come_back():
    """The core's limit (check_input_fits) is the box's: 31 letters leave room for 1 new letter, not 5."""
    at = open_page(PAGE, {"text": "abcdefghijklmnopqrstuvwxyzabcde"})
    assert not at.exception and not at.error and at.session_state["induction_n_new"] == 1
    lowered = "New letters lowered from 5 to 1: your 31 letters and the new ones fed back (all but the last) must fit "
    positions = trained_length(InductionConfig().decoder)
    assert lowered + f"the {positions} positions the model was trained on" in texts(at.caption)
    assert at.query_params["n_new"] == "1" and number_box(at, "induction_n_new").help.endswith(
        "from 1 to 1, then press Enter."
    )
    at.text_input(key="induction_text").set_value("abcdefghijklmnopqrstuvwxyz").run()  # 26 letters: room for 6
    assert at.session_state["induction_n_new"] == 5 and "lowered" not in texts(at.caption)


def test_a_training_stopped_by_leaving_is_said_to_be_cancelled_and_the_radio_shows_the_shipped_model():
    """A run stopped mid-training leaves its progress in the session; the next run says so."""
    progress = {"seed": 7, "steps": 2000, "done": 400}
    at = open_page(PAGE, {"seed": "7", "model": "yours"}, state={"_induction_training": progress})
    assert not at.exception
    assert "was cancelled at step 400" in texts(at.info)
    assert at.radio(key="induction_model").value == "shipped" and at.query_params["model"] == "shipped"
    at.run()  # said once
    assert "cancelled" not in texts(at.info)


def test_training_alone_never_says_it_waits_for_another_student(monkeypatch):
    import streamlit

    said, original = [], streamlit.progress

    class Bar:
        def __init__(self, bar):
            self.bar = bar

        def progress(self, value, text=None):
            said.append(text)
            return self.bar.progress(value, text=text)

        def empty(self):
            return self.bar.empty()

    def progress(value, text=None):
        said.append(text)
        return Bar(original(value, text=text))

    monkeypatch.setattr(streamlit, "progress", progress)
    at = open_page(PAGE, {"steps": "250", "seed": "6"})
    at.button(key="induction_train").click().run()
    assert not at.exception and "Trained 250 steps (seed 6)" in texts(at.success)
    assert said[0] == "Training…" and "Training: step 250 of 250" in said
    assert not [t for t in said if "Waiting" in t]


def test_train_it_yourself_trains_caches_and_shows_your_model():
    at = open_page(PAGE, {"steps": "250", "seed": "5", "model": "yours"})
    assert "has not been trained on this server yet" in texts(at.info)  # until the button is pressed
    assert at.radio(key="induction_model").value == "shipped"  # the radio names the model shown
    at.button(key="induction_train").click().run()
    assert not at.exception and not at.error
    assert "Trained 250 steps (seed 5)" in texts(at.success)
    assert at.radio(key="induction_model").value == "yours"
    assert len(plotly_values(chart_by_key(at, "induction_loss")["data"][0]["y"])) == 250
    assert at.select_slider(key="induction_at").options[-1] == "250"
    at.radio(key="induction_model").set_value("shipped").run()
    assert len(plotly_values(chart_by_key(at, "induction_loss")["data"][0]["y"])) == 2000
    at.radio(key="induction_model").set_value("yours").run()  # cached: no second training
    assert not at.info and len(plotly_values(chart_by_key(at, "induction_loss")["data"][0]["y"])) == 250
    assert dict(at.query_params)["model"] == "yours"


def test_the_seed_and_steps_controls_name_the_run_to_train():
    at = open_page(PAGE)
    type_number(at, "induction_seed", "42")
    at.select_slider(key="induction_steps").set_value(500).run()
    assert not at.exception
    assert at.query_params["seed"] == "42" and at.query_params["steps"] == "500"
    at.session_state["snippet"] = True  # open "Reproduce this in Python" (its code is drawn only while open)
    at.run()
    snippet = next(c.value for c in at.code if "load_induction_model" in c.value)
    assert "letters_to_ids('q w e r t y u q w')" in snippet


def test_bad_url_values_fall_back_with_warnings():
    at = open_page(PAGE, {"model": "<b>", "seed": "-1", "steps": "17", "at": "x", "n_new": "99"})
    assert not at.exception
    assert len(at.warning) == 5, texts(at.warning)
    assert at.radio(key="induction_model").value == "shipped"
    assert at.select_slider(key="induction_steps").value == 2000


def test_the_loss_and_score_sentences_hold_the_shipped_runs_numbers(shipped):
    at = open_page(PAGE)
    chance = chance_loss(26)
    fall = loss_fall(shipped.loss_repeated, chance)
    assert fall is not None and fall[0] < fall[1]
    means = np.convolve(shipped.loss_repeated, np.ones(25) / 25, mode="valid")
    assert means[fall[0]] < 0.9 * chance <= means[: fall[0]].min() and means[fall[1]] < 0.1 * chance
    assert f"from 90% of chance to 10% of it in {fall[1] - fall[0]} steps (steps {fall[0]} to {fall[1]}" in texts(
        at.markdown
    )
    assert "a few hundred" not in texts(at.markdown)
    end_first = shipped.loss_first[-100:].mean()
    assert end_first > chance  # the shipped model's first half ends above chance, and the caption says so
    assert f"first half {end_first:.2f} nats (above chance, {chance:.2f}" in texts(at.caption)
    k = formation_index(shipped.induction)
    assert shipped.induction[k, -1].max() > ROLE_THRESHOLD >= shipped.induction[k - 1, -1].max()
    assert f"above {ROLE_THRESHOLD} first appears at the checkpoint of step {shipped.checkpoint_steps[k]}" in texts(
        at.caption
    )
    prev, ind = shipped.previous_token[:, 0].max(axis=-1), shipped.induction[:, -1].max(axis=-1)
    assert prev[k + 1] > prev[k - 1] + 0.2 and ind[k + 1] > ind[k - 1] + 0.2  # "the two rise together"
    said = (
        f"from step {shipped.checkpoint_steps[k - 1]} to step {shipped.checkpoint_steps[k + 1]}, layer 1's best "
        f"previous-token score goes from {prev[k - 1]:.2f} to {prev[k + 1]:.2f} and layer 2's best induction score "
        f"from {ind[k - 1]:.2f} to {ind[k + 1]:.2f}"
    )
    assert said in texts(at.caption)


def test_loss_fall_reads_a_made_up_curve():
    loss = np.r_[np.full(100, 3.0), np.linspace(3.0, 0.0, 31)[1:], np.zeros(50)]  # falls from step 100 to 130
    hi, lo = loss_fall(loss, 3.0, window=1)
    assert loss[hi] < 2.7 <= loss[hi - 1] and loss[lo] < 0.3 <= loss[lo - 1]
    assert loss_fall(np.full(200, 3.0), 3.0) is None  # never falls


def test_terms_are_defined_where_first_used():
    at = open_page(PAGE)
    said = texts(at.caption) + texts(at.markdown)
    assert "d_model = 32 (the number of entries in every token's vector)" in said
    assert "one logit (a score before the softmax) per letter" in said and "here every w_i = 1" in said
    assert "no MLP (the feed-forward layer of a full block)" in said
    assert "A uniform guess over V = 26 letters" in said  # the V of the charts' "log V" and "1/V"
    assert "top-1 accuracy of each prediction (how often the letter given the highest probability" in said
