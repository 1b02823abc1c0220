"""The "Generation and the KV cache" page under AppTest: tokens, attention rows, the cache, the check, MHA/GQA/MQA."""

import re

import numpy as np
import pytest

from attention.decoder import decoder_forward, generate, next_token_probabilities
from lessons.generation import cache_kinds
from lessons.induction import ids_to_letters, letters_to_ids, load_induction_model
from tests.apptest_helpers import chart_by_key, number_box, open_page, plotly_values, type_number
from ui.generation_kinds import formula_check

PAGE = "pages/generation.py"
CHARTS = ("gen_rows", "gen_probs", "gen_growth", "gen_work", "gen_timing", "gen_kinds")


def texts(elements) -> str:
    return " | ".join(str(e.value) for e in elements)


@pytest.fixture(scope="module")
def params():
    return load_induction_model()


def test_the_default_page_generates_checks_the_cache_and_compares_caches(params):
    at = open_page(PAGE)
    assert not at.exception and not at.error and not at.warning
    for key in CHARTS:
        assert chart_by_key(at, key)["data"], key
    ids = generate(params, letters_to_ids("abcdefab"), 10)
    assert ids_to_letters(ids)[8:] == list("cdefabcdef")
    assert "a b c d e f a b → **c d e f a b c d e f**" in texts(at.markdown)
    metrics = {m.label: m.value for m in at.metric}
    assert float(metrics["largest difference, float64"]) < 1e-12
    assert metrics["same tokens without the cache"] == "yes"
    assert "below 1e-12" in texts(at.success)
    # the attention rows: step s is the query of the token at position prompt + s - 1 over positions so far
    rows = chart_by_key(at, "gen_rows")
    full = decoder_forward(ids[:-1], params).attentions  # (layers, heads, 17, 17)
    z = plotly_values(rows["data"][2]["z"])  # layer 2, head 1: (steps, positions)
    for s in range(10):
        np.testing.assert_allclose(z[s, : 8 + s], full[1, 0, 7 + s, : 8 + s], atol=1e-6)
        assert np.all(np.isnan(z[s, 8 + s :]))
    # the cache after each step: 2 layers x K, V x 2 heads x tokens x 16 x 4 bytes
    growth = chart_by_key(at, "gen_growth")
    np.testing.assert_array_equal(plotly_values(growth["data"][0]["y"]), [2 * 2 * 2 * t * 16 * 4 for t in range(8, 18)])
    # MHA / GQA / MQA of a 32-layer, 32-head, d_head 128 model at 4096 tokens in float16 (in GiB)
    kinds = plotly_values(chart_by_key(at, "gen_kinds")["data"][0]["y"])
    np.testing.assert_allclose(kinds * 2**30, [2 * 32 * kv * 4096 * 128 * 2 for kv in (32, 8, 1)])
    assert at.query_params["prompt"] == "a b c d e f a b"
    assert "Llama 2 7B (Touvron et al. 2023; 32 layers of 32 heads of d_head 128) holds 12.6 GiB of float16" in texts(
        at.markdown
    )
    # Llama 2 was trained for 4,096 tokens (Touvron et al. 2023, Table 1): 32,768 is said to be beyond it
    assert "its multi-head cache is 2.0 GiB per sequence at the 4,096 tokens it was trained for" in texts(at.markdown)
    assert "and would be 16.0 GiB at 32,768, more than the weights" in texts(at.markdown)
    assert "step t recomputes every one of the t tokens" not in texts(at.markdown)
    assert "2 × 2 layers × 2 heads × d_head 16 × 4 bytes = **512 bytes per token**" in texts(at.markdown)
    assert "tokens × 2 layers × K and V, float32: " in texts(at.caption) and "best of 3:" in texts(at.caption)


def test_sampling_controls_give_the_cores_tokens(params):
    at = open_page(PAGE)
    at.select_slider(key="gen_temperature").set_value(1.5).run()
    type_number(at, "gen_top_k", "3")
    type_number(at, "gen_seed", "7")
    assert not at.exception and not at.error
    ids = generate(params, letters_to_ids("abcdefab"), 10, temperature=1.5, top_k=3, seed=7)
    letters = ids_to_letters(ids)
    assert f"→ **{' '.join(letters[8:])}**" in texts(at.markdown)
    assert at.query_params["top_k"] == "3"
    assert at.query_params["temperature"] == "1.5" and at.query_params["seed"] == "7"


