"""Clinical sheets (.xlsx / .csv / .json) → one typed patient record (DESIGN §1, §4 IR, §5.5).

Hospitals name their columns every which way (``sex/age``, ``bw (kg)``, ``PFT_PRE_FEV1 (L)``,
``등록번호`` …). Headers are normalised (case, spaces, punctuation and units in parentheses
ignored) and looked up in :data:`DEFAULT_HEADER_MAP`; a ``mapping`` from case.toml overrides it.
PFT columns are recognised by measure name (FEV1, FVC, FEV1/FVC, DLCO …) plus decoration
(``pre``, ``%pred``, ``(L)``). Anything not recognised is kept under its own header in
:attr:`ClinicalRecord.extra`, never dropped.

Values are typed: sex ``"F"``/``"M"``, age ``int``, height cm, weight kg, BMI (computed from
height and weight when missing), operation date as an ISO string, comorbidities as a list, PFT
as ``{measure: {"value", "unit", "percent"}}``. Everything odd becomes a plain-words
:class:`~app.data.problems.Problem` on the record; only an unusable file raises
:class:`~app.data.problems.LoadError`.

:func:`format_ir_lines` turns a record into the (header, value) text pairs of the IR box.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import math
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.vocab import AR_ABBREVIATIONS, IR_FIELDS, LOBES
from app.data.problems import LoadError, Problem

PART = "clinical"
SUPPORTED_SUFFIXES = (".xlsx", ".xlsm", ".csv", ".tsv", ".txt", ".json")

# Shown for a requested field the sheet does not have (better than silently omitting it).
MISSING_TEXT = "—"

FIELD_LABELS: dict[str, str] = {
    "sex": "Sex", "age": "Age", "diagnosis": "Diagnosis", "comorbidities": "Comorbidities",
    "operation_name": "Operation", "operation_date": "Operation date",
    "tumor_location": "Tumor location", "height": "Height", "weight": "Weight", "bmi": "BMI",
    "pft": "PFT",
}

# Header variants → target. Keys are written readably; they are normalised the same way as
# sheet headers (lower-case, no spaces/punctuation, parenthesised units removed), so "Sex",
# "SEX " and "sex (M/F)" all hit "sex". Targets are IR field keys or one of:
#   patient_id  – the column used to choose a patient,
#   sex_age     – a combined "F/65" column, split into sex and age,
#   birth_date  – used to compute the age when no age column exists,
#   pft         – one text cell holding several measures ("FEV1 2.1 L (85%), FVC …").
# Separate PFT measure columns (FEV1 (L), FEV1 %pred, DLCO % …) are recognised by
# measure name, not through this table. A case.toml mapping may also target
# "pft.<MEASURE>[.value|.percent]", "extra" (show under its own header) or "ignore".
DEFAULT_HEADER_MAP: dict[str, str] = {
    # identity
    "patient id": "patient_id", "patient": "patient_id", "pid": "patient_id", "id": "patient_id",
    "mrn": "patient_id", "medical record number": "patient_id", "hospital number": "patient_id",
    "hospital no": "patient_id", "chart no": "patient_id", "chart number": "patient_id",
    "registration number": "patient_id", "reg no": "patient_id", "case id": "patient_id",
    "case": "patient_id", "subject id": "patient_id", "patient no": "patient_id",
    "patient number": "patient_id", "등록번호": "patient_id", "환자번호": "patient_id",
    "병록번호": "patient_id", "차트번호": "patient_id", "환자 id": "patient_id",
    # sex and age
    "sex": "sex", "gender": "sex", "성별": "sex",
    "age": "age", "age at surgery": "age", "age at operation": "age", "age years": "age",
    "나이": "age", "연령": "age", "만나이": "age",
    "sex/age": "sex_age", "age/sex": "sex_age", "s/a": "sex_age", "a/s": "sex_age",
    "gender/age": "sex_age", "age/gender": "sex_age", "성별/나이": "sex_age",
    "나이/성별": "sex_age", "성별/연령": "sex_age", "연령/성별": "sex_age",
    "date of birth": "birth_date", "dob": "birth_date", "birth date": "birth_date",
    "birthday": "birth_date", "생년월일": "birth_date",
    # diagnosis and history
    "diagnosis": "diagnosis", "dx": "diagnosis", "diag": "diagnosis",
    "preoperative diagnosis": "diagnosis", "preop diagnosis": "diagnosis", "pre op dx": "diagnosis",
    "clinical diagnosis": "diagnosis", "primary diagnosis": "diagnosis", "진단": "diagnosis",
    "진단명": "diagnosis", "수술전 진단": "diagnosis",
    "comorbidities": "comorbidities", "comorbidity": "comorbidities", "comorb": "comorbidities",
    "co-morbidities": "comorbidities", "underlying disease": "comorbidities",
    "underlying diseases": "comorbidities", "past medical history": "comorbidities",
    "pmh": "comorbidities", "medical history": "comorbidities", "past history": "comorbidities",
    "동반질환": "comorbidities", "기저질환": "comorbidities", "과거력": "comorbidities",
    # operation
    "operation": "operation_name", "operation name": "operation_name", "op": "operation_name",
    "op name": "operation_name", "procedure": "operation_name", "procedure name": "operation_name",
    "planned operation": "operation_name", "planned procedure": "operation_name",
    "surgery": "operation_name", "surgery name": "operation_name", "수술": "operation_name",
    "수술명": "operation_name", "수술 이름": "operation_name",
    "operation date": "operation_date", "op date": "operation_date",
    "date of operation": "operation_date", "date of surgery": "operation_date",
    "surgery date": "operation_date", "procedure date": "operation_date", "dos": "operation_date",
    "수술일": "operation_date", "수술일자": "operation_date", "수술 날짜": "operation_date",
    # tumour
    "tumor location": "tumor_location", "tumour location": "tumor_location",
    "tumor site": "tumor_location", "tumour site": "tumor_location", "location": "tumor_location",
    "lesion location": "tumor_location", "lesion": "tumor_location", "site": "tumor_location",
    "nodule location": "tumor_location", "tumor lobe": "tumor_location", "lobe": "tumor_location",
    "종양 위치": "tumor_location", "병변 위치": "tumor_location", "위치": "tumor_location",
    # body
    "height": "height", "ht": "height", "stature": "height", "body height": "height",
    "키": "height", "신장": "height",
    "weight": "weight", "wt": "weight", "bw": "weight", "body weight": "weight",
    "체중": "weight", "몸무게": "weight",
    "bmi": "bmi", "body mass index": "bmi", "체질량지수": "bmi",
    # PFT as one text cell
    "pft": "pft", "pfts": "pft", "pulmonary function": "pft", "pulmonary function test": "pft",
    "lung function": "pft", "spirometry": "pft", "폐기능": "pft", "폐기능검사": "pft",
}

_SPECIAL_TARGETS = {"patient_id", "sex_age", "birth_date", "extra", "ignore"}
_MISSING_TOKENS = {
    "", "na", "n/a", "n.a.", "n.a", "nan", "none", "null", "nil", "-", "--", "---", "—", "–",
    "?", "unknown", "unk", "not available", "not done", "nd", "n.d.", ".", "미상", "모름",
}
# In a comorbidity column these mean "the patient has none" — a real answer, not a gap.
_NO_COMORBIDITY = {"none", "no", "nil", "denied", "없음", "무", "(-)", "negative", "no comorbidity"}

# Plausible ranges; values outside are reported and left out rather than shown wrong.
_RANGES = {"age": (0, 120), "height": (40.0, 250.0), "weight": (2.0, 400.0), "bmi": (8.0, 90.0)}


@dataclass
class ClinicalRecord:
    """One patient's clinical data, typed, with what went wrong in plain words.

    ``fields`` holds only IR field keys (``app.core.vocab.IR_FIELDS``) that have a value;
    ``tumor_lobes`` lists the AR lobe keys (``app.core.vocab.LOBES``) named by the tumour
    location; ``computed`` names fields derived rather than read (``"bmi"``, ``"age"``);
    ``extra`` keeps unrecognised columns as display text under their original header;
    ``raw`` holds every cell of the chosen row as read.
    """

    fields: dict[str, Any] = field(default_factory=dict)
    tumor_lobes: list[str] = field(default_factory=list)
    extra: dict[str, str] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)
    patient_id: str | None = None
    problems: list[Problem] = field(default_factory=list)
    source: str = ""
    computed: set[str] = field(default_factory=set)

    def get(self, key: str, default: Any = None) -> Any:
        return self.fields.get(key, default)

    @property
    def missing(self) -> list[str]:
        """IR field keys with no value, in display order."""
        return [k for k in IR_FIELDS if k not in self.fields]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe view (for state snapshots and `case --json`)."""
        return {
            "patient_id": self.patient_id, "source": self.source, "fields": dict(self.fields),
            "tumor_lobes": list(self.tumor_lobes), "extra": dict(self.extra),
            "computed": sorted(self.computed), "problems": [str(p) for p in self.problems],
        }


