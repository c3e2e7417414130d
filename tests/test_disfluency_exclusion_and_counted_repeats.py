"""Rules generalised from the eighth phrasing probe (pd8): spoken disfluencies, exclusion and
contrast, "N more <direction>", counted repeats, all three planes, terse letters, "X can go",
and OR talk. Phrasings are our own (a few pd8-like ones are marked); DESIGN §4 is the spec.
"""

from __future__ import annotations

from typing import Any

import pytest

from app.agents.grammar_phrases import canonical
from app.core.vocab import LOBES
from app.language.correction import correct
from app.language.normalize import normalize
from app.language.validation import Validity, validate
from app.language.vocabulary import VOCABULARY
from tests.test_lexicon import Console

IV = "IV.SHOW_MOVE"


@pytest.fixture
def con() -> Console:
    return Console()


def _fixed(text: str) -> str:
    return correct(normalize(text), protected=VOCABULARY).text


def _validity(text: str) -> Validity:
    """What the interpreter's validation says about a spoken command."""
    fixed = _fixed(text)
    return validate(fixed, (), VOCABULARY, canonical(fixed))


# ---------------------------------------------------------------- disfluencies
@pytest.mark.parametrize("text, fluent", [
    ("go go down uh fifteen slices", "go down 15 slices"),  # pd8-like
    ("axial uh axial minus twenty", "axial -20"),
    ("show the the model", "show the model"),
    ("rotate vertical um horizontally", "rotate horizontally"),
    ("move the coronal uh the sagittal up", "move the sagittal up"),
    ("zoom in on the uh zoom in on the rul", "zoom in on the rul"),
    ("go left uh right twenty", "go right 20"),
    ("show the uh then zoom in", "show the then zoom in"),  # "the" is not a cut-off "then"
])
def test_false_starts_and_stutters_collapse_to_the_final_intent(text: str, fluent: str):
    assert _fixed(text) == fluent


@pytest.mark.parametrize("text", ["left left left", "up up", "more more"])
def test_meaningful_repetitions_stay(text: str):
    assert _fixed(text) == text


def test_fillers_alone_stay_silence():
    assert _validity("uh, um").empty


@pytest.mark.parametrize("before, text, params", [
    (["show the ct"], "sagittal uh sagittal plus thirty", {"sagittal": "+30"}),
    (["show the ct"], "go go up uh twelve", {"axial": "+12"}),
])
def test_disfluent_moves(con: Console, before: list[str], text: str, params: dict[str, Any]):
    assert con.say_after(before, text) == [(IV, params)]


def test_disfluent_rotation_keeps_the_last_choice(con: Console):
    assert con.say_after(["show the model"], "spin it vertic uh horizontally") == \
        [("AR.ROTATE", {"direction": "horizontal"})]


# ---------------------------------------------------------------- exclusion / contrast
def test_hiding_everything_but_a_lobe_leaves_that_lobe(con: Console):
    con.say_after(["show the model"], "get rid of everything apart from the RML")
    assert con.snap["ar"]["visible"] and con.snap["ar"]["structures"] == ["right_middle_lobe"]


def test_hiding_lobes_except_one_spares_it(con: Console):
    con.say_after(["show all lobes"], "remove all the lobes except the left upper")
    assert set(con.snap["ar"]["structures"]) & set(LOBES) == {"left_upper_lobe"}
    con2 = Console()
    con2.say_after(["show the model"], "hide the right lung but not the RUL")  # tumour lobe
    assert "right_upper_lobe" in con2.snap["ar"]["structures"]


def test_all_of_them_refers_to_what_was_just_named(con: Console):
    con.say_after(["show the model"], "just the lobes, all of them except the right middle lobe")
    assert con.snap["ar"]["structures"] == sorted(set(LOBES) - {"right_middle_lobe"})


