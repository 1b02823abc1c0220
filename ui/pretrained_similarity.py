"""Section 4 of "A real pretrained model" (pages/pretrained.py): does it really work? Sentence similarity. What the
embedding is and how close paraphrases and unrelated sentences come (the prepared pairs' range), its equations,
two sentences of your own and their cosine similarity, and the prepared pairs scored by the same model. The
similarities give way to a card while the class answers a question about them."""

import pandas as pd
import streamlit as st

from attention.pretrained import COSINE_LATEX, EMBEDDING_LATEX, MAX_TOKENS, MiniLMRun, cosine_similarity
from lessons.reading import SIMILARITY_PAIRS, similarity_range
from locales import num, tr
from ui.classroom_open_question import answer_hidden, hidden_answer_card
from ui.declared.pretrained import STATE
from ui.minilm import encode, read_text
from ui.minilm_inputs import pair_menu


@st.cache_data(show_spinner=False)
def prepared_pairs() -> pd.DataFrame:
    """Every prepared pair with the cosine similarity of its two embeddings."""
    rows = [
        (name, a, b, round(cosine_similarity(encode(a).embedding, encode(b).embedding), 3))
        for name, (a, b) in SIMILARITY_PAIRS.items()
    ]
    return pd.DataFrame(rows, columns=["pair", "sentence A", "sentence B", "cosine similarity"])


def shown_pairs(pairs: pd.DataFrame) -> pd.DataFrame:
    """The prepared pairs as the page shows them: their names and column headers in the session's language (the
    sentences stay English: the model reads them)."""
    return pairs.assign(pair=[tr(name) for name in pairs["pair"]]).rename(
        columns={
            # Translators: a column header: the name of a prepared pair of sentences
            "pair": tr("pair"),
            "sentence A": tr("sentence A"),
            "sentence B": tr("sentence B"),
            "cosine similarity": tr("cosine similarity"),
        }
    )


def similarity_section() -> dict[str, MiniLMRun | None]:
    """The section under its header; returns the model's run on each of the two sentences typed, by its text (None
    where the text could not be read), for the class questions to read."""
    pairs = prepared_pairs()
    # the prepared pairs' own similarities, which may hold the pair asked about
    hide_similarities = answer_hidden("pretrained", "similarity")
    st.markdown(similarity_intro(pairs, hide_similarities))
    st.latex(EMBEDDING_LATEX)
    st.latex(COSINE_LATEX)
    pair_menu(
        STATE,
        ("a", "b"),
        SIMILARITY_PAIRS,
        key="pt_pair",
        help=tr("Copies a prepared pair of sentences into the two boxes below."),
    )
    sentence_a_col, sentence_b_col = st.columns(2)
    text_a = sentence_a_col.text_input(
        tr("Sentence A"),
        **STATE.widget("a"),
        help=tr("Any text up to {max_tokens} tokens; press Enter to apply.", max_tokens=MAX_TOKENS),
    )
    text_b = sentence_b_col.text_input(
        tr("Sentence B"),
        **STATE.widget("b"),
        help=tr("Any text up to {max_tokens} tokens; press Enter to apply.", max_tokens=MAX_TOKENS),
    )
    run_a, run_b = read_text(text_a), read_text(text_b)
    if hide_similarities:
        hidden_answer_card(st, tr("The cosine similarity of A and B, and those of the prepared pairs"))
    else:
        if run_a is not None and run_b is not None:
            st.metric(
                tr("cosine similarity cos(e_A, e_B)"), num(cosine_similarity(run_a.embedding, run_b.embedding), ".3f")
            )
        st.markdown(tr("The prepared pairs, all scored by the same model:"))
        st.dataframe(shown_pairs(pairs), hide_index=True, width="stretch", key="pt_pairs_table")
    return {text_a: run_a, text_b: run_b}


def similarity_intro(pairs: pd.DataFrame, hidden: bool) -> str:
    """What the embedding is and what its similarities should show; with the prepared pairs' ranges of cosine
    similarity for paraphrases and unrelated sentences unless `hidden`."""
    if hidden:
        return tr(
            "The model's real job is to turn a sentence into one vector, the **embedding** e: the average of the last "
            "block's token vectors, scaled to length 1. Sentences that mean similar things should point in similar "
            "directions, so their cosine similarity should be clearly higher than for unrelated sentences (1 would "
            "be the same direction, 0 unrelated directions)."
        )
    similarities = dict(zip(pairs["pair"], pairs["cosine similarity"]))
    paraphrase, unrelated = similarity_range(similarities, "Paraphrase"), similarity_range(similarities, "Unrelated")
    return tr(
        "The model's real job is to turn a sentence into one vector, the **embedding** e: the average of the last "
        "block's token vectors, scaled to length 1. Sentences that mean similar things should point in similar "
        "directions, so their cosine similarity should be clearly higher than for unrelated sentences: for the "
        "prepared pairs below, {paraphrase_low} to {paraphrase_high} for the paraphrases against {unrelated_low} to "
        "{unrelated_high} for the unrelated ones (1 would be the same direction, 0 unrelated directions).",
        paraphrase_low=num(paraphrase[0], ".2f"),
        paraphrase_high=num(paraphrase[1], ".2f"),
        unrelated_low=num(unrelated[0], ".2f"),
        unrelated_high=num(unrelated[1], ".2f"),
    )
