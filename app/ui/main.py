"""The console window and the GUI entry point ``run(args) -> int``.

Threads (ARCHITECTURE "Rendering and threads"):

- **UI thread**: widgets only. It shows the newest composed frame, handles touch and keys
  (each a registry dispatch of a few milliseconds) and reflects state changes.
- **case loader**: loads the case (and generates the demo case the first time) and builds the
  3D surfaces; the window is up at once and shows the progress.
- **video**: :class:`~app.ui.video.VideoFeed` reads the file at its frame rate (looping) or the
  capture device (reconnecting); only the newest frame is kept.
- **render**: :class:`~app.ui.render_loop.RenderLoop` composes video + overlays at ~30 fps
  through :class:`~app.render.scene.SceneRenderer` into a triple buffer (latest wins).
- **3D**: :class:`~app.render.anatomy3d.AnatomyWorker` owns the VTK context.
- **commands**: typed commands run through the orchestrator on
  :class:`~app.ui.commands.CommandRunner`, never on the UI thread.
- **interpreter warm-up** (:meth:`MainWindow.start_interpreter_warmup`, called by ``run``):
  builds the shared orchestrator and warms the semantic tier and the LLM's prompt prefixes in
  the background; the strip shows "Warming the language model N%", then "Language model
  ready" (or why it is unavailable). Touch, keys and the fast tiers answer meanwhile: the LLM
  tier abstains until its warm-up is done.
- **voice** (``--mode realtime|synthesized``): :class:`~app.ui.voice.VoiceLink` builds the
  voice pipeline on a thread; it listens on its own thread and its commands go through the
  *same* orchestrator (one command at a time) and registry lock as typed ones. Its events reach
  the status strip through a queued signal; Space/F12 held is push-to-talk, Stop/Esc stop the
  spoken reply.

Events from other threads reach widgets through :class:`~app.ui.bridge.Bridge` signals.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import (
    QCloseEvent,
    QColor,
    QFont,
    QGuiApplication,
    QKeyEvent,
    QPalette,
)
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QLabel,
    QMainWindow,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.core.registry import Actor, AuditRecord, CommandRegistry, CommandResult
from app.core.state import CaseContext, ConsoleState, StateChange
from app.core.vocab import WINDOW_PRESETS
from app.render.clock import Clock, MonotonicClock
from app.render.scene import SceneRenderer
from app.session.loader import CaseLoader, LoadedCase
from app.ui import hotkeys
from app.ui.bridge import Bridge
from app.ui.commands import (
    HOTKEY,
    TEXT_UNAVAILABLE,
    TOUCH,
    CommandRunner,
    LockedRegistry,
    make_orchestrator,
    text_commands_available,
)
from app.ui.panes import LISTENING_LOOK, CommandBox, StatusStrip, TracePane
from app.ui.qtcompat import emit, emitter
from app.ui.render_loop import RenderLoop
from app.ui.touch import TouchPanel
from app.ui.video import VideoFeed
from app.ui.view import VideoView
from app.ui.voice import PipelineFactory, VoiceLink

log = logging.getLogger(__name__)

AR_PANEL_PX = 300  # first 3D render size; the scene resizes it to the layout's panel
SCREENSHOT_TIMEOUT_S = 180.0
PUSH_TO_TALK_KEYS = (Qt.Key.Key_Space, Qt.Key.Key_F12)  # F12: a foot pedal mapped to a key
HOLD_RESULT_S = 1.0  # "done" / "rejected" stay on the indicator at least this long
NO_MIC_SHORT = "No microphone"
WARMUP_NICE = 10  # the warm-up's threads yield the cores to the case loader, UI and commands
WARMUP_CASE_WAIT_S = 20.0  # the LLM warm-up starts once the case is in (or after this long)
WARMUP_READY_HIDE_S = 5.0  # "Language model ready" stays this long, then the indicator hides
WARMUP_STOP_WAIT_S = 5.0  # shutdown waits this long for the LLM warm-up to stop
LLM_UNAVAILABLE = ("Language model unavailable: {reason} \u2014 the other tiers, touch and keys "
                   "still work.")
_LOAD_LEAD = "The language model could not be loaded: "


def llm_unavailable_text(reason: str) -> str:
    """The strip's plain warning for a language model that could not start."""
    reason = " ".join(str(reason or "").split()).rstrip(".")
    if reason.startswith(_LOAD_LEAD):
        reason = reason[len(_LOAD_LEAD):]
    return LLM_UNAVAILABLE.format(reason=reason or "it could not start")


class _SerialOrchestrator:
    """The window's one orchestrator, shared by the text box and the voice pipeline; one
    command at a time (the orchestrator keeps conversation context)."""

    def __init__(self, orchestrator: Any, lock: threading.Lock) -> None:
        self.inner = orchestrator
        self._lock = lock

    def handle_text(self, text: str, **kw: Any) -> dict[str, Any]:
        with self._lock:
            if kw.get("stt") is None:
                return self.inner.handle_text(text)
            return self.inner.handle_text(text, **kw)


def _lower_thread_priority(nice: int) -> None:
    """Raise the calling thread's nice value by ``nice`` (Linux: per thread, inherited by the
    threads it starts, e.g. llama.cpp's workers). Best effort; a no-op elsewhere."""
    if not hasattr(os, "setpriority") or not sys.platform.startswith("linux"):
        return
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + nice))
    except OSError:
        log.debug("could not lower the warm-up's priority", exc_info=True)


