"""The induction lesson: the task, the two scores on hand-made patterns, training, and the shipped model."""

import math
from dataclasses import replace

import numpy as np
import pytest

from attention.decoder import DecoderParams, decoder_forward, generate
from lessons.induction import (
    MODEL_FILE,
    Evaluation,
    InductionConfig,
    InductionRun,
    Rise,
    check_input_fits,
    checkpoint_index,
    evaluate,
    final_losses,
    first_half_floor,
    first_half_verdict,
    formation_rise,
    half_weights,
    heads_on_continuation,
    ids_to_letters,
    induction_scores,
    letters_to_ids,
    load_induction_model,
    load_run,
    nearest_checkpoint,
    previous_token_scores,
    repeated_tokens,
    save_run,
    sequence_scores,
    train_induction,
    trained_length,
)
from tests.test_imports import ROOT


def test_repeated_tokens_are_distinct_then_repeated():
    ids = repeated_tokens(np.random.default_rng(0), 50, 7, 26)
    assert ids.shape == (50, 14) and ids.min() >= 0 and ids.max() < 26
    np.testing.assert_array_equal(ids[:, :7], ids[:, 7:])
    assert all(len(set(row[:7])) == 7 for row in ids.tolist())


def test_the_halves_by_hand():
    first, repeated = half_weights(4)  # tokens t0 t1 t2 t3 t0 t1 t2 t3: 7 predictions
    assert first.tolist() == [True, True, True, False, False, False, False]  # predicting t1, t2, t3
    assert repeated.tolist() == [False, False, False, False, True, True, True]  # t1, t2, t3 again
    assert first_half_floor(26, 3) == pytest.approx((math.log(25) + math.log(24)) / 2)


# ---------------------------------------------------------------- scores on patterns made by hand


def pattern(kind: str, n: int) -> np.ndarray:
    a = np.zeros((n, n))
    for i in range(n):
        a[i, max(i - 1, 0) if kind == "previous" else i if kind == "self" else 0] = 1.0
    return a


def test_previous_token_scores_of_hand_made_heads():
    a = np.stack(
        [
            [pattern("previous", 6), pattern("self", 6)],
            [pattern("first", 6), np.tril(np.ones((6, 6))) / np.arange(1, 7)[:, None]],
        ]
    )
    scores = previous_token_scores(a)  # (layers 2, heads 2)
    np.testing.assert_allclose(scores, [[1.0, 0.0], [0.2, np.mean([1 / (i + 1) for i in range(1, 6)])]])


def test_induction_score_of_a_perfect_induction_head_is_one():
    ids = np.array([3, 7, 5, 3, 7, 5])
    a = np.zeros((6, 6))
    for i in range(6):
        a[i, i - 2 if i >= 3 else i] = 1.0  # from the second 3 onto the 7 after the first 3, ...
    other = pattern("previous", 6)
    scores = induction_scores(np.stack([[a, other]]), ids)
    np.testing.assert_allclose(scores, [[1.0, 0.0]])


def test_scores_average_over_a_batch():
    ids = np.array([[1, 2, 1, 2], [4, 5, 6, 4]])
    a = np.zeros((2, 1, 1, 4, 4))
    a[0, 0, 0, 2, 1] = a[0, 0, 0, 3, 2] = 1.0  # sequence 0: both repeats read the token after
    a[1, 0, 0, 3, 3] = 1.0  # sequence 1: its one repeat looks at itself
    assert induction_scores(a, ids)[0, 0] == pytest.approx(2 / 3)


def test_scores_refuse_what_cannot_be_scored():
    with pytest.raises(ValueError, match="no token occurs twice"):
        induction_scores(np.ones((1, 1, 3, 3)) / 3, [1, 2, 3])
    with pytest.raises(ValueError, match="expected"):
        induction_scores(np.ones((1, 1, 3, 3)) / 3, [1, 2])
    with pytest.raises(ValueError, match="at least 2"):
        previous_token_scores(np.ones((1, 1, 1, 1)))
    with pytest.raises(ValueError, match="layers, heads"):
        previous_token_scores(np.ones((3, 3)))
    with pytest.raises(ValueError, match="NaN"):
        previous_token_scores(np.full((1, 1, 2, 2), np.nan))


