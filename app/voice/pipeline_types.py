"""The voice pipeline's types: its modes, what it needs from speech-to-text, its settings and
the log of one run (``app.voice.pipeline`` re-exports them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from app.voice.events import EventType, PipelineEvent, PipelineStage


class Mode(StrEnum):
    REALTIME = "realtime"
    SYNTHESIZED = "synthesized"
    TEXT = "text"


class Transcriber(Protocol):
    """What the pipeline needs from speech-to-text (``WhisperSTT`` or a test double)."""

    model_name: str

    def transcribe(self, audio: np.ndarray) -> Any:  # -> stt.Transcript
        ...


@dataclass(frozen=True)
class PipelineConfig:
    require_wake: bool = True          # False: every utterance is a command (eval clips)
    wake_timeout_s: float = 5.0        # after "davinci" alone, the command must begin within
    # A wake word in a transcript Whisper itself doubts is not trusted: on garbled speech the
    # vocabulary prompt can make it write "davinci" (measured: a false wake at -1.47; true
    # wakes on the dev split, natural and robotic voices, all above -1.03).
    wake_min_logprob: float = -1.2
    speak_replies: bool = True
    empty_command: str = "reject"      # "reject": nothing heard → error; "pass": send "" on
                                       # (DESIGN §4: an empty command re-selects the agent)
    record_dir: Path | None = None     # write every utterance as a WAV (debugging)
    keep_runs: int = 10
    realtime_playback: bool = False    # synthesized mode: feed clips at the speed of sound
    clip_gap_s: float = 1.0            # silence after each clip (≥ the end-of-speech pause)
    wait_for_speech_s: float = 15.0    # synthesized/text: let a reply finish before the next
    chime_mute_tail_s: float = 0.1
    # Transcribe during the pause, after this much silence, instead of waiting for the full
    # end-of-speech pause: if the speaker does not resume, the transcript is ready when the
    # pause ends (Whisper costs ~0.6 s whatever the length). None disables.
    speculative_stt_s: float | None = 0.25
    max_speculations: int = 3          # per utterance (each resumed pause wastes one)
    level_interval_s: float = 0.05     # level meter callback rate (20 Hz)


@dataclass
class RunLog:
    """One run's events and outcome (the pipeline keeps the last ``keep_runs``)."""

    id: str
    start_stage: PipelineStage
    trigger: str
    events: list[PipelineEvent] = field(default_factory=list)
    outcome: str = ""          # done | rejected | no-wake | stop | self-hearing | timeout | …
    transcript: str = ""
    command: str = ""
    record: dict[str, Any] | None = None
    latency: dict[str, Any] | None = None
    wavs: list[str] = field(default_factory=list)
    ended: bool = False

    def types(self) -> list[str]:
        """The event types in order (snapshot tests)."""
        return [str(e.type) for e in self.events if e.type != EventType.LISTENING]

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "start_stage": str(self.start_stage), "trigger": self.trigger,
                "outcome": self.outcome, "transcript": self.transcript, "command": self.command,
                "latency": self.latency, "wavs": self.wavs,
                "events": [e.to_dict() for e in self.events]}


__all__ = ["Mode", "PipelineConfig", "RunLog", "Transcriber"]
