"""Rules generalised from the ninth phrasing probe (pd9): the patient is not the model, "lung
nodules" are the nodules, pronouns and "the same for X" follow what the previous command named,
"the other side" reverses the last view, adding vs replacing, switching back to a display, and
"X up" for a display. Phrasings are our own (a few pd9-like ones are marked); DESIGN §4 is the
spec.
"""

from __future__ import annotations

from typing import Any

import pytest

from app.agents.grammar_phrases import canonical
from app.agents.interpreter import FastInterpreter
from app.core.vocab import AR_STRUCTURES, LOBES
from app.language.correction import correct
from app.language.normalize import normalize
from app.language.validation import Validity, validate
from app.language.vocabulary import VOCABULARY
from tests.test_lexicon import Console

AR_SHOW = "AR.SHOW"
LEFT_LUNG = ["left_lower_lobe", "left_upper_lobe"]


@pytest.fixture
def con() -> Console:
    return Console()


def _validity(text: str) -> Validity:
    fixed = correct(normalize(text), protected=VOCABULARY).text
    return validate(fixed, (), VOCABULARY, canonical(fixed))


# ---------------------------------------------------------------- the patient is not the model
@pytest.mark.parametrize("text", [
    "Rotate the patient a little to the right.",  # pd9-like
    "turn the patient onto her left side",
    "can we roll him slightly towards me",
    "tilt the patient head down",
    "could you reposition the patient",
    "swing her over to the right a bit",
])
def test_moving_the_patient_is_out_of_scope(text: str):
    valid, reason = _validity(text)
    assert not valid and "patient" in reason


@pytest.mark.parametrize("text", [
    "rotate the patient's model to the left",
    "turn the patient anatomy to the right",
    "move the patient box",
    "show the patient information",
    "turn it to the left",
])
def test_the_patients_displays_stay_in_scope(text: str):
    assert _validity(text).valid


def test_patient_rotation_changes_nothing(con: Console):
    con.say("show the model")
    before = con.snap
    assert con.say("rotate the patient slightly to the left") == []
    assert con.snap == before


# ---------------------------------------------------------------- "lung nodules"
def test_lung_nodules_are_the_nodules_not_the_lungs(con: Console):
    con.say_after(["show the model", "show the right lower lobe only"], "add the lung nodules")
    assert con.snap["ar"]["structures"] == ["lung_nodules", "right_lower_lobe"]
    assert con.say("zoom in on the lung nodule") == [("AR.ZOOM_IN", {"target": "lung_nodules"})]


@pytest.mark.parametrize("text, structures", [
    ("show the left lung nodules only", ["lung_nodules"]),
    ("show the lungs", sorted(LOBES)),
    ("show the left lung and the nodules", sorted([*LEFT_LUNG, "lung_nodules"])),
])
def test_a_lung_naming_where_nodules_are_is_no_lung(con: Console, text: str,
                                                    structures: list[str]):
    con.say("show the model")
    acts = con.say(text)
    assert acts[0][0] == AR_SHOW and acts[0][1]["structures"] == structures


# ---------------------------------------------------------------- adding vs replacing
@pytest.mark.parametrize("text", [
    "Put the trachea and bronchi in.",  # pd9-like
    "put in the airway",
    "throw the windpipe in please",
])
def test_put_x_in_adds(con: Console, text: str):
    con.say_after(["show the model", "show the right lung only"], text)
    assert con.snap["ar"]["structures"] == sorted(
        ["right_lower_lobe", "right_middle_lobe", "right_upper_lobe", "trachea_bronchia"])


@pytest.mark.parametrize("text, structures", [
    ("display all lobes", sorted(LOBES)),
    ("show all the lobes", sorted(LOBES)),
    ("show all structures", sorted(AR_STRUCTURES)),
])
def test_all_lobes_are_the_five_lobes(con: Console, text: str, structures: list[str]):
    con.say_after(["show the model"], text)
    # added to what is shown (DESIGN §4): the nodules and airway of the first show stay
    assert set(structures) <= set(con.snap["ar"]["structures"])
    assert {"lung_nodules", "trachea_bronchia"} <= set(con.snap["ar"]["structures"])


# ---------------------------------------------------------------- pronouns follow the last named
def test_it_after_hiding_a_structure_is_that_structure(con: Console):
    con.say_after(["show the model", "take the nodules off"], "pop them back in")
    assert "lung_nodules" in con.snap["ar"]["structures"]
    con.say("Hide it again.")  # pd9-like: the nodules, not the model
    assert con.snap["ar"]["visible"] and "lung_nodules" not in con.snap["ar"]["structures"]
    assert con.last is not None and con.last.decision.diagnostics.get("refers_back")


def test_zoom_in_on_it_targets_the_structure_just_added(con: Console):
    con.say_after(["show the model", "zoom in on the nodules", "add the left lower lobe"],
                  "zoom in on it")
    assert con.snap["ar"]["zoom_target"] == "left_lower_lobe"


def test_it_is_the_model_when_the_last_command_named_no_structure(con: Console):
    con.say_after(["show the model", "add the RML", "zoom out"], "get rid of it")
    assert not con.snap["ar"]["visible"]


@pytest.mark.parametrize("text, action", [
    ("turn it right", ("AR.ROTATE", {"direction": "right"})),
    ("show it from behind", (AR_SHOW, {"view": "posterior"})),
])
def test_it_with_a_swing_or_a_view_is_the_model(con: Console, text: str,
                                                action: tuple[str, dict[str, Any]]):
    assert con.say_after(["show the model", "take the left lung off"], text) == [action]


