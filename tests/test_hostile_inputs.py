"""Every page (pages/*.py) and ui/url.py, ui/sequence.py: hostile input (#8): malformed, oversized, non-finite and
script-like URL parameters and text.

Every page must run without an exception, name the bad parameter in a warning, fall back to its default for
that part and write valid values back into the URL; text typed into a box is either refused with a message
(the previous vectors kept, the typing left in the box) or, for labels and sentences, shown as text: escaped
in figures (plotly reads HTML) and in messages and widget labels (Streamlit reads markdown).
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from attention.pretrained import EXAMPLE_SENTENCES
from attention.sequence import TokenSequence
from lessons.pitfalls import leak_example, transpose_hand_example
from lessons.puzzles import PUZZLES
from lessons.scaling import DEFAULT_KEYS
from tests.apptest_helpers import chart_by_key, heatmap_z, open_page, plotly_figures
from ui.safe_text import escape_markdown
from ui.sequence import MAX_PARAM_CHARS, default_sequence, parse_tokens
from ui.url import encode_sequence

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
MD_IMG = "![x](x)"  # markdown for an <img>: messages and widget labels are markdown
MARKUP = f"{MD_IMG} **b** :red[c] $d$ :material/home: [e](javascript:alert(1))"
BIG = "9" * 100_000
# 40 kB each (less on a page with many parameters: the position page has 17): a page's whole query must stay
# under Streamlit's limit of 512 k characters, or it is dropped whole (see the test below)
QUERY_BUDGET = 480_000
BAD_VALUES = [
    "abc",
    "1e999",
    "nan",
    "inf",
    "-inf",
    "-5",
    "99999999999999999999",
    "",
    BIG[:40_000],
    "é²½🙂",
    SCRIPT,
    IMG,
    "javascript:alert(1)",
    "%00",
    "\x00",
    MD_IMG,
    "5           junk",
    "1,2",
    " ",
]
RAW_HTML = ("<img", "<script")  # never in a figure (plotly text is HTML-like; markdown means nothing there)

LEAK = leak_example().seq
HAND = transpose_hand_example()[0].seq
SEQ_KEYS = {"pages/playground.py": "seq", "pages/causal.py": "causal_seq", "pages/pitfalls.py": "pitfalls_seq"}
# every page's URL parameters (the free-text ones apart): {name: (state key, default value)}
URL_PARAMS = {
    "pages/playground.py": {
        "q": ("seq", default_sequence()),
        "causal": ("pg_causal", False),
        "scale": ("pg_scale", True),
    },
    "pages/predict.py": {"puzzle": ("predict_puzzle", PUZZLES[0].id)},
    "pages/causal.py": {"q": ("causal_seq", LEAK), "t": ("causal_t", 2), "seed": ("causal_seed", 0)},
    "pages/pitfalls.py": {"q": ("pitfalls_seq", HAND), "seed": ("pitfalls_seed", 0)},
    "pages/scaling.py": {
        "dk": ("scaling_d_ks", [4, 64, 1024]),
        "keys": ("scaling_keys", DEFAULT_KEYS),
        "samples": ("scaling_samples", 1000),
        "seed": ("scaling_seed", 0),
        "tdk": ("scaling_train_d_k", 256),
        "lr": ("scaling_lr", 1.0),
        "steps": ("scaling_steps", 300),
    },
    "pages/heads.py": {
        "d_model": ("heads_d_model", 16),
        "n_heads": ("heads_n_heads", 4),
        "seed": ("heads_seed", 0),
        "causal": ("heads_causal", False),
        "scale": ("heads_scale", True),
        "presets": ("heads_preset_0", "previous"),
        "focus": ("heads_focus", 1),
    },
    "pages/block.py": {
        "d_model": ("block_d_model", 16),
        "n_heads": ("block_n_heads", 4),
        "d_ff": ("block_d_ff", 64),
        "act": ("block_activation", "relu"),
        "norm": ("block_norm", "post"),
        "causal": ("block_causal", False),
        "blocks": ("block_n_blocks", 4),
        "seed": ("block_seed", 0),
        "inspect": ("block_inspect", 1),
    },
    "pages/induction.py": {
        "model": ("induction_model", "shipped"),
        "seed": ("induction_seed", 0),
        "steps": ("induction_steps", 2000),
        "at": ("induction_at", 250),
        "n_new": ("induction_n_new", 5),
    },
    "pages/generation.py": {
        "n_new": ("gen_n_new", 10),
        "temperature": ("gen_temperature", 0.0),
        "top_k": ("gen_top_k", 0),
        "seed": ("gen_seed", 0),
        "step": ("gen_step", 1),
        "layers": ("gen_layers", 32),
        "heads": ("gen_heads", 32),
        "kv": ("gen_kv", 8),
        "d_head": ("gen_d_head", 128),
        "context": ("gen_context", 4096),
        "dtype": ("gen_dtype", "float16"),
    },
    "pages/positions.py": {
        "d_model": ("pos_d_model", 16),
        "seed": ("pos_seed", 0),
        "shuffle": ("pos_shuffle", 1),
        "method": ("pos_method", "sinusoidal"),
        "table_n": ("pos_table_n", 128),
        "head": ("pos_head", 3),
        "table_d": ("pos_table_d", 64),
        "shift": ("pos_shift", 3),
        "offset": ("pos_offset", 5),
        "heads": ("pos_heads", 8),
        "alibi_scores": ("pos_alibi_scores", False),
        "n": ("pos_n", 16),
        "window": ("pos_window", 3),
        "layers": ("pos_layers", 3),
        "len_a": ("pos_len_a", 9),
        "len_b": ("pos_len_b", 4),
        "pad_causal": ("pos_pad_causal", False),
    },
    "pages/pretrained.py": {
        "layer": ("pt_layer", 4),
        "head": ("pt_head", 2),
        "layer2": ("pt_layer2", 1),
        "head2": ("pt_head2", 3),
        "focus": ("pt_focus", -1),
        "hide": ("pt_hide", False),
        "compare": ("pt_compare", False),
    },
    "pages/pretrained_deeper.py": {
        "layer": ("ptd_layer", 4),
        "head": ("ptd_head", 2),
        "mean": ("ptd_mean", False),
        "rows": ("ptd_rows", "all"),
        "last": ("ptd_last", 8),
        "query": ("ptd_query", -1),
        "pool": ("ptd_pool", "mean"),
    },
}
ACCEPTED = {
    ("dk", ""): [],
    ("dk", " "): [],  # an empty d_k list is the reader's own cleared selection
    ("dk", "1,2"): [1, 2],
}
# the shared editor on each page that shows it: (page, state key, URL query that shows it)
EDITORS = [
    ("pages/playground.py", "seq", {}),
    ("pages/causal.py", "causal_seq", {}),
    ("pages/pitfalls.py", "pitfalls_seq", {}),
    ("pages/predict.py", "predict_seq", {"puzzle": "own"}),
]


def texts(elements) -> list[str]:
    return [e.value for e in elements]


def unescaped_markup(markdown: str) -> list[str]:
    """Characters in a message that markdown would read as markup (not preceded by a backslash), apart from
    the page's own: bold, and the names [CLS] and [SEP] (a user's `*` or `[` is escaped)."""
    return re.findall(r"(?<!\\)[<>\[\]`*$~|]", re.sub(r"\*\*|\[CLS\]|\[SEP\]", "", markdown))


def assert_user_text_is_inert(at) -> None:
    """No figure carries raw HTML, and every warning and error shows the user's text as text."""
    for fig in plotly_figures(at):
        dump = json.dumps(fig)
        assert not any(raw in dump for raw in RAW_HTML), dump[:300]
    for message in texts(at.warning) + texts(at.error) + texts(at.success):
        assert not unescaped_markup(message), message


