"""The voice pipeline: audio → VAD → wake word → command → STT → interpreter → reply → speech.

One :class:`VoicePipeline` runs on a background thread (or the caller's, for tests and
evaluation) in one of three modes (DESIGN §5.2):

* ``realtime``: the microphone. No microphone → an ``error`` event ``no-microphone`` with the
  plain sentence, the indicator goes ``off``, and touch/text keep working.
* ``synthesized``: a folder or list of audio files played through the *same* frame loop (VAD,
  end-of-speech, wake word, STT, self-hearing guard), one command per clip, in order.
* ``text``: lines of a file, straight to the interpreter (the wake word, if typed, is removed).

Everything observable is a typed :class:`~app.voice.events.PipelineEvent`; the UI indicator,
the trace pane, the audit log and the evaluation subscribe to the same stream
(:meth:`VoicePipeline.subscribe`). The last ``keep_runs`` runs keep their event logs.

Order of checks on every utterance, and why:

1. **Stop words first** ("stop", "cancel", "be quiet", "davinci stop"): they stop speech and
   cancel a pending command whatever state the pipeline is in, without the wake word
   (ANCHORS §3.4: "can't tell it to shut up"). While the console speaks, a stop word anywhere
   in the utterance counts (barge-in), except words the console itself is saying.
2. **Self-hearing**: an utterance that began while the console spoke (or in a short tail), or
   that repeats the last reply, is ignored — unless it is addressed to the console with the
   wake word and is not an echo (barge-in with a new command).
3. **Wake word** (unless push-to-talk or ``require_wake=False``), then the command — in the
   same breath or the next utterance (within ``wake_timeout_s``, else ``wake-word-timeout``).

Scheduling on two cores: the pipeline thread does VAD (< 1 ms per 32 ms window) and, per
utterance, Whisper then the interpreter, sequentially — so Whisper never overlaps an LLM call
made for a command, and both take the process-wide heavy-stage lock against background work.
Audio captured meanwhile queues in the source and is caught up afterwards.

Latency: for each command the ``intent-end`` event carries ``latency``: end-of-speech wait,
STT, interpreter and the total from the speaker's last voiced audio to the state change. With
a real-time source that is wall-clock; with files fed faster than real time it is the
end-of-speech wait in audio time plus the measured processing time.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from app.voice.audio import (
    NO_MIC_MESSAGE,
    SAMPLE_RATE,
    AudioSource,
    ClipMarker,
    ClipSequence,
    MicrophoneSource,
    NoMicrophone,
    iter_text_lines,
    level_dbfs,
    write_wav,
)
from app.voice.events import ErrorCode, EventType, ListeningState, PipelineEvent, PipelineStage
from app.voice.hearing_checks import command_latency, hear_wake, second_hearing
from app.voice.pipeline_types import Mode, PipelineConfig, RunLog, Transcriber
from app.voice.vad import VadEvent, VadSegmenter
from app.voice.wakeword import (
    SelfHearingGuard,
    WakeWordSpotter,
    contains_stop_word,
    is_stop_command,
)

log = logging.getLogger(__name__)

Listener = Callable[[PipelineEvent], None]


class VoicePipeline:
    """See the module docstring. ``handler`` is an ``Orchestrator`` (its ``handle_text``) or a
    callable ``handler(text, stt=dict) -> trace record`` with a ``reply`` ``{"ok", "text"}``."""

    def __init__(self, handler: Any, stt: Transcriber | None = None,
                 vad: VadSegmenter | None = None, wake: WakeWordSpotter | None = None,
                 tts: Any | None = None, mode: Mode | str = Mode.REALTIME,
                 config: PipelineConfig | None = None, *, guard: SelfHearingGuard | None = None,
                 on_level: Callable[[float, float], None] | None = None) -> None:
        self.handler = handler
        self.mode = Mode(mode)
        self.config = config or PipelineConfig()
        self._stt = stt
        self._vad = vad
        self.wake = wake or _default_spotter(stt)
        self.guard = guard or SelfHearingGuard()
        if tts is None:
            from app.voice.tts import NullPlayer, Speaker  # noqa: PLC0415

            tts = Speaker("none", player=NullPlayer(), chime=False)
        self.speaker = tts
        self.speaker.on_start = self._on_tts_start
        self.speaker.on_end = self._on_tts_end
        self.on_level = on_level

        self._listeners: list[Listener] = []
        self._lock = threading.RLock()
        self._ids = itertools.count(1)
        self.runs: deque[RunLog] = deque(maxlen=self.config.keep_runs)
        self.latencies: list[dict[str, Any]] = []
        self.listening = ListeningState.OFF
        self.microphone_missing = False  # the last realtime start found no microphone

        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._source: Any = None
        self._requests: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._reset_stream_state()

    # ------------------------------------------------------------------ components
    @property
    def stt(self) -> Transcriber:
        if self._stt is None:
            from app.voice.stt import WhisperSTT  # noqa: PLC0415

            self._stt = WhisperSTT().load()
        return self._stt

    @property
    def vad(self) -> VadSegmenter:
        if self._vad is None:
            self._vad = VadSegmenter()
        return self._vad

    # ------------------------------------------------------------------ events
    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(event)`` for every event (from the pipeline or speech thread: a Qt
        widget must hop to its own thread, e.g. through a queued signal). Returns an
        unsubscribe function."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def _emit(self, etype: EventType, data: dict[str, Any] | None = None,
              run: RunLog | None = None) -> PipelineEvent:
        ev = PipelineEvent(etype, run.id if run else None, dict(data or {}))
        with self._lock:
            if run is not None:
                run.events.append(ev)
            listeners = list(self._listeners)
        for fn in listeners:
            try:
                fn(ev)
            except Exception:  # a broken subscriber must not stop the voice path
                log.exception("pipeline event listener failed")
        return ev

    def _set_listening(self, state: ListeningState, run: RunLog | None = None,
                       **data: Any) -> None:
        with self._lock:
            if state == self.listening:
                return
            self.listening = state
        self._emit(EventType.LISTENING, {"state": state, **data}, run)

    def _error(self, code: ErrorCode, message: str, run: RunLog | None = None,
               **data: Any) -> None:
        self._emit(EventType.ERROR, {"code": code, "message": message, **data}, run)

    def _new_run(self, stage: PipelineStage, trigger: str, **data: Any) -> RunLog:
        run = RunLog(f"v{next(self._ids)}", stage, trigger)
        with self._lock:
            self.runs.append(run)
        self._emit(EventType.RUN_START, {"start_stage": stage, "trigger": trigger,
                                         "mode": self.mode, **data}, run)
        return run

    def _end_run(self, run: RunLog | None, outcome: str, **data: Any) -> None:
        if run is None or run.ended:
            return
        run.ended = True
        run.outcome = outcome
        self._emit(EventType.RUN_END, {"outcome": outcome, **data}, run)
        if self._run is run:
            self._run = None

    # ------------------------------------------------------------------ running
    def _reset_stream_state(self) -> None:
        self._phase = "wait_wake"        # wait_wake | await_command | ptt
        self._run: RunLog | None = None
        self._deadline = 0.0            # audio time by which the awaited command must begin
        self._utt_guarded = False
        self._origin = time.perf_counter()
        self._realtime = False
        self._clip_path: str | None = None
        self._last_level = 0.0
        self._utt_no = 0
        self._utt_serial = 0
        self._spec: tuple[tuple[int, float], Any, float, float, np.ndarray] | None = None
        self._spec_count = 0

    def start(self, source: Any = None) -> threading.Thread:
        """Run in a background thread. ``source``: an AudioSource (realtime/synthesized), a
        folder or list of audio files (synthesized), lines or a text file (text); None → the
        default microphone (realtime)."""
        if self._thread is not None and self._thread.is_alive():
            raise RuntimeError("the voice pipeline is already running")
        self._stop.clear()
        self._thread = threading.Thread(target=self.run, args=(source,), name="visa-voice",
                                        daemon=True)
        self._thread.start()
        return self._thread

    def stop(self, timeout: float = 5.0) -> None:
        """Stop listening and speaking; returns when the thread has finished."""
        self._stop.set()
        src = self._source
        if src is not None:
            try:
                src.close()
            except Exception:
                log.debug("closing the source failed", exc_info=True)
        self.speaker.stop()
        th = self._thread
        if th is not None and th is not threading.current_thread():
            th.join(timeout)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def run(self, source: Any = None) -> list[RunLog]:
        """Run to the end of ``source`` in this thread; returns the kept runs."""
        self._reset_stream_state()
        try:
            if self.mode == Mode.TEXT:
                self._run_text(source)
            else:
                src = self._make_source(source)
                if src is None:
                    return list(self.runs)
                self._consume(src)
        finally:
            self._source = None
            self._set_listening(ListeningState.OFF)
        return list(self.runs)

    def run_clips(self, clips: Iterable[str | Path] | str | Path) -> list[RunLog]:
        """Synthesized mode, blocking: play ``clips`` (files or a folder) through the pipeline."""
        return self.run(clips)

    def _make_source(self, source: Any) -> Any:
        if source is None and self.mode == Mode.REALTIME:
            source = MicrophoneSource()
        if isinstance(source, (str, Path)) and Path(source).is_dir():
            source = ClipSequence.from_folder(source, realtime=self.config.realtime_playback,
                                              gap_s=self.config.clip_gap_s)
        elif isinstance(source, (str, Path)) or (isinstance(source, Sequence)
                                                 and not hasattr(source, "frames")):
            clips = [source] if isinstance(source, (str, Path)) else list(source)
            source = ClipSequence(clips, realtime=self.config.realtime_playback,
                                  gap_s=self.config.clip_gap_s)
        if isinstance(source, MicrophoneSource):
            self.microphone_missing = False
            try:
                source.open()
            except NoMicrophone as exc:
                self.microphone_missing = True
                self._error(ErrorCode.NO_MICROPHONE, str(exc) or NO_MIC_MESSAGE,
                            detail=exc.detail)
                self._set_listening(ListeningState.OFF, message=NO_MIC_MESSAGE)
                return None
        self._source = source
        return source

    def _consume(self, source: AudioSource) -> None:
        self._realtime = bool(getattr(source, "realtime", False))
        self.vad.reset()
        self._origin = time.perf_counter()
        self._set_listening(ListeningState.IDLE)
        try:
            for item in source.frames():
                if self._stop.is_set():
                    break
                if isinstance(item, ClipMarker):
                    self._on_clip_marker(item)
                    continue
                self._on_frame(item)
        except NoMicrophone as exc:
            self._error(ErrorCode.NO_MICROPHONE, str(exc), detail=exc.detail)
        except Exception as exc:  # device unplugged mid-run, decoder failure, …
            log.exception("audio source failed")
            self._error(ErrorCode.AUDIO_SOURCE_FAILED,
                        f"Listening stopped: the audio input failed ({exc}). Touch and text "
                        "commands still work.", run=self._run)
        finally:
            if not self._stop.is_set():
                self._drain_requests()
                ev = self.vad.end("end-of-stream")
                if ev is not None and ev.kind == "end":
                    self._on_speech_end(ev)
            if self._phase == "await_command" and self._run is not None:
                self._error(ErrorCode.WAKE_WORD_TIMEOUT, "No command followed the wake word.",
                            self._run)
                self._end_run(self._run, "timeout")
            elif self._run is not None:
                self._end_run(self._run, "stopped")
            try:
                source.close()
            except Exception:
                log.debug("closing the source failed", exc_info=True)

    # ------------------------------------------------------------------ frame loop
    def _wall_of(self, t_audio: float) -> float:
        return self._origin + t_audio

    def _on_clip_marker(self, m: ClipMarker) -> None:
        if m.kind == "start":
            self._clip_path = m.path
            self._wait_for_speech()
            # Wall clock of this clip's audio: the pacer starts now.
            self._origin = time.perf_counter() - self.vad.t
        elif m.kind == "end":
            ev = self.vad.end("end-of-clip")  # one command per clip
            if ev is not None and ev.kind == "end":
                self._on_speech_end(ev)
        elif m.kind == "error":
            errs = getattr(self._source, "errors", [])
            self._error(ErrorCode.AUDIO_SOURCE_FAILED,
                        f"An audio clip could not be read: {errs[-1][1] if errs else m.path}",
                        clip=m.path)

    def _wait_for_speech(self) -> None:
        """Synthesized/text: let the previous reply finish so runs do not overlap."""
        deadline = time.monotonic() + self.config.wait_for_speech_s
        while self.speaker.is_speaking and time.monotonic() < deadline and \
                not self._stop.is_set():
            time.sleep(0.02)

    def _on_frame(self, frame: np.ndarray) -> None:
        self._drain_requests()
        if self.on_level is not None:
            now = time.monotonic()
            if now - self._last_level >= self.config.level_interval_s:
                self._last_level = now
                try:
                    self.on_level(*level_dbfs(frame))
                except Exception:
                    log.debug("level callback failed", exc_info=True)
        for ev in self.vad.feed(frame):
            if ev.kind == "start":
                self._on_speech_start(ev)
            elif ev.kind == "end":
                self._on_speech_end(ev)
            else:
                self._on_discard(ev)
        if self.config.speculative_stt_s is not None:
            self._maybe_speculate()
        if (self._phase == "await_command" and not self.vad.eos.in_utterance
                and self.vad.eos.state == "silence" and self.vad.t > self._deadline):
            run = self._run
            self._error(ErrorCode.WAKE_WORD_TIMEOUT,
                        "No command followed the wake word; say \u201cdavinci\u201d again.", run)
            self._phase = "wait_wake"
            self._set_listening(ListeningState.IDLE, run)
            self._end_run(run, "timeout")

    # ------------------------------------------------------------------ push-to-talk
    def push_to_talk(self, pressed: bool) -> None:
        """Press: stop speaking and start taking a command now (no wake word). Release: the
        command ends there. Safe from any thread (a hotkey, a foot pedal mapped to a key)."""
        if not self.running and self._source is None:
            if self.microphone_missing:
                self._error(ErrorCode.NO_MICROPHONE, NO_MIC_MESSAGE)
            else:
                self._error(ErrorCode.NOT_LISTENING, "Voice input is not running; touch and "
                            "text commands still work.")
            return
        self._requests.put(("ptt", bool(pressed)))

    def set_sensitivity(self, *, wake: float | None = None, vad: Any = None,
                        end_silence_s: float | None = None) -> None:
        """Adjust while running (a settings panel): ``wake`` 0..1 (higher triggers more
        readily), ``vad`` a preset ("low"/"default"/"high") or 0..1, ``end_silence_s`` the
        pause that ends a command. Applied between frames, on the pipeline thread."""
        self._requests.put(("sensitivity", (wake, vad, end_silence_s)))
        if not self.running:
            self._drain_requests()

    def stop_speaking(self) -> bool:
        """Stop the spoken reply now (a touch button, the Esc key)."""
        was = self.speaker.stop()
        self._emit(EventType.STOP, {"source": "manual", "interrupted_tts": was})
        return was

    def _drain_requests(self) -> None:
        while True:
            try:
                kind, value = self._requests.get_nowait()
            except queue.Empty:
                return
            if kind == "ptt":
                self._ptt(value)
            elif kind == "sensitivity":
                self._apply_sensitivity(*value)

    def _apply_sensitivity(self, wake: float | None, vad: Any,
                           end_silence_s: float | None) -> None:
        from app.voice.vad import EndpointConfig  # noqa: PLC0415

        if wake is not None:
            self.wake.sensitivity = min(1.0, max(0.0, float(wake)))
        cfg = self.vad.config
        if vad is not None:
            cfg = replace(cfg, threshold=EndpointConfig.from_sensitivity(vad).threshold,
                          neg_threshold=None)
        if end_silence_s is not None:
            cfg = replace(cfg, silence_s=max(0.1, float(end_silence_s)))
        self.vad.config = cfg
        self._emit(EventType.LISTENING, {"state": self.listening, "settings": {
            "wake_sensitivity": self.wake.sensitivity, "vad_threshold": cfg.threshold,
            "end_silence_s": cfg.silence_s}})

    def _ptt(self, pressed: bool) -> None:
        if pressed:
            if self._phase == "ptt":
                return
            interrupted = self.speaker.stop()  # barge-in: the user wants to talk now
            if interrupted:
                self._emit(EventType.STOP, {"source": "push-to-talk", "interrupted_tts": True},
                           self._run)
            if self._run is not None:
                self._end_run(self._run, "superseded")
            run = self._new_run(PipelineStage.STT, "push-to-talk")
            self._run = run
            self._phase = "ptt"
            self._utt_guarded = False
            ev = self.vad.start()
            self._set_listening(ListeningState.RECORDING, run)
            self._emit(EventType.STT_VAD_START, {"t": round(ev.t, 3), "manual": True}, run)
        else:
            if self._phase != "ptt":
                return
            ev = self.vad.end("manual")
            if ev is not None and ev.kind == "end":
                self._on_speech_end(ev)

    # ------------------------------------------------------------------ utterances
    def _maybe_speculate(self) -> None:
        eos = self.vad.eos
        if not eos.in_utterance or eos.manual or self._spec_count >= self.config.max_speculations:
            return
        if eos.silence_run_s < (self.config.speculative_stt_s or 0.0):
            return
        key = (self._utt_serial, eos.last_speech_end)
        if self._spec is not None and self._spec[0] == key:
            return
        audio = eos.peek()
        if audio is None:
            return
        if self._phase == "wait_wake" and self.config.require_wake and \
                not self.wake.passes_prefilter(audio):
            return
        self._spec_count += 1
        t0 = time.perf_counter()
        try:
            tr = self._transcribe(audio)
        except Exception:  # the endpoint will try again and report it
            log.debug("speculative transcription failed", exc_info=True)
            return
        self._spec = (key, tr, eos.silence_run_s, (time.perf_counter() - t0) * 1000, audio)

    def _transcribe(self, audio: np.ndarray) -> Any:
        # While the console waits for its name, only a hearing that starts with it matters:
        # the STT's optional extra work on other talk is skipped (WhisperSTT.domain_needs_wake).
        if hasattr(self.stt, "domain_needs_wake"):
            self.stt.domain_needs_wake = self._phase == "wait_wake" and self.config.require_wake
        return self.stt.transcribe(audio)

    def _take_speculation(self, ev: VadEvent) -> tuple[Any, float, float, np.ndarray] | None:
        spec, self._spec = self._spec, None
        if spec is None or spec[0] != (self._utt_serial, ev.speech_end):
            return None  # speech resumed after it: the transcript is stale
        return spec[1], spec[2], spec[3], spec[4]

    def _on_speech_start(self, ev: VadEvent) -> None:
        self._utt_serial += 1
        self._spec = None
        self._spec_count = 0
        self._utt_guarded = self.guard.is_guarded()
        if self._phase == "ptt":
            return
        if self._phase == "await_command" and self._run is not None:
            self._emit(EventType.STT_VAD_START, {"t": round(ev.speech_start, 3)}, self._run)
            return
        if self.config.require_wake:
            run = self._new_run(PipelineStage.WAKE_WORD, "voice")
            self._run = run
            self._emit(EventType.WAKE_WORD_START, {}, run)
        else:
            run = self._new_run(PipelineStage.STT, "voice")
            self._run = run
            if not self._utt_guarded:
                self._set_listening(ListeningState.RECORDING, run)
        self._emit(EventType.STT_VAD_START, {"t": round(ev.speech_start, 3)}, run)

    def _on_discard(self, ev: VadEvent) -> None:
        run = self._run
        if run is None:
            return
        self._emit(EventType.STT_VAD_END, {"t": round(ev.t, 3), "discarded": ev.reason,
                                           "voiced_s": round(ev.voiced_s, 3)}, run)
        if self._phase == "await_command":
            return  # still waiting for the command
        if not self.config.require_wake and self.listening == ListeningState.RECORDING:
            self._set_listening(ListeningState.IDLE, run)
        self._end_run(run, "discarded")

    def _on_speech_end(self, ev: VadEvent) -> None:
        t_endpoint = time.perf_counter()
        phase = self._phase
        run = self._run
        if run is None:  # an utterance with no run (e.g. it began before a reset)
            run = self._new_run(PipelineStage.STT if phase != "wait_wake" or
                                not self.config.require_wake else PipelineStage.WAKE_WORD,
                                "voice")
            self._run = run
        audio = ev.audio if ev.audio is not None else np.zeros(0, np.float32)
        self._emit(EventType.STT_VAD_END, {
            "t": round(ev.t, 3), "speech_start": round(ev.speech_start, 3),
            "speech_end": round(ev.speech_end, 3), "reason": ev.reason,
            "duration_s": round(ev.duration_s, 3), "voiced_s": round(ev.voiced_s, 3),
            "eos_wait_ms": round(ev.eos_wait_s * 1000, 1)}, run)
        wav = self._record(run, audio)
        expecting_command = phase in ("await_command", "ptt") or not self.config.require_wake
        if expecting_command and not self._utt_guarded:
            self._set_listening(ListeningState.THINKING, run)

        if phase == "wait_wake" and self.config.require_wake and \
                not self.wake.passes_prefilter(audio):
            self._emit(EventType.WAKE_WORD_END, {"detected": False, "reason": "prefilter"}, run)
            self._end_run(run, "no-wake")
            return

        # ---- speech to text (already done during the pause, if the speaker did not resume)
        spec = self._take_speculation(ev)
        self._emit(EventType.STT_START, {"model": getattr(self.stt, "model_name", "?"),
                                         "audio_s": round(len(audio) / SAMPLE_RATE, 3),
                                         "speculative": spec is not None}, run)
        if spec is not None:
            tr = spec[0]
            ready = (spec[1], spec[2])  # (silence when it started, its wall time in ms)
            stt_audio = spec[3]  # what Whisper heard (the verifier reuses its encoding)
        else:
            ready = None
            stt_audio = audio
            try:
                tr = self._transcribe(audio)
            except Exception as exc:
                log.exception("speech-to-text failed")
                self._error(ErrorCode.STT_FAILED, f"Speech recognition failed ({exc}).", run)
                self._finish_rejected(run, "stt-failed", phase)
                return
        text = (tr.text or "").strip()
        run.transcript = text
        self._emit(EventType.STT_END, {"text": text, "raw_text": getattr(tr, "raw_text", text),
                                       "ms": tr.ms, "dropped": list(getattr(tr, "dropped", [])),
                                       "level_dbfs": round(getattr(tr, "level_dbfs", 0.0), 1),
                                       "audio": wav or self._clip_path,
                                       "speculative": spec is not None}, run)

        # ---- 1. stop words, before anything else. (A push-to-talk press is the user's own
        # deliberate act: never taken for the console hearing itself.)
        ptt = phase == "ptt"
        guarded = not ptt and (self._utt_guarded or self.guard.is_guarded())
        if text and (is_stop_command(text) or
                     (guarded and contains_stop_word(text, ignore=self.guard.last_text))):
            interrupted = self.speaker.stop()
            cancelled = phase in ("await_command", "ptt")
            self._emit(EventType.STOP, {"text": text, "interrupted_tts": interrupted,
                                        "cancelled": cancelled}, run)
            self._phase = "wait_wake"
            self._set_listening(ListeningState.IDLE, run)
            self._end_run(run, "stop")
            return

        # ---- 2. the console hearing itself
        if text and (guarded or (not ptt and self.guard.is_echo(text))):
            m = self.wake.match(text)
            barge_in = (guarded and m.detected and not self.guard.is_echo(text)
                        and not self.wake.match(self.guard.last_text).detected)
            if not barge_in:
                self._error(ErrorCode.SELF_HEARING, "Ignored: the console heard itself.", run,
                            text=text)
                if phase == "wait_wake":
                    self._end_run(run, "self-hearing")
                return
            self.speaker.stop()
            self._emit(EventType.STOP, {"source": "barge-in", "interrupted_tts": True}, run)

        # ---- 3. nothing recognised
        if not text:
            if phase == "wait_wake" and self.config.require_wake:
                self._emit(EventType.WAKE_WORD_END, {"detected": False, "reason": "no-text"},
                           run)
                self._end_run(run, "no-wake")
                return
            if self.config.empty_command != "pass":
                self._error(ErrorCode.STT_NO_TEXT_RECOGNIZED, "I did not catch that.", run,
                            dropped=list(getattr(tr, "dropped", [])))
                self._finish_rejected(run, "no-text", phase)
                return

        # ---- 4. wake word
        if phase == "wait_wake" and self.config.require_wake:
            heard = hear_wake(self.wake, text, tr, stt_audio, ev.speech_start,
                              self.config.wake_min_logprob)
            m = heard.match
            if heard.text != text:  # noise hid the name from the transcript, not the decode
                text = run.transcript = heard.text
            self._emit(EventType.WAKE_WORD_END, heard.event, run)
            if not m.detected:
                self._end_run(run, "no-wake" if m.reason != "cooldown" else "cooldown")
                return
            self._set_listening(ListeningState.WAKE_HEARD, run, score=round(m.score, 3))
            if m.wake_only:
                self._chime("wake")
                self._phase = "await_command"
                self._deadline = self.vad.t + self.config.wake_timeout_s
                self._set_listening(ListeningState.RECORDING, run)
                return
            command = m.command
        else:
            command = self.wake.strip_wake(text) if text else ""
            if text and not command.strip():
                # "davinci" again while we wait: keep waiting, from now.
                self._phase = "await_command"
                self._deadline = self.vad.t + self.config.wake_timeout_s
                self._set_listening(ListeningState.RECORDING, run)
                return
        self._phase = "wait_wake"
        self._set_listening(ListeningState.THINKING, run)
        if command.strip():
            tr, command = self._second_opinion(stt_audio, tr, command, run)
        self._intent(run, command, tr, ev, t_endpoint, wav, ready)

    def _finish_rejected(self, run: RunLog, outcome: str, phase: str) -> None:
        self._phase = "wait_wake"
        if phase in ("await_command", "ptt") or not self.config.require_wake:
            self._set_listening(ListeningState.REJECTED, run)
            self._chime("error")
        self._set_listening(ListeningState.IDLE, run)
        self._end_run(run, outcome)

    def _second_opinion(self, audio: np.ndarray | None, tr: Any, command: str, run: RunLog
                        ) -> tuple[Any, str]:
        tr2, new, event = second_hearing(self.stt, self.wake, audio, tr)
        if new is None or event is None:
            return tr2, command
        run.transcript = event["text"]
        self._emit(EventType.STT_END, event, run)
        return tr2, new

    # ------------------------------------------------------------------ intent and reply
    def _call_handler(self, text: str, stt: dict[str, Any] | None) -> dict[str, Any]:
        fn = getattr(self.handler, "handle_text", None)
        if fn is not None:
            return fn(text, stt=stt)
        return self.handler(text, stt=stt)

    def _intent(self, run: RunLog, command: str, tr: Any, ev: VadEvent | None,
                t_endpoint: float | None, wav: str | None,
                speculated: tuple[float, float] | None = None) -> None:
        run.command = command
        self._emit(EventType.INTENT_START, {"text": command}, run)
        stt_info = None
        if tr is not None:
            stt_info = {"text": command, "ms": tr.ms, "audio": wav or self._clip_path,
                        "raw_text": getattr(tr, "raw_text", command),
                        "logprob": getattr(tr, "logprob", None)}
            if getattr(tr, "second", None):
                stt_info["second"] = dict(tr.second)
            if getattr(tr, "domain", None):
                stt_info["domain"] = dict(tr.domain)
        t0 = time.perf_counter()
        try:
            record = self._call_handler(command, stt_info) or {}
        except Exception as exc:
            log.exception("the interpreter failed")
            self._error(ErrorCode.INTENT_FAILED, f"That command failed ({exc}); nothing was "
                        "changed.", run)
            self._finish_rejected(run, "intent-failed", "ptt")
            return
        t_state = time.perf_counter()
        reply = record.get("reply") or {}
        if not isinstance(reply, dict):  # an Orchestrator Reply object
            reply = {"ok": getattr(reply, "ok", True), "text": getattr(reply, "text", "")}
        ok = bool(reply.get("ok", True))
        latency = None
        if ev is not None and t_endpoint is not None and tr is not None:
            latency = command_latency(
                eos_wait_s=ev.eos_wait_s, stt_ms=float(tr.ms), t_endpoint=t_endpoint,
                t_handler=t0, t_state=t_state, speculated=speculated,
                wall_total_ms=(t_state - self._wall_of(ev.speech_end)) * 1000
                if self._realtime else None)
            run.latency = latency
            with self._lock:
                self.latencies.append(latency)
        run.record = record
        self._emit(EventType.INTENT_END, {
            "ok": ok, "reply": reply.get("text", ""), "id": record.get("id"),
            "tier": record.get("tier"), "flow": record.get("flow"),
            "state": record.get("state"), "latency": latency}, run)
        self._set_listening(ListeningState.DONE if ok else ListeningState.REJECTED, run)
        if self._run is run:  # from here the run lives on through the reply (speech thread)
            self._run = None
        text = str(reply.get("text", "")).strip()
        outcome = "done" if ok else "rejected"
        if self.config.speak_replies and text:
            self.speaker.say(text, tag=(run, outcome))
            return
        self._chime("done" if ok else "error")
        self._set_listening(ListeningState.IDLE, run)
        self._end_run(run, outcome)

    # Speech callbacks run on the speech thread.
    @staticmethod
    def _tag(utt: Any) -> tuple[RunLog | None, str]:
        tag = getattr(utt, "tag", None)
        return tag if isinstance(tag, tuple) and len(tag) == 2 else (None, "")

    def _on_tts_start(self, utt: Any) -> None:
        run, _ = self._tag(utt)
        if utt.spoken:
            self.guard.speaking(utt.text)
        self._emit(EventType.TTS_START, {"text": utt.text, "engine": utt.engine,
                                         "duration_s": round(utt.duration_s, 2),
                                         "synth_ms": utt.synth_ms, "audible": utt.spoken}, run)
        if utt.spoken:
            self._set_listening(ListeningState.SPEAKING, run)

    def _on_tts_end(self, utt: Any) -> None:
        run, outcome = self._tag(utt)
        self.guard.done()
        self._emit(EventType.TTS_END, {"interrupted": utt.interrupted}, run)
        with self._lock:
            idle = self.listening in (ListeningState.SPEAKING, ListeningState.DONE,
                                      ListeningState.REJECTED)
        if idle:
            self._set_listening(ListeningState.IDLE, run)
        if run is not None:
            self._end_run(run, outcome)

    def _chime(self, kind: str) -> None:
        dur = 0.0
        try:
            dur = float(self.speaker.chime(kind) or 0.0)
        except Exception:
            log.debug("chime failed", exc_info=True)
        mute = getattr(self._source, "mute", None)
        if dur > 0 and mute is not None:
            mute(dur + self.config.chime_mute_tail_s)  # never transcribe our own "ding"

    def _record(self, run: RunLog, audio: np.ndarray) -> str | None:
        if self.config.record_dir is None or len(audio) == 0:
            return None
        self._utt_no += 1
        try:
            p = write_wav(Path(self.config.record_dir) / f"{run.id}-{self._utt_no}.wav", audio)
        except OSError as exc:
            log.warning("could not write the debug recording: %s", exc)
            return None
        run.wavs.append(str(p))
        return str(p)

    # ------------------------------------------------------------------ text mode
    def _run_text(self, source: Any) -> None:
        lines = iter_text_lines(source if source is not None else [])
        self._set_listening(ListeningState.IDLE)
        for line in lines:
            if self._stop.is_set():
                break
            self._wait_for_speech()
            self.text_command(line)
        self._wait_for_speech()

    def text_command(self, line: str) -> RunLog:
        """One typed command through the same stop-word / intent / reply path."""
        run = self._new_run(PipelineStage.INTENT, "text")
        self._run = run
        run.transcript = line
        if is_stop_command(line):
            interrupted = self.speaker.stop()
            self._emit(EventType.STOP, {"text": line, "interrupted_tts": interrupted}, run)
            self._end_run(run, "stop")
            return run
        command = self.wake.strip_wake(line)
        self._set_listening(ListeningState.THINKING, run)
        self._intent(run, command, None, None, None, None)
        return run


def _default_spotter(stt: Any) -> WakeWordSpotter:
    """The "davinci" spotter, with the acoustic verifier when ``stt`` is Whisper (DESIGN §6: a
    false wake per hour at most needs it; see :mod:`app.voice.wake_verify`)."""
    from app.voice.stt import WhisperSTT  # noqa: PLC0415

    if isinstance(stt, WhisperSTT):
        from app.voice.wake_verify import WhisperWakeVerifier  # noqa: PLC0415

        return WakeWordSpotter(verifier=WhisperWakeVerifier(stt))
    return WakeWordSpotter()


# the factory imports this module: re-exported last, where callers find it
from app.voice.pipeline_factory import make_pipeline  # noqa: E402

__all__ = ["Mode", "PipelineConfig", "RunLog", "Transcriber", "VoicePipeline", "make_pipeline"]
