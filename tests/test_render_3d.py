"""3D (AR) anatomy: surfaces from label maps, the camera animation, VTK offscreen rendering.

Real data: TotalSegmentator's example CT and its lobe labels (``testdata_dir``). Rendering tests
skip with the reason when VTK cannot render offscreen here. PNGs go to ``artifacts/render3d/``
(each raw RGBA, plus ``*_on_dark.png`` composited over a dark grey for looking at).
"""

from __future__ import annotations

import importlib.util
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from app.core.state import ARState
from app.render.ar_animation import ARAnimator, CameraPose, ease_cos, trapezoid
from app.render.clock import ManualClock

ROOT = Path(__file__).resolve().parents[1]
ART = ROOT / "artifacts" / "render3d"
LEFT_LOBES = ("left_upper_lobe", "left_lower_lobe")


# ----------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="session")
def real_case(testdata_dir):
    """(ct Volume, LabelSet) of the TotalSegmentator example."""
    from app.data.ct import load_ct
    from app.data.labels import load_labels

    folder = testdata_dir / "totalseg_example"
    ct = load_ct(folder / "example_ct.nii.gz")
    labels = load_labels(folder / "example_seg_fast_force_split.nii.gz", ct)
    for key in ("left_upper_lobe", "left_lower_lobe", "right_lower_lobe"):
        assert key in labels.masks, f"{key} missing from the example labels"
    return ct, labels


@pytest.fixture(scope="session")
def mesh_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("meshcache")


@pytest.fixture(scope="session")
def real_polys(real_case, mesh_dir):
    from app.render.meshes import MeshCache

    _, labels = real_case
    return MeshCache(cache_dir=mesh_dir).build(labels)


@pytest.fixture(scope="session")
def phantom_polys(mesh_dir):
    """Surfaces of the bench's synthetic lungs (five lobes, a nodule, an airway), coarse grid."""
    from app.render.meshes import MeshCache

    spec = importlib.util.spec_from_file_location("bench_3d", ROOT / "scripts" / "bench_3d.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_3d", bench)
    spec.loader.exec_module(bench)
    labelmap, affine = bench.synth_lungs((80, 160, 160), (4.0, 2.24, 2.24))
    labels = bench.split_labels(labelmap, affine)
    return MeshCache(cache_dir=mesh_dir).build(labels)


@pytest.fixture(scope="session")
def gl_window():
    from app.render.anatomy3d import probe_offscreen

    window, reason = probe_offscreen()
    if window is None:
        pytest.skip(f"VTK offscreen rendering is unavailable here: {reason}")
    return window


@pytest.fixture(scope="session")
def renderer(gl_window, real_case, real_polys):
    from app.render.anatomy3d import AnatomyRenderer

    _, labels = real_case
    r = AnatomyRenderer((320, 320), window_class=gl_window)
    r.set_structures(real_polys, {k: labels.centroid_lps(k) for k in real_polys})
    yield r
    r.close()


def _state(structures, view="anterior", **kw) -> ARState:
    return ARState(visible=True, structures=tuple(sorted(structures)), view=view, **kw)


def _save(img: np.ndarray, name: str) -> None:
    from PIL import Image

    ART.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.ascontiguousarray(img), "RGBA").save(ART / f"{name}.png")
    a = img[..., 3:4].astype(np.float32) / 255.0
    dark = img[..., :3] * a + np.array([18.0, 18.0, 22.0]) * (1 - a)
    Image.fromarray(dark.astype(np.uint8), "RGB").save(ART / f"{name}_on_dark.png")


def _colour_mask(img: np.ndarray, key: str, tol: float = 0.06) -> np.ndarray:
    """Pixels whose chromaticity is that of ``key``'s colour (lighting scales brightness)."""
    from app.render.anatomy3d import COLOURS

    rgb = img[..., :3].astype(np.float64)
    s = rgb.sum(axis=-1, keepdims=True)
    ch = rgb / np.maximum(s, 1e-6)
    ref = np.asarray(COLOURS[key], dtype=np.float64)
    ref = ref / ref.sum()
    return (np.abs(ch - ref).sum(axis=-1) < tol) & (img[..., 3] > 128) & (s[..., 0] > 40)


