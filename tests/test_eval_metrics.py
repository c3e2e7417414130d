"""MOEM scoring against hand-computed cases (app/eval/metrics.py) and dataset validation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.eval.dataset import DatasetError, load_dataset, parse_row
from app.eval.metrics import (
    aggregate,
    flow_ok,
    group_metrics,
    latency_stats,
    mean_ci,
    normalize_text,
    partial_diff,
    partial_match,
    proportion,
    score_command,
    wilson,
)

# A small state: IV shown at known positions, AR hidden, IR showing BMI.
BEFORE: dict[str, Any] = {
    "agent": "IR",
    "ir": {"visible": True, "fields": ["bmi"]},
    "iv": {"mode": "small_views", "main": None, "pos": {"axial": 64, "coronal": 256, "sagittal": 256},
           "size": {"axial": 128, "coronal": 512, "sagittal": 512}},
    "ar": {"visible": False, "structures": [], "view": "surgical", "rotation": "static",
           "zoom_level": 0, "zoom_target": None},
}


def after(**changes: Any) -> dict[str, Any]:
    """BEFORE with dotted-path changes, e.g. after(**{"iv.pos.coronal": 356, "agent": "IV"})."""
    s = json.loads(json.dumps(BEFORE))
    for path, value in changes.items():
        node = s
        keys = path.split(".")
        for k in keys[:-1]:
            node = node[k]
        node[keys[-1]] = value
    return s


def row(**over: Any):
    base = {"id": "r1", "text": "coronal plus 100", "agent": "IV", "valid": True,
            "structure": "single", "type": "explicit", "expression": "baseline",
            "expect": {"agent": "IV", "iv": {"mode": "small_views", "pos": {"coronal": 356}}},
            "actions": [{"agent": "IV", "action": "SHOW_MOVE", "params": {"coronal": "+100"}}]}
    base.update(over)
    return parse_row(base)


def rec(valid: bool = True, route: str | None = "IV", actions: list[tuple[str, str]] | None = None,
        flow: list[str] | None = None, state: dict[str, Any] | None = None, ic: int = 0,
        corrected: str = "coronal plus 100", stt: str | None = None) -> dict[str, Any]:
    acts = [("IV", "SHOW_MOVE")] if actions is None else actions
    stages: dict[str, Any] = {"correct": {"text": corrected, "valid": valid, "ms": 1.0}}
    if stt is not None:
        stages["stt"] = {"text": stt, "ms": 900.0}
    if valid:
        stages["route"] = {"agent": route, "ms": 0.5}
        stages["decide"] = {"actions": [{"agent": a, "action": n, "params": {}} for a, n in acts],
                            "ms": 2.0}
    if flow is None:
        agents: list[str] = []
        for a, _ in acts:
            if a not in agents:
                agents.append(a)
        flow = (["audio", "stt"] if stt is not None else []) + (
            ["correct", "route", *agents, "end"] if valid else ["correct", "end"])
    return {"id": "r1", "input": {"text": corrected}, "stages": stages, "tier": "lexicon",
            "flow": flow, "invalid_cycles": ic, "total_ms": 4.0,
            "state": state if state is not None else after(**{"iv.pos.coronal": 356, "agent": "IV"})}


# ------------------------------------------------------------------------------ intervals
def test_wilson_hand_computed() -> None:
    lo, hi = wilson(8, 10)
    assert (round(lo, 3), round(hi, 3)) == (0.490, 0.943)
    # 0/n: lower bound exactly 0, upper z²/(n+z²) = 3.8415/13.8415.
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    # n/n: upper bound exactly 1, lower n/(n+z²) = 10/13.8415.
    lo, hi = wilson(10, 10)
    assert hi == 1.0 and lo == pytest.approx(0.7225, abs=1e-4)
    lo, hi = wilson(1, 2)  # symmetric around 0.5
    assert lo == pytest.approx(1 - hi) and lo == pytest.approx(0.0945, abs=1e-4)
    assert wilson(0, 0) is None
    with pytest.raises(ValueError):
        wilson(3, 2)


def test_proportion_and_mean() -> None:
    p = proportion(8, 10)
    assert p["k"] == 8 and p["n"] == 10 and p["rate"] == 0.8
    assert [round(x, 3) for x in p["ci"]] == [0.490, 0.943]
    assert proportion(0, 0) == {"k": 0, "n": 0, "rate": None, "ci": None}
    m = mean_ci([0, 2, 4])  # mean 2, sd 2, half-width 1.96 * 2 / sqrt(3) = 2.263
    assert m["mean"] == 2 and m["max"] == 4
    assert m["ci"] == [pytest.approx(0.0), pytest.approx(2 + 2.2632, abs=1e-3)]


def test_latency_stats_hand_computed() -> None:
    s = latency_stats([4, 1, 3, 2])
    assert s["median"] == 2.5
    assert s["p95"] == pytest.approx(3.85)  # position 3 * 0.95 = 2.85 → 3 + 0.85 * (4 - 3)
    assert s["mean"] == 2.5 and s["max"] == 4 and s["n"] == 4
    assert latency_stats([])["median"] is None


# ------------------------------------------------------------------------------ text
@pytest.mark.parametrize(("text", "norm"), [
    ("Coronal plus 100", "coronal plus 100"),
    ("Davinci, coronal +100.", "coronal plus 100"),
    ("da vinci coronal plus one hundred", "coronal plus 100"),
    ("Move to ten, twenty, fifty!", "move to 10 20 50"),
    ("sagittal two hundred and five", "sagittal 205"),
    ("what's her BMI?", "what is her bmi"),
    ("left left left", "left left left"),
    ("move down -30", "move down minus 30"),
    ("twenty-five", "25"),
    ("", ""),
])
def test_normalize_text(text: str, norm: str) -> None:
    assert normalize_text(text) == norm


# ------------------------------------------------------------------------------ partial state
def test_partial_match_sorted_lists_and_missing_keys() -> None:
    got = {"ir": {"visible": True, "fields": ["sex", "age", "bmi"]}, "agent": "IR"}
    assert partial_match({"ir": {"fields": ["age", "bmi", "sex"]}}, got)  # order-free lists
    assert partial_match({"agent": "IR"}, got)
    assert not partial_match({"ir": {"fields": ["age", "sex"]}}, got)  # a list is a whole value
    diff = partial_diff({"iv": {"pos": {"coronal": 356}}}, got)
    assert diff == ["iv: expected {\"pos\": {\"coronal\": 356}}, missing"]
    diff = partial_diff({"ir": {"visible": False, "fields": ["bmi"]}}, got)
    assert len(diff) == 2 and diff[0].startswith("ir.visible: expected false, got true")
    assert partial_diff({"ar": {"zoom_target": None}}, {"ar": {}}) == [
        "ar.zoom_target: expected null, missing"]


# ------------------------------------------------------------------------------ scoring
def test_perfect_command_is_strict() -> None:
    s = score_command(row(), rec(), BEFORE)
    assert (s.cc, s.cr, s.af, s.ap, s.ad, s.of, s.ic) == (1, 1, 1, 1, 1, 1, 0)
    assert (s.strict, s.single_pass, s.multi_pass, s.fully_correct) == (1, 1, 1, 1)
    assert s.stt is None  # text mode
    assert s.side_effect_free == 1 and s.failed == []


def test_stage_error_recovered_later_is_single_pass_not_strict() -> None:
    # The router said IR, yet the IV plan ran and the state is right: CR wrong, outcome right.
    s = score_command(row(), rec(route="IR"), BEFORE)
    assert s.cr == 0 and s.ad == 1
    assert (s.strict, s.single_pass, s.multi_pass) == (0, 1, 1)
    assert s.fully_correct == 0 and s.failed == ["CR"]
    # A flow that skipped the route stage: OF wrong, outcome right.
    s = score_command(row(), rec(flow=["correct", "IV", "end"]), BEFORE)
    assert s.of == 0 and (s.strict, s.single_pass) == (0, 1)


@pytest.mark.parametrize(("loops", "multi"), [(1, 1), (2, 1), (3, 1), (4, 0)])
def test_multi_pass_allows_three_invalid_loops(loops: int, multi: int) -> None:
    flow = ["correct"] * loops + ["correct", "route", "IV", "end"]
    s = score_command(row(), rec(ic=loops, flow=flow), BEFORE)
    assert s.ic == loops and s.of == 1
    assert (s.strict, s.single_pass, s.multi_pass) == (0, 0, multi)


def test_harness_retries_add_to_invalid_cycles() -> None:
    s = score_command(row(), rec(ic=1), BEFORE, extra_cycles=1)
    assert s.ic == 2 and (s.single_pass, s.multi_pass) == (0, 1)
    s = score_command(row(), rec(ic=1), BEFORE, extra_cycles=3)
    assert s.ic == 4 and s.multi_pass == 0


def test_wrong_parameters_af_right_ap_wrong() -> None:
    s = score_command(row(), rec(state=after(**{"iv.pos.coronal": 266, "agent": "IV"})), BEFORE)
    assert (s.af, s.ap, s.ad) == (1, 0, 0)
    assert s.cc == 1  # corrected text equals the dataset text
    assert (s.strict, s.single_pass, s.multi_pass) == (0, 0, 0)
    assert s.detail["state_diff"] == ["iv.pos.coronal: expected 356, got 266"]


def test_cc_paraphrase_counts_through_right_actions() -> None:
    r = row(text="scroll the coronal forward by a hundred")
    assert score_command(r, rec(corrected="coronal plus 100"), BEFORE).cc == 1
    # Wrong actions and a different corrected text: CC wrong even though validity is right.
    s = score_command(r, rec(corrected="coronal plus 10",
                             state=after(**{"iv.pos.coronal": 266, "agent": "IV"})), BEFORE)
    assert s.cc == 0 and s.valid_right == 1


def test_equivalent_plan_counts_for_af() -> None:
    r = row(text="show BMI and PFT", agent="IR", structure="composite",
            expect={"agent": "IR", "ir": {"visible": True, "fields": ["bmi", "pft"]}},
            actions=[{"agent": "IR", "action": "SHOW", "params": {"fields": ["bmi", "pft"]}}])
    state = after(**{"ir.fields": ["pft", "bmi"]})  # unsorted: compared sorted
    s = score_command(r, rec(route="IR", actions=[("IR", "SHOW"), ("IR", "SHOW")], state=state,
                             corrected="show bmi and pft"), BEFORE)
    assert (s.af, s.ap, s.ad, s.cr, s.strict) == (1, 1, 1, 1, 1)
    # The same two-step plan with a wrong result: names differ and the state is wrong.
    s = score_command(r, rec(route="IR", actions=[("IR", "SHOW"), ("IR", "SHOW")],
                             state=after(**{"ir.fields": ["bmi"]})), BEFORE)
    assert (s.af, s.ap) == (0, 0)


def _cross_row():
    return row(text="cor plus 100 and show the model", structure="composite", agents=["IV", "AR"],
               expect={"agent": "AR", "iv": {"pos": {"coronal": 356}}, "ar": {"visible": True}},
               actions=[{"agent": "IV", "action": "SHOW_MOVE", "params": {"coronal": "+100"}},
                        {"agent": "AR", "action": "SHOW", "params": {}}])


def test_composite_cross_agent() -> None:
    r = _cross_row()
    good = after(**{"iv.pos.coronal": 356, "agent": "AR", "ar.visible": True})
    s = score_command(r, rec(actions=[("IV", "SHOW_MOVE"), ("AR", "SHOW")], state=good,
                             corrected="coronal plus 100 and show the model"), BEFORE)
    assert (s.cr, s.af, s.ap, s.of, s.fully_correct, s.strict) == (1, 1, 1, 1, 1, 1)
    # Only the first part done: agents [IV] != [IV, AR], the model not shown.
    half = after(**{"iv.pos.coronal": 356, "agent": "IV"})
    s = score_command(r, rec(actions=[("IV", "SHOW_MOVE")], state=half), BEFORE)
    assert (s.cr, s.af, s.ap, s.fully_correct, s.single_pass) == (0, 0, 0, 0, 0)
    # Both parts, in the wrong order: CR wrong (order), final state nonetheless right.
    s = score_command(r, rec(route="AR", actions=[("AR", "SHOW"), ("IV", "SHOW_MOVE")],
                             state=good), BEFORE)
    assert s.cr == 0 and s.ap == 1 and s.single_pass == 1 and s.fully_correct == 0


def _invalid_row():
    return row(id="x1", text="prepare the stapler", agent=None, valid=False, actions=[],
               expect=json.loads(json.dumps(BEFORE)), tags=["oos"])


def test_invalid_row_rejected_without_change() -> None:
    s = score_command(_invalid_row(), rec(valid=False, state=BEFORE,
                                          corrected="prepare the stapler"), BEFORE)
    assert (s.cc, s.cr, s.af, s.ap, s.ad, s.of, s.unchanged) == (1, 1, 1, 1, 1, 1, 1)
    assert (s.strict, s.single_pass, s.multi_pass) == (1, 1, 1)


def test_invalid_row_with_state_change_fails() -> None:
    changed = after(**{"ar.visible": True})
    s = score_command(_invalid_row(), rec(valid=False, state=changed), BEFORE)
    assert s.valid_right == 1 and s.cc == 1 and s.unchanged == 0 and s.ap == 0
    assert (s.strict, s.single_pass, s.multi_pass) == (0, 0, 0)
    assert "state changed" in s.failed
    # Taken as valid and acted on: validity, routing, functions and flow all wrong.
    s = score_command(_invalid_row(), rec(valid=True, route="AR", actions=[("AR", "SHOW")],
                                          state=changed), BEFORE)
    assert (s.cc, s.cr, s.af, s.ap, s.of, s.single_pass) == (0, 0, 0, 0, 0, 0)


def test_invalid_row_after_earlier_error_judged_on_its_own() -> None:
    # An earlier command left coronal at 266 where the dataset expected 256: the rejection is
    # still right because this command changed nothing.
    drifted = after(**{"iv.pos.coronal": 266})
    s = score_command(_invalid_row(), rec(valid=False, state=drifted), drifted)
    assert s.ap == 1 and s.single_pass == 1
    # Without the state before, the dataset's full snapshot decides.
    s = score_command(_invalid_row(), rec(valid=False, state=drifted), None)
    assert s.ap == 0 and s.unchanged is None


def test_silent_row_with_previous_agent() -> None:
    r = row(id="s1", text="", agent="IR", type="implicit", actions=[],
            expect=json.loads(json.dumps(BEFORE)))
    record = rec(valid=True, route="IR", actions=[], flow=["correct", "route", "IR", "end"],
                 state=BEFORE, corrected="")
    s = score_command(r, record, BEFORE)
    assert (s.cc, s.cr, s.af, s.ap, s.of, s.strict) == (1, 1, 1, 1, 1, 1)


def test_stt_scored_in_audio_mode_only() -> None:
    r = row(audio="a/1.wav")
    assert score_command(r, rec(stt="Davinci, coronal plus one hundred."), BEFORE,
                         mode="audio").stt == 1
    s = score_command(r, rec(stt="corona plus 100"), BEFORE, mode="audio")
    assert s.stt == 0 and s.single_pass == 1 and s.strict == 0
    assert score_command(r, rec(), BEFORE, mode="text").stt is None


@pytest.mark.parametrize(("flow", "valid", "ok"), [
    (["correct", "route", "IV", "end"], True, True),
    (["audio", "stt", "correct", "route", "IV", "end"], True, True),
    (["audio", "stt", "correct", "audio", "stt", "correct", "route", "IV", "end"], True, True),
    (["audio", "stt", "correct", "route", "audio", "stt", "correct", "route", "IV", "end"],
     True, True),  # the reference workflow may find a command invalid at routing and loop
    (["correct", "end"], False, True),
    (["correct", "correct", "end"], False, True),
    (["correct", "route", "IV"], True, False),  # no end
    (["route", "IV", "end"], True, False),  # no correct
    (["correct", "IV", "route", "end"], True, False),
    (["correct", "route", "AR", "end"], True, False),  # the stage ran is not the plan's agent
    (["correct", "end"], True, False),  # a valid command must be routed
    (["correct", "route", "end"], False, False),  # an invalid command must not be
])
def test_flow_order(flow: list[str], valid: bool, ok: bool) -> None:
    r = rec(valid=valid, flow=flow)
    assert flow_ok(r, valid)[0] is ok


# ------------------------------------------------------------------------------ aggregation
def test_aggregate_hand_computed() -> None:
    rows = [row(id="a"), row(id="b", type="implicit"), _cross_row(), _invalid_row()]
    records = [
        rec(),                                            # strict
        rec(ic=2, flow=["correct", "correct", "correct", "route", "IV", "end"]),  # multi only
        rec(actions=[("IV", "SHOW_MOVE")], state=after(**{"iv.pos.coronal": 356})),  # fail
        rec(valid=False, state=BEFORE),                   # rejected, unchanged
    ]
    records[2]["tier"] = "llm"
    records[2]["total_ms"] = 1500.0
    scores = [score_command(r, x, BEFORE) for r, x in zip(rows, records, strict=True)]
    m = aggregate(rows, scores, records)
    o = m["overall"]
    assert o["n"] == 4
    assert o["success"]["strict"]["k"] == 2  # a and the invalid row
    assert o["success"]["single_pass"]["k"] == 2
    assert o["success"]["multi_pass"]["k"] == 3
    assert o["invalid_cycles"]["mean"] == 0.5
    assert o["stages"]["STT"] is None
    assert o["stages"]["CR"]["k"] == 3 and o["stages"]["AP"]["k"] == 3
    assert set(m["by_agent"]) == {"IV", "none"} and m["by_agent"]["IV"]["n"] == 3
    assert m["by_category"]["type"]["implicit"]["success"]["multi_pass"]["k"] == 1
    assert m["by_category_pair"]["structure/type"]["composite/explicit"]["n"] == 1
    assert m["composite"]["n"] == 1 and m["composite"]["fully_correct"]["k"] == 0
    oos = m["out_of_scope"]
    assert oos["basis"] == "rows tagged 'oos'" and oos["n"] == 1
    assert oos["rejected_with_zero_state_change"]["rate"] == 1.0
    assert m["latency"]["stages"]["total"]["median"] == 4.0
    assert m["latency"]["by_tier"]["llm"]["median"] == 1500.0
    assert m["tiers"] == {"lexicon": 3, "llm": 1}
    assert group_metrics([])["success"]["strict"]["rate"] is None
    json.dumps(m)  # metrics.json must serialise


# ------------------------------------------------------------------------------ dataset
def _write(tmp_path: Path, lines: list[str]) -> Path:
    p = tmp_path / "d.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


GOOD = {"id": "1", "session": "s1", "text": "show the CT", "agent": "IV", "valid": True,
        "structure": "single", "type": "explicit", "expression": "abbreviation",
        "expect": {"agent": "IV", "iv": {"mode": "small_views"}}}


def test_dataset_loads_groups_and_resolves_audio(tmp_path: Path) -> None:
    rows = [dict(GOOD, audio="audio/1.wav"),
            dict(GOOD, id="2", audio=["audio/2a.wav", "audio/2b.wav"]),
            dict(GOOD, id="3", session="s2")]
    p = _write(tmp_path, [json.dumps(r) for r in rows] + [""])
    ds = load_dataset(p)
    assert [r.id for r in ds] == ["1", "2", "3"]
    assert [(name, len(rs)) for name, rs in ds.sessions()] == [("s1", 2), ("s2", 1)]
    assert ds.rows[0].audio == (tmp_path / "audio" / "1.wav",)
    assert ds.rows[1].audio == (tmp_path / "audio" / "2a.wav", tmp_path / "audio" / "2b.wav")
    assert ds.has_audio()
    # Rows without a session continue the one before.
    nos = {k: v for k, v in GOOD.items() if k != "session"}
    ds = load_dataset(_write(tmp_path, [json.dumps(nos), json.dumps(dict(nos, id="2"))]))
    assert len(ds.sessions()) == 1


def test_dataset_errors_name_their_lines(tmp_path: Path) -> None:
    lines = [
        json.dumps(GOOD),
        '{"id": "2", "text": "oops"',                                  # 2: bad JSON
        json.dumps(dict(GOOD, id="3", type="explict")),                # 3: bad category
        json.dumps(dict(GOOD, id="1")),                                # 4: duplicate id
        json.dumps(dict(GOOD, id="5", expect={"iv": {"postion": 3}})),  # 5: typo in expect
        json.dumps(dict(GOOD, id="6", valid=False)),                   # 6: invalid with agent
        json.dumps({k: v for k, v in GOOD.items() if k != "expect"} | {"id": "7"}),  # 7
        json.dumps(dict(GOOD, id="8", actions=[{"agent": "IV", "action": "FLY"}])),  # 8: ok
        json.dumps(dict(GOOD, id="9", session="s2")),
        json.dumps(dict(GOOD, id="10", session="s1")),                 # 10: session again
        "[1, 2]",                                                      # 11: not an object
    ]
    with pytest.raises(DatasetError) as ei:
        load_dataset(_write(tmp_path, lines))
    msg = str(ei.value)
    assert "line 2: not valid JSON" in msg
    assert "line 3: 'type' must be one of explicit, implicit, nlq (got 'explict')" in msg
    assert "line 4: id '1' is already used on line 1" in msg
    assert "line 5: 'expect.iv' has an unknown key 'postion'" in msg
    assert "line 6: an invalid command (valid: false) must have agent null" in msg
    assert "line 7: missing 'expect'" in msg
    assert "line 10: session 's1' appears again" in msg
    assert "line 11: expected a JSON object" in msg
    assert len(ei.value.problems) == 8
    assert "line 1:" not in msg and "line 8:" not in msg and "line 9:" not in msg


def test_dataset_keys_of_another_tools_shape_are_ignored(tmp_path: Path) -> None:
    # DESIGN §5.4: other tools write their own gold action lists, tags and agent lists.
    lines = [
        json.dumps(dict(GOOD, actions=[{"function": "show_move", "args": {"coronal": 100}}])),
        json.dumps(dict(GOOD, id="2", actions="IV.SHOW_MOVE", tags="ir", agents="IV")),
        json.dumps(dict(GOOD, id="3", annotator="rk", gold={"steps": 2})),
        json.dumps(dict(GOOD, id="4", actions=[{"agent": "IV", "action": "FLY"}])),
    ]
    ds = load_dataset(_write(tmp_path, lines))
    assert [r.id for r in ds] == ["1", "2", "3", "4"]
    assert all(r.actions is None and r.tags == () and r.agents is None for r in ds)


def test_dataset_file_problems(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="does not exist"):
        load_dataset(tmp_path / "missing.jsonl")
    with pytest.raises(DatasetError, match="holds no commands"):
        load_dataset(_write(tmp_path, [""]))


def test_team_datasets_load() -> None:
    root = Path(__file__).resolve().parents[1] / "datasets"
    for split in ("dev", "test"):
        ds = load_dataset(root / f"{split}.jsonl")
        assert len(ds) > 100 and ds.case_expectations is not None
        # Every session starts once, and composites name their agents.
        names = [n for n, _ in ds.sessions()]
        assert len(names) == len(set(names))


def test_exact_plan_with_drifted_state_is_marked_inherited() -> None:
    r = row()
    drifted = rec(state=after(**{"iv.pos.coronal": 366, "agent": "IV"}))  # was 266 before
    drifted["stages"]["decide"]["actions"] = [
        {"agent": "IV", "action": "SHOW_MOVE", "params": {"coronal": "+100"}}]
    s = score_command(r, drifted, after(**{"iv.pos.coronal": 266}))
    assert s.plan_exact == 1 and s.ap == 0 and s.single_pass == 0
    assert s.detail["inherited"] is True
    # rec() decides SHOW_MOVE without parameters: not the exact plan, nothing inherited.
    s = score_command(r, rec(state=after(**{"iv.pos.coronal": 366})), BEFORE)
    assert s.plan_exact == 0 and "inherited" not in s.detail
    assert score_command(parse_row({k: v for k, v in row().raw.items() if k != "actions"}), rec(), BEFORE).plan_exact is None
    m = aggregate([r], [score_command(r, drifted, BEFORE)])
    assert m["inherited_failures"] == 1


# ------------------------------------------------------------------------------ two views
def test_relative_step_from_a_drifted_state_is_right_per_command_not_per_session() -> None:
    # The story says coronal was 256 before "coronal plus 100"; the console had drifted to 300
    # (an earlier error). Moving to 400 is what the command should do from there.
    drifted = after(**{"iv.pos.coronal": 300})
    story = after()
    r = row(actions=None)
    s = score_command(r, rec(state=after(**{"iv.pos.coronal": 400, "agent": "IV"})), drifted,
                      story_before=story)
    assert (s.ap, s.ad) == (0, 0)
    assert (s.ap_cmd, s.ad_cmd) == (1, 1)
    # Reaching the story's 356 from 300 is a different step: wrong per command too? No — it
    # matches `expect`, and an absolute reading is accepted in both views.
    s = score_command(r, rec(state=after(**{"iv.pos.coronal": 356, "agent": "IV"})), drifted,
                      story_before=story)
    assert (s.ap, s.ap_cmd) == (1, 1)
    # A wrong step is wrong in both views.
    s = score_command(r, rec(state=after(**{"iv.pos.coronal": 310, "agent": "IV"})), drifted,
                      story_before=story)
    assert (s.ap, s.ap_cmd) == (0, 0)


def test_structure_added_to_the_set_actually_shown_is_right_per_command() -> None:
    from app.eval.metrics import per_command_expect

    story = after(**{"ar.visible": True, "ar.structures": ["lung_nodules", "right_upper_lobe"]})
    actual = after(**{"ar.visible": True, "ar.structures": ["right_upper_lobe"]})
    expect = {"ar": {"visible": True,
                     "structures": ["lung_nodules", "right_lower_lobe", "right_upper_lobe"]}}
    got = per_command_expect(expect, story, actual)
    assert got["ar"]["structures"] == ["right_lower_lobe", "right_upper_lobe"]
    # A list replaced outright ("only the RLL") stays absolute.
    only = {"ar": {"structures": ["right_lower_lobe"]}}
    assert per_command_expect(only, story, actual) == only
    # Slice steps clamp to the volume.
    moved = per_command_expect({"iv": {"pos": {"axial": 124}}}, after(**{"iv.pos.axial": 120}),
                               after(**{"iv.pos.axial": 125}))
    assert moved["iv"]["pos"]["axial"] == 127


def test_metrics_report_both_views_side_by_side() -> None:
    r = row(actions=None)
    good = score_command(r, rec(), BEFORE, story_before=BEFORE)
    drift = score_command(r, rec(state=after(**{"iv.pos.coronal": 400, "agent": "IV"})),
                          after(**{"iv.pos.coronal": 300}), story_before=BEFORE)
    g = group_metrics([good, drift])
    assert g["views"]["session"]["AD"]["k"] == 1
    assert g["views"]["per_command"]["AD"]["k"] == 2


def test_absolute_move_beside_a_drifted_plane_is_right_per_command() -> None:
    # "coronal to 250" while the axial had drifted: the coronal is absolute, the axial is
    # the console's own, unchanged.
    story = after(**{"iv.pos.coronal": 320, "iv.pos.axial": 70})
    actual = after(**{"iv.pos.coronal": 276, "iv.pos.axial": 97})
    r = row(text="coronal to 250", actions=None,
            expect={"agent": "IV", "iv": {"pos": {"axial": 70, "coronal": 250}}})
    got = after(**{"iv.pos.coronal": 250, "iv.pos.axial": 97, "agent": "IV"})
    s = score_command(r, rec(state=got), actual, story_before=story)
    assert (s.ap, s.ap_cmd) == (0, 1)
