"""The shared Q/K/V editor: sizes, token labels, presets, a grid and a text box per matrix.

Canonical state: st.session_state[key] is a TokenSequence. Grids are given a *base* snapshot
(st.session_state[key + "_base"]) and a widget key with the shape and a revision counter; the
revision is bumped only on a deliberate reset (preset, pasted text, resize, URL), so a grid's
own edits are never fed back as its input and never disappear.
"""

from __future__ import annotations

import streamlit as st

from attention.sequence import TokenSequence
from lessons.examples import compass, dominant_key, identical_keys, random_example
from locales import marked, tr
from ui.after_charts import after_charts as _after_charts
from ui.number_box import number_box
from ui.safe_text import escape_markdown
from ui.sequence import (
    COMMA_RULE,
    DECIMAL_COMMA_RULE,
    MAX_D,
    MAX_N,
    MAX_TOKEN_CHARS,
    decimal_comma,
    format_matrix,
    format_number,
    parse_matrix,
    parse_number,
    parse_tokens,
)
from ui.sequence_reset import reset_sequence
from ui.shared_state import is_presenting
from ui.streamlit_internals.imports import pandas

MATRIX_HELP = {  # shown translated: tr(MATRIX_HELP[m])
    "q": marked("Queries: what each position is looking for. One row per position, one column per dimension (d_k)."),
    "k": marked("Keys: what each position offers to be found by. Same width as the queries (d_k)."),
    "v": marked("Values: what each position hands over when it is attended to (d_v columns)."),
}
# The preset picker's options: its values (the session's state) stay these English names, shown translated.
# Translators: the names of the example presets in the editor's picker ("Random": random vectors)
PRESETS = (marked("Hand-built (compass)"), marked("Identical keys"), marked("One dominant key"), marked("Random"))


def _ensure_widget_state(key: str) -> TokenSequence:
    """Fill in any widget value that was dropped (e.g. after a page switch) from the canonical state,
    and redraw everything if another page (or a test) replaced the sequence since the editor last saw it."""
    seq = st.session_state[key]
    if st.session_state.get(f"{key}_synced") is not seq:
        reset_sequence(key, seq)
    st.session_state.setdefault(f"{key}_base", seq)
    st.session_state.setdefault(f"{key}_rev", 0)
    defaults = {
        f"{key}_n_in": seq.n,
        f"{key}_dk_in": seq.d_k,
        f"{key}_dv_in": seq.d_v,
        f"{key}_tokens_in": " ".join(seq.tokens),
        **{f"{key}_text_{m}": format_matrix(seq.matrix(m), comma=decimal_comma()) for m in "qkv"},
    }
    for k, v in defaults.items():
        st.session_state.setdefault(k, v)
    comma = decimal_comma()
    if st.session_state.setdefault(f"{key}_comma", comma) != comma:
        # The language changed to one that writes numbers otherwise: the grid and every text box not holding a
        # refused text are written again in its style (a refused text stays as typed, with its message).
        st.session_state[f"{key}_comma"] = comma
        st.session_state[f"{key}_rev"] += 1
        for m in "qkv":
            if not st.session_state.get(f"{key}_err_{m}"):
                st.session_state[f"{key}_text_{m}"] = format_matrix(seq.matrix(m), comma=comma)
    return seq


def _on_resize(key: str) -> None:
    seq = st.session_state[key]
    n, d_k, d_v = (int(st.session_state[f"{key}_{s}_in"]) for s in ("n", "dk", "dv"))
    # What a smaller size cuts is kept aside and comes back when the size grows again.
    cut = st.session_state.get(f"{key}_cut")
    whole = seq.over(cut) if isinstance(cut, TokenSequence) else seq
    st.session_state[f"{key}_cut"] = whole
    reset_sequence(key, whole.resized(n, d_k, d_v), keep_cut=True)


def _on_tokens(key: str) -> None:
    seq = st.session_state[key]
    tokens, notice = parse_tokens(st.session_state[f"{key}_tokens_in"], seq.n)
    reset_sequence(key, TokenSequence(tokens, seq.q, seq.k, seq.v), keep_token_text=True, keep_cut=True)
    if notice:
        st.session_state[f"{key}_tokens_notice"] = notice


