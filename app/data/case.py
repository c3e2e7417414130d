"""A patient case folder (DESIGN §5.5): find its parts, load each, never crash.

Every part is optional. A part that fails to load becomes a plain-words problem and the rest
of the case still loads: a case without labels has no 3D model, without a CT no CT views.
"""

from __future__ import annotations

import logging
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.state import CaseContext
from app.data.problems import LoadError, Problem

log = logging.getLogger(__name__)

CT_FILE_SUFFIXES = (".nii", ".nii.gz", ".nrrd", ".nhdr", ".mha", ".mhd")
CLINICAL_SUFFIXES = (".xlsx", ".xlsm", ".csv", ".tsv", ".json")
VIDEO_SUFFIXES = (".mp4", ".mov", ".mkv", ".avi", ".webm", ".m4v", ".mpg", ".mpeg", ".ts")
MESH_SUFFIXES = (".stl", ".vtp", ".obj", ".ply")

Progress = Callable[[str, float], None]


@dataclass
class CaseConfig:
    """What case.toml says (all optional)."""

    name: str | None = None
    tumor_location: str | None = None
    patient: str | None = None
    ct: str | None = None
    labels: str | None = None
    label_table: dict[int, str] | None = None
    mesh_space: str = "LPS"
    clinical: str | None = None
    clinical_mapping: dict[str, str] | None = None
    video: str | None = None
    device: int | str | None = None


@dataclass
class Case:
    root: Path
    name: str
    config: CaseConfig
    ct: Any = None  # app.data.volume.Volume
    labels: Any = None  # app.data.labels.LabelSet
    clinical: Any = None  # app.data.clinical.ClinicalRecord
    video: Any = None  # app.data.video.VideoInfo
    video_path: Path | None = None
    video_device: int | str | None = None
    tumor_lobes: tuple[str, ...] = ()
    problems: list[Problem] = field(default_factory=list)
    paths: dict[str, Path | None] = field(default_factory=dict)
    timings_ms: dict[str, float] = field(default_factory=dict)

    def context(self) -> CaseContext:
        """What the state and the commands need to know about this case."""
        structures: tuple[str, ...] | None = ()
        if self.labels is not None:
            structures = tuple(sorted(self.labels.structures()))
        return CaseContext(
            iv_size=tuple(self.ct.size.items()) if self.ct is not None else None,
            tumor_lobes=self.tumor_lobes,
            structures=structures,
            has_clinical=self.clinical is not None,
        )

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]