def test_the_step_slider_shows_that_steps_distribution(params):
    at = open_page(PAGE, {"temperature": "1", "seed": "3"})
    at.slider(key="gen_step").set_value(4).run()
    assert not at.exception
    ids = generate(params, letters_to_ids("abcdefab"), 10, temperature=1.0, seed=3)
    logits = decoder_forward(ids[:11], params).logits[-1]  # step 4 predicts the token at position 11
    bars = chart_by_key(at, "gen_probs")["data"]
    np.testing.assert_allclose(plotly_values(bars[0]["y"]), next_token_probabilities(logits, 1.0), atol=1e-6)
    np.testing.assert_allclose(plotly_values(bars[1]["y"]), next_token_probabilities(logits, 1.0), atol=1e-6)
    table = at.dataframe[0].value
    assert list(table["keys"]) == ["(2, 11, 16)", "(2, 11, 16)"]


def test_one_new_token_needs_no_step_slider_and_fewer_tokens_keep_the_step_within_them():
    at = open_page(PAGE, {"n_new": "1"})
    assert not at.exception and not at.error
    assert not [s for s in at.slider if s.key == "gen_step"]
    at = open_page(PAGE, {"step": "9"})
    type_number(at, "gen_n_new", "4")
    assert not at.exception and not at.error
    assert at.slider(key="gen_step").value == 4 and at.query_params["n_new"] == "4"
    assert "Step lowered from 9 to 4: only 4 tokens are generated. It goes back to 9 when that fits again." in texts(
        at.caption
    )
    assert "a b c d e f a b → **c d e f**" in texts(at.markdown)
    type_number(at, "gen_n_new", "1")  # no slider, yet the link holds a step that exists
    assert not at.exception and at.query_params["step"] == "1" and "only 1 token is generated" in texts(at.caption)
    type_number(at, "gen_n_new", "12")  # the step asked comes back once it is generated
    assert at.slider(key="gen_step").value == 9 and at.query_params["step"] == "9"
    assert "Step lowered" not in texts(at.caption)


@pytest.mark.parametrize(
    "prompt, message",
    [
        ("ab3", "'3' is not one of the model's tokens"),
        ("", "type at least one letter"),
        ("a" * 30, "positions"),
        ("a" * 23, "need 32 positions; training fed this model at most 31 tokens"),  # + 10 new tokens
    ],
)
def test_prompts_the_model_cannot_take_get_a_message(prompt, message):
    at = open_page(PAGE)
    at.text_input(key="gen_prompt").set_value(prompt).run()
    assert not at.exception
    assert message in texts(at.error).replace("\\", "")


def test_the_cache_comparison_controls():
    at = open_page(PAGE)
    type_number(at, "gen_layers", "4")
    at.selectbox(key="gen_heads").set_value(16).run()
    at.selectbox(key="gen_kv").set_value(2).run()
    at.selectbox(key="gen_d_head").set_value(64).run()
    at.selectbox(key="gen_context").set_value(1024).run()
    at.selectbox(key="gen_dtype").set_value("float32").run()
    assert not at.exception
    kinds = plotly_values(chart_by_key(at, "gen_kinds")["data"][0]["y"])
    np.testing.assert_allclose(kinds * 2**20, [2 * 4 * kv * 1024 * 64 * 4 for kv in (16, 2, 1)])  # in MiB
    assert "8× smaller" in texts(at.markdown) and "16× smaller" in texts(at.markdown)
    caption = next(c.value for c in at.caption if c.value.startswith("The formula, checked"))
    pairs = re.findall(r"([\d,]+) bytes \(formula ([\d,]+)\)", caption)
    expected = [f"{2 * 2 * kv * 64 * 8 * 4:,}" for kv in (16, 2, 1)]  # 2 layers, 64 tokens, d_head 8, float32
    assert pairs == [(e, e) for e in expected]
    assert at.query_params["dtype"] == "float32" and at.query_params["context"] == "1024"


