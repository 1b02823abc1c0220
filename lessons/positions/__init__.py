"""Where is position? (pages/positions.py) Order is invisible to attention; four ways to add it; masks beyond causal.

One module per idea, each holding its prose (Markdown, as the page shows it: a number in a sentence is computed and
passed in, never typed; a word the student typed arrives already escaped), its equation (the *_LATEX constants;
those of the mechanism itself are in attention.positions) and its code:

    toy         the example every section runs: words, a vector per word, one seeded head, `attend` by each method
    shuffle     1 · order is invisible: the shuffle check, on the toy head and on MiniLM's first layer
    learned     2 · learned absolute: MiniLM's own position table, and one of its heads with and without it
    sinusoidal  2 · sinusoidal: a shift by k positions is one rotation, the same for every position
    rope        2 · RoPE: rotating q and k makes a score depend on the offset only
    alibi       2 · ALiBi: a penalty per distance, a slope per head, and the window each slope makes
    masks       3 · masks beyond causal: a sliding window's reach over layers; a padded batch

The toy the page runs: each word becomes a vector drawn from a generator keyed by its text (the same word
always gets the same vector, wherever it stands), and one attention head with seeded W_Q, W_K, W_V reads
them. Without position information, shuffling the words only shuffles the outputs:

    Attention(P Q, P K, P V) = softmax(P Q Kᵀ Pᵀ / √d) P V = P softmax(Q Kᵀ / √d) Pᵀ P V = P Attention(Q, K, V)

for any permutation matrix P (Pᵀ P = I, and a row-wise softmax commutes with permuting rows and columns).
The check undoes the shuffle on the outputs and measures the largest difference: 0, or rounding (the sums
run in another order), without positions; far from 0 with any of the four methods.

The learned absolute table is all-MiniLM-L6-v2's own (attention.pretrained): its first layer's heads read
LN(E_word + E_pos + E_type) and can be run with and without E_pos.

Import the idea's module (`from lessons.positions import shuffle`); this package re-exports nothing.
"""
