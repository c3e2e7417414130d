"""Recogniser text with no audio behind it (DESIGN §3 tier 1): words split in two or swapped
for a word that sounds the same are read as the console term they sound like, but only when
that reading is a whole confident command, and never by swallowing a negation or a grammar
word; talk stays out of scope."""

from __future__ import annotations

import pytest

from app.language.soundalike import sound_alike_readings
from tests.test_lexicon import Console


@pytest.mark.parametrize("said, meant", [
    ("row tate up", "Rotate up"),
    ("a gain", "Again"),
    ("four ward twenty", "Forward twenty"),
    ("an tear ior view", "Anterior view"),
    ("hide the noodles", "hide the nodules"),
    ("and height and wait", "and height and weight"),
])
def test_split_and_swapped_words_are_proposed_as_the_term_they_sound_like(
        said: str, meant: str) -> None:
    assert meant in sound_alike_readings(said)


@pytest.mark.parametrize("said", [
    "she have which diseases before?",   # "have" is not "heavy"
    "make I see the nodes well",         # lymph nodes are not the nodules
    "tilt the table to the left a bit more",
])
def test_grammar_words_and_near_misses_are_not_rewritten(said: str) -> None:
    assert sound_alike_readings(said) == []


def test_a_negation_is_never_swallowed_by_a_sound_alike() -> None:
    for heard in sound_alike_readings("Ag no, the other way"):
        assert "no" in heard.replace(",", " ").lower().split()


def test_a_split_verb_and_a_split_direction_act_as_said() -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("row tate up")
    assert con.snap["ar"]["rotation"] == "up"
    assert con.last is not None
    # the correction stage joins the words by sound (or a later look at the whole hearing)
    assert con.last.corrected == "rotate up" or \
        con.last.decision.diagnostics["heard_as"] == "Rotate up"
    con.say("show the ct")
    con.say("in fear ior fifteen")
    assert con.snap["iv"]["pos"]["axial"] == 64 - 15


def test_a_swapped_field_word_adds_the_field_it_sounds_like() -> None:
    con = Console()
    con.say("show the age")
    con.say("and height and wait")
    assert con.snap["ir"]["fields"] == ["age", "height", "sex", "weight"]


def test_talk_with_unknown_words_stays_out_of_scope_and_changes_nothing() -> None:
    con = Console()
    con.say("show the ct")
    before = con.snap
    for said in ("start the clock", "keep going with the dissection",
                 "pass me the grasper", "she have which diseases before?"):
        assert con.say(said) == []
    assert con.snap == before
