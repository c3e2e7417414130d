"""Spoken confirmations, chimes, and a stop that always works.

Engines, best first (``engine="auto"``):

1. **Piper** (``piper-tts`` with the ``piper-joe-medium`` voice, ~0.25 real-time factor).
   piper-tts is GPL-3.0 and would be linked into our (Apache-2.0) process, so it is an
   *optional extra* (requirements/optional-tts.txt) that we import only if the user installed
   it; nothing here depends on it.
2. **espeak-ng as a separate program** (``espeak-ng --stdout``), when the system has it. It is
   GPL-3.0 too, but we run it as an independent executable and read its WAV output from a pipe
   — arm's-length communication between separate programs, not a combined work — and we do not
   ship it. Robotic, but a voice.
3. **No speech**: the reply text in the status strip plus a chime (a permissive path with no
   third-party engine at all).

Chimes are synthesised sine tones (no audio files to license), optional, with adjustable volume.
Playback goes through ``sounddevice`` when an output device exists and is silently skipped
otherwise (the text still shows). ``stop()`` cuts speech off at once: the pipeline calls it
for "stop"/"cancel" and whenever the user talks over the console (barge-in).

Speech runs on its own thread so the pipeline keeps listening — that is what makes barge-in
possible — and reports start/end through callbacks (the pipeline turns them into
``tts-start``/``tts-end`` events and guards the microphone meanwhile).
"""

from __future__ import annotations

import io
import logging
import shutil
import subprocess
import threading
import time
import wave
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

log = logging.getLogger(__name__)


# -------------------------------------------------------------------------------- engines
class TtsEngine(Protocol):
    name: str

    def synthesize(self, text: str) -> tuple[np.ndarray, int] | None:
        """Mono float32 audio and its sample rate, or None when nothing can be said."""
        ...


class TtsUnavailable(RuntimeError):
    pass


class PiperEngine:
    """Piper, loaded on first use (~65 MB ONNX voice)."""

    name = "piper"

    def __init__(self, model: str | None = None, *, length_scale: float | None = None,
                 lock: Any = "default", lock_timeout_s: float = 2.0) -> None:
        try:
            import piper  # noqa: F401, PLC0415
        except ImportError as exc:
            raise TtsUnavailable("piper-tts is not installed (optional extra, GPL-3.0)") from exc
        self.model = model
        self.length_scale = length_scale
        self.lock_timeout_s = lock_timeout_s
        if lock == "default":
            from app.runtime.scheduler import HEAVY_STAGE_LOCK  # noqa: PLC0415

            lock = HEAVY_STAGE_LOCK
        self.lock = lock
        self._voice: Any = None
        self._load_lock = threading.Lock()

    def load(self) -> PiperEngine:
        with self._load_lock:
            if self._voice is None:
                from piper import PiperVoice  # noqa: PLC0415

                path = self.model
                if path is None:
                    from app.runtime.models import model_path  # noqa: PLC0415

                    path = str(model_path("piper-joe-medium"))
                self._voice = PiperVoice.load(str(path))
        return self

    def synthesize(self, text: str) -> tuple[np.ndarray, int] | None:
        self.load()
        cfg = None
        if self.length_scale is not None:
            from piper import SynthesisConfig  # noqa: PLC0415

            cfg = SynthesisConfig(length_scale=self.length_scale)
        # Synthesis is a short burst of ONNX compute: take the heavy-stage lock briefly so it
        # does not land in the middle of an LLM generation; if the lock stays busy, skip speech
        # (the text is on screen) rather than make the console wait.
        got = self.lock is None or self.lock.acquire("tts", timeout=self.lock_timeout_s)
        if not got:
            log.info("TTS skipped: %s holds the heavy-stage lock", self.lock.holder)
            return None
        try:
            chunks = list(self._voice.synthesize(text, syn_config=cfg))
        finally:
            if self.lock is not None:
                self.lock.release()
        if not chunks:
            return None
        audio = np.concatenate([c.audio_float_array.astype(np.float32) for c in chunks])
        return audio, int(chunks[0].sample_rate)


class EspeakEngine:
    """espeak-ng run as a separate process (see the module docstring for why)."""

    name = "espeak-ng"

    def __init__(self, voice: str = "en-us", rate_wpm: int = 165,
                 executable: str | None = None) -> None:
        exe = executable or shutil.which("espeak-ng") or shutil.which("espeak")
        if exe is None:
            raise TtsUnavailable("espeak-ng is not installed")
        self.exe, self.voice, self.rate_wpm = exe, voice, rate_wpm

    def synthesize(self, text: str) -> tuple[np.ndarray, int] | None:
        try:
            out = subprocess.run([self.exe, "-v", self.voice, "-s", str(self.rate_wpm),
                                  "--stdout", text], capture_output=True, timeout=10,
                                 check=True).stdout
            with wave.open(io.BytesIO(out), "rb") as w:
                sr, n = w.getframerate(), w.getnframes()
                pcm = np.frombuffer(w.readframes(n), dtype="<i2")
        except (OSError, subprocess.SubprocessError, wave.Error, EOFError) as exc:
            log.warning("espeak-ng failed: %s", exc)
            return None
        return pcm.astype(np.float32) / 32768.0, sr


