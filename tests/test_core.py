"""ConsoleState and the command registry: every rule of DESIGN §4 that needs no language."""

from __future__ import annotations

import json

import pytest

from app.core.params import CommandError, parse_slice
from app.core.registry import Actor, CommandRegistry
from app.core.state import CaseContext, ConsoleState
from app.core.vocab import IR_ALL_FIELDS, LOBES

SIZE = (("axial", 64), ("coronal", 512), ("sagittal", 512))


def make(tumor=("right_upper_lobe",), structures=None, iv_size=SIZE, clinical=True):
    state = ConsoleState()
    state.set_case(CaseContext(iv_size=iv_size, tumor_lobes=tumor, structures=structures,
                               has_clinical=clinical))
    return state, CommandRegistry(state)


def ok(reg, action, **params):
    res = reg.dispatch(action, params)
    assert res.ok, res.message
    return res


# ---------------------------------------------------------------- snapshot
def test_initial_snapshot_has_contract_keys_and_middle_slices():
    state, _ = make()
    snap = state.snapshot()
    assert set(snap) == {"agent", "ir", "iv", "ar"}
    assert snap["iv"] == {"mode": "none", "main": None,
                          "pos": {"axial": 32, "coronal": 256, "sagittal": 256},
                          "size": {"axial": 64, "coronal": 512, "sagittal": 512}}
    assert set(snap["ar"]) == {"visible", "structures", "view", "rotation", "zoom_level",
                               "zoom_target"}
    assert snap["agent"] is None
    json.dumps(snap)


def test_roundtrip_full_state_keeps_zoom_stack_and_last_plane():
    state, reg = make()
    ok(reg, "AR.ZOOM_IN", target="right_upper_lobe")
    ok(reg, "AR.ZOOM_IN", target="lung_nodules")
    ok(reg, "IV.ZOOM_IN_MOVE", plane="coronal")
    ok(reg, "IV.ZOOM_OUT")
    data = json.loads(json.dumps(state.to_dict()))
    again = ConsoleState.from_dict(data)
    assert again.snapshot() == state.snapshot()
    reg2 = CommandRegistry(again)
    ok(reg2, "AR.ZOOM_OUT")
    assert again.ar.zoom_target == "right_upper_lobe"
    ok(reg2, "IV.ZOOM_IN_MOVE")  # no plane: the last main plane
    assert again.iv.main == "coronal"


def test_from_dict_rejects_unknown_values_plainly():
    with pytest.raises(ValueError, match="unknown structure"):
        ConsoleState.from_dict({"ar": {"structures": ["liver"]}})
    with pytest.raises(ValueError, match="CT view mode"):
        ConsoleState.from_dict({"iv": {"mode": "big"}})


def test_events_report_changed_sections_and_keys():
    state, reg = make()
    seen = []
    state.events.connect(seen.append)
    ok(reg, "IV.SHOW_MOVE", coronal="+100")
    sections = {c.section: c for c in seen}
    assert set(sections) == {"agent", "iv"}
    assert set(sections["iv"].keys) >= {"mode", "pos"}
    seen.clear()
    ok(reg, "IV.SHOW_MOVE")  # already shown, nothing moved: no IV event
    assert [c.section for c in seen] == []


def test_failing_subscriber_does_not_break_dispatch():
    state, reg = make()

    def boom(_):
        raise RuntimeError("widget bug")

    state.events.connect(boom)
    assert reg.dispatch("IV.SHOW_MOVE", {"axial": "+10"}).ok
    assert state.iv.pos_dict()["axial"] == 42


# ---------------------------------------------------------------- IV
def test_relative_steps_and_repetitions():
    state, reg = make()
    ok(reg, "IV.SHOW_MOVE", coronal="+100")
    assert state.snapshot()["iv"]["pos"]["coronal"] == 356
    assert state.iv.mode == "small_views" and state.agent == "IV"
    ok(reg, "IV.SHOW_MOVE", sagittal="-30")  # "left left left"
    assert state.iv.pos_dict()["sagittal"] == 226


def test_absolute_and_named_positions_and_clamping():
    state, reg = make()
    ok(reg, "IV.SHOW_MOVE", sagittal=200)
    assert state.iv.pos_dict()["sagittal"] == 200
    ok(reg, "IV.SHOW_MOVE", axial=10, coronal=20, sagittal=50)
    assert state.iv.pos_dict() == {"axial": 10, "coronal": 20, "sagittal": 50}
    res = ok(reg, "IV.SHOW_MOVE", axial="max", coronal="min", sagittal="middle")
    assert state.iv.pos_dict() == {"axial": 63, "coronal": 0, "sagittal": 256}
    res = ok(reg, "IV.SHOW_MOVE", axial="+100")
    assert state.iv.pos_dict()["axial"] == 63
    assert "last slice" in " ".join(res.notes)
    ok(reg, "IV.SHOW_MOVE", coronal=-5)  # negative absolute clamps to the first slice
    assert state.iv.pos_dict()["coronal"] == 0
    ok(reg, "IV.SHOW_MOVE", sagittal=9999)
    assert state.iv.pos_dict()["sagittal"] == 511