def _on_text(key: str, m: str) -> None:
    seq = st.session_state[key]
    cols = seq.d_v if m == "v" else seq.d_k
    try:
        value = parse_matrix(st.session_state[f"{key}_text_{m}"], rows=seq.n, cols=cols, name=m.upper())
    except ValueError as err:
        st.session_state[f"{key}_err_{m}"] = tr("{error}. The previous {matrix} is kept.", error=err, matrix=m.upper())
        return
    text = st.session_state[f"{key}_text_{m}"]
    reset_sequence(key, seq.with_matrix(m, value), keep_cut=True)
    st.session_state[f"{key}_text_{m}"] = text  # keep the student's own layout of what they pasted


def _on_preset(key: str) -> None:
    seq = st.session_state[key]
    choice = st.session_state[f"{key}_preset"]
    seed = int(st.session_state.get(f"{key}_seed", 0))
    n, d_k, d_v = seq.n, seq.d_k, seq.d_v
    example = {
        "Hand-built (compass)": compass,
        "Identical keys": lambda: identical_keys(n, d_k, d_v, seed),
        "One dominant key": lambda: dominant_key(n, d_k, d_v, seed),
        "Random": lambda: random_example(n, d_k, d_v, seed),
    }[choice]()
    reset_sequence(key, example.seq)
    st.session_state[f"{key}_preset_note"] = example.description


def size_controls(key: str) -> None:
    """Number boxes for n, d_k, d_v (changing them keeps the values that still fit)."""
    c1, c2, c3 = st.columns(3)
    resize = {"min_value": 1, "on_change": _on_resize, "args": (key,)}
    number_box(
        c1,
        tr("positions n"),
        key=f"{key}_n_in",
        max_value=MAX_N,
        **resize,
        help=tr(
            "How many tokens in the sequence. Values that still fit are kept; rows a smaller size cut come back "
            "when you make it larger again."
        ),
    )
    number_box(
        c2, "d_k", key=f"{key}_dk_in", max_value=MAX_D, **resize, help=tr("Length of each query and key vector.")
    )
    number_box(
        c3,
        "d_v",
        key=f"{key}_dv_in",
        max_value=MAX_D,
        **resize,
        help=tr("Length of each value vector and each output."),
    )


def preset_controls(key: str) -> None:
    """A preset picker with a seed, and a button that loads it. The picker has a row of its own: in a column of
    controls 300 px wide (the Playground's at 1280 px with the sidebar open) a row of three leaves the seed's
    label and the button's too little room ("Prese / t seed", "L…")."""
    st.selectbox(
        tr("Preset"),
        PRESETS,
        key=f"{key}_preset",
        format_func={preset: tr(preset) for preset in PRESETS}.__getitem__,  # translated now, in this run's language
        help=tr("Start from a known example: the hand-built one can be predicted on paper."),
    )
    c2, c3 = st.columns(2, vertical_alignment="bottom")
    number_box(
        c2,
        tr("Preset seed"),
        key=f"{key}_seed",
        min_value=0,
        max_value=10_000,
        value=0,
        help=tr("Seeds the random presets."),
    )
    # Translators: a button that loads the chosen preset example into the editor
    c3.button(tr("Load"), key=f"{key}_load", on_click=_on_preset, args=(key,), width="stretch")
    note = st.session_state.get(f"{key}_preset_note")
    if note:
        st.caption(note)


GRID_ROW_PX = 35  # the height of a row of Streamlit's grid, and of its header
GRID_MAX_PX = 400  # the tallest Streamlit draws a grid without a height of its own (25rem); it scrolls inside


def _grid_columns(seq: TokenSequence) -> dict[str, list[str]]:
    return {m: [f"{m}{j + 1}" for j in range(seq.matrix(m).shape[1])] for m in "qkv"}


def _grid(key: str, seq: TokenSequence) -> None:
    """Q, K and V side by side in one editable grid, one row per position (token labels editable too).

    Every cell is text, read by the same parser as the paste box (`parse_number`), so `1e3` is 1000 and
    `−1` is -1; a cell that is not a number is refused with a message naming it, and shows its previous
    value again; an accepted cell shows the number it holds (1000 after `1e3`). Edits reach the canonical
    state in `_on_grid`; the text boxes follow the grid.
    """
    pd = pandas()  # the Playground's first run draws no grid

    base: TokenSequence = st.session_state[f"{key}_base"]
    columns = _grid_columns(base)
    frame = pd.DataFrame(
        {
            c: [format_number(x, comma=decimal_comma()) for x in base.matrix(m)[:, j]]
            for m in "qkv"
            for j, c in enumerate(columns[m])
        }
    )
    frame.insert(0, "token", list(base.tokens))
    cell = 72 if is_presenting() else 54  # px; presenter mode's larger text needs wider columns
    helps = {m: tr(text) for m, text in MATRIX_HELP.items()}
    config = {
        c: st.column_config.TextColumn(c, width=cell, help=helps[c[0]]) for cols in columns.values() for c in cols
    }
    config["token"] = st.column_config.TextColumn(
        # Translators: the header of the grid's column of token labels (the column's data keeps the name "token")
        tr("token"),
        width=cell + 22,
        max_chars=MAX_TOKEN_CHARS,
        help=tr("The label of this position (only a name)."),
    )
    grid_key = f"{key}_grid_{seq.n}x{seq.d_k}x{seq.d_v}_r{st.session_state[f'{key}_rev']}"
    st.data_editor(
        frame,
        key=grid_key,
        hide_index=True,
        num_rows="fixed",
        column_config=config,
        width="content",
        on_change=_on_grid,
        args=(key, grid_key),
    )


