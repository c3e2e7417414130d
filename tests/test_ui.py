"""The console window (pytest-qt, offscreen): touch panel, hotkeys, undo, the text box, state
following, missing case parts, broken and missing video, frames on screen.

Windows run with ``start_threads=False`` where a test composes frames itself
(``window.render_now()``), so what is checked is deterministic; the video feed thread still
runs. Keyboard shortcuts need an active window: offscreen Qt only has one when asked with
``QApplication.setActiveWindow``.
"""

from __future__ import annotations

import os
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication, QPushButton  # noqa: E402

from app.core.registry import Actor  # noqa: E402
from app.core.vocab import IR_ALL_FIELDS  # noqa: E402
from app.session.loader import LoadedCase  # noqa: E402
from app.ui import hotkeys  # noqa: E402
from app.ui.commands import TEXT_UNAVAILABLE  # noqa: E402
from app.ui.main import MainWindow, ScreenshotTaker, read_commands  # noqa: E402
from app.ui.panes import format_trace  # noqa: E402
from app.ui.touch import MIN_TARGET_PX  # noqa: E402

pytestmark = pytest.mark.gui

VOICE = Actor(role="surgeon", source="voice")


# ----------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def demo_loaded(tmp_path_factory) -> LoadedCase:
    from app.data.case import load_case
    from app.data.demo import ensure_demo_case
    from app.render.meshes import MeshCache
    from app.render.scene import load_anatomy_model

    folder = ensure_demo_case(out=tmp_path_factory.mktemp("ui-demo") / "case", _scale=0.25)
    case = load_case(folder)
    model = load_anatomy_model(case, cache=MeshCache(cache_dir=tmp_path_factory.mktemp("m")))
    return LoadedCase(case=case, model=model)


def _activate(qtbot, window: MainWindow) -> None:
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        QApplication.setActiveWindow(window)  # offscreen Qt does not activate by itself


@pytest.fixture()
def make_window(qtbot):
    made: list[MainWindow] = []

    def make(**kw: Any) -> MainWindow:
        kw.setdefault("anatomy", None)
        kw.setdefault("start_threads", False)
        w = MainWindow(**kw)
        qtbot.addWidget(w)
        w.resize(1400, 860)
        made.append(w)
        return w

    yield make
    for w in made:
        w.shutdown()


@pytest.fixture()
def window(make_window, demo_loaded, qtbot) -> MainWindow:
    w = make_window(text_available=False)
    w.set_loaded(demo_loaded)
    _activate(qtbot, w)
    # The composed size follows the video's aspect: let the first video frame arrive.
    qtbot.waitUntil(lambda: w.feed is not None and w.feed.has_frame, timeout=5000)
    return w


def _click(qtbot, window: MainWindow, name: str) -> None:
    b: QPushButton = window.touch.buttons[name]
    assert b.isEnabled(), f"{name} is disabled"
    qtbot.mouseClick(b, Qt.MouseButton.LeftButton)