def test_make_it_bigger_keeps_the_current_target(con: Console):
    con.say_after(["show the model", "zoom in on the nodules", "add the RML"], "make it bigger")
    assert con.snap["ar"]["zoom_target"] == "lung_nodules"


# ---------------------------------------------------------------- "the same for X"
def test_the_same_for_repeats_the_last_action_with_the_new_object(con: Console):
    con.say_after(["show the model", "show both lungs", "hide the right lower lobe"],
                  "The same for the left lung.")  # pd9-like
    assert not set(LEFT_LUNG) & set(con.snap["ar"]["structures"])


@pytest.mark.parametrize("before, text, action", [
    (["show the model", "hide the left upper lobe"], "do the same with the right upper lobe",
     (AR_SHOW, {"structures": ["right_upper_lobe"], "op": "remove"})),
    (["show the model", "add the RML"], "same goes for the airway",
     (AR_SHOW, {"structures": ["trachea_bronchia"], "op": "add"})),
    (["show the ct", "coronal plus 20"], "likewise for the sagittal",
     ("IV.SHOW_MOVE", {"sagittal": "+20"})),
    (["show the weight"], "and the same for the height",
     ("IR.SHOW", {"fields": ["height"], "op": "add"})),  # "and X" adds (DESIGN §4)
])
def test_same_for_across_agents(con: Console, before: list[str], text: str,
                                action: tuple[str, dict[str, Any]]):
    assert con.say_after(before, text) == [action]


# ---------------------------------------------------------------- "the other side"
@pytest.mark.parametrize("view, text, opposite", [
    ("show the model from above", "and now the other side", "inferior"),
    ("show the posterior view", "from the opposite side", "anterior"),
    ("Show it from the left side.", "The other side.", "right"),  # pd9-like
])
def test_the_other_side_is_the_opposite_view(con: Console, view: str, text: str,
                                             opposite: str):
    assert con.say_after(["show the model", view], text) == [(AR_SHOW, {"view": opposite})]


def test_the_other_side_after_a_swing_swings_back(con: Console):
    assert con.say_after(["show the model", "rotate left"], "other side please") == [
        ("AR.ROTATE", {"direction": "right"})]


# ---------------------------------------------------------------- switching back to a display
def test_back_to_the_model_is_no_zoom_out(con: Console):
    acts = con.say_after(["show the ct", "show the model", "zoom in on the RUL", "axial up 10"],
                         "back on the model, zoom in once more")
    assert [a for a, _ in acts if a.startswith("AR.ZOOM")] == ["AR.ZOOM_IN"]
    assert con.snap["ar"]["zoom_level"] == 2


def test_back_to_the_ct_shows_it(con: Console):
    assert con.say_after(["show the ct", "show the model"], "go back to the CT") == [
        ("IV.SHOW_MOVE", {})]


# ---------------------------------------------------------------- "X up" with a display
@pytest.mark.parametrize("text, action", [
    ("I'd like the CT up, please.", ("IV.SHOW_MOVE", {})),  # pd9-like
    ("we want the model up", (AR_SHOW, {})),
    ("I need the patient info up", ("IR.SHOW", {})),
])
def test_a_display_wished_up_is_shown(con: Console, text: str,
                                      action: tuple[str, dict[str, Any]]):
    assert con.say(text) == [action]


@pytest.mark.parametrize("text, params", [
    ("axial up", {"axial": "+10"}),
    ("move up", {"axial": "+10"}),
    ("I want the axial up", {"axial": "+10"}),
    ("I'd like the CT up 20", {"axial": "+20"}),
])
def test_moves_up_stay_moves(con: Console, text: str, params: dict[str, Any]):
    assert con.say_after(["show the ct"], text) == [("IV.SHOW_MOVE", params)]


# ---------------------------------------------------------------- the matcher defers on "it"
def test_semantic_tier_leaves_referents_to_the_grammar():
    from app.agents.semantic import SemanticTier

    tier = SemanticTier()
    if not tier.warm():
        pytest.skip(tier.reason)
    tier.consult_below = 0.975  # type: ignore[attr-defined]  # as the factory sets it
    con = Console(FastInterpreter(tiers=[tier]))
    con.say_after(["show the model", "hide the airway", "bring it back"], "hide it again")
    assert con.snap["ar"]["visible"] and "trachea_bronchia" not in con.snap["ar"]["structures"]
    con.say_after(["show the right middle lobe too"], "zoom in on it")
    assert con.snap["ar"]["zoom_target"] == "right_middle_lobe"


def test_misspelled_device_words_stay_out_of_scope() -> None:
    """A recogniser's misspelling of an OR-device word ("Stapel the RUL bronchus", heard on the
    dev split's audio) is still an order to a device, not a request to show the RUL."""
    from app.language.validation import validate

    for text in ("stapel the rul bronchus", "fire the stapel now", "hand me the grasspur"):
        v = validate(text)
        assert not v.valid and v.reason.startswith("Out of scope"), (text, v)
    for text in ("show the rul", "zoom in on the nodule", "display the coronal slice"):
        assert validate(text).valid, text


def test_sound_alike_device_words_must_be_spelled_alike_too() -> None:
    from app.language.validation import _oos_sound_alikes

    # metaphone hears "story" as "suture" (S-T-R); the spelling says otherwise
    assert _oos_sound_alikes("what is her story", set()) == "what is her story"
    assert _oos_sound_alikes("stapel it", set()) == "staple it"
