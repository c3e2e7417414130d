"""Rules every tier's decision obeys (DESIGN §3) and the §4 edit semantics, through the
interpreter: polarity, what a later tier may not invent, structure and field edits, talk
addressed to people, repeated directions, undo phrases and number words."""

from __future__ import annotations

from typing import Any

import pytest

from app.agents.checks import addressed_to_person, contradiction, ungrounded
from app.agents.decision import Decision, Memory
from app.agents.interpreter import FastInterpreter
from app.core.registry import Step
from app.core.state import ConsoleState
from app.language.normalize import normalize, tokens_of
from tests.test_lexicon import Console


class _Tier:
    """A later tier that always answers the same plan, confidently."""

    name = "llm"

    def __init__(self, *steps: Step) -> None:
        self.steps = list(steps)

    def decide(self, corrected: str, state: ConsoleState, memory: Memory) -> Decision | None:
        return Decision(True, self.steps, self.steps[0].action_id[:2], 0.95, self.name)


def _toks(text: str) -> list[str]:
    return tokens_of(normalize(text))


@pytest.mark.parametrize("text, step", [
    ("lesion off", Step("AR.SHOW", {"structures": ["lung_nodules"], "op": "add"})),
    ("bring down the model", Step("AR.SHOW", {})),  # showing what was said to take down
    ("no need for the patient info", Step("IR.SHOW", {})),
    ("zoom out on the model", Step("AR.ZOOM_IN", {})),
    ("zoom in on the nodule", Step("AR.ZOOM_OUT", {})),
])
def test_a_reading_that_says_the_opposite_of_the_words_is_refused(text: str, step: Step) -> None:
    assert contradiction([step], _toks(text)) is not None


def test_a_plan_that_zooms_both_ways_for_words_that_zoom_one_way_is_refused() -> None:
    steps = [Step("AR.ZOOM_OUT", {}), Step("AR.ZOOM_IN", {}), Step("AR.ZOOM_OUT", {})]
    assert contradiction(steps, _toks("zoom out one more, si ndiyo?")) is not None
    assert contradiction(steps[:2], _toks("again, and then zoom out")) is None


def test_a_composite_that_zooms_both_ways_is_not_a_contradiction() -> None:
    steps = [Step("IV.ZOOM_OUT", {}), Step("AR.ZOOM_IN", {"target": "lung_nodules"})]
    assert contradiction(steps, _toks("back to small views plus a close-up of the nodule")) is None


@pytest.mark.parametrize("text, step", [
    ("uh the nodules add those", Step("AR.ROTATE", {"direction": "static"})),
    ("show the patient info", Step("AR.SHOW", {"view": "anterior"})),
    ("have a gander at it from the top", Step("IR.SHOW", {"fields": ["age", "sex"]})),
    ("bring the axial up a bit", Step("IV.SHOW_MOVE", {"axial": "+1"})),
    ("show the ct", Step("IR.RESET", {})),
    ("the left upper lobe on, i would like our trainee to compare the fissures",
     Step("AR.SHOW", {"structures": ["left_upper_lobe"], "view": "anterior", "op": "add"})),
])
def test_a_later_tier_may_not_do_what_no_word_asked_for(text: str, step: Step) -> None:
    assert ungrounded([step], _toks(text)) is not None


@pytest.mark.parametrize("text, step", [
    ("give it a wiggle", Step("AR.ROTATE", {"direction": "horizontal"})),
    ("axial up a bit", Step("IV.SHOW_MOVE", {"axial": "+10"})),
    ("coronal 250", Step("IV.SHOW_MOVE", {"coronal": 250})),
    ("how tall is she", Step("IR.SHOW", {"fields": ["height"]})),
    ("view it from the top", Step("AR.SHOW", {"view": "superior"})),
    ("the other side", Step("AR.SHOW", {"view": "left"})),
    ("turn it so we look from the right", Step("AR.SHOW", {"view": "right"})),
])
def test_a_later_tier_reading_grounded_in_the_words_passes(text: str, step: Step) -> None:
    assert ungrounded([step], _toks(text)) is None


def test_an_invented_rotation_from_the_llm_is_not_acted_on() -> None:
    con = Console(FastInterpreter(tiers=[_Tier(Step("AR.ROTATE", {"direction": "left"}))]))
    con.say("show the 3d model")
    acts = con.say("do the fnord with the model")
    assert all(a != "AR.ROTATE" for a, _ in acts), acts
    assert con.snap["ar"]["rotation"] == "static"