def _key(qtbot, window: MainWindow, key: Qt.Key,
         mod: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
    qtbot.keyClick(window.view, key, mod)


def _frame(window: MainWindow) -> np.ndarray:
    window.render_now()
    frame = window.view.current_frame()
    assert frame is not None
    return frame


def _audits(window: MainWindow) -> list[Any]:
    recs: list[Any] = []
    window.registry.audit.connect(recs.append)
    return recs


# ----------------------------------------------------------------------------- touch panel

def test_touch_targets_are_large(window):
    for name, b in window.touch.buttons.items():
        assert b.sizeHint().height() >= MIN_TARGET_PX, name
        assert b.minimumSizeHint().height() >= 48, name


def test_touch_panel_drives_every_overlay(qtbot, window):
    st = window.state
    audits = _audits(window)
    # Patient information
    _click(qtbot, window, "ir_all")
    assert st.ir.visible and set(st.ir.fields) == set(IR_ALL_FIELDS)
    _click(qtbot, window, "ir_pft")
    assert "pft" not in st.ir.fields
    assert not window.touch.buttons["ir_pft"].isChecked()
    assert window.touch.buttons["ir_bmi"].isChecked()
    _click(qtbot, window, "ir_pft")
    assert "pft" in st.ir.fields
    # CT
    _click(qtbot, window, "ct_show")
    assert st.iv.mode == "small_views"
    mid = st.iv.pos_dict()
    _click(qtbot, window, "ct_step_p10")
    assert st.iv.pos_dict()["axial"] == mid["axial"] + 10
    _click(qtbot, window, "ct_plane_coronal")
    _click(qtbot, window, "ct_step_m1")
    assert st.iv.pos_dict()["coronal"] == mid["coronal"] - 1
    _click(qtbot, window, "ct_middle")
    assert st.iv.pos_dict()["coronal"] == mid["coronal"]
    _click(qtbot, window, "ct_zoom_in")
    assert st.iv.mode == "zoom_view" and st.iv.main == "coronal"
    _click(qtbot, window, "ct_plane_sagittal")  # in the zoom view: the new main plane
    assert st.iv.main == "sagittal"
    _click(qtbot, window, "ct_window_bone")
    assert st.iv.window == "bone" and window.touch.buttons["ct_window_bone"].isChecked()
    assert not window.touch.buttons["ct_window_lung"].isChecked()
    _click(qtbot, window, "ct_zoom_out")
    assert st.iv.mode == "small_views"
    _click(qtbot, window, "ct_reset")
    assert st.iv.window == "lung" and st.iv.pos_dict() == mid
    # 3D model
    _click(qtbot, window, "ar_show")
    assert st.ar.visible and "right_upper_lobe" in st.ar.structures  # the tumour lobe
    _click(qtbot, window, "ar_lung_nodules")
    assert "lung_nodules" not in st.ar.structures
    _click(qtbot, window, "ar_group_left_lung")
    assert {"left_upper_lobe", "left_lower_lobe"} <= set(st.ar.structures)
    assert window.touch.buttons["ar_group_left_lung"].isChecked()
    _click(qtbot, window, "ar_view_left")
    assert st.ar.view == "left" and window.touch.buttons["ar_view_left"].isChecked()
    _click(qtbot, window, "ar_rotate_right")
    assert st.ar.rotation == "right"
    _click(qtbot, window, "ar_zoom_nodule")
    assert st.ar.zoom_level == 1 and st.ar.zoom_target == "lung_nodules"
    _click(qtbot, window, "ar_zoom_in")
    assert st.ar.zoom_level == 2
    _click(qtbot, window, "ar_zoom_out")
    assert st.ar.zoom_level == 1
    _click(qtbot, window, "ar_reset")
    assert st.ar.zoom_level == 0 and st.ar.view == "surgical"
    _click(qtbot, window, "ar_hide")
    assert not st.ar.visible
    _click(qtbot, window, "ir_hide")
    assert not st.ir.visible
    # Every click went through the registry as the nurse on the touch panel.
    assert audits and all(r.actor == Actor(role="nurse", source="touch") for r in audits)
    assert all(r.ok for r in audits)
    assert "touch (nurse)" in window.trace.lines()[0]


def test_touch_and_frames(qtbot, window):
    dark_before = _frame(window)
    _click(qtbot, window, "ct_show")
    frame = _frame(window)
    assert frame.shape == dark_before.shape
    rects = window.scene.rects()
    assert {"ct_axial", "ct_coronal", "ct_sagittal"} <= set(rects)
    r = rects["ct_coronal"]
    view = frame[r.y:r.bottom, r.x:r.right]
    assert view.std() > 20  # a CT image is on screen, not flat video
    _click(qtbot, window, "ir_all")
    frame = _frame(window)
    r = window.scene.rects()["ir"]
    assert (frame[r.y:r.bottom, r.x:r.right].min(axis=2) > 215).sum() > 300  # text


def test_toggles_follow_changes_made_elsewhere(qtbot, window):
    reg = window.registry
    assert reg.dispatch("IR.SHOW", {"fields": ["age"]}, VOICE).ok
    b = window.touch.buttons
    assert b["ir_sex"].isChecked() and not b["ir_pft"].isChecked()
    assert reg.dispatch("IV.ZOOM_IN_MOVE", {"plane": "sagittal"}, VOICE).ok
    assert window.touch.active_plane == "sagittal"
    assert b["ct_plane_sagittal"].isChecked() and b["ct_zoom_in"].isChecked()
    assert b["ct_show"].isChecked()
    # From another thread (a spoken/typed command): the UI follows through the bridge.
    done = threading.Event()

    def voice() -> None:
        reg.dispatch("AR.SHOW", {"view": "posterior"}, VOICE)
        done.set()

    threading.Thread(target=voice).start()
    assert done.wait(5)
    qtbot.waitUntil(lambda: b["ar_view_posterior"].isChecked(), timeout=3000)
    assert b["ar_show"].isChecked()


def test_undo_button_and_shortcut(qtbot, window):
    _click(qtbot, window, "ct_show")
    _click(qtbot, window, "ct_step_p10")
    before = window.state.iv.pos_dict()["axial"]
    qtbot.mouseClick(window.command_box.undo_button, Qt.MouseButton.LeftButton)
    assert window.state.iv.pos_dict()["axial"] == before - 10
    _key(qtbot, window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert window.state.iv.mode == "none"
    _key(qtbot, window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert "nothing to undo" in window.status.reply_text().lower()


# ----------------------------------------------------------------------------- hotkeys

def test_hotkeys_dispatch_through_the_registry(qtbot, window):
    st = window.state
    audits = _audits(window)
    _key(qtbot, window, Qt.Key.Key_C)
    assert st.iv.mode == "small_views"
    mid = st.iv.pos_dict()
    _key(qtbot, window, Qt.Key.Key_Up)
    assert st.iv.pos_dict()["axial"] == mid["axial"] + 1
    _key(qtbot, window, Qt.Key.Key_2)
    assert window.touch.active_plane == "coronal"
    _key(qtbot, window, Qt.Key.Key_PageUp)
    assert st.iv.pos_dict()["coronal"] == mid["coronal"] + 10
    _key(qtbot, window, Qt.Key.Key_Left)
    assert st.iv.pos_dict()["coronal"] == mid["coronal"] + 9
    _key(qtbot, window, Qt.Key.Key_PageDown)
    assert st.iv.pos_dict()["coronal"] == mid["coronal"] - 1
    _key(qtbot, window, Qt.Key.Key_Home)
    assert st.iv.pos_dict()["coronal"] == mid["coronal"]
    _key(qtbot, window, Qt.Key.Key_Z)
    assert st.iv.mode == "zoom_view" and st.iv.main == "coronal"
    _key(qtbot, window, Qt.Key.Key_3)
    assert st.iv.main == "sagittal"
    _key(qtbot, window, Qt.Key.Key_Z)
    assert st.iv.mode == "small_views"
    _key(qtbot, window, Qt.Key.Key_W)
    assert st.iv.window == "mediastinum"
    _key(qtbot, window, Qt.Key.Key_I)
    assert st.ir.visible and set(st.ir.fields) == set(IR_ALL_FIELDS)
    _key(qtbot, window, Qt.Key.Key_I)
    assert not st.ir.visible
    _key(qtbot, window, Qt.Key.Key_M)
    assert st.ar.visible
    _key(qtbot, window, Qt.Key.Key_V)
    assert st.ar.view == "anterior"
    _key(qtbot, window, Qt.Key.Key_R)
    assert st.ar.rotation == "horizontal"
    _key(qtbot, window, Qt.Key.Key_R, Qt.KeyboardModifier.ShiftModifier)
    assert st.ar.rotation == "vertical"
    _key(qtbot, window, Qt.Key.Key_Plus)
    assert st.ar.zoom_level == 1
    _key(qtbot, window, Qt.Key.Key_Minus)
    assert st.ar.zoom_level == 0
    _key(qtbot, window, Qt.Key.Key_M)
    assert not st.ar.visible
    _key(qtbot, window, Qt.Key.Key_C)
    assert st.iv.mode == "none"
    assert audits and all(r.actor == Actor(role="nurse", source="hotkey") for r in audits)


def test_slash_focuses_the_command_box_and_typing_is_not_a_hotkey(qtbot, window):
    _key(qtbot, window, Qt.Key.Key_Slash)
    assert window.command_box.edit.hasFocus()
    qtbot.keyClicks(window.command_box.edit, "cm 1")
    assert window.command_box.edit.text() == "cm 1"
    assert window.state.iv.mode == "none" and not window.state.ar.visible  # C/M typed only


def test_every_hotkey_is_documented_and_handled():
    text = hotkeys.help_text()
    for hk in hotkeys.HOTKEYS:
        assert callable(getattr(MainWindow, hk.handler)), hk.handler
        assert hk.label in text and hk.what in text
    assert hotkeys.__doc__ and "PageUp" in hotkeys.__doc__


# ----------------------------------------------------------------------------- text box

class FakeOrchestrator:
    """Applies one fixed action and returns a trace record, noting the thread it ran on."""

    def __init__(self) -> None:
        self.registry: Any = None
        self.threads: list[int] = []

    def handle_text(self, text: str) -> dict[str, Any]:
        self.threads.append(threading.get_ident())
        time.sleep(0.05)  # an interpreter takes a while: never on the UI thread
        result = self.registry.dispatch("IV.ZOOM_IN_MOVE", {"plane": "axial"},
                                        Actor(role="surgeon", source="text"))
        return {"id": "7", "input": {"text": text},
                "stages": {"correct": {"text": text, "valid": True, "ms": 0.4},
                           "route": {"agent": "IV", "ms": 0.1},
                           "decide": {"actions": result.actions(), "ms": 0.2, "apply_ms": 0.3}},
                "tier": "lexicon", "flow": ["correct", "route", "IV", "end"],
                "invalid_cycles": 0, "total_ms": 1.2, "state": self.registry.state.snapshot(),
                "reply": {"ok": result.ok, "text": result.message}}


def test_text_box_runs_the_orchestrator_off_the_ui_thread(qtbot, make_window, demo_loaded):
    fake = FakeOrchestrator()
    w = make_window(orchestrator=fake)
    fake.registry = w.registry
    w.set_loaded(demo_loaded)
    _activate(qtbot, w)
    w.command_box.edit.setText("zoom in on axial")
    qtbot.keyClick(w.command_box.edit, Qt.Key.Key_Return)
    assert w.command_box.edit.text() == ""
    qtbot.waitUntil(lambda: len(w.trace.records) == 1, timeout=5000)
    assert fake.threads and fake.threads[0] != threading.get_ident()
    assert w.state.iv.mode == "zoom_view" and w.state.iv.main == "axial"
    assert "axial view enlarged" in w.status.reply_text()
    assert "zoom in on axial" in w.status.heard.text()
    line = w.trace.lines()[0]
    assert "#7" in line and "IV ZOOM_IN_MOVE plane=axial" in line and "correct 0.4 ms" in line
    assert w.touch.buttons["ct_zoom_in"].isChecked()


def test_text_box_with_the_real_interpreter(qtbot, make_window, demo_loaded):
    """The window's own orchestrator (through the locked registry), when the build has one."""
    from app.ui.commands import text_commands_available

    if not text_commands_available():
        pytest.skip("the text interpreter is not part of this build")
    w = make_window()
    w.set_loaded(demo_loaded)
    w.submit_text("show the ct and zoom in on coronal")
    qtbot.waitUntil(lambda: len(w.trace.records) == 1, timeout=30000)
    rec = w.trace.records[0]
    assert rec["reply"]["ok"], rec["reply"]
    assert w.state.iv.mode == "zoom_view" and w.state.iv.main == "coronal"
    assert rec["state"]["iv"]["main"] == "coronal"


def test_text_box_says_plainly_when_text_commands_are_missing(qtbot, window):
    assert "not available" in window.command_box.edit.placeholderText()
    window.command_box.edit.setText("show the ct")
    qtbot.keyClick(window.command_box.edit, Qt.Key.Key_Return)
    assert window.status.reply_text() == TEXT_UNAVAILABLE
    assert window.state.iv.mode == "none"


def test_runner_reports_an_interpreter_that_fails_to_import(qtbot, make_window, demo_loaded):
    w = make_window(text_available=True)

    def broken() -> Any:
        raise ImportError("No module named 'app.agents.interpreter'")

    w.runner._factory = broken
    w.set_loaded(demo_loaded)
    w.submit_text("show the ct")
    qtbot.waitUntil(lambda: w.status.reply_text() == TEXT_UNAVAILABLE, timeout=5000)


def test_format_trace():
    rec = {"id": "3", "input": {"text": "coronal plus 100"},
           "stages": {"correct": {"text": "coronal plus 100", "valid": True, "ms": 1.0},
                      "route": {"agent": "IV", "ms": 0.2},
                      "decide": {"actions": [{"agent": "IV", "action": "SHOW_MOVE",
                                              "params": {"coronal": "+100"}}], "ms": 2.0}},
           "tier": "lexicon", "total_ms": 3.4, "reply": {"ok": True, "text": "CT: coronal 356."}}
    text = format_trace(rec)
    assert "#3" in text and "IV SHOW_MOVE coronal=+100" in text and "CT: coronal 356." in text
    assert "route 0.2 ms" in text and "total 3.4 ms" in text and "tier lexicon" in text


def test_read_commands(tmp_path):
    f = tmp_path / "cmds.txt"
    f.write_text("# warm-up\nshow the ct\n\n  zoom in  \n")
    assert read_commands(f) == ["show the ct", "zoom in"]


# ----------------------------------------------------------------------------- missing parts

def test_case_without_ct_or_labels_keeps_running_with_plain_messages(qtbot, make_window,
                                                                     tmp_path, demo_loaded):
    from app.data.case import load_case

    # Only the clinical sheet: no CT, no labels, no video.
    src = demo_loaded.case.paths["clinical"]
    (tmp_path / src.name).write_bytes(Path(src).read_bytes())
    case = load_case(tmp_path)
    assert case.ct is None and case.labels is None and case.clinical is not None
    w = make_window(text_available=False)
    w.set_loaded(LoadedCase(case=case))
    _activate(qtbot, w)
    t = w.touch
    assert "no CT" in t.ct_note.text() and not t.buttons["ct_show"].isEnabled()
    assert "no label maps" in t.ar_note.text() and not t.buttons["ar_show"].isEnabled()
    assert t.buttons["ir_all"].isEnabled()
    assert "No CT was found" in w.status.problem.toolTip()
    assert any("No label maps" in line for line in w.trace.lines())
    _key(qtbot, w, Qt.Key.Key_C)  # refused in plain words, nothing breaks
    assert "No CT is loaded" in w.status.reply_text()
    _key(qtbot, w, Qt.Key.Key_M)
    assert "no 3D model" in w.status.reply_text()
    _click(qtbot, w, "ir_all")
    assert w.state.ir.visible
    qtbot.waitUntil(lambda: w.feed is not None and w.feed.message() is not None)
    frame = _frame(w)
    assert "ir" in w.scene.rects()
    # no video: dark background (the IR box and the notice are drawn over it)
    assert np.median(frame[frame.shape[0] // 2:, : frame.shape[1] // 3].reshape(-1, 3),
                     axis=0).max() < 30


def test_no_video_shows_a_dark_background_with_a_message(qtbot, make_window, tmp_path,
                                                         demo_loaded):
    from app.data.case import load_case

    (tmp_path / "case.toml").write_text(f'[ct]\npath = "{demo_loaded.case.paths["ct"]}"\n')
    case = load_case(tmp_path)
    assert case.video_path is None and case.video_device is None
    w = make_window(text_available=False)
    w.set_loaded(LoadedCase(case=case))
    assert w.feed is not None and w.feed.message() is not None
    frame = _frame(w)
    h, wd = frame.shape[:2]
    corner = frame[: h // 5, : wd // 5].reshape(-1, 3)
    assert np.abs(corner.astype(int) - (14, 16, 20)).max() <= 2  # plain dark background
    centre = frame[h // 2 - 30: h // 2 + 30, wd // 2 - 150: wd // 2 + 150]
    assert (centre.min(axis=2) > 200).sum() > 50  # "No endoscope video" written there
    assert "No endoscope video" in w.status.problem.toolTip()


def test_broken_video_file_keeps_the_console_running(qtbot, make_window, tmp_path,
                                                     demo_loaded):
    from app.data.case import load_case

    (tmp_path / "video.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42" + bytes(range(256)) * 8)
    (tmp_path / "case.toml").write_text(f'[ct]\npath = "{demo_loaded.case.paths["ct"]}"\n')
    case = load_case(tmp_path)
    assert any(p.part == "video" for p in case.problems)
    w = make_window(text_available=False)
    w.set_loaded(LoadedCase(case=case))
    _activate(qtbot, w)
    qtbot.waitUntil(lambda: w.feed.message() is not None, timeout=5000)
    qtbot.waitUntil(lambda: "video" in w.status.problem_text().lower(), timeout=3000)
    _key(qtbot, w, Qt.Key.Key_C)
    assert w.state.iv.mode == "small_views"  # still fully usable
    frame = _frame(w)
    assert "ct_axial" in w.scene.rects()
    # dark, no picture (the note about the video sits in the top-left corner)
    assert frame[-frame.shape[0] // 4:, : frame.shape[1] // 4].max() < 40
    top_left = frame[: frame.shape[0] // 6, : frame.shape[1] // 3]
    assert (top_left.min(axis=2) > 200).sum() > 30


def test_failed_case_load_leaves_an_empty_running_console(qtbot, make_window):
    w = make_window(text_available=False)
    w.set_loaded(LoadedCase(error="The case could not be loaded: the folder /x does not exist."))
    _activate(qtbot, w)
    assert "could not be loaded" in w.status.problem_text()
    assert not w.touch.buttons["ct_show"].isEnabled()
    assert "No case is loaded" in w.touch.ct_note.text()
    frame = _frame(w)
    assert frame.max() > 200  # the message is drawn on the dark background
    assert w.scene.status().rects == {}
    from app.ui.main import console_ready

    assert console_ready(w)  # a screenshot of the explanation is not held up


# ----------------------------------------------------------------------------- threads

def test_background_load_and_live_frames(qtbot, make_window, demo_loaded, monkeypatch):
    """The window is up at once; the case loads on a thread; frames keep arriving."""
    monkeypatch.setenv("VISA_CACHE_DIR", str(Path(demo_loaded.case.root).parent / "cache"))
    w = make_window(text_available=False, start_threads=True)
    w.show()
    qtbot.waitExposed(w)
    assert w.touch.loading.isVisible()
    w.load_case(demo_loaded.case.root)
    qtbot.waitUntil(lambda: w.loaded is not None, timeout=30000)
    assert w.loaded.error is None and w.loaded.model is not None
    assert not w.touch.loading.isVisible()
    qtbot.waitUntil(lambda: w.render_loop.first_video_frame.is_set(), timeout=10000)
    shown = w.view.frames_shown
    qtbot.waitUntil(lambda: w.view.frames_shown >= shown + 5, timeout=10000)  # video plays
    assert w.view.current_frame().shape[2] == 3


def test_screenshot_waits_for_the_overlays(qtbot, make_window, demo_loaded, tmp_path):
    w = make_window(text_available=False, start_threads=True, anatomy="auto")
    w.show()
    qtbot.waitExposed(w)
    w.set_loaded(demo_loaded)
    w.send("IR.RESET")
    w.send("IV.SHOW_MOVE")
    w.send("AR.SHOW")
    codes: list[int] = []
    shot = ScreenshotTaker(w, tmp_path / "shot.png", timeout_s=60, on_done=codes.append).start()
    qtbot.waitUntil(lambda: bool(codes), timeout=65000)
    assert codes == [0] and shot.exit_code == 0
    assert (tmp_path / "shot.png").stat().st_size > 10_000
    # The 3D model was drawn before the shot (not the "Preparing…" note).
    assert w.scene.status().ar_seq is not None


# ----------------------------------------------------------------------------- binding defects

def test_signal_emits_keep_reference_counts_balanced(qtbot, make_window, demo_loaded):
    """PySide6 6.12.0's emit() drops a reference to True per call (the interpreter aborts after
    a few minutes of video); app.ui.qtcompat.emit gives it back. Every frame emits a signal."""
    import sys

    from PySide6.QtCore import QObject, Signal

    from app.ui.qtcompat import emit

    class Probe(QObject):
        ping = Signal(object)

    probe = Probe()
    probe.ping.connect(lambda value: None)
    before = sys.getrefcount(True)
    for i in range(300):
        emit(probe.ping, i)
    assert abs(sys.getrefcount(True) - before) < 20
    w = make_window(text_available=False)
    w.set_loaded(demo_loaded)
    w.render_now()
    before = sys.getrefcount(True)
    for _ in range(200):
        w.render_loop._last_key = None  # force a new frame each time
        w.render_loop.render_once()  # notifies the UI through a signal
        QApplication.processEvents()
    assert w.view.frames_shown >= 150
    assert abs(sys.getrefcount(True) - before) < 40


# ----------------------------------------------------------------------------- video feed

class FlakyDevice:
    """A capture device that plays, is unplugged, then comes back."""

    is_live = True
    fps = 30.0

    def __init__(self) -> None:
        self.reads = 0
        self.status = "playing"
        self.last_error: str | None = None

    def read(self) -> np.ndarray | None:
        self.reads += 1
        time.sleep(0.005)
        if 5 <= self.reads < 10:
            self.status = "disconnected"
            self.last_error = "The live video from capture device 0 stopped; the console keeps " \
                              "trying to reconnect."
            return None
        self.status, self.last_error = "playing", None
        return np.full((90, 160, 3), self.reads % 255, np.uint8)

    def open(self) -> bool:
        return True

    def close(self) -> None:
        pass


def test_video_feed_says_when_a_device_is_lost_and_recovers():
    from app.ui.video import VideoFeed

    dev = FlakyDevice()
    feed = VideoFeed(0, source_factory=lambda src: dev).start()
    try:
        assert _wait_for(lambda: feed.message() is not None)
        headline, detail = feed.message()
        assert "reconnecting" in headline and "capture device 0" in detail
        assert feed.latest()[1] is None  # no stale picture of a lost live feed
        assert _wait_for(lambda: dev.reads > 10 and feed.message() is None, 10.0)
        assert feed.latest()[1] is not None and feed.status == "playing"
    finally:
        feed.stop()


def test_video_feed_without_a_source_explains_itself():
    from app.ui.video import NO_VIDEO, VideoFeed

    feed = VideoFeed(None).start()
    assert feed.message()[0] == NO_VIDEO and feed.status == "none"
    assert feed.latest() == (0, None)
    feed.stop()


def _wait_for(pred: Any, timeout: float = 5.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.01)
    return False


def test_the_consoles_question_offers_its_candidates_as_touch_buttons(
        qtbot, make_window, demo_loaded, monkeypatch, tmp_path):
    """Ask, don't guess, on the touch panel: an unsure command shows its question with one
    button per candidate; the nurse's tap answers it and only then does the state change."""
    monkeypatch.setenv("VISA_TIERS", "")  # the grammar alone: the same question every run
    w = make_window()
    w.set_loaded(demo_loaded)
    _activate(qtbot, w)
    w.submit_text("do the fnord with the model")
    qtbot.waitUntil(lambda: len(w.trace.records) == 1, timeout=30000)
    assert w.trace.records[0]["question"]["options"] == ["show the 3D model"]
    assert not w.state.ar.visible  # nothing changed while asking
    assert w.touch.question_box.isVisible()
    button = w.touch.buttons["answer_1"]
    assert button.isVisible() and button.text() == "Show the 3D model"
    assert not w.touch.buttons["answer_2"].isVisible()
    w.grab().save(str(tmp_path / "question.png"))
    if os.environ.get("VISA_SHOT_DIR"):  # for looking at it
        w.grab().save(os.path.join(os.environ["VISA_SHOT_DIR"], "ask_back_touch.png"))
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(w.trace.records) == 2, timeout=30000)
    rec = w.trace.records[1]
    assert rec["tier"] == "ask" and rec["invalid_cycles"] == 1
    assert w.state.ar.visible
    assert not w.touch.question_box.isVisible()


def test_cancel_on_the_touch_panel_drops_the_question(qtbot, make_window, demo_loaded,
                                                      monkeypatch):
    monkeypatch.setenv("VISA_TIERS", "")
    w = make_window()
    w.set_loaded(demo_loaded)
    _activate(qtbot, w)
    w.submit_text("do the fnord with the model")
    qtbot.waitUntil(lambda: len(w.trace.records) == 1, timeout=30000)
    qtbot.mouseClick(w.touch.buttons["answer_cancel"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(w.trace.records) == 2, timeout=30000)
    assert w.trace.records[1]["reply"]["text"] == "Okay, nothing was changed."
    assert not w.state.ar.visible


def test_a_broken_hospital_word_list_is_reported_in_the_status_strip(
        qtbot, make_window, tmp_path, monkeypatch):
    import app.language as language

    (tmp_path / "words.toml").write_text("this is not toml", encoding="utf-8")
    monkeypatch.setenv("VISA_LANGUAGE_DIR", str(tmp_path))
    language.reload()
    try:
        w = make_window(text_available=False)
        assert any("cannot be read" in m for _, m in w.status._problems), w.status._problems
    finally:
        monkeypatch.delenv("VISA_LANGUAGE_DIR")
        language.reload()
