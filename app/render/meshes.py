"""Surface meshes of the 3D (AR) anatomy: label masks → smooth, light VTK surfaces in LPS mm.

``build_surface`` turns one bool mask on a canonical CT grid into a ``vtkPolyData`` in patient
LPS millimetres, ready for lighting (outward point normals, counter-clockwise triangles):

1. crop to the mask's bounding box plus a one-voxel pad (a lobe fills a fraction of the CT);
2. block-reduce big masks to about ``voxel_mm`` (default 1.5 mm) by counting voxels per block,
   so the surface is extracted from a partial-volume image: smoother and 4–8× fewer triangles
   than the full-resolution staircase; small structures (a nodule) keep their full resolution;
3. ``vtkFlyingEdges3D`` at half the block count (the 0.5 iso-surface of the mask);
4. ``vtkQuadricClustering`` down to the triangle budget when over it (vtkQuadricDecimation costs
   ~5 µs per triangle here, clustering about 0.2 µs);
5. ``vtkWindowedSincPolyDataFilter`` smoothing (no shrinkage; also evens out the clustering);
6. the index→LPS affine applied to the points (any flips/permutations), clipped to the scan's
   extent; the triangle winding is then checked with the signed volume and reversed when the
   surface came out inside-out, so normals point outward whatever the affine's handedness;
7. ``vtkPolyDataNormals`` (smooth point normals, no splitting).

``MeshCache`` builds the surfaces of a :class:`~app.data.labels.LabelSet` (by default the
structures the console knows, ``app.core.vocab.AR_STRUCTURES``) and keeps them as
``.vtp`` files under ``<cache>/meshes/<hash>.vtp`` (``platformdirs.user_cache_dir("visa-console")``
or ``$VISA_CACHE_DIR``), keyed by the mask's cropped bits, the affine and the parameters: a case
opened a second time loads its surfaces in milliseconds.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk, numpy_to_vtkIdTypeArray, vtk_to_numpy
from vtkmodules.vtkCommonCore import vtkPoints
from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkImageData, vtkPolyData
from vtkmodules.vtkFiltersCore import (
    vtkFlyingEdges3D,
    vtkPolyDataNormals,
    vtkQuadricClustering,
    vtkWindowedSincPolyDataFilter,
)

from app.runtime.settings import settings

log = logging.getLogger(__name__)

# Bump when the surface pipeline changes: old cache files are then simply not found.
PIPELINE_VERSION = 1

DEFAULT_TRIANGLES = 20_000
# Per-structure triangle budgets: the airway tree has detail, a nodule is small.
TRIANGLE_BUDGETS: dict[str, int] = {
    "lung_nodules": 6_000,
    "trachea_bronchia": 30_000,
}
# Structures with fine detail keep a finer voxel size when reduced.
FINE_STRUCTURES = frozenset({"lung_nodules", "trachea_bronchia"})

# Masks whose cropped box holds fewer voxels than this are never reduced.
_REDUCE_MIN_VOXELS = 400_000


@dataclass(frozen=True)
class SurfaceParams:
    """What decides a surface's shape (and so its cache key)."""

    smooth: bool = True
    target_triangles: int = DEFAULT_TRIANGLES
    voxel_mm: float = 1.5          # block-reduce big masks to about this voxel size (0 = never)
    smooth_iterations: int = 20
    pass_band: float = 0.08        # windowed-sinc pass band: lower = smoother

    def key(self) -> dict[str, Any]:
        return {"v": PIPELINE_VERSION, "smooth": self.smooth, "tri": int(self.target_triangles),
                "vox": round(float(self.voxel_mm), 4), "it": int(self.smooth_iterations),
                "pb": round(float(self.pass_band), 5)}


# ----------------------------------------------------------------------------- helpers

def mask_bbox(mask: np.ndarray) -> tuple[slice, slice, slice] | None:
    """The bounding box of a 3D bool mask as slices, or None when the mask is empty.

    Two passes over the mask: axis 0 from a contiguous 2D view, the other two only inside the
    axis-0 extent (a lobe covers a fraction of the slices).
    """
    if mask.ndim != 3:
        raise ValueError(f"a 3D mask is needed, got shape {mask.shape}")
    m = mask if mask.dtype == bool else mask.astype(bool)
    any0 = m.reshape(m.shape[0], -1).any(axis=1) if m.flags.c_contiguous else m.any(axis=(1, 2))
    nz0 = np.flatnonzero(any0)
    if nz0.size == 0:
        return None
    a0, a1 = int(nz0[0]), int(nz0[-1]) + 1
    plane = m[a0:a1].any(axis=0)
    nz1 = np.flatnonzero(plane.any(axis=1))
    nz2 = np.flatnonzero(plane.any(axis=0))
    return (slice(a0, a1), slice(int(nz1[0]), int(nz1[-1]) + 1),
            slice(int(nz2[0]), int(nz2[-1]) + 1))


