"""load_ct: DICOM folder/file, NIfTI, NRRD and MetaImage agree on voxels and LPS geometry."""

from __future__ import annotations

import gzip
import shutil
import zlib
from pathlib import Path

import nibabel as nib
import nrrd
import numpy as np
import pytest

from app.data.ct import load_ct
from app.data.problems import LoadError
from app.data.volume import Volume

COPD = "cip_copdgene_ct64"


@pytest.fixture(scope="module")
def copd_dir(testdata_dir: Path) -> Path:
    path = testdata_dir / COPD
    if not (path / "ct-64Dicom").is_dir() or not (path / "ct-64.nrrd").is_file():
        pytest.skip(f"{path} is incomplete")
    return path


@pytest.fixture(scope="module")
def dicom_vol(copd_dir: Path) -> Volume:
    return load_ct(copd_dir / "ct-64Dicom")


@pytest.fixture(scope="module")
def nrrd_raw(copd_dir: Path) -> tuple[np.ndarray, dict]:
    """The real NRRD's stored (x, y, z) array and header."""
    data, header = nrrd.read(str(copd_dir / "ct-64.nrrd"))
    return data, header


def lps_affine(header: dict) -> np.ndarray:
    a = np.eye(4)
    a[:3, :3] = np.asarray(header["space directions"], dtype=float).T
    a[:3, 3] = header["space origin"]
    return a


def geometry(header: dict) -> dict:
    return {k: header[k] for k in ("space", "space directions", "space origin")}


def assert_same(vol: Volume, ref: Volume, tol: float = 1e-3) -> None:
    """Same canonical voxels, and each canonical voxel at the same LPS position."""
    assert vol.shape == ref.shape
    assert np.array_equal(vol.data, ref.data)
    corners = np.array([[i, j, k] for i in (0, ref.shape[0] - 1) for j in (0, ref.shape[1] - 1)
                        for k in (0, ref.shape[2] - 1)], dtype=float)
    assert np.allclose(vol.index_to_lps(corners), ref.index_to_lps(corners), atol=tol)
    assert np.allclose(vol.affine, ref.affine, atol=tol)


def test_dicom_equals_nrrd_voxel_for_voxel(copd_dir: Path, dicom_vol: Volume) -> None:
    vol = load_ct(copd_dir / "ct-64.nrrd")
    assert vol.meta["format"] == "nrrd" and vol.problems == []
    assert_same(vol, dicom_vol)
    assert vol.spacing == pytest.approx((3.98734, 4.171872, 4.171872), abs=1e-4)
    assert (int(vol.data.min()), int(vol.data.max())) == (-1007, 1095)


def test_single_dicom_file_loads_its_series(copd_dir: Path, dicom_vol: Volume) -> None:
    one = sorted((copd_dir / "ct-64Dicom").iterdir())[17]
    assert_same(load_ct(one), dicom_vol)


def test_raw_nrrd_is_memory_mapped(tmp_path: Path, nrrd_raw: tuple, dicom_vol: Volume) -> None:
    data, header = nrrd_raw
    out = tmp_path / "ct.nrrd"
    nrrd.write(str(out), data, {**geometry(header), "encoding": "raw"})
    assert nrrd.read_header(str(out))["encoding"] == "raw"
    vol = load_ct(out)
    assert_same(vol, dicom_vol)
    base = vol.data
    while base is not None and not isinstance(base, np.memmap):
        base = base.base
    assert isinstance(base, np.memmap), "raw NRRD should be mapped, not read"


