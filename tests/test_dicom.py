"""DICOM series loading on real data (tests/conftest.py: testdata_dir) and on damaged copies."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pydicom
import pytest
from pydicom.uid import generate_uid

from app.data.ct import load_ct
from app.data.dicom import load_dicom_series, scan_dicom_folder
from app.data.problems import LoadError, Problem, ProblemList
from app.data.volume import Volume

COPD = "cip_copdgene_ct64"
TOTALSEG = "totalseg_example"


# ----------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------


def assert_plain(text: str) -> None:
    """A message a nurse can read: a sentence, no code, no exception dump."""
    assert text and (text[0].isupper() or text[0].isdigit()) and text.rstrip().endswith("."), text
    for bad in ("Traceback", "Error:", "Exception", "<", ">", "{", "None", "self."):
        assert bad not in text, text
    assert len(text) < 400, text


def messages(vol: Volume, severity: str | None = None) -> list[str]:
    for p in vol.problems:
        assert isinstance(p, Problem) and p.part == "ct"
        assert_plain(p.message)
    return [p.message for p in vol.problems if severity in (None, p.severity)]


def one(msgs: list[str], *words: str) -> str:
    hits = [m for m in msgs if all(w.lower() in m.lower() for w in words)]
    assert len(hits) == 1, (words, msgs)
    return hits[0]


@pytest.fixture(scope="module")
def copd_dir(testdata_dir: Path) -> Path:
    path = testdata_dir / COPD / "ct-64Dicom"
    if not path.is_dir():
        pytest.skip(f"{path} is missing")
    return path


@pytest.fixture(scope="module")
def copd(copd_dir: Path) -> Volume:
    return load_dicom_series(copd_dir)


@pytest.fixture
def series(copd_dir: Path, tmp_path: Path) -> Path:
    """A writable copy of the real 79-slice series."""
    dst = tmp_path / "ct"
    shutil.copytree(copd_dir, dst)
    return dst


def by_position(folder: Path) -> list[Path]:
    """The series' files in slice order (z of ImagePositionPatient; the series is axial)."""
    files = [p for p in folder.iterdir() if p.suffix == ".dcm"]
    z = {p: float(pydicom.dcmread(p, stop_before_pixels=True).ImagePositionPatient[2]) for p in files}
    return sorted(files, key=z.__getitem__)


def edit(path: Path, **values: object) -> None:
    ds = pydicom.dcmread(path)
    for k, v in values.items():
        setattr(ds, k, v)
    ds.save_as(path)


# ----------------------------------------------------------------------------------------------
# real data
# ----------------------------------------------------------------------------------------------


def test_copdgene_series_loads_by_geometry(copd: Volume, copd_dir: Path) -> None:
    assert copd.shape == (79, 64, 64)
    assert copd.spacing == pytest.approx((3.98734, 4.171872, 4.171872), abs=1e-3)
    assert copd.data.dtype == np.int16
    assert (int(copd.data.min()), int(copd.data.max())) == (-1007, 1095)
    assert copd.problems == []
    m = copd.meta
    assert m["modality"] == "CT" and m["source_order"] == "geometry"
    assert m["n_files"] == 79 and m["n_slices"] == 79
    assert m["series_uid"].startswith("1.2.826.") and m["patient_id"] == "123456"
    assert m["study_date"] == "20060101" and m["slice_thickness"] == pytest.approx(3.98734)
    assert "Little Endian" in m["transfer_syntax"] and m["filled_slices"] == []
    # Each canonical axial slice matches the file at that position, in geometric order.
    for k, f in enumerate(by_position(copd_dir)):
        ds = pydicom.dcmread(f)
        z = float(ds.ImagePositionPatient[2])
        assert copd.index_to_lps((k, 0, 0))[2] == pytest.approx(z, abs=1e-3)
        if k % 20 == 0:  # stored rows run posterior; canonical coronal runs anterior
            assert np.array_equal(copd.data[k], ds.pixel_array[::-1, :])


def test_order_ignores_file_names_and_instance_numbers(series: Path, copd: Volume) -> None:
    files = by_position(series)
    rng = np.random.default_rng(7)
    for f, n in zip(files, rng.permutation(len(files)), strict=True):
        edit(f, InstanceNumber=int(n) + 1)             # instance numbers scrambled
        f.rename(series / f"{(int(n) * 7919) % 1000:03d}_{f.name}")   # names scrambled
    assert [p.name for p in by_position(series)] != sorted(p.name for p in series.iterdir())
    vol = load_dicom_series(series)
    assert np.array_equal(vol.data, copd.data) and vol.problems == []