def _structures(con: Console) -> list[str]:
    return con.snap["ar"]["structures"]


def test_naming_structures_to_show_adds_them_to_those_shown() -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("show the left lung")
    assert _structures(con) == ["left_lower_lobe", "left_upper_lobe", "lung_nodules",
                                "right_upper_lobe", "trachea_bronchia"]
    con.say("RLL on")
    assert "right_lower_lobe" in _structures(con)
    con.say("only the RUL")
    assert _structures(con) == ["right_upper_lobe"]


def test_a_structure_edit_on_a_first_show_applies_to_the_default_set() -> None:
    con = Console()
    con.say("show the right middle lobe")
    assert _structures(con) == ["lung_nodules", "right_middle_lobe", "right_upper_lobe",
                                "trachea_bronchia"]


def test_removing_every_structure_keeps_the_model_on_screen_until_it_is_removed() -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("take the right upper lobe off")
    con.say("hide the nodules")
    con.say("turn off the airway")
    assert con.snap["ar"]["visible"] and _structures(con) == []
    con.say("remove the 3d model")
    assert not con.snap["ar"]["visible"]


def test_a_model_shown_again_comes_back_with_its_view_and_zoom() -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("superior view")
    con.say("zoom in on the nodule")
    con.say("remove the 3d model")
    con.say("show the left lung")
    ar = con.snap["ar"]
    assert ar["visible"] and ar["view"] == "superior" and ar["zoom_level"] == 1
    assert "left_upper_lobe" in ar["structures"] and "lung_nodules" in ar["structures"]


@pytest.mark.parametrize("before, text, fields", [
    (["show the bmi"], "and the spirometry", ["bmi", "pft"]),
    (["show the diagnosis"], "age also", ["age", "diagnosis", "sex"]),
    (["show the bmi"], "and how tall, and what do they weigh", ["bmi", "height", "weight"]),
    (["show the bmi"], "show her age plus her weight", ["age", "sex", "weight"]),
    (["show the bmi"], "what's the diagnosis", ["diagnosis"]),
])
def test_and_also_too_add_fields_while_show_sets_them(before: list[str], text: str,
                                                      fields: list[str]) -> None:
    con = Console()
    con.say_after(before, text)
    assert con.snap["ir"]["fields"] == fields


@pytest.mark.parametrize("raw", [
    "How old did you say she was, Tom?",
    "that's the wrong side, Morag, gie it tae me on the left",
    "Can someone push the monitor back a bit?",
    "Jen, rotate arm three to the left",
])
def test_talk_addressed_to_a_person_is_out_of_scope(raw: str) -> None:
    con = Console()
    con.say("show the ct")
    before = con.snap
    assert con.say(raw) == []
    assert con.snap == before
    assert con.last is not None and not con.last.valid


@pytest.mark.parametrize("raw", ["Okay, show the CT.", "Davinci, zoom in.",
                                 "Show the CT, please.", "Perfect, thanks. Coronal 200."])
def test_openers_and_politeness_are_not_names(raw: str) -> None:
    from app.language.command_words import DOMAIN_WORDS
    from app.language.vocabulary import VOCABULARY

    assert addressed_to_person(raw, VOCABULARY | DOMAIN_WORDS) is None


@pytest.mark.parametrize("text, params", [
    ("axial down down", {"axial": "-20"}),
    ("ax up up up", {"axial": "+30"}),
    ("sag left left left", {"sagittal": "-30"}),
    ("and coronal forward forward", {"coronal": "+20"}),
    ("axial up 20", {"axial": "+20"}),
])
def test_the_same_direction_said_again_after_a_plane_multiplies_the_step(
        text: str, params: dict[str, Any]) -> None:
    con = Console()
    con.say("show the ct")
    assert con.say(text) == [("IV.SHOW_MOVE", params)]


@pytest.mark.parametrize("text", ["back to where we were", "hmm, back to where we were",
                                  "go back to where we were please",
                                  "Jamkkanman... go back to where we were."])
