"""The built-in demo case (app/data/demo.py): a real DICOM series, NIfTI labels, an xlsx sheet
and an mp4 video, checked directly with pydicom/nibabel/openpyxl/PyAV and through the loaders.

The full-size case is generated once per session (``demo_case_dir``); determinism and the
completion-marker logic use the small ``_scale`` variant, which generates in about a second.
"""

from __future__ import annotations

import errno
import hashlib
import importlib
import importlib.util
import json
import tomllib
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from app.data import demo

LOBE_FILES = ("lung_upper_lobe_left", "lung_lower_lobe_left", "lung_upper_lobe_right",
              "lung_middle_lobe_right", "lung_lower_lobe_right")
ALL_LABEL_FILES = (*LOBE_FILES, "lung_nodules", "lung_trachea_bronchia")
AR_KEYS = ("left_lower_lobe", "left_upper_lobe", "lung_nodules", "right_lower_lobe",
           "right_middle_lobe", "right_upper_lobe", "trachea_bronchia")
SMALL = 0.25


def _loader(module: str):  # noqa: ANN202 - returns a module
    """The project loader, or a skip saying it has not landed yet.

    Only a missing module skips: a loader that exists but fails to import fails the test.
    """
    try:
        spec = importlib.util.find_spec(module)
    except ModuleNotFoundError:
        spec = None
    if spec is None:
        pytest.skip(f"{module} is not available yet; the demo case is checked directly instead")
    return importlib.import_module(module)