@pytest.mark.parametrize("kv", [2, 8])
def test_the_formula_is_checked_on_each_distinct_real_cache(kv):
    caption = formula_check(cache_kinds(4, 8, kv, 64, 1024, 4), 8)  # 8 query heads; kv 8 makes GQA the MHA cache
    pairs = re.findall(r"([\d,]+) bytes \(formula ([\d,]+)\)", caption)
    distinct = (8, 2, 1) if kv == 2 else (8, 1)
    expected = [f"{2 * 2 * n_kv * 64 * 8 * 4:,}" for n_kv in distinct]  # 2 layers, 64 tokens, d_head 8, float32
    assert pairs == [(e, e) for e in expected] and caption.endswith("for MHA, GQA and MQA.")


def test_the_work_and_timing_are_reported():
    at = open_page(PAGE)
    table = next(df.value for df in at.dataframe if "times faster" in df.value.columns)
    assert list(table.index) == [16, 64, 128, 256, 512]
    assert table["multiply-adds without"].iloc[-1] == 512 * table["multiply-adds with"].iloc[-1]
    assert "times more" in texts(at.caption)


def test_the_counted_work_is_for_this_models_shape(params):
    from dataclasses import replace

    from attention.decoder import decode_step_madds

    at = open_page(PAGE)
    work = chart_by_key(at, "gen_work")["data"]
    t = plotly_values(work[0]["x"]).astype(int)
    shape = replace(params.config, max_positions=4096)  # "Counted multiply-adds for this model's shape"
    expected = [decode_step_madds(shape, int(n), use_cache=True).total for n in t]
    np.testing.assert_array_equal(plotly_values(work[0]["y"]), expected)
    assert "Counted multiply-adds for this model's shape" in texts(at.caption)


def test_the_layers_box_takes_what_the_core_takes_and_a_larger_link_says_so():
    """layers=49 and more used to raise the core's ValueError into an error box (issue #32)."""
    from attention.decoder import MAX_LAYERS

    link = {"layers": "128", "heads": "64", "kv": "2", "d_head": "128", "context": "131072", "dtype": "float64"}
    at = open_page(PAGE, link)
    assert not at.exception and not at.error
    assert "URL parameter 'layers'=128 is outside 1..48; using 32" in texts(at.warning)
    kinds = plotly_values(chart_by_key(at, "gen_kinds")["data"][0]["y"])
    np.testing.assert_allclose(kinds * 2**30, [2 * 32 * kv * 131072 * 128 * 8 for kv in (64, 2, 1)])
    assert at.query_params["layers"] == "32" and at.query_params["context"] == "131072"
    assert "from 1 to 48," in number_box(at, "gen_layers").help and MAX_LAYERS == 48
    type_number(at, "gen_layers", str(MAX_LAYERS))
    assert not at.exception and not at.error
    kinds = plotly_values(chart_by_key(at, "gen_kinds")["data"][0]["y"])
    np.testing.assert_allclose(kinds * 2**30, [2 * 48 * kv * 131072 * 128 * 8 for kv in (64, 2, 1)])


def test_one_new_token_counts_the_whole_prompt_and_the_exact_check_is_not_called_a_difference():
    at = open_page(PAGE, {"n_new": "1"})
    assert not at.exception and not at.error
    assert "Your only step is step 1" in texts(at.caption) and "times more" not in texts(at.caption)
    assert at.metric[1].value == "0.0e+00" and "last digits" not in texts(at.success)
    assert "equal too" in texts(at.success)
    assert "for its one step (step 1 runs the whole prompt either way)" in texts(at.caption)
    assert "no later step: the cache stays as step 1 left it" in texts(at.markdown)
    assert "After the last step" not in texts(at.markdown)


def test_terms_are_defined_where_first_used():
    at = open_page(PAGE)
    said = texts(at.caption) + texts(at.markdown)
    assert "z: the model's logits" in said
    assert "(n_kv_heads, tokens, d_head), the key/value heads (section 5), the tokens so far and the width" in said
    for term in ("multi-head attention (MHA)", "Grouped-query attention (GQA,", "Multi-query attention (MQA,"):
        assert term in said, term
    assert "one row of scores and its weighted sum of the values" in said
    assert "query heads 0 to g − 1 share key/value head 0" in said  # the ⌊i/g⌋ of GQA_LATEX counts from 0
