"""The render loop: composes the newest video frame with the overlays, off the UI thread.

Every tick (~30 fps) the loop takes the feed's newest frame (or a dark background when there is
no picture), asks the :class:`~app.render.scene.SceneRenderer` for the layers of that instant,
and composes them into one of three output buffers — only when something changed (a new video
frame, a layer re-rendered, a new size), so a still console costs almost nothing.

Hand-over to the UI is a triple buffer with "latest wins": the loop writes into a buffer that
is neither on screen nor waiting; a new frame replaces a waiting one that the UI has not taken
yet (dropped, never queued); :meth:`RenderLoop.take` gives the UI the newest frame and keeps it
untouched until the next ``take``. The UI is told a frame is waiting through ``notify`` at
most once per taken frame, so a busy UI thread is never flooded with events.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from app.render.scene import SceneRenderer, dark_frame

log = logging.getLogger(__name__)

MAX_SIZE = (1920, 1080)
MIN_SIZE = (320, 180)


@dataclass
class FrameStats:
    composed: int = 0
    skipped: int = 0  # ticks where nothing changed
    last_compose_ms: float = 0.0
    max_compose_ms: float = 0.0
    fps: float = 0.0


class RenderLoop:
    def __init__(self, scene: SceneRenderer, feed: Any, *, fps: float = 30.0,
                 size: tuple[int, int] = (1280, 720),
                 notify: Callable[[], None] | None = None, clock: Any = None) -> None:
        self.scene = scene
        self.feed = feed
        self.period = 1.0 / max(1.0, fps)
        self._notify = notify
        self._clock = clock or scene.clock
        self._lock = threading.Lock()
        # render_once may also be called from the UI thread (screenshots, tests) while the loop
        # runs: the scene and its compositor are single-threaded, so calls take turns.
        self._render_lock = threading.Lock()
        self._size = _clamp_size(size)
        self._buffers: list[np.ndarray] = []
        self._display: int | None = None  # on screen (held by the UI)
        self._ready: int | None = None  # composed, waiting for the UI
        self._ready_seq = 0
        self._notified = False
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_key: Any = None
        self._dark: np.ndarray | None = None
        self._resized: np.ndarray | None = None
        self._notice: Any = None
        self.stats = FrameStats()
        self.first_video_frame = threading.Event()  # a real video frame reached the screen
        self.first_frame = threading.Event()  # any frame was composed

    # -- any thread -----------------------------------------------------------------------
    def start(self) -> RenderLoop:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="render", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def set_size(self, size: tuple[int, int]) -> None:
        """The output size in pixels (the video view's size); the layout follows it."""
        size = _clamp_size(size)
        with self._lock:
            if size == self._size:
                return
            self._size = size
        self._wake.set()

    @property
    def size(self) -> tuple[int, int]:
        return self._size

    def set_feed(self, feed: Any) -> None:
        self.feed = feed
        self._wake.set()

    def poke(self) -> None:
        """Render now rather than at the next tick (e.g. right after a command)."""
        self._wake.set()

    def take(self) -> tuple[int, np.ndarray] | None:
        """UI thread: the newest composed frame (seq, RGB array), or None when nothing new.

        The array stays valid and unchanged until the next ``take``.
        """
        with self._lock:
            self._notified = False
            if self._ready is None:
                return None
            self._display, self._ready = self._ready, None
            return self._ready_seq, self._buffers[self._display]

    # -- the thread -----------------------------------------------------------------------
    def _writable(self, shape: tuple[int, int, int]) -> int:
        with self._lock:
            if not self._buffers or self._buffers[0].shape != shape:
                # A new size: fresh buffers; the one on screen keeps its old array alive.
                self._buffers = [np.zeros(shape, np.uint8) for _ in range(3)]
                self._display = self._ready = None
            busy = {self._display, self._ready}
            return next(i for i in range(3) if i not in busy)

    def _publish(self, index: int) -> None:
        notify = False
        with self._lock:
            self._ready = index
            self._ready_seq += 1
            if not self._notified:
                self._notified = notify = True
        if notify and self._notify is not None:
            try:
                self._notify()
            except Exception:  # noqa: BLE001 - the UI may be closing
                log.debug("frame notification failed", exc_info=True)

    def _base(self, size: tuple[int, int]) -> tuple[np.ndarray, Any]:
        """The background of this frame (video or dark) and what identifies it."""
        seq, frame = self.feed.latest() if self.feed is not None else (0, None)
        w, h = size
        if frame is None:
            if self._dark is None or self._dark.shape[:2] != (h, w):
                self._dark = dark_frame(size)
            return self._dark, ("dark", size)
        if frame.shape[1] != w or frame.shape[0] != h:
            if self._resized is None or self._resized.shape[:2] != (h, w):
                self._resized = np.empty((h, w, 3), np.uint8)
            interp = cv2.INTER_AREA if frame.shape[1] > w else cv2.INTER_LINEAR
            cv2.resize(frame, (w, h), dst=self._resized, interpolation=interp)
            return self._resized, ("video", seq, size)
        return frame, ("video", seq, size)

    def output_size(self) -> tuple[int, int]:
        """The composed frame's size: the largest with the video's aspect (16:9 without
        video) inside the size the UI asked for, so the picture is never stretched."""
        with self._lock:
            bw, bh = self._size
        _, frame = self.feed.latest() if self.feed is not None else (0, None)
        aspect = frame.shape[1] / frame.shape[0] if frame is not None else 16 / 9
        w, h = bw, round(bw / aspect)
        if h > bh:
            w, h = round(bh * aspect), bh
        return _clamp_size((w, h))

    def render_once(self) -> bool:
        """One tick: compose and publish if anything changed. Returns whether it composed."""
        with self._render_lock:
            return self._render_once()

    def _render_once(self) -> bool:
        size = self.output_size()
        feed = self.feed
        msg = feed.message() if feed is not None else None
        if msg != self._notice:
            self._notice = msg
            self.scene.set_notice(*(msg or (None, None)))
        self.scene.set_frame_size(size)
        t = self._clock.now()
        base, base_key = self._base(size)
        layers = self.scene.layers(t)
        key = (base_key, tuple((lay.name, lay.version, lay.x, lay.y) for lay in layers))
        if key == self._last_key:
            self.stats.skipped += 1
            return False
        t0 = time.perf_counter()
        index = self._writable((size[1], size[0], 3))
        out = self._buffers[index]
        self.scene.compose_layers(base, layers, out=out)
        ms = (time.perf_counter() - t0) * 1000.0
        self._last_key = key
        self.stats.composed += 1
        self.stats.last_compose_ms = ms
        self.stats.max_compose_ms = max(self.stats.max_compose_ms, ms)
        self._publish(index)
        self.first_frame.set()
        if base_key[0] == "video":
            self.first_video_frame.set()
        return True

    def _run(self) -> None:
        count, t_count = 0, time.monotonic()
        while not self._stop.is_set():
            t_start = time.monotonic()
            try:
                if self.render_once():
                    count += 1
            except Exception:  # noqa: BLE001 - one bad frame must not stop the video
                log.exception("composing a frame failed")
                self._stop.wait(0.2)
            now = time.monotonic()
            if now - t_count >= 1.0:
                self.stats.fps, count, t_count = count / (now - t_count), 0, now
            # At most one frame per period, counting the time spent composing; a poke (a
            # command) renders at once.
            delay = self.period - (time.monotonic() - t_start)
            if delay > 0:
                self._wake.wait(delay)
            self._wake.clear()


def _clamp_size(size: tuple[int, int]) -> tuple[int, int]:
    w = min(MAX_SIZE[0], max(MIN_SIZE[0], int(size[0])))
    h = min(MAX_SIZE[1], max(MIN_SIZE[1], int(size[1])))
    return w - (w % 2), h - (h % 2)


__all__ = ["FrameStats", "RenderLoop"]
