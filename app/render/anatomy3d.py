"""The 3D (AR) anatomy overlay: VTK offscreen rendering of the lung model into an RGBA image.

:class:`AnatomyRenderer` draws the structures' surfaces (see :mod:`app.render.meshes`) with one
fixed colour each, for the camera pose of :mod:`app.render.ar_animation`, into a transparent
RGBA numpy image. :class:`AnatomyWorker` owns one renderer on its own thread (one OpenGL
context, one thread), renders ahead of the animation clock, keeps only the latest request and
publishes the newest frame for the compositor. No Qt here.

**OpenGL path.** VTK's pip wheel renders offscreen through EGL (Mesa llvmpipe on a machine
without GPU), or OSMesa, or the platform's window class. A missing library can make VTK
*segfault* on the first render (OSMesa does), so the first use runs a short probe in a
subprocess that tries each window class in turn (``vtkEGLRenderWindow``,
``vtkOSOpenGLRenderWindow``, then VTK's default) and the renderer uses the first that rendered.
``VISA_VTK_WINDOW`` names a class to try first. Without any, the worker reports
"3D rendering is unavailable on this computer: …" and the console runs without the 3D overlay.

**Views** (patient LPS coordinates: +x left, +y posterior, +z superior; the camera looks at the
model's centre; "head up" on screen where it applies):

- ``anterior``: camera in front of the patient, head up — the patient faces the viewer, so the
  patient's left is on screen right. ``posterior``: from behind, patient's left on screen left.
- ``left`` / ``right``: from the patient's left / right side, head up (anterior on screen left
  in the left view, on screen right in the right view).
- ``superior``: from above the head looking toward the feet, anterior up (patient's left on
  screen left); ``inferior``: from the feet looking up, anterior up (patient's left on screen
  right, as an axial CT slice is displayed).
- ``surgical``: the patient lying supine on the table as the surgical team sees it from the
  console side: the anterior view tilted 30° from the patient's feet (the camera above the
  patient's chest and toward the feet, looking up the body, head up on screen) and turned 20°
  around the body axis toward the tumour side (the camera moves over the tumour's side). The
  tumour side is, in order: the one given to :meth:`AnatomyRenderer.set_structures`, the side
  of the nodule's centroid relative to the lungs' midline, the side of the visible lobes when
  all are on one side; otherwise no turn.

**Look** (dark surgical display): lobes in muted, distinguishable colours (RUL teal, RML
lavender, RLL blue, LUL rose, LLL olive) drawn translucent (opacity 0.5, back faces culled so a
lobe is one layer) so what lies inside shows through; the nodule bright orange and opaque, and
drawn a second time as a translucent "x-ray" ghost in an overlay layer so it stays visible
behind lobes and airway from every side; the airway pale blue-white and opaque; a light kit
(key, fill, back and head lights, following the camera) with specular highlights; FXAA on still
frames. The background is transparent (alpha 0). With ``solid`` (default) the model's
silhouette is opaque: inside it the image is the model as seen over black, so the video behind
the overlay does not wash out the translucent lobes; only the anti-aliased rim blends.

**Speed** (measured ~32 ms render + ~31 ms readback at 480×480 on llvmpipe): an unchanged
(state, pose, size) returns the memoised image without rendering; animations render at
``animation_scale`` (60 %) of the size and are scaled up (bilinear on premultiplied colour).
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.core.vocab import AR_VIEWS, LOBES
from app.render.ar_animation import ARAnimator, CameraPose
from app.runtime.settings import settings

log = logging.getLogger(__name__)

UNAVAILABLE = "3D rendering is unavailable on this computer"

# Colours (RGB 0..1) and opacities per structure, for a dark display.
COLOURS: dict[str, tuple[float, float, float]] = {
    "right_upper_lobe": (0.38, 0.70, 0.64),   # muted teal
    "right_middle_lobe": (0.66, 0.56, 0.82),  # muted lavender
    "right_lower_lobe": (0.40, 0.56, 0.86),   # muted blue
    "left_upper_lobe": (0.86, 0.56, 0.52),    # muted rose
    "left_lower_lobe": (0.60, 0.76, 0.40),    # muted olive green
    "lung_nodules": (1.00, 0.55, 0.00),       # bright orange
    "trachea_bronchia": (0.80, 0.90, 1.00),   # pale blue-white
}
OTHER_COLOUR = (0.70, 0.70, 0.70)
LOBE_OPACITY = 0.5
OPACITIES: dict[str, float] = {
    **{k: LOBE_OPACITY for k in LOBES},
    "lung_nodules": 1.0,
    "trachea_bronchia": 1.0,
}

# Structures also drawn as a translucent "x-ray" ghost over everything (always visible).
GHOSTED = frozenset({"lung_nodules"})
GHOST_OPACITY = 0.6

VIEW_ANGLE_DEG = 30.0
SURGICAL_TILT_DEG = 30.0     # from the feet
SURGICAL_TURN_DEG = 20.0     # toward the tumour side
FIT_MARGIN = 1.04


class RenderUnavailable(RuntimeError):
    """Offscreen OpenGL rendering cannot be used on this computer."""


# ----------------------------------------------------------------------------- the GL probe

_PROBE_CODE = r"""
import json, sys
import vtkmodules.vtkRenderingOpenGL2 as gl
from vtkmodules.vtkCommonCore import vtkUnsignedCharArray
from vtkmodules.vtkRenderingCore import vtkRenderer, vtkRenderWindow
name = sys.argv[1]
rw = vtkRenderWindow() if name == "vtkRenderWindow" else getattr(gl, name)()
rw.SetOffScreenRendering(1)
rw.SetSize(8, 8)
r = vtkRenderer()
r.SetBackground(0.0, 1.0, 0.0)
r.SetBackgroundAlpha(0.0)
rw.AddRenderer(r)
rw.Render()
a = vtkUnsignedCharArray()
rw.GetRGBACharPixelData(0, 0, 7, 7, 0, a)
px = a.GetTuple(0) if a.GetNumberOfTuples() else None
ok = px is not None and px[1] > 200 and px[0] < 50
print(json.dumps({"ok": bool(ok), "class": rw.GetClassName(), "pixel": px}))
"""

_probe_lock = threading.Lock()
_probe_result: tuple[str | None, str | None] | None = None


def window_candidates() -> list[str]:
    """Render window classes to try, most suitable first."""
    names: list[str] = []
    env = settings().vtk_window or os.environ.get("VTK_DEFAULT_OPENGL_WINDOW")
    if env:
        names.append(env)
    if sys.platform.startswith("linux"):
        names += ["vtkEGLRenderWindow", "vtkOSOpenGLRenderWindow"]
    names.append("vtkRenderWindow")  # VTK's factory default (X, Win32, Cocoa)
    return list(dict.fromkeys(names))


def probe_offscreen(timeout: float = 30.0, force: bool = False) -> tuple[str | None, str | None]:
    """(window class, None) when offscreen rendering works, else (None, reason).

    Each candidate is tried in a subprocess (a broken GL stack can crash the process that
    tries it). The answer is cached for the process.
    """
    global _probe_result
    with _probe_lock:
        if _probe_result is not None and not force:
            return _probe_result
        if getattr(sys, "frozen", False):  # a bundled app has no interpreter to run a probe
            _probe_result = (window_candidates()[0], None)
            return _probe_result
        reasons: list[str] = []
        for name in window_candidates():
            try:
                proc = subprocess.run([sys.executable, "-c", _PROBE_CODE, name],
                                      capture_output=True, text=True, timeout=timeout)
            except (OSError, subprocess.TimeoutExpired) as exc:
                reasons.append(f"{name}: {type(exc).__name__}")
                continue
            line = (proc.stdout.strip().splitlines() or [""])[-1]
            try:
                info = json.loads(line)
            except ValueError:
                info = {}
            if proc.returncode == 0 and info.get("ok"):
                _probe_result = (name, None)
                return _probe_result
            why = f"exit code {proc.returncode}" if proc.returncode else "no image"
            err = [ln for ln in proc.stderr.splitlines() if ln.strip()]
            if err:
                why += f" ({_clean(err[-1])[:160]})"
            reasons.append(f"{name}: {why}")
        _probe_result = (None, "no offscreen OpenGL found (" + "; ".join(reasons) + ")")
        return _probe_result


def _clean(text: str) -> str:
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", text).strip()


def _make_window(name: str) -> Any:
    import vtkmodules.vtkRenderingOpenGL2 as gl
    from vtkmodules.vtkRenderingCore import vtkRenderWindow

    if name == "vtkRenderWindow":
        return vtkRenderWindow()
    cls = getattr(gl, name, None)
    if cls is None:
        raise RenderUnavailable(f"{UNAVAILABLE}: VTK has no {name}")
    return cls()


# ----------------------------------------------------------------------------- geometry

def _unit(v: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v


def _rotate(v: np.ndarray, axis: np.ndarray, deg: float) -> np.ndarray:
    """Rodrigues' rotation of ``v`` about the unit ``axis`` by ``deg`` (right-handed)."""
    if deg == 0.0:
        return v
    a = math.radians(deg)
    k = _unit(axis)
    return v * math.cos(a) + np.cross(k, v) * math.sin(a) + k * float(k @ v) * (1 - math.cos(a))


