"""Word order of other first languages, remarks after a request and particles that close a
sentence reach the same command as plain English (DESIGN §3, §4): the object said first and the
verb last, a speaker's own remark after a pause, a topic named before the request, a plane
said alone before its move or zoom; and a display is never hidden on words about another
thing."""

from __future__ import annotations

import pytest

from app.agents.checks import ungrounded
from app.core.registry import Step
from app.language.normalize import tokens_of
from tests.test_lexicon import Console


def _ar(con: Console) -> list[str]:
    return con.snap["ar"]["structures"]


@pytest.mark.parametrize("text", [
    "The trachea, disable it.",
    "the trachea I don't need it, remove",
    "The airway, take it off please.",
])
def test_an_object_said_first_then_the_verb_with_a_pronoun_edits_that_object(text: str) -> None:
    con = Console()
    con.say("show the 3d model")
    con.say(text)
    assert con.snap["ar"]["visible"]
    assert _ar(con) == ["lung_nodules", "right_upper_lobe"]


def test_the_verb_last_with_only_shows_the_objects_named_before_it() -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("The lesion, the nodules, these only show.")
    assert _ar(con) == ["lung_nodules"]


def test_the_verb_last_with_also_adds_the_field_named_before_it() -> None:
    con = Console()
    con.say("show the age")
    con.say("Eto... lung function, FEV1, this also add, ne.")
    assert con.snap["ir"]["fields"] == ["age", "pft", "sex"]


def test_a_plane_then_also_then_a_target_moves_that_plane() -> None:
    con = Console()
    con.say("show the ct")
    con.say("Na ja, the coronal also to 300 bring.")
    assert con.snap["iv"]["pos"] == {"axial": 64, "coronal": 300, "sagittal": 256}


def test_a_plane_named_alone_then_pointed_at_then_zoomed_is_the_zoomed_plane() -> None:
    con = Console()
    con.say("show the ct")
    con.say("Coronal, this one, zoom in please.")
    assert con.snap["iv"]["mode"] == "zoom_view"
    assert con.snap["iv"]["main"] == "coronal"


def test_a_display_named_as_the_topic_first_is_not_a_request_of_its_own() -> None:
    con = Console()
    con.say("show the age")
    con.say("Patient box, the tumour location show")
    assert con.snap["ir"]["fields"] == ["tumor_location"]


@pytest.mark.parametrize("text, removed", [
    ("Ehn, LLL off, I don't need it sha.", "left_lower_lobe"),
    ("C'mere, take the left upper lobe off, I've changed my mind.", "left_upper_lobe"),
])
def test_a_remark_of_the_speakers_own_after_the_request_is_set_aside(text: str,
                                                                     removed: str) -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("add the left lung")
    con.say(text)
    assert removed not in _ar(con)
    assert con.snap["ar"]["visible"]


def test_a_remark_that_names_the_console_is_not_set_aside() -> None:
    con = Console()
    con.say("show the ct")
    con.say("show the 3d model, it is the airway I want")
    assert "trachea_bronchia" in _ar(con)


def test_a_remark_after_the_other_way_still_reverses_the_move() -> None:
    con = Console()
    con.say("show the ct")
    con.say("axial up")
    con.say("The other way, I reckon.")
    assert con.snap["iv"]["pos"]["axial"] == 64


@pytest.mark.parametrize("text", ["Again la.", "Again lah", "again, ne"])
def test_a_sentence_final_particle_is_no_part_of_the_request(text: str) -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("zoom in on the nodules")
    con.say(text)
    assert con.snap["ar"]["zoom_level"] == 2


@pytest.mark.parametrize("opener", ["Alors", "Bon", "Bueno", "Pues", "Oga"])
def test_an_opener_of_another_language_before_a_follow_up(opener: str) -> None:
    con = Console()
    con.say("show the ct")
    con.say("axial down 15")
    con.say(f"{opener}, the same for the coronal.")
    assert con.snap["iv"]["pos"]["coronal"] == 241


def test_a_term_of_address_after_a_pause_is_not_a_patient_field() -> None:
    con = Console()
    con.say("the height, man")
    assert con.snap["ir"]["fields"] == ["height"]


def test_a_direction_said_again_after_a_pause_multiplies_the_step() -> None:
    con = Console()
    con.say("show the ct")
    con.say("Axial down, down")
    assert con.snap["iv"]["pos"]["axial"] == 44
    con.say("axial up, up, up")
    assert con.snap["iv"]["pos"]["axial"] == 74


def test_a_plane_and_its_side_said_apart_from_the_amount() -> None:
    con = Console()
    con.say("show the ct")
    con.say("Sagittal, right side, thirty")
    assert con.snap["iv"]["pos"]["sagittal"] == 286


