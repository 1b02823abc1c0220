"""Each lesson page's declared state and class questions, importable without running the page.

A page (pages/<name>.py) draws; what it declares lives here, in ui/declared/<name>.py: its `STATE` (a
ui.page_state.PageState), the cached computations its questions read their true values from, and its
`QUESTIONS` (ui.page_questions.ask_from). The page imports them from there. So a lesson deck's checker
(classroom/decks.py), the class store's checks and tests can decode a view of any page and ask its questions
with no Streamlit server and no page run.

    from ui.declared import declared_page
    questions = declared_page("causal")        # its PageQuestions: .state decodes a link, .ask builds a question
"""

from __future__ import annotations

import importlib

from ui.page_questions import PageQuestions

# every lesson page, by its name: its url path ("playground" is the app's root, "/"), which is also the name
# of its module here and of its file in pages/
PAGES = (
    "playground",
    "predict",
    "scaling",
    "causal",
    "pitfalls",
    "heads",
    "positions",
    "block",
    "induction",
    "generation",
    "pretrained",
    "pretrained_deeper",
)


def declared_page(name: str) -> PageQuestions:
    """The declared state and questions of the lesson page `name` (ValueError: no such lesson page)."""
    if name not in PAGES:
        raise ValueError(f"there is no lesson page {name!r}; the pages are {', '.join(PAGES)}")
    return importlib.import_module(f"ui.declared.{name}").QUESTIONS
