"""Pixel tests of the 2-D render path (issue 3): MPR views on the real COPDGene CT, layout,
slice animation, the IR text box and the compositor. Composed frames are saved as PNGs under
artifacts/render/ for people to look at."""

from __future__ import annotations

import re
from itertools import combinations, product
from pathlib import Path

import cv2
import numpy as np
import pytest

from app.data.volume import Volume, canonicalize
from app.render.animation import SliceAnimator, Tween, ease_in_out_cubic, linear
from app.render.clock import ManualClock, MonotonicClock
from app.render.compositor import Compositor, Layer
from app.render.layout import AR_KEY, IR_KEY, STRIP_KEYS, ZOOM_KEY, Layout, Rect
from app.render.mpr import PLANE_COLORS, PLANES, MPRSlicer
from app.render.textbox import render_text_box

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "render"
LUNG = (1500, -600)


def _lung_grey(hu: float) -> float:
    w, level = LUNG
    return float(np.clip((hu - (level - w / 2)) / w * 255, 0, 255))


def _save(name: str, rgb: np.ndarray) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / name
    if rgb.shape[2] == 4:
        cv2.imwrite(str(path), cv2.cvtColor(rgb, cv2.COLOR_RGBA2BGRA))
    else:
        cv2.imwrite(str(path), cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))
    return path


def _load_nrrd_volume(path: Path) -> Volume:
    nrrd = pytest.importorskip("nrrd")
    data, header = nrrd.read(str(path))  # index order F: data[i, j, k], i fastest
    dirs = np.asarray(header["space directions"], dtype=float)  # one row per axis
    origin = np.asarray(header.get("space origin", np.zeros(3)), dtype=float)
    space = str(header.get("space", "left-posterior-superior")).lower()
    flip = np.array([-1.0, -1.0, 1.0]) if space in ("right-anterior-superior", "ras") else 1.0
    affine = np.eye(4)
    affine[:3, :3] = (dirs * flip).T
    affine[:3, 3] = origin * flip
    d, a = canonicalize(data, affine)
    return Volume(d, a, source=str(path))


@pytest.fixture(scope="module")
def copd_dir(testdata_dir: Path) -> Path:
    path = testdata_dir / "cip_copdgene_ct64"
    if not path.is_dir():
        pytest.skip(f"COPDGene test CT missing at {path}")
    return path


@pytest.fixture(scope="module")
def ct(copd_dir: Path) -> Volume:
    try:
        from app.data.ct import load_ct
    except ImportError:
        return _load_nrrd_volume(copd_dir / "ct-64.nrrd")
    return load_ct(copd_dir / "ct-64Dicom")


@pytest.fixture(scope="module")
def labels(copd_dir: Path, ct: Volume) -> Volume:
    """The CIP label map on the CT grid (value = type << 8 | region)."""
    lm = _load_nrrd_volume(copd_dir / "lm-64.nrrd")
    assert lm.shape == ct.shape and np.allclose(lm.affine, ct.affine, atol=1e-3)
    return lm


@pytest.fixture(scope="module")
def slicer(ct: Volume) -> MPRSlicer:
    return MPRSlicer(ct)


