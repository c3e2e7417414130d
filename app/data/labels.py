"""Label maps and surface meshes of the anatomy the 3D (AR) view shows.

``load_labels`` reads a labels folder (per-structure NIfTI/NRRD masks, multi-label maps, surface
meshes) or a single file, maps structure names onto the console's keys (``app.core.vocab``) and
puts every mask on the CT's canonical grid (``app.data.volume``), so that the AR renderer, the
MPR overlays and the CT share one geometry. Nothing here raises on bad input: what is wrong is
reported as :class:`Problem` entries on the returned :class:`LabelSet`.
"""

from __future__ import annotations

import contextlib
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from app.core.vocab import AR_ABBREVIATIONS, AR_STRUCTURES, LOBES
from app.data.problems import Problem
from app.data.volume import Volume, canonicalize

PART = "labels"

VOLUME_SUFFIXES = (".seg.nrrd", ".nii.gz", ".nii", ".nrrd", ".nhdr")
MESH_SUFFIXES = (".stl", ".vtp", ".obj", ".ply", ".vtk")
# Longest first, so ".nii.gz" wins over ".gz"-less matches and ".seg.nrrd" over ".nrrd".
_STRIP_SUFFIXES = tuple(sorted({*VOLUME_SUFFIXES, *MESH_SUFFIXES}, key=len, reverse=True))
# Files that commonly sit next to labels and are not labels: skipped without a problem.
_QUIET_SUFFIXES = (".toml", ".json", ".txt", ".md", ".csv", ".xlsx", ".log", ".mrml", ".ctbl")

# TotalSegmentator v2 "total" task ids of the structures the 3D view shows. Verified against the
# label table TotalSegmentator embeds in its own NIfTI output (testdata totalseg_example):
# 15 is esophagus, 16 trachea. v1 numbering differs (lobes 13..17), hence the anatomy checks.
TOTALSEG_V2_TOTAL: dict[int, str] = {
    10: "lung_upper_lobe_left",
    11: "lung_lower_lobe_left",
    12: "lung_upper_lobe_right",
    13: "lung_middle_lobe_right",
    14: "lung_lower_lobe_right",
    16: "trachea",
}
_TOTALSEG_MAX_ID = 117  # v2 "total" has ids 1..117

ProgressFn = Callable[[float, str], None]


@dataclass
class Mesh:
    """A triangle surface: ``vertices`` (N, 3) float32 in patient LPS mm, ``faces`` (M, 3) int32."""

    vertices: np.ndarray
    faces: np.ndarray
    source: str = ""

    def centroid_lps(self) -> np.ndarray:
        return self.vertices.astype(np.float64).mean(axis=0)


@dataclass
class LabelSet:
    """Structures of one case, keyed by structure key (``AR_STRUCTURES`` or a sanitized name).

    ``masks`` are bool arrays on the CT's canonical grid (``affines[key]`` is then the CT's
    affine); without a CT each mask stays on its own canonical grid, given by ``affines[key]``.
    """

    masks: dict[str, np.ndarray] = field(default_factory=dict)
    meshes: dict[str, Mesh] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)
    affines: dict[str, np.ndarray] = field(default_factory=dict)

    def structures(self) -> list[str]:
        return sorted({*self.masks, *self.meshes})

    def voxel_counts(self) -> dict[str, int]:
        return {k: int(np.count_nonzero(m)) for k, m in sorted(self.masks.items())}

    def centroid_lps(self, key: str) -> np.ndarray | None:
        """Centre of a structure in LPS mm (mask if there is one, else mesh); None if empty.

        Raises KeyError for a structure that is not in the set.
        """
        if key in self.masks:
            return _mask_centroid(self.masks[key], self.affines[key])
        if key in self.meshes:
            mesh = self.meshes[key]
            return mesh.centroid_lps() if len(mesh.vertices) else None
        raise KeyError(key)


# ----------------------------------------------------------------------------- structure names

