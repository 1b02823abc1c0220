"""The multi-head page's questions (ui/questions/heads.py): which head is closest to uniform, and which key a query
attends to most in one head, checked against heads recomputed here in plain numpy from the page's weight matrices
(column chunks, scores, mask, softmax) and an entropy written here; the page hides every head's weights, on every
screen, until the reveal, and holds the students' pages to the teacher's sequence."""

from __future__ import annotations

import numpy as np
import pytest

from attention.sequence import TokenSequence
from classroom.questions import option_texts, prompt_text
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
RANDOM = {**DEFAULT, "presets": ("random", "first", "random", "self")}  # two heads whose labels state no rule
ALL_RANDOM = {**DEFAULT, "seq": SENTENCE, "seed": 1, "presets": ("random",) * 4}
# Where each preset looks, as the page's list of presets says it (lessons/head_library.py, preset_bullets)
STATED = {
    "previous": lambda i, tokens: {i - 1},
    "first": lambda i, tokens: {0},
    "self": lambda i, tokens: {i},
    "similar": lambda i, tokens: {j for j, t in enumerate(tokens[: i + 1]) if t == tokens[i]},
}


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
    assert option_texts(body) == [f"head {h + 1} · {label}" for h, label in enumerate(body_labels(values))]
    named = [" ".join(values["seq"].tokens), "d_model 16", "4 heads of d_head 4", f"seed {values['seed']}"]
    named.append("causal mask on" if values["causal"] else "no mask")
    assert all(text in prompt_text(body) for text in named) and len(prompt_text(body)) <= 300


def test_the_prompt_says_what_entropy_over_max_is_each_row_over_its_own_largest():
    """With the mask, row i may see i + 1 keys: its largest entropy is log₂(i + 1), and row 0 (one key) is left out
    of the mean (the page's summary table's 'entropy / max', checked here by share_of_max_entropy)."""
    plain, _ = closest_to_uniform(shown_by_core(DEFAULT), DEFAULT)
    assert "'entropy / max'" in prompt_text(plain) and "log₂ 4, averaged over the 4 rows" in prompt_text(plain)
    masked, _ = closest_to_uniform(shown_by_core(CHANGED), CHANGED)
    assert "row i's entropy H_i over its largest, log₂(i + 1)" in prompt_text(masked)
    assert "averaged over rows 1…5" in prompt_text(masked) and "log₂ 6" not in prompt_text(masked)
    weights = numpy_heads(CHANGED)[0]  # the definition the prompt states, written out
    seen = [row[: i + 1] for i, row in enumerate(weights)]  # the keys the mask lets row i see
    stated = np.mean([-(w * np.log2(w)).sum() / np.log2(i + 1) for i, w in enumerate(seen) if i >= 1])
    assert shown_by_core(CHANGED).summaries[0].normalised_entropy == pytest.approx(stated, abs=1e-12)
    # the longest settings still fit the classroom's 300 characters, and still say each row's own largest
    long = TokenSequence(tuple("x" * 24 for _ in range(16)), np.zeros((16, 2)), np.zeros((16, 2)), np.zeros((16, 2)))
    presets = ("uniform", "random", "uniform", "uniform", "uniform", "uniform", "random", "uniform")
    values = {**DEFAULT, "seq": long, "d_model": 64, "n_heads": 8, "seed": 9999, "causal": True, "presets": presets}
    n, w = 16, np.tril(np.ones((16, 16))) / np.arange(1, 17)[:, None]
    shown = ShownHeads(long.tokens, presets, np.stack([w] * 8), (summarise_head(w, True),) * 8)
    body, _ = closest_to_uniform(shown, values)
    assert len(prompt_text(body)) <= 300 and f"H_i / log₂(i + 1) over rows 1…{n - 1}" in prompt_text(body)
    assert "leaving out heads 1, 3, 4, 5, 6, 8 (uniform preset)" in prompt_text(body)


def body_labels(values) -> list[str]:
    names = {"previous": "previous token", "first": "first token", "self": "itself", "similar": "most similar word"}
    return [names.get(p, p) for p in values["presets"][: values["n_heads"]]]


def test_the_default_heads_most_similar_word_is_the_flattest():
    assert closest_to_uniform(shown_by_core(DEFAULT), DEFAULT)[1] == [3]


