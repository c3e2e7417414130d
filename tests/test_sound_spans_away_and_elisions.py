"""Console terms a recogniser wrote as other words that sound alike or ran together; "away"
as the verb; letters left out as said; an excuse between an object and its verb; a slice
named after a removal; and remarks that only look like requests."""

from __future__ import annotations

import pytest

from app.language.correction import correct
from app.language.known_words import foreign_edges
from app.language.normalize import normalize
from tests.test_lexicon import Console


@pytest.mark.parametrize("heard, meant", [
    ("zoom in on sad jittal", "zoom in on sagittal"),
    ("row tate up", "rotate up"),
    ("accial to minimum", "axial to minimum"),
    ("hidethe patientinfo", "hide the patient info"),
])
def test_words_that_sound_like_a_console_term_are_read_as_it(heard: str, meant: str) -> None:
    assert correct(heard).text == meant


@pytest.mark.parametrize("said", [
    "the patient had a sad day", "the actual plan is fine", "upright", "superb", "superb view",
    "initially show the ct", "the needles please", "it slides down", "it can tear", "downright",
    "leftover", "show the medial segment",
    "spin it vertic uh horizontally", "is it all there"])
def test_ordinary_words_and_false_starts_are_left_as_said(said: str) -> None:
    assert correct(said).changes == [] or "stutter" in correct(said).changes[0][2]
    assert "vertical" not in correct(said).text


def test_away_with_no_verb_of_its_own_removes() -> None:
    con = Console()
    con.say("show the 3d model with all the lobes")
    assert con.say("the left lower lobe away") == [
        ("AR.SHOW", {"structures": ["left_lower_lobe"], "op": "remove"})]
    assert con.say("the model away please") == [("AR.REMOVE", {})]


def test_all_the_overlays_named_one_by_one_are_all_hidden() -> None:
    con = Console()
    con.say("show the ct and the 3d model and the patient info")
    assert [a for a, _ in con.say(
        "All the overlays away now: the model, the CT and the patient box.")] == [
        "AR.REMOVE", "IV.REMOVE", "IR.HIDE"]


def test_zoom_out_more_is_one_more_zoom_out() -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("zoom in")
    assert con.say("zoom out more") == [("AR.ZOOM_OUT", {})]


def test_a_slice_named_after_a_removal_shows_the_ct() -> None:
    con = Console()
    con.say("show the 3d model")
    assert con.say("remove the 3D, and now the CT, coronal 200") == [
        ("AR.REMOVE", {}), ("IV.SHOW_MOVE", {"coronal": 200})]
    con.say("show the 3d model")
    assert con.say("hide the model and the CT") == [("AR.REMOVE", {}), ("IV.REMOVE", {})]


def test_an_excuse_between_the_object_and_its_verb_corrects_nothing() -> None:
    con = Console()
    con.say("show the 3d model")
    assert con.say("Airway... sumimasen, please remove.") == [
        ("AR.SHOW", {"structures": ["trachea_bronchia"], "op": "remove"})]
    con.say("show the airway")
    assert con.say("remove the airway, sorry, the nodules") == [
        ("AR.SHOW", {"structures": ["lung_nodules"], "op": "remove"})]


@pytest.mark.parametrize("said, meant", [
    ("An' her lung function", "and her lung function"),
    ("top left o' the screen", "top left of the screen"),
    ("her other conditions an' a'", "her other conditions and all")])
def test_letters_left_out_as_said_are_read_in_full(said: str, meant: str) -> None:
    assert normalize(said) == meant


def test_a_given_name_beside_a_word_of_another_language_is_no_call() -> None:
    assert foreign_edges("Un attimo... only the diagnosis and the surgery.") == \
        "only the diagnosis and the surgery"
    assert foreign_edges("Suction, Pieter. Back a little") is None


def test_clear_as_an_adjective_hides_nothing() -> None:
    con = Console()
    con.say("show the ct")
    assert con.say("very clear today") == []
    assert con.snap["iv"]["mode"] == "small_views"


def test_the_age_asked_as_how_many_years_and_remind_me_as_a_lead() -> None:
    con = Console()
    assert con.say("how many years has the patient") == [
        ("IR.SHOW", {"fields": ["age", "sex"]})]
    assert con.say("remind me, what's the diagnosis?") == [
        ("IR.SHOW", {"fields": ["diagnosis"]})]


def test_the_wee_views_are_the_small_views() -> None:
    con = Console()
    con.say("show the ct")
    con.say("zoom in on the axial")
    assert con.say("back tae the wee views") == [("IV.ZOOM_OUT", {})]


