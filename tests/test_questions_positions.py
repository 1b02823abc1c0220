"""The position page's questions (ui/questions/positions.py): whether a shuffle changes the outputs once undone, with
the way of adding position the teacher picks, checked against attention written here from the definitions; and how
many positions a query hears from through stacked sliding windows, against the closed form. In a room, the page
hides the shuffled order's weights and the check table (or the reach heatmap) on every screen until the reveal."""

from __future__ import annotations

import numpy as np
import pytest

from attention.pretrained import load_minilm
from classroom.questions import option_texts, prompt_text
from lessons.positions.learned import minilm_head
from lessons.positions.shuffle import permutation
from lessons.positions.toy import attend, parse_words, toy_head, word_vectors
from tests.apptest_helpers import chart_by_key, every_text
from tests.classroom_asking import ask, hidden_on, reveal
from ui.page_questions import PageQuestions
from ui.questions.positions import CHECK_ROWS, SHUFFLE_OPTIONS, questions, reach_question, shuffle_question

PAGE = "pages/positions.py"
TEXT = "the dog chased the cat up the tall tree"
WORDS = parse_words(TEXT)[0]
DEFAULTS = dict(text=TEXT, d_model=16, seed=0, shuffle=1, heads=8, head=3, n=16, window=3, layers=3)
SAME, DIFFERENT = [0], [1]


def softmax_rows(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def angles(n: int, d: int) -> np.ndarray:
    """p θ_i with θ_i = 10000^(−2i/d): Vaswani et al.'s angles, and RoPE's. Shapes: -> (n, d/2)."""
    return np.arange(n)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)


def by_hand(x: np.ndarray, head, method: str) -> np.ndarray:
    """One head's outputs on x with position added by `method` ("none", "sinusoidal", "rope"), no mask."""
    n, d = x.shape
    if method == "sinusoidal":
        pe = np.empty((n, d))
        pe[:, 0::2], pe[:, 1::2] = np.sin(angles(n, d)), np.cos(angles(n, d))
        x = x + pe
    q, k, v = x @ head.w_q, x @ head.w_k, x @ head.w_v
    if method == "rope":
        cos, sin = np.cos(angles(n, d)), np.sin(angles(n, d))
        for m in (q, k):
            even, odd = m[:, 0::2].copy(), m[:, 1::2].copy()
            m[:, 0::2], m[:, 1::2] = even * cos - odd * sin, even * sin + odd * cos
    return softmax_rows(q @ k.T / np.sqrt(d)) @ v


def outputs_only_moved(before: np.ndarray, after: np.ndarray, perm: np.ndarray) -> bool:
    """Whether the shuffled run's outputs (after[i]: the word perm[i]'s) are the original ones, moved."""
    return bool(np.allclose(after, before[perm], rtol=0, atol=1e-9))


def toy_expected(values: dict, method: str) -> list[int]:
    words = parse_words(values["text"])[0]
    x, head = word_vectors(words, values["d_model"], values["seed"]), toy_head(values["d_model"], values["seed"])
    perm = permutation(len(words), values["shuffle"])
    if method == "alibi":  # ALiBi's bias from another core function: the shuffle check is done here
        before, after = (attend(xs, head, "alibi", alibi_heads=values["heads"]).output for xs in (x, x[perm]))
    else:
        before, after = by_hand(x, head, method), by_hand(x[perm], head, method)
    return SAME if outputs_only_moved(before, after, perm) else DIFFERENT


@pytest.fixture(scope="module")
def minilm():
    return load_minilm()


def minilm_checks_of(model):
    """The page's MiniLM checks, as the page computes them (ui/minilm.py), without Streamlit's cache."""
    from lessons.positions.shuffle import minilm_shuffle_check

    def checks(words, number, head):
        perm = permutation(len(words), number)
        return tuple(minilm_shuffle_check(model, words, perm, head - 1, positions=p) for p in (False, True))

    return checks


def minilm_expected(model, values: dict, learned: bool) -> list[int]:
    """The check on MiniLM's layer-1 head from the sentence's own token ids (every word here is one piece)."""
    words = parse_words(values["text"])[0]
    perm = permutation(len(words), values["shuffle"])
    ids = np.array(model.tokenizer.encode(" ".join(words)).ids)
    shuffled = np.array(model.tokenizer.encode(" ".join(words[i] for i in perm)).ids)
    assert len(ids) == len(words) + 2  # [CLS], one piece a word, [SEP]
    token_perm = np.concatenate([[0], perm + 1, [len(ids) - 1]])
    before, after = (minilm_head(model, t, values["head"] - 1, positions=learned).output for t in (ids, shuffled))
    return SAME if outputs_only_moved(before, after, token_perm) else DIFFERENT


