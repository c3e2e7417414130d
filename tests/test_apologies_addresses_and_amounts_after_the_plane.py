"""An apology that corrects nothing, talk addressed to the team, an amount said after the
plane its direction went with, and the other general readings added after round 25's first
figures (DESIGN §3, §4)."""

from __future__ import annotations

from typing import Any

import pytest

from app.agents.interpreter import FastInterpreter
from app.language.normalize import normalize
from tests.test_lexicon import Console


def _fast() -> Any:
    from app.session import build_console

    return build_console(interpreter=FastInterpreter())


@pytest.mark.parametrize("text, expected", [
    ("go down on the axial, like, fifteen slices", {"axial": "-15"}),
    ("down on the axial 15 slices", {"axial": "-15"}),
    ("go up on the coronal 25", {"coronal": "+25"}),
    ("scroll down on the axial by 20", {"axial": "-20"}),
])
def test_an_amount_after_the_plane_is_the_step_of_the_direction_said_before(
        text: str, expected: dict[str, str]) -> None:
    con = Console()
    con.say("show the ct")
    assert con.say(text) == [("IV.SHOW_MOVE", expected)]


def test_a_slice_named_after_a_direction_is_where_the_plane_goes() -> None:
    con = Console()
    con.say("show the ct")
    assert con.say("go down on the axial to 15") == [("IV.SHOW_MOVE", {"axial": 15})]


@pytest.mark.parametrize("text", ["Uh, davinci, go ahead and pull up the CT for me.",
                                  "go ahead and show the ct"])
def test_go_ahead_and_is_a_lead_in_not_a_move(text: str) -> None:
    con = Console()
    assert con.say(text) == [("IV.SHOW_MOVE", {})]


def test_go_ahead_and_inside_a_sentence_moves_nothing() -> None:
    con = Console()
    con.say("show the 3d model")
    assert con.say("rotate left and go ahead and zoom in") == [
        ("AR.ROTATE", {"direction": "left"}), ("AR.ZOOM_IN", {})]


@pytest.mark.parametrize("text", ["go down on the axial for 15", "go down on the axial, 1 cm",
                                  "axial 40 and down"])
def test_an_amount_that_is_no_step_of_that_direction_makes_no_slice(text: str) -> None:
    con = Console()
    con.say("show the ct")
    steps = con.say(text)
    assert all(not isinstance(v, int) or v == 40 for _, p in steps for v in p.values())


@pytest.mark.parametrize("text", ["axial down 15 and the coronal too",
                                  "go down on the axial 15 and the coronal too",
                                  "go down 15 on the axial and do the same for coronal"])
def test_a_plane_named_with_too_takes_the_same_move(text: str) -> None:
    con = Console()
    con.say("show the ct")
    assert con.say(text) == [("IV.SHOW_MOVE", {"axial": "-15", "coronal": "-15"})]


@pytest.mark.parametrize("text", ["coronal, sorry", "zoom in on the coronal, sorry"])
def test_an_apology_is_never_heard_as_zero(text: str) -> None:
    con = Console()
    con.say("show the ct")
    con.say(text)
    assert con.snap["iv"]["pos"]["coronal"] == 256


def test_the_other_way_with_an_apology_reverses_the_last_move() -> None:
    con = Console()
    con.say("show the ct")
    con.say("And the sagittal to the left, fifty.")
    assert con.say("The other way, sorry.") == [("IV.SHOW_MOVE", {"sagittal": "+50"})]
    assert con.snap["iv"]["pos"]["sagittal"] == 256


def test_a_closing_sorry_after_two_values_still_takes_the_first_back() -> None:
    con = Console()
    con.say("show the 3d model")
    assert con.say("rotate vertically, horizontally, sorry") == [
        ("AR.ROTATE", {"direction": "horizontal"})]


def test_an_apology_before_i_meant_is_no_part_of_the_correction() -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("Rotate horizontally.")
    con.say("Sorry, I meant vertically.")
    assert con.snap["ar"]["rotation"] == "vertical"


def test_back_to_where_we_were_before_undoes_the_last_move() -> None:
    con = _fast()
    con.say("show the ct")
    con.say("Sagittal, please go to right side, little bit.")
    con.say("Once more, please.")
    con.say("Ah, sorry, too much. Please return to where we were before.")
    assert con.snapshot()["iv"]["pos"]["sagittal"] == 266


