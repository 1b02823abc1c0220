"""The multi-head page's questions (ui/questions/heads.py): which head is closest to uniform, and which key a query
attends to most in one head, checked against heads recomputed here in plain numpy from the page's weight matrices
(column chunks, scores, mask, softmax) and an entropy written here; the page hides every head's weights, on every
screen, until the reveal, and holds the students' pages to the teacher's sequence."""

from __future__ import annotations

import numpy as np
import pytest

from attention.sequence import TokenSequence
from lessons.head_library import embed_tokens, head_library_weights, summarise_head
from tests.apptest_helpers import chart_by_key, heatmap_z, open_page, type_number
from tests.apptest_helpers import table_with_column as frame
from tests.classroom_asking import ask, hidden_on, reveal
from ui.questions.heads import ShownHeads, closest_to_uniform, head_argmax, questions
from ui.sequence import default_sequence

PAGE = "pages/heads.py"
DEFAULT = {
    "seq": default_sequence(),
    "d_model": 16,
    "n_heads": 4,
    "seed": 0,
    "causal": False,
    "scale": True,
    "presets": ("previous", "first", "self", "similar"),
}
SENTENCE = TokenSequence(
    ("the", "cat", "sat", "on", "the", "mat"), np.zeros((6, 2)), np.zeros((6, 2)), np.zeros((6, 2))
)
CHANGED = {**DEFAULT, "seq": SENTENCE, "seed": 3, "causal": True, "presets": ("random", "similar", "previous", "first")}