def test_ordinary_words_before_an_amount_may_be_a_plane_heard_wrong() -> None:
    assert correct("sad it all 200").text == "sagittal 200"
    assert correct("is it all 200").text == "is it all 200"


@pytest.mark.parametrize("said, meant", [
    ("axial 40, not 50", "axial 40"), ("show the coronal, not the axial", "show the coronal"),
    ("show the nodules, not the airway", "show the nodules"),
    ("show the nodules, not the left lower lobe", "show the nodules")])
def test_a_value_then_not_another_of_its_kind_keeps_the_first(said: str, meant: str) -> None:
    assert correct(said).text == meant


def test_a_sorry_after_a_number_takes_the_number_back() -> None:
    con = Console()
    con.say("show the ct")
    assert con.say("Euh, 180 pardon, not 150. Sagittal 180.") == [
        ("IV.SHOW_MOVE", {"sagittal": 180})]


def test_go_on_is_encouragement_not_a_repeat() -> None:
    con = Console()
    con.say("show the ct")
    con.say("sagittal left 10")
    for said in ("go on", "ok go on", "go on then"):
        assert con.say(said) == []
    assert con.snap["iv"]["pos"]["sagittal"] == 246


def test_hiding_the_rest_after_naming_some_shows_only_those() -> None:
    con = Console()
    con.say("show the patient info")
    assert con.say("diagnosis and tumour location you show, no need of others") == [
        ("IR.SHOW", {"fields": ["diagnosis", "tumor_location"]})]
    con.say("show the 3d model")
    assert con.say("Only RUL, the other all close.") == [
        ("AR.SHOW", {"structures": ["right_upper_lobe"]})]
    assert con.snap["ar"]["structures"] == ["right_upper_lobe"]


def test_hiding_the_rest_after_a_verb_alone_is_no_only() -> None:
    assert correct("zoom in and remove all the others").text == \
        "zoom in and remove all the others"


def test_do_one_thing_leads_into_the_request() -> None:
    con = Console()
    con.say("show the ct")
    con.say("axial minus 20")
    assert con.say("Do one thing, same for coronal also.") == [
        ("IV.SHOW_MOVE", {"coronal": "-20"})]


@pytest.mark.parametrize("said, meant", [
    ("include the middle lobe and the lower one, of the right side",
     "include the right middle lobe and the right lower lobe"),
    ("add the upper lobe and the lower lobe on the left side",
     "add the left upper lobe and the left lower lobe"),
    ("show the middle lobe and the lower lobe from the right view",
     "show the middle lobe and the lower lobe from the right view")])
def test_a_side_said_after_a_list_of_lobes_is_each_ones(said: str, meant: str) -> None:
    assert normalize(said) == meant


def test_off_it_alone_hides_the_display_last_used() -> None:
    con = Console()
    con.say("show the patient info")
    assert con.say("off it") == [("IR.HIDE", {})]
    con.say("show the 3d model")
    assert con.say("off it") == [("AR.REMOVE", {})]


def test_a_named_position_corrects_the_number_not_the_plane() -> None:
    con = Console()
    con.say("show the ct")
    con.say("zoom in on the coronal")
    assert con.say("Sagittal to zero... sorry, minimum") == [
        ("IV.SHOW_MOVE", {"sagittal": "min"})]
    assert con.say("sagittal to 100, sorry, the middle") == [
        ("IV.SHOW_MOVE", {"sagittal": "middle"})]


def test_asking_the_console_to_take_it_from_a_side_is_a_view() -> None:
    con = Console()
    con.say("show the 3d model")
    assert con.say("can you take it from the posterior view") == [
        ("AR.SHOW", {"view": "posterior"})]


def test_the_middle_of_a_lobe_name_is_no_slice_value_in_a_correction() -> None:
    con = Console()
    con.say("show the lungs model")
    con.say("add the right middle lobe and the right lower lobe")
    assert con.say("actually, make it the right lung only") == [
        ("AR.SHOW", {"structures": ["right_lower_lobe", "right_middle_lobe",
                                    "right_upper_lobe"]})]


_MODEL_AND_AIRWAY = ("show the ct and the 3d model", "show the airway")


@pytest.mark.parametrize("setup, said", [
    (("show the 3d model",),
     "That's the right main bronchus. You take it from behind, posterior first"),
    (("show the 3d model",),
     "We'll leave the middle lobe, it's fine, just the upper lobe today"),
    *((_MODEL_AND_AIRWAY, said) for said in [
        "keep away from the bronchus", "stay away from the lower lobe",
        "one centimetre away from the nodule", "careful, away from the bronchus",
        "don't hide the airway, hide the others",
        "hide the airway and remove the others", "Danke Anna, hide the model"])])