def test_move_in_zoom_view_keeps_zoom_and_changes_main():
    state, reg = make()
    ok(reg, "IV.ZOOM_IN_MOVE", plane="axial")
    assert (state.iv.mode, state.iv.main) == ("zoom_view", "axial")
    ok(reg, "IV.SHOW_MOVE", coronal="+10")
    assert (state.iv.mode, state.iv.main) == ("zoom_view", "coronal")


def test_zoom_in_without_plane_uses_last_main_or_last_moved():
    state, reg = make()
    ok(reg, "IV.SHOW_MOVE", sagittal="+10")
    ok(reg, "IV.ZOOM_IN_MOVE")
    assert state.iv.main == "sagittal"
    ok(reg, "IV.ZOOM_IN_MOVE", plane="coronal")
    ok(reg, "IV.ZOOM_OUT")
    assert (state.iv.mode, state.iv.main) == ("small_views", None)
    ok(reg, "IV.ZOOM_IN_MOVE")
    assert state.iv.main == "coronal"
    ok(reg, "IV.ZOOM_IN_MOVE", axial="middle")  # move + zoom: the moved plane
    assert state.iv.main == "axial" and state.iv.pos_dict()["axial"] == 32


def test_remove_and_reset():
    state, reg = make()
    ok(reg, "IV.ZOOM_IN_MOVE", plane="axial", axial="+20")
    ok(reg, "IV.REMOVE")
    assert state.iv.mode == "none"
    ok(reg, "IV.RESET")
    assert state.snapshot()["iv"]["pos"] == {"axial": 32, "coronal": 256, "sagittal": 256}
    assert (state.iv.mode, state.iv.main) == ("small_views", None)


def test_iv_without_ct_is_refused_with_plain_message_and_no_change():
    state, reg = make(iv_size=None)
    before = state.snapshot()
    res = reg.dispatch("IV.SHOW_MOVE", {"axial": "+10"})
    assert not res.ok and "No CT is loaded" in res.message
    assert state.snapshot() == before


# ---------------------------------------------------------------- IR
def test_ir_show_sets_fields_and_links_age_sex():
    state, reg = make()
    ok(reg, "IR.SHOW", fields=["age"])
    assert state.snapshot()["ir"] == {"visible": True, "fields": ["age", "sex"]}
    ok(reg, "IR.SHOW", fields=["pft"])
    assert state.snapshot()["ir"]["fields"] == ["pft"]
    ok(reg, "IR.SHOW", fields=["bmi"], op="add")
    assert state.snapshot()["ir"]["fields"] == ["bmi", "pft"]
    ok(reg, "IR.SHOW")  # no field named: all of them
    assert set(state.ir.fields) == set(IR_ALL_FIELDS)
    assert "operation_date" not in state.ir.fields


def test_ir_hide_and_reset():
    state, reg = make()
    ok(reg, "IR.SHOW", fields=["diagnosis"])
    ok(reg, "IR.HIDE")
    assert state.ir.visible is False
    ok(reg, "IR.RESET")
    assert state.ir.visible and set(state.ir.fields) == set(IR_ALL_FIELDS)


def test_ir_without_clinical_sheet_is_refused():
    state, reg = make(clinical=False)
    res = reg.dispatch("IR.SHOW", {"fields": ["age"]})
    assert not res.ok and "no clinical sheet" in res.message


# ---------------------------------------------------------------- AR
def test_ar_first_show_uses_tumour_lobe_plus_nodules_and_airway():
    state, reg = make(tumor=("right_upper_lobe",))
    ok(reg, "AR.SHOW")
    ar = state.snapshot()["ar"]
    assert ar == {"visible": True,
                  "structures": ["lung_nodules", "right_upper_lobe", "trachea_bronchia"],
                  "view": "surgical", "rotation": "static", "zoom_level": 0,
                  "zoom_target": None}


def test_ar_default_without_tumour_is_all_lobes():
    state, reg = make(tumor=())
    ok(reg, "AR.SHOW")
    assert set(state.ar.structures) == set(LOBES) | {"lung_nodules", "trachea_bronchia"}


def test_ar_default_when_tumour_lobe_not_in_model_falls_back_to_available_lobes():
    avail = ("left_lower_lobe", "left_upper_lobe", "right_lower_lobe")
    state, reg = make(tumor=("right_upper_lobe",), structures=avail)
    ok(reg, "AR.SHOW")
    assert state.ar.structures == tuple(sorted(avail))