def test_back_to_where_we_were_undoes_the_last_move(text: str) -> None:
    con = Console()
    con.say("show the ct")
    con.say("coronal plus 20")
    con.say("axial down 30")
    con.say(text)
    assert con.snap["iv"]["pos"] == {"axial": 64, "coronal": 276, "sagittal": 256}


def test_three_hundreds_in_a_row_are_three_numbers() -> None:
    assert normalize("move to one hundred three hundred five hundred") == "move to 100 300 500"
    assert normalize("two hundred and five") == "205"
    assert normalize("one hundred three") == "103"


@pytest.mark.parametrize("text", ["davinci, pop the CT up would you", "stick the CT up an' all",
                                  "righto davinci, chuck the CT up"])
def test_a_display_put_up_is_shown_not_moved(text: str) -> None:
    con = Console()
    con.say(text)
    iv = con.snap["iv"]
    assert iv["mode"] == "small_views" and iv["pos"]["axial"] == 64


def test_parsed_slice_values_are_checked_like_spoken_ones() -> None:
    from app.core.params import SliceValue

    toks = _toks("grand, bring the axial up a bit")
    assert ungrounded([Step("IV.SHOW_MOVE", {"axial": SliceValue("rel", 1)})], toks)
    assert ungrounded([Step("IV.SHOW_MOVE", {"axial": SliceValue("rel", 10)})], toks) is None
    assert ungrounded([Step("IV.SHOW_MOVE", {"axial": SliceValue("named", "max")})],
                      _toks("axial up")) is not None


def test_an_unknown_field_word_is_not_a_request_for_every_field() -> None:
    con = Console()
    con.say("show the bmi")
    assert con.say("show me the patient's zorblat") == []
    assert con.snap["ir"]["fields"] == ["bmi"]
    con.say("open up the patient file")  # the box's own names still show every field
    assert "weight" in con.snap["ir"]["fields"]


@pytest.mark.parametrize("text, params", [
    ("coronal plus 50, wait, minus 50", {"coronal": "-50"}),
    ("axial 80, sorry, 90", {"axial": 90}),
])
def test_a_correction_after_wait_or_sorry_replaces_the_value(text: str,
                                                             params: dict[str, Any]) -> None:
    con = Console()
    con.say("show the ct")
    assert con.say(text) == [("IV.SHOW_MOVE", params)]


@pytest.mark.parametrize("text", ["nah, the other way", "grand, bring the axial up a bit",
                                  "aye, axial up"])
def test_regional_discourse_markers_are_not_content(text: str) -> None:
    con = Console()
    con.say("show the ct")
    con.say("axial down 20")
    acts = con.say(text)
    assert acts and acts[0][0] == "IV.SHOW_MOVE" and "axial" in acts[0][1], acts


@pytest.mark.parametrize("step", [Step("IV.SHOW_MOVE", {"coronal": "-10"}),
                                  Step("IV.SHOW_MOVE", {"axial": "+10"})])
def test_a_move_against_the_direction_words_is_refused(step: Step) -> None:
    # "down" with no plane named is the axial, downwards (DESIGN §4 direction convention)
    assert contradiction([step], _toks("hmm, maybe a bit too far, go down ten")) is not None


def test_a_move_with_the_direction_words_passes() -> None:
    assert contradiction([Step("IV.SHOW_MOVE", {"axial": "-10"})], _toks("go down ten")) is None
    assert contradiction([Step("IV.SHOW_MOVE", {"coronal": "+20"})],
                         _toks("coronal up 20")) is None  # a named plane: the grammar's pairing


@pytest.mark.parametrize("text, direction", [
    ("turn on the RLL and the RML", "right"),  # "turn on" switches, it does not turn
    ("the lob middle right also add", "right"),  # a direction word is not a rotation
    ("rotate it up", "left"),  # the other direction
])
def test_a_rotation_needs_a_turning_word_and_its_direction(text: str, direction: str) -> None:
    assert ungrounded([Step("AR.ROTATE", {"direction": direction})], _toks(text)) is not None


@pytest.mark.parametrize("text, direction", [("rotate left", "left"),
                                             ("spin it round", "horizontal"),
                                             ("turn it to the right", "right")])
def test_a_rotation_said_passes(text: str, direction: str) -> None:
    assert ungrounded([Step("AR.ROTATE", {"direction": direction})], _toks(text)) is None