def test_the_plan_orders_to_others_and_exceptions_change_nothing(
        setup: tuple[str, ...], said: str) -> None:
    con = Console()
    for s in setup:
        con.say(s)
    before = con.snap
    assert con.say(said) == []
    assert con.snap == before


def test_no_left_middle_lobe_is_made_up_from_a_side_after_a_list() -> None:
    said = "show the middle lobe and the lower one, of the left side"
    assert normalize(said) == said


def test_zooming_and_hiding_the_rest_does_both() -> None:
    assert correct("zoom in on the nodule and hide the rest").text == \
        "zoom in on the nodule and hide the rest"


@pytest.mark.parametrize("said, meant", [
    ("the fissure's pretty incomplete here", "the fissure is pretty incomplete here"),
    ("the model's too small", "the model is too small"),
    ("the nodule's been marked", "the nodule has been marked"),
    ("show the patient's age", "show the patient age"),
])
def test_s_before_a_degree_word_or_participle_is_a_verb_else_a_possessive(
        said: str, meant: str) -> None:
    assert normalize(said) == meant


@pytest.mark.parametrize("said, step", [
    ("the fissure's pretty incomplete here, let's have the 3D reconstruction", "AR.SHOW"),
    ("the fissure is incomplete here, can we have the CT", "IV.SHOW_MOVE"),
])
def test_a_remark_before_a_framed_request_is_set_aside(said: str, step: str) -> None:
    con = Console()
    assert [a for a, _ in con.say(said)] == [step]


def test_a_remark_before_a_frame_with_nothing_of_ours_changes_nothing() -> None:
    con = Console()
    con.say("show the 3d model")
    before = con.snap
    assert con.say("the nodule is small, let us leave it") == []
    assert con.snap == before


@pytest.mark.parametrize("said", ["give me anterior retraction", "anterior traction please",
                                  "more suction on the left"])
def test_words_of_other_talk_are_not_corrected_into_console_words(said: str) -> None:
    assert correct(said).text == said
    con = Console()
    con.say("show the 3d model")
    before = con.snap
    assert con.say(said) == []
    assert con.snap == before


@pytest.mark.parametrize("said, shown", [
    ("show the nodules, not the left lower lobe", ["lung_nodules"]),
    ("add the right lower lobe, not the right middle lobe", ["right_lower_lobe"]),
    ("show the left lung, not the right lung", ["left_lower_lobe", "left_upper_lobe"]),
])
def test_a_lobe_refused_after_a_structure_is_not_added(said: str, shown: list[str]) -> None:
    con = Console()
    con.say("show the 3d model")
    assert con.say(said) == [("AR.SHOW", {"structures": shown, "op": "add"})]


@pytest.mark.parametrize("said", ["is the airway clear", "are the views clear"])
def test_clear_in_a_question_about_a_state_removes_nothing(said: str) -> None:
    con = Console()
    con.say("show the ct and the 3d model")
    before = con.snap
    assert con.say(said) == []
    assert con.snap == before


def test_clear_at_the_start_of_a_request_still_removes() -> None:
    con = Console()
    con.say("show the 3d model")
    assert con.say("clear the airway") == [
        ("AR.SHOW", {"structures": ["trachea_bronchia"], "op": "remove"})]


@pytest.mark.parametrize("said, steps", [
    ("remove everything except the ct", [("IR.HIDE", {}), ("AR.REMOVE", {})]),
    ("remove all the overlays except the CT", [("IR.HIDE", {}), ("AR.REMOVE", {})]),
    ("hide everything, keep only the model", [("IR.HIDE", {}), ("IV.REMOVE", {})]),
    ("remove everything, leave only the PFT and the diagnosis", [
        ("IR.SHOW", {"fields": ["diagnosis", "pft"]})]),
    ("clear it all except the nodules", [("AR.SHOW", {"structures": ["lung_nodules"]})]),
])
def test_removing_everything_but_what_is_kept_keeps_it(said: str, steps: list) -> None:
    con = Console()
    for s in ("show the patient info", "show the 3d model", "show the ct"):
        con.say(s)
    assert con.say(said) == steps


@pytest.mark.parametrize("said", ["Noch mal.", "Encore.", "Zai lai yi ci — once more.",
                                  "otra vez, por favor"])
