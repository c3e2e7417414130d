"""A later tier does not move a confident command to a display the words do not name, and a
value stated about the patient ("her BMI's thirty one") is a remark, not a request (DESIGN §3:
checks on every tier; §4: talk that is no request changes nothing)."""

from __future__ import annotations

from app.agents.decision import Decision, Memory
from app.agents.interpreter import FastInterpreter
from app.core.registry import Step
from app.core.state import ConsoleState
from app.language.normalize import normalize
from tests.test_lexicon import Console


class _SureOfTheModelView:
    """A later tier that is surer than the grammar and reads every command as a 3D view."""

    name = "semantic"
    consult_below = 1.01  # asked even about confident grammar readings, like the real one

    def decide(self, corrected: str, state: ConsoleState, memory: Memory) -> Decision | None:
        return Decision(valid=True, steps=[Step("AR.SHOW", {"view": "inferior"})], agent="AR",
                        confidence=0.99, tier=self.name, reason="always the inferior view")


def test_a_surer_later_tier_keeps_to_the_display_the_words_name() -> None:
    con = Console(FastInterpreter(tiers=[_SureOfTheModelView()]))
    con.say("show the CT")
    # "inferior" is also a 3D view, but the words name no model: the CT moves down twice
    assert con.say("inferior inferior") == [("IV.SHOW_MOVE", {"axial": "-20"})]
    assert con.snap["ar"]["visible"] is False


def test_a_surer_later_tier_may_read_the_display_the_words_name() -> None:
    con = Console(FastInterpreter(tiers=[_SureOfTheModelView()]))
    con.say("show the CT")
    steps = con.say("show the model from below")
    assert steps and steps[0][0] == "AR.SHOW"


def test_a_value_before_the_end_of_a_clause_is_stated_not_possessed() -> None:
    assert normalize("Her BMI's thirty one, it's a tight chest").startswith("her bmi is 31,")
    assert normalize("his weight's about ninety kilos") == "his weight is about 90 kilos"
    assert normalize("the patient's age") == "the patient age"
    assert normalize("show the patient's 3D model") == "show the patient 3d model"


def test_a_value_stated_about_the_patient_changes_nothing() -> None:
    for text in ("Her BMI's thirty one, it's going to be a tight chest",
                 "His weight's about ninety kilos"):
        con = Console()
        assert con.say(text) == []
        assert con.snap["ir"]["visible"] is False


def test_a_field_asked_for_by_its_owner_is_still_shown() -> None:
    con = Console()
    assert con.say("show the patient's BMI") == [("IR.SHOW", {"fields": ["bmi"]})]


def test_an_unknown_word_where_the_amount_goes_is_asked_about_not_stepped() -> None:
    con = Console()
    con.say("show the CT")
    assert con.say("coronal plus ate") == []  # "eight"? the default step would be a guess
    assert con.snap["iv"]["pos"]["coronal"] == 256
