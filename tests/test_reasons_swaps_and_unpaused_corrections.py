"""A reason said beside a request, 'X instead of Y', corrections said with no pause, and the
other general readings added after round 24's first figures (DESIGN §3, §4)."""

from __future__ import annotations

import pytest

from app.language.normalize import normalize
from tests.test_lexicon import Console


def _model(con: Console, zooms: int = 0) -> None:
    con.say("show the 3d model")
    for _ in range(zooms):
        con.say("zoom in")


@pytest.mark.parametrize("text, expected", [
    ("sagittal plus 60 sorry minus 60", [("IV.SHOW_MOVE", {"sagittal": "-60"})]),
    ("axial up 20 i mean down 20", [("IV.SHOW_MOVE", {"axial": "-20"})]),
])
def test_a_correction_without_a_pause_replaces_the_value(text, expected) -> None:
    con = Console()
    con.say("show the ct")
    assert con.say(text) == expected


def test_a_rotation_corrected_without_a_pause_turns_the_corrected_way() -> None:
    con = Console()
    _model(con)
    assert con.say("rotate right i mean left") == [("AR.ROTATE", {"direction": "left"})]


def test_a_lung_corrected_without_a_pause_is_the_corrected_lung_only() -> None:
    con = Console()
    _model(con)
    con.say("show the left lung sorry the right lung")
    assert "left_upper_lobe" not in con.snap["ar"]["structures"]
    assert "right_lower_lobe" in con.snap["ar"]["structures"]


def test_sorry_before_other_words_takes_nothing_back() -> None:
    con = Console()
    con.say("show the ct")
    assert con.say("axial up 20 sorry") == [("IV.SHOW_MOVE", {"axial": "+20"})]


def test_a_corrected_display_keeps_the_verbs_particle() -> None:
    con = Console()
    con.say("show the ct")
    con.say("zoom in")
    _model(con, zooms=1)
    assert con.say("zoom out the model, I mean the CT") == [("IV.ZOOM_OUT", {})]


def test_a_description_before_the_same_request_is_its_reason() -> None:
    con = Console()
    _model(con, zooms=3)
    assert con.say("not so close, zoom out once") == [("AR.ZOOM_OUT", {})]
    assert con.say("too close, zoom out") == [("AR.ZOOM_OUT", {})]
    assert con.snap["ar"]["zoom_level"] == 1


def test_a_description_alone_is_still_the_request_it_implies() -> None:
    con = Console()
    _model(con, zooms=1)
    assert con.say("too close") == [("AR.ZOOM_OUT", {})]


def test_a_description_beside_another_request_does_both() -> None:
    con = Console()
    _model(con, zooms=1)
    assert con.say("too close, rotate left") == [("AR.ZOOM_OUT", {}),
                                                 ("AR.ROTATE", {"direction": "left"})]


def test_thinking_aloud_about_height_moves_only_as_far_as_asked() -> None:
    con = Console()
    con.say("show the ct")
    con.say("okay so, uh, hmm, it's higher I think, so axial up, up, up")
    assert con.snap["iv"]["pos"]["axial"] == 94


def test_a_structure_instead_of_another_swaps_them_and_keeps_the_rest() -> None:
    con = Console()
    _model(con)
    con.say("show the rll instead of the rul")
    assert con.snap["ar"]["structures"] == ["lung_nodules", "right_lower_lobe",
                                            "trachea_bronchia"]


def test_a_field_instead_of_another_swaps_them() -> None:
    con = Console()
    con.say("show the age and the bmi")
    con.say("change to the diagnosis instead of sex and age")
    assert con.snap["ir"]["fields"] == ["bmi", "diagnosis"]


def test_a_plane_instead_of_another_is_the_plane_named() -> None:
    con = Console()
    con.say("show the ct")
    assert con.say("zoom in on the coronal instead of the axial") == [
        ("IV.ZOOM_IN_MOVE", {"plane": "coronal"})]


