"""The deeper pretrained page under AppTest: every view shows the model's own numbers, every control moves
them, long inputs never rerun the model, and bad links or text give messages, not crashes."""

import io
import uuid
from contextlib import redirect_stdout

import numpy as np

from lessons.reading import LONG_EXAMPLE, SENTENCE_PAIRS, TRAINED_TOKENS
from tests.apptest_helpers import chart_by_key, heatmap_z, number_box, open_page, plotly_values, type_number

PAGE = "pages/pretrained_deeper.py"
TIRED, WIDE = SENTENCE_PAIRS["The animal ... it was too tired / too wide"]
HOSTILE = "<img src=x onerror=alert(1)>"


def deeper(query: dict[str, str] | None = None):
    return open_page(PAGE, query)


def points(at) -> tuple[np.ndarray, np.ndarray]:
    """The coordinates of the query points and of the key points in the picture."""
    fig = chart_by_key(at, "ptd_points")
    q, k = fig["data"][0], fig["data"][1]
    as_xy = lambda t: np.column_stack([plotly_values(t["x"]), plotly_values(t["y"])])  # noqa: E731
    return as_xy(q), as_xy(k)


def texts(elements) -> str:
    return " ".join(e.value for e in elements)


def test_the_page_shows_the_models_own_numbers_in_every_view(model):
    at = deeper({"text": TIRED, "layer": "4", "head": "2"})
    assert not at.exception and not at.error
    run = model.run(TIRED)
    n = run.n_tokens
    np.testing.assert_allclose(heatmap_z(chart_by_key(at, "ptd_rows_heatmap")), run.attentions[3, 1], atol=1e-6)
    # the picture: PCA of the 2n query and key vectors, recomputed here with numpy's SVD
    x = np.concatenate([run.queries[3, 1], run.keys[3, 1]]).astype(np.float64)
    u, s, vt = np.linalg.svd(x - x.mean(axis=0), full_matrices=False)
    shown_q, shown_k = points(at)
    shown = np.concatenate([shown_q, shown_k])
    np.testing.assert_allclose(np.abs(shown), np.abs(u[:, :2] * s[:2]), atol=1e-4)
    share = (s[:2] ** 2).sum() / (s**2).sum()
    assert at.metric[0].value == f"{share:.0%}" and f"{share:.0%} of their spread kept" in str(
        chart_by_key(at, "ptd_points")["layout"]["title"]
    )
    # rollout, recomputed here: heads averaged, half the identity, rows renormalised, layers multiplied
    rollout = np.eye(n)
    for layer in run.attentions.astype(np.float64):
        mixed = 0.5 * layer.mean(axis=0) + 0.5 * np.eye(n)
        rollout = (mixed / mixed.sum(axis=1, keepdims=True)) @ rollout
    np.testing.assert_allclose(heatmap_z(chart_by_key(at, "ptd_rollout")), rollout, atol=1e-6)
    feed = plotly_values(chart_by_key(at, "ptd_feed")["data"][0]["y"])
    np.testing.assert_allclose(feed, rollout.mean(axis=0), atol=1e-9)  # the mean-pooled output by default
    # two sentences: the difference on the shared tokens (all but the adjective, position 13)
    other = model.run(WIDE)
    shared = [i for i in range(n) if i != 13]
    diff = run.attentions[3, 1][np.ix_(shared, shared)] - other.attentions[3, 1][np.ix_(shared, shared)]
    np.testing.assert_allclose(heatmap_z(chart_by_key(at, "ptd_pair_diff")), diff, atol=1e-6)
    it, animal = 10, 2
    expected = (
        f"'it' (10) → 'animal' (2): {run.attentions[3, 1, it, animal]:.2f} in A, "
        f"{other.attentions[3, 1, it, animal]:.2f} in B"
    )
    assert expected in texts(at.markdown)  # the tired/wide pair: 'it' reads 'animal' far more with 'tired'
    caveats = texts(at.info)
    assert "A projection can hide closeness" in caveats and "Rollout is a heuristic" in caveats
    assert "invent" not in caveats and "Never the other way round: a projection never lengthens a distance" in caveats
    # the top box and the rollout box name the same simplifications
    top, rollout_box = at.info[0].value, next(i.value for i in at.info if "Rollout is a heuristic" in i.value)
    for simplification in ("value vectors", "$W_O$", "the feed-forward layers", "a fixed half"):
        assert simplification in top and simplification in rollout_box, simplification
    assert "only attention moves information" not in top
    assert f"after {run.attentions.shape[0]} layers a position holds a blend of blends" in texts(at.markdown)


