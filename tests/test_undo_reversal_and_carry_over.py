"""Rules generalised from the phrasing probes pd12–pd14: "undo that" (the registry's undo),
reversals with an amount, repeats that name a display, "now the X" carrying the last command
over to X, "a bit more" as the default step, "bring it back" after a display was hidden,
"the right one too", "nothing but", "the model of the lungs", every plane to the middle, a
zoom carried to a second display, and time qualifiers ("before surgery") that name no field.
Phrasings are our own; DESIGN §4 is the spec."""

from __future__ import annotations

import json

import pytest

from app.agents.interpreter import FastInterpreter
from app.agents.orchestrator import Orchestrator
from app.core.registry import CommandRegistry
from app.core.state import CaseContext, ConsoleState
from tests.test_lexicon import SIZE, Console

RUL = "right_upper_lobe"


@pytest.fixture
def con() -> Console:
    return Console()


# ------------------------------------------------------------------ undo
def test_undo_restores_the_state_before_the_last_command(con: Console) -> None:
    con.say("show the CT")
    before = con.snap
    con.say("sagittal plus 40")
    assert con.snap != before
    assert con.say("undo that") == []
    assert con.last is not None and con.last.decision.undo
    assert con.snap["iv"] == before["iv"]


@pytest.mark.parametrize("text", ["undo", "undo the last command", "scratch that",
                                  "take that back", "oops, undo that please",
                                  "revert the last change"])
def test_undo_phrasings(con: Console, text: str) -> None:
    con.say("show the model")
    con.say("hide the airway")
    con.say(text)
    assert "trachea_bronchia" in con.snap["ar"]["structures"]


def test_undo_is_not_taken_from_other_words(con: Console) -> None:
    it = con.interp.interpret("take the airway back", con.state, con.memory)
    assert not it.decision.undo


def test_orchestrator_undo_reply_and_empty_stack() -> None:
    state = ConsoleState()
    state.set_case(CaseContext(iv_size=SIZE, tumor_lobes=(RUL,)))
    orch = Orchestrator(CommandRegistry(state), interpreter=FastInterpreter())
    orch.handle_text("show the CT")
    orch.handle_text("axial plus 20")
    rec = orch.handle_text("undo that")
    assert rec["reply"]["ok"] and "axial plus 20" in rec["reply"]["text"], rec["reply"]
    assert rec["state"]["iv"]["pos"]["axial"] == dict(SIZE)["axial"] // 2
    assert rec["stages"]["decide"]["undone"] == ["IV.SHOW_MOVE"]
    orch.handle_text("undo")  # undoes "show the CT"
    rec = orch.handle_text("undo")
    assert not rec["reply"]["ok"] and "nothing to undo" in rec["reply"]["text"].lower()


# ------------------------------------------------------------------ reversals and repeats
@pytest.mark.parametrize("text, want", [
    ("the opposite way, 40", "-40"),
    ("reverse direction, 15", "-15"),
    ("now back the other way", "-30"),
    ("other way, same amount", "-30"),
])
def test_reversal_with_amount(con: Console, text: str, want: str) -> None:
    acts = con.say_after(["show the CT", "coronal plus 30"], text)
    assert acts == [("IV.SHOW_MOVE", {"coronal": want})], acts


def test_reversal_of_a_swing_with_please(con: Console) -> None:
    acts = con.say_after(["show the model", "swing the model up"], "the other way, please")
    assert acts == [("AR.ROTATE", {"direction": "down"})], acts


def test_repeat_naming_the_display(con: Console) -> None:
    con.say_after(["show the CT", "axial minus 15", "show the model"], "rotate it right")
    assert con.say("again on the scan") == [("IV.SHOW_MOVE", {"axial": "-15"})]
    assert con.say("twice more") == [("IV.SHOW_MOVE", {"axial": "-30"})]


def test_repeat_naming_a_plane_takes_that_planes_move(con: Console) -> None:
    con.say_after(["show the CT", "sagittal plus 12", "coronal minus 8"], "show the model")
    assert con.say("repeat the sagittal move") == [("IV.SHOW_MOVE", {"sagittal": "+12"})]


def test_a_bit_more_is_the_default_step(con: Console) -> None:
    acts = con.say_after(["show the CT", "axial plus 40"], "just a little more")
    assert acts == [("IV.SHOW_MOVE", {"axial": "+10"})], acts
    assert con.say("again") == [("IV.SHOW_MOVE", {"axial": "+10"})]


def test_same_again_but_twice_and_all_the_way_out(con: Console) -> None:
    con.say_after(["show the model", "zoom in on the LLL"], "same again but twice")
    assert con.snap["ar"]["zoom_level"] == 3
    con.say("all the way back out")
    assert con.snap["ar"]["zoom_level"] == 0


# ------------------------------------------------------------------ "now the X"
def test_now_the_structure_after_a_zoom(con: Console) -> None:
    acts = con.say_after(["show the model", "zoom toward the LUL"], "now the left lower lobe")
    assert acts == [("AR.ZOOM_IN", {"target": "left_lower_lobe"})], acts


def test_now_the_view_after_a_view(con: Console) -> None:
    acts = con.say_after(["show the model", "show the posterior view"], "now the anterior")
    assert acts == [("AR.SHOW", {"view": "anterior"})], acts


def test_now_the_plane_in_small_views_carries_the_move(con: Console) -> None:
    acts = con.say_after(["show the CT", "sagittal plus 25"], "now the coronal")
    assert acts == [("IV.SHOW_MOVE", {"coronal": "+25"})], acts


