"""Camera animation of the 3D (AR) model: pure math on an injected clock (DESIGN §4).

:class:`ARAnimator` is fed the successive :class:`~app.core.state.ARState` values and answers,
for any time ``t``, the :class:`CameraPose` to render: orbit offsets (azimuth, elevation) relative
to the base view, the zoom scale and the focal point in LPS mm.

Conventions (documented for the renderer, the tests and the users):

- ``azimuth`` > 0 moves the camera to the viewer's right around the screen's vertical axis, so
  the model turns to the viewer's **left** (its front surface moves toward screen left).
  ``elevation`` > 0 moves the camera up around the screen's horizontal axis, so the model's
  front tilts **down**. Rotation commands name the way the *model* turns, as a hand turning it
  would: ``left`` → azimuth +30°, ``right`` → −30°, ``up`` → elevation −30°, ``down`` → +30°;
  ``horizontal`` turns the model to the left through a full turn (azimuth 0 → 360°),
  ``vertical`` tumbles its front upward (elevation 0 → −360°). Orbiting is about the pose's
  focal point, so a zoomed-in nodule stays in the centre while the model turns.
- Swings (``left/right/up/down``): 30° out in 3 s with a cosine ease-in-out (15° at 1.5 s),
  hold 1 s, back in 3 s with the same ease (0° at 7 s). Turns (``horizontal/vertical``): 360° in
  6 s with a trapezoidal speed profile (0.6 s ramps, constant 66.7°/s in between), so the turn
  starts and stops smoothly and is exactly 180° at 3 s; at 6 s the model is back at its base
  view. A swing or turn runs once; the state keeps reporting the last commanded rotation.
- Choosing a view jumps to the new base view and stops any rotation (DESIGN: a view resets
  rotation to ``static``). A new rotation command during another starts from the current
  offset: the old offset fades out over 0.5 s while the new profile runs with its exact timings.
- Zoom in: scale ×2 per level toward the level's target (its centroid; no target → the model's
  centre) over 3 s, with the same cosine ease, scale interpolated geometrically and the focal
  point linearly. The path between two rest poses is a straight line in (log scale, focal), so
  zoom-out, animated from the current pose back to the previous level's rest pose over 3 s,
  retraces the zoom-in path exactly in reverse (pose at u s into the zoom-out = pose at 3 − u s
  into the zoom-in). A drop of several levels at once (reset) eases over 0.5 s. Scale ≥ 1.

Nothing here touches VTK; tests drive it with :class:`~app.render.clock.ManualClock`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.core.vocab import (
    AR_SWING_BACK_S,
    AR_SWING_DEG,
    AR_SWING_HOLD_S,
    AR_SWING_OUT_S,
    AR_TURN_S,
    AR_ZOOM_FACTOR,
    AR_ZOOM_S,
)

Vec3 = tuple[float, float, float]

VIEW_EASE_S = 0.0        # views jump (DESIGN allows a jump or an ease ≤ 0.5 s)
BLEND_S = 0.5            # an interrupted rotation's offset fades out over this
RESET_ZOOM_S = 0.5       # a multi-level zoom drop (reset) eases over this
TURN_RAMP = 0.1          # fraction of a 360° turn spent accelerating (and decelerating)

# (azimuth sign, elevation sign) per swing direction; see the module docstring.
SWINGS: dict[str, tuple[float, float]] = {
    "left": (1.0, 0.0), "right": (-1.0, 0.0), "up": (0.0, -1.0), "down": (0.0, 1.0),
}
TURNS: dict[str, tuple[float, float]] = {"horizontal": (1.0, 0.0), "vertical": (0.0, -1.0)}


def ease_cos(u: float) -> float:
    """Cosine ease-in-out on [0, 1]: symmetric (e(1−u) = 1 − e(u)), so e(0.5) = 0.5."""
    u = min(1.0, max(0.0, u))
    return 0.5 - 0.5 * math.cos(math.pi * u)


def trapezoid(u: float, ramp: float = TURN_RAMP) -> float:
    """Position along a trapezoidal speed profile on [0, 1] (accelerate, cruise, decelerate)."""
    u = min(1.0, max(0.0, u))
    if ramp <= 0:
        return u
    vmax = 1.0 / (1.0 - ramp)
    if u < ramp:
        return vmax * u * u / (2.0 * ramp)
    if u > 1.0 - ramp:
        w = 1.0 - u
        return 1.0 - vmax * w * w / (2.0 * ramp)
    return vmax * (u - ramp / 2.0)


def _wrap(angle: float) -> float:
    """An angle in degrees wrapped to (−180, 180]."""
    a = math.fmod(angle, 360.0)
    if a > 180.0:
        a -= 360.0
    elif a <= -180.0:
        a += 360.0
    return a


@dataclass(frozen=True)
class CameraPose:
    """Where the 3D camera is at one instant, relative to the base view ``view``.

    ``focal_lps`` None means the centre of the visible model (the renderer's fit centre).
    """

    view: str = "surgical"
    azimuth: float = 0.0
    elevation: float = 0.0
    zoom: float = 1.0
    focal_lps: Vec3 | None = None

    def key(self, digits: int = 3) -> tuple[Any, ...]:
        """A hashable, rounded identity for memoising rendered images."""
        f = None if self.focal_lps is None else tuple(round(v, 2) for v in self.focal_lps)
        return (self.view, round(_wrap(self.azimuth), digits), round(_wrap(self.elevation), digits),
                round(self.zoom, 4), f)


@dataclass
class _Rotation:
    kind: str           # a key of SWINGS or TURNS
    t0: float

    def offsets(self, t: float) -> tuple[float, float, bool]:
        """(azimuth, elevation, running) at time t."""
        dt = t - self.t0
        if self.kind in SWINGS:
            sa, se = SWINGS[self.kind]
            out_end = AR_SWING_OUT_S
            hold_end = out_end + AR_SWING_HOLD_S
            end = hold_end + AR_SWING_BACK_S
            if dt <= 0:
                k = 0.0
            elif dt < out_end:
                k = ease_cos(dt / AR_SWING_OUT_S)
            elif dt < hold_end:
                k = 1.0
            elif dt < end:
                k = 1.0 - ease_cos((dt - hold_end) / AR_SWING_BACK_S)
            else:
                return 0.0, 0.0, False
            return sa * AR_SWING_DEG * k, se * AR_SWING_DEG * k, True
        sa, se = TURNS[self.kind]
        if dt >= AR_TURN_S:
            return 0.0, 0.0, False
        a = 360.0 * trapezoid(max(0.0, dt) / AR_TURN_S)
        return sa * a, se * a, True

    def end_time(self) -> float:
        if self.kind in SWINGS:
            return self.t0 + AR_SWING_OUT_S + AR_SWING_HOLD_S + AR_SWING_BACK_S
        return self.t0 + AR_TURN_S

    def next_change(self, t: float) -> float | None:
        """When the offsets next change after t (t itself while moving), None when done."""
        dt = t - self.t0
        if dt < 0:
            return self.t0
        if self.kind in SWINGS and AR_SWING_OUT_S <= dt < AR_SWING_OUT_S + AR_SWING_HOLD_S:
            return self.t0 + AR_SWING_OUT_S + AR_SWING_HOLD_S
        return t if t < self.end_time() else None


@dataclass
class _ZoomMove:
    t0: float
    duration: float
    scale0: float
    focal0: Vec3 | None


class ARAnimator:
    """The 3D camera as a function of time, driven by successive AR states.

    ``clock`` is anything with ``now() -> float`` (a ``Clock``), or a plain callable returning
    the time. Give the model's geometry with :meth:`set_model` so zoom targets and the model
    centre are known; without it focal points stay ``None`` (the renderer's centre).
    """

    def __init__(self, clock: Any = None, *, centroids: Mapping[str, Sequence[float]] | None = None,
                 bounds: Mapping[str, Sequence[float]] | None = None) -> None:
        if clock is None:
            import time

            self._now: Callable[[], float] = time.monotonic
        elif callable(getattr(clock, "now", None)):
            self._now = clock.now
        elif callable(clock):
            self._now = clock
        else:
            raise TypeError("clock must have now() or be a callable returning seconds")
        self._state: Any = None
        self._view = "surgical"
        self._structures: tuple[str, ...] = ()
        self._rotation: _Rotation | None = None
        self._residual: tuple[float, float, float] | None = None  # (az, el, t_start)
        self._level = 0
        self._targets: tuple[str | None, ...] = ()
        self._zoom: _ZoomMove | None = None
        self._centroids: dict[str, Vec3] = {}
        self._bounds: dict[str, tuple[float, ...]] = {}
        self.set_model(centroids or {}, bounds)

    # -- inputs ------------------------------------------------------------------------------
    def now(self) -> float:
        return float(self._now())

    def set_model(self, centroids: Mapping[str, Sequence[float]],
                  bounds: Mapping[str, Sequence[float]] | None = None) -> None:
        """Structure centres (zoom targets) and bounds (xmin,xmax,ymin,ymax,zmin,zmax) in LPS."""
        self._centroids = {k: (float(v[0]), float(v[1]), float(v[2])) for k, v in centroids.items()}
        self._bounds = {k: tuple(float(x) for x in b) for k, b in (bounds or {}).items()}

    def update(self, ar: Any, t: float | None = None) -> None:
        """Take the newest AR state (applied at time ``t``, default now)."""
        t = self.now() if t is None else float(t)
        zoom_stack = tuple(getattr(ar, "zoom_stack", ()) or ())
        level = int(ar.zoom_level)
        if len(zoom_stack) != level:  # a state without its stack: repeat the current target
            zoom_stack = tuple([ar.zoom_target] * level)
        if self._state is None or not ar.visible:
            # First sight (or hidden): everything at rest, nothing animates.
            self._state = ar
            self._view = ar.view
            self._structures = tuple(ar.structures)
            self._rotation = None
            self._residual = None
            self._level, self._targets, self._zoom = level, zoom_stack, None
            return
        old = self._state
        was_hidden = not old.visible
        self._state = ar
        self._structures = tuple(ar.structures)
        if was_hidden:
            self._view = ar.view
            self._rotation, self._residual = None, None
            self._level, self._targets, self._zoom = level, zoom_stack, None
            return

        if ar.view != self._view:
            self._view = ar.view
            self._rotation, self._residual = None, None  # jump, rotation stops
            if ar.rotation != "static" and ar.rotation != old.rotation:
                self._start_rotation(ar.rotation, t, keep_residual=False)
        elif ar.rotation != old.rotation:
            self._start_rotation(ar.rotation, t)

        if level != self._level or zoom_stack != self._targets:
            current = self._zoom_at(t)
            drop = self._level - level
            self._level, self._targets = level, zoom_stack
            duration = RESET_ZOOM_S if drop > 1 else AR_ZOOM_S
            self._zoom = _ZoomMove(t, duration, current[0], current[1])

    def restart_rotation(self, t: float | None = None) -> None:
        """Run the current rotation again (a repeated "rotate left" leaves the state unchanged)."""
        if self._state is None or not self._state.visible:
            return
        t = self.now() if t is None else float(t)
        self._start_rotation(self._state.rotation, t)

    def _start_rotation(self, kind: str, t: float, keep_residual: bool = True) -> None:
        az, el = self._rotation_offsets(t)
        self._residual = (_wrap(az), _wrap(el), t) if keep_residual and (az or el) else None
        self._rotation = _Rotation(kind, t) if kind in SWINGS or kind in TURNS else None

    # -- geometry ----------------------------------------------------------------------------
    def model_centre(self, structures: Sequence[str] | None = None) -> Vec3 | None:
        """Centre of the visible structures' union bounds (else mean of their centroids)."""
        keys = list(self._structures if structures is None else structures)
        boxes = [self._bounds[k] for k in keys if k in self._bounds]
        if boxes:
            lo = [min(b[2 * i] for b in boxes) for i in range(3)]
            hi = [max(b[2 * i + 1] for b in boxes) for i in range(3)]
            return ((lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2)
        cents = [self._centroids[k] for k in keys if k in self._centroids]
        if not cents:
            cents = list(self._centroids.values())
        if not cents:
            return None
        n = float(len(cents))
        return (sum(c[0] for c in cents) / n, sum(c[1] for c in cents) / n,
                sum(c[2] for c in cents) / n)

    def target_focal(self, target: str | None) -> Vec3 | None:
        if target is not None and target in self._centroids:
            return self._centroids[target]
        if target is not None and target in self._bounds:
            b = self._bounds[target]
            return ((b[0] + b[1]) / 2, (b[2] + b[3]) / 2, (b[4] + b[5]) / 2)
        return self.model_centre()

    def rest_zoom(self) -> tuple[float, Vec3 | None]:
        """(scale, focal) of the current zoom level when no zoom animation runs."""
        scale = AR_ZOOM_FACTOR ** self._level
        if self._level == 0:
            return 1.0, self.model_centre()
        return scale, self.target_focal(self._targets[-1])

    # -- outputs -----------------------------------------------------------------------------
    def _rotation_offsets(self, t: float) -> tuple[float, float]:
        az = el = 0.0
        if self._rotation is not None:
            az, el, _ = self._rotation.offsets(t)
        if self._residual is not None:
            raz, rel, ts = self._residual
            k = 1.0 - ease_cos((t - ts) / BLEND_S)
            az += raz * k
            el += rel * k
        return az, el

    def _zoom_at(self, t: float) -> tuple[float, Vec3 | None]:
        end_scale, end_focal = self.rest_zoom()
        mv = self._zoom
        if mv is None or t >= mv.t0 + mv.duration:
            return end_scale, end_focal
        e = ease_cos((t - mv.t0) / mv.duration)
        s0 = max(1.0, mv.scale0)
        scale = s0 * (end_scale / s0) ** e
        f0, f1 = mv.focal0, end_focal
        if f0 is None or f1 is None:
            focal = f1
        else:
            focal = (f0[0] + (f1[0] - f0[0]) * e, f0[1] + (f1[1] - f0[1]) * e,
                     f0[2] + (f1[2] - f0[2]) * e)
        return max(1.0, scale), focal

    def pose(self, t: float | None = None) -> CameraPose:
        """The camera pose at time ``t`` (default now)."""
        t = self.now() if t is None else float(t)
        if self._state is None:
            return CameraPose()
        az, el = self._rotation_offsets(t)
        scale, focal = self._zoom_at(t)
        return CameraPose(self._view, az, el, max(1.0, scale), focal)

    def animating(self, t: float | None = None) -> bool:
        """True while the pose changes (or holds mid-swing) at time ``t``."""
        t = self.now() if t is None else float(t)
        if self._state is None or not self._state.visible:
            return False
        if self._rotation is not None and t < self._rotation.end_time():
            return True
        if self._residual is not None and t < self._residual[2] + BLEND_S:
            return True
        mv = self._zoom
        return mv is not None and t < mv.t0 + mv.duration

    def next_change_time(self, t: float | None = None) -> float | None:
        """When the pose next changes: ``t`` while moving, a later time while holding (the
        1 s hold of a swing), None when nothing is scheduled (a still model needs no render)."""
        t = self.now() if t is None else float(t)
        if not self.animating(t):
            return None
        times: list[float] = []
        if self._residual is not None and t < self._residual[2] + BLEND_S:
            times.append(t)
        mv = self._zoom
        if mv is not None and t < mv.t0 + mv.duration:
            times.append(t)
        if self._rotation is not None:
            nxt = self._rotation.next_change(t)
            if nxt is not None:
                times.append(nxt)
        return min(times) if times else None

    def end_time(self) -> float | None:
        """When every running animation will have finished (None when none runs)."""
        ends = []
        if self._rotation is not None:
            ends.append(self._rotation.end_time())
        if self._residual is not None:
            ends.append(self._residual[2] + BLEND_S)
        if self._zoom is not None:
            ends.append(self._zoom.t0 + self._zoom.duration)
        t = self.now()
        ends = [e for e in ends if e > t]
        return max(ends) if ends else None


__all__ = ["ARAnimator", "CameraPose", "SWINGS", "TURNS", "ease_cos", "trapezoid"]
