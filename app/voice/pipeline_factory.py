"""The voice pipeline built with the packaged models (``make_pipeline``; re-exported by
``app.voice.pipeline``, where callers find it)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app.voice.pipeline import VoicePipeline
from app.voice.pipeline_types import Mode, PipelineConfig
from app.voice.vad import VadSegmenter
from app.voice.wakeword import WakeWordSpotter


def make_pipeline(handler: Any, mode: Mode | str = Mode.REALTIME, *, stt_model: str = "tiny.en",
                  tts_engine: str = "auto", chime: bool = True, chime_volume: float = 0.4,
                  wake_sensitivity: float = 0.5, vad_sensitivity: Any = "default",
                  end_sensitivity: Any = "default", config: PipelineConfig | None = None,
                  **config_overrides: Any) -> VoicePipeline:
    """A pipeline with the packaged models: Silero VAD, Whisper ``stt_model``, the "davinci"
    spotter, and speech through the best engine installed. The models load here."""
    from app.voice.stt import WhisperSTT  # noqa: PLC0415
    from app.voice.tts import Speaker  # noqa: PLC0415
    from app.voice.vad import EndpointConfig  # noqa: PLC0415
    from app.voice.wake_verify import WhisperWakeVerifier  # noqa: PLC0415

    cfg = replace(config or PipelineConfig(), **config_overrides)
    vad = VadSegmenter(config=EndpointConfig.from_sensitivity(vad_sensitivity, end_sensitivity))
    stt = WhisperSTT(model=stt_model).load()
    return VoicePipeline(handler, stt=stt, vad=vad,
                         wake=WakeWordSpotter(sensitivity=wake_sensitivity,
                                              verifier=WhisperWakeVerifier(stt)),
                         tts=Speaker(tts_engine, chime=chime, chime_volume=chime_volume),
                         mode=mode, config=cfg)


__all__ = ["make_pipeline"]
