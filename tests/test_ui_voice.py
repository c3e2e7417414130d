"""The voice pipeline in the console window (pytest-qt, offscreen, no Whisper): a fake pipeline
emits scripted PipelineEvents; the listening indicator, transcript, reply, errors, trace pane,
push-to-talk keys, Stop/Esc and shutdown follow. One test runs the real VoicePipeline with the
microphone patched to be missing."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QEvent, Qt  # noqa: E402
from PySide6.QtGui import QKeyEvent  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app.core.registry import Actor  # noqa: E402
from app.session.loader import LoadedCase  # noqa: E402
from app.ui import hotkeys  # noqa: E402
from app.ui.main import MainWindow  # noqa: E402
from app.ui.panes import LISTENING_LOOK  # noqa: E402
from app.voice.events import EventType, ListeningState, PipelineEvent  # noqa: E402

pytestmark = pytest.mark.gui


@pytest.fixture(scope="module")
def demo_loaded(tmp_path_factory) -> LoadedCase:
    from app.data.case import load_case
    from app.data.demo import ensure_demo_case
    from app.render.meshes import MeshCache
    from app.render.scene import load_anatomy_model

    folder = ensure_demo_case(out=tmp_path_factory.mktemp("voice-demo") / "case", _scale=0.25)
    case = load_case(folder)
    model = load_anatomy_model(case, cache=MeshCache(cache_dir=tmp_path_factory.mktemp("m")))
    return LoadedCase(case=case, model=model)


class FakeSpeaker:
    def __init__(self) -> None:
        self.is_speaking = False


class FakePipeline:
    """Records calls; ``fire(event)`` delivers an event from a non-UI thread like the real one."""

    def __init__(self, handler: Any, mode: str) -> None:
        self.handler = handler
        self.mode = mode
        self.listeners: list[Callable[[PipelineEvent], None]] = []
        self.ptt: list[bool] = []
        self.stops = 0
        self.stop_speaking_calls = 0
        self.started_with: list[Any] = []
        self.speaker = FakeSpeaker()
        self.on_level: Any = None

    def subscribe(self, fn: Callable[[PipelineEvent], None]) -> Callable[[], None]:
        self.listeners.append(fn)
        return lambda: self.listeners.remove(fn) if fn in self.listeners else None

    def start(self, source: Any = None) -> None:
        self.started_with.append(source)
        self.fire(EventType.LISTENING, state=ListeningState.IDLE)  # as the real one does

    def stop(self, timeout: float = 5.0) -> None:
        self.stops += 1

    def push_to_talk(self, pressed: bool) -> None:
        self.ptt.append(pressed)

    def stop_speaking(self) -> bool:
        self.stop_speaking_calls += 1
        was = self.speaker.is_speaking
        self.speaker.is_speaking = False
        return was

    def fire(self, etype: EventType, **data: Any) -> None:
        ev = PipelineEvent(etype, "v1", data)
        th = threading.Thread(target=lambda: [fn(ev) for fn in list(self.listeners)])
        th.start()
        th.join()


class FakeOrchestrator:
    def __init__(self) -> None:
        self.registry: Any = None
        self.calls: list[tuple[str, Any]] = []

    def handle_text(self, text: str, stt: Any = None) -> dict[str, Any]:
        self.calls.append((text, stt))
        result = self.registry.dispatch("IR.SHOW", {}, Actor(role="surgeon", source="voice"))
        return {"id": "9", "input": {"text": text}, "stages": {}, "tier": "lexicon",
                "flow": ["correct", "route", "IR", "end"], "invalid_cycles": 0,
                "total_ms": 1.0, "reply": {"ok": result.ok, "text": result.message}}


@pytest.fixture()
def voice_window(qtbot):
    made: list[MainWindow] = []
    pipes: list[FakePipeline] = []

    def factory(handler: Any, mode: str) -> FakePipeline:
        p = FakePipeline(handler, mode)
        pipes.append(p)
        return p

    def make(**kw: Any) -> tuple[MainWindow, FakePipeline]:
        kw.setdefault("anatomy", None)
        kw.setdefault("start_threads", False)
        kw.setdefault("hold_result_s", 0.2)
        w = MainWindow(voice_factory=factory, **kw)
        qtbot.addWidget(w)
        made.append(w)
        link = w.start_voice(None)
        assert link is not None and link.wait_started(5.0)
        qtbot.waitUntil(lambda: w.status.listening_state == "idle", timeout=2000)
        return w, pipes[-1]

    yield make
    for w in made:
        w.shutdown()


def _activate(qtbot, window: MainWindow) -> None:
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        QApplication.setActiveWindow(window)


def _wait_state(qtbot, w: MainWindow, state: str) -> None:
    # a hang guard, generous for a loaded CI machine (not a timing check)
    qtbot.waitUntil(lambda: w.status.listening_state == state, timeout=15000)


def test_every_listening_state_has_its_own_look() -> None:
    states = [s.value for s in ListeningState]
    looks = [LISTENING_LOOK[s] for s in states]
    assert len({c for c, _ in looks}) == len(states)
    assert len({t for _, t in looks}) == len(states)


def test_indicator_follows_events_and_holds_the_result(qtbot, voice_window) -> None:
    # the result is held long enough that a loaded machine cannot outrun the check below
    w, p = voice_window(mode="realtime", hold_result_s=3.0)
    assert p.mode == "realtime" and p.started_with == [None]
    for state in ("wake_heard", "recording", "thinking", "speaking"):
        p.fire(EventType.LISTENING, state=ListeningState(state))
        _wait_state(qtbot, w, state)
        assert LISTENING_LOOK[state][1] in w.status.listening.text()
    p.fire(EventType.LISTENING, state=ListeningState.DONE)
    _wait_state(qtbot, w, "done")
    p.fire(EventType.LISTENING, state=ListeningState.IDLE)
    qtbot.wait(50)
    assert w.status.listening_state == "done"  # held ~hold_result_s
    _wait_state(qtbot, w, "idle")
    p.fire(EventType.LISTENING, state=ListeningState.DONE)
    p.fire(EventType.LISTENING, state=ListeningState.SPEAKING)  # the reply plays: say so now
    _wait_state(qtbot, w, "speaking")
    assert "Speaking" in w.status.listening.text() and "Done" in w.status.listening.text()
    p.fire(EventType.LISTENING, state=ListeningState.REJECTED)
    _wait_state(qtbot, w, "rejected")
    p.fire(EventType.LISTENING, state=ListeningState.OFF)
    _wait_state(qtbot, w, "off")


def test_transcript_reply_error_and_level(qtbot, voice_window) -> None:
    w, p = voice_window(mode="realtime")
    p.fire(EventType.STT_END, text="show the patient information")
    qtbot.waitUntil(lambda: "show the patient information" in w.status.heard.text(),
                    timeout=2000)
    p.fire(EventType.INTENT_END, ok=True, reply="Patient information shown.")
    qtbot.waitUntil(lambda: w.status.reply_text() == "Patient information shown.", timeout=2000)
    p.fire(EventType.ERROR, code="stt-no-text-recognized", message="Nothing was heard.")
    qtbot.waitUntil(lambda: w.status.reply_text() == "Nothing was heard.", timeout=2000)
    assert any("Nothing was heard." in line for line in w.trace.lines())
    assert callable(p.on_level)
    th = threading.Thread(target=p.on_level, args=(-20.0, -6.0))
    th.start()
    th.join()
    qtbot.waitUntil(lambda: w.status.level.value() == 40, timeout=2000)


def test_voice_commands_share_the_orchestrator_and_reach_the_trace(qtbot, voice_window,
                                                                   demo_loaded) -> None:
    fake = FakeOrchestrator()
    w, p = voice_window(mode="realtime", orchestrator=fake)
    fake.registry = w.registry
    w.set_loaded(demo_loaded)
    assert w.shared_orchestrator().inner is fake
    record: dict[str, Any] = {}
    th = threading.Thread(target=lambda: record.update(p.handler("show info", stt={"ms": 5})))
    th.start()
    th.join()
    assert fake.calls == [("show info", {"ms": 5})]
    assert record["id"] == "9"
    qtbot.waitUntil(lambda: len(w.trace.records) == 1, timeout=3000)
    assert w.state.ir.visible
    w.submit_text("hide info")  # the text box uses the same orchestrator
    qtbot.waitUntil(lambda: len(fake.calls) == 2, timeout=3000)
    assert fake.calls[1] == ("hide info", None)


def test_push_to_talk_keys_ignore_auto_repeat(qtbot, voice_window) -> None:
    w, p = voice_window(mode="realtime")
    _activate(qtbot, w)
    w.view.setFocus()
    qtbot.keyPress(w.view, Qt.Key.Key_Space)
    QApplication.sendEvent(w.view, QKeyEvent(QEvent.Type.KeyPress, Qt.Key.Key_Space,
                                             Qt.KeyboardModifier.NoModifier, " ", True))
    qtbot.keyRelease(w.view, Qt.Key.Key_Space)
    qtbot.keyPress(w.view, Qt.Key.Key_F12)
    qtbot.keyRelease(w.view, Qt.Key.Key_F12)
    assert p.ptt == [True, False, True, False]
    # Space in the command box types a space, it does not talk.
    w.command_box.edit.setFocus()
    qtbot.keyClick(w.command_box.edit, Qt.Key.Key_Space)
    assert p.ptt == [True, False, True, False]


def test_stop_button_and_esc(qtbot, voice_window) -> None:
    w, p = voice_window(mode="realtime")
    _activate(qtbot, w)
    qtbot.mouseClick(w.status.stop_button, Qt.MouseButton.LeftButton)
    assert p.stop_speaking_calls == 1
    p.speaker.is_speaking = True
    w.showFullScreen()
    w.leave_fullscreen()  # Esc while speaking: stop the reply, stay full screen
    assert p.stop_speaking_calls == 2 and w.isFullScreen()
    w.leave_fullscreen()  # Esc again: nothing plays, leave full screen
    assert p.stop_speaking_calls == 2 and not w.isFullScreen()


def test_keys_tab_documents_push_to_talk() -> None:
    text = hotkeys.help_text()
    assert "Space" in text and "F12" in text and "hold to talk" in text
    assert "stop the spoken reply" in text


def test_shutdown_stops_the_pipeline(qtbot, voice_window) -> None:
    w, p = voice_window(mode="synthesized")
    assert p.mode == "synthesized"
    w.close()
    assert p.stops == 1
    w.shutdown()
    assert p.stops == 1


def test_synthesized_clips_start_after_the_case_loads(qtbot, demo_loaded, tmp_path) -> None:
    pipes: list[FakePipeline] = []

    def factory(handler: Any, mode: str) -> FakePipeline:
        pipes.append(FakePipeline(handler, mode))
        return pipes[-1]

    w = MainWindow(anatomy=None, start_threads=False, mode="synthesized",
                   voice_factory=factory)
    qtbot.addWidget(w)
    try:
        w.voice_source_after_load = tmp_path
        assert w.voice is None
        w.set_loaded(demo_loaded)
        assert w.voice is not None and w.voice.wait_started(5.0)
        assert pipes[0].started_with == [tmp_path]
    finally:
        w.shutdown()


def test_no_microphone_is_reported_and_touch_still_works(qtbot, monkeypatch,
                                                        demo_loaded) -> None:
    from app.voice import audio
    from app.voice.pipeline import VoicePipeline

    def no_mic(self: Any) -> Any:
        raise audio.NoMicrophone("no input device is available")

    monkeypatch.setattr(audio.MicrophoneSource, "open", no_mic)
    w = MainWindow(anatomy=None, start_threads=False, mode="realtime",
                   voice_factory=lambda h, mode: VoicePipeline(h, mode=mode))
    qtbot.addWidget(w)
    try:
        w.set_loaded(demo_loaded)
        w.start_voice(None)
        sentence = "No microphone was found; touch and text commands still work."
        qtbot.waitUntil(lambda: sentence in w.status.problem.toolTip(), timeout=5000)
        assert w.status.listening_state == "off"
        assert "No microphone" in w.status.listening.text()
        result = w.send("IR.SHOW", {})
        assert result.ok and w.state.ir.visible
    finally:
        w.shutdown()


def test_no_input_device_never_loads_whisper(qtbot, monkeypatch, demo_loaded) -> None:
    from app.voice import audio, pipeline

    monkeypatch.setattr(audio, "list_input_devices", lambda: [])

    def must_not_load(*a: Any, **kw: Any) -> Any:
        raise AssertionError("the models must not load without a microphone")

    monkeypatch.setattr(pipeline, "make_pipeline", must_not_load)
    w = MainWindow(anatomy=None, start_threads=False, mode="realtime")
    qtbot.addWidget(w)
    try:
        w.start_voice(None)
        sentence = "No microphone was found; touch and text commands still work."
        qtbot.waitUntil(lambda: sentence in w.status.problem.toolTip(), timeout=5000)
        assert "No microphone" in w.status.listening.text()
        w.set_loaded(demo_loaded)  # the case loads after voice gave up: the sentence stays
        assert sentence in w.status.problem.toolTip()
        w.push_to_talk(True)  # nothing to talk to: said in plain words, no crash
        assert "not running" in w.status.reply_text()
    finally:
        w.shutdown()