@pytest.mark.parametrize("text", ["take out the nodules", "take the nodules out"])
def test_take_out_removes(text) -> None:
    con = Console()
    _model(con)
    con.say(text)
    assert "lung_nodules" not in con.snap["ar"]["structures"]
    assert con.snap["ar"]["visible"]


def test_the_middle_lobe_in_a_list_makes_it_the_right_lungs_lobes() -> None:
    con = Console()
    _model(con)
    con.say("chuck the middle and lower lobes in")
    assert "left_lower_lobe" not in con.snap["ar"]["structures"]
    assert {"right_lower_lobe", "right_middle_lobe"} <= set(con.snap["ar"]["structures"])


def test_a_digit_before_a_tens_word_is_one_number() -> None:
    assert normalize("coronal plus 1 fifty") == "coronal +150"
    assert normalize("move to 10 20 50") == "move to 10 20 50"


def test_two_pieces_that_spell_a_console_word_are_joined() -> None:
    con = Console()
    assert con.say("show the mod el") == [("AR.SHOW", {})]


def test_back_to_where_we_were_may_name_the_ct() -> None:
    con = Console()
    con.say("show the ct")
    con.say("axial up up")
    con.say("back to where we were on the CT")
    assert con.snap["iv"]["pos"]["axial"] == 64


def test_a_structure_turned_back_on_is_added() -> None:
    con = Console()
    _model(con)
    con.say("hide the airway")
    assert con.say("turn the trachea back on") == [
        ("AR.SHOW", {"structures": ["trachea_bronchia"], "op": "add"})]


def test_but_with_adds() -> None:
    con = Console()
    con.say("3D model now, but with the middle lobe as well")
    assert "right_middle_lobe" in con.snap["ar"]["structures"]
    assert "right_upper_lobe" in con.snap["ar"]["structures"]


def test_wanting_to_see_behind_what_is_removed_chooses_no_view() -> None:
    con = Console()
    _model(con)
    con.say("I think... yeah, remove the right upper lobe from the model, "
            "I want to see behind it")
    assert con.snap["ar"]["view"] == "surgical"
    assert "right_upper_lobe" not in con.snap["ar"]["structures"]


def test_closing_the_patient_is_talk() -> None:
    con = Console()
    _model(con)
    assert con.say("Okay, specimen's out. Let's close up.") == []
    assert con.snap["ar"]["zoom_level"] == 0


def test_intensifying_right_is_no_direction() -> None:
    con = Console()
    _model(con)
    assert con.say("That's the fissure, right there.") == []
    assert con.snap["ar"]["rotation"] == "static"


@pytest.mark.parametrize("text", ["switch to the thumbnails",
                                  "give me the three little ones again"])
def test_other_names_for_the_small_views(text) -> None:
    con = Console()
    con.say("show the ct")
    con.say("zoom in")
    assert con.say(text) == [("IV.ZOOM_OUT", {})]


def test_the_same_for_a_plane_said_twice() -> None:
    con = Console()
    con.say("show the ct")
    con.say("sagittal to 220")
    assert con.say("hmm, okay, the coronal, let's do the same for the coronal") == [
        ("IV.SHOW_MOVE", {"coronal": 220})]


def test_minus_heard_as_mine_is_after_a_plane() -> None:
    assert normalize("coronal mine is fifty") == "coronal -50"


def test_no_sorry_without_pauses_is_one_correction() -> None:
    con = Console()
    con.say("show the ct")
    assert con.say("uh coronal plus fifty no sorry minus fifty") == [
        ("IV.SHOW_MOVE", {"coronal": "-50"})]


def test_a_plane_named_to_show_is_the_one_a_later_zoom_enlarges() -> None:
    con = Console()
    con.say("show the ct")
    con.say("sagittal plus 20")
    assert con.say("show me the coronal on the CT, big")[-1] == (
        "IV.ZOOM_IN_MOVE", {"plane": "coronal"})