def _nodule_mask(img: np.ndarray) -> np.ndarray:
    """Amber-orange pixels (the nodule, also seen through a translucent lobe)."""
    r, g, b = (img[..., i].astype(int) for i in range(3))
    return (img[..., 3] > 128) & (r > 150) & (r >= g) & (r - b > 80) & (b < 0.6 * g)


def _centre_x(mask: np.ndarray) -> float:
    xs = np.nonzero(mask)[1]
    assert xs.size > 20, "too few pixels of the structure's colour"
    return float(xs.mean())


# ----------------------------------------------------------------------------- meshes

def test_real_meshes_in_ct_extent_and_sides(real_case, real_polys):
    from vtkmodules.util.numpy_support import vtk_to_numpy

    ct, labels = real_case
    n = np.array(ct.shape, dtype=float) - 1
    corners = np.array([[i, j, k] for i in (-0.5, n[0] + 0.5) for j in (-0.5, n[1] + 0.5)
                        for k in (-0.5, n[2] + 0.5)])
    pts = ct.index_to_lps(corners)
    lo, hi = pts.min(axis=0) - 1e-3, pts.max(axis=0) + 1e-3
    assert set(real_polys) == {"left_upper_lobe", "left_lower_lobe", "right_lower_lobe"}
    centres = {}
    for key, poly in real_polys.items():
        assert poly.GetNumberOfPolys() > 100, key
        assert poly.GetPointData().GetNormals() is not None
        b = np.array(poly.GetBounds()).reshape(3, 2)
        assert np.all(b[:, 0] >= lo) and np.all(b[:, 1] <= hi), (key, b, lo, hi)
        centres[key] = vtk_to_numpy(poly.GetPoints().GetData()).mean(axis=0)
        # the surface sits where the mask is (centroids within a couple of voxels)
        assert np.linalg.norm(centres[key] - labels.centroid_lps(key)) < 12.0, key
    for key in LEFT_LOBES:  # LPS +x is the patient's left
        assert centres[key][0] > centres["right_lower_lobe"][0] + 50


def test_surface_orientation_any_affine():
    """A sphere's surface has outward normals and the right volume whatever the affine does
    (permutations, flips), so lighting is right."""
    from vtkmodules.util.numpy_support import vtk_to_numpy

    from app.render.meshes import build_surface, polydata_arrays

    a, c, s = np.ogrid[:40, :48, :44]
    mask = (a - 20) ** 2 + (c - 24) ** 2 + (s - 22) ** 2 < 12 ** 2
    affines = {
        "identity": np.eye(4),
        "ct_like": np.array([[0, 0, 2.0, -30], [0, -1.5, 0, 40], [3.0, 0, 0, 5], [0, 0, 0, 1]]),
        "mirror": np.diag([-1.0, 1.0, 1.0, 1.0]),
    }
    for name, aff in affines.items():
        poly = build_surface(mask, aff, target_triangles=3000)
        v, f = polydata_arrays(poly)
        assert 0 < len(f) <= 3500, name
        centre = v.mean(axis=0)
        expect = aff[:3, :3] @ np.array([20, 24, 22]) + aff[:3, 3]
        assert np.allclose(centre, expect, atol=1.0), name
        normals = vtk_to_numpy(poly.GetPointData().GetNormals())
        outward = np.einsum("ij,ij->i", v - centre, normals) > 0
        assert outward.mean() > 0.99, name
        a0, b0, c0 = v[f[:, 0]], v[f[:, 1]], v[f[:, 2]]
        vol = np.einsum("ij,ij->i", a0, np.cross(b0, c0)).sum() / 6.0
        expect_vol = 4 / 3 * np.pi * 12 ** 3 * abs(np.linalg.det(aff[:3, :3]))
        assert vol == pytest.approx(expect_vol, rel=0.08), name


