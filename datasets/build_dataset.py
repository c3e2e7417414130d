#!/usr/bin/env python3
"""Build the team's evaluation dataset (DESIGN §5.4; issue 5, item 1).

    .venv/bin/python datasets/build_dataset.py            # rewrite dev.jsonl, test.jsonl, case.json
                                                          # and the generated part of README.md
    .venv/bin/python datasets/build_dataset.py --check    # only verify the files are up to date
    .venv/bin/python datasets/build_dataset.py --fill MINE.jsonl --out MINE.filled.jsonl
                                                          # compute agent/agents/expect for a
                                                          # hospital's own hand-written sessions

The sessions below are written as Python data: what the surgeon said, the categories, and the
plan a correct console carries out (our labelling per DESIGN §4). ``expect`` is never typed by
hand: every plan is replayed through the real :class:`CommandRegistry` on a
:class:`ConsoleState` holding the case context, and the snapshot after each command is cut down
to the keys that command determines. A plan the registry refuses stops the build.

Everything is deterministic: running the builder twice gives byte-identical files.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:  # `python datasets/build_dataset.py` from anywhere
    sys.path.insert(0, str(ROOT))

from app.core.params import SliceValue  # noqa: E402
from app.core.registry import CommandRegistry, CommandResult  # noqa: E402
from app.core.state import CaseContext, ConsoleState  # noqa: E402
from app.core.vocab import AR_ABBREVIATIONS, IR_LINKED, PLANES  # noqa: E402

# --------------------------------------------------------------------------------------- case
# The dataset runs against the built-in demo case (app.data.demo, demo-case-v1). These values
# are what its loader reports (``load_case(ensure_demo_case()).context()``); the builder checks
# them against the generated case unless --no-case-check is given, and writes them to
# case.json and README.md so they can be re-derived.
CASE: dict[str, Any] = {
    "name": "built-in demo case (app.data.demo, demo-case-v1)",
    "iv_size": {"axial": 128, "coronal": 512, "sagittal": 512},
    "tumor_lobes": ["right_upper_lobe"],
    "structures": ["left_lower_lobe", "left_upper_lobe", "lung_nodules", "right_lower_lobe",
                   "right_middle_lobe", "right_upper_lobe", "trachea_bronchia"],
    "has_clinical": True,
}

STRUCTURES = ("single", "composite")
TYPES = ("explicit", "implicit", "nlq")
EXPRESSIONS = ("baseline", "abbreviation", "paraphrase")
_CAT = {"s": "single", "c": "composite", "x": "explicit", "i": "implicit", "q": "nlq",
        "b": "baseline", "a": "abbreviation", "p": "paraphrase"}
_INITIAL = {v: k for k, v in _CAT.items()}

# Rule tags every split must exercise (tests/test_dataset.py checks this per split).
REQUIRED_TAGS = (
    "memory.empty", "memory.bare", "memory.repeat",
    "ir.all_fields", "ir.show_fields", "ir.age_sex_link", "ir.add_fields", "ir.remove_fields",
    "ir.operation_date", "ir.hide", "ir.reset",
    "iv.first_show_middle", "iv.relative", "iv.absolute", "iv.absolute_triple", "iv.middle",
    "iv.max", "iv.min", "iv.clamp", "iv.direction_words", "iv.repeat_words", "iv.zoom_in",
    "iv.zoom_view_move", "iv.zoom_out", "iv.remove", "iv.reset",
    "ar.first_show", "ar.left_lung", "ar.right_lung", "ar.airway", "ar.abbreviation",
    "ar.set_structures", "ar.add", "ar.remove_structures", "ar.view", "ar.view_resets_rotation",
    "ar.rotate_swing", "ar.rotate_turn", "ar.zoom_target", "ar.zoom_in", "ar.zoom_stack",
    "ar.zoom_out", "ar.zoom_out_floor", "ar.remove", "ar.reset",
    "composite.same_agent", "composite.cross_agent", "oos", "oos.hard_negative",
)


# ------------------------------------------------------------------------------- the DSL
Act = tuple[str, str, dict[str, Any]]


@dataclass
class Cmd:
    text: str
    cats: str  # structure/type/expression initials, e.g. "sxb" = single explicit baseline
    actions: tuple[Act, ...] = ()
    kind: str = "command"  # "command" | "oos" | "empty"
    tags: tuple[str, ...] = ()


def C(text: str, cats: str, *actions: Act, tags: Iterable[str] = ()) -> Cmd:
    """A command a correct console carries out with ``actions`` (in order)."""
    if not actions:
        raise ValueError(f"{text!r}: a valid command needs actions")
    return Cmd(text, cats, tuple(actions), "command", tuple(tags))


def X(text: str, cats: str, tags: Iterable[str] = ()) -> Cmd:
    """Out of scope for the console: rejected, no actions, no state change."""
    return Cmd(text, cats, (), "oos", tuple(tags))


def E(text: str = "", cats: str = "sib") -> Cmd:
    """Empty or silent input: re-selects the previous agent and keeps its state."""
    return Cmd(text, cats, (), "empty")


# IV
def mv(**p: Any) -> Act:
    return ("IV", "SHOW_MOVE", p)


def zin(plane: str, **p: Any) -> Act:
    return ("IV", "ZOOM_IN_MOVE", {"plane": plane, **p})


def ivout() -> Act:
    return ("IV", "ZOOM_OUT", {})


def ivrm() -> Act:
    return ("IV", "REMOVE", {})


def ivreset() -> Act:
    return ("IV", "RESET", {})


# IR
def irs(*fields: str, op: str | None = None) -> Act:
    p: dict[str, Any] = {}
    if fields:
        p["fields"] = list(fields)
    if op:
        p["op"] = op
    return ("IR", "SHOW", p)


def irhide() -> Act:
    return ("IR", "HIDE", {})


def irreset() -> Act:
    return ("IR", "RESET", {})


# AR
def ars(*structures: str, op: str | None = None, view: str | None = None) -> Act:
    p: dict[str, Any] = {}
    if structures:
        p["structures"] = list(structures)
    if op:
        p["op"] = op
    if view:
        p["view"] = view
    return ("AR", "SHOW", p)


def rot(direction: str) -> Act:
    return ("AR", "ROTATE", {"direction": direction})


def arz(target: str | None = None) -> Act:
    return ("AR", "ZOOM_IN", {"target": target} if target else {})


def arout() -> Act:
    return ("AR", "ZOOM_OUT", {})


def arrm() -> Act:
    return ("AR", "REMOVE", {})


def arreset() -> Act:
    return ("AR", "RESET", {})


PHYS = ("height", "weight", "bmi")
REP = ("memory.repeat",)
HARD = ("oos.hard_negative",)
UNHELD = ("oos.unheld",)

# ------------------------------------------------------------------------------ sessions
# Development split: tuning, exemplars and debugging may use it.
DEV: dict[str, list[Cmd]] = {}
# Test split: written in a different wording style and session flow; NEVER used for tuning.
TEST: dict[str, list[Cmd]] = {}

# dev-01: pre-operative briefing before docking (patient data, first look at CT and model).
DEV["dev-01"] = [
    C("show the patient information", "sxb", irs()),
    C("how old is the patient?", "sqb", irs("age")),
    C("what's her BMI?", "sqa", irs("bmi")),
    C("also show height and weight", "cxb", irs("height", "weight", op="add")),
    C("what are the lung function values?", "sqp", irs("pft")),
    X("prepare the stapler", "sxb", HARD),
    C("show the operation date", "sxb", irs("operation_date")),
    C("show all fields", "sxb", irs()),
    C("hide the patient info", "sxb", irhide()),
    E(""),
    C("show the CT", "sxa", mv()),
    C("coronal plus 100", "sxb", mv(coronal="+100")),
    C("move up", "sxb", mv(axial="+10")),
    C("a bit more", "sib", mv(axial="+10"), tags=REP),
    C("zoom in", "sib", zin("axial")),
    C("sagittal 200", "sxb", mv(sagittal=200)),
    C("zoom out", "sib", ivout()),
    X("call the anesthesiologist", "sxb"),
    C("show the 3D model", "sxb", ars()),
    C("rotate to the left", "sxb", rot("left")),
    C("show the anterior view", "sxb", ars(view="anterior")),
    C("zoom in on the nodule", "sxb", arz("lung_nodules")),
    C("zoom in", "sib", arz("lung_nodules")),
    C("zoom out", "sib", arout()),
    C("zoom out", "sib", arout()),
    X("is the patient's vital sign stable?", "sqp"),
    C("show the patient's sex and age", "sxb", irs("sex", "age")),
    C("reset", "sib", irreset()),
    C("remove", "sib", irhide()),
    C("remove all CT", "sxa", ivrm()),
    C("hide the model", "sxb", arrm()),
]

# dev-02: hilar dissection; the surgeon navigates the CT a lot.
DEV["dev-02"] = [
    C("uh, show the CT please", "sxa", mv()),
    C("left left left", "sxb", mv(sagittal="-30")),
    C("forward forward", "sxb", mv(coronal="+20")),
    C("move down 20", "sxb", mv(axial="-20")),
    C("move axial to the middle slice and zoom in", "cxb", mv(axial="middle"), zin("axial")),
    C("coronal minus 50", "sxb", mv(coronal="-50")),
    C("go to the last axial slice", "sxp", mv(axial="max")),
    C("up up", "sxb", mv(axial="+20")),
    X("what's the suction setting?", "sqp"),
    C("smaller views", "sxp", ivout()),
    C("move to 10, 20, 50", "sxb", mv(axial=10, coronal=20, sagittal=50)),
    C("sagittal plus 30", "sxb", mv(sagittal="+30")),
    C("zoom in on the sagittal", "sxb", zin("sagittal")),
    C("right", "sxb", mv(sagittal="+10")),
    C("move back", "sxb", mv(coronal="-10")),
    X("apply suction", "sxb", HARD),
    C("reset the CT", "sxa", ivreset()),
    C("coronal max", "sxb", mv(coronal="max")),
    C("sagittal minimum", "sxb", mv(sagittal="min")),
    C("axial 300", "sxb", mv(axial=300)),
    C("take the coronal back to the center", "sxp", mv(coronal="middle")),
    C("enlarge the coronal view", "sxp", zin("coronal")),
    E(""),
    C("zoom out", "sib", ivout()),
    C("make the axial big", "sxp", zin("axial")),
    C("initialize", "sib", ivreset()),
    X("what's the end tidal CO2?", "sqa"),
    X("move the camera up a little", "sxp", HARD),
    C("remove the CT", "sxa", ivrm()),
]

# dev-03: fissure and vessels; the 3D model is the main reference.
DEV["dev-03"] = [
    C("bring up the 3D reconstruction", "sxp", ars()),
    C("show the right lung", "sxb", ars("right_lung", op="add")),
    C("add the airway", "sxb", ars("airway", op="add")),
    C("also show the nodules", "sxb", ars("lung_nodules", op="add")),
    C("view from the posterior side", "sxb", ars(view="posterior")),
    C("rotate horizontally", "sxb", rot("horizontal")),
    C("show the surgical view", "sxb", ars(view="surgical")),
    C("zoom in on the RUL", "sxa", arz("right_upper_lobe")),
    C("zoom in on the nodule", "sxb", arz("lung_nodules")),
    C("zoom out", "sib", arout()),
    C("zoom out", "sib", arout()),
    C("zoom out", "sib", arout()),
    C("hide the RML and RLL", "cxa", ars("RML", "RLL", op="remove")),
    C("show the left lung", "sxb", ars("left_lung", op="add")),
    C("add the RUL", "sxa", ars("RUL", op="add")),
    C("look at it from above", "sxp", ars(view="superior")),
    C("spin it vertically", "sxp", rot("vertical")),
    C("stop the rotation", "sxb", rot("static")),
    X("give me the Maryland bipolar", "sxp"),
    C("rotate up", "sxb", rot("up")),
    C("rotate down", "sxb", rot("down")),
    C("view from the right", "sxb", ars(view="right")),
    C("inferior view", "sxb", ars(view="inferior")),
    C("reset the model", "sxb", arreset()),
    C("remove all", "sib", arrm()),
    C("rotate left", "sxb", rot("left")),
    X("increase the insufflation pressure", "sxb"),
    X("retract the right upper lobe", "sxb", HARD),
    C("show the airway only", "sxb", ars("airway")),
    C("reset", "sib", arreset()),
    C("erase all", "sib", arrm()),
]

# dev-04: lymph node dissection (stations 4R and 7) with a lot of room chatter.
DEV["dev-04"] = [
    C("what's the diagnosis?", "sqb", irs("diagnosis")),
    C("what comorbidities does she have?", "sqb", irs("comorbidities")),
    C("what's her medical history?", "sqp", irs("comorbidities")),
    C("what's her FEV1?", "sqa", irs("pft")),
    X("the patient is coughing", "sxp"),
    C("let's check the CT", "sxa", mv()),
    C("move inferior 15", "sxb", mv(axial="-15")),
    C("posterior 20", "sxb", mv(coronal="-20")),
    C("again", "sib", mv(coronal="-20"), tags=REP),
    C("zoom in", "sib", zin("coronal")),
    C("anterior", "sxb", mv(coronal="+10")),
    C("show the mediastinal window", "sxb", mv(window="mediastinum")),
    C("back to the lung window", "sxp", mv(window="lung")),
    X("what time is it?", "sqb"),
    X("how much blood loss so far?", "sqp"),
    C("show the model", "sxb", ars()),
    C("zoom in on the airway", "sxb", arz("trachea_bronchia")),
    C("rotate to the right", "sxb", rot("right")),
    C("show BMI and PFT", "cxa", irs("bmi", "pft")),
    C("how tall is she and how much does she weigh?", "cqp", irs("height", "weight")),
    C("hide the patient box and show the CT", "cxa", irhide(), mv()),
    C("zoom out", "sib", ivout()),
    X("clip the azygos vein", "sxb", HARD),
    C("remove the 3D model and the CT", "cxa", arrm(), ivrm()),
    E(""),
    E("um"),
    C("show the tumor location", "sxb", irs("tumor_location")),
    X("show her allergies", "sxp", UNHELD),
    C("clear", "sib", irhide()),
]

# dev-05: a surgeon who chains requests (composite commands across agents).
DEV["dev-05"] = [
    C("show the CT and the 3D model", "cxa", mv(), ars()),
    C("zoom in on the coronal and rotate the model left", "cxb", zin("coronal"), rot("left")),
    C("show physical and PFT info", "cxa", irs(*PHYS, "pft")),
    C("move axial to 40 and sagittal to 300", "cxb", mv(axial=40), mv(sagittal=300)),
    C("zoom out and show the left lung", "cxb", ivout(), ars("left_lung", op="add")),
    C("zoom in and rotate to the left", "cib", arz(), rot("left")),
    C("show the airway and the nodules too", "cxb",
      ars("trachea_bronchia", "lung_nodules", op="add")),
    C("what's her age and diagnosis?", "cqb", irs("age", "diagnosis")),
    C("reset the CT and the model", "cxa", ivreset(), arreset()),
    C("sagittal 100 then zoom in on it", "cib", mv(sagittal=100), zin("sagittal")),
    X("switch on the light source", "sxp"),
    C("show the right upper lobe with the nodule", "cxb",
      ars("right_upper_lobe", "lung_nodules", op="add")),
    C("zoom in on the tumour and rotate up", "cxp", arz("lung_nodules"), rot("up")),
    C("posterior view and rotate horizontally", "cxb", ars(view="posterior"),
      rot("horizontal")),
    C("rotate horizontally and show the posterior view", "cxb", rot("horizontal"),
      ars(view="posterior")),
    C("hide the patient info and remove the CT", "cxa", irhide(), ivrm()),
    X("fire the stapler", "sxb", HARD),
    C("show the CT, zoom in on the axial and go to the middle slice", "cxa", mv(),
      zin("axial"), mv(axial="middle")),
    C("show the PFT and the tumour location", "cxa", irs("pft", "tumor_location")),
    C("remove the model and show all patient fields", "cxb", arrm(), irs()),
    C("zoom out and go to the first coronal slice", "cxp", ivout(), mv(coronal="min")),
    X("what's the heart rate?", "sqb"),
    X("thanks, that's all for now", "sxp"),
    E(""),
    C("show the 3D model and go to the surgical view", "cxb", ars(view="surgical")),
    C("zoom in on the right lung and then on the nodule", "cxb", arz("right_lung"),
      arz("lung_nodules")),
    C("zoom out twice", "sib", arout(), arout()),
    X("show the heart on the model", "sxb", UNHELD),
    C("clear the CT and the patient info", "cxa", ivrm(), irhide()),
]

# dev-06: a terse surgeon who speaks in abbreviations.
DEV["dev-06"] = [
    C("pt info please", "sxa", irs()),
    C("show dx", "sxa", irs("diagnosis")),
    C("sex age", "sxb", irs("sex", "age")),
    C("show BMI", "sxa", irs("bmi")),
    C("add FEV1", "sxa", irs("pft", op="add")),
    C("remove the BMI", "sxa", irs("bmi", op="remove")),
    C("show CT", "sxa", mv()),
    C("ax 80", "sxa", mv(axial=80)),
    C("cor plus 40", "sxa", mv(coronal="+40")),
    C("sag minus 100", "sxa", mv(sagittal="-100")),
    C("zoom cor", "sxa", zin("coronal")),
    C("sag max", "sxa", mv(sagittal="max")),
    C("zoom out", "sib", ivout()),
    X("what is the potassium?", "sqb"),
    C("show RUL", "sxa", ars("RUL", op="add")),
    C("add RML and RLL", "cxa", ars("RML", "RLL", op="add")),
    C("right lat view", "sxa", ars(view="right")),
    C("ant view", "sxa", ars(view="anterior")),
    C("post view", "sxa", ars(view="posterior")),
    C("surgical view", "sxb", ars(view="surgical")),
    C("zoom RUL", "sxa", arz("right_upper_lobe")),
    C("zoom in", "sib", arz("right_upper_lobe")),
    C("zoom out twice", "sib", arout(), arout()),
    C("show LLL only", "sxa", ars("LLL")),
    C("where is the nodule on the 3D model?", "sqp", ars("lung_nodules", op="add")),
    X("what's the SpO2?", "sqa"),
    X("how many mL of bupivacaine did we give?", "sqa"),
    X("staple the RUL bronchus", "sxa", HARD),
    C("hide the info box", "sxp", irhide()),
    C("reset", "sib", irreset()),
    E(""),
]

# dev-07: late in the case; starts with silence, CT at the volume edges, questions.
DEV["dev-07"] = [
    E(""),
    C("can I see the CT scan?", "sqa", mv()),
    C("what's at the very top of the scan?", "sqp", mv(axial="max")),
    C("and the bottom?", "sqp", mv(axial="min")),
    C("down", "sxb", mv(axial="-10")),
    C("right 50", "sxb", mv(sagittal="+50")),
    C("right right", "sxb", mv(sagittal="+20")),
    C("sagittal plus 300", "sxb", mv(sagittal="+300")),
    C("can you make the sagittal bigger?", "sqp", zin("sagittal")),
    C("move forward 100", "sxb", mv(coronal="+100")),
    C("up 30", "sxb", mv(axial="+30")),
    C("zoom out", "sib", ivout()),
    C("zoom in", "sib", zin("axial")),
    X("what's the weather like outside?", "sqp"),
    C("show the 3D", "sxb", ars()),
    C("how does it look from behind?", "sqp", ars(view="posterior")),
    C("can we see the left lung as well?", "sqp", ars("left_lung", op="add")),
    C("zoom in", "sib", arz()),
    C("closer", "sip", arz(), tags=REP),
    C("zoom out", "sib", arout()),
    C("reset", "sib", arreset()),
    X("is the frozen section back?", "sqp"),
    X("page the pathologist", "sxp"),
    C("what does the patient weigh?", "sqp", irs("weight")),
    C("how tall is she?", "sqp", irs("height")),
    X("turn up the volume", "sxp"),
    X("rotate the camera to the left", "sxp", HARD),
    C("remove", "sib", irhide()),
    C("remove all CT", "sxa", ivrm()),
    C("hide the 3D model", "sxb", arrm()),
]

# test-01: time-out and briefing; short, colloquial wording.
TEST["test-01"] = [
    C("patient details", "sxp", irs()),
    C("what sex is the patient?", "sqp", irs("sex")),
    C("body mass index?", "sqp", irs("bmi")),
    C("spirometry results", "sxp", irs("pft")),
    C("what does she weigh and how tall is she?", "cqp", irs("weight", "height")),
    C("what procedure are we doing today?", "sqp", irs("operation_name")),
    C("what's the date of the operation?", "sqp", irs("operation_date")),
    C("everything except the date", "sxp", irs()),
    C("get rid of the info box", "sxp", irhide()),
    X("could somebody dim the room lights", "sxp"),
    C("bring up the scan", "sxp", mv()),
    C("go superior 25", "sxb", mv(axial="+25")),
    C("once more", "sip", mv(axial="+25"), tags=REP),
    C("and again", "sip", mv(axial="+25"), tags=REP),
    C("downward downward", "sxb", mv(axial="-20")),
    C("blow up the axial", "sxp", zin("axial")),
    C("coronal slice 300", "sxb", mv(coronal=300)),
    C("put it back to three views", "sxp", ivout()),
    C("left 40", "sxb", mv(sagittal="-40")),
    C("centre the sagittal", "sxp", mv(sagittal="middle")),
    C("first axial slice", "sxp", mv(axial="min")),
    C("make the sagittal full size", "sxp", zin("sagittal")),
    C("shrink it", "sip", ivout()),
    C("start over with the CT", "sxa", ivreset()),
    E(""),
    X("can you ask them to lower the table", "sxp"),
    C("close the CT", "sxa", ivrm()),
    E("hmm"),
    C("pull up the 3D anatomy", "sxp", ars()),
    C("show the BMI and the lung function", "cxa", irs("bmi", "pft")),
    C("hide it", "sip", irhide()),
]

# test-02: CT navigation during the hilar dissection; conversational wording.
TEST["test-02"] = [
    C("let me see the CT slices", "sxa", mv()),
    C("scroll forward 30", "sxp", mv(coronal="+30")),
    C("go anterior", "sxb", mv(coronal="+10")),
    C("back back back", "sxb", mv(coronal="-30")),
    C("left", "sxb", mv(sagittal="-10")),
    C("sagittal two hundred", "sxb", mv(sagittal=200)),
    C("axial to 100", "sxb", mv(axial=100)),
    C("now zoom", "sip", zin("axial")),
    C("coronal to the middle", "sxb", mv(coronal="middle")),
    C("inferior 5", "sxb", mv(axial="-5")),
    X("is the CO2 insufflator at 8?", "sqa"),
    C("small views please", "sxp", ivout()),
    C("position 40, 300, 200", "sxp", mv(axial=40, coronal=300, sagittal=200)),
    C("axial plus 10", "sxb", mv(axial="+10")),
    C("coronal minus 400", "sxb", mv(coronal="-400")),
    C("go to the maximum sagittal", "sxp", mv(sagittal="max")),
    C("middle of the axial", "sxp", mv(axial="middle")),
    C("can I get a closer look at the coronal?", "sqp", zin("coronal")),
    C("bone window please", "sxp", mv(window="bone")),
    C("zoom in on the axial and go to slice 70", "cxb", zin("axial"), mv(axial=70)),
    C("drop it down ten", "sxp", mv(axial="-10")),
    C("zoom back out", "sip", ivout()),
    X("what's the patient's temperature?", "sqp"),
    X("move the left arm up", "sxp", HARD),
    C("what's on the topmost slice?", "sqp", mv(axial="max")),
    C("reset the scan", "sxp", ivreset()),
    E(""),
    C("put away the CT", "sxa", ivrm()),
]

# test-03: the 3D model while working on the fissure; descriptive wording.
TEST["test-03"] = [
    C("open the 3D lung model", "sxp", ars()),
    C("just the right lung", "sxp", ars("right_lung")),
    C("put the bronchial tree in as well", "sxp", ars("airway", op="add")),
    C("where's the nodule on the model?", "sqp", ars("lung_nodules", op="add")),
    C("spin it around horizontally", "sxp", rot("horizontal")),
    C("view from the front", "sxp", ars(view="anterior")),
    C("swing it to the right", "sxp", rot("right")),
    C("top-down view", "sxp", ars(view="superior")),
    C("turn it vertically", "sxp", rot("vertical")),
    C("back to the surgical view", "sxp", ars(view="surgical")),
    C("close-up of the tumour", "sxp", arz("lung_nodules")),
    C("even closer", "sip", arz("lung_nodules"), tags=REP),
    C("one step back", "sip", arout()),
    C("all the way out", "sip", arout()),
    C("zoom out", "sib", arout()),
    C("zoom into the right upper lobe", "sxb", arz("right_upper_lobe")),
    X("is the specimen bag ready?", "sqp"),
    C("take out the RLL", "sxa", ars("RLL", op="remove")),
    C("LUL and LLL as well", "cxa", ars("LUL", "LLL", op="add")),
    C("from the left side", "sxp", ars(view="left")),
    C("rotate upward", "sxb", rot("up")),
    C("rotate downward", "sxb", rot("down")),
    C("stop spinning", "sxp", rot("static")),
    C("remove the airway from the model", "sxb", ars("airway", op="remove")),
    X("divide the RUL vein", "sxa", HARD),
    C("back to default", "sip", arreset()),
    C("erase everything", "sip", arrm()),
    C("show it from below", "sxp", ars(view="inferior")),
    X("show the liver as well", "sxp", UNHELD),
]

# test-04: mixed requests, questions and chained commands; chatter in between.
TEST["test-04"] = [
    C("what's her diagnosis and where is the tumour?", "cqp",
      irs("diagnosis", "tumor_location")),
    C("does she have any other illnesses?", "sqp", irs("comorbidities")),
    C("what were her lung function tests like?", "sqp", irs("pft")),
    C("and her BMI as well", "sia", irs("bmi", op="add")),
    C("how old is she?", "sqp", irs("age")),
    X("could you turn the music down", "sxp"),
    C("show the CT and zoom in on the coronal", "cxa", mv(), zin("coronal")),
    C("hide the patient details and show the 3D model", "cxp", irhide(), ars()),
    C("rotate it left and zoom in", "cip", rot("left"), arz()),
    C("zoom in on the RUL and view from behind", "cxa", arz("right_upper_lobe"),
      ars(view="posterior")),
    X("what's the MAP?", "sqa"),
    C("coronal plus 60 and axial minus 20", "cxb", mv(coronal="+60"), mv(axial="-20")),
    C("shrink the CT and zoom the model out", "cxa", ivout(), arout()),
    C("reset the scan and the model", "cxp", ivreset(), arreset()),
    C("show height, weight and BMI", "cxa", irs(*PHYS)),
    C("plus the PFT", "sia", irs("pft", op="add")),
    C("take the weight off", "sxp", irs("weight", op="remove")),
    X("tell the scrub nurse to load a green cartridge", "sxp", HARD),
    C("bring up everything about the patient", "sxp", irs()),
    C("and the operation date", "sib", irs("operation_date", op="add")),
    C("clear", "sib", irhide()),
    E("um"),
    C("remove the model and the CT", "cxa", arrm(), ivrm()),
    X("what's the urine output?", "sqp"),
    X("good job everyone", "sxp"),
    C("show me the CT with the right lung model", "cxa", mv(), ars("right_lung", op="add")),
    C("axial up 15 and rotate the model to the right", "cxb", mv(axial="+15"),
      rot("right")),
    C("swap the model to the left lung", "sxp", ars("left_lung")),
    X("show the MRI", "sxa", UNHELD),
]

# test-05: end of the case; starts with a filler, abbreviations, edges of the volume.
TEST["test-05"] = [
    E("uh"),
    C("CT please", "sxa", mv()),
    C("AX max", "sxa", mv(axial="max")),
    C("COR min", "sxa", mv(coronal="min")),
    C("SAG 400", "sxa", mv(sagittal=400)),
    C("right right right", "sxb", mv(sagittal="+30")),
    C("sag plus 200", "sxa", mv(sagittal="+200")),
    C("zoom ax", "sxa", zin("axial")),
    C("cor 128", "sxa", mv(coronal=128)),
    X("what's the INR?", "sqa"),
    C("zoom out", "sib", ivout()),
    C("re-initialise the CT", "sxa", ivreset()),
    C("show LLL and LUL", "cxa", ars("LLL", "LUL", op="add")),
    C("show the RUL as well", "sxa", ars("RUL", op="add")),
    C("switch to the ant view", "sxa", ars(view="anterior")),
    C("spin horizontally", "sxp", rot("horizontal")),
    C("go to the post view", "sxa", ars(view="posterior")),
    C("zoom on the RUL", "sxa", arz("right_upper_lobe")),
    C("zoom in on the LLL", "sxa", arz("left_lower_lobe")),
    C("zoom out", "sib", arout()),
    C("remove", "sib", arrm()),
    C("show PFT", "sxa", irs("pft")),
    C("FEV1 and BMI", "cxa", irs("pft", "bmi")),
    C("ht and wt", "cxa", irs("height", "weight")),
    C("any heart problems in her history?", "sqp", irs("comorbidities")),
    X("irrigation please", "sxp", HARD),
    C("reset", "sib", irreset()),
    X("what's the pt's blood type?", "sqa", UNHELD),
    C("hide CT", "sxa", ivrm()),
    C("hide pt info", "sxa", irhide()),
    X("ok, let's undock the robot", "sxp"),
]


# --------------------------------------------------------------------------- the engine
def case_context(case: dict[str, Any] = CASE) -> CaseContext:
    return CaseContext(
        iv_size=tuple((p, int(case["iv_size"][p])) for p in PLANES),
        tumor_lobes=tuple(case["tumor_lobes"]),
        structures=tuple(case["structures"]) if case.get("structures") is not None else None,
        has_clinical=bool(case.get("has_clinical", True)),
    )


def new_state(case: dict[str, Any] = CASE) -> tuple[ConsoleState, CommandRegistry]:
    state = ConsoleState()
    state.set_case(case_context(case))
    return state, CommandRegistry(state)


class LabelError(ValueError):
    """A plan the registry refuses, or a label that breaks the dataset's own rules."""