def _mid(vol: Volume) -> dict[str, int]:
    return {p: n // 2 for p, n in vol.size.items()}


def _display_mask(vol: Volume, plane: str, index: int, rect: Rect,
                  keep: callable) -> np.ndarray:  # type: ignore[valid-type]
    """A label condition in the view's pixels (same display orientation as the CT)."""
    lab = MPRSlicer(vol).slice_hu(plane, index).astype(np.int32)
    m = keep(lab).astype(np.uint8)
    return cv2.resize(m, (rect.w, rect.h), interpolation=cv2.INTER_NEAREST).astype(bool)


# ---------------------------------------------------------------------------- MPR: real data
def test_real_ct_geometry(ct: Volume) -> None:
    assert ct.shape == (79, 64, 64)
    assert ct.spacing == pytest.approx((3.987, 4.172, 4.172), abs=2e-3)


def test_axial_lung_window_grey_levels(slicer: MPRSlicer, ct: Volume, labels: Volume) -> None:
    mid = _mid(ct)
    size = 240
    img = slicer.render_view("axial", mid["axial"], mid, size, window=LUNG, crosshair=False)
    _save("axial_mid_lung_window.png", img)
    assert img.shape == (size, size, 4) and img.dtype == np.uint8
    rect = slicer.image_rect("axial", size)
    view = img[rect.y:rect.bottom, rect.x:rect.right]
    assert (view[..., 3] == 255).all()  # the image itself is opaque
    assert (view[..., 0] == view[..., 1]).all() and (view[..., 1] == view[..., 2]).all()
    grey = view[..., 0].astype(float)

    # Lung parenchyma (CIP regions 9..14, type 0; vessels and airway excluded), eroded.
    lung = _display_mask(labels, "axial", mid["axial"], rect, lambda v: (v >= 9) & (v <= 14))
    lung = cv2.erode(lung.astype(np.uint8), np.ones((5, 5), np.uint8)).astype(bool)
    assert lung.sum() > 500
    lung_hu = np.median(slicer.slice_hu("axial", mid["axial"])[
        _display_mask(labels, "axial", mid["axial"], Rect(0, 0, 64, 64),
                      lambda v: (v >= 9) & (v <= 14))])
    assert -950 < lung_hu < -750  # real lung
    assert abs(np.median(grey[lung]) - 85) <= 25
    assert abs(np.median(grey[lung]) - _lung_grey(lung_hu)) <= 10

    # Air outside the body: the image corners (HU ≈ −1000 → grey ≈ 60: dark, darker than lung).
    hu = cv2.resize(slicer.slice_hu("axial", mid["axial"]), (rect.w, rect.h))
    air = hu < -980
    air[rect.h // 5:, :] = False  # top band only: clear of the table and letters
    assert air.sum() > 100
    assert np.median(grey[air]) <= 70
    # This COPD lung is emphysematous (≈ −940 HU), so it is only a little brighter than air.
    assert np.median(grey[lung]) - np.median(grey[air]) >= 5
    # Bone (spine, ribs) is bright.
    bone = hu > 400
    assert bone.sum() > 20
    assert np.median(grey[bone]) >= 230


def test_radiological_display_on_real_anatomy(slicer: MPRSlicer, ct: Volume,
                                              labels: Volume) -> None:
    """Patient left (CIP left-lung regions 9–11) on screen right; spine posterior."""
    mid = _mid(ct)
    for plane in ("axial", "coronal"):
        rect = Rect(0, 0, *reversed(slicer.display_shape(plane)))
        left = _display_mask(labels, plane, mid[plane], rect, lambda v: (v >= 9) & (v <= 11))
        right = _display_mask(labels, plane, mid[plane], rect, lambda v: (v >= 12) & (v <= 14))
        cols = np.arange(rect.w)
        assert left.any() and right.any()
        assert (cols * left).sum() / left.sum() > rect.w / 2 > (cols * right).sum() / right.sum()
    # Spine: the densest voxels of the central columns lie in the lower (posterior) half of
    # the axial view and in the right (posterior) half of the sagittal view.
    ax = slicer.slice_hu("axial", mid["axial"])
    bone_rows = np.nonzero(ax[:, 28:36] > 300)[0]
    assert bone_rows.size and np.median(bone_rows) > ax.shape[0] / 2
    sag = slicer.slice_hu("sagittal", mid["sagittal"])
    bone_cols = np.nonzero(sag[sag.shape[0] // 4: 3 * sag.shape[0] // 4] > 300)[1]
    assert bone_cols.size and np.median(bone_cols) > sag.shape[1] / 2
    # Head at the top: the lungs' apex (upper rows) above the diaphragm/abdomen.
    cor = MPRSlicer(labels).slice_hu("coronal", mid["coronal"])
    lung_rows = np.nonzero((cor >= 9) & (cor <= 14))[0]
    upper = np.nonzero((cor >= 9) & (cor <= 14) & (cor % 3 == 0))[0]  # 9, 12: upper thirds
    assert np.median(upper) < np.median(lung_rows)


def test_orientation_letters_real(slicer: MPRSlicer) -> None:
    assert slicer.orientation_labels("axial") == {"top": "A", "bottom": "P", "left": "R",
                                                  "right": "L"}
    assert slicer.orientation_labels("coronal") == {"top": "S", "bottom": "I", "left": "R",
                                                    "right": "L"}
    assert slicer.orientation_labels("sagittal") == {"top": "S", "bottom": "I", "left": "A",
                                                     "right": "P"}


def _synthetic(affine: np.ndarray, shape: tuple[int, int, int] = (6, 8, 10)) -> Volume:
    data = np.arange(np.prod(shape), dtype=np.int16).reshape(shape)
    return Volume(data, affine)


def test_orientation_letters_follow_flipped_and_oblique_affines() -> None:
    canon = np.array([[0, 0, 1.0, 0], [0, -1.0, 0, 0], [1.0, 0, 0, 0], [0, 0, 0, 1]])
    # Sagittal index running toward the patient's right: R and L swap on axial and coronal.
    flipped = canon.copy()
    flipped[:3, 2] *= -1
    s = MPRSlicer(_synthetic(flipped))
    assert s.orientation_labels("axial") == {"top": "A", "bottom": "P", "left": "L",
                                             "right": "R"}
    assert s.orientation_labels("coronal")["left"] == "L"
    # Axial index running toward the feet: coronal and sagittal views show I at the top.
    feet = canon.copy()
    feet[:3, 0] *= -1
    s = MPRSlicer(_synthetic(feet))
    assert s.orientation_labels("coronal")["top"] == "I"
    assert s.orientation_labels("sagittal") == {"top": "I", "bottom": "S", "left": "A",
                                                "right": "P"}

    def rot_z(deg: float) -> np.ndarray:
        t = np.radians(deg)
        r = np.eye(4)
        r[:2, :2] = [[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]]
        return r

    # Oblique: the in-plane axes turned 30° about z keep their letters; 60° hands them over.
    s30 = MPRSlicer(_synthetic(rot_z(30) @ canon))
    assert s30.orientation_labels("axial") == {"top": "A", "bottom": "P", "left": "R",
                                               "right": "L"}
    s60 = MPRSlicer(_synthetic(rot_z(60) @ canon))
    # Screen right (+x) turned 60° toward +y (posterior); screen down (+y) toward −x (right).
    assert s60.orientation_labels("axial") == {"top": "L", "bottom": "R", "left": "A",
                                               "right": "P"}
    # A stored volume whose axes were never canonicalised: letters follow the affine anyway.
    # Axis 0 runs to the patient's left, axis 1 up, axis 2 back: the "axial" view's rows
    # (axis 1, drawn flipped) put superior at the top, its cols (axis 2) posterior on the right.
    swapped = np.array([[1.0, 0, 0, 0], [0, 0, 1.0, 0], [0, 1.0, 0, 0], [0, 0, 0, 1]])
    s = MPRSlicer(_synthetic(swapped))
    assert s.orientation_labels("axial") == {"top": "S", "bottom": "I", "left": "A",
                                             "right": "P"}


def test_readout_index_and_position_mm(slicer: MPRSlicer, ct: Volume) -> None:
    text = slicer.readout("axial", 39)
    m = re.fullmatch(r"AX 39/79 \u00b7 z (\u2212?)(\d+\.\d) mm", text)
    assert m, text
    z = float(m.group(2)) * (-1 if m.group(1) else 1)
    assert z == pytest.approx(ct.index_to_lps((39, 31.5, 31.5))[2], abs=0.06)
    assert slicer.readout("coronal", 10.4).startswith("COR 10/64 \u00b7 y ")
    assert slicer.readout("sagittal", 500).startswith("SAG 63/64 \u00b7 x ")  # clamped
    assert "\u2192" in slicer.readout("axial", 30.2, target=49)  # heading to 49


def test_fractional_index_blends(slicer: MPRSlicer, ct: Volume) -> None:
    for plane in PLANES:
        a, b = slicer.slice_hu(plane, 20), slicer.slice_hu(plane, 21)
        assert a.dtype == np.float32
        mix = slicer.slice_hu(plane, 20.25)
        np.testing.assert_allclose(mix, 0.75 * a + 0.25 * b, atol=1e-3)
        assert not np.allclose(a, b)
    np.testing.assert_array_equal(slicer.slice_hu("axial", 39), ct.data[39][::-1])
    np.testing.assert_array_equal(slicer.slice_hu("axial", -5), slicer.slice_hu("axial", 0))
    # The rendered view at a half step lies between the two neighbouring slices' views.
    v0 = slicer.render_view("coronal", 30, None, 240, crosshair=False).astype(int)
    v1 = slicer.render_view("coronal", 31, None, 240, crosshair=False).astype(int)
    vh = slicer.render_view("coronal", 30.5, None, 240, crosshair=False).astype(int)
    r = slicer.image_rect("coronal", 240)
    sl = (slice(r.y + 20, r.bottom - 20), slice(r.x + 20, r.right - 20), 0)
    between = (vh[sl] >= np.minimum(v0[sl], v1[sl]) - 1) & (vh[sl] <= np.maximum(v0[sl],
                                                                               v1[sl]) + 1)
    assert between.mean() > 0.99
    assert np.abs(vh[sl] - (v0[sl] + v1[sl]) / 2).mean() < 1.5


def test_coronal_view_keeps_physical_aspect(slicer: MPRSlicer, ct: Volume) -> None:
    # Coronal: rows = 79 axial slices × 3.99 mm (315 mm), cols = 64 × 4.17 mm (267 mm).
    ph, pw = slicer.physical_size("coronal")
    assert ph == pytest.approx(79 * 3.987, abs=0.5) and pw == pytest.approx(64 * 4.172, abs=0.5)
    for size in (240, 576):
        r = slicer.image_rect("coronal", size)
        assert r.w / r.h == pytest.approx(pw / ph, rel=0.02)
        assert abs(r.w / r.h - 64 / 79) > 0.02  # not the naive voxel-count aspect
        img = slicer.render_view("coronal", 32, None, size, crosshair=False)
        opaque = img[..., 3] == 255  # the image is opaque, its letterbox semi-transparent
        cx, cy = r.x + r.w // 2, r.y + r.h // 2
        assert opaque[cy, r.x:r.right].all() and opaque[r.y:r.bottom, cx].all()
        assert not opaque[cy, r.x - 1] and not opaque[cy, r.right]
        assert not opaque[r.y - 1, cx] and not opaque[r.bottom, cx]
    # A strongly anisotropic volume: 20 slices of 5 mm, 0.5 mm pixels. Coronal rows span
    # 20 × 5 = 100 mm, cols 100 × 0.5 = 50 mm: a tall image, although it has 5× more columns.
    vol = Volume(np.zeros((20, 100, 100), np.int16),
                 np.array([[0, 0, 0.5, 0], [0, -0.5, 0, 0], [5.0, 0, 0, 0], [0, 0, 0, 1]]))
    r = MPRSlicer(vol).image_rect("coronal", 240)
    assert r.w / r.h == pytest.approx(0.5, rel=0.03)


def test_crosshair_lines_in_plane_colours(slicer: MPRSlicer, ct: Volume) -> None:
    size = 240
    pos = {"axial": 50, "coronal": 20, "sagittal": 40}
    img = slicer.render_view("axial", pos["axial"], pos, size)
    _save("axial_crosshair.png", img)
    r = slicer.image_rect("axial", size)
    # Axial rows = coronal index, anterior (high index) at the top; cols = sagittal index.
    row = r.y + int((64 - 1 - pos["coronal"] + 0.5) * r.h / 64)
    col = r.x + int((pos["sagittal"] + 0.5) * r.w / 64)
    assert slicer.crosshair_px("axial", pos, size) == {"coronal": ("row", row),
                                                       "sagittal": ("col", col)}
    green, cyan = PLANE_COLORS["coronal"], PLANE_COLORS["sagittal"]
    assert tuple(img[row, r.x + r.w // 4, :3]) == green
    assert tuple(img[r.y + r.h // 4, col, :3]) == cyan
    # Thin lines: the rows/cols two pixels away carry the image, not the colour.
    assert tuple(img[row + 2, r.x + r.w // 4, :3]) != green
    assert tuple(img[r.y + r.h // 4, col - 2, :3]) != cyan
    # The colour of each plane's line is its view's border colour.
    for plane in PLANES:
        view = slicer.render_view(plane, pos[plane], pos, size)
        assert tuple(view[0, size // 2, :3]) == PLANE_COLORS[plane]
        assert view[0, size // 2, 3] == 255
    # Sagittal view: axial line horizontal (head at the top), coronal line vertical with
    # anterior on the left.
    sag = slicer.render_view("sagittal", pos["sagittal"], pos, size)
    rs = slicer.image_rect("sagittal", size)
    arow = rs.y + int((79 - 1 - pos["axial"] + 0.5) * rs.h / 79)
    ccol = rs.x + int((64 - 1 - pos["coronal"] + 0.5) * rs.w / 64)
    assert tuple(sag[arow, rs.x + rs.w // 4, :3]) == PLANE_COLORS["axial"]
    assert tuple(sag[rs.y + rs.h // 5, ccol, :3]) == PLANE_COLORS["coronal"]
    # crosshair=False draws none of the colours inside the image.
    bare = slicer.render_view("axial", pos["axial"], pos, size, crosshair=False)
    inner = bare[r.y:r.bottom, r.x:r.right, :3].reshape(-1, 3)
    assert not (inner == np.array(green)).all(axis=1).any()


def test_view_panel_sizes_and_transparency(slicer: MPRSlicer, ct: Volume) -> None:
    mid = _mid(ct)
    for size in (120, 240, 576):
        img = slicer.render_view("sagittal", mid["sagittal"], mid, size)
        assert img.shape == (size, size, 4)
        r = slicer.image_rect("sagittal", size)
        assert r.x > 0 and r.right < size and r.y > 0 and r.bottom < size
        # A letterbox margin is semi-transparent dark; the title text is drawn there.
        margin = img[size // 2, r.x - 2]
        assert 100 <= margin[3] < 255 and margin[:3].max() < 40
        title_band = img[: r.y, : size // 2, :3]
        assert (title_band.max(axis=2) > 180).sum() > 10
    views = slicer.render_small_views(mid, {**mid, "axial": mid["axial"] + 10}, 200)
    assert set(views) == set(PLANES) and all(v.shape == (200, 200, 4) for v in views.values())


# ---------------------------------------------------------------------------- layout
FRAMES = ((1280, 720), (1920, 1080), (640, 360), (1024, 768), (3840, 2160))


@pytest.mark.parametrize(("w", "h"), FRAMES)
def test_layout_rects_inside_and_disjoint(w: int, h: int) -> None:
    for mode, ir, ar, box in product(("none", "small_views", "zoom_view"), (False, True),
                                     (False, True), (None, (round(0.4 * h), round(0.9 * h)),
                                                     (round(0.5 * h), round(0.3 * h)))):
        rects = Layout.for_frame(w, h, mode, ir, ar, box)
        expect = set()
        if mode != "none":
            expect |= set(STRIP_KEYS)
        if mode == "zoom_view":
            expect.add(ZOOM_KEY)
        if ir:
            expect.add(IR_KEY)
        if ar:
            expect.add(AR_KEY)
        assert set(rects) == expect, (mode, ir, ar)
        for k, r in rects.items():
            assert all(isinstance(v, int) for v in r), k
            assert r.w > 0 and r.h > 0 and r.x >= 0 and r.y >= 0, (k, r)
            assert r.right <= w and r.bottom <= h, (w, h, k, r)
        for (ka, a), (kb, b) in combinations(rects.items(), 2):
            assert not a.intersects(b), (w, h, mode, ir, ar, box, ka, a, kb, b)
        if mode != "none":
            views = [rects[k] for k in STRIP_KEYS]
            assert all(v.w == v.h for v in views)
            assert all(v.w >= 0.28 * h for v in views)
            assert all(v.right == views[0].right > w - 0.05 * h for v in views)
            assert views[0].y < views[1].y < views[2].y
        if AR_KEY in rects:
            assert rects[AR_KEY].w == rects[AR_KEY].h
        if ZOOM_KEY in rects:
            assert rects[ZOOM_KEY].w == rects[ZOOM_KEY].h


def test_layout_positions_1280x720() -> None:
    w, h = 1280, 720
    r = Layout.for_frame(w, h, "zoom_view", True, True, (300, 250))
    strip = r[STRIP_KEYS[0]]
    m = Layout.margin(h)
    assert r[IR_KEY] == Rect(strip.x - m - 300, m, 300, 250)  # top right, left of the strip
    ar = r[AR_KEY]
    assert ar.y == r[IR_KEY].bottom + m and ar.right == r[IR_KEY].right  # below the IR box
    assert ar.w == round(0.42 * h)
    z = r[ZOOM_KEY]
    assert z.w == round(0.8 * h) and abs((z.y + z.h / 2) - h / 2) <= 1  # large, centred
    assert z.right <= min(r[IR_KEY].x, ar.x)
    # Without the CT, the IR box sits in the frame's top-right corner.
    r = Layout.for_frame(w, h, "none", True, False, (300, 250))
    assert r[IR_KEY].right == w - m and r[IR_KEY].y == m
    # Zoom view alone: centred left of the strip.
    r = Layout.for_frame(w, h, "zoom_view", False, False)
    z, strip = r[ZOOM_KEY], r[STRIP_KEYS[0]]
    assert abs((z.x + z.w / 2) - (strip.x - m) / 2) <= 2 + m / 2


# ---------------------------------------------------------------------------- animation
def test_slice_animator_eases_to_target_in_4s() -> None:
    clock = ManualClock(100.0)
    anim = SliceAnimator(clock)
    anim.set_targets({"axial": 32, "coronal": 256, "sagittal": 256})  # first show: no animation
    assert anim.value("axial") == 32 and not anim.animating()
    anim.set_targets({"axial": 72, "coronal": 256, "sagittal": 256})
    assert anim.animating() and anim.animating("axial") and not anim.animating("coronal")
    assert anim.value("axial") == 32  # starts at the start value
    samples = []
    for t in np.arange(0.0, 4.01, 0.1):
        clock.set(100.0 + t)
        samples.append(anim.value("axial"))
    assert np.all(np.diff(samples) >= -1e-9)  # monotone
    clock.set(101.0)
    assert anim.value("axial") == pytest.approx(32 + 40 * ease_in_out_cubic(0.25))
    assert anim.value("axial") < 32 + 40 * 0.25  # eased: slower than linear at first
    clock.set(102.0)
    assert anim.value("axial") == pytest.approx(52)
    clock.set(103.999)
    assert anim.value("axial") < 72 and anim.animating()
    clock.set(104.0)
    assert anim.value("axial") == 72 and not anim.animating()
    assert anim.target("axial") == 72 and anim.values()["coronal"] == 256


def test_slice_animator_retarget_is_continuous_and_latest_wins() -> None:
    clock = ManualClock()
    anim = SliceAnimator(clock, duration=4.0)
    anim.jump_to({"axial": 0})
    anim.set_targets({"axial": 100})
    clock.advance(1.7 - 1e-3)
    earlier = anim.value("axial")
    clock.advance(1e-3)
    before = anim.value("axial")
    v_before = (before - earlier) / 1e-3
    anim.set_targets({"axial": 20})  # turn back mid-way
    assert anim.value("axial") == pytest.approx(before, abs=1e-9)  # no jump
    clock.advance(1e-3)
    v_after = (anim.value("axial") - before) / 1e-3
    assert v_after == pytest.approx(v_before, rel=0.05)  # no dead stop either
    anim.set_targets({"axial": 60})
    anim.set_targets({"axial": 40})  # latest request wins
    clock.advance(4.0)
    assert anim.value("axial") == 40 and not anim.animating()
    # Same target again does not restart the animation.
    anim.set_targets({"axial": 80})
    clock.advance(2.0)
    mid = anim.value("axial")
    anim.set_targets({"axial": 80})
    assert anim.value("axial") == mid
    clock.advance(2.0)
    assert anim.value("axial") == 80


def test_slice_animator_duration_configurable_and_jump() -> None:
    clock = ManualClock()
    anim = SliceAnimator(clock, duration=2.0)
    anim.set_targets({"sagittal": 10})
    anim.set_targets({"sagittal": 30})
    clock.advance(1.0)
    assert anim.value("sagittal") == pytest.approx(20)
    clock.advance(1.0)
    assert anim.value("sagittal") == 30
    anim.duration = 0.0
    anim.set_targets({"sagittal": 5})
    assert anim.value("sagittal") == 5 and not anim.animating()
    anim.clear()
    anim.set_targets({"sagittal": 50})  # after clear: like a first show
    assert anim.value("sagittal") == 50
    tw = Tween(clock, 0.0, 1.0, linear)
    tw.retarget(10)
    clock.advance(0.5)
    assert tw.value() == pytest.approx(5)
    tw.jump_to(3)
    assert tw.value() == 3 and not tw.animating()
    assert MonotonicClock().now() <= MonotonicClock().now()


# ---------------------------------------------------------------------------- text box
IR_LINES = [("Sex/Age", "F/65"), ("Diagnosis", "Adenocarcinoma"),
            ("Body", "165 cm \u00b7 62 kg \u00b7 BMI 22.8"), ("FEV1", "2.10 L (85%)"),
            ("FVC", "2.90 L (92%)")]


def test_text_box_renders_readable_text() -> None:
    box = render_text_box(IR_LINES[:1], 460, scale=1.0)
    assert box.shape[1] == 460 and box.shape[2] == 4 and box.dtype == np.uint8
    # Semi-transparent dark panel with bright text on it.
    assert 150 <= box[box.shape[0] // 2, 3, 3] < 255 or box[box.shape[0] - 8, 8, 3] < 255
    bright = box[..., :3].min(axis=2) > 200
    assert bright.sum() > 80
    # The value "F/65" at 1080p: bold glyphs at least ~17 px tall (cap height of a 24 px font).
    ys, xs = np.nonzero(bright[:, box.shape[1] // 3:])
    value_rows = ys[ys > box.shape[0] // 2 - 10]
    assert value_rows.max() - value_rows.min() + 1 >= 16
    bigger = render_text_box(IR_LINES, 460, scale=1.0)
    assert bigger.shape[0] > box.shape[0] + 3 * 24
    _save("ir_box_1080p.png", np.ascontiguousarray(bigger))
    # Long values wrap (the box grows taller, never wider).
    long = render_text_box([("Diagnosis", "Adenocarcinoma of the right upper lobe, "
                                          "cT1bN0M0, EGFR mutation positive")], 460)
    assert long.shape[1] == 460 and long.shape[0] > box.shape[0] + 20
    # Scales with the frame height; cached by content.
    small = render_text_box(IR_LINES, 307, scale=720 / 1080)
    assert small.shape[0] < bigger.shape[0]
    assert render_text_box(IR_LINES, 460, scale=1.0) is bigger
    # A very narrow box stacks headers above values and still fits its width.
    narrow = render_text_box(IR_LINES, 140, scale=1.0)
    assert narrow.shape[1] == 140 and narrow.shape[0] > bigger.shape[0]


# ---------------------------------------------------------------------------- compositor
def _expected_blend(frame: np.ndarray, rgba: np.ndarray, x: int, y: int) -> np.ndarray:
    out = frame.astype(np.int64).copy()
    h, w = rgba.shape[:2]
    x0, y0 = max(x, 0), max(y, 0)
    x1, y1 = min(x + w, frame.shape[1]), min(y + h, frame.shape[0])
    if x1 <= x0 or y1 <= y0:
        return frame.copy()
    s = rgba[y0 - y:y1 - y, x0 - x:x1 - x].astype(np.int64)
    a = s[..., 3:4]
    d = out[y0:y1, x0:x1]
    out[y0:y1, x0:x1] = (s[..., :3] * a + d * (255 - a) + 127) // 255  # = round(x / 255)
    return out.astype(np.uint8)


def test_compositor_exact_blend_clipping_and_frame_untouched() -> None:
    rng = np.random.default_rng(7)
    frame = rng.integers(0, 256, (90, 160, 3), dtype=np.uint8)
    keep = frame.copy()
    layer = rng.integers(0, 256, (40, 50, 4), dtype=np.uint8)
    layer[:5, :, 3] = 0
    layer[5:10, :, 3] = 255
    comp = Compositor()
    for x, y in ((10, 20), (-15, -7), (130, 70), (200, 10), (-60, 0)):  # inside/clipped/outside
        out = comp.compose(frame, [Layer("a", layer, x, y, 1)])
        np.testing.assert_array_equal(out, _expected_blend(frame, layer, x, y))
        np.testing.assert_array_equal(frame, keep)
    # A known pixel: white at α=128 over black → round(255·128/255) = 128.
    black = np.zeros((4, 4, 3), np.uint8)
    dot = np.zeros((1, 1, 4), np.uint8)
    dot[0, 0] = (255, 255, 255, 128)
    assert tuple(comp.compose(black, [Layer("dot", dot, 2, 1)])[1, 2]) == (128, 128, 128)
    # Two layers in order; a new version is picked up; opacity fades.
    l2 = rng.integers(0, 256, (30, 30, 4), dtype=np.uint8)
    out = comp.compose(frame, [Layer("a", layer, 10, 20, 1), Layer("b", l2, 30, 30, 1)])
    np.testing.assert_array_equal(
        out, _expected_blend(_expected_blend(frame, layer, 10, 20), l2, 30, 30))
    layer2 = layer.copy()
    layer2[..., :3] = 255 - layer2[..., :3]
    out = comp.compose(frame, [Layer("a", layer2, 10, 20, 2)])
    np.testing.assert_array_equal(out, _expected_blend(frame, layer2, 10, 20))
    half = layer2.copy()
    half[..., 3] = (half[..., 3].astype(int) * 128 + 127) // 255
    out = comp.compose(frame, [Layer("a", layer2, 10, 20, 2, opacity=128 / 255)])
    np.testing.assert_array_equal(out, _expected_blend(frame, half, 10, 20))
    # Output buffers are reused in turn, and never the input frame unless asked.
    o1 = comp.compose(frame, [])
    o2 = comp.compose(frame, [])
    assert o1 is not o2 and o1 is not frame and comp.compose(frame, []) is o1
    own = np.empty_like(frame)
    assert comp.compose(frame, [Layer("a", layer, 0, 0, 3)], out=own) is own
    work = frame.copy()
    assert comp.compose(work, [Layer("a", layer, 0, 0, 3)], inplace=True) is work
    np.testing.assert_array_equal(work, _expected_blend(frame, layer, 0, 0))
    # Opaque and fully transparent layers take their shortcuts and stay exact.
    opaque = layer.copy()
    opaque[..., 3] = 255
    clear = layer.copy()
    clear[..., 3] = 0
    out = comp.compose(frame, [Layer("o", opaque, 5, 5), Layer("c", clear, 0, 0)])
    np.testing.assert_array_equal(out, _expected_blend(frame, opaque, 5, 5))


# ---------------------------------------------------------------------------- composed frames
def _video_frame(w: int, h: int) -> np.ndarray:
    """Endoscope-like RGB: reddish tissue with a bright specular highlight."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    r = np.clip(150 + 50 * np.sin(xx / (w / 14)) * np.cos(yy / (h / 10)), 0, 255)
    frame = np.dstack([r, r * 0.42, r * 0.33]).astype(np.uint8)
    cv2.circle(frame, (w // 3, h // 2), h // 12, (250, 235, 225), -1)
    return frame


def _scene(slicer: MPRSlicer, vol: Volume, w: int, h: int, mode: str, ir: bool, ar: bool,
           main: str = "axial", pos: dict[str, float] | None = None
           ) -> tuple[np.ndarray, dict[str, Rect]]:
    pos = pos or _mid(vol)
    box = render_text_box(IR_LINES, round(0.42 * h), h / 1080) if ir else None
    rects = Layout.for_frame(w, h, mode, ir, ar, (box.shape[1], box.shape[0]) if ir else None)
    layers: list[Layer] = []
    if mode != "none":
        views = slicer.render_small_views(pos, pos, rects[STRIP_KEYS[0]].w)
        for p, key in zip(PLANES, STRIP_KEYS, strict=True):
            layers.append(Layer(key, views[p], rects[key].x, rects[key].y))
    if mode == "zoom_view":
        z = rects[ZOOM_KEY]
        layers.append(Layer(ZOOM_KEY, slicer.render_view(main, pos[main], pos, z.w), z.x, z.y))
    if ir:
        layers.append(Layer(IR_KEY, box, rects[IR_KEY].x, rects[IR_KEY].y))
    if ar:  # stand-in for the 3D panel (another module renders it)
        a = rects[AR_KEY]
        panel = np.zeros((a.h, a.w, 4), np.uint8)
        panel[...] = (20, 30, 50, 150)
        cv2.circle(panel, (a.w // 2, a.h // 2), a.w // 3, (220, 150, 140, 255), -1)
        layers.append(Layer(AR_KEY, panel, a.x, a.y))
    frame = _video_frame(w, h)
    keep = frame.copy()
    out = Compositor().compose(frame, layers)
    np.testing.assert_array_equal(frame, keep)
    return out.copy(), rects


def _grey_fraction(region: np.ndarray, lo: int = 60, hi: int = 110) -> float:
    rgb = region.astype(int)
    grey = (rgb[..., 0] == rgb[..., 1]) & (rgb[..., 1] == rgb[..., 2])
    return float((grey & (rgb[..., 0] >= lo) & (rgb[..., 0] <= hi)).mean())


@pytest.mark.parametrize(("w", "h", "mode", "ir", "ar"), [
    (1280, 720, "small_views", False, False),
    (1280, 720, "none", True, False),
    (1280, 720, "small_views", True, True),
    (1920, 1080, "zoom_view", True, True),
    (1280, 720, "zoom_view", False, False),
])
def test_composed_frames_real_ct(slicer: MPRSlicer, ct: Volume, w: int, h: int, mode: str,
                                 ir: bool, ar: bool) -> None:
    main = "coronal"
    out, rects = _scene(slicer, ct, w, h, mode, ir, ar, main)
    _save(f"frame_{w}x{h}_{mode}{'_ir' if ir else ''}{'_ar' if ar else ''}.png", out)
    video = _video_frame(w, h)
    if mode != "none":
        for key in STRIP_KEYS:
            r = rects[key]
            region = out[r.y:r.bottom, r.x:r.right]
            # Lung-window grey levels (lung parenchyma ≈ 85) fill a good part of each view.
            assert _grey_fraction(region) > 0.10, key
    if mode == "zoom_view":
        z = rects[ZOOM_KEY]
        assert _grey_fraction(out[z.y:z.bottom, z.x:z.right]) > 0.15
    if ir:
        r = rects[IR_KEY]
        region = out[r.y:r.bottom, r.x:r.right].astype(int)
        assert (region.min(axis=2) > 200).sum() > 200  # white text on the dark panel
        assert np.median(region[..., 0]) < np.median(video[r.y:r.bottom, r.x:r.right, 0]) - 60
    if ar:
        r = rects[AR_KEY]
        assert tuple(out[r.y + r.h // 2, r.x + r.w // 2]) == (220, 150, 140)
    # Outside every overlay the video is untouched.
    covered = np.zeros((h, w), bool)
    for r in rects.values():
        covered[r.y:r.bottom, r.x:r.right] = True
    np.testing.assert_array_equal(out[~covered], video[~covered])


def test_wrap_keeps_items_together() -> None:
    from app.render.textbox import load_font, wrap_text

    font = load_font(24, bold=True)
    text = "165 cm \u00b7 62 kg \u00b7 BMI 22.8"
    width = font.getlength("165 cm \u00b7 62 kg \u00b7 BMI") + 2
    assert wrap_text(text, font, width) == ["165 cm \u00b7 62 kg", "BMI 22.8"]
    assert wrap_text(text, font, 10_000) == [text]
    words = wrap_text("Adenocarcinoma of the right upper lobe", font, 260)
    assert len(words) > 1 and all(font.getlength(w) <= 260 for w in words)
    assert " ".join(words) == "Adenocarcinoma of the right upper lobe"
    cut = wrap_text("Pneumonoultramicroscopicsilicovolcanoconiosis", font, 120)
    assert len(cut) > 1 and "".join(cut) == "Pneumonoultramicroscopicsilicovolcanoconiosis"


@pytest.fixture(scope="module")
def demo_case(tmp_path_factory: pytest.TempPathFactory) -> Path:
    demo = pytest.importorskip("app.data.demo")
    try:  # a small grid keeps the test fast (the generator's test scale)
        return demo.ensure_demo_case(out=tmp_path_factory.mktemp("demo") / "case", _scale=0.25)
    except TypeError as exc:
        pytest.skip(f"demo case generator has another signature: {exc}")


def test_composed_frame_demo_case(demo_case: Path) -> None:
    """The demo case end to end: its video frame, its CT, its clinical sheet's IR lines."""
    from app.data.ct import load_ct

    clinical = pytest.importorskip("app.data.clinical")
    vol = load_ct(demo_case / "ct")
    record = clinical.load_clinical(demo_case / "clinical.xlsx")
    lines = clinical.format_ir_lines(record, ["sex", "age", "diagnosis", "height", "weight",
                                              "bmi", "pft"])
    assert ("Sex/Age" in dict(lines)) and lines
    cap = cv2.VideoCapture(str(demo_case / "video.mp4"))
    ok, bgr = cap.read()
    cap.release()
    frame = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB) if ok else _video_frame(1280, 720)
    frame = cv2.resize(frame, (1280, 720), interpolation=cv2.INTER_AREA)
    h, w = frame.shape[:2]
    box = render_text_box(lines, round(0.42 * h), h / 1080)
    rects = Layout.for_frame(w, h, "zoom_view", True, False, (box.shape[1], box.shape[0]))
    slicer = MPRSlicer(vol)
    pos = _mid(vol)
    views = slicer.render_small_views(pos, pos, rects[STRIP_KEYS[0]].w)
    z = rects[ZOOM_KEY]
    layers = [Layer(k, views[p], rects[k].x, rects[k].y) for p, k in zip(PLANES, STRIP_KEYS,
                                                                         strict=True)]
    layers += [Layer(ZOOM_KEY, slicer.render_view("axial", pos["axial"], pos, z.w), z.x, z.y),
               Layer(IR_KEY, box, rects[IR_KEY].x, rects[IR_KEY].y)]
    out = Compositor().compose(frame, layers)
    _save("frame_demo_zoom_axial_ir.png", out)
    assert slicer.orientation_labels("axial")["left"] == "R"
    r = rects[IR_KEY]
    assert (out[r.y:r.bottom, r.x:r.right].min(axis=2) > 200).sum() > 200
    for key in (*STRIP_KEYS, ZOOM_KEY):
        q = rects[key]
        assert _grey_fraction(out[q.y:q.bottom, q.x:q.right], 40, 120) > 0.08, key
