"""The team's evaluation dataset (datasets/): format, coverage, and agreement with the registry.

Replaying every split's ``actions`` through the real command registry must reproduce every
``expect``, so the dataset and the console's semantics (DESIGN §4) cannot drift apart.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from app.core.registry import CommandRegistry
from app.core.state import CaseContext, ConsoleState
from app.core.vocab import PLANES

DATASETS = Path(__file__).resolve().parents[1] / "datasets"
SPLITS = ("dev", "test")
AGENTS = ("IR", "IV", "AR")
CATEGORIES = {
    "structure": ("single", "composite"),
    "type": ("explicit", "implicit", "nlq"),
    "expression": ("baseline", "abbreviation", "paraphrase"),
}
REQUIRED = ("id", "session", "text", "agent", "valid", "structure", "type", "expression",
            "expect", "actions", "tags")
ACTIONS = {
    "IR": ("SHOW", "HIDE", "RESET"),
    "IV": ("SHOW_MOVE", "ZOOM_IN_MOVE", "ZOOM_OUT", "REMOVE", "RESET"),
    "AR": ("SHOW", "ROTATE", "ZOOM_IN", "ZOOM_OUT", "REMOVE", "RESET"),
}
SILENT = {"", "um", "uh", "hmm", "uh huh", "er", "erm"}


def _builder():
    spec = importlib.util.spec_from_file_location("build_dataset", DATASETS / "build_dataset.py")
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules.setdefault("build_dataset", mod)  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return sys.modules["build_dataset"]


@pytest.fixture(scope="module")
def builder():
    return _builder()


@pytest.fixture(scope="module")
def splits() -> dict[str, list[dict[str, Any]]]:
    out = {}
    for name in SPLITS:
        lines = (DATASETS / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
        rows = []
        for n, line in enumerate(lines, 1):
            assert line.strip(), f"{name}.jsonl line {n} is blank"
            row = json.loads(line)
            assert isinstance(row, dict), f"{name}.jsonl line {n} is not an object"
            rows.append(row)
        out[name] = rows
    return out


@pytest.fixture(scope="module")
def case() -> dict[str, Any]:
    return json.loads((DATASETS / "case.json").read_text(encoding="utf-8"))


def _context(case: dict[str, Any]) -> CaseContext:
    return CaseContext(iv_size=tuple((p, case["iv_size"][p]) for p in PLANES),
                       tumor_lobes=tuple(case["tumor_lobes"]),
                       structures=tuple(case["structures"]),
                       has_clinical=case["has_clinical"])


def _is_subset(expect: Any, actual: Any, path: str = "") -> list[str]:
    if isinstance(expect, dict):
        if not isinstance(actual, dict):
            return [f"{path}: expected an object, got {actual!r}"]
        errs = []
        for k, v in expect.items():
            if k not in actual:
                errs.append(f"{path}.{k}: missing")
            else:
                errs += _is_subset(v, actual[k], f"{path}.{k}")
        return errs
    return [] if expect == actual else [f"{path}: expected {expect!r}, got {actual!r}"]


def _silent(row: dict[str, Any]) -> bool:
    return "memory.empty" in row["tags"]


# ------------------------------------------------------------------------------ format
def test_ids_unique_and_sessions_contiguous_and_disjoint(splits):
    ids = [r["id"] for rows in splits.values() for r in rows]
    assert len(ids) == len(set(ids))
    sessions = {}
    for name, rows in splits.items():
        seen: list[str] = []
        for r in rows:
            if not seen or seen[-1] != r["session"]:
                assert r["session"] not in seen, f"session {r['session']} is not contiguous"
                seen.append(r["session"])
        sessions[name] = set(seen)
    assert not sessions["dev"] & sessions["test"], "a session straddles the splits"


def test_required_fields_and_allowed_values(splits):
    for rows in splits.values():
        for r in rows:
            where = r.get("id")
            for key in REQUIRED:
                assert key in r, f"{where}: missing {key}"
            assert isinstance(r["id"], str) and isinstance(r["text"], str)
            assert r["agent"] in (*AGENTS, None), where
            assert isinstance(r["valid"], bool), where
            for dim, values in CATEGORIES.items():
                assert r[dim] in values, f"{where}: {dim}={r[dim]!r}"
            assert isinstance(r["expect"], dict) and isinstance(r["actions"], list)
            for a in r["actions"]:
                assert set(a) == {"agent", "action", "params"}, where
                assert a["action"] in ACTIONS[a["agent"]], where
                assert isinstance(a["params"], dict), where
            if "agents" in r:
                assert r["structure"] == "composite" and len(r["agents"]) > 1, where
                assert r["agents"][0] == r["agent"], where
                assert r["agents"] == list(dict.fromkeys(a["agent"] for a in r["actions"]))


def test_invalid_rows_have_no_agent_and_no_actions(splits):
    for rows in splits.values():
        for r in rows:
            if not r["valid"]:
                assert r["agent"] is None and r["actions"] == [], r["id"]
            elif not _silent(r):
                assert r["actions"], r["id"]
                assert r["agent"] == r["actions"][0]["agent"], r["id"]
                assert r["expect"]["agent"] == r["actions"][-1]["agent"], r["id"]


def test_silent_rows_are_silent(splits):
    for rows in splits.values():
        for r in rows:
            if _silent(r):
                assert r["text"].strip(" .,").lower() in SILENT, r["id"]
                assert r["actions"] == [], r["id"]


# ------------------------------------------------------------------------------ coverage
def test_sizes(splits):
    rows = [r for rs in splits.values() for r in rs]
    assert len(rows) >= 300
    assert sum(r["structure"] == "composite" for r in rows) >= 30
    assert sum("oos" in r["tags"] for r in rows) >= 40
    assert sum(not r["valid"] for r in rows) >= 40
    assert sum(_silent(r) for r in rows) >= 4
    n_dev, n_test = len(splits["dev"]), len(splits["test"])
    assert 0.5 <= n_dev / (n_dev + n_test) <= 0.7


@pytest.mark.parametrize("name", SPLITS)
def test_every_split_covers_agents_categories_and_rules(splits, builder, name):
    rows = splits[name]
    assert {r["agent"] for r in rows} == {*AGENTS, None}
    for dim, values in CATEGORIES.items():
        assert {r[dim] for r in rows} == set(values), dim
    assert {r["valid"] for r in rows} == {True, False}
    assert any("agents" in r for r in rows), "no cross-agent composite"
    assert any(_silent(r) and r["valid"] for r in rows)
    for agent in AGENTS:
        mine = [r for r in rows if r["agent"] == agent]
        for dim, values in CATEGORIES.items():
            assert {r[dim] for r in mine} == set(values), f"{agent} lacks some {dim} values"
    tags = {t for r in rows for t in r["tags"]}
    missing = [t for t in builder.REQUIRED_TAGS if t not in tags]
    assert not missing, f"{name} does not exercise {missing}"


# ------------------------------------------------------------------------------ semantics
@pytest.mark.parametrize("name", SPLITS)
def test_replaying_actions_reproduces_every_expect(splits, case, name):
    state = reg = None
    session = None
    for r in splits[name]:
        if r["session"] != session:  # every session starts from the initial state
            session = r["session"]
            state = ConsoleState()
            state.set_case(_context(case))
            reg = CommandRegistry(state)
        before = state.snapshot()
        if r["actions"]:
            plan = [(f"{a['agent']}.{a['action']}", a["params"]) for a in r["actions"]]
            res = reg.dispatch_plan(plan)
            assert res.ok, f"{r['id']} {r['text']!r}: {res.message}"
            errs = _is_subset(r["expect"], state.snapshot())
            assert not errs, f"{r['id']} {r['text']!r}: {errs}"
            # actions are stored in the registry's normalised trace form (lists sorted)
            got = [{**a, "params": {k: sorted(v) if isinstance(v, list) else v
                                    for k, v in a["params"].items()}} for a in res.actions()]
            assert got == r["actions"], r["id"]
        else:
            assert state.snapshot() == before
            assert r["expect"] == before, f"{r['id']}: an invalid/silent row must expect the " \
                                          "whole unchanged snapshot"
            if _silent(r):
                assert r["valid"] == (before["agent"] is not None), r["id"]
                if r["valid"]:
                    assert r["agent"] == before["agent"], r["id"]


def test_builder_output_is_up_to_date(builder):
    assert builder.main(["--check", "--no-case-check"]) == 0, \
        "run .venv/bin/python datasets/build_dataset.py and commit the result"


def test_case_json_matches_builder_and_demo_case(builder, case):
    assert case == builder.CASE
    try:
        from app.data.case import load_case
        from app.data.demo import default_case_dir, is_complete
    except ImportError:
        pytest.skip("the demo case generator is not available")
    path = default_case_dir()
    if not is_complete(path):
        pytest.skip(f"the demo case is not generated at {path} (visa-console demo)")
    assert load_case(path, load_video=False).context() == _context(case)


def test_fill_computes_expect_for_hand_written_rows(splits, builder):
    rows = [r for r in splits["dev"] if r["session"] == splits["dev"][0]["session"]]
    hand = []
    for r in rows:
        h = {k: r[k] for k in ("id", "session", "text", "structure", "type", "expression",
                               "tags")}
        if _silent(r):
            h["empty"] = True
        elif not r["valid"]:
            h.update(valid=False, actions=[])
        else:
            h["actions"] = r["actions"]
        hand.append(h)
    assert builder.fill(hand) == rows


def test_a_refused_plan_stops_the_build(builder):
    bad = [builder.C("rotate diagonally", "sxp", ("AR", "ROTATE", {"direction": "diagonal"}))]
    with pytest.raises(builder.LabelError, match="refused"):
        builder.build_session("x-01", bad)