def test_nrrd_in_ras_space_and_detached_header(tmp_path: Path, nrrd_raw: tuple,
                                               dicom_vol: Volume) -> None:
    data, header = nrrd_raw
    lps = lps_affine(header)
    flip = np.diag([-1.0, -1.0, 1.0])
    # Same voxels described in RAS, with the first axis stored reversed for good measure.
    stored = data[::-1]
    dirs = lps[:3, :3].copy()
    origin = lps[:3, 3] + dirs[:, 0] * (data.shape[0] - 1)
    dirs[:, 0] *= -1
    ras = {"space": "right-anterior-superior", "space directions": (flip @ dirs).T,
           "space origin": flip @ origin}
    nrrd.write(str(tmp_path / "ras.nrrd"), np.ascontiguousarray(stored), ras)
    assert_same(load_ct(tmp_path / "ras.nrrd"), dicom_vol)
    nrrd.write(str(tmp_path / "det.nhdr"), data, {**geometry(header), "encoding": "raw"},
               detached_header=True)
    assert (tmp_path / "det.raw").exists()
    assert_same(load_ct(tmp_path / "det.nhdr"), dicom_vol)


def test_nrrd_without_orientation_warns(tmp_path: Path, nrrd_raw: tuple) -> None:
    data, _ = nrrd_raw
    nrrd.write(str(tmp_path / "plain.nrrd"), data, {"spacings": [4.17, 4.17, 3.99]})
    vol = load_ct(tmp_path / "plain.nrrd")
    assert vol.shape == (79, 64, 64)
    assert any(p.severity == "warning" and "left and right may be wrong" in p.message
               for p in vol.problems)


def test_nifti_roundtrip_matches_dicom(tmp_path: Path, nrrd_raw: tuple, dicom_vol: Volume) -> None:
    data, header = nrrd_raw
    ras_affine = np.diag([-1.0, -1.0, 1.0, 1.0]) @ lps_affine(header)   # NIfTI world is RAS
    img = nib.Nifti1Image(data, ras_affine)
    img.set_sform(ras_affine, code=1)
    nib.save(img, tmp_path / "ct.nii.gz")
    nib.save(img, tmp_path / "ct.nii")
    vol = load_ct(tmp_path / "ct.nii.gz")
    assert vol.meta["format"] == "nifti" and vol.data.dtype == np.int16 and vol.problems == []
    assert_same(vol, dicom_vol)
    mapped = load_ct(tmp_path / "ct.nii")
    assert_same(mapped, dicom_vol)


def test_nifti_scaling_keeps_int16_when_it_can(tmp_path: Path, nrrd_raw: tuple,
                                               dicom_vol: Volume) -> None:
    data, header = nrrd_raw
    ras_affine = np.diag([-1.0, -1.0, 1.0, 1.0]) @ lps_affine(header)
    stored = (data.astype(np.int32) + 1024).astype(np.uint16)
    img = nib.Nifti1Image(stored, ras_affine)
    img.header.set_slope_inter(1.0, -1024.0)
    nib.save(img, tmp_path / "scaled.nii.gz")
    vol = load_ct(tmp_path / "scaled.nii.gz")
    assert vol.data.dtype == np.int16
    assert_same(vol, dicom_vol)
    img = nib.Nifti1Image((data.astype(np.int32) * 2 + 2048).astype(np.uint16), ras_affine)
    img.header.set_slope_inter(0.5, -1024.0)
    nib.save(img, tmp_path / "half.nii.gz")
    vol = load_ct(tmp_path / "half.nii.gz")
    assert vol.data.dtype == np.float32 and np.array_equal(vol.data, dicom_vol.data)


def test_real_totalseg_nifti(testdata_dir: Path) -> None:
    path = testdata_dir / "totalseg_example" / "example_ct.nii.gz"
    if not path.exists():
        pytest.skip(f"{path} is missing")
    vol = load_ct(path)
    assert vol.shape == (112, 101, 122) and vol.spacing == pytest.approx((3.0, 3.0, 3.0))
    assert vol.data.dtype == np.int16          # stored as int32, values fit int16
    assert -1300 < int(vol.data.min()) < -900 and 1000 < int(vol.data.max()) < 4000
    assert vol.affine[2, 0] > 0 and vol.affine[1, 1] < 0 and vol.affine[0, 2] > 0