def test_ar_groups_abbreviations_and_ops():
    state, reg = make()
    ok(reg, "AR.SHOW", structures=["left_lung"])
    assert state.ar.structures == ("left_lower_lobe", "left_upper_lobe")
    ok(reg, "AR.SHOW", structures=["RML", "airway"], op="add")
    assert set(state.ar.structures) == {"left_lower_lobe", "left_upper_lobe",
                                        "right_middle_lobe", "trachea_bronchia"}
    ok(reg, "AR.SHOW", structures=["left lung"], op="remove")
    assert state.ar.structures == ("right_middle_lobe", "trachea_bronchia")
    ok(reg, "AR.SHOW", structures=["right_lung"])
    assert len(state.ar.structures) == 3


def test_ar_structure_missing_from_model_is_said():
    state, reg = make(structures=("left_upper_lobe", "lung_nodules"))
    before = state.snapshot()
    res = reg.dispatch("AR.SHOW", {"structures": ["right_middle_lobe"]})
    assert not res.ok and "not in this patient's 3D model" in res.message
    assert state.snapshot() == before
    res = ok(reg, "AR.SHOW", structures=["left_upper_lobe", "right_middle_lobe"])
    assert state.ar.structures == ("left_upper_lobe",)
    assert "right middle lobe" in " ".join(res.notes)


def test_ar_views_reset_rotation_and_rotation_is_reported():
    state, reg = make()
    ok(reg, "AR.ROTATE", direction="horizontal")
    assert state.ar.rotation == "horizontal" and state.ar.visible
    ok(reg, "AR.ROTATE", direction="left")
    assert state.ar.rotation == "left"
    ok(reg, "AR.SHOW", view="anterior")
    assert (state.ar.view, state.ar.rotation) == ("anterior", "static")


def test_ar_zoom_stack_walks_back_and_never_below_one():
    state, reg = make()
    ok(reg, "AR.SHOW")
    ok(reg, "AR.ZOOM_IN", target="RUL")
    ok(reg, "AR.ZOOM_IN")  # no target: keeps the current target
    ok(reg, "AR.ZOOM_IN", target="lung_nodules")
    assert (state.ar.zoom_level, state.ar.zoom_target) == (3, "lung_nodules")
    ok(reg, "AR.ZOOM_OUT")
    assert (state.ar.zoom_level, state.ar.zoom_target) == (2, "right_upper_lobe")
    ok(reg, "AR.ZOOM_OUT")
    ok(reg, "AR.ZOOM_OUT")
    assert (state.ar.zoom_level, state.ar.zoom_target) == (0, None)
    res = ok(reg, "AR.ZOOM_OUT")
    assert state.ar.zoom_level == 0 and "already" in res.message


def test_ar_zoom_without_target_first_is_model_centre():
    state, reg = make()
    ok(reg, "AR.ZOOM_IN")
    assert (state.ar.zoom_level, state.ar.zoom_target) == (1, None)


def test_ar_remove_and_reset():
    state, reg = make()
    ok(reg, "AR.SHOW", structures=["left_lung"], view="posterior")
    ok(reg, "AR.ZOOM_IN", target="left_upper_lobe")
    ok(reg, "AR.REMOVE")
    assert state.ar.visible is False
    ok(reg, "AR.SHOW")  # showing again restores what was shown
    assert state.ar.structures == ("left_lower_lobe", "left_upper_lobe")
    ok(reg, "AR.RESET")
    ar = state.snapshot()["ar"]
    assert ar["structures"] == ["lung_nodules", "right_upper_lobe", "trachea_bronchia"]
    assert (ar["view"], ar["rotation"], ar["zoom_level"], ar["zoom_target"]) == (
        "surgical", "static", 0, None)
    assert state.ar.zoom_stack == ()


def test_ar_without_model_is_refused():
    state, reg = make(structures=())
    res = reg.dispatch("AR.SHOW", {})
    assert not res.ok and "no 3D model" in res.message


# ---------------------------------------------------------------- registry
def test_unknown_parameters_and_values_are_clear_errors():
    state, reg = make()
    before = state.snapshot()
    res = reg.dispatch("IV.SHOW_MOVE", {"depth": 3})
    assert not res.ok and "no parameter 'depth'" in res.message and "axial" in res.message
    res = reg.dispatch("AR.ROTATE", {"direction": "diagonal"})
    assert not res.ok and "diagonal" in res.message and "horizontal" in res.message
    res = reg.dispatch("AR.ROTATE", {})
    assert not res.ok and "needs the parameter 'direction'" in res.message
    res = reg.dispatch("IV.SHOW_MOVE", {"axial": "upwards"})
    assert not res.ok and "slice number" in res.message
    res = reg.dispatch("XX.FLY", {})
    assert not res.ok and res.error_code == "unknown_action"
    assert state.snapshot() == before