_BASE_VIEWS: dict[str, tuple[tuple[float, float, float], tuple[float, float, float]]] = {
    # view: (direction from the focal point to the camera, view-up), LPS
    "anterior": ((0, -1, 0), (0, 0, 1)),
    "posterior": ((0, 1, 0), (0, 0, 1)),
    "left": ((1, 0, 0), (0, 0, 1)),
    "right": ((-1, 0, 0), (0, 0, 1)),
    "superior": ((0, 0, 1), (0, -1, 0)),
    "inferior": ((0, 0, -1), (0, -1, 0)),
}


def view_frame(view: str, tumor_side: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(unit direction focal→camera, unit view-up) of a base view in LPS."""
    if view == "surgical":
        t = math.radians(SURGICAL_TILT_DEG)
        d = np.array([0.0, -math.cos(t), -math.sin(t)])
        turn = {"left": SURGICAL_TURN_DEG, "right": -SURGICAL_TURN_DEG}.get(tumor_side or "", 0.0)
        d = _rotate(d, np.array([0.0, 0.0, 1.0]), turn)
        up = np.array([0.0, 0.0, 1.0])
    elif view in _BASE_VIEWS:
        d0, u0 = _BASE_VIEWS[view]
        d, up = np.array(d0, dtype=float), np.array(u0, dtype=float)
    else:
        raise ValueError(f"unknown view {view!r}; expected one of {AR_VIEWS}")
    d = _unit(d)
    up = _unit(up - d * float(up @ d))
    return d, up


def posed_frame(view: str, pose: CameraPose, tumor_side: str | None = None,
                ) -> tuple[np.ndarray, np.ndarray]:
    """The base view turned by the pose's azimuth (about the view-up: + moves the camera to the
    viewer's right) and elevation (about the screen's horizontal axis: + moves it up)."""
    d, up = view_frame(view, tumor_side)
    if pose.azimuth:
        d = _rotate(d, up, pose.azimuth)
    if pose.elevation:
        axis = np.cross(d, up)
        d = _rotate(d, axis, pose.elevation)
        up = _rotate(up, axis, pose.elevation)
    return _unit(d), _unit(up)


def union_bounds(boxes: Sequence[Sequence[float]]) -> tuple[float, ...] | None:
    if not boxes:
        return None
    return (min(b[0] for b in boxes), max(b[1] for b in boxes), min(b[2] for b in boxes),
            max(b[3] for b in boxes), min(b[4] for b in boxes), max(b[5] for b in boxes))


# ----------------------------------------------------------------------------- the renderer

@dataclass
class _Structure:
    key: str
    actor: Any
    bounds: tuple[float, ...]
    centroid: tuple[float, float, float]
    points: np.ndarray  # a subsample of the vertices, for fitting the camera


class AnatomyRenderer:
    """Offscreen VTK renderer of the 3D anatomy; one instance per thread.

    ``render(ar_state, pose)`` returns an (h, w, 4) uint8 RGBA image (straight alpha unless
    ``premultiplied``), read-only and shared with the memo: copy before modifying it.
    """

    def __init__(self, size: tuple[int, int] = (480, 480), *, animation_scale: float = 0.6,
                 window_class: str | None = None, premultiplied: bool = False,
                 antialias: bool = True, solid: bool = True) -> None:
        if window_class is None:
            window_class, reason = probe_offscreen()
            if window_class is None:
                raise RenderUnavailable(f"{UNAVAILABLE}: {reason}")
        from vtkmodules.vtkRenderingCore import vtkLightKit, vtkRenderer

        self.window_class = window_class
        self.animation_scale = float(animation_scale)
        self.premultiplied = premultiplied
        self.antialias = bool(antialias)
        self.solid = bool(solid)
        a = np.arange(256, dtype=np.float64)
        self._alpha_lut = np.minimum(255, np.round(a / LOBE_OPACITY)).astype(np.uint8)
        self._size = (int(size[0]), int(size[1]))
        self._win = _make_window(window_class)
        self._win.SetOffScreenRendering(1)
        self._win.SetAlphaBitPlanes(1)
        self._win.SetMultiSamples(0)
        self._win.SetSize(*self._size)
        self._ren = vtkRenderer()
        self._ren.SetBackground(0.0, 0.0, 0.0)
        self._ren.SetBackgroundAlpha(0.0)
        self._ren.SetUseFXAA(bool(antialias))
        self._ren.SetUseDepthPeeling(False)
        self._ren.AutomaticLightCreationOff()
        kit = vtkLightKit()
        kit.SetKeyLightIntensity(1.1)
        kit.SetKeyToFillRatio(2.5)
        kit.SetKeyToBackRatio(3.0)
        kit.SetKeyToHeadRatio(3.0)
        kit.AddLightsToRenderer(self._ren)
        self._win.AddRenderer(self._ren)
        # Layer 1: the nodule's "x-ray" ghost, drawn over everything (own depth buffer) with
        # the same camera, so the tumour stays visible behind lobes and airway.
        self._win.SetNumberOfLayers(2)
        self._ghost_ren = vtkRenderer()
        self._ghost_ren.SetLayer(1)
        self._ghost_ren.SetActiveCamera(self._ren.GetActiveCamera())
        self._ghost_ren.SetBackgroundAlpha(0.0)
        self._ghost_ren.InteractiveOff()
        self._ghost_ren.AutomaticLightCreationOff()
        kit.AddLightsToRenderer(self._ghost_ren)
        self._win.AddRenderer(self._ghost_ren)
        self._ghosts: dict[str, Any] = {}
        self._structures: dict[str, _Structure] = {}
        self._tumor_side: str | None = None
        self._model_version = 0
        self._memo_key: tuple[Any, ...] | None = None
        self._memo_img: np.ndarray | None = None
        self._blank: dict[tuple[int, int], np.ndarray] = {}
        self._fit_cache: dict[tuple[str, ...], tuple[np.ndarray, float]] = {}
        self.render_count = 0
        self.last_render_ms = 0.0
        self._win_size = self._size

    # -- configuration -------------------------------------------------------------------------
    @property
    def size(self) -> tuple[int, int]:
        return self._size

    def set_size(self, size: tuple[int, int]) -> None:
        size = (max(1, int(size[0])), max(1, int(size[1])))
        if size != self._size:
            self._size = size
            self._memo_key = None

    def render_size(self, fast: bool = False) -> tuple[int, int]:
        """The size actually rendered: the full size, or ``animation_scale`` of it when fast."""
        w, h = self._size
        if not fast or self.animation_scale >= 1.0:
            return w, h
        return max(16, round(w * self.animation_scale)), max(16, round(h * self.animation_scale))

    def set_structures(self, polys: Mapping[str, Any],
                       centroids: Mapping[str, Sequence[float]] | None = None, *,
                       tumor_side: str | None = None) -> None:
        """The model: surfaces (LPS mm) per structure key, optional centroids (LPS mm) and the
        tumour side ("left"/"right") for the surgical view."""
        from vtkmodules.util.numpy_support import vtk_to_numpy
        from vtkmodules.vtkRenderingCore import vtkActor, vtkPolyDataMapper

        for s in self._structures.values():
            self._ren.RemoveActor(s.actor)
        for g in self._ghosts.values():
            self._ghost_ren.RemoveActor(g)
        self._structures, self._ghosts = {}, {}
        for key, poly in polys.items():
            if poly is None or poly.GetNumberOfPolys() == 0:
                continue
            mapper = vtkPolyDataMapper()
            mapper.SetInputData(poly)
            mapper.ScalarVisibilityOff()
            mapper.SetStatic(1)
            actor = vtkActor()
            actor.SetMapper(mapper)
            prop = actor.GetProperty()
            prop.SetColor(*COLOURS.get(key, OTHER_COLOUR))
            opacity = OPACITIES.get(key, 1.0)
            prop.SetOpacity(opacity)
            prop.SetInterpolationToPhong()
            if key == "lung_nodules":  # self-lit a little: reads even in a lobe's shadow
                prop.SetAmbient(0.35)
                prop.SetDiffuse(0.8)
            else:
                prop.SetAmbient(0.22 if opacity < 1.0 else 0.12)
                prop.SetDiffuse(0.9)
            prop.SetSpecular(0.35 if opacity >= 1.0 else 0.3)
            prop.SetSpecularPower(30.0)
            if opacity < 1.0:
                prop.BackfaceCullingOn()  # one translucent layer per lobe: no self-overlap
            actor.VisibilityOff()
            self._ren.AddActor(actor)
            if key in GHOSTED:
                ghost = vtkActor()
                ghost.SetMapper(mapper)
                gp = ghost.GetProperty()
                gp.SetColor(*COLOURS.get(key, OTHER_COLOUR))
                gp.SetOpacity(GHOST_OPACITY)
                gp.SetAmbient(0.5)
                gp.SetDiffuse(0.6)
                gp.SetSpecular(0.0)
                gp.BackfaceCullingOn()
                ghost.VisibilityOff()
                self._ghost_ren.AddActor(ghost)
                self._ghosts[key] = ghost
            pts = vtk_to_numpy(poly.GetPoints().GetData())
            step = max(1, len(pts) // 4000)
            sample = np.asarray(pts[::step], dtype=np.float64)
            if centroids is not None and key in centroids:
                c = tuple(float(v) for v in centroids[key])
            else:
                c = tuple(float(v) for v in sample.mean(axis=0))
            self._structures[key] = _Structure(key, actor, tuple(poly.GetBounds()),
                                               c, sample)  # type: ignore[arg-type]
        self._tumor_side = tumor_side if tumor_side in ("left", "right") else None
        self._model_version += 1
        self._memo_key = None
        self._fit_cache.clear()

    def structures(self) -> list[str]:
        return sorted(self._structures)

    def bounds(self) -> dict[str, tuple[float, ...]]:
        return {k: s.bounds for k, s in self._structures.items()}

    def centroids(self) -> dict[str, tuple[float, float, float]]:
        return {k: s.centroid for k, s in self._structures.items()}

    def tumor_side(self, visible: Sequence[str] = ()) -> str | None:
        """The side the surgical view turns toward (see the module docstring)."""
        if self._tumor_side:
            return self._tumor_side
        lobes = [s for k, s in self._structures.items() if k in LOBES]
        nod = self._structures.get("lung_nodules")
        if nod is not None and lobes:
            b = union_bounds([s.bounds for s in lobes])
            assert b is not None
            mid = (b[0] + b[1]) / 2
            airway = self._structures.get("trachea_bronchia")
            has_both = any(k.startswith("left") for k in self._structures if k in LOBES) and \
                any(k.startswith("right") for k in self._structures if k in LOBES)
            if not has_both and airway is not None:
                mid = airway.centroid[0]
            if has_both or airway is not None:
                return "left" if nod.centroid[0] > mid else "right"
        sides = {k.split("_")[0] for k in visible if k in LOBES}
        return sides.pop() if len(sides) == 1 else None

    # -- camera --------------------------------------------------------------------------------
    def _fit(self, keys: tuple[str, ...]) -> tuple[np.ndarray, float]:
        """Centre (union-bounds centre) and radius of the visible structures."""
        if keys in self._fit_cache:
            return self._fit_cache[keys]
        structs = [self._structures[k] for k in keys if k in self._structures]
        b = union_bounds([s.bounds for s in structs])
        assert b is not None
        centre = np.array([(b[0] + b[1]) / 2, (b[2] + b[3]) / 2, (b[4] + b[5]) / 2])
        pts = np.concatenate([s.points for s in structs])
        radius = float(np.sqrt(((pts - centre) ** 2).sum(axis=1).max())) if len(pts) else 1.0
        radius = max(radius, 1.0)
        self._fit_cache[keys] = (centre, radius)
        return centre, radius

    def _place_camera(self, keys: tuple[str, ...], view: str, pose: CameraPose) -> None:
        centre, radius = self._fit(keys)
        d, up = posed_frame(view, pose, self.tumor_side(keys))
        focal = centre if pose.focal_lps is None else np.asarray(pose.focal_lps, dtype=float)
        half = math.radians(VIEW_ANGLE_DEG) / 2
        dist = radius * FIT_MARGIN / math.sin(half)
        cam = self._ren.GetActiveCamera()
        cam.SetFocalPoint(*focal)
        cam.SetPosition(*(focal + d * dist))
        cam.SetViewUp(*up)
        zoom = max(1.0, float(pose.zoom))
        cam.SetViewAngle(math.degrees(2 * math.atan(math.tan(half) / zoom)))
        cam.SetClippingRange(max(0.1, dist - 2.5 * radius), dist + 2.5 * radius)

    # -- rendering -----------------------------------------------------------------------------
    def _blank_image(self) -> np.ndarray:
        img = self._blank.get(self._size)
        if img is None:
            img = np.zeros((self._size[1], self._size[0], 4), np.uint8)
            img.flags.writeable = False
            self._blank[self._size] = img
        return img

    def render(self, ar_state: Any, pose: CameraPose | None = None, *,
               fast: bool = False) -> np.ndarray:
        """The RGBA image of ``ar_state``'s visible structures seen with ``pose``.

        ``fast`` renders at :meth:`render_size` (for animations) and scales up. An unchanged
        (state, pose, size, fast) returns the previous image without rendering.
        """
        if pose is None:
            pose = CameraPose(view=getattr(ar_state, "view", "surgical"))
        keys = tuple(sorted(k for k in getattr(ar_state, "structures", ())
                            if k in self._structures))
        if not getattr(ar_state, "visible", False) or not keys:
            return self._blank_image()
        view = pose.view if pose.view in AR_VIEWS else ar_state.view
        memo = (self._model_version, keys, view, pose.key(), self._size, bool(fast))
        if memo == self._memo_key and self._memo_img is not None:
            return self._memo_img
        t0 = time.perf_counter()
        for k, s in self._structures.items():
            s.actor.SetVisibility(k in keys)
        for k, g in self._ghosts.items():
            g.SetVisibility(k in keys)
        self._place_camera(keys, view, pose)
        rw, rh = self.render_size(fast)
        if (rw, rh) != self._win_size:
            self._win.SetSize(rw, rh)
            self._win_size = (rw, rh)
        self._ren.SetUseFXAA(self.antialias and not fast)  # FXAA costs ~5 ms: stills only
        self._win.Render()
        img = self._read_image(rw, rh)
        img.flags.writeable = False
        self.render_count += 1
        self.last_render_ms = (time.perf_counter() - t0) * 1000.0
        self._memo_key, self._memo_img = memo, img
        return img

    def _read_image(self, w: int, h: int) -> np.ndarray:
        """Read the framebuffer: flip, scale to the layer size, un-premultiply — in Pillow,
        straight from VTK's buffer (the framebuffer holds colour premultiplied by alpha)."""
        from PIL import Image
        from vtkmodules.util.numpy_support import vtk_to_numpy
        from vtkmodules.vtkCommonCore import vtkUnsignedCharArray

        arr = vtkUnsignedCharArray()
        self._win.GetRGBACharPixelData(0, 0, w - 1, h - 1, 0, arr)
        flat = vtk_to_numpy(arr)
        if flat.size != w * h * 4:
            raise RuntimeError(f"read {flat.size} bytes for a {w}×{h} RGBA image")
        if self.solid:
            # Inside the model's silhouette: the model as seen over black, alpha 1 (the colour
            # stays premultiplied over black); only the anti-aliased rim stays partly
            # transparent. Translucent lobes then show what is inside them without the video
            # behind washing their colours out.
            px = flat.reshape(-1, 4)
            px[:, 3] = self._alpha_lut[px[:, 3]]
        # OpenGL rows run bottom-up: orientation -1 flips while decoding (the one copy).
        im = Image.frombuffer("RGBa", (w, h), flat, "raw", "RGBa", 0, -1)
        if (w, h) != self._size:
            im = im.resize(self._size, Image.Resampling.BILINEAR)
        if not self.premultiplied:
            im = im.convert("RGBA")
        out = np.asarray(im)
        del arr
        return out

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._win.Finalize()
        self._structures.clear()
        self._memo_img = None


