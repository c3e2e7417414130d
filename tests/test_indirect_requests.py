"""Requests said indirectly: inside a polite frame, relayed for someone else, after thinking
aloud, with the object first, in the passive (DESIGN §3 "data, not code", §4).

The frame's words are language data (``words.toml``); a frame is set aside and the request
read alone, while talk to people and remarks stay out of scope.
"""

from __future__ import annotations

import pytest

from app.language.frames import unframe
from tests.test_lexicon import Console


@pytest.fixture
def con() -> Console:
    return Console()


@pytest.mark.parametrize(("text", "inner"), [
    ("I wonder if we could move the coronal a little further forward.",
     "move the coronal a little further forward"),
    ("davinci, good morning. I wonder if you might be so kind as to bring up the patient's "
     "details for us.", "bring up the patient's details"),
    ("Would you be kind enough to take the right lower lobe out of the model?",
     "take the right lower lobe out of the model"),
    ("Dr Okafor wants the axial at slice forty.", "the axial at slice forty"),
    ("the consultant would like to see the age", "see the age"),
    ("Reset the model, she says.", "Reset the model"),
    ("And if it isn't too much bother, the right lower lobe as well.",
     "the right lower lobe as well"),
    ("It would be rather helpful to see the right middle lobe too",
     "see the right middle lobe too"),
])
def test_a_frame_is_set_aside_and_the_request_kept_as_said(text: str, inner: str) -> None:
    framed = unframe(text)
    assert framed is not None and framed.request == inner


@pytest.mark.parametrize("text", ["show the CT", "zoom in please", "coronal plus 50",
                                  "Dr Lee, can you move the table", "the other way"])
def test_plain_commands_and_talk_to_a_person_have_no_frame(text: str) -> None:
    assert unframe(text) is None


def test_thinking_aloud_is_marked_as_a_hedge() -> None:
    framed = unframe("I think the sagittal maybe to three hundred")
    assert framed is not None and framed.hedge


def test_a_polite_request_acts_like_the_plain_one(con: Console) -> None:
    con.say("show the CT")
    acts = con.say("I wonder if the axial could be set to slice ninety, if that's all right.")
    assert acts == [("IV.SHOW_MOVE", {"axial": 90})]
    assert con.last is not None and con.last.decision.diagnostics.get("frame")


def test_a_relayed_request_is_for_the_console_not_a_person(con: Console) -> None:
    con.say("show the CT")
    assert con.say("Dr Okafor wants the axial at slice forty.") == [
        ("IV.SHOW_MOVE", {"axial": 40})]
    assert con.snap["iv"]["pos"]["axial"] == 40


def test_a_name_called_out_stays_out_of_scope(con: Console) -> None:
    con.say("show the CT")
    before = con.snap
    assert con.say("Dr Okafor, can you move the axial up?") == []
    assert con.snap == before


def test_a_relay_tail_does_not_name_the_patient(con: Console) -> None:
    con.say("show the 3D model")
    con.say("rotate left")
    acts = con.say("reset the model, she says.")
    assert [a for a, _ in acts] == ["AR.RESET"]


def test_a_hedged_remark_stays_a_remark(con: Console) -> None:
    con.say("show the CT")
    before = con.snap
    assert con.say("I think the tumour is bigger than last time") == []
    assert con.snap == before


@pytest.mark.parametrize(("text", "expected"), [
    ("the airway, disable", ("AR.SHOW", {"structures": ["trachea_bronchia"], "op": "remove"})),
    ("please, the lower left lobe, add it",
     ("AR.SHOW", {"structures": ["left_lower_lobe"], "op": "add"})),
    ("take the right upper lobe out of the model",
     ("AR.SHOW", {"structures": ["right_upper_lobe"], "op": "remove"})),
])
def test_an_object_said_before_or_around_its_verb(con: Console, text: str,
                                                  expected: tuple) -> None:
    con.say("show the 3D model")
    assert con.say(text) == [expected]


def test_verb_forms_read_as_the_verb(con: Console) -> None:
    con.say("show the 3D model")
    acts = con.say("Would you mind showing it from the posterior view and then swinging it "
                   "upward?")
    assert acts == [("AR.SHOW", {"view": "posterior"}), ("AR.ROTATE", {"direction": "up"})]


