"""Ask, don't guess (DESIGN §3): when no tier is confident the console asks one short question,
changes nothing, and takes the answer — "yes", "the second", a word of one option, "option N"
(the touch buttons), or "no" — in the same context; a new command or a timeout drops it."""

from __future__ import annotations

from app.agents.ask_back import PendingQuestion, make_question, resolve
from app.agents.decision import Decision, Memory
from app.agents.interpreter import FastInterpreter
from app.core.registry import Step
from app.core.state import (
    CaseContext,  # noqa: I001  (after the session import on purpose)
    ConsoleState,
)
from app.session import build_console
from tests.test_lexicon import SIZE

CTX = CaseContext(iv_size=SIZE, tumor_lobes=("right_upper_lobe",))
UNSURE = "do the fnord with the model"  # the grammar can only guess: show the model


class _Unsure:
    """A later tier with a reading it is not sure of either."""

    name = "semantic"

    def __init__(self, step: Step) -> None:
        self.step = step

    def decide(self, corrected: str, state: ConsoleState, memory: Memory) -> Decision | None:
        return Decision(True, [self.step], self.step.action_id[:2], 0.52, self.name)


def _console(*tiers: object):
    return build_console(CTX, interpreter=FastInterpreter(tiers=list(tiers)))


def test_a_command_no_tier_is_sure_of_is_asked_about_and_changes_nothing() -> None:
    con = _console()
    before = con.snapshot()
    rec = con.say(UNSURE)
    assert rec["question"]["options"] == ["show the 3D model"]
    assert rec["reply"]["text"] == "Did you mean: show the 3D model?"
    assert rec["stages"]["correct"]["valid"] is False and "decide" not in rec["stages"]
    assert con.snapshot() == before


def test_yes_carries_out_the_asked_plan_as_one_invalid_loop() -> None:
    con = _console()
    con.say(UNSURE)
    rec = con.say("yes")
    assert con.snapshot()["ar"]["visible"]
    assert rec["tier"] == "ask" and rec["invalid_cycles"] == 1
    assert [a["action"] for a in rec["stages"]["decide"]["actions"]] == ["SHOW"]
    assert rec["flow"] == ["correct", "route", "AR", "end"]


def test_no_cancels_and_nothing_changes() -> None:
    con = _console()
    before = con.snapshot()
    con.say(UNSURE)
    rec = con.say("no, never mind")
    assert rec["reply"]["text"] == "Okay, nothing was changed."
    assert con.snapshot() == before and con.orchestrator.pending is None


def test_two_readings_are_offered_and_the_answer_picks_one() -> None:
    con = _console(_Unsure(Step("AR.REMOVE", {})))
    con.say("show the 3d model")
    rec = con.say(UNSURE)
    assert len(rec["question"]["options"]) == 2, rec["question"]
    assert con.say("the second one")["tier"] == "ask"
    assert not con.snapshot()["ar"]["visible"]
    con.say(UNSURE)
    con.say("option 1")  # what a touch button sends
    assert con.snapshot()["ar"]["visible"]


def test_a_new_command_instead_of_an_answer_drops_the_question() -> None:
    con = _console()
    con.say(UNSURE)
    rec = con.say("show the ct")
    assert rec["tier"] == "lexicon" and con.snapshot()["iv"]["mode"] == "small_views"
    assert con.orchestrator.pending is None
    assert not con.snapshot()["ar"]["visible"]
    assert con.say("yes")["stages"]["correct"]["valid"] is False  # nothing left to answer


def test_an_unanswered_question_times_out() -> None:
    con = _console()
    con.orchestrator.question_timeout_s = 0.0
    con.say(UNSURE)
    con.say("yes")
    assert not con.snapshot()["ar"]["visible"]


