"""Words of a speaker's first language that carry a meaning ("otra vez", "también", "quita",
"nein"); numbers a recogniser wrote partly in digits; a request lead said as a clause of its
own ("tell me, ..."); the side said after the lobe; sparing one display after hiding two; and
a later tier's field list that adds the operation date nobody asked for."""

from __future__ import annotations

import pytest

from app.agents.checks import as_field_edit, as_whole_sheet
from app.agents.decision import Decision
from app.core.registry import Step
from app.core.vocab import IR_ALL_FIELDS
from app.language.normalize import normalize
from tests.test_lexicon import Console


@pytest.mark.parametrize("said, number", [
    ("sagittal 3 hundred and 12", "312"), ("coronal plus 200 and 10", "+210"),
    ("sagittal 1 50", "150"), ("coronal 2 hundred and 5", "205")])
def test_a_number_written_partly_in_digits_is_one_number(said: str, number: str) -> None:
    assert normalize(said).split()[-1] == number


@pytest.mark.parametrize("said", ["coronal 200 and axial 10", "show slices 20 and 10",
                                  "coronal 1 05"])
def test_two_numbers_stay_two_numbers(said: str) -> None:
    assert normalize(said) == said


def test_a_meaningful_word_of_another_language_is_read_for_its_meaning() -> None:
    con = Console()
    con.say("show the 3d model with all the lobes")
    assert con.say("quita the left lower lobe") == [
        ("AR.SHOW", {"structures": ["left_lower_lobe"], "op": "remove"})]
    con.say("show the diagnosis")
    assert con.say("the bmi tambien") == [("IR.SHOW", {"fields": ["bmi"], "op": "add"})]
    assert con.snap["ir"]["fields"] == ["bmi", "diagnosis"]


def test_nein_corrects_and_is_no_number() -> None:
    con = Console()
    assert con.say("the coronal... nein, the sagittal... plus forty") == [
        ("IV.SHOW_MOVE", {"sagittal": "+40"})]
    assert con.snap["iv"]["pos"]["coronal"] == 256


def test_sad_gentle_is_the_recognisers_sagittal() -> None:
    assert Console().say("sad gentle plus fifty") == [("IV.SHOW_MOVE", {"sagittal": "+50"})]


def test_a_request_lead_as_a_clause_of_its_own_is_the_verb_of_what_follows() -> None:
    con = Console()
    assert con.say("tell me, how old is the patient and what is the gender") == [
        ("IR.SHOW", {"fields": ["age", "sex"]})]


def test_both_before_the_verb_points_back_at_the_structures_named() -> None:
    con = Console()
    con.say("show the 3d model")
    assert con.say("left upper lobe and left lower lobe, both add") == [
        ("AR.SHOW", {"structures": ["left_lower_lobe", "left_upper_lobe"], "op": "add"})]


@pytest.mark.parametrize("said", ["and the lower lobe, the right one, also",
                                  "the lower lobe right side one, add it"])
def test_the_side_said_after_the_lobe_names_that_lobe(said: str) -> None:
    con = Console()
    con.say("show the 3d model")
    assert con.say(said) == [("AR.SHOW", {"structures": ["right_lower_lobe"], "op": "add"})]


def test_the_view_of_left_is_the_left_view() -> None:
    con = Console()
    con.say("show the 3d model")
    assert con.say("now the view of left, please") == [("AR.SHOW", {"view": "left"})]
    assert con.snap["ar"]["rotation"] == "static"


def test_behind_a_structure_is_where_it_lies_not_a_view() -> None:
    con = Console()
    con.say("show the 3d model")
    assert con.say("that's the artery, see, running up behind the bronchus") == []
    assert con.snap["ar"]["view"] == "surgical"
    assert con.say("show it from behind") == [("AR.SHOW", {"view": "posterior"})]


def test_a_display_spared_after_hiding_two_others_stays() -> None:
    con = Console()
    for said in ("show the patient info", "show the ct", "show the 3d model"):
        con.say(said)
    assert con.say("close the ct and the model, leave the chart") == [
        ("IV.REMOVE", {}), ("AR.REMOVE", {})]
    assert con.snap["ir"]["visible"] is True


def test_the_operation_date_needs_a_date_word() -> None:
    listed = [Step("IR.SHOW", {"fields": [*IR_ALL_FIELDS, "operation_date"]})]
    assert as_field_edit(listed, ["the", "full", "chart"])[0].params["fields"] == list(
        IR_ALL_FIELDS)
    dated = as_field_edit(listed, ["all", "fields", "and", "the", "date"])
    assert "operation_date" in dated[0].params["fields"]
    alone = [Step("IR.SHOW", {"fields": ["operation_date"]})]
    assert as_field_edit(alone, ["when", "is", "it"])[0].params["fields"] == ["operation_date"]


def test_a_later_tiers_pick_of_fields_for_a_request_naming_none_is_every_field() -> None:
    picked = Decision(True, [Step("IR.SHOW", {"fields": ["age", "diagnosis", "height", "sex"]})],
                      confidence=0.9, tier="llm")
    whole = as_whole_sheet(picked, ["patient", "details", ",", "the", "lot"])
    assert whole.steps[0].params["fields"] == list(IR_ALL_FIELDS)
    named = as_whole_sheet(picked, ["the", "diagnosis", "and", "the", "height"])
    assert named.steps[0].params["fields"] == ["age", "diagnosis", "height", "sex"]


def test_a_particle_of_another_language_opening_the_request_is_set_aside() -> None:
    con = Console()
    con.say("show the bmi")
    assert con.say("und also the operation date add") == [
        ("IR.SHOW", {"fields": ["operation_date"], "op": "add"})]
    assert con.snap["ir"]["fields"] == ["bmi", "operation_date"]
    assert con.say("genau") == []


def test_first_before_a_request_verb_orders_the_request_and_is_no_slice() -> None:
    con = Console()
    assert con.say("first tell me, how old is the patient and what is the gender") == [
        ("IR.SHOW", {"fields": ["age", "sex"]})]
    assert con.say("axial first") == [("IV.SHOW_MOVE", {"axial": "min"})]
