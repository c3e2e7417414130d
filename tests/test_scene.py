"""Composed console frames (issue 3, "Done when"): SceneRenderer on the demo case and on real CT.

Representative states — each overlay alone, all together, the CT zoom view, a rotated and a
zoomed 3D view — are composed onto a real video frame and checked by content: the IR region
carries text, the CT strip shows lung-window grey where the lung is, the 3D region shows the
structures' colours. The frames are saved under ``artifacts/console/`` to look at.

3D tests skip with the reason when VTK cannot render offscreen here. Time comes from a
ManualClock shared with the 3D worker, so animations are checked at exact instants.
"""

from __future__ import annotations

import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from app.core.registry import Actor, CommandRegistry
from app.core.state import ConsoleState
from app.core.vocab import LOBES
from app.render.clock import ManualClock
from app.render.layout import AR_KEY, IR_KEY, STRIP_KEYS, ZOOM_KEY, Rect
from app.render.mpr import PLANE_COLORS
from app.render.scene import NOTICE_KEY, SceneRenderer, dark_frame, tumor_side_of

ROOT = Path(__file__).resolve().parents[1]
ART = ROOT / "artifacts" / "console"
SIZE = (1280, 720)
NURSE = Actor(role="nurse", source="touch")


# ----------------------------------------------------------------------------- helpers

def _save(name: str, rgb: np.ndarray) -> Path:
    ART.mkdir(parents=True, exist_ok=True)
    path = ART / name
    cv2.imwrite(str(path), cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))
    return path


def _crop(img: np.ndarray, r: Rect) -> np.ndarray:
    return img[r.y:r.bottom, r.x:r.right]


