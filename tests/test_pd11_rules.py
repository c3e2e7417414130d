"""Rules generalised from the eleventh phrasing probe (pd11): "as well as" and "plus" join
commands; a verbless "<display> up" puts that display on screen; a patient question naming no
field only leads in to one that does; "what is it called" after the operation asks its name;
the semantic tier keeps the scope rules. Phrasings are our own (pd11-like ones marked); DESIGN
§4 is the spec."""

from __future__ import annotations

import pytest

from tests.test_lexicon import Console

AR_SHOW = "AR.SHOW"
AR_HIDE = "AR.REMOVE"


@pytest.fixture
def con() -> Console:
    return Console()


# ------------------------------------------------------------------ joiners
@pytest.mark.parametrize("text, want", [
    ("Clear the CT as well as the patient box.", ["IV.REMOVE", "IR.HIDE"]),  # pd11-like
    ("take the model away as well as the CT", [AR_HIDE, "IV.REMOVE"]),
    ("show the model as well as the scan", [AR_SHOW, "IV.SHOW_MOVE"]),
])
def test_as_well_as_joins_two_commands(con: Console, text: str, want: list[str]) -> None:
    acts = con.say_after(["show the CT", "show the model", "show the patient info"], text)
    assert [a for a, _ in acts] == want, acts


def test_closing_as_well_still_adds(con: Console) -> None:
    acts = con.say_after(["show the model"], "show the left lung as well")
    assert acts[0][1].get("op") == "add", acts


def test_plus_joins_commands_but_not_steps(con: Console) -> None:
    acts = con.say_after(["show the CT", "show the model", "zoom in on the axial"],
                         "Back to the small views plus a close-up of the nodule on the model.")
    assert [a for a, _ in acts] == ["IV.ZOOM_OUT", "AR.ZOOM_IN"], acts  # pd11-like
    acts = con.say_after(["show the CT"], "hide the CT plus the model")
    assert [a for a, _ in acts] == ["IV.REMOVE", AR_HIDE], acts
    assert con.say("coronal plus 40") == [("IV.SHOW_MOVE", {"coronal": "+40"})]
    assert con.say("axial plus twenty") == [("IV.SHOW_MOVE", {"axial": "+20"})]
    acts = con.say("show her age plus her weight")
    assert acts == [("IR.SHOW", {"fields": ["age", "sex", "weight"]})], acts


# ------------------------------------------------------------------ "<display> up"
@pytest.mark.parametrize("text, want", [
    ("Scan up, please.", "IV.SHOW_MOVE"),  # pd11-like
    ("model up", AR_SHOW),
    ("the 3D model up please", AR_SHOW),
    ("CT up", "IV.SHOW_MOVE"),
])
def test_verbless_display_up_shows_it(con: Console, text: str, want: str) -> None:
    assert con.say(text) == [(want, {})]


def test_display_up_in_a_composite(con: Console) -> None:
    acts = con.say_after(["show the CT", "zoom in on the axial"], "Zoom out and model up.")
    assert [a for a, _ in acts] == ["IV.ZOOM_OUT", AR_SHOW], acts  # pd11-like


@pytest.mark.parametrize("text, want", [
    ("axial up", ("IV.SHOW_MOVE", {"axial": "+10"})),
    ("move up", ("IV.SHOW_MOVE", {"axial": "+10"})),
    ("the CT up 20", ("IV.SHOW_MOVE", {"axial": "+20"})),
    ("rotate the model up", ("AR.ROTATE", {"direction": "up"})),
])
def test_moves_with_up_stay_moves(con: Console, text: str, want: tuple) -> None:
    assert con.say_after(["show the CT", "show the model"], text) == [want]


# ------------------------------------------------------------------ patient questions
@pytest.mark.parametrize("text, fields", [
    ("Who are we operating on today — what's the patient's sex and age?",  # pd11-like
     ["age", "sex"]),
    ("who is this lady, what does she weigh", ["weight"]),
    ("what is her background, what was the diagnosis", ["diagnosis"]),
])
def test_named_fields_win_over_a_vague_lead_in(con: Console, text: str,
                                               fields: list[str]) -> None:
    assert con.say(text) == [("IR.SHOW", {"fields": fields})]


def test_everything_with_a_field_still_shows_everything(con: Console) -> None:
    con.say("show all patient fields and the operation date")
    assert "operation_date" in con.snap["ir"]["fields"] and "pft" in con.snap["ir"]["fields"]


@pytest.mark.parametrize("text", [
    "What day is the operation and what's it called?",  # pd11-like
    "when is the surgery, and what is it called",
    "when's the procedure and what's its name",
])
def test_what_is_it_called_after_the_operation(con: Console, text: str) -> None:
    assert con.say(text) == [("IR.SHOW", {"fields": ["operation_date", "operation_name"]})]
