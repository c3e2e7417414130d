"""Signals that carry events from any thread to the UI thread.

``ConsoleState`` events, registry results and audit records, trace records and the background
loaders' news may be emitted on worker threads; widgets may only be touched on the UI thread.
A :class:`Bridge` lives on the UI thread: its signals, emitted from another thread, are queued
to the UI thread by Qt (emitted on the UI thread, they are delivered at once).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from app.core.state import ConsoleState
from app.ui.qtcompat import emitter


class Bridge(QObject):
    state_changed = Signal(object)  # app.core.state.StateChange
    command_result = Signal(object)  # app.core.registry.CommandResult
    audit = Signal(object)  # app.core.registry.AuditRecord
    trace_record = Signal(object)  # dict: DESIGN §5.3 trace record + "reply"
    message = Signal(str, str)  # (severity "info" | "warning" | "error", plain text)
    progress = Signal(str, float)  # case loading: (what, fraction 0..1)
    case_loaded = Signal(object)  # app.session.loader.LoadedCase
    frame_ready = Signal()  # the render loop has a new frame
    model_error = Signal(str)  # the 3D renderer could not start
    # The interpreter's start-up warm-up: (phase "progress" | "ready" | "failed" | "off" |
    # "semantic-failed", fraction 0..1, plain text)
    warmup = Signal(str, float, str)

    def __init__(self, state: ConsoleState, registry: Any, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._disconnect = [
            state.events.connect(emitter(self.state_changed)),
            registry.results.connect(emitter(self.command_result)),
            registry.audit.connect(emitter(self.audit)),
        ]

    def detach(self) -> None:
        for fn in self._disconnect:
            fn()
        self._disconnect.clear()


__all__ = ["Bridge"]