@pytest.mark.parametrize("text, axial", [
    ("axial down fife", 59), ("axial up twenny", 84), ("axial down fitty", 14)])
def test_a_number_word_misheard_where_the_step_goes(text: str, axial: int) -> None:
    con = Console()
    con.say("show the ct")
    con.say(text)
    assert con.snap["iv"]["pos"]["axial"] == axial


def test_an_unknown_word_where_the_step_goes_is_asked_not_read_as_the_default_step() -> None:
    con = Console()
    con.say("show the ct")
    con.say("axial up tree")
    assert con.snap["iv"]["pos"]["axial"] == 64
    assert not con.last.valid or not con.last.decision.steps


def test_a_misheard_word_is_read_as_the_name_it_completes() -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("clear the lungs muddle")
    assert not con.snap["ar"]["visible"]


def test_a_closing_of_is_off() -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("r u l of")
    assert "right_upper_lobe" not in _ar(con)


def test_all_of_it_after_a_named_lung_is_that_lung() -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("hmm, put the right lung in, all of it")
    assert _ar(con) == ["lung_nodules", "right_lower_lobe", "right_middle_lobe",
                        "right_upper_lobe", "trachea_bronchia"]


def test_the_lobes_of_one_lung_are_that_lungs_lobes() -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("only lobes of right lung")
    assert _ar(con) == ["right_lower_lobe", "right_middle_lobe", "right_upper_lobe"]


def test_again_with_a_bare_rotate_repeats_the_last_rotation() -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("rotate left")
    con.say("Again rotate")
    assert con.snap["ar"]["rotation"] == "left"


def test_up_top_there_puts_the_model_on_screen_without_choosing_a_view() -> None:
    con = Console()
    con.say("let's have the 3D model up top there")
    assert con.snap["ar"]["visible"]
    assert con.snap["ar"]["view"] == "surgical"


def test_and_all_at_the_end_adds_like_as_well() -> None:
    con = Console()
    con.say("show the age")
    con.say("the weight and all")
    assert con.snap["ir"]["fields"] == ["age", "sex", "weight"]


def test_the_op_name_is_the_operation_name_field() -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("Could you also show the op name?")
    assert con.snap["ir"]["fields"] == ["operation_name"]


@pytest.mark.parametrize("text", ["move the nurse cart out of the way", "close the shades"])
def test_a_later_tier_may_not_hide_a_display_on_words_about_another_thing(text: str) -> None:
    assert ungrounded([Step("IV.REMOVE", {})], tokens_of(text)) is not None


@pytest.mark.parametrize("text", ["remove", "clear it", "take it away please"])
def test_a_bare_or_pointed_removal_is_still_grounded(text: str) -> None:
    assert ungrounded([Step("IV.REMOVE", {})], tokens_of(text)) is None


@pytest.mark.parametrize("opener", ["Sumimasen", "Encore", "Hai"])
def test_an_opener_of_another_language_before_again_repeats(opener: str) -> None:
    con = Console()
    con.say("show the ct")
    con.say("axial up 20")
    con.say(f"{opener}, again.")
    assert con.snap["iv"]["pos"]["axial"] == 104


def test_a_pause_after_a_negation_before_the_other_way() -> None:
    con = Console()
    con.say("show the ct")
    con.say("sagittal right 20")
    con.say("Ai, não... the other way, né?")
    assert con.snap["iv"]["pos"]["sagittal"] == 256


def test_a_direction_said_again_after_a_plane_and_a_pause() -> None:
    con = Console()
    con.say("show the ct")
    con.say("Sagittal... right, right.")
    assert con.snap["iv"]["pos"]["sagittal"] == 276


def test_a_display_shown_then_a_field_after_a_pause_shows_that_field() -> None:
    con = Console()
    con.say("Show the patient information, n'est-ce pas, just how old she is.")
    assert con.snap["ir"]["fields"] == ["age", "sex"]


def test_a_display_named_as_a_topic_in_a_later_part() -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("Model, posterior view, and patient info, show age.")
    assert con.snap["ar"]["view"] == "posterior"
    assert con.snap["ir"]["fields"] == ["age", "sex"]


def test_an_embedded_question_said_first_then_add() -> None:
    con = Console()
    con.say("show the age")
    con.say("And where tumour is, add also.")
    assert con.snap["ir"]["fields"] == ["age", "sex", "tumor_location"]


def test_a_question_then_also_sets_then_adds() -> None:
    con = Console()
    con.say("show the age")
    con.say("What's the diagnosis, and also show the spirometry")
    assert con.snap["ir"]["fields"] == ["diagnosis", "pft"]


def test_disease_alone_is_the_diagnosis() -> None:
    con = Console()
    con.say("davinci, disease?")
    assert con.snap["ir"]["fields"] == ["diagnosis"]


