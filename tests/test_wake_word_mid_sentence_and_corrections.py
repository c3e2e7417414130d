"""What a surgeon says before the wake word is said to someone else; a word corrected in
the middle of a sentence is replaced where it stood and the sentence goes on; "back to how
it was" undoes the last move; an opening interjection or remark is no part of the request
(DESIGN §3, §4)."""

from __future__ import annotations

import pytest

from tests.test_lexicon import Console


def test_what_comes_before_a_wake_word_is_said_to_someone_else() -> None:
    con = Console()
    con.say("Sure, doctor. davinci, show the pulmonary function results")
    assert con.snap["ir"]["visible"] and con.snap["ir"]["fields"] == ["pft"]


def test_a_wake_word_at_the_end_does_not_empty_the_request() -> None:
    con = Console()
    con.say("show the ct, davinci")
    assert con.snap["iv"]["mode"] == "small_views"


@pytest.mark.parametrize("said, coronal, axial", [
    ("Coronal anterior — oh, make that posterior — twenty-five", 256 - 25, 64),
    ("Take the axial — nah sorry, the coronal — minus fifteen", 256 - 15, 64),
    ("coronal anterior, no, posterior, 25", 256 - 25, 64),
])
def test_a_word_corrected_mid_sentence_takes_its_place_and_the_sentence_goes_on(
        said: str, coronal: int, axial: int) -> None:
    con = Console()
    con.say("show the ct")
    con.say(said)
    assert con.snap["iv"]["pos"]["coronal"] == coronal
    assert con.snap["iv"]["pos"]["axial"] == axial


def test_make_it_bigger_is_no_correction() -> None:
    con = Console()
    con.say("show the 3d model")
    con.say("zoom in, make it bigger")
    assert con.snap["ar"]["zoom_level"] >= 1


@pytest.mark.parametrize("said", ["Back to how it was", "Ah, wrong one. Back to where we were"])
def test_back_to_how_it_was_undoes_the_last_move(said: str) -> None:
    con = Console()
    con.say("show the ct")
    con.say("coronal plus 100")
    con.say("again")
    con.say(said)
    assert con.snap["iv"]["pos"]["coronal"] == 356


def test_an_opening_interjection_before_a_reversal_is_no_part_of_it() -> None:
    con = Console()
    con.say("show the ct")
    con.say("axial up 10")
    con.say("Ag no, the other way")
    assert con.snap["iv"]["pos"]["axial"] == 64


def test_a_closing_pat_on_the_head_is_no_part_of_the_request() -> None:
    con = Console()
    con.say("show the ct")
    con.say("forward twenty on the coronal")
    con.say("Same for the axial, there's a good boy")
    assert con.snap["iv"]["pos"]["axial"] == 84
