"""Audio sources for the voice pipeline: the microphone, audio files, and clip sequences.

Everything downstream works on **16 kHz mono float32** in fixed frames (30 ms by default): that
is what Silero VAD and Whisper expect, so conversion happens once, here.

* :class:`MicrophoneSource` captures with ``sounddevice`` into a queue and keeps a ring buffer
  of the last seconds, so the start of a command spoken right after the wake word (or before
  a push-to-talk press registered) is not clipped. It reports an RMS/peak level for the UI
  meter. Without a usable input device it raises :class:`NoMicrophone`, whose message is the
  plain sentence the console shows: touch and text commands keep working.
* :class:`FileSource` decodes WAV (stdlib) or anything PyAV reads, resamples to 16 kHz mono and
  streams it in frames, optionally paced in real time (for latency measurements that include
  the end-of-speech wait).
* :class:`ClipSequence` plays several clips through one stream (the *synthesized* mode:
  one command per clip), with silence between them so end-of-speech fires as it would live.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
import wave
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

log = logging.getLogger(__name__)

SAMPLE_RATE = 16_000
FRAME_MS = 30
NO_MIC_MESSAGE = "No microphone was found; touch and text commands still work."

LevelCallback = Callable[[float, float], None]
"""``on_level(rms_dbfs, peak_dbfs)`` for the audio level meter."""


class NoMicrophone(RuntimeError):
    """No usable input device. ``str(exc)`` is the sentence to show; ``detail`` says why."""

    def __init__(self, detail: str = "") -> None:
        super().__init__(NO_MIC_MESSAGE)
        self.detail = detail


class AudioFileError(RuntimeError):
    """An audio file could not be read (missing, damaged, unknown format)."""


# --------------------------------------------------------------------------------- devices
@dataclass(frozen=True)
class AudioDevice:
    index: int
    name: str
    max_input_channels: int
    max_output_channels: int
    default_samplerate: float
    is_default_input: bool = False
    is_default_output: bool = False


def _sounddevice() -> Any:
    """Import sounddevice lazily: on a machine without libportaudio the import itself fails,
    and that must mean "no audio devices", never a crash of the console."""
    import sounddevice as sd  # noqa: PLC0415

    return sd


def list_devices() -> list[AudioDevice]:
    """Every audio device PortAudio sees; ``[]`` when there is no audio system at all."""
    try:
        sd = _sounddevice()
        raw = sd.query_devices()
        try:
            d_in, d_out = int(sd.default.device[0]), int(sd.default.device[1])
        except (TypeError, IndexError, ValueError):
            d_in = d_out = -1
    except Exception as exc:  # OSError (no libportaudio), PortAudioError, ...
        log.info("no audio system: %s", exc)
        return []
    out = []
    for i, d in enumerate(raw):
        out.append(AudioDevice(index=i, name=str(d.get("name", f"device {i}")),
                               max_input_channels=int(d.get("max_input_channels", 0)),
                               max_output_channels=int(d.get("max_output_channels", 0)),
                               default_samplerate=float(d.get("default_samplerate", 0) or 0),
                               is_default_input=(i == d_in), is_default_output=(i == d_out)))
    return out


def list_input_devices() -> list[AudioDevice]:
    return [d for d in list_devices() if d.max_input_channels > 0]


def list_output_devices() -> list[AudioDevice]:
    return [d for d in list_devices() if d.max_output_channels > 0]


def has_output_device() -> bool:
    return bool(list_output_devices())


def find_input_device(device: int | str | None) -> AudioDevice:
    """The input device by index, by (case-insensitive) name fragment, or the default one.

    Raises :class:`NoMicrophone` when there is none, or the named one is not there."""
    inputs = list_input_devices()
    if not inputs:
        raise NoMicrophone("no input device is available")
    if device is None:
        for d in inputs:
            if d.is_default_input:
                return d
        return inputs[0]
    if isinstance(device, int) or (isinstance(device, str) and device.strip().isdigit()):
        idx = int(device)
        for d in inputs:
            if d.index == idx:
                return d
        raise NoMicrophone(f"input device {idx} is not available "
                           f"(inputs: {', '.join(f'{d.index}: {d.name}' for d in inputs)})")
    want = str(device).strip().lower()
    for d in inputs:
        if want in d.name.lower():
            return d
    raise NoMicrophone(f"no input device is named like {device!r} "
                       f"(inputs: {', '.join(d.name for d in inputs)})")


# ----------------------------------------------------------------------------- conversions
def to_float32(x: np.ndarray) -> np.ndarray:
    """int16/int32/float audio → float32 in [-1, 1]."""
    if x.dtype == np.int16:
        return x.astype(np.float32) / 32768.0
    if x.dtype == np.int32:
        return x.astype(np.float32) / 2147483648.0
    if x.dtype == np.uint8:
        return (x.astype(np.float32) - 128.0) / 128.0
    return x.astype(np.float32, copy=False)


def resample(x: np.ndarray, sr_in: int, sr_out: int = SAMPLE_RATE) -> np.ndarray:
    """Band-limited resampling (polyphase). Linear interpolation would alias the 8 kHz band
    Whisper's mel filters still read."""
    if sr_in == sr_out or len(x) == 0:
        return x.astype(np.float32, copy=False)
    from math import gcd  # noqa: PLC0415

    from scipy.signal import resample_poly  # noqa: PLC0415

    g = gcd(int(sr_in), int(sr_out))
    return resample_poly(x, sr_out // g, sr_in // g).astype(np.float32)


def level_dbfs(x: np.ndarray) -> tuple[float, float]:
    """(RMS, peak) in dBFS of a float frame; -120 for digital silence."""
    if len(x) == 0:
        return -120.0, -120.0
    rms = float(np.sqrt(np.mean(np.square(x, dtype=np.float64))))
    peak = float(np.max(np.abs(x)))
    return (20 * np.log10(max(rms, 1e-6)), 20 * np.log10(max(peak, 1e-6)))


def read_audio(path: str | Path, sample_rate: int = SAMPLE_RATE) -> np.ndarray:
    """Decode ``path`` to mono float32 at ``sample_rate``: PCM WAV with the standard library,
    everything else (FLAC, MP3, OGG, M4A, …) with PyAV."""
    p = Path(path)
    if not p.is_file():
        raise AudioFileError(f"audio file not found: {p}")
    try:
        with wave.open(str(p), "rb") as w:
            sr, ch, width, n = w.getframerate(), w.getnchannels(), w.getsampwidth(), w.getnframes()
            raw = w.readframes(n)
        dtype = {1: np.uint8, 2: np.int16, 4: np.int32}.get(width)
        if dtype is None:
            raise wave.Error(f"{width * 8}-bit WAV")
        x = to_float32(np.frombuffer(raw, dtype=dtype))
        if ch > 1:
            x = x.reshape(-1, ch).mean(axis=1)
        return resample(x, sr, sample_rate)
    except (wave.Error, EOFError):
        pass  # not plain PCM WAV (float WAV, FLAC, ...): PyAV reads it
    return _read_with_av(p, sample_rate)


def _read_with_av(path: Path, sample_rate: int) -> np.ndarray:
    try:
        import av  # noqa: PLC0415
    except ImportError as exc:
        raise AudioFileError(f"{path.name}: not a PCM WAV and PyAV is not installed") from exc
    chunks: list[np.ndarray] = []
    try:
        with av.open(str(path)) as container:
            stream = next((s for s in container.streams if s.type == "audio"), None)
            if stream is None:
                raise AudioFileError(f"{path.name} has no audio stream")
            rs = av.audio.resampler.AudioResampler(format="flt", layout="mono", rate=sample_rate)
            for frame in container.decode(stream):
                for out in rs.resample(frame):
                    chunks.append(out.to_ndarray().reshape(-1))
            for out in rs.resample(None):
                chunks.append(out.to_ndarray().reshape(-1))
    except AudioFileError:
        raise
    except Exception as exc:  # av.error.* : damaged or unknown file
        raise AudioFileError(f"{path.name} could not be decoded: {exc}") from exc
    return np.concatenate(chunks).astype(np.float32) if chunks else np.zeros(0, np.float32)


def write_wav(path: str | Path, samples: np.ndarray, sample_rate: int = SAMPLE_RATE) -> Path:
    """16-bit PCM WAV (debug recordings, tests)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    pcm = np.clip(np.asarray(samples, dtype=np.float32), -1.0, 1.0)
    with wave.open(str(p), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(sample_rate)
        w.writeframes((pcm * 32767.0).astype("<i2").tobytes())
    return p


# ----------------------------------------------------------------------------- ring buffer
class RingBuffer:
    """The last ``capacity`` samples, for the pre-roll (thread-safe: the audio callback writes
    while the pipeline reads)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = max(1, int(capacity))
        self._buf = np.zeros(self.capacity, dtype=np.float32)
        self._pos = 0
        self.total = 0  # samples ever written
        self._lock = threading.Lock()

    def write(self, x: np.ndarray) -> None:
        x = np.asarray(x, dtype=np.float32).reshape(-1)
        with self._lock:
            if len(x) >= self.capacity:
                self._buf[:] = x[-self.capacity:]
                self._pos = 0
            else:
                end = self._pos + len(x)
                if end <= self.capacity:
                    self._buf[self._pos:end] = x
                else:
                    k = self.capacity - self._pos
                    self._buf[self._pos:] = x[:k]
                    self._buf[: end - self.capacity] = x[k:]
                self._pos = end % self.capacity
            self.total += len(x)

    def last(self, n: int) -> np.ndarray:
        """The most recent ``n`` samples (fewer if fewer were written), oldest first."""
        with self._lock:
            n = int(min(n, self.capacity, self.total))
            if n <= 0:
                return np.zeros(0, dtype=np.float32)
            start = (self._pos - n) % self.capacity
            if start + n <= self.capacity:
                return self._buf[start:start + n].copy()
            return np.concatenate([self._buf[start:], self._buf[: (start + n) % self.capacity]])


# --------------------------------------------------------------------------------- sources
class AudioSource(Protocol):
    """What the pipeline reads: 16 kHz mono float32 frames until the source ends."""

    sample_rate: int
    frame_samples: int
    #: True when frames arrive at the speed of sound (a microphone, paced playback): the
    #: pipeline then measures latency on the wall clock.
    realtime: bool

    def frames(self) -> Iterator[np.ndarray]: ...

    def close(self) -> None: ...


def _frame_samples(frame_ms: int, sample_rate: int) -> int:
    return int(sample_rate * frame_ms / 1000)


class MicrophoneSource:
    """Live capture at 16 kHz mono (the device's own rate, resampled, when it refuses 16 kHz).

    ``frames()`` yields ``frame_ms`` frames; the PortAudio callback only copies into a queue
    (it must never block). ``ring`` keeps the last ``ring_s`` seconds so callers can take a
    pre-roll. ``mute(seconds)`` zeroes input for a while (the chime must not be transcribed,
    ANCHORS §3.4 Willow#332).
    """

    realtime = True

    def __init__(self, device: int | str | None = None, *, sample_rate: int = SAMPLE_RATE,
                 frame_ms: int = FRAME_MS, preroll_s: float = 0.8, ring_s: float = 10.0,
                 on_level: LevelCallback | None = None, dtype: str = "float32",
                 max_queue_s: float = 30.0) -> None:
        self.device_spec = device
        self.sample_rate = sample_rate
        self.frame_samples = _frame_samples(frame_ms, sample_rate)
        self.preroll_s = preroll_s
        self.on_level = on_level
        self.dtype = dtype
        self.ring = RingBuffer(int(max(ring_s, preroll_s) * sample_rate))
        self._q: queue.Queue[np.ndarray | None] = queue.Queue(
            maxsize=max(1, int(max_queue_s * 1000 / frame_ms)))
        self._stream: Any = None
        self._closed = threading.Event()
        self._mute_until = 0.0
        self._device_rate = sample_rate
        self.device: AudioDevice | None = None
        self.overflows = 0
        self._pending = np.zeros(0, dtype=np.float32)

    # -- lifecycle ------------------------------------------------------------------------
    def open(self) -> MicrophoneSource:
        """Open the device now (``frames()`` opens it lazily otherwise). Raises NoMicrophone."""
        if self._stream is not None:
            return self
        try:
            sd = _sounddevice()
        except Exception as exc:
            raise NoMicrophone(f"the audio library could not be loaded: {exc}") from exc
        self.device = find_input_device(self.device_spec)
        last_exc: Exception | None = None
        # 16 kHz first (no resampling); many USB/HDA devices only do 44.1/48 kHz in hw mode.
        for rate in dict.fromkeys([self.sample_rate, int(self.device.default_samplerate or 0),
                                   48_000, 44_100]):
            if rate <= 0:
                continue
            try:
                stream = sd.InputStream(device=self.device.index, channels=1, samplerate=rate,
                                        dtype=self.dtype,
                                        blocksize=_frame_samples(FRAME_MS, rate),
                                        callback=self._callback)
                stream.start()
            except Exception as exc:  # PortAudioError: invalid rate, device busy, ...
                last_exc = exc
                continue
            self._stream, self._device_rate = stream, rate
            log.info("microphone %r open at %d Hz", self.device.name, rate)
            return self
        raise NoMicrophone(f"{self.device.name}: {last_exc}")

    def close(self) -> None:
        self._closed.set()
        stream, self._stream = self._stream, None
        if stream is not None:
            try:
                stream.stop()
                stream.close()
            except Exception:  # already gone (device unplugged)
                log.debug("closing the input stream failed", exc_info=True)
        with contextlib.suppress(queue.Full):
            self._q.put_nowait(None)

    def mute(self, seconds: float) -> None:
        """Replace input with silence for ``seconds`` from now (the chime is playing)."""
        self._mute_until = max(self._mute_until, time.monotonic() + max(0.0, seconds))

    # -- audio thread -----------------------------------------------------------------------
    def _callback(self, indata: np.ndarray, frames: int, time_info: Any, status: Any) -> None:
        if status:
            self.overflows += 1
        x = to_float32(np.asarray(indata)[:, 0] if np.ndim(indata) == 2 else np.asarray(indata))
        if time.monotonic() < self._mute_until:
            x = np.zeros_like(x)
        try:
            self._q.put_nowait(x.copy())
        except queue.Full:  # the pipeline fell far behind: drop the oldest audio, not the newest
            self.overflows += 1
            try:
                self._q.get_nowait()
                self._q.put_nowait(x.copy())
            except (queue.Empty, queue.Full):
                pass

    # -- consumer ---------------------------------------------------------------------------
    def frames(self) -> Iterator[np.ndarray]:
        self.open()
        n = self.frame_samples
        while not self._closed.is_set():
            try:
                block = self._q.get(timeout=0.5)
            except queue.Empty:
                continue
            if block is None:
                break
            if self._device_rate != self.sample_rate:
                block = resample(block, self._device_rate, self.sample_rate)
            if self.on_level is not None:
                try:
                    self.on_level(*level_dbfs(block))
                except Exception:  # a broken meter must not stop capture
                    log.debug("level callback failed", exc_info=True)
            self.ring.write(block)
            self._pending = np.concatenate([self._pending, block])
            while len(self._pending) >= n:
                frame, self._pending = self._pending[:n], self._pending[n:]
                yield frame

    def preroll(self) -> np.ndarray:
        return self.ring.last(int(self.preroll_s * self.sample_rate))


class FileSource:
    """One audio file (or array) as a stream of frames.

    ``tail_silence_s`` appends silence so the end-of-speech detector sees the speaker stop, as
    it would live; ``realtime`` paces frames at the speed of sound."""

    def __init__(self, audio: str | Path | np.ndarray, *, sample_rate: int = SAMPLE_RATE,
                 frame_ms: int = FRAME_MS, realtime: bool = False, lead_silence_s: float = 0.0,
                 tail_silence_s: float = 0.0) -> None:
        self.sample_rate = sample_rate
        self.frame_samples = _frame_samples(frame_ms, sample_rate)
        self.realtime = realtime
        self.path = None if isinstance(audio, np.ndarray) else Path(audio)
        samples = (np.asarray(audio, dtype=np.float32).reshape(-1)
                   if isinstance(audio, np.ndarray) else read_audio(audio, sample_rate))
        lead = np.zeros(int(lead_silence_s * sample_rate), np.float32)
        tail = np.zeros(int(tail_silence_s * sample_rate), np.float32)
        self.samples = np.concatenate([lead, samples, tail])
        self._closed = threading.Event()

    @property
    def duration_s(self) -> float:
        return len(self.samples) / self.sample_rate

    def frames(self) -> Iterator[np.ndarray]:
        yield from _paced(_chunks(self.samples, self.frame_samples), self.frame_samples,
                          self.sample_rate, self.realtime, self._closed)

    def close(self) -> None:
        self._closed.set()


@dataclass
class ClipMarker:
    """Yielded by :meth:`ClipSequence.frames` between clips so the pipeline can close a
    command at the clip boundary ("one command per clip")."""

    index: int
    path: str | None
    kind: str  # "start" | "end"


class ClipSequence:
    """Several clips through one stream, each followed by ``gap_s`` of silence, with
    :class:`ClipMarker` items at clip starts and ends (the *synthesized* mode)."""

    def __init__(self, clips: Iterable[str | Path | np.ndarray], *, sample_rate: int = SAMPLE_RATE,
                 frame_ms: int = FRAME_MS, realtime: bool = False, gap_s: float = 1.0,
                 lead_s: float = 0.2) -> None:
        self.clips = list(clips)
        self.sample_rate = sample_rate
        self.frame_samples = _frame_samples(frame_ms, sample_rate)
        self.realtime = realtime
        self.gap_s = gap_s
        self.lead_s = lead_s
        self._closed = threading.Event()
        self.errors: list[tuple[str, str]] = []

    @classmethod
    def from_folder(cls, folder: str | Path, **kw: Any) -> ClipSequence:
        """Every audio file in ``folder`` in natural name order (2.wav before 10.wav)."""
        import re  # noqa: PLC0415

        exts = {".wav", ".flac", ".mp3", ".ogg", ".opus", ".m4a", ".aac", ".webm"}
        files = [p for p in Path(folder).iterdir() if p.suffix.lower() in exts and p.is_file()]

        def key(p: Path) -> list[Any]:
            return [int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", p.name)]

        return cls(sorted(files, key=key), **kw)

    def frames(self) -> Iterator[np.ndarray | ClipMarker]:
        for i, clip in enumerate(self.clips):
            if self._closed.is_set():
                return
            name = None if isinstance(clip, np.ndarray) else str(clip)
            try:
                src = FileSource(clip, sample_rate=self.sample_rate, realtime=self.realtime,
                                 frame_ms=self.frame_samples * 1000 // self.sample_rate,
                                 lead_silence_s=self.lead_s, tail_silence_s=self.gap_s)
            except AudioFileError as exc:
                self.errors.append((name or f"clip {i}", str(exc)))
                yield ClipMarker(i, name, "error")
                continue
            yield ClipMarker(i, name, "start")
            yield from _paced(_chunks(src.samples, self.frame_samples), self.frame_samples,
                              self.sample_rate, self.realtime, self._closed)
            yield ClipMarker(i, name, "end")

    def close(self) -> None:
        self._closed.set()


def _chunks(x: np.ndarray, n: int) -> Iterator[np.ndarray]:
    for i in range(0, len(x), n):
        f = x[i:i + n]
        if len(f) < n:
            f = np.concatenate([f, np.zeros(n - len(f), np.float32)])
        yield f


def _paced(frames: Iterable[np.ndarray], n: int, sr: int, realtime: bool,
           closed: threading.Event) -> Iterator[np.ndarray]:
    if not realtime:
        for f in frames:
            if closed.is_set():
                return
            yield f
        return
    t0 = time.perf_counter()
    for k, f in enumerate(frames):
        if closed.is_set():
            return
        # Frame k is "captured" when its last sample has been spoken, as with a microphone.
        due = t0 + (k + 1) * n / sr
        delay = due - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        yield f


def iter_text_lines(lines: str | Path | Sequence[str]) -> list[str]:
    """Commands of the *text* mode: a file's lines or a list; blanks and ``#`` comments skipped."""
    if isinstance(lines, (str, Path)) and Path(lines).is_file():
        raw = Path(lines).read_text(encoding="utf-8").splitlines()
    elif isinstance(lines, str):
        raw = lines.splitlines()
    else:
        raw = list(lines)
    return [s.strip() for s in raw if s.strip() and not s.strip().startswith("#")]


__all__ = ["FRAME_MS", "NO_MIC_MESSAGE", "SAMPLE_RATE", "AudioDevice", "AudioFileError",
           "AudioSource", "ClipMarker", "ClipSequence", "FileSource", "MicrophoneSource",
           "NoMicrophone", "RingBuffer", "find_input_device", "has_output_device",
           "iter_text_lines", "level_dbfs", "list_devices", "list_input_devices",
           "list_output_devices", "read_audio", "resample", "to_float32", "write_wav"]