def test_again_in_another_language_repeats_the_last_command(said: str) -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("zoom in on the nodule")
    assert con.say(said) == [("AR.ZOOM_IN", {"target": "lung_nodules"})]


def test_a_foreign_opener_before_a_request_is_no_repeat() -> None:
    con = Console()
    con.say("show the 3d model")
    assert correct("encore, rotate left").text != "again"


@pytest.mark.parametrize("said, steps", [
    ("D'accord, the small views.", [("IV.ZOOM_OUT", {})]),
])
def test_a_courtesy_word_of_another_language_opens_a_request(said: str, steps: list) -> None:
    con = Console()
    con.say("show the ct")
    con.say("zoom in on the coronal")
    con.say("coronal minus 40")
    assert con.say(said) == steps


def test_displays_shown_together_are_both_shown() -> None:
    con = Console()
    assert con.say("Perfetto. Now, the CT and the 3D model together, per favore.") == [
        ("IV.SHOW_MOVE", {}), ("AR.SHOW", {})]


@pytest.mark.parametrize("said, steps", [
    ("Okay and then the axial, I guess, take it up to, what, eighty? Yeah, eighty.",
     [("IV.SHOW_MOVE", {"axial": 80})]),
    ("hmm, the sagittal, I think, 300", [("IV.SHOW_MOVE", {"sagittal": 300})]),
])
def test_the_plane_named_while_thinking_aloud_is_the_one_moved(said: str, steps: list) -> None:
    con = Console()
    con.say("show the ct")
    con.say("coronal minus 40")
    assert con.say(said) == steps


@pytest.mark.parametrize("said, steps", [
    ("could you please turn the left lower lobe on, oh sorry, the right lower lobe",
     [("AR.SHOW", {"structures": ["right_lower_lobe"], "op": "add"})]),
    ("axial up 20, oh, sorry", [("IV.SHOW_MOVE", {"axial": "+20"})]),
])
def test_an_interjection_before_sorry_still_marks_the_correction(said: str, steps: list) -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("show the ct")
    assert con.say(said) == steps


@pytest.mark.parametrize("said, steps", [
    ("I want the left side in there too", [
        ("AR.SHOW", {"structures": ["left_lower_lobe", "left_upper_lobe"], "op": "add"})]),
    ("show the left side", [("AR.SHOW", {"view": "left"})]),
    ("view from the left side", [("AR.SHOW", {"view": "left"})]),
])
def test_a_side_added_is_that_lung_and_a_side_shown_is_the_view(said: str, steps: list) -> None:
    con = Console()
    con.say("show the 3d model")
    assert con.say(said) == steps


@pytest.mark.parametrize("said, steps", [
    ("now the model: hide the airway, I can't see past it",
     [("AR.SHOW", {"structures": ["trachea_bronchia"], "op": "remove"})]),
    ("hide the patient info, it's in the way", [("IR.HIDE", {})]),
])
def test_the_reason_said_after_a_request_is_set_aside(said: str, steps: list) -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("show the patient info")
    assert con.say(said) == steps


@pytest.mark.parametrize("said", [
    "Have a look at his FEV1 there, doctor, that's why he can tolerate a lobectomy.",
    "Look at the PFT, doctor."])
def test_a_title_called_between_pauses_is_talk_to_that_person(said: str) -> None:
    con = Console()
    con.say("show the patient info")
    before = con.snap
    assert con.say(said) == []
    assert con.snap == before


def test_a_title_before_a_new_sentence_to_the_console_leaves_the_request() -> None:
    con = Console()
    assert con.say("Sure, doctor. davinci, show the pulmonary function results") == [
        ("IR.SHOW", {"fields": ["pft"]})]


def test_the_other_way_after_a_zoom_and_a_move_reverses_the_move() -> None:
    con = Console()
    con.say("show the ct")
    con.say("coronal minus 56")
    con.say("same for sagittal")
    con.say("zoom in on coronal and move it forward 20")
    assert con.say("the other way") == [("IV.SHOW_MOVE", {"coronal": "-20"})]
    assert con.snap["iv"]["pos"] == {"axial": 64, "coronal": 200, "sagittal": 200}


@pytest.mark.parametrize("said, steps", [
    ("axial plus 20, no, 30", [("IV.SHOW_MOVE", {"axial": "+30"})]),
    ("axle plus twenty no thirty", [("IV.SHOW_MOVE", {"axial": "+30"})]),
    ("coronal minus 20, no, 40", [("IV.SHOW_MOVE", {"coronal": "-40"})]),
    ("axial 100, no, 120", [("IV.SHOW_MOVE", {"axial": 120})]),
])
def test_a_bare_number_after_no_replaces_the_last_number_keeping_its_sign(
        said: str, steps: list) -> None:
    con = Console()
    con.say("show the ct")
    assert con.say(said) == steps