def test_now_the_plane_in_zoom_view_is_the_main_view(con: Console) -> None:
    acts = con.say_after(["show the CT", "zoom in on the axial", "down 10"], "now the sagittal")
    assert acts == [("IV.ZOOM_IN_MOVE", {"plane": "sagittal"})], acts


def test_now_the_plane_continues_a_same_for_pattern(con: Console) -> None:
    acts = con.say_after(["show the CT", "zoom in on the coronal", "right 15",
                          "the same for the coronal"], "now the axial")
    assert acts == [("IV.SHOW_MOVE", {"axial": "+15"})], acts


# ------------------------------------------------------------------ model phrasings
def test_that_lobe_is_the_lobe_named_before(con: Console) -> None:
    acts = con.say_after(["show the model", "show only the RML"], "zoom in on this lobe")
    assert acts == [("AR.ZOOM_IN", {"target": "right_middle_lobe"})], acts


def test_the_other_lung_with_one(con: Console) -> None:
    con.say_after(["show the model", "show the right lung"], "and the left one as well")
    assert set(con.snap["ar"]["structures"]) >= {"left_upper_lobe", "left_lower_lobe",
                                                  "right_upper_lobe"}


def test_nothing_but(con: Console) -> None:
    con.say_after(["show the model"], "display nothing except the nodules")
    assert con.snap["ar"]["structures"] == ["lung_nodules"]


def test_model_of_the_lungs_is_the_first_show(con: Console) -> None:
    con.say("bring up the 3D reconstruction of the lungs")
    assert sorted(con.snap["ar"]["structures"]) == ["lung_nodules", RUL, "trachea_bronchia"]


def test_bring_it_back_after_hiding_a_display(con: Console) -> None:
    con.say_after(["show the CT", "take the CT away"], "bring it back please")
    assert con.snap["iv"]["mode"] == "small_views"
    con.say_after(["show the patient info", "close the patient box"], "put it back")
    assert con.snap["ir"]["visible"]


# ------------------------------------------------------------------ CT and patient box
@pytest.mark.parametrize("text", ["centre all the planes", "show me the middle slices"])
def test_every_plane_to_the_middle(con: Console, text: str) -> None:
    con.say_after(["show the CT", "axial 10", "coronal 100", "sagittal 400"], text)
    mid = {p: n // 2 for p, n in SIZE}
    assert con.snap["iv"]["pos"] == mid


def test_back_to_the_middle_is_the_last_moved_plane(con: Console) -> None:
    acts = con.say_after(["show the CT", "sagittal plus 30"], "go back to the center")
    assert acts == [("IV.SHOW_MOVE", {"sagittal": "middle"})], acts


def test_zoom_verb_carries_to_the_second_display(con: Console) -> None:
    acts = con.say_after(["show the CT", "show the model", "zoom in on the coronal",
                          "zoom in on the model"], "zoom out on the model and the CT too")
    assert [a for a, _ in acts] == ["AR.ZOOM_OUT", "IV.ZOOM_OUT"], acts


def test_back_to_the_box_then_a_field_adds_it(con: Console) -> None:
    acts = con.say_after(["show the patient's age", "show the CT"],
                         "back to the patient information, add the BMI")
    assert acts == [("IR.SHOW", {"fields": ["bmi"], "op": "add"})], acts


def test_before_surgery_names_no_field(con: Console) -> None:
    acts = con.say("what was his weight prior to the operation?")
    assert acts == [("IR.SHOW", {"fields": ["weight"]})], acts


def test_go_back_on_a_zoomed_model_zooms_out(con: Console) -> None:
    con.say_after(["show the model", "zoom in on the RUL", "closer"], "go back")
    assert con.snap["ar"]["zoom_level"] == 1
    con.say("go back once more")
    assert con.snap["ar"]["zoom_level"] == 0


def test_go_back_on_the_ct_is_still_a_step_back(con: Console) -> None:
    acts = con.say_after(["show the CT"], "go back")
    assert acts == [("IV.SHOW_MOVE", {"coronal": "-10"})], acts


# ------------------------------------------------------------------ heard on the dev audio
@pytest.mark.parametrize("text", ["Re-track the right upper lobe.", "retrack the RUL",
                                  "What's the function setting?", "check the pump settings"])
def test_misheard_or_talk_stays_out_of_scope(con: Console, text: str) -> None:
    it = con.interp.interpret(text, con.state, con.memory)
    assert not it.valid, it.decision


@pytest.mark.parametrize("text", ["mediastinal window settings please",
                                  "change the window settings to bone", "lung window preset"])
def test_window_settings_stay_in_scope(con: Console, text: str) -> None:
    con.say("show the CT")
    it = con.interp.interpret(text, con.state, con.memory)
    assert "out of scope" not in it.decision.reason.lower(), it.decision.reason


def test_mediastinal_window_settings_read(con: Console) -> None:
    acts = con.say_after(["show the CT"], "mediastinal window settings please")
    assert acts and acts[0][1].get("window") == "mediastinum", acts


# ------------------------------------------------------------------ undo across CLI calls
def test_cli_do_keeps_the_undo_history_in_the_state_file(tmp_path, capsys) -> None:
    from app.session.do import run_do_command

    f = tmp_path / "state.json"
    for text in ("show the CT", "axial plus 30"):
        assert run_do_command(text, None, f, False) == 0
    assert run_do_command("undo that", None, f, False) == 0
    assert "axial plus 30" in capsys.readouterr().out
    snap = json.loads(f.read_text())
    assert snap["iv"]["pos"]["axial"] == snap["iv"]["size"]["axial"] // 2
    assert run_do_command("undo", None, f, False) == 0  # the CT shown, undone
    assert run_do_command("undo", None, f, False) == 1
    assert "nothing to undo" in capsys.readouterr().out.lower()
