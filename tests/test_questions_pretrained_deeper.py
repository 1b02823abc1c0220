"""The Read deeper page's questions (ui/questions/pretrained_deeper.py): the share of the output that [CLS] and [SEP]
feed by rollout, checked against this test's own rollout; which token a shared token of sentence A or B reads most,
checked against a softmax of the model's own queries and keys; both read from what the teacher's page showed; the
page hides each answer on every screen while the class answers it (the pair question's also in sections 2 and 3
when they show the same sentence), and shows it again after the reveal."""

from __future__ import annotations

import numpy as np
import pytest

from attention.pretrained import EXAMPLE_SENTENCES
from classroom.questions import option_texts, prompt_text
from lessons.reading import LONG_EXAMPLE, SENTENCE_PAIRS
from tests.apptest_helpers import chart_by_key, every_text, open_page
from tests.classroom_asking import ask, hidden_on, reveal
from ui.page_questions import questions_of
from ui.questions.pretrained_deeper import pair_read, rollout_share

PAGE = "pages/pretrained_deeper.py"
TEXT = EXAMPLE_SENTENCES[0]  # the page's default text, which is also its default sentence A
A, B = SENTENCE_PAIRS["The animal ... it was too tired / too wide"]
SPECIAL = ("[CLS]", "[SEP]")


def independent_special_share(model, text: str, pool: str) -> float:
    """Rollout from its definition (Abnar & Zuidema 2020): per layer the heads' mean plus the identity, halved and
    renormalised, multiplied from the first layer up; the output's row (the rows' mean, or row 0); its share on
    [CLS] and [SEP]."""
    run = model.run(text)
    n = run.n_tokens
    rollout = np.eye(n)
    for layer in run.attentions.astype(np.float64):  # (heads, n, n), from the bottom
        mixed = 0.5 * layer.mean(axis=0) + 0.5 * np.eye(n)
        rollout = (mixed / mixed.sum(axis=1, keepdims=True)) @ rollout
    feed = rollout.mean(axis=0) if pool == "mean" else rollout[0]
    return float(sum(feed[i] for i, tok in enumerate(run.tokens) if tok in SPECIAL))


def independent_top_token(model, text: str, layer: int, head: int, mean: bool, word: str) -> str:
    """The token `word` reads most by softmax(q kᵀ / √d_head) of a fresh run (layer, head from 1), one head's or the
    layer's heads averaged."""
    run = model.run(text)
    query = run.tokens.index(word)
    q, k = run.queries[layer - 1, :, query].astype(np.float64), run.keys[layer - 1].astype(np.float64)
    scores = np.einsum("hd,hnd->hn", q, k) / np.sqrt(q.shape[-1])  # (heads, n)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    row = weights.mean(axis=0) if mean else weights[head - 1]
    return run.tokens[int(np.argmax(row))]


def option_token(option: str) -> str:
    return option.split(" ", 1)[1][1:-1]


@pytest.mark.parametrize(
    ("text", "pool"),
    [(TEXT, "mean"), (TEXT, "cls"), ("The weather is lovely today.", "mean"), (B, "cls")],
)
def test_the_true_share_is_what_rollout_gives_cls_and_sep(model, text, pool):
    body, truth = rollout_share(model.run(text), pool)
    assert truth == pytest.approx(independent_special_share(model, text, pool), abs=1e-6)
    assert 2 / model.run(text).n_tokens < 0.3 < truth < 1  # far more than an even spread: the page's point
    assert body["kind"] == "number" and (body["lo"], body["hi"]) == (0.0, 1.0)
    named = ("the embedding" if pool == "mean" else "[CLS] at the top", f"'{text}'", "all 6 layers", "all-MiniLM")
    for name in named:
        assert name in prompt_text(body)
    assert len(prompt_text(body)) <= 300
    with pytest.raises(ValueError, match="pool must be one of"):
        rollout_share(model.run(text), "max")


@pytest.mark.parametrize(
    ("text", "spread"), [(TEXT, "0.125"), (LONG_EXAMPLE, "0.00794"), ("Hi.", "0.5")], ids=["16", "252", "4"]
)
def test_the_rollout_prompt_prints_its_numbers_to_three_figures_and_names_the_rollouts_choices(model, text, spread):
    """An even spread gives [CLS] and [SEP] 2/n together: 2/16 is 0.125, not 0.12; and the share depends on how
    rollout mixes each layer (its heads' mean, half and half with the identity, as section 4's formula): named."""
    run = model.run(text)
    body, _ = rollout_share(run, "mean")
    assert f"{2 / run.n_tokens:.3g}" == spread and f"(Even spread: {spread})" in prompt_text(body)
    assert f"({run.n_tokens} tokens)" in prompt_text(body) and len(prompt_text(body)) <= 300
    assert "all 6 layers (per layer: ½ heads' mean + ½ identity)" in prompt_text(body)


def test_a_long_text_is_quoted_by_its_start_within_300_characters(model):
    body, _ = rollout_share(model.run(LONG_EXAMPLE), "mean")  # 252 tokens
    assert len(prompt_text(body)) <= 300 and "(252 tokens)" in prompt_text(body) and "…'" in prompt_text(body)


