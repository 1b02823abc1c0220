"""The lesson deck format (classroom/decks.py): a file from a stranger is read, checked against the pages' declared
states and questions, and refused with one sentence per problem; what the editor writes reads back the same."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from classroom.decks import MAX_BYTES, MAX_STEPS, DeckError, Step, parse_deck, shipped, to_toml
from ui.declared import declared_page

ROOT = Path(__file__).resolve().parents[1]
HEAD = 'title = "A lesson"\nlevel = "Anyone"\nminutes = 10\n'


def deck(*steps: str, head: str = HEAD) -> str:
    return head + "".join(f"\n[[step]]\n{step}\n" for step in steps)


GOOD = deck(
    'title = "Masking"\nview = "/causal?t=2"\nnotes = "Say it."\nquestion = { kind = "weight", query = 2, key = 1 }',
    'title = "Heads"\nview = "/heads?n_heads=2&d_model=8"',
)


def problems(text: str | bytes) -> list[str]:
    with pytest.raises(DeckError) as caught:
        parse_deck(text, declared_page)
    return caught.value.problems


def test_a_good_deck_reads_as_its_steps():
    read = parse_deck(GOOD, declared_page)
    assert (read.title, read.level, read.minutes, read.language) == ("A lesson", "Anyone", 10, "en")
    assert read.steps[0] == Step("Masking", "/causal?t=2", "Say it.", "", {"kind": "weight", "query": 2, "key": 1})
    assert [s.page for s in read.steps] == ["causal", "heads"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("title = ", "the file is not valid TOML"),
        (b"\xff\xfe", "not UTF-8"),
        (HEAD, "at least one [[step]]"),
        (deck('title = "x"\nview = "/"', head=HEAD.replace("10", "0")), "minutes must be a whole number from 1"),
        (deck('title = "x"\nview = "/"', head=HEAD + 'colour = "red"\n'), "unknown field 'colour' at the top"),
        (deck('title = "x"\nview = "/"', head=HEAD + 'language = "fr"\n'), "language must be one of en, es, zh_Hans"),
        (deck('view = "/"'), "step 1's title must be text of 1 to 80 characters"),
        (deck('title = "x"\nview = "/nowhere"'), "step 1 (x)'s view: there is no lesson page 'nowhere'"),
        (deck('title = "x"\nview = "https://example.com/"'), "a view is a link within the app"),
        (deck('title = "x"\nview = "//example.com/"'), "a view is a link within the app"),
        (deck('title = "x"\nview = "/causal/../class"'), "must be a page of the app and its parameters"),
        (deck('title = "x"\nview = "/causal?t=1&t=2"'), "gives 't' more than once"),
        (deck('title = "x"\nview = "/causal?present=1"'), "holds 'present': presentation and language"),
        (deck('title = "x"\nview = "/causal?colour=red"'), "the page causal has no parameter 'colour'"),
        (deck('title = "x"\nview = "/causal?t=seven"'), "URL parameter 't'"),
        (deck('title = "x"\nview = "/heads?d_model=8&n_heads=2&focus=4"'), "Head to enlarge 4 does not fit here"),
        (
            deck('title = "x"\nview = "/block?d_model=8&d_ff=64"'),
            "d_ff 64 does not fit here (at most 4 × d_model = 32)",
        ),
        (deck('title = "x"\nview = "/"\nwho = 1'), "step 1 (x) has unknown field 'who'"),
        (deck('title = "x"\nview = "/"\nquestion = "argmax"'), "question must be a table with a kind"),
        (deck('title = "x"\nview = "/"\nquestion = { kind = "why" }'), "the page playground has no question 'why'"),
        (
            deck('title = "x"\nview = "/causal"\nquestion = { kind = "weight", query = 9, key = 0 }'),
            "query must be one the view offers (1, 2, 3, 4, 5), not 9",  # with the mask, query 0 sees key 0 alone
        ),
        (deck('title = "x"\nview = "/"\nquestion = { kind = "argmax", head = 1 }'), "takes query (and seconds)"),
        (
            deck('title = "x"\nview = "/causal?t=2"\nquestion = { kind = "weight", query = 1, key = 3 }'),
            "cannot be asked of this view: key 3 is after query 1",
        ),
        (deck('title = "x"\nview = "/"\nquestion = { kind = "argmax", seconds = 5 }'), "seconds must be a whole"),
        (deck('title = "x"\nview = "/"\nnotes = "a\\u0007b"'), "notes holds a control character"),
    ],
)
def test_each_problem_is_named(text, expected):
    found = problems(text)
    assert any(expected in p for p in found), found


def test_every_problem_is_named_at_once_with_its_step():
    found = problems(deck('title = "a"\nview = "/nowhere"', 'view = "/causal?x=1"', 'title = "c"\nview = "/"'))
    assert found == [
        "step 1 (a)'s view: there is no lesson page 'nowhere'; the pages are playground, predict, scaling, causal, "
        "pitfalls, heads, positions, block, induction, generation, pretrained, pretrained_deeper",
        "step 2's title must be text of 1 to 80 characters, not None",
        "step 2's view: the page causal has no parameter 'x' (it has k, q, seed, t, tokens, v)",
    ]


def test_size_and_step_limits():
    assert problems(GOOD + "#" * MAX_BYTES) == [
        f"the file is {len(GOOD) + MAX_BYTES:,} bytes; a lesson file is at most 64,000"
    ]
    many = deck(*['title = "x"\nview = "/"'] * (MAX_STEPS + 1))
    assert problems(many) == [f"the lesson has {MAX_STEPS + 1} steps; at most {MAX_STEPS}"]
    assert len(parse_deck(deck(*['title = "x"\nview = "/"'] * MAX_STEPS), declared_page).steps) == MAX_STEPS


def test_nothing_in_a_deck_runs_and_its_text_stays_text():
    tricky = 'title = "<b>bold</b> **x**"\nview = "/"\nnotes = "[click](javascript:alert(1)) ${HOME} `rm -rf`"'
    step = parse_deck(deck(tricky), declared_page).steps[0]
    assert step.title == "<b>bold</b> **x**" and step.notes == "[click](javascript:alert(1)) ${HOME} `rm -rf`"


def test_what_the_editor_writes_reads_back_as_the_same_deck():
    read = parse_deck(GOOD, declared_page)
    assert parse_deck(to_toml(read), declared_page) == read
    odd = deck('title = "quotes \\" and \\\\ and\\nnew line"\nview = "/?causal=1"\nstudent_notes = "tab\\there"')
    assert parse_deck(to_toml(parse_deck(odd, declared_page)), declared_page) == parse_deck(odd, declared_page)


def test_the_command_line_check_names_each_problem_and_fails(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(deck('title = "x"\nview = "/causal?t=99"'))
    good = tmp_path / "good.toml"
    good.write_text(GOOD)
    run = subprocess.run(
        [sys.executable, "-m", "classroom.decks", "check", str(good), str(bad), str(tmp_path / "missing.toml")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 1
    lines = run.stdout.splitlines()
    assert lines[0] == f"{good}: ok, 'A lesson', 2 steps, 1 questions, 10 minutes"
    assert lines[1].startswith(f"{bad}: step 1 (x)'s view: URL parameter 't'")
    assert lines[2].startswith(f"{tmp_path / 'missing.toml'}: cannot read it")
    assert len(lines) == 3
    assert "ScriptRunContext" not in run.stderr and "WARNING" not in run.stderr  # nothing but the verdicts


def test_the_shipped_decks_pass_the_check():
    decks = shipped(declared_page)
    assert list(decks) == ["Attention in 20 minutes", "Where does word order come from?", "From a toy to a real model"]
    for title, read in decks.items():
        assert 6 <= len(read.steps) <= 12 and sum(s.question is not None for s in read.steps) >= 3, title
        assert all(s.notes for s in read.steps), f"{title}: every step has notes a teacher can read aloud"


def test_the_app_reads_the_shipped_decks_as_the_check_reads_them():
    """The app trusts its own shipped files (the check above holds them): read unchecked, they are the same decks."""
    assert shipped() == shipped(declared_page)