def same(a, b) -> bool:
    return a.equals(b) if isinstance(a, TokenSequence) else a == b


@pytest.mark.parametrize(
    "text, escaped",
    [
        ("north d_model 2 row(s) given 1..6 'q'=3", "north d_model 2 row(s) given 1..6 'q'=3"),  # plain text as it is
        (MD_IMG, r"!\[x\](x)"),
        ("<img", r"\<img"),
        ("_it_ **b**", r"\_it\_ \*\*b\*\*"),
        (":red[c] $d$", r"\:red\[c\] \$d\$"),
        (":material/home:", r"\:material\/home\:"),
        (r"a\b `c` ~d~ |e| &lt;", r"a\\b \`c\` \~d\~ \|e\| \&lt;"),
        # addresses keep a word joiner (U+2060) inside, where markdown would make them links
        ("http://e.com", "http\u2060\\:\\/\\/e.com"),
        ("WWW.e.com awww.x", "WWW\u2060.e.com awww.x"),
        ("ann@e.net", "ann@\u2060e.net"),
    ],
)
def test_escape_markdown(text, escaped):
    assert escape_markdown(text) == escaped


# ---------------------------------------------------------------- URL parameters


@pytest.mark.parametrize("bad", BAD_VALUES, ids=lambda v: repr(v[:12]) + (f"..{len(v)}" if len(v) > 12 else ""))
@pytest.mark.parametrize("page", list(URL_PARAMS))
def test_bad_url_values_warn_name_the_parameter_and_fall_back(page, bad):
    params = URL_PARAMS[page]
    bad = bad[: QUERY_BUDGET // len(params)]  # 17 parameters of 40 kB would be over the limit
    query = {name: bad for name in params}
    if "q" in params:  # q is bad; k and v fit the page's own example, so q alone is to blame
        query |= {m: encode_sequence(params["q"][1])[m] for m in "kv"}
    at = open_page(page, query)
    assert not at.exception and not at.error
    warned = " ".join(texts(at.warning))
    for name, (key, default) in params.items():
        expected = ACCEPTED.get((name, bad), default)
        assert same(at.session_state[key], expected), (name, at.session_state[key])
        if (name, bad) in ACCEPTED:
            continue
        assert f"'{name}'" in warned or (name == "q" and "vectors in the URL could not be used" in warned), name
        assert at.query_params.get(name) != bad  # the URL now holds the value in use
    assert_user_text_is_inert(at)


@pytest.mark.parametrize("page", list(URL_PARAMS))
def test_unknown_parameters_are_ignored_and_dropped_from_the_url(page):
    at = open_page(page, {"evil": SCRIPT, "utm_source": IMG, "Q": MD_IMG, "tokens_": BIG})
    assert not at.exception and not at.error and not at.warning
    assert not {"evil", "utm_source", "Q", "tokens_"} & set(at.query_params)


def test_a_query_over_streamlits_limit_is_dropped_whole_and_the_page_shows_its_defaults():
    at = open_page("pages/heads.py", {"seed": "9" * 600_000, "n_heads": "2"})
    assert not at.exception and at.session_state["heads_seed"] == 0
    assert at.slider(key="heads_n_heads").value == 4 and at.query_params["seed"] == "0"


def test_a_repeated_key_counts_its_last_value_is_still_validated_and_is_said():
    repeated = "URL parameter 'seed' is given 2 times; the last one counts."
    at = open_page("pages/heads.py", {"seed": ["7", SCRIPT]})
    assert not at.exception and at.session_state["heads_seed"] == 0
    assert repeated in texts(at.warning) and any("'seed' should be" in w for w in texts(at.warning))
    at = open_page("pages/heads.py", {"seed": [SCRIPT, "7"]})
    assert not at.exception and texts(at.warning) == [repeated] and at.session_state["heads_seed"] == 7
    at = open_page("pages/heads.py", {"seed": ["7", "7"]})  # the same value twice: nothing to say
    assert not at.exception and not at.warning and at.session_state["heads_seed"] == 7


def test_a_hostile_presenter_flag_warns_in_the_sidebar():
    at = open_page("pages/causal.py", {"present": SCRIPT})
    assert not at.exception and at.toggle(key="presenter").value is False
    assert any("'present'" in w for w in texts(at.sidebar.warning))


@pytest.mark.parametrize("page", ["pages/playground.py", "pages/causal.py", "pages/pitfalls.py"])
@pytest.mark.parametrize("tokens", [IMG, MARKUP, SCRIPT, BIG, "\x00 é²½🙂 \u202etxet", "%00 javascript:alert(1)"])
def test_token_labels_in_the_url_are_names_shown_as_text(page, tokens):
    seq = URL_PARAMS[page]["q"][1]
    at = open_page(page, {**encode_sequence(seq), "tokens": tokens})
    assert not at.exception and not at.error
    shown = at.session_state[SEQ_KEYS[page]]
    assert shown.tokens == parse_tokens(tokens[:MAX_PARAM_CHARS], seq.n)[0]
    assert np.array_equal(shown.q, seq.q) and np.array_equal(shown.v, seq.v)
    assert_user_text_is_inert(at)
    if "<" in tokens:  # the label is on the heatmap's axis, escaped
        assert "&lt;" in json.dumps(plotly_figures(at)[0]["layout"])


@pytest.mark.parametrize(
    "page, name, key",
    [("pages/induction.py", "text", "induction_text"), ("pages/generation.py", "prompt", "gen_prompt")],
)
def test_letters_in_the_url_are_text_refused_with_a_message_or_taken(page, name, key):
    at = open_page(page, {name: BIG})
    assert not at.exception and any(f"'{name}' is longer than" in w for w in texts(at.warning))
    assert at.session_state[key] != BIG and len(at.query_params[name]) < 100
    hostile = f"{IMG} {SCRIPT} {MD_IMG}"  # within the box's 100 characters
    at = open_page(page, {name: hostile})
    assert not at.exception and not at.warning
    assert at.session_state[key] == hostile  # kept in its box, to fix
    assert any("is not one of the model's tokens" in e for e in texts(at.error))  # refused, with a message
    assert_user_text_is_inert(at)


@pytest.mark.parametrize(
    "page, prefix, name",
    [
        ("pages/pretrained.py", "pt", "text"),
        ("pages/pretrained.py", "pt", "a"),
        ("pages/pretrained.py", "pt", "b"),
        ("pages/pretrained_deeper.py", "ptd", "text"),
        ("pages/pretrained_deeper.py", "ptd", "a"),
        ("pages/pretrained_deeper.py", "ptd", "b"),
        ("pages/pretrained_deeper.py", "ptd", "word"),
    ],
)
def test_pretrained_sentences_in_the_url(page, prefix, name):
    shown = {"rows": "word"} if name == "word" else {}  # the word is in the link while it is in use
    at = open_page(page, {name: BIG, **shown})
    assert not at.exception and any(f"'{name}' is longer than" in w for w in texts(at.warning))
    assert at.session_state[f"{prefix}_{name}"] != BIG and len(at.query_params[name]) < 100
    hostile = f"{IMG} {MARKUP} {SCRIPT}"[: 40 if name == "word" else None]  # a word takes 40 characters
    at = open_page(page, {name: hostile, **shown})
    assert not at.exception and not any("URL parameter" in w for w in texts(at.warning))
    assert at.session_state[f"{prefix}_{name}"] == hostile  # a sentence is text: taken as it is
    assert_user_text_is_inert(at)


def test_position_words_in_the_url():
    at = open_page("pages/positions.py", {"text": BIG})
    assert not at.exception and any("'text' is longer than" in w for w in texts(at.warning))
    assert at.session_state["pos_text"] != BIG and len(at.query_params["text"]) < 100
    hostile = f"{IMG} {MARKUP} é²½🙂"
    at = open_page("pages/positions.py", {"text": hostile, "method": "learned"})
    assert not at.exception and not at.warning
    assert at.session_state["pos_text"] == hostile  # words are text: taken as they are, shown as text
    assert_user_text_is_inert(at)
    assert "&lt;img" in json.dumps(chart_by_key(at, "pos_four_ways")["layout"])
    at = open_page("pages/positions.py", {"text": f"{SCRIPT} {SCRIPT}"})  # a word longer than 24 characters
    assert not at.exception and any("a word has 25 characters" in e for e in texts(at.error))
    assert_user_text_is_inert(at)


# ---------------------------------------------------------------- typed text

BAD_TEXTS = [
    "nan",
    "inf",
    "-inf",
    "1e999",
    "1e9",
    "",
    "   ",
    "banana",
    "9 " * 50_000,
    IMG,
    SCRIPT,
    MD_IMG,
    MARKUP,
    "javascript:alert(1)",
    "\x00",
    "0x1F",
    "1 0; 0 1",
    "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17",
]


@pytest.mark.parametrize("page, key, query", EDITORS)
def test_bad_matrix_text_is_refused_with_a_message_and_the_previous_vectors_kept(page, key, query):
    at = open_page(page, query)
    before = at.session_state[key]
    for i, text in enumerate(BAD_TEXTS):
        m = "qkv"[i % 3]
        at.text_area(key=f"{key}_text_{m}").set_value(text).run()
        assert not at.exception, text
        assert at.session_state[key].equals(before), text  # the canonical state did not move
        assert at.text_area(key=f"{key}_text_{m}").value == text  # what was typed is still there to fix
        assert any(f"The previous {m.upper()} is kept" in e for e in texts(at.error)), text
        assert_user_text_is_inert(at)
    at.text_area(key=f"{key}_text_q").set_value("; ".join(["1 " * before.d_k] * before.n)).run()  # a good one
    assert not at.exception and np.all(at.session_state[key].q == 1)
    assert not any("previous Q" in e for e in texts(at.error))


@pytest.mark.parametrize("page, key, query", EDITORS)
def test_hostile_token_labels_are_taken_as_names_and_shown_as_text(page, key, query):
    at = open_page(page, query)
    before = at.session_state[key]
    for labels in [IMG, MARKUP, SCRIPT, "x" * 100_000, "\x00 é²½🙂", "   "]:
        at.text_input(key=f"{key}_tokens_in").set_value(labels).run()
        assert not at.exception
        seq = at.session_state[key]
        assert seq.tokens == parse_tokens(labels, before.n)[0]
        assert all(np.array_equal(seq.matrix(m), before.matrix(m)) for m in "qkv")  # only the names changed
        assert at.text_input(key=f"{key}_tokens_in").value == labels
        assert_user_text_is_inert(at)


def test_predict_shows_own_labels_as_text_in_its_questions_and_verdicts():
    at = open_page("pages/predict.py", {"puzzle": "own"})
    labels = f"{MD_IMG} :red[b] $c$ <img"
    at.text_input(key="predict_seq_tokens_in").set_value(labels).run()
    tokens = at.session_state["predict_seq"].tokens
    questions = [s for s in at.selectbox if str(s.key).startswith("predict_guess")]
    assert [s.label for s in questions] == [
        f"q_{i} '{escape_markdown(t)}' attends most to" for i, t in enumerate(tokens)
    ]
    for s in questions:
        s.set_value(0)
    at.run()
    at.button(key="predict_reveal").click().run()
    assert not at.exception
    assert len(at.success) + len(at.error) == len(tokens)  # one verdict per query, its labels escaped
    assert_user_text_is_inert(at)


@pytest.mark.parametrize("key", ["pt_text", "pt_a", "pt_b", "ptd_text", "ptd_a", "ptd_b"])
def test_pretrained_text_boxes_take_hostile_text_without_crashing(key):
    at = open_page("pages/pretrained_deeper.py" if key.startswith("ptd") else "pages/pretrained.py")

    def box(key: str):  # looked up afresh after every run
        return at.text_area(key=key) if key.endswith("_text") else at.text_input(key=key)

    for text, message in [
        (f"{IMG} {SCRIPT}", None),
        (MARKUP, None),
        ("nan inf -inf 1e999", None),
        ("é²½🙂 \u202etxet", None),
        ("   ", "Type a sentence"),
        ("\x00", "no tokens besides"),
        ("🙂 " * 300, "at most 256"),
        ("x " * 50_000, "this page reads at most 2,000"),
    ]:
        box(key).set_value(text).run()
        assert not at.exception, text
        assert box(key).value == text  # the box holds what was typed, even over the limit (said in the message)
        if message:
            assert any(message in m for m in texts(at.error) + texts(at.info)), (text[:20], texts(at.error))
        else:
            assert not at.error
        assert_user_text_is_inert(at)
    box(key).set_value(EXAMPLE_SENTENCES[1]).run()  # and a good sentence works again
    assert not at.exception and not at.error


# ---------------------------------------------------------------- extreme values and what other pages receive


def test_extreme_values_never_put_nan_into_the_weights():
    rng = np.random.default_rng(0)
    q, k, v = (rng.choice([-1000.0, 1000.0], (16, 16)) for _ in range(3))
    seq = TokenSequence(tuple(f"t{i}" for i in range(16)), q, k, v)
    for page, charts in [
        ("pages/playground.py", ["pg_heatmap"]),
        ("pages/causal.py", ["causal_heat_off", "causal_heat_on", "causal_heat_correct"]),
        ("pages/pitfalls.py", ["pitfalls_right", "pitfalls_wrong"]),
    ]:
        at = open_page(page, {**encode_sequence(seq), "causal": "1"})
        assert not at.exception and not at.error and not at.warning
        for name in charts:
            w = heatmap_z(chart_by_key(at, name))
            assert np.all(np.isfinite(w)) and np.allclose(w.sum(axis=1), 1.0), name


@pytest.mark.parametrize("page", ["pages/heads.py", "pages/block.py", "pages/predict.py"])
def test_pages_that_read_the_playground_sequence_show_its_labels_as_text(page):
    base = default_sequence()
    seq = TokenSequence((IMG, MD_IMG, ":red[x]", SCRIPT[:24]), base.q, base.k, base.v)
    at = open_page(page, {"puzzle": "own"} if page.endswith("predict.py") else {}, state={"seq": seq})
    assert not at.exception and not at.error
    assert_user_text_is_inert(at)


def test_the_deeper_pages_word_box_takes_hostile_words_as_text():
    at = open_page("pages/pretrained_deeper.py", {"rows": "word"})
    for word in [IMG, MARKUP[:40], SCRIPT, "\x00", "é²½🙂", "   ", "it"]:
        at.text_input(key="ptd_word").set_value(word).run()
        assert not at.exception, word
        assert at.text_input(key="ptd_word").value == word
        said = " ".join(texts(at.warning))
        assert ("No token of this text is the word" in said) == (word.strip() not in ("", "it")), word
        if not word.strip():  # nothing typed yet: asked for, not refused
            assert "Type a word above" in " ".join(texts(at.caption)), repr(word)
        assert_user_text_is_inert(at)