def _leaves(snap: dict[str, Any]) -> dict[tuple[str, ...], Any]:
    """Snapshot → {path: value}; ``pos``/``size`` split per plane, lists kept whole."""
    out: dict[tuple[str, ...], Any] = {("agent",): snap["agent"]}
    for section in ("ir", "iv", "ar"):
        for k, v in snap[section].items():
            if isinstance(v, dict):
                for kk, vv in v.items():
                    out[(section, k, kk)] = vv
            else:
                out[(section, k)] = v
    return out


def _partial(snap: dict[str, Any], paths: set[tuple[str, ...]]) -> dict[str, Any]:
    """The sub-snapshot holding ``paths``, keys in the snapshot's own order."""
    out: dict[str, Any] = {}
    if ("agent",) in paths:
        out["agent"] = snap["agent"]
    for section in ("ir", "iv", "ar"):
        sec: dict[str, Any] = {}
        for k, v in snap[section].items():
            if isinstance(v, dict):
                sub = {kk: vv for kk, vv in v.items() if (section, k, kk) in paths}
                if sub:
                    sec[k] = sub
            elif (section, k) in paths:
                sec[k] = v
        if sec:
            out[section] = sec
    return out


_AR_ALL = ("visible", "structures", "view", "rotation", "zoom_level", "zoom_target")