_AR_SET = frozenset(AR_STRUCTURES)
_NODULE_ALIASES = (
    "lung_nodules", "lung_nodule", "nodule", "nodules", "tumor", "tumors", "tumour", "tumours",
    "lung_tumor", "lung_tumour", "lesion", "lesions", "lung_lesion", "lung_lesions",
)
_AIRWAY_ALIASES = (
    "trachea_bronchia", "trachea", "lung_trachea_bronchia", "airway", "airways", "bronchi",
    "bronchus", "bronchia", "trachea_and_bronchi", "trachea_bronchi", "airway_tree",
    "bronchial_tree",
)
_ALIASES: dict[str, str] = {
    **{k: k for k in AR_STRUCTURES},
    **AR_ABBREVIATIONS,
    "lung_upper_lobe_left": "left_upper_lobe",
    "lung_lower_lobe_left": "left_lower_lobe",
    "lung_upper_lobe_right": "right_upper_lobe",
    "lung_middle_lobe_right": "right_middle_lobe",
    "lung_lower_lobe_right": "right_lower_lobe",
    **{a: "lung_nodules" for a in _NODULE_ALIASES},
    **{a: "trachea_bronchia" for a in _AIRWAY_ALIASES},
}
_SIDES = {"left": "left", "right": "right"}
_LEVELS = {"upper": "upper", "superior": "upper", "middle": "middle", "lower": "lower",
           "inferior": "lower"}
_LOBE_FILLER = {"lung", "lobe", "lobes", "pulmonary", "of", "the"}


def strip_suffix(name: str) -> str:
    """A file name without the label/mesh extension (``.nii.gz``, ``.seg.nrrd``, ``.stl`` …)."""
    low = name.lower()
    for suffix in _STRIP_SUFFIXES:
        if low.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def sanitize_name(name: str) -> str:
    """``"LeftUpper Lobe.nii.gz"`` → ``"left_upper_lobe"``: the key an unknown name is kept as."""
    stem = strip_suffix(name.strip())
    stem = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", stem)  # camelCase → camel_case
    key = re.sub(r"[^a-z0-9]+", "_", stem.lower()).strip("_")
    return key or "structure"


def structure_key(name: str) -> str | None:
    """Our structure key for a label/file name, or None when the 3D view does not know it.

    Case-insensitive; ignores extensions; accepts TotalSegmentator names, our keys, RUL/RML/…
    abbreviations and plain wordings such as "Right middle lobe" or "lung_lobe_upper_left".
    """
    key = sanitize_name(name)
    if key in _ALIASES:
        return _ALIASES[key]
    tokens = key.split("_")
    # Only guess a lobe from words that say nothing else ("left_upper_lobe_nodule" is not a lobe).
    if ("lobe" in tokens or "lobes" in tokens) and set(tokens) <= (
        _LOBE_FILLER | set(_SIDES) | set(_LEVELS)
    ):
        sides = {_SIDES[t] for t in tokens if t in _SIDES}
        levels = {_LEVELS[t] for t in tokens if t in _LEVELS}
        if len(sides) == 1 and len(levels) == 1:
            guess = f"{sides.pop()}_{levels.pop()}_lobe"
            if guess in LOBES:
                return guess
    return None


def label_table_from_config(raw: Mapping[Any, Any]) -> dict[int, str]:
    """A label table from case.toml (``{"10" = "lung_upper_lobe_left", …}``) as ``{10: "…"}``.

    Also accepts the inverted form ``{name = value}``. Entries that are not integers are ignored.
    """
    table: dict[int, str] = {}
    for k, v in raw.items():
        with contextlib.suppress(TypeError, ValueError):
            if isinstance(v, int) and not isinstance(v, bool):
                table[int(v)] = str(k)
            else:
                table[int(str(k).strip())] = str(v)
    return table


# ----------------------------------------------------------------------------- reading files

@dataclass
class _RawLabel:
    """A label file as stored: 3D integer layers in stored index order, stored index → LPS."""

    layers: list[np.ndarray]
    affine: np.ndarray | None
    names: dict[tuple[int, int], str] = field(default_factory=dict)  # (layer, value) → name
    notes: list[str] = field(default_factory=list)


def _nifti_label_names(img: Any) -> dict[tuple[int, int], str]:
    """Names embedded in a NIfTI extension (TotalSegmentator writes a Caret/GIfTI LabelTable)."""
    names: dict[tuple[int, int], str] = {}
    for ext in getattr(img.header, "extensions", []):
        try:
            raw = ext.get_content()
            text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        except Exception:
            continue
        if "<Label" not in text:
            continue
        text = text.strip().rstrip("\x00")
        try:
            root = ET.fromstring(text)
            items = [(el.get("Key"), el.text) for el in root.iter("Label")]
        except ET.ParseError:
            items = re.findall(r'<Label\s+Key="(\d+)"[^>]*>\s*(?:<!\[CDATA\[)?([^<\]]*)', text)
        for k, v in items:
            with contextlib.suppress(TypeError, ValueError):
                if v and v.strip() and int(k) != 0:
                    names[(0, int(k))] = v.strip()
    return names