def test_a_last_word_cut_off_is_the_one_console_term_it_begins() -> None:
    assert correct("same for sagitt").text == "same for sagittal"
    assert correct("zoom in on the coron").text == "zoom in on the coronal"


def test_a_spelled_abbreviation_said_as_a_plural_is_joined() -> None:
    assert normalize("add the p f ts") == "add the pfts"
    assert normalize("b m i is 24") == "bmi is 24"


@pytest.mark.parametrize("heard, meant", [
    ("add the left up a lobe", "add the left upper lobe"),
    ("enable the tray kia and bronk eye", "enable the trachea and bronchi"),
])
def test_split_sound_alikes_of_structures_are_read_as_them(heard: str, meant: str) -> None:
    assert normalize(heard) == meant


_ALL_SHOWN = ("show the patient info", "show the ct", "show the 3d model")


@pytest.mark.parametrize("said", [
    "don't hide it", "don't hide the airway", "do not spin the model", "please don't remove it",
    "don't hide it, I can't see without it", "don't spin it, because I get dizzy",
    "the node's pretty big, we might need to remove it", "the leak's gone, we could close now",
    "the resident's been great, let's have her close",
    "the patient's really frail, we might just wedge the right upper lobe",
    "the fissure's pretty complete, we might not need the ct",
    "the nodule is small, we might need the ct later", "can we turn up the warmer",
    "axial up 20, oh sorry, go ahead", "thanks Maxim", "what would you infer",
    "put it on the poster", "Hmm, the axial. I think it's fine. Leave it.",
    "the airway, I can't see past it"])
def test_negations_plans_and_apologies_near_the_new_readings_change_nothing(said: str) -> None:
    con = Console()
    for s in _ALL_SHOWN:
        con.say(s)
    before = con.snap
    con.say(said)
    assert con.snap == before


@pytest.mark.parametrize("said, steps", [
    ("hide the airway, doctor",
     [("AR.SHOW", {"structures": ["trachea_bronchia"], "op": "remove"})]),
    ("show the ct, doctor, so you can see", [("IV.SHOW_MOVE", {})]),
    ("the nodule's not showing", [("AR.SHOW", {"structures": ["lung_nodules"], "op": "add"})]),
    ("the airway's clearly in the way",
     [("AR.SHOW", {"structures": ["trachea_bronchia"], "op": "remove"})]),
    ("hide it all, and the model too", [("AR.REMOVE", {})]),
    ("hide the patient info, oh sorry", [("IR.HIDE", {})]),
    ("coronal plus 20, oh sorry", [("IV.SHOW_MOVE", {"coronal": "+20"})]),
    ("show the pft, doctor.", [("IR.SHOW", {"fields": ["pft"]})]),
    ("remove it all, keep the 3d model and the airway", [("IR.HIDE", {}), ("IV.REMOVE", {})]),
    ("add the nodules on the left side",
     [("AR.SHOW", {"structures": ["lung_nodules"], "op": "add", "view": "left"})]),
])
def test_ordinary_requests_near_the_new_readings_still_act(said: str, steps: list) -> None:
    con = Console()
    for s in _ALL_SHOWN:
        con.say(s)
    assert con.say(said) == steps


def test_a_title_called_first_after_a_courtesy_word_is_talk_to_that_person() -> None:
    con = Console()
    con.say("show the 3d model")
    before = con.snap
    con.say("Domnule doctor, rotate the lung little bit to the left, I cannot see.")
    assert con.snap == before
    assert con.say("Okay doctor, hide the airway") == [
        ("AR.SHOW", {"structures": ["trachea_bronchia"], "op": "remove"})]


def test_the_lobes_on_a_side_are_that_lung_s_lobes_not_a_view() -> None:
    con = Console()
    con.say("show the 3d model")
    assert con.say("add the lobes on the right side") == [
        ("AR.SHOW", {"structures": ["right_lower_lobe", "right_middle_lobe", "right_upper_lobe"],
                     "op": "add"})]


def test_a_wish_after_a_remark_is_no_plan() -> None:
    from app.agents.context_rules import _a_plan
    assert not _a_plan(["and", "i", "think", "i", "will", "want", "the", "diagnosis", "up", "too"])
    assert _a_plan(["we", "might", "need", "to", "remove", "it"])
