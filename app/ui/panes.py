"""The status strip, the trace pane and the text command box.

- :class:`StatusStrip`: the voice indicator (every ``ListeningState``, each its own colour and
  words), a microphone level meter and the Stop button, the last thing heard or typed, the console's last answer (green when done, amber when refused), the language
  model's start-up warm-up (words and a small bar, then "ready") and what is wrong (case
  problems, video trouble, a model that could not start) in plain words.
- :class:`TracePane`: the last commands, newest first, each with its stages and timings from the
  orchestrator's trace record (DESIGN §5.3); touch and hotkey commands appear too.
- :class:`CommandBox`: type a command, Enter runs it (on a worker thread, never here).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.ui.qtcompat import emit

OK_RGB = "#7ee08a"
WARN_RGB = "#ffc857"
ERROR_RGB = "#ff7b72"
MUTED_RGB = "#9aa7b8"
TEXT_RGB = "#e8ecf2"

# ListeningState value -> (colour, words). Distinct at a glance (ANCHORS §3.4).
LISTENING_LOOK: dict[str, tuple[str, str]] = {
    "off": (MUTED_RGB, "Voice off"),
    "idle": ("#8ab4f8", "Say \u201cdavinci\u201d"),
    "wake_heard": ("#56d4dd", "Yes?"),
    "recording": ("#ff5c5c", "Listening"),
    "listening": ("#ff5c5c", "Listening"),
    "thinking": (WARN_RGB, "Working"),
    "done": (OK_RGB, "Done"),
    "rejected": ("#ff9e64", "Not done"),
    "speaking": ("#c792ea", "Speaking"),
}

_SEVERITY_COLOUR = {"error": ERROR_RGB, "warning": WARN_RGB, "info": MUTED_RGB}


def _label(text: str = "", muted: bool = False, bold: bool = False) -> QLabel:
    lab = QLabel(text)
    lab.setTextFormat(Qt.TextFormat.PlainText)
    lab.setStyleSheet(f"color: {MUTED_RGB if muted else TEXT_RGB};")
    if bold:
        f = lab.font()
        f.setBold(True)
        lab.setFont(f)
    return lab


class StatusStrip(QFrame):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("statusStrip")
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setStyleSheet("#statusStrip { background: #151a22; border-top: 1px solid #2a3240; }")
        outer = QVBoxLayout(self)
        outer.setContentsMargins(10, 6, 10, 6)
        outer.setSpacing(3)
        row = QHBoxLayout()
        row.setSpacing(14)
        self.listening = _label("\u25cf Voice off", bold=True)
        self.listening.setToolTip("Voice: say \u201cdavinci\u201d and the command, or hold "
                                  "Space / F12 and speak. Touch, keys and the text box always "
                                  "work.")
        self.case_label = _label("", muted=True)
        self.heard = _label("Heard: \u2014")
        self.heard.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.heard.setWordWrap(True)  # a long command wraps instead of widening the window
        self.reply = _label("")
        self.reply.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.reply.setWordWrap(True)
        self.level = QProgressBar()
        self.level.setObjectName("voiceLevel")
        self.level.setRange(0, 60)
        self.level.setValue(0)
        self.level.setTextVisible(False)
        self.level.setFixedSize(60, 8)
        self.level.setToolTip("Microphone level")
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("voiceStop")
        self.stop_button.setToolTip("Stop the spoken reply (Esc)")
        self.stop_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.warm_label = _label("", muted=True)
        self.warm_label.setObjectName("warmupLabel")
        self.warm_bar = QProgressBar()
        self.warm_bar.setObjectName("warmupBar")
        self.warm_bar.setRange(0, 100)
        self.warm_bar.setTextVisible(False)
        self.warm_bar.setFixedSize(60, 8)
        self.warm_label.hide()
        self.warm_bar.hide()
        row.addWidget(self.listening)
        row.addWidget(self.level)
        row.addWidget(self.stop_button)
        row.addWidget(self.heard, 2)
        row.addWidget(self.reply, 3)
        row.addWidget(self.case_label)
        outer.addLayout(row)
        # Second line, shown while there is something to say: what is wrong (left) and the
        # language model's warm-up (right).
        row2 = QHBoxLayout()
        row2.setSpacing(10)
        self.problem = _label("")
        self.problem.setWordWrap(True)
        self.problem.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.problem.hide()
        row2.addWidget(self.problem, 1)
        row2.addStretch(0)
        row2.addWidget(self.warm_label)
        row2.addWidget(self.warm_bar)
        outer.addLayout(row2)
        self._problems: list[tuple[str, str]] = []
        self._video: str | None = None
        self._video_severity = "error"
        self._listening_state = "off"
        self.set_listening("off")

    # -- setters --------------------------------------------------------------------------
    def set_listening(self, state: str, text: str | None = None) -> None:
        """The voice indicator: one of :data:`LISTENING_LOOK` (``ListeningState`` values)."""
        colour, words = LISTENING_LOOK.get(state, (TEXT_RGB, state))
        self._listening_state = state
        self.listening.setText(f"\u25cf {text or words}")
        self.listening.setStyleSheet(f"color: {colour};")

    @property
    def listening_state(self) -> str:
        return self._listening_state

    def set_level(self, rms_dbfs: float) -> None:
        """The microphone level meter (−60 dBFS … 0)."""
        self.level.setValue(max(0, min(60, round(rms_dbfs + 60))))

    def set_transcript(self, text: str) -> None:
        self.heard.setText(f"Heard: \u201c{text}\u201d" if text else "Heard: \u2014")

    def set_reply(self, text: str, ok: bool | None = True) -> None:
        colour = TEXT_RGB if ok is None else (OK_RGB if ok else WARN_RGB)
        self.reply.setText(text)
        self.reply.setStyleSheet(f"color: {colour};")

    def reply_text(self) -> str:
        return self.reply.text()

    # -- the language model's warm-up ------------------------------------------------------
    def show_warmup_progress(self, fraction: float, detail: str = "") -> None:
        """"Warming the language model 40%" and a small bar (``detail``: the tooltip)."""
        pct = round(100 * max(0.0, min(1.0, fraction)))
        self.warm_label.setText(f"Warming the language model {pct}%")
        self.warm_label.setStyleSheet(f"color: {MUTED_RGB};")
        self.warm_label.setToolTip(
            (detail + "\n" if detail else "") + "Touch, keys and most commands work now; "
            "unusual phrasings are understood once the language model is ready.")
        self.warm_bar.setValue(pct)
        self.warm_bar.setToolTip(detail)
        self.warm_label.show()
        self.warm_bar.show()

    def show_warmup_done(self, text: str = "Language model ready", detail: str = "") -> None:
        self.warm_label.setText(text)
        self.warm_label.setStyleSheet(f"color: {OK_RGB};")
        self.warm_label.setToolTip(detail)
        self.warm_bar.hide()
        self.warm_label.show()

    def hide_warmup(self) -> None:
        self.warm_label.hide()
        self.warm_bar.hide()

    def warmup_text(self) -> str:
        """What the warm-up indicator says ("" when hidden)."""
        return self.warm_label.text() if not self.warm_label.isHidden() else ""

    def set_case(self, name: str) -> None:
        self.case_label.setText(name)

    def set_problems(self, problems: list[tuple[str, str]]) -> None:
        """(severity, message) pairs; the most severe is shown, the rest counted."""
        order = {"error": 0, "warning": 1, "info": 2}
        self._problems = sorted(problems, key=lambda p: order.get(p[0], 3))
        self._refresh_problem()

    def add_problem(self, severity: str, message: str) -> None:
        if (severity, message) not in self._problems:
            self._problems.append((severity, message))
            self.set_problems(self._problems)

    def set_video(self, message: str | None, severity: str = "error") -> None:
        """The video's trouble (lost signal, broken file: ``error``; no video at all: ``info``)."""
        self._video = message
        self._video_severity = severity
        self._refresh_problem()

    def problem_text(self) -> str:
        return self.problem.text()

    def _refresh_problem(self) -> None:
        video = [(self._video_severity, self._video)] if self._video else []
        if self._video_severity == "error":
            items = video + list(self._problems)
        else:
            items = list(self._problems) + video
        if not items:
            self.problem.hide()
            self.problem.setText("")
            return
        severity, message = items[0]
        more = len(items) - 1
        text = message + (f"  (+{more} more: see the trace)" if more else "")
        self.problem.setText(text)
        self.problem.setToolTip("\n".join(m for _, m in items))
        self.problem.setStyleSheet(f"color: {_SEVERITY_COLOUR.get(severity, TEXT_RGB)};")
        self.problem.show()