@pytest.mark.parametrize(
    ("sentence", "layer", "head", "mean", "expected"),
    [
        (0, 4, 2, False, "animal"),  # the page's default head, on 'tired': 'it' reads the animal
        (1, 4, 2, False, None),  # on 'wide'
        (0, 1, 1, True, None),  # layer 1's heads averaged
        (1, 6, 12, False, None),
    ],
)
def test_the_true_token_is_what_the_weights_on_show_read_most(model, sentence, layer, head, mean, expected):
    run_a, run_b = model.run(A), model.run(B)
    shared = run_a.tokens.index("it")  # the sentences differ in their last word only: 'it' is shared at its place
    body, truth = pair_read(run_a, run_b, layer, head, mean, sentence, shared)
    text = (A, B)[sentence]
    top = independent_top_token(model, text, layer, head, mean, "it")
    assert [option_token(option_texts(body)[i]) for i in truth] == [top]
    assert expected is None or top == expected
    assert len(option_texts(body)) == (run_a, run_b)[sentence].n_tokens
    name = f"layer {layer}, its 12 heads averaged" if mean else f"layer {layer}, head {head}"
    for named in (name, f"sentence {'AB'[sentence]}: '{text}'", f"token {shared} 'it'"):
        assert named in prompt_text(body)
    assert len(prompt_text(body)) <= 300


def test_pairs_that_cannot_be_asked_about_are_refused(model):
    run_a, run_b = model.run(A), model.run(B)
    with pytest.raises(ValueError, match="share 15 tokens: there is no shared token 15"):
        pair_read(run_a, run_b, 4, 2, False, 0, 15)
    long = model.run(" ".join(["word"] * 70))
    with pytest.raises(ValueError, match="more than a question's 64 answers"):
        pair_read(long, run_b, 4, 2, False, 0, 0)
    with pytest.raises(ValueError, match="not in this model's"):
        pair_read(run_a, run_b, 7, 2, False, 0, 0)


def test_the_page_asks_only_about_what_it_has_shown():
    """Through the page's own declaration: outside a teacher's session nothing was kept, so nothing can be asked."""
    at = open_page(PAGE)
    assert not at.exception
    values = {"text": TEXT, "a": A, "b": B, "layer": 4, "head": 2, "mean": False, "pool": "mean"}
    with pytest.raises(ValueError, match="still computing"):
        questions_of("ptd").ask("rollout", values, {})


def test_without_the_model_nothing_can_be_asked(model_not_installed):
    at = open_page(PAGE)
    assert not at.exception and "not installed" in " ".join(e.value for e in at.error)
    values = {"text": TEXT, "a": A, "b": B, "layer": 4, "head": 2, "mean": False, "pool": "mean"}
    for kind in ("rollout", "pair"):
        with pytest.raises(ValueError, match="not installed here: the page shows no model"):
            questions_of("ptd").ask(kind, values, {})


def enter(room):
    teacher, student, code = room
    teacher.switch_page(PAGE).run()
    student.run()
    assert not teacher.exception and not student.exception
    assert [t.value for t in student.title] == [t.value for t in teacher.title] == ["The real model, read deeper"]
    return teacher, student


def shows(at, key: str) -> bool:
    try:
        chart_by_key(at, key)
    except KeyError:
        return False
    return True


def test_asked_in_a_room_the_rollout_is_hidden_until_the_reveal(room, model):
    teacher, student = enter(room)
    assert shows(student, "ptd_rollout") and shows(student, "ptd_feed")
    question = ask(teacher, "rollout")
    assert question.truth == pytest.approx(independent_special_share(model, TEXT, "mean"), abs=1e-6)
    said = f"[CLS] and [SEP] together: {question.truth:.0%}"
    for screen in (student, teacher):
        screen.run()
        assert not screen.exception and hidden_on(screen)
        assert not shows(screen, "ptd_rollout") and not shows(screen, "ptd_feed")
        assert said not in every_text(screen) and "Largest shares" not in every_text(screen)
        assert shows(screen, "ptd_rows_heatmap") and shows(screen, "ptd_pair_a")  # other answers: still shown
    reveal(teacher, question)
    student.run()
    assert not student.exception and not hidden_on(student)
    assert shows(student, "ptd_rollout") and said in every_text(student)


@pytest.mark.parametrize("sentence", [0, 1])
def test_asked_in_a_room_the_pairs_weights_are_hidden_until_the_reveal(room, model, sentence):
    """Sentence A is also the page's text: sections 2 and 3 show its weights, and hide them while either sentence is
    asked (B differs from A by one word: A's reading is nearly B's answer)."""
    teacher, student = enter(room)
    shared = model.run(A).tokens.index("it")
    question = ask(teacher, "pair", sentence=sentence, shared=shared)
    top = independent_top_token(model, (A, B)[sentence], 4, 2, False, "it")
    assert [option_token(option_texts(question.body)[i]) for i in question.truth] == [top]
    assert f"sentence {'AB'[sentence]}" in prompt_text(question.body)
    for screen in (student, teacher):
        screen.run()
        assert not screen.exception and hidden_on(screen)
        assert not any(shows(screen, f"ptd_pair_{x}") for x in ("a", "b", "diff"))
        assert "Largest differences" not in every_text(screen)
        assert not shows(screen, "ptd_rows_heatmap") and not shows(screen, "ptd_points")
        assert shows(screen, "ptd_rollout")  # another question's answer: still shown
    reveal(teacher, question)
    student.run()
    assert not student.exception and not hidden_on(student)
    assert all(shows(student, key) for key in ("ptd_pair_a", "ptd_pair_b", "ptd_rows_heatmap", "ptd_points"))