CHANGED = dict(DEFAULTS, text="a cat sat on a mat today", d_model=32, seed=7, shuffle=5, heads=4, head=5)


@pytest.mark.parametrize("values", [DEFAULTS, CHANGED], ids=["defaults", "changed"])
@pytest.mark.parametrize("row", range(len(CHECK_ROWS)))
def test_the_shuffle_answer_is_the_check_done_by_hand(values, row, minilm):
    real, method = CHECK_ROWS[row]
    body, truth = shuffle_question(values, row, minilm_checks_of(minilm))
    if real:
        assert (
            truth == minilm_expected(minilm, values, method == "learned") == (DIFFERENT if method != "none" else SAME)
        )
    else:
        assert truth == toy_expected(values, method) == (SAME if method == "none" else DIFFERENT)
    assert body["kind"] == "choice" and option_texts(body) == list(SHUFFLE_OPTIONS)
    prompt = prompt_text(body)
    words = parse_words(values["text"])[0]
    shuffled = " ".join(words[i] for i in permutation(len(words), values["shuffle"]))
    assert len(prompt) <= 300 and f"reads “{' '.join(words)}” in shuffle {values['shuffle']}'s order, “{shuffled}”" in (
        prompt
    )
    assert "no mask" in prompt
    if real:
        assert f"layer 1 head {values['head']}" in prompt
    else:
        assert f"d_model {values['d_model']}, seed {values['seed']}" in prompt
    assert {"none": "no position", "sinusoidal": "sinusoidal", "rope": "RoPE", "alibi": "ALiBi", "learned": "learned"}[
        method
    ] in prompt
    if method == "alibi":
        assert f"ALiBi head 1 of {values['heads']}" in prompt


def test_the_shuffle_question_cannot_be_asked_without_a_shuffle_to_undo(minilm):
    checks = minilm_checks_of(minilm)
    with pytest.raises(ValueError, match="original order"):
        shuffle_question(dict(DEFAULTS, shuffle=0), 1, checks)
    with pytest.raises(ValueError, match="cannot be used"):
        shuffle_question(dict(DEFAULTS, text="alone"), 1, checks)
    words = ("same", "same", "other")
    traded = next(s for s in range(1, 100) if [words[i] for i in permutation(3, s)] == list(words))
    with pytest.raises(ValueError, match="only traded equal words"):
        shuffle_question(dict(DEFAULTS, text=" ".join(words), shuffle=traded), 0, checks)

    def not_installed(*_):
        raise ValueError("MiniLM is not installed here")

    declared = PageQuestions("pos", "positions", questions(not_installed))
    assert declared.ask("shuffle", DEFAULTS, {"row": 2})[1] == DIFFERENT  # the toy head needs no model
    with pytest.raises(ValueError, match="not installed"):
        declared.ask("shuffle", DEFAULTS, {"row": CHECK_ROWS.index((True, "learned"))})
    with pytest.raises(ValueError, match="is not one this page offers"):
        declared.ask("shuffle", DEFAULTS, {"row": len(CHECK_ROWS)})


def test_the_shuffle_question_offers_only_the_ways_of_adding_position(minilm):
    """Section 1's own text says what a shuffle does without position information (each output unchanged, only
    listed in a new order): the Ask box offers the rows with a way of adding position, and nothing else."""
    (shuffled, _) = questions(minilm_checks_of(minilm))
    (row,) = shuffled.picks
    offered = list(row.options(DEFAULTS))
    labels = list(row.labels(DEFAULTS))
    assert offered == list(range(len(CHECK_ROWS))) and len(labels) == len(offered)
    assert [method for _, method in CHECK_ROWS] == ["sinusoidal", "rope", "alibi", "learned"]
    assert not [label for label in labels if "no position" in label]
    for i in offered:
        prompt = prompt_text(shuffle_question(DEFAULTS, i, minilm_checks_of(minilm))[0])
        assert "no position information" not in prompt


