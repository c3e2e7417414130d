"""Generic easing/tween helpers and the CT slice animator (DESIGN §1: slice changes animate
over ~4 s, configurable; interrupted animations retarget smoothly, latest request wins).

Everything is a pure function of the injected clock's time, so a frame rendered at time ``t``
is reproducible and tests use :class:`~app.render.clock.ManualClock`. The 3D (AR) animator
lives with the 3D renderer; only the generic pieces are here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from app.render.clock import Clock

Easing = Callable[[float], float]


def linear(u: float) -> float:
    return min(1.0, max(0.0, u))


def ease_in_out_cubic(u: float) -> float:
    """Slow start, slow end, zero velocity at both ends: the eye can follow the slices."""
    u = min(1.0, max(0.0, u))
    if u < 0.5:
        return 4.0 * u * u * u
    v = -2.0 * u + 2.0
    return 1.0 - v * v * v / 2.0


def ease_out_cubic(u: float) -> float:
    u = min(1.0, max(0.0, u))
    v = 1.0 - u
    return 1.0 - v * v * v


def smoothstep(u: float) -> float:
    u = min(1.0, max(0.0, u))
    return u * u * (3.0 - 2.0 * u)


EASINGS: dict[str, Easing] = {
    "linear": linear,
    "ease_in_out_cubic": ease_in_out_cubic,
    "ease_out_cubic": ease_out_cubic,
    "smoothstep": smoothstep,
}


def _hermite_h10(u: float) -> float:
    # Cubic Hermite tangent basis: 0 at both ends, slope 1 at u=0 and 0 at u=1. Adding
    # v0·T·h10(u) carries the velocity of an interrupted animation into the new one.
    return u * u * u - 2.0 * u * u + u


def _slope(easing: Easing, u: float, h: float = 1e-4) -> float:
    """Numerical derivative of an easing, one-sided at the ends (easings are clamped)."""
    lo, hi = max(0.0, u - h), min(1.0, u + h)
    return (easing(hi) - easing(lo)) / (hi - lo) if hi > lo else 0.0


class Tween:
    """One scalar animated from ``start`` to ``target`` over ``duration`` seconds.

    :meth:`retarget` starts a new animation from the value shown *now*, carrying the current
    velocity, so an interrupted animation never jumps and never stops dead before turning.
    """

    def __init__(self, clock: Clock, value: float = 0.0, duration: float = 4.0,
                 easing: Easing = ease_in_out_cubic, carry_velocity: bool = True) -> None:
        self._clock = clock
        self.duration = float(duration)
        self.easing = easing
        self.carry_velocity = carry_velocity
        self._start = self._target = float(value)
        self._t0 = clock.now()
        self._dur = 0.0  # duration of the running animation (``duration`` applies to the next)
        self._v0 = 0.0  # carried velocity, units per second

    @property
    def target(self) -> float:
        return self._target

    def value_at(self, t: float) -> float:
        if self._dur <= 0.0:
            return self._target
        u = (t - self._t0) / self._dur
        if u >= 1.0:
            return self._target
        if u <= 0.0:
            return self._start
        return (self._start + (self._target - self._start) * self.easing(u)
                + self._v0 * self._dur * _hermite_h10(u))

    def velocity_at(self, t: float) -> float:
        if self._dur <= 0.0:
            return 0.0
        u = (t - self._t0) / self._dur
        if u >= 1.0 or u < 0.0:
            return 0.0
        ease_v = (self._target - self._start) * _slope(self.easing, u) / self._dur
        return ease_v + self._v0 * (3.0 * u * u - 4.0 * u + 1.0)

    def value(self) -> float:
        return self.value_at(self._clock.now())

    def animating(self) -> bool:
        return self._dur > 0.0 and self._clock.now() < self._t0 + self._dur

    def retarget(self, target: float, duration: float | None = None) -> None:
        """Animate to ``target`` from the current value; the same target again changes nothing."""
        target = float(target)
        if target == self._target:
            return  # a repeated request must not restart (and so lengthen) the animation
        t = self._clock.now()
        value = self.value_at(t)
        velocity = self.velocity_at(t) if self.carry_velocity else 0.0
        self._start, self._target, self._t0, self._v0 = value, target, t, velocity
        self._dur = self.duration if duration is None else float(duration)

    def jump_to(self, value: float) -> None:
        """Show ``value`` at once, without animation."""
        self._start = self._target = float(value)
        self._t0 = self._clock.now()
        self._dur = 0.0
        self._v0 = 0.0


class SliceAnimator:
    """The displayed (fractional) slice per plane, animated toward the commanded positions.

    ``set_targets`` takes the state's commanded ``iv.pos``; planes seen for the first time jump
    (no animation when the CT first appears); ``value`` is what to draw now.
    """

    def __init__(self, clock: Clock, duration: float = 4.0,
                 easing: Easing = ease_in_out_cubic) -> None:
        self._clock = clock
        self._duration = float(duration)
        self._easing = easing
        self._tweens: dict[str, Tween] = {}

    @property
    def duration(self) -> float:
        return self._duration

    @duration.setter
    def duration(self, seconds: float) -> None:
        """Applies to animations started afterwards; a running one keeps its pace."""
        self._duration = max(0.0, float(seconds))
        for tw in self._tweens.values():
            tw.duration = self._duration

    def jump_to(self, pos: Mapping[str, float]) -> None:
        for plane, p in pos.items():
            tw = self._tweens.get(plane)
            if tw is None:
                self._tweens[plane] = Tween(self._clock, p, self._duration, self._easing)
            else:
                tw.jump_to(p)

    def set_targets(self, pos: Mapping[str, float]) -> None:
        for plane, p in pos.items():
            tw = self._tweens.get(plane)
            if tw is None:
                self._tweens[plane] = Tween(self._clock, p, self._duration, self._easing)
            else:
                tw.retarget(p)

    def clear(self) -> None:
        """Forget every plane: the next ``set_targets`` jumps (a new case, or CT removed)."""
        self._tweens.clear()

    def value(self, plane: str) -> float:
        return self._tweens[plane].value()

    def values(self) -> dict[str, float]:
        t = self._clock.now()
        return {p: tw.value_at(t) for p, tw in self._tweens.items()}

    def target(self, plane: str) -> float:
        return self._tweens[plane].target

    def targets(self) -> dict[str, float]:
        return {p: tw.target for p, tw in self._tweens.items()}

    def animating(self, plane: str | None = None) -> bool:
        if plane is not None:
            tw = self._tweens.get(plane)
            return tw is not None and tw.animating()
        return any(tw.animating() for tw in self._tweens.values())


__all__ = [
    "EASINGS", "Easing", "SliceAnimator", "Tween", "ease_in_out_cubic", "ease_out_cubic",
    "linear", "smoothstep",
]
