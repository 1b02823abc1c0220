"""The generation page's questions (ui/questions/generation.py): the bytes of the induction model's KV cache after a
step, checked against a real cache filled here by the decoder and against the formula written out; and the size of a
GQA or MQA cache of section 5's shape, against the formula. In a room, the page hides the cache's sizes (or the three
caches' bars) on every screen until the reveal."""

from __future__ import annotations

import pytest

from attention.decoder import decoder_forward
from classroom.questions import option_texts, prompt_text
from figures.generation import format_bytes
from lessons.generation import generation_report
from lessons.induction import letters_to_ids, load_induction_model
from tests.apptest_helpers import chart_by_key, every_text
from tests.classroom_asking import ask, hidden_on, reveal
from ui.page_questions import PageQuestions
from ui.questions.generation import KINDS, bytes_text, cache_question, questions, shared_question, size_text

PAGE = "pages/generation.py"
DEFAULTS = dict(
    prompt="a b c d e f a b", n_new=10, temperature=0.0, top_k=0, seed=0, step=1,
    layers=32, heads=32, kv=8, d_head=128, context=4096, dtype="float16",
)  # fmt: skip
CHANGED = dict(DEFAULTS, prompt="x y z x y", n_new=6, temperature=1.0, top_k=3, seed=3)
BYTES = {"float16": 2, "float32": 4, "float64": 8}


@pytest.fixture(scope="module")
def params():
    return load_induction_model()


def page_report(params, values):
    """The generation the page runs for `values` (its `report`), from the core."""
    return generation_report(
        params,
        letters_to_ids(values["prompt"]),
        values["n_new"],
        temperature=values["temperature"],
        top_k=values["top_k"] or None,
        seed=values["seed"],
        repeats=1,
    )