@pytest.mark.parametrize("before, text, check", [
    (["show the model"], "bring up the CT but keep the model as it is",
     lambda s: s["iv"]["mode"] == "small_views" and s["ar"]["visible"]),
    (["show the ct", "show patient info"], "close the scan but not the patient info",
     lambda s: s["iv"]["mode"] == "none" and s["ir"]["visible"]),
    (["show the model", "show patient info"], "remove the 3d model, leave the patient box on",
     lambda s: not s["ar"]["visible"] and s["ir"]["visible"]),
    (["show the model", "show patient info"], "Clear the model and leave the patient info up.",
     lambda s: not s["ar"]["visible"] and s["ir"]["visible"]),  # pd8
])
def test_a_display_said_to_stay_is_left_alone(con: Console, before: list[str], text: str,
                                              check: Any):
    con.say_after(before, text)
    assert check(con.snap), con.snap


def test_not_this_just_that(con: Console):
    con.say_after(["show patient info"], "not the age, only the comorbidities")
    assert con.snap["ir"]["fields"] == ["comorbidities"]


def test_an_exception_inside_one_display_is_still_read(con: Console):
    con.say_after(["show patient info"], "show all fields but not the height")
    assert "height" not in con.snap["ir"]["fields"] and "weight" in con.snap["ir"]["fields"]


# ---------------------------------------------------------------- numbers and repeats
def test_n_more_with_a_direction_is_a_step_of_n(con: Console):
    assert con.say_after(["show the ct", "go up"], "seven more upward") == \
        [(IV, {"axial": "+7"})]
    assert con.say("another 20 to the left") == [(IV, {"sagittal": "-20"})]


@pytest.mark.parametrize("before, text, params", [
    (["show the ct", "move forward"], "twice more", {"coronal": "+20"}),
    (["show the ct", "down 4"], "three times more", {"axial": "-12"}),
    (["show the ct", "left"], "do that twice", {"sagittal": "-20"}),
])
def test_counted_repeats_scale_the_move(con: Console, before: list[str], text: str,
                                        params: dict[str, Any]):
    assert con.say_after(before, text) == [(IV, params)]


def test_counted_repeat_of_a_model_zoom(con: Console):
    acts = con.say_after(["show the model", "zoom in"], "twice more")
    assert [a for a, _ in acts] == ["AR.ZOOM_IN", "AR.ZOOM_IN"]


@pytest.mark.parametrize("text", ["set all three planes to their middle slice",
                                  "put the three planes on the center"])
def test_all_three_planes_to_the_middle(con: Console, text: str):
    con.say_after(["show the ct", "axial 5, coronal 9, sagittal 30"], text)
    assert con.snap["iv"]["pos"] == {"axial": 64, "coronal": 256, "sagittal": 256}


# ---------------------------------------------------------------- one-offs, in general form
@pytest.mark.parametrize("text, direction", [("rot R", "right"), ("turn it l", "left"),
                                             ("rot L.", "left")])
def test_terse_direction_letters(con: Console, text: str, direction: str):
    assert con.say_after(["show the model"], text) == [("AR.ROTATE", {"direction": direction})]


def test_rotate_with_a_spelled_lobe_is_not_a_direction():
    assert _fixed("rotate r u l") == "rotate rul"


@pytest.mark.parametrize("before, text, key, gone", [
    (["show patient info"], "the weight can go as well", "ir", "weight"),
    (["show the model"], "the airway can go now", "ar", "trachea_bronchia"),
])
def test_a_part_that_can_go_is_removed(con: Console, before: list[str], text: str, key: str,
                                       gone: str):
    con.say_after(before, text)
    shown = con.snap[key]["fields" if key == "ir" else "structures"]
    assert con.snap[key]["visible"] and gone not in shown


def test_man_or_woman_on_the_table_asks_for_sex():
    assert _validity("is that a male or a female on the table").valid
    assert not _validity("raise the table").valid
    assert not _validity("the patient on the table is cold").valid


@pytest.mark.parametrize("text", ["done, closing", "finished, closing now",
                                  "we are closing"])
def test_closing_the_patient_is_or_talk(text: str):
    assert not _validity(text).valid


def test_closing_a_display_is_still_a_command(con: Console):
    assert con.say_after(["show the ct"], "closing the ct") == [("IV.REMOVE", {})]