def test_attentionviz_normalisation_redraws_the_points_and_shows_the_nearness_both_ways(model):
    from lessons.projection import pca_2d
    from lessons.reading import attentionviz_normalise, heaviest_nearest, nearness_both_ways

    at = deeper({"text": TIRED, "query": "10"})
    run = model.run(TIRED)
    q, k, weights = run.queries[3, 1], run.keys[3, 1], run.attentions[3, 1]
    raw, normalised = heaviest_nearest(q, k, weights)
    assert f"for {raw} of the 16 queries drawn from the raw vectors, {normalised} after" in texts(at.caption)
    table = at.dataframe[0].value
    keys = [int(label.split(" · ")[0]) for label in table["key"]]
    near_raw, near_viz = nearness_both_ways(q, k, 10, keys)
    assert table["nearness, raw"].tolist() == [f"{r} of 16" for r in near_raw]
    assert table["nearness, AttentionViz"].tolist() == [f"{r} of 16" for r in near_viz]
    assert near_raw != near_viz  # the normalisation changes what looks near, here
    before = table["score q·k/√d"].tolist()
    at.toggle(key="ptd_viz").set_value(True).run()
    assert not at.exception and at.query_params["viz"] == "1"
    shown = np.concatenate(points(at))
    expected = pca_2d(np.concatenate(attentionviz_normalise(q, k))).coords
    np.testing.assert_allclose(shown, expected, atol=1e-4)
    assert at.dataframe[0].value["score q·k/√d"].tolist() == before  # no score moved
    assert "the picture above shows the second" in texts(at.caption)


def test_unknown_tokens_are_explained_where_they_appear():
    at = deeper({"text": "你好 world"})
    assert not at.exception and not at.error
    assert "2 of these tokens are [UNK], the tokenizer's *unknown* token" in texts(at.info)
    at.text_input(key="ptd_b").set_value("I love 🍕 pizza").run()
    assert "1 of sentence B's tokens is [UNK]" in texts(at.info)


def test_two_equal_sentences_are_said_to_be_the_same():
    at = deeper({"a": TIRED, "b": TIRED})
    assert not at.exception
    assert "The two sentences are the same to the model" in texts(at.info)
    assert "ptd_pair_diff" not in str([c.proto.id for c in at.get("plotly_chart")])
    assert "(+0.00)" not in texts(at.markdown)


def test_an_empty_word_asks_for_one():
    at = deeper({"text": TIRED, "rows": "word", "word": ""})
    assert not at.exception and not at.warning
    assert "Type a word above to keep only its rows" in texts(at.caption)
    assert "the word ''" not in texts(at.warning) + texts(at.caption)


def test_a_refused_text_stays_out_of_the_share_link():
    at = deeper({"text": TIRED})
    at.text_area(key="ptd_text").set_value("word " * 1000).run()  # 5,000 characters: refused
    assert not at.exception and "5,000 characters long" in texts(at.error)
    assert "text" not in at.query_params and "The share link leaves this text out" in texts(at.caption)
    at.text_area(key="ptd_text").set_value(TIRED).run()
    assert at.query_params["text"] == TIRED
    at.text_input(key="ptd_a").set_value("x" * 5000).run()
    assert not at.exception and "a" not in at.query_params and at.query_params["b"] == WIDE
    assert "The share link leaves this text out" in texts(at.caption)


def test_clicking_or_choosing_a_query_draws_lines_to_its_heaviest_keys_by_weight(model):
    at = deeper({"text": TIRED})
    assert not at.dataframe  # no query chosen yet
    at.selectbox(key="ptd_query").set_value(10).run()
    assert not at.exception and at.query_params["query"] == "10"
    run = model.run(TIRED)
    weights = run.attentions[3, 1, 10]
    table = at.dataframe[0].value
    heaviest = np.argsort(-weights)[: len(table)]
    assert table["key"].tolist() == [f"{j} · {run.tokens[j]}" for j in heaviest]
    np.testing.assert_allclose(table["weight"], weights[heaviest].round(3))
    scores = run.keys[3, 1].astype(np.float64) @ run.queries[3, 1, 10].astype(np.float64) / np.sqrt(32)
    np.testing.assert_allclose(table["score q·k/√d"], scores[heaviest].round(2), atol=1e-9)
    fig = chart_by_key(at, "ptd_points")
    shown_q, shown_k = points(at)
    lines = [t for t in fig["data"][2:] if t["mode"] == "lines"]
    assert len(lines) == len(table)
    for line, j in zip(lines, heaviest):  # each line from the query's point to that key's
        np.testing.assert_allclose([line["x"][0], line["y"][0]], shown_q[10])
        np.testing.assert_allclose([line["x"][1], line["y"][1]], shown_k[j])


