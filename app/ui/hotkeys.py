"""Keyboard shortcuts of the console window (documented in :data:`HOTKEYS`, shown in the
window's "Keys" tab).

Every console change goes through the command registry with
``Actor(role="nurse", source="hotkey")``, exactly like a touch button or a spoken command.
Slice keys act on the selected plane, which follows the CT main view (or the last moved plane)
and is chosen with 1/2/3.

============  =====================================================================
Key           Action
============  =====================================================================
↑  →          next slice (+1) of the selected plane
↓  ←          previous slice (−1)
PageUp        +10 slices
PageDown      −10 slices
Home          the middle slice
1 / 2 / 3     select axial / coronal / sagittal (in the zoom view: make it the main view)
Z             CT: enlarge the selected plane / back to the small views
W             CT: next window preset (lung → mediastinum → soft tissue → bone)
C             CT: show / remove
I             patient information: show all / hide
M             3D model: show / hide
R             3D model: turn 360° (Shift+R: tumble)
V             3D model: next view (surgical, anterior, right, posterior, left, superior, inferior)
+  /  −       3D model: zoom in / zoom out
Ctrl+Z        undo the last command
/  Ctrl+L     type a command
F11           full screen on / off
Esc           stop the spoken reply; when nothing is playing, leave full screen
Space / F12   hold to talk (push-to-talk, no wake word); F12 suits a foot pedal
============  =====================================================================

Push-to-talk is handled by the window's key filter (press and release, auto-repeat ignored),
not by a shortcut: :data:`PUSH_TO_TALK` documents it. Space types a space in the command box.

While the command box has the focus, letters, digits, +/−, ←/→ and Home type into it; the
other keys still work.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QWidget

VIEW_CYCLE = ("surgical", "anterior", "right", "posterior", "left", "superior", "inferior")


@dataclass(frozen=True)
class Hotkey:
    keys: tuple[str, ...]  # QKeySequence strings
    label: str  # how the keys are written for people
    what: str
    handler: str  # method name on the window's controller


HOTKEYS: tuple[Hotkey, ...] = (
    Hotkey(("Up", "Right"), "\u2191  \u2192", "next slice (+1) of the selected plane",
           "slice_up"),
    Hotkey(("Down", "Left"), "\u2193  \u2190", "previous slice (\u22121)", "slice_down"),
    Hotkey(("PgUp",), "PageUp", "+10 slices", "slice_up10"),
    Hotkey(("PgDown",), "PageDown", "\u221210 slices", "slice_down10"),
    Hotkey(("Home",), "Home", "the middle slice", "slice_middle"),
    Hotkey(("1",), "1", "select the axial plane", "plane_axial"),
    Hotkey(("2",), "2", "select the coronal plane", "plane_coronal"),
    Hotkey(("3",), "3", "select the sagittal plane", "plane_sagittal"),
    Hotkey(("Z",), "Z", "CT: enlarge the selected plane / back to small views", "ct_zoom"),
    Hotkey(("W",), "W", "CT: next window preset", "ct_window"),
    Hotkey(("C",), "C", "CT: show / remove", "ct_toggle"),
    Hotkey(("I",), "I", "patient information: show all / hide", "ir_toggle"),
    Hotkey(("M",), "M", "3D model: show / hide", "ar_toggle"),
    Hotkey(("R",), "R", "3D model: turn 360\u00b0", "ar_turn"),
    Hotkey(("Shift+R",), "Shift+R", "3D model: tumble 360\u00b0", "ar_tumble"),
    Hotkey(("V",), "V", "3D model: next view", "ar_next_view"),
    Hotkey(("+", "="), "+", "3D model: zoom in", "ar_zoom_in"),
    Hotkey(("-",), "\u2212", "3D model: zoom out", "ar_zoom_out"),
    Hotkey(("Ctrl+Z",), "Ctrl+Z", "undo the last command", "undo"),
    Hotkey(("/", "Ctrl+L"), "/  Ctrl+L", "type a command", "focus_command"),
    Hotkey(("F11",), "F11", "full screen on / off", "toggle_fullscreen"),
    Hotkey(("Esc",), "Esc", "stop the spoken reply / leave full screen", "leave_fullscreen"),
)

# Held keys (press/release), handled by MainWindow.eventFilter; listed in the Keys tab only.
PUSH_TO_TALK: tuple[Hotkey, ...] = (
    Hotkey(("Space", "F12"), "Space  F12", "hold to talk (F12: foot pedal)", "push_to_talk"),
)


def install(window: QWidget, controller: object) -> list[QShortcut]:
    """Create the window-wide shortcuts; each calls ``controller.<handler>()``."""
    shortcuts: list[QShortcut] = []
    for hk in HOTKEYS:
        fn: Callable[[], object] = getattr(controller, hk.handler)
        for keys in hk.keys:
            sc = QShortcut(QKeySequence(keys), window)
            sc.setContext(Qt.ShortcutContext.WindowShortcut)
            sc.setAutoRepeat(hk.handler.startswith("slice_"))  # hold an arrow to scroll
            sc.activated.connect(fn)
            shortcuts.append(sc)
    return shortcuts


def help_text(columns: int = 2) -> str:
    """The key table as plain text in ``columns`` columns (the window's "Keys" tab)."""
    width = max(len(hk.label) for hk in HOTKEYS + PUSH_TO_TALK) + 3
    cells = [f"{hk.label:<{width}}{hk.what}" for hk in HOTKEYS + PUSH_TO_TALK]
    rows = -(-len(cells) // max(1, columns))
    cols = [cells[i * rows:(i + 1) * rows] for i in range(max(1, columns))]
    col_w = [max((len(c) for c in col), default=0) + 4 for col in cols]
    lines = []
    for r in range(rows):
        parts = [f"{col[r]:<{col_w[i]}}" for i, col in enumerate(cols) if r < len(col)]
        lines.append("".join(parts).rstrip())
    return "\n".join(lines)


__all__ = ["HOTKEYS", "PUSH_TO_TALK", "Hotkey", "VIEW_CYCLE", "help_text", "install"]