def reduction_factors(shape: tuple[int, ...], spacing: tuple[float, ...], voxel_mm: float,
                      ) -> tuple[int, int, int]:
    """Integer block sizes per axis that bring ``spacing`` to about ``voxel_mm``."""
    if voxel_mm <= 0 or int(np.prod(shape)) < _REDUCE_MIN_VOXELS:
        return (1, 1, 1)
    return tuple(max(1, int(np.floor(voxel_mm / max(s, 1e-6) + 0.25))) for s in spacing)  # type: ignore[return-value]


def _block_count(sub: np.ndarray, f: tuple[int, int, int]) -> np.ndarray:
    """Count the True voxels of each f0×f1×f2 block (the box is padded with False to fit)."""
    if f == (1, 1, 1):
        return sub.view(np.uint8) if sub.dtype == bool else sub.astype(np.uint8)
    pads = [(0, (-n) % k) for n, k in zip(sub.shape, f, strict=True)]
    if any(p[1] for p in pads):
        sub = np.pad(sub, pads)
    n0, n1, n2 = (n // k for n, k in zip(sub.shape, f, strict=True))
    dtype = np.uint8 if f[0] * f[1] * f[2] < 256 else np.uint16
    blocks = sub.reshape(n0, f[0], n1, f[1], n2, f[2])
    return blocks.sum(axis=(1, 3, 5), dtype=dtype)


def _signed_volume(points: np.ndarray, tris: np.ndarray) -> float:
    a, b, c = points[tris[:, 0]], points[tris[:, 1]], points[tris[:, 2]]
    return float(np.einsum("ij,ij->i", a.astype(np.float64), np.cross(b, c).astype(np.float64))
                 .sum() / 6.0)


def _triangles(poly: vtkPolyData) -> np.ndarray | None:
    """The (M, 3) connectivity view of an all-triangle polydata (None if it has other cells)."""
    polys = poly.GetPolys()
    offsets = vtk_to_numpy(polys.GetOffsetsArray())
    conn = vtk_to_numpy(polys.GetConnectivityArray())
    if len(offsets) < 2 or conn.size != 3 * (len(offsets) - 1):
        return None
    return conn.reshape(-1, 3)


def _orient_outward(poly: vtkPolyData) -> None:
    """Reverse every triangle in place when the closed surface is inside-out (negative volume)."""
    if poly.GetNumberOfPolys() == 0:
        return
    tris = _triangles(poly)
    if tris is None:
        return
    pts = vtk_to_numpy(poly.GetPoints().GetData())
    if _signed_volume(pts, tris) < 0:
        tris[:, [1, 2]] = tris[:, [2, 1]]  # a view on VTK's connectivity array
        poly.GetPolys().Modified()
        poly.Modified()


def _with_normals(poly: vtkPolyData) -> vtkPolyData:
    nm = vtkPolyDataNormals()
    nm.SetInputData(poly)
    nm.SplittingOff()
    nm.ConsistencyOff()       # the winding is already consistent and outward
    nm.AutoOrientNormalsOff()
    nm.ComputePointNormalsOn()
    nm.ComputeCellNormalsOff()
    nm.Update()
    out = vtkPolyData()
    out.ShallowCopy(nm.GetOutput())
    return out


def _empty() -> vtkPolyData:
    poly = vtkPolyData()
    poly.SetPoints(vtkPoints())
    poly.SetPolys(vtkCellArray())
    return poly


# ----------------------------------------------------------------------------- surfaces

def build_surface(mask: np.ndarray, affine: np.ndarray, smooth: bool = True,
                  target_triangles: int = DEFAULT_TRIANGLES, *, voxel_mm: float = 1.5,
                  smooth_iterations: int = 20, pass_band: float = 0.08) -> vtkPolyData:
    """The smoothed, decimated surface of a bool ``mask`` in LPS mm (``affine``: index → LPS).

    Returns an empty polydata for an empty mask. See the module docstring for the pipeline.
    """
    affine = np.asarray(affine, dtype=np.float64)
    if affine.shape != (4, 4):
        raise ValueError("the affine must be 4×4 (canonical index → LPS mm)")
    box = mask_bbox(mask)
    if box is None:
        return _empty()
    sub = mask[box]
    if sub.dtype != bool:
        sub = sub.astype(bool)
    spacing = tuple(float(s) for s in np.linalg.norm(affine[:3, :3], axis=0))
    f = reduction_factors(sub.shape, spacing, voxel_mm)
    counts = _block_count(sub, f)
    counts = np.pad(counts, 1)  # closed surfaces at the box faces
    level = 0.5 * f[0] * f[1] * f[2]

    n0, n1, n2 = counts.shape
    img = vtkImageData()
    img.SetDimensions(n2, n1, n0)  # VTK x varies fastest = numpy's last axis
    scalars = numpy_to_vtk(counts.ravel(), deep=False)
    img.GetPointData().SetScalars(scalars)
    fe = vtkFlyingEdges3D()
    fe.SetInputData(img)
    fe.SetValue(0, level)
    fe.ComputeNormalsOff()
    fe.ComputeGradientsOff()
    fe.ComputeScalarsOff()
    fe.InterpolateAttributesOff()
    fe.Update()
    poly = fe.GetOutput()
    if poly.GetNumberOfPolys() == 0:
        return _empty()

    if target_triangles and poly.GetNumberOfPolys() > 1.15 * target_triangles:
        poly = _cluster(poly, int(target_triangles))
    if smooth and poly.GetNumberOfPolys() > 0:
        sm = vtkWindowedSincPolyDataFilter()
        sm.SetInputData(poly)
        sm.SetNumberOfIterations(int(smooth_iterations))
        sm.SetPassBand(float(pass_band))
        sm.NormalizeCoordinatesOn()
        sm.BoundarySmoothingOff()
        sm.FeatureEdgeSmoothingOff()
        sm.NonManifoldSmoothingOn()
        sm.Update()
        poly = sm.GetOutput()

    # VTK point (x, y, z) = padded reduced index (axis2, axis1, axis0). Canonical index of a
    # block centre: start + f*(j - 1) + (f - 1)/2 per axis.
    start = np.array([box[0].start, box[1].start, box[2].start], dtype=np.float64)
    fv = np.array(f, dtype=np.float64)
    pts = vtk_to_numpy(poly.GetPoints().GetData()).astype(np.float64)[:, ::-1]
    ijk = start + fv * (pts - 1.0) + (fv - 1.0) / 2.0
    # Smoothing may push a surface cut by the scan's edge a little past it: keep it inside.
    np.clip(ijk, -0.5, np.asarray(mask.shape, dtype=np.float64) - 0.5, out=ijk)
    lps = ijk @ affine[:3, :3].T + affine[:3, 3]
    out = vtkPolyData()
    points = vtkPoints()
    points.SetData(numpy_to_vtk(np.ascontiguousarray(lps, dtype=np.float32), deep=True))
    out.SetPoints(points)
    out.SetPolys(poly.GetPolys())
    _orient_outward(out)
    return _with_normals(out)


def _cluster(poly: vtkPolyData, target: int) -> vtkPolyData:
    """Quadric clustering to about ``target`` triangles (bins sized from the surface area)."""
    n = poly.GetNumberOfPolys()
    b = poly.GetBounds()
    ext = np.array([b[1] - b[0], b[3] - b[2], b[5] - b[4]], dtype=float) + 1e-6
    # A surface mesh with edge length h has about 2·area/h² … we only know n at edge ~1 voxel:
    # scale the bin size by sqrt(n / target).
    h = float(np.sqrt(n / target)) * 1.05
    out = poly
    for _ in range(3):
        divs = np.maximum(2, np.ceil(ext / h)).astype(int)
        qc = vtkQuadricClustering()
        qc.SetInputData(poly)
        qc.SetNumberOfDivisions(*(int(d) for d in divs))
        qc.AutoAdjustNumberOfDivisionsOff()
        qc.UseInputPointsOn()  # keep vertices on the surface (no averaging drift)
        qc.CopyCellDataOff()
        qc.Update()
        out = qc.GetOutput()
        if out.GetNumberOfPolys() <= 1.15 * target:
            break
        h *= float(np.sqrt(out.GetNumberOfPolys() / target))
    return out


def polydata_from_mesh(mesh: Any, target_triangles: int | None = None) -> vtkPolyData:
    """A ``Mesh`` (vertices (N,3) LPS mm, faces (M,3)) as polydata with outward normals."""
    verts = np.ascontiguousarray(np.asarray(mesh.vertices, dtype=np.float32).reshape(-1, 3))
    faces = np.asarray(mesh.faces).reshape(-1, 3)
    if len(verts) == 0 or len(faces) == 0:
        return _empty()
    poly = vtkPolyData()
    points = vtkPoints()
    points.SetData(numpy_to_vtk(verts, deep=True))
    poly.SetPoints(points)
    cells = vtkCellArray()
    offsets = np.arange(0, 3 * len(faces) + 1, 3, dtype=np.int64)
    cells.SetData(numpy_to_vtkIdTypeArray(offsets, deep=True),
                  numpy_to_vtkIdTypeArray(faces.astype(np.int64).ravel(), deep=True))
    poly.SetPolys(cells)
    if target_triangles and len(faces) > 1.15 * target_triangles:
        poly = _cluster(poly, int(target_triangles))
    _orient_outward(poly)
    return _with_normals(poly)


# ----------------------------------------------------------------------------- the cache

def default_cache_dir() -> Path:
    """``$VISA_CACHE_DIR`` or the per-user cache folder of the console."""
    env = settings().cache_dir
    if env:
        return env
    import platformdirs

    return Path(platformdirs.user_cache_dir("visa-console"))


def mask_key(mask: np.ndarray, affine: np.ndarray, params: SurfaceParams) -> str:
    """A hash of the mask's cropped bits, its place on the grid, the affine and the parameters."""
    h = hashlib.blake2b(digest_size=20)
    h.update(json.dumps(params.key(), sort_keys=True).encode())
    h.update(np.asarray(affine, dtype=np.float64).round(6).tobytes())
    h.update(np.asarray(mask.shape, dtype=np.int64).tobytes())
    box = mask_bbox(mask)
    if box is None:
        h.update(b"empty")
        return h.hexdigest()
    h.update(np.array([(s.start, s.stop) for s in box], dtype=np.int64).tobytes())
    sub = mask[box]
    h.update(np.packbits(sub if sub.dtype == bool else sub.astype(bool)).tobytes())
    return h.hexdigest()


def write_vtp(poly: vtkPolyData, path: Path) -> None:
    from vtkmodules.vtkIOXML import vtkXMLPolyDataWriter

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.{threading.get_ident()}.tmp.vtp")
    w = vtkXMLPolyDataWriter()
    w.SetFileName(str(tmp))
    w.SetInputData(poly)
    w.SetDataModeToAppended()
    w.EncodeAppendedDataOff()
    w.SetCompressorTypeToNone()
    if not w.Write():
        tmp.unlink(missing_ok=True)
        raise OSError(f"could not write {tmp}")
    os.replace(tmp, path)


def read_vtp(path: Path) -> vtkPolyData | None:
    from vtkmodules.vtkCommonCore import vtkObject
    from vtkmodules.vtkIOXML import vtkXMLPolyDataReader

    r = vtkXMLPolyDataReader()
    r.SetFileName(str(path))
    shown = vtkObject.GetGlobalWarningDisplay()
    vtkObject.GlobalWarningDisplayOff()
    try:
        r.Update()
    finally:
        vtkObject.SetGlobalWarningDisplay(shown)
    if r.GetErrorCode():
        return None
    poly = vtkPolyData()
    poly.ShallowCopy(r.GetOutput())
    if poly.GetNumberOfPoints() == 0 or poly.GetPointData().GetNormals() is None:
        return None
    return poly


ProgressFn = Callable[[float, str], None]


@dataclass
class MeshCache:
    """Surfaces per structure, built once per mask and kept on disk as ``.vtp``.

    ``builds`` counts surfaces extracted from masks, ``hits`` surfaces read from the cache;
    ``timings`` holds the seconds spent per structure in the last :meth:`build`.
    """

    cache_dir: Path | None = None
    smooth: bool = True
    voxel_mm: float = 1.5
    budgets: Mapping[str, int] = field(default_factory=lambda: dict(TRIANGLE_BUDGETS))
    default_triangles: int = DEFAULT_TRIANGLES
    use_disk: bool = True
    builds: int = 0
    hits: int = 0
    timings: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        root = Path(self.cache_dir) if self.cache_dir is not None else default_cache_dir()
        self.folder = root / "meshes"
        self._lock = threading.Lock()

    def params_for(self, key: str) -> SurfaceParams:
        voxel = self.voxel_mm
        if key in FINE_STRUCTURES and voxel > 0:
            voxel = min(voxel, 1.0)
        return SurfaceParams(smooth=self.smooth,
                             target_triangles=int(self.budgets.get(key, self.default_triangles)),
                             voxel_mm=voxel)

    def path_for(self, digest: str) -> Path:
        return self.folder / f"{digest}.vtp"

    def surface(self, key: str, mask: np.ndarray, affine: np.ndarray) -> vtkPolyData:
        """One structure's surface: from the cache when this mask was built before."""
        params = self.params_for(key)
        digest = mask_key(mask, affine, params)
        path = self.path_for(digest)
        if self.use_disk and path.is_file():
            poly = read_vtp(path)
            if poly is not None:
                with self._lock:
                    self.hits += 1
                return poly
            log.warning("cached mesh %s is unreadable; rebuilding", path)
        poly = build_surface(mask, affine, params.smooth, params.target_triangles,
                             voxel_mm=params.voxel_mm, smooth_iterations=params.smooth_iterations,
                             pass_band=params.pass_band)
        with self._lock:
            self.builds += 1
        if self.use_disk and poly.GetNumberOfPoints() > 0:
            try:
                write_vtp(poly, path)
            except OSError as exc:  # a read-only or full disk: work without the cache
                log.warning("could not cache the %s mesh: %s", key, exc)
        return poly

    def build(self, labels: Any, keys: Iterable[str] | None = None,
              progress: ProgressFn | None = None) -> dict[str, vtkPolyData]:
        """Surfaces of a ``LabelSet``'s structures (default: the console's known structures).

        Masks go through the cache; ``labels.meshes`` (surfaces the case brought) are converted
        directly. Structures whose surface is empty are left out.
        """
        from app.core.vocab import AR_STRUCTURES

        available = list(labels.structures())
        if keys is None:
            wanted = [k for k in available if k in AR_STRUCTURES]
        elif keys == "all":
            wanted = available
        else:
            wanted = [k for k in keys if k in available]
        out: dict[str, vtkPolyData] = {}
        self.timings = {}
        for i, key in enumerate(wanted):
            if progress is not None:
                progress(i / max(1, len(wanted)), key)
            t0 = time.perf_counter()
            if key in labels.masks:
                affine = labels.affines.get(key) if hasattr(labels, "affines") else None
                if affine is None:
                    raise ValueError(f"no affine for the {key} mask")
                poly = self.surface(key, labels.masks[key], affine)
            else:
                poly = polydata_from_mesh(labels.meshes[key],
                                          self.budgets.get(key, self.default_triangles))
            self.timings[key] = time.perf_counter() - t0
            if poly.GetNumberOfPolys() > 0:
                out[key] = poly
        if progress is not None:
            progress(1.0, "")
        return out


def centroids_of(polys: Mapping[str, vtkPolyData]) -> dict[str, tuple[float, float, float]]:
    """Mean vertex position per surface (a stand-in when no mask centroid is at hand)."""
    out = {}
    for k, p in polys.items():
        if p.GetNumberOfPoints():
            c = vtk_to_numpy(p.GetPoints().GetData()).astype(np.float64).mean(axis=0)
            out[k] = (float(c[0]), float(c[1]), float(c[2]))
    return out


def polydata_arrays(poly: vtkPolyData) -> tuple[np.ndarray, np.ndarray]:
    """(vertices (N,3) float32, faces (M,3) int64) copies of an all-triangle polydata."""
    if poly.GetNumberOfPoints() == 0:
        return np.zeros((0, 3), np.float32), np.zeros((0, 3), np.int64)
    pts = vtk_to_numpy(poly.GetPoints().GetData()).astype(np.float32, copy=True)
    tris = _triangles(poly)
    faces = np.zeros((0, 3), np.int64) if tris is None else tris.astype(np.int64, copy=True)
    return pts, faces


__all__ = [
    "DEFAULT_TRIANGLES", "MeshCache", "SurfaceParams", "TRIANGLE_BUDGETS", "build_surface",
    "centroids_of", "default_cache_dir", "mask_bbox", "mask_key", "polydata_arrays",
    "polydata_from_mesh", "read_vtp", "write_vtp",
]
