"""User text inside Streamlit markdown (messages, widget labels): shown as typed, never as markup.

st.error, st.warning, st.info and widget labels interpret markdown: a token label `![x](x)` would
become an <img>, `:red[...]` coloured text, `$...$` maths. Pure Python (no streamlit).
"""

from __future__ import annotations

import re

# emphasis, code, links and images, HTML, entities, strikethrough, maths, tables, and shortcodes: both
# colons of `:smile:`, and the slash of `:material/home:` (escaped colons alone do not stop an icon)
_ALWAYS = re.compile(r"([\\`*\[\]<>&~$|:/])")
_UNDERSCORE = re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")  # an intraword `_` (d_model) never emphasises


# Streamlit's markdown turns bare addresses into links (GFM's autolink literals: "http://…", "www.…",
# "name@host.tld") after parsing, so backslashes cannot stop them; an invisible word joiner (U+2060) inside
# the pattern does, and the text reads the same.
_AUTOLINK = re.compile(r"(?i)(?<=[a-z])(?=://)|(?<![\w.])(www)(?=\.)|(@)")
WORD_JOINER = "\u2060"


def escape_markdown(text: str) -> str:
    """Backslash-escape every character that could make `text` render as anything but itself (and keep an
    address from becoming a link)."""
    text = _AUTOLINK.sub(lambda m: (m.group(1) or m.group(2) or "") + WORD_JOINER, str(text))
    text = _ALWAYS.sub(r"\\\1", text)
    return _UNDERSCORE.sub(r"\\_", text)