def determined_paths(agent: str, action: str, params: dict[str, Any], pre: ConsoleState
                     ) -> set[tuple[str, ...]]:
    """The snapshot keys one action determines (see README, "What expect holds")."""
    p: set[tuple[str, ...]] = {("agent",)}
    if agent == "IR":
        p |= {("ir", "visible")} if action == "HIDE" else {("ir", "visible"), ("ir", "fields")}
    elif agent == "IV":
        p |= {("iv", "mode"), ("iv", "main")}
        moved = [pl for pl in PLANES if pl in params]
        if action in ("SHOW_MOVE", "ZOOM_IN_MOVE"):
            planes = moved if moved or action == "ZOOM_IN_MOVE" else list(PLANES)
            p |= {("iv", "pos", pl) for pl in planes}
        elif action == "RESET":
            p |= {("iv", "pos", pl) for pl in PLANES}
    else:
        first = not pre.ar.structures and action in ("SHOW", "ROTATE", "ZOOM_IN", "ZOOM_OUT")
        if action == "RESET" or first:
            keys: tuple[str, ...] = _AR_ALL
        elif action == "SHOW":
            keys = ("visible", "structures") + (("view", "rotation") if "view" in params else ())
        elif action == "ROTATE":
            keys = ("visible", "rotation")
        elif action in ("ZOOM_IN", "ZOOM_OUT"):
            keys = ("visible", "zoom_level", "zoom_target")
        else:  # REMOVE
            keys = ("visible",)
        p |= {("ar", k) for k in keys}
    return p


