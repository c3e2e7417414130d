"""The voice pipeline's checks on a hearing, after speech-to-text (``app.voice.pipeline``):
is the wake word really there (the transcript, Whisper's own confidence, the acoustic
verifier, and its second look when noise hid the name), does a doubtful command get a second
model's hearing, and how long the command took from the speaker's last word."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from app.voice.wakeword import WakeMatch, WakeWordSpotter

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WakeHearing:
    """The wake-word verdict on one utterance: the match, the transcript (the verifier's when
    it found the name the transcript missed) and the ``wake-word-end`` event's data."""

    match: WakeMatch
    text: str
    event: dict[str, Any]


def rescue_wake(wake: WakeWordSpotter, audio: np.ndarray | None) -> str | None:
    """The verifier's second look at an utterance with no wake word in its transcript
    (``WhisperWakeVerifier.rescue``): a transcript with the wake word forced, or None."""
    rescue = getattr(wake.verifier, "rescue", None)
    if rescue is None or audio is None:
        return None
    try:
        return rescue(audio)
    except Exception:  # a failed second look is only a missed wake, never a crash
        log.exception("wake-word rescue failed")
        return None


def hear_wake(wake: WakeWordSpotter, text: str, tr: Any, audio: np.ndarray | None,
              speech_start: float, min_logprob: float) -> WakeHearing:
    """Whether ``text`` (heard from ``audio``) calls the console, checked in order: the
    transcript, Whisper's confidence in it, the acoustic verifier; with no name in the
    transcript, the verifier's forced decode may still find it (noise hid it)."""
    thr = wake.candidate_threshold
    m = wake.match(text, thr)
    lp = min((float(sg.avg_logprob) for sg in getattr(tr, "segments", []) or []
              if not getattr(sg, "dropped", "")), default=0.0)
    verified: float | None = None
    tried = not m.detected and m.reason == "no-match"
    again = rescue_wake(wake, audio) if tried else None
    rescue_score = getattr(wake.verifier, "last_score", None) if tried else None
    rescued = again is not None and wake.match(again, thr).detected
    if rescued:
        text = str(again)
        verified = getattr(wake.verifier, "last_score", None)
        m = wake.detect(text, now=speech_start, threshold=thr)
    elif m.detected and lp < min_logprob:
        m = replace(m, detected=False, reason="low-confidence")
    elif m.detected:
        ok = wake.verify(audio)
        verified = getattr(wake.verifier, "last_score", None)
        if not ok:
            # The prompt's "davinci" where the audio says "Devin" (wake_verify).
            m = replace(m, detected=False, reason="unconfirmed")
        else:
            m = wake.detect(text, now=speech_start, threshold=thr)  # with the cooldown
    event = {**m.to_dict(), "avg_logprob": round(lp, 3),
             **({"verify_logprob": verified} if verified is not None else {}),
             **({"rescue_logprob": rescue_score} if rescue_score is not None else {}),
             **({"rescued": True} if rescued else {})}
    return WakeHearing(m, text, event)


def second_hearing(stt: Any, wake: WakeWordSpotter, audio: np.ndarray | None, tr: Any
                   ) -> tuple[Any, str | None, dict[str, Any] | None]:
    """A command (never chatter: the wake word was heard, or a command was awaited) that
    tiny Whisper heard doubtfully goes to the second model (``WhisperSTT.second_opinion``).
    Returns the transcript to keep, the new command when the second hearing is taken (else
    None) and the ``stt-end`` event's data for it. A failure keeps the first hearing."""
    ask = getattr(stt, "second_opinion", None)
    if ask is None or audio is None or tr is None:
        return tr, None, None
    try:
        tr2 = ask(audio, tr)
    except Exception:  # a failed second look never costs the command
        log.exception("second-opinion transcription failed")
        return tr, None, None
    info = getattr(tr2, "second", None)
    if not info or not info.get("taken"):
        return tr2, None, None
    text = (tr2.text or "").strip()
    new = wake.strip_wake(text) if wake.match(text).detected else text
    if not new.strip():
        return tr, None, None
    return tr2, new, {"text": text, "raw_text": getattr(tr2, "raw_text", text), "ms": tr2.ms,
                      "dropped": list(getattr(tr2, "dropped", [])), "second": dict(info)}


def command_latency(*, eos_wait_s: float, stt_ms: float, t_endpoint: float, t_handler: float,
                    t_state: float, speculated: tuple[float, float] | None,
                    wall_total_ms: float | None) -> dict[str, Any]:
    """Where a command's time went (the ``intent-end`` event's ``latency``). With a real-time
    source ``wall_total_ms`` is the wall clock from the last voiced audio to the state change.
    Files fed faster than real time rebuild the timeline: the endpoint is the end-of-speech
    wait after the speech ended; a speculative transcript (``speculated``: the silence when
    it started in s, its wall time in ms) must be done too; then the processing time."""
    eos_ms = eos_wait_s * 1000
    process_ms = (t_state - t_endpoint) * 1000
    if wall_total_ms is not None:
        total, clock = wall_total_ms, "wall"
    else:
        ready_ms = eos_ms
        if speculated is not None:
            ready_ms = max(eos_ms, speculated[0] * 1000 + speculated[1])
        total, clock = ready_ms + process_ms, "audio+wall"
    return {"eos_wait_ms": round(eos_ms, 1), "stt_ms": round(float(stt_ms), 1),
            "intent_ms": round((t_state - t_handler) * 1000, 1),
            "process_ms": round(process_ms, 1), "total_ms": round(total, 1),
            "speculative": speculated is not None, "clock": clock}


__all__ = ["WakeHearing", "command_latency", "hear_wake", "rescue_wake", "second_hearing"]