def test_switching_heads_and_rows_on_a_long_input_never_reruns_the_model(model, run_counter):
    text = f"{LONG_EXAMPLE[:1100]} Number {uuid.uuid4().hex[:6]}."
    at = deeper({"text": text})
    assert not at.exception and run_counter.count(text) == 1
    n = len(model.tokenize(text)[0])
    assert n > 230
    run = model.run(text)
    changes = [
        lambda: at.selectbox(key="ptd_layer").set_value(6),
        lambda: at.selectbox(key="ptd_head").set_value(12),
        lambda: at.radio(key="ptd_rows").set_value("last"),
        lambda: number_box(at, "ptd_last").input("3"),
        lambda: at.radio(key="ptd_rows").set_value("word"),
        lambda: at.text_input(key="ptd_word").set_value("Lighthouse"),
        lambda: at.toggle(key="ptd_mean").set_value(True),
        lambda: at.selectbox(key="ptd_query").set_value(n - 5),
        lambda: at.radio(key="ptd_pool").set_value("cls"),
    ]
    for change in changes:
        change().run()
        assert not at.exception
    assert run_counter.count(text) == 2  # the page's one run, plus this test's own
    lighthouse = [i for i, tok in enumerate(run.tokens) if tok == "lighthouse"]
    heat = chart_by_key(at, "ptd_rows_heatmap")
    np.testing.assert_allclose(heatmap_z(heat), run.attentions[5][:, lighthouse].mean(axis=0), atol=1e-6)
    assert [label.split(" · ")[0] for label in heat["data"][0]["y"]] == [str(i) for i in lighthouse]
    assert at.query_params["word"] == "Lighthouse" and "last" not in at.query_params  # only what is in use


def test_the_last_few_rows_and_the_mean_of_the_heads(model):
    at = deeper({"text": TIRED, "rows": "last", "last": "3", "mean": "1", "layer": "2"})
    assert not at.exception and not at.warning
    run = model.run(TIRED)
    z = heatmap_z(chart_by_key(at, "ptd_rows_heatmap"))
    np.testing.assert_allclose(z, run.attentions[1].mean(axis=0)[-3:], atol=1e-6)
    assert "Layer 2, its 12 heads averaged" in str(chart_by_key(at, "ptd_rows_heatmap")["layout"]["title"])
    type_number(at, "ptd_last", "2.5")  # refused, kept in the box: the heatmap keeps its 3 rows
    assert number_box(at, "ptd_last").value == "2.5" and "'2.5' is not a whole number" in texts(at.error)
    assert heatmap_z(chart_by_key(at, "ptd_rows_heatmap")).shape[0] == 3
    type_number(at, "ptd_last", "4e0")
    assert heatmap_z(chart_by_key(at, "ptd_rows_heatmap")).shape[0] == 4 and not at.error
    type_number(at, "ptd_last", "200")  # more than the text has: all of them, said
    assert "only 16 tokens" in texts(at.caption) and heatmap_z(chart_by_key(at, "ptd_rows_heatmap")).shape == (16, 16)


def test_a_word_that_is_not_in_the_text_is_said_and_every_row_shown():
    at = deeper({"text": TIRED, "rows": "word", "word": f"{HOSTILE} **x**"})
    assert not at.exception
    (warning,) = texts(at.warning).split("\n")
    assert "No token of this text is the word" in warning
    assert "\\<img src=x onerror=alert(1)\\> \\*\\*x\\*\\*" in warning  # shown as typed, escaped for markdown
    assert heatmap_z(chart_by_key(at, "ptd_rows_heatmap")).shape == (16, 16)


def test_the_cls_row_of_the_rollout(model):
    at = deeper({"text": TIRED, "pool": "cls"})
    assert not at.exception
    feed = plotly_values(chart_by_key(at, "ptd_feed")["data"][0]["y"])
    rollout = heatmap_z(chart_by_key(at, "ptd_rollout"))
    np.testing.assert_allclose(feed, rollout[0], atol=1e-9)
    assert "[CLS] at the top" in str(chart_by_key(at, "ptd_feed")["layout"]["title"])