def test_empty_mask_and_mesh_input():
    from app.data.labels import Mesh
    from app.render.meshes import build_surface, polydata_arrays, polydata_from_mesh

    assert build_surface(np.zeros((5, 6, 7), bool), np.eye(4)).GetNumberOfPolys() == 0
    # a tetrahedron given inside-out comes back outward-facing with normals
    verts = np.array([[0, 0, 0], [10, 0, 0], [0, 10, 0], [0, 0, 10]], np.float32)
    faces = np.array([[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]], np.int32)  # inconsistent
    faces_in = np.array([[0, 1, 2], [0, 3, 1], [0, 2, 3], [1, 3, 2]], np.int32)  # inward
    poly = polydata_from_mesh(Mesh(verts, faces_in))
    v, f = polydata_arrays(poly)
    vol = np.einsum("ij,ij->i", v[f[:, 0]], np.cross(v[f[:, 1]], v[f[:, 2]])).sum() / 6
    assert vol == pytest.approx(1000 / 6, rel=1e-4)
    assert poly.GetPointData().GetNormals() is not None
    assert polydata_from_mesh(Mesh(verts, faces)).GetNumberOfPolys() == 4


def test_big_mask_is_reduced_and_cropped():
    from app.render.meshes import build_surface, mask_bbox, reduction_factors

    mask = np.zeros((120, 300, 300), bool)
    a, c, s = np.ogrid[:120, :300, :300]
    mask[:] = ((a - 60) / 50.0) ** 2 + ((c - 150) / 120.0) ** 2 + ((s - 160) / 100.0) ** 2 < 1
    box = mask_bbox(mask)
    assert box is not None and box[0].start == 11 and box[0].stop == 110
    assert reduction_factors((99, 239, 199), (1.25, 0.7, 0.7), 1.5) == (1, 2, 2)
    aff = np.array([[0, 0, 0.7, 0], [0, -0.7, 0, 0], [1.25, 0, 0, 0], [0, 0, 0, 1.0]])
    poly = build_surface(mask, aff, target_triangles=8000)
    assert 0 < poly.GetNumberOfPolys() <= 8000 * 1.15
    b = np.array(poly.GetBounds()).reshape(3, 2)
    # x (sagittal 60..260 × 0.7), z (axial 10..110 × 1.25) within a voxel or two
    assert b[0] == pytest.approx((60 * 0.7, 260 * 0.7), abs=2.0)
    assert b[2] == pytest.approx((10 * 1.25, 110 * 1.25), abs=2.5)


def test_mesh_cache_hits_second_time(real_case, tmp_path, monkeypatch):
    from app.render.meshes import MeshCache, default_cache_dir

    _, labels = real_case
    monkeypatch.setenv("VISA_CACHE_DIR", str(tmp_path))
    assert default_cache_dir() == tmp_path
    first = MeshCache()
    polys = first.build(labels)
    assert first.builds == len(polys) == 3 and first.hits == 0
    files = sorted((tmp_path / "meshes").glob("*.vtp"))
    assert len(files) == 3
    mtimes = [f.stat().st_mtime_ns for f in files]
    second = MeshCache()
    again = second.build(labels)
    assert second.builds == 0 and second.hits == 3
    assert [f.stat().st_mtime_ns for f in files] == mtimes  # nothing rewritten
    for key, poly in polys.items():
        assert again[key].GetNumberOfPolys() == poly.GetNumberOfPolys()
        assert again[key].GetPointData().GetNormals() is not None
    # a changed mask is a different key: rebuilt
    changed = replace(labels, masks={**labels.masks})
    m = changed.masks["left_upper_lobe"].copy()
    m[tuple(np.argwhere(m)[0])] = False
    changed.masks["left_upper_lobe"] = m
    third = MeshCache()
    third.build(changed)
    assert third.builds == 1 and third.hits == 2


# ----------------------------------------------------------------------------- animation

def _animator(clock, **kw):
    an = ARAnimator(clock, centroids={"lung_nodules": (50.0, 0.0, 0.0),
                                      "right_lower_lobe": (-60.0, 10.0, -40.0)},
                    bounds={"lung_nodules": (45, 55, -5, 5, -5, 5),
                            "right_lower_lobe": (-100, -20, -30, 50, -90, 10),
                            "left_upper_lobe": (20, 100, -40, 40, -20, 90)}, **kw)
    return an


BASE = _state(("left_upper_lobe", "lung_nodules", "right_lower_lobe"), view="surgical")


