"""Rules generalised from the phrasing probes pd15 (whole cases, self-corrections) and pd16
(questions): camera talk for zooming ("tighter", "fully out", "get nearer to X"), "that's
enough spinning", politeness that is no order ("kind enough to"), a display's action carried
to another display ("and the CT as well"), a plane said before its step ("axial, twenty
down"), the lobe on the side shown, two moves said as two, a repeat leading a composite,
corrections closed by "sorry" or opened by "no wait" / "well", questions that name a field
without its word ("what are we taking out today?", "what's she got?", "and when is it?"),
"the slice above", and questions about a structure that add it. Phrasings are our own."""

from __future__ import annotations

import pytest

from tests.test_lexicon import Console


@pytest.fixture
def con() -> Console:
    return Console()


# ------------------------------------------------------------------ 3D model
@pytest.mark.parametrize("text", ["tighter", "a bit tighter please"])
def test_tighter_zooms_in(con: Console, text: str) -> None:
    assert con.say_after(["show the model"], text) == [("AR.ZOOM_IN", {})]


def test_fully_out_and_step_back_out(con: Console) -> None:
    con.say_after(["show the model", "zoom in", "zoom in"], "fully out")
    assert con.snap["ar"]["zoom_level"] == 0
    con.say_after(["zoom in", "zoom in"], "could we step back out once")
    assert con.snap["ar"]["zoom_level"] == 1


def test_get_nearer_to_a_structure(con: Console) -> None:
    acts = con.say_after(["show the model"], "can we get nearer to the left lower lobe?")
    assert acts == [("AR.ZOOM_IN", {"target": "left_lower_lobe"})], acts


def test_enough_spinning_stops_and_kind_enough_is_polite(con: Console) -> None:
    assert con.say_after(["show the model", "spin it horizontally"],
                         "okay, that's enough rotating") == [("AR.ROTATE", {"direction": "static"})]
    con.say("clear the model")
    acts = con.say("would you be good enough to put the model up?")
    assert acts == [("AR.SHOW", {})], acts


@pytest.mark.parametrize("text, direction", [("can the model rock to the left?", "left"),
                                             ("could the model go round once?", "horizontal")])
def test_rock_and_go_round(con: Console, text: str, direction: str) -> None:
    assert con.say_after(["show the model"], text) == [("AR.ROTATE", {"direction": direction})]


def test_the_lobe_on_the_side_shown(con: Console) -> None:
    con.say_after(["show the model", "show only the left lung", "hide the LLL"],
                  "and the lower lobe too")
    assert "left_lower_lobe" in con.snap["ar"]["structures"]
    assert "right_lower_lobe" not in con.snap["ar"]["structures"]
    con.say("show the lower lobes")  # plural: both, added to what is shown (DESIGN §4)
    assert {"left_lower_lobe", "right_lower_lobe"} <= set(con.snap["ar"]["structures"])


def test_restore_that_lobe(con: Console) -> None:
    con.say_after(["show the model", "take the RUL off"], "restore that lobe")
    assert "right_upper_lobe" in con.snap["ar"]["structures"]


@pytest.mark.parametrize("text", ["how does the airway run on the model?",
                                  "what does the airway look like from behind?"])
def test_question_about_a_structure_adds_it(con: Console, text: str) -> None:
    con.say_after(["show the model"], text)
    assert {"trachea_bronchia", "right_upper_lobe"} <= set(con.snap["ar"]["structures"])


# ------------------------------------------------------------------ carried over
@pytest.mark.parametrize("first, then, want", [
    ("clear the model", "and the scan as well", "IV.REMOVE"),
    ("hide the CT", "and the model too", "AR.REMOVE"),
    ("reset the model", "and the CT as well please", "IV.RESET"),
])
def test_display_too_carries_the_action(con: Console, first: str, then: str, want: str) -> None:
    acts = con.say_after(["show the CT", "show the model", first], then)
    assert [a for a, _ in acts] == [want], acts


# ------------------------------------------------------------------ CT
def test_plane_said_before_its_step(con: Console) -> None:
    assert con.say_after(["show the CT"], "coronal, thirty back") == \
        [("IV.SHOW_MOVE", {"coronal": "-30"})]


def test_two_moves_said_as_two(con: Console) -> None:
    acts = con.say_after(["show the CT", "zoom in on the sagittal"], "right ten and down five")
    assert acts == [("IV.SHOW_MOVE", {"sagittal": "+10"}), ("IV.SHOW_MOVE", {"axial": "-5"})]
    assert con.snap["iv"]["main"] == "axial"


def test_a_repeat_leading_a_composite(con: Console) -> None:
    acts = con.say_after(["show the CT", "axial minus 15"], "again, then zoom in on the axial")
    assert acts == [("IV.SHOW_MOVE", {"axial": "-15"}),
                    ("IV.ZOOM_IN_MOVE", {"plane": "axial"})], acts


@pytest.mark.parametrize("text, step", [("what's on the slice above?", "+10"),
                                        ("show me the one below", "-10")])
