"""Digits the recogniser wrote apart, a plane's name heard as several words, the wake word
opening a request, "actually" taking back a value, a count of slices before its direction,
and selections with exclusions ("only the right lung, no airway")."""

from __future__ import annotations

from typing import Any

import pytest

from tests.test_lexicon import Console

IV, AR = "IV.SHOW_MOVE", "AR.SHOW"


@pytest.fixture
def con() -> Console:
    return Console()


@pytest.mark.parametrize("text, params", [
    ("axle minus 2 0", {"axial": "-20"}),
    ("sagittal minus 2 0 0", {"sagittal": "-200"}),
    ("axial 1 0 5", {"axial": 105}),
    ("axial minus two zero", {"axial": "-20"}),
])
def test_digits_said_apart_with_a_zero_are_one_number(con: Console, text: str,
                                                       params: dict[str, Any]) -> None:
    assert con.say_after(["show the ct"], text) == [(IV, params)]


@pytest.mark.parametrize("text, params", [
    ("sad a tool plus 600", {"sagittal": "+600"}),
    ("move sad a tool to two hundred", {"sagittal": 200}),
])
def test_a_plane_heard_as_several_words_before_its_amount(con: Console, text: str,
                                                          params: dict[str, Any]) -> None:
    assert con.say_after(["show the ct"], text) == [(IV, params)]


def test_words_that_lose_a_sound_are_not_a_plane(con: Console) -> None:
    con.say_after(["show the ct", "axial 5, coronal 9, sagittal 30"],
                  "set all three planes to their middle slice")
    assert con.snap["iv"]["pos"] == {"axial": 64, "coronal": 256, "sagittal": 256}


def test_the_wake_word_opening_a_request_is_not_teaching(con: Console) -> None:
    assert con.say("hey vinci could you pull up the m p r") == [(IV, {})]
    assert con.say("you pull the lobe back, see") == []


@pytest.mark.parametrize("text, direction", [
    ("rotate it up, actually, down", "down"), ("rotate left, actually, right", "right")])
def test_actually_between_pauses_takes_back_the_value(con: Console, text: str,
                                                      direction: str) -> None:
    assert con.say_after(["show the 3d model"], text) == [("AR.ROTATE",
                                                           {"direction": direction})]


def test_actually_before_a_number_replaces_the_number(con: Console) -> None:
    assert con.say_after(["show the ct"], "coronal plus 20, actually, 30") == [
        (IV, {"coronal": "+30"})]


@pytest.mark.parametrize("text, params", [
    ("Axial, twenty slices, down please", {"axial": "-20"}),
    ("coronal 40 slices, back", {"coronal": "-40"}),
    ("axial 20 slices", {"axial": 20}),
])
def test_a_count_of_slices_takes_the_direction_said_after_it(con: Console, text: str,
                                                             params: dict[str, Any]) -> None:
    assert con.say_after(["show the ct"], text) == [(IV, params)]


RIGHT = ["right_lower_lobe", "right_middle_lobe", "right_upper_lobe"]


@pytest.mark.parametrize("text, structures", [
    ("Right upper lobe only, nodules too", ["lung_nodules", "right_upper_lobe"]),
    ("only the right lung please, without airway and nodules", RIGHT),
    ("only the right lung, no airway", RIGHT),
    ("only the right lung, no, the left lung", ["left_lower_lobe", "left_upper_lobe"]),
])
def test_a_selection_with_its_additions_and_exclusions(con: Console, text: str,
                                                       structures: list[str]) -> None:
    con.say_after(["show the 3d model"], text)
    assert con.snap["ar"]["structures"] == structures


def test_just_a_structure_too_still_adds(con: Console) -> None:
    assert con.say_after(["show the 3d model"], "just the left lower lobe too") == [
        (AR, {"structures": ["left_lower_lobe"], "op": "add"})]


@pytest.mark.parametrize("before, text", [
    (["show the 3d model"], "remove the airway, remove it from the model"),
    (["show the 3d model", "add the airway"], "take it off the model"),
])
def test_what_is_taken_from_the_model_is_a_structure_of_it(con: Console, before: list[str],
                                                           text: str) -> None:
    con.say_after(before, text)
    assert con.snap["ar"]["visible"] is True
    assert "trachea_bronchia" not in con.snap["ar"]["structures"]


@pytest.mark.parametrize("text", [
    "if you could also include the underlying diseases",
    "include the underlying diseases, I would be most grateful",
    "Splendid. And if you could also be so kind as to include the underlying diseases, "
    "I would be most grateful",
])
def test_courtesy_around_a_request_is_set_aside(con: Console, text: str) -> None:
    assert con.say(text) == [("IR.SHOW", {"fields": ["comorbidities"], "op": "add"})]