def test_back_to_where_we_were_returns_the_slices_and_keeps_the_zoom_view() -> None:
    from app.session import build_console

    con = build_console(interpreter=FastInterpreter())
    con.say("show the ct")
    con.say("zoom in on the coronal")
    con.say("axial up 30")
    con.say("back to where we were")
    iv = con.snapshot()["iv"]
    assert iv["pos"]["axial"] == 64 and iv["mode"] == "zoom_view" and iv["main"] == "axial"


@pytest.mark.parametrize("text, params", [("axial 40 no 50", {"axial": 50}),
                                          ("rotate right no left", {"direction": "left"})])
def test_a_correction_without_a_pause_replaces_the_value(text: str,
                                                         params: dict[str, Any]) -> None:
    con = Console()
    con.say("show the ct")
    con.say("show the 3d model")
    acts = con.say(text)
    assert len(acts) == 1 and acts[0][1] == params, acts


@pytest.mark.parametrize("text", ["move the monitor a little to the left for me",
                                  "tilt the screen up"])
def test_moving_the_monitor_itself_is_out_of_scope(text: str) -> None:
    con = Console()
    con.say("show the ct")
    before = con.snap
    assert con.say(text) == [] and con.snap == before


def test_adding_all_the_fields_keeps_the_operation_date() -> None:
    con = Console()
    con.say("show the operation date")
    con.say("also add all the fields")
    assert "operation_date" in con.snap["ir"]["fields"] and len(con.snap["ir"]["fields"]) == 11


def test_teaching_talk_with_display_words_is_out_of_scope() -> None:
    con = Console()
    con.say("show the 3d model")
    before = con.snap
    assert con.say("so for the students this is a right upper lobe tumour you can see it on "
                   "the screen up there") == []
    assert con.snap == before
    assert con.say("as you can see, zoom in on the nodule")  # a console verb: a request


def test_turn_on_shows_structures() -> None:
    con = Console()
    con.say("show the 3d model")
    assert con.say("turn on the RLL and the RML")[0][1]["op"] == "add"


def test_structure_readings_need_a_structure_word_not_just_a_side() -> None:
    add = Step("AR.SHOW", {"structures": ["lung_nodules"], "op": "add"})
    assert ungrounded([add], _toks("hmm, I want to see the fissure, turn it to the right"))
    lung = Step("AR.SHOW", {"structures": ["left_lower_lobe", "left_upper_lobe"], "op": "add"})
    assert ungrounded([lung], _toks("show the left lung")) is None
    assert contradiction([Step("IV.SHOW_MOVE", {"coronal": "-40"})], _toks("ant 40"))


def test_an_explicit_add_wins_over_just() -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("just add the left lower lobe too")
    assert {"left_lower_lobe", "lung_nodules", "right_upper_lobe"} <= set(_structures(con))


def test_a_composite_that_hides_one_display_and_shows_another_passes() -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("enough of the 3D model, show me the CT")
    assert con.snap["iv"]["mode"] == "small_views"


@pytest.mark.parametrize("raw", ["Umm, show the CT.", "Beautiful, now zoom in on the axial.",
                                 "Exactly, coronal plus 20."])
def test_interjections_are_not_names(raw: str) -> None:
    from app.language.command_words import DOMAIN_WORDS
    from app.language.vocabulary import VOCABULARY

    assert addressed_to_person(raw, VOCABULARY | DOMAIN_WORDS) is None


def test_in_is_no_zoom_word_outside_zoom_phrases() -> None:
    assert contradiction([Step("IV.ZOOM_OUT", {})], _toks("put the CT in small views")) is None
    assert contradiction([Step("IV.SHOW_MOVE", {"axial": "+1"})],
                         _toks("show the left lower lobe and next slice")) is None


@pytest.mark.parametrize("text", ["Can we get the CT report from radiology?",
                                  "can you show me the CT from last year, for comparison?",
                                  "Doctor Lee, you look up here, on the monitor"])
def test_data_the_console_lacks_and_titled_names_are_out_of_scope(text: str) -> None:
    con = Console()
    con.say("show the ct")
    before = con.snap
    assert con.say(text) == [] and con.snap == before


def test_the_ct_from_the_top_is_still_a_move() -> None:
    con = Console()
    con.say("show the ct")
    assert con.say("show the ct from the top") == [("IV.SHOW_MOVE", {"axial": "max"})]
