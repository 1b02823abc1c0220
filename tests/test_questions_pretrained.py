"""The pretrained page's questions (ui/questions/pretrained.py): which token a head of all-MiniLM-L6-v2 reads most
from one token, checked against a softmax of the model's own queries and keys; the cosine similarity of two
sentences' embeddings, checked against a mean-pool of the last layer; both read from what the teacher's page
showed, never a new run; the page hides each answer on every screen while the class answers it, and shows it again
after the reveal. Without the model's weights, nothing can be asked."""

from __future__ import annotations

import numpy as np
import pytest

from attention.pretrained import EXAMPLE_SENTENCES
from classroom.questions import option_texts, prompt_text
from tests.apptest_helpers import chart_by_key, every_text, plotly_figures
from tests.classroom_asking import ask, hidden_on, reveal
from ui.questions.pretrained import attend, shown_reading, similarity

PAGE = "pages/pretrained.py"
TEXT = EXAMPLE_SENTENCES[0]  # the page's default: "The animal didn't cross the street because it was too tired."
A, B = "A man is playing a guitar.", "Someone is playing an instrument."  # the page's default pair
SPECIAL = ("[CLS]", "[SEP]")


def independent_top_token(model, text: str, layer: int, head: int, query: int, hide: bool) -> str:
    """The token of the largest weight, from softmax(q kᵀ / √d_head) of a fresh run's queries and keys (layer,
    head from 1), among every token or, with `hide`, among those that are not [CLS] or [SEP]."""
    run = model.run(text)
    q, k = run.queries[layer - 1, head - 1], run.keys[layer - 1, head - 1]  # (n, d_head) each
    scores = (q[query] @ k.T).astype(np.float64) / np.sqrt(q.shape[1])  # (n,)
    weights = np.exp(scores - scores.max())
    weights /= weights.sum()
    if hide:
        weights = np.where([t in SPECIAL for t in run.tokens], -1.0, weights)
    return run.tokens[int(np.argmax(weights))]


def independent_cosine(model, a: str, b: str) -> float:
    """The embeddings as the model card defines them: the mean of the last layer's token vectors; then their cosine."""
    ea, eb = (model.run(t).hidden_states[-1].astype(np.float64).mean(axis=0) for t in (a, b))
    return float(ea @ eb / np.linalg.norm(ea) / np.linalg.norm(eb))


def option_token(option: str) -> str:
    """The token an option names ("k_9 'it'" -> "it")."""
    return option.split(" ", 1)[1][1:-1]


@pytest.mark.parametrize(
    ("text", "layer", "head", "word", "hide"),
    [
        (TEXT, 4, 2, "it", False),  # the page's default head
        (TEXT, 4, 2, "it", True),  # without [CLS] and [SEP]
        (TEXT, 6, 12, "animal", False),  # another head, another token
        ("The bank raised its interest rates.", 1, 3, "bank", True),  # another sentence
    ],
)
def test_the_true_token_is_the_heads_largest_weight(model, text, layer, head, word, hide):
    run = model.run(text)
    query = run.tokens.index(word)
    body, truth = attend(run, layer, head, hide, query)
    expected = independent_top_token(model, text, layer, head, query, hide)
    assert [option_token(option_texts(body)[i]) for i in truth] == [expected]
    assert len(option_texts(body)) == run.n_tokens - (2 if hide else 0)
    assert all(option_token(o) not in SPECIAL for o in option_texts(body)) or not hide
    assert body["kind"] == "choice" and len(prompt_text(body)) <= 300
    for named in (f"'{text}'", f"Layer {layer}, head {head}", f"token {query} '{word}'", "all-MiniLM-L6-v2"):
        assert named in prompt_text(body)
    assert ("[CLS] and [SEP] hidden" in prompt_text(body)) == hide


def test_a_head_that_parks_its_weight_on_cls_answers_otherwise_once_it_is_hidden(model):
    """Layer 4's head 1 reads [CLS] most from 'it', as most heads do; with [CLS] and [SEP] hidden the answer is a
    word: the prompt says which of the two is asked. (The page's default, head 2, reads 'animal'.)"""
    run = model.run(TEXT)
    query = run.tokens.index("it")
    (shown, (top,)), (hidden, (top_hidden,)) = attend(run, 4, 1, False, query), attend(run, 4, 1, True, query)
    assert option_token(option_texts(shown)[top]) == "[CLS]"
    assert option_token(option_texts(hidden)[top_hidden]) not in SPECIAL
    body, truth = attend(run, 4, 2, False, query)
    assert [option_token(option_texts(body)[i]) for i in truth] == ["animal"]


def test_what_cannot_be_asked_is_refused(model):
    run = model.run(TEXT)
    with pytest.raises(ValueError, match="not one of the tokens on show"):
        attend(run, 4, 2, True, 0)  # [CLS], hidden
    with pytest.raises(ValueError, match="not one of the model's"):
        attend(run, 7, 1, False, 1)
    with pytest.raises(ValueError, match="more than a question's 64 answers"):
        attend(model.run(" ".join(["word"] * 70)), 1, 1, False, 1)


