"""The grid's edits reach the sequence as the paste box's do (ui/sequence_editor._on_grid), driven directly:
AppTest cannot type into st.data_editor, so the callback is run on a plain dict standing in for the session."""

import numpy as np
import pytest

from ui import sequence_editor
from ui.sequence import default_sequence

KEY = "seq"


@pytest.fixture
def session(monkeypatch):
    state: dict = {}
    monkeypatch.setattr(sequence_editor.st, "session_state", state)
    sequence_editor.reset_sequence(KEY, default_sequence())
    return state


def edit(session, edited_rows: dict) -> str:
    """Send the grid drawn now these edits (all of them since it was drawn, as the grid reports them)."""
    seq = session[KEY]
    grid_key = f"{KEY}_grid_{seq.n}x{seq.d_k}x{seq.d_v}_r{session[f'{KEY}_rev']}"
    so_far = session.get(grid_key, {"edited_rows": {}})["edited_rows"]  # the same grid still holds its edits
    merged = {row: {**so_far.get(row, {}), **cells} for row, cells in {**so_far, **edited_rows}.items()}
    session[grid_key] = {"edited_rows": merged}
    sequence_editor._on_grid(KEY, grid_key)
    return grid_key


def test_an_accepted_cell_is_redrawn_as_the_number_it_holds(session):
    rev = session[f"{KEY}_rev"]
    edit(session, {0: {"q1": "1e3"}})
    assert session[KEY].q[0, 0] == 1000.0
    assert session[f"{KEY}_rev"] == rev + 1  # a new grid, drawn from the base below
    assert session[f"{KEY}_base"].q[0, 0] == 1000.0  # so the cell reads "1000", not "1e3"
    assert session[f"{KEY}_text_q"].splitlines()[0] == "1000 2"


def test_a_cell_typed_in_its_own_form_keeps_the_grid(session):
    rev = session[f"{KEY}_rev"]
    edit(session, {1: {"q2": "3"}})
    assert session[KEY].q[1, 1] == 3.0 and session[f"{KEY}_rev"] == rev  # no redraw: the grid keeps its focus


def test_a_notice_dealt_with_does_not_come_back_on_the_next_edit(session):
    edit(session, {0: {"token": "due north"}})
    errors, notices = session[f"{KEY}_grid_messages"]
    assert not errors and "'due north' is shown as 'due_north'" in notices[0]
    assert session[KEY].tokens[0] == "due_north"
    edit(session, {1: {"q2": "3"}})  # the next edit, on the grid redrawn with the label as it is used
    assert session[f"{KEY}_grid_messages"] == ([], [])
    assert session[KEY].tokens[0] == "due_north" and session[KEY].q[1, 1] == 3.0


def test_a_refused_cell_is_said_once_and_the_next_edit_is_taken(session):
    before = session[KEY].q.copy()
    edit(session, {1: {"q2": "3,5"}})
    errors, _ = session[f"{KEY}_grid_messages"]
    assert len(errors) == 1 and "a decimal point, not a comma: 3.5" in errors[0]
    np.testing.assert_array_equal(session[KEY].q, before)
    edit(session, {0: {"q1": "4"}})
    assert session[f"{KEY}_grid_messages"] == ([], []) and session[KEY].q[0, 0] == 4.0


def test_a_grid_edit_clears_the_label_box_notice_it_made_stale(session):
    session[f"{KEY}_tokens_notice"] = "2 labels for 4 positions: the rest are named t<i>."
    edit(session, {2: {"q1": "1"}})
    assert f"{KEY}_tokens_notice" not in session


def test_a_refused_entry_over_an_accepted_one_keeps_the_accepted_number(session):
    """5 typed into a cell (accepted, the grid kept as it is), then 'abc' into the same cell: the cell keeps
    5, and the message says so (the grid reports 'abc' in place of '5' against the frame it was drawn from)."""
    edit(session, {0: {"q1": "5"}})
    assert session[KEY].q[0, 0] == 5.0
    edit(session, {0: {"q1": "abc"}})
    errors, _ = session[f"{KEY}_grid_messages"]
    assert len(errors) == 1 and "keeps its previous value, 5." in errors[0]
    assert session[KEY].q[0, 0] == 5.0
    assert session[f"{KEY}_text_q"].splitlines()[0].split()[0] == "5"


def test_a_refused_label_over_an_accepted_one_keeps_the_accepted_label(session):
    edit(session, {0: {"token": "east"}})
    edit(session, {0: {"token": "  "}})
    _, notices = session[f"{KEY}_grid_messages"]
    assert "keeps its previous name, 'east'" in notices[0] and session[KEY].tokens[0] == "east"


def test_the_preset_picker_has_a_row_of_its_own_and_the_seed_and_load_button_share_one():
    """In the Playground's 300 px column of controls, the picker, the seed and the button in one row left the
    seed's label broken inside a word and the button's cut to "L…" (seen in Chromium at 1280 x 720)."""
    from tests.apptest_helpers import open_page

    at = open_page("pages/playground.py")

    def innermost(has):  # the smallest column holding the widget `has` picks
        holding = [c for c in at.columns if has(c)]
        return min(holding, key=lambda c: len(c.selectbox) + len(c.text_input) + len(c.button))

    def preset(c):
        return any(str(s.key).endswith("_preset") for s in c.selectbox)

    def seed(c):
        return any(str(t.key).endswith("_seed_box") for t in c.text_input)

    def load(c):
        return any(b.label == "Load" for b in c.button)

    assert seed(innermost(preset))  # the picker's own column is the column of controls: no row of its own
    assert len(innermost(seed).text_input) == 1 and not load(innermost(seed))
    assert len(innermost(load).button) == 1 and not seed(innermost(load))
