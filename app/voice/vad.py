"""Voice activity detection and end-of-speech.

Two layers, so the decision logic is testable without a model:

* a **backend** turns 512-sample windows (32 ms at 16 kHz) into speech probabilities — Silero
  VAD. Silero VAD v6 is the model we ship (manifest id ``silero-vad``, the ONNX file bundled
  with faster-whisper); it runs here through **onnxruntime** with one thread (< 1 ms/window).
  ``sherpa-onnx``'s ``VadModel`` is used instead when the configured file is a Silero export
  sherpa-onnx supports (v4/v5 signatures with an ``sr`` input). It cannot load faster-whisper's
  v6 file: sherpa-onnx prints "Unsupported silero vad model" and calls ``exit()`` — the whole
  process dies, no exception — so :func:`sherpa_onnx_supports` inspects the file's inputs with
  onnxruntime *before* sherpa-onnx ever sees it.
* :class:`EndOfSpeech` is a pure state machine over (window, probability): speech onset,
  end-of-speech silence (default 0.6 s; the reference waited 4 s; HA uses 0.7 s), a minimum
  amount of voiced audio (clicks and coughs are dropped), a hard maximum (end-of-speech that
  never fires is the most common complaint about voice pipelines, ANCHORS §3.5) and a manual
  start/end for push-to-talk. It keeps a pre-roll so the first syllable is not clipped.

:class:`VadSegmenter` composes the two and accepts frames of any size (the sources give 30 ms).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Protocol

import numpy as np

log = logging.getLogger(__name__)

SAMPLE_RATE = 16_000
SILERO_WINDOW = 512  # samples at 16 kHz; Silero v5/v6 accept exactly this
SILERO_CONTEXT = 64  # v6 (faster-whisper's export) wants the previous window's last 64 samples


class VadUnavailable(RuntimeError):
    """The VAD model could not be loaded; the message says why in plain words."""


# ----------------------------------------------------------------------------- backends
class VadBackend(Protocol):
    window: int

    def probability(self, window: np.ndarray) -> float: ...

    def reset(self) -> None: ...


def silero_model_file(path: str | Path | None = None) -> Path:
    """The Silero ONNX file: ``path`` or the manifest's ``silero-vad`` model."""
    if path is not None:
        p = Path(path)
    else:
        from app.runtime.models import model_path  # noqa: PLC0415

        p = Path(model_path("silero-vad"))
    if p.is_dir():
        found = sorted(p.glob("*.onnx"))
        if not found:
            raise VadUnavailable(f"no .onnx file in {p}")
        p = found[0]
    if not p.is_file():
        raise VadUnavailable(f"the Silero VAD model file is missing: {p}")
    return p


def _onnx_inputs(path: Path) -> dict[str, list]:
    import onnxruntime as ort  # noqa: PLC0415

    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    s = ort.InferenceSession(str(path), sess_options=opts, providers=["CPUExecutionProvider"])
    return {i.name: list(i.shape) for i in s.get_inputs()}


def sherpa_onnx_supports(path: str | Path) -> bool:
    """True when sherpa-onnx can load this Silero export (it has an ``sr`` input). Checked with
    onnxruntime because sherpa-onnx exits the process on files it does not support."""
    try:
        return "sr" in _onnx_inputs(Path(path))
    except Exception:
        return False