def numpy_heads(values) -> np.ndarray:
    """Every head's weights from the page's W_Q, W_K and b_Q, by the definition: head h reads its own d_head
    columns, scores q·k/√d_head, −∞ above the diagonal with the mask, softmax per row. Shapes: (n_heads, n, n)."""
    tokens, d_model, n_heads = values["seq"].tokens, values["d_model"], values["n_heads"]
    emb = embed_tokens(tokens, d_model, values["seed"])
    hw = head_library_weights(emb, values["presets"][:n_heads], values["seed"])
    q, k = emb.x @ hw.w_q + hw.b_q, emb.x @ hw.w_k  # (n, d_model)
    d_head, n = d_model // n_heads, len(tokens)
    out = []
    for h in range(n_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        scores = q[:, cols] @ k[:, cols].T / (np.sqrt(d_head) if values["scale"] else 1.0)  # (n, n)
        if values["causal"]:
            scores = np.where(np.tril(np.ones((n, n), dtype=bool)), scores, -np.inf)
        w = np.exp(scores - scores.max(axis=1, keepdims=True))
        out.append(w / w.sum(axis=1, keepdims=True))
    return np.array(out)


def share_of_max_entropy(w: np.ndarray, causal: bool) -> float:
    """Mean over the rows that see two keys or more of H(row) / log2(keys the row sees)."""
    n = w.shape[0]
    ratios = []
    for i, row in enumerate(w):
        seen = i + 1 if causal else n
        if seen > 1:
            p = row[row > 0]
            ratios.append(-(p * np.log2(p)).sum() / np.log2(seen))
    return float(np.mean(ratios))


def largest(row: np.ndarray) -> list[int]:
    """Every key with the row's largest weight (a repeated word's copies tie)."""
    return [int(j) for j in np.flatnonzero(row >= row.max() - 1e-9)]


def heatmaps_of(fig: dict) -> list[np.ndarray]:
    """The z matrix of every heatmap trace of a figure JSON (one per head)."""
    return [heatmap_z({"data": [t]}) for t in fig["data"] if t.get("type") == "heatmap"]


def shown_by_core(values) -> ShownHeads:
    """What the page shows, for the build functions called without the page."""
    weights = numpy_heads(values)
    tokens = tuple(values["seq"].tokens)
    summaries = tuple(summarise_head(w, values["causal"], tokens) for w in weights)
    return ShownHeads(tokens, tuple(values["presets"][: values["n_heads"]]), weights, summaries)


@pytest.mark.parametrize("values", [DEFAULT, CHANGED])
def test_the_head_closest_to_uniform_has_the_largest_share_of_the_maximum_entropy(values):
    body, truth = closest_to_uniform(shown_by_core(values), values)
    shares = [share_of_max_entropy(w, values["causal"]) for w in numpy_heads(values)]
    assert truth == [int(np.argmax(shares))]
    assert sorted(shares)[-1] - sorted(shares)[-2] > 0.02  # a clear winner: the question has one answer
    assert body["options"] == [f"head {h + 1} · {label}" for h, label in enumerate(body_labels(values))]
    named = [" ".join(values["seq"].tokens), "d_model 16", "4 heads of d_head 4", f"seed {values['seed']}"]
    named.append("causal mask on" if values["causal"] else "no mask")
    assert all(text in body["prompt"] for text in named) and len(body["prompt"]) <= 300


def body_labels(values) -> list[str]:
    names = {"previous": "previous token", "first": "first token", "self": "itself", "similar": "most similar word"}
    return [names.get(p, p) for p in values["presets"][: values["n_heads"]]]


def test_the_default_heads_most_similar_word_is_the_flattest():
    assert closest_to_uniform(shown_by_core(DEFAULT), DEFAULT)[1] == [3]


def test_a_uniform_head_is_left_out_since_its_label_says_the_answer():
    values = {**DEFAULT, "presets": ("uniform", "previous", "first", "self")}
    body, truth = closest_to_uniform(shown_by_core(values), values)
    assert body["options"] == ["head 2 · previous token", "head 3 · first token", "head 4 · itself"]
    assert "leaving out head 1 (uniform preset)" in body["prompt"]
    shares = [share_of_max_entropy(w, False) for w in numpy_heads(values)[1:]]
    assert truth == [int(np.argmax(shares))]
    two_uniform = {**DEFAULT, "n_heads": 2, "d_model": 16, "presets": ("uniform", "self")}
    with pytest.raises(ValueError, match="two heads or more"):
        closest_to_uniform(shown_by_core(two_uniform), two_uniform)
    one = {**DEFAULT, "seq": TokenSequence(("a",), np.ones((1, 2)), np.ones((1, 2)), np.ones((1, 2)))}
    with pytest.raises(ValueError, match="one token"):
        closest_to_uniform(shown_by_core(one), one)


@pytest.mark.parametrize(
    ("values", "head", "query", "expected"),
    [(DEFAULT, 1, 2, [1]), (DEFAULT, 2, 3, [0]), (DEFAULT, 3, 2, [2]), (CHANGED, 2, 4, [0, 4]), (CHANGED, 1, 5, None)],
)
def test_the_key_a_query_attends_to_most_is_the_argmax_of_the_heads_row(values, head, query, expected):
    body, truth = head_argmax(shown_by_core(values), values, head, query)
    assert truth == largest(numpy_heads(values)[head - 1, query])
    if expected is not None:  # the preset's pattern: the previous token, the first token, itself, both 'the'
        assert truth == expected
    tok = values["seq"].tokens
    assert f"query {query} '{tok[query]}'" in body["prompt"] and f"head {head} · " in body["prompt"]
    assert body["options"][truth[0]].startswith(f"k_{truth[0]} ")


def test_bad_heads_and_queries_are_refused():
    shown = shown_by_core(DEFAULT)
    with pytest.raises(ValueError, match="not one of the page's heads"):
        head_argmax(shown, DEFAULT, 5, 0)
    with pytest.raises(ValueError, match="outside 0..3"):
        head_argmax(shown, DEFAULT, 1, 4)
    uniform = {**DEFAULT, "presets": ("uniform", "previous", "first", "self")}
    with pytest.raises(ValueError, match="every key it may see ties"):
        head_argmax(shown_by_core(uniform), uniform, 1, 0)
    _, argmax = questions(shown_by_core)
    assert [list(p.options(DEFAULT)) for p in argmax.picks] == [[1, 2, 3, 4], [0, 1, 2, 3]]


def test_asked_in_a_room_every_heads_weights_are_hidden_until_the_reveal(room):
    teacher, student, _ = room
    teacher.switch_page(PAGE).run()
    student.run()
    assert [t.value for t in student.title] == ["Multi-head attention"]
    question = ask(teacher, "uniform")
    assert question.truth == [3]
    for screen in (student, teacher):
        screen.run()
        assert not screen.exception and hidden_on(screen)
        for key in ("heads_grid_fig", "heads_focus_weights", "heads_focus_scores"):
            with pytest.raises(KeyError):
                chart_by_key(screen, key)
        with pytest.raises(StopIteration):
            frame(screen, "entropy / max")
        assert "% of max" not in " ".join(c.value for c in screen.caption)
        chart_by_key(screen, "heads_x_fig")  # the rest of the lesson stays
    reveal(teacher, question)
    student.run()
    assert not student.exception and not hidden_on(student)
    grid = heatmaps_of(chart_by_key(student, "heads_grid_fig"))
    np.testing.assert_allclose(np.array(grid), numpy_heads(DEFAULT), atol=1e-12)
    assert frame(student, "entropy / max")["entropy / max"].idxmax() == 3


def test_asked_in_a_room_on_a_changed_page_the_students_take_the_teachers_sequence(room):
    teacher, student, _ = room
    teacher.session_state["seq"] = SENTENCE  # the teacher edited the Playground
    teacher.switch_page(PAGE).run()
    teacher.toggle(key="heads_causal").set_value(True).run()
    type_number(teacher, "heads_seed", "3")
    for h, preset in enumerate(CHANGED["presets"]):
        teacher.selectbox(key=f"heads_preset_{h}").set_value(preset).run()
    student.run()
    assert student.session_state["seq"].equals(SENTENCE)  # the teacher's link carries the edited sequence
    student.session_state["seq"] = default_sequence()  # then the student edits their own
    question = ask(teacher, "argmax", head=2, query=4)
    assert question.truth == largest(numpy_heads(CHANGED)[1, 4]) == [0, 4]  # the two 'the' tie
    assert "the cat sat on the mat" in question.body["prompt"] and "causal mask on" in question.body["prompt"]
    student.run()
    assert not student.exception and hidden_on(student)
    assert student.session_state["seq"].tokens == SENTENCE.tokens  # held to the teacher's view, sequence included
    assert student.toggle(key="heads_causal").value is True and student.toggle(key="heads_causal").disabled
    reveal(teacher, question)
    student.run()
    grid = heatmaps_of(chart_by_key(student, "heads_grid_fig"))
    np.testing.assert_allclose(grid[1], numpy_heads(CHANGED)[1], atol=1e-12)


def test_the_sequence_is_in_the_link_only_when_it_is_not_the_default():
    at = open_page(PAGE)
    assert "tokens" not in at.query_params and not at.exception
    at = open_page(PAGE, state={"seq": SENTENCE})
    assert at.query_params["tokens"] == "the cat sat on the mat"
    again = open_page(PAGE, query=dict(at.query_params.items()))  # another browser opens that link
    assert again.session_state["seq"].equals(SENTENCE) and not again.warning