def test_the_slice_above_and_below(con: Console, text: str, step: str) -> None:
    assert con.say_after(["show the CT"], text) == [("IV.SHOW_MOVE", {"axial": step})]


# ------------------------------------------------------------------ corrections
def test_correction_closed_by_sorry(con: Console) -> None:
    acts = con.say_after(["show the model"], "turn it horizontally. vertically, sorry.")
    assert acts == [("AR.ROTATE", {"direction": "vertical"})], acts


def test_no_wait_corrects(con: Console) -> None:
    acts = con.say_after(["show the CT"], "axial big. no wait, the sagittal.")
    assert acts == [("IV.ZOOM_IN_MOVE", {"plane": "sagittal"})], acts


def test_no_the_other_way_reverses_what_was_just_said(con: Console) -> None:
    acts = con.say_after(["show the model"], "swing it up. no, the other way.")
    assert acts == [("AR.ROTATE", {"direction": "down"})], acts


def test_well_leave_one_display(con: Console) -> None:
    con.say_after(["show the CT", "show the model"],
                  "clear everything. well, keep the CT, just hide the model.")
    assert con.snap["iv"]["mode"] != "none" and not con.snap["ar"]["visible"]


def test_field_for_field_correction(con: Console) -> None:
    acts = con.say_after(["show the patient info"], "show her weight, no, the height")
    assert acts == [("IR.SHOW", {"fields": ["height"]})], acts


# ------------------------------------------------------------------ patient questions
@pytest.mark.parametrize("text, field", [
    ("what are we doing today?", "operation_name"),
    ("so what has he got?", "diagnosis"),
    ("any heart or lung problems?", "comorbidities"),
])
def test_questions_naming_a_field_without_its_word(con: Console, text: str, field: str) -> None:
    acts = con.say(text)
    assert acts and field in acts[0][1]["fields"], acts


def test_and_when_is_it_after_the_operation(con: Console) -> None:
    con.say("what's the name of the operation?")
    acts = con.say("and when is it?")
    assert acts and "operation_date" in acts[0][1]["fields"], acts
    con2 = Console()
    con2.say("show the CT")
    assert not con2.interp.interpret("and when is it?", con2.state, con2.memory).valid


# ------------------------------------------------------------------ estimates
def test_a_number_said_as_an_estimate_is_no_slice(con: Console) -> None:
    acts = con.say_after(["show the CT"], "Sixty-something, wasn't she? Let me see the age.")
    assert acts == [("IR.SHOW", {"fields": ["age", "sex"]})], acts
    assert con.snap["iv"]["pos"]["axial"] == 64  # the CT did not move
    # "about 20ish" is still about 20
    assert con.say("axial down 20ish") == [("IV.SHOW_MOVE", {"axial": "-20"})]


def test_a_persons_number_and_a_tag_question_give_no_direction() -> None:
    con = Console()
    acts = con.say_after(["show the CT"], "She's 60ish, right? Show the age.")
    assert acts == [("IR.SHOW", {"fields": ["age", "sex"]})], acts
    assert con.snap["iv"]["pos"] == {"axial": 64, "coronal": 256, "sagittal": 256}
    acts = con.say("That's the lower lobe, right? Zoom in on it.")
    assert all("sagittal" not in (p.get("plane"), *p) for _, p in acts), acts
    assert con.snap["iv"]["pos"]["sagittal"] == 256
    # "right" as a direction still moves: a question about it is not a tag
    assert con.say("Move it to the right?") == [("IV.SHOW_MOVE", {"sagittal": "+10"})]


# ------------------------------------------------------------------ thinking aloud, then the request
@pytest.mark.parametrize("before, text, want", [
    (["show the model"], "I think I need the middle lobe to judge the fissure, add it.",
     [("AR.SHOW", {"structures": ["right_middle_lobe"], "op": "add"})]),
    (["show the model"], "Hmm, I want to see the fissure, turn it to the right.",
     [("AR.ROTATE", {"direction": "right"})]),
    (["show the CT", "axial up 20"], "Hmm, maybe a bit too far, go down ten.",
     [("IV.SHOW_MOVE", {"axial": "-10"})]),
])
def test_thinking_aloud_then_the_request(con: Console, before: list[str], text: str,
                                         want: list[tuple[str, dict]]) -> None:
    assert con.say_after(before, text) == want


def test_thinking_aloud_keeps_named_out_of_scope_out(con: Console) -> None:
    # the last clause is read alone only when the whole was not understood or read as talk,
    # never when it names something out of scope
    for text in ("We're going to staple the bronchus, close it.",
                 "the bleeding is worse, zoom in", "Scalpel, please."):
        assert con.say(text) == [], text


def test_closing_request_reads_the_last_clause() -> None:
    from app.agents.interpreter import closing_request

    assert closing_request("zoom in") is None
    assert closing_request("Actually the lower lobe is just in the way, hide it.") == \
        "hide the lower lobe"
    assert closing_request("I've seen enough of the big view, go back to the small ones.") == \
        "go back to the small ones"
    # words to someone else before it are no musing: not read
    assert closing_request("excuse me, could you turn around so I can get past?") is None
    assert closing_request("don't touch the sterile field, please, step back") is None
