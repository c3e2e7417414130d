"""The voice pipeline inside the console window (DESIGN §1, ANCHORS §3.4).

:class:`VoiceLink` builds the pipeline on a background thread (loading Whisper takes seconds;
the window is up at once), subscribes to its :class:`~app.voice.events.PipelineEvent` stream and
hands every event to the UI thread through a queued signal (emitted with
:func:`app.ui.qtcompat.emit`). Spoken commands run through the *same* orchestrator as the text
box (``handler``), serialised with it, and each trace record is passed to ``on_record`` so the
trace pane shows voice commands like typed ones.

``factory(handler, mode)`` builds the pipeline; the default is
:func:`app.voice.pipeline.make_pipeline`. Tests pass a fake.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.ui.qtcompat import emit, emitter

log = logging.getLogger(__name__)

PipelineFactory = Callable[[Any, str], Any]


def default_factory(handler: Any, mode: str) -> Any:
    """:func:`~app.voice.pipeline.make_pipeline`; in realtime mode it first checks that there is
    an input device (raising ``NoMicrophone``) so a machine without one never loads Whisper."""
    from app.voice.audio import NoMicrophone, list_input_devices  # noqa: PLC0415

    if mode == "realtime":
        try:
            inputs = list_input_devices()
        except Exception as exc:  # noqa: BLE001 - no audio library: no microphone
            raise NoMicrophone(f"the audio devices could not be listed: {exc}") from exc
        if not inputs:
            raise NoMicrophone("no input device is available")
    from app.voice.pipeline import make_pipeline  # noqa: PLC0415 - heavy (Whisper)

    return make_pipeline(handler, mode)


class VoiceLink(QObject):
    """Owns one pipeline for the window. Every method is safe to call on the UI thread."""

    event = Signal(object)  # app.voice.events.PipelineEvent
    level = Signal(float, float)  # (rms dBFS, peak dBFS)
    failed = Signal(str)  # the pipeline could not be built: plain words
    no_microphone = Signal(str)  # realtime without an input device: the plain sentence
    started = Signal()

    def __init__(self, handler: Callable[..., dict[str, Any]],
                 factory: PipelineFactory | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._handler = handler
        self._factory = factory or default_factory
        self.pipeline: Any = None
        self._lock = threading.Lock()
        self._stopped = False
        self._thread: threading.Thread | None = None
        self._unsubscribe: Callable[[], None] | None = None

    def start(self, mode: str, source: Any = None) -> VoiceLink:
        """Build (on a thread) and start the pipeline for ``mode`` with ``source``."""
        self._thread = threading.Thread(target=self._build, args=(mode, source),
                                        name="voice-build", daemon=True)
        self._thread.start()
        return self

    def wait_started(self, timeout: float = 5.0) -> bool:
        th = self._thread
        if th is not None:
            th.join(timeout)
        return self.pipeline is not None

    def _build(self, mode: str, source: Any) -> None:
        from app.voice.audio import NoMicrophone  # noqa: PLC0415

        try:
            pipeline = self._factory(self._handler, mode)
        except NoMicrophone as exc:
            log.info("no microphone: %s", exc.detail)
            emit(self.no_microphone, str(exc))
            return
        except Exception as exc:  # noqa: BLE001 - the console runs on without voice
            log.exception("the voice pipeline could not start")
            emit(self.failed, "Voice control could not start "
                 f"({type(exc).__name__}: {exc}); touch and text commands still work.")
            return
        error: str | None = None
        with self._lock:
            if self._stopped:
                return
            self.pipeline = pipeline
            self._unsubscribe = pipeline.subscribe(emitter(self.event))
            if hasattr(pipeline, "on_level"):
                pipeline.on_level = emitter(self.level)
            try:
                pipeline.start(source)
            except Exception as exc:  # noqa: BLE001
                log.exception("the voice pipeline could not start")
                error = (f"Voice control could not start ({exc}); touch and text commands "
                         "still work.")
        if error is not None:
            emit(self.failed, error)
        else:
            emit(self.started)

    # -- controls ---------------------------------------------------------------------------
    def push_to_talk(self, pressed: bool) -> bool:
        p = self.pipeline
        if p is None:
            return False
        p.push_to_talk(pressed)
        return True

    def stop_speaking(self) -> bool:
        """Stop the spoken reply; True when something was playing."""
        p = self.pipeline
        if p is None:
            return False
        return bool(p.stop_speaking())

    def is_speaking(self) -> bool:
        p = self.pipeline
        speaker = getattr(p, "speaker", None)
        return bool(getattr(speaker, "is_speaking", False))

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the pipeline (idempotent); a pipeline still being built is stopped once built."""
        with self._lock:
            self._stopped = True
            p, self.pipeline = self.pipeline, None
            unsub, self._unsubscribe = self._unsubscribe, None
        if unsub is not None:
            unsub()
        if p is not None:
            try:
                p.stop(timeout)
            except Exception:  # noqa: BLE001
                log.debug("voice pipeline stop failed", exc_info=True)


__all__ = ["PipelineFactory", "VoiceLink", "default_factory"]