def test_long_texts_are_quoted_by_their_start_within_300_characters(model):
    """The store refuses a prompt over 300 characters: a text is quoted by its start."""
    long = " ".join(["extraordinarily"] * 14)  # 223 characters, few enough tokens to ask about
    run = model.run(long)
    assert len(long) > 200 and run.n_tokens <= 64
    body, _ = attend(run, 6, 12, False, run.n_tokens - 2)
    assert len(prompt_text(body)) <= 300 and "'extraordinarily extraordinarily" in prompt_text(body)
    assert "…'" in prompt_text(body)
    body, _ = similarity(run, model.run(long.upper()))
    assert len(prompt_text(body)) <= 300 and prompt_text(body).count("…'") == 2


def test_the_similarity_is_the_cosine_of_the_two_embeddings(model):
    for a, b in ((A, B), ("The weather is lovely today.", "He drove to the stadium.")):
        body, truth = similarity(model.run(a), model.run(b))
        assert truth == pytest.approx(independent_cosine(model, a, b), abs=1e-5)
        assert body["kind"] == "number" and (body["lo"], body["hi"]) == (-1.0, 1.0)
        assert f"'{a}'" in prompt_text(body) and f"'{b}'" in prompt_text(body) and len(prompt_text(body)) <= 300
    assert similarity(model.run(A), model.run(B))[1] > 0.5 > similarity(model.run(A), model.run(TEXT))[1]


def test_the_similarity_prompt_gives_the_cosines_whole_range_and_what_an_embedding_is(model):
    """The answer runs from −1 to 1 (its lo and hi): the prompt says what both ends and 0 mean, not only 1 and 0; and
    which vector a sentence's embedding is (the model card's mean of the last layer's token vectors)."""
    long = " ".join(["extraordinarily"] * 14)
    for a, b in ((A, B), (long, long.upper())):
        body, _ = similarity(model.run(a), model.run(b))
        prompt = prompt_text(body)
        assert prompt.endswith("? 1: same direction, 0: unrelated, −1: opposite") and len(prompt) <= 300
        assert (body["lo"], body["hi"]) == (-1.0, 1.0)
        assert "all-MiniLM-L6-v2 embeddings (the mean of the last layer's token vectors)" in prompt


def test_a_text_the_page_has_not_shown_cannot_be_asked_about():
    with pytest.raises(ValueError, match="still computing"):
        shown_reading("pt", "A sentence no page has shown.")


def test_without_the_model_nothing_can_be_asked(model_not_installed):
    with pytest.raises(ValueError, match="not installed here: the page shows no model"):
        shown_reading("pt", TEXT)


def enter(room):
    teacher, student, code = room
    teacher.switch_page(PAGE).run()
    student.run()
    assert not teacher.exception and not student.exception
    assert [t.value for t in student.title] == [t.value for t in teacher.title] == ["A real pretrained model"]
    return teacher, student


def heatmaps(at) -> list[dict]:
    return [f for f in plotly_figures(at) if any(t.get("type") == "heatmap" for t in f["data"])]


def test_asked_in_a_room_the_heads_weights_are_hidden_until_the_reveal(room, model):
    teacher, student = enter(room)
    assert chart_by_key(student, "pt_overview") and heatmaps(student)
    run = model.run(TEXT)
    query = run.tokens.index("it")
    question = ask(teacher, "attend", which=0, query=query)
    expected = independent_top_token(model, TEXT, 4, 2, query, False)
    assert [option_token(option_texts(question.body)[i]) for i in question.truth] == [expected]
    assert "Layer 4, head 2" in prompt_text(question.body) and f"token {query} 'it'" in prompt_text(question.body)
    for screen in (student, teacher):
        screen.run()
        assert not screen.exception and hidden_on(screen)
        with pytest.raises(KeyError):
            chart_by_key(screen, "pt_overview")
        assert not heatmaps(screen)
        assert screen.metric  # the similarity answers another question: still shown
    reveal(teacher, question)
    student.run()
    assert not student.exception and not hidden_on(student)
    assert chart_by_key(student, "pt_overview") and heatmaps(student)


def test_asked_in_a_room_the_similarities_are_hidden_until_the_reveal(room, model):
    teacher, student = enter(room)
    question = ask(teacher, "similarity")
    assert question.truth == pytest.approx(independent_cosine(model, A, B), abs=1e-5)
    shown = f"{question.truth:.3f}"
    assert shown in every_text(student)
    for screen in (student, teacher):
        screen.run()
        assert not screen.exception and hidden_on(screen)
        assert not screen.metric and not screen.dataframe
        assert shown not in every_text(screen) and "for the paraphrases" not in every_text(screen)
        assert heatmaps(screen)  # the heads answer another question: still shown
    reveal(teacher, question)
    student.run()
    assert not student.exception and not hidden_on(student)
    assert student.metric[0].value == shown and student.dataframe
