"""Typed events of a voice pipeline run (DESIGN §2: "a pipeline run that emits typed events").

The vocabulary follows Home Assistant's ``assist_pipeline`` (ANCHORS §3.1) so people who know
that design can read our traces: a *run* goes through the stages ``wake_word → stt → intent →
tts`` and emits ``run-start``, ``wake_word-start/end``, ``stt-start``, ``stt-vad-start/end``,
``stt-end``, ``intent-start/end``, ``tts-start/end``, ``error`` and ``run-end``.

Differences from HA, on purpose:

* The wake word is spotted in the *transcript* of a VAD segment (no packaged keyword model knows
  "davinci", DESIGN §6), so ``wake_word-end`` comes after that segment's ``stt-end``.
* ``listening`` carries the indicator state (:class:`ListeningState`) so the UI light, the trace
  pane and the audit log read one stream; HA leaves that to each satellite, and a light that
  goes off while the reply is still playing is a filed bug there (ANCHORS §3.4).
* ``stop`` records a stop word or a barge-in that interrupted speech or cancelled a command.

Every consumer (UI indicator, trace pane, audit log, evaluation) subscribes to the same
:class:`PipelineEvent` objects; no Qt here.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class PipelineStage(StrEnum):
    """The stages of a run, in order (HA ``PipelineStage``)."""

    WAKE_WORD = "wake_word"
    STT = "stt"
    INTENT = "intent"
    TTS = "tts"


PIPELINE_STAGE_ORDER = (PipelineStage.WAKE_WORD, PipelineStage.STT, PipelineStage.INTENT,
                        PipelineStage.TTS)


class EventType(StrEnum):
    """What happened. The string values are the wire format (trace JSONL, audit log)."""

    RUN_START = "run-start"
    RUN_END = "run-end"
    WAKE_WORD_START = "wake_word-start"
    WAKE_WORD_END = "wake_word-end"
    STT_START = "stt-start"
    STT_VAD_START = "stt-vad-start"
    STT_VAD_END = "stt-vad-end"
    STT_END = "stt-end"
    INTENT_START = "intent-start"
    INTENT_END = "intent-end"
    TTS_START = "tts-start"
    TTS_END = "tts-end"
    ERROR = "error"
    # Ours (see the module docstring).
    LISTENING = "listening"
    STOP = "stop"


class ErrorCode(StrEnum):
    """Machine codes of ``error`` events; ``message`` carries the plain words for people."""

    NO_MICROPHONE = "no-microphone"
    NOT_LISTENING = "not-listening"
    AUDIO_SOURCE_FAILED = "audio-source-failed"
    STT_NO_TEXT_RECOGNIZED = "stt-no-text-recognized"
    STT_FAILED = "stt-failed"
    WAKE_WORD_TIMEOUT = "wake-word-timeout"
    SELF_HEARING = "self-hearing-ignored"
    INTENT_FAILED = "intent-failed"
    TTS_FAILED = "tts-failed"
    SPEECH_TOO_LONG = "speech-too-long"


class ListeningState(StrEnum):
    """The listening indicator (issue 6 item 5). Distinct so a surgeon can tell, from across the
    room, whether the console is waiting for "davinci", taking a command, or working on it."""

    OFF = "off"              # voice not running (no microphone, stopped, text mode)
    IDLE = "idle"            # waiting for the wake word (or a push-to-talk press)
    WAKE_HEARD = "wake_heard"
    RECORDING = "recording"  # taking the command
    THINKING = "thinking"    # transcribing / interpreting the command
    DONE = "done"            # the command changed the console
    REJECTED = "rejected"    # not understood, not allowed, or nothing heard
    SPEAKING = "speaking"    # the spoken confirmation is playing (input is guarded)


@dataclass(frozen=True)
class PipelineEvent:
    """One event of one run. ``timestamp`` is wall-clock (``time.time()``) for logs;
    ``mono`` is ``time.perf_counter()`` for latency arithmetic."""

    type: EventType
    run_id: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    timestamp: float = field(default_factory=time.time)
    mono: float = field(default_factory=time.perf_counter)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the audit log and trace write this)."""
        return {"type": str(self.type), "run_id": self.run_id, "timestamp": self.timestamp,
                "data": _jsonable(self.data)}


def _jsonable(value: Any) -> Any:
    if isinstance(value, StrEnum):
        return str(value)
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


__all__ = ["PIPELINE_STAGE_ORDER", "ErrorCode", "EventType", "ListeningState", "PipelineEvent",
           "PipelineStage"]