def _step_text(action_id: str, params: Any) -> str:
    from app.core.params import SliceValue

    parts = []
    for k, v in dict(params or {}).items():
        if isinstance(v, SliceValue):
            v = v.as_param()
        elif isinstance(v, list | tuple):
            v = ",".join(str(x) for x in v)
        parts.append(f"{k}={v}")
    return f"{action_id} {' '.join(parts)}".strip()


class MainWindow(QMainWindow):
    """The console: video view, status strip, command box, trace/keys tabs, touch panel dock.

    Everything is injectable for tests: ``anatomy`` ("auto" starts an AnatomyWorker, None runs
    without 3D), ``orchestrator`` (any object with ``handle_text(text) -> dict``),
    ``text_available`` (default: whether the interpreter module exists), ``clock``.
    ``start_threads=False`` leaves the render loop stopped (tests call ``render_now``).
    """

    def __init__(self, *, state: ConsoleState | None = None,
                 registry: CommandRegistry | None = None, clock: Clock | None = None,
                 anatomy: Any = "auto", orchestrator: Any = None,
                 text_available: bool | None = None, mode: str = "realtime",
                 render_fps: float = 30.0, start_threads: bool = True,
                 slice_seconds: float = 4.0, voice_factory: PipelineFactory | None = None,
                 hold_result_s: float = HOLD_RESULT_S) -> None:
        super().__init__()
        self.setWindowTitle("VISA Console")
        self.setObjectName("consoleWindow")
        self.clock: Clock = clock or MonotonicClock()
        self.state = state or ConsoleState()
        inner = registry or CommandRegistry(self.state)
        self.registry = LockedRegistry(inner)
        self.bridge = Bridge(self.state, inner, self)
        self.case: Any = None
        self.loaded: LoadedCase | None = None
        self._loader: CaseLoader | None = None
        self._queued_commands: list[str] = []
        self._closed = False

        if anatomy == "auto":
            anatomy = self._start_anatomy()
        self.anatomy = anatomy
        self.scene = SceneRenderer(self.state, None, self.clock, (1280, 720), anatomy,
                                   slice_seconds=slice_seconds, registry=inner)
        self.scene.set_notice("Loading the case\u2026")
        self.feed: VideoFeed | None = None
        self.render_loop = RenderLoop(self.scene, None, fps=render_fps,
                                      notify=emitter(self.bridge.frame_ready), clock=self.clock)

        # -- text commands ---------------------------------------------------------------
        if orchestrator is not None:
            self.text_available = True if text_available is None else text_available
        else:
            self.text_available = (text_commands_available() if text_available is None
                                   else text_available)
        self._orch_factory: Callable[[], Any] = (
            (lambda: orchestrator) if orchestrator is not None
            else (lambda: make_orchestrator(self.registry)))
        self._orch_build_lock = threading.Lock()
        self._orch_call_lock = threading.Lock()
        self._shared: _SerialOrchestrator | None = None
        self.runner = CommandRunner(self.shared_orchestrator, emitter(self.bridge.trace_record),
                                    lambda msg: emit(self.bridge.message, "warning", msg))
        self._warm_thread: threading.Thread | None = None
        self._warm_handles: list[Any] = []
        self._warm_heavy: Any = None  # the LLM runtime's heavy-stage lock (to preempt it)
        self._warm_problems: list[tuple[str, str]] = []
        self._case_settled = threading.Event()  # set_loaded ran (the case or its failure)
        self.warmup_case_wait_s = WARMUP_CASE_WAIT_S
        self.warmup_ready_hide_s = WARMUP_READY_HIDE_S

        # -- voice -------------------------------------------------------------------------
        self.mode = mode
        self._voice_factory = voice_factory
        self.voice: VoiceLink | None = None
        self._ptt_down: set[int] = set()
        self._voice_problems: list[tuple[str, str]] = []
        self.voice_source_after_load: Any = None  # synthesized clips: start once the case is in
        self._hold_result_s = hold_result_s
        self._hold_until = 0.0
        self._pending_listening: tuple[str, str | None] | None = None
        self._listening_timer = QTimer(self)
        self._listening_timer.setSingleShot(True)
        self._listening_timer.timeout.connect(self._apply_pending_listening)

        self._build_widgets(mode)
        self.shortcuts = hotkeys.install(self, self)
        self._connect()
        self._status_timer = QTimer(self)
        self._status_timer.setInterval(500)
        self._status_timer.timeout.connect(self._refresh_video_status)
        self._status_timer.start()
        self._warm_hide_timer = QTimer(self)
        self._warm_hide_timer.setSingleShot(True)
        self._warm_hide_timer.timeout.connect(self.status.hide_warmup)
        if start_threads:
            self.render_loop.start()

    # -- construction -----------------------------------------------------------------------
    def _start_anatomy(self) -> Any:
        try:
            from app.render.anatomy3d import AnatomyWorker

            return AnatomyWorker((AR_PANEL_PX, AR_PANEL_PX), clock=self.clock,
                                 on_error=emitter(self.bridge.model_error)).start()
        except Exception as exc:  # noqa: BLE001 - the console runs without 3D
            log.exception("3D worker could not start")
            emit(self.bridge.message, "warning", f"The 3D view is unavailable ({exc}).")
            return None

    def _build_widgets(self, mode: str) -> None:
        central = QWidget()
        central.setObjectName("central")
        lay = QVBoxLayout(central)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        self.view = VideoView()
        self.view.setObjectName("videoView")
        lay.addWidget(self.view, 1)
        self.status = StatusStrip()
        lay.addWidget(self.status)
        self.command_box = CommandBox(self.text_available)
        lay.addWidget(self.command_box)
        self.bottom_tabs = QTabWidget()
        self.bottom_tabs.setObjectName("bottomTabs")
        self.trace = TracePane()
        self.bottom_tabs.addTab(self.trace, "Trace")
        keys = QLabel(hotkeys.help_text())
        keys.setObjectName("keysHelp")
        kf = QFont("DejaVu Sans Mono")
        kf.setStyleHint(QFont.StyleHint.Monospace)
        keys.setFont(kf)
        keys.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        keys.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        keys.setContentsMargins(8, 6, 8, 6)
        from PySide6.QtWidgets import QScrollArea

        keys_area = QScrollArea()
        keys_area.setWidget(keys)
        keys_area.setWidgetResizable(True)
        self.bottom_tabs.addTab(keys_area, "Keys")
        self.bottom_tabs.setMaximumHeight(170)
        self.bottom_tabs.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        lay.addWidget(self.bottom_tabs)
        self.setCentralWidget(central)

        self.touch = TouchPanel(self.state, self._touch_send, answer=self.submit_text)
        from app.language import problems as language_problems

        for text in language_problems():  # a hospital's broken word list, said plainly
            self.status.add_problem("warning", text)
        self.dock = QDockWidget("Touch panel", self)
        self.dock.setObjectName("touchDock")
        self.dock.setWidget(self.touch)
        self.dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                              | QDockWidget.DockWidgetFeature.DockWidgetFloatable)
        self.dock.setMinimumWidth(400)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.dock)

        if mode in ("realtime", "synthesized"):
            self.status.set_listening("off", "Voice starting\u2026")
        else:
            self.status.set_listening("off", "Text mode")
        if not self.text_available:
            self.status.set_reply(TEXT_UNAVAILABLE, None)

    def _connect(self) -> None:
        b = self.bridge
        b.frame_ready.connect(self._show_newest, Qt.ConnectionType.QueuedConnection)
        b.state_changed.connect(self._on_state_changed)
        b.audit.connect(self._on_audit)
        b.trace_record.connect(self._on_trace_record)
        b.message.connect(self._on_message)
        b.progress.connect(self._on_progress)
        b.case_loaded.connect(self.set_loaded)
        b.model_error.connect(lambda msg: self._on_message("warning", msg))
        b.warmup.connect(self._on_warmup)
        self.view.resized.connect(lambda w, h: self.render_loop.set_size((w, h)))
        self.command_box.submitted.connect(self.submit_text)
        self.command_box.undo_requested.connect(lambda: self.undo(TOUCH))
        self.status.stop_button.clicked.connect(self.stop_speaking)
        app = QApplication.instance()
        if app is not None:
            app.installEventFilter(self)

    # -- the shared orchestrator ---------------------------------------------------------------
    def shared_orchestrator(self) -> _SerialOrchestrator:
        """The one orchestrator of the window (built once, on the first thread that needs it);
        typed and spoken commands both go through it. Raises what its factory raises."""
        with self._orch_build_lock:
            if self._shared is None:
                self._shared = _SerialOrchestrator(self._orch_factory(), self._orch_call_lock)
            return self._shared

    # -- interpreter warm-up ----------------------------------------------------------------------
    def start_interpreter_warmup(self) -> threading.Thread | None:
        """Build the shared orchestrator and warm its interpreter's slow tiers (semantic
        exemplars, LLM prompt prefixes) on a background thread; the strip shows the progress.

        Commands are answered meanwhile: nothing here holds the orchestrator's locks while the
        tiers warm, the semantic tier abstains until it is ready and the LLM tier abstains while
        its warm-up runs. A failure is a plain warning in the strip, never a stop. Idempotent;
        ``run`` calls it at start (the window's constructor does not, so tests load no model).
        """
        if self._warm_thread is not None or self._closed or not self.text_available:
            return self._warm_thread
        self.status.show_warmup_progress(0.0, "Starting the interpreter\u2026")
        thread = threading.Thread(target=self._warm_interpreter, name="interpreter-warm",
                                  daemon=True)
        self._warm_thread = thread
        thread.start()
        return thread

    @property
    def warming_up(self) -> bool:
        """The interpreter warm-up thread is still running."""
        return self._warm_thread is not None and self._warm_thread.is_alive()

    def _post_warmup(self, phase: str, fraction: float, message: str) -> None:
        if self._closed:
            return
        try:
            emit(self.bridge.warmup, phase, float(fraction), str(message))
        except RuntimeError:  # the window is gone
            log.debug("warm-up news after the window closed", exc_info=True)

    def _warm_interpreter(self) -> None:
        """The warm-up thread (see :meth:`start_interpreter_warmup`)."""
        post = self._post_warmup
        try:
            shared = self.shared_orchestrator()
            # The orchestrator builds its interpreter lazily: do it here, under the call lock
            # (a command arriving now needs it built anyway), so there is only one.
            with self._orch_call_lock:
                interp = getattr(shared.inner, "interpreter", None)
        except Exception as exc:  # noqa: BLE001 - the console runs on without the tiers
            log.exception("the interpreter could not be built for the warm-up")
            post("failed", 1.0, f"the interpreter could not start ({type(exc).__name__})")
            return
        # Built: from here on this thread and the warm-up threads it starts (they inherit it) are
        # background work, so the case loader, the UI and a command get the cores first.
        _lower_thread_priority(WARMUP_NICE)
        tiers = list(getattr(interp, "tiers", None) or [])
        problems = dict(getattr(interp, "tier_problems", None) or {})
        llm = next((t for t in tiers if getattr(t, "name", "") == "llm"), None)
        if llm is None:
            if problems.get("llm"):
                post("failed", 1.0, problems["llm"])
            else:
                post("off", 1.0, "")
        if not tiers:
            return
        from app.agents.factory import start_warmup

        # The semantic tier first (its cached exemplars load in well under a second and make
        # the first commands cheaper); the LLM (a ~1 GB model, then seconds of prefix compute
        # per stage) once the case is in, so that the start-up I/O and CPU go to the case.
        sem = next((t for t in tiers if getattr(t, "name", "") == "semantic"), None)
        if sem is not None and hasattr(sem, "start_warm"):
            try:
                sem.start_warm()
            except Exception:  # noqa: BLE001 - start_warmup reports it again
                log.debug("semantic warm-up could not start", exc_info=True)
        if llm is not None:
            post("progress", 0.0, "Waiting for the case to load\u2026")
            deadline = time.monotonic() + self.warmup_case_wait_s
            while not self._closed and not self._case_settled.wait(0.25):
                if time.monotonic() >= deadline:
                    break
        if self._closed:
            return

        def progress(fraction: float, message: str) -> None:
            post("progress", fraction, message)

        self._warm_heavy = getattr(getattr(llm, "runtime", None), "heavy", None)
        handles = [h for h in start_warmup(interp, progress if llm is not None else None)
                   if h is not None]
        self._warm_handles = handles
        if self._closed:  # closed while it started: stop it as shutdown would have
            self._stop_warmup()
        llm_handles = [h for h in handles if hasattr(h, "error")]
        for h in handles:
            wait = getattr(h, "wait", None) or getattr(h, "join", None)
            while not self._closed:
                done = wait(0.25) if wait is not None else True
                if done or (done is None and not h.is_alive()):
                    break
        if self._closed:
            return
        if sem is not None and getattr(sem, "status", "") == "disabled":
            post("semantic-failed", 1.0, str(getattr(sem, "reason", "") or "disabled"))
        if llm is None:
            return
        if not llm_handles:
            post("failed", 1.0, "its warm-up could not start")
            return
        errors = [str(h.error) for h in llm_handles if getattr(h, "error", None)]
        if errors:
            post("failed", 1.0, errors[0])
        else:
            post("ready", 1.0, str(getattr(llm_handles[0], "message", "") or ""))

    def _stop_warmup(self, wait_s: float = WARMUP_STOP_WAIT_S) -> None:
        """Cancel the LLM warm-up and wait (at most ``wait_s``) until its thread has left
        llama.cpp: a thread still computing when the interpreter exits can crash it."""
        handles = [h for h in self._warm_handles if hasattr(h, "cancel")]
        for h in handles:
            try:
                h.cancel()  # stops before the next stage
            except Exception:  # noqa: BLE001
                log.debug("warm-up cancel failed", exc_info=True)
        running = [h for h in handles if not getattr(h, "done", True)]
        if not running:
            return
        deadline = time.monotonic() + wait_s
        heavy = self._warm_heavy
        if heavy is not None and hasattr(heavy, "hold"):
            # A foreground claim preempts the compute step in progress (the warm-up holds the
            # heavy-stage lock as background work); it is let go at once.
            with heavy.hold("console:shutdown", timeout=wait_s):
                pass
        for h in running:
            h.wait(max(0.0, deadline - time.monotonic()))

    def _on_warmup(self, phase: str, fraction: float, message: str) -> None:
        """Warm-up news, on the UI thread."""
        if self._closed:
            return
        if phase == "progress":
            self.status.show_warmup_progress(fraction, message)
        elif phase == "ready":
            self.status.show_warmup_done("Language model ready", message)
            self.trace.add_line(message or "Language model ready.", "ok")
            self._warm_hide_timer.start(max(0, round(self.warmup_ready_hide_s * 1000)))
        elif phase == "off":
            self.status.hide_warmup()
        elif phase in ("failed", "semantic-failed"):
            if phase == "failed":
                self.status.hide_warmup()
                text = llm_unavailable_text(message)
            else:
                reason = message[:1].upper() + message[1:]
                text = (f"{reason.rstrip('.')} \u2014 the other tiers, touch and keys still "
                        "work.")
            if ("warning", text) not in self._warm_problems:
                self._warm_problems.append(("warning", text))
            self.status.add_problem("warning", text)
            self.trace.add_line(text, "warning")

    def _voice_handle(self, text: str, stt: dict[str, Any] | None = None) -> dict[str, Any]:
        """The pipeline's handler (pipeline thread): the shared orchestrator; the trace record
        goes to the trace pane like a typed command's."""
        record = self.shared_orchestrator().handle_text(text, stt=stt)
        if not self._closed:
            emit(self.bridge.trace_record, record)
        return record

    # -- voice --------------------------------------------------------------------------------
    def start_voice(self, source: Any = None) -> VoiceLink | None:
        """Build the voice pipeline for this window's mode on a background thread and start it
        with ``source`` (None: the microphone; a clip or folder in synthesized mode)."""
        if self.voice is not None or self._closed or self.mode not in ("realtime",
                                                                       "synthesized"):
            return self.voice
        link = VoiceLink(self._voice_handle, self._voice_factory, self)
        link.event.connect(self._on_voice_event)
        link.level.connect(lambda rms, _peak: self.status.set_level(rms))
        link.failed.connect(self._on_voice_failed)
        link.no_microphone.connect(self._on_no_microphone)
        self.voice = link
        self.status.set_listening("off", "Voice starting\u2026")
        link.start(self.mode, source)
        return link

    def push_to_talk(self, pressed: bool) -> None:
        if (self.voice is None or not self.voice.push_to_talk(pressed)) and pressed:
            self.status.set_reply("Voice input is not running; touch and text commands "
                                  "still work.", False)

    def stop_speaking(self) -> bool:
        """The Stop button and Esc: stop the spoken reply. True when something was playing."""
        return self.voice.stop_speaking() if self.voice is not None else False

    def _voice_problem(self, message: str) -> None:
        """A voice problem stays in the strip (a case loaded later keeps it)."""
        if ("warning", message) not in self._voice_problems:
            self._voice_problems.append(("warning", message))
        self.status.add_problem("warning", message)

    def _on_no_microphone(self, message: str) -> None:
        self.show_listening("off", NO_MIC_SHORT)
        self._voice_problem(message)
        self.trace.add_line(f"voice: {message}", "warning")

    def _on_voice_failed(self, message: str) -> None:
        self.show_listening("off", "Voice unavailable")
        self._voice_problem(message)
        self.trace.add_line(message, "warning")

    def _on_voice_event(self, ev: Any) -> None:
        """One :class:`~app.voice.events.PipelineEvent`, on the UI thread."""
        etype = str(ev.type)
        data = ev.data or {}
        if etype == "listening":
            state = str(data.get("state", "off"))
            message = data.get("message")
            self.show_listening(state, NO_MIC_SHORT if message and state == "off" else None)
        elif etype == "stt-end":
            self.status.set_transcript(str(data.get("text", "")))
        elif etype == "intent-end":
            self.status.set_reply(str(data.get("reply", "")), bool(data.get("ok", True)))
            self.render_loop.poke()
        elif etype == "error":
            message = str(data.get("message", "")) or "Voice error."
            code = str(data.get("code", ""))
            if code == "no-microphone":
                self._on_no_microphone(message)
                return
            self.status.set_reply(message, False)
            self.trace.add_line(f"voice: {message}", "warning")
        elif etype == "stop":
            self.trace.add_line("voice: stopped" + (" speaking" if data.get("interrupted_tts")
                                                    else ""), "info")

    def show_listening(self, state: str, text: str | None = None) -> None:
        """Set the indicator; ``done``/``rejected`` stay at least ``hold_result_s``."""
        now = time.monotonic()
        if state in ("done", "rejected"):
            self._pending_listening = None
            self._listening_timer.stop()
            self.status.set_listening(state, text)
            self._hold_until = now + self._hold_result_s
            return
        if now < self._hold_until and state == "speaking" and text is None:
            # The reply plays now (the indicator must say so), and still shows the result.
            held = self.status.listening_state
            if held in ("done", "rejected"):
                text = f"{LISTENING_LOOK['speaking'][1]} \u00b7 {LISTENING_LOOK[held][1]}"
        elif now < self._hold_until:
            self._pending_listening = (state, text)
            self._listening_timer.start(max(1, round((self._hold_until - now) * 1000)))
            return
        self._pending_listening = None
        self._listening_timer.stop()
        self._hold_until = 0.0
        self.status.set_listening(state, text)
        if state == "off":
            self.status.set_level(-60.0)

    def _apply_pending_listening(self) -> None:
        pending, self._pending_listening = self._pending_listening, None
        self._hold_until = 0.0
        if pending is not None:
            self.status.set_listening(*pending)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        """Push-to-talk: Space or F12 held (auto-repeat ignored). Space types into the
        command box while it has the focus."""
        etype = event.type()
        if etype not in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease) or self._closed:
            return False
        if not isinstance(obj, QWidget) or obj.window() is not self:
            return False
        assert isinstance(event, QKeyEvent)
        key = event.key()
        if key not in PUSH_TO_TALK_KEYS:
            return False
        if key == Qt.Key.Key_Space and self.command_box.edit.hasFocus():
            return False
        if event.isAutoRepeat():
            return True
        if etype == QEvent.Type.KeyPress:
            if key not in self._ptt_down:
                self._ptt_down.add(key)
                self.push_to_talk(True)
        elif key in self._ptt_down:
            self._ptt_down.discard(key)
            self.push_to_talk(False)
        return True

    # -- case ---------------------------------------------------------------------------------
    def load_case(self, path: Path | None) -> None:
        """Load ``path`` (the demo case when None) in the background; the window stays live."""
        self.touch.set_loading(True)
        self.scene.set_notice("Loading the case\u2026")
        self._loader = CaseLoader(path, emitter(self.bridge.case_loaded),
                                  progress=emitter(self.bridge.progress)).start()

    def set_loaded(self, loaded: LoadedCase) -> None:
        """Install a loaded case (UI thread). A failed load leaves a running, empty console."""
        self.loaded = loaded
        self._case_settled.set()
        self.touch.set_loading(False)
        self.status.set_reply("", None)
        if loaded.case is None:
            with self.registry.lock:
                self.state.set_case(CaseContext(iv_size=None, structures=(),
                                                has_clinical=False))
            if self.feed is not None:
                self.feed.stop()
            self.feed = None
            self.render_loop.set_feed(None)
            self.scene.set_notice("No case loaded", loaded.error)
            self.status.set_problems([("error", loaded.error or "No case was loaded.")]
                                     + self._voice_problems + self._warm_problems)
            self.trace.add_line(loaded.error or "No case was loaded.", "error")
            self.touch.set_no_case(True)
            self.render_loop.poke()
            return
        self.touch.set_no_case(False)
        case = self.case = loaded.case
        self.scene.set_case(case, loaded.model)
        with self.registry.lock:
            self.state.set_case(case.context())
        problems = [(p.severity, p.message) for p in case.problems]
        problems += [("warning", n) for n in loaded.notes]
        self.status.set_problems([p for p in problems if p[0] != "info"]
                                 + self._voice_problems + self._warm_problems)
        self.status.set_case(f"Case: {case.name}")
        for severity, message in problems:
            self.trace.add_line(f"case: {message}", severity)
        self.trace.add_line(f"Case {case.name} loaded"
                            + ("" if problems else " with every part."), "ok")
        self.touch.sync()
        source = case.video_path if case.video_path is not None else case.video_device
        self._start_feed(source)
        if self.voice_source_after_load is not None:
            source, self.voice_source_after_load = self.voice_source_after_load, None
            self.start_voice(source)
        queued, self._queued_commands = self._queued_commands, []
        for text in queued:
            self.submit_text(text)

    def _start_feed(self, source: Any) -> None:
        if self.feed is not None:
            self.feed.stop()
        self.feed = VideoFeed(source).start()
        self.scene.set_notice(None)
        self.render_loop.set_feed(self.feed)
        self._refresh_video_status()

    def queue_commands(self, lines: list[str]) -> None:
        """Typed commands to run once the case is loaded (``--mode text --commands FILE``)."""
        if self.loaded is not None:
            for text in lines:
                self.submit_text(text)
        else:
            self._queued_commands.extend(lines)

    # -- commands -------------------------------------------------------------------------
    def send(self, action_id: str, params: dict[str, Any] | None = None,
             actor: Actor = TOUCH) -> CommandResult:
        """Dispatch one action through the registry (UI thread); refusals show in the strip."""
        result = self.registry.dispatch(action_id, params or {}, actor)
        self.render_loop.poke()
        return result

    def _touch_send(self, action_id: str, params: dict[str, Any]) -> CommandResult:
        return self.send(action_id, params, TOUCH)

    def _key_send(self, action_id: str, params: dict[str, Any] | None = None) -> CommandResult:
        return self.send(action_id, params, HOTKEY)

    def undo(self, actor: Actor = TOUCH) -> CommandResult:
        result = self.registry.undo(actor)
        self.render_loop.poke()
        return result

    def submit_text(self, text: str) -> None:
        """Run a typed command on the command thread; the reply comes back as a trace record."""
        text = text.strip()
        if not text:
            return
        self.status.set_transcript(text)
        if not self.text_available:
            self.status.set_reply(TEXT_UNAVAILABLE, False)
            self.trace.add_line(f"\u201c{text}\u201d: {TEXT_UNAVAILABLE}", "warning")
            return
        if self.case is None and self.loaded is None:
            self._queued_commands.append(text)
            self.status.set_reply("The case is still loading; the command will run next.",
                                  None)
            return
        self.status.set_reply("Working\u2026", None)
        self.runner.submit(text)

    # -- events (UI thread) -------------------------------------------------------------------
    def _on_state_changed(self, change: StateChange) -> None:
        if change.section == "iv":
            self.touch.follow_iv(change.old, change.new)
        self.touch.sync()
        self.render_loop.poke()

    def _on_audit(self, rec: AuditRecord) -> None:
        if rec.actor.source not in ("touch", "hotkey"):
            return  # typed/spoken commands are reported with their full trace record
        steps = "; ".join(_step_text(s.action_id, s.params) for s in rec.steps)
        who = f"{rec.actor.source} ({rec.actor.role})"
        if rec.kind == "undo":
            steps = "undo"
        self.status.set_reply(rec.message, rec.ok)
        self.trace.add_line(f"{who}: {steps} \u2192 {rec.message}",
                            "ok" if rec.ok else "warning")

    def _on_trace_record(self, record: dict[str, Any]) -> None:
        self.trace.add_record(record)
        self.touch.show_question(record.get("question"))  # the candidates as buttons
        reply = record.get("reply") or {}
        self.status.set_reply(reply.get("text", ""), bool(reply.get("ok", True)))

    def _on_message(self, severity: str, text: str) -> None:
        if severity == "warning" and text == TEXT_UNAVAILABLE:
            self.status.set_reply(text, False)
        else:
            self.status.add_problem(severity, text)
        self.trace.add_line(text, severity)

    def _on_progress(self, what: str, fraction: float) -> None:
        pct = round(100 * max(0.0, min(1.0, fraction)))
        self.status.set_reply(f"{what} {pct}%", None)
        if self.case is None:
            self.scene.set_notice("Loading the case\u2026", what)

    def _show_newest(self) -> None:
        got = self.render_loop.take()
        if got is not None:
            seq, frame = got
            self.view.show_frame(frame, seq)

    def _refresh_video_status(self) -> None:
        feed = self.feed
        if feed is None:
            return
        msg = feed.message()
        if msg is not None:
            self.status.set_video(f"{msg[0]}: {msg[1]}" if msg[1] else msg[0],
                                  "info" if feed.status == "none" else "error")
        else:
            self.status.set_video(feed.note, "warning")

    def render_now(self) -> None:
        """Compose and show one frame synchronously (tests, screenshots)."""
        self.render_loop.render_once()
        self._show_newest()

    # -- hotkey handlers ------------------------------------------------------------------------
    def _slice(self, value: str) -> None:
        self._key_send("IV.SHOW_MOVE", {self.touch.active_plane: value})

    def slice_up(self) -> None:
        self._slice("+1")

    def slice_down(self) -> None:
        self._slice("-1")

    def slice_up10(self) -> None:
        self._slice("+10")

    def slice_down10(self) -> None:
        self._slice("-10")

    def slice_middle(self) -> None:
        self._slice("middle")

    def _plane(self, plane: str) -> None:
        # Like TouchPanel.select_plane, but dispatched as a hotkey (the audit log says so).
        iv = self.state.iv
        if iv.mode == "zoom_view" and iv.main != plane:
            self._key_send("IV.ZOOM_IN_MOVE", {"plane": plane})
        self.touch.set_active_plane(plane)

    def plane_axial(self) -> None:
        self._plane("axial")

    def plane_coronal(self) -> None:
        self._plane("coronal")

    def plane_sagittal(self) -> None:
        self._plane("sagittal")

    def ct_zoom(self) -> None:
        if self.state.iv.mode == "zoom_view":
            self._key_send("IV.ZOOM_OUT")
        else:
            self._key_send("IV.ZOOM_IN_MOVE", {"plane": self.touch.active_plane})

    def ct_window(self) -> None:
        names = list(WINDOW_PRESETS)
        cur = self.state.iv.window
        nxt = names[(names.index(cur) + 1) % len(names)] if cur in names else names[0]
        self._key_send("IV.SHOW_MOVE", {"window": nxt})

    def ct_toggle(self) -> None:
        self._key_send("IV.REMOVE" if self.state.iv.mode != "none" else "IV.SHOW_MOVE")

    def ir_toggle(self) -> None:
        self._key_send("IR.HIDE" if self.state.ir.visible else "IR.SHOW")

    def ar_toggle(self) -> None:
        self._key_send("AR.REMOVE" if self.state.ar.visible else "AR.SHOW")

    def ar_turn(self) -> None:
        self._key_send("AR.ROTATE", {"direction": "horizontal"})

    def ar_tumble(self) -> None:
        self._key_send("AR.ROTATE", {"direction": "vertical"})

    def ar_next_view(self) -> None:
        cycle = hotkeys.VIEW_CYCLE
        cur = self.state.ar.view
        nxt = cycle[(cycle.index(cur) + 1) % len(cycle)] if cur in cycle else cycle[0]
        self._key_send("AR.SHOW", {"view": nxt})

    def ar_zoom_in(self) -> None:
        self._key_send("AR.ZOOM_IN")

    def ar_zoom_out(self) -> None:
        self._key_send("AR.ZOOM_OUT")

    def focus_command(self) -> None:
        self.command_box.edit.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def toggle_fullscreen(self) -> None:
        if self.isFullScreen():
            self.showNormal()
        else:
            self.showFullScreen()

    def leave_fullscreen(self) -> None:
        """Esc: stop the spoken reply if one is playing, else leave full screen."""
        if self.voice is not None and self.voice.is_speaking() and self.stop_speaking():
            return
        if self.isFullScreen():
            self.showNormal()
        elif self.command_box.edit.hasFocus():
            self.view.setFocus()

    # -- shutdown -----------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Stop every thread the window started (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._status_timer.stop()
        self._listening_timer.stop()
        self._warm_hide_timer.stop()
        self._stop_warmup()
        app = QApplication.instance()
        if app is not None:
            app.removeEventFilter(self)
        if self.voice is not None:
            self.voice.stop()
        self.render_loop.stop()
        if self.feed is not None:
            self.feed.stop()
        self.runner.stop()
        if self.anatomy is not None:
            try:
                self.anatomy.stop()
            except Exception:  # noqa: BLE001
                log.debug("3D worker stop failed", exc_info=True)
        self.scene.close()
        self.bridge.detach()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt API
        self.shutdown()
        super().closeEvent(event)