# ----------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="session")
def demo_case_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The full-size demo case, generated once per test session into a temporary folder."""
    out = tmp_path_factory.mktemp("demo") / demo.CASE_DIRNAME
    return demo.ensure_demo_case(out=out)


@dataclass
class Series:
    hu: np.ndarray  # [slice, row, column], slices sorted by position (inferior first)
    origin: np.ndarray  # LPS of voxel (0, 0, 0)
    dx: float
    dz: float
    datasets: list  # headers (no pixel data), in file-name order
    names: list[str]  # file names in name order
    order: list[str]  # file names in slice order

    def index(self, lps: tuple[float, float, float]) -> tuple[int, int, int]:
        x, y, z = lps
        return (int(round((z - self.origin[2]) / self.dz)),
                int(round((y - self.origin[1]) / self.dx)),
                int(round((x - self.origin[0]) / self.dx)))

    def around(self, lps: tuple[float, float, float], r: int = 2) -> np.ndarray:
        k, i, j = self.index(lps)
        return self.hu[max(k - 1, 0):k + 2, i - r:i + r + 1, j - r:j + r + 1]


def _read_series(ct_dir: Path) -> Series:
    import pydicom

    files = sorted(ct_dir.iterdir())
    slices = []
    headers = []
    for f in files:
        ds = pydicom.dcmread(f)
        arr = ds.pixel_array.astype(np.float32) * float(ds.RescaleSlope) + float(ds.RescaleIntercept)
        slices.append((float(ds.ImagePositionPatient[2]), f.name, arr))
        del ds.PixelData
        headers.append(ds)
    slices.sort(key=lambda t: t[0])
    zs = np.array([s[0] for s in slices])
    first = next(h for h in headers if float(h.ImagePositionPatient[2]) == zs[0])
    dz = float(np.diff(zs).mean())
    origin = np.array([float(v) for v in first.ImagePositionPatient])
    return Series(hu=np.stack([s[2] for s in slices]), origin=origin,
                  dx=float(first.PixelSpacing[0]), dz=dz, datasets=headers,
                  names=[f.name for f in files], order=[s[1] for s in slices])


@pytest.fixture(scope="session")
def series(demo_case_dir: Path) -> Series:
    return _read_series(demo_case_dir / "ct")


def _on_dicom_grid(img, s: Series) -> np.ndarray:  # noqa: ANN001 - a nibabel image
    """A NIfTI mask resampled (by axis permutation/flip only) onto the DICOM [k, r, c] grid.

    Independent of the project's loaders: composes the NIfTI affine (RAS) with the DICOM
    geometry (LPS) and insists the result maps voxel centres exactly onto voxel centres.
    """
    ras_to_lps = np.diag([-1.0, -1.0, 1.0, 1.0])
    dicom = np.zeros((4, 4))
    dicom[0, 2] = dicom[1, 1] = s.dx
    dicom[2, 0] = s.dz
    dicom[:3, 3] = s.origin
    dicom[3, 3] = 1.0
    m = np.linalg.inv(dicom) @ ras_to_lps @ img.affine
    rot = m[:3, :3]
    assert np.allclose(np.abs(rot).sum(axis=0), 1.0, atol=1e-4), rot
    data = np.asanyarray(img.dataobj)
    perm = [int(np.argmax(np.abs(rot[:, a]))) for a in range(3)]
    out = np.transpose(data, np.argsort(perm))
    for b in range(3):
        a = perm.index(b)
        sign = rot[b, a]
        offset = m[b, 3]
        if sign < 0:
            out = np.flip(out, axis=b)
            assert offset == pytest.approx(out.shape[b] - 1, abs=1e-3)
        else:
            assert offset == pytest.approx(0.0, abs=1e-3)
    assert out.shape == s.hu.shape
    return out


@pytest.fixture(scope="session")
def labels(demo_case_dir: Path, series: Series) -> dict[str, np.ndarray]:
    import nibabel as nib

    return {name: _on_dicom_grid(nib.load(demo_case_dir / "labels" / f"{name}.nii.gz"), series)
            for name in ALL_LABEL_FILES}


# ----------------------------------------------------------------------------- the folder
def test_case_folder_layout(demo_case_dir: Path) -> None:
    for name in ("ct", "labels", "clinical.xlsx", "video.mp4", "case.toml", "README.txt"):
        assert (demo_case_dir / name).exists(), name
    cfg = tomllib.loads((demo_case_dir / "case.toml").read_text(encoding="utf-8"))
    assert cfg["tumor_location"] == "right_upper_lobe"
    for key in ("ct", "labels", "clinical", "video"):
        assert (demo_case_dir / cfg[key]).exists(), key
    readme = (demo_case_dir / "README.txt").read_text(encoding="utf-8")
    assert "SYNTHETIC" in readme and "NOT A PATIENT" in readme
    marker = json.loads((demo_case_dir / demo.MARKER).read_text(encoding="utf-8"))
    assert marker["version"] == "demo-case-v1" and marker["scale"] == 1.0
    assert demo.is_complete(demo_case_dir)
    assert sorted(p.name for p in (demo_case_dir / "labels").iterdir()) == sorted(
        f"{n}.nii.gz" for n in ALL_LABEL_FILES)


# ----------------------------------------------------------------------------- DICOM
def test_dicom_headers(series: Series) -> None:
    from pydicom.uid import UID, CTImageStorage

    n = len(series.datasets)
    assert 120 <= n <= 160
    sops = set()
    for ds in series.datasets:
        assert ds.SOPClassUID == CTImageStorage
        assert ds.file_meta.MediaStorageSOPClassUID == CTImageStorage
        assert ds.Modality == "CT"
        assert str(ds.PatientName) == "DEMO^CASE" and ds.PatientID == "DEMO-0001"
        assert float(ds.RescaleSlope) == 1.0 and float(ds.RescaleIntercept) == -1024.0
        assert float(ds.WindowCenter) == -600 and float(ds.WindowWidth) == 1500
        assert ds.Rows == ds.Columns == 512
        assert ds.BitsAllocated == 16
        assert [float(v) for v in ds.ImageOrientationPatient] == [1, 0, 0, 0, 1, 0]
        assert float(ds.SliceThickness) == pytest.approx(series.dz)
        assert UID(ds.SOPInstanceUID).is_valid
        sops.add(ds.SOPInstanceUID)
    assert len(sops) == n
    assert len({ds.SeriesInstanceUID for ds in series.datasets}) == 1
    assert len({ds.StudyInstanceUID for ds in series.datasets}) == 1
    # File names must not give the slice order away: loaders sort by geometry.
    assert series.names != series.order and series.names != series.order[::-1]


def test_dicom_geometry(series: Series) -> None:
    zs = series.origin[2] + np.arange(series.hu.shape[0]) * series.dz
    assert series.dx == pytest.approx(0.7)
    assert 2.0 <= series.dz <= 2.5
    assert series.hu.shape[1:] == (512, 512)
    positions = sorted(float(ds.ImagePositionPatient[2]) for ds in series.datasets)
    np.testing.assert_allclose(positions, zs, atol=1e-3)
    # The chest: from the upper abdomen (below the domes) to above the lung apices.
    assert zs[0] < -200 and zs[-1] > 50


@pytest.mark.parametrize(("landmark", "lo", "hi"), [
    ("outside", -1030, -970),
    ("trachea_lumen", -1030, -900),
    ("lung_right_upper", -950, -700),
    ("lung_left_lower", -950, -700),
    ("spine", 300, 1100),
    ("liver", -150, 100),
    ("heart", -150, 100),
    ("subcutaneous_fat", -150, -50),
    ("nodule", -50, 80),
])
def test_hu_at_landmarks(series: Series, landmark: str, lo: float, hi: float) -> None:
    value = float(np.median(series.around(demo.LANDMARKS_LPS[landmark])))
    assert lo <= value <= hi, f"{landmark}: median HU {value:.0f} not in [{lo}, {hi}]"


def test_hu_ranges(series: Series) -> None:
    hu = series.hu
    assert hu.min() >= -1024 and hu.max() <= 1200
    # Ribs are curved bone bands: their cortex is dense bone.
    pts = demo._rib_points(5, 1)
    rib = max(float(series.around(tuple(p), r=3).max()) for p in pts[3:10])
    assert 400 <= rib <= 1100
    # Outside the body is air; the body holds soft tissue, fat and bone.
    assert np.median(hu[:, :10, :10]) == pytest.approx(-1000, abs=30)
    mid = hu[hu.shape[0] // 2]
    assert (mid > 300).sum() > 500  # spine, ribs, sternum on a mid-chest slice
    assert ((mid > -150) & (mid < 100)).mean() > 0.2


# ----------------------------------------------------------------------------- labels
def test_label_files(demo_case_dir: Path, series: Series) -> None:
    import nibabel as nib

    for name in ALL_LABEL_FILES:
        path = demo_case_dir / "labels" / f"{name}.nii.gz"
        with path.open("rb") as fh:
            assert fh.read(2) == b"\x1f\x8b"  # gzip
        img = nib.load(path)
        assert img.get_data_dtype() == np.uint8
        assert img.shape == (512, 512, series.hu.shape[0])
        # Scanner coordinates in both forms; stored like dcm2niix output (rows flipped).
        assert int(img.header["sform_code"]) == int(img.header["qform_code"]) == 1
        assert nib.aff2axcodes(img.affine) == ("L", "A", "S")
        data = np.asanyarray(img.dataobj)
        assert data.max() == 1 and data.min() == 0


def test_lobes_disjoint_and_present(labels: dict[str, np.ndarray], series: Series) -> None:
    voxel_ml = series.dx * series.dx * series.dz / 1000.0
    stack = np.stack([labels[n] for n in LOBE_FILES]).astype(np.uint8)
    assert stack.sum(axis=0).max() == 1, "lobes overlap"
    for name, mask in zip(LOBE_FILES, stack, strict=True):
        ml = mask.sum() * voxel_ml
        assert ml > (100 if "middle" not in name else 50), f"{name}: {ml:.0f} mL"
    lungs = stack.any(axis=0)
    assert not (lungs & (labels["lung_trachea_bronchia"] > 0)).any()
    # Left is +x (higher column index) in LPS: left lobes sit at higher columns.
    cols = {n: np.nonzero(m)[2].mean() for n, m in zip(LOBE_FILES, stack, strict=True)}
    assert cols["lung_upper_lobe_left"] > 256 > cols["lung_upper_lobe_right"]
    # Upper lobes lie above lower lobes (k increases superiorly).
    ks = {n: np.nonzero(m)[0].mean() for n, m in zip(LOBE_FILES, stack, strict=True)}
    assert ks["lung_upper_lobe_right"] > ks["lung_middle_lobe_right"] > ks["lung_lower_lobe_right"]
    assert ks["lung_upper_lobe_left"] > ks["lung_lower_lobe_left"]


def test_nodule_in_right_upper_lobe(labels: dict[str, np.ndarray], series: Series) -> None:
    nod = labels["lung_nodules"] > 0
    assert nod.any()
    assert (labels["lung_upper_lobe_right"][nod] > 0).all()
    voxel_mm3 = series.dx * series.dx * series.dz
    diameter = (6.0 * nod.sum() * voxel_mm3 / np.pi) ** (1 / 3)
    assert 15.0 <= diameter <= 25.0
    k, i, j = np.nonzero(nod)
    centre = series.origin + np.array([j.mean() * series.dx, i.mean() * series.dx,
                                       k.mean() * series.dz])
    np.testing.assert_allclose(centre, demo.NODULE_CENTER_LPS, atol=3.0)
    assert float(np.median(series.hu[nod])) > -100


def test_labels_align_with_ct(labels: dict[str, np.ndarray], series: Series) -> None:
    from scipy import ndimage

    hu = series.hu
    lungs = np.zeros(hu.shape, bool)
    for n in LOBE_FILES:
        lungs |= labels[n] > 0
    airway = labels["lung_trachea_bronchia"] > 0
    # Lobes are air-filled lung (vessels, fissures and the nodule make up the rest).
    assert (hu[lungs] < -500).mean() > 0.9
    # Every air-like voxel inside the body is lung or airway (body = filled non-air region).
    body = np.stack([ndimage.binary_fill_holes(s > -500) for s in hu])
    air_inside = body & (hu < -500)
    assert (lungs | airway)[air_inside].mean() > 0.98
    # The airway label is air inside (the trachea lumen) with a wall around it.
    trachea = series.index(demo.LANDMARKS_LPS["trachea_lumen"])
    assert airway[trachea]
    assert (hu[airway] < -500).mean() > 0.4


# ----------------------------------------------------------------------------- clinical, video
def test_clinical_sheet(demo_case_dir: Path) -> None:
    from openpyxl import load_workbook

    ws = load_workbook(demo_case_dir / "clinical.xlsx").active
    rows = list(ws.iter_rows(values_only=True))
    assert len(rows) == 2
    head = dict(zip(rows[0], rows[1], strict=True))
    for col in ("Patient ID", "sex/age", "Ht (cm)", "bw (kg)", "BMI", "Diagnosis",
                "Comorbidities", "Operation name", "Operation date", "Tumor location",
                "PFT_PRE_FEV1 (L)", "PFT_PRE_FEV1 (%)", "PFT_PRE_FVC (L)", "PFT_PRE_FVC (%)",
                "DLCO (%)", "Smoking (pack-years)"):
        assert col in head, col
    assert head["sex/age"] == "F/65" and head["Tumor location"] == "RUL"
    assert isinstance(head["Operation date"], datetime)  # a real Excel date cell
    assert head["BMI"] == pytest.approx(head["bw (kg)"] / (head["Ht (cm)"] / 100) ** 2, abs=0.1)


def test_video_decodes(demo_case_dir: Path) -> None:
    import av

    with av.open(str(demo_case_dir / "video.mp4")) as c:
        stream = c.streams.video[0]
        assert stream.codec_context.name in ("h264", "mpeg4")
        if "libx264" in av.codecs_available:
            assert stream.codec_context.name == "h264"
        assert (stream.width, stream.height) == (960, 540)
        assert float(stream.average_rate) == 25.0
        frames = [f.to_ndarray(format="rgb24") for f in c.decode(video=0)]
    assert len(frames) == 250  # 10 s at 25 fps
    first, mid, last = (f.astype(np.float32) for f in (frames[0], frames[125], frames[-1]))
    centre = first[200:340, 380:580]
    assert centre[..., 0].mean() > centre[..., 1].mean() + 30  # pink-red tissue
    assert first[:20, :20].max() < 20  # outside the endoscope's circular view is black
    moved = np.abs(mid - first).mean()
    looped = np.abs(last - first).mean()
    assert moved > 5.0 and looped < moved / 2  # it moves, and the end leads back to the start


# ----------------------------------------------------------------------------- determinism
def _digest(case: Path) -> dict[str, str]:
    import nibabel as nib
    import pydicom

    out = {}
    for f in sorted((case / "ct").iterdir()):
        ds = pydicom.dcmread(f)
        out[f"ct/{f.name}"] = hashlib.sha256(
            ds.PixelData + str(ds.SOPInstanceUID).encode()
            + str(ds.ImagePositionPatient).encode()).hexdigest()
    for f in sorted((case / "labels").iterdir()):
        img = nib.load(f)
        out[f"labels/{f.name}"] = hashlib.sha256(
            np.ascontiguousarray(np.asanyarray(img.dataobj)).tobytes()
            + img.affine.tobytes()).hexdigest()
    return out


def _file_hashes(case: Path) -> dict[str, str]:
    return {str(p.relative_to(case)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(case.rglob("*")) if p.is_file() and p.name != demo.MARKER}


def test_deterministic(tmp_path: Path, demo_case_dir: Path) -> None:
    a = demo.ensure_demo_case(out=tmp_path / "a", _scale=SMALL)
    b = demo.ensure_demo_case(out=tmp_path / "b", _scale=SMALL)
    da, db = _digest(a), _digest(b)
    assert len(da) == 32 + 7
    assert da == db  # pixel data, UIDs, positions, label voxels and affines
    # Byte for byte, every file: DICOM, gzip, xlsx (pinned timestamps), mp4 (constant QP).
    assert _file_hashes(a) == _file_hashes(b)
    # The full-size case shares the generator: its file names and UIDs follow the same seeds.
    import pydicom

    full = sorted((demo_case_dir / "ct").iterdir())
    assert all(len(p.stem) == 16 for p in full)
    sop = pydicom.dcmread(full[0], stop_before_pixels=True).SOPInstanceUID
    assert sop.startswith("1.2.826.0.1.3680043.8.498.")  # pydicom's root, fixed entropy


# ----------------------------------------------------------------------------- marker logic
def _mtimes(case: Path) -> dict[str, int]:
    return {str(p.relative_to(case)): p.stat().st_mtime_ns for p in case.rglob("*")}


def test_completion_marker(tmp_path: Path) -> None:
    case = tmp_path / "case"
    demo.ensure_demo_case(out=case, _scale=SMALL)
    before = _mtimes(case)
    assert demo.ensure_demo_case(out=case, _scale=SMALL) == case
    assert _mtimes(case) == before, "a complete case must not be regenerated"
    assert not demo.is_complete(case, scale=1.0)  # another size is another case

    # A missing marker means the case was never finished: it is regenerated.
    (case / demo.MARKER).unlink()
    (case / "video.mp4").unlink()
    demo.ensure_demo_case(out=case, _scale=SMALL)
    assert demo.is_complete(case, SMALL) and (case / "video.mp4").exists()

    # A slice lost after completion is noticed too.
    next((case / "ct").iterdir()).unlink()
    assert not demo.is_complete(case, SMALL)
    demo.ensure_demo_case(out=case, _scale=SMALL)
    assert len(list((case / "ct").iterdir())) == 32

    # force regenerates; no temporary folders are left behind.
    old = (case / demo.MARKER).stat().st_mtime_ns
    demo.ensure_demo_case(force=True, out=case, _scale=SMALL)
    assert (case / demo.MARKER).stat().st_mtime_ns != old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["case"]


def test_partial_folder_is_regenerated(tmp_path: Path) -> None:
    case = tmp_path / "case"
    (case / "ct").mkdir(parents=True)
    (case / "ct" / "half-written.dcm").write_bytes(b"\0" * 10)
    (case / "clinical.xlsx").write_bytes(b"")
    demo.ensure_demo_case(out=case, _scale=SMALL)
    assert demo.is_complete(case, SMALL)
    assert not (case / "ct" / "half-written.dcm").exists()


def test_foreign_folder_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(demo.DemoCaseError, match="not a demo case"):
        demo.ensure_demo_case(out=tmp_path, _scale=SMALL)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_stale_partial_is_cleaned(tmp_path: Path) -> None:
    stale = [tmp_path / ".case.partial-999999999", tmp_path / ".case.old-999999999"]
    for p in stale:  # left by a generator that died (no such process)
        p.mkdir()
    demo.ensure_demo_case(out=tmp_path / "case", _scale=SMALL)
    assert not any(p.exists() for p in stale)


def test_default_location(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(demo.ENV_DATA_DIR, str(tmp_path))
    assert demo.default_case_dir() == tmp_path / "demo-case-v1"
    monkeypatch.delenv(demo.ENV_DATA_DIR)
    assert demo.default_case_dir().name == "demo-case-v1"
    assert "visa-console" in str(demo.default_case_dir())


def test_progress_reports(tmp_path: Path) -> None:
    seen: list[tuple[str, float]] = []
    demo.ensure_demo_case(out=tmp_path / "c", _scale=SMALL, progress=lambda s, f: seen.append((s, f)))
    fracs = [f for _, f in seen]
    assert fracs == sorted(fracs) and fracs[-1] == 1.0
    assert {"writing the DICOM series", "encoding the endoscope video"} <= {s for s, _ in seen}


# ----------------------------------------------------------------------------- command line
def test_demo_command_existing(demo_case_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli import main

    assert main(["demo", "--out", str(demo_case_dir)]) == 0
    assert str(demo_case_dir) in capsys.readouterr().out


def test_demo_command_failure(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                              capsys: pytest.CaptureFixture[str]) -> None:
    def full_disk(folder: Path, scale: float, progress: object) -> None:
        (folder / "ct").mkdir()
        raise OSError(errno.ENOSPC, "No space left on device", str(folder / "ct"))

    monkeypatch.setattr(demo, "_generate", full_disk)
    assert demo.run_demo_command(force=False, out=tmp_path / "case") == 1
    err = capsys.readouterr().err
    assert "disk is full" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []  # nothing half-written is left

    def denied(folder: Path, scale: float, progress: object) -> None:
        raise PermissionError(errno.EACCES, "Permission denied", str(folder))

    monkeypatch.setattr(demo, "_generate", denied)
    assert demo.run_demo_command(force=False, out=tmp_path / "case") == 1
    assert "permission denied" in capsys.readouterr().err


# ----------------------------------------------------------------------------- project loaders
def test_load_ct_through_loader(demo_case_dir: Path, series: Series) -> None:
    ct = _loader("app.data.ct").load_ct(demo_case_dir / "ct")
    assert ct.shape == series.hu.shape
    assert ct.spacing == pytest.approx((series.dz, 0.7, 0.7))
    assert not [p for p in ct.problems if p.severity == "error"]
    for name in ("trachea_lumen", "spine", "lung_left_lower", "nodule"):
        lps = demo.LANDMARKS_LPS[name]
        a, c, s = (int(round(v)) for v in ct.lps_to_index(lps))
        ours = float(series.hu[series.index(lps)])
        assert float(ct.data[a, c, s]) == pytest.approx(ours, abs=1.0), name


def test_load_labels_through_loader(demo_case_dir: Path, series: Series,
                                    labels: dict[str, np.ndarray]) -> None:
    ct = _loader("app.data.ct").load_ct(demo_case_dir / "ct")
    ls = _loader("app.data.labels").load_labels(demo_case_dir / "labels", ct)
    assert ls.structures() == sorted(AR_KEYS)
    assert not [p for p in ls.problems if p.severity == "error"]
    nodule = ls.centroid_lps("lung_nodules")
    np.testing.assert_allclose(nodule, demo.NODULE_CENTER_LPS, atol=3.0)
    # Voxel for voxel: the loader's canonical masks select lung in the loader's CT.
    hu = np.asarray(ct.data)
    for key in ("right_upper_lobe", "left_lower_lobe"):
        mask = np.asarray(ls.masks[key], bool)
        assert mask.shape == ct.shape
        assert (hu[mask] < -500).mean() > 0.9
    assert int(np.count_nonzero(ls.masks["lung_nodules"])) == int(labels["lung_nodules"].sum())


def test_load_clinical_through_loader(demo_case_dir: Path) -> None:
    rec = _loader("app.data.clinical").load_clinical(demo_case_dir / "clinical.xlsx")
    assert list(rec.tumor_lobes) == ["right_upper_lobe"]
    assert rec.fields["sex"] in ("F", "female", "Female") and int(rec.fields["age"]) == 65
    assert "Smoking (pack-years)" in rec.extra
    assert not [p for p in rec.problems if p.severity == "error"]


def test_probe_video_through_loader(demo_case_dir: Path) -> None:
    info = _loader("app.data.video").probe_video(demo_case_dir / "video.mp4")
    assert (info.width, info.height) == (960, 540)
    assert info.fps == pytest.approx(25.0)
    assert info.frame_count in (None, 250)
    assert info.duration_s is None or info.duration_s == pytest.approx(10.0, abs=0.1)


def test_load_case_through_loader(demo_case_dir: Path) -> None:
    case = _loader("app.data.case").load_case(demo_case_dir)
    assert not case.errors, case.errors
    assert case.tumor_lobes == ("right_upper_lobe",)
    assert case.labels is not None and case.labels.structures() == sorted(AR_KEYS)
    assert case.ct is not None and case.ct.size["axial"] == len(list((demo_case_dir / "ct").iterdir()))
    assert case.clinical is not None and case.video is not None
