"""The plain command shapes as templates over the vocabulary's slot lists (hassil), read
before the grammar: each shape decoded to registry steps, shapes whose slots disagree left to
the grammar, and a hospital's own sentence heard without Python (DESIGN §3 "data, not code")."""

from __future__ import annotations

from pathlib import Path

import pytest

import app.language as language
from app.agents.template_reader import read_template
from app.language.templates import match
from tests.test_lexicon import Console


@pytest.mark.parametrize("text, intent, steps", [
    ("coronal plus 50", "IvMoveBySign", [("IV.SHOW_MOVE", {"coronal": "+50"})]),
    ("move the axial minus 20 slices", "IvMoveBySign", [("IV.SHOW_MOVE", {"axial": "-20"})]),
    ("superior 25", "IvMoveByDirection", [("IV.SHOW_MOVE", {"axial": "+25"})]),
    ("sagittal left 15", "IvMoveByDirection", [("IV.SHOW_MOVE", {"sagittal": "-15"})]),
    ("go to axial slice 40", "IvMoveTo", [("IV.SHOW_MOVE", {"axial": 40})]),
    ("ct off", "IvHide", [("IV.REMOVE", {})]),
    ("show the tumor location", "IrShowField", [("IR.SHOW", {"fields": ["tumor_location"]})]),
    ("what is the age", "IrShowField", [("IR.SHOW", {"fields": ["age", "sex"]})]),
    ("posterior view", "ArView", [("AR.SHOW", {"view": "posterior"})]),
    ("rotate the model to the right", "ArRotate", [("AR.ROTATE", {"direction": "right"})]),
    ("hide the nodules", "ArHideStructure",
     [("AR.SHOW", {"structures": ["lung_nodules"], "op": "remove"})]),
    ("show the right lower lobe", "ArShowLobe",
     [("AR.SHOW", {"structures": ["right_lower_lobe"], "op": "add"})]),
])
def test_a_plain_shape_is_read_from_its_template(text: str, intent: str, steps: list) -> None:
    d = read_template(text, "lexicon")
    assert d is not None and d.diagnostics["template"] == intent
    assert [(s.action_id, dict(s.params)) for s in d.steps] == steps


@pytest.mark.parametrize("text", [
    "coronal up 20",          # "up" moves the axial plane: the grammar judges which is meant
    "zoom out",               # which display depends on the one used last
    "show the left middle lobe",  # no such lobe
    "again",
    "coronal plus 50, axial minus 20",  # composites are the grammar's
    "show the ct and the model",
])
def test_shapes_that_need_context_or_judgement_are_left_to_the_grammar(text: str) -> None:
    assert read_template(text, "lexicon") is None


def test_the_console_reads_a_plain_shape_through_its_template() -> None:
    con = Console()
    assert con.say("coronal plus 50") == [("IV.SHOW_MOVE", {"coronal": "+50"})]
    assert con.last.decision.diagnostics["template"] == "IvMoveBySign"
    assert con.snap["iv"]["pos"]["coronal"] == 306


@pytest.fixture
def hospital_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("VISA_LANGUAGE_DIR", str(tmp_path))
    yield tmp_path
    monkeypatch.delenv("VISA_LANGUAGE_DIR")
    language.reload()


def test_a_hospital_adds_a_sentence_without_python(hospital_dir: Path) -> None:
    assert match("put the model on the monitor") is None
    (hospital_dir / "commands.yaml").write_text(
        "intents:\n  ArShow:\n    data:\n      - sentences:\n"
        '          - "put [the] {model} on the monitor"\n', encoding="utf-8")
    language.reload()
    assert match("put the model on the monitor").intent == "ArShow"
    assert match("coronal plus 50").intent == "IvMoveBySign"  # ours stay


def test_a_broken_hospital_file_leaves_ours_working(hospital_dir: Path) -> None:
    (hospital_dir / "commands.yaml").write_text("intents: [not, a, mapping\n",
                                                encoding="utf-8")
    language.reload()
    assert match("coronal plus 50").intent == "IvMoveBySign"


@pytest.mark.parametrize("text, intent", [("off the ct", "IvHide"),
                                          ("off the patient info", "IrHide"),
                                          ("on the 3d model", "ArShow")])
def test_on_and_off_said_as_verbs_are_show_and_hide(text: str, intent: str) -> None:
    assert match(text).intent == intent