def _hsv(rgb: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(np.ascontiguousarray(rgb), cv2.COLOR_RGB2HSV)


def _orange_px(rgb: np.ndarray) -> int:
    """The nodule's bright orange (OpenCV hue 5–25 of 180, saturated, bright)."""
    h = _hsv(rgb)
    return int(((h[..., 0] >= 5) & (h[..., 0] <= 25) & (h[..., 1] > 120)
                & (h[..., 2] > 120)).sum())


def _hue_px(rgb: np.ndarray, lo: int, hi: int, min_s: int = 60, min_v: int = 50) -> int:
    h = _hsv(rgb)
    return int(((h[..., 0] >= lo) & (h[..., 0] <= hi) & (h[..., 1] > min_s)
                & (h[..., 2] > min_v)).sum())


def _white_text_px(rgb: np.ndarray) -> int:
    return int((rgb.min(axis=2) > 215).sum())


def _wait(pred, timeout: float = 20.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.02)
    return False


class Console:
    """A state, a registry and a scene, as the window wires them."""

    def __init__(self, case, clock, anatomy=None, model=None, size=SIZE) -> None:
        self.state = ConsoleState()
        self.registry = CommandRegistry(self.state)
        self.clock = clock
        self.scene = SceneRenderer(self.state, None, clock, size, anatomy,
                                   registry=self.registry)
        self.scene.set_case(case, model)
        self.state.set_case(case.context())

    def do(self, action: str, **params) -> None:
        result = self.registry.dispatch(action, params, NURSE)
        assert result.ok, result.message

    def settle(self, timeout: float = 30.0) -> None:
        """Wait until the 3D worker has drawn the final pose (wall time; the clock is manual)."""
        assert _wait(self.scene.ready, timeout), "the scene never became ready"

    def close(self) -> None:
        self.scene.close()


# ----------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def demo_case(tmp_path_factory):
    from app.data.case import load_case
    from app.data.demo import ensure_demo_case

    folder = ensure_demo_case(out=tmp_path_factory.mktemp("demo") / "case", _scale=0.25)
    case = load_case(folder)
    assert case.ct is not None and case.labels is not None and case.clinical is not None
    return case


@pytest.fixture(scope="module")
def demo_frame(demo_case) -> np.ndarray:
    """A real frame of the demo endoscope video at the console's size."""
    from app.data.video import VideoSource

    src = VideoSource(demo_case.video_path, output_size=SIZE)
    frame = src.read()
    src.close()
    assert frame is not None and frame.shape == (SIZE[1], SIZE[0], 3)
    return frame


@pytest.fixture(scope="module")
def mesh_cache(tmp_path_factory):
    from app.render.meshes import MeshCache

    return MeshCache(cache_dir=tmp_path_factory.mktemp("meshes"))


@pytest.fixture(scope="module")
def demo_model(demo_case, mesh_cache):
    from app.render.scene import load_anatomy_model

    model = load_anatomy_model(demo_case, cache=mesh_cache)
    assert model is not None and "lung_nodules" in model.polys
    return model


@pytest.fixture(scope="module")
def clock() -> ManualClock:
    return ManualClock(1000.0)


@pytest.fixture(scope="module")
def worker(clock):
    """One 3D worker (one VTK context) for the module, on the shared manual clock."""
    from app.render.anatomy3d import AnatomyWorker, probe_offscreen

    win, why = probe_offscreen()
    if win is None:
        pytest.skip(f"VTK offscreen rendering is unavailable here: {why}")
    w = AnatomyWorker((300, 300), clock=clock).start()
    yield w
    w.stop()


@pytest.fixture()
def demo(demo_case, clock):
    clock.advance(30.0)  # every animation of an earlier test has ended
    con = Console(demo_case, clock)
    yield con
    con.close()


@pytest.fixture()
def demo3d(demo_case, demo_model, worker, clock):
    clock.advance(30.0)
    con = Console(demo_case, clock, worker, demo_model)
    yield con
    con.close()


# ----------------------------------------------------------------------------- 2D overlays

def test_ir_box_alone_has_text_and_leaves_the_video_alone(demo, demo_frame):
    demo.do("IR.RESET")
    out = demo.scene.compose(demo_frame).copy()
    _save("demo_ir.png", out)
    rects = demo.scene.rects()
    assert set(rects) == {IR_KEY}
    r = rects[IR_KEY]
    assert r.right <= SIZE[0] and r.y < SIZE[1] // 10  # top right
    assert r.x > SIZE[0] // 2
    box = _crop(out, r)
    assert _white_text_px(box) > 400  # values in bright bold type
    assert (box.max(axis=2) < 70).mean() > 0.5  # on a dark panel
    outside = out.copy()
    outside[r.y:r.bottom, r.x:r.right] = demo_frame[r.y:r.bottom, r.x:r.right]
    assert np.array_equal(outside, demo_frame)  # nothing drawn outside the box


def test_ir_fields_follow_the_state(demo, demo_frame):
    demo.do("IR.SHOW", fields=["age"])
    small = demo.scene.rects()
    demo.scene.compose(demo_frame)
    small = demo.scene.rects()[IR_KEY]
    demo.do("IR.SHOW", fields=["pft"], op="add")
    demo.scene.compose(demo_frame)
    bigger = demo.scene.rects()[IR_KEY]
    assert bigger.h > small.h  # PFT lines were added
    demo.do("IR.HIDE")
    out = demo.scene.compose(demo_frame)
    assert demo.scene.rects() == {}
    assert np.array_equal(out, demo_frame)


def _lung_mask_view(case, plane: str, index: int, rect: Rect) -> np.ndarray:
    """The lobes' union on one slice, in display orientation, resized to the image rect."""
    lung = np.zeros(case.ct.shape, bool)
    for k in LOBES:
        if k in case.labels.masks:
            lung |= case.labels.masks[k]
    return _mask_view(lung, plane, index, rect)


def _mask_view(mask3: np.ndarray, plane: str, index: int, rect: Rect) -> np.ndarray:
    if plane == "axial":
        m = mask3[index][::-1]
    elif plane == "coronal":
        m = mask3[:, index][::-1]
    else:
        m = mask3[:, :, index][::-1, ::-1]
    m = cv2.resize(m.astype(np.uint8), (rect.w, rect.h), interpolation=cv2.INTER_NEAREST)
    return cv2.erode(m, np.ones((5, 5), np.uint8)).astype(bool)  # away from the edges


def _check_lung_grey(out: np.ndarray, scene: SceneRenderer, case, lung_view,
                     planes=("axial", "coronal", "sagittal"), min_px: int = 50) -> None:
    """Inside the lung the views are neutral grey at lung-window levels (parenchyma around
    −850 HU → ~85/255 in W1500/L−600), far darker than soft tissue (~230)."""
    rects = scene.rects()
    slicer = scene._slicer
    assert slicer is not None
    pos = {p: int(round(v)) for p, v in scene.status().slice_values.items()}
    for plane, key in zip(("axial", "coronal", "sagittal"), STRIP_KEYS, strict=True):
        if plane not in planes:
            continue
        r = rects[key]
        img = slicer.image_rect(plane, r.w)
        abs_rect = Rect(r.x + img.x, r.y + img.y, img.w, img.h)
        view = _crop(out, abs_rect).astype(int)
        inside = lung_view(plane, pos[plane], abs_rect)
        assert inside.sum() >= min_px, f"too little lung on the {plane} slice {pos[plane]}"
        px = view[inside]
        grey = np.abs(px[:, 0] - px[:, 1]) + np.abs(px[:, 1] - px[:, 2])
        assert np.median(grey) <= 2, f"{plane}: the lung is not drawn in grey"
        assert 30 <= np.median(px[:, 0]) <= 140, f"{plane}: lung grey {np.median(px[:, 0])}"


def _off_midline(case) -> int:
    """A sagittal slice through the right lung (the middle one is the mediastinum)."""
    return int(case.ct.size["sagittal"] * 0.3)


def test_ct_strip_alone_shows_lung_window_grey_where_the_lung_is(demo, demo_case, demo_frame):
    demo.do("IV.SHOW_MOVE")
    demo.scene.layers()
    demo.do("IV.SHOW_MOVE", sagittal=_off_midline(demo_case))
    demo.clock.advance(5.0)  # the slice glides there in 4 s
    out = demo.scene.compose(demo_frame).copy()
    _save("demo_ct.png", out)
    rects = demo.scene.rects()
    assert set(rects) == set(STRIP_KEYS)
    for a, b in zip(STRIP_KEYS, STRIP_KEYS[1:], strict=False):
        assert rects[a].right == rects[b].right and rects[a].bottom < rects[b].y  # stacked
    assert rects[STRIP_KEYS[0]].right > SIZE[0] - 30  # along the right edge
    _check_lung_grey(out, demo.scene, demo_case,
                     lambda p, i, r: _lung_mask_view(demo_case, p, i, r))
    # Each view carries its plane's colour (border and readout).
    for plane, key in zip(("axial", "coronal", "sagittal"), STRIP_KEYS, strict=True):
        r = rects[key]
        edge = out[r.y + r.h // 2, r.x]
        assert np.abs(edge.astype(int) - PLANE_COLORS[plane]).max() < 40


def test_window_preset_changes_the_grey_levels(demo, demo_frame):
    demo.do("IV.SHOW_MOVE")
    lung = demo.scene.compose(demo_frame).copy()
    demo.do("IV.SHOW_MOVE", window="mediastinum")
    med = demo.scene.compose(demo_frame).copy()
    r = demo.scene.rects()["ct_axial"]
    a, b = _crop(lung, r).astype(int), _crop(med, r).astype(int)
    # In the mediastinal window the lung turns black: the view gets darker overall.
    assert b.mean() < a.mean() - 5


def test_zoom_view_puts_the_main_plane_in_the_centre_and_keeps_the_strip(demo, demo_frame):
    demo.do("IR.RESET")
    demo.do("IV.ZOOM_IN_MOVE", plane="coronal")
    out = demo.scene.compose(demo_frame).copy()
    _save("demo_zoom_coronal.png", out)
    rects = demo.scene.rects()
    assert {ZOOM_KEY, IR_KEY, *STRIP_KEYS} <= set(rects)
    z = rects[ZOOM_KEY]
    assert z.h >= 0.6 * SIZE[1] and abs((z.y + z.h / 2) - SIZE[1] / 2) < 2
    names = list(rects)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            assert not rects[a].intersects(rects[b]), f"{a} overlaps {b}"
    # The large view is the coronal plane: green border.
    edge = out[z.y + z.h // 2, z.x + 1].astype(int)
    assert np.abs(edge - PLANE_COLORS["coronal"]).max() < 40
    # Moving another plane while zoomed makes it the main view (DESIGN §4).
    demo.do("IV.SHOW_MOVE", axial="+2")
    out = demo.scene.compose(demo_frame)
    z = demo.scene.rects()[ZOOM_KEY]
    edge = out[z.y + z.h // 2, z.x + 1].astype(int)
    assert np.abs(edge - PLANE_COLORS["axial"]).max() < 40


# ----------------------------------------------------------------------------- animation

def test_slice_animation_midway_and_at_four_seconds(demo, demo_frame, clock):
    demo.do("IV.SHOW_MOVE")
    start = demo.state.iv.pos_dict()["coronal"]
    demo.scene.compose(demo_frame)
    demo.do("IV.SHOW_MOVE", coronal="+10")
    t0 = clock.now()
    demo.scene.layers(t0)
    assert demo.scene.status().slice_values["coronal"] == pytest.approx(start)
    clock.advance(2.0)
    mid = {lay.name: lay.version for lay in demo.scene.layers()}
    st = demo.scene.status()
    assert st.slice_animating
    # ease-in-out: exactly half-way at half the time
    assert st.slice_values["coronal"] == pytest.approx(start + 5, abs=1e-6)
    out_mid = demo.scene.compose(demo_frame, clock.now()).copy()
    _save("demo_slice_midway.png", out_mid)
    # t is explicit: a frame for any instant, without moving the clock
    demo.scene.layers(t0 + 1.0)
    assert start < demo.scene.status().slice_values["coronal"] < start + 5
    clock.advance(2.0)  # 4 s: arrived
    end = {lay.name: lay.version for lay in demo.scene.layers()}
    st = demo.scene.status()
    assert st.slice_values["coronal"] == pytest.approx(start + 10)
    assert not st.slice_animating
    assert end["ct_coronal"] != mid["ct_coronal"]
    # Still: nothing is re-rendered.
    clock.advance(1.0)
    again = {lay.name: lay.version for lay in demo.scene.layers()}
    assert again == end


def test_configurable_slice_duration(demo_case, clock):
    clock.advance(30.0)
    state = ConsoleState()
    reg = CommandRegistry(state)
    scene = SceneRenderer(state, demo_case, clock, SIZE, None, slice_seconds=1.0)
    state.set_case(demo_case.context())
    reg.dispatch("IV.SHOW_MOVE", {}, NURSE)
    start = state.iv.pos_dict()["axial"]
    reg.dispatch("IV.SHOW_MOVE", {"axial": "+4"}, NURSE)
    clock.advance(0.5)
    scene.layers()
    assert scene.status().slice_values["axial"] == pytest.approx(start + 2)
    clock.advance(0.5)
    scene.layers()
    assert scene.status().slice_values["axial"] == pytest.approx(start + 4)
    scene.close()


def test_first_show_jumps_after_the_ct_was_removed(demo, clock):
    demo.do("IV.SHOW_MOVE")
    demo.do("IV.REMOVE")
    demo.scene.layers()
    assert demo.scene.rects() == {}
    demo.do("IV.SHOW_MOVE", sagittal="+20")
    demo.scene.layers()
    target = demo.state.iv.pos_dict()["sagittal"]
    assert demo.scene.status().slice_values["sagittal"] == pytest.approx(target)
    assert not demo.scene.status().slice_animating


def test_unchanged_layers_are_not_re_rendered(demo, demo_frame):
    demo.do("IR.RESET")
    demo.do("IV.SHOW_MOVE")
    first = {lay.name: (lay.version, id(lay.image_rgba)) for lay in demo.scene.layers()}
    second = {lay.name: (lay.version, id(lay.image_rgba)) for lay in demo.scene.layers()}
    assert first == second
    demo.do("IR.SHOW", fields=["pft"], op="remove")
    third = {lay.name: lay.version for lay in demo.scene.layers()}
    assert third[IR_KEY] != first[IR_KEY][0]
    for key in STRIP_KEYS:
        assert third[key] == first[key][0]  # only the IR box was redrawn


# ----------------------------------------------------------------------------- 3D overlay

def _ar_counts(rgb: np.ndarray) -> dict[str, int]:
    return {
        "nodule": _orange_px(rgb),
        "teal_lobe": _hue_px(rgb, 75, 95),  # right upper lobe (muted teal)
        "airway": int(((rgb.min(axis=2) > 170) & (rgb[..., 2] >= rgb[..., 0])).sum()),
    }


def test_3d_model_alone_shows_the_structures_colours(demo3d, demo_frame):
    demo3d.do("AR.SHOW")
    assert set(demo3d.state.ar.structures) == {"right_upper_lobe", "lung_nodules",
                                               "trachea_bronchia"}
    demo3d.settle()
    out = demo3d.scene.compose(demo_frame).copy()
    _save("demo_ar.png", out)
    rects = demo3d.scene.rects()
    assert set(rects) == {AR_KEY}
    region = _crop(out, rects[AR_KEY])
    counts = _ar_counts(region)
    assert counts["nodule"] > 20, counts
    assert counts["teal_lobe"] > 200, counts
    assert counts["airway"] > 50, counts
    assert demo3d.scene.status().ar_seq is not None


def test_all_three_overlays_together(demo3d, demo_case, demo_frame):
    demo3d.do("IR.RESET")
    demo3d.do("IV.SHOW_MOVE")
    demo3d.do("IV.SHOW_MOVE", sagittal=_off_midline(demo_case))
    demo3d.do("AR.SHOW")
    demo3d.clock.advance(5.0)
    demo3d.settle()
    out = demo3d.scene.compose(demo_frame).copy()
    _save("demo_all.png", out)
    rects = demo3d.scene.rects()
    assert {IR_KEY, AR_KEY, *STRIP_KEYS} == set(rects)
    names = list(rects)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            assert not rects[a].intersects(rects[b]), f"{a} overlaps {b}"
    assert _white_text_px(_crop(out, rects[IR_KEY])) > 400
    assert _orange_px(_crop(out, rects[AR_KEY])) > 10
    _check_lung_grey(out, demo3d.scene, demo_case,
                     lambda p, i, r: _lung_mask_view(demo_case, p, i, r))


def test_rotated_3d_view_differs_and_keeps_its_colours(demo3d, demo_frame, clock):
    demo3d.do("AR.SHOW", view="anterior")
    demo3d.settle()
    still = _crop(demo3d.scene.compose(demo_frame), demo3d.scene.rects()[AR_KEY]).copy()
    demo3d.do("AR.ROTATE", direction="horizontal")
    clock.advance(3.0)  # half-way through the 6 s turn: seen from behind
    worker = demo3d.scene.anatomy
    assert _wait(lambda: worker.latest() is not None
                 and abs(abs(worker.latest().pose.azimuth) - 180) < 20)
    turned = _crop(demo3d.scene.compose(demo_frame), demo3d.scene.rects()[AR_KEY]).copy()
    frame_full = demo_frame.copy()
    r = demo3d.scene.rects()[AR_KEY]
    frame_full[r.y:r.bottom, r.x:r.right] = turned
    _save("demo_ar_rotated.png", frame_full)
    assert np.abs(turned.astype(int) - still.astype(int)).mean() > 3
    assert _orange_px(turned) > 5  # the nodule shows through (x-ray ghost)
    assert _hue_px(turned, 75, 95) > 100
    clock.advance(4.0)  # the turn is over: back to the still view
    demo3d.settle()
    back = _crop(demo3d.scene.compose(demo_frame), r)
    assert np.abs(back.astype(int) - still.astype(int)).mean() < 2


def test_zoomed_3d_view_enlarges_the_nodule(demo3d, demo_frame, clock):
    demo3d.do("AR.SHOW")
    demo3d.settle()
    first = demo3d.scene.compose(demo_frame)
    r = demo3d.scene.rects()[AR_KEY]
    before = _orange_px(_crop(first, r))
    demo3d.do("AR.ZOOM_IN", target="lung_nodules")
    demo3d.do("AR.ZOOM_IN", target="lung_nodules")
    clock.advance(3.5)
    demo3d.settle()
    out = demo3d.scene.compose(demo_frame).copy()
    _save("demo_ar_zoomed.png", out)
    after = _orange_px(_crop(out, r))
    assert after > 3 * max(before, 1), (before, after)


def test_repeated_rotation_command_replays_the_swing(demo3d, clock):
    demo3d.do("AR.SHOW")
    demo3d.do("AR.ROTATE", direction="left")
    clock.advance(10.0)  # swing over
    worker = demo3d.scene.anatomy
    assert _wait(lambda: not worker.animator.animating())
    result = demo3d.registry.dispatch("AR.ROTATE", {"direction": "left"}, NURSE)
    assert result.ok and "ar" not in result.changed  # no state change…
    assert _wait(lambda: worker.animator.animating())  # …but the swing runs again


# ----------------------------------------------------------------------------- missing parts

def test_missing_3d_renderer_shows_a_note_instead_of_crashing(demo_case, demo_frame, clock):
    con = Console(demo_case, clock, anatomy=None)
    con.do("AR.SHOW")
    out = con.scene.compose(demo_frame).copy()
    r = con.scene.rects()[AR_KEY]
    assert con.scene.status().ar_note == "3D model unavailable"
    assert _white_text_px(_crop(out, r)) > 30
    con.close()


def test_case_without_ct_labels_or_clinical_still_composes(tmp_path, clock):
    from app.data.case import load_case

    (tmp_path / "notes.txt").write_text("nothing useful here")
    case = load_case(tmp_path)
    assert case.ct is None and case.labels is None and case.clinical is None
    con = Console(case, clock)
    for action in ("IV.SHOW_MOVE", "IR.RESET", "AR.SHOW"):
        assert not con.registry.dispatch(action, {}, NURSE).ok  # refused in plain words
    con.scene.set_notice("No endoscope video", "This case has no video.")
    out = con.scene.compose(dark_frame(SIZE))
    assert set(con.scene.rects()) == set()  # no overlays; the notice is centred
    layers = con.scene.layers()
    assert [lay.name for lay in layers] == [NOTICE_KEY]
    mid = out[SIZE[1] // 2 - 40:SIZE[1] // 2 + 40, SIZE[0] // 2 - 200:SIZE[0] // 2 + 200]
    assert _white_text_px(mid) > 100
    _save("no_parts_notice.png", out)
    con.close()


def test_scene_without_a_case_draws_only_the_notice():
    state = ConsoleState()
    scene = SceneRenderer(state, None, ManualClock(), SIZE, None)
    scene.set_notice("Loading the case\u2026")
    out = scene.compose(dark_frame(SIZE))
    assert [lay.name for lay in scene.layers()] == [NOTICE_KEY]
    assert out.max() > 200
    scene.close()


def test_tumour_side():
    assert tumor_side_of(("right_upper_lobe",)) == "right"
    assert tumor_side_of(("left_upper_lobe", "left_lower_lobe")) == "left"
    assert tumor_side_of(("left_upper_lobe", "right_upper_lobe")) is None
    assert tumor_side_of(()) is None


# ----------------------------------------------------------------------------- real CT

@pytest.fixture(scope="module")
def copd_case(testdata_dir, tmp_path_factory):
    """The real COPDGene chest CT (DICOM series) as a case with only a CT."""
    from app.data.case import load_case

    src = testdata_dir / "cip_copdgene_ct64"
    if not src.is_dir():
        pytest.skip(f"COPDGene test CT missing at {src}")
    folder = tmp_path_factory.mktemp("copd")
    (folder / "case.toml").write_text(f'[ct]\npath = "{src / "ct-64Dicom"}"\n')
    case = load_case(folder)
    assert case.ct is not None
    return case, src


def _nrrd_mask_on(case_ct, path: Path) -> np.ndarray:
    nrrd = pytest.importorskip("nrrd")
    from app.data.volume import canonicalize

    data, header = nrrd.read(str(path))
    dirs = np.asarray(header["space directions"], dtype=float)
    origin = np.asarray(header.get("space origin", np.zeros(3)), dtype=float)
    space = str(header.get("space", "left-posterior-superior")).lower()
    flip = np.array([-1.0, -1.0, 1.0]) if space in ("right-anterior-superior", "ras") else 1.0
    affine = np.eye(4)
    affine[:3, :3] = (dirs * flip).T
    affine[:3, 3] = origin * flip
    d, a = canonicalize(data, affine)
    assert d.shape == case_ct.shape and np.allclose(a, case_ct.affine, atol=1e-3)
    return d > 0


def test_real_ct_strip_lung_grey(copd_case, clock):
    case, src = copd_case
    lung = _nrrd_mask_on(case.ct, src / "wholeLung-64.nrrd")
    con = Console(case, clock)
    con.do("IV.SHOW_MOVE")
    con.do("IV.SHOW_MOVE", sagittal=_off_midline(case))
    clock.advance(5.0)
    assert not con.registry.dispatch("AR.SHOW", {}, NURSE).ok  # no labels: refused
    out = con.scene.compose(dark_frame(SIZE)).copy()
    _save("real_copd_ct.png", out)
    _check_lung_grey(out, con.scene, case, lambda p, i, r: _mask_view(lung, p, i, r),
                     min_px=30)
    con.do("IV.ZOOM_IN_MOVE", plane="axial")
    out = con.scene.compose(dark_frame(SIZE)).copy()
    _save("real_copd_zoom_axial.png", out)
    z = con.scene.rects()[ZOOM_KEY]
    img = con.scene._slicer.image_rect("axial", z.w)
    abs_rect = Rect(z.x + img.x, z.y + img.y, img.w, img.h)
    inside = _mask_view(lung, "axial", con.state.iv.pos_dict()["axial"], abs_rect)
    px = _crop(out, abs_rect)[inside]
    assert 30 <= np.median(px[:, 0]) <= 140
    con.close()


def test_real_ct_with_totalsegmentator_lobes(testdata_dir, tmp_path, worker, mesh_cache,
                                             clock):
    from app.data.case import load_case
    from app.render.scene import load_anatomy_model

    src = testdata_dir / "totalseg_example"
    if not src.is_dir():
        pytest.skip(f"TotalSegmentator example missing at {src}")
    (tmp_path / "case.toml").write_text(
        f'[ct]\npath = "{src / "example_ct.nii.gz"}"\n'
        f'[labels]\npath = "{src / "example_seg_fast_force_split.nii.gz"}"\n')
    case = load_case(tmp_path)
    model = load_anatomy_model(case, cache=mesh_cache)
    assert model is not None and {"left_upper_lobe", "left_lower_lobe"} <= set(model.polys)
    clock.advance(30.0)
    con = Console(case, clock, worker, model)
    con.do("IV.SHOW_MOVE")
    con.do("AR.SHOW")  # no tumour lobe: every lobe the model has
    assert {"left_upper_lobe", "left_lower_lobe", "right_lower_lobe"} <= set(
        con.state.ar.structures)
    con.settle()
    out = con.scene.compose(dark_frame(SIZE)).copy()
    _save("real_totalseg_all.png", out)
    region = _crop(out, con.scene.rects()[AR_KEY])
    # left upper lobe rose (hue ~3-10), left lower olive green (~35-45), right lower blue (~105-115)
    assert _hue_px(region, 100, 118) > 100  # right lower lobe
    assert _hue_px(region, 30, 50) > 100  # left lower lobe
    ct_rect = con.scene.rects()["ct_coronal"]
    assert _crop(out, ct_rect).std() > 20  # a real image, not a flat panel
    con.close()