def trace_actions(steps: list[Any]) -> list[dict[str, Any]]:
    """Normalised steps → DESIGN §5.3 trace form, lists sorted, IR age/sex linked."""
    out = CommandResult(True, steps, "").actions()
    for a in out:
        for k, v in a["params"].items():
            if isinstance(v, list):
                if a["agent"] == "IR" and k == "fields":
                    linked = set(v)
                    for group in IR_LINKED:
                        if linked & group:
                            linked |= group
                    v = list(linked)
                a["params"][k] = sorted(v)
    return out


_DIRECTION_WORDS = r"right|left|forward|front|anterior|back|backward|posterior|up|upward|" \
                   r"superior|down|downward|inferior"
_DIRECTION_RE = re.compile(rf"\b({_DIRECTION_WORDS})\b", re.I)
_REPEAT_RE = re.compile(rf"\b({_DIRECTION_WORDS})(\s+\1\b)+", re.I)
_BARE_RE = re.compile(r"^\s*(please\s+)?(zoom in|zoom out|reset|initiali[sz]e|remove|remove all|"
                      r"erase all|clear)(\s+please)?[.!]?\s*$", re.I)
_AR_ABBREV_RE = re.compile(r"\b(" + "|".join(AR_ABBREVIATIONS) + r")\b", re.I)


