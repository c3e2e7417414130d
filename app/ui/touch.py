"""The circulating nurse's touch panel: every IR/IV/AR action of the registry as large buttons.

Each button dispatches through the same :class:`~app.core.registry.CommandRegistry` as voice,
with ``Actor(role="nurse", source="touch")`` (the ``send`` callable given by the window), so
RBAC, undo and the audit log apply exactly as for a spoken command. Buttons never keep their
own state: toggles show what ``ConsoleState`` says (:meth:`TouchPanel.sync`, called on every
state change), so a change made by voice, a hotkey or undo is reflected at once, and a refused
command leaves the button as it was. Targets are at least 52 px high (gloved fingers).

Tabs: **Patient** (field toggles, show all, hide), **CT** (show/hide, plane, ±1/±10 slices,
middle, enlarge/small views, window presets, reset), **3D model** (structure and group
toggles, the seven views, rotations, zoom in/out/to the nodule, reset, hide).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.core.state import ConsoleState
from app.core.vocab import AR_GROUPS, AR_STRUCTURES, AR_VIEWS, PLANES, WINDOW_PRESETS
from app.ui.qtcompat import emit

MIN_TARGET_PX = 52

IR_BUTTONS: tuple[tuple[str, str], ...] = (
    ("sex", "Sex / Age"), ("diagnosis", "Diagnosis"), ("comorbidities", "Comorbidities"),
    ("operation_name", "Operation"), ("operation_date", "Op. date"),
    ("tumor_location", "Tumor site"), ("height", "Height"), ("weight", "Weight"),
    ("bmi", "BMI"), ("pft", "PFT"),
)
STRUCTURE_NAMES = {
    "right_upper_lobe": "RUL", "right_middle_lobe": "RML", "right_lower_lobe": "RLL",
    "left_upper_lobe": "LUL", "left_lower_lobe": "LLL", "lung_nodules": "Nodule",
    "trachea_bronchia": "Airway",
}
STRUCTURE_TIPS = {k: k.replace("_", " ").capitalize() for k in AR_STRUCTURES}
GROUPS = (("left_lung", "Left lung"), ("right_lung", "Right lung"), ("lungs", "All lobes"))
ROTATIONS = (("left", "\u25c0 Left"), ("right", "Right \u25b6"), ("up", "\u25b2 Up"),
             ("down", "\u25bc Down"), ("horizontal", "\u27f3 Turn"),
             ("vertical", "\u27f2 Tumble"))
WINDOW_NAMES = {"lung": "Lung", "mediastinum": "Mediastinum", "soft_tissue": "Soft tissue",
                "bone": "Bone"}

Send = Callable[[str, dict[str, Any]], Any]

STYLE = f"""
QPushButton {{ min-height: {MIN_TARGET_PX}px; min-width: 56px; padding: 4px 8px;
  border-radius: 6px; background: #222a36; color: #e8ecf2; border: 1px solid #364256; }}
QPushButton:hover {{ background: #2b3545; }}
QPushButton:pressed {{ background: #3a4a62; }}
QPushButton:checked {{ background: #1f6feb; border: 1px solid #6ea8ff; color: white; }}
QPushButton:disabled {{ color: #5d6877; background: #1a2029; border: 1px solid #262e3a; }}
QLabel[role="section"] {{ color: #9aa7b8; font-weight: bold; padding-top: 6px; }}
QLabel[role="note"] {{ color: #ffc857; }}
"""


def _rgb_hex(rgb: tuple[float, float, float]) -> str:
    return "#" + "".join(f"{round(max(0.0, min(1.0, c)) * 255):02x}" for c in rgb)


class TouchPanel(QWidget):
    plane_selected = Signal(str)

    def __init__(self, state: ConsoleState, send: Send, parent: QWidget | None = None,
                 answer: Callable[[str], None] | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("touchPanel")
        self.state = state
        self._send = send
        self._answer = answer  # sends an answer to the console's question as a command
        self._active_plane = "axial"
        self.setStyleSheet(STYLE)
        f = self.font()
        f.setPointSizeF(max(11.0, f.pointSizeF() * 1.15))
        self.setFont(f)
        self.buttons: dict[str, QPushButton] = {}
        self.tabs = QTabWidget()
        self.tabs.setObjectName("touchTabs")
        self.tabs.tabBar().setMinimumHeight(MIN_TARGET_PX)
        self.tabs.setStyleSheet(f"QTabBar::tab {{ min-height: {MIN_TARGET_PX - 8}px; "
                                "min-width: 90px; padding: 4px 12px; }")
        self.tabs.addTab(self._scroll(self._build_patient()), "Patient")
        self.tabs.addTab(self._scroll(self._build_ct()), "CT")
        self.tabs.addTab(self._scroll(self._build_3d()), "3D model")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        self.loading = QLabel("Loading the case\u2026")
        self.loading.setProperty("role", "note")
        lay.addWidget(self.loading)
        lay.addWidget(self._build_question())
        lay.addWidget(self.tabs)
        self._loading = True
        self._no_case = False
        self.sync()

    # -- the console's question (ask, don't guess) ----------------------------------------
    def _build_question(self) -> QWidget:
        box = QFrame()
        box.setObjectName("questionBox")
        box.setStyleSheet("#questionBox { border: 2px solid #edae49; border-radius: 6px; }")
        lay = QVBoxLayout(box)
        lay.setContentsMargins(6, 6, 6, 6)
        self.question_label = QLabel("")
        self.question_label.setWordWrap(True)
        lay.addWidget(self.question_label)
        self.question_buttons: list[QPushButton] = []
        for i in range(2):
            b = self._button(f"answer_{i + 1}", "", lambda i=i: self._send_answer(f"option {i + 1}"))
            self.question_buttons.append(b)
            lay.addWidget(b)
        lay.addWidget(self._button("answer_cancel", "Neither (cancel)",
                                   lambda: self._send_answer("cancel")))
        self.question_box = box
        box.setVisible(False)
        return box

    def show_question(self, question: dict[str, Any] | None) -> None:
        """Show the console's question with one button per candidate; None hides it."""
        options = list((question or {}).get("options") or [])
        self.question_box.setVisible(bool(options))
        if not options:
            return
        self.question_label.setText(str(question.get("text", "")) if question else "")
        for i, b in enumerate(self.question_buttons):
            b.setVisible(i < len(options))
            if i < len(options):
                b.setText(str(options[i])[:1].upper() + str(options[i])[1:])
                b.setToolTip(str(options[i]))

    def _send_answer(self, text: str) -> None:
        self.question_box.setVisible(False)
        if self._answer is not None:
            self._answer(text)

    # -- building -------------------------------------------------------------------------
    @staticmethod
    def _scroll(inner: QWidget) -> QScrollArea:
        area = QScrollArea()
        area.setWidget(inner)
        area.setWidgetResizable(True)
        area.setFrameShape(QFrame.Shape.NoFrame)
        area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        return area

    def _button(self, name: str, text: str, on_click: Callable[[], None],
                checkable: bool = False, tip: str = "") -> QPushButton:
        b = QPushButton(text)
        b.setObjectName(name)
        b.setCheckable(checkable)
        b.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # keys stay with the window's hotkeys
        b.setToolTip(tip or text)
        b.clicked.connect(lambda _checked=False: self._clicked(on_click))
        self.buttons[name] = b
        return b

    def _clicked(self, on_click: Callable[[], None]) -> None:
        on_click()
        self.sync()  # a refused command leaves the toggles as the state says

    @staticmethod
    def _section(text: str) -> QLabel:
        lab = QLabel(text)
        lab.setProperty("role", "section")
        return lab

    @staticmethod
    def _note() -> QLabel:
        lab = QLabel("")
        lab.setProperty("role", "note")
        lab.setWordWrap(True)
        lab.hide()
        return lab

    def _grid(self, parent_layout: QVBoxLayout, buttons: list[QPushButton],
              columns: int) -> None:
        grid = QGridLayout()
        grid.setSpacing(6)
        for i, b in enumerate(buttons):
            grid.addWidget(b, i // columns, i % columns)
        parent_layout.addLayout(grid)

    def _build_patient(self) -> QWidget:
        w = QWidget()
        lay = QVBoxLayout(w)
        self.ir_note = self._note()
        lay.addWidget(self.ir_note)
        lay.addWidget(self._section("Show or hide a field"))
        fields = [self._button(f"ir_{key}", text, lambda k=key: self._toggle_field(k), True,
                               f"Show or hide {text.lower()}") for key, text in IR_BUTTONS]
        self._grid(lay, fields, 2)
        lay.addWidget(self._section("Box"))
        self._grid(lay, [
            self._button("ir_all", "Show all", lambda: self._send("IR.RESET", {}),
                         tip="Show every patient field"),
            self._button("ir_hide", "Hide", lambda: self._send("IR.HIDE", {}),
                         tip="Hide the patient box"),
        ], 2)
        lay.addStretch(1)
        return w

    def _build_ct(self) -> QWidget:
        w = QWidget()
        lay = QVBoxLayout(w)
        self.ct_note = self._note()
        lay.addWidget(self.ct_note)
        self._grid(lay, [
            self._button("ct_show", "Show CT", self._toggle_ct, True, "Show or remove the CT"),
            self._button("ct_reset", "Reset CT", lambda: self._send("IV.RESET", {}),
                         tip="Middle slices, three small views, lung window"),
        ], 2)
        lay.addWidget(self._section("Plane"))
        planes = []
        for p in PLANES:
            b = self._button(f"ct_plane_{p}", p.capitalize(), lambda p=p: self.select_plane(p),
                             True, f"Steps and zoom act on the {p} plane")
            planes.append(b)
        self._grid(lay, planes, 3)
        self.ct_readout = QLabel("")
        self.ct_readout.setStyleSheet("color: #e8ecf2; font-weight: bold;")
        lay.addWidget(self.ct_readout)
        lay.addWidget(self._section("Move the slice"))
        steps = [self._button(f"ct_step_{name}", text, lambda v=v: self.step(v),
                              tip=f"{text} slices on the selected plane")
                 for name, text, v in (("m10", "\u221210", -10), ("m1", "\u22121", -1),
                                       ("p1", "+1", 1), ("p10", "+10", 10))]
        self._grid(lay, steps, 4)
        self._grid(lay, [
            self._button("ct_middle", "Middle", lambda: self._move("middle"),
                         tip="The middle slice of the selected plane"),
        ], 1)
        lay.addWidget(self._section("View"))
        self._grid(lay, [
            self._button("ct_zoom_in", "Enlarge", self.zoom_in, True,
                         "One large view of the selected plane (the small views stay)"),
            self._button("ct_zoom_out", "Small views", lambda: self._send("IV.ZOOM_OUT", {}),
                         tip="Back to the three small views"),
        ], 2)
        lay.addWidget(self._section("Window"))
        self._grid(lay, [
            self._button(f"ct_window_{k}", WINDOW_NAMES.get(k, k), lambda k=k: self._send(
                "IV.SHOW_MOVE", {"window": k}), True,
                f"{k.replace('_', ' ').capitalize()} window (W {v[0]} / L {v[1]})")
            for k, v in WINDOW_PRESETS.items()], 2)
        lay.addStretch(1)
        return w

    def _build_3d(self) -> QWidget:
        from app.render.anatomy3d import COLOURS  # colours only: no VTK import

        w = QWidget()
        lay = QVBoxLayout(w)
        self.ar_note = self._note()
        lay.addWidget(self.ar_note)
        self._grid(lay, [
            self._button("ar_show", "Show 3D", self._toggle_ar, True, "Show or hide the model"),
            self._button("ar_reset", "Reset 3D", lambda: self._send("AR.RESET", {}),
                         tip="Tumour lobe, nodule and airway; surgical view"),
        ], 2)
        lay.addWidget(self._section("Structures"))
        structs = []
        for key in AR_STRUCTURES:
            b = self._button(f"ar_{key}", STRUCTURE_NAMES.get(key, key),
                             lambda k=key: self._toggle_structures((k,)), True,
                             STRUCTURE_TIPS[key])
            colour = _rgb_hex(COLOURS.get(key, (0.7, 0.7, 0.7)))
            b.setStyleSheet(f"QPushButton {{ border-left: 8px solid {colour}; }}")
            structs.append(b)
        self._grid(lay, structs, 4)
        groups = [self._button(f"ar_group_{g}", text,
                               lambda g=g: self._toggle_structures(AR_GROUPS[g]), True,
                               f"Show or hide the {text.lower()}") for g, text in GROUPS]
        self._grid(lay, groups, 3)
        lay.addWidget(self._section("View"))
        order = ("surgical", *[v for v in AR_VIEWS if v != "surgical"])  # the default first
        views = [self._button(f"ar_view_{v}", v.capitalize(), lambda v=v: self._send(
            "AR.SHOW", {"view": v}), True, f"{v.capitalize()} view") for v in order]
        self._grid(lay, views, 4)
        lay.addWidget(self._section("Rotate"))
        rots = [self._button(f"ar_rotate_{r}", text, lambda r=r: self._send(
            "AR.ROTATE", {"direction": r}), tip=f"Rotate: {r}") for r, text in ROTATIONS]
        self._grid(lay, rots, 3)
        lay.addWidget(self._section("Zoom"))
        self._grid(lay, [
            self._button("ar_zoom_in", "Zoom in", lambda: self._send("AR.ZOOM_IN", {}),
                         tip="Twice as close (toward the current target)"),
            self._button("ar_zoom_out", "Zoom out", lambda: self._send("AR.ZOOM_OUT", {}),
                         tip="Back one zoom step"),
            self._button("ar_zoom_nodule", "To nodule", lambda: self._send(
                "AR.ZOOM_IN", {"target": "lung_nodules"}), tip="Zoom in toward the nodule"),
        ], 3)
        self._grid(lay, [
            self._button("ar_hide", "Hide 3D", lambda: self._send("AR.REMOVE", {}),
                         tip="Hide the model"),
        ], 1)
        lay.addStretch(1)
        return w

    # -- actions --------------------------------------------------------------------------
    @property
    def active_plane(self) -> str:
        return self._active_plane

    def select_plane(self, plane: str) -> None:
        """Choose the plane the steps and zoom act on; in the zoom view it becomes the main."""
        self._active_plane = plane
        iv = self.state.iv
        if iv.mode == "zoom_view" and iv.main != plane:
            self._send("IV.ZOOM_IN_MOVE", {"plane": plane})
        emit(self.plane_selected, plane)
        self.sync()

    def set_active_plane(self, plane: str) -> None:
        """Select the plane without dispatching anything (the caller dispatched already)."""
        self._active_plane = plane
        emit(self.plane_selected, plane)
        self.sync()

    def step(self, delta: int) -> None:
        self._move(f"{'+' if delta >= 0 else '-'}{abs(int(delta))}")

    def _move(self, value: str) -> None:
        self._send("IV.SHOW_MOVE", {self._active_plane: value})

    def zoom_in(self) -> None:
        self._send("IV.ZOOM_IN_MOVE", {"plane": self._active_plane})

    def _toggle_field(self, key: str) -> None:
        ir = self.state.ir
        shown = ir.visible and key in ir.fields
        self._send("IR.SHOW", {"fields": [key], "op": "remove" if shown else "add"})

    def _toggle_ct(self) -> None:
        if self.state.iv.mode == "none":
            self._send("IV.SHOW_MOVE", {})
        else:
            self._send("IV.REMOVE", {})

    def _toggle_ar(self) -> None:
        if self.state.ar.visible:
            self._send("AR.REMOVE", {})
        else:
            self._send("AR.SHOW", {})

    def _toggle_structures(self, keys: tuple[str, ...]) -> None:
        ar = self.state.ar
        available = self._available_structures()
        keys = tuple(k for k in keys if available is None or k in available)
        if not keys:
            return
        shown = ar.visible and all(k in ar.structures for k in keys)
        self._send("AR.SHOW", {"structures": list(keys), "op": "remove" if shown else "add"})

    def _available_structures(self) -> set[str] | None:
        s = self.state.case.structures
        return None if s is None else set(s)

    # -- following the state ----------------------------------------------------------------
    def set_no_case(self, no_case: bool) -> None:
        """No case could be loaded: every button is off and the notes say so."""
        self._no_case = no_case
        self.sync()

    def set_loading(self, loading: bool) -> None:
        self._loading = loading
        self.loading.setVisible(loading)
        self.sync()

    def follow_iv(self, old: Any, new: Any) -> None:
        """Keep the selected plane on the main (or last moved) plane."""
        if new.main and new.main != getattr(old, "main", None):
            self._active_plane = new.main
        elif new.last_moved and new.last_moved != getattr(old, "last_moved", None):
            self._active_plane = new.last_moved

    def sync(self) -> None:
        st = self.state
        case = st.case
        loading = self._loading
        # Patient
        ir_ok = case.has_clinical and not loading
        self.ir_note.setText("" if ir_ok or loading else
                             "This case has no clinical sheet: no patient information.")
        self.ir_note.setVisible(bool(self.ir_note.text()))
        for key, _ in IR_BUTTONS:
            b = self.buttons[f"ir_{key}"]
            b.setEnabled(ir_ok)
            b.setChecked(st.ir.visible and key in st.ir.fields)
        self.buttons["ir_all"].setEnabled(ir_ok)
        self.buttons["ir_hide"].setEnabled(not loading and st.ir.visible)
        # CT
        iv = st.iv
        ct_ok = case.iv_size is not None and bool(iv.size) and not loading
        self.ct_note.setText("" if ct_ok or loading else
                             "This case has no CT: the CT views are off.")
        self.ct_note.setVisible(bool(self.ct_note.text()))
        for name, b in self.buttons.items():
            if name.startswith("ct_"):
                b.setEnabled(ct_ok)
        shown = iv.mode != "none"
        self.buttons["ct_show"].setChecked(shown)
        self.buttons["ct_show"].setText("CT shown" if shown else "Show CT")
        self.buttons["ct_zoom_in"].setChecked(iv.mode == "zoom_view")
        self.buttons["ct_zoom_out"].setEnabled(ct_ok and iv.mode == "zoom_view")
        for p in PLANES:
            self.buttons[f"ct_plane_{p}"].setChecked(p == self._active_plane)
        for k in WINDOW_PRESETS:
            self.buttons[f"ct_window_{k}"].setChecked(shown and iv.window == k)
        if ct_ok:
            pos, size = iv.pos_dict(), iv.size_dict()
            p = self._active_plane
            self.ct_readout.setText(f"{p.capitalize()}: slice {pos.get(p, 0)} of "
                                    f"{size.get(p, 0)} (0\u2013{size.get(p, 1) - 1})")
        else:
            self.ct_readout.setText("")
        # 3D
        ar = st.ar
        available = self._available_structures()
        ar_ok = not loading and (available is None or bool(available))
        self.ar_note.setText("" if ar_ok or loading else
                             "This case has no label maps or meshes: no 3D model.")
        self.ar_note.setVisible(bool(self.ar_note.text()))
        if self._no_case:
            for note in (self.ir_note, self.ct_note, self.ar_note):
                note.setText("No case is loaded (see the status strip).")
                note.show()
        for name, b in self.buttons.items():
            if name.startswith("ar_"):
                b.setEnabled(ar_ok)
        self.buttons["ar_show"].setChecked(ar.visible)
        self.buttons["ar_show"].setText("3D shown" if ar.visible else "Show 3D")
        for key in AR_STRUCTURES:
            b = self.buttons[f"ar_{key}"]
            has = available is None or key in available
            b.setEnabled(ar_ok and has)
            b.setToolTip(STRUCTURE_TIPS[key] if has else
                         f"{STRUCTURE_TIPS[key]}: not in this patient's model")
            b.setChecked(ar.visible and key in ar.structures)
        for g, _ in GROUPS:
            members = [k for k in AR_GROUPS[g] if available is None or k in available]
            b = self.buttons[f"ar_group_{g}"]
            b.setEnabled(ar_ok and bool(members))
            b.setChecked(ar.visible and bool(members)
                         and all(k in ar.structures for k in members))
        for v in AR_VIEWS:
            self.buttons[f"ar_view_{v}"].setChecked(ar.visible and ar.view == v)
        self.buttons["ar_zoom_out"].setEnabled(ar_ok and ar.visible and ar.zoom_level > 0)
        self.buttons["ar_hide"].setEnabled(ar_ok and ar.visible)
        nodule = available is None or "lung_nodules" in available
        self.buttons["ar_zoom_nodule"].setEnabled(ar_ok and nodule)


__all__ = ["IR_BUTTONS", "MIN_TARGET_PX", "TouchPanel"]
