"""A slip noticed before its correction ("oops, the other way"), the team narrating where its
instruments go (out of scope), words the grammar could not place held against a later tier's
"every field" reading, and "the same for X" after a command that moved two planes."""

from __future__ import annotations

import pytest

from app.agents.decision import Decision, Memory
from app.agents.interpreter import FastInterpreter
from app.core.registry import Step
from app.core.state import ConsoleState
from tests.test_lexicon import Console


@pytest.mark.parametrize("slip", ["oops", "whoops", "oopsie"])
def test_a_slip_word_before_a_command_is_not_part_of_it(slip: str) -> None:
    con = Console()
    con.say("show the ct")
    acts = con.say(f"{slip}, coronal 200")
    assert acts == [("IV.SHOW_MOVE", {"coronal": 200})]


def test_a_slip_word_then_the_other_way_reverses_the_last_step() -> None:
    con = Console()
    con.say("show the ct")
    con.say("coronal plus 10")
    con.say("oops, the other way")
    assert con.snap["iv"]["pos"]["coronal"] == 256


@pytest.mark.parametrize("text", [
    "ok so were just going up the the bronchus now",
    "we're working along the fissure now",
    "we are heading into the hilum",
])
def test_the_team_narrating_its_way_through_the_anatomy_changes_nothing(text: str) -> None:
    con = Console()
    before = con.snap
    assert con.say(text) == []
    assert con.snap == before


def test_naming_a_display_after_saying_where_we_are_going_still_works() -> None:
    con = Console()
    acts = con.say("we are going to the right lower lobe, show it")
    assert acts == [("AR.SHOW", {"structures": ["right_lower_lobe"], "op": "add"})]


class _EveryField:
    """A later tier that reads any mention of the patient as "show every field"."""

    name = "semantic"

    def decide(self, corrected: str, state: ConsoleState, memory: Memory) -> Decision | None:
        return Decision(True, [Step("IR.SHOW", {})], "IR", 0.95, self.name)


def test_a_word_the_grammar_could_not_place_keeps_a_later_tier_from_showing_every_field() -> None:
    con = Console(FastInterpreter(tiers=[_EveryField()]))
    assert con.say("let's get the patient positioned") == []
    assert con.snap["ir"]["visible"] is False


def test_a_later_tier_may_still_show_every_field_when_every_word_is_placed() -> None:
    con = Console(FastInterpreter(tiers=[_EveryField()]))
    assert con.say("patient info") == [("IR.SHOW", {})]


def test_same_for_a_plane_after_two_moves_repeats_the_move_said_last() -> None:
    con = Console()
    con.say("show the ct")
    con.say("move axial to 100 and coronal to 300")
    acts = con.say("same for sagittal")
    assert acts == [("IV.SHOW_MOVE", {"sagittal": 300})]
    assert con.snap["iv"]["pos"] == {"axial": 100, "coronal": 300, "sagittal": 300}


@pytest.mark.parametrize("text", ["oya show me the patient information",
                                  "please, if you can, open the patient data for me"])
def test_openers_and_grammar_words_never_count_as_an_unplaced_field(text: str) -> None:
    con = Console(FastInterpreter(tiers=[_EveryField()]))
    assert con.say(text) == [("IR.SHOW", {})]
