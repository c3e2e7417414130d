"""Follow-ups that refer to what was said before (DESIGN §4 context rules): "same for X"
applies the last *move*, "the other way" reverses the last command that has an opposite, a
correction inside a command keeps its verb, a view beside a rotation is the model's view.
"""

from __future__ import annotations

import pytest

from app.agents.checks import ungrounded
from app.core.registry import Step
from tests.test_lexicon import Console


@pytest.fixture
def con() -> Console:
    return Console()


def test_same_for_a_plane_repeats_the_move_not_the_zoom_said_after_it(con: Console) -> None:
    acts = con.say_after(["show the CT", "coronal forward twenty", "zoom in"], "same for axial")
    assert acts == [("IV.SHOW_MOVE", {"axial": "+20"})]


def test_same_for_a_plane_takes_the_move_out_of_a_composite(con: Console) -> None:
    acts = con.say_after(["show the CT", "coronal to 400 and zoom in"], "same for sagittal")
    assert acts == [("IV.SHOW_MOVE", {"sagittal": 400})]


@pytest.mark.parametrize("text", ["same ax", "now axial the same", "axial likewise please"])
def test_same_with_the_plane_before_or_without_a_preposition(con: Console, text: str) -> None:
    acts = con.say_after(["show the CT", "sagittal left thirty"], text)
    assert acts == [("IV.SHOW_MOVE", {"axial": "-30"})]


def test_the_other_way_steps_over_a_zoom_to_the_move(con: Console) -> None:
    acts = con.say_after(["show the CT", "move the scan forward 40", "zoom in"], "the other way")
    assert acts == [("IV.SHOW_MOVE", {"coronal": "-40"})]
    assert con.say("the other way") == [("IV.SHOW_MOVE", {"coronal": "+40"})]


@pytest.mark.parametrize(("before", "text", "expected"), [
    (["show the 3D model", "show the right lung"],
     "remove the right middle, no, the right lower lobe",
     [("AR.SHOW", {"structures": ["right_lower_lobe"], "op": "remove"})]),
    (["show the CT", "show the patient info"], "hide the patient info, no, the CT",
     [("IV.REMOVE", {})]),
])
def test_a_correction_of_the_object_keeps_the_verb(con: Console, before: list[str], text: str,
                                                   expected: list) -> None:
    assert con.say_after(before, text) == expected


def test_a_bare_view_beside_a_rotation_is_the_models_view(con: Console) -> None:
    acts = con.say_after(["show the 3D model", "show the CT"],
                         "switch to posterior and rotate down")
    assert acts == [("AR.SHOW", {"view": "posterior"}), ("AR.ROTATE", {"direction": "down"})]


@pytest.mark.parametrize("text", ["show the tumour information", "tumour info please"])
def test_the_tumour_information_is_the_patient_field(con: Console, text: str) -> None:
    assert con.say(text) == [("IR.SHOW", {"fields": ["tumor_location"]})]


def test_a_plan_across_displays_must_name_each_display() -> None:
    words = ["hide", "the", "patient", "info", "no", "the", "ct"]
    plan = [Step("IR.HIDE", {}), Step("IV.REMOVE", {}), Step("AR.REMOVE", {})]
    assert "3D model" in (ungrounded(plan, words) or "")
    assert ungrounded([Step("IR.HIDE", {}), Step("IV.REMOVE", {})], words) is None
    assert ungrounded(plan, ["remove", "everything"]) is None


def test_a_reading_on_a_display_the_words_do_not_name_is_refused() -> None:
    plan = [Step("AR.SHOW", {"structures": ["lung_nodules"], "op": "add"})]
    assert "patient information" in (ungrounded(plan, ["also", "add", "all", "the",
                                                       "fields"]) or "")


def test_a_pause_written_as_dots_separates_a_correction(con: Console) -> None:
    con.say("show the CT")
    assert con.say("Go right... sorry, left, twenty") == [("IV.SHOW_MOVE", {"sagittal": "-20"})]


def test_a_plus_sign_between_displays_joins_them(con: Console) -> None:
    assert [a for a, _ in con.say("pt info + CT")] == ["IR.SHOW", "IV.SHOW_MOVE"]


def test_a_view_abbreviation_after_the_models_name(con: Console) -> None:
    con.say("show the 3D model")
    assert con.say("3D ant") == [("AR.SHOW", {"view": "anterior"})]


def test_in_the_zoom_view_the_last_plane_named_becomes_main(con: Console) -> None:
    con.say_after(["show the CT", "zoom in"], "coronal twelve axial one hundred")
    assert con.snap["iv"]["main"] == "axial"
    assert con.snap["iv"]["pos"]["coronal"] == 12 and con.snap["iv"]["pos"]["axial"] == 100