def test_answers_by_wording_must_fit_one_option_entirely() -> None:
    q = make_question([Decision(True, [Step("AR.SHOW", {"structures": ["left_lower_lobe"],
                                                        "op": "add"})], "AR", 0.5, "lexicon"),
                       Decision(True, [Step("AR.SHOW", {"structures": ["left_lower_lobe",
                                                                       "left_upper_lobe"],
                                                        "op": "add"})], "AR", 0.5, "semantic")],
                      lambda steps: {1: "add the left lower lobe to the model",
                                     2: "add the left lung to the model"}[
                          len(steps[0].params["structures"])])
    assert isinstance(q, PendingQuestion)
    assert q.text == ("Did you mean: add the left lower lobe to the model, or add the left "
                      "lung to the model?")
    assert resolve(q, "the lobe") == 0
    assert resolve(q, "the whole lung") is None  # "whole" is in neither wording
    assert resolve(q, "the lung") == 1
    assert resolve(q, "left lower lobe off") is None  # a new command, not an answer
    assert resolve(q, "right") is None  # a direction, not a yes


def _question(*steps: Step) -> PendingQuestion:
    from app.agents.lexicon import plan_phrase

    q = make_question([Decision(True, [s], s.action_id[:2], 0.5, "lexicon") for s in steps],
                      plan_phrase)
    assert q is not None
    return q


def test_an_answer_that_contradicts_its_option_is_no_answer() -> None:
    q = _question(Step("AR.SHOW", {"structures": ["left_lower_lobe"], "op": "remove"}))
    assert resolve(q, "left lower lobe on") is None
    q = _question(Step("AR.SHOW", {}))
    assert resolve(q, "yes hide it") is None
    assert resolve(q, "yes") == 0


def test_option_words_with_no_question_pending_change_nothing() -> None:
    con = _console()
    before = con.snapshot()
    rec = con.say("option 2")
    assert rec["reply"]["text"].startswith("There is no question to answer")
    assert con.say("two")["stages"]["correct"]["valid"] is False
    assert con.snapshot() == before


def test_a_touch_action_drops_the_pending_question() -> None:
    from app.core.registry import Actor

    con = _console()
    con.say(UNSURE)
    con.registry.dispatch("IV.SHOW_MOVE", {}, Actor(role="nurse", source="touch"))
    assert con.orchestrator.pending is None
    con.say("yes")
    assert not con.snapshot()["ar"]["visible"]


def test_stop_while_a_question_is_pending_stops_the_rotation() -> None:
    con = _console()
    con.say("show the 3d model")
    con.say("rotate it")
    con.say(UNSURE)
    con.say("stop")
    assert con.snapshot()["ar"]["rotation"] == "static"


def test_back_to_where_we_were_with_no_move_says_so_and_changes_nothing() -> None:
    con = _console()
    con.say("show the ct")
    con.say("show the 3d model")
    rec = con.say("back to where we were")
    assert "no earlier slice move" in rec["reply"]["text"]
    assert con.snapshot()["ar"]["visible"]


def test_a_name_called_out_is_checked_before_any_question() -> None:
    con = _console()
    con.say("show the ct")
    rec = con.say("Tom, go down ten.")
    assert "question" not in rec and con.snapshot()["iv"]["pos"]["axial"] == 64


def test_do_with_a_state_file_carries_the_question_to_the_next_call(tmp_path, capsys,
                                                                   monkeypatch) -> None:
    import json
    from pathlib import Path

    from app.session.do import run_do_command

    monkeypatch.setenv("VISA_TIERS", "")  # the grammar alone: the same question every run
    state = Path(tmp_path) / "s.json"
    assert run_do_command(UNSURE, None, state, False) == 1
    assert "Did you mean" in capsys.readouterr().out
    assert run_do_command("yes", None, state, False) == 0
    assert json.loads(state.read_text())["ar"]["visible"]
    data = json.loads(state.read_text())
    data["_question"] = {"text": "?", "labels": ["x"]}  # damaged: dropped, state still good
    state.write_text(json.dumps(data))
    assert run_do_command("show the ct", None, state, False) == 0