def _int_layer(arr: np.ndarray) -> np.ndarray:
    """Label data as an integer array; float label maps are rounded (probability maps thresholded)."""
    if arr.dtype == bool:
        return arr.view(np.uint8)
    if np.issubdtype(arr.dtype, np.integer):
        return arr
    finite = np.nan_to_num(arr)  # float label maps are rare; a copy is acceptable here
    if finite.size and float(finite.max()) <= 1.0 and float(finite.min()) >= 0.0:
        return (finite >= 0.5).view(np.uint8)  # a soft mask
    return np.rint(finite).astype(np.int32)


def _squeeze3d(arr: np.ndarray, what: str) -> np.ndarray:
    while arr.ndim > 3 and arr.shape[-1] == 1:
        arr = arr[..., 0]
    if arr.ndim != 3:
        raise ValueError(f"{what} has {arr.ndim} dimensions {arr.shape}; a 3D label map is needed")
    return arr


def _read_nifti(path: Path) -> _RawLabel:
    import nibabel as nib

    img = nib.load(str(path))
    hdr = img.header
    try:  # both codes 0: nibabel invents an affine from pixdim, which places nothing
        usable = int(hdr["sform_code"]) > 0 or int(hdr["qform_code"]) > 0
    except (KeyError, ValueError):
        usable = False
    slope, inter = getattr(img.dataobj, "slope", 1.0), getattr(img.dataobj, "inter", 0.0)
    # Label values are stored unscaled; get_unscaled avoids a float copy of the whole volume.
    if hasattr(img.dataobj, "get_unscaled") and slope in (0.0, 1.0) and inter == 0.0:
        data = np.asarray(img.dataobj.get_unscaled())
    else:
        data = np.asarray(img.dataobj)
    data = _squeeze3d(data, path.name)
    affine = None
    if usable:
        affine = np.diag([-1.0, -1.0, 1.0, 1.0]) @ np.asarray(img.affine, dtype=float)  # RAS→LPS
    return _RawLabel([_int_layer(data)], affine, _nifti_label_names(img))


_NRRD_SPACES = {  # NRRD space → sign flips to LPS
    "left-posterior-superior": (1, 1, 1), "lps": (1, 1, 1),
    "right-anterior-superior": (-1, -1, 1), "ras": (-1, -1, 1),
    "left-anterior-superior": (1, -1, 1), "las": (1, -1, 1),
    "3d-right-handed": (1, 1, 1),  # ITK writes LPS under this name
    "scanner-xyz": (1, 1, 1),
}


def _read_nrrd(path: Path) -> _RawLabel:
    import nrrd

    data, hdr = nrrd.read(str(path))
    notes: list[str] = []
    kinds = [str(k).lower() for k in hdr.get("kinds", ["domain"] * data.ndim)]
    dirs = hdr.get("space directions")
    if data.ndim == 4 and kinds and kinds[0] not in ("domain", "space"):
        layers = [data[i] for i in range(data.shape[0])]  # Slicer .seg.nrrd with overlapping layers
        dirs = None if dirs is None else np.asarray(dirs, dtype=float)[1:]
    else:
        layers = [_squeeze3d(data, path.name)]
        dirs = None if dirs is None else np.asarray(dirs, dtype=float)[:3]
    affine = None
    if dirs is not None and dirs.shape == (3, 3) and np.all(np.isfinite(dirs)) \
            and abs(np.linalg.det(dirs)) > 1e-9:
        space = str(hdr.get("space", "")).lower()
        if space not in _NRRD_SPACES:
            notes.append(f"its space '{space or 'unspecified'}' was read as LPS")
        flips = np.array(_NRRD_SPACES.get(space, (1, 1, 1)), dtype=float)
        affine = np.eye(4)
        affine[:3, :3] = (dirs * flips).T  # pynrrd: row i = direction of axis i
        origin = np.asarray(hdr.get("space origin", np.zeros(3)), dtype=float)
        affine[:3, 3] = np.nan_to_num(origin) * flips
    names: dict[tuple[int, int], str] = {}
    for k, v in hdr.items():
        m = re.fullmatch(r"Segment(\d+)_Name", str(k))
        if not m:
            continue
        i = m.group(1)
        with contextlib.suppress(TypeError, ValueError):
            value = int(hdr.get(f"Segment{i}_LabelValue", int(i) + 1))
            layer = int(hdr.get(f"Segment{i}_Layer", 0))
            if value != 0 and 0 <= layer < len(layers):
                names[(layer, value)] = str(v).strip()
    return _RawLabel([_int_layer(x) for x in layers], affine, names, notes)