def test_scores_read_a_cached_model_s_attention_rows():
    # with a cache the queries are the last n of n_total positions: query i sits at n_total - n + i
    a = np.zeros((1, 1, 2, 5))
    a[0, 0, 0, 2] = a[0, 0, 1, 3] = 1.0  # queries at positions 3 and 4, each on the one before
    assert previous_token_scores(a)[0, 0] == 1.0


# ---------------------------------------------------------------- the shipped model


def test_the_shipped_model_completes_repeated_halves_and_guesses_first_halves():
    params = load_induction_model()
    result = evaluate(params, half=10, n_sequences=500, seed=2024)  # sequences no training batch used
    assert result.accuracy_repeated >= 0.90
    chance = 1 / params.config.vocab_size
    assert result.accuracy_first < 2 * chance  # near chance (1/26 = 3.8 %)
    assert abs(result.loss_first - math.log(26)) < 0.3 and result.loss_repeated < 0.3
    # the mechanism: a previous-token head in layer 1, an induction head in layer 2
    assert result.previous_token[0].max() > 0.5 and result.induction[1].max() > 0.9


@pytest.mark.parametrize("half", [4, 7, 13, 16])
def test_the_shipped_model_is_no_fixed_offset_trick(half):
    assert evaluate(load_induction_model(), half=half, n_sequences=200, seed=7).accuracy_repeated >= 0.9


def test_the_shipped_file_is_small_and_says_how_it_was_made():
    assert MODEL_FILE.stat().st_size < 300_000
    run = load_run()
    assert run.config == InductionConfig()  # the script's default config, seed included
    assert run.params.dtype == np.float32 and run.params.config.mlp is False and run.params.config.n_layers == 2
    assert run.loss_first.shape == run.loss_repeated.shape == (run.config.steps,)
    assert tuple(run.checkpoint_steps) == run.config.checkpoint_steps
    assert run.attentions.shape == (len(run.checkpoint_steps), 2, 2, 19, 19)
    # the curves tell the story: both halves start at chance, only the repeated one falls
    assert run.loss_repeated[:20].mean() > 3.0 and run.loss_repeated[-100:].mean() < 0.3
    assert run.loss_first[-100:].mean() > 3.0
    assert run.induction[0].max() < 0.3 and run.induction[-1, 1].max() > 0.9


def test_the_script_names_its_seed_and_output():
    text = (ROOT / "scripts" / "train_induction.py").read_text()
    assert "--seed" in text and "induction_model.npz" in text


def test_a_student_sequence_is_completed():
    params = load_induction_model()
    prompt = letters_to_ids("q w e r t y u q w")
    completed = ids_to_letters(generate(params, prompt, 5))
    assert "".join(completed) == "qwertyuqwertyu"


def test_the_heads_on_a_continuation_read_all_but_the_last_new_letter():
    params = load_induction_model()
    completed = generate(params, letters_to_ids("zxcvbnmzx"), 7)  # 16 letters: the last one is never fed back
    inputs, attentions, previous, induction = heads_on_continuation(params, completed)
    np.testing.assert_array_equal(inputs, completed[:-1])
    assert attentions.shape == (2, 2, 15, 15) and previous.shape == induction.shape == (2, 2)
    np.testing.assert_allclose(attentions, decoder_forward(completed[:-1], params).attentions)
    expected = sequence_scores(attentions, completed[:-1])
    np.testing.assert_allclose(previous, expected[0])
    np.testing.assert_allclose(induction, expected[1])
    assert induction[-1].max() > 0.5 and previous[0].max() > 0.5  # layer 2 finds the copy, layer 1 the letter before
    _, _, _, nothing = heads_on_continuation(params, generate(params, letters_to_ids("abc"), 1))
    assert nothing is None  # no letter repeats in a b c: no induction to score