def test_canonical_orientation_semantics(copd: Volume, testdata_dir: Path) -> None:
    a = copd.affine[:3, :3]
    assert a[2, 0] > 0 and abs(a[0, 0]) < 1e-6 and abs(a[1, 0]) < 1e-6   # axial+ = superior (+z)
    assert a[1, 1] < 0 and abs(a[0, 1]) < 1e-6 and abs(a[2, 1]) < 1e-6   # coronal+ = anterior (−y)
    assert a[0, 2] > 0 and abs(a[1, 2]) < 1e-6 and abs(a[2, 2]) < 1e-6   # sagittal+ = left (+x)
    # And the anatomy agrees: the real lung-thirds label map on the same grid.
    lm = load_ct(testdata_dir / COPD / "lm-64.nrrd")
    assert lm.shape == copd.shape and np.allclose(lm.affine, copd.affine, atol=1e-3)
    region = lm.data & 0xFF
    centre = {r: np.argwhere(region == r).mean(axis=0) for r in (9, 11, 12)}
    assert centre[9][0] > centre[11][0] + 10          # left upper third above left lower third
    assert centre[9][2] > 32 > centre[12][2]          # left lung at high sagittal index
    spine = np.argwhere(copd.data[:, :, 28:36] > 300)  # midline bone: mostly the spine
    assert spine[:, 1].mean() < 32                     # posterior = low coronal index


def test_progress_reports_done_and_total(copd_dir: Path) -> None:
    calls: list[tuple[int, int]] = []
    load_dicom_series(copd_dir, progress=lambda d, t: calls.append((d, t)))
    assert calls[0] == (0, 79) and calls[-1] == (79, 79)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_scan_lists_series_without_decoding(copd_dir: Path) -> None:
    problems = ProblemList()
    found = scan_dicom_folder(copd_dir, problems)
    assert len(found) == 1 and len(problems) == 0
    s = found[0]
    assert (s.n_slices, s.n_files, s.rows, s.cols, s.modality) == (79, 79, 64, 64, "CT")
    assert not s.is_localizer and s.orientation == (1, 0, 0, 0, 1, 0)


def test_totalseg_jpeg2000_series(testdata_dir: Path) -> None:
    folder = testdata_dir / TOTALSEG / "example_ct_dicom"
    if not folder.is_dir():
        pytest.skip(f"{folder} is missing")
    vol = load_dicom_series(folder)
    assert vol.shape == (20, 512, 512)
    assert vol.spacing == pytest.approx((2.0, 0.9765625, 0.9765625))
    assert vol.data.dtype == np.int16 and vol.problems == []
    assert "JPEG 2000" in vol.meta["transfer_syntax"]
    assert vol.meta["window_center"] == 40 and vol.meta["window_width"] == 300
    assert vol.meta["kvp"] == 120 and vol.meta["series_description"] == "CT Body 3.0"
    lo, hi = int(vol.data.min()), int(vol.data.max())
    assert -1100 <= lo <= -900 and 500 < hi < 3100           # air .. bone, in HU
    body = vol.data[:, 200:312, 200:312]                      # centre of the abdomen
    assert -150 < float(np.median(body)) < 150                # soft tissue
    assert float(np.median(vol.data[:, :40, :40])) < -900     # corner outside the body: air
    # The label map made on this DICOM grid lands on the same canonical grid.
    seg_path = testdata_dir / TOTALSEG / "example_seg_dicom.nii.gz"
    if seg_path.exists():
        seg = load_ct(seg_path)
        assert seg.shape == vol.shape and np.allclose(seg.affine, vol.affine, atol=1e-3)


def test_single_file_and_nested_folders(series: Path, copd: Volume, tmp_path: Path) -> None:
    nested = tmp_path / "export" / "PAT1" / "STUDY"
    for i, f in enumerate(sorted(series.iterdir())):
        (nested / f"SE{i % 3}").mkdir(parents=True, exist_ok=True)
        shutil.move(str(f), nested / f"SE{i % 3}" / f"IM{i:05d}")    # no extensions at all
    (tmp_path / "export" / "DICOMDIR").write_bytes(b"\0" * 300)      # ignored, not reported
    vol = load_dicom_series(tmp_path / "export")
    assert np.array_equal(vol.data, copd.data) and vol.problems == []
    one_file = next((nested / "SE1").iterdir())
    vol = load_dicom_series(one_file)  # the series this file belongs to, in its folder
    assert vol.shape[1:] == (64, 64) and vol.meta["n_files"] == len(list((nested / "SE1").iterdir()))
    assert load_ct(one_file).shape == vol.shape