def test_metaimage_mha_and_mhd(tmp_path: Path, nrrd_raw: tuple, dicom_vol: Volume) -> None:
    data, header = nrrd_raw
    sd = np.asarray(header["space directions"], dtype=float)
    spacing = np.linalg.norm(sd, axis=1)
    rows = sd / spacing[:, None]                   # MetaIO: row i = direction of axis i
    head = ("ObjectType = Image\nNDims = 3\nBinaryData = True\nBinaryDataByteOrderMSB = False\n"
            f"TransformMatrix = {' '.join(f'{v:g}' for v in rows.ravel())}\n"
            f"Offset = {' '.join(repr(float(v)) for v in header['space origin'])}\n"
            f"ElementSpacing = {' '.join(repr(float(v)) for v in spacing)}\n"
            f"DimSize = {' '.join(str(n) for n in data.shape)}\nElementType = MET_SHORT\n")
    payload = np.asfortranarray(data.astype("<i2")).tobytes(order="F")
    (tmp_path / "ct.mha").write_bytes((head + "ElementDataFile = LOCAL\n").encode() + payload)
    assert_same(load_ct(tmp_path / "ct.mha"), dicom_vol)
    (tmp_path / "z.mha").write_bytes((head + "CompressedData = True\nElementDataFile = LOCAL\n")
                                     .encode() + zlib.compress(payload))
    assert_same(load_ct(tmp_path / "z.mha"), dicom_vol)
    (tmp_path / "ct.mhd").write_text(head + "ElementDataFile = ct.raw\n")
    (tmp_path / "ct.raw").write_bytes(payload)
    assert_same(load_ct(tmp_path / "ct.mhd"), dicom_vol)


def test_ct_folder_with_a_volume_file(tmp_path: Path, copd_dir: Path, dicom_vol: Volume) -> None:
    folder = tmp_path / "ct"
    folder.mkdir()
    shutil.copy(copd_dir / "ct-64.nrrd", folder / "ct.nrrd")
    shutil.copy(copd_dir / "lm-64.nrrd", folder / "lm-64.nrrd")   # a label map next to it
    vol = load_ct(folder)
    assert_same(vol, dicom_vol)
    assert any("ct.nrrd" in p.message and p.severity == "info" for p in vol.problems)


def test_unreadable_files_raise_plain_errors(tmp_path: Path, nrrd_raw: tuple) -> None:
    with pytest.raises(LoadError, match="does not exist"):
        load_ct(tmp_path / "missing.nii.gz")
    bad = tmp_path / "bad.nii.gz"
    bad.write_bytes(gzip.compress(b"not a nifti header at all" * 20))
    with pytest.raises(LoadError, match="could not be read: it is damaged") as e:
        load_ct(bad)
    assert e.value.part == "ct" and e.value.detail
    (tmp_path / "bad.nrrd").write_bytes(b"NRRD0004\ntype: short\ngarbage line\n\n")
    with pytest.raises(LoadError, match="damaged or not a valid NRRD"):
        load_ct(tmp_path / "bad.nrrd")
    data, header = nrrd_raw
    cut = tmp_path / "cut.nrrd"
    nrrd.write(str(cut), data, {**geometry(header), "encoding": "raw"})
    cut.write_bytes(cut.read_bytes()[:-5000])
    with pytest.raises(LoadError, match="damaged"):
        load_ct(cut)
    (tmp_path / "scan.jpg").write_bytes(b"\xff\xd8\xff" + b"\0" * 100)
    with pytest.raises(LoadError, match="not a CT format"):
        load_ct(tmp_path / "scan.jpg")
    nrrd.write(str(tmp_path / "vec.nrrd"), np.zeros((3, 4, 4, 4), np.int16))
    with pytest.raises(LoadError, match="not a 3D volume"):
        load_ct(tmp_path / "vec.nrrd")