# ---------------------------------------------------------------- training


def test_training_is_reproducible_and_reports_progress():
    cfg = replace(InductionConfig(), steps=6, batch=8, checkpoint_every=3, d_model=8)
    calls = []
    a = train_induction(cfg, on_step=lambda done, total: calls.append((done, total)))
    b = train_induction(cfg)
    assert calls == [(i, 6) for i in range(1, 7)]
    for key, value in a.params.arrays().items():
        np.testing.assert_array_equal(value, b.params.arrays()[key])
    np.testing.assert_array_equal(a.loss_repeated, b.loss_repeated)
    assert a.attentions.shape == (3, 2, 2, 19, 19) and list(a.checkpoint_steps) == [0, 3, 6]
    assert not np.array_equal(a.attentions[0], a.attentions[-1])  # the patterns moved


def test_training_forms_an_induction_head():
    run = train_induction(replace(InductionConfig(), steps=400))  # the shipped run's head forms by step 300
    result = evaluate(run.params, n_sequences=200)
    assert result.accuracy_repeated > 0.8 and run.induction[-1, 1].max() > 0.8


def test_save_and_load_round_trip(tmp_path):
    run = train_induction(replace(InductionConfig(), steps=2, batch=4, checkpoint_every=1, d_model=8))
    back = load_run(save_run(run, tmp_path / "m.npz"))
    assert back.config == run.config
    for key, value in run.params.arrays().items():
        np.testing.assert_array_equal(value, back.params.arrays()[key])
    np.testing.assert_allclose(back.attentions, run.attentions, atol=1e-3)  # stored as float16


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(steps=10**6), "too large"),
        (dict(half_max=30), "half_max <= vocab_size"),
        (dict(probe_half=2), "probe_half"),
        (dict(lr=1), "lr"),
        (dict(seed=-1), "seed"),
    ],
)
def test_bad_training_configs_are_refused(change, message):
    with pytest.raises(ValueError, match=message):
        train_induction(replace(InductionConfig(), **change))


# ---------------------------------------------------------------- letters


def test_letters():
    np.testing.assert_array_equal(letters_to_ids("a B, c\tz"), [0, 1, 2, 25])
    assert ids_to_letters([7, 8]) == ["h", "i"]
    for bad in ("a1", "é", "<", "a-b"):
        with pytest.raises(ValueError, match="not one of the model's tokens"):
            letters_to_ids(bad)
    assert letters_to_ids("").size == 0


def verdict_of(loss_first: float, seen_first: float, seen_uniform: float = 0.19) -> str:
    z = np.zeros((2, 2))
    return first_half_verdict(
        Evaluation(10, 1, 0.0, 0.0, loss_first, 0.0, np.zeros(19), z, z, seen_first, seen_uniform), 26
    )


def test_the_first_half_verdict_names_where_the_loss_sits_and_why():
    floor, chance = first_half_floor(26, 10), math.log(26)
    assert floor == pytest.approx(np.mean(np.log(26 - np.arange(1, 10))))
    assert 3.03 < floor < 3.04 < 3.25 < chance  # distinct letters lower the floor below a uniform guess
    above = verdict_of(3.40, 0.22)
    assert (
        "sits above chance: 3.40 nats against log 26 = 3.26" in above and f"floor at 10 letters: {floor:.2f}" in above
    )
    assert "favours letters it has already seen, giving them 22% of its probability where a flat guess" in above
    between = verdict_of(3.10, 0.05)
    assert "between the floor and chance: 3.10 nats, between 3.04 and 3.26" in between
    assert "learned to avoid letters it has already seen" in between
    assert "reaches the floor: 3.04" in verdict_of(floor, 0.0)