def auto_tags(text: str, agent: str, action: str, raw: dict[str, Any], pre: ConsoleState,
              result: CommandResult, iv_seen: bool) -> set[str]:
    """Which DESIGN §4 rules one step exercises (documentation and coverage checks)."""
    t: set[str] = set()
    if _BARE_RE.match(text):
        t.add("memory.bare")
    if agent == "IR":
        fields = set(raw.get("fields") or ())
        op = raw.get("op", "set")
        if action == "SHOW":
            if not fields:
                t.add("ir.all_fields")
            elif op == "add":
                t.add("ir.add_fields")
            elif op == "remove":
                t.add("ir.remove_fields")
            else:
                t.add("ir.show_fields")
            if len(fields & {"age", "sex"}) == 1:
                t.add("ir.age_sex_link")
            if "operation_date" in fields:
                t.add("ir.operation_date")
        else:
            t.add(f"ir.{action.lower()}")
    elif agent == "IV":
        planes = [pl for pl in PLANES if pl in raw]
        if action == "SHOW_MOVE" and pre.iv.mode == "none":
            t.add("iv.reshow" if iv_seen else "iv.first_show_middle")
        if action == "SHOW_MOVE" and planes and pre.iv.mode == "zoom_view":
            t.add("iv.zoom_view_move")
        for pl in planes:
            sv = result.steps[0].params[pl]
            assert isinstance(sv, SliceValue)
            t.add({"rel": "iv.relative", "abs": "iv.absolute"}.get(sv.kind, f"iv.{sv.value}"))
            if sv.kind == "rel" and _DIRECTION_RE.search(text):
                t.add("iv.direction_words")
        if len(planes) == 3 and all(result.steps[0].params[pl].kind == "abs" for pl in planes):
            t.add("iv.absolute_triple")
        if any("stopped at" in n for n in result.notes):
            t.add("iv.clamp")
        if _REPEAT_RE.search(text):
            t.add("iv.repeat_words")
        if "window" in raw:
            t.add("iv.window")
        if action == "ZOOM_IN_MOVE":
            t.add("iv.zoom_in")
        elif action in ("ZOOM_OUT", "REMOVE", "RESET"):
            t.add(f"iv.{action.lower()}")
    else:
        if not pre.ar.structures and action in ("SHOW", "ROTATE", "ZOOM_IN"):
            t.add("ar.first_show")
        if _AR_ABBREV_RE.search(text):
            t.add("ar.abbreviation")
        if action == "SHOW":
            names = {str(s).lower().replace(" ", "_") for s in raw.get("structures") or ()}
            for group in ("left_lung", "right_lung", "airway"):
                if group in names:
                    t.add(f"ar.{group}")
            if names:
                t.add({"add": "ar.add", "remove": "ar.remove_structures"}.get(
                    raw.get("op", "set"), "ar.set_structures"))
            if "view" in raw:
                t.add("ar.view")
                if pre.ar.rotation != "static":
                    t.add("ar.view_resets_rotation")
        elif action == "ROTATE":
            d = raw["direction"]
            t.add("ar.rotate_turn" if d in ("horizontal", "vertical") else
                  "ar.rotate_stop" if d == "static" else "ar.rotate_swing")
        elif action == "ZOOM_IN":
            t.add("ar.zoom_target" if raw.get("target") else "ar.zoom_in")
            if pre.ar.zoom_level >= 1:
                t.add("ar.zoom_stack")
        elif action == "ZOOM_OUT":
            t.add("ar.zoom_out_floor" if pre.ar.zoom_level == 0 else "ar.zoom_out")
            if pre.ar.zoom_level >= 2:
                t.add("ar.zoom_stack")
        else:
            t.add(f"ar.{action.lower()}")
    return t