def test_a_uniform_head_is_left_out_since_its_label_says_the_answer():
    values = {**DEFAULT, "presets": ("uniform", "previous", "first", "self")}
    body, truth = closest_to_uniform(shown_by_core(values), values)
    assert option_texts(body) == ["head 2 · previous token", "head 3 · first token", "head 4 · itself"]
    assert "leaving out head 1 (uniform preset)" in prompt_text(body)
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
    [(RANDOM, 1, 2, [3]), (RANDOM, 3, 1, [0]), (CHANGED, 1, 5, [1]), (CHANGED, 1, 2, [2]), (ALL_RANDOM, 2, 3, [0])],
)
def test_the_key_a_query_attends_to_most_is_the_argmax_of_the_heads_row(values, head, query, expected):
    body, truth = head_argmax(shown_by_core(values), values, head, query)
    assert truth == largest(numpy_heads(values)[head - 1, query]) == expected
    tok = values["seq"].tokens
    assert f"query {query} '{tok[query]}'" in prompt_text(body) and f"head {head} · random" in prompt_text(body)
    assert option_texts(body)[truth[0]].startswith(f"k_{truth[0]} ")


@pytest.mark.parametrize("values", [DEFAULT, CHANGED], ids=["default", "changed"])
def test_a_head_whose_label_states_where_it_looks_is_neither_offered_nor_asked(values):
    """On the default page every (head, query) answer is what the head's preset says on the page ('previous token':
    j = i − 1...): the label would print the answer. Only the heads whose preset states no rule are offered (and,
    without the mask, the 'previous token' heads, for their query 0); the others are refused for every query."""
    shown, tokens = shown_by_core(values), values["seq"].tokens
    weights = numpy_heads(values)
    for h, preset in enumerate(values["presets"]):
        for i in range(1, len(tokens)):
            if preset in STATED:  # the page's rule is the answer: the question would give itself away
                assert set(largest(weights[h, i])) == STATED[preset](i, tokens)
            if preset != "random":
                with pytest.raises(ValueError, match=f"head {h + 1} is set to .*so its label gives the answer"):
                    head_argmax(shown, values, h + 1, i)
    _, argmax = questions(shown_by_core)
    offered = [
        h
        for h, preset in enumerate(values["presets"], 1)
        if preset == "random" or preset == "previous" and not values["causal"]
    ]
    assert list(argmax.picks[0].options(values)) == (offered or [1])  # none: head 1, which says why not
    assert list(argmax.picks[0].labels(values)) == [f"head {h} · {body_labels(values)[h - 1]}" for h in offered or [1]]


def test_a_previous_token_heads_query_0_is_asked_without_the_mask_since_its_rule_skips_that_row():
    shown = shown_by_core(DEFAULT)
    body, truth = head_argmax(shown, DEFAULT, 1, 0)  # head 1: 'previous token'
    assert truth == largest(numpy_heads(DEFAULT)[0, 0]) and "head 1 · previous token" in prompt_text(body)
    with pytest.raises(ValueError, match="so its label gives the answer"):
        head_argmax(shown, DEFAULT, 1, 1)
    with pytest.raises(ValueError, match="so its label gives the answer"):
        head_argmax(shown, DEFAULT, 2, 0)  # 'first token' says where row 0 looks too


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
    assert [list(p.options(RANDOM)) for p in argmax.picks] == [[1, 3], [0, 1, 2, 3]]
    causal = {**RANDOM, "causal": True}  # query 0 sees key 0 alone: the mask says the answer
    assert [list(p.options(causal)) for p in argmax.picks] == [[1, 3], [1, 2, 3]]
    with pytest.raises(ValueError, match="query 0 sees key 0 alone"):
        head_argmax(shown_by_core(causal), causal, 1, 0)
    assert head_argmax(shown_by_core(RANDOM), RANDOM, 1, 0)[1] == [3]  # without the mask, query 0 is asked

    def no_heads(values):
        raise ValueError("d_model = 10 cannot be split into 4 heads")

    _, argmax = questions(no_heads)  # the page shows no heads: head 1, whose build says why
    assert list(argmax.picks[0].options(DEFAULT)) == [1] and list(argmax.picks[0].labels(DEFAULT)) == ["head 1"]
    with pytest.raises(ValueError, match="cannot be split"):
        argmax.build(DEFAULT, {"head": 1, "query": 0})