def test_examples_and_pairs_load_into_the_boxes():
    at = deeper()
    at.selectbox(key="ptd_example").set_value("A long text: 252 tokens, near this app's limit").run()
    assert not at.exception and at.text_area(key="ptd_text").value == LONG_EXAMPLE
    assert "252 tokens" in texts(at.caption) and at.selectbox(key="ptd_example").value is None
    assert f"training cut inputs at {TRAINED_TOKENS} tokens" in texts(at.caption)  # 252 > 128: said


def test_terms_are_defined_where_first_used_and_short_texts_keep_the_training_length_quiet():
    at = deeper()
    count = next(c.value for c in at.caption if "[CLS] and [SEP] included" in c.value)
    assert not at.exception and int(count.split()[0]) <= TRAINED_TOKENS
    assert "training cut inputs" not in texts(at.caption)
    first = at.info[0].value  # the box above everything: its W_O is the page's first
    assert "$W_O$ (the output matrix that mixes the heads' results)" in first
    assert "PCA (principal component analysis)" in texts(at.markdown)
    assert "Row i of R is rollout's estimate of which input tokens" in texts(at.markdown)  # a heuristic, said as one
    assert "BERT's classifier reads it, Devlin et al. 2019" in at.radio(key="ptd_pool").help  # a paper's claim, named
    pair = "The trophy ... it is too large / too small"
    at.selectbox(key="ptd_pair").set_value(pair).run()
    assert (at.text_input(key="ptd_a").value, at.text_input(key="ptd_b").value) == SENTENCE_PAIRS[pair]
    assert not at.exception and chart_by_key(at, "ptd_pair_diff")


def test_a_query_past_the_end_of_a_shorter_text_is_said_and_dropped():
    at = deeper({"text": TIRED, "query": "200"})  # a valid position for 256 tokens, not for 16
    assert not at.exception
    assert "Query 200 is past this text's 16 tokens" in texts(at.info)
    assert at.selectbox(key="ptd_query").value == -1 and at.query_params["query"] == "-1"


def test_empty_too_long_and_hostile_texts_give_messages():
    at = deeper({"text": "   "})
    assert not at.exception and "Type a sentence" in texts(at.info)
    at.text_area(key="ptd_text").set_value("the " * 300).run()
    assert not at.exception and "at most 256" in texts(at.error)
    at.text_area(key="ptd_text").set_value(f"{HOSTILE} and it was tired").run()
    assert not at.exception and not at.error
    for chart in at.get("plotly_chart"):
        assert "<img" not in chart.proto.spec
    at.text_input(key="ptd_b").set_value("").run()  # one of the two sentences empty: said, no comparison
    assert not at.exception and "Type a sentence" in texts(at.info)


def test_the_snippet_reproduces_the_share_and_the_rollout(model):
    at = open_page(PAGE, {"text": TIRED, "layer": "3", "head": "5"}, state={"snippet": True})  # snippet open
    code = next(c.value for c in at.code if "attention_rollout" in c.value)
    namespace: dict = {}
    out = io.StringIO()
    with redirect_stdout(out):
        exec(compile(code, "<snippet>", "exec"), namespace)  # noqa: S102 - the page's own generated code
    np.testing.assert_allclose(namespace["rollout"], heatmap_z(chart_by_key(at, "ptd_rollout")), atol=1e-6)
    assert f"keep {namespace['points'].share:.1%}" in out.getvalue()
    assert at.metric[0].value == f"{namespace['points'].share:.0%}"


def test_without_the_model_package_the_page_says_what_to_install(model_not_installed):
    at = deeper({"text": "Keep this.", "layer": "3", "rows": "word", "word": "this"})
    assert not at.exception and "not installed" in texts(at.error)
    assert at.query_params["text"] == "Keep this." and at.query_params["word"] == "this"  # kept for later


def test_the_rollout_caption_quotes_the_rollouts_own_shares(model):
    from attention.pretrained import attention_rollout
    from ui.safe_text import escape_markdown

    at = deeper({"text": TIRED})
    run = model.run(TIRED)
    feed = attention_rollout(run.attentions).mean(axis=0)  # the mean-pooled output, the default
    top = np.argsort(-feed, kind="stable")[:5]
    special = feed[0] + feed[-1]  # [CLS] first, [SEP] last
    shares = ", ".join(f"'{escape_markdown(run.tokens[i])}' ({i}) {feed[i]:.1%}" for i in top)
    said = texts(at.caption)
    assert f"Largest shares: {shares}." in said
    even = f"An even spread would give each token {1 / run.n_tokens:.1%}."
    assert f"{even} [CLS] and [SEP] together: {special:.0%}" in said
    assert special > 0.5  # "many heads park their weight on them": most of the output comes from the two markers