def _categories(cats: str, where: str) -> tuple[str, str, str]:
    if len(cats) != 3 or cats[0] not in "sc" or cats[1] not in "xiq" or cats[2] not in "bap":
        raise LabelError(f"{where}: categories {cats!r} must be [s|c][x|i|q][b|a|p]")
    return _CAT[cats[0]], _CAT[cats[1]], _CAT[cats[2]]


def build_session(sid: str, cmds: list[Cmd], case: dict[str, Any] = CASE) -> list[dict[str, Any]]:
    state, reg = new_state(case)
    iv_seen = False
    rows: list[dict[str, Any]] = []
    for n, cmd in enumerate(cmds, 1):
        rid = f"{sid}-{n:02d}"
        structure, ctype, expression = _categories(cmd.cats, rid)
        pre_snap = state.snapshot()
        row: dict[str, Any] = {"id": rid, "session": sid, "text": cmd.text}
        tags: set[str] = set(cmd.tags)
        if cmd.kind != "command":
            if cmd.kind == "empty":
                tags.add("memory.empty")
                valid = pre_snap["agent"] is not None
                if not valid:
                    tags.add("memory.empty_no_agent")
                agent = pre_snap["agent"]
            else:
                tags.add("oos")
                valid, agent = False, None
            row.update(agent=agent, valid=valid, structure=structure, type=ctype,
                       expression=expression, expect=pre_snap, actions=[],
                       tags=sorted(tags))
            rows.append(row)
            continue
        paths: set[tuple[str, ...]] = set()
        steps = []
        agents: list[str] = []
        for agent, action, raw in cmd.actions:
            if action == "ZOOM_IN_MOVE" and not raw.get("plane"):
                raise LabelError(f"{rid}: write the plane a zoom-in resolves to explicitly")
            pre = state.copy()
            res = reg.dispatch(f"{agent}.{action}", raw)
            if not res.ok:
                raise LabelError(f"{rid} {cmd.text!r}: the registry refused {agent}.{action} "
                                 f"{raw}: {res.message}")
            if any("not in this patient" in note for note in res.notes):
                raise LabelError(f"{rid}: {res.notes}")
            steps.extend(res.steps)
            paths |= determined_paths(agent, action, dict(res.steps[0].params), pre)
            tags |= auto_tags(cmd.text, agent, action, raw, pre, res, iv_seen)
            iv_seen = iv_seen or state.iv.mode != "none"
            if agent not in agents:
                agents.append(agent)
        post_snap = state.snapshot()
        before, after = _leaves(pre_snap), _leaves(post_snap)
        paths |= {k for k in after if before.get(k) != after[k]}  # every change is checked
        if structure == "composite":
            tags.add("composite.cross_agent" if len(agents) > 1 else "composite.same_agent")
        row.update(agent=agents[0])
        if len(agents) > 1:
            row["agents"] = agents
        row.update(valid=True, structure=structure, type=ctype, expression=expression,
                   expect=_partial(post_snap, paths), actions=trace_actions(steps),
                   tags=sorted(tags))
        rows.append(row)
    return rows