# ----------------------------------------------------------------------------- the worker

@dataclass(frozen=True)
class Frame:
    """One published 3D image: what it shows and for which animation time."""

    image: np.ndarray
    pose: CameraPose
    t: float          # the animation time the image was rendered for
    seq: int          # increases with every new image
    fast: bool        # rendered at the reduced animation size
    render_ms: float


def _now_fn(clock: Any) -> Callable[[], float]:
    if clock is None:
        return time.monotonic
    if callable(getattr(clock, "now", None)):
        return clock.now
    if callable(clock):
        return clock
    raise TypeError("clock must have now() or be a callable returning seconds")


class AnatomyWorker:
    """A thread that owns an :class:`AnatomyRenderer` and keeps the 3D overlay up to date.

    - :meth:`submit` a new AR state (latest request wins: a single slot, older unrendered
      requests are dropped); :meth:`set_structures` a new model.
    - While an animation runs, the worker renders continuously (at most ``max_fps``), each frame
      for the pose at ``now + expected render time`` so the image matches the clock when it is
      shown; when still, it renders once at full size and sleeps until the next request or
      the next scheduled change (the end of a swing's hold).
    - :meth:`latest` returns the newest :class:`Frame` (or None); ``on_frame`` is called on the
      worker thread with each new frame.
    - Without OpenGL the worker sets :attr:`error` to "3D rendering is unavailable on this
      computer: …", calls ``on_error`` and renders nothing; it never raises into the app.
    """

    def __init__(self, size: tuple[int, int] = (480, 480), clock: Any = None, *,
                 animation_scale: float = 0.6, max_fps: float = 30.0,
                 renderer_factory: Callable[[tuple[int, int]], Any] | None = None,
                 on_frame: Callable[[Frame], None] | None = None,
                 on_error: Callable[[str], None] | None = None) -> None:
        self._now = _now_fn(clock)
        self.animator = ARAnimator(self._now)
        self._size = (int(size[0]), int(size[1]))
        self._animation_scale = animation_scale
        self._min_dt = 1.0 / max_fps if max_fps > 0 else 0.0
        self._factory = renderer_factory or self._default_factory
        self._on_frame = on_frame
        self._on_error = on_error
        self._cond = threading.Condition()
        self._pending: tuple[Any, float] | None = None
        self._pending_model: tuple[Any, ...] | None = None
        self._pending_size: tuple[int, int] | None = None
        self._pending_restart: float | None = None
        self._stop = False
        self._busy = False
        self._state: Any = None
        self._latest: Frame | None = None
        self._seq = 0
        self._error: str | None = None
        self._expected_s = 0.05
        self.render_count = 0
        self.requests = 0
        self._thread: threading.Thread | None = None

    def _default_factory(self, size: tuple[int, int]) -> AnatomyRenderer:
        return AnatomyRenderer(size, animation_scale=self._animation_scale)

    # -- API (any thread) ----------------------------------------------------------------------
    def start(self) -> AnatomyWorker:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="anatomy3d", daemon=True)
            self._thread.start()
        return self

    @property
    def error(self) -> str | None:
        return self._error

    @property
    def expected_render_s(self) -> float:
        return self._expected_s

    def submit(self, ar_state: Any, t: float | None = None) -> None:
        """Ask for ``ar_state`` (applied at time ``t``, default now). Latest request wins."""
        t = self._now() if t is None else float(t)
        with self._cond:
            self._pending = (ar_state, t)
            self.requests += 1
            self._cond.notify_all()

    def restart_rotation(self, t: float | None = None) -> None:
        """Replay the current rotation (a repeated rotate command leaves the state unchanged)."""
        with self._cond:
            self._pending_restart = self._now() if t is None else float(t)
            self._cond.notify_all()

    def set_structures(self, polys: Mapping[str, Any],
                       centroids: Mapping[str, Sequence[float]] | None = None, *,
                       tumor_side: str | None = None) -> None:
        with self._cond:
            self._pending_model = (dict(polys), dict(centroids or {}), tumor_side)
            self._cond.notify_all()

    def set_size(self, size: tuple[int, int]) -> None:
        with self._cond:
            self._pending_size = (int(size[0]), int(size[1]))
            self._cond.notify_all()

    def latest(self) -> Frame | None:
        return self._latest

    def idle(self) -> bool:
        """Nothing pending, nothing rendering, no animation running, the newest frame shows the
        current pose at full size."""
        with self._cond:
            pending = (self._pending is not None or self._pending_model is not None
                       or self._pending_size is not None or self._pending_restart is not None)
            if pending or self._busy:
                return False
            alive = self._thread is not None and self._thread.is_alive()
            return self._error is not None or not alive or self._wait_time() is None

    def wait_idle(self, timeout: float = 10.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.idle() or self._thread is None or not self._thread.is_alive():
                return True
            time.sleep(0.005)
        return False

    def stop(self, timeout: float = 5.0) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)

    # -- the thread ----------------------------------------------------------------------------
    def _fail(self, message: str) -> None:
        self._error = message if message.startswith(UNAVAILABLE) else f"{UNAVAILABLE}: {message}"
        log.warning("%s", self._error)
        if self._on_error is not None:
            with contextlib.suppress(Exception):
                self._on_error(self._error)

    def _run(self) -> None:
        try:
            renderer = self._factory(self._size)
        except Exception as exc:
            self._fail(str(exc) or type(exc).__name__)
            return
        try:
            self._loop(renderer)
        except Exception as exc:  # a GL error mid-run: report, stop rendering, never crash
            log.exception("3D rendering failed")
            self._fail(f"{type(exc).__name__}: {exc}")
        finally:
            with contextlib.suppress(Exception):
                renderer.close()

    def _wait_time(self) -> float | None:
        """Seconds to sleep before the next frame (None: until a request arrives)."""
        if self._state is None or not getattr(self._state, "visible", False):
            return None
        now = self._now()
        latest = self._latest
        anim = self.animator
        if not anim.animating(now):
            # Still: one full-size render of the final pose, then sleep.
            if latest is None or latest.fast or latest.pose != anim.pose(now):
                return 0.0
            return None
        nxt = anim.next_change_time(now)
        if nxt is None:
            return 0.0
        if nxt > now:  # holding (a swing's 1 s hold): wake up just in time for the way back
            if latest is None or latest.fast or latest.pose != anim.pose(now):
                return 0.0
            return max(0.0, nxt - now - self._expected_s)
        if latest is None:
            return 0.0
        return max(0.0, self._min_dt - (time.monotonic() - self._last_wall))

    def _loop(self, renderer: Any) -> None:
        self._last_wall = 0.0
        while True:
            with self._cond:
                while True:
                    if self._stop:
                        return
                    if (self._pending is not None or self._pending_model is not None
                            or self._pending_size is not None
                            or self._pending_restart is not None):
                        break
                    wait = self._wait_time()
                    if wait is not None and wait <= 0.0:
                        break
                    self._cond.wait(timeout=wait if wait is not None else 1.0)
                request, self._pending = self._pending, None
                model, self._pending_model = self._pending_model, None
                size, self._pending_size = self._pending_size, None
                restart, self._pending_restart = self._pending_restart, None
                self._busy = True
            try:
                self._step(renderer, request, model, size, restart)
            finally:
                with self._cond:
                    self._busy = False

    def _step(self, renderer: Any, request: tuple[Any, float] | None,
              model: tuple[Any, ...] | None, size: tuple[int, int] | None,
              restart: float | None) -> None:
        if model is not None:
            polys, centroids, side = model
            renderer.set_structures(polys, centroids or None, tumor_side=side)
            cents = renderer.centroids()
            cents.update({k: tuple(v) for k, v in centroids.items()})
            self.animator.set_model(cents, renderer.bounds())
        if size is not None:
            renderer.set_size(size)
            self._size = size
        if request is not None:
            state, t = request
            self.animator.update(state, t)
            self._state = state
        if restart is not None:
            self.animator.restart_rotation(restart)
        if self._state is None:
            return
        now = self._now()
        anim = self.animator.animating(now)
        t_target = now + self._expected_s if anim else now
        pose = self.animator.pose(t_target)
        nxt = self.animator.next_change_time(t_target) if anim else None
        fast = nxt is not None and nxt <= t_target  # moving (a swing's hold renders full size)
        t0 = time.perf_counter()
        self._last_wall = time.monotonic()  # frame pacing counts from the start of a frame
        count_before = getattr(renderer, "render_count", 0)
        image = renderer.render(self._state, pose, fast=fast)
        rendered = getattr(renderer, "render_count", count_before + 1) != count_before
        dt = time.perf_counter() - t0
        if rendered:
            self.render_count += 1
            self._expected_s = 0.7 * self._expected_s + 0.3 * dt
        latest = self._latest
        if latest is not None and latest.image is image and latest.pose == pose:
            return
        self._seq += 1
        frame = Frame(image, pose, t_target, self._seq, fast, dt * 1000.0)
        self._latest = frame
        if self._on_frame is not None:
            try:
                self._on_frame(frame)
            except Exception:
                log.exception("on_frame callback failed")


__all__ = [
    "COLOURS", "AnatomyRenderer", "AnatomyWorker", "Frame", "RenderUnavailable", "UNAVAILABLE",
    "posed_frame", "probe_offscreen", "view_frame", "window_candidates",
]
