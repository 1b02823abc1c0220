"""The induction page's questions (ui/questions/induction.py): where a head of the shown model looks from one of the
typed letters, checked against the training's own forward pass; how often its top guess is right on each half,
checked against this test's own count; the page hides each answer on every screen while the class answers it, and
shows it again after the reveal."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from attention.decoder import DecoderParams, decoder_forward
from classroom.questions import option_texts, prompt_text
from lessons.induction import InductionConfig, batch_attentions, evaluate, letters_to_ids, load_run
from tests.apptest_helpers import chart_by_key, every_text, open_page
from tests.classroom_asking import ask, hidden_on, reveal
from ui.page_questions import questions_of
from ui.questions.induction import accuracy, attend, head_options

PAGE = "pages/induction.py"
TEXT = "q w e r t y u q w"  # the page's default letters


@pytest.fixture(scope="module")
def shipped():
    return load_run()


def independent_top_key(params, letters: str, layer: int, head: int, query: int) -> int:
    """The key of the largest weight, from the batched forward pass training uses (not the page's decoder_forward)."""
    ids = letters_to_ids(letters)
    weights = batch_attentions(params, ids[None])[0, layer, head, query]  # (n,)
    assert np.all(weights[query + 1 :] == 0)  # causal: nothing after the query
    return int(np.argmax(weights))


def independent_accuracy(params, half: int = 10, n_sequences: int = 300, seed: int = 999) -> tuple[float, float]:
    """(first half, repeated half): how often the largest logit is the next letter, on this test's own sequences of
    `half` distinct letters twice. Prediction i (at position i) guesses letter i + 1; the first half's guesses are
    those of letters 1 .. half - 1, the repeated half's those of letters half + 1 .. 2 half - 1."""
    rng = np.random.default_rng(seed)
    right_first, right_repeated = [], []
    for _ in range(n_sequences):
        first = rng.permutation(26)[:half]
        seq = np.concatenate([first, first])
        guess = decoder_forward(seq[:-1], params).logits.argmax(-1)  # (2 half - 1,)
        right = guess == seq[1:]
        right_first.append(right[: half - 1].mean())
        right_repeated.append(right[half:].mean())
    return float(np.mean(right_first)), float(np.mean(right_repeated))


@pytest.mark.parametrize(
    ("text", "layer", "head", "query", "expected"),
    [
        (TEXT, 1, 0, 7, 1),  # the second q: the induction head looks at the w after the first q
        (TEXT, 1, 1, 8, 2),  # the second w: at the e after the first w
        (TEXT, 0, 1, 6, 5),  # layer 1's previous-token head, from u: at the letter before, y
        ("a b c d e f a b c d", 1, 0, 9, 4),  # another sequence: from the second d, at the e after the first
    ],
)
def test_the_true_key_is_where_the_shipped_models_head_looks(shipped, text, layer, head, query, expected):
    body, truth = attend(shipped, "shipped", text, 5, layer * 2 + head, query)
    assert truth == [independent_top_key(shipped.params, text, layer, head, query)] == [expected]
    assert body["kind"] == "choice" and len(option_texts(body)) == query + 1
    letters = text.split()
    assert option_texts(body)[expected] == f"k_{expected} '{letters[expected]}'"
    for named in (
        "The shipped model (seed 0, 2000 steps)",
        f"'{' '.join(letters)}'",
        f"L{layer + 1} H{head + 1}",
        f"query {query} '{letters[query]}'",
    ):
        assert named in prompt_text(body)
    assert len(prompt_text(body)) <= 300


def test_another_model_gives_its_own_answer(shipped):
    """An untrained model (random weights) of the same shape: the truth follows its weights, not the shipped ones."""
    config = InductionConfig(seed=3, steps=250)
    params = DecoderParams.random(config.decoder, 3, np.float32)
    mine = dataclasses.replace(shipped, config=config, params=params)
    for query in range(1, 9):
        body, truth = attend(mine, "yours", TEXT, 5, 2, query)
        assert truth == [independent_top_key(params, TEXT, 1, 0, query)]
        assert "The model trained here (seed 3, 250 steps)" in prompt_text(body)
    theirs = [attend(shipped, "shipped", TEXT, 5, 2, q)[1] for q in range(1, 9)]
    differs = [q for q in range(1, 9) if attend(mine, "yours", TEXT, 5, 2, q)[1] != theirs[q - 1]]
    assert differs  # a build that ignored the run would agree everywhere


def test_a_query_or_text_the_page_cannot_show_is_refused(shipped):
    with pytest.raises(ValueError, match="outside 1..8"):
        attend(shipped, "shipped", TEXT, 5, 2, 9)
    with pytest.raises(ValueError, match="at least two letters"):
        attend(shipped, "shipped", "q", 5, 2, 1)
    with pytest.raises(ValueError, match="not one of the model's tokens"):
        attend(shipped, "shipped", "q w 1", 5, 2, 1)
    with pytest.raises(ValueError, match="positions"):
        attend(shipped, "shipped", "abcdefghijklmnopqrstuvwxyzabcdef", 1, 2, 3)
    assert head_options()[:2] == [2, 3]  # the last layer's heads first: the box opens on an induction head


def test_the_accuracy_is_the_measured_share_and_agrees_with_an_independent_count(shipped):
    evaluation = evaluate(shipped.params, half=10, n_sequences=500, seed=12345)
    first, repeated = independent_accuracy(shipped.params)
    body, truth = accuracy(shipped, evaluation, "shipped", True)
    assert truth == evaluation.accuracy_repeated == pytest.approx(repeated, abs=0.03)
    assert truth > 0.9  # the repeated half is predicted: the induction head copies
    body_first, truth_first = accuracy(shipped, evaluation, "shipped", False)
    assert truth_first == evaluation.accuracy_first == pytest.approx(first, abs=0.03)
    assert truth_first < 0.1  # the first half is not
    assert body["kind"] == "number" and (body["lo"], body["hi"]) == (0.0, 1.0)
    for named in ("The shipped model (seed 0, 2000 steps)", "500 fresh sequences", "10 random distinct letters"):
        assert named in prompt_text(body) and named in prompt_text(body_first)
    assert "on the repeated half" in prompt_text(body) and "on the first half" in prompt_text(body_first)


def test_the_accuracy_prompt_says_which_guesses_each_half_counts(shipped):
    """The guess of the first repeated letter (where the repeat starts, which no model can know) is in neither half:
    counted in the repeated half, it would lower the share by about 1/10, more than the tolerance. The prompt says
    so, and fits the classroom's 300 characters for the longest name of a model the page trains (seed 9999)."""
    evaluation = evaluate(shipped.params, half=10, n_sequences=500, seed=12345)
    first, repeated = independent_accuracy(shipped.params)  # this test's own count leaves that guess out too
    with_it = (repeated * 9 + 0) / 10  # the repeated half with that guess in it, were it wrong (it nearly always is)
    assert abs(with_it - evaluation.accuracy_repeated) > 0.05
    widest = dataclasses.replace(shipped, config=InductionConfig(seed=9999, steps=2000))
    for run, model in ((shipped, "shipped"), (widest, "yours")):
        for repeated_half in (True, False):
            body, _ = accuracy(run, evaluation, model, repeated_half)
            assert "(The first repeated letter's guess is in neither half; at random: 1/26.)" in prompt_text(body)
            assert len(prompt_text(body)) <= 300


def test_the_page_asks_about_the_model_it_shows_and_not_one_it_has_not_trained():
    """Through the page's own declaration (its run and its cached measurement, by its declared values)."""
    at = open_page(PAGE)
    assert not at.exception
    declared = questions_of("induction")
    values = {"model": "shipped", "seed": 0, "steps": 2000, "at": 250, "text": TEXT, "n_new": 5}
    body, truth = declared.ask("attend", values, {"head": 2, "query": 7})
    assert truth == [1] and body["source"] == {
        "page": "induction",
        "question": "attend",
        "head": 2,
        "query": 7,
        "model": "shipped",
        "seed": 0,
        "steps": 2000,
        "text": TEXT,
    }
    untrained = {**values, "model": "yours", "seed": 77, "steps": 250}
    for kind in ("attend", "accuracy"):
        with pytest.raises(ValueError, match="seed 77 and 250 steps is not trained yet"):
            declared.ask(kind, untrained, {})
    with pytest.raises(ValueError, match="query 9 is not one this page offers"):
        declared.ask("attend", values, {"query": 9})


def enter(room):
    teacher, student, code = room
    teacher.switch_page(PAGE).run()
    student.run()
    assert not teacher.exception and not student.exception
    assert [t.value for t in student.title] == [t.value for t in teacher.title] == ["Watch an induction head form"]
    return teacher, student


def test_asked_in_a_room_where_the_head_looks_is_hidden_until_the_reveal(room, shipped):
    teacher, student = enter(room)
    assert chart_by_key(student, "induction_own_grid")
    question = ask(teacher, "attend", head=2, query=8)
    assert question.truth == [2]  # from the second w, the induction head looks at the e after the first
    assert "from query 8 'w'" in prompt_text(question.body)
    for screen in (student, teacher):
        screen.run()
        assert not screen.exception and hidden_on(screen)
        with pytest.raises(KeyError):
            chart_by_key(screen, "induction_own_grid")
        assert "→" not in every_text(screen)  # the continuation, e r t y u, would give it away
        assert screen.metric  # section 4 answers another question: still shown
    reveal(teacher, question)
    student.run()
    assert not student.exception and not hidden_on(student)
    assert chart_by_key(student, "induction_own_grid") and "→ **e** **r**" in every_text(student)


def test_asked_in_a_room_the_accuracy_is_hidden_until_the_reveal(room, shipped):
    teacher, student = enter(room)
    question = ask(teacher, "accuracy", half=0)
    expected = evaluate(shipped.params, half=10, n_sequences=500, seed=12345).accuracy_first
    assert question.truth == pytest.approx(expected, abs=1e-12)
    assert "on the first half" in prompt_text(question.body)
    for screen in (student, teacher):
        screen.run()
        assert not screen.exception and hidden_on(screen)
        assert not screen.metric and f"{expected:.1%}" not in every_text(screen)
        assert " nats (" not in every_text(screen) and "steps (steps" not in every_text(screen)  # how far it fell
        with pytest.raises(KeyError):
            chart_by_key(screen, "induction_loss")
        with pytest.raises(KeyError):
            chart_by_key(screen, "induction_accuracy")
        assert chart_by_key(screen, "induction_own_grid")  # section 5 answers another question: still shown
    reveal(teacher, question)
    student.run()
    assert not student.exception and not hidden_on(student)
    shown = {m.label: m.value for m in student.metric}
    assert shown["accuracy, first half"] == f"{question.truth:.1%}"
    assert " nats (" in every_text(student) and chart_by_key(student, "induction_loss")