# ----------------------------------------------------------------------------------------------
# fatal problems
# ----------------------------------------------------------------------------------------------


def test_missing_empty_and_non_dicom_folders(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="does not exist") as e:
        load_dicom_series(tmp_path / "nope")
    assert_plain(e.value.message)
    (tmp_path / "empty").mkdir()
    with pytest.raises(LoadError, match="contains no files") as e:
        load_dicom_series(tmp_path / "empty")
    assert_plain(e.value.message) and e.value.part == "ct"
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "notes.txt").write_text("patient notes")
    (junk / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 200)
    with pytest.raises(LoadError, match="No DICOM images were found") as e:
        load_dicom_series(junk)
    assert_plain(e.value.message)
    assert any("not DICOM" in p.message for p in e.value.problems)


def test_missing_decoder_names_the_package(testdata_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = testdata_dir / TOTALSEG / "example_ct_dicom"
    if not folder.is_dir():
        pytest.skip(f"{folder} is missing")
    import pydicom.pixels

    class NoDecoder:
        is_available = False

    monkeypatch.setattr(pydicom.pixels, "get_decoder", lambda uid: NoDecoder())
    with pytest.raises(LoadError, match="pylibjpeg-openjpeg") as e:
        load_dicom_series(folder)
    assert "JPEG 2000" in e.value.message and "install" in e.value.message


def test_series_of_only_damaged_images_fails_clearly(series: Path) -> None:
    for f in series.iterdir():
        f.write_bytes(f.read_bytes()[:-4000])
    with pytest.raises(LoadError, match="cut short") as e:
        load_dicom_series(series)
    assert_plain(e.value.message)


# ----------------------------------------------------------------------------------------------
# recoverable problems, on modified copies of the real series
# ----------------------------------------------------------------------------------------------


def test_missing_slice_is_reported_and_filled(series: Path, copd: Volume) -> None:
    files = by_position(series)
    files[40].unlink()
    vol = load_dicom_series(series)
    assert vol.shape == copd.shape and np.allclose(vol.affine, copd.affine, atol=1e-3)
    msg = one(messages(vol, "warning"), "missing")
    assert msg.startswith("1 CT slice is missing") and "interpolat" in msg
    assert vol.meta["missing_slices"] == 1 and vol.meta["filled_slices"] == [40]
    keep = [k for k in range(79) if k != 40]
    assert np.array_equal(vol.data[keep], copd.data[keep])
    mean = (copd.data[39].astype(float) + copd.data[41]) / 2
    assert np.abs(vol.data[40] - mean).max() <= 0.5


def test_two_adjacent_missing_slices(series: Path) -> None:
    files = by_position(series)
    files[10].unlink()
    files[11].unlink()
    vol = load_dicom_series(series)
    assert vol.shape[0] == 79
    assert one(messages(vol), "missing").startswith("2 CT slices are missing")
    assert vol.meta["filled_slices"] == [10, 11]


def test_duplicate_slice_is_dropped(series: Path, copd: Volume) -> None:
    f = by_position(series)[5]
    shutil.copy(f, series / "copy_of_slice.dcm")
    vol = load_dicom_series(series)
    assert np.array_equal(vol.data, copd.data)
    msg = one(messages(vol, "warning"), "duplicate")
    assert "1 duplicate CT slice" in msg and "left out" in msg
    assert vol.meta["duplicate_slices"] == 1


def test_largest_series_is_chosen_and_said_so(series: Path, copd: Volume) -> None:
    uid = generate_uid()
    for i, f in enumerate(by_position(series)[:10]):
        dst = series / f"other_{i}.dcm"
        shutil.copy(f, dst)
        edit(dst, SeriesInstanceUID=uid, SOPInstanceUID=generate_uid(),
             SeriesDescription="Small recon", SeriesNumber=7)
    found = scan_dicom_folder(series)
    assert [s.n_slices for s in found] == [79, 10]
    vol = load_dicom_series(series)
    assert np.array_equal(vol.data, copd.data)
    msg = one(messages(vol, "warning"), "2 CT series")
    assert "most slices" in msg and "'Small recon' (10 slices)" in msg and "79 slices" in msg


def test_corrupt_and_foreign_files_are_skipped(series: Path, copd: Volume) -> None:
    rng = np.random.default_rng(1)
    (series / "IMG9999.dcm").write_bytes(rng.integers(0, 256, 5000, dtype=np.uint8).tobytes())
    (series / "README.txt").write_text("exported by PACS")
    vol = load_dicom_series(series)
    assert np.array_equal(vol.data, copd.data)
    msgs = messages(vol, "warning")
    assert "IMG9999.dcm" in one(msgs, "skipped 1 damaged file")
    assert "README.txt" in one(msgs, "not DICOM")


def test_truncated_pixel_data_is_skipped_and_gap_reported(series: Path, copd: Volume) -> None:
    files = by_position(series)
    ds = pydicom.dcmread(files[30])
    ds.PixelData = ds.PixelData[: len(ds.PixelData) // 2]      # element itself shortened
    ds.save_as(files[30])
    files[60].write_bytes(files[60].read_bytes()[:-1000])       # file cut off mid-pixels
    vol = load_dicom_series(series)
    msgs = messages(vol, "warning")
    msg = one(msgs, "cut short")
    assert msg.startswith("Skipped 2 CT images") and files[30].name in msg
    assert one(msgs, "missing").startswith("2 CT slices are missing")
    assert vol.shape == copd.shape and vol.meta["filled_slices"] == [30, 60]
    assert np.array_equal(vol.data[:30], copd.data[:30])


def test_non_ct_modality_loads_with_warning(series: Path) -> None:
    for f in series.iterdir():
        edit(f, Modality="MR")
    vol = load_dicom_series(series)
    assert vol.shape == (79, 64, 64) and vol.meta["modality"] == "MR"
    assert "MR" in one(messages(vol, "warning"), "no CT images")


def test_modalities_are_never_mixed(series: Path, copd: Volume) -> None:
    # An MR series with more images in the same folder: the CT is still the one loaded.
    uid = generate_uid()
    for i, f in enumerate(by_position(series)):
        for j in range(2):
            dst = series / f"mr_{i}_{j}.dcm"
            shutil.copy(f, dst)
            ds = pydicom.dcmread(dst)
            ds.Modality, ds.SeriesInstanceUID, ds.SOPInstanceUID = "MR", uid, generate_uid()
            ds.ImagePositionPatient = [*ds.ImagePositionPatient[:2], ds.ImagePositionPatient[2] + 2.0 * j]
            ds.save_as(dst)
    vol = load_dicom_series(series)
    assert vol.meta["modality"] == "CT" and np.array_equal(vol.data, copd.data)
    assert "MR" in one(messages(vol, "info"), "not CT")


def test_gantry_tilt_is_reported_and_kept_in_the_affine(series: Path, copd: Volume) -> None:
    files = by_position(series)
    z0 = float(pydicom.dcmread(files[0]).ImagePositionPatient[2])
    shear = math.tan(math.radians(15))
    for f in files:
        ds = pydicom.dcmread(f)
        x, y, z = (float(v) for v in ds.ImagePositionPatient)
        ds.ImagePositionPatient = [x, y + shear * (z - z0), z]
        ds.save_as(f)
    vol = load_dicom_series(series)
    assert np.array_equal(vol.data, copd.data)
    assert "15.0°" in one(messages(vol, "warning"), "gantry tilted")
    assert vol.meta["gantry_tilt_deg"] == pytest.approx(15, abs=0.05)
    # Voxel positions are the true (slanted) slice positions.
    ipp_last = [float(v) for v in pydicom.dcmread(files[-1]).ImagePositionPatient]
    corner = vol.index_to_lps((78, 63, 0))   # last slice, first stored row, first column
    assert np.allclose(corner, ipp_last, atol=1e-2)


def test_uneven_spacing_is_resampled_and_reported(series: Path, copd: Volume) -> None:
    files = by_position(series)
    for f in files[40:]:   # the upper half moves up by 1.5 mm: gaps of 5.5 mm between 39 and 40
        ds = pydicom.dcmread(f)
        ds.ImagePositionPatient = [*ds.ImagePositionPatient[:2], float(ds.ImagePositionPatient[2]) + 1.5]
        ds.save_as(f)
    vol = load_dicom_series(series)
    msg = one(messages(vol, "warning"), "uneven")
    assert "resampled" in msg
    assert vol.shape[1:] == (64, 64)
    # The grid spans the true extent evenly; its end slices are the real end slices.
    z_first = float(pydicom.dcmread(files[0]).ImagePositionPatient[2])
    z_last = float(pydicom.dcmread(files[-1]).ImagePositionPatient[2])
    assert vol.index_to_lps((0, 0, 0))[2] == pytest.approx(z_first, abs=1e-3)
    assert vol.index_to_lps((vol.shape[0] - 1, 0, 0))[2] == pytest.approx(z_last, abs=1e-3)
    assert np.array_equal(vol.data[0], copd.data[0]) and np.array_equal(vol.data[-1], copd.data[-1])
    assert vol.spacing[0] == pytest.approx((z_last - z_first) / (vol.shape[0] - 1))


def test_localizer_and_mixed_sizes(series: Path, copd: Volume) -> None:
    f = by_position(series)[0]
    scout = series / "scout.dcm"
    shutil.copy(f, scout)
    edit(scout, ImageType=["ORIGINAL", "PRIMARY", "LOCALIZER"], SOPInstanceUID=generate_uid(),
         ImageOrientationPatient=[1, 0, 0, 0, 0, -1])
    small = series / "small.dcm"
    ds = pydicom.dcmread(by_position(series)[3])
    ds.PixelData = ds.pixel_array[::2, ::2].copy().tobytes()
    ds.Rows = ds.Columns = 32
    ds.SOPInstanceUID = generate_uid()
    ds.save_as(small)
    vol = load_dicom_series(series)
    assert np.array_equal(vol.data, copd.data)
    one(messages(vol, "info"), "scout (localizer)")
    assert "64×64" in one(messages(vol, "warning"), "mixes image sizes")


def test_rescale_per_slice_to_hu(series: Path, copd: Volume) -> None:
    files = by_position(series)
    # Integral but different intercepts per slice stay int16 and still give the same HU.
    ds = pydicom.dcmread(files[7])
    ds.PixelData = (ds.pixel_array.astype(np.int16) + 1024).tobytes()
    ds.RescaleIntercept = -1024
    ds.save_as(files[7])
    vol = load_dicom_series(series)
    assert vol.data.dtype == np.int16 and np.array_equal(vol.data, copd.data)
    # A fractional slope anywhere makes the volume float32.
    ds = pydicom.dcmread(files[9])
    ds.PixelData = (ds.pixel_array.astype(np.int16) * 2).tobytes()
    ds.RescaleSlope = 0.5
    ds.save_as(files[9])
    vol = load_dicom_series(series)
    assert vol.data.dtype == np.float32 and np.array_equal(vol.data, copd.data.astype(np.float32))


def test_enhanced_multiframe_ct(series: Path, copd: Volume, tmp_path: Path) -> None:
    """One Enhanced-CT-style file holding every slice, with per-frame positions."""
    from pydicom.dataset import Dataset
    from pydicom.sequence import Sequence

    files = by_position(series)
    first = pydicom.dcmread(files[0])
    mf = first.copy()
    frames = [pydicom.dcmread(f) for f in files]
    order = np.random.default_rng(3).permutation(len(frames))   # frames stored out of order
    mf.NumberOfFrames = len(frames)
    mf.PixelData = b"".join(frames[i].PixelData for i in order)

    def item(**kw: object) -> Dataset:
        d = Dataset()
        for k, v in kw.items():
            setattr(d, k, v)
        return d

    shared = item(PixelMeasuresSequence=Sequence([item(PixelSpacing=first.PixelSpacing,
                                                       SliceThickness=first.SliceThickness)]),
                  PlaneOrientationSequence=Sequence([item(ImageOrientationPatient=first.ImageOrientationPatient)]),
                  PixelValueTransformationSequence=Sequence([item(RescaleSlope=1, RescaleIntercept=0,
                                                                  RescaleType="HU")]))
    mf.SharedFunctionalGroupsSequence = Sequence([shared])
    mf.PerFrameFunctionalGroupsSequence = Sequence([
        item(PlanePositionSequence=Sequence([item(ImagePositionPatient=frames[i].ImagePositionPatient)]))
        for i in order])
    for kw in ("ImagePositionPatient", "ImageOrientationPatient", "PixelSpacing"):
        delattr(mf, kw)
    out = tmp_path / "enhanced"
    out.mkdir()
    mf.save_as(out / "enhanced.dcm")
    vol = load_dicom_series(out)
    assert vol.meta.get("multiframe") is True and vol.meta["n_files"] == 1
    assert np.array_equal(vol.data, copd.data) and np.allclose(vol.affine, copd.affine, atol=1e-3)
    assert vol.problems == []
    # Without per-frame positions there is no safe order: a clear refusal.
    del mf.PerFrameFunctionalGroupsSequence
    mf.save_as(out / "enhanced.dcm")
    with pytest.raises(LoadError, match="carries no slice positions") as e:
        load_dicom_series(out)
    assert_plain(e.value.message)


def test_damaged_jpeg2000_slices(testdata_dir: Path, tmp_path: Path) -> None:
    """A compressed slice that fails to decode, and one cut short, on the real JPEG 2000 series."""
    src = testdata_dir / TOTALSEG / "example_ct_dicom"
    if not src.is_dir():
        pytest.skip(f"{src} is missing")
    folder = tmp_path / "j2k"
    shutil.copytree(src, folder)
    files = sorted(folder.iterdir(), key=lambda p: -float(
        pydicom.dcmread(p, stop_before_pixels=True).ImagePositionPatient[2]))  # top slice first
    raw = bytearray(files[5].read_bytes())
    soc = raw.find(b"\xff\x4f\xff\x51")            # JPEG 2000 codestream start: break it
    raw[soc:soc + 64] = bytes(64)
    files[5].write_bytes(bytes(raw))
    files[9].write_bytes(files[9].read_bytes()[:60000])
    vol = load_dicom_series(folder)
    msgs = messages(vol, "warning")
    assert files[5].name in one(msgs, "could not be decoded", "filled in")
    assert files[9].name in one(msgs, "damaged file")
    assert one(msgs, "missing").startswith("1 CT slice is missing")
    # Canonical axial index runs upward: file k from the top is slice 19 - k.
    assert vol.shape == (20, 512, 512) and vol.meta["filled_slices"] == [10, 14]


def test_acquisitions_split_only_when_they_overlap(series: Path, copd: Volume) -> None:
    files = by_position(series)
    for k, f in enumerate(files):        # step-and-shoot style: one acquisition per 20 slices
        edit(f, AcquisitionNumber=k // 20 + 1)
    vol = load_dicom_series(series)
    assert np.array_equal(vol.data, copd.data) and vol.problems == []
    for k, f in enumerate(files[:12]):   # a repeat scan of the same region, same series UID
        dst = series / f"repeat_{k}.dcm"
        shutil.copy(f, dst)
        edit(dst, AcquisitionNumber=9, SOPInstanceUID=generate_uid())
    vol = load_dicom_series(series)
    assert np.array_equal(vol.data, copd.data)
    msg = one(messages(vol, "warning"), "most slices")
    assert "acquisition 9" in msg and "12 slices" in msg


def test_coronal_acquisition_is_canonicalised(series: Path) -> None:
    """Same pixels relabelled as a coronal acquisition: rows run inferior, slices posterior."""
    files = by_position(series)
    stored = []
    for k, f in enumerate(files):
        ds = pydicom.dcmread(f)
        stored.append(ds.pixel_array)
        ds.ImageOrientationPatient = [1, 0, 0, 0, 0, -1]
        ds.ImagePositionPatient = [-128.0, -100.0 + 4.0 * k, 150.0]
        ds.save_as(f)
    raw = np.stack(stored)                           # (slice, row, col) in posterior order
    vol = load_dicom_series(series)
    assert vol.shape == (64, 79, 64) and vol.problems == []
    assert vol.spacing == pytest.approx((4.171872, 4.0, 4.171872))
    # axial+ = superior = up the rows; coronal+ = anterior = back through the slices.
    assert np.array_equal(vol.data, raw[::-1, ::-1, :].transpose(1, 0, 2))
    assert vol.affine[2, 0] > 0 and vol.affine[1, 1] < 0 and vol.affine[0, 2] > 0
    top_front_right = vol.index_to_lps((63, 78, 0))
    assert np.allclose(top_front_right, [-128.0, -100.0, 150.0], atol=1e-3)