# ----------------------------------------------------------------------------- application

def apply_dark_theme(app: QApplication) -> None:
    """A dark Fusion palette: the console sits beside a surgeon's dark display."""
    app.setStyle("Fusion")
    pal = QPalette()
    base, panel, text = QColor(14, 17, 22), QColor(24, 29, 37), QColor(232, 236, 242)
    pal.setColor(QPalette.ColorRole.Window, panel)
    pal.setColor(QPalette.ColorRole.WindowText, text)
    pal.setColor(QPalette.ColorRole.Base, base)
    pal.setColor(QPalette.ColorRole.AlternateBase, panel)
    pal.setColor(QPalette.ColorRole.Text, text)
    pal.setColor(QPalette.ColorRole.Button, QColor(34, 42, 54))
    pal.setColor(QPalette.ColorRole.ButtonText, text)
    pal.setColor(QPalette.ColorRole.Highlight, QColor(31, 111, 235))
    pal.setColor(QPalette.ColorRole.HighlightedText, QColor(255, 255, 255))
    pal.setColor(QPalette.ColorRole.ToolTipBase, panel)
    pal.setColor(QPalette.ColorRole.ToolTipText, text)
    pal.setColor(QPalette.ColorRole.PlaceholderText, QColor(140, 150, 165))
    app.setPalette(pal)