def test_easings():
    assert ease_cos(0.5) == pytest.approx(0.5)
    assert ease_cos(0) == 0 and ease_cos(1) == 1
    assert trapezoid(0.5) == pytest.approx(0.5) and trapezoid(1.0) == pytest.approx(1.0)
    assert all(trapezoid(u) <= trapezoid(u + 0.01) for u in np.linspace(0, 0.99, 50))


def test_swing_left_timings():
    clk = ManualClock(10.0)
    an = _animator(clk)
    an.update(BASE)
    assert not an.animating() and an.next_change_time() is None
    an.update(replace(BASE, rotation="left"))
    t0 = clk.now()
    # left: the model turns to the viewer's left = camera azimuth +
    assert an.pose(t0 + 1.5).azimuth == pytest.approx(15.0, abs=1e-6)  # eased: half-way
    assert an.pose(t0 + 0.75).azimuth < 7.5  # slow start
    for dt in (3.0, 3.5, 4.0):
        assert an.pose(t0 + dt).azimuth == pytest.approx(30.0)
    assert an.pose(t0 + 5.5).azimuth == pytest.approx(15.0, abs=1e-6)
    assert an.pose(t0 + 7.0).azimuth == pytest.approx(0.0)
    assert an.pose(t0 + 1.5).elevation == 0.0
    assert an.animating(t0 + 3.5) and an.next_change_time(t0 + 3.5) == pytest.approx(t0 + 4.0)
    assert an.next_change_time(t0 + 1.0) == pytest.approx(t0 + 1.0)
    assert not an.animating(t0 + 7.0) and an.next_change_time(t0 + 7.1) is None
    # the other directions
    for rot, (az, el) in {"right": (-30, 0), "up": (0, -30), "down": (0, 30)}.items():
        clk.advance(20)
        an.update(replace(BASE, rotation=rot))
        p = an.pose(clk.now() + 3.5)
        assert (p.azimuth, p.elevation) == (pytest.approx(az), pytest.approx(el)), rot


def test_turns_and_view_reset():
    clk = ManualClock(0.0)
    an = _animator(clk)
    an.update(BASE)
    an.update(replace(BASE, rotation="horizontal"))
    assert an.pose(3.0).azimuth == pytest.approx(180.0)
    assert an.pose(5.999).azimuth == pytest.approx(360.0, abs=0.01)
    assert an.pose(6.0).azimuth == 0.0 and not an.animating(6.0)
    assert an.pose(1.0).azimuth < an.pose(2.0).azimuth < an.pose(3.0).azimuth
    clk.set(10.0)
    an.update(replace(BASE, rotation="vertical"))
    assert an.pose(13.0).elevation == pytest.approx(-180.0) and an.pose(13.0).azimuth == 0.0
    # choosing a view during a rotation: jump to the new base view, rotation stops
    clk.set(12.0)
    assert an.pose().elevation != 0.0
    an.update(replace(BASE, view="anterior", rotation="static"))
    p = an.pose()
    assert (p.view, p.azimuth, p.elevation) == ("anterior", 0.0, 0.0)
    assert not an.animating()


def test_rotation_interrupted_is_continuous_and_restartable():
    clk = ManualClock(0.0)
    an = _animator(clk)
    an.update(BASE)
    an.update(replace(BASE, rotation="left"))
    clk.set(2.0)
    before = an.pose().azimuth
    an.update(replace(BASE, rotation="up"))
    assert an.pose(2.0).azimuth == pytest.approx(before)  # no jump
    assert an.pose(2.6).azimuth == pytest.approx(0.0)  # faded out within 0.5 s
    assert an.pose(5.5).elevation == pytest.approx(-30.0)
    # a repeated "rotate up" (same state) replays the swing
    clk.set(20.0)
    assert not an.animating()
    an.restart_rotation()
    assert an.pose(23.5).elevation == pytest.approx(-30.0)