class SileroOnnx:
    """Silero VAD v6 (faster-whisper's export: inputs ``input[N,576]``, ``h``, ``c``), streamed
    window by window with its LSTM state, exactly as faster-whisper batches it."""

    window = SILERO_WINDOW

    def __init__(self, model: str | Path | None = None, *, threads: int = 1) -> None:
        path = silero_model_file(model)
        try:
            import onnxruntime as ort  # noqa: PLC0415
        except ImportError as exc:
            raise VadUnavailable("onnxruntime is not installed") from exc
        opts = ort.SessionOptions()
        # One thread: the VAD runs every 32 ms forever and must not compete with Whisper or
        # the LLM for the two cores; a window costs well under a millisecond anyway.
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 4
        try:
            self._session = ort.InferenceSession(str(path), sess_options=opts,
                                                 providers=["CPUExecutionProvider"])
        except Exception as exc:
            raise VadUnavailable(f"the Silero VAD model could not be loaded: {exc}") from exc
        names = {i.name for i in self._session.get_inputs()}
        if names != {"input", "h", "c"}:
            raise VadUnavailable(f"{path.name} is not the Silero v6 export this backend runs "
                                 f"(inputs {sorted(names)}); use the sherpa-onnx backend")
        self.path = path
        self.reset()

    def reset(self) -> None:
        self._h = np.zeros((1, 1, 128), dtype=np.float32)
        self._c = np.zeros((1, 1, 128), dtype=np.float32)
        self._context = np.zeros(SILERO_CONTEXT, dtype=np.float32)

    def probability(self, window: np.ndarray) -> float:
        x = np.asarray(window, dtype=np.float32).reshape(-1)
        if len(x) != self.window:
            raise ValueError(f"Silero needs {self.window}-sample windows, got {len(x)}")
        inp = np.concatenate([self._context, x])[None, :]
        out, self._h, self._c = self._session.run(None, {"input": inp, "h": self._h,
                                                         "c": self._c})
        self._context = x[-SILERO_CONTEXT:].copy()
        return float(np.asarray(out).reshape(-1)[0])


class SherpaSilero:
    """Silero through ``sherpa_onnx.VadModel`` (for sherpa-compatible v4/v5 exports only).

    sherpa-onnx answers speech / not speech per window, so the probability is 1.0 or 0.0 and
    :class:`EndOfSpeech` applies the same onset/silence timing on top."""

    def __init__(self, model: str | Path | None = None, *, threshold: float = 0.5,
                 threads: int = 1) -> None:
        path = silero_model_file(model)
        if not sherpa_onnx_supports(path):
            raise VadUnavailable(f"sherpa-onnx cannot load {path.name} (it needs a Silero "
                                 "export with an 'sr' input; faster-whisper's v6 file has none)")
        import sherpa_onnx  # noqa: PLC0415

        cfg = sherpa_onnx.VadModelConfig()
        cfg.silero_vad.model = str(path)
        cfg.silero_vad.threshold = threshold
        # EndOfSpeech does the timing: let sherpa-onnx report raw per-window decisions.
        cfg.silero_vad.min_silence_duration = 0.0
        cfg.silero_vad.min_speech_duration = 0.0
        cfg.silero_vad.window_size = SILERO_WINDOW
        cfg.sample_rate = SAMPLE_RATE
        cfg.num_threads = threads
        self._model = sherpa_onnx.VadModel.create(cfg)
        self.window = int(self._model.window_size())
        self.path = path

    def reset(self) -> None:
        self._model.reset()

    def probability(self, window: np.ndarray) -> float:
        return 1.0 if self._model.is_speech(np.asarray(window, np.float32).tolist()) else 0.0


def make_vad_backend(model: str | Path | None = None, backend: str = "auto") -> VadBackend:
    """``auto``: sherpa-onnx when it supports the file, else onnxruntime (the shipped v6)."""
    path = silero_model_file(model)
    if backend == "sherpa" or (backend == "auto" and sherpa_onnx_supports(path)):
        return SherpaSilero(path)
    if backend in ("auto", "onnxruntime"):
        return SileroOnnx(path)
    raise ValueError(f"unknown VAD backend {backend!r}: use auto, onnxruntime or sherpa")


# ----------------------------------------------------------------------- end of speech
class VadSensitivity(StrEnum):
    """How readily sound counts as speech (the speech-probability threshold)."""

    LOW = "low"          # noisy room: only clear speech opens a command
    DEFAULT = "default"
    HIGH = "high"        # quiet speaker, far microphone


class EndSensitivity(StrEnum):
    """How long a pause ends a command (HA's VadSensitivity: relaxed / default / aggressive)."""

    AGGRESSIVE = "aggressive"
    DEFAULT = "default"
    RELAXED = "relaxed"