def test_enough_rotating_stops_the_rotation_before_a_view() -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("rotate it up")
    con.say("Khalas, enough rotating. The superior view, please.")
    assert con.snap["ar"]["view"] == "superior"
    assert con.snap["ar"]["rotation"] == "static"


@pytest.mark.parametrize("text", ["Sorry, could we go back to where we were?",
                                  "Sorry, I meant, could we go back to where we were?"])
def test_an_undo_inside_a_request_frame_undoes_the_last_move(text: str) -> None:
    con = Console()
    con.say("show the ct")
    con.say("axial to 100")
    con.say("same for coronal")
    con.say(text)
    assert con.snap["iv"]["pos"] == {"axial": 100, "coronal": 256, "sagittal": 256}


@pytest.mark.parametrize("text", ["Dr. Park is asking to bring the CT back",
                                  "He wants the CT back up"])
def test_a_relayed_request_to_bring_a_display_back(text: str) -> None:
    con = Console()
    con.say("show the ct")
    con.say("hide the ct")
    con.say(text)
    assert con.snap["iv"]["mode"] == "small_views"
    assert con.snap["iv"]["pos"] == {"axial": 64, "coronal": 256, "sagittal": 256}


def test_a_relayed_question_whether_a_structure_can_be_switched_off() -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("Dr. Cho asks if the airway can be switched off")
    assert "trachea_bronchia" not in _ar(con)


def test_what_a_request_is_for_is_no_part_of_it() -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("Could we perhaps switch to the posterior view for the fissure?")
    assert con.snap["ar"]["view"] == "posterior"


def test_a_request_after_a_remark_in_a_sentence_of_its_own() -> None:
    con = Console()
    con.say("show the ct")
    con.say("show the age")
    con.say("Specimen's out. Clear the CT and reset the patient box")
    assert con.snap["iv"]["mode"] == "none"
    assert len(con.snap["ir"]["fields"]) == 10


def test_a_remark_after_asking_a_person_is_not_a_request() -> None:
    con = Console()
    con.say("Can someone push the monitor back a bit? I can't see the CT from here")
    assert con.snap["iv"]["mode"] == "none"


def test_a_filler_word_alone_is_never_a_misheard_field() -> None:
    con = Console()
    con.say("show the ct")
    con.say("wait")
    assert not con.snap["ir"]["visible"]


def test_a_homophone_of_a_field_beside_another_field() -> None:
    con = Console()
    con.say("davinci show wait and height")
    assert con.snap["ir"]["fields"] == ["height", "weight"]


def test_digits_before_a_spoken_hundred() -> None:
    con = Console()
    con.say("show the ct")
    con.say("sagital to 6 hundred")
    assert con.snap["iv"]["pos"]["sagittal"] == 511


def test_an_interjection_before_a_reaction_then_zoom_out() -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("zoom in")
    con.say("Bah, too much. Zoom out.")
    assert con.snap["ar"]["zoom_level"] == 0


def test_a_view_named_inside_a_rotation_phrase_then_a_spin() -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("Flip it round to the anterior view and spin it vertical.")
    assert con.snap["ar"]["view"] == "anterior"
    assert con.snap["ar"]["rotation"] == "vertical"


def test_a_group_of_people_addressed_without_a_display_word_is_talk() -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("zoom in")
    con.say("Grand job, lads, we'll close up shortly.")
    assert con.snap["ar"]["zoom_level"] == 1
    assert not con.last.valid


def test_an_opener_without_a_pause_before_again() -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("zoom in")
    con.say("Und again, ja?")
    assert con.snap["ar"]["zoom_level"] == 2


def test_a_courtesy_to_several_people_closes_a_request() -> None:
    con = Console()
    con.say("Now the 3D, if y'all don't mind.")
    assert con.snap["ar"]["visible"]


def test_the_side_and_position_after_the_word_lobe() -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("Euh, the lobe inferior left, add it please.")
    assert "left_lower_lobe" in _ar(con) and "left_upper_lobe" not in _ar(con)


@pytest.mark.parametrize("text", ["What about the medical history, too?",
                                  "any medical history I should know about? add it to the chart"])
def test_an_add_marker_after_a_pause_with_no_field_after_it_adds(text: str) -> None:
    con = Console()
    con.say("show the age")
    con.say(text)
    assert con.snap["ir"]["fields"] == ["age", "comorbidities", "sex"]


def test_a_number_alone_after_talk_about_vitals_moves_nothing() -> None:
    con = Console()
    con.say("show the age")
    con.say("What are the sats doing? Ninety-two?")
    assert con.snap["iv"]["mode"] == "none"


def test_the_room_told_to_look_at_the_screen_is_talk() -> None:
    con = Console()
    con.say("show the ct")
    con.say("everyone look up at the screen this is the bronchus")
    assert not con.snap["ar"]["visible"]
