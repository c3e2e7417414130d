"""The whole overlay scene of one video frame: IR box, CT views and 3D model over the video
(ARCHITECTURE "Rendering and threads"). No Qt here.

:class:`SceneRenderer` subscribes to ``ConsoleState.events`` and keeps, per overlay, the inputs
it was last rendered with; :meth:`SceneRenderer.layers` re-renders a layer only when those
inputs change (state version, animated slice value, a new 3D frame, the frame size), and
:meth:`SceneRenderer.compose` blends the layers onto a video frame with one
:class:`~app.render.compositor.Compositor`.

Threads: state events may arrive on any thread (the UI thread for touch and hotkeys, a worker
thread for text or voice commands). The event handler only copies the new sub-state and retargets
the slice animation under a short lock; all rendering happens in :meth:`layers`, called from one
render thread. The 3D model is rendered by an :class:`~app.render.anatomy3d.AnatomyWorker` on
its own thread; the scene submits AR states to it and shows its newest frame.

Time: the slice animator and the frame time ``t`` come from the injected clock, so tests use a
:class:`~app.render.clock.ManualClock` and compose frames for any instant.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import cv2
import numpy as np

from app.core.state import ARState, ConsoleState, IRState, IVState, StateChange
from app.core.vocab import IR_ALL_FIELDS, LOBES, PLANES, WINDOW_PRESETS
from app.render.animation import SliceAnimator
from app.render.clock import Clock, MonotonicClock
from app.render.compositor import Compositor, Layer
from app.render.layout import AR_KEY, IR_KEY, STRIP_KEYS, ZOOM_KEY, Layout, Rect
from app.render.mpr import DEFAULT_WINDOW, MPRSlicer
from app.render.textbox import render_text_box, text_sprite

log = logging.getLogger(__name__)

NOTICE_KEY = "notice"
DEFAULT_FRAME_SIZE = (1280, 720)
SLICE_SECONDS = 4.0
# The IR box never takes more than this fraction of the frame height, so the 3D panel keeps
# room below it: a long text is first given a wider box (IR_WIDTH_STEPS, fractions of the frame
# height), then smaller type.
IR_MAX_HEIGHT_FRAC = 0.66
IR_WIDTH_STEPS = (0.42, 0.5)
# A zoomed-in 3D model is cut by its panel's edges; fading the last few percent of the panel
# turns the hard cut into a soft edge.
AR_FEATHER_FRAC = 0.07
NOTE_RGBA = (12, 14, 20, 200)
NOTE_TEXT_RGB = (235, 238, 245)
NOTE_MUTED_RGB = (170, 185, 205)


@dataclass(frozen=True)
class AnatomyModel:
    """What the 3D worker needs from a case: surfaces (LPS mm), centroids, the tumour side."""

    polys: dict[str, Any]
    centroids: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    tumor_side: str | None = None
    build_s: float = 0.0


def tumor_side_of(lobes: tuple[str, ...] | list[str]) -> str | None:
    """"left"/"right" when every tumour lobe is on one side (the surgical view turns there)."""
    sides = {lobe.split("_", 1)[0] for lobe in lobes if lobe in LOBES}
    return sides.pop() if len(sides) == 1 else None


def load_anatomy_model(case: Any, cache: Any = None,
                       progress: Callable[[float, str], None] | None = None) -> AnatomyModel | None:
    """Build (or read from the mesh cache) the surfaces of ``case.labels``; None without labels.

    Slow the first time for a case (marching cubes, smoothing): call it off the UI thread.
    """
    import time

    labels = getattr(case, "labels", None)
    if labels is None or not labels.structures():
        return None
    from app.render.meshes import MeshCache

    cache = cache if cache is not None else MeshCache()
    t0 = time.perf_counter()
    polys = cache.build(labels, progress=progress)
    centroids: dict[str, tuple[float, float, float]] = {}
    for key in polys:
        try:
            c = labels.centroid_lps(key)
        except KeyError:
            c = None
        if c is not None:  # the mask's centroid: a better zoom target than the mean vertex
            centroids[key] = (float(c[0]), float(c[1]), float(c[2]))
    return AnatomyModel(polys, centroids, tumor_side_of(tuple(getattr(case, "tumor_lobes", ()))),
                        time.perf_counter() - t0)


class _PinnedClock:
    """The scene's clock, optionally pinned to a frame's time.

    The slice animator reads ``now()``: state events retarget it at the real time of the
    command, while :meth:`SceneRenderer.layers` pins the clock to the frame time ``t`` (under
    the scene lock) to read the animated values for that frame.
    """

    def __init__(self, base: Clock) -> None:
        self.base = base
        self.pinned: float | None = None

    def now(self) -> float:
        return self.base.now() if self.pinned is None else self.pinned


@dataclass
class _Cached:
    key: Any
    layer: Layer


@dataclass(frozen=True)
class SceneStatus:
    """What the scene showed in its last :meth:`SceneRenderer.layers` call (for the UI/tests)."""

    rects: dict[str, Rect]
    slice_values: dict[str, float]
    slice_animating: bool
    ar_seq: int | None  # seq of the 3D frame shown, None when none is shown
    ar_note: str | None  # the note shown instead of the 3D model ("Preparing…", an error)


class SceneRenderer:
    """Composes the console's overlays for a frame; see the module docstring.

    ``case`` may be None (still loading): then nothing but the notice is drawn. ``anatomy`` is
    an :class:`~app.render.anatomy3d.AnatomyWorker` (started by the caller) or None (no 3D).
    ``registry`` (optional) lets a repeated rotate command replay the rotation even though it
    leaves the state unchanged.
    """

    def __init__(self, state: ConsoleState, case: Any = None, clock: Clock | None = None,
                 frame_size: tuple[int, int] = DEFAULT_FRAME_SIZE, anatomy: Any = None, *,
                 slice_seconds: float = SLICE_SECONDS, registry: Any = None) -> None:
        self.state = state
        self.clock: Clock = clock or MonotonicClock()
        self._pclock = _PinnedClock(self.clock)
        self.anatomy = anatomy
        self._lock = threading.RLock()
        self._slices = SliceAnimator(self._pclock, duration=slice_seconds)
        self._compositor = Compositor(buffers=2)
        self._versions = itertools.count(1)
        self._cache: dict[str, _Cached] = {}
        self._size = (int(frame_size[0]), int(frame_size[1]))
        self._ar_size: tuple[int, int] | None = None
        self._notice: str | None = None
        self._notice_detail: str | None = None
        self._case: Any = None
        self._slicer: MPRSlicer | None = None
        self._model_ready = False
        self._last_status = SceneStatus({}, {}, False, None, None)
        self._ir_lines: tuple[tuple, tuple[tuple[str, str], ...]] | None = None
        self._reset_caches = False
        # Copies of the sub-states, taken under the lock when an event arrives.
        self._ir: IRState = state.ir
        self._iv: IVState = state.iv
        self._ar: ARState = state.ar
        self._disconnect = [state.events.connect(self._on_change)]
        if registry is not None:
            self._disconnect.append(registry.results.connect(self._on_result))
        self.set_case(case)
        if self._ar.visible and anatomy is not None:
            anatomy.submit(self._ar)

    # -- inputs (any thread) --------------------------------------------------------------
    @property
    def slice_animator(self) -> SliceAnimator:
        return self._slices

    @property
    def frame_size(self) -> tuple[int, int]:
        return self._size

    @property
    def case(self) -> Any:
        return self._case

    def set_case(self, case: Any, model: AnatomyModel | None = None) -> None:
        """Show a (new) case. ``model``: its 3D surfaces, handed to the 3D worker.

        The slice animator forgets the old case, so the first CT view of the new one jumps
        instead of gliding from the old positions.
        """
        ct = getattr(case, "ct", None) if case is not None else None
        slicer = MPRSlicer(ct) if ct is not None else None
        with self._lock:
            self._case = case
            self._slicer = slicer
            self._slices.clear()
            self._reset_caches = True  # done by the render thread, which owns the caches
            self._iv = self.state.iv
            self._ir = self.state.ir
            self._ar = self.state.ar
            if self._iv.mode != "none" and self._iv.pos:
                self._slices.jump_to(self._iv.pos_dict())
        self._model_ready = False
        if model is not None and self.anatomy is not None:
            self.anatomy.set_structures(model.polys, model.centroids,
                                        tumor_side=model.tumor_side)
            self._model_ready = True
            self.anatomy.submit(self._ar)

    def set_model(self, model: AnatomyModel | None) -> None:
        """Hand a (late-built) 3D model to the worker."""
        if model is not None and self.anatomy is not None:
            self.anatomy.set_structures(model.polys, model.centroids,
                                        tumor_side=model.tumor_side)
            self._model_ready = True
            with self._lock:
                ar = self._ar
            self.anatomy.submit(ar)

    def set_notice(self, text: str | None, detail: str | None = None) -> None:
        """A message drawn in the middle of the frame (no video, video lost, loading)."""
        with self._lock:
            self._notice, self._notice_detail = (text or None), (detail or None)

    def set_frame_size(self, size: tuple[int, int]) -> None:
        size = (max(16, int(size[0])), max(16, int(size[1])))
        with self._lock:
            if size != self._size:
                self._size = size
                self._reset_caches = True

    def close(self) -> None:
        for fn in self._disconnect:
            fn()
        self._disconnect.clear()

    def _on_change(self, ch: StateChange) -> None:
        with self._lock:
            if ch.section == "ir":
                self._ir = ch.new
            elif ch.section == "iv":
                iv: IVState = ch.new
                self._iv = iv
                if iv.mode == "none" or not iv.pos:
                    # Hidden: forget the positions, so the next show jumps (no glide from an
                    # old position the team no longer has in mind).
                    self._slices.clear()
                else:
                    self._slices.set_targets(iv.pos_dict())
            elif ch.section == "ar":
                self._ar = ch.new
            elif ch.section == "case":
                self._slices.clear()
                iv = self.state.iv
                if iv.mode != "none" and iv.pos:
                    self._slices.jump_to(iv.pos_dict())
        if ch.section == "ar" and self.anatomy is not None:
            self.anatomy.submit(ch.new)

    def _on_result(self, result: Any) -> None:
        # A repeated "rotate left" leaves the state unchanged (no event) but should swing again.
        if (self.anatomy is not None and getattr(result, "ok", False)
                and "ar" not in (getattr(result, "changed", None) or [])
                and any(getattr(s, "action_id", "") == "AR.ROTATE"
                        for s in getattr(result, "steps", ()))):
            self.anatomy.restart_rotation()

    # -- rendering (the render thread) ----------------------------------------------------
    def status(self) -> SceneStatus:
        return self._last_status

    def animating(self, t: float | None = None) -> bool:
        """Whether a slice or 3D animation is running (frames keep changing)."""
        with self._lock:
            self._pclock.pinned = t
            try:
                sliding = self._slices.animating()
            finally:
                self._pclock.pinned = None
        anat = self.anatomy
        return sliding or (anat is not None and not anat.idle())

    def ready(self) -> bool:
        """Everything the state asks for is drawn in its final form (screenshots wait on it)."""
        if self._case is None or self.animating():
            return False
        with self._lock:
            ar = self._ar
        if ar.visible and self.anatomy is not None and self.anatomy.error is None:
            if not self._model_ready:
                return False
            frame = self.anatomy.latest()
            return frame is not None and not frame.fast and self.anatomy.idle()
        return True

    def layers(self, t: float | None = None) -> list[Layer]:
        """The overlay layers of the frame at time ``t`` (default: the clock's now)."""
        with self._lock:
            t = self.clock.now() if t is None else float(t)
            self._pclock.pinned = t
            try:
                values = self._slices.values()
                targets = self._slices.targets()
                sliding = self._slices.animating()
            finally:
                self._pclock.pinned = None
            ir, iv, ar = self._ir, self._iv, self._ar
            case, slicer = self._case, self._slicer
            w, h = self._size
            notice, notice_detail = self._notice, self._notice_detail
            reset, self._reset_caches = self._reset_caches, False
        if reset:
            self._cache.clear()
            self._compositor.clear()
            self._ir_lines = None

        out: list[Layer] = []
        # IR first: its rendered height decides where the 3D panel goes.
        ir_box = self._ir_image(ir, case, h)
        ir_img = None if ir_box is None else ir_box[0]
        ct_mode = iv.mode if (slicer is not None and iv.mode != "none" and values) else "none"
        ar_on = bool(ar.visible and ar.structures and case is not None)
        rects = Layout.for_frame(w, h, ct_mode, ir_img is not None, ar_on,
                                 None if ir_img is None else (ir_img.shape[1], ir_img.shape[0]))

        if ct_mode != "none" and slicer is not None:
            window = WINDOW_PRESETS.get(iv.window, DEFAULT_WINDOW)
            pos = {p: values[p] for p in PLANES if p in values}
            for plane, key in zip(PLANES, STRIP_KEYS, strict=True):
                if plane in pos and key in rects:
                    out.append(self._ct_layer(key, slicer, plane, pos, targets, sliding,
                                              rects[key], window))
            if ct_mode == "zoom_view" and ZOOM_KEY in rects:
                main = iv.main if iv.main in pos else "axial"
                out.append(self._ct_layer(ZOOM_KEY, slicer, main, pos, targets, sliding,
                                          rects[ZOOM_KEY], window))
        if ir_box is not None and IR_KEY in rects:
            r = rects[IR_KEY]
            out.append(self._layer(IR_KEY, ir_box[1], lambda: ir_box[0], r.x, r.y))
        ar_seq: int | None = None
        ar_note: str | None = None
        if ar_on and AR_KEY in rects:
            layer, ar_seq, ar_note = self._ar_layer(rects[AR_KEY])
            if layer is not None:
                out.append(layer)
        if notice:
            if rects:
                # Overlays are up: a compact note in the top-left corner, under the overlays,
                # so it never hides clinical content.
                out.insert(0, self._notice_layer(notice, notice_detail, w, h, corner=True))
            else:
                out.append(self._notice_layer(notice, notice_detail, w, h, corner=False))
        self._last_status = SceneStatus(rects, values, sliding, ar_seq, ar_note)
        return out

    def compose(self, frame_rgb: np.ndarray, t: float | None = None,
                out: np.ndarray | None = None) -> np.ndarray:
        """``frame_rgb`` (H, W, 3) uint8 with the overlays of time ``t`` blended on top.

        The layout follows the frame's size. Without ``out`` the result is one of the
        compositor's two reusable buffers (valid until the call after next).
        """
        h, w = frame_rgb.shape[:2]
        if (w, h) != self._size:
            self.set_frame_size((w, h))
        return self._compositor.compose(frame_rgb, self.layers(t), out=out)

    def compose_layers(self, frame_rgb: np.ndarray, layers: list[Layer],
                       out: np.ndarray | None = None) -> np.ndarray:
        """Blend layers already obtained from :meth:`layers` (for the same frame size): lets a
        render loop skip composing when neither the video nor any layer changed."""
        return self._compositor.compose(frame_rgb, layers, out=out)

    def rects(self) -> dict[str, Rect]:
        return dict(self._last_status.rects)

    # -- layers ---------------------------------------------------------------------------
    def _layer(self, name: str, key: Any, render: Callable[[], np.ndarray], x: int,
               y: int) -> Layer:
        """The cached layer ``name`` when its inputs ``key`` are unchanged, else a re-render."""
        hit = self._cache.get(name)
        if hit is not None and hit.key == key:
            hit.layer.x, hit.layer.y = int(x), int(y)  # moved only: same pixels, same version
            return hit.layer
        layer = Layer(name, render(), int(x), int(y), next(self._versions))
        self._cache[name] = _Cached(key, layer)
        return layer

    def _ir_image(self, ir: IRState, case: Any, h: int) -> tuple[np.ndarray, tuple] | None:
        """The IR box image and the key of what it shows, or None when there is no box."""
        record = getattr(case, "clinical", None) if case is not None else None
        if not ir.visible or not ir.fields or record is None:
            return None
        fields = set(ir.fields)
        if set(IR_ALL_FIELDS) <= fields:
            fields.add("extra")  # "all" also shows the hospital's unrecognised columns
        want = (tuple(sorted(fields)), id(record))
        if self._ir_lines is None or self._ir_lines[0] != want:
            from app.data.clinical import format_ir_lines

            try:
                lines = [(str(a), str(b)) for a, b in format_ir_lines(record, sorted(fields))]
            except Exception:  # noqa: BLE001 - a strange sheet must not take the video down
                log.exception("formatting the patient information failed")
                lines = [("Patient", "The patient information could not be shown.")]
            self._ir_lines = (want, tuple(lines))
        lines_t = self._ir_lines[1]
        if not lines_t:
            return None
        # Long texts (all fields, a long diagnosis) first get a wider box, then smaller type:
        # the type stays readable and the 3D panel keeps room below the box.
        scale = h / 1080.0
        img = np.zeros((0, 0, 4), np.uint8)
        box_w = 0
        for frac in IR_WIDTH_STEPS:
            box_w = max(120, round(frac * h))
            # render_text_box caches by content: asking again for the same lines is a lookup.
            img = render_text_box(list(lines_t), box_w, scale)
            if img.shape[0] <= IR_MAX_HEIGHT_FRAC * h:
                break
        for _ in range(4):
            if img.shape[0] <= IR_MAX_HEIGHT_FRAC * h:
                break
            scale *= 0.9
            img = render_text_box(list(lines_t), box_w, scale)
        return img, ("ir", lines_t, box_w, round(scale, 4))

    def _ct_layer(self, name: str, slicer: MPRSlicer, plane: str, pos: Mapping[str, float],
                  targets: Mapping[str, float], sliding: bool, rect: Rect,
                  window: tuple[float, float]) -> Layer:
        size = min(rect.w, rect.h)
        target = targets.get(plane)
        shown_target = target if sliding and target is not None else None
        key = (plane, size, window, round(pos[plane], 3),
               tuple(round(pos[q], 2) for q in PLANES if q in pos),
               None if shown_target is None else round(shown_target))

        def render() -> np.ndarray:
            return slicer.render_view(plane, pos[plane], pos, size, window, True, True,
                                      shown_target)

        return self._layer(name, key, render, rect.x, rect.y)

    def _ar_layer(self, rect: Rect) -> tuple[Layer | None, int | None, str | None]:
        a = (rect.w, rect.h)
        anat = self.anatomy
        if anat is None:
            note = "3D model unavailable"
            return self._note_panel(AR_KEY, note, "", rect), None, note
        if a != self._ar_size:
            self._ar_size = a
            anat.set_size(a)
        if anat.error:
            note = "3D view unavailable"
            return self._note_panel(AR_KEY, note, _short(anat.error), rect), None, note
        if not self._model_ready:
            note = "No 3D model for this case"
            return self._note_panel(AR_KEY, note, "", rect), None, note
        frame = anat.latest()
        if frame is None:
            note = "Preparing the 3D model\u2026"
            return self._note_panel(AR_KEY, note, "", rect), None, note
        img = frame.image
        zoomed = float(getattr(frame.pose, "zoom", 1.0)) > 1.01

        def render() -> np.ndarray:
            out = img
            if img.shape[1] != rect.w or img.shape[0] != rect.h:
                # A frame of the previous panel size (the worker is catching up): scale it.
                out = cv2.resize(np.asarray(img), (rect.w, rect.h),
                                 interpolation=cv2.INTER_LINEAR)
            if zoomed:
                out = np.array(out, copy=True)
                a = out[..., 3].astype(np.float32)
                a *= _feather(rect.w, rect.h)
                out[..., 3] = (a + 0.5).astype(np.uint8)
            return out

        layer = self._layer(AR_KEY, ("ar", frame.seq, id(img), a, zoomed), render, rect.x,
                            rect.y)
        return layer, frame.seq, None

    def _note_panel(self, name: str, title: str, detail: str, rect: Rect) -> Layer:
        key = ("note", title, detail, rect.w, rect.h)
        return self._layer(name, key, lambda: _note_image(title, detail, rect.w, rect.h,
                                                          self._size[1]), rect.x, rect.y)

    def _notice_layer(self, text: str, detail: str | None, w: int, h: int,
                      corner: bool) -> Layer:
        scale = 0.6 if corner else 1.0
        layer = self._layer(NOTICE_KEY, ("notice", text, detail, w, h, corner),
                            lambda: _notice_image(text, detail, w, h, scale), 0, 0)
        img = layer.image_rgba
        if corner:
            m = Layout.margin(h)
            layer.x, layer.y = m, m
        else:
            layer.x, layer.y = (w - img.shape[1]) // 2, (h - img.shape[0]) // 2
        return layer


@lru_cache(maxsize=8)
def _feather(w: int, h: int) -> np.ndarray:
    """An (h, w) float32 mask: 1 inside, easing to 0 over the outer AR_FEATHER_FRAC."""
    n = max(2.0, AR_FEATHER_FRAC * min(w, h))

    def ramp(k: int) -> np.ndarray:
        d = np.minimum(np.arange(k), np.arange(k)[::-1]).astype(np.float32)
        u = np.clip(d / n, 0.0, 1.0)
        return u * u * (3.0 - 2.0 * u)  # smoothstep

    mask = ramp(h)[:, None] * ramp(w)[None, :]
    mask.flags.writeable = False
    return mask


def _short(text: str, limit: int = 90) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _panel(w: int, h: int, radius: int) -> np.ndarray:
    from PIL import Image, ImageDraw

    img = Image.new("RGBA", (w, h), (0, 0, 0, 0))
    ImageDraw.Draw(img).rounded_rectangle((0, 0, w - 1, h - 1), radius=radius, fill=NOTE_RGBA,
                                          outline=(255, 255, 255, 60))
    return np.asarray(img).copy()


def _blit(dst: np.ndarray, sprite: np.ndarray, x: int, y: int) -> None:
    """Straight-alpha "over" of a sprite onto an RGBA panel (clipped)."""
    sh, sw = sprite.shape[:2]
    x0, y0 = max(x, 0), max(y, 0)
    x1, y1 = min(x + sw, dst.shape[1]), min(y + sh, dst.shape[0])
    if x1 <= x0 or y1 <= y0:
        return
    s = sprite[y0 - y:y1 - y, x0 - x:x1 - x].astype(np.float32)
    d = dst[y0:y1, x0:x1].astype(np.float32)
    a = s[..., 3:4] / 255.0
    da = d[..., 3:4] / 255.0
    oa = a + da * (1.0 - a)
    rgb = (s[..., :3] * a + d[..., :3] * da * (1.0 - a)) / np.maximum(oa, 1e-6)
    dst[y0:y1, x0:x1, :3] = np.clip(rgb + 0.5, 0, 255).astype(np.uint8)
    dst[y0:y1, x0:x1, 3:4] = np.clip(oa * 255.0 + 0.5, 0, 255).astype(np.uint8)


def _wrap_sprites(text: str, px: int, rgb: tuple[int, int, int], bold: bool,
                  max_w: int) -> list[np.ndarray]:
    from app.render.textbox import load_font, wrap_text

    return [text_sprite(line, px, rgb, bold) for line in
            wrap_text(text, load_font(px, bold), max_w) if line]


def _note_image(title: str, detail: str, w: int, h: int, frame_h: int) -> np.ndarray:
    """A dark panel with a centred note, used where the 3D model would be."""
    img = _panel(w, h, max(2, round(12 * frame_h / 1080)))
    px = max(11, round(22 * frame_h / 1080))
    sprites = _wrap_sprites(title, px, NOTE_TEXT_RGB, True, w - 2 * px)
    if detail:
        sprites += _wrap_sprites(detail, max(10, round(px * 0.8)), NOTE_MUTED_RGB, False,
                                 w - 2 * px)
    total = sum(s.shape[0] for s in sprites)
    y = max(0, (h - total) // 2)
    for s in sprites:
        _blit(img, s, (w - s.shape[1]) // 2, y)
        y += s.shape[0]
    return img


def _notice_image(text: str, detail: str | None, w: int, h: int,
                  scale: float = 1.0) -> np.ndarray:
    """The frame's message: a dark rounded box sized to its text."""
    px = max(12, round(30 * scale * h / 1080))
    max_w = int(w * 0.7 * scale)
    sprites = _wrap_sprites(text, px, NOTE_TEXT_RGB, True, max_w)
    if detail:
        sprites += _wrap_sprites(detail, max(11, round(px * 0.75)), NOTE_MUTED_RGB, False, max_w)
    pad = px
    bw = max(s.shape[1] for s in sprites) + 2 * pad
    bh = sum(s.shape[0] for s in sprites) + 2 * pad
    img = _panel(bw, bh, max(3, px // 2))
    y = pad
    for s in sprites:
        _blit(img, s, (bw - s.shape[1]) // 2, y)
        y += s.shape[0]
    return img


def dark_frame(size: tuple[int, int], rgb: tuple[int, int, int] = (14, 16, 20)) -> np.ndarray:
    """A plain dark background (w, h) for when there is no video."""
    w, h = size
    frame = np.empty((h, w, 3), np.uint8)
    frame[:] = rgb
    return frame


__all__ = [
    "AnatomyModel", "NOTICE_KEY", "SceneRenderer", "SceneStatus", "dark_frame",
    "load_anatomy_model", "tumor_side_of",
]