def _fmt_params(params: dict[str, Any]) -> str:
    parts = []
    for k, v in params.items():
        if isinstance(v, list | tuple):
            v = ",".join(str(x) for x in v)
        parts.append(f"{k}={v}")
    return " ".join(parts)


def format_trace(record: dict[str, Any]) -> str:
    """One trace record as two lines: what was asked and done, then stages and timings."""
    stages = record.get("stages") or {}
    text = (record.get("input") or {}).get("text", "")
    decide = stages.get("decide") or {}
    actions = decide.get("actions") or []
    done = "; ".join(f"{a.get('agent')} {a.get('action')}"
                     + (f" {_fmt_params(a.get('params') or {})}" if a.get("params") else "")
                     for a in actions) or "no action"
    reply = record.get("reply") or {}
    head = f"#{record.get('id', '?')}  \u201c{text}\u201d \u2192 {done}"
    if reply.get("text"):
        head += f"  \u2014 {reply['text']}"
    timing = []
    for name in ("stt", "correct", "route", "decide"):
        st = stages.get(name)
        if isinstance(st, dict) and "ms" in st:
            timing.append(f"{name} {float(st['ms']):.1f} ms")
    if "apply_ms" in decide:
        timing.append(f"apply {float(decide['apply_ms']):.1f} ms")
    corrected = (stages.get("correct") or {}).get("text")
    tail = f"tier {record.get('tier', '?')} \u00b7 " + " \u00b7 ".join(timing)
    tail += f" \u00b7 total {float(record.get('total_ms', 0.0)):.1f} ms"
    if corrected and corrected != text:
        tail += f" \u00b7 corrected \u201c{corrected}\u201d"
    if record.get("invalid_cycles"):
        tail += f" \u00b7 invalid cycles {record['invalid_cycles']}"
    return f"{head}\n    {tail}"