def test_the_longest_input_is_what_training_fed_and_the_last_position_was_never_trained():
    run = load_run()
    config = run.params.config
    assert trained_length(config) == 2 * run.config.half_max - 1 == 31
    start = DecoderParams.random(run.config.decoder, run.config.seed, np.float32).arrays()["position_embedding"]
    trained = run.params.arrays()["position_embedding"]
    np.testing.assert_array_equal(trained[31], start[31])  # never an input: Adam never moved it
    assert np.all(np.abs(trained[:31] - start[:31]).max(axis=1) > 0.1)  # every other row was trained
    check_input_fits(31, 1, config)  # 31 letters, the new one never fed back
    check_input_fits(20, 12, config)
    with pytest.raises(ValueError, match="need 32 positions; training fed this model at most 31 tokens"):
        check_input_fits(31, 2, config)
    with pytest.raises(ValueError, match="at least one letter"):
        check_input_fits(0, 1, config)


def test_training_weighs_every_prediction_alike(monkeypatch):
    # the page says "here every w_i = 1" under the weighted cross-entropy: training passes no weights
    import lessons.induction as induction

    seen = []
    real = induction.next_token_loss

    def recording(params, ids, weights=None):
        seen.append(weights)
        return real(params, ids, weights)

    monkeypatch.setattr(induction, "next_token_loss", recording)
    train_induction(replace(InductionConfig(), steps=3, batch=4, checkpoint_every=3, d_model=8))
    assert seen == [None, None, None]


def test_the_score_formulas_on_the_page_are_what_the_scores_compute():
    from lessons.induction import INDUCTION_LATEX, PREVIOUS_TOKEN_LATEX

    assert r"\frac{1}{n-1}\sum_{i=1}^{n-1} A^{\ell h}_{i,\,i-1}" in PREVIOUS_TOKEN_LATEX
    assert r"A^{\ell h}_{i,\,j+1}" in INDUCTION_LATEX and r"t_j = t_i,\ j < i" in INDUCTION_LATEX
    rng = np.random.default_rng(4)
    ids = np.array([3, 1, 4, 0, 5, 3, 1, 4, 2])  # 3, 1, 4 repeat at 5, 6, 7
    a = rng.dirichlet(np.ones(9), size=(2, 3, 9))  # (layers, heads, n, n): any rows summing to 1
    n = len(ids)
    prev = np.array(
        [[sum(a[layer, h, i, i - 1] for i in range(1, n)) / (n - 1) for h in range(3)] for layer in range(2)]
    )
    np.testing.assert_allclose(previous_token_scores(a), prev, rtol=1e-12)
    pairs = [(5, 0), (6, 1), (7, 2)]  # (i, j): t_j = t_i, j < i
    ind = np.array([[np.mean([a[layer, h, i, j + 1] for i, j in pairs]) for h in range(3)] for layer in range(2)])
    np.testing.assert_allclose(induction_scores(a, ids), ind, rtol=1e-12)


def test_the_model_is_attention_only_as_the_page_says():
    config = load_run().config.decoder  # "two layers of 2 causal attention heads each, no MLP, no layer norm"
    assert (config.n_layers, config.n_heads, config.n_kv_heads) == (2, 2, 2)
    assert not config.mlp and not config.final_norm


def test_the_first_half_is_explained_by_the_repeat_that_may_start_at_any_step():
    evaluation = evaluate(load_induction_model(), half=10, n_sequences=500, seed=12345)
    ids = repeated_tokens(np.random.default_rng(12345), 500, 10, 26)[:, :-1]
    logits = decoder_forward_batch(ids)
    top_is_first = logits[:, :9].argmax(axis=-1) == ids[:, :1]  # (B, 9): the first half's top guesses
    assert evaluation.first_letter_top == pytest.approx(top_is_first.mean())
    assert evaluation.first_letter_top > 0.5 > evaluation.accuracy_first  # its usual guess: the repeat starts now
    verdict = first_half_verdict(evaluation, 26, (4, 16))
    assert f"first letter in {top_is_first.mean():.0%} of the predictions" in verdict
    assert f"the top guess is right {evaluation.by_position[9]:.0%} of the time" in verdict
    assert evaluation.by_position[9] > 0.5  # the grey bar: right where the repeat does start
    assert "first letter" not in first_half_verdict(evaluation, 26)  # without the halves, nothing said of them


