"""Word orders and word choices of second-language speakers, returns to the start, the wake
word said last, and the other general readings added after round 26's first figures (DESIGN
§3, §4)."""

from __future__ import annotations

from typing import Any

import pytest

from app.agents.interpreter import FastInterpreter
from tests.test_lexicon import Console


def _fast() -> Any:
    from app.session import build_console

    return build_console(interpreter=FastInterpreter())


def _model(con: Console) -> None:
    con.say("show the 3d model")


def test_the_wake_word_said_last_is_set_aside() -> None:
    con = Console()
    con.say("show the ct")
    con.say("take the coronal forward about 30")
    assert con.say("hmm, a little bit more, davinci") == [("IV.SHOW_MOVE", {"coronal": "+10"})]
    assert con.say("zoom in, davinci, please") == [("IV.ZOOM_IN_MOVE", {"plane": "coronal"})]


def test_a_number_corrected_after_a_direction_keeps_the_direction() -> None:
    con = Console()
    con.say("show the ct")
    assert con.say("davinci, go up, uh, twenty... no, thirty") == [
        ("IV.SHOW_MOVE", {"axial": "+30"})]
    assert con.say("up up up no up up") == [("IV.SHOW_MOVE", {"axial": "+20"})]


def test_lets_close_at_the_end_is_the_teams_and_closing_a_display_is_not() -> None:
    con = _fast()
    con.say("show the patient info")
    before = con.snapshot()
    con.say("Thank you all, lovely work. Let's close.")
    assert con.snapshot() == before
    con.say("show the model")
    con.say("let's close the model")
    assert not con.snapshot()["ar"]["visible"]
    con.say("show the model")
    before = con.snapshot()
    con.say("looks good, we can close it")
    assert con.snapshot() == before


def test_a_lobe_said_by_its_level_and_side_with_one() -> None:
    con = Console()
    _model(con)
    con.say("show the middle lobe too")
    assert con.say("And the lower one on the right, while you're at it") == [
        ("AR.SHOW", {"structures": ["right_lower_lobe"], "op": "add"})]


def test_a_side_said_after_the_lung() -> None:
    con = Console()
    _model(con)
    assert con.say("Put also the lung left") == [
        ("AR.SHOW", {"structures": ["left_lower_lobe", "left_upper_lobe"], "op": "add"})]


@pytest.mark.parametrize("text", ["turn the lungs right", "show the lungs left and right",
                                  "move the lung left", "the lung right or the lung left?"])
def test_a_side_after_the_lungs_in_other_sentences_adds_no_one_lung(text: str) -> None:
    con = Console()
    _model(con)
    steps = con.say(text)
    assert not any(p.get("structures") in (["left_lower_lobe", "left_upper_lobe"],
                                           ["right_lower_lobe", "right_middle_lobe",
                                            "right_upper_lobe"]) for _, p in steps)


@pytest.mark.parametrize("text", ["Please bring the 3D model in the start position",
                                  "Return the model to the beginning",
                                  "bring the model to the starting position"])
def test_the_model_brought_to_where_it_started_is_reset(text: str) -> None:
    con = Console()
    _model(con)
    con.say("rotate left")
    assert con.say(text) == [("AR.RESET", {})]


def test_the_ct_put_in_its_start_position_goes_to_the_middle_slices() -> None:
    con = Console()
    con.say("show the ct")
    con.say("axial up 20")
    con.say("Thank you. And the CT also in the start position")
    assert con.snap["iv"]["pos"] == {"axial": 64, "coronal": 256, "sagittal": 256}


@pytest.mark.parametrize("text, expected", [
    ("Now the same but the other way", {"coronal": "-30"}),
    ("Hmm, okay, now take it the other way", {"coronal": "-30"}),
])
def test_the_other_way_in_more_words(text: str, expected: dict[str, str]) -> None:
    con = Console()
    con.say("show the ct")
    con.say("Now the coronal more forward, eh, thirty")
    assert con.say(text) == [("IV.SHOW_MOVE", expected)]


def test_an_amount_after_a_pause_and_a_hedge_is_the_step() -> None:
    con = Console()
    con.say("show the ct")
    assert con.say("Take me forward, say, forty on that coronal") == [
        ("IV.SHOW_MOVE", {"coronal": "+40"})]
    assert con.say("go down, 30") == [("IV.SHOW_MOVE", {"axial": "-30"})]


@pytest.mark.parametrize("text", ["axial up, 200 on the coronal",
                                  "forward, 40 on the axial slice"])
def test_a_number_on_another_plane_after_a_pause_is_that_planes_slice(text: str) -> None:
    con = Console()
    con.say("show the ct")
    steps = con.say(text)
    assert any(isinstance(v, int) for _, p in steps for v in p.values())


def test_an_amount_said_before_more_and_its_direction() -> None:
    con = Console()
    con.say("show the ct")
    con.say("Axial slice, 30 more go down")
    assert con.snap["iv"]["pos"]["axial"] == 34


def test_a_plane_slice_also_same_is_the_same_move() -> None:
    con = Console()
    con.say("show the ct")
    con.say("axial down 30")
    assert con.say("Coronal slice also same") == [("IV.SHOW_MOVE", {"coronal": "-30"})]


@pytest.mark.parametrize("text, fields", [
    ("Show me the patient data, the diagnosis and the accompanying illnesses",
     ["comorbidities", "diagnosis"]),
    ("Put the information of the patient, only the surgery and the localisation of the tumour",
     ["operation_name", "tumor_location"]),
])
def test_field_requests_in_other_words(text: str, fields: list[str]) -> None:
    con = Console()
    con.say("show the patient info")
    con.say(text)
    assert con.snap["ir"]["fields"] == fields


@pytest.mark.parametrize("text, expected", [
    ("View change to anterior and rotation horizontal",
     [("AR.SHOW", {"view": "anterior"}), ("AR.ROTATE", {"direction": "horizontal"})]),
    ("Could you show me the view from the patient's head side?",
     [("AR.SHOW", {"view": "superior"})]),
])
def test_model_requests_in_other_words(text: str, expected: list[Any]) -> None:
    con = Console()
    _model(con)
    assert con.say(text) == expected


def test_still_closer_zooms_in_and_keep_it_still_stops() -> None:
    con = Console()
    _model(con)
    con.say("zoom in")
    assert con.say("Still more near") == [("AR.ZOOM_IN", {})]
    assert con.say("keep it still") == [("AR.ROTATE", {"direction": "static"})]


def test_a_field_corrected_after_age_and_gender_replaces_the_whole_item() -> None:
    con = Console()
    con.say("davinci, please show me the patient's age and gender")
    con.say("sorry, I meant the operation name")
    assert con.snap["ir"]["fields"] == ["operation_name"]


def test_a_slice_said_with_at_is_no_count_for_the_direction_after_it() -> None:
    con = Console()
    con.say("show the ct")
    con.say("at slice 70 go down")
    assert con.snap["iv"]["pos"]["axial"] != 0


def test_the_wake_word_after_one_word_is_left_as_said() -> None:
    con = Console()
    con.say("show the ct")
    assert not any(a.startswith("AR.") for a, _ in con.say("stop, davinci"))