def _read_label_file(path: Path) -> _RawLabel:
    low = path.name.lower()
    if low.endswith((".nii", ".nii.gz")):
        return _read_nifti(path)
    return _read_nrrd(path)


# ----------------------------------------------------------------------------- geometry

def _mask_centroid(mask: np.ndarray, affine: np.ndarray) -> np.ndarray | None:
    total = int(np.count_nonzero(mask))
    if total == 0:
        return None
    # Per-axis marginal sums instead of argwhere: no (N, 3) index array for big masks.
    idx = []
    for axis in range(3):
        other = tuple(a for a in range(3) if a != axis)
        marg = np.count_nonzero(mask, axis=other)
        idx.append(float(marg @ np.arange(mask.shape[axis])) / total)
    return affine[:3, :3] @ np.array(idx) + affine[:3, 3]


def _same_grid(aff_a: np.ndarray, aff_b: np.ndarray, shape: tuple[int, ...]) -> bool:
    """True when two canonical grids of ``shape`` put every voxel at the same place.

    Compares the grid corners: ~1e-3 mm, loosened to 1 % of a voxel because affines stored as
    float32 (NIfTI) drift by a few µm over 500 voxels; nearest-neighbour results are identical.
    """
    spacing = float(np.linalg.norm(aff_b[:3, :3], axis=0).min())
    tol = max(1e-3, 0.01 * spacing)
    n = np.array(shape, dtype=float) - 1
    corners = np.array([[i, j, k, 1.0] for i in (0, n[0]) for j in (0, n[1]) for k in (0, n[2])])
    diff = (corners @ aff_a.T - corners @ aff_b.T)[:, :3]
    return float(np.abs(diff).max()) <= tol