def build_split(sessions: dict[str, list[Cmd]], case: dict[str, Any] = CASE
                ) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for sid in sorted(sessions):
        rows.extend(build_session(sid, sessions[sid], case))
    ids = [r["id"] for r in rows]
    if len(set(ids)) != len(ids):
        raise LabelError("duplicate ids")
    return rows


def dumps_jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


# ------------------------------------------------------------------------- hospital rows
def fill(rows_in: list[dict[str, Any]], case: dict[str, Any] = CASE) -> list[dict[str, Any]]:
    """Compute agent/agents/expect/tags for hand-written rows (a hospital's own phrasings).

    Each input row needs ``id``, ``session``, ``text``, ``structure``, ``type``, ``expression``
    and either ``actions`` (a list of {"agent", "action", "params"}; empty for an out-of-scope
    sentence, which also needs ``"valid": false``) or ``"empty": true`` for a silent input.
    Optional ``tags`` are kept (the rule tags the builder can derive are added).
    Rows run in file order; a new ``session`` starts from the initial state.
    """
    sessions: dict[str, list[Cmd]] = {}
    order: list[tuple[str, dict[str, Any]]] = []
    for r in rows_in:
        cats = (_INITIAL[r["structure"]] + _INITIAL[r["type"]] + _INITIAL[r["expression"]])
        if r.get("empty"):
            cmd = E(r.get("text", ""), cats)
        elif r.get("valid") is False or not r.get("actions"):
            cmd = X(r["text"], cats)
        else:
            cmd = C(r["text"], cats, *[(a["agent"], a["action"], dict(a.get("params") or {}))
                                       for a in r["actions"]])
        cmd.tags = tuple(r.get("tags") or ())  # kept, and the generated ones added
        sessions.setdefault(r["session"], []).append(cmd)
        order.append((r["session"], r))
    built: dict[str, list[dict[str, Any]]] = {
        sid: build_session(sid, cmds, case) for sid, cmds in sessions.items()}
    out: list[dict[str, Any]] = []
    taken: dict[str, int] = {}
    for sid, r in order:
        row = built[sid][taken.get(sid, 0)]
        taken[sid] = taken.get(sid, 0) + 1
        row["id"] = str(r["id"])
        out.append(row)
    return out


# ------------------------------------------------------------------------------ README
BEGIN, END = "<!-- generated:begin -->", "<!-- generated:end -->"