def test_parse_slice_forms():
    assert parse_slice("+100", "c").resolve(256, 512) == (356, False)
    assert parse_slice(" - 30", "s").resolve(256, 512) == (226, False)
    assert parse_slice("120", "a").as_param() == 120
    assert parse_slice("+10", "a").as_param() == "+10"
    assert parse_slice("center", "a").resolve(0, 64) == (32, False)
    with pytest.raises(CommandError):
        parse_slice(True, "a")


def test_composite_plan_applies_in_order_or_not_at_all():
    state, reg = make()
    res = reg.dispatch_plan([("IV.SHOW_MOVE", {"axial": "middle"}),
                             ("IV.ZOOM_IN_MOVE", {}),
                             ("AR.ROTATE", {"direction": "left"})])
    assert res.ok
    assert (state.iv.mode, state.iv.main, state.ar.rotation) == ("zoom_view", "axial", "left")
    assert state.agent == "AR"  # the last agent used
    assert [a["action"] for a in res.actions()] == ["SHOW_MOVE", "ZOOM_IN_MOVE", "ROTATE"]
    before = state.snapshot()
    res = reg.dispatch_plan([("IV.SHOW_MOVE", {"axial": "+10"}),
                             ("AR.ROTATE", {"direction": "sideways"})])
    assert not res.ok and state.snapshot() == before
    reg.undo()
    assert state.iv.mode == "none" and state.ar.visible is False  # composite undone as one


def test_undo_restores_previous_state_and_reports_empty():
    state, reg = make()
    ok(reg, "IV.SHOW_MOVE", coronal="+100")
    ok(reg, "IV.SHOW_MOVE", coronal="+100")
    assert reg.undo().ok
    assert state.iv.pos_dict()["coronal"] == 356
    assert reg.undo().ok
    assert state.iv.mode == "none" and state.agent is None
    res = reg.undo()
    assert not res.ok and "nothing to undo" in res.message


def test_roles_are_enforced_in_the_registry():
    state, reg = make()
    res = reg.dispatch("IV.SHOW_MOVE", {"axial": "+10"}, Actor(role="observer", source="touch"))
    assert not res.ok and res.error_code == "forbidden" and state.iv.mode == "none"
    assert reg.dispatch("IV.SHOW_MOVE", {"axial": "+10"}, Actor(role="nurse", source="touch")).ok
    res = reg.dispatch("IV.SHOW_MOVE", {}, Actor(role="janitor"))
    assert not res.ok and res.error_code == "forbidden"


def test_audit_hook_sees_every_attempt_with_actor_and_result():
    state, reg = make()
    records = []
    reg.add_audit_hook(records.append)
    reg.dispatch("IV.SHOW_MOVE", {"axial": "+10"}, Actor("nurse", "touch", "J. Doe"))
    reg.dispatch("AR.ROTATE", {"direction": "nowhere"}, Actor("surgeon", "voice"))
    reg.undo(Actor("surgeon", "hotkey"))
    assert [(r.kind, r.ok, r.actor.source) for r in records] == [
        ("dispatch", True, "touch"), ("dispatch", False, "voice"), ("undo", True, "hotkey")]
    assert records[0].snapshot_after["iv"]["pos"]["axial"] == 42
    assert records[2].snapshot_after["iv"]["mode"] == "none"


def test_every_contract_action_is_registered():
    _, reg = make()
    expected = {"IR.SHOW", "IR.HIDE", "IR.RESET", "IV.SHOW_MOVE", "IV.ZOOM_IN_MOVE",
                "IV.ZOOM_OUT", "IV.REMOVE", "IV.RESET", "AR.SHOW", "AR.ROTATE", "AR.ZOOM_IN",
                "AR.ZOOM_OUT", "AR.REMOVE", "AR.RESET"}
    assert set(reg.ids()) == expected


def test_from_dict_validates_zoom_target_and_level():
    with pytest.raises(ValueError, match="zoom target"):
        ConsoleState.from_dict({"ar": {"zoom_level": 1, "zoom_target": "liver"}})
    with pytest.raises(ValueError, match="negative"):
        ConsoleState.from_dict({"ar": {"zoom_level": -1}})
    s = ConsoleState.from_dict({"ar": {"zoom_level": 2, "zoom_target": "right_lung"}})
    assert s.ar.zoom_stack == ("right_lung", "right_lung")


def test_ar_zoom_toward_hidden_structure_shows_it():
    state, reg = make()
    ok(reg, "AR.SHOW")
    res = ok(reg, "AR.ZOOM_IN", target="right_lower_lobe")
    assert "right_lower_lobe" in state.ar.structures
    assert "right lower lobe" in " ".join(res.notes)
    ok(reg, "AR.ZOOM_IN", target="left_lung")
    assert {"left_upper_lobe", "left_lower_lobe"} <= set(state.ar.structures)