def test_the_ask_box_says_why_the_default_heads_cannot_be_asked_where_they_look_and_shows_the_prompt_it_can(room):
    from ui.classroom_ask import ask_box_key

    teacher, _, _ = room
    teacher.switch_page(PAGE).run()
    teacher.session_state[ask_box_key(teacher.session_state)] = True
    teacher.run()
    teacher.radio(key="class_ask_kind").set_value("argmax").run()
    # only head 1 'previous token' is offered (its rule skips query 0), and only its query 0 can be asked
    (head_box,) = [s for s in teacher.selectbox if str(s.key).startswith("class_ask_head_")]
    assert head_box.options == ["head 1 · previous token"]
    (query_box,) = [s for s in teacher.selectbox if str(s.key).startswith("class_ask_query_")]
    query_box.set_value(1).run()
    (why,) = [w.value for w in teacher.warning if w.value.startswith("Cannot ask this now")]
    assert "set a head to 'random' to ask this" in why and teacher.button(key="class_ask").disabled
    query_box.set_value(0).run()
    assert not teacher.button(key="class_ask").disabled
    teacher.radio(key="class_ask_kind").set_value("uniform").run()
    assert not [w for w in teacher.warning if w.value.startswith("Cannot ask")]
    assert not teacher.button(key="class_ask").disabled
    (said,) = [c.value.replace("\\", "") for c in teacher.caption if c.value.startswith("The class will read")]
    assert (
        "which head's weights are closest to uniform" in said
        and "Choices: (1) head 1 · previous token; (2) head 2 · first token; " in said
    )


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
    question = ask(teacher, "argmax", head=1, query=4)  # head 1 is set to 'random': the one offered
    assert question.truth == largest(numpy_heads(CHANGED)[0, 4]) == [3]
    assert "the cat sat on the mat" in prompt_text(question.body) and "causal mask on" in prompt_text(question.body)
    student.run()
    assert not student.exception and hidden_on(student)
    assert student.session_state["seq"].tokens == SENTENCE.tokens  # held to the teacher's view, sequence included
    assert student.toggle(key="heads_causal").value is True and student.toggle(key="heads_causal").disabled
    reveal(teacher, question)
    student.run()
    grid = heatmaps_of(chart_by_key(student, "heads_grid_fig"))
    np.testing.assert_allclose(grid[0], numpy_heads(CHANGED)[0], atol=1e-12)


def test_asked_about_a_head_its_output_beside_its_values_is_hidden_until_the_reveal(room):
    """The enlarged head's output is weights · V_h, with V_h on screen: row i, V_h's row of the winning key when the
    weights are sharp, gives the answer away; the concatenation holds the same rows."""
    teacher, student, _ = room
    teacher.switch_page(PAGE).run()
    for h, preset in enumerate(RANDOM["presets"]):
        teacher.selectbox(key=f"heads_preset_{h}").set_value(preset).run()
    student.run()
    question = ask(teacher, "argmax", head=1, query=2)  # head 1, the head section 6 enlarges
    assert question.truth == largest(numpy_heads(RANDOM)[0, 2]) == [3]
    for screen in (student, teacher):
        screen.run()
        assert not screen.exception and hidden_on(screen)
        for key in ("heads_focus_output", "heads_concat_fig", "heads_grid_fig", "heads_focus_weights"):
            with pytest.raises(KeyError):
                chart_by_key(screen, key)
        chart_by_key(screen, "heads_focus_V")  # what the class reasons from stays: Q, K and V of the head
        chart_by_key(screen, "heads_focus_K")
    reveal(teacher, question)
    student.run()
    assert not student.exception and not hidden_on(student)
    v = heatmap_z(chart_by_key(student, "heads_focus_V"))
    np.testing.assert_allclose(heatmap_z(chart_by_key(student, "heads_focus_output")), numpy_heads(RANDOM)[0] @ v)
    chart_by_key(student, "heads_concat_fig")


def test_the_sequence_is_in_the_link_only_when_it_is_not_the_default():
    at = open_page(PAGE)
    assert "tokens" not in at.query_params and not at.exception
    at = open_page(PAGE, state={"seq": SENTENCE})
    assert at.query_params["tokens"] == "the cat sat on the mat"
    again = open_page(PAGE, query=dict(at.query_params.items()))  # another browser opens that link
    assert again.session_state["seq"].equals(SENTENCE) and not again.warning