# ---------------------------------------------------------------------------------------------
# Header normalisation

_PAREN_RE = re.compile(r"[(\[{]([^)\]}]*)[)\]}]")


def _nfkc(text: Any) -> str:
    return unicodedata.normalize("NFKC", str(text)).strip()


def _compact(text: str) -> str:
    text = text.lower()
    text = re.sub(r"fev\s*[-_.]?\s*1(?:\.0)?(?!\d)", "fev1", text)  # FEV 1, FEV1.0 → fev1
    return re.sub(r"[^0-9a-z%\uac00-\ud7a3]", "", text)


def normalize_header(header: Any) -> tuple[str, str]:
    """``"Ht (m)"`` → ``("ht", "m")``: compact name and compact unit (lower-case, no spaces)."""
    text = _nfkc(header).lower()
    unit = " ".join(m.group(1) for m in _PAREN_RE.finditer(text))
    base = _PAREN_RE.sub(" ", text)
    return _compact(base), re.sub(r"\s+", "", unit)


_HEADER_INDEX: dict[str, str] = {normalize_header(k)[0]: v for k, v in DEFAULT_HEADER_MAP.items()}
# Decorations stripped when the bare header is not in the map ("pt_sex", "weight_kg", "htm").
_HEADER_PREFIXES = ("patient", "pt", "preoperative", "preop", "pre", "baseline")
_HEADER_UNIT_SUFFIXES = ("kgm2", "years", "yrs", "yr", "cm", "mm", "kg", "lbs", "lb", "in", "m", "y")


# ---------------------------------------------------------------------------------------------
# PFT measure recognition

# (compact pattern, canonical name), longest first so FEV1/FVC wins over FEV1.
_PFT_MEASURES = (
    ("fev1fvc", "FEV1/FVC"), ("rvtlc", "RV/TLC"), ("dlcova", "KCO"), ("fef2575", "FEF25-75"),
    ("fev1", "FEV1"), ("dlco", "DLCO"), ("tlco", "DLCO"), ("fvc", "FVC"), ("kco", "KCO"),
    ("tlc", "TLC"), ("pef", "PEF"), ("mvv", "MVV"), ("rv", "RV"),
)
PFT_UNITS: dict[str, str] = {
    "FEV1": "L", "FVC": "L", "TLC": "L", "RV": "L", "FEV1/FVC": "%", "RV/TLC": "%",
    "DLCO": "mL/min/mmHg", "KCO": "mL/min/mmHg/L", "PEF": "L/s", "FEF25-75": "L/s", "MVV": "L/min",
}
# Display order of measures; others follow in the order found.
PFT_ORDER = ("FEV1", "FVC", "FEV1/FVC", "DLCO", "KCO", "TLC", "RV", "RV/TLC", "PEF", "FEF25-75", "MVV")
_PFT_TOKENS = {
    **dict.fromkeys(("preoperative", "preop", "pre", "pft", "pfts", "baseline", "spirometry",
                     "spiro", "lungfunction", "test", "measured", "meas", "actual", "absolute",
                     "abs", "value", "val", "result", "sb", "adj", "corrected", "cor", "ratio",
                     "prebd", "bd", "c", "폐기능검사", "폐기능", "수술전", "술전"), "skip"),
    **dict.fromkeys(("percentpredicted", "percent", "pct", "%", "pp", "of"), "percent"),
    **dict.fromkeys(("predicted", "pred", "prd"), "pred"),
    **dict.fromkeys(("liters", "litres", "liter", "litre", "l"), "litre"),
    **dict.fromkeys(("ml", "cc"), "millilitre"),
    **dict.fromkeys(("lsec", "ls"), "litre"),
    "mlminmmhg": "dlco_unit", "mmolminkpa": "dlco_si", "postbd": "post", "post": "post",
    "ppo": "ppo",
}
_PFT_TOKEN_RE = re.compile("|".join(re.escape(t) for t in sorted(_PFT_TOKENS, key=len, reverse=True)))


@dataclass(frozen=True)
class _PftCol:
    measure: str
    kind: str  # "value", "percent", "pred" (% predicted unless the numbers look like litres), "auto"
    scale: float = 1.0  # mL → L, mmol/min/kPa → mL/min/mmHg


def _classify_pft(compact: str, unit: str) -> _PftCol | None:
    for pattern, name in _PFT_MEASURES:
        pos = compact.find(pattern)
        if pos < 0:
            continue
        rest = compact[:pos] + " " + compact[pos + len(pattern):] + " " + _compact(unit)
        words = [w for w in rest.split() if w]
        found: list[str] = []
        for w in words:
            toks = _PFT_TOKEN_RE.findall(w)
            if "".join(toks) != w:
                return None  # an unknown decoration: some other column (e.g. "survival")
            found.extend(toks)
        roles = {_PFT_TOKENS[t] for t in found}
        if "ppo" in roles:
            name = "ppo" + name
        if "post" in roles:
            name += " post"
        scale = 0.001 if "millilitre" in roles else (2.986 if "dlco_si" in roles else 1.0)
        if "percent" in roles or "%" in unit:
            # For the ratio, "FEV1/FVC (%)" is the ratio itself; only "%pred" is % predicted.
            ratio = name.endswith(("FEV1/FVC", "RV/TLC"))
            kind = "percent" if not ratio or "pred" in roles else "value"
        elif "pred" in roles:
            if roles & {"litre", "millilitre", "dlco_unit", "dlco_si"}:
                return None  # the predicted reference value, not the patient's: keep as extra
            kind = "pred"
        elif roles & {"litre", "millilitre", "dlco_unit", "dlco_si"}:
            kind = "value"
        else:
            kind = "auto"
        return _PftCol(name, kind, scale)
    return None


