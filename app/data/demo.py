"""The built-in demo case: a synthetic chest case generated on first use (DESIGN §5.5).

Everything here is synthetic and deterministic (fixed seeds, UIDs derived from fixed entropy):
- ``ct/``: a chest CT as a real DICOM series (CT Image Storage, one file per slice, file names
  in random order) with plausible HU values: air, skin/fat/muscle, mediastinum and heart, aorta,
  spine, ribs and sternum, lungs with a density gradient and texture, pulmonary vessels, an
  airway tree, five lobes separated by fissures, and a spiculated nodule in the right upper lobe;
- ``labels/``: TotalSegmentator-style per-structure NIfTI masks on the CT grid (RAS affine);
- ``clinical.xlsx``: one patient row with hospital-style headers;
- ``video.mp4``: an endoscope-like clip (tissue, specular highlights, two instruments);
- ``case.toml`` and ``README.txt``.

The case goes through the same loaders as a hospital's case. It is written into a temporary
sibling folder and moved into place only when complete, and a marker file written last records
the version, so a half-written or outdated case is regenerated rather than trusted.

Patient coordinates are DICOM LPS millimetres (x toward the patient's left, y posterior,
z superior). The generator builds ``hu[k, r, c]`` with slice k at z = z0 + k*dz, row r at
y = y0 + r*dx and column c at x = x0 + c*dx, which is exactly what each DICOM slice stores with
ImageOrientationPatient (1,0,0,0,1,0).
"""

from __future__ import annotations

import errno
import io
import json
import logging
import math
import os
import re
import shutil
import sys
import time
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

import numpy as np

from app.runtime.settings import settings

log = logging.getLogger(__name__)

VERSION = "v1"
CASE_DIRNAME = f"demo-case-{VERSION}"
MARKER = ".demo-complete.json"
SEED = 20240514
ENV_DATA_DIR = "VISA_DATA_DIR"

Progress = Callable[[str, float], None]

# Everything the generator writes; a folder holding only these may be replaced.
CASE_FILES = ("ct", "labels", "clinical.xlsx", "video.mp4", "case.toml", "README.txt", MARKER)

# Lobe ids of the internal label volume, and the TotalSegmentator file name of each structure.
LUL, LLL, RUL, RML, RLL = 1, 2, 3, 4, 5
LABEL_FILES: dict[str, int | str] = {
    "lung_upper_lobe_left": LUL,
    "lung_lower_lobe_left": LLL,
    "lung_upper_lobe_right": RUL,
    "lung_middle_lobe_right": RML,
    "lung_lower_lobe_right": RLL,
    "lung_nodules": "nodule",
    "lung_trachea_bronchia": "airway",
}

# ----------------------------------------------------------------------------- anatomy (LPS mm)
# Body cross-section: a superellipse (flatter back and sides than an ellipse).
BODY_AX, BODY_AY, BODY_YC, BODY_P = 165.0, 118.0, 8.0, 2.3
# Inner thoracic cavity (inside the ribs); it narrows toward the neck.
CAV_AX, CAV_AY, CAV_YC = 136.0, 92.0, 4.0
# Lungs: one ellipse per side, tapering to a dome at the apex.
LUNG_CX, LUNG_CY, LUNG_W, LUNG_D, LUNG_Z_FULL = 70.0, 8.0, 62.0, 88.0, -40.0
LUNG_APEX = {-1: 42.0, 1: 40.0}  # right (x < 0) apex slightly higher
# Heart: an ellipsoid resting on the diaphragm, shifted to the patient's left and anterior.
HEART_C, HEART_R = (12.0, -28.0, -108.0), (62.0, 52.0, 50.0)
SPINE_C = (0.0, 72.0)  # vertebral body centre (x, y)
VERT_Z0, VERT_PITCH, DISC = -231.0, 29.0, 5.0
NODULE_CENTER_LPS = (-80.0, 5.0, -28.0)
NODULE_RADIUS_MM = 9.5

# HU values.
HU_AIR, HU_FAT, HU_SKIN, HU_MUSCLE, HU_SOFT = -1000.0, -100.0, 20.0, 45.0, 35.0
HU_MED_FAT, HU_BLOOD, HU_MYO, HU_LIVER, HU_LUNG = -85.0, 50.0, 38.0, 55.0, -860.0

# Points with a known tissue, for tests and sanity checks (LPS mm).
LANDMARKS_LPS: dict[str, tuple[float, float, float]] = {
    "outside": (-165.0, -160.0, 0.0),
    "trachea_lumen": (0.0, 7.6, 40.0),
    "lung_right_upper": (-95.0, -35.0, 5.0),
    "lung_left_lower": (85.0, 60.0, -120.0),
    "spine": (SPINE_C[0], SPINE_C[1], VERT_Z0 + DISC + 12.0 + 7 * VERT_PITCH),
    "liver": (-60.0, 0.0, -215.0),
    "heart": (HEART_C[0], HEART_C[1], HEART_C[2]),
    "subcutaneous_fat": (-158.0, 8.0, -50.0),
    "nodule": NODULE_CENTER_LPS,
}

CLINICAL_HEADERS = (
    "Patient ID", "sex/age", "Ht (cm)", "bw (kg)", "BMI", "Diagnosis", "Comorbidities",
    "Operation name", "Operation date", "Tumor location", "PFT_PRE_FEV1 (L)",
    "PFT_PRE_FEV1 (%)", "PFT_PRE_FVC (L)", "PFT_PRE_FVC (%)", "DLCO (%)", "Smoking (pack-years)",
)
CLINICAL_ROW = (
    "DEMO-0001", "F/65", 162, 58.5, 22.3,
    "Lung adenocarcinoma, right upper lobe (cT1cN0M0)",
    "Hypertension; type 2 diabetes mellitus",
    "Robotic-assisted right upper lobectomy with mediastinal lymph node dissection",
    date(2024, 5, 14), "RUL", 2.31, 96, 2.95, 98, 88, 20,
)


class DemoCaseError(RuntimeError):
    """The demo case cannot be written where asked; the message says why in plain words."""


# ----------------------------------------------------------------------------- locations
def data_dir() -> Path:
    """The user data directory (``$VISA_DATA_DIR`` overrides the platform default)."""
    env = settings().data_dir
    if env:
        return env
    import platformdirs

    return Path(platformdirs.user_data_dir("visa-console"))


def default_case_dir(scale: float = 1.0) -> Path:
    name = CASE_DIRNAME if scale == 1.0 else f"{CASE_DIRNAME}-s{scale:g}"
    return data_dir() / name


