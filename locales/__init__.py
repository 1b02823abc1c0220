"""Every sentence of ours in the student's language: GNU gettext catalogues (`locales/<lang>/LC_MESSAGES/messages.po`,
beside this file, managed with Babel's `pybabel`: docs/translating.md), chosen per session, never per process.

    from locales import num, tr, tr_n
    st.markdown(tr("Every row of weights sums to 1."))
    st.caption(tr("{n} here now", n=count))                    # a computed value keeps its named placeholder
    st.caption(tr_n("{n} student", "{n} students", count, n=count))
    tr("about {weight} of its weight", weight=num(0.19, ".2f"))  # 0.19 in English, 0,19 in Spanish

`tr` translates into the language of the session running now (`language()`: the link's `lang=`, else the sidebar's
choice, else the browser's language, else English); outside a Streamlit run (the core's tests, a command line) it is
English. The compiled catalogues (`.mo`) are built from the `.po` files when the app starts (`compiled`) or by
`python -m locales compile` (the container image's build): never by hand, never committed.

It imports nothing of the app's and never Streamlit itself (the lessons and figures use it, and the core's and
lessons' tests run without Streamlit): it reads the session's language through Streamlit only while a Streamlit
script runs.
"""

from __future__ import annotations

import functools
import gettext
import os
import string
import sys
import tempfile
import threading
from pathlib import Path

LOCALES = Path(__file__).resolve().parent
DOMAIN = "messages"
ENGLISH = "en"
LANGUAGES = {"en": "English", "es": "Español", "zh_Hans": "简体中文"}  # each in its own words, as the picker shows it
LANGUAGE_KEY = "language"  # the session's language (ui/shared_state.py: SHARED, the link's lang=)
DECIMAL_COMMA = {"es"}  # the languages that write 0,19 and 1.024
_compile_lock = threading.Lock()


def marked(message: str) -> str:
    """`message`, marked for the catalogue and translated where it is shown (`tr(constant)`): for text defined at
    import, before any session has a language."""
    return message


def language() -> str:
    """The language of the session running now; English outside a Streamlit run."""
    running = sys.modules.get("streamlit.runtime.scriptrunner_utils.script_run_context")
    ctx = running.get_script_run_ctx(suppress_warning=True) if running is not None else None
    if ctx is None:
        return ENGLISH
    try:  # one read of the session's state, not two: tr() asks for the language hundreds of times a run
        found = ctx.session_state[LANGUAGE_KEY]
    except KeyError:
        return ENGLISH
    return found if found in LANGUAGES else ENGLISH


def browser_language(locale: str | None) -> str:
    """The app's language for a browser's `navigator.language` ("es-MX" -> "es", "zh-CN" -> "zh_Hans"; a
    Traditional Chinese locale, which this app does not have, and anything else -> English)."""
    parts = str(locale or "").replace("_", "-").lower().split("-")
    if parts[0] == "es":
        return "es"
    if parts[0] == "zh" and not ({"hant", "tw", "hk", "mo"} & set(parts[1:])):
        return "zh_Hans"
    return ENGLISH


def tr(message: str, /, **values) -> str:
    """`message` in the session's language, its `{named}` placeholders filled with `values` (numbers already
    formatted with `num`)."""
    text = catalogue(language()).gettext(message)
    return text.format(**values) if values else text


def tr_n(singular: str, plural: str, n: int, /, **values) -> str:
    """The form of a message for the count `n`, in the session's language (Spanish has two forms, Chinese one)."""
    text = catalogue(language()).ngettext(singular, plural, n)
    return text.format(**values) if values else text


NO_SPACE_BETWEEN_SENTENCES = {"zh_Hans"}  # the languages whose sentences follow each other without a space


def sentence_space() -> str:
    """What goes between two sentences joined into one text, in the session's language ("" in Chinese)."""
    return "" if language() in NO_SPACE_BETWEEN_SENTENCES else " "


def num(value: float, spec: str = "g") -> str:
    """`value` formatted with the Python format `spec`, written as the session's language writes numbers: a decimal
    comma and a point between thousands in Spanish ("0,19", "1.024"), as in English otherwise."""
    text = format(value, spec)
    if language() in DECIMAL_COMMA:
        text = text.translate({ord("."): ",", ord(","): "."})
    return text


def placeholders(message: str) -> set[str]:
    """The named placeholders of a message (what a translation must keep); none for a message braces cannot parse
    as placeholders (a formula's own braces)."""
    try:
        return {field for _, field, _, _ in string.Formatter().parse(message) if field}
    except ValueError:
        return set()


@functools.cache
def catalogue(lang: str) -> gettext.NullTranslations:
    """The compiled catalogue of `lang`, read once per process (English: the messages as written)."""
    if lang == ENGLISH or lang not in LANGUAGES:
        return gettext.NullTranslations()
    with open(compiled(lang), "rb") as f:
        return gettext.GNUTranslations(f)


def po_path(lang: str) -> Path:
    return LOCALES / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


def compiled(lang: str) -> Path:
    """The `.mo` of `lang`, compiled from its `.po` when it is missing or older (written whole, then renamed: two
    workers starting together each write a whole file)."""
    po, mo = po_path(lang), po_path(lang).with_suffix(".mo")
    with _compile_lock:
        if not mo.exists() or mo.stat().st_mtime < po.stat().st_mtime:
            from babel.messages.mofile import write_mo
            from babel.messages.pofile import read_po

            with open(po, "rb") as f:
                read = read_po(f, locale=lang, domain=DOMAIN)
            fd, temporary = tempfile.mkstemp(dir=mo.parent, suffix=".mo.tmp")
            with os.fdopen(fd, "wb") as out:
                write_mo(out, read)
            os.replace(temporary, mo)
    return mo


def main(argv: list[str]) -> int:
    """`python -m locales compile`: compile every language's catalogue (the container image's build)."""
    if argv != ["compile"]:
        print("usage: python -m locales compile", file=sys.stderr)
        return 2
    for lang in LANGUAGES:
        if lang != ENGLISH:
            print(compiled(lang))
    return 0