# ---------------------------------------------------------------------------------------------
# Column classification

@dataclass(frozen=True)
class _Col:
    header: str
    target: str  # IR field key, a special target, "pft.<MEASURE>" or "extra"
    unit: str = ""
    pft: _PftCol | None = None


def _index_mapping(mapping: dict[str, str] | None, problems: list[Problem]) -> dict[str, str]:
    index: dict[str, str] = {}
    for header, target in (mapping or {}).items():
        t = str(target).strip()
        t = "sex_age" if t.replace(" ", "") in ("sex/age", "age/sex") else t
        ok = t in IR_FIELDS or t in _SPECIAL_TARGETS or re.fullmatch(
            r"pft\.[A-Za-z0-9/\-]+(\.(value|percent))?", t)
        if not ok:
            problems.append(Problem(
                "warning", PART, f"The column setting for '{header}' names an unknown field "
                f"'{target}'; it is ignored.", "valid: " + ", ".join((*IR_FIELDS, *sorted(_SPECIAL_TARGETS)))))
            continue
        base, unit = normalize_header(header)
        index[base + unit] = t  # the full form ("fev1%") first, then the bare name
        index.setdefault(base, t)
    return index


def _classify(header: str, mapping_index: dict[str, str]) -> _Col:
    base, unit = normalize_header(header)
    target = mapping_index.get(base + unit) or mapping_index.get(base)
    if target:
        if target.startswith("pft."):
            parts = target.split(".")
            kind = parts[2] if len(parts) > 2 else "auto"
            guessed = _classify_pft(_compact(parts[1]), unit)
            scale = guessed.scale if guessed else 1.0
            return _Col(header, target, unit, _PftCol(parts[1].upper(), kind, scale))
        return _Col(header, target, unit)
    if base in _HEADER_INDEX:
        return _Col(header, _HEADER_INDEX[base], unit)
    pft = _classify_pft(base, unit)
    if pft is not None:
        return _Col(header, "pft." + pft.measure, unit, pft)
    # "pt_sex", "weight_kg", "htm", "preop_weight_kg": strip a decoration and retry.
    for prefix in ("", *_HEADER_PREFIXES):
        if not base.startswith(prefix):
            continue
        stem = base[len(prefix):]
        for suffix in ("", *_HEADER_UNIT_SUFFIXES):
            if suffix and not stem.endswith(suffix):
                continue
            core = stem[: len(stem) - len(suffix)] if suffix else stem
            if (prefix or suffix) and core in _HEADER_INDEX:
                return _Col(header, _HEADER_INDEX[core], unit or suffix)
    return _Col(header, "extra", unit)


# ---------------------------------------------------------------------------------------------
# Value parsing

def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    if isinstance(value, (list, tuple, dict)):
        return len(value) == 0
    return isinstance(value, str) and _nfkc(value).lower() in _MISSING_TOKENS


_NUM_RE = re.compile(r"[-+]?\d+(?:[.,]\d+)*")


def _to_float(token: str) -> float:
    """"62,5" → 62.5 (decimal comma); "1,650" → 1650; "1.234,5" → 1234.5."""
    if "," in token and "." in token:
        dec = "," if token.rfind(",") > token.rfind(".") else "."
        token = token.replace("." if dec == "," else ",", "").replace(",", ".")
    elif "," in token:
        token = token.replace(",", "") if re.fullmatch(r"[-+]?\d{1,3}(,\d{3})+", token) \
            else token.replace(",", ".")
    return float(token)


