"""Clinical sheets: real .xlsx/.csv/.json files with the header variants hospitals use."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from app.core.vocab import IR_ALL_FIELDS, IR_FIELDS
from app.data.clinical import (
    DEFAULT_HEADER_MAP,
    MISSING_TEXT,
    ClinicalRecord,
    format_extra_lines,
    format_ir_lines,
    load_clinical,
    normalize_header,
    parse_date,
    parse_pft_text,
    tumor_lobes_from_text,
)
from app.data.problems import LoadError


def write_xlsx(path: Path, rows: list[list[Any]], title: str = "Sheet1",
               before: list[tuple[str, list[list[Any]]]] = ()) -> Path:
    wb = openpyxl.Workbook()
    first = wb.active
    for name, other in before:  # sheets placed ahead of the data sheet
        ws = wb.create_sheet(name, 0)
        for r in other:
            ws.append(r)
    first.title = title
    for r in rows:
        first.append(r)
    wb.save(path)
    return path


def write_csv(path: Path, rows: list[list[Any]], delimiter: str = ",",
              encoding: str = "utf-8") -> Path:
    buf = io.StringIO()
    csv.writer(buf, delimiter=delimiter, lineterminator="\n").writerows(rows)
    path.write_bytes(buf.getvalue().encode(encoding))
    return path


def messages(rec: ClinicalRecord, severity: str | None = None) -> str:
    return " | ".join(p.message for p in rec.problems if severity in (None, p.severity))


# -- a typical Excel sheet --------------------------------------------------------------------

HOSPITAL_A = [
    ["Patient ID", "Sex/Age", "Diagnosis", "Comorbidities", "Operation", "Op date",
     "Tumor location", "Height(cm)", "bw (kg)", "PFT_PRE_FEV1 (L)", "PFT_PRE_FEV1 (%)",
     "FVC(L)", "FVC (%pred)", "FEV1/FVC", "DLCO %", "Smoking (pack-years)", "Surgeon"],
    ["P001", "F/65", "Adenocarcinoma", "HTN, DM; dyslipidemia", "VATS RUL lobectomy",
     dt.datetime(2024, 3, 5, 8, 30), "RUL", 165, 62, 2.1, 85, 3.0, 90, 0.70, 75, 30, "Dr. Kim"],
]


def test_excel_sheet_gives_typed_fields(tmp_path: Path) -> None:
    rec = load_clinical(write_xlsx(tmp_path / "clinical.xlsx", HOSPITAL_A))
    f = rec.fields
    assert rec.patient_id == "P001"
    assert (f["sex"], f["age"]) == ("F", 65) and isinstance(f["age"], int)
    assert f["diagnosis"] == "Adenocarcinoma"
    assert f["comorbidities"] == ["HTN", "DM", "dyslipidemia"]
    assert f["operation_name"] == "VATS RUL lobectomy"
    assert f["operation_date"] == "2024-03-05"  # an Excel date cell
    assert f["tumor_location"] == "RUL" and rec.tumor_lobes == ["right_upper_lobe"]
    assert (f["height"], f["weight"]) == (165.0, 62.0)
    assert f["bmi"] == 22.8 and rec.computed == {"bmi"}
    assert f["pft"] == {
        "FEV1": {"value": 2.1, "unit": "L", "percent": 85.0},
        "FVC": {"value": 3.0, "unit": "L", "percent": 90.0},
        "FEV1/FVC": {"value": 70.0, "unit": "%", "percent": None},
        "DLCO": {"value": None, "unit": "mL/min/mmHg", "percent": 75.0},
    }
    assert list(f) == [k for k in IR_FIELDS if k in f]  # display order
    # Unknown columns are kept under their own header, not dropped.
    assert rec.extra == {"Smoking (pack-years)": "30", "Surgeon": "Dr. Kim"}
    assert rec.raw["bw (kg)"] == 62 and rec.source.endswith("clinical.xlsx")
    assert not [p for p in rec.problems if p.severity != "info"], messages(rec)


def test_ir_lines_read_the_way_surgeons_read_them(tmp_path: Path) -> None:
    rec = load_clinical(write_xlsx(tmp_path / "clinical.xlsx", HOSPITAL_A))
    assert format_ir_lines(rec, list(IR_ALL_FIELDS)) == [
        ("Sex/Age", "F/65"),
        ("Diagnosis", "Adenocarcinoma"),
        ("Comorbidities", "HTN, DM, dyslipidemia"),
        ("Operation", "VATS RUL lobectomy"),
        ("Tumor location", "RUL"),
        ("Body", "165 cm · 62 kg · BMI 22.8"),
        ("FEV1", "2.10 L (85%)"),
        ("FVC", "3.00 L (90%)"),
        ("FEV1/FVC", "70%"),
        ("DLCO", "75%"),
    ]
    # Either of sex/age shows both; a field requested twice is one item.
    assert format_ir_lines(rec, ["age"]) == [("Sex/Age", "F/65")]
    assert format_ir_lines(rec, ["sex", "age"]) == [("Sex/Age", "F/65")]
    assert format_ir_lines(rec, ["weight", "height"]) == [("Body", "165 cm · 62 kg")]
    assert format_ir_lines(rec, ["bmi"]) == [("Body", "BMI 22.8")]
    assert format_ir_lines(rec, ["pft", "operation_date"]) == [
        ("Operation date", "2024-03-05"), ("FEV1", "2.10 L (85%)"), ("FVC", "3.00 L (90%)"),
        ("FEV1/FVC", "70%"), ("DLCO", "75%")]
    assert format_ir_lines(rec, ["diagnosis", "extra"])[1:] == [
        ("Smoking (pack-years)", "30"), ("Surgeon", "Dr. Kim")]
    assert format_extra_lines(rec) == [("Smoking (pack-years)", "30"), ("Surgeon", "Dr. Kim")]
    assert format_ir_lines(rec, []) == []


def test_requested_but_missing_fields_show_a_dash() -> None:
    rec = ClinicalRecord(fields={"sex": "M", "comorbidities": []})
    assert format_ir_lines(rec, ["sex", "comorbidities", "pft", "height", "diagnosis"]) == [
        ("Sex/Age", "M"), ("Diagnosis", MISSING_TEXT), ("Comorbidities", "None"),
        ("Body", MISSING_TEXT), ("PFT", MISSING_TEXT)]


# -- header variants ----------------------------------------------------------------------------

@pytest.mark.parametrize(("cell", "sex", "age"), [
    ("F/65", "F", 65), ("65/F", "F", 65), ("M 70", "M", 70), ("65Y/F", "F", 65),
    ("Male / 58", "M", 58), ("여/65세", "F", 65), ("65세/남", "M", 65), ("F65", "F", 65),
])
def test_combined_sex_age_column(tmp_path: Path, cell: str, sex: str, age: int) -> None:
    rec = load_clinical(write_csv(tmp_path / "c.csv", [["ID", "sex/age"], ["1", cell]]))
    assert (rec.fields["sex"], rec.fields["age"]) == (sex, age)


@pytest.mark.parametrize(("header", "cell", "key", "value"), [
    ("Ht (m)", "1.65", "height", 165.0),
    ("Height", "1.72", "height", 172.0),  # metres without a unit: < 3 means metres
    ("height", "165 cm", "height", 165.0),
    ("HEIGHT [cm]", "170.5", "height", 170.5),
    ("stature (in)", "65", "height", 165.1),
    ("bw (kg)", "62,5", "weight", 62.5),  # decimal comma
    ("Body weight", "62.5kg", "weight", 62.5),
    ("weight_kg", "70", "weight", 70.0),
    ("Weight (lb)", "150", "weight", 68.0),
    ("wt", "150 lbs", "weight", 68.0),
    ("체중", "55", "weight", 55.0),
    ("Age (years)", "65.0", "age", 65),
    ("나이", "71세", "age", 71),
    ("Gender", "female", "sex", "F"),
    ("SEX (M/F)", "m", "sex", "M"),
    ("성별", "남", "sex", "M"),
    ("BMI (kg/m2)", "24.2", "bmi", 24.2),
    ("Dx", "Squamous cell carcinoma", "diagnosis", "Squamous cell carcinoma"),
    ("Procedure", "Robotic  RUL   lobectomy", "operation_name", "Robotic RUL lobectomy"),
    ("Surgery date", "2024.03.05", "operation_date", "2024-03-05"),
    ("수술일", "2024년 3월 5일", "operation_date", "2024-03-05"),
    ("Lesion location", "Rt. lower lobe", "tumor_location", "Rt. lower lobe"),
    ("Past medical history", "HTN/COPD/s/p appendectomy", "comorbidities",
     ["HTN", "COPD", "s/p appendectomy"]),
])
def test_header_and_value_variants(tmp_path: Path, header: str, cell: str, key: str,
                                   value: Any) -> None:
    rec = load_clinical(write_csv(tmp_path / "c.csv", [["id", header], ["1", cell]]))
    got = rec.fields[key]
    assert got == (pytest.approx(value, abs=0.05) if isinstance(value, float) else value)


@pytest.mark.parametrize(("headers", "cells", "expected"), [
    (["PFT_PRE_FEV1 (L)", "PFT_PRE_FEV1 (%)"], ["2.1", "85"], {"FEV1": (2.1, 85.0)}),
    (["FEV1 (%pred)", "FEV1(L)"], ["78", "1.95"], {"FEV1": (1.95, 78.0)}),
    (["FEV1_pred%", "FEV1"], ["92", "2.3 L"], {"FEV1": (2.3, 92.0)}),
    (["FEV1 (mL)"], ["2100"], {"FEV1": (2.1, None)}),
    (["FVC(L)", "FVC %"], ["3,2", "88 %"], {"FVC": (3.2, 88.0)}),
    (["FEV1/FVC (%)"], ["68"], {"FEV1/FVC": (68.0, None)}),
    (["FEV1/FVC ratio"], ["0.68"], {"FEV1/FVC": (68.0, None)}),
    (["DLCO %"], ["75"], {"DLCO": (None, 75.0)}),
    (["DLco (mL/min/mmHg)", "DLCO_pct"], ["18.5", "72"], {"DLCO": (18.5, 72.0)}),
    (["DLCO (mmol/min/kPa)"], ["6.2"], {"DLCO": (18.5, None)}),
    (["ppoFEV1 %"], ["60"], {"ppoFEV1": (None, 60.0)}),
    (["PFT"], ["FEV1 2.1 L (85%), FVC 3.0 L (90%), DLCO 70%"],
     {"FEV1": (2.1, 85.0), "FVC": (3.0, 90.0), "DLCO": (None, 70.0)}),
])
def test_pft_columns(tmp_path: Path, headers: list[str], cells: list[str],
                     expected: dict[str, tuple]) -> None:
    rec = load_clinical(write_csv(tmp_path / "c.csv", [["id", *headers], ["1", *cells]]))
    pft = rec.fields["pft"]
    assert list(pft) == list(expected)
    for name, (value, pct) in expected.items():
        assert pft[name]["value"] == (pytest.approx(value, abs=0.05) if value else None)
        assert pft[name]["percent"] == pct


def test_pft_reference_columns_are_kept_as_extra(tmp_path: Path) -> None:
    # "FEV1 pred (L)" is the predicted reference, not the patient's value: not mixed in.
    rec = load_clinical(write_csv(tmp_path / "c.csv", [
        ["id", "FEV1 (L)", "FEV1 pred (L)", "Survival (months)"], ["1", "2.0", "2.8", "40"]]))
    assert rec.fields["pft"] == {"FEV1": {"value": 2.0, "unit": "L", "percent": None}}
    assert rec.extra == {"FEV1 pred (L)": "2.8", "Survival (months)": "40"}


def test_pft_text_parsing() -> None:
    assert parse_pft_text("FEV1 2.10L/85%, FVC 3.0L/90%, FEV1/FVC 0.70, DLCO 75%") == {
        "FEV1": {"value": 2.1, "unit": "L", "percent": 85.0},
        "FVC": {"value": 3.0, "unit": "L", "percent": 90.0},
        "FEV1/FVC": {"value": 70.0, "unit": "%", "percent": None},
        "DLCO": {"value": None, "unit": "mL/min/mmHg", "percent": 75.0},
    }
    got = parse_pft_text("FEV1: 2100 mL (78% pred); DLCO 18.5 mL/min/mmHg (72%)")
    assert got["FEV1"]["value"] == pytest.approx(2.1) and got["FEV1"]["percent"] == 78.0
    assert got["DLCO"] == {"value": 18.5, "unit": "mL/min/mmHg", "percent": 72.0}
    assert parse_pft_text("no spirometry done") == {}


def test_header_normalisation() -> None:
    assert normalize_header("Ht (m)") == ("ht", "m")
    assert normalize_header("  PFT_PRE_FEV1 (L) ") == ("pftprefev1", "l")
    assert normalize_header("FEV 1.0 (% pred)") == ("fev1", "%pred")
    assert normalize_header("Sex/Age") == ("sexage", "")
    # The documented map is written readably; every entry survives normalisation.
    assert all(normalize_header(k)[0] for k in DEFAULT_HEADER_MAP)


def test_mapping_from_case_toml_overrides(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "c.csv", [
        ["Pt", "Col A", "Weird weight (kg)", "Site", "F1", "Name"],
        ["7", "NSCLC", "80", "hospital B", "2.2", "Hong Gildong"]])
    rec = load_clinical(path, mapping={
        "Col A": "diagnosis", "Weird weight": "weight", "Site": "extra", "F1": "pft.FEV1.value",
        "Name": "ignore", "Pt": "patient_id", "Bogus": "shoe_size"})
    assert rec.fields["diagnosis"] == "NSCLC" and rec.fields["weight"] == 80.0
    assert rec.fields["pft"]["FEV1"]["value"] == 2.2 and rec.patient_id == "7"
    assert rec.extra == {"Site": "hospital B"}  # "site" would otherwise be the tumour location
    assert "Name" in rec.raw and "Hong Gildong" not in rec.extra.values()
    assert "names an unknown field 'shoe_size'" in messages(rec, "warning")


# -- CSV encodings and delimiters ----------------------------------------------------------------

@pytest.mark.parametrize("delimiter", [",", ";", "\t", "|"])
def test_csv_delimiters_are_sniffed(tmp_path: Path, delimiter: str) -> None:
    rows = [["patient_id", "sex", "age", "diagnosis", "weight (kg)"],
            ["A1", "F", "65", "Lung cancer, adenocarcinoma", "62,5"]]
    rec = load_clinical(write_csv(tmp_path / "c.csv", rows, delimiter))
    assert rec.fields["diagnosis"] == "Lung cancer, adenocarcinoma"
    assert rec.fields["weight"] == 62.5 and rec.fields["age"] == 65


def test_cp949_korean_headers(tmp_path: Path) -> None:
    rows = [["등록번호", "성별", "나이", "진단명", "수술명", "수술일", "키", "체중", "종양 위치", "동반질환", "담당의"],
            ["12345678", "여", "67", "폐선암", "로봇 우상엽 절제술", "2024-05-02", "158", "51",
             "우상엽", "고혈압, 당뇨", "김의사"]]
    path = write_csv(tmp_path / "clinical.csv", rows, encoding="cp949")
    with pytest.raises(UnicodeDecodeError):
        path.read_bytes().decode("utf-8")  # really cp949
    rec = load_clinical(path, patient="12345678")
    f = rec.fields
    assert rec.patient_id == "12345678"
    assert (f["sex"], f["age"], f["diagnosis"]) == ("F", 67, "폐선암")
    assert f["operation_date"] == "2024-05-02" and f["height"] == 158.0
    assert rec.tumor_lobes == ["right_upper_lobe"] and f["comorbidities"] == ["고혈압", "당뇨"]
    assert rec.extra == {"담당의": "김의사"}


@pytest.mark.parametrize("encoding", ["utf-8-sig", "latin-1", "utf-16"])
def test_other_encodings(tmp_path: Path, encoding: str) -> None:
    rows = [["patient_id", "Sex", "Diagnosis"], ["X9", "F", "Carcinoïde tumour"]]
    rec = load_clinical(write_csv(tmp_path / "c.csv", rows, "\t" if encoding == "utf-16" else ",",
                                  encoding))
    assert rec.patient_id == "X9"  # a BOM must not hide the first header
    assert rec.fields["diagnosis"] == "Carcinoïde tumour"


# -- JSON -------------------------------------------------------------------------------------------

def test_json_object_with_nested_pft(tmp_path: Path) -> None:
    data = {"patient_id": "J1", "sex": "male", "age": 70, "comorbidities": ["COPD", "CAD"],
            "height_cm": 175, "weight": "80 kg", "operation_date": "2024-06-30",
            "tumor_location": "left lower lobe", "ECOG": 1,
            "pft": {"FEV1": {"value": 2.5, "percent": 80}, "FVC (L)": 3.4, "DLCO %": 66}}
    path = tmp_path / "clinical.json"
    path.write_text(json.dumps(data))
    rec = load_clinical(path)
    f = rec.fields
    assert (f["sex"], f["age"], f["height"], f["weight"]) == ("M", 70, 175.0, 80.0)
    assert f["comorbidities"] == ["COPD", "CAD"] and rec.tumor_lobes == ["left_lower_lobe"]
    assert f["pft"]["FEV1"] == {"value": 2.5, "unit": "L", "percent": 80.0}
    assert f["pft"]["FVC"]["value"] == 3.4 and f["pft"]["DLCO"]["percent"] == 66.0
    assert rec.extra == {"ECOG": "1"}


@pytest.mark.parametrize("shape", ["list", "patients", "keyed"])
def test_json_many_patients(tmp_path: Path, shape: str) -> None:
    people = [{"id": "A", "sex": "F", "age": 50}, {"id": "B", "sex": "M", "age": 60}]
    obj: Any = {"list": people, "patients": {"patients": people},
                "keyed": {"A": {"sex": "F", "age": 50}, "B": {"sex": "M", "age": 60}}}[shape]
    path = tmp_path / "c.json"
    path.write_text(json.dumps(obj))
    assert load_clinical(path, patient="B").fields["age"] == 60
    first = load_clinical(path)
    assert first.fields["age"] == 50 and "holds 2 patients" in messages(first, "info")


# -- missing, odd and implausible values ----------------------------------------------------------

def test_missing_values_are_listed_in_plain_words(tmp_path: Path) -> None:
    rows = [["id", "sex", "age", "diagnosis", "height", "weight", "comorbidities", "FEV1 (L)"],
            ["1", "F", "n/a", "-", "", "unknown", "none", "NA"]]
    rec = load_clinical(write_csv(tmp_path / "c.csv", rows))
    assert rec.fields == {"sex": "F", "comorbidities": []}  # "none" is an answer, not a gap
    warning = messages(rec, "warning")
    assert "Not in the clinical sheet: age, diagnosis, operation name, operation date, " \
           "tumor location, height, weight, BMI, PFT." in warning
    assert format_ir_lines(rec, ["comorbidities"]) == [("Comorbidities", "None")]


def test_implausible_values_are_dropped_with_a_warning(tmp_path: Path) -> None:
    rows = [["id", "age", "height", "weight", "sex", "FEV1 (L)"], ["1", "250", "20 cm", "62", "X", "45"]]
    rec = load_clinical(write_csv(tmp_path / "c.csv", rows))
    assert "age" not in rec.fields and "height" not in rec.fields and "bmi" not in rec.fields
    assert rec.fields["weight"] == 62.0 and "pft" not in rec.fields
    text = messages(rec, "warning")
    assert "Age 250 in the clinical sheet is not plausible; it is left out." in text
    assert "Height 20 cm in the clinical sheet is not plausible" in text
    assert "Sex 'X' in the clinical sheet could not be read" in text
    assert "FEV1 45 L is not plausible" in text


def test_bmi_from_sheet_is_checked_against_height_and_weight(tmp_path: Path) -> None:
    rows = [["id", "height", "weight", "BMI"], ["1", "170", "70", "30.1"]]
    rec = load_clinical(write_csv(tmp_path / "c.csv", rows))
    assert rec.fields["bmi"] == 30.1 and "bmi" not in rec.computed
    assert "does not match height and weight (BMI 24.2)" in messages(rec, "warning")


def test_age_is_computed_from_birth_date(tmp_path: Path) -> None:
    rows = [["id", "DOB", "Operation date"], ["1", "1959-07-01", "2024-06-30"]]
    rec = load_clinical(write_csv(tmp_path / "c.csv", rows))
    assert rec.fields["age"] == 64 and "age" in rec.computed


@pytest.mark.parametrize(("cell", "iso", "note"), [
    ("45356", "2024-03-05", False),  # Excel serial number in a text file
    ("20240305", "2024-03-05", False),
    ("2024-03-05 00:00:00", "2024-03-05", False),
    ("25/03/2024", "2024-03-25", False),  # the day must be 25
    ("03/25/2024", "2024-03-25", False),  # the month can't be 25
    ("05/03/2024", "2024-03-05", True),  # ambiguous: day first, said so
    ("5 Mar 2024", "2024-03-05", False),
    ("March 5, 2024", "2024-03-05", False),
])
def test_operation_dates(tmp_path: Path, cell: str, iso: str, note: bool) -> None:
    rec = load_clinical(write_csv(tmp_path / "c.csv", [["id", "op date"], ["1", cell]]))
    assert rec.fields["operation_date"] == iso
    assert ("read as day/month" in messages(rec, "info")) is note


def test_excel_date_cells_and_serial_numbers(tmp_path: Path) -> None:
    rows = [["id", "Operation date", "DOB"], ["1", 45356, dt.date(1960, 1, 2)],
            ["2", dt.datetime(2023, 12, 31), "garbage"]]
    path = write_xlsx(tmp_path / "c.xlsx", rows)
    assert load_clinical(path).fields["operation_date"] == "2024-03-05"
    rec = load_clinical(path, patient="2")
    assert rec.fields["operation_date"] == "2023-12-31" and "age" not in rec.fields
    assert parse_date("not a date") == (None, "")


# -- tumour lobes -------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "lobes"), [
    ("RUL", ["right_upper_lobe"]),
    ("right upper lobe", ["right_upper_lobe"]),
    ("Rt. lower lobe", ["right_lower_lobe"]),
    ("Lt upper lobe", ["left_upper_lobe"]),
    ("left upper", ["left_upper_lobe"]),
    ("LUL superior segment", ["left_upper_lobe"]),
    ("left lower lobe superior segment", ["left_lower_lobe"]),
    ("RUL and RML", ["right_upper_lobe", "right_middle_lobe"]),
    ("RLL/RML", ["right_middle_lobe", "right_lower_lobe"]),
    ("right upper and middle lobes", ["right_upper_lobe", "right_middle_lobe"]),
    ("R upper lobe", ["right_upper_lobe"]),
    ("right-lower-lobe", ["right_lower_lobe"]),
    ("middle lobe", ["right_middle_lobe"]),
    ("lingula", ["left_upper_lobe"]),
    ("Rt. S6", ["right_lower_lobe"]),
    ("LS1+2", ["left_upper_lobe"]),
    ("right lung", ["right_upper_lobe", "right_middle_lobe", "right_lower_lobe"]),
    ("RUL, LLL (synchronous)", ["left_lower_lobe", "right_upper_lobe"]),
    ("우상엽", ["right_upper_lobe"]),
    ("좌측 하엽", ["left_lower_lobe"]),
    ("right hilum, upper mediastinum", []),
    ("mediastinum", []),
    ("", []),
])
def test_tumor_lobes_from_many_phrasings(text: str, lobes: list[str]) -> None:
    assert tumor_lobes_from_text(text) == lobes


def test_tumor_lobe_falls_back_to_the_operation_name(tmp_path: Path) -> None:
    rec = load_clinical(write_csv(tmp_path / "c.csv", [["id", "operation"], ["1", "Right upper lobectomy"]]))
    assert rec.tumor_lobes == ["right_upper_lobe"]
    assert "taken from the operation" in messages(rec, "info")


# -- several patients, sheets and layouts -----------------------------------------------------------

ROWS3 = [["MRN", "Sex", "Age"], [1001, "F", 50], [1002, "M", 61], [1003, "F", 72]]


def test_patient_selection_by_id(tmp_path: Path) -> None:
    path = write_xlsx(tmp_path / "c.xlsx", ROWS3)
    rec = load_clinical(path, patient="1002")  # numbers in Excel, text in case.toml
    assert rec.patient_id == "1002" and rec.fields["age"] == 61
    assert not messages(rec, "info")
    first = load_clinical(path)
    assert first.patient_id == "1001"
    assert "c.xlsx holds 3 patients; showing the first (patient 1001)" in messages(first, "info")


def test_patient_not_found(tmp_path: Path) -> None:
    with pytest.raises(LoadError) as err:
        load_clinical(write_xlsx(tmp_path / "c.xlsx", ROWS3), patient="9999")
    assert err.value.part == "clinical"
    assert err.value.message == "Patient 9999 is not in c.xlsx."
    assert "1001, 1002, 1003" in err.value.detail


def test_patient_asked_for_but_no_id_column(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "c.csv", [["Sex", "Age"], ["F", "50"]])
    with pytest.raises(LoadError, match="c.csv has no patient id column, so patient 7 cannot be chosen"):
        load_clinical(path, patient="7")


def test_title_rows_blank_rows_and_clinical_sheet_preferred(tmp_path: Path) -> None:
    rows = [["Thoracic surgery – clinical data"], [], ["Patient ID", "Sex", "Age", None, "Note"],
            [None, None, None], ["P7", "M", 66, "stray", "ok"]]
    path = write_xlsx(tmp_path / "c.xlsx", rows, title="Clinical data",
                      before=[("Summary", [["Nothing", "here"], [1, 2]])])
    rec = load_clinical(path)
    assert rec.patient_id == "P7" and rec.fields["age"] == 66
    assert rec.extra == {"Column D": "stray", "Note": "ok"}


def test_single_patient_sheet_written_top_to_bottom(tmp_path: Path) -> None:
    rows = [["Sex", "F"], ["Age", 58], ["Diagnosis", "NSCLC"], ["Tumor location", "LLL"],
            ["Blood type", "A+"]]
    rec = load_clinical(write_xlsx(tmp_path / "c.xlsx", rows))
    assert (rec.fields["sex"], rec.fields["age"], rec.fields["diagnosis"]) == ("F", 58, "NSCLC")
    assert rec.tumor_lobes == ["left_lower_lobe"] and rec.extra == {"Blood type": "A+"}


def test_top_to_bottom_csv_with_caption_row_and_pft_text_filling_gaps(tmp_path: Path) -> None:
    rows = [["Field", "Value"], ["Sex", "M"], ["Age", "70"], ["FEV1 (L)", "2.3"],
            ["PFT", "FEV1 2.4 L (80%), DLCO 66%"]]
    rec = load_clinical(write_csv(tmp_path / "c.csv", rows))
    assert rec.extra == {}
    assert format_ir_lines(rec, ["age", "pft"]) == [
        ("Sex/Age", "M/70"), ("FEV1", "2.30 L (80%)"), ("DLCO", "66%")]


def test_duplicate_headers_first_value_wins(tmp_path: Path) -> None:
    rec = load_clinical(write_csv(tmp_path / "c.csv", [["id", "Weight", "Weight"], ["1", "", "70"]]))
    assert rec.fields["weight"] == 70.0 and rec.raw == {"id": "1", "Weight": "", "Weight (2)": "70"}


# -- bad inputs -----------------------------------------------------------------------------------------

def _load_error(path: Path, **kw: Any) -> LoadError:
    with pytest.raises(LoadError) as err:
        load_clinical(path, **kw)
    assert err.value.part == "clinical" and err.value.problems[-1].severity == "error"
    return err.value


def test_missing_file(tmp_path: Path) -> None:
    assert _load_error(tmp_path / "none.xlsx").message == "The clinical sheet none.xlsx was not found."


@pytest.mark.parametrize(("name", "text"), [
    ("notes.pdf", "notes.pdf is not a clinical sheet format the console reads (use .xlsx, .csv or .json)."),
    ("clinical", "clinical is not a clinical sheet format the console reads (use .xlsx, .csv or .json)."),
    ("old.xls", "old.xls is in the old Excel .xls format; save it as .xlsx or .csv and load it again."),
])
def test_unsupported_formats(tmp_path: Path, name: str, text: str) -> None:
    (tmp_path / name).write_bytes(b"x")
    assert _load_error(tmp_path / name).message == text


def test_corrupt_xlsx(tmp_path: Path) -> None:
    bad = tmp_path / "clinical.xlsx"
    bad.write_bytes(b"PK\x03\x04 this is not really a workbook" * 20)
    err = _load_error(bad)
    assert err.message.startswith("clinical.xlsx could not be read as an Excel workbook")
    good = write_xlsx(tmp_path / "half.xlsx", HOSPITAL_A)
    good.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    assert "could not be read as an Excel workbook" in _load_error(good).message


def test_empty_inputs(tmp_path: Path) -> None:
    (tmp_path / "e.csv").write_text("\n\n  \n")
    assert _load_error(tmp_path / "e.csv").message == "The clinical sheet e.csv is empty."
    assert _load_error(write_xlsx(tmp_path / "e.xlsx", [])).message == \
        "The clinical sheet e.xlsx is empty."
    (tmp_path / "e.json").write_text("  ")
    assert _load_error(tmp_path / "e.json").message == "The clinical sheet e.json is empty."
    (tmp_path / "l.json").write_text("[]")
    assert _load_error(tmp_path / "l.json").message == "The clinical sheet l.json is empty."


def test_no_header_row(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "n.csv", [["1", "65", "165"], ["2", "70", "172"]])
    assert _load_error(path).message.startswith("n.csv has no row of column names")


def test_header_but_no_patients(tmp_path: Path) -> None:
    path = write_xlsx(tmp_path / "h.xlsx", [["Sex", "Age", "Diagnosis"], [None, None, None]])
    assert _load_error(path).message == "h.xlsx has column names but no patient rows."


def test_bad_json(tmp_path: Path) -> None:
    (tmp_path / "b.json").write_text('{"sex": "F",, }')
    assert _load_error(tmp_path / "b.json").message.startswith("b.json is not valid JSON (line 1)")
    (tmp_path / "s.json").write_text('"just text"')
    (tmp_path / "n.json").write_text("[1, 2, 3]")
    assert "does not hold patient records" in _load_error(tmp_path / "n.json").message
    assert _load_error(tmp_path / "s.json").message == "The clinical sheet s.json is empty."


def test_binary_file_named_csv(tmp_path: Path) -> None:
    (tmp_path / "x.csv").write_bytes(bytes(range(256)) * 4)
    assert "x.csv is not a text file" in _load_error(tmp_path / "x.csv").message


def test_record_to_dict_is_json_safe(tmp_path: Path) -> None:
    rec = load_clinical(write_xlsx(tmp_path / "clinical.xlsx", HOSPITAL_A))
    data = json.loads(json.dumps(rec.to_dict()))
    assert data["fields"]["pft"]["FEV1"]["percent"] == 85.0 and data["computed"] == ["bmi"]
