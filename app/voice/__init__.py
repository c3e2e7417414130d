"""Hands-free voice: audio sources, VAD and end-of-speech, the "davinci" wake word, Whisper
speech-to-text, spoken confirmations, and the voice pipeline that emits typed events.

Modules (imported on demand: ``import app.voice`` loads no model):

* :mod:`app.voice.events`   — ``PipelineEvent``, ``EventType``, ``ErrorCode``, ``ListeningState``
* :mod:`app.voice.audio`    — ``MicrophoneSource``, ``FileSource``, ``ClipSequence``,
  ``NoMicrophone``, device listing
* :mod:`app.voice.vad`      — Silero VAD backends and the ``EndOfSpeech`` state machine
* :mod:`app.voice.stt`      — ``WhisperSTT``, hallucination filters, ``make_transcriber()``
* :mod:`app.voice.wakeword` — ``WakeWordSpotter``, stop words, ``SelfHearingGuard``
* :mod:`app.voice.tts`      — ``Speaker`` (Piper / espeak-ng / silent), chimes, ``stop()``
* :mod:`app.voice.pipeline` — ``VoicePipeline`` (realtime / synthesized / text),
  ``make_pipeline()``

``python -m app.session.voice_main --help`` runs it headless. No Qt here (DESIGN §2).
"""
