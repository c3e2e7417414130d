"""The heavy-stage CPU scheduler (DESIGN §2 app/runtime, §6): one heavy stage at a time on
the shared cores, foreground first. Every layer that computes heavily (STT, TTS, the LLM, VTK)
takes the same process-wide lock from here."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator


class HeavyStageLock:
    """One heavy CPU stage at a time on the shared cores (Whisper, LLM, VTK).

    Measured here: llama.cpp on 2 threads slows 3-10x when another process takes a core, so
    running Whisper and the LLM together makes both slower than running them one after the
    other. Every heavy stage wraps its compute in ``with HEAVY_STAGE_LOCK.hold("stt"): ...``.

    * Foreground stages (a command being answered) go first: a *background* holder (the LLM
      warm-up, a precompute) registers a ``preempt`` callback that a waiting foreground stage
      calls, and background acquirers wait while any foreground stage is waiting.
    * ``timeout`` bounds the wait; ``hold`` yields False when the lock was not obtained, so the
      caller can report "busy" instead of blocking the console. Renderers that must not stall
      the video should pass ``timeout=0`` and skip or degrade the frame when busy.
    * Re-entrant for the same thread (a stage may call a helper that also takes it).
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._holder: str | None = None
        self._owner: int | None = None
        self._depth = 0
        self._background = False
        self._preempt: Callable[[], None] | None = None
        self._fg_waiting = 0

    @property
    def holder(self) -> str | None:
        return self._holder

    def foreground_waiting(self) -> bool:
        return self._fg_waiting > 0

    def acquire(self, name: str, timeout: float | None = None, *, background: bool = False,
                preempt: Callable[[], None] | None = None) -> bool:
        me = threading.get_ident()
        deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
        with self._cond:
            if self._owner == me:
                self._depth += 1
                return True
            if not background:
                self._fg_waiting += 1
            try:
                while self._holder is not None or (background and self._fg_waiting > 0):
                    if not background and self._background and self._preempt is not None:
                        self._preempt()  # ask the background holder to stop at its next check
                    remaining = None if deadline is None else deadline - time.monotonic()
                    if remaining is not None and remaining <= 0:
                        return False
                    self._cond.wait(remaining if remaining is not None else 0.5)
                self._holder, self._owner, self._depth = name, me, 1
                self._background, self._preempt = background, preempt
                return True
            finally:
                if not background:
                    self._fg_waiting -= 1
                    self._cond.notify_all()

    def release(self) -> None:
        with self._cond:
            if self._owner != threading.get_ident():
                raise RuntimeError("HeavyStageLock released by a thread that does not hold it")
            self._depth -= 1
            if self._depth:
                return
            self._holder = self._owner = None
            self._background, self._preempt = False, None
            self._cond.notify_all()

    @contextlib.contextmanager
    def hold(self, name: str, timeout: float | None = None, *, background: bool = False,
             preempt: Callable[[], None] | None = None) -> Iterator[bool]:
        ok = self.acquire(name, timeout, background=background, preempt=preempt)
        try:
            yield ok
        finally:
            if ok:
                self.release()


#: The process-wide lock for heavy CPU stages (see :class:`HeavyStageLock`).
HEAVY_STAGE_LOCK = HeavyStageLock()


__all__ = ["HEAVY_STAGE_LOCK", "HeavyStageLock"]
