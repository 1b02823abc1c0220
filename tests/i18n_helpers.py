"""Finding English sentences of ours left on a page shown in another language (issue #48), for the AppTest pages
(tests/test_i18n.py) and Chromium (tests/browser/test_i18n_browser.py) alike.

A message of the catalogue is found on a page by its longest run of words between placeholders and Markdown
marks (`**`, backticks, `$...$`): a run of at least MIN_WORDS words, so that a token, a formula, a short label
shared by both languages ("softmax") or Streamlit's own strings are never taken for a sentence of ours.
"""

from __future__ import annotations

import functools
import re

from babel.messages.pofile import read_po

import locales
from tests.apptest_helpers import every_text

MIN_WORDS = 4
_SPLIT = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*(?:![rsa])?(?::[^{}]*)?\}|\*\*|\*|`[^`]*`|\$[^$]*\$|\[|\]\([^)]*\)|\n")


@functools.cache
def english_runs(lang: str) -> tuple[tuple[str, str], ...]:
    """(run, msgid) for each message of `lang`'s catalogue that is translated differently: the run of English words
    that shows the message was left untranslated."""
    with open(locales.po_path(lang), "rb") as f:
        catalogue = read_po(f, locale=lang)
    out = []
    for m in catalogue:
        if not m.id:
            continue
        msgid = m.id if isinstance(m.id, str) else m.id[0]
        string = m.string if isinstance(m.string, str) else (m.string[-1] if m.string else "")
        runs = sorted((" ".join(p.split()) for p in _SPLIT.split(msgid)), key=len, reverse=True)
        run = runs[0] if runs else ""
        if len(run.split()) >= MIN_WORDS and run not in " ".join(string.split()):
            out.append((run, msgid))
    return tuple(out)


def english_left(text: str, lang: str) -> list[str]:
    """The messages of ours whose English is in `text` (a page's text in `lang`)."""
    flat = " ".join(text.replace("**", "").replace("`", "").split())
    return sorted({msgid for run, msgid in english_runs(lang) if run in flat})


def page_text(at) -> str:
    """What a student reads on a page under AppTest: its text and the labels and help of its controls."""
    parts = [every_text(at)]
    for kind in ("button", "text_input", "text_area", "selectbox", "radio", "checkbox", "toggle", "expander"):
        for e in at.get(kind):
            parts += [str(getattr(e, name, "") or "") for name in ("label", "help", "placeholder")]
            parts += [str(o) for o in getattr(e, "options", []) or []]
    return "\n".join(parts)
