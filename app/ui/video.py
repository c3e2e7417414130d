"""The endoscope video feed: a thread reading a :class:`~app.data.video.VideoSource`.

Files play in a loop at their own frame rate; a capture device is read as fast as it delivers.
Only the newest frame is kept (latest wins: nothing queues). When the source fails, the feed
says why in plain words (:meth:`VideoFeed.message`) and keeps trying: a lost capture device
reconnects with the source's backoff, a broken file is retried every few seconds (it may be
replaced while the console runs). No Qt here beyond living in ``app/ui``: the render loop
polls the feed.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

NO_VIDEO = "No endoscope video"
FILE_RETRY_S = 5.0
POLL_S = 0.2


class VideoFeed:
    """Reads frames on its own thread; :meth:`latest` returns ``(seq, frame or None)``.

    ``source`` is a file path, a capture device (index or ``/dev/videoN``) or None (no video
    at all: the console shows the overlays on a dark background).
    """

    def __init__(self, source: Path | str | int | None,
                 source_factory: Any = None) -> None:
        self.source = source
        self._factory = source_factory
        self._lock = threading.Lock()
        self._frame: np.ndarray | None = None
        self._seq = 0
        self._message: tuple[str, str | None] | None = None
        self._status = "closed"
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.frames_read = 0
        self.fps = 0.0
        # A note about a source that still plays (e.g. "damaged in places"), for the status.
        self.note: str | None = None
        if source is None:
            self._message = (NO_VIDEO, "This case has no video file or capture device; the "
                             "overlays are shown on a dark background.")
            self._status = "none"

    # -- any thread ---------------------------------------------------------------------
    def start(self) -> VideoFeed:
        if self.source is not None and self._thread is None:
            self._thread = threading.Thread(target=self._run, name="video", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def latest(self) -> tuple[int, np.ndarray | None]:
        """(sequence number, newest frame) — the frame is None while there is no picture."""
        with self._lock:
            return self._seq, self._frame

    def message(self) -> tuple[str, str | None] | None:
        """(headline, detail) while the video has a problem, else None."""
        with self._lock:
            return self._message

    @property
    def status(self) -> str:
        """"none", "closed", "playing", "disconnected", "error" or "ended"."""
        return self._status

    @property
    def has_frame(self) -> bool:
        with self._lock:
            return self._frame is not None

    # -- the thread -----------------------------------------------------------------------
    def _set(self, frame: np.ndarray | None, message: tuple[str, str | None] | None) -> None:
        with self._lock:
            if frame is not None:
                self._frame = frame
                self._seq += 1
            elif message is not None:
                self._frame = None  # a stale picture of a lost live feed would mislead
                self._seq += 1
            self._message = message

    def _make_source(self) -> Any:
        if self._factory is not None:
            return self._factory(self.source)
        from app.data.video import VideoSource

        return VideoSource(self.source, loop=True)

    def _run(self) -> None:
        try:
            src = self._make_source()
        except Exception as exc:  # noqa: BLE001 - no video is not a reason to stop the console
            log.exception("video source could not be created")
            self._status = "error"
            self._set(None, (NO_VIDEO, f"The video could not be opened ({type(exc).__name__})."))
            return
        next_t = time.monotonic()
        t_count, n_count = time.monotonic(), 0
        try:
            while not self._stop.is_set():
                frame = src.read()
                status = getattr(src, "status", "playing")
                self._status = status
                if frame is not None:
                    self.frames_read += 1
                    n_count += 1
                    # A file damaged in places still plays: its note goes to the status strip,
                    # not onto the picture.
                    self.note = getattr(src, "last_error", None)
                    self._set(frame, None)
                    now = time.monotonic()
                    if now - t_count >= 1.0:
                        self.fps, t_count, n_count = n_count / (now - t_count), now, 0
                    if not getattr(src, "is_live", False):
                        # Files: pace at their frame rate; re-sync after a stall instead of
                        # racing to catch up.
                        next_t += 1.0 / max(1.0, float(getattr(src, "fps", 30.0) or 30.0))
                        delay = next_t - time.monotonic()
                        if delay < -0.25:
                            next_t = time.monotonic()
                        elif delay > 0:
                            self._stop.wait(delay)
                    continue
                why = getattr(src, "last_error", None) or "The video stopped."
                if status == "disconnected":
                    self._set(None, ("Video signal lost \u2014 reconnecting\u2026", why))
                    self._stop.wait(POLL_S)  # read() retries with the source's backoff
                else:
                    self._set(None, (NO_VIDEO, why))
                    self._stop.wait(FILE_RETRY_S)
                    if not self._stop.is_set():
                        try:
                            src.open()
                        except Exception:  # noqa: BLE001
                            log.debug("video reopen failed", exc_info=True)
                next_t = time.monotonic()
        finally:
            try:
                src.close()
            except Exception:  # noqa: BLE001
                log.debug("closing the video source failed", exc_info=True)


__all__ = ["NO_VIDEO", "VideoFeed"]