class TracePane(QListWidget):
    """The last commands, newest at the top."""

    MAX_ITEMS = 100

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("tracePane")
        self.setWordWrap(True)
        self.setUniformItemSizes(False)
        self.setSelectionMode(QListWidget.SelectionMode.NoSelection)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        f = QFont("DejaVu Sans Mono")
        f.setStyleHint(QFont.StyleHint.Monospace)
        f.setPointSizeF(max(8.0, self.font().pointSizeF() * 0.95))
        self.setFont(f)
        self.records: deque[dict[str, Any]] = deque(maxlen=self.MAX_ITEMS)

    def add_record(self, record: dict[str, Any]) -> None:
        self.records.append(record)
        ok = (record.get("reply") or {}).get("ok", True)
        self._add(format_trace(record), OK_RGB if ok else WARN_RGB)

    def add_line(self, text: str, severity: str = "info") -> None:
        colour = {"ok": OK_RGB, "warning": WARN_RGB, "error": ERROR_RGB}.get(severity, MUTED_RGB)
        self._add(text, colour)

    def lines(self) -> list[str]:
        return [self.item(i).text() for i in range(self.count())]

    def _add(self, text: str, colour: str) -> None:
        item = QListWidgetItem(text)
        item.setForeground(_qcolor(colour))
        self.insertItem(0, item)
        while self.count() > self.MAX_ITEMS:
            self.takeItem(self.count() - 1)


def _qcolor(hex_rgb: str) -> Any:
    from PySide6.QtGui import QColor

    return QColor(hex_rgb)


class CommandBox(QWidget):
    """A line edit with Run and Undo buttons; ``submitted(text)`` on Enter or Run."""

    submitted = Signal(str)
    undo_requested = Signal()

    def __init__(self, available: bool = True, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(10, 4, 10, 4)
        row.setSpacing(8)
        self.edit = QLineEdit()
        self.edit.setObjectName("commandEdit")
        self.edit.setMinimumHeight(40)
        self.edit.setClearButtonEnabled(True)
        self.run_button = QPushButton("Run")
        self.undo_button = QPushButton("Undo  (Ctrl+Z)")
        for b in (self.run_button, self.undo_button):
            b.setMinimumHeight(40)
            b.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        row.addWidget(_label("Command:", muted=True))
        row.addWidget(self.edit, 1)
        row.addWidget(self.run_button)
        row.addWidget(self.undo_button)
        self.edit.returnPressed.connect(self._submit)
        self.run_button.clicked.connect(self._submit)
        self.undo_button.clicked.connect(self.undo_requested)
        self.set_available(available)

    def set_available(self, available: bool) -> None:
        self.edit.setPlaceholderText(
            "Type a command, e.g. \u201cshow the CT and zoom in on coronal\u201d \u2014 Enter runs it"
            if available else "Text commands are not available yet in this build")

    def _submit(self) -> None:
        text = self.edit.text().strip()
        if text:
            self.edit.clear()
            emit(self.submitted, text)


__all__ = ["CommandBox", "StatusStrip", "TracePane", "format_trace"]