def is_complete(case_dir: Path, scale: float = 1.0) -> bool:
    """True if ``case_dir`` holds a finished demo case of this version (marker and files)."""
    try:
        info = json.loads((case_dir / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    try:
        if info.get("version") != CASE_DIRNAME or float(info.get("scale", -1)) != float(scale):
            return False
        if not all((case_dir / f).exists() for f in info.get("files", ())):
            return False
        # Cheap check that no slice or label file went missing after the marker was written.
        return all(len(os.listdir(case_dir / d)) == int(n)
                   for d, n in info.get("counts", {}).items())
    except (OSError, TypeError, ValueError, AttributeError):
        return False


# ----------------------------------------------------------------------------- entry points
def ensure_demo_case(force: bool = False, out: Path | None = None,
                     progress: Progress | None = None, *, _scale: float = 1.0) -> Path:
    """Return the demo case folder, generating it first if it is missing, partial or outdated.

    ``out`` is the case folder itself (default: ``<data dir>/demo-case-v1``). An existing folder
    is only replaced when it is empty or holds nothing but demo-case files. ``progress`` gets
    (stage, overall fraction 0..1). ``_scale`` shrinks the CT grid and the video (tests only).
    Raises :class:`DemoCaseError` or ``OSError`` when the case cannot be written.
    """
    case_dir = Path(out).expanduser() if out is not None else default_case_dir(_scale)
    if not force and is_complete(case_dir, _scale):
        return case_dir
    if case_dir.exists() and not _replaceable(case_dir):
        raise DemoCaseError(f"{case_dir} already exists and is not a demo case folder; choose "
                            "an empty or new folder for the demo case.")
    parent = case_dir.parent
    parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_partials(case_dir)
    tmp = parent / f".{case_dir.name}.partial-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    t0 = time.perf_counter()
    try:
        _generate(tmp, _scale, progress or (lambda stage, frac: None))
        _write_marker(tmp, _scale, time.perf_counter() - t0)
        _move_into_place(tmp, case_dir, _scale)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    log.info("demo case generated", extra={"data": {
        "event": "demo.generated", "path": str(case_dir),
        "seconds": round(time.perf_counter() - t0, 2)}})
    if progress:
        progress("done", 1.0)
    return case_dir


def run_demo_command(force: bool, out: Path | None) -> int:
    """`visa-console demo`: generate (or locate) the demo case and say where it is."""
    target = Path(out).expanduser() if out is not None else default_case_dir()
    if not force and is_complete(target):
        print(f"The demo case is ready at {target}")
        return 0
    print(f"Generating the demo case in {target} (synthetic data, not a patient) ...", flush=True)
    last: list[str] = []

    def report(stage: str, frac: float) -> None:
        if not last or last[-1] != stage:
            last.append(stage)
            print(f"  [{frac * 100:3.0f}%] {stage}", flush=True)

    t0 = time.perf_counter()
    try:
        path = ensure_demo_case(force=force, out=out, progress=report)
    except DemoCaseError as exc:
        print(f"Could not create the demo case: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"Could not create the demo case: {_plain_os_error(exc)}", file=sys.stderr)
        return 1
    print(f"The demo case is ready at {path} (generated in {time.perf_counter() - t0:.1f} s)")
    return 0


def _plain_os_error(exc: OSError) -> str:
    where = f" ({exc.filename})" if exc.filename else ""
    if exc.errno == errno.ENOSPC:
        return f"the disk is full{where}; free some space and try again."
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"permission denied{where}; choose a folder you can write to (--out)."
    return f"{exc.strerror or exc}{where}."


# ----------------------------------------------------------------------------- folder handling
def _replaceable(case_dir: Path) -> bool:
    if not case_dir.is_dir():
        return False
    names = {p.name for p in case_dir.iterdir()}
    return MARKER in names or names <= set(CASE_FILES)


def _remove_stale_partials(case_dir: Path) -> None:
    """Remove temporary folders left by generators that died (their process is gone)."""
    leftovers = [*case_dir.parent.glob(f".{case_dir.name}.partial-*"),
                 *case_dir.parent.glob(f".{case_dir.name}.old-*")]
    for p in leftovers:
        try:
            pid = int(p.name.rsplit("-", 1)[1])
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(p, ignore_errors=True)
        except (ValueError, PermissionError, OSError):
            continue


def _move_into_place(tmp: Path, case_dir: Path, scale: float) -> None:
    old = None
    if case_dir.exists():
        old = case_dir.parent / f".{case_dir.name}.old-{os.getpid()}"
        shutil.rmtree(old, ignore_errors=True)
        case_dir.rename(old)
    try:
        tmp.rename(case_dir)
    except OSError:
        # Another process finished first: keep its complete case.
        if not is_complete(case_dir, scale):
            raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _write_marker(folder: Path, scale: float, seconds: float) -> None:
    counts = {d: len(os.listdir(folder / d)) for d in ("ct", "labels")}
    info = {"version": CASE_DIRNAME, "scale": scale, "files": list(CASE_FILES[:-1]),
            "counts": counts,
            "generator": __name__, "seconds": round(seconds, 2),
            "note": "synthetic demo case, not a patient"}
    (folder / MARKER).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")


def _generate(folder: Path, scale: float, progress: Progress) -> None:
    grid = _Grid.make(scale)
    progress("building the synthetic CT", 0.0)
    hu, lobe, nodule, airway = _build_ct(grid, lambda f: progress("building the synthetic CT",
                                                                  0.35 * f))
    progress("writing the DICOM series", 0.35)
    _write_dicom(folder / "ct", grid, hu)
    del hu
    progress("writing the label maps", 0.45)
    _write_labels(folder / "labels", grid, lobe, nodule, airway)
    del lobe, nodule, airway
    progress("writing the clinical sheet", 0.55)
    _write_clinical(folder / "clinical.xlsx")
    progress("encoding the endoscope video", 0.56)
    _write_video(folder / "video.mp4", scale,
                 lambda f: progress("encoding the endoscope video", 0.56 + 0.43 * f))
    _write_case_files(folder, grid)


# ----------------------------------------------------------------------------- CT grid
@dataclass(frozen=True)
class _Grid:
    nx: int  # columns (x, patient left) = rows (y, posterior)
    nz: int  # slices (z, superior)
    dx: float
    dz: float
    x0: float
    y0: float
    z0: float

    @classmethod
    def make(cls, scale: float) -> _Grid:
        # 512 x 512 at 0.7 mm, 128 slices at 2.5 mm (z -240 .. +77.5): the chest from the upper
        # abdomen to the root of the neck. ``scale`` keeps the field of view, fewer voxels.
        nx = max(32, int(round(512 * scale / 2)) * 2)
        nz = max(16, int(round(128 * scale)))
        dx = round(358.4 / nx, 6)
        dz = round(320.0 / nz, 6)
        x0 = round(-(nx - 1) / 2 * dx, 4)
        return cls(nx=nx, nz=nz, dx=dx, dz=dz, x0=x0, y0=round(x0 + BODY_YC, 4), z0=-240.0)

    @property
    def xs(self) -> np.ndarray:
        return (self.x0 + np.arange(self.nx) * self.dx).astype(np.float32)

    @property
    def ys(self) -> np.ndarray:
        return (self.y0 + np.arange(self.nx) * self.dx).astype(np.float32)

    @property
    def zs(self) -> np.ndarray:
        return (self.z0 + np.arange(self.nz) * self.dz).astype(np.float32)

    def to_index(self, p: np.ndarray) -> np.ndarray:
        """LPS mm → fractional (k, r, c)."""
        return np.array([(p[2] - self.z0) / self.dz, (p[1] - self.y0) / self.dx,
                         (p[0] - self.x0) / self.dx])


# ----------------------------------------------------------------------------- analytic shapes
def _cavity_scale(z: np.ndarray | float) -> np.ndarray:
    """Width factor of the rib cage: 1 below the upper chest, narrowing toward the neck."""
    z = np.asarray(z, dtype=np.float32)
    u = np.clip((z - LUNG_Z_FULL) / 120.0, 0.0, 1.0)
    return (0.45 + 0.55 * np.sqrt(1.0 - u * u) + _widening(z)).astype(np.float32)


def _widening(z: np.ndarray | float) -> np.ndarray:
    """The chest widens a little toward the lung bases."""
    return 0.07 * np.clip((LUNG_Z_FULL - np.asarray(z, dtype=np.float32)) / 110.0, 0.0, 1.0)


def _lung_taper(z: np.ndarray | float, apex: float) -> np.ndarray:
    u = np.clip((np.asarray(z, dtype=np.float32) - LUNG_Z_FULL) / (apex - LUNG_Z_FULL), 0.0, 1.0)
    return np.sqrt(1.0 - u * u).astype(np.float32)


def _diaphragm(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Height of the diaphragm surface: two domes, the right one higher (liver below it)."""
    right = -148.0 - 50.0 * (((x + 60.0) / 70.0) ** 2 + ((y - 5.0) / 90.0) ** 2)
    left = -160.0 - 50.0 * (((x - 62.0) / 70.0) ** 2 + ((y - 5.0) / 90.0) ** 2)
    return np.maximum(right, left).astype(np.float32)


def _heart_e(x: np.ndarray, y: np.ndarray, z: np.ndarray | float, pad: float = 0.0) -> np.ndarray:
    (cx, cy, cz), (rx, ry, rz) = HEART_C, HEART_R
    return (((x - cx) / (rx + pad)) ** 2 + ((y - cy) / (ry + pad)) ** 2
            + ((z - cz) / (rz + pad)) ** 2)


def _mediastinum_halfwidth(y: np.ndarray) -> np.ndarray:
    # Lungs nearly meet behind the sternum (anterior junction); wider around aorta and spine.
    return 9.0 + 24.0 * np.clip((y + 85.0) / 170.0, 0.0, 1.0)


def _lungs(x: np.ndarray, y: np.ndarray, z: np.ndarray | float,
           zd: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Lobe id (0 = not lung) and distance to the nearest fissure (mm) at points (x, y, z).

    Oblique fissures run from posterior-superior to anterior-inferior on both sides; the right
    horizontal fissure splits the upper from the middle lobe anterior to the oblique one.
    """
    if zd is None:
        zd = _diaphragm(x, y)
    s = _cavity_scale(z)
    base = ((x / (CAV_AX * s)) ** 2 + ((y - CAV_YC) / (CAV_AY * s)) ** 2 < 1.0) & (z > zd)
    base &= _heart_e(x, y, z, pad=6.0) >= 1.0
    sx, sy = x - SPINE_C[0], y - SPINE_C[1]
    base &= (sx * sx + sy * sy >= 26.0**2) & ~((np.abs(sx) < 24.0) & (sy > -12.0))
    wm = _mediastinum_halfwidth(y)
    lobe = np.zeros(np.broadcast_shapes(np.shape(x), np.shape(y), np.shape(z)), np.uint8)
    fis = np.full(lobe.shape, 99.0, np.float32)
    for side in (-1, 1):
        t = _lung_taper(z, LUNG_APEX[side])
        tt = np.maximum(t, 1e-3)
        cx = side * (LUNG_CX - 22.0 * (1.0 - t))
        cy = LUNG_CY + 12.0 * (1.0 - t)
        wide = LUNG_W * tt * (1.0 + _widening(z))
        env = ((x - cx) / wide) ** 2 + ((y - cy) / (LUNG_D * tt)) ** 2 < 1.0
        lung = base & env & (side * x > wm) & (t > 0.0)
        f = (-95.0 if side < 0 else -88.0) + y + 0.0015 * (x - side * LUNG_CX) ** 2
        lower = z < f
        d_obl = np.abs(z - f) / math.sqrt(2.0)
        if side > 0:
            ids = np.where(lower, LLL, LUL)
            dist = d_obl
        else:
            g = -75.0 + 0.18 * y + 0.05 * (x + LUNG_CX)
            ids = np.where(lower, RLL, np.where(z < g, RML, RUL))
            dist = np.where(lower, d_obl, np.minimum(d_obl, np.abs(z - g) / 1.018))
        lobe = np.where(lung, ids, lobe).astype(np.uint8)
        fis = np.where(lung, dist, fis).astype(np.float32)
    return lobe, fis


def _lobe_at(points: np.ndarray) -> np.ndarray:
    p = np.asarray(points, dtype=np.float32)
    return _lungs(p[:, 0], p[:, 1], p[:, 2])[0]


# ----------------------------------------------------------------------------- CT volume
def _build_ct(g: _Grid, progress: Callable[[float], None]
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The HU volume hu[k, r, c] (float32) and label volumes (lobe ids, nodule, airway)."""
    rng = np.random.default_rng(SEED)
    xs, ys, zs = g.xs, g.ys, g.zs
    X, Y = np.meshgrid(xs, ys)  # (rows=y, cols=x)
    zd = _diaphragm(X, Y)
    body_xp = np.abs(X / BODY_AX) ** BODY_P
    body_yp = np.abs((Y - BODY_YC) / BODY_AY) ** BODY_P
    # Low-frequency lung texture (~6 mm blobs), interpolated per slice from a coarse grid.
    coarse = rng.standard_normal((int(320 / 8) + 2, 62, 62)).astype(np.float32)
    from scipy import ndimage

    shape = (g.nz, g.nx, g.nx)
    hu = np.empty(shape, np.float32)
    lobe = np.empty(shape, np.uint8)
    for k, z in enumerate(zs):
        zc = (float(z) - g.z0) / 8.0
        k0 = int(zc)
        w = zc - k0
        tex2 = (1 - w) * coarse[k0] + w * coarse[k0 + 1]
        tex = ndimage.zoom(tex2, (g.nx / 62, g.nx / 62), order=1)
        hu[k], lobe[k] = _base_slice(X, Y, float(z), zd, body_xp + body_yp, tex)
        if k % 16 == 0:
            progress(0.4 * k / g.nz)
    progress(0.4)
    airway = np.zeros(shape, np.uint8)
    painter = _Painter(g, hu, lobe, airway)
    _paint_mediastinum(painter)
    _paint_bones(painter)
    progress(0.55)
    _paint_airways(painter, np.random.default_rng(SEED + 1))
    _paint_vessels(painter, np.random.default_rng(SEED + 2))
    progress(0.8)
    nodule = _paint_nodule(painter, np.random.default_rng(SEED + 3))
    # Scanner noise last, so every tissue gets the same mild grain.
    noise_rng = np.random.default_rng(SEED + 4)
    for k in range(g.nz):
        hu[k] += noise_rng.standard_normal((g.nx, g.nx), dtype=np.float32) * 12.0
    progress(1.0)
    return hu, lobe, nodule, airway


def _base_slice(X: np.ndarray, Y: np.ndarray, z: float, zd: np.ndarray, body_rp: np.ndarray,
                tex: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One axial slice without tubes: body wall, cavity organs, spine, sternum, lungs."""
    hu = np.full(X.shape, HU_AIR, np.float32)
    # Body wall: skin, subcutaneous fat, muscle (ribs are painted later as tubes).
    body = body_rp < 1.0
    hu[body] = HU_FAT
    hu[body_rp < 0.9**BODY_P] = HU_MUSCLE
    hu[body & (body_rp > 0.985**BODY_P)] = HU_SKIN
    # The scanner table under the patient (curved carbon-fibre plate).
    ty = Y - 0.0006 * X * X
    hu[(ty > 133.0) & (ty < 139.0) & (np.abs(X) < 160.0)] = 180.0
    s = float(_cavity_scale(z))
    cav = (X / (CAV_AX * s)) ** 2 + ((Y - CAV_YC) / (CAV_AY * s)) ** 2 < 1.0
    above = z > zd
    hu[cav] = HU_SOFT
    # Upper abdomen under the domes: liver on the right, stomach and spleen on the left.
    hu[cav & ~above] = np.where(X[cav & ~above] < 25.0, HU_LIVER, 38.0)
    hu[cav & above & (np.abs(X) < _mediastinum_halfwidth(Y))] = HU_MED_FAT
    # Heart with pericardial fat around it.
    he = _heart_e(X, Y, z)
    hu[cav & above & (he >= 1.0) & (he < 1.1**2)] = -90.0
    hu[he < 1.0] = HU_MYO
    hu[he < 0.55] = HU_BLOOD
    _spine_slice(hu, X, Y, z)
    _sternum_slice(hu, X, Y, z, s)
    lobe, fis = _lungs(X, Y, z, zd)
    lung = lobe > 0
    # Dependent (posterior) lung is denser; fissures are thin, slightly denser planes.
    lung_hu = (HU_LUNG + 35.0 * (Y - LUNG_CY) / LUNG_D + 18.0 * tex
               + 300.0 * np.exp(-((fis / 0.6) ** 2)))
    hu[lung] = lung_hu[lung]
    return hu, lobe


def _spine_slice(hu: np.ndarray, X: np.ndarray, Y: np.ndarray, z: float) -> None:
    phase = (z - VERT_Z0) % VERT_PITCH
    dx, dy = X - SPINE_C[0], Y - SPINE_C[1]
    r2 = dx * dx + dy * dy
    if phase < DISC:
        hu[r2 < 17.0**2] = 80.0  # intervertebral disc
    else:
        hu[r2 < 17.0**2] = 800.0  # cortex
        hu[r2 < 15.5**2] = 380.0  # cancellous bone
    cy = Y - (SPINE_C[1] + 27.0)
    c2 = dx * dx + cy * cy
    if 8.0 < phase < 22.0:  # posterior elements at mid-vertebra
        arch = (c2 < 15.0**2) & (cy > -8.0)
        arch |= (np.abs(dx) < 4.0) & (cy > 5.0) & (cy < 27.0)  # spinous process
        arch |= (np.abs(dx) > 12.0) & (np.abs(dx) < 36.0) & (cy > -13.0) & (cy < -4.0)
        hu[arch] = 650.0
    hu[c2 < 9.0**2] = 15.0  # spinal canal (CSF)
    hu[c2 < 5.0**2] = 35.0  # cord


def _sternum_slice(hu: np.ndarray, X: np.ndarray, Y: np.ndarray, z: float, s: float) -> None:
    if not -120.0 <= z <= 28.0:
        return
    half = 24.0 if z > -5.0 else 15.0  # manubrium is wider than the body
    y1 = CAV_YC - CAV_AY * s + 1.0
    y0 = y1 - 11.0
    box = (np.abs(X) < half) & (y0 < Y) & (y1 > Y)
    hu[box] = 750.0
    hu[(np.abs(X) < half - 1.5) & (y0 + 1.5 < Y) & (y1 - 1.5 > Y)] = 300.0


@dataclass
class _Painter:
    """Rasterises tubes (line segments with a radius) into the volumes inside a bounding box."""

    g: _Grid
    hu: np.ndarray
    lobe: np.ndarray
    airway: np.ndarray

    def box(self, pts: np.ndarray, margin: float
            ) -> tuple[tuple[slice, slice, slice], np.ndarray, np.ndarray, np.ndarray] | None:
        g = self.g
        lo = pts.min(axis=0) - margin
        hi = pts.max(axis=0) + margin
        k0, k1 = max(0, math.floor((lo[2] - g.z0) / g.dz)), min(g.nz, math.ceil((hi[2] - g.z0) / g.dz) + 1)
        r0, r1 = max(0, math.floor((lo[1] - g.y0) / g.dx)), min(g.nx, math.ceil((hi[1] - g.y0) / g.dx) + 1)
        c0, c1 = max(0, math.floor((lo[0] - g.x0) / g.dx)), min(g.nx, math.ceil((hi[0] - g.x0) / g.dx) + 1)
        if k0 >= k1 or r0 >= r1 or c0 >= c1:
            return None
        zz = (g.z0 + np.arange(k0, k1) * g.dz).astype(np.float32)[:, None, None]
        yy = (g.y0 + np.arange(r0, r1) * g.dx).astype(np.float32)[None, :, None]
        xx = (g.x0 + np.arange(c0, c1) * g.dx).astype(np.float32)[None, None, :]
        return (slice(k0, k1), slice(r0, r1), slice(c0, c1)), xx, yy, zz

    def segment(self, p0: Sequence[float], p1: Sequence[float], margin: float
                ) -> tuple[tuple[slice, slice, slice], np.ndarray] | None:
        """Bounding box and distance (mm) from each voxel in it to the segment p0–p1."""
        a, b = np.asarray(p0, np.float32), np.asarray(p1, np.float32)
        res = self.box(np.stack([a, b]), margin)
        if res is None:
            return None
        sl, xx, yy, zz = res
        v = b - a
        vv = float(v @ v) or 1e-6
        px, py, pz = xx - a[0], yy - a[1], zz - a[2]
        t = np.clip((px * v[0] + py * v[1] + pz * v[2]) / vv, 0.0, 1.0)
        d = np.sqrt((px - t * v[0]) ** 2 + (py - t * v[1]) ** 2 + (pz - t * v[2]) ** 2)
        return sl, d

    def tube(self, p0: Sequence[float], p1: Sequence[float], r: float, hu: float,
             where: str | int = "any", clear_lung: float = 0.0) -> None:
        """Paint a tube with a soft (partial-volume) edge.

        ``where``: "any", "nonlung" (bone, cartilage) or a lobe id (pulmonary vessels).
        ``clear_lung``: also remove lung within r + this margin (mediastinal vessels).
        """
        res = self.segment(p0, p1, r + max(clear_lung, 1.0))
        if res is None:
            return
        sl, d = res
        h, lo = self.hu[sl], self.lobe[sl]
        if clear_lung > 0.0:
            cut = (d < r + clear_lung) & (lo > 0)
            h[cut] = HU_MED_FAT
            lo[cut] = 0
        v = np.clip((r - d) / 0.7 + 0.5, 0.0, 1.0)
        if where == "nonlung":
            v = np.where(lo > 0, 0.0, v)
        elif isinstance(where, int):  # one lobe only: vessels never cross a fissure
            v = np.where((lo == where) & (self.airway[sl] == 0), v, 0.0)
        np.copyto(h, h * (1.0 - v) + hu * v, where=v > 0)


def _polyline(painter: _Painter, pts: Sequence[Sequence[float]], r: float, hu: float,
              **kw: object) -> None:
    for a, b in zip(pts[:-1], pts[1:], strict=True):
        painter.tube(a, b, r, hu, **kw)  # type: ignore[arg-type]


def _paint_mediastinum(p: _Painter) -> None:
    """Great vessels and oesophagus; the lungs are pushed back from them."""
    kw = {"clear_lung": 3.0}
    _polyline(p, [(-6, -14, -75), (-4, -8, 2)], 15.0, 45.0, **kw)  # ascending aorta
    _polyline(p, [(-4, -8, 2), (4, 8, 12), (16, 32, 10), (22, 48, 0)], 13.0, 45.0, **kw)  # arch
    _polyline(p, [(22, 48, 0), (20, 50, -150), (8, 55, -245)], 12.0, 45.0, **kw)  # descending
    _polyline(p, [(2, 0, 10), (-12, -5, 85)], 6.0, 45.0, **kw)  # brachiocephalic trunk
    _polyline(p, [(12, 22, 12), (24, 20, 85)], 5.0, 45.0, **kw)  # left subclavian
    _polyline(p, [(-28, -8, 85), (-26, -12, -72)], 9.0, 40.0, **kw)  # superior vena cava
    _polyline(p, [(-20, 20, -245), (-18, 10, -150)], 11.0, 40.0, **kw)  # inferior vena cava
    _polyline(p, [(6, -38, -78), (8, -14, -44)], 13.0, 45.0, **kw)  # pulmonary trunk
    _polyline(p, [(8, -14, -44), (-36, 10, -46)], 10.0, 45.0, **kw)  # right pulmonary artery
    _polyline(p, [(8, -14, -44), (40, 12, -42)], 9.0, 45.0, **kw)  # left pulmonary artery
    _polyline(p, [(4, 30, 85), (10, 40, -100), (20, 30, -200)], 7.0, 40.0, **kw)  # oesophagus


def _rib_points(i: int, side: int, n: int = 14) -> np.ndarray:
    """Centre line of rib i (0 = first) on one side, from the spine around to its front end."""
    z_post = 46.0 - 22.5 * i
    phi_end = (2.45,) * 7 + (2.3, 2.15, 2.0, 1.6, 1.2)
    phi = np.linspace(0.3, phi_end[i], n)
    z = z_post - (60.0 + 2.5 * i) * (phi / math.pi) ** 1.3
    s = _cavity_scale(z)
    x = side * (CAV_AX * s + 5.0) * np.sin(phi)
    y = CAV_YC + (CAV_AY * s + 5.0) * np.cos(phi)
    return np.stack([x, y, z], axis=1)


def _paint_bones(p: _Painter) -> None:
    for side in (-1, 1):
        for i in range(12):
            pts = _rib_points(i, side)
            # Cortex then marrow: a bright rim around a dimmer core.
            _polyline(p, pts, 4.2, 800.0, where="nonlung")
            _polyline(p, pts, 2.8, 280.0, where="nonlung")
            if i < 7:  # costal cartilage from the rib's front end to the sternum
                end = pts[-1]
                z_st = float(np.clip(end[2] + 6.0, -118.0, 25.0))
                y_st = CAV_YC - CAV_AY * float(_cavity_scale(z_st)) - 4.0
                p.tube(end, (side * 14.0, y_st, z_st), 3.5, 120.0, where="nonlung")
        # Clavicle: from the manubrium out toward the shoulder.
        _polyline(p, [(side * 22, -92, 32), (side * 70, -88, 45), (side * 125, -50, 55)],
                  6.0, 600.0, where="nonlung")


def _lobe_points(rng: np.random.Generator, counts: dict[int, int]) -> dict[int, np.ndarray]:
    """Random points spread through each lobe: the territories the trees must supply."""
    need = dict(counts)
    found: dict[int, list[np.ndarray]] = {k: [] for k in counts}
    lo, hi = np.array([-140.0, -90.0, -205.0]), np.array([140.0, 100.0, 45.0])
    while any(n > 0 for n in need.values()):
        cand = lo + rng.random((8000, 3)) * (hi - lo)
        ids = _lobe_at(cand)
        for k in counts:
            take = cand[ids == k][: max(need[k], 0)]
            found[k].append(take)
            need[k] -= len(take)
    return {k: np.concatenate(v) for k, v in found.items()}


def _bisection_tree(start: np.ndarray, targets: np.ndarray, r_leaf: float, frac: float = 0.5
                    ) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """A space-filling branching tree from ``start`` reaching every target point.

    Each node splits its targets in two along their main axis and sends a branch part of the
    way toward each half's centre; radii follow Murray's law (r³ ∝ targets supplied).
    """
    out: list[tuple[np.ndarray, np.ndarray, float]] = []
    stack = [(start, targets)]
    while stack:
        p, pts = stack.pop()
        if len(pts) == 1:
            out.append((p, pts[0], r_leaf))
            continue
        centred = pts - pts.mean(axis=0)
        axis = np.linalg.svd(centred, full_matrices=False)[2][0]
        order = np.argsort(centred @ axis, kind="stable")
        for half in (pts[order[: len(pts) // 2]], pts[order[len(pts) // 2:]]):
            end = p + (half.mean(axis=0) - p) * (frac if len(half) > 1 else 1.0)
            if len(half) > 1:
                out.append((p, end, r_leaf * len(half) ** (1 / 3)))
            stack.append((end if len(half) > 1 else p, half))
    return out


def _paint_airways(p: _Painter, rng: np.random.Generator) -> None:
    """Trachea, main, lobar and segmental bronchi: a wall around an air lumen."""
    tubes: list[tuple[np.ndarray, np.ndarray, float, int]] = []

    def add(a: Sequence[float], b: Sequence[float], r: float, lobe_id: int = 0) -> None:
        tubes.append((np.asarray(a, float), np.asarray(b, float), r, lobe_id))

    add((0, 2, 90), (0, 12, 0), 8.5)  # trachea
    add((0, 12, 0), (0, 18, -20), 8.5)
    add((0, 18, -20), (-24, 22, -36), 6.5)  # right main bronchus: short and steep
    add((0, 18, -20), (38, 28, -50), 5.8)  # left main bronchus: longer, more horizontal
    lobar = [
        ((-22, 21, -35), (-44, 20, -25), 4.0, RUL),
        ((-24, 22, -36), (-34, 25, -62), 5.0, 0),  # bronchus intermedius
        ((-34, 25, -62), (-50, -6, -80), 3.2, RML),
        ((-34, 25, -62), (-48, 42, -98), 4.0, RLL),
        ((38, 28, -50), (54, 14, -36), 4.0, LUL),
        ((46, 21, -43), (56, -8, -72), 3.0, LUL),  # lingula
        ((38, 28, -50), (54, 48, -95), 4.0, LLL),
    ]
    pts = _lobe_points(rng, {RUL: 20, RML: 8, RLL: 20, LUL: 10, LLL: 20})
    lingula_done = False
    for a, b, r, lobe_id in lobar:
        add(a, b, r)
        if not lobe_id:
            continue
        targets = pts[lobe_id]
        if lobe_id == LUL:  # upper division and lingula share the lobe's points
            below = targets[:, 2] < -55.0
            targets = targets[below] if lingula_done else targets[~below]
            lingula_done = True
        # Segmental and subsegmental bronchi, kept inside their own lobe.
        for sa, sb, sr in _bisection_tree(np.asarray(b, float), targets, 0.9, frac=0.45):
            add(sa, sb, min(sr, r * 0.8), lobe_id)
    # Walls of every tube first, then every lumen, so a junction is not crossed by a wall.
    lumens = []
    for a, b, r, lobe_id in tubes:
        wall = max(0.8, 0.2 * r)
        res = p.segment(a, b, r + wall + 1.0)
        if res is None:
            continue
        sl, d = res
        ok = (p.lobe[sl] == lobe_id) | (p.airway[sl] > 0) if lobe_id else True
        hit = (d < r + wall) & ok
        p.airway[sl][hit] = 1
        p.lobe[sl][hit] = 0
        v = np.where(ok, np.clip((r + wall - d) / 0.7 + 0.5, 0.0, 1.0), 0.0)
        h = p.hu[sl]
        np.copyto(h, h * (1.0 - v) + 30.0 * v, where=v > 0)
        lumens.append((sl, d, r))
    for sl, d, r in lumens:
        v = np.where(p.airway[sl] > 0, np.clip((r - d) / 0.7 + 0.5, 0.0, 1.0), 0.0)
        h = p.hu[sl]
        np.copyto(h, h * (1.0 - v) + HU_AIR * v, where=v > 0)


def _paint_vessels(p: _Painter, rng: np.random.Generator) -> None:
    """Pulmonary arteries and veins: space-filling trees from each hilum into each lobe."""
    roots = [  # (hilum point, lobe); arteries first, then veins (more anterior and lower)
        ((-36, 10, -40), RUL), ((-40, 0, -72), RML), ((-40, 28, -72), RLL),
        ((42, 12, -40), LUL), ((44, 30, -70), LLL),
        ((-38, -4, -50), RUL), ((-38, -12, -82), RML), ((-40, 10, -100), RLL),
        ((44, -6, -52), LUL), ((44, 14, -100), LLL),
    ]
    per_tree = {RUL: 160, RML: 64, RLL: 160, LUL: 180, LLL: 160}
    counts = {k: 2 * n for k, n in per_tree.items()}
    pts = _lobe_points(rng, counts)
    used = dict.fromkeys(counts, 0)
    for start, lobe_id in roots:
        n = per_tree[lobe_id]
        targets = pts[lobe_id][used[lobe_id]:used[lobe_id] + n]
        used[lobe_id] += n
        for a, b, r in _bisection_tree(np.asarray(start, float), targets, 0.55):
            p.tube(a, b, r, 40.0, where=lobe_id)


def _paint_nodule(p: _Painter, rng: np.random.Generator) -> np.ndarray:
    """A lobulated, spiculated solid nodule (~20 mm) in the right upper lobe."""
    nodule = np.zeros(p.hu.shape, np.uint8)
    c = np.asarray(NODULE_CENTER_LPS, np.float32)
    res = p.box(c[None, :], NODULE_RADIUS_MM + 10.0)
    assert res is not None
    sl, xx, yy, zz = res
    dx, dy, dz = xx - c[0], yy - c[1], zz - c[2]
    d = np.sqrt(dx * dx + dy * dy + dz * dz) + 1e-6
    ux, uy, uz = dx / d, dy / d, dz / d
    surf = np.full(d.shape, NODULE_RADIUS_MM, np.float32)
    for _ in range(5):  # lobulation
        q = rng.standard_normal(3)
        q /= np.linalg.norm(q)
        surf += 1.2 * (ux * q[0] + uy * q[1] + uz * q[2]) ** 3
    for _ in range(10):  # short pointed bumps where spicules leave the surface
        q = rng.standard_normal(3)
        q /= np.linalg.norm(q)
        cosang = np.maximum(ux * q[0] + uy * q[1] + uz * q[2], 0.0)
        surf += rng.uniform(1.5, 3.5) * cosang**40
    lo = p.lobe[sl]
    v = np.where(lo == RUL, np.clip((surf - d) / 0.8 + 0.5, 0.0, 1.0), 0.0)
    h = p.hu[sl]
    np.copyto(h, h * (1.0 - v) + 20.0 * v, where=v > 0)
    nodule[sl] = v >= 0.5
    # Spicules: thin strands radiating 5-12 mm into the surrounding lung.
    for _ in range(14):
        q = rng.standard_normal(3)
        q /= np.linalg.norm(q)
        r = rng.uniform(0.6, 1.0)
        res2 = p.segment(c, c + q * (NODULE_RADIUS_MM + rng.uniform(5.0, 12.0)), r + 1.0)
        if res2 is None:
            continue
        sl2, d2 = res2
        v2 = np.where(p.lobe[sl2] == RUL, np.clip((r - d2) / 0.7 + 0.5, 0.0, 1.0), 0.0)
        h2 = p.hu[sl2]
        np.copyto(h2, np.maximum(h2, h2 * (1.0 - v2) + 10.0 * v2), where=v2 > 0)
        nodule[sl2] |= v2 >= 0.5
    return nodule


# ----------------------------------------------------------------------------- writers
def _uid(*parts: object) -> str:
    from pydicom.uid import generate_uid

    # Entropy from fixed strings: the same UIDs on every machine and every run.
    return str(generate_uid(entropy_srcs=["visa-console", CASE_DIRNAME, *map(str, parts)]))


def _write_dicom(folder: Path, g: _Grid, hu: np.ndarray) -> None:
    from pydicom.dataset import Dataset, FileMetaDataset
    from pydicom.uid import PYDICOM_IMPLEMENTATION_UID, CTImageStorage, ExplicitVRLittleEndian

    folder.mkdir()
    study, series, frame = _uid("study"), _uid("series", g.nx, g.nz), _uid("frame", g.nx, g.nz)
    rng = np.random.default_rng(SEED + 5)
    names = [f"{v:016X}.dcm" for v in rng.integers(0, 2**63, size=g.nz)]
    for k in range(g.nz):
        z = round(g.z0 + k * g.dz, 4)
        sop = _uid("sop", g.nx, g.nz, k)
        meta = FileMetaDataset()
        meta.MediaStorageSOPClassUID = CTImageStorage
        meta.MediaStorageSOPInstanceUID = sop
        meta.TransferSyntaxUID = ExplicitVRLittleEndian
        meta.ImplementationClassUID = PYDICOM_IMPLEMENTATION_UID
        ds = Dataset()
        ds.file_meta = meta
        ds.SpecificCharacterSet = "ISO_IR 100"
        ds.ImageType = ["ORIGINAL", "PRIMARY", "AXIAL"]
        ds.SOPClassUID = CTImageStorage
        ds.SOPInstanceUID = sop
        ds.StudyDate = ds.SeriesDate = ds.ContentDate = ds.AcquisitionDate = "20240507"
        ds.StudyTime = ds.SeriesTime = ds.ContentTime = "093000"
        ds.AccessionNumber = "DEMO0001"
        ds.Modality = "CT"
        ds.Manufacturer = "VISA Console"
        ds.ManufacturerModelName = "synthetic demo generator"
        ds.InstitutionName = "Synthetic data - not a patient"
        ds.StudyDescription = "CT CHEST (SYNTHETIC DEMO)"
        ds.SeriesDescription = "Chest 2.5 mm lung (synthetic)"
        ds.PatientName = "DEMO^CASE"
        ds.PatientID = "DEMO-0001"
        ds.PatientBirthDate = "19590312"
        ds.PatientSex = "F"
        ds.PatientAge = "065Y"
        ds.BodyPartExamined = "CHEST"
        ds.SliceThickness = g.dz
        ds.KVP = 120
        ds.ConvolutionKernel = "LUNG"
        ds.PatientPosition = "HFS"
        ds.StudyInstanceUID = study
        ds.SeriesInstanceUID = series
        ds.StudyID = "1"
        ds.SeriesNumber = 2
        ds.AcquisitionNumber = 1
        ds.InstanceNumber = g.nz - k  # numbered head to feet, like a head-first scan
        ds.ImagePositionPatient = [g.x0, g.y0, z]
        ds.ImageOrientationPatient = [1, 0, 0, 0, 1, 0]
        ds.FrameOfReferenceUID = frame
        ds.PositionReferenceIndicator = ""
        ds.SliceLocation = z
        ds.SamplesPerPixel = 1
        ds.PhotometricInterpretation = "MONOCHROME2"
        ds.Rows = ds.Columns = g.nx
        ds.PixelSpacing = [g.dx, g.dx]
        ds.BitsAllocated = 16
        ds.BitsStored = 16
        ds.HighBit = 15
        ds.PixelRepresentation = 0
        ds.WindowCenter = -600
        ds.WindowWidth = 1500
        ds.RescaleIntercept = -1024
        ds.RescaleSlope = 1
        ds.RescaleType = "HU"
        ds.ImageComments = "Synthetic demo CT generated by VISA Console; not a patient."
        stored = np.clip(np.rint(hu[k]) + 1024.0, 0, 4095).astype("<u2")
        ds.PixelData = stored.tobytes()
        ds.save_as(folder / names[k], enforce_file_format=True)


def _nifti_affine(g: _Grid) -> np.ndarray:
    """RAS affine of arrays stored as [column, flipped row, slice] (dcm2niix's layout)."""
    aff = np.eye(4)
    aff[0, 0], aff[1, 1], aff[2, 2] = -g.dx, g.dx, g.dz
    aff[:3, 3] = (-g.x0, -(g.y0 + (g.nx - 1) * g.dx), g.z0)
    return aff


def _write_labels(folder: Path, g: _Grid, lobe: np.ndarray, nodule: np.ndarray,
                  airway: np.ndarray) -> None:
    import nibabel as nib

    folder.mkdir()
    aff = _nifti_affine(g)
    for name, what in LABEL_FILES.items():
        if what == "nodule":
            mask = nodule
        elif what == "airway":
            mask = airway
        else:
            mask = (lobe == what).view(np.uint8)
        # lab[k, r, c] → nifti[c, ny-1-r, k]: the same voxels, geometry carried by the affine.
        arr = np.asfortranarray(mask.transpose(2, 1, 0)[:, ::-1, :])
        img = nib.Nifti1Image(arr, aff)
        img.set_data_dtype(np.uint8)
        img.header.set_xyzt_units("mm")
        img.set_qform(aff, code=1)
        img.set_sform(aff, code=1)
        nib.save(img, folder / f"{name}.nii.gz")


def _write_clinical(path: Path) -> None:
    from openpyxl import Workbook
    from openpyxl.styles import Font

    wb = Workbook()
    ws = wb.active
    ws.title = "Patients"
    ws.append(list(CLINICAL_HEADERS))
    ws.append(list(CLINICAL_ROW))
    for cell in ws[1]:
        cell.font = Font(bold=True)
    ws.cell(row=2, column=CLINICAL_HEADERS.index("Operation date") + 1).number_format = \
        "yyyy-mm-dd"
    for col, head in zip("ABCDEFGHIJKLMNOP", CLINICAL_HEADERS, strict=True):
        ws.column_dimensions[col].width = max(10, len(head) + 2)
    ws.column_dimensions["F"].width = 48
    ws.column_dimensions["H"].width = 60
    wb.properties.creator = "VISA Console demo generator"
    wb.properties.title = "Synthetic demo patient (not a real patient)"
    wb.properties.created = datetime(2024, 5, 7, 9, 30)
    buf = io.BytesIO()
    wb.save(buf)
    # openpyxl stamps "now" into the file (zip entry times, docProps modified): pin both so the
    # sheet is byte-identical from run to run like the rest of the case.
    stamp = b"2024-05-07T09:30:00Z"
    with zipfile.ZipFile(buf) as src, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "docProps/core.xml":
                data = re.sub(rb"(<dcterms:modified[^>]*>)[^<]*", rb"\g<1>" + stamp, data)
            dst.writestr(zipfile.ZipInfo(item.filename, date_time=(2024, 5, 7, 9, 30, 0)), data,
                         compress_type=zipfile.ZIP_DEFLATED)


def _write_case_files(folder: Path, g: _Grid) -> None:
    (folder / "case.toml").write_text(
        "# VISA Console built-in demo case. Synthetic data: not a patient.\n"
        'tumor_location = "right_upper_lobe"\n'
        'ct = "ct"\n'
        'labels = "labels"\n'
        'clinical = "clinical.xlsx"\n'
        'video = "video.mp4"\n'
        "\n[case]\n"
        f'name = "Demo case (synthetic, {CASE_DIRNAME})"\n'
        'tumor_location = "right_upper_lobe"\n', encoding="utf-8")
    (folder / "README.txt").write_text(
        "VISA Console demo case - SYNTHETIC DATA, NOT A PATIENT\n\n"
        "Everything in this folder was generated by VISA Console (app/data/demo.py) from\n"
        "mathematical shapes and fixed random seeds. It shows how a case folder is laid out:\n\n"
        f"  ct/            chest CT, DICOM series of {g.nz} slices, {g.nx}x{g.nx} pixels,\n"
        f"                 {g.dx:g} mm pixels, {g.dz:g} mm slices (file names are random)\n"
        "  labels/        lung lobes, nodule and airway as TotalSegmentator-style NIfTI masks\n"
        "  clinical.xlsx  one patient row with hospital-style column headers\n"
        "  video.mp4      an endoscope-like clip (synthetic tissue and instruments)\n"
        "  case.toml      names the parts and the tumour lobe (right upper lobe)\n\n"
        "Regenerate it with:  visa-console demo --force\n", encoding="utf-8")


# ----------------------------------------------------------------------------- video
VIDEO_FPS = 25
# Constant QP and a fixed thread count: x264's macroblock-tree rate control (used with crf)
# does not give byte-identical output from run to run, and the thread count changes the stream.
_X264_OPTIONS = {"preset": "veryfast", "qp": "24", "threads": "2"}
VIDEO_SECONDS = 10


def _video_codec() -> str:
    import av

    return "libx264" if "libx264" in av.codecs_available else "mpeg4"


def _smooth_noise(rng: np.random.Generator, h: int, w: int, cells: int) -> np.ndarray:
    from scipy import ndimage

    gy = max(2, round(cells * h / w))
    grid = rng.standard_normal((gy, cells)).astype(np.float32)
    out = ndimage.zoom(grid, (h / gy, w / cells), order=3, mode="grid-wrap")[:h, :w]
    return (out - out.mean()) / (out.std() + 1e-6)


def _tissue_texture(rng: np.random.Generator, h: int, w: int, px: float) -> np.ndarray:
    """Wet pink-red tissue with fat islands, capillaries and bumpy shading, as RGBA uint8."""
    height = (0.55 * _smooth_noise(rng, h, w, 6) + 0.3 * _smooth_noise(rng, h, w, 18)
              + 0.15 * _smooth_noise(rng, h, w, 60))
    m = 1.0 / (1.0 + np.exp(-1.6 * height))
    pink, red = np.array([0.88, 0.45, 0.42]), np.array([0.60, 0.14, 0.16])
    col = red[None, None, :] * (1 - m)[..., None] + pink[None, None, :] * m[..., None]
    fat = np.clip((_smooth_noise(rng, h, w, 8) - 1.1) * 1.5, 0.0, 1.0)[..., None]
    col = col * (1 - fat) + np.array([0.92, 0.75, 0.48]) * fat
    ves = (0.65 * np.exp(-((_smooth_noise(rng, h, w, 10) / 0.07) ** 2))
           + 0.4 * np.exp(-((_smooth_noise(rng, h, w, 30) / 0.06) ** 2)))
    col *= 1.0 - ves[..., None] * np.array([0.45, 0.8, 0.7])
    gy, gx = np.gradient(height * 25.0 / px)
    shade = 0.8 + 0.35 * (-0.5 * gx - 0.6 * gy) / np.sqrt(1.0 + gx * gx + gy * gy)
    col *= shade[..., None]
    out = np.empty((h, w, 4), np.uint8)
    out[..., :3] = np.clip(col * 255.0, 0, 255).astype(np.uint8)
    out[..., 3] = 255
    return out


def _highlight_sprite(size: int, sx: float, sy: float) -> np.ndarray:
    yy, xx = np.mgrid[-size:size + 1, -size:size + 1].astype(np.float32)
    return np.exp(-((xx / sx) ** 2 + (yy / sy) ** 2)) * 240.0


def _soft(v: np.ndarray) -> np.ndarray:
    """Clamp to 0..1 (an antialiased edge when v is a signed pixel distance + 0.5)."""
    return np.minimum(np.maximum(v, 0.0), 1.0)


def _draw_instrument(frame: np.ndarray, x_off: int, base: tuple[float, float],
                     tip: tuple[float, float], w0: float, w1: float, jaw_open: float,
                     tint: np.ndarray) -> None:
    """A metallic shaft from ``base`` (off-screen) to ``tip`` with two opening jaws.

    ``frame`` is the visible block of the image, starting at column ``x_off``. Only pixels near
    the instrument are evaluated, which keeps a 960x540 frame to a few milliseconds.
    """
    H, W = frame.shape[:2]
    bx, by = base[0] - x_off, base[1]
    ax_, ay_ = tip[0] - base[0], tip[1] - base[1]
    length = math.hypot(ax_, ay_)
    a0, a1 = ax_ / length, ay_ / length
    jaw_len = 2.2 * w1
    reach = length + jaw_len + 4.0
    pad = 0.85 * w0 + 2.0
    ends_x, ends_y = (bx, bx + a0 * reach), (by, by + a1 * reach)
    x0, x1 = max(0, int(min(ends_x) - pad)), min(W, int(max(ends_x) + pad) + 1)
    y0, y1 = max(0, int(min(ends_y) - pad)), min(H, int(max(ends_y) + pad) + 1)
    if x0 >= x1 or y0 >= y1:
        return
    qx = np.arange(x0, x1, dtype=np.float32)[None, :] - np.float32(bx)
    qy = np.arange(y0, y1, dtype=np.float32)[:, None] - np.float32(by)
    s_full = qx * a0 + qy * a1
    d_full = qy * a0 - qx * a1
    near = (np.abs(d_full) < pad) & (s_full > -2.0) & (s_full < reach)
    ys, xs = np.nonzero(near)
    if len(ys) == 0:
        return
    s, d = s_full[ys, xs], d_full[ys, xs]
    half = 0.5 * (w0 + (w1 - w0) * _soft(s / length))
    alpha = _soft(half - np.abs(d) + 0.5) * _soft(length - s + 0.5) * _soft(s + 0.5)
    nd = _soft(d / half * 0.5 + 0.5) * 2.0 - 1.0
    shade = 0.35 + 0.5 * np.sqrt(1 - nd * nd) + 0.9 * np.exp(-(((nd + 0.35) / 0.13) ** 2))
    # A dark wrist ring just behind the jaws.
    shade = np.where((s > length - 0.9 * w1) & (s < length - 0.5 * w1), shade * 0.3, shade)
    # Jaws: two tapered blades hinged at the tip, opening symmetrically.
    jx = s - length
    for sign in (1.0, -1.0):
        c, sn = math.cos(jaw_open), sign * math.sin(jaw_open)
        js = jx * c + d * sn
        jd = d * c - jx * sn + sign * 0.18 * w1
        jhalf = 0.36 * w1 * np.maximum(1 - js / jaw_len, 0.15)
        jal = _soft(jhalf - np.abs(jd) + 0.5) * _soft(js + 0.5) * _soft(jaw_len - js + 0.5)
        jn = _soft(jd / jhalf * 0.5 + 0.5) * 2.0 - 1.0
        jshade = 0.3 + 0.45 * np.sqrt(1 - jn * jn) + 0.7 * np.exp(-(((jn + 0.3) / 0.15) ** 2))
        shade = np.where(jal > alpha, jshade, shade)
        alpha = np.maximum(alpha, jal)
    # Soft shadow on the tissue beside the shaft.
    shadow = 0.45 * _soft(1 - (np.abs(d) - half) / (0.7 * half)) * (s > 0) * (s < length)
    keep = (1 - shadow * (1 - alpha)) * (1 - alpha)
    pix = frame[y0 + ys, x0 + xs, :3].astype(np.float32)
    pix = pix * keep[:, None] + np.minimum(shade[:, None] * tint[None, :], 255) * alpha[:, None]
    frame[y0 + ys, x0 + xs, :3] = np.minimum(pix, 255).astype(np.uint8)


def _write_video(path: Path, scale: float, progress: Callable[[float], None]) -> None:
    import av

    W = max(64, int(round(960 * scale / 2)) * 2)
    H = max(36, int(round(540 * scale / 2)) * 2)
    n = VIDEO_FPS * VIDEO_SECONDS
    if scale < 1.0:
        n = max(VIDEO_FPS, int(n * scale))
    px = W / 960.0
    rng = np.random.default_rng(SEED + 6)
    margin = int(0.14 * W)
    th, tw = H + 2 * margin, W + 2 * margin
    # The texture is computed once; each frame is a cheap pan/zoom/ripple lookup into it.
    # The pan, zoom and ripple amplitudes below stay inside ``margin`` (no index clipping).
    tex = _tissue_texture(rng, th, tw, px)
    packed = tex.view(np.uint32).reshape(th, tw)
    radius = 0.62 * H
    xa, xb = max(0, int(W / 2 - radius) - 1), min(W, int(W / 2 + radius) + 2)
    yy = np.arange(H, dtype=np.float32)[:, None]
    xx = np.arange(xa, xb, dtype=np.float32)[None, :]
    ry, rx = yy - H / 2, xx - W / 2
    # Endoscope optics: a circular field of view with a dark falloff toward its edge.
    rr = np.sqrt(rx * rx + ry * ry) / radius
    vig = _soft((1.0 - rr) * radius / 6.0) * (1.0 - 0.45 * np.minimum(rr, 1) ** 2)
    vig16 = (vig * 256).astype(np.uint16)[..., None]
    spots = [(rng.uniform(0, tw), rng.uniform(0, th), rng.uniform(4, 12) * px,
              rng.uniform(2.5, 6) * px, rng.uniform(0, 2 * math.pi)) for _ in range(22)]
    sprites = [_highlight_sprite(int(2.5 * max(sx, sy)) + 1, sx, sy)
               for _, _, sx, sy, _ in spots]
    tint = np.array([175.0, 180.0, 190.0], np.float32)
    out = np.zeros((H, W, 4), np.uint8)
    codec = _video_codec()
    with av.open(str(path), "w") as container:
        stream = container.add_stream(codec, rate=VIDEO_FPS)
        stream.width, stream.height, stream.pix_fmt = W, H, "yuv420p"
        if codec == "libx264":
            stream.options = dict(_X264_OPTIONS)
        else:
            stream.bit_rate = 4_000_000
        for i in range(n):
            # Every motion is periodic over the clip, so the last frame leads back to the first.
            ph = 2 * math.pi * i / n
            ox = margin * (1 + 0.6 * math.sin(ph))
            oy = margin * (1 + 0.5 * math.sin(2 * ph + 0.7))
            zoom = 1.0 + 0.03 * math.sin(ph)  # breathing
            u = 6 * px * np.sin(yy / (70 * px) + ph)
            v = 5 * px * np.sin(xx / (90 * px) - 2 * ph)
            ci = (rx * zoom + (W / 2 + ox) + u).astype(np.intp)
            ri = (ry * zoom + (H / 2 + oy) + v).astype(np.intp)
            frame = packed[ri, ci].view(np.uint8).reshape(H, xb - xa, 4)
            for (sx0, sy0, _, _, sp), spr in zip(spots, sprites, strict=True):
                # Specular glints ride on the tissue and shimmer a little.
                cx = int(sx0 - ox + 4 * px * math.sin(ph + sp)) - xa
                cy = int(sy0 - oy + 3 * px * math.cos(2 * ph + sp))
                hs = spr.shape[0] // 2
                y0, y1 = max(0, cy - hs), min(H, cy + hs + 1)
                x0, x1 = max(0, cx - hs), min(xb - xa, cx + hs + 1)
                if y0 < y1 and x0 < x1:
                    sub = spr[y0 - cy + hs:y1 - cy + hs, x0 - cx + hs:x1 - cx + hs]
                    reg = frame[y0:y1, x0:x1, :3] + sub[..., None]
                    frame[y0:y1, x0:x1, :3] = np.minimum(reg, 255).astype(np.uint8)
            _draw_instrument(frame, xa, (-0.15 * W, 0.95 * H),
                             (W * (0.36 + 0.05 * math.sin(ph)),
                              H * (0.55 + 0.06 * math.sin(2 * ph + 1.0))),
                             70 * px, 48 * px, math.radians(12 + 10 * math.sin(3 * ph)), tint)
            _draw_instrument(frame, xa, (1.15 * W, 0.2 * H),
                             (W * (0.64 + 0.04 * math.sin(ph + 2.0)),
                              H * (0.42 + 0.05 * math.cos(ph))),
                             66 * px, 44 * px, math.radians(8 + 8 * math.sin(2 * ph + 1.0)),
                             tint * 0.95)
            out[:, xa:xb] = (frame * vig16) >> 8
            vf = av.VideoFrame.from_ndarray(out, format="rgba")
            vf.pts = i
            for pkt in stream.encode(vf):
                container.mux(pkt)
            if i % 25 == 0:
                progress(i / n)
        for pkt in stream.encode(None):
            container.mux(pkt)
    progress(1.0)