def _value_counts(arr: np.ndarray) -> dict[int, int]:
    """Voxel count per non-zero value, in slabs so no full-size intp copy is made."""
    counts: dict[int, int] = {}
    if arr.size == 0:
        return counts
    # Slab along the axis with the largest stride: slabs are then (nearly) contiguous memory.
    axis = int(np.argmax(np.abs(arr.strides)))
    n = arr.shape[axis]
    step = max(1, (1 << 22) // max(1, arr.size // n))
    for start in range(0, n, step):
        index: list[slice | int] = [slice(None)] * arr.ndim
        index[axis] = slice(start, min(start + step, n))
        slab = arr[tuple(index)].ravel(order="K")
        if slab.dtype.kind == "u" or int(slab.min()) >= 0:
            binc = np.bincount(slab)
            nz = np.flatnonzero(binc)
            pairs = zip(nz.tolist(), binc[nz].tolist(), strict=True)
        else:
            vals, cnt = np.unique(slab, return_counts=True)
            pairs = zip(vals.tolist(), cnt.tolist(), strict=True)
        for v, c in pairs:
            if v != 0:
                counts[v] = counts.get(v, 0) + c
    return counts


@dataclass
class _Placed:
    data: np.ndarray          # on the target grid (a view when only reordered)
    affine: np.ndarray        # target grid: canonical index → LPS
    resampled: bool
    ratio: float              # label voxel volume / target voxel volume


def _place(layer: np.ndarray, affine: np.ndarray, ct: Volume | None) -> _Placed:
    if ct is None:
        view, caff = canonicalize(layer, affine)
        return _Placed(view, caff, False, 1.0)
    ratio = abs(np.linalg.det(affine[:3, :3]) / np.linalg.det(ct.affine[:3, :3]))
    view, caff = canonicalize(layer, affine)
    if view.shape == ct.shape and _same_grid(caff, ct.affine, ct.shape):
        return _Placed(view, ct.affine, False, ratio)
    from scipy.ndimage import affine_transform

    m = np.linalg.inv(affine) @ ct.affine  # CT canonical index → stored label index
    out = affine_transform(layer, m[:3, :3], offset=m[:3, 3], output_shape=ct.shape, order=0,
                           mode="constant", cval=0, prefilter=False)
    return _Placed(out, ct.affine, True, ratio)


# ----------------------------------------------------------------------------- meshes

def _read_mesh(path: Path, space: str) -> tuple[Mesh, str]:
    """Read a surface with VTK as triangles. Returns the mesh and the space it was read in."""
    from vtkmodules.util.numpy_support import vtk_to_numpy
    from vtkmodules.vtkCommonCore import vtkObject
    from vtkmodules.vtkFiltersCore import vtkTriangleFilter

    low = path.name.lower()
    if low.endswith(".stl"):
        from vtkmodules.vtkIOGeometry import vtkSTLReader as Reader
    elif low.endswith(".obj"):
        from vtkmodules.vtkIOGeometry import vtkOBJReader as Reader
    elif low.endswith(".ply"):
        from vtkmodules.vtkIOPLY import vtkPLYReader as Reader
    elif low.endswith(".vtp"):
        from vtkmodules.vtkIOXML import vtkXMLPolyDataReader as Reader
    else:
        from vtkmodules.vtkIOLegacy import vtkPolyDataReader as Reader

    # 3D Slicer writes "SPACE=RAS"/"SPACE=LPS" into mesh headers; that beats the case default.
    with open(path, "rb") as f:
        m = re.search(rb"SPACE=(RAS|LPS)", f.read(2048))
    if m:
        space = m.group(1).decode()

    reader = Reader()
    reader.SetFileName(str(path))
    tri = vtkTriangleFilter()
    tri.SetInputConnection(reader.GetOutputPort())
    tri.PassVertsOff()
    tri.PassLinesOff()
    shown = vtkObject.GetGlobalWarningDisplay()
    vtkObject.GlobalWarningDisplayOff()  # VTK prints read errors to stderr; we report them
    try:
        tri.Update()
    finally:
        vtkObject.SetGlobalWarningDisplay(shown)
    poly = tri.GetOutput()
    if poly is None or poly.GetNumberOfPoints() == 0 or poly.GetNumberOfPolys() == 0:
        raise ValueError("no triangles could be read")
    verts = vtk_to_numpy(poly.GetPoints().GetData()).astype(np.float32, copy=True)
    polys = poly.GetPolys()
    offsets = vtk_to_numpy(polys.GetOffsetsArray())
    conn = vtk_to_numpy(polys.GetConnectivityArray())
    if not np.all(np.diff(offsets) == 3):
        raise ValueError("the surface has cells that are not triangles")
    faces = conn.reshape(-1, 3).astype(np.int32, copy=True)
    if space.upper() == "RAS":
        verts[:, :2] *= -1.0
    return Mesh(verts, faces, path.name), space.upper()


def _bounds_overlap(verts: np.ndarray, ct: Volume) -> bool:
    n = np.array(ct.shape, dtype=float) - 1
    corners = np.array([[i, j, k] for i in (0, n[0]) for j in (0, n[1]) for k in (0, n[2])])
    pts = ct.index_to_lps(corners)
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    vlo, vhi = verts.min(axis=0), verts.max(axis=0)
    return bool(np.all(vhi >= lo) and np.all(vlo <= hi))


# ----------------------------------------------------------------------------- the loader

class _Builder:
    def __init__(self, ct: Volume | None, max_unknown_bytes: int) -> None:
        self.ct = ct
        self.out = LabelSet()
        self.unknown_left = max_unknown_bytes
        self.dropped: list[str] = []

    def problem(self, severity: str, message: str, detail: str = "") -> None:
        self.out.problems.append(Problem(severity, PART, message, detail))  # type: ignore[arg-type]

    def add_mask(self, key: str, mask: np.ndarray, affine: np.ndarray, source: str,
                 known: bool) -> bool:
        out = self.out
        if key in out.masks:
            if out.masks[key].shape == mask.shape and np.allclose(out.affines[key], affine):
                out.masks[key] = out.masks[key] | mask  # e.g. trachea + bronchi → one airway
                out.sources[key] = f"{out.sources[key]}; {source}"
                return True
            self.problem("warning", f"Two label files give {key} on different grids (no CT to "
                         f"align them); kept the first.", source)
            return False
        if not known:
            if mask.nbytes > self.unknown_left:
                self.dropped.append(key)
                return False
            self.unknown_left -= mask.nbytes
        out.masks[key] = mask
        out.affines[key] = affine
        out.sources[key] = source
        return True

    def add_mesh(self, key: str, mesh: Mesh) -> None:
        meshes = self.out.meshes
        if key in meshes:  # several surfaces of one structure: one mesh
            old = meshes[key]
            mesh = Mesh(np.concatenate([old.vertices, mesh.vertices]),
                        np.concatenate([old.faces, mesh.faces + len(old.vertices)]),
                        f"{old.source}; {mesh.source}")
        meshes[key] = mesh
        if key not in self.out.masks:
            self.out.sources[key] = mesh.source

    # -- volumes -----------------------------------------------------------------------------

    def load_volume_file(self, path: Path, label_table: dict[int, str] | None) -> None:
        try:
            raw = _read_label_file(path)
        except Exception as exc:  # corrupt gzip, bad header, wrong dimensions …
            self.problem("error", f"The label file {path.name} could not be read; it was "
                         "skipped.", f"{type(exc).__name__}: {exc}")
            return
        for note in raw.notes:
            self.problem("info", f"In {path.name}, {note}.")
        if raw.affine is None:
            if self.ct is not None and raw.layers[0].shape == self.ct.shape:
                self.problem("warning", f"{path.name} has no position information; it was "
                             "assumed to lie on the CT's grid.")
                raw.affine = self.ct.affine  # with this affine canonicalize is the identity
            else:
                want = f" and its shape {raw.layers[0].shape} differs from the CT's " \
                       f"{self.ct.shape}" if self.ct is not None else ""
                self.problem("error", f"{path.name} has no position information{want}, so it "
                             "cannot be placed; it was skipped.")
                return
        name_key = structure_key(path.name)
        try:
            # A file is a multi-label map if it names its labels or has layers; a file named
            # after a structure is a mask; otherwise its values decide.
            counts: list[dict[int, int]] | None = None
            if raw.names or len(raw.layers) > 1:
                multi = True
            elif name_key is not None:
                multi = False
            else:
                counts = [_value_counts(raw.layers[0])]
                values = set(counts[0])
                multi = len(values) > 1 or bool(label_table and values & set(label_table))
            if multi:
                self._multi(path, raw, label_table, counts)
            else:
                self._single(path, raw, name_key)
        except MemoryError:
            self.problem("error", f"{path.name} is too large to load; it was skipped.")
        except Exception as exc:
            self.problem("error", f"{path.name} could not be used; it was skipped.",
                         f"{type(exc).__name__}: {exc}")

    def _note_resampled(self, path: Path, placed: _Placed) -> None:
        if placed.resampled:
            self.problem("info", f"{path.name} is on a different grid from the CT; it was "
                         "resampled onto the CT (nearest neighbour).")

    def _check_inside(self, path: Path, name: str, src: int, dst: int, placed: _Placed) -> bool:
        if src == 0:
            return False
        if dst == 0:
            self.problem("warning", f"{name} in {path.name} lies entirely outside the CT.")
            return False
        expected = src * placed.ratio
        if placed.resampled and expected >= 50 and dst < 0.5 * expected:
            self.problem("warning", f"Only about {100 * dst / expected:.0f} % of {name} in "
                         f"{path.name} lies inside the CT.")
        return True

    def _single(self, path: Path, raw: _RawLabel, key: str | None) -> None:
        layer = raw.layers[0]
        name = key or sanitize_name(path.name)
        src = int(np.count_nonzero(layer))
        if src == 0:
            self.problem("warning", f"{path.name} is empty (no labelled voxels); {name} is not "
                         "shown.")
            return
        placed = _place(layer, raw.affine, self.ct)  # type: ignore[arg-type]
        self._note_resampled(path, placed)
        mask = placed.data != 0  # a new contiguous bool array, whatever the view's strides
        if not self._check_inside(path, name, src, int(np.count_nonzero(mask)), placed):
            return
        if self.add_mask(name, mask, placed.affine, path.name, key is not None) and key is None:
            self.problem("info", f"'{strip_suffix(path.name)}' is not a structure the 3D view "
                         f"knows; kept as '{name}'.")

    def _table_for(self, path: Path, raw: _RawLabel, table: dict[int, str] | None,
                   counts: list[dict[int, int]]) -> dict[tuple[int, int], str] | None:
        if table is not None:
            return {(layer, v): n for layer in range(len(raw.layers)) for v, n in table.items()}
        if raw.names:
            return raw.names
        values = set().union(*counts)
        if (len(raw.layers) == 1 and values and max(values) <= _TOTALSEG_MAX_ID
                and len(values) >= 3 and values & set(TOTALSEG_V2_TOTAL)):
            self.problem("info", f"{path.name} has no label table; its values look like "
                         "TotalSegmentator v2 'total' ids and were read as such.")
            return {(0, v): n for v, n in TOTALSEG_V2_TOTAL.items()}
        self.problem("warning", f"{path.name} holds several labels ({len(values)} values) but "
                     "no names; a label table is needed in case.toml ([labels.table]).")
        return None

    def _multi(self, path: Path, raw: _RawLabel, table: dict[int, str] | None,
               src_counts: list[dict[int, int]] | None = None) -> None:
        if src_counts is None:
            src_counts = [_value_counts(layer) for layer in raw.layers]
        names = self._table_for(path, raw, table, src_counts)
        if names is None:
            return
        unnamed: list[int] = []
        unknown: list[str] = []
        absent: list[str] = []
        for li, layer in enumerate(raw.layers):
            wanted = {v: n for (lj, v), n in names.items() if lj == li}
            unnamed += [v for v in src_counts[li] if v not in wanted]
            present = {v: n for v, n in wanted.items() if src_counts[li].get(v, 0) > 0}
            absent += [n for v, n in wanted.items() if v not in present
                       and structure_key(n) is not None]
            if not present:
                continue
            placed = _place(layer, raw.affine, self.ct)  # type: ignore[arg-type]
            self._note_resampled(path, placed)
            dst_counts = _value_counts(placed.data) if placed.resampled else src_counts[li]
            for v, n in sorted(present.items()):
                key = structure_key(n)
                shown = key or sanitize_name(n)
                if not self._check_inside(path, shown, src_counts[li][v],
                                          dst_counts.get(v, 0), placed):
                    continue
                if self.add_mask(shown, placed.data == v, placed.affine,
                                 f"{path.name} (label {v}: {n})", key is not None) \
                        and key is None:
                    unknown.append(shown)
        if absent:
            self.problem("info", f"{path.name} has no voxels for {', '.join(sorted(set(absent)))}"
                         " (named in its label table).")
        if len(unknown) == 1:
            self.problem("info", f"'{unknown[0]}' in {path.name} is not a structure the 3D view "
                         f"knows; kept as '{unknown[0]}'.")
        elif unknown:
            self.problem("info", f"{len(unknown)} labels in {path.name} ({_short_list(unknown)}) "
                         "are not structures the 3D view knows; kept under their own names.",
                         ", ".join(unknown))
        if unnamed:
            self.problem("info", f"Label values {_short_list(sorted(unnamed))} in {path.name} "
                         "have no name in the label table; they are not shown.")

    # -- meshes ------------------------------------------------------------------------------

    def load_mesh_file(self, path: Path, mesh_space: str) -> None:
        try:
            mesh, space = _read_mesh(path, mesh_space)
        except Exception as exc:
            self.problem("error", f"The surface {path.name} could not be read; it was skipped.",
                         f"{type(exc).__name__}: {exc}")
            return
        key = structure_key(path.name)
        name = key or sanitize_name(path.name)
        if key is None:
            self.problem("info", f"'{strip_suffix(path.name)}' is not a structure the 3D view "
                         f"knows; kept as '{name}'.")
        if self.ct is not None and not _bounds_overlap(mesh.vertices, self.ct):
            flipped = mesh.vertices * np.array([-1, -1, 1], dtype=np.float32)
            hint = (f" (it would fit if it were in {'LPS' if space == 'RAS' else 'RAS'}; set "
                    "mesh_space in case.toml)") if _bounds_overlap(flipped, self.ct) else ""
            self.problem("warning", f"The surface {path.name} lies outside the CT{hint}.")
        self.add_mesh(name, mesh)

    # -- sanity checks -----------------------------------------------------------------------

    def check_anatomy(self) -> None:
        out = self.out
        left = [out.centroid_lps(k) for k in ("left_upper_lobe", "left_lower_lobe")
                if k in out.masks or k in out.meshes]
        right = [out.centroid_lps(k) for k in LOBES if k.startswith("right")
                 and (k in out.masks or k in out.meshes)]
        left = [c for c in left if c is not None]
        right = [c for c in right if c is not None]
        # LPS +x is the patient's left: left lobes must lie at larger x than right lobes.
        if left and right and np.mean([c[0] for c in left]) < np.mean([c[0] for c in right]):
            self.problem("warning", "The left lung lobes lie on the patient's right of the right "
                         "lobes: the label table or the orientation of the labels is likely "
                         "wrong.")
        ct = self.ct
        if ct is None or not out.masks:
            return
        if float(np.min(ct.data[:: max(1, ct.shape[0] // 8)])) > -500:
            return  # not calibrated in HU (no air-like values): no density check
        for key in (*LOBES, "trachea_bronchia"):
            mask = out.masks.get(key)
            if mask is None:
                continue
            hu = float(ct.data[mask].mean())
            if hu > -300:
                self.problem("warning", f"{key} does not look like air-filled lung/airway on "
                             f"the CT (mean {hu:.0f} HU): check the label table and orientation.")


def load_labels(path: Path, ct: Volume | None, label_table: dict[int, str] | None = None,
                progress: ProgressFn | None = None, *, mesh_space: str = "LPS",
                max_unknown_bytes: int = 512 << 20) -> LabelSet:
    """Load a labels folder or a single label/mesh file; never raises for bad input.

    ``label_table`` names the values of multi-label files (value → name, from case.toml); without
    it, names embedded in the file (TotalSegmentator NIfTI extension, Slicer ``SegmentN_Name``) or
    TotalSegmentator v2 ids are used. ``mesh_space`` ("LPS" or "RAS") is the frame of meshes
    whose file does not say. Structures whose names the 3D view does not know are kept under
    their sanitized names, up to ``max_unknown_bytes`` of masks (then listed in a Problem).
    ``progress(fraction, text)`` is called per file.
    """
    path = Path(path)
    b = _Builder(ct, max_unknown_bytes)
    if ct is None:
        b.problem("warning", "No CT is loaded: label maps are kept on their own grids and cannot "
                  "be shown over CT slices.")
    if not path.exists():
        b.problem("error", f"The labels path {path} does not exist.")
        return b.out
    files, skipped, subdirs = _list_files(path)
    if progress is not None:
        progress(0.0, f"Reading {len(files)} label file(s)")
    for i, f in enumerate(files):
        if f.name.lower().endswith(MESH_SUFFIXES):
            b.load_mesh_file(f, mesh_space)
        else:
            b.load_volume_file(f, label_table)
        if progress is not None:
            progress((i + 1) / len(files), f"Read {f.name}")
    if skipped:
        b.problem("info", f"Ignored {len(skipped)} file(s) that are not label maps or surfaces: "
                  f"{_short_list(skipped)}.")
    if b.dropped:
        b.problem("warning", f"{len(b.dropped)} structure(s) the 3D view does not show were not "
                  f"kept, to save memory: {_short_list(b.dropped)}.", ", ".join(b.dropped))
    if not b.out.structures():
        where = "folder" if path.is_dir() else "file"
        sub = (f" (subfolders are not searched: {', '.join(sorted(subdirs)[:4])})"
               if subdirs else "")
        msg = (f"The labels {where} {path.name or path} has no label maps or surfaces{sub}."
               if not files else f"No structures could be loaded from {path.name or path}.")
        b.problem("warning", f"{msg} The 3D anatomy view will be empty.")
    b.check_anatomy()
    return b.out


def _short_list(items: list[Any], limit: int = 8) -> str:
    text = ", ".join(str(x) for x in items[:limit])
    return f"{text} and {len(items) - limit} more" if len(items) > limit else text


def _list_files(path: Path) -> tuple[list[Path], list[str], list[str]]:
    if path.is_file():
        return [path], [], []
    files: list[Path] = []
    skipped: list[str] = []
    subdirs: list[str] = []
    for f in sorted(path.iterdir()):
        if f.name.startswith("."):
            continue
        if f.is_dir():
            subdirs.append(f.name)
        elif f.name.lower().endswith(VOLUME_SUFFIXES + MESH_SUFFIXES):
            files.append(f)
        elif not f.name.lower().endswith(_QUIET_SUFFIXES):
            skipped.append(f.name)
    return files, skipped, subdirs


def iter_known(labels: LabelSet) -> Iterator[str]:
    """The structures of ``labels`` the 3D view knows, in ``AR_STRUCTURES`` order."""
    present = set(labels.structures())
    return (k for k in AR_STRUCTURES if k in present)
