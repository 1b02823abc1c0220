"""The app in the student's language (issue #48): the catalogues are complete and current, each session speaks
its own language, and the link, the browser and the picker choose it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

import locales as i18n
from tests.apptest_helpers import open_page
from tests.i18n_helpers import english_left, page_text

ROOT = Path(__file__).resolve().parents[1]
TRANSLATED = [lang for lang in i18n.LANGUAGES if lang != i18n.ENGLISH]
# the extraction command of docs/translating.md
EXTRACT = [
    "extract", "-F", "babel.cfg", "-k", "tr", "-k", "tr_n:1,2", "-k", "marked", "--no-default-keywords",
    "--no-location", "--sort-output", "--add-comments=Translators:",
]  # fmt: skip


def catalogue(lang: str):
    with open(i18n.po_path(lang), "rb") as f:
        return read_po(f, locale=lang)


def ids(messages) -> set:
    return {m.id for m in messages if m.id}


@pytest.fixture(scope="module")
def extracted(tmp_path_factory):
    """The messages the code has now, as `pybabel extract` finds them."""
    out = tmp_path_factory.mktemp("pot") / "messages.pot"
    cmd = [sys.executable, "-m", "babel.messages.frontend", *EXTRACT, "-o", str(out), "."]
    subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)
    with open(out, "rb") as f:
        return read_po(f)


def test_the_docs_give_the_extraction_command_the_test_runs():
    docs = (ROOT / "docs" / "translating.md").read_text()
    assert "pybabel " + " ".join(EXTRACT) in docs.replace("\\\n    ", "")


def test_every_catalogue_is_current_with_the_code(extracted):
    with open(ROOT / "locales" / "messages.pot", "rb") as f:
        template = read_po(f)
    assert ids(extracted) == ids(template), "run the extraction and update of docs/translating.md"
    for lang in TRANSLATED:
        assert ids(catalogue(lang)) == ids(extracted), f"{lang}: run pybabel update (docs/translating.md)"


@pytest.mark.parametrize("lang", TRANSLATED)
def test_every_message_is_translated_and_keeps_its_placeholders(lang):
    found = catalogue(lang)
    assert len(ids(found)) > 20
    for message in found:
        if not message.id:
            continue
        assert "fuzzy" not in message.flags, message.id
        sources = message.id if isinstance(message.id, tuple) else (message.id,)
        targets = message.string if isinstance(message.string, tuple) else (message.string,)
        assert all(targets), f"{lang}: not translated: {message.id!r}"
        for target in targets:
            assert i18n.placeholders(target) == i18n.placeholders(sources[-1]), (lang, message.id, target)


def test_a_placeholder_a_translation_lost_is_caught():
    assert i18n.placeholders("{n} here now") == {"n"}
    assert i18n.placeholders("{n} aquí ahora") == {"n"} != i18n.placeholders("aquí ahora")
    assert i18n.placeholders("\\frac{a}{b}") == {"a", "b"}, "a formula's braces are kept as they are"


def test_a_stale_compiled_catalogue_is_compiled_again(tmp_path, monkeypatch):
    monkeypatch.setattr(i18n, "LOCALES", tmp_path)
    po = i18n.po_path("es")
    po.parent.mkdir(parents=True)
    po.write_text(
        'msgid ""\nmsgstr "Content-Type: text/plain; charset=utf-8\\n"\n\nmsgid "Pitfalls"\nmsgstr "Trampas"\n'
    )
    with open(i18n.compiled("es"), "rb") as f:
        import gettext

        assert gettext.GNUTranslations(f).gettext("Pitfalls") == "Trampas"
    po.write_text(po.read_text().replace("Trampas", "Errores comunes"))
    mo = i18n.compiled("es")
    import os

    os.utime(mo, (0, 0))  # older than the .po
    with open(i18n.compiled("es"), "rb") as f:
        assert gettext.GNUTranslations(f).gettext("Pitfalls") == "Errores comunes"


@pytest.mark.parametrize(
    ("locale", "lang"),
    [
        ("es-MX", "es"),
        ("es", "es"),
        ("zh-CN", "zh_Hans"),
        ("zh-Hans-SG", "zh_Hans"),
        ("zh-TW", "en"),
        ("zh-Hant", "en"),
        ("en-GB", "en"),
        ("fr-FR", "en"),
        (None, "en"),
        ("", "en"),
    ],
)
def test_the_browsers_language_picks_the_apps(locale, lang):
    assert i18n.browser_language(locale) == lang


def test_outside_a_session_every_message_is_english():
    assert i18n.language() == "en" and i18n.tr("Pitfalls") == "Pitfalls" and i18n.num(0.19, ".2f") == "0.19"


def test_each_session_speaks_its_own_language_in_one_process():
    spanish = open_page("pages/pitfalls.py", query={"lang": "es"})
    chinese = open_page("pages/pitfalls.py", query={"lang": "zh_Hans"})
    english = open_page("pages/pitfalls.py")
    assert [t.label for t in spanish.sidebar.toggle] == ["Modo presentador"]
    assert [t.label for t in chinese.sidebar.toggle] == ["演示模式"]
    assert [t.label for t in english.sidebar.toggle] == ["Presenter mode"]
    spanish.run()
    assert spanish.session_state["language"] == "es", (
        "the next run keeps it (the link: tests/browser/test_i18n_browser.py)"
    )


@pytest.mark.parametrize("bad", ["xx", "ES", "es;drop", "zh", ""])
def test_a_bad_language_in_the_link_is_english_with_a_note(bad):
    page = open_page("pages/pitfalls.py", query={"lang": bad})
    assert not page.exception
    assert [t.label for t in page.sidebar.toggle] == ["Presenter mode"]
    assert any(
        "URL parameter 'lang' should be one of en, es, zh_Hans; using en." in w.value for w in page.sidebar.warning
    )


def test_numbers_are_written_as_the_language_writes_them(monkeypatch):
    monkeypatch.setattr(i18n, "language", lambda: "es")
    assert i18n.num(0.19, ".2f") == "0,19" and i18n.num(1024, ",") == "1.024" and i18n.num(1.5e-3, "g") == "0,0015"
    assert i18n.sentence_space() == " "
    monkeypatch.setattr(i18n, "language", lambda: "zh_Hans")
    assert i18n.num(0.19, ".2f") == "0.19" and i18n.num(1024, ",") == "1,024"
    assert i18n.sentence_space() == "", "Chinese sentences follow each other without a space"


PAGES = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "pages").glob("*.py"))


@pytest.mark.parametrize("lang", TRANSLATED)
@pytest.mark.parametrize("page", PAGES)
def test_every_page_runs_in_the_language_with_no_english_sentence_of_ours(page, lang, monkeypatch):
    monkeypatch.setattr(i18n, "language", lambda: lang)  # AppTest formats a selectbox's options in the test's thread
    at = open_page(page, query={"lang": lang})
    assert not at.exception, at.exception
    assert at.session_state["language"] == lang
    assert english_left(page_text(at), lang) == []
