"""The inputs of the two pages that run the real model: a menu that copies an example text into the page's text
box, a menu that copies a prepared pair of sentences into its two boxes, and the strip of tokens the model read.

Each menu is a selectbox that goes back to its placeholder after a pick ("Load an example…"), so that the same
entry can be picked again after the text was edited.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import streamlit as st

from locales import tr
from ui.page_state import PageState


def _load(state: PageState, names: Sequence[str], entries: Mapping[str, Sequence[str]], key: str) -> None:
    texts = entries.get(st.session_state.get(key))
    if texts:
        for name, text in zip(names, texts):
            state.set(name, text)
    st.session_state[key] = None  # the box is a menu: it goes back to its placeholder


def _menu(
    label: str,
    placeholder: str,
    state: PageState,
    names: Sequence[str],
    entries: Mapping[str, Sequence[str]],
    key: str,
    help: str,
) -> None:
    """A menu of `entries` (label -> one text per name in `names`), showing `placeholder` ("<label>…") until a
    pick, which is copied into `state`'s `names`. An entry's label is shown through `tr`: a marked label in the
    session's language, an example sentence (which the model reads in English, and which no catalogue holds) as
    it is."""
    st.selectbox(
        label,
        list(entries),
        index=None,
        placeholder=placeholder,
        format_func=tr,
        key=key,
        on_change=_load,
        args=(state, names, entries, key),
        help=help,
    )


def example_menu(state: PageState, name: str, examples: Mapping[str, str], *, key: str, help: str) -> None:
    """The "Load an example" menu of `examples` (label -> text): a pick is copied into `state`'s `name`."""
    _menu(
        tr("Load an example"),
        tr("Load an example…"),
        state,
        (name,),
        {label: (text,) for label, text in examples.items()},
        key,
        help,
    )


def pair_menu(
    state: PageState, names: tuple[str, str], pairs: Mapping[str, tuple[str, str]], *, key: str, help: str
) -> None:
    """The "Load a pair" menu of `pairs` (label -> two sentences): a pick is copied into `state`'s two `names`."""
    _menu(tr("Load a pair"), tr("Load a pair…"), state, names, pairs, key, help)


TOKEN_STRIP_CSS = (
    "<style>.tokens{display:flex;flex-wrap:wrap;gap:.25rem}.tokens span{border:1px solid #d0d7e2;"
    "border-radius:.3rem;padding:.1rem .35rem;text-align:center;line-height:1.15}"
    ".tokens small{display:block;color:#6b7280;font-size:.7em}</style>"
)


def tokens_strip(tokens: Sequence[str], ids: Sequence[int]) -> str:
    """Every token with its position and id, as boxes that wrap onto new lines (256 tokens stay readable
    and nothing runs off the side). HTML without any script; the tokens are escaped (they are user text)."""
    titles = [html.escape(tr("position {position}, id {id}", position=i, id=j)) for i, j in enumerate(ids)]
    boxes = "".join(
        f"<span title='{title}'>{html.escape(tok)}<small>{i} · {j}</small></span>"
        for i, (tok, j, title) in enumerate(zip(tokens, ids, titles))
    )
    return f"{TOKEN_STRIP_CSS}<div class='tokens'>{boxes}</div>"
