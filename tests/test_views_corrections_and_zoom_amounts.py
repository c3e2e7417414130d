"""A level word that is also a view, corrections said in the speaker's own language, remarks
over several pauses and zoom said as an amount (DESIGN §3 coverage and polarity, §4)."""

from __future__ import annotations

import pytest

from tests.test_lexicon import Console


@pytest.fixture
def con() -> Console:
    return Console()


def test_a_level_word_that_is_a_view_names_the_view_not_both_lobes(con: Console) -> None:
    assert con.say("model view inferior, from below") == [("AR.SHOW", {"view": "inferior"})]
    assert con.snap["ar"]["structures"] == ["lung_nodules", "right_upper_lobe",
                                            "trachea_bronchia"]


@pytest.mark.parametrize("text, added", [
    ("add the superior and inferior lobes on the left", ["left_lower_lobe", "left_upper_lobe"]),
    ("would you kindly add the right middle and right lower lobes",
     ["right_lower_lobe", "right_middle_lobe"]),
    ("add the inferior lobe on the right", ["right_lower_lobe"]),
])
def test_level_words_with_a_lobe_noun_or_side_still_name_lobes(con: Console, text: str,
                                                               added: list[str]) -> None:
    con.say("show the model")
    (action, params), = con.say(text)
    assert action == "AR.SHOW" and params["op"] == "add"
    assert sorted(params["structures"]) == added


@pytest.mark.parametrize("text, expected", [
    ("add the lobe, euh non, pardon, the lobe lower right",
     [("AR.SHOW", {"structures": ["right_lower_lobe"], "op": "add"})]),
    ("add the lobe, nein, entschuldigung, the right lower lobe",
     [("AR.SHOW", {"structures": ["right_lower_lobe"], "op": "add"})]),
])
def test_no_and_sorry_in_the_speakers_language_correct_what_came_before(
        con: Console, text: str, expected: list) -> None:
    assert con.say(text) == expected


def test_a_plane_value_corrected_with_a_foreign_no_keeps_the_second_value(con: Console) -> None:
    con.say("show the CT")
    assert con.say("coronal 200, nein, 250") == [("IV.SHOW_MOVE", {"coronal": 250})]


def test_a_remark_running_over_several_pauses_is_set_aside(con: Console) -> None:
    con.say("show the model")
    assert con.say("right upper lobe off, it's out now, after all") == [
        ("AR.SHOW", {"structures": ["right_upper_lobe"], "op": "remove"})]


def test_a_remark_after_a_move_said_in_number_words_is_set_aside(con: Console) -> None:
    con.say("show the CT")
    con.say("coronal plus 5")
    assert con.say("Forward fifteen, let's find the superior vein") == [
        ("IV.SHOW_MOVE", {"coronal": "+15"})]


@pytest.mark.parametrize("text, action", [
    ("more zoom", "AR.ZOOM_IN"), ("zoom more", "AR.ZOOM_IN"),
    ("a bit more zoom please", "AR.ZOOM_IN"), ("less zoom", "AR.ZOOM_OUT"),
])
def test_zoom_said_as_an_amount_keeps_its_direction(con: Console, text: str,
                                                    action: str) -> None:
    con.say("show the model")
    con.say("zoom in")
    assert con.say(text) == [(action, {})]


def test_a_side_said_after_the_lobe_noun_names_that_side_only(con: Console) -> None:
    con.say("show the model")
    assert con.say("add the lower lobe of the right lung") == [
        ("AR.SHOW", {"structures": ["right_lower_lobe"], "op": "add"})]