def test_to_a_slice_is_absolute_even_after_further(con: Console) -> None:
    con.say("show the CT")
    assert con.say("further over sagittal to 299") == [("IV.SHOW_MOVE", {"sagittal": 299})]


def test_a_correction_said_without_a_pause(con: Console) -> None:
    con.say("show the patient info")
    assert con.say("add the height no sorry the body weight") == [
        ("IR.SHOW", {"fields": ["weight"], "op": "add"})]


def test_the_other_way_after_a_discourse_marker(con: Console) -> None:
    con.say_after(["show the CT", "coronal plus 50"], "nah the other way")
    assert con.snap["iv"]["pos"]["coronal"] == 256


def test_a_view_with_a_rotation_is_both(con: Console) -> None:
    con.say("show the 3D model")
    assert con.say("anterior view with a vertical spin") == [
        ("AR.SHOW", {"view": "anterior"}), ("AR.ROTATE", {"direction": "vertical"})]


def test_the_recon_is_the_3d_model(con: Console) -> None:
    assert [a for a, _ in con.say("show the recon")] == ["AR.SHOW"]


@pytest.mark.parametrize("text", ["could you bring up his PET?",
                                  "let's go up on the O2, please"])
def test_things_the_console_does_not_have_are_out_of_scope(con: Console, text: str) -> None:
    con.say("show the CT")
    before = con.snap
    assert con.say(text) == []
    assert con.snap == before


@pytest.mark.parametrize(("text", "expected"), [
    ("First, show me the CT", [("IV.SHOW_MOVE", {})]),
    ("The first thing I want is the coronal at 300", [("IV.SHOW_MOVE", {"coronal": 300})]),
    ("davinci, first, sagittal 150", [("IV.SHOW_MOVE", {"sagittal": 150})]),
    ("axial first", [("IV.SHOW_MOVE", {"axial": "min"})]),
    ("coronal last slice", [("IV.SHOW_MOVE", {"coronal": "max"})]),
])
def test_first_and_last_move_only_when_attached(con: Console, text: str,
                                                expected: list) -> None:
    assert con.say(text) == expected


def test_where_the_tumour_is_stays_the_patient_field_on_the_model(con: Console) -> None:
    con.say("show the 3D model")
    assert con.say("where is the tumour") == [("IR.SHOW", {"fields": ["tumor_location"]})]


def test_a_side_said_once_goes_with_each_lobe(con: Console) -> None:
    con.say_after(["show the 3D model", "show all the lobes"], "hide the right middle and "
                                                                "lower lobes")
    assert con.last is not None
    assert con.last.decision.steps[0].params["structures"] == ["right_lower_lobe",
                                                               "right_middle_lobe"]


def test_a_bare_zoom_takes_the_plane_moved_after_the_last_zoom(con: Console) -> None:
    for text in ["show the ct", "zoom in", "zoom out", "axial up 20", "sagittal 200",
                 "left left left"]:
        con.say(text)
    con.say("zoom in")
    assert con.snap["iv"]["main"] == "sagittal"


def test_a_remark_then_back_to_where_we_were(con: Console) -> None:
    con.say_after(["show the CT", "show the sagittal at the maximum"],
                  "Hmm, that's the very edge. Take it back to where we were.")
    assert con.snap["iv"]["pos"]["sagittal"] == 256


def test_a_window_nobody_named_is_refused() -> None:
    assert ungrounded([Step("IV.SHOW_MOVE", {"window": "mediastinum"})],
                      ["show", "the", "spirometry", "results"]) is not None


def test_a_correction_is_checked_against_the_corrected_words(con: Console) -> None:
    con.say("show the CT")
    assert con.say("Zoom in on the sagittal. Actually no, just go to the small views.") == [
        ("IV.ZOOM_OUT", {})]


def test_directions_said_again_after_no_replace_the_first(con: Console) -> None:
    con.say("show the CT")
    assert con.say("up up up no up up") == [("IV.SHOW_MOVE", {"axial": "+20"})]


@pytest.mark.parametrize(("before", "text", "expected"), [
    (["show the patient info", "whats the tumor location"], "gender to",
     [("IR.SHOW", {"fields": ["age", "sex"], "op": "add"})]),
    (["show the ct", "sagittal to three hundred"], "Actually make that 320",
     [("IV.SHOW_MOVE", {"sagittal": 320})]),
])
def test_recogniser_slips_in_follow_ups(con: Console, before: list[str], text: str,
                                        expected: list) -> None:
    assert con.say_after(before, text) == expected