_THRESHOLDS = {VadSensitivity.LOW: 0.65, VadSensitivity.DEFAULT: 0.5, VadSensitivity.HIGH: 0.35}
_SILENCES = {EndSensitivity.AGGRESSIVE: 0.35, EndSensitivity.DEFAULT: 0.6,
             EndSensitivity.RELAXED: 1.0}


@dataclass(frozen=True)
class EndpointConfig:
    """Timing of one utterance. All times in seconds of audio."""

    threshold: float = 0.5           # a window with p >= threshold is speech
    neg_threshold: float | None = None  # p < this is silence; in between keeps the last verdict
    onset_s: float = 0.1             # continuous speech that opens an utterance
    silence_s: float = 0.6           # pause that ends it (the reference waited 4 s)
    min_speech_s: float = 0.2        # less voiced audio than this: a click or cough, dropped
    max_s: float = 8.0               # hard cap: end-of-speech that never fires is the #1 complaint
    max_manual_s: float = 15.0       # hard cap while push-to-talk holds the utterance open
    preroll_s: float = 0.5           # audio kept before the onset (the first syllable)
    tail_s: float = 0.3              # silence kept after the last speech (Whisper likes some)

    @property
    def off_threshold(self) -> float:
        return self.neg_threshold if self.neg_threshold is not None else max(
            0.01, self.threshold - 0.15)

    @classmethod
    def from_sensitivity(cls, vad: VadSensitivity | str | float = VadSensitivity.DEFAULT,
                         end: EndSensitivity | str | float = EndSensitivity.DEFAULT,
                         **overrides: float) -> EndpointConfig:
        """``vad``: a preset or a 0..1 sensitivity (1 = most sensitive); ``end``: a preset or
        the end-of-speech silence in seconds."""
        if isinstance(vad, (int, float)) and not isinstance(vad, bool):
            s = min(1.0, max(0.0, float(vad)))
            threshold = round(0.8 - 0.6 * s, 3)  # 0 → 0.8, 0.5 → 0.5, 1 → 0.2
        else:
            threshold = _THRESHOLDS[VadSensitivity(vad)]
        if isinstance(end, (int, float)) and not isinstance(end, bool):
            silence = float(end)
        else:
            silence = _SILENCES[EndSensitivity(end)]
        return replace(cls(threshold=threshold, silence_s=silence), **overrides)


@dataclass
class VadEvent:
    """``start``: an utterance opened; ``end``: it closed (``audio`` holds it, pre-roll and a
    short tail included); ``discard``: it closed with too little speech in it.

    Times are seconds of audio since the stream started: ``t`` when the event was decided,
    ``speech_start``/``speech_end`` the first and last voiced windows."""

    kind: str
    t: float
    speech_start: float
    speech_end: float = 0.0
    reason: str = ""
    voiced_s: float = 0.0
    manual: bool = False
    audio: np.ndarray | None = field(default=None, repr=False)

    @property
    def duration_s(self) -> float:
        return 0.0 if self.audio is None else len(self.audio) / SAMPLE_RATE

    @property
    def eos_wait_s(self) -> float:
        """From the last voiced window to the decision: the end-of-speech cost."""
        return max(0.0, self.t - self.speech_end)


