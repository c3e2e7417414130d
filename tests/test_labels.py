"""Label maps and meshes (app.data.labels), on the real test data where it matters."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import nibabel as nib
import nrrd
import numpy as np
import pytest

from app.data.labels import (
    TOTALSEG_V2_TOTAL,
    LabelSet,
    Mesh,
    label_table_from_config,
    load_labels,
    sanitize_name,
    structure_key,
)
from app.data.volume import Volume, canonicalize

RAS = np.diag([-1.0, -1.0, 1.0, 1.0])  # RAS ↔ LPS (its own inverse)

# Measured on the real data (pinned so that an orientation or mapping regression shows).
TS_COUNTS = {"left_upper_lobe": 266, "left_lower_lobe": 1259, "right_lower_lobe": 2590}
TS_CENTROIDS = {  # LPS mm
    "left_upper_lobe": (134.78, -212.49, 417.60),
    "left_lower_lobe": (88.77, -95.61, 421.76),
    "right_lower_lobe": (-75.93, -104.48, 420.09),
}
CIP_TABLE = {
    512: "trachea", 9: "left_upper_third", 10: "left_middle_third", 11: "left_lower_third",
    12: "right_upper_third", 13: "right_middle_third", 14: "right_lower_third",
}
CIP_COUNTS = {
    "trachea_bronchia": 510, "left_upper_third": 10164, "left_middle_third": 9701,
    "left_lower_third": 8437, "right_upper_third": 9860, "right_middle_third": 10940,
    "right_lower_third": 11108,
}


# ----------------------------------------------------------------------------- helpers

def _nifti_volume(path: Path) -> Volume:
    img = nib.load(str(path))
    data, aff = canonicalize(np.asarray(img.dataobj), RAS @ img.affine)
    return Volume(data, aff, str(path))


def _nrrd_affine(hdr: dict) -> np.ndarray:
    aff = np.eye(4)
    aff[:3, :3] = np.asarray(hdr["space directions"], dtype=float).T
    aff[:3, 3] = hdr["space origin"]
    return aff


def _nrrd_volume(path: Path) -> Volume:
    data, hdr = nrrd.read(str(path))
    assert hdr["space"] == "left-posterior-superior"
    d, aff = canonicalize(data, _nrrd_affine(hdr))
    return Volume(d, aff, str(path))


def _dicom_volume(folder: Path) -> Volume:
    """The CT from a DICOM series, read here with pydicom (independent of app.data.ct)."""
    import pydicom

    pytest.importorskip("openjpeg", reason="JPEG 2000 DICOM needs pylibjpeg-openjpeg")
    ds = [pydicom.dcmread(str(f)) for f in folder.iterdir() if f.is_file()]
    iop = np.array(ds[0].ImageOrientationPatient, dtype=float)
    row_dir, col_dir = iop[:3], iop[3:]
    normal = np.cross(row_dir, col_dir)
    ds.sort(key=lambda d: float(normal @ np.array(d.ImagePositionPatient, dtype=float)))
    px = np.stack([d.pixel_array.astype(np.int16) * int(d.RescaleSlope) + int(d.RescaleIntercept)
                   for d in ds])  # (slice, row, column)
    first = np.array(ds[0].ImagePositionPatient, dtype=float)
    last = np.array(ds[-1].ImagePositionPatient, dtype=float)
    dr, dc = (float(x) for x in ds[0].PixelSpacing)
    aff = np.eye(4)
    aff[:3, 0] = (last - first) / (len(ds) - 1)
    aff[:3, 1] = col_dir * dr  # moving down a row follows the column direction
    aff[:3, 2] = row_dir * dc
    aff[:3, 3] = first
    data, caff = canonicalize(px, aff)
    return Volume(data, caff, str(folder))


def _write_nrrd(path: Path, data: np.ndarray, aff_lps: np.ndarray, ras: bool = False,
                extra: dict | None = None) -> None:
    flips = np.array([-1.0, -1.0, 1.0]) if ras else np.ones(3)
    hdr = {
        "space": "right-anterior-superior" if ras else "left-posterior-superior",
        "space directions": (aff_lps[:3, :3] * flips[:, None]).T,
        "space origin": aff_lps[:3, 3] * flips,
        "kinds": ["domain"] * 3,
        **(extra or {}),
    }
    nrrd.write(str(path), data, hdr)


def _write_nifti(path: Path, data: np.ndarray, aff_lps: np.ndarray) -> None:
    nib.save(nib.Nifti1Image(data, RAS @ aff_lps), str(path))


def _dice(a: np.ndarray, b: np.ndarray) -> float:
    return 2.0 * np.count_nonzero(a & b) / (np.count_nonzero(a) + np.count_nonzero(b))


def _messages(ls: LabelSet, severity: str | None = None) -> str:
    return "\n".join(p.message for p in ls.problems if severity in (None, p.severity))


def _tiny_ct(shape: tuple[int, int, int] = (10, 12, 14), spacing: float = 2.0) -> Volume:
    aff = np.diag([spacing, -spacing, spacing, 1.0])[[2, 1, 0, 3]]  # canonical: S, A, L axes
    aff[:3, 3] = (-10.0, 20.0, -30.0)
    return Volume(np.full(shape, -1000, dtype=np.int16), aff, "tiny")


# ----------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def ts(testdata_dir: Path) -> Path:
    return testdata_dir / "totalseg_example"


@pytest.fixture(scope="module")
def ts_ct(ts: Path) -> Volume:
    return _nifti_volume(ts / "example_ct.nii.gz")


@pytest.fixture(scope="module")
def cip(testdata_dir: Path) -> Path:
    return testdata_dir / "cip_copdgene_ct64"


@pytest.fixture(scope="module")
def cip_ct(cip: Path) -> Volume:
    return _nrrd_volume(cip / "ct-64.nrrd")


@pytest.fixture(scope="module")
def cip_labels(cip: Path, cip_ct: Volume) -> LabelSet:
    return load_labels(cip / "lm-64.nrrd", cip_ct, CIP_TABLE)


# ----------------------------------------------------------------------------- names

@pytest.mark.parametrize("name, key", [
    ("lung_upper_lobe_left.nii.gz", "left_upper_lobe"),
    ("lung_lower_lobe_left.nii", "left_lower_lobe"),
    ("LUNG_UPPER_LOBE_RIGHT.NRRD", "right_upper_lobe"),
    ("lung_middle_lobe_right.stl", "right_middle_lobe"),
    ("lung_lower_lobe_right.vtp", "right_lower_lobe"),
    ("RUL.obj", "right_upper_lobe"), ("rml", "right_middle_lobe"), ("Rll.nii.gz", "right_lower_lobe"),
    ("LUL", "left_upper_lobe"), ("lll.seg.nrrd", "left_lower_lobe"),
    ("left_upper_lobe.nii.gz", "left_upper_lobe"), ("Right middle lobe", "right_middle_lobe"),
    ("LeftLowerLobe.stl", "left_lower_lobe"), ("lung_lobe_inferior_right", "right_lower_lobe"),
    ("lung_nodules.nii.gz", "lung_nodules"), ("lung_nodule", "lung_nodules"),
    ("Nodule.stl", "lung_nodules"), ("nodules", "lung_nodules"), ("tumor.nii", "lung_nodules"),
    ("Tumour", "lung_nodules"),
    ("trachea.nii.gz", "trachea_bronchia"), ("lung_trachea_bronchia.nii.gz", "trachea_bronchia"),
    ("airway", "trachea_bronchia"), ("Airways.vtp", "trachea_bronchia"),
    ("bronchi.nrrd", "trachea_bronchia"), ("trachea_bronchia", "trachea_bronchia"),
])
def test_structure_names_map_to_our_keys(name: str, key: str) -> None:
    assert structure_key(name) == key


@pytest.mark.parametrize("name", [
    "left_upper_third", "liver", "left_middle_lobe", "left_upper_lobe_nodule", "esophagus", "lung",
])
def test_unknown_names_are_not_guessed(name: str) -> None:
    assert structure_key(name) is None


def test_sanitize_and_table_from_config() -> None:
    assert sanitize_name("My Segment-1.nii.gz") == "my_segment_1"
    assert sanitize_name("VesselTree.vtp") == "vessel_tree"
    assert sanitize_name("???.stl") == "structure"
    assert label_table_from_config({"10": "lung_upper_lobe_left", "x": "y", "trachea": 16}) == {
        10: "lung_upper_lobe_left", 16: "trachea"}
    assert TOTALSEG_V2_TOTAL[16] == "trachea" and TOTALSEG_V2_TOTAL[10] == "lung_upper_lobe_left"


# ----------------------------------------------------------------------------- real data

def test_totalsegmentator_multilabel_on_its_ct(ts: Path, ts_ct: Volume) -> None:
    seg_path = ts / "example_seg_fast_force_split.nii.gz"
    calls: list[float] = []
    ls = load_labels(seg_path, ts_ct, progress=lambda f, _t: calls.append(f))
    raw = np.asarray(nib.load(str(seg_path)).dataobj)
    counts = ls.voxel_counts()
    for value, key in ((10, "left_upper_lobe"), (11, "left_lower_lobe"),
                       (14, "right_lower_lobe")):
        assert counts[key] == int(np.count_nonzero(raw == value)) == TS_COUNTS[key]
        assert ls.masks[key].shape == ts_ct.shape and ls.masks[key].dtype == bool
        assert np.allclose(ls.centroid_lps(key), TS_CENTROIDS[key], atol=0.05)
        assert ls.sources[key].startswith(seg_path.name)
    # Upper/middle right lobes and the trachea are outside this abdominal field of view.
    assert not {"right_upper_lobe", "right_middle_lobe", "trachea_bronchia"} & set(ls.structures())
    # LPS +x is the patient's left.
    right_x = ls.centroid_lps("right_lower_lobe")[0]
    assert ls.centroid_lps("left_upper_lobe")[0] > right_x
    assert ls.centroid_lps("left_lower_lobe")[0] > right_x
    # The names embedded in the file were used; other organs are kept under their own names.
    assert ls.voxel_counts()["liver"] == int(np.count_nonzero(raw == 5))
    assert "not structures the 3D view knows" in _messages(ls, "info")
    assert "resampled" not in _messages(ls)  # same grid: reordered, not resampled
    assert not [p for p in ls.problems if p.severity != "info"]
    for key in TS_COUNTS:  # lobes are air-like on the CT
        assert ts_ct.data[ls.masks[key]].mean() < -500
    assert calls and calls[-1] == 1.0


def test_totalseg_ids_without_a_table_use_the_builtin_scheme(ts: Path, ts_ct: Volume,
                                                             tmp_path: Path) -> None:
    img = nib.load(str(ts / "example_seg_fast_force_split.nii.gz"))
    # A fresh header: the same ids without TotalSegmentator's embedded label table.
    _write_nifti(tmp_path / "seg.nii.gz", np.asarray(img.dataobj), RAS @ img.affine)
    ls = load_labels(tmp_path / "seg.nii.gz", ts_ct)
    assert ls.voxel_counts() == TS_COUNTS
    assert "TotalSegmentator" in _messages(ls, "info")
    assert "have no name" in _messages(ls, "info")  # liver etc. are listed, not shown


def test_wrong_label_table_is_flagged_by_anatomy(ts: Path, ts_ct: Volume) -> None:
    swapped = {10: "lung_upper_lobe_right", 11: "lung_lower_lobe_right", 14: "lung_lower_lobe_left"}
    ls = load_labels(ts / "example_seg_fast_force_split.nii.gz", ts_ct, swapped)
    assert "patient's right of the right lobes" in _messages(ls, "warning")
    shifted = {5: "lung_upper_lobe_left"}  # the liver is no lung
    ls = load_labels(ts / "example_seg_fast_force_split.nii.gz", ts_ct, shifted)
    assert "does not look like air-filled" in _messages(ls, "warning")


def test_dicom_grid_with_flipped_rows(ts: Path) -> None:
    ct = _dicom_volume(ts / "example_ct_dicom")
    seg_path = ts / "example_seg_dicom.nii.gz"
    ls = load_labels(seg_path, ct)
    raw = np.asarray(nib.load(str(seg_path)).dataobj)
    assert "resampled" not in _messages(ls)
    assert ls.voxel_counts()["liver"] == int(np.count_nonzero(raw == 5))
    # This map has no lungs (it covers the upper abdomen): check tissue densities instead.
    hu = {k: float(ct.data[ls.masks[k]].mean()) for k in ("liver", "spleen", "colon",
                                                           "vertebrae_t12")}
    assert 20 < hu["liver"] < 150 and 20 < hu["spleen"] < 150
    assert hu["vertebrae_t12"] > 200
    assert hu["colon"] < -300  # bowel gas is air-like
    # The DICOM's row order is flipped relative to the map: trusting index order would put
    # the vertebra mask into soft tissue or air.
    wrong = ls.masks["vertebrae_t12"][:, ::-1, :]
    assert float(ct.data[wrong].mean()) < hu["vertebrae_t12"] - 150
    # Laterality: liver on the patient's right (−x), spleen on the left (+x).
    assert ls.centroid_lps("liver")[0] < 0 < ls.centroid_lps("spleen")[0]
    if importlib.util.find_spec("app.data.ct") is not None:  # the app's own CT loader agrees
        from app.data.ct import load_ct

        via_app = load_labels(seg_path, load_ct(ts / "example_ct_dicom"))
        assert "resampled" not in _messages(via_app)
        assert np.array_equal(via_app.masks["liver"], ls.masks["liver"])


def test_copdgene_label_map_with_table(cip: Path, cip_ct: Volume, cip_labels: LabelSet) -> None:
    raw, _ = nrrd.read(str(cip / "lm-64.nrrd"))
    counts = cip_labels.voxel_counts()
    assert counts == CIP_COUNTS
    for value, name in CIP_TABLE.items():
        key = structure_key(name) or name
        assert counts[key] == int(np.count_nonzero(raw == value))
    assert float(cip_ct.data[cip_labels.masks["trachea_bronchia"]].mean()) < -800
    # Thirds are unknown names: kept under their own names, with an info problem.
    assert "left_upper_third" in cip_labels.structures()
    assert "not structures the 3D view knows" in _messages(cip_labels, "info")
    assert "have no name" in _messages(cip_labels, "info")  # vessels/other airway values
    assert cip_labels.centroid_lps("left_upper_third")[0] > 0 > \
        cip_labels.centroid_lps("right_upper_third")[0]
    # The trachea runs down the midline, above the lower lung.
    trachea = cip_labels.centroid_lps("trachea_bronchia")
    assert abs(trachea[0]) < 15 and trachea[2] > cip_labels.centroid_lps("left_lower_third")[2]


def test_multilabel_without_names_asks_for_a_table(cip: Path, cip_ct: Volume) -> None:
    ls = load_labels(cip / "lm-64.nrrd", cip_ct)
    assert ls.structures() == []
    assert "label table is needed in case.toml" in _messages(ls, "warning")


# ----------------------------------------------------------------------------- resampling

def test_permuted_and_flipped_copies_land_exactly(cip: Path, cip_ct: Volume,
                                                  cip_labels: LabelSet, tmp_path: Path) -> None:
    raw, hdr = nrrd.read(str(cip / "lm-64.nrrd"))
    aff = _nrrd_affine(hdr)
    n2 = raw.shape[2]
    # new[a, b, c] = raw[b, c, n2 - 1 - a]
    new = np.ascontiguousarray(np.transpose(raw, (2, 0, 1))[::-1])
    perm = np.zeros((4, 4))
    perm[0, 1] = perm[1, 2] = 1.0
    perm[2, 0], perm[2, 3] = -1.0, n2 - 1
    perm[3, 3] = 1.0
    new_aff = aff @ perm
    folder = tmp_path / "labels"
    folder.mkdir()
    _write_nrrd(folder / "lm_ras.nrrd", new, new_aff, ras=True)
    ls = load_labels(folder / "lm_ras.nrrd", cip_ct, CIP_TABLE)
    assert "resampled" not in _messages(ls)
    for key, mask in cip_labels.masks.items():
        assert np.array_equal(ls.masks[key], mask), key
    _write_nifti(tmp_path / "lm.nii.gz", new.astype(np.uint16), new_aff)
    ls = load_labels(tmp_path / "lm.nii.gz", cip_ct, CIP_TABLE)
    for key, mask in cip_labels.masks.items():
        assert _dice(ls.masks[key], mask) == 1.0, key


def test_coarse_grid_is_resampled(cip: Path, cip_ct: Volume, cip_labels: LabelSet,
                                  tmp_path: Path) -> None:
    raw, hdr = nrrd.read(str(cip / "lm-64.nrrd"))
    aff = _nrrd_affine(hdr)
    coarse_aff = aff.copy()
    coarse_aff[:3, :3] *= 2.0  # keeps every second voxel: the same centres, twice the spacing
    _write_nrrd(tmp_path / "coarse.nrrd", np.ascontiguousarray(raw[::2, ::2, ::2]), coarse_aff)
    ls = load_labels(tmp_path / "coarse.nrrd", cip_ct, CIP_TABLE)
    assert "resampled onto the CT" in _messages(ls, "info")
    for key in ("left_upper_third", "left_lower_third", "right_middle_third"):
        assert ls.masks[key].shape == cip_ct.shape
        assert _dice(ls.masks[key], cip_labels.masks[key]) > 0.7, key
    # A cropped map (half the slices, its own origin) lands exactly where it was.
    k0 = raw.shape[2] // 2
    crop_aff = aff.copy()
    crop_aff[:3, 3] = (aff @ np.array([0, 0, k0, 1.0]))[:3]
    _write_nrrd(tmp_path / "crop.nrrd", np.ascontiguousarray(raw[:, :, k0:]), crop_aff)
    ls = load_labels(tmp_path / "crop.nrrd", cip_ct, CIP_TABLE)
    full = cip_labels.masks["right_upper_third"]
    expect = np.zeros_like(full)
    # canonical axis 0 runs superior = stored axis 2 (z up), so the same k range.
    expect[k0:] = full[k0:]
    assert np.array_equal(ls.masks["right_upper_third"], expect)


def test_labels_outside_the_ct_are_reported(cip: Path, cip_ct: Volume, tmp_path: Path) -> None:
    raw, hdr = nrrd.read(str(cip / "lm-64.nrrd"))
    aff = _nrrd_affine(hdr)
    aff[:3, 3] += (0.0, 0.0, 2000.0)  # two metres above the patient
    _write_nrrd(tmp_path / "lung_nodules.nrrd", (raw == 512).astype(np.uint8), aff)
    ls = load_labels(tmp_path / "lung_nodules.nrrd", cip_ct)
    assert ls.structures() == []
    assert "lies entirely outside the CT" in _messages(ls, "warning")
    raw_aff = _nrrd_affine(hdr)
    raw_aff[:3, 3] += (0.0, 0.0, 0.5 * raw.shape[2] * raw_aff[2, 2])  # half a CT higher
    _write_nrrd(tmp_path / "shifted.nrrd", raw, raw_aff)
    ls = load_labels(tmp_path / "shifted.nrrd", cip_ct, CIP_TABLE)
    warnings = _messages(ls, "warning")
    assert "left_upper_third in shifted.nrrd lies entirely outside the CT" in warnings
    assert "% of left_middle_third in shifted.nrrd lies inside the CT" in warnings
    assert "left_lower_third" in ls.structures()


def test_without_ct_masks_keep_their_own_grid(cip: Path, cip_labels: LabelSet) -> None:
    ls = load_labels(cip / "lm-64.nrrd", None, CIP_TABLE)
    assert "No CT is loaded" in _messages(ls, "warning")
    assert ls.voxel_counts() == CIP_COUNTS
    for key in ("trachea_bronchia", "left_upper_third"):
        assert np.allclose(ls.centroid_lps(key), cip_labels.centroid_lps(key))


# ----------------------------------------------------------------------------- folders, meshes

def _sphere(center: tuple[float, float, float], radius: float):
    from vtkmodules.vtkFiltersSources import vtkSphereSource

    src = vtkSphereSource()
    src.SetCenter(*center)
    src.SetRadius(radius)
    src.SetThetaResolution(16)
    src.SetPhiResolution(12)
    src.Update()
    return src.GetOutput()  # the data, not the source: a collected source would crash VTK


def test_meshes_load_in_lps_mm(tmp_path: Path) -> None:
    from vtkmodules.vtkIOGeometry import vtkOBJWriter, vtkSTLWriter
    from vtkmodules.vtkIOPLY import vtkPLYWriter
    from vtkmodules.vtkIOXML import vtkXMLPolyDataWriter

    c = (12.0, -150.0, 400.0)
    for name, writer in (("lung_nodules.stl", vtkSTLWriter()), ("trachea.vtp",
                         vtkXMLPolyDataWriter()), ("RUL.obj", vtkOBJWriter()),
                         ("vessels.ply", vtkPLYWriter())):
        writer.SetInputData(_sphere(c, 10.0))
        writer.SetFileName(str(tmp_path / name))
        assert writer.Write() == 1
    ls = load_labels(tmp_path, None)
    assert set(ls.meshes) == {"lung_nodules", "trachea_bronchia", "right_upper_lobe", "vessels"}
    for key, mesh in ls.meshes.items():
        assert isinstance(mesh, Mesh)
        assert mesh.vertices.dtype == np.float32 and mesh.vertices.shape[1] == 3
        assert mesh.faces.dtype == np.int32 and mesh.faces.shape[1] == 3
        assert mesh.faces.max() < len(mesh.vertices)
        r = np.linalg.norm(mesh.vertices - np.array(c, dtype=np.float32), axis=1)
        assert np.allclose(r, 10.0, atol=1e-3), key
        assert np.allclose(ls.centroid_lps(key), c, atol=0.5)
    assert ls.sources["lung_nodules"] == "lung_nodules.stl"
    assert "'vessels' is not a structure the 3D view knows; kept as 'vessels'" in _messages(ls)
    ras = load_labels(tmp_path / "lung_nodules.stl", None, mesh_space="RAS")
    assert np.allclose(ras.centroid_lps("lung_nodules"), (-12.0, 150.0, 400.0), atol=0.5)


def test_slicer_space_header_and_mesh_outside_ct(tmp_path: Path) -> None:
    from vtkmodules.vtkIOGeometry import vtkSTLWriter

    ct = _tiny_ct()
    centre_lps = ct.index_to_lps((5, 6, 7))
    writer = vtkSTLWriter()
    writer.SetFileTypeToBinary()
    writer.SetHeader("SPACE=RAS")
    ras_centre = (-centre_lps[0], -centre_lps[1], centre_lps[2])
    writer.SetInputData(_sphere(ras_centre, 3.0))
    writer.SetFileName(str(tmp_path / "nodule.stl"))
    writer.Write()
    ls = load_labels(tmp_path / "nodule.stl", ct)  # the header wins over the LPS default
    assert np.allclose(ls.centroid_lps("lung_nodules"), centre_lps, atol=0.3)
    assert not _messages(ls, "warning")
    far = tmp_path / "far"
    far.mkdir()
    writer.SetHeader("solid")
    writer.SetInputData(_sphere((500.0, 500.0, 500.0), 3.0))
    writer.SetFileName(str(far / "lung_nodules.stl"))
    writer.Write()
    assert "lies outside the CT" in _messages(load_labels(far, ct), "warning")


def test_folder_of_masks_with_union_unknown_empty_and_corrupt(tmp_path: Path) -> None:
    ct = _tiny_ct()
    aff = ct.affine
    trachea = np.zeros(ct.shape, np.uint8)
    trachea[5:, 6, 7] = 1
    bronchi = np.zeros(ct.shape, np.uint8)
    bronchi[4, 5:9, 7] = 1
    nodule = np.zeros(ct.shape, np.uint8)
    nodule[2:4, 2:4, 10:12] = 255
    _write_nifti(tmp_path / "trachea.nii.gz", trachea, aff)
    _write_nrrd(tmp_path / "bronchi.nrrd", bronchi, aff)
    _write_nifti(tmp_path / "Lung_Nodule.nii.gz", nodule, aff)
    _write_nifti(tmp_path / "heart.nii.gz", nodule, aff)
    _write_nifti(tmp_path / "lung_upper_lobe_left.nii.gz", np.zeros(ct.shape, np.uint8), aff)
    (tmp_path / "broken.nii.gz").write_bytes(b"\x1f\x8bnot really gzip" + bytes(range(256)))
    good = (tmp_path / "trachea.nii.gz").read_bytes()
    (tmp_path / "truncated.nii.gz").write_bytes(good[: len(good) // 2])
    (tmp_path / "airway.stl").write_bytes(b"solid garbage" * 20)
    (tmp_path / "notes.docx").write_bytes(b"x")
    (tmp_path / "case.toml").write_text("")
    ls = load_labels(tmp_path, ct)
    assert ls.structures() == ["heart", "lung_nodules", "trachea_bronchia"]
    assert np.array_equal(ls.masks["trachea_bronchia"], (trachea | bronchi).astype(bool))
    assert ls.voxel_counts()["lung_nodules"] == 8
    assert "bronchi.nrrd" in ls.sources["trachea_bronchia"]
    errors = _messages(ls, "error")
    assert "broken.nii.gz could not be read" in errors
    assert "truncated.nii.gz could not be read" in errors
    assert "surface airway.stl could not be read" in errors
    warnings = _messages(ls, "warning")
    assert "lung_upper_lobe_left.nii.gz is empty" in warnings
    assert "kept as 'heart'" in _messages(ls, "info")
    assert "notes.docx" in _messages(ls, "info")
    # A case.toml label table (for some multi-label file) leaves per-structure masks alone.
    with_table = load_labels(tmp_path, ct, {7: "lung_nodules"})
    assert with_table.voxel_counts() == ls.voxel_counts()
    small = load_labels(tmp_path, ct, max_unknown_bytes=0)
    assert "heart" not in small.structures()
    assert "to save memory: heart" in _messages(small, "warning")


def test_empty_folder_and_missing_path(tmp_path: Path) -> None:
    ls = load_labels(tmp_path, None)
    assert ls.structures() == [] and ls.masks == {} and ls.meshes == {}
    assert "has no label maps or surfaces" in _messages(ls, "warning")
    missing = load_labels(tmp_path / "nope", None)
    assert "does not exist" in _messages(missing, "error")


def test_label_without_affine(tmp_path: Path) -> None:
    ct = _tiny_ct()
    img = nib.Nifti1Image(np.ones((4, 4, 4), np.uint8), None)  # sform/qform codes 0
    nib.save(img, str(tmp_path / "lung_nodules.nii.gz"))
    ls = load_labels(tmp_path / "lung_nodules.nii.gz", ct)
    assert ls.structures() == []
    assert "no position information and its shape (4, 4, 4) differs" in _messages(ls, "error")
    same = nib.Nifti1Image(np.ones(ct.shape, np.uint8), None)
    nib.save(same, str(tmp_path / "tumor.nii.gz"))
    ls = load_labels(tmp_path / "tumor.nii.gz", ct)
    assert ls.voxel_counts() == {"lung_nodules": int(np.prod(ct.shape))}
    assert "assumed to lie on the CT's grid" in _messages(ls, "warning")


def test_slicer_seg_nrrd_names_and_layers(tmp_path: Path) -> None:
    ct = _tiny_ct()
    lab = np.zeros((2, *ct.shape), np.uint8)
    lab[0, 1:3, 1:3, 1:3] = 1
    lab[0, 6:8, 6:8, 9:12] = 2
    lab[1, 2:4, 2:4, 2:4] = 1  # overlaps the first segment: a second layer
    hdr = {
        "space": "left-posterior-superior",
        "space directions": np.vstack([np.full(3, np.nan), ct.affine[:3, :3].T]),
        "space origin": ct.affine[:3, 3],
        "kinds": ["list", "domain", "domain", "domain"],
        "Segment0_Name": "Right upper lobe", "Segment0_LabelValue": "1", "Segment0_Layer": "0",
        "Segment1_Name": "Left lower lobe", "Segment1_LabelValue": "2", "Segment1_Layer": "0",
        "Segment2_Name": "Nodule", "Segment2_LabelValue": "1", "Segment2_Layer": "1",
    }
    nrrd.write(str(tmp_path / "Segmentation.seg.nrrd"), lab, hdr)
    ls = load_labels(tmp_path / "Segmentation.seg.nrrd", ct)
    assert ls.voxel_counts() == {"left_lower_lobe": 12, "lung_nodules": 8,
                                 "right_upper_lobe": 8}
    assert ls.masks["lung_nodules"][2, 2, 2] and ls.masks["right_upper_lobe"][2, 2, 2]
    assert "Nodule" in ls.sources["lung_nodules"]