def test_the_shuffle_prompt_quotes_both_orders_within_300_characters():
    """With the longest head description (ALiBi, the widest d_model, seed and shuffle numbers), the page's default
    words are quoted whole in both orders; longer words are cut, each order to its half of the room."""
    values = dict(DEFAULTS, d_model=64, seed=9999, shuffle=9999, heads=16)
    alibi = CHECK_ROWS.index((False, "alibi"))
    body, _ = shuffle_question(values, alibi, None)
    shuffled = " ".join(WORDS[i] for i in permutation(len(WORDS), 9999))
    assert f"reads “{TEXT}” in shuffle 9999's order, “{shuffled}” (no mask)" in prompt_text(body)
    assert len(prompt_text(body)) <= 300
    long = dict(values, text=" ".join(f"word{i:02d}longer" for i in range(16)))
    body, _ = shuffle_question(long, alibi, None)
    assert len(prompt_text(body)) <= 300 and prompt_text(body).count("…”") == 2
    assert "reads “word00longer word01longer" in prompt_text(body)


def test_the_shuffle_options_answer_the_prompts_question(minilm):
    """The prompt asks whether, once the shuffle is undone, the outputs are the same: the first option says so,
    without the "only listed in the new order" that contradicted it; the prompt quotes the original order, which
    the outputs are compared with, and the shuffled one the head reads."""
    body, _ = shuffle_question(DEFAULTS, 0, minilm_checks_of(minilm))
    assert option_texts(body) == [
        "The same outputs (each word's output unchanged, within rounding)",
        "Different outputs: the head saw where each word stands",
    ]
    assert not [option for option in option_texts(body) if "listed" in option or "order" in option]
    shuffled = " ".join(WORDS[i] for i in permutation(len(WORDS), 1))
    assert f"reads “{TEXT}” in shuffle 1's order, “{shuffled}” (no mask)." in prompt_text(body)
    assert "reads shuffle 1 of the words" not in prompt_text(body)
    assert "Once the shuffle is undone, are its outputs the same as on the original order?" in prompt_text(body)


@pytest.mark.parametrize(
    ("n", "window", "layers", "query"),
    [(16, 3, 3, 15), (16, 3, 3, 4), (16, 5, 2, 15), (8, 8, 3, 7), (32, 1, 8, 31), (10, 4, 8, 9), (2, 2, 1, 0)],
)
def test_the_reach_answer_is_the_closed_form(n, window, layers, query):
    body, truth = reach_question(n, window, layers, query)
    heard = min(query + 1, layers * (window - 1) + 1)  # L(w − 1) + 1 positions back, itself included, from 0 on
    assert option_texts(body)[truth[0]] == str(heard) and option_texts(body) == [str(c) for c in range(1, n + 1)]
    for named in (f"w = {window} keys", f"{layers} layer", f"n = {n} positions", f"query {query} heard"):
        assert named in prompt_text(body)
    assert len(prompt_text(body)) <= 300


def test_the_reach_prompt_says_where_the_positions_are_counted_from():
    """Query i has heard from min(i + 1, L(w − 1) + 1) positions: with positions counted from 1 the count for an
    early query would be one less, so the prompt says they are numbered from 0 (as the page's heatmap is)."""
    body, truth = reach_question(16, 3, 3, 4)
    assert "n = 16 positions (numbered from 0)" in prompt_text(body) and option_texts(body)[truth[0]] == "5"


def test_the_reach_question_offers_the_queries_last_first_and_refuses_others():
    declared = PageQuestions("pos", "positions", questions(lambda *_: None))
    body, truth = declared.ask("reach", DEFAULTS, {})  # the default pick: the last query
    assert body["source"]["query"] == 15 and option_texts(body)[truth[0]] == "7"  # 3·(3 − 1) + 1
    with pytest.raises(ValueError, match="is not one this page offers"):
        declared.ask("reach", DEFAULTS, {"query": 16})
    with pytest.raises(ValueError, match="outside"):
        reach_question(4, 2, 1, 4)


def shuffle_shown(screen) -> bool:
    """Whether the page shows what the shuffle does: the shuffled order's heatmaps, the verdicts and the table."""
    keys = [c.proto.id for c in screen.get("plotly_chart")]
    after = [k for k in keys if k.endswith(("-pos_shuffle_none_after", "-pos_shuffle_with_after"))]
    verdicts = [m for m in screen.markdown if "-badge[" in m.value]
    table = [df for df in screen.dataframe if "check" in df.value.columns]
    assert len(after) == len(verdicts) == 2 * len(table) or not (after or verdicts or table), (after, verdicts, table)
    return bool(after)