def test_zoom_in_out_retraces_path():
    clk = ManualClock(0.0)
    an = _animator(clk)
    an.update(BASE)
    centre = an.model_centre()
    assert an.pose().zoom == 1.0 and an.pose().focal_lps == pytest.approx(centre)
    z1 = replace(BASE, zoom_level=1, zoom_target="lung_nodules", zoom_stack=("lung_nodules",))
    an.update(z1, 0.0)
    assert an.pose(1.5).zoom == pytest.approx(2 ** 0.5)
    assert an.pose(3.0).zoom == pytest.approx(2.0)
    assert an.pose(3.0).focal_lps == pytest.approx((50.0, 0.0, 0.0))
    z2 = replace(z1, zoom_level=2, zoom_target="right_lower_lobe",
                 zoom_stack=("lung_nodules", "right_lower_lobe"))
    an.update(z2, 3.0)
    path_in = [an.pose(t) for t in np.linspace(3.0, 6.0, 13)]
    assert path_in[-1].zoom == pytest.approx(4.0)
    assert path_in[-1].focal_lps == pytest.approx((-60.0, 10.0, -40.0))
    # zoom out at t=10: back to level 1 along the same path, reversed, in 3 s
    an.update(z1, 10.0)
    path_out = [an.pose(t) for t in np.linspace(10.0, 13.0, 13)]
    for p_in, p_out in zip(path_in, reversed(path_out), strict=True):
        assert p_out.zoom == pytest.approx(p_in.zoom)
        assert p_out.focal_lps == pytest.approx(p_in.focal_lps)
    assert an.pose(13.0).zoom == pytest.approx(2.0)
    # all the way out; never below 1
    an.update(BASE, 20.0)
    assert an.pose(23.0).zoom == pytest.approx(1.0)
    assert an.pose(23.0).focal_lps == pytest.approx(centre)
    assert min(an.pose(t).zoom for t in np.linspace(20, 24, 30)) >= 1.0
    # zoom without a target: toward the model centre
    an.update(replace(BASE, zoom_level=1, zoom_stack=(None,)), 30.0)
    assert an.pose(33.0).focal_lps == pytest.approx(centre) and an.pose(33).zoom == 2.0


def test_first_state_and_hidden_do_not_animate():
    clk = ManualClock(0.0)
    an = _animator(clk)
    restored = replace(BASE, rotation="horizontal", zoom_level=1, zoom_target="lung_nodules",
                       zoom_stack=("lung_nodules",))
    an.update(restored)
    assert not an.animating() and an.pose().zoom == 2.0
    an.update(replace(restored, visible=False))
    assert not an.animating()
    an.update(replace(restored, rotation="left", visible=True))
    assert not an.animating()  # shown again: at rest


# ----------------------------------------------------------------------------- rendering

def test_views_colours_and_mirror(renderer):
    keys = tuple(sorted(renderer.structures()))
    imgs = {}
    for view in ("anterior", "posterior", "left", "right", "superior", "inferior", "surgical"):
        img = renderer.render(_state(keys, view), CameraPose(view))
        assert img.shape == (320, 320, 4) and img.dtype == np.uint8
        _save(img, f"real_{view}")
        imgs[view] = img
        a = img[..., 3]
        # transparent background: the corners and most of the frame are alpha 0
        assert a[0, 0] == a[0, -1] == a[-1, 0] == a[-1, -1] == 0
        assert (a == 0).mean() > 0.3
        assert (a > 0).sum() > 2000, view
    ant = imgs["anterior"]
    for key in keys:  # every structure's colour shows
        assert _colour_mask(ant, key).sum() > 30, key
    # anterior: the patient faces the viewer, so the left lobes are on screen right
    right_x = _centre_x(_colour_mask(ant, "right_lower_lobe"))
    left_x = _centre_x(_colour_mask(ant, "left_lower_lobe"))
    assert left_x > right_x + 60
    post = imgs["posterior"]
    assert _centre_x(_colour_mask(post, "left_lower_lobe")) < \
        _centre_x(_colour_mask(post, "right_lower_lobe")) - 60
    # superior (from the head, anterior up): left on screen left; inferior: left on screen right
    sup, inf = imgs["superior"], imgs["inferior"]
    assert _centre_x(_colour_mask(sup, "left_lower_lobe")) < \
        _centre_x(_colour_mask(sup, "right_lower_lobe"))
    assert _centre_x(_colour_mask(inf, "left_lower_lobe")) > \
        _centre_x(_colour_mask(inf, "right_lower_lobe"))
    diff = np.abs(sup.astype(int) - inf.astype(int)).mean()
    assert diff > 5
    # left view: the left lung is nearer, so its pixels cover the right lobe's
    assert _colour_mask(imgs["left"], "left_lower_lobe").sum() > \
        _colour_mask(imgs["left"], "right_lower_lobe").sum()