def decoder_forward_batch(ids: np.ndarray) -> np.ndarray:
    from attention.decoder import forward_trace

    return forward_trace(ids, load_induction_model()).logits


# ---------------------------------------------------------------- reading a run (what the page says about it)


def made_up_run(induction: np.ndarray, previous: np.ndarray, steps) -> InductionRun:
    """The shipped run with its checkpoints' scores replaced by hand-made ones. Shapes: (C, layers, heads)."""
    return replace(load_run(), checkpoint_steps=np.array(steps), induction=induction, previous_token=previous)


def test_nearest_checkpoint_by_hand():
    steps = np.array([0, 50, 100, 150])
    assert nearest_checkpoint(steps, 173) == 150 and nearest_checkpoint(steps, 60) == 50
    assert nearest_checkpoint(steps, 75) == 50  # as near as 100: the earlier one
    assert nearest_checkpoint(steps, 100) == 100 and nearest_checkpoint(steps, 9999) == 150
    with pytest.raises(ValueError, match="at least one checkpoint"):
        nearest_checkpoint([], 5)


def test_checkpoint_index_names_the_checkpoint_or_refuses():
    assert checkpoint_index(np.array([0, 50, 100]), 100) == 2
    with pytest.raises(ValueError, match="step 60 is not one of this run's checkpoints"):
        checkpoint_index(np.array([0, 50, 100]), 60)


def test_final_losses_average_the_last_steps_only():
    run = replace(load_run(), loss_first=np.r_[np.full(50, 9.0), np.full(100, 2.0)], loss_repeated=np.arange(150.0))
    assert final_losses(run) == (2.0, float(np.arange(50, 150).mean()))
    assert final_losses(run, steps=2) == (2.0, 148.5)


def test_formation_rise_reads_one_checkpoint_either_side():
    induction = np.zeros((4, 2, 2))
    induction[2:, 1, 1] = [0.7, 0.9]  # the last layer's head 2 forms at checkpoint 2
    induction[:, 0, 0] = 0.99  # a first-layer head: never counted as induction
    previous = np.zeros((4, 2, 2))
    previous[:, 0, 1] = [0.1, 0.2, 0.6, 0.8]
    previous[:, 1, 0] = 0.95  # a last-layer head: never counted as previous-token
    rise = formation_rise(made_up_run(induction, previous, [0, 50, 100, 150]))
    assert rise == Rise(50, 150, 0.2, 0.8, 0.0, 0.9)
    assert formation_rise(made_up_run(induction * 0.5, previous, [0, 50, 100, 150])) is None  # 0.45 < 0.5
    first = np.zeros((2, 2, 2))
    first[:, 1, 0] = 0.8  # formed at the first checkpoint: "before" is that checkpoint itself
    assert formation_rise(made_up_run(first, np.zeros((2, 2, 2)), [0, 50])).step_before == 0


def test_sequence_scores_leave_out_induction_only_when_nothing_repeats():
    attn = np.zeros((1, 1, 4, 4))
    attn[0, 0, 0, 0] = 1.0
    attn[0, 0, 1:, :3] = np.eye(3)  # every query on the token before it
    previous, induction = sequence_scores(attn, np.array([1, 2, 3, 4]))
    np.testing.assert_allclose(previous, [[1.0]])
    assert induction is None
    previous, induction = sequence_scores(attn, np.array([1, 2, 1, 2]))
    np.testing.assert_allclose(induction, induction_scores(attn, np.array([1, 2, 1, 2])))
    assert induction is not None
