"""lessons/positions/learned.py: MiniLM's learned position table, one of its first layer's heads with and without
it, and what the page says about them."""

import numpy as np
import pytest

from attention.pretrained import MODEL_NAME, load_minilm
from lessons.positions.learned import (
    TableReading,
    cosine_by_distance,
    learned_columns_caption,
    learned_table_reading,
    minilm_head,
    minilm_pieces,
    position_similarity,
    previous_token_weight,
    ripple_peaks,
    unknown_note,
    unknown_words,
)
from lessons.positions.shuffle import minilm_shuffle_check
from lessons.positions.toy import parse_words

SENTENCE = "the dog chased the cat up the tall tree"


def test_position_similarity_by_hand():
    table = np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 3.0]])
    np.testing.assert_allclose(
        position_similarity(table, 3), [[1, 0, 0.5**0.5], [0, 1, 0.5**0.5], [0.5**0.5, 0.5**0.5, 1]]
    )


@pytest.fixture(scope="module")
def model():
    return load_minilm()


def test_minilm_pieces_are_the_tokenizers_own(model):
    words = ["the", "unbelievably", "dog", "<img", "it's"]
    pieces = minilm_pieces(model, words)
    tokens, ids = model.tokenize(" ".join(words))
    assert list(pieces.tokens) == tokens and pieces.ids.tolist() == ids
    assert pieces.word_of.tolist() == [-1, 0, 1, 1, 1, 1, 1, 2, 3, 3, 3, 4, 4, 4, -1]


def test_minilm_head_is_the_models_own_first_layer(model):
    text = SENTENCE
    _, ids = model.tokenize(text)
    run = model.run(text)
    for head in (0, 2, 11):
        np.testing.assert_allclose(minilm_head(model, ids, head).weights, run.attentions[0, head], atol=2e-5)


def test_minilm_layer_one_head_three_reads_the_previous_token_only_with_positions(model):
    ids = minilm_pieces(model, parse_words(SENTENCE)[0]).ids
    with_positions = minilm_head(model, ids, 2).weights
    without = minilm_head(model, ids, 2, positions=False).weights
    assert np.mean(np.diag(with_positions, -1)) > 0.9 and np.mean(np.diag(without, -1)) < 0.5


def test_words_the_tokenizer_cannot_read_become_one_token(model):
    words = ["你", "好", "dog", "😀"]
    assert unknown_words(model, words) == ["你", "好", "😀"]
    assert unknown_note(model, "M", ["dog", "cat"]) is None
    assert unknown_note(model, "M", words) == (
        "[UNK] is the tokenizer's unknown token: M's vocabulary has no piece for 你, 好, 😀, so each becomes [UNK] "
        "and the model cannot tell them apart."
    )
    check = minilm_shuffle_check(model, words, [1, 0, 2, 3], 2)
    assert check.same_input and check.outcome == "unchanged"
    assert not minilm_shuffle_check(model, words, [2, 0, 1, 3], 2).same_input


def test_ripple_peaks_and_cosine_by_distance_by_hand():
    # cosine 1 at distance 0, then 0.5, 0.2, 0.6, 0.1, 0.3 at distances 1..5 (a Toeplitz matrix)
    by_distance = [1.0, 0.5, 0.2, 0.6, 0.1, 0.3, 0.0, 0.0]
    n = len(by_distance)
    sims = np.array([[by_distance[abs(i - j)] for j in range(n)] for i in range(n)])
    assert cosine_by_distance(sims, 3) == pytest.approx(0.6)
    assert ripple_peaks(sims) == [3, 5]


def test_minilm_ripples_about_every_six_positions(model):
    peaks = ripple_peaks(position_similarity(model.position_embeddings, 128))
    assert peaks[:3] == [5, 12, 17] and (peaks[-1] - peaks[0]) / (len(peaks) - 1) == pytest.approx(6, abs=0.5)


def test_the_previous_token_weight_is_the_mean_of_the_diagonal_below():
    weights = np.array([[1.0, 0, 0], [0.8, 0.2, 0], [0.1, 0.3, 0.6]])
    assert previous_token_weight(weights) == pytest.approx((0.8 + 0.3) / 2)
    assert previous_token_weight(np.eye(4)) == 0.0


def test_the_learned_columns_caption_names_the_head_chosen():
    assert f"{MODEL_NAME}'s first layer, head 5 (chosen in section 2)" in learned_columns_caption(5)
    assert "head 11 (" in learned_columns_caption(11)


def reading(norm_0=1.2468, norm_rest=0.8712, far=True) -> TableReading:
    distances = (1, 2, 3, 100, 200) if far else (1, 2, 3)
    cosines = (0.714, 0.5, 0.3, 0.12, 0.061) if far else (0.714, 0.5, 0.3)
    return TableReading(distances, cosines, norm_0, norm_rest, peaks=(10, 20, 31))


def test_the_learned_table_reading_quotes_its_reading():
    paragraph = learned_table_reading(reading())
    assert "(cosine 0.71 one step apart)" in paragraph
    assert (
        reading().ripple_text() in paragraph and "(mean cosine 0.12 at 100, 0.06 at 200 positions apart)" in paragraph
    )
    assert "its vector is 1.25 long, the others about 0.87." in paragraph
    assert "(show 128 positions or more" in learned_table_reading(reading(far=False))