def test_memo_hidden_and_fast_size(renderer):
    keys = tuple(renderer.structures())
    st = _state(keys, "anterior")
    pose = CameraPose("anterior", azimuth=10.0)
    n = renderer.render_count
    a = renderer.render(st, pose)
    b = renderer.render(st, CameraPose("anterior", azimuth=10.0))
    assert a is b and renderer.render_count == n + 1  # unchanged: no re-render
    assert not a.flags.writeable
    fast = renderer.render(st, pose, fast=True)
    assert fast.shape == a.shape and renderer.render_count == n + 2
    assert renderer.render_size(True) == (192, 192)
    assert np.abs(fast.astype(int) - a.astype(int)).mean() < 12  # same picture, softer
    hidden = renderer.render(replace(st, visible=False), pose)
    assert hidden.shape == a.shape and not hidden.any()
    none = renderer.render(_state(("lung_nodules",)), pose)  # not in this model
    assert not none.any()


def test_zoom_toward_structure_grows_it(renderer):
    keys = tuple(renderer.structures())
    clk = ManualClock(0.0)
    an = ARAnimator(clk, centroids=renderer.centroids(), bounds=renderer.bounds())
    st = _state(keys, "anterior")
    an.update(st)
    before = renderer.render(st, an.pose())
    z = replace(st, zoom_level=1, zoom_target="right_lower_lobe",
                zoom_stack=("right_lower_lobe",))
    an.update(z)
    clk.advance(3.0)
    pose = an.pose()
    assert pose.zoom == pytest.approx(2.0)
    after = renderer.render(z, pose)
    _save(after, "real_anterior_zoom_rll")
    area0 = _colour_mask(before, "right_lower_lobe").sum()
    area1 = _colour_mask(after, "right_lower_lobe").sum()
    assert area1 > 2.5 * area0
    # the zoom centres the target: its pixels move to the image's centre
    assert abs(_centre_x(_colour_mask(after, "right_lower_lobe")) - 160) < 40


def test_rotation_changes_picture(renderer):
    keys = tuple(renderer.structures())
    st = _state(keys, "anterior", rotation="horizontal")
    base = renderer.render(st, CameraPose("anterior"))
    turned = renderer.render(st, CameraPose("anterior", azimuth=180.0))
    _save(turned, "real_anterior_turned_180")
    # half a turn from the front is the view from behind
    back = renderer.render(st, CameraPose("posterior"))
    assert np.abs(turned.astype(int) - back.astype(int)).mean() < 3
    assert _centre_x(_colour_mask(turned, "left_lower_lobe")) < \
        _centre_x(_colour_mask(base, "left_lower_lobe")) - 60
    swing = renderer.render(st, CameraPose("anterior", azimuth=30.0))
    _save(swing, "real_anterior_swing_left_30")
    # the model turned to the viewer's left: its front moves left on screen — the left upper
    # lobe's lingula, the model's most anterior part, moves left; the posterior left lower
    # lobe moves right
    assert _centre_x(_colour_mask(swing, "left_upper_lobe")) < \
        _centre_x(_colour_mask(base, "left_upper_lobe")) - 10
    assert _centre_x(_colour_mask(swing, "left_lower_lobe")) > \
        _centre_x(_colour_mask(base, "left_lower_lobe"))


def test_phantom_nodule_airway_surgical(gl_window, phantom_polys):
    from app.render.anatomy3d import AnatomyRenderer

    r = AnatomyRenderer((400, 400), window_class=gl_window)
    try:
        r.set_structures(phantom_polys)
        assert r.tumor_side() == "right"  # the phantom's nodule is in the right upper lobe
        keys = tuple(phantom_polys)
        assert len(keys) == 7
        clk = ManualClock(0.0)
        an = ARAnimator(clk, centroids=r.centroids(), bounds=r.bounds())
        st = _state(keys, "surgical")
        an.update(st)
        for view in ("surgical", "anterior", "left", "posterior"):
            img = r.render(replace(st, view=view), CameraPose(view))
            _save(img, f"phantom_{view}")
            assert _nodule_mask(img).sum() > 15, view  # always visible
            assert _colour_mask(img, "trachea_bronchia", 0.05).sum() > 200, view
        img = r.render(st, CameraPose("surgical", azimuth=90.0))
        _save(img, "phantom_surgical_turned_90")
        z = replace(st, zoom_level=1, zoom_target="lung_nodules", zoom_stack=("lung_nodules",))
        an.update(z)
        clk.advance(3.0)
        img = r.render(z, an.pose())
        _save(img, "phantom_surgical_zoom_nodule")
        assert _nodule_mask(img).sum() > 200
    finally:
        r.close()


