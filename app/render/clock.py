"""Time sources for the renderers (ARCHITECTURE "Rendering and threads").

Every animation reads time from an injected :class:`Clock`, so tests drive animations
deterministically with :class:`ManualClock` instead of sleeping.
"""

from __future__ import annotations

import time
from typing import Protocol, runtime_checkable


@runtime_checkable
class Clock(Protocol):
    def now(self) -> float:
        """Seconds on a monotonic time line (the origin is arbitrary)."""
        ...


class MonotonicClock:
    """Wall time that never jumps backwards (NTP/DST changes must not disturb animations)."""

    def now(self) -> float:
        return time.monotonic()


class ManualClock:
    """A clock that only moves when told to: for tests and for offline rendering."""

    def __init__(self, t: float = 0.0) -> None:
        self._t = float(t)

    def now(self) -> float:
        return self._t

    def advance(self, dt: float) -> float:
        if dt < 0:
            raise ValueError("a clock cannot go backwards")
        self._t += float(dt)
        return self._t

    def set(self, t: float) -> None:
        self._t = float(t)


__all__ = ["Clock", "ManualClock", "MonotonicClock"]