def place_window(window: QMainWindow, fullscreen: bool) -> None:
    """Full screen on the secondary monitor when there is one, else a large window."""
    screens = QGuiApplication.screens()
    primary = QGuiApplication.primaryScreen()
    target = next((s for s in screens if s is not primary), primary)
    if fullscreen and target is not None:
        window.winId()  # create the native window, so it can be put on the target screen
        handle = window.windowHandle()
        if handle is not None:
            handle.setScreen(target)
        window.setGeometry(target.geometry())
        window.showFullScreen()
        return
    if primary is not None:
        geo = primary.availableGeometry()
        w, h = min(1600, geo.width()), min(900, geo.height())
        window.resize(w, h)
        window.move(geo.x() + (geo.width() - w) // 2, geo.y() + (geo.height() - h) // 2)
    window.show()


def read_commands(path: Path) -> list[str]:
    """Commands of a text file, one a line; blank lines and ``#`` comments are skipped."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.strip().startswith("#")]


def console_ready(w: MainWindow) -> bool:
    """The case is loaded, typed commands have run, the video shows its first frame (or says
    why it cannot), and every overlay is drawn in its final form."""
    if w.loaded is None or w.runner.pending:
        return False
    if w.loaded.case is None:  # the case failed to load: the window says why, shoot that
        return w.view.frames_shown > 0
    feed = w.feed
    if feed is None:
        return False
    if feed.source is not None and not (w.render_loop.first_video_frame.is_set()
                                        or feed.message() is not None):
        return False
    return w.scene.ready() and w.view.frames_shown > 0


class ScreenshotTaker:
    """Waits until the case, the first video frame and the overlays are ready, then saves the
    window to a PNG and quits the application (exit code 0; 1 on timeout, after saving)."""

    def __init__(self, window: MainWindow, path: Path, timeout_s: float = SCREENSHOT_TIMEOUT_S,
                 settle_s: float = 0.3, on_done: Callable[[int], None] | None = None) -> None:
        self.window = window
        self._on_done = on_done or (lambda code: QApplication.instance().exit(code))
        self.path = Path(path)
        self.timeout_s = timeout_s
        self.settle_s = settle_s
        self.exit_code: int | None = None
        self._t0 = time.monotonic()
        self._ready_since: float | None = None
        self._timer = QTimer(window)
        self._timer.setInterval(100)
        self._timer.timeout.connect(self._poll)

    def start(self) -> ScreenshotTaker:
        self._timer.start()
        return self

    def ready(self) -> bool:
        return console_ready(self.window)

    def _poll(self) -> None:
        now = time.monotonic()
        timed_out = now - self._t0 > self.timeout_s
        if self.ready():
            self._ready_since = self._ready_since or now
        else:
            self._ready_since = None
        if not timed_out and (self._ready_since is None or now - self._ready_since
                              < self.settle_s):
            return
        self._timer.stop()
        self.window.render_now()
        QApplication.processEvents()
        self.save()
        self.exit_code = 1 if timed_out else 0
        if timed_out:
            print(f"visa-console: the console was not ready after {self.timeout_s:.0f} s; "
                  f"saved what it showed to {self.path}", file=sys.stderr)
        self._on_done(self.exit_code)

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        pixmap = self.window.grab()
        if not pixmap.save(str(self.path), "PNG"):
            raise OSError(f"could not write {self.path}")


def run(args: argparse.Namespace) -> int:
    """The GUI: ``visa-console [--case PATH] [--fullscreen] [--screenshot PNG]
    [--mode realtime | --mode synthesized --audio FILE_OR_DIR | --mode text --commands FILE]``.

    realtime listens on the microphone (without one the strip says so and the console runs on);
    synthesized plays the clips through the pipeline once the case is loaded, one command per
    clip, in order; text runs the lines of ``--commands`` through the text-command worker."""
    app = QApplication.instance() or QApplication([sys.argv[0]])
    assert isinstance(app, QApplication)
    app.setApplicationName("VISA Console")
    apply_dark_theme(app)
    mode = getattr(args, "mode", "realtime") or "realtime"
    window = MainWindow(mode=mode)
    window.start_interpreter_warmup()  # touch and the fast tiers answer while it runs
    commands_path = getattr(args, "commands", None)
    if commands_path is not None:
        try:
            window.queue_commands(read_commands(commands_path))
        except OSError as exc:
            window.status.add_problem("error", f"The commands file {commands_path} could not "
                                      f"be read ({exc.strerror or exc}).")
    audio = getattr(args, "audio", None)
    if mode == "synthesized" and audio is None:
        window.status.add_problem("warning", "--mode synthesized needs --audio FILE_OR_DIR; "
                                  "no clips are played.")
    elif mode == "synthesized":
        window.voice_source_after_load = audio  # clips refer to the case: play once it is in
    elif mode == "realtime":
        window.start_voice(None)
    place_window(window, bool(getattr(args, "fullscreen", False)))
    window.load_case(getattr(args, "case", None))
    shooter = None
    if getattr(args, "screenshot", None):
        shooter = ScreenshotTaker(window, args.screenshot).start()
    try:
        rc = app.exec()
    finally:
        window.shutdown()
    if shooter is not None and shooter.exit_code is not None:
        return shooter.exit_code
    return int(rc)


__all__ = ["MainWindow", "ScreenshotTaker", "apply_dark_theme", "console_ready", "place_window", "read_commands",
           "run"]