# ------------------------------------------------------------------ case.toml
def read_case_config(root: Path) -> tuple[CaseConfig, list[Problem]]:
    cfg_path = root / "case.toml"
    if not cfg_path.is_file():
        return CaseConfig(), []
    try:
        data = tomllib.loads(cfg_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return CaseConfig(), [Problem("error", "case", "case.toml could not be read; the parts "
                                      "were searched for automatically instead.", str(exc))]
    problems: list[Problem] = []

    def section(name: str) -> dict[str, Any]:
        v = data.get(name, {})
        if isinstance(v, str):  # shorthand: ct = "ct/"
            return {"path": v}
        if not isinstance(v, dict):
            problems.append(Problem("warning", "case", f"case.toml: [{name}] should be a table; "
                                    "ignored."))
            return {}
        return v

    case_s, ct_s, lab_s, cli_s, vid_s = (section(n) for n in
                                         ("case", "ct", "labels", "clinical", "video"))
    table: dict[int, str] | None = None
    raw_table = lab_s.get("table")
    if isinstance(raw_table, dict):
        table = {}
        for k, v in raw_table.items():
            try:
                table[int(k)] = str(v)
            except ValueError:
                problems.append(Problem("warning", "labels", f"case.toml: label value {k!r} is "
                                        "not a whole number; ignored."))
    mapping = cli_s.get("mapping")
    device = vid_s.get("device", case_s.get("capture_device"))
    cfg = CaseConfig(
        name=case_s.get("name"),
        tumor_location=case_s.get("tumor_location") or data.get("tumor_location"),
        patient=cli_s.get("patient") or case_s.get("patient"),
        ct=ct_s.get("path"),
        labels=lab_s.get("path"),
        label_table=table,
        mesh_space=str(lab_s.get("mesh_space", "LPS")).upper(),
        clinical=cli_s.get("path"),
        clinical_mapping={str(k): str(v) for k, v in mapping.items()}
        if isinstance(mapping, dict) else None,
        video=vid_s.get("path"),
        device=device,
    )
    return cfg, problems


# ------------------------------------------------------------------ discovery
def _has_suffix(p: Path, suffixes: tuple[str, ...]) -> bool:
    name = p.name.lower()
    return any(name.endswith(s) for s in suffixes)


def _find_ct(root: Path) -> Path | None:
    for name in ("ct", "CT", "dicom", "DICOM"):
        if (root / name).is_dir():
            return root / name
    files = sorted(p for p in root.iterdir() if p.is_file() and _has_suffix(p, CT_FILE_SUFFIXES)
                   and p.name.lower().startswith(("ct", "image", "volume")))
    return files[0] if files else None


def _find_labels(root: Path) -> Path | None:
    for name in ("labels", "label", "segmentations", "seg", "masks", "meshes"):
        if (root / name).exists():
            return root / name
    files = sorted(p for p in root.iterdir() if p.is_file()
                   and _has_suffix(p, (".nii", ".nii.gz", ".nrrd"))
                   and any(w in p.name.lower() for w in ("label", "seg", "mask")))
    return files[0] if files else None


def _find_one(root: Path, suffixes: tuple[str, ...], prefer: tuple[str, ...]) -> Path | None:
    files = sorted(p for p in root.iterdir() if p.is_file() and _has_suffix(p, suffixes)
                   and not p.name.startswith((".", "~$")))
    for word in prefer:
        for p in files:
            if word in p.name.lower():
                return p
    return files[0] if files else None


def tumor_lobes_from_text(text: str | None) -> tuple[str, ...]:
    """Lobe keys named in a tumour-location text ("RUL", "right upper lobe", a key)."""
    from app.data.clinical import tumor_lobes_from_text as parse

    return tuple(sorted(parse(text)))


# ------------------------------------------------------------------ loading
def load_case(path: Path | str, progress: Progress | None = None,
              load_video: bool = True) -> Case:
    """Load every part of a case folder that exists. Raises LoadError only if the folder itself
    is unusable (missing, not a folder, unreadable)."""
    root = Path(path).expanduser()
    if not root.exists():
        raise LoadError("case", f"The case folder {root} does not exist.")
    if not root.is_dir():
        raise LoadError("case", f"{root} is not a folder; a case is a folder with ct/, labels/, "
                        "a clinical sheet and a video.")
    try:
        entries = list(root.iterdir())
    except OSError as exc:
        raise LoadError("case", f"The case folder {root} cannot be read.", str(exc)) from exc
    cfg, problems = read_case_config(root)
    case = Case(root=root, name=cfg.name or root.name, config=cfg, problems=problems)
    if not entries:
        case.problems.append(Problem("error", "case", f"The case folder {root} is empty."))
        return case

    def resolve(configured: str | None, finder: Callable[[], Path | None], part: str
                ) -> Path | None:
        if configured:
            p = (root / configured).expanduser()
            if not p.exists():
                case.problems.append(Problem("error", part, f"case.toml names {configured} for "
                                             f"the {part}, but it does not exist."))
                return None
            return p
        return finder()

    paths = {
        "ct": resolve(cfg.ct, lambda: _find_ct(root), "ct"),
        "labels": resolve(cfg.labels, lambda: _find_labels(root), "labels"),
        "clinical": resolve(cfg.clinical, lambda: _find_one(
            root, CLINICAL_SUFFIXES, ("clinical", "patient", "info")), "clinical"),
        "video": resolve(cfg.video, lambda: _find_one(
            root, VIDEO_SUFFIXES, ("video", "endo")), "video"),
    }
    case.paths = paths
    steps = 4

    def run(part: str, i: int, fn: Callable[[], Any]) -> Any:
        if progress:
            progress(f"loading {part}", i / steps)
        t0 = time.perf_counter()
        try:
            return fn()
        except LoadError as exc:
            case.problems.extend(exc.problems)
        except MemoryError:
            case.problems.append(Problem("error", part, f"The {part} is too large for this "
                                         "computer's memory."))
        except Exception as exc:  # noqa: BLE001 - a bad file must not stop the console
            log.exception("unexpected failure loading %s", part)
            case.problems.append(Problem("error", part, f"The {part} could not be loaded "
                                         "because of an unexpected error.", repr(exc)))
        finally:
            case.timings_ms[part] = round((time.perf_counter() - t0) * 1000, 1)
        return None

    if paths["ct"] is not None:
        from app.data.ct import load_ct

        case.ct = run("ct", 0, lambda: load_ct(paths["ct"]))
        if case.ct is not None:
            case.problems.extend(case.ct.problems)
    else:
        case.problems.append(Problem("warning", "ct", "No CT was found (expected a ct/ folder "
                                     "of DICOM files or a ct.nii.gz); the CT views are off."))

    if paths["labels"] is not None:
        from app.data.labels import load_labels

        case.labels = run("labels", 1, lambda: load_labels(
            paths["labels"], case.ct, label_table=cfg.label_table, mesh_space=cfg.mesh_space))
        if case.labels is not None:
            case.problems.extend(case.labels.problems)
    else:
        case.problems.append(Problem("warning", "labels", "No label maps or meshes were found "
                                     "(expected a labels/ folder); the 3D model is off."))

    if paths["clinical"] is not None:
        from app.data.clinical import load_clinical

        case.clinical = run("clinical", 2, lambda: load_clinical(
            paths["clinical"], mapping=cfg.clinical_mapping, patient=cfg.patient))
        if case.clinical is not None:
            case.problems.extend(case.clinical.problems)
    else:
        case.problems.append(Problem("warning", "clinical", "No clinical sheet was found "
                                     "(clinical.xlsx, .csv or .json); patient information is "
                                     "off."))

    case.video_device = cfg.device
    if paths["video"] is not None:
        case.video_path = paths["video"]
        if load_video:
            from app.data.video import probe_video

            case.video = run("video", 3, lambda: probe_video(paths["video"]))
    elif cfg.device is None:
        case.problems.append(Problem("info", "video", "No endoscope video file or capture "
                                     "device is named; the overlays are shown on a dark "
                                     "background."))

    case.tumor_lobes = _tumor_lobes(case)
    if progress:
        progress("case loaded", 1.0)
    log.info("case loaded", extra={"data": {"event": "case.loaded", "case": str(root),
                                            "timings_ms": case.timings_ms,
                                            "problems": [str(p) for p in case.problems]}})
    return case


def _tumor_lobes(case: Case) -> tuple[str, ...]:
    lobes = tumor_lobes_from_text(case.config.tumor_location)
    if lobes:
        return lobes
    rec = case.clinical
    if rec is not None:
        derived = getattr(rec, "tumor_lobes", None) or rec.fields.get("tumor_lobes")
        if derived:
            return tuple(sorted(derived))
        lobes = tumor_lobes_from_text(rec.fields.get("tumor_location"))
        if lobes:
            return lobes
        if rec.fields.get("tumor_location"):
            case.problems.append(Problem(
                "warning", "clinical",
                f"The tumour location {rec.fields.get('tumor_location')!r} names no lung lobe; "
                "the 3D model starts with all lobes."))
    return ()