def _table(title: str, rows: list[tuple[str, ...]], header: tuple[str, ...]) -> str:
    lines = [f"**{title}**", "", "| " + " | ".join(header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def counts_markdown(splits: dict[str, list[dict[str, Any]]]) -> str:
    names = list(splits)
    allrows = [r for rows in splits.values() for r in rows]
    cols = (*names, "total")

    def count(pred: Any) -> tuple[str, ...]:
        return tuple(str(sum(1 for r in rows if pred(r))) for rows in
                     (*splits.values(), allrows))

    out = []
    case = CASE
    size = case["iv_size"]
    out.append("### The case this dataset assumes\n")
    out.append(f"- case: {case['name']}\n"
               f"- CT size (slices): axial {size['axial']}, coronal {size['coronal']}, "
               f"sagittal {size['sagittal']} — first show puts every plane at n // 2 = "
               f"{size['axial'] // 2}, {size['coronal'] // 2}, {size['sagittal'] // 2}\n"
               f"- tumour lobe(s): {', '.join(case['tumor_lobes'])}\n"
               f"- 3D structures: {', '.join(case['structures'])}\n"
               f"- clinical sheet: {'yes' if case['has_clinical'] else 'no'}\n"
               "- machine-readable copy: `datasets/case.json` (the builder checks it against "
               "the generated demo case)\n")
    out.append("### Counts (generated by `datasets/build_dataset.py`)\n")
    rows = [("commands", *count(lambda r: True)),
            ("sessions", *(str(len({r["session"] for r in rs}))
                           for rs in (*splits.values(), allrows)))]
    rows += [("valid", *count(lambda r: r["valid"])),
             ("invalid (out of scope)", *count(lambda r: "oos" in r["tags"])),
             ("empty / silent input", *count(lambda r: "memory.empty" in r["tags"]))]
    out.append(_table("Overall", rows, ("", *cols)))
    rows = [(a or "null", *count(lambda r, a=a: r["agent"] == a)) for a in ("IR", "IV", "AR", None)]
    rows.append(("cross-agent (`agents`)", *count(lambda r: "agents" in r)))
    out.append(_table("Agent (routing target of the first part)", rows, ("agent", *cols)))
    for dim, values in (("structure", STRUCTURES), ("type", TYPES),
                        ("expression", EXPRESSIONS)):
        rows = [(v, *count(lambda r, d=dim, v=v: r[d] == v)) for v in values]
        out.append(_table(f"{dim.capitalize()}", rows, (dim, *cols)))
    rows = []
    for a in ("IR", "IV", "AR", None):
        for dim, values in (("structure", STRUCTURES), ("type", TYPES),
                            ("expression", EXPRESSIONS)):
            for v in values:
                c = count(lambda r, a=a, d=dim, v=v: r["agent"] == a and r[d] == v)
                rows.append((a or "null", f"{dim}={v}", *c))
    out.append(_table("Agent × category", rows, ("agent", "category", *cols)))
    tags = sorted({t for r in allrows for t in r["tags"]})
    rows = [(f"`{t}`", *count(lambda r, t=t: t in r["tags"])) for t in tags]
    out.append(_table("Rule tags (DESIGN §4 rules exercised)", rows, ("tag", *cols)))
    return "\n".join(out)


def render_readme(current: str, generated: str) -> str:
    if BEGIN not in current or END not in current:
        raise LabelError(f"README.md lacks the {BEGIN} … {END} markers")
    head, rest = current.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n\n{generated}\n{END}{tail}"


# ------------------------------------------------------------------------------ checks
def check_case_against_demo(generate: bool = True) -> str:
    """Compare CASE with what the demo case's loader reports; raise on a mismatch."""
    try:
        from app.data.case import load_case
        from app.data.demo import default_case_dir, ensure_demo_case, is_complete
    except ImportError as exc:  # the demo generator is not part of this checkout
        return f"demo case not checked ({exc}); using the assumed values"
    path = default_case_dir()
    if not is_complete(path):
        if not generate:
            return f"demo case not generated at {path}; not checked"
        path = ensure_demo_case()
    ctx = load_case(path, load_video=False).context()
    want = case_context(CASE)
    if ctx != want:
        raise LabelError(f"the demo case at {path} is {ctx}, but the dataset assumes {want}: "
                         "update CASE in datasets/build_dataset.py and rebuild")
    return f"demo case at {path} matches the assumed case"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="verify the files are up to date instead of writing them")
    ap.add_argument("--no-case-check", action="store_true",
                    help="do not compare the assumed case with the generated demo case")
    ap.add_argument("--no-generate", action="store_true",
                    help="check the demo case only if it is already generated")
    ap.add_argument("--fill", type=Path, help="a hand-written JSONL to complete with expect")
    ap.add_argument("--out", type=Path, help="with --fill: where to write (default: stdout)")
    ap.add_argument("--case", type=Path,
                    help="with --fill: a case.json for another case (default: the demo case)")
    args = ap.parse_args(argv)

    try:
        if args.fill:
            rows_in = [json.loads(line) for line in args.fill.read_text(encoding="utf-8")
                       .splitlines() if line.strip()]
            case = json.loads(args.case.read_text(encoding="utf-8")) if args.case else CASE
            text = dumps_jsonl(fill(rows_in, case))
            if args.out:
                args.out.write_text(text, encoding="utf-8")
            else:
                sys.stdout.write(text)
            return 0
        if not args.no_case_check:
            print(check_case_against_demo(generate=not args.no_generate))
        splits = {"dev": build_split(DEV), "test": build_split(TEST)}
        if set(DEV) & set(TEST):
            raise LabelError("a session id is in both splits")
        files = {HERE / f"{name}.jsonl": dumps_jsonl(rows) for name, rows in splits.items()}
        files[HERE / "case.json"] = json.dumps(CASE, indent=2) + "\n"
        readme = HERE / "README.md"
        files[readme] = render_readme(readme.read_text(encoding="utf-8"),
                                      counts_markdown(splits))
    except LabelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    stale = [p for p, text in files.items()
             if not p.exists() or p.read_text(encoding="utf-8") != text]
    if args.check:
        for p in stale:
            print(f"out of date: {p.relative_to(ROOT)}", file=sys.stderr)
        return 1 if stale else 0
    for p in stale:
        p.write_text(files[p], encoding="utf-8")
    n_dev, n_test = len(splits["dev"]), len(splits["test"])
    print(f"dev {n_dev}, test {n_test}, total {n_dev + n_test} commands; "
          f"{len(stale)} file(s) rewritten")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
