"""Case folders: discovery, case.toml, every part optional, problems in plain words."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from app.core.registry import CommandRegistry
from app.core.state import ConsoleState
from app.data.case import load_case, read_case_config, tumor_lobes_from_text
from app.data.case_report import case_summary, format_summary, run_case_command
from app.data.problems import LoadError


def _hospital_case(tmp_path: Path, testdata: Path) -> Path:
    """A case laid out the way a hospital might: DICOM folder, a multi-label NRRD with a label
    table in case.toml, a CSV sheet with local header names."""
    case = tmp_path / "case_hosp"
    case.mkdir()
    shutil.copytree(testdata / "cip_copdgene_ct64" / "ct-64Dicom", case / "images")
    (case / "seg").mkdir()
    shutil.copy(testdata / "cip_copdgene_ct64" / "lm-64.nrrd", case / "seg" / "lm.nrrd")
    (case / "patient.csv").write_text(
        "Patient ID;Sex/Age;Ht (cm);BW (kg);Tumor location;Smoking\n"
        "P-77;M/71;172;80;Lt. upper lobe;40 PY\n", encoding="utf-8")
    (case / "case.toml").write_text(
        '[case]\nname = "COPDGene 10002K"\n'
        '[ct]\npath = "images"\n'
        '[labels]\npath = "seg/lm.nrrd"\n[labels.table]\n512 = "trachea_bronchia"\n'
        '[clinical]\npath = "patient.csv"\n', encoding="utf-8")
    return case


def test_real_case_with_case_toml(tmp_path, testdata_dir):
    case = load_case(_hospital_case(tmp_path, testdata_dir))
    assert case.name == "COPDGene 10002K"
    assert case.ct is not None and case.ct.size == {"axial": 79, "coronal": 64, "sagittal": 64}
    assert case.labels is not None and "trachea_bronchia" in case.labels.structures()
    assert case.clinical is not None
    assert case.tumor_lobes == ("left_upper_lobe",)
    ctx = case.context()
    assert dict(ctx.iv_size) == {"axial": 79, "coronal": 64, "sagittal": 64}
    # The state machine works on this real case: middle slices from its real size.
    state = ConsoleState()
    state.set_case(ctx)
    reg = CommandRegistry(state)
    assert reg.dispatch("IV.SHOW_MOVE", {"axial": "+100"}).ok
    assert state.snapshot()["iv"]["pos"] == {"axial": 78, "coronal": 32, "sagittal": 32}
    summary = case_summary(case)
    json.dumps(summary, default=str)
    text = format_summary(summary)
    assert "79 axial" in text and "trachea_bronchia" in text
    assert not case.errors, case.problems


def test_autodetected_case_without_case_toml(tmp_path, testdata_dir):
    case_dir = tmp_path / "auto"
    case_dir.mkdir()
    shutil.copytree(testdata_dir / "totalseg_example" / "example_ct_dicom", case_dir / "ct")
    (case_dir / "labels").mkdir()
    shutil.copy(testdata_dir / "totalseg_example" / "example_seg_dicom.nii.gz",
                case_dir / "labels" / "example_seg_dicom.nii.gz")
    case = load_case(case_dir)
    assert case.ct is not None and case.ct.size["axial"] == 20
    assert case.clinical is None
    msgs = " ".join(p.message for p in case.problems)
    assert "No clinical sheet" in msgs
    assert case.context().has_clinical is False


def test_missing_parts_are_said_not_fatal(tmp_path):
    d = tmp_path / "just_a_sheet"
    d.mkdir()
    (d / "clinical.csv").write_text("sex,age\nF,65\n", encoding="utf-8")
    case = load_case(d)
    assert case.ct is None and case.labels is None and case.clinical is not None
    parts = {p.part for p in case.problems}
    assert {"ct", "labels"} <= parts
    ctx = case.context()
    assert ctx.iv_size is None and ctx.structures == ()
    state = ConsoleState()
    state.set_case(ctx)
    res = CommandRegistry(state).dispatch("AR.SHOW", {})
    assert not res.ok and "no 3D model" in res.message


def test_empty_folder_and_missing_folder(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    case = load_case(empty)
    assert case.errors and "empty" in case.errors[0].message
    with pytest.raises(LoadError, match="does not exist"):
        load_case(tmp_path / "nope")
    f = tmp_path / "file.txt"
    f.write_text("x")
    with pytest.raises(LoadError, match="not a folder"):
        load_case(f)


def test_broken_parts_become_problems(tmp_path):
    d = tmp_path / "broken"
    (d / "ct").mkdir(parents=True)
    (d / "ct" / "slice1.dcm").write_bytes(b"this is not dicom" * 10)
    (d / "clinical.xlsx").write_bytes(b"PK\x03\x04 not really a workbook")
    (d / "video.mp4").write_bytes(b"\x00" * 100)
    case = load_case(d)
    assert case.ct is None and case.clinical is None and case.video is None
    parts = {p.part for p in case.errors}
    assert {"ct", "clinical", "video"} <= parts
    for p in case.errors:
        assert p.message and not p.message.startswith("Traceback")


def test_bad_case_toml_is_reported_and_discovery_still_works(tmp_path):
    d = tmp_path / "badtoml"
    d.mkdir()
    (d / "case.toml").write_text("[case\nname = ", encoding="utf-8")
    (d / "clinical.csv").write_text("sex,age\nF,65\n", encoding="utf-8")
    case = load_case(d)
    assert any("case.toml could not be read" in p.message for p in case.problems)
    assert case.clinical is not None
    (d / "case.toml").write_text('[ct]\npath = "missing_ct"\n', encoding="utf-8")
    case = load_case(d)
    assert any("does not exist" in p.message and p.part == "ct" for p in case.problems)


def test_case_toml_fields(tmp_path):
    (tmp_path / "case.toml").write_text(
        'tumor_location = "RLL"\n[video]\ndevice = 0\n[labels]\nmesh_space = "ras"\n'
        '[labels.table]\n1 = "left_upper_lobe"\nx = "bad"\n'
        '[clinical]\npatient = "P1"\n[clinical.mapping]\n"bw (kg)" = "weight"\n',
        encoding="utf-8")
    cfg, problems = read_case_config(tmp_path)
    assert cfg.tumor_location == "RLL" and cfg.device == 0 and cfg.mesh_space == "RAS"
    assert cfg.label_table == {1: "left_upper_lobe"}
    assert cfg.clinical_mapping == {"bw (kg)": "weight"} and cfg.patient == "P1"
    assert any("not a whole number" in p.message for p in problems)


def test_tumor_lobes_from_text():
    assert tumor_lobes_from_text("RUL") == ("right_upper_lobe",)
    assert tumor_lobes_from_text("right_middle_lobe") == ("right_middle_lobe",)
    assert tumor_lobes_from_text("Left lower lobe") == ("left_lower_lobe",)
    assert tumor_lobes_from_text("RUL and RML") == ("right_middle_lobe", "right_upper_lobe")
    assert tumor_lobes_from_text("mediastinum") == ()


def test_case_command_prints_plain_report(tmp_path, testdata_dir, capsys):
    code = run_case_command(_hospital_case(tmp_path, testdata_dir))
    out = capsys.readouterr().out
    assert code == 0 and "Case: COPDGene 10002K" in out
    code = run_case_command(tmp_path / "missing")
    assert code == 2 and "does not exist" in capsys.readouterr().err