@pytest.mark.parametrize("values", [DEFAULTS, CHANGED], ids=["defaults", "changed"])
def test_the_cache_answer_is_the_bytes_of_a_real_cache(params, values):
    report = page_report(params, values)
    p, config = len(letters_to_ids(values["prompt"])), params.config
    for step in range(1, values["n_new"] + 1):
        body, truth = cache_question(report, params, step)
        tokens = p + step - 1  # step 1 runs the prompt; each later step feeds the token chosen before it
        real = decoder_forward(report.ids[:tokens], params).cache.nbytes  # a cache filled here in one go
        by_formula = 2 * config.n_layers * config.n_kv_heads * tokens * config.d_head * 4  # float32
        assert [option_texts(body)[i] for i in truth] == [bytes_text(real)] and real == by_formula
        assert option_texts(body) == sorted(option_texts(body), key=lambda o: int(o.split()[0].replace(",", "")))
        assert len(set(option_texts(body))) == len(option_texts(body)) >= 3
        assert bytes_text(by_formula + by_formula // tokens) in option_texts(body)  # one token too many
        prompt = prompt_text(body)
        for named in (
            f"{config.n_layers} layers, {config.n_kv_heads} key/value heads of d_head {config.d_head}, float32",
            f"“{values['prompt']}” ({p} tokens",
            "step 1 runs the whole prompt, each later step the token chosen before it",
            f"After step {step},",
        ):
            assert named in prompt
        assert len(prompt) <= 300


def test_the_cache_prompt_says_what_each_step_adds_and_fits_at_the_longest_prompt(params):
    """How many tokens are cached after step s (p + s − 1) follows from what each step runs: the prompt at step 1,
    then the one token chosen before. The prompt says both, and fits the classroom's 300 characters with the
    longest prompt the model takes (31 letters, one new)."""
    longest = " ".join("abcdefghijklmnopqrstuvwxyzabcde")
    report = page_report(params, dict(DEFAULTS, prompt=longest, n_new=1))
    body, truth = cache_question(report, params, 1)
    prompt = prompt_text(body)
    assert len(prompt) <= 300 and f"“{longest}” (31 tokens;" in prompt
    assert "step 1 runs the whole prompt, each later step the token chosen before it" in prompt
    config = params.config
    assert option_texts(body)[truth[0]] == bytes_text(2 * config.n_layers * config.n_kv_heads * 31 * config.d_head * 4)


@pytest.mark.parametrize(
    "values",
    [DEFAULTS, dict(DEFAULTS, layers=12, heads=16, kv=4, d_head=64, context=131072, dtype="float32")],
    ids=["defaults", "changed"],
)
@pytest.mark.parametrize("kind", KINDS)
def test_the_shared_answer_is_the_formula_with_the_kv_heads(values, kind):
    body, truth = shared_question(values, kind)
    n_kv = values["kv"] if kind == "GQA" else 1
    nbytes = 2 * values["layers"] * n_kv * values["context"] * values["d_head"] * BYTES[values["dtype"]]
    assert [option_texts(body)[i] for i in truth] == [size_text(nbytes)]
    group = values["heads"] // values["kv"]  # the slip: as many kv heads as the group has query heads
    assert size_text(nbytes * group // n_kv if kind == "GQA" else nbytes * values["heads"]) in option_texts(body)
    prompt = prompt_text(body)
    for named in (
        f"{values['layers']} layers of {values['heads']} query heads of d_head {values['d_head']}",
        f"{values['context']} tokens cached in {values['dtype']}",
        f"with {values['kv']} key/value heads" if kind == "GQA" else "multi-query attention",
    ):
        assert named in prompt


def test_bad_picks_and_states_are_refused(params):
    def report_of(values):
        if values["prompt"] == "a 1":
            raise ValueError("'1' is not one of the model's tokens")
        return page_report(params, values)

    declared = PageQuestions("gen", "generation", questions(report_of, lambda: params))
    body, truth = declared.ask("cache", DEFAULTS, {})  # the default pick: the last step
    assert body["source"]["step"] == 10 and option_texts(body)[truth[0]] == "8704 bytes (8.5 KiB)"
    with pytest.raises(ValueError, match="is not one this page offers"):
        declared.ask("cache", DEFAULTS, {"step": 11})
    with pytest.raises(ValueError, match="is not one this page offers"):
        declared.ask("shared", DEFAULTS, {"sharing": 2})
    with pytest.raises(ValueError, match="not one of the model's tokens"):
        declared.ask("cache", dict(DEFAULTS, prompt="a 1"), {})
    with pytest.raises(ValueError, match="not one of the 10 generated"):
        cache_question(page_report(params, DEFAULTS), params, 11)


def test_asked_in_a_room_the_cache_sizes_are_hidden_until_the_reveal(room):
    teacher, student, code = room
    teacher.switch_page(PAGE).run()
    student.run()
    assert [t.value for t in student.title] == ["Generation and the KV cache"]
    assert "512 bytes per token" in every_text(student)
    question = ask(teacher, "cache", step=10)
    assert option_texts(question.body)[question.truth[0]] == bytes_text(2 * 2 * 2 * (8 + 9) * 16 * 4)
    for screen in (student, teacher):
        screen.run()
        assert not screen.exception and hidden_on(screen)
        with pytest.raises(KeyError):
            chart_by_key(screen, "gen_growth")
        assert not [df for df in screen.dataframe if "keys" in df.value.columns]
        assert "512 bytes per token" not in every_text(screen) and "tokens × 2 layers × K and V" not in every_text(
            screen
        )
        # the attention rows (step s's row is p + s − 1 keys long) and the last step's count of tokens (17 cached
        # after step 10) would answer it too
        with pytest.raises(KeyError):
            chart_by_key(screen, "gen_rows")
        assert "Your last step" not in every_text(screen) and "17 tokens" not in every_text(screen)
        assert "is one position longer" not in every_text(screen)
        chart_by_key(screen, "gen_kinds")  # the other question's part stays in view
        chart_by_key(screen, "gen_work")  # and so does the work per token, without the last step's count
    reveal(teacher, question)
    student.run()
    assert not student.exception and not hidden_on(student)
    chart_by_key(student, "gen_growth")
    chart_by_key(student, "gen_rows")
    assert "512 bytes per token" in every_text(student)
    assert "Your last step (step 10, 17 tokens)" in every_text(student)


def test_asked_in_a_room_the_three_caches_are_hidden_until_the_reveal(room):
    teacher, student, code = room
    teacher.switch_page(PAGE).run()
    teacher.selectbox(key="gen_kv").set_value(4).run()
    student.run()
    question = ask(teacher, "shared", sharing=0)
    assert "with 4 key/value heads" in prompt_text(question.body)
    assert format_bytes(2 * 32 * 4 * 4096 * 128 * 2) == "256.0 MiB"  # the page's text
    assert option_texts(question.body)[question.truth[0]] == size_text(2 * 32 * 4 * 4096 * 128 * 2) == "256 MiB"
    for screen in (student, teacher):
        screen.run()
        assert not screen.exception and hidden_on(screen)
        with pytest.raises(KeyError):
            chart_by_key(screen, "gen_kinds")
        assert "groups of 8" not in every_text(screen) and "(formula " not in every_text(screen)
        chart_by_key(screen, "gen_growth")  # the other question's part stays in view
        chart_by_key(screen, "gen_rows")  # and so do the attention rows and the last step's count
        assert "Your last step (step 10, 17 tokens)" in every_text(screen)
    reveal(teacher, question)
    student.run()
    assert not student.exception and not hidden_on(student)
    chart_by_key(student, "gen_kinds")
    assert "groups of 8: 256.0 MiB" in every_text(student)