def _on_grid(key: str, grid_key: str) -> None:
    """Apply the grid's edits to the sequence in use. The grid reports every edit since it was drawn, the
    earlier ones already applied: they are applied again (the same values), and a cell typed over is read
    against the value it holds now, so a refused entry keeps the number accepted before it, not the drawn one."""
    base: TokenSequence = st.session_state[f"{key}_base"]
    current: TokenSequence = st.session_state.get(key, base)
    if (current.n, current.d_k, current.d_v) != (base.n, base.d_k, base.d_v):
        current = base  # the grid was drawn for another shape (its key names the shape): it is redrawn
    edits = st.session_state[grid_key].get("edited_rows", {})
    tokens, matrices = list(current.tokens), {m: current.matrix(m).copy() for m in "qkv"}
    errors, notices, reshaped = [], [], False
    for row, cells in sorted((int(r), c) for r, c in edits.items()):
        for column, value in cells.items():
            text = "" if value is None else str(value)
            if column == "token":
                tokens[row] = _grid_label(value, tokens[row], row, notices)
                reshaped |= tokens[row] != text
                continue
            m, j = column[0], int(column[1:]) - 1
            previous = format_number(matrices[m][row, j], comma=decimal_comma())
            where = tr(
                "{matrix}, row {row} ('{token}'), column {column}",
                matrix=m.upper(),
                row=row + 1,
                token=current.tokens[row],
                column=column,
            )
            try:
                matrices[m][row, j] = parse_number(text, where)
            except ValueError as err:
                errors.append(tr("{error}. The cell keeps its previous value, {value}.", error=err, value=previous))
                continue
            reshaped |= format_number(matrices[m][row, j], comma=decimal_comma()) != text.strip()  # 1e3: 1000
    seq = TokenSequence(tuple(tokens), matrices["q"], matrices["k"], matrices["v"])
    if errors or reshaped:
        # Redraw the grid from the values in use, so every cell shows the number the maths holds (1000 for
        # 1e3, the old value of a refused cell) and the edits the messages below are about are not replayed
        # (the grid reports all its edits since it was drawn): a message is shown once, for the edit it is about.
        reset_sequence(key, seq, keep_cut=True)
    else:
        st.session_state[key] = st.session_state[f"{key}_synced"] = seq
        st.session_state[f"{key}_tokens_in"] = " ".join(seq.tokens)
        for m in "qkv":
            st.session_state[f"{key}_text_{m}"] = format_matrix(seq.matrix(m), comma=decimal_comma())  # they follow
            st.session_state.pop(f"{key}_err_{m}", None)
    st.session_state.pop(f"{key}_tokens_notice", None)  # it was about the label box, which now shows the grid's
    st.session_state[f"{key}_grid_messages"] = (errors, notices)


def _grid_label(value, previous: str, row: int, notices: list[str]) -> str:
    """A label typed into the grid: spaces become '_' (labels are space-separated words), empty keeps the old."""
    text = "" if value is None else str(value)
    if not text.strip():
        notices.append(tr("Row {row}: an empty label keeps its previous name, '{label}'.", row=row + 1, label=previous))
        return previous
    label = "_".join(text.split())
    if label != text:
        notices.append(
            tr(
                "Row {row}: labels are single words, so '{typed}' is shown as '{label}'.",
                row=row + 1,
                typed=text,
                label=label,
            )
        )
    return label


def _text_box(key: str, m: str) -> None:
    seq = st.session_state[key]
    cols = seq.d_v if m == "v" else seq.d_k
    st.text_area(
        tr("{matrix} as text", matrix=m.upper()),
        key=f"{key}_text_{m}",
        on_change=_on_text,
        args=(key, m),
        height=110,
        help=tr(
            "Paste {rows} rows of {cols} numbers: rows separated by new lines or ';', "
            "numbers by spaces (or a comma and a space), e.g. `1 0; 0 1` or `1, 0; 0, 1`. "
            "Press Ctrl+Enter or click away to apply.",
            rows=seq.n,
            cols=cols,
        ),
    )