# ----------------------------------------------------------------------------- worker

def test_worker_latest_request_wins(gl_window, real_polys):
    from app.render.anatomy3d import AnatomyRenderer, AnatomyWorker

    frames = []
    w = AnatomyWorker((160, 160), clock=ManualClock(0.0),
                      renderer_factory=lambda size: AnatomyRenderer(size, window_class=gl_window),
                      on_frame=frames.append)
    w.set_structures(real_polys)
    w.start()
    keys = tuple(real_polys)
    views = ("anterior", "posterior", "left", "right", "superior", "inferior")
    for i in range(60):
        w.submit(_state(keys, views[i % 6]))
    assert w.wait_idle(20.0)
    assert w.error is None
    assert w.render_count <= 4  # most requests were superseded before rendering
    last = w.latest()
    assert last is not None and last.pose.view == views[59 % 6] and not last.fast
    assert last.image.shape == (160, 160, 4) and last.image[..., 3].any()
    assert frames and frames[-1] is last
    t0 = time.monotonic()
    w.stop()
    assert time.monotonic() - t0 < 5.0 and not w._thread.is_alive()


def test_worker_animates_ahead_of_clock(gl_window, real_polys):
    from app.render.anatomy3d import AnatomyRenderer, AnatomyWorker

    clk = ManualClock(0.0)
    w = AnatomyWorker((160, 160), clock=clk,
                      renderer_factory=lambda size: AnatomyRenderer(size, window_class=gl_window))
    w.set_structures(real_polys)
    w.start()
    try:
        keys = tuple(real_polys)
        st = _state(keys, "anterior")
        w.submit(st)
        assert w.wait_idle(20.0)
        w.submit(replace(st, rotation="horizontal"), t=0.0)
        clk.set(3.0)
        deadline = time.monotonic() + 20.0
        frame = w.latest()
        while time.monotonic() < deadline and (frame is None or frame.t < 3.0):
            time.sleep(0.01)
            frame = w.latest()
        assert frame is not None and frame.t >= 3.0 and frame.fast
        # rendered for a slightly later time than now: the pose the clock will have
        assert frame.pose == w.animator.pose(frame.t)
        assert frame.pose.azimuth >= 180.0
        clk.set(10.0)
        assert w.wait_idle(20.0)
        final = w.latest()
        assert final is not None and not final.fast and final.pose.azimuth == 0.0
    finally:
        w.stop()


def test_worker_reports_unavailable_gl():
    from app.render.anatomy3d import UNAVAILABLE, AnatomyWorker, RenderUnavailable

    errors = []

    def broken(size):
        raise RenderUnavailable(f"{UNAVAILABLE}: no offscreen OpenGL found (test)")

    w = AnatomyWorker((64, 64), renderer_factory=broken, on_error=errors.append).start()
    w.submit(_state(("left_lower_lobe",)))
    assert w.wait_idle(10.0)
    w.stop()
    assert w.error is not None and w.error.startswith(UNAVAILABLE)
    assert errors == [w.error] and w.latest() is None

    def crash(size):
        raise OSError("EGL: no display")

    w = AnatomyWorker((64, 64), renderer_factory=crash).start()
    w.stop()
    assert w.error == f"{UNAVAILABLE}: EGL: no display"


def test_probe_reports_missing_window_class(monkeypatch):
    import app.render.anatomy3d as a3d

    monkeypatch.setattr(a3d, "window_candidates", lambda: ["vtkNoSuchRenderWindow"])
    saved = a3d._probe_result
    try:
        window, reason = a3d.probe_offscreen(force=True)
        assert window is None and "vtkNoSuchRenderWindow" in reason
    finally:
        a3d._probe_result = saved