def _parse_number(value: Any) -> tuple[float, str] | None:
    """A number and the unit written after it: ``"62,5 kg"`` → ``(62.5, "kg")``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return (float(value), "") if math.isfinite(value) else None
    if not isinstance(value, str):
        return None
    text = _nfkc(value)
    m = _NUM_RE.search(text)
    if not m:
        return None
    try:
        number = _to_float(m.group(0))
    except ValueError:
        return None
    unit = re.sub(r"\s+", "", text[m.end():].lower())
    return number, unit


_SEX_WORDS = {
    "f": "F", "female": "F", "woman": "F", "w": "F", "fem": "F", "여": "F", "여자": "F",
    "여성": "F", "女": "F", "m": "M", "male": "M", "man": "M", "남": "M", "남자": "M",
    "남성": "M", "男": "M",
}
_AGE_WORDS = {"y", "yr", "yrs", "year", "years", "yo", "old", "세", "살", "age", "sex", "ys"}


def _parse_sex(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    return _SEX_WORDS.get(re.sub(r"[^a-z\uac00-\ud7a3女男]", "", _nfkc(value).lower()))


def _split_sex_age(value: Any) -> tuple[str | None, float | None]:
    """"F/65", "65/F", "M 70", "65Y/F", "여/65세" → (sex, age)."""
    text = _nfkc(value).lower()
    num = re.search(r"\d+(?:[.,]\d+)?", text)  # unsigned: "M-65" is not minus 65
    age = _to_float(num.group(0)) if num else None
    sex = None
    for word in re.findall(r"[a-z]+|[\uac00-\ud7a3]+|[女男]", text):
        if word not in _AGE_WORDS and (found := _SEX_WORDS.get(word)):
            sex = found
            break
        if word.endswith("세") and _SEX_WORDS.get(word[:-1]):  # "여65세" split oddly
            sex = _SEX_WORDS[word[:-1]]
            break
    return sex, age


_MONTHS = {m: i for i, names in enumerate(
    (("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"), ("may",),
     ("jun", "june"), ("jul", "july"), ("aug", "august"), ("sep", "sept", "september"),
     ("oct", "october"), ("nov", "november"), ("dec", "december")), start=1) for m in names}
_EXCEL_EPOCH = dt.date(1899, 12, 30)  # Excel's day 0 (it counts 1900 as a leap year)


def _safe_date(y: int, m: int, d: int) -> dt.date | None:
    if y < 100:
        y += 2000 if y < 70 else 1900
    try:
        date = dt.date(y, m, d)
    except ValueError:
        return None
    return date if 1900 <= date.year <= 2100 else None


def parse_date(value: Any) -> tuple[dt.date | None, str]:
    """Read a date from a cell. Returns (date, note); the note says when day/month was guessed.

    Handles datetime/date objects, Excel serial numbers (45356), yyyymmdd, yyyy-mm-dd,
    yyyy.mm.dd, 2024년 3월 5일, dd/mm/yyyy vs mm/dd/yyyy (a part > 12 decides; otherwise
    day-first, with a note), and month names.
    """
    if isinstance(value, dt.datetime):
        return value.date(), ""
    if isinstance(value, dt.date):
        return value, ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _date_from_number(float(value)), ""
    if not isinstance(value, str):
        return None, ""
    text = _nfkc(value).lower()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return _date_from_number(float(text)), ""
    if m := re.search(r"(\d{4})\s*[-./년]\s*(\d{1,2})\s*[-./월]\s*(\d{1,2})", text):
        return _safe_date(int(m[1]), int(m[2]), int(m[3])), ""
    if m := re.search(r"(\d{1,2})\s*[-./]\s*(\d{1,2})\s*[-./]\s*(\d{2,4})", text):
        a, b, y = int(m[1]), int(m[2]), int(m[3])
        if a > 12:
            return _safe_date(y, b, a), ""
        if b > 12:
            return _safe_date(y, a, b), ""
        date = _safe_date(y, b, a)
        note = "" if a == b else f"read as day/month ({date.isoformat() if date else '?'})"
        return date, note
    m = re.search(r"(\d{1,2})\s*-?\s*([a-z]{3,9})\.?\s*-?,?\s*(\d{2,4})", text)
    if m and m[2] in _MONTHS:  # 5 Mar 2024
        return _safe_date(int(m[3]), _MONTHS[m[2]], int(m[1])), ""
    m = re.search(r"([a-z]{3,9})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})", text)
    if m and m[1] in _MONTHS:  # March 5, 2024
        return _safe_date(int(m[3]), _MONTHS[m[1]], int(m[2])), ""
    return None, ""


def _date_from_number(number: float) -> dt.date | None:
    n = int(number)
    if 19000101 <= n <= 21001231:  # 20240305
        return _safe_date(n // 10000, n // 100 % 100, n % 100)
    if 10000 <= n <= 80000:  # an Excel serial day (1927–2119) in a cell not formatted as date
        return _EXCEL_EPOCH + dt.timedelta(days=n)
    return None


def _clean_text(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(_clean_text(v) for v in value if not _is_missing(v))
    return re.sub(r"\s+", " ", _nfkc(value))


def _display(value: Any) -> str:
    """Cell → display text for extra columns (dates as ISO, 65.0 as 65)."""
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(" ", "minutes")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, float):
        return f"{value:g}" if abs(value) < 1e15 else str(value)
    if isinstance(value, dict):
        return ", ".join(f"{k} {_display(v)}" for k, v in value.items() if not _is_missing(v))
    return _clean_text(value)


def _split_comorbidities(value: Any) -> list[str]:
    if isinstance(value, (list, tuple)):
        items = [_clean_text(v) for v in value if not _is_missing(v)]
    else:
        text = _clean_text(value)
        if text.lower() in _NO_COMORBIDITY:
            return []
        text = re.sub(r"(?i)\bs/p\b", "s\u2044p", text)  # keep "s/p lobectomy" whole
        items = [p.strip().replace("\u2044", "/") for p in re.split(r"[,;/\n]|\s\+\s", text)]
    return [i for i in items if i and i.lower() not in _MISSING_TOKENS]


# ---------------------------------------------------------------------------------------------
# PFT values

_PFT_NAME_RE = re.compile(
    r"(?<![a-z])(ppo\s*-?\s*)?(fev\s*1(?:\.0)?\s*/\s*fvc|fev\s*1(?:\.0)?\s*%?\s*fvc|rv\s*/\s*tlc|"
    r"dl\s*co\s*/\s*va|fef\s*25\s*-?\s*75%?|fev\s*1(?:\.0)?|fvc|dl\s*co|tlco|kco|tlc|pef|mvv|rv)"
    r"(?![a-z])", re.IGNORECASE)
_PFT_NUM_RE = re.compile(
    r"([-+]?\d+(?:[.,]\d+)?)\s*(%\s*(?:of\s*)?pred(?:icted)?|%|ml\s*/\s*min\s*/\s*mmhg|"
    r"mmol\s*/\s*min\s*/\s*kpa|l\s*/\s*s(?:ec)?\b|ml\b|cc\b|l(?:iters?|itres?)?\b)?", re.IGNORECASE)


def _canonical_measure(raw_name: str) -> str:
    compact = _compact(raw_name)
    ppo = compact.startswith("ppo")
    compact = compact.removeprefix("ppo")
    if compact == "fev1%fvc":
        compact = "fev1fvc"
    for pattern, name in _PFT_MEASURES:
        if compact.startswith(pattern):
            return ("ppo" if ppo else "") + name
    return raw_name.upper()


def _measure_base(name: str) -> str:
    return name.removeprefix("ppo").removesuffix(" post")


def _assign_pft(measure: str, number: float, unit: str, kind: str, scale: float,
                out: dict[str, dict[str, Any]]) -> None:
    """Put one number into ``out[measure]`` as value or percent, by unit, column kind or size."""
    base = _measure_base(measure)
    unit = re.sub(r"\s+", "", unit.lower())
    ratio = base in ("FEV1/FVC", "RV/TLC")
    entry = out.setdefault(measure, {"value": None, "unit": PFT_UNITS.get(base), "percent": None})
    if unit.startswith("%"):
        if "pred" in unit:
            slot = "percent"
        elif ratio:  # "70%" of a ratio is the ratio itself unless the column says % predicted
            slot = kind if kind in ("value", "percent") else "value"
        else:
            slot = "percent"
    elif unit in ("ml", "cc"):
        slot, scale = "value", 0.001
    elif unit.startswith("mmol"):
        slot, scale = "value", 2.986
    elif unit:
        slot = "value"
    elif kind in ("value", "percent"):
        slot = kind
    elif ratio:
        slot = "value"
    elif kind == "pred":
        if number <= 15:
            return  # litres of the predicted reference, not a percentage
        slot = "percent"
    elif base == "DLCO":
        slot = "percent" if number >= 40 else "value"  # ~15–35 mL/min/mmHg vs 40–140 %
    elif base in ("KCO",):
        slot = "percent" if number >= 20 else "value"
    elif base == "MVV":
        slot = "value"
    else:  # volumes and flows: litres are < 15, mL > 200, % predicted in between
        slot = "value" if number <= 15 or number > 200 else "percent"
        if number > 200:
            scale = 0.001
    if slot == "value":
        if entry["unit"] == "L" and scale == 1.0 and number > 200:
            scale = 0.001  # "2100" under a litres header is millilitres
        number *= scale
        if ratio and number <= 1.5:
            number *= 100.0  # 0.72 → 72 %
    if entry[slot] is None:
        entry[slot] = round(number, 4)


def parse_pft_text(text: str) -> dict[str, dict[str, Any]]:
    """``"FEV1 2.1 L (85%), FVC 3.0 L (90%), FEV1/FVC 70%"`` → ``{measure: {value, unit, percent}}``."""
    out: dict[str, dict[str, Any]] = {}
    text = _nfkc(text)
    names = list(_PFT_NAME_RE.finditer(text))
    for i, m in enumerate(names):
        measure = _canonical_measure(m.group(0))
        end = names[i + 1].start() if i + 1 < len(names) else len(text)
        segment = text[m.end():end]
        if re.search(r"(?i)\bpost\b", segment[:12]):
            measure += " post"
        for num in _PFT_NUM_RE.finditer(segment):
            _assign_pft(measure, _to_float(num.group(1)), num.group(2) or "", "auto", 1.0, out)
    return {k: v for k, v in out.items() if v["value"] is not None or v["percent"] is not None}


def _pft_cell(col: _PftCol, value: Any, out: dict[str, dict[str, Any]]) -> None:
    if isinstance(value, dict):  # JSON {"value": 2.1, "percent": 85, "unit": "L"}
        low = {str(k).lower(): v for k, v in value.items()}
        for key, slot in (("value", "value"), ("abs", "value"), ("measured", "value"),
                          ("percent", "percent"), ("pct", "percent"), ("%pred", "percent"),
                          ("percent_predicted", "percent"), ("pred%", "percent")):
            if key in low and not _is_missing(low[key]) and (num := _parse_number(low[key])):
                unit = str(low.get("unit") or "") if slot == "value" else "%pred"
                _assign_pft(col.measure, num[0], num[1] or unit, slot, col.scale, out)
        return
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        _assign_pft(col.measure, float(value), "", col.kind, col.scale, out)
        return
    for num in _PFT_NUM_RE.finditer(_nfkc(value)):
        _assign_pft(col.measure, _to_float(num.group(1)), num.group(2) or "", col.kind, col.scale, out)


_PFT_RANGES = {"L": (0.1, 12.0), "%": (10.0, 100.0), "L/s": (0.1, 20.0),
               "mL/min/mmHg": (1.0, 80.0), "mL/min/mmHg/L": (0.3, 15.0), "L/min": (5.0, 300.0)}


def _check_pft(pft: dict[str, dict[str, Any]], problems: list[Problem]) -> dict[str, dict[str, Any]]:
    ordered: dict[str, dict[str, Any]] = {}
    keys = sorted(pft, key=lambda k: (PFT_ORDER.index(_measure_base(k)) if _measure_base(k) in PFT_ORDER
                                      else len(PFT_ORDER), "post" in k, k.startswith("ppo")))
    for name in keys:
        entry = dict(pft[name])
        lo, hi = _PFT_RANGES.get(entry.get("unit") or "", (0.0, math.inf))
        if entry["value"] is not None and not lo <= entry["value"] <= hi:
            problems.append(Problem("warning", PART, f"{name} {entry['value']:g} {entry['unit']} is "
                                    "not plausible; it is left out."))
            entry["value"] = None
        if entry["percent"] is not None and not 1.0 <= entry["percent"] <= 250.0:
            problems.append(Problem("warning", PART, f"{name} {entry['percent']:g}% of predicted "
                                    "is not plausible; it is left out."))
            entry["percent"] = None
        if entry["value"] is not None or entry["percent"] is not None:
            ordered[name] = entry
    return ordered


# ---------------------------------------------------------------------------------------------
# Tumour location → AR lobe keys

_LOBE_BY_SIDE = {("right", "upper"): "right_upper_lobe", ("right", "middle"): "right_middle_lobe",
                 ("right", "lower"): "right_lower_lobe", ("left", "upper"): "left_upper_lobe",
                 ("left", "lower"): "left_lower_lobe"}
_KO_SIDE = {"우": "right", "오른": "right", "좌": "left", "왼": "left"}
_KO_POS = {"상": "upper", "중": "middle", "하": "lower"}
_POS_WORDS = {"upper": "upper", "middle": "middle", "mid": "middle", "lower": "lower"}
# Words that may sit between a side and its lobes without ending the phrase.
_KEEP_SIDE = {"and", "or", "lobe", "lobes", "lung", "side", "sided", "the", "of", "&", "+", "/",
              "lobectomy", "bilobectomy", "both", "plus", "to", "with", ",", "r", "l"}


def tumor_lobes_from_text(text: Any) -> list[str]:
    """AR lobe keys named in a free-text location, in ``LOBES`` order.

    "RUL", "right upper lobe", "Rt. lower lobe", "left upper", "LUL superior segment",
    "RUL and RML", "right upper and middle lobes", "lingula", "RS6", "우상엽" … "right lung"
    alone means its three lobes; "middle lobe" without a side means the right middle lobe.
    """
    if _is_missing(text):
        return []
    t = _nfkc(_clean_text(text)).lower()
    found: set[str] = set()
    for m in re.finditer(r"(우|좌|오른|왼)(?:측|쪽)?\s*(?:폐\s*)?(상|중|하)엽", t):
        lobe = _LOBE_BY_SIDE.get((_KO_SIDE[m[1]], _KO_POS[m[2]]))
        if lobe:
            found.add(lobe)
    if "설상엽" in t or re.search(r"lingul", t):
        found.add("left_upper_lobe")
    for m in re.finditer(r"(?<![a-z])(rul|rml|rll|lul|lll)(?![a-z])", t):
        found.add(AR_ABBREVIATIONS[m[1]])
    # Segments: right S1–3 upper, S4–5 middle, S6–10 lower; left S1–5 upper, S6–10 lower.
    for m in re.finditer(r"(?<![a-z])(right|left|rt|lt|r|l)\.?\s*-?\s*s(\d{1,2})(?!\d)", t):
        seg, right = int(m[2]), m[1].startswith("r")
        if 1 <= seg <= 10:
            pos = ("upper" if seg <= 3 else "middle" if seg <= 5 else "lower") if right \
                else ("upper" if seg <= 5 else "lower")
            found.add(_LOBE_BY_SIDE[("right" if right else "left", pos)])
    words = re.findall(r"[a-z]+|[&+/,]", re.sub(r"[-_]", " ", t))
    side: str | None = None
    sides_named: set[str] = set()
    lobes_by_words: set[str] = set()
    for i, w in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if w in ("right", "rt") or (w == "r" and nxt in _POS_WORDS):
            side = "right"
            sides_named.add(side)
        elif w in ("left", "lt") or (w == "l" and nxt in _POS_WORDS):
            side = "left"
            sides_named.add(side)
        elif w in _POS_WORDS:
            pos = _POS_WORDS[w]
            lobe = _LOBE_BY_SIDE.get((side, pos)) if side else (
                "right_middle_lobe" if pos == "middle" and nxt.startswith("lob") else None)
            if lobe:
                lobes_by_words.add(lobe)
        elif w not in _KEEP_SIDE:
            side = None  # "right hilum, upper mediastinum" names no lobe
    found |= lobes_by_words
    if not found and re.search(r"\blung\b", t):
        for s in sides_named:
            found.update(k for (sd, _), k in _LOBE_BY_SIDE.items() if sd == s)
    return [k for k in LOBES if k in found]


# ---------------------------------------------------------------------------------------------
# Reading files into rows of (header, value) pairs

Row = list[tuple[str, Any]]


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise LoadError(PART, f"The clinical sheet {path.name} could not be read.", str(exc)) from exc


def _decode_text(path: Path, data: bytes) -> str:
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):  # Excel's "Unicode text" export
        return data.decode("utf-16")
    if b"\x00" in data[:4096]:
        raise LoadError(PART, f"{path.name} is not a text file, so it cannot be read as a "
                        "clinical sheet; it may be damaged.", "NUL bytes in a text format")
    for enc in ("utf-8-sig", "cp949"):
        try:
            return data.decode(enc)
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1")  # never fails: Western European sheets


def _sniff_delimiter(text: str) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip()][:10]
    best, best_score = ",", (0, 0)
    for delim in (",", ";", "\t", "|"):
        rows = list(csv.reader(lines, delimiter=delim))
        if not rows:
            continue
        width = len(rows[0])
        consistent = sum(1 for r in rows if len(r) == width)
        score = (consistent if width > 1 else 0, width)
        if score > best_score:
            best, best_score = delim, score
    return best


def _read_csv(path: Path) -> list[list[Any]]:
    text = _decode_text(path, _read_bytes(path))
    delim = None
    first, _, rest = text.partition("\n")
    if m := re.fullmatch(r"\s*sep=(.)\s*", first):  # Excel's "sep=;" hint line
        delim, text = m[1], rest
    delim = delim or _sniff_delimiter(text)
    try:
        return [list(r) for r in csv.reader(io.StringIO(text), delimiter=delim)]
    except csv.Error as exc:
        raise LoadError(PART, f"{path.name} could not be read as a CSV table.", str(exc)) from exc


def _read_xlsx(path: Path) -> list[list[Any]]:
    import openpyxl  # lazy: only Excel cases pay for it

    try:
        wb = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # zipfile.BadZipFile, InvalidFileException, KeyError, …
        raise LoadError(PART, f"{path.name} could not be read as an Excel workbook; it may be "
                        "damaged or not really an .xlsx file.", f"{type(exc).__name__}: {exc}") from exc
    try:
        sheets = list(wb.worksheets)
        preferred = [s for s in sheets if re.search(r"patient|clinical|환자|임상", s.title, re.I)]
        for ws in [*preferred, *[s for s in sheets if s not in preferred]]:
            grid = [list(r) for r in ws.iter_rows(values_only=True)]
            if any(not _is_missing(c) for r in grid for c in r):
                return grid
        return []
    except Exception as exc:
        raise LoadError(PART, f"{path.name} could not be read as an Excel workbook; it may be "
                        "damaged.", f"{type(exc).__name__}: {exc}") from exc
    finally:
        wb.close()  # read-only workbooks keep the file open until closed


def _flatten_json(obj: dict[str, Any]) -> Row:
    row: Row = []
    for key, value in obj.items():
        key = str(key)
        if isinstance(value, dict):
            if _classify(key, {}).target == "pft":
                # {"pft": {"FEV1": {"value": 2.1, "percent": 85}, "FVC (L)": 3.0}}
                row.extend((str(k), v) for k, v in value.items())
            else:
                for k, v in value.items():
                    known = _classify(str(k), {}).target != "extra"
                    row.append((str(k) if known else f"{key}.{k}", v))
        else:
            row.append((key, value))
    return row


def _read_json(path: Path) -> list[Row]:
    text = _decode_text(path, _read_bytes(path))
    if not text.strip():
        raise LoadError(PART, f"The clinical sheet {path.name} is empty.")
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LoadError(PART, f"{path.name} is not valid JSON (line {exc.lineno}), so the patient "
                        "data cannot be read.", str(exc)) from exc
    items: list[Any]
    if isinstance(obj, dict):
        lists = [v for k, v in obj.items() if str(k).lower() in ("patients", "records", "rows", "data")
                 and isinstance(v, list)]
        if lists:
            items = lists[0]
        elif obj and all(isinstance(v, dict) for v in obj.values()) and not any(
                _classify(str(k), {}).target not in ("extra",) for k in obj):
            items = [{"patient_id": k, **v} for k, v in obj.items()]  # {"P001": {...}, ...}
        else:
            items = [obj]
    elif isinstance(obj, list):
        items = obj
    else:
        items = []
    rows = [_flatten_json(i) for i in items if isinstance(i, dict)]
    if not rows and items:
        raise LoadError(PART, f"{path.name} does not hold patient records (expected an object or "
                        "a list of objects).")
    if not rows:
        raise LoadError(PART, f"The clinical sheet {path.name} is empty.")
    return rows


def _column_letter(i: int) -> str:
    letters = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        letters = chr(65 + r) + letters
    return letters


def _is_header_cell(value: Any) -> bool:
    """Text that could name a column: has letters ("FEV1 (L)", "성별"), not "65" or a date."""
    return isinstance(value, str) and not _is_missing(value) and bool(
        re.search(r"[a-zA-Z\uac00-\ud7a3]", value))


_TRANSPOSED_TITLES = {"field", "fields", "item", "items", "variable", "parameter", "key", "항목"}


def _grid_to_rows(path: Path, grid: list[list[Any]], mapping_index: dict[str, str]) -> list[Row]:
    grid = [r for r in grid if any(not _is_missing(c) for c in r)]
    if not grid:
        raise LoadError(PART, f"The clinical sheet {path.name} is empty.")

    def known(cells: Iterable[Any]) -> int:
        return sum(1 for c in cells if _is_header_cell(c) and _classify(_nfkc(c), mapping_index).target
                   not in ("extra", "ignore"))

    # The header row is the one (among the first 20) naming the most known columns: this skips
    # title rows above the table.
    scores = [known(r) for r in grid[:20]]
    best = max(range(len(scores)), key=lambda i: (scores[i], -i))
    col0 = [r[0] if r else None for r in grid[:60]]
    if known(col0) > max(scores[best], 1):
        # A single-patient sheet written top to bottom: "Sex | F", "Age | 65".
        if _compact(str(grid[0][0] or "")) in _TRANSPOSED_TITLES:
            grid = grid[1:]  # a "Field | Value" caption row, not data
        col0 = [r[0] if r else None for r in grid[:60]]
        headers = [_nfkc(c) if not _is_missing(c) else f"Row {i + 1}" for i, c in enumerate(col0)]
        width = max(len(r) for r in grid)
        return [[(h, r[j] if j < len(r) else None) for h, r in zip(headers, grid, strict=False)]
                for j in range(1, width)]
    if scores[best] == 0:
        first = [c for c in grid[0] if not _is_missing(c)]
        if not first or not all(_is_header_cell(c) for c in first):
            raise LoadError(PART, f"{path.name} has no row of column names (such as Sex, Age, "
                            "Diagnosis), so its values cannot be matched to fields.")
        best = 0
    header_cells = grid[best]
    headers = [_nfkc(c) if not _is_missing(c) else f"Column {_column_letter(i)}"
               for i, c in enumerate(header_cells)]
    rows: list[Row] = []
    for r in grid[best + 1:]:
        extra_cols = [f"Column {_column_letter(i)}" for i in range(len(headers), len(r))]
        rows.append(list(zip([*headers, *extra_cols], r, strict=False)))
    return rows


# ---------------------------------------------------------------------------------------------
# Building the record

def _norm_id(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = _nfkc(value).casefold()
    return text.lstrip("0") or text


def _id_text(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else _nfkc(value)


def _in_range(key: str, value: float, shown: str, problems: list[Problem]) -> bool:
    lo, hi = _RANGES[key]
    if lo <= value <= hi:
        return True
    problems.append(Problem("warning", PART, f"{FIELD_LABELS[key]} {shown} in the clinical sheet "
                            "is not plausible; it is left out."))
    return False


def _unreadable(key: str, value: Any, problems: list[Problem]) -> None:
    problems.append(Problem("warning", PART, f"{FIELD_LABELS[key]} '{_clean_text(value)}' in the "
                            "clinical sheet could not be read; it is left out."))


def _height_cm(value: Any, unit: str) -> float | None:
    num = _parse_number(value)
    if num is None:
        return None
    x, cell_unit = num
    u = cell_unit or unit
    if u.startswith("mm"):
        return x / 10.0
    if u in ("in", "inch", "inches", '"'):
        return x * 2.54
    if u.startswith("cm"):
        return x
    if u in ("m", "meter", "meters", "metre", "metres") or x < 3.0:
        return x * 100.0  # 1.65 → 165 cm
    return x


def _weight_kg(value: Any, unit: str) -> float | None:
    num = _parse_number(value)
    if num is None:
        return None
    x, cell_unit = num
    u = cell_unit or unit
    if u.startswith(("lb", "pound")):
        return x * 0.45359237
    return x


def _first(values: dict[str, list[tuple[_Col, Any]]], key: str) -> tuple[_Col, Any] | None:
    return next(iter(values.get(key, [])), None)


def _build_record(row: Row, mapping_index: dict[str, str], path: Path,
                  problems: list[Problem]) -> ClinicalRecord:
    rec = ClinicalRecord(source=str(path), problems=problems)
    values: dict[str, list[tuple[_Col, Any]]] = {}
    pft: dict[str, dict[str, Any]] = {}
    for header, value in row:
        key = header
        n = 2
        while key in rec.raw:  # duplicate headers stay distinct in raw
            key, n = f"{header} ({n})", n + 1
        rec.raw[key] = value
        col = _classify(header, mapping_index)
        comorb_none = col.target == "comorbidities" and isinstance(value, str) \
            and _nfkc(value).lower() in _NO_COMORBIDITY
        if col.target == "ignore" or (_is_missing(value) and not comorb_none):
            continue
        if col.target == "extra":
            rec.extra[key] = _display(value)
        elif col.pft is not None:
            _pft_cell(col.pft, value, pft)
        elif col.target == "pft":
            if isinstance(value, dict):
                for k, v in value.items():
                    sub = _classify_pft(*normalize_header(k))
                    if sub:
                        _pft_cell(sub, v, pft)
            else:
                for name, entry in parse_pft_text(_clean_text(value)).items():
                    merged = pft.setdefault(name, entry)
                    for slot in ("value", "percent"):  # columns first, the text fills gaps
                        if merged[slot] is None:
                            merged[slot] = entry[slot]
        else:
            values.setdefault(col.target, []).append((col, value))

    f = rec.fields
    if first := _first(values, "patient_id"):
        rec.patient_id = _id_text(first[1])
    if first := _first(values, "sex"):
        if sex := _parse_sex(first[1]):
            f["sex"] = sex
        else:
            _unreadable("sex", first[1], problems)
    if first := _first(values, "age"):
        num = _parse_number(first[1]) if not isinstance(first[1], (dt.date, dt.datetime)) else None
        if num is None:
            _unreadable("age", first[1], problems)
        elif _in_range("age", num[0], f"{num[0]:g}", problems):
            f["age"] = int(num[0])
    if first := _first(values, "sex_age"):
        sex, age = _split_sex_age(first[1])
        if sex is None and age is None:
            _unreadable("sex", first[1], problems)
        if sex and "sex" not in f:
            f["sex"] = sex
        if age is not None and "age" not in f and _in_range("age", age, f"{age:g}", problems):
            f["age"] = int(age)
    if "age" not in f and (first := _first(values, "birth_date")):
        born, _ = parse_date(first[1])
        if born:
            at = dt.date.today()
            if first_op := _first(values, "operation_date"):
                at = parse_date(first_op[1])[0] or at
            age = at.year - born.year - ((at.month, at.day) < (born.month, born.day))
            if _in_range("age", age, str(age), problems):
                f["age"] = age
                rec.computed.add("age")
    for key in ("diagnosis", "operation_name", "tumor_location"):
        if first := _first(values, key):
            f[key] = _clean_text(first[1])
    if first := _first(values, "comorbidities"):
        f["comorbidities"] = _split_comorbidities(first[1])
    if first := _first(values, "operation_date"):
        date, note = parse_date(first[1])
        if date is None:
            _unreadable("operation_date", first[1], problems)
        else:
            f["operation_date"] = date.isoformat()
            if note:
                problems.append(Problem("info", PART, f"Operation date '{_clean_text(first[1])}' "
                                        f"was {note}.", "day-first is assumed when both parts ≤ 12"))
    for key, parse in (("height", _height_cm), ("weight", _weight_kg)):
        if first := _first(values, key):
            number = parse(first[1], first[0].unit)
            if number is None:
                _unreadable(key, first[1], problems)
            elif _in_range(key, number, _display(first[1]), problems):
                f[key] = round(number, 1)
    computed_bmi = None
    if "height" in f and "weight" in f:
        computed_bmi = round(f["weight"] / (f["height"] / 100.0) ** 2, 1)
    if first := _first(values, "bmi"):
        num = _parse_number(first[1])
        if num is None:
            _unreadable("bmi", first[1], problems)
        elif _in_range("bmi", num[0], f"{num[0]:g}", problems):
            f["bmi"] = round(num[0], 1)
            if computed_bmi is not None and abs(computed_bmi - f["bmi"]) > 1.0:
                problems.append(Problem("warning", PART, f"BMI {f['bmi']:g} in the clinical sheet "
                                        f"does not match height and weight (BMI {computed_bmi:g}); "
                                        "the sheet's value is shown."))
    if "bmi" not in f and computed_bmi is not None and _in_range("bmi", computed_bmi,
                                                                  f"{computed_bmi:g}", problems):
        f["bmi"] = computed_bmi
        rec.computed.add("bmi")
    pft = _check_pft(pft, problems)
    if pft:
        f["pft"] = pft
    rec.fields = {k: f[k] for k in IR_FIELDS if k in f}  # display order

    rec.tumor_lobes = tumor_lobes_from_text(f.get("tumor_location"))
    if not rec.tumor_lobes:
        for key in ("diagnosis", "operation_name"):
            if lobes := tumor_lobes_from_text(f.get(key)):
                rec.tumor_lobes = lobes
                problems.append(Problem("info", PART, f"The tumor lobe was taken from the "
                                        f"{FIELD_LABELS[key].lower()} ({f[key]})."))
                break
    if rec.missing:
        words = ", ".join(_MISSING_WORDS.get(k, FIELD_LABELS[k].lower()) for k in rec.missing)
        problems.append(Problem("warning", PART, f"Not in the clinical sheet: {words}."))
    return rec


_MISSING_WORDS = {"bmi": "BMI", "pft": "PFT", "operation_name": "operation name"}


def _choose_row(path: Path, rows: list[Row], patient: str | None, mapping_index: dict[str, str],
                problems: list[Problem]) -> Row:
    rows = [r for r in rows if any(not _is_missing(v) for _, v in r)]
    if not rows:
        raise LoadError(PART, f"{path.name} has column names but no patient rows.")

    id_headers = {h for r in rows for h, _ in r}  # classify each distinct header once
    id_headers = {h for h in id_headers if _classify(h, mapping_index).target == "patient_id"}

    def ids(row: Row) -> list[Any]:
        return [v for h, v in row if h in id_headers and not _is_missing(v)]

    if patient is not None:
        if not any(ids(r) for r in rows):
            raise LoadError(PART, f"{path.name} has no patient id column, so patient {patient} "
                            "cannot be chosen.", "id columns: patient_id, id, MRN, 등록번호 …")
        want = _norm_id(patient)
        matches = [r for r in rows if any(_norm_id(v) == want for v in ids(r))]
        if not matches:
            known = ", ".join(_id_text(i[0]) for r in rows if (i := ids(r)))
            raise LoadError(PART, f"Patient {patient} is not in {path.name}.", f"ids there: {known}")
        if len(matches) > 1:
            problems.append(Problem("warning", PART, f"Patient {patient} appears {len(matches)} "
                                    f"times in {path.name}; the first row is used."))
        return matches[0]
    if len(rows) > 1:
        first_id = ids(rows[0])
        who = f" (patient {_id_text(first_id[0])})" if first_id else ""
        problems.append(Problem("info", PART, f"{path.name} holds {len(rows)} patients; showing "
                                f"the first{who}. Name the patient in case.toml to choose another."))
    return rows[0]


def load_clinical(path: Path, mapping: dict[str, str] | None = None,
                  patient: str | None = None) -> ClinicalRecord:
    """Load one patient's record from a clinical .xlsx, .csv or .json file.

    ``mapping`` (header → field key, from case.toml) overrides :data:`DEFAULT_HEADER_MAP`;
    ``patient`` selects a row by its id column, else the first non-empty row is used.
    Raises :class:`LoadError` when the file cannot give a record at all.
    """
    path = Path(path)
    problems: list[Problem] = []
    mapping_index = _index_mapping(mapping, problems)
    suffix = path.suffix.lower()
    if suffix == ".xls":
        raise LoadError(PART, f"{path.name} is in the old Excel .xls format; save it as .xlsx or "
                        ".csv and load it again.")
    if suffix not in SUPPORTED_SUFFIXES:
        raise LoadError(PART, f"{path.name} is not a clinical sheet format the console reads "
                        "(use .xlsx, .csv or .json).", f"suffix {suffix or '(none)'}")
    if not path.is_file():
        raise LoadError(PART, f"The clinical sheet {path.name} was not found.", str(path))
    if suffix == ".json":
        rows = _read_json(path)
    else:
        grid = _read_xlsx(path) if suffix in (".xlsx", ".xlsm") else _read_csv(path)
        rows = _grid_to_rows(path, grid, mapping_index)
    row = _choose_row(path, rows, patient, mapping_index, problems)
    return _build_record(row, mapping_index, path, problems)


# ---------------------------------------------------------------------------------------------
# Display text for the IR box (DESIGN §1)

def _num(x: float, decimals: int = 1) -> str:
    """165.0 → "165", 62.5 → "62.5": no trailing zeros for body measures."""
    text = f"{x:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _pft_text(name: str, entry: dict[str, Any]) -> str:
    base = _measure_base(name)
    value, unit, pct = entry.get("value"), entry.get("unit"), entry.get("percent")
    if base in ("FEV1/FVC", "RV/TLC"):
        shown = f"{value:.0f}%" if value is not None else ""
        return f"{shown} ({pct:.0f}% pred)".strip() if pct is not None else shown
    if base in ("DLCO", "KCO") and pct is not None:
        return f"{pct:.0f}%"  # surgeons read diffusion as % predicted; the unit is noise
    parts = []
    if value is not None:
        digits = 2 if unit in ("L", "L/s") else 1
        parts.append(f"{value:.{digits}f} {unit}" if unit else f"{value:.{digits}f}")
    if pct is not None:
        parts.append(f"({pct:.0f}%)" if parts else f"{pct:.0f}%")
    return " ".join(parts)


def format_extra_lines(record: ClinicalRecord) -> list[tuple[str, str]]:
    """Unknown columns under their own header, in sheet order."""
    return [(h, v) for h, v in record.extra.items() if v]


def format_ir_lines(record: ClinicalRecord, fields: Iterable[str]) -> list[tuple[str, str]]:
    """(header, value) text pairs for the requested fields, in display order.

    Sex and age are one item ("Sex/Age", "F/65"); height, weight and BMI one item ("Body",
    "165 cm · 62 kg · BMI 22.8"); PFT one line per measure ("FEV1", "2.10 L (85%)"). A requested
    field with no value shows :data:`MISSING_TEXT`. ``"extra"`` in ``fields`` appends the
    unknown columns under their own headers.
    """
    wanted = set(fields)
    if wanted & {"sex", "age"}:
        wanted |= {"sex", "age"}
    f = record.fields
    lines: list[tuple[str, str]] = []
    for key in IR_FIELDS:
        if key not in wanted or key in ("age", "weight", "bmi") and key != _group_head(key, wanted):
            continue
        if key == "sex":
            parts = [str(f[k]) for k in ("sex", "age") if k in f]
            lines.append(("Sex/Age", "/".join(parts) or MISSING_TEXT))
        elif key in ("height", "weight", "bmi"):
            parts = []
            if "height" in wanted and "height" in f:
                parts.append(f"{_num(f['height'])} cm")
            if "weight" in wanted and "weight" in f:
                parts.append(f"{_num(f['weight'])} kg")
            if "bmi" in wanted and "bmi" in f:
                parts.append(f"BMI {f['bmi']:.1f}")
            lines.append(("Body", " · ".join(parts) or MISSING_TEXT))
        elif key == "pft":
            shown = [(n, t) for n, e in (f.get("pft") or {}).items() if (t := _pft_text(n, e))]
            lines.extend(shown or [("PFT", MISSING_TEXT)])
        elif key == "comorbidities":
            value = f.get(key)
            text = MISSING_TEXT if value is None else (", ".join(value) if value else "None")
            lines.append((FIELD_LABELS[key], text))
        else:
            lines.append((FIELD_LABELS[key], str(f[key]) if key in f else MISSING_TEXT))
    if "extra" in wanted:
        lines.extend(format_extra_lines(record))
    return lines


def _group_head(key: str, wanted: set[str]) -> str:
    """The first wanted key of its display group: the group is drawn there, once."""
    if key == "age":
        return "sex"
    group = ("height", "weight", "bmi")
    return next(k for k in group if k in wanted) if key in group else key