def test_the_little_views_are_the_small_views(con: Console) -> None:
    con.say_after(["show the ct", "zoom in on the axial"], "okay, little views")
    assert con.snap["iv"]["mode"] == "small_views"


@pytest.mark.parametrize("text, params", [
    ("axial and coronal to the middle", {"axial": "middle", "coronal": "middle"}),
    ("axial and sagittal plus 20", {"axial": "+20", "sagittal": "+20"}),
])
def test_two_planes_share_the_value_said_after_them(con: Console, text: str,
                                                    params: dict[str, Any]) -> None:
    assert con.say_after(["show the ct"], text) == [(IV, params)]


def test_keep_them_leaves_things_as_they_are(con: Console) -> None:
    before = ["show the 3d model", "zoom in", "zoom in", "zoom out"]
    assert con.say_after(before, "Take the nodules off... no, keep them, take the airway off") \
        == [(AR, {"structures": ["trachea_bronchia"], "op": "remove"})]
    assert con.snap["ar"]["zoom_level"] == 1


def test_keep_them_is_no_repeat_of_the_last_command(con: Console) -> None:
    con.say_after(["show the 3d model", "zoom in", "zoom in", "zoom out"], "keep them")
    assert con.snap["ar"]["zoom_level"] == 1


@pytest.mark.parametrize("text", ["zoom in, a bit more", "zoom in, actually, a bit more"])
def test_a_bit_more_after_a_request_is_more_of_it(con: Console, text: str) -> None:
    assert con.say_after(["show the 3d model", "rotate left"], text) == [("AR.ZOOM_IN", {})]


def test_thinking_aloud_then_a_bit_more_is_no_repeat_of_an_older_command(con: Console) -> None:
    # "left, a bit more" refines "left"; repeating the rotation before would be wrong
    assert con.say_after(["show the 3d model", "rotate right"], "hmm, left, a bit more") != [
        ("AR.ROTATE", {"direction": "right"})]


@pytest.mark.parametrize("before, text, params", [
    (["show the ct"], "move to 5 0 0", {"axial": 5, "coronal": 0, "sagittal": 0}),
    (["show the ct"], "set it all to 300", {"axial": 300, "coronal": 300, "sagittal": 300}),
    (["show the ct"], "axial 20 slices, coronal down", {"axial": 20, "coronal": "-10"}),
])
def test_lists_of_slices_and_ordinary_words_stay_as_said(con: Console, before: list[str],
                                                         text: str,
                                                         params: dict[str, Any]) -> None:
    assert con.say_after(before, text) == [(IV, params)]


@pytest.mark.parametrize("text", [
    "hey vinci, see how the rul is hidden", "da vinci, you see the nodules there",
    "if you can see the airway, hide it", "hide the nodules, keep those",
])
def test_talk_and_conditions_stay_refused(con: Console, text: str) -> None:
    assert con.say_after(["show the 3d model"], text) == []


@pytest.mark.parametrize("text, structures", [
    ("just hide the airway, no the nodules", ["left_lower_lobe", "left_upper_lobe",
                                              "right_lower_lobe", "right_middle_lobe",
                                              "right_upper_lobe", "trachea_bronchia"]),
    ("only the rul, no the lll", ["left_lower_lobe"]),
])
def test_no_with_an_article_still_takes_back(con: Console, text: str,
                                             structures: list[str]) -> None:
    con.say_after(["show the 3d model", "show everything"], text)
    assert con.snap["ar"]["structures"] == structures


@pytest.mark.parametrize("text, expected", [
    ("axial 40, coronal 60, actually, sagittal 100",
     {"axial": 40, "coronal": 60, "sagittal": 100}),
    ("zoom in on the sagittal, actually, move it to 300", {"sagittal": 300}),
])
def test_actually_keeps_earlier_requests_and_what_it_points_at(con: Console, text: str,
                                                               expected: dict[str, int]) -> None:
    con.say_after(["show the ct"], text)
    pos = con.snap["iv"]["pos"]
    assert {k: pos[k] for k in expected} == expected


def test_actually_with_as_well_keeps_both(con: Console) -> None:
    con.say_after(["show the 3d model", "show everything"],
                  "hide the nodules, actually, hide the airway as well")
    assert not {"lung_nodules", "trachea_bronchia"} & set(con.snap["ar"]["structures"])


def test_keep_them_alone_is_asked(con: Console) -> None:
    assert con.say_after(["show the 3d model", "hide the nodules"], "keep them") == []
    assert con.say_after(["rotate left"], "keep it going") == [
        ("AR.ROTATE", {"direction": "left"})]
