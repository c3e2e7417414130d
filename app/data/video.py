"""Endoscope video: probe a file, and a frame source for a file (looping) or a live device.

No Qt here (DESIGN §2): the UI pulls frames with :meth:`VideoSource.read` from its own timer.
Files and network streams are decoded with PyAV (frame-threaded, one swscale conversion to
RGB per frame); capture devices (an index such as ``0`` or ``/dev/video0``) go through OpenCV.
A failing source never raises from :meth:`~VideoSource.read`: it returns ``None`` and says why
in :attr:`~VideoSource.last_error`; a lost device is retried with a growing delay, never in a
busy loop.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import av
import numpy as np

from app.data.problems import LoadError

PART = "video"
DEFAULT_FPS = 30.0  # when a file or device does not say
MAX_SKIPPED_DAMAGE = 200  # damaged packets skipped in one read() before giving up on the pass
log = logging.getLogger(__name__)

Status = Literal["closed", "playing", "ended", "disconnected", "error"]


@dataclass(frozen=True)
class VideoInfo:
    """What a video source is. ``path`` is the file path or the device name."""

    path: str
    codec: str
    width: int
    height: int
    fps: float
    frame_count: int | None
    duration_s: float | None
    pix_fmt: str | None
    is_device: bool = False


def _plain_reason(exc: BaseException) -> str:
    """An FFmpeg error in words for the surgical team; the raw text goes to ``detail``."""
    if isinstance(exc, av.error.InvalidDataError):
        return "the file is damaged or is not a video"
    if isinstance(exc, av.error.EOFError):
        return "it ends before any video data (empty or incomplete)"
    if isinstance(exc, (av.error.PermissionError, PermissionError)):
        return "permission to read it was denied"
    if isinstance(exc, (av.error.DecoderNotFoundError, av.error.DemuxerNotFoundError)):
        return "its format is not supported"
    return "the file could not be read"


def _stream_info(path: str, container: Any, stream: Any, first: Any | None) -> VideoInfo:
    ctx = stream.codec_context
    rate = stream.average_rate or stream.guessed_rate or stream.base_rate
    fps = float(rate) if rate else DEFAULT_FPS
    duration = None
    if stream.duration is not None and stream.time_base is not None:
        duration = float(stream.duration * stream.time_base)
    elif container.duration is not None:
        duration = container.duration / av.time_base
    pix_fmt = first.format.name if first is not None else (ctx.format.name if ctx.format else None)
    return VideoInfo(
        path=path, codec=ctx.name, width=int(first.width if first is not None else ctx.width),
        height=int(first.height if first is not None else ctx.height), fps=fps,
        frame_count=int(stream.frames) or None, duration_s=duration, pix_fmt=pix_fmt)


def _check_has_video(name: str, container: Any) -> None:
    if container.streams.video:
        return
    if not container.streams:  # e.g. an mp4 cut before its index: nothing is described
        raise LoadError(PART, f"{name} could not be opened as a video: it is damaged or incomplete "
                        "(no streams found).")
    raise LoadError(PART, f"{name} has no video picture in it (only sound or data).")


def probe_video(path: Path) -> VideoInfo:
    """Describe a video file, decoding its first frame to prove it plays.

    Raises :class:`LoadError` (part ``"video"``) in plain words when the file is missing,
    is not a video, has no video stream or holds no frames.
    """
    path = Path(path)
    if not path.exists():
        raise LoadError(PART, f"The video file {path.name} was not found.", str(path))
    if path.is_dir():
        raise LoadError(PART, f"{path.name} is a folder, not a video file.", str(path))
    try:
        container = av.open(str(path))
    except (av.FFmpegError, OSError, ValueError) as exc:
        raise LoadError(PART, f"{path.name} could not be opened as a video: {_plain_reason(exc)}.",
                        f"{type(exc).__name__}: {exc}") from exc
    with container:
        _check_has_video(path.name, container)
        stream = container.streams.video[0]
        try:
            first = next(iter(container.decode(stream)), None)
        except (av.FFmpegError, ValueError) as exc:
            raise LoadError(PART, f"{path.name} could not be opened as a video: its first frame "
                            "could not be decoded.", f"{type(exc).__name__}: {exc}") from exc
        if first is None:
            raise LoadError(PART, f"{path.name} contains no video frames.")
        return _stream_info(str(path), container, stream, first)


def is_capture_device(source: Path | str | int) -> bool:
    """``0``, ``"1"`` and ``"/dev/video0"`` name capture devices; anything else is a file/URL."""
    if isinstance(source, int):
        return True
    text = str(source)
    return text.isdigit() or text.startswith("/dev/video")


def _is_network(source: Path | str | int) -> bool:
    return isinstance(source, str) and "://" in source and not source.startswith("file://")


def _device_node_missing(device: int | str) -> bool:
    """On Linux a capture device is a /dev/video* node; elsewhere only OpenCV can tell."""
    if not sys.platform.startswith("linux"):
        return False
    return not Path(f"/dev/video{device}" if isinstance(device, int) else device).exists()


class VideoSource:
    """Frames for the video view: a file played in a loop, a network stream or a live device.

    ``read()`` returns the next frame as an H×W×3 ``uint8`` RGB array, or ``None`` (ended,
    disconnected, broken: see ``status`` and ``last_error``). Pacing is the caller's job
    (``fps`` says how fast). ``output_size`` (width, height) scales in the same conversion
    step that makes RGB, so a small view costs less.
    """

    def __init__(self, source: Path | str | int, *, loop: bool = True,
                 output_size: tuple[int, int] | None = None,
                 backoff_s: tuple[float, float] = (0.5, 8.0),
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.source = source
        self.loop = loop
        self.output_size = output_size
        self.status: Status = "closed"
        self.last_error: str | None = None
        self.info: VideoInfo | None = None
        self.frame_index = 0  # frames delivered since open()
        self.loops = 0  # times a file wrapped around
        self.position_s = 0.0  # presentation time of the last frame, files only
        self._backoff_min, self._backoff_max = backoff_s
        self._delay = self._backoff_min
        self._next_try = 0.0
        self._clock = clock
        self.open_attempts = 0
        self._container: Any = None
        self._stream: Any = None
        self._frames: Iterator[Any] | None = None
        self._decoded_this_pass = 0
        self._damage_reported = False
        self._cap: Any = None
        self._device_fps = DEFAULT_FPS

    # -- public ----------------------------------------------------------------------------

    @property
    def is_live(self) -> bool:
        return is_capture_device(self.source) or _is_network(self.source)

    @property
    def fps(self) -> float:
        if self._cap is not None or is_capture_device(self.source):
            return self._device_fps
        return self.info.fps if self.info else DEFAULT_FPS

    @property
    def name(self) -> str:
        if is_capture_device(self.source):
            return f"capture device {self.source}"
        return Path(str(self.source)).name if not _is_network(self.source) else str(self.source)

    def open(self) -> bool:
        """Open the source. Returns False (with ``status`` and ``last_error`` set) on failure."""
        self.close()
        self.open_attempts += 1
        ok = self._open_device() if is_capture_device(self.source) else self._open_av()
        if ok:
            self.status, self.last_error = "playing", None
            self._delay = self._backoff_min
            self.frame_index = 0
        return ok

    def read(self) -> np.ndarray | None:
        """The next frame (H×W×3 uint8 RGB), or None; never raises for a bad source."""
        if self.status == "closed" and self.open_attempts == 0:
            self.open()
        if self.status == "disconnected" and not self.reconnect():  # no-op until the delay passes
            return None
        if self.status != "playing":
            return None
        try:
            frame = self._read_device() if self._cap is not None else self._read_av()
        except Exception as exc:  # a frame source must not take the console down
            log.exception("video read failed")
            self._fail("error", f"The video {self.name} stopped because of an unexpected error.",
                       exc)
            return None
        if frame is not None:
            self.frame_index += 1
        return frame

    def reconnect(self, force: bool = False) -> bool:
        """Try to open the source again, at most once per backoff delay (0.5 s doubling to 8 s).

        Returns True when the source plays again. Called by ``read()`` while disconnected;
        callers may force an immediate try (a "retry" button).
        """
        now = self._clock()
        if not force and now < self._next_try:
            return False
        delay = self._delay
        if self.open():
            log.info("video source %s reconnected", self.name)
            return True
        self._delay = min(delay * 2.0, self._backoff_max)
        self._next_try = now + self._delay
        return False

    def close(self) -> None:
        if self._container is not None:
            try:
                self._container.close()
            except Exception:  # closing a broken container must not raise
                log.debug("closing video container failed", exc_info=True)
        if self._cap is not None:
            self._cap.release()
        self._container = self._stream = self._frames = self._cap = None
        if self.status == "playing":
            self.status = "closed"

    def __enter__(self) -> VideoSource:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- failure bookkeeping ---------------------------------------------------------------

    def _fail(self, status: Status, message: str, exc: BaseException | None = None) -> bool:
        self.status = status
        self.last_error = message
        if status == "disconnected":
            self._next_try = self._clock() + self._delay
        log.warning("%s%s", message, f" ({type(exc).__name__}: {exc})" if exc else "")
        self.close()
        self.status = status  # close() must not overwrite why we stopped
        return False

    # -- files and network streams (PyAV) --------------------------------------------------

    def _open_av(self) -> bool:
        network = _is_network(self.source)
        target = str(self.source)
        if not network and not Path(target).is_file():
            return self._fail("error", f"The video file {self.name} was not found.")
        try:
            # A stream that stops sending must not freeze the console: give up after 5 s.
            self._container = av.open(target, timeout=5.0 if network else None)
        except (av.FFmpegError, OSError, ValueError) as exc:
            status: Status = "disconnected" if network else "error"
            return self._fail(status, f"{self.name} could not be opened as a video: "
                              f"{_plain_reason(exc)}.", exc)
        try:
            _check_has_video(self.name, self._container)
        except LoadError as exc:
            return self._fail("error", exc.message)
        self._stream = self._container.streams.video[0]
        self._stream.thread_type = "AUTO"  # frame + slice threads: decoding keeps up on 2 cores
        self.info = _stream_info(target, self._container, self._stream, None)
        self._frames = iter(self._container.decode(self._stream))
        self._decoded_this_pass = 0
        return True

    def _next_av_frame(self) -> tuple[Any | None, BaseException | None]:
        """The next decoded frame; damaged packets are skipped (a fresh decode iterator
        carries on from where the demuxer is). Returns (None, error) when the damage never
        ends, (None, None) at the end of the file."""
        assert self._frames is not None
        damage: BaseException | None = None
        for _ in range(MAX_SKIPPED_DAMAGE):
            try:
                frame = next(self._frames)
            except StopIteration:
                return None, damage
            except (av.FFmpegError, ValueError) as exc:
                damage = exc
                self._frames = iter(self._container.decode(self._stream))
                continue
            if damage is not None and self._damage_reported is False:
                self._damage_reported = True
                self.last_error = (f"The video {self.name} is damaged in places; damaged frames "
                                   "are skipped.")
                log.warning("%s (%s)", self.last_error, damage)
            return frame, None
        return None, damage

    def _rewind(self) -> bool:
        try:
            self._container.seek(0)
            self._frames = iter(self._container.decode(self._stream))
        except (av.FFmpegError, ValueError, OSError):
            log.debug("seek to start failed, reopening", exc_info=True)
            if not self._open_av():
                return False
        self._decoded_this_pass = 0
        self.loops += 1
        return True

    def _read_av(self) -> np.ndarray | None:
        for _ in range(2):  # at most one wrap-around per call
            frame, damage = self._next_av_frame()
            if frame is not None:
                self._decoded_this_pass += 1
                self.position_s = float(frame.time or 0.0)
                return self._to_rgb(frame)
            if _is_network(self.source):
                self._fail("disconnected", f"The video stream {self.name} stopped; the console "
                           "keeps trying to reconnect.", damage)
                return None
            if self._decoded_this_pass == 0:
                reason = "it is damaged" if damage else "it has no frames that can be shown"
                self._fail("error", f"The video {self.name} cannot be played: {reason}.", damage)
                return None
            if damage:
                # Keep showing what can be shown: a truncated recording still plays its start.
                self.last_error = (f"The video {self.name} is damaged after frame "
                                   f"{self._decoded_this_pass}; the readable part plays in a loop.")
                log.warning("%s (%s)", self.last_error, damage)
            if not self.loop:
                self.status = "ended"
                return None
            if not self._rewind():
                return None
        return None

    def _to_rgb(self, frame: Any) -> np.ndarray:
        if self.output_size:
            w, h = self.output_size
            frame = frame.reformat(width=w, height=h, format="rgb24")  # scale + convert at once
            array = frame.to_ndarray()
        else:
            array = frame.to_ndarray(format="rgb24")
        return np.ascontiguousarray(array)  # padded line sizes give strided views

    # -- live capture devices (OpenCV) -----------------------------------------------------

    def _open_device(self) -> bool:
        try:
            import cv2  # lazy: only live capture needs OpenCV
        except ImportError as exc:
            return self._fail("error", "Live capture needs OpenCV (opencv-python-headless), which "
                              "is not installed.", exc)
        device: int | str = int(self.source) if str(self.source).isdigit() else str(self.source)
        linux = sys.platform.startswith("linux")
        if _device_node_missing(device):
            # Asking OpenCV for a missing node is slow and noisy; the answer is known already.
            return self._fail("disconnected", f"No video capture device {self.source} was found. "
                              "Check that the capture card is connected; the console keeps trying.")
        api = cv2.CAP_V4L2 if linux else cv2.CAP_ANY
        cap = cv2.VideoCapture(device, api)
        if not cap.isOpened():
            cap.release()
            return self._fail("disconnected", f"The video capture device {self.source} could not "
                              "be opened (it may be in use or unplugged); the console keeps trying.")
        self._cap = cap
        fps = float(cap.get(cv2.CAP_PROP_FPS) or 0.0)
        self._device_fps = fps if 1.0 <= fps <= 240.0 else DEFAULT_FPS
        w, h = int(cap.get(cv2.CAP_PROP_FRAME_WIDTH)), int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))
        self.info = VideoInfo(path=str(self.source), codec="capture", width=w, height=h,
                              fps=self._device_fps, frame_count=None, duration_s=None,
                              pix_fmt="bgr24", is_device=True)
        return True

    def _read_device(self) -> np.ndarray | None:
        import cv2

        ok, frame = self._cap.read()
        if not ok or frame is None:
            self._fail("disconnected", f"The live video from capture device {self.source} "
                       "stopped; the console keeps trying to reconnect.")
            return None
        if self.output_size:
            frame = cv2.resize(frame, self.output_size, interpolation=cv2.INTER_AREA)
        return cv2.cvtColor(frame, cv2.COLOR_BGR2RGB)