def test_asked_in_a_room_the_shuffle_outcome_is_hidden_until_the_reveal(room, minilm):
    teacher, student, code = room
    teacher.switch_page(PAGE).run()
    student.run()
    assert [t.value for t in student.title] == ["Where is position?"]
    assert shuffle_shown(student) and shuffle_shown(teacher)
    question = ask(teacher, "shuffle", row=CHECK_ROWS.index((False, "sinusoidal")))
    assert question.truth == toy_expected(DEFAULTS, "sinusoidal") == DIFFERENT
    assert "seed 0" in prompt_text(question.body) and "sinusoidal" in prompt_text(question.body)
    for screen in (student, teacher):
        screen.run()
        assert not screen.exception and hidden_on(screen)
        assert not shuffle_shown(screen) and "order was seen" not in every_text(screen)
        chart_by_key(screen, "pos_shuffle_none_before")  # the original order stays in view
        chart_by_key(screen, "pos_window_reach")  # and so does the other question's part
    reveal(teacher, question)
    student.run()
    assert not student.exception and not hidden_on(student) and shuffle_shown(student)


def test_asked_in_a_room_the_learned_check_reads_the_real_model(room, minilm):
    teacher, student, code = room
    teacher.switch_page(PAGE).run()
    question = ask(teacher, "shuffle", row=CHECK_ROWS.index((True, "learned")))  # MiniLM's head 3 with its table
    assert question.truth == minilm_expected(minilm, DEFAULTS, learned=True) == DIFFERENT
    assert "MiniLM's layer 1 head 3 with learned absolute" in prompt_text(question.body)


PREVIOUS_TOKEN_LINE = "mean weight on the previous token"


def test_asked_in_a_room_the_learned_heads_previous_token_weight_is_hidden_until_the_reveal(room, minilm):
    """Section 2's line "mean weight on the previous token 1.00 with E_pos, 0.16 without" says whether MiniLM's head
    sees where each word stands: hidden while the shuffle question is open, in view while the reach one is."""
    teacher, student, code = room
    teacher.switch_page(PAGE).run()
    student.run()
    assert every_text(student).count(PREVIOUS_TOKEN_LINE) == 2  # with E_pos, and without
    question = ask(teacher, "shuffle", row=CHECK_ROWS.index((True, "learned")))
    for screen in (student, teacher):
        screen.run()
        assert not screen.exception and hidden_on(screen)
        assert PREVIOUS_TOKEN_LINE not in every_text(screen)
        chart_by_key(screen, "pos_learned_with")  # the head's weights on the original order stay in view
    reveal(teacher, question)
    student.run()
    assert not student.exception and every_text(student).count(PREVIOUS_TOKEN_LINE) == 2
    question = ask(teacher, "reach", query=15)
    student.run()
    assert not student.exception and hidden_on(student)
    assert every_text(student).count(PREVIOUS_TOKEN_LINE) == 2  # another question: nothing of it to hide


def test_asked_in_a_room_the_reach_is_hidden_until_the_reveal(room):
    teacher, student, code = room
    teacher.switch_page(PAGE).run()
    teacher.slider(key="pos_window").set_value(4).run()
    teacher.slider(key="pos_layers").set_value(2).run()
    student.run()
    assert "The last query has heard from 7 positions" in every_text(student)
    question = ask(teacher, "reach", query=15)
    assert option_texts(question.body)[question.truth[0]] == "7"  # 2·(4 − 1) + 1
    assert "w = 4 keys" in prompt_text(question.body) and "2 layers" in prompt_text(question.body)
    for screen in (student, teacher):
        screen.run()
        assert not screen.exception and hidden_on(screen)
        assert "heard from 7" not in every_text(screen)
        with pytest.raises(KeyError):
            chart_by_key(screen, "pos_window_reach")
        assert shuffle_shown(screen)  # the other question's part stays in view
    reveal(teacher, question)
    student.run()
    assert not student.exception and not hidden_on(student)
    assert "The last query has heard from 7 positions" in every_text(student)
    chart_by_key(student, "pos_window_reach")