def test_the_wake_word_said_twice(con: Console) -> None:
    con.say("show the 3D model")
    acts = con.say("davinci davinci, posterior view and rotate horizontal")
    assert acts == [("AR.SHOW", {"view": "posterior"}),
                    ("AR.ROTATE", {"direction": "horizontal"})]


def test_pointing_something_out_to_the_room_is_out_of_scope(con: Console) -> None:
    con.say("show the 3D model")
    before = con.snap
    assert con.say("See here, that's the upper lobe bronchus, look up at it") == []
    assert con.snap == before


def test_a_framed_request_after_a_remark_in_its_own_sentence() -> None:
    framed = unframe("Thank you so much. Could you also show the patient's age?")
    assert framed is not None and framed.request == "also show the patient's age"
    assert unframe("Nice. Show the CT.") is None


@pytest.mark.parametrize(("before", "text", "expected"), [
    (["show the patient info"], "and the age, no, the BMI",
     [("IR.SHOW", {"fields": ["bmi"], "op": "add"})]),
    (["show the 3D model"], "uh, the nodules, um, add those",
     [("AR.SHOW", {"structures": ["lung_nodules"], "op": "add"})]),
    (["show the 3D model"], "chuck the nodules and the RUL off",
     [("AR.SHOW", {"structures": ["lung_nodules", "right_upper_lobe"], "op": "remove"})]),
    (["show the patient info"], "whats the operation and the date",
     [("IR.SHOW", {"fields": ["operation_date", "operation_name"]})]),
])
def test_lists_corrections_and_particles_said_loosely(con: Console, before: list[str],
                                                      text: str, expected: list) -> None:
    assert con.say_after(before, text) == expected


@pytest.mark.parametrize(("before", "text", "expected"), [
    (["show the CT"], "Ehm... forward fifty.", [("IV.SHOW_MOVE", {"coronal": "+50"})]),
    (["show the CT", "forward fifty"], "Too much. The other way.",
     [("IV.SHOW_MOVE", {"coronal": "-50"})]),
    (["show the CT"], "Dammit, way too far. Axial 90.", [("IV.SHOW_MOVE", {"axial": 90})]),
    (["show the patient info"],
     "Mamma mia, that's a lot. Just the age and the tumour site, please.",
     [("IR.SHOW", {"fields": ["age", "sex", "tumor_location"]})]),
    (["show the 3D model"], "left lung off",
     [("AR.SHOW", {"structures": ["left_lower_lobe", "left_upper_lobe"], "op": "remove"})]),
    (["show the 3D model"], "left view rotate up",
     [("AR.SHOW", {"view": "left"}), ("AR.ROTATE", {"direction": "up"})]),
    ([], "davinci, gimme the chart.", [("IR.SHOW", {})]),
])
def test_exclamations_and_remarks_before_a_request(con: Console, before: list[str], text: str,
                                                   expected: list) -> None:
    assert con.say_after(before, text) == expected


@pytest.mark.parametrize("text", ["Nice anatomy, see how the bronchus branches here?",
                                  "look how the vessel runs behind the bronchus"])
def test_teaching_the_room_is_out_of_scope(con: Console, text: str) -> None:
    con.say("show the 3D model")
    before = con.snap
    assert con.say(text) == []
    assert con.snap == before


@pytest.mark.parametrize(("text", "expected"), [
    ("Actually, take the airway off, it's rather in the way.",
     [("AR.SHOW", {"structures": ["trachea_bronchia"], "op": "remove"})]),
    ("tracheo bronchial on", [("AR.SHOW", {"structures": ["trachea_bronchia"], "op": "add"})]),
    ("first, we take down the inferior pulmonary ligament, okay, so the lobe can come up", []),
])
def test_asides_split_words_and_surgical_acts(con: Console, text: str, expected: list) -> None:
    con.say_after(["show the 3D model", "remove the airway"] if "on" in text.split()
                  else ["show the 3D model"], "zoom out")
    assert con.say(text) == expected