class EndOfSpeech:
    """Pure end-of-speech state machine: feed ``(window, probability)``, get :class:`VadEvent`.

    States: ``silence`` → ``onset`` (speech seen, not yet ``onset_s`` of it) → ``speech`` →
    back to ``silence`` after ``silence_s`` without speech, ``max_s`` in total, a manual end,
    or the end of the stream. ``start()`` opens an utterance at once and holds it open until
    ``end()`` (push-to-talk); the hard cap still applies.
    """

    def __init__(self, config: EndpointConfig | None = None,
                 sample_rate: int = SAMPLE_RATE) -> None:
        self.config = config or EndpointConfig()
        self.sample_rate = sample_rate
        self.reset()

    # -- state ----------------------------------------------------------------------------
    def reset(self) -> None:
        self.state = "silence"
        self.samples = 0                  # samples seen in the stream
        self._pre: deque[np.ndarray] = deque()
        self._pre_n = 0
        self._buf: list[np.ndarray] = []  # the open utterance (pre-roll first)
        self._onset_t = 0.0               # time the first voiced window began
        self._onset_voiced = 0.0
        self._last_speech_end = 0.0
        self._voiced = 0.0
        self._open_t = 0.0                # time the utterance buffer (with pre-roll) begins
        self._is_speech = False
        self._manual = False

    @property
    def t(self) -> float:
        return self.samples / self.sample_rate

    @property
    def in_utterance(self) -> bool:
        return self.state == "speech"

    @property
    def manual(self) -> bool:
        return self._manual

    @property
    def last_speech_end(self) -> float:
        return self._last_speech_end

    @property
    def silence_run_s(self) -> float:
        """How long the open utterance has been silent (0 when none is open)."""
        return self.t - self._last_speech_end if self.state == "speech" else 0.0

    def peek(self) -> np.ndarray | None:
        """The open utterance so far, cut as :meth:`end` would cut it now (for a speculative
        transcription during the pause); None when none is open."""
        if self.state != "speech" or not self._buf:
            return None
        audio = np.concatenate(self._buf)
        keep_until = min(self.t, self._last_speech_end + self.config.tail_s)
        n_keep = int(round((keep_until - self._open_t) * self.sample_rate))
        return audio[:n_keep] if 0 < n_keep < len(audio) else audio

    # -- input ----------------------------------------------------------------------------
    def process(self, window: np.ndarray, prob: float) -> list[VadEvent]:
        cfg = self.config
        window = np.asarray(window, dtype=np.float32).reshape(-1)
        dur = len(window) / self.sample_rate
        t0 = self.t
        self.samples += len(window)
        t1 = self.t
        # Hysteresis: between the two thresholds the previous verdict holds, so one quiet
        # window in the middle of a word does not count as a pause.
        if prob >= cfg.threshold:
            self._is_speech = True
        elif prob < cfg.off_threshold:
            self._is_speech = False
        speech = self._is_speech
        events: list[VadEvent] = []

        if self.state == "silence":
            if speech:
                self.state = "onset"
                self._onset_t = t0
                self._onset_voiced = dur
                self._buf = [*self._pre, window]
                self._open_t = t0 - self._pre_n / self.sample_rate
                self._clear_pre()
                if self._onset_voiced >= cfg.onset_s:
                    events.append(self._open(t1))
            else:
                self._push_pre(window)
            return events

        if self.state == "onset":
            self._buf.append(window)
            if speech:
                self._onset_voiced += dur
                if self._onset_voiced >= cfg.onset_s:
                    events.append(self._open(t1))
            else:
                # A blip shorter than the onset: back to silence, keep it as pre-roll.
                self.state = "silence"
                for w in self._buf:
                    self._push_pre(w)
                self._buf = []
            return events

        # speech
        self._buf.append(window)
        if speech:
            self._voiced += dur
            self._last_speech_end = t1
        if self._manual:
            if t1 - self._open_t >= cfg.max_manual_s:
                events.append(self._close(t1, "max-length"))
            return events
        if t1 - self._last_speech_end >= cfg.silence_s:
            events.append(self._close(t1, "silence"))
        elif t1 - self._onset_t >= cfg.max_s:
            events.append(self._close(t1, "max-length"))
        return events

    def start(self) -> VadEvent:
        """Open an utterance now, whatever the VAD says (push-to-talk pressed). The pre-roll is
        included: people start talking as they press."""
        if self.state == "speech":
            self._manual = True
            return VadEvent("start", self.t, self._onset_t, manual=True)
        if self.state != "onset":
            self._buf = list(self._pre)
            self._open_t = self.t - self._pre_n / self.sample_rate
            self._clear_pre()
        self._manual = True
        self._onset_t = self.t
        self._last_speech_end = self.t
        self._voiced = 0.0
        self.state = "speech"
        return VadEvent("start", self.t, self._onset_t, manual=True)

    def end(self, reason: str = "manual") -> VadEvent | None:
        """Close the open utterance now (push-to-talk released, end of stream, a clip's end).
        Returns None when none is open."""
        if self.state == "onset":
            self.state = "silence"
            for w in self._buf:
                self._push_pre(w)
            self._buf = []
            return None
        if self.state != "speech":
            return None
        return self._close(self.t, reason)

    # -- internals ------------------------------------------------------------------------
    def _open(self, t: float) -> VadEvent:
        self.state = "speech"
        self._voiced = self._onset_voiced
        self._last_speech_end = t
        return VadEvent("start", t, self._onset_t)

    def _close(self, t: float, reason: str) -> VadEvent:
        cfg = self.config
        manual = self._manual
        audio = np.concatenate(self._buf) if self._buf else np.zeros(0, np.float32)
        # Keep at most tail_s of the trailing silence: the rest is just the end-of-speech wait.
        keep_until = min(t, self._last_speech_end + cfg.tail_s)
        n_keep = int(round((keep_until - self._open_t) * self.sample_rate))
        if 0 < n_keep < len(audio):
            audio = audio[:n_keep]
        voiced = self._voiced
        speech_start, speech_end = self._onset_t, self._last_speech_end
        self.state = "silence"
        self._buf = []
        self._manual = False
        self._voiced = 0.0
        self._is_speech = False
        if voiced < cfg.min_speech_s and not manual:
            return VadEvent("discard", t, speech_start, speech_end, reason="too-short",
                            voiced_s=voiced)
        return VadEvent("end", t, speech_start, speech_end, reason=reason, voiced_s=voiced,
                        manual=manual, audio=audio)

    def _push_pre(self, w: np.ndarray) -> None:
        self._pre.append(w)
        self._pre_n += len(w)
        limit = int(self.config.preroll_s * self.sample_rate)
        while self._pre and self._pre_n - len(self._pre[0]) >= limit:
            self._pre_n -= len(self._pre.popleft())

    def _clear_pre(self) -> None:
        self._pre.clear()
        self._pre_n = 0


