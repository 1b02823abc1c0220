"""Setting the shared token sequence anew, without drawing anything: what the editor (ui/sequence_editor.py)
and the declared page state (ui/page_state.py) both set.

Canonical state: st.session_state[key] is a TokenSequence. The editor's grids are given a *base* snapshot
(st.session_state[key + "_base"]) and a widget key with the shape and a revision counter; `reset_sequence`
bumps the revision (a deliberate reset: preset, pasted text, resize, link), so a grid's own edits are never
fed back as its input.
"""

from __future__ import annotations

import streamlit as st

from attention.sequence import TokenSequence
from ui.sequence import decimal_comma, format_matrix


def reset_sequence(key: str, seq: TokenSequence, *, keep_token_text: bool = False, keep_cut: bool = False) -> None:
    """Make `seq` the canonical state and redraw every editor from it (call before widgets are drawn,
    or from a callback). Unless `keep_cut`, forget what earlier size changes cut off: a new example."""
    if not keep_cut:
        st.session_state.pop(f"{key}_cut", None)
    st.session_state.pop(f"{key}_grid_messages", None)
    st.session_state[key] = seq
    st.session_state[f"{key}_synced"] = seq
    st.session_state[f"{key}_base"] = seq
    st.session_state[f"{key}_rev"] = st.session_state.get(f"{key}_rev", 0) + 1
    comma = st.session_state[f"{key}_comma"] = decimal_comma()  # the texts are written as the language writes
    for m in "qkv":
        st.session_state[f"{key}_text_{m}"] = format_matrix(seq.matrix(m), comma=comma)
        st.session_state.pop(f"{key}_err_{m}", None)
    st.session_state[f"{key}_n_in"], st.session_state[f"{key}_dk_in"], st.session_state[f"{key}_dv_in"] = (
        seq.n,
        seq.d_k,
        seq.d_v,
    )
    if not keep_token_text:
        st.session_state[f"{key}_tokens_in"] = " ".join(seq.tokens)
        st.session_state.pop(f"{key}_tokens_notice", None)