def editor_box(label: str | None = None):
    """Where a lesson page puts its editor: a bordered box, or in presenter mode an expander (one click
    away), so the page's figures come first on a projector. `label`: the expander's, already translated
    (by default "Edit the vectors")."""
    if is_presenting():
        return st.expander(tr("Edit the vectors") if label is None else label, icon=":material/edit:")
    return st.container(border=True)


def sequence_editor(key: str, *, presets: bool = True, sizes: bool = True) -> TokenSequence:
    """Draw the whole editor for the sequence at st.session_state[key]; return the current sequence."""
    sequence_controls(key, presets=presets, sizes=sizes)
    return sequence_grid(key)


def sequence_controls(key: str, *, presets: bool = True, sizes: bool = True) -> None:
    """The editor's preset picker and size boxes (a page may place them apart from the grid)."""
    _ensure_widget_state(key)
    if presets:
        preset_controls(key)
    if sizes:
        size_controls(key)


def sequence_grid(key: str, *, after_charts: bool = False) -> TokenSequence:
    """The editor's grid, token labels and text boxes, with their messages; returns the current sequence.
    With `after_charts`, a session's first run of the page in a browser draws a placeholder in the grid's place,
    and the grid once the page's charts are on screen (ui.after_charts): its code no longer holds them back."""
    _ensure_widget_state(key)
    seq = st.session_state[key]
    st.markdown(
        tr(
            "**Q** ({n} × {d_k}), **K** ({n} × {d_k}) and **V** ({n} × {d_v}): "
            "one row per position. Double-click a cell (or press Enter on it) to edit it; "
            "a decimal point is '.', never ','.",
            n=seq.n,
            d_k=seq.d_k,
            d_v=seq.d_v,
        )
    )
    # Room for the grid's toolbar, which Streamlit draws over whatever is above the grid (44 px up from its top)
    # while the grid is hovered or has focus: with the two gaps around it, the sentence's end stays readable.
    st.space(16)
    if not after_charts or _after_charts(
        f"{key}_grid",
        waiting=tr("The grid of Q, K and V is on its way: it comes just after the heatmap."),
        # the grid's rows, its header and its border, up to the 400 px (25rem) Streamlit starts a grid at
        height=min(GRID_ROW_PX * (seq.n + 1) + 2, GRID_MAX_PX),
    ):
        _grid(key, seq)
    errors, notices = st.session_state.get(f"{key}_grid_messages", ([], []))
    for message in errors:
        st.error(escape_markdown(message), icon=":material/pin:")  # it quotes what was typed
    for message in notices:
        st.info(escape_markdown(message))
    seq = st.session_state[key]
    st.text_input(
        tr("Token labels"),
        key=f"{key}_tokens_in",
        on_change=_on_tokens,
        args=(key,),
        help=tr(
            "One label per position, separated by spaces. Labels are only names; the vectors "
            "are what attention computes with."
        ),
    )
    notice = st.session_state.get(f"{key}_tokens_notice")
    if notice:
        st.info(escape_markdown(notice))  # it may quote a label
    with st.expander(tr("Paste Q, K or V as text"), expanded=False):
        if decimal_comma():
            # Translators: only in a language that writes a decimal comma (Spanish); {comma_rule} is the sentence
            # "The decimal mark is ',' (or '.'): numbers are separated by spaces, never by commas."
            rule = tr(
                "Rows by new lines or ';', numbers by spaces. {comma_rule} So `3,5` is three and a half here, as in "
                "the grid.",
                comma_rule=tr(DECIMAL_COMMA_RULE),
            )
        else:
            # Translators: {comma_rule} is the sentence "A decimal point is '.', never ','; in the paste box a comma
            # between numbers needs a space after it." (translated on its own)
            rule = tr(
                "Rows by new lines or ';', numbers by spaces. {comma_rule} So `3,5` is refused here, as in the grid.",
                comma_rule=tr(COMMA_RULE),
            )
        st.caption(rule)
        for m, col in zip("qkv", st.columns(3)):
            with col:
                _text_box(key, m)
    for m in "qkv":  # an error must be seen even with the expander closed
        err = st.session_state.get(f"{key}_err_{m}")
        if err:
            st.error(escape_markdown(err))  # it quotes what was typed
    return seq