class VadSegmenter:
    """Backend + :class:`EndOfSpeech` over frames of any size (re-chunked to the model window).

    ``on_probability`` (optional) gets every window's probability (a UI plot, debugging)."""

    def __init__(self, backend: VadBackend | None = None, config: EndpointConfig | None = None,
                 *, on_probability: Callable[[float], None] | None = None) -> None:
        self.backend = backend if backend is not None else make_vad_backend()
        self.eos = EndOfSpeech(config)
        self.on_probability = on_probability
        self._pending = np.zeros(0, dtype=np.float32)
        self.last_probability = 0.0

    @property
    def config(self) -> EndpointConfig:
        return self.eos.config

    @config.setter
    def config(self, value: EndpointConfig) -> None:
        self.eos.config = value

    @property
    def t(self) -> float:
        return self.eos.t

    def reset(self) -> None:
        self.backend.reset()
        self.eos.reset()
        self._pending = np.zeros(0, dtype=np.float32)

    def feed(self, frame: np.ndarray) -> list[VadEvent]:
        self._pending = np.concatenate([self._pending, np.asarray(frame, np.float32).reshape(-1)])
        n = self.backend.window
        events: list[VadEvent] = []
        while len(self._pending) >= n:
            w, self._pending = self._pending[:n], self._pending[n:]
            p = self.backend.probability(w)
            self.last_probability = p
            if self.on_probability is not None:
                self.on_probability(p)
            events.extend(self.eos.process(w, p))
        return events

    def start(self) -> VadEvent:
        return self.eos.start()

    def end(self, reason: str = "manual") -> VadEvent | None:
        return self.eos.end(reason)

    def speech_segments(self, audio: np.ndarray) -> list[VadEvent]:
        """Every closed utterance in ``audio`` (a whole clip), the stream closed at its end."""
        self.reset()
        events = [e for e in self.feed(audio) if e.kind == "end"]
        last = self.end("end-of-stream")
        if last is not None and last.kind == "end":
            events.append(last)
        return events


__all__ = ["SILERO_WINDOW", "EndOfSpeech", "EndSensitivity", "EndpointConfig", "SherpaSilero",
           "SileroOnnx", "VadBackend", "VadEvent", "VadSegmenter", "VadSensitivity",
           "VadUnavailable", "make_vad_backend", "sherpa_onnx_supports", "silero_model_file"]