class SilentEngine:
    """No speech: the reply is shown, and the chime says done/error."""

    name = "none"

    def synthesize(self, text: str) -> tuple[np.ndarray, int] | None:
        return None


def make_engine(engine: str = "auto") -> TtsEngine:
    """``auto`` | ``piper`` | ``espeak`` | ``none``; ``auto`` takes the best one installed."""
    if engine in ("none", "off", "silent", "chime"):
        return SilentEngine()
    if engine in ("auto", "piper"):
        try:
            e = PiperEngine()
            from app.runtime.models import model_path  # noqa: PLC0415

            model_path("piper-joe-medium")  # the voice must be installed too
            return e
        except Exception as exc:
            if engine == "piper":
                raise TtsUnavailable(str(exc)) from exc
            log.info("Piper unavailable (%s); trying espeak-ng", exc)
    if engine in ("auto", "espeak", "espeak-ng"):
        try:
            return EspeakEngine()
        except TtsUnavailable:
            if engine != "auto":
                raise
    if engine == "auto":
        return SilentEngine()
    raise ValueError(f"unknown TTS engine {engine!r}: use auto, piper, espeak or none")


# --------------------------------------------------------------------------------- chimes
CHIME_RATE = 22_050


def chime_tone(kind: str = "wake", volume: float = 0.4, sample_rate: int = CHIME_RATE
               ) -> np.ndarray:
    """``wake`` (rising), ``done`` (one bright tone), ``error`` (falling), as float32.

    Short (≤ 0.25 s) with 5 ms fades so there is no click; the microphone is muted for its
    length so it is never transcribed (Willow transcribed its own "ding" in 25–50 % of runs)."""
    notes = {"wake": [(880.0, 0.08), (1320.0, 0.1)], "done": [(1320.0, 0.09)],
             "error": [(523.0, 0.09), (392.0, 0.12)]}.get(kind, [(880.0, 0.08)])
    parts = []
    for f, d in notes:
        t = np.arange(int(d * sample_rate)) / sample_rate
        tone = np.sin(2 * np.pi * f * t) * 0.8 + 0.2 * np.sin(4 * np.pi * f * t)
        fade = min(len(t) // 2, int(0.005 * sample_rate))
        env = np.ones(len(t))
        env[:fade] = np.linspace(0, 1, fade)
        env[-fade:] = np.linspace(1, 0, fade)
        parts.append(tone * env)
    return (np.concatenate(parts) * max(0.0, min(1.0, volume))).astype(np.float32)


# -------------------------------------------------------------------------------- players
class Player(Protocol):
    def play(self, audio: np.ndarray, sample_rate: int, stop: threading.Event) -> bool:
        """Play to the end (True) or until ``stop`` is set (False). Blocking."""
        ...


class DevicePlayer:
    """sounddevice output in 50 ms blocks, so a stop takes effect within one block."""

    def __init__(self, device: int | str | None = None) -> None:
        self.device = device

    def play(self, audio: np.ndarray, sample_rate: int, stop: threading.Event) -> bool:
        import sounddevice as sd  # noqa: PLC0415

        block = max(1, sample_rate // 20)
        with sd.OutputStream(samplerate=sample_rate, channels=1, dtype="float32",
                             device=self.device) as stream:
            for i in range(0, len(audio), block):
                if stop.is_set():
                    stream.abort()
                    return False
                stream.write(np.ascontiguousarray(audio[i:i + block], dtype=np.float32))
        return not stop.is_set()


class NullPlayer:
    """No output device. ``simulate=True`` waits as long as the audio would play (tests of
    barge-in and the self-hearing guard); otherwise returns at once."""

    def __init__(self, simulate: bool = False) -> None:
        self.simulate = simulate
        self.played: list[float] = []  # durations, for tests

    def play(self, audio: np.ndarray, sample_rate: int, stop: threading.Event) -> bool:
        dur = len(audio) / max(1, sample_rate)
        self.played.append(dur)
        if not self.simulate:
            return True
        return not stop.wait(dur)


def default_player() -> Player:
    from app.voice.audio import has_output_device  # noqa: PLC0415

    return DevicePlayer() if has_output_device() else NullPlayer()


# -------------------------------------------------------------------------------- speaker
@dataclass
class Utterance:
    text: str
    engine: str
    duration_s: float = 0.0
    synth_ms: float = 0.0
    interrupted: bool = False
    spoken: bool = False  # False: nothing was audible (no engine / no device / skipped)
    tag: Any = None       # the caller's own reference (the pipeline's run)


SpeechCallback = Callable[[Utterance], None]


class Speaker:
    """Says replies and plays chimes without blocking the caller.

    ``on_start(utt)`` fires when audio is about to play (or at once when there is nothing to
    play), ``on_end(utt)`` when it finished or was stopped; both on the speech thread."""

    def __init__(self, engine: str | TtsEngine = "auto", *, player: Player | None = None,
                 chime: bool = True, chime_volume: float = 0.4, volume: float = 1.0,
                 on_start: SpeechCallback | None = None,
                 on_end: SpeechCallback | None = None) -> None:
        self.engine: TtsEngine = make_engine(engine) if isinstance(engine, str) else engine
        self.player: Player = player if player is not None else default_player()
        self.chime_enabled = chime
        self.chime_volume = chime_volume
        self.volume = volume
        self.on_start = on_start
        self.on_end = on_end
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._speaking = False

    @property
    def engine_name(self) -> str:
        return self.engine.name

    @property
    def is_speaking(self) -> bool:
        return self._speaking

    def say(self, text: str, *, block: bool = False, tag: Any = None) -> threading.Thread | None:
        """Speak ``text`` (interrupting anything still playing). ``tag`` comes back in the
        callbacks' :class:`Utterance`."""
        if not text or not text.strip():
            return None
        self.stop()
        with self._lock:
            self._stop = threading.Event()
            stop = self._stop
            self._speaking = True
            th = threading.Thread(target=self._run, args=(text, stop, tag), name="visa-tts",
                                  daemon=True)
            self._thread = th
            th.start()
        if block:
            th.join()
        return th

    def _run(self, text: str, stop: threading.Event, tag: Any = None) -> None:
        utt = Utterance(text, self.engine.name, tag=tag)
        try:
            t0 = time.perf_counter()
            try:
                res = None if stop.is_set() else self.engine.synthesize(text)
            except Exception:
                log.exception("speech synthesis failed")
                res = None
            utt.synth_ms = round((time.perf_counter() - t0) * 1000, 1)
            if res is not None and len(res[0]) and not stop.is_set():
                audio, sr = res
                utt.duration_s = len(audio) / sr
                utt.spoken = (not isinstance(self.player, NullPlayer)
                              or self.player.simulate)
                self._emit(self.on_start, utt)
                try:
                    ok = self.player.play(np.clip(audio * self.volume, -1, 1), sr, stop)
                except Exception as exc:  # device vanished mid-sentence
                    log.warning("speech playback failed: %s", exc)
                    ok = True
                utt.interrupted = not ok or stop.is_set()
            else:
                utt.interrupted = stop.is_set()
                self._emit(self.on_start, utt)
        finally:
            self._speaking = False
            self._emit(self.on_end, utt)

    def chime(self, kind: str = "wake") -> float:
        """Play a chime (asynchronously); returns its duration in seconds (0 when disabled) so
        the caller can mute the microphone for that long."""
        if not self.chime_enabled or self.chime_volume <= 0:
            return 0.0
        tone = chime_tone(kind, self.chime_volume)
        ev = threading.Event()

        def run() -> None:
            try:
                self.player.play(tone, CHIME_RATE, ev)
            except Exception as exc:
                log.debug("chime failed: %s", exc)

        threading.Thread(target=run, name="visa-chime", daemon=True).start()
        return len(tone) / CHIME_RATE

    def stop(self) -> bool:
        """Stop speaking now. True when something was playing."""
        with self._lock:
            th, was = self._thread, self._speaking
            self._stop.set()
        if th is not None and th is not threading.current_thread():
            th.join(timeout=1.0)
        return was

    def wait(self, timeout: float | None = None) -> None:
        th = self._thread
        if th is not None:
            th.join(timeout)

    @staticmethod
    def _emit(cb: SpeechCallback | None, utt: Utterance) -> None:
        if cb is not None:
            try:
                cb(utt)
            except Exception:
                log.exception("speech callback failed")


__all__ = ["CHIME_RATE", "DevicePlayer", "EspeakEngine", "NullPlayer", "PiperEngine", "Player",
           "SilentEngine", "Speaker", "TtsEngine", "TtsUnavailable", "Utterance", "chime_tone",
           "default_player", "make_engine"]