@pytest.mark.parametrize("text", ["Stapler, white load.",
                                  "Okay team, quick recap: right upper lobe adenocarcinoma, "
                                  "we're doing a lobectomy.",
                                  "guys, the right upper lobe"])
def test_talk_to_the_team_changes_nothing(text: str) -> None:
    con = _fast()
    con.say("show the patient info")
    before = con.snapshot()
    rec = con.say(text)
    assert con.snapshot() == before
    assert rec["reply"]["text"].startswith("Out of scope")


def test_an_instrument_called_out_is_refused_with_its_own_reason() -> None:
    con = _fast()
    rec = con.say("Stapler, white load.")
    assert "instruments" in rec["reply"]["text"]


@pytest.mark.parametrize("text", ["Okay team, right upper lobe please",
                                  "Okay team, just the right upper lobe",
                                  "Okay everyone, the right upper lobe only"])
def test_a_request_to_the_team_for_the_console_still_runs(text: str) -> None:
    con = _fast()
    con.say(text)
    assert "right_upper_lobe" in con.snapshot()["ar"]["structures"]


@pytest.mark.parametrize("text", ["put the CT up alongside", "put the ct up beside it",
                                  "put the CT up next to it"])
def test_a_display_put_up_alongside_is_shown(text: str) -> None:
    con = Console()
    con.say("show the patient info")
    assert con.say(text) == [("IV.SHOW_MOVE", {})]
    assert con.snap["ir"]["visible"]


@pytest.mark.parametrize("text", ["Davinci, put me the 3D of the lungs, please.",
                                  "Now the 3D model of the anatomy, please."])
def test_the_model_named_by_what_it_shows_opens_with_the_default_set(text: str) -> None:
    con = Console()
    con.say(text)
    assert con.snap["ar"]["structures"] == ["lung_nodules", "right_upper_lobe",
                                            "trachea_bronchia"]


def test_the_model_of_one_lung_still_shows_that_lung() -> None:
    con = Console()
    con.say("show the 3d model of the left lung")
    assert "left_upper_lobe" in con.snap["ar"]["structures"]


@pytest.mark.parametrize("text, fields", [
    ("Only the diagnosis and the tumour localisation.", ["diagnosis", "tumor_location"]),
    ("show the tumor localization", ["tumor_location"]),
    ("show her illnesses from before", ["comorbidities"]),
])
def test_field_words_of_other_spellings(text: str, fields: list[str]) -> None:
    con = Console()
    con.say(text)
    assert con.snap["ir"]["fields"] == fields


def test_two_after_a_field_is_heard_as_too() -> None:
    assert normalize("and the diagnoses two") == "and the diagnoses too"
    assert normalize("axial two") == "axial 2"
    con = Console()
    con.say("show the patient's age")
    con.say("and the diagnosis two")
    assert con.snap["ir"]["fields"] == ["age", "diagnosis", "sex"]


def test_a_misheard_wake_word_is_set_aside() -> None:
    con = Console()
    assert con.say("divinity show the patient data") == [("IR.SHOW", {})]


def test_a_want_to_before_the_move_does_not_make_the_amount_a_slice() -> None:
    con = Console()
    con.say("show the ct")
    assert con.say("Okay, so, uh, I wanna go down on the axial, like, fifteen slices.") == [
        ("IV.SHOW_MOVE", {"axial": "-15"})]


@pytest.mark.parametrize("text, key", [
    ("And the lobe inferior of the right too.", "right_lower_lobe"),
    ("the lobe middle of the right lung", "right_middle_lobe"),
    ("the lobe inferior of the left side", "left_lower_lobe"),
])
def test_a_side_said_after_a_postposed_lobe_level_says_whose_lobe(text: str, key: str) -> None:
    con = Console()
    con.say("show the 3d model")
    steps = con.say(text)
    assert steps == [("AR.SHOW", {"structures": [key], "op": "add"})]


@pytest.mark.parametrize("text", ["no, the coronal", "sorry, I meant the coronal"])
def test_a_plane_corrected_in_the_next_command_puts_the_wrong_plane_back(text: str) -> None:
    con = _fast()
    con.say("show the ct")
    con.say("axial up 20")
    con.say(text)
    assert con.snapshot()["iv"]["pos"] == {"axial": 64, "coronal": 276, "sagittal": 256}


def test_an_amount_corrected_in_the_next_command_moves_only_the_difference() -> None:
    con = _fast()
    con.say("show the ct")
    con.say("axial up 20")
    con.say("sorry, 30")
    assert con.snapshot()["iv"]["pos"]["axial"] == 94
