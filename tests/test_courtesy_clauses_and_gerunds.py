"""Courtesy said around a request, a gerund after "would you mind", terse direction
abbreviations, writing the record as talk, "the rest" taken away, spoken hundreds in a list
of slices, and the count of the views."""

from __future__ import annotations

from typing import Any

import pytest

from tests.test_lexicon import Console


@pytest.fixture
def con() -> Console:
    return Console()


@pytest.mark.parametrize("before, text, steps", [
    (["show the 3d model", "zoom in"], "Oh, that's helpful, could you please do that once more?",
     [("AR.ZOOM_IN", {})]),
    (["show the patient info"], "I'm sorry to bother you again, but could you please bring up "
     "the CT scan as well?", [("IV.SHOW_MOVE", {})]),
    (["show the ct"], "And finally, would you please clear all the CT images? Thank you so "
     "much for your help", [("IV.REMOVE", {})]),
])
def test_courtesy_around_a_request_is_set_aside(con: Console, before: list[str], text: str,
                                                steps: list[tuple[str, dict[str, Any]]]
                                                ) -> None:
    assert con.say_after(before, text) == steps


def test_a_clause_that_does_something_is_no_courtesy(con: Console) -> None:
    assert con.say_after(["show the 3d model", "show everything"],
                         "hide the airway, take the rest away") == []


@pytest.mark.parametrize("text, steps", [
    ("Would you mind putting up the CT?", [("IV.SHOW_MOVE", {})]),
    ("would you mind zooming in on the axial", [("IV.ZOOM_IN_MOVE", {"plane": "axial"})]),
])
def test_a_gerund_after_would_you_mind_is_the_verb(con: Console, text: str,
                                                   steps: list[tuple[str, dict[str, Any]]]
                                                   ) -> None:
    assert con.say_after(["show the patient info"], text) == steps


def test_an_undo_after_a_remark_and_a_frame(con: Console) -> None:
    con.say_after(["show the ct", "axial 40"], "Oh dear, I'm afraid that wasn't quite right, "
                  "would you mind taking it back to where we were?")
    assert con.snap["iv"]["pos"]["axial"] == 64
    con.say_after(["axial 40"], "no no, return where we were")
    assert con.snap["iv"]["pos"]["axial"] == 64


def test_rt_and_lt_are_directions_after_a_turn(con: Console) -> None:
    assert con.say_after(["show the 3d model"], "rotate rt") == [("AR.ROTATE",
                                                                  {"direction": "right"})]


@pytest.mark.parametrize("text", [
    "Write the FEV1 down for the op note, please.",
    "Look at that FEV1. That's why we do a lobectomy here and not a pneumonectomy.",
])
def test_writing_the_record_and_teaching_are_talk(con: Console, text: str) -> None:
    assert con.say(text) == []
    assert con.last is not None and (con.last.reason or "").startswith("Out of scope")


@pytest.mark.parametrize("text", ["only the right upper lobe, take the rest away",
                                  "only right upper lobe, other all take away"])
def test_the_rest_taken_away_leaves_only_what_was_named(con: Console, text: str) -> None:
    con.say_after(["show the 3d model", "show everything"], text)
    assert con.snap["ar"]["structures"] == ["right_upper_lobe"]


def test_the_count_of_the_views_is_no_slice(con: Console) -> None:
    con.say_after(["show the ct", "zoom in on the axial"], "make the views small again, the three")
    assert con.snap["iv"]["mode"] == "small_views"
    assert con.snap["iv"]["pos"]["axial"] == 64


def test_und_opening_a_request_adds(con: Console) -> None:
    assert con.say_after(["show the age"], "und the spirometry") == [
        ("IR.SHOW", {"fields": ["pft"], "op": "add"})]


def test_three_lobes_are_the_right_lungs(con: Console) -> None:
    con.say_after(["show the 3d model"], "right lung fully, all three lobes")
    assert not {"left_lower_lobe", "left_upper_lobe"} & set(con.snap["ar"]["structures"])
    assert {"right_lower_lobe", "right_middle_lobe", "right_upper_lobe"} <= set(
        con.snap["ar"]["structures"])


@pytest.mark.parametrize("text", [
    "Hide the airway, sorry, forget it", "Hide the airway. Sorry, I didn't mean that",
    "Zoom in, sorry, not you", "Sorry to bother you, doctor, could you bring up the CT",
    "Thanks for your patience, everyone, hide the airway",
    "Sorry, could you bring up the CT, from last year",
    "show the left three lobes", "show the other three lobes", "turn rt lung red",
    "center on the RUL and take the rest away",
])
def test_what_takes_back_calls_on_someone_or_qualifies_is_not_set_aside(con: Console,
                                                                        text: str) -> None:
    assert con.say_after(["show the 3d model"], text) == []
