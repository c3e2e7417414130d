"""The console's actions (DESIGN §4, §5.3): schemas and pure state transitions.

Each action computes new sub-states from the current state and its validated parameters; the
registry applies them, records undo and audit. Nothing here touches I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from app.core.params import CommandError, Param
from app.core.state import ARState, ConsoleState, IRState
from app.core.vocab import (
    AR_ABBREVIATIONS,
    AR_GROUPS,
    AR_ROTATIONS,
    AR_STRUCTURES,
    AR_VIEWS,
    IR_ALL_FIELDS,
    IR_FIELDS,
    IR_LINKED,
    PLANES,
    WINDOW_PRESETS,
)


@dataclass
class Outcome:
    """What an action changes (whole sub-states) and what to tell the team."""

    sections: dict[str, Any]
    message: str
    notes: list[str] = field(default_factory=list)


ApplyFn = Callable[[ConsoleState, dict[str, Any]], Outcome]


@dataclass(frozen=True)
class Action:
    id: str  # e.g. "IV.SHOW_MOVE"
    agent: str
    name: str
    params: tuple[Param, ...]
    apply: ApplyFn
    description: str
    role: str = "nurse"  # least role allowed; observers may only look


# ---------------------------------------------------------------- IR
_FIELD_ALIASES = {"all": IR_ALL_FIELDS, "age_sex": ("age", "sex"), "sex_age": ("age", "sex")}
_OPS = ("set", "add", "remove")


def _link_fields(fields: set[str]) -> set[str]:
    for group in IR_LINKED:
        if fields & group:
            fields |= group
    return fields


def _require_clinical(state: ConsoleState) -> None:
    if not state.case.has_clinical:
        raise CommandError("This case has no clinical sheet, so there is no patient information "
                           "to show.", "unavailable")


def _ir_show(state: ConsoleState, p: dict[str, Any]) -> Outcome:
    _require_clinical(state)
    requested = set(p.get("fields") or IR_ALL_FIELDS)
    op = p.get("op", "set")
    current = set(state.ir.fields) if state.ir.visible else set()
    if op == "add":
        fields = current | requested
    elif op == "remove":
        fields = current - _link_fields(set(requested))
    else:
        fields = requested
    fields = _link_fields(fields)
    ordered = tuple(sorted(fields))
    ir = IRState(visible=bool(ordered), fields=ordered)
    what = ", ".join(f.replace("_", " ") for f in IR_FIELDS if f in fields) or "nothing"
    return Outcome({"ir": ir}, f"Patient information: {what}.")


def _ir_hide(state: ConsoleState, p: dict[str, Any]) -> Outcome:
    return Outcome({"ir": replace(state.ir, visible=False)}, "Patient information hidden.")


def _ir_reset(state: ConsoleState, p: dict[str, Any]) -> Outcome:
    _require_clinical(state)
    return Outcome({"ir": IRState(True, tuple(sorted(IR_ALL_FIELDS)))},
                   "Patient information reset: all fields shown.")


# ---------------------------------------------------------------- IV
_PLANE_PARAMS = tuple(
    Param(pl, "slice", description=f"{pl} slice: index, +/- step, or middle/max/min")
    for pl in PLANES
)


def _require_ct(state: ConsoleState) -> dict[str, int]:
    if state.case.iv_size is None or not state.iv.size:
        raise CommandError("No CT is loaded for this case, so the CT views cannot be shown.",
                           "unavailable")
    return state.iv.size_dict()


def _move(state: ConsoleState, p: dict[str, Any]) -> tuple[dict[str, int], list[str], list[str]]:
    size = _require_ct(state)
    pos = state.iv.pos_dict()
    moved: list[str] = []
    notes: list[str] = []
    # in the order said: in the zoom view the last plane named becomes the main view (DESIGN §4)
    for plane in [k for k in p if k in PLANES]:
        if plane in p:
            target, clamped = p[plane].resolve(pos[plane], size[plane])
            pos[plane] = target
            moved.append(plane)
            if clamped:
                edge = "last" if target == size[plane] - 1 else "first"
                notes.append(f"{plane} stopped at the {edge} slice ({target}).")
    return pos, moved, notes


def _pos_text(pos: dict[str, int], planes: list[str]) -> str:
    return ", ".join(f"{pl} {pos[pl]}" for pl in planes)


def _iv_show_move(state: ConsoleState, p: dict[str, Any]) -> Outcome:
    pos, moved, notes = _move(state, p)
    iv = state.iv
    if iv.mode == "zoom_view":
        # Moving while zoomed keeps the zoom view; the moved plane becomes the main view.
        mode, main = "zoom_view", (moved[-1] if moved else iv.main)
    else:
        mode, main = "small_views", None
    new = replace(
        iv, mode=mode, main=main, pos=tuple((pl, pos[pl]) for pl in PLANES),
        last_moved=moved[-1] if moved else iv.last_moved,
        # DESIGN §4: a bare "zoom in" takes the plane moved or zoomed most recently, so a move
        # in the small views is more recent than the plane zoomed before it
        last_main=main or (None if moved else iv.last_main),
        window=p.get("window", iv.window),
    )
    msg = f"CT: {_pos_text(pos, moved)}." if moved else "CT views shown."
    return Outcome({"iv": new}, msg, notes)


def _iv_zoom_in(state: ConsoleState, p: dict[str, Any]) -> Outcome:
    pos, moved, notes = _move(state, p)
    iv = state.iv
    main = (p.get("plane") or (moved[-1] if moved else None) or iv.main or iv.last_main
            or iv.last_moved or "axial")
    new = replace(
        iv, mode="zoom_view", main=main, pos=tuple((pl, pos[pl]) for pl in PLANES),
        last_moved=moved[-1] if moved else iv.last_moved, last_main=main,
        window=p.get("window", iv.window),
    )
    return Outcome({"iv": new}, f"CT: {main} view enlarged.", notes)


def _iv_zoom_out(state: ConsoleState, p: dict[str, Any]) -> Outcome:
    _require_ct(state)
    iv = state.iv
    new = replace(iv, mode="small_views", main=None, last_main=iv.main or iv.last_main)
    return Outcome({"iv": new}, "CT: small views.")


def _iv_remove(state: ConsoleState, p: dict[str, Any]) -> Outcome:
    iv = state.iv
    new = replace(iv, mode="none", main=None, last_main=iv.main or iv.last_main)
    return Outcome({"iv": new}, "CT views removed.")


def _iv_reset(state: ConsoleState, p: dict[str, Any]) -> Outcome:
    size = _require_ct(state)
    new = replace(
        state.iv, mode="small_views", main=None,
        pos=tuple((pl, size[pl] // 2) for pl in PLANES),
        last_main=None, last_moved=None, window="lung",
    )
    return Outcome({"iv": new}, "CT reset to the middle slices.")


# ---------------------------------------------------------------- AR
_STRUCT_ALIASES = {**AR_GROUPS, **{k: (v,) for k, v in AR_ABBREVIATIONS.items()},
                   "nodule": ("lung_nodules",), "nodules": ("lung_nodules",),
                   "tumor": ("lung_nodules",), "tumour": ("lung_nodules",),
                   "trachea": ("trachea_bronchia",), "bronchi": ("trachea_bronchia",)}
_ZOOM_TARGETS = (*AR_STRUCTURES, *AR_GROUPS)


def _require_model(state: ConsoleState) -> None:
    if state.case.structures is not None and not state.case.structures:
        raise CommandError("This case has no 3D model (no label maps or meshes were found).",
                           "unavailable")


def _available(state: ConsoleState, wanted: tuple[str, ...]) -> tuple[tuple[str, ...], list[str]]:
    if state.case.structures is None:
        return wanted, []
    have = set(state.case.structures)
    return tuple(s for s in wanted if s in have), [s for s in wanted if s not in have]


def _named(keys: list[str] | tuple[str, ...]) -> str:
    return ", ".join(k.replace("_", " ") for k in keys)


def _first_show(state: ConsoleState) -> ARState:
    return ARState(visible=True, structures=state.case.default_structures(), shown=True)


def _as_it_was(state: ConsoleState) -> ARState:
    """The model as last shown (structures, view, zoom), or the defaults on a first show."""
    return state.ar if state.ar.shown else _first_show(state)


def _ar_show(state: ConsoleState, p: dict[str, Any]) -> Outcome:
    _require_model(state)
    notes: list[str] = []
    base = _as_it_was(state)
    structures = set(base.structures)
    if "structures" in p:
        wanted, missing = _available(state, p["structures"])
        if missing:
            notes.append(f"Not in this patient's 3D model: {_named(missing)}.")
        if not wanted:
            raise CommandError(f"{_named(missing).capitalize()} is not in this patient's 3D "
                               "model.", "unavailable")
        op = p.get("op", "set")
        if op == "add":
            structures |= set(wanted)
        elif op == "remove":
            structures -= set(wanted)
        else:
            structures = set(wanted)
    # An edit keeps the model on screen, even empty, until it is removed (DESIGN §4).
    new = replace(base, visible=True, structures=tuple(sorted(structures)))
    if "view" in p:  # choosing a view resets rotation
        new = replace(new, view=p["view"], rotation="static")
    msg = f"3D model: {_named(sorted(structures)) or 'nothing'}"
    msg += f", {new.view} view." if "view" in p else "."
    return Outcome({"ar": new}, msg, notes)


def _ar_rotate(state: ConsoleState, p: dict[str, Any]) -> Outcome:
    _require_model(state)
    base = _as_it_was(state)
    new = replace(base, visible=True, rotation=p["direction"])
    return Outcome({"ar": new}, f"3D model rotation: {p['direction']}.")


def _ar_zoom_in(state: ConsoleState, p: dict[str, Any]) -> Outcome:
    _require_model(state)
    base = _as_it_was(state)
    target = p.get("target") or base.zoom_target
    notes: list[str] = []
    if target in AR_STRUCTURES:
        _, missing = _available(state, (target,))
        if missing:
            raise CommandError(f"The {_named(missing)} is not in this patient's 3D model.",
                               "unavailable")
    structures = set(base.structures)
    if target is not None:
        # Zooming toward a structure that is not shown makes no sense to a surgeon: show it.
        members = AR_GROUPS.get(target, (target,))
        added = [m for m in _available(state, tuple(members))[0] if m not in structures]
        if added:
            structures |= set(added)
            notes.append(f"Also showing the {_named(added)}.")
    new = replace(base, visible=True, structures=tuple(sorted(structures)),
                  zoom_level=base.zoom_level + 1, zoom_target=target,
                  zoom_stack=(*base.zoom_stack, target))
    where = f"toward the {_named([target])}" if target else "toward the centre"
    return Outcome({"ar": new}, f"3D model zoomed in {where} (level {new.zoom_level}).", notes)


def _ar_zoom_out(state: ConsoleState, p: dict[str, Any]) -> Outcome:
    _require_model(state)
    ar = state.ar
    if ar.zoom_level == 0:  # the scale never goes below 1
        return Outcome({"ar": replace(ar, visible=True) if ar.shown else _first_show(state)},
                       "3D model is already at full view.")
    stack = ar.zoom_stack[:-1]
    new = replace(ar, visible=True, zoom_level=ar.zoom_level - 1,
                  zoom_target=stack[-1] if stack else None, zoom_stack=stack)
    return Outcome({"ar": new}, f"3D model zoomed out (level {new.zoom_level}).")


def _ar_remove(state: ConsoleState, p: dict[str, Any]) -> Outcome:
    return Outcome({"ar": replace(state.ar, visible=False)}, "3D model hidden.")


def _ar_reset(state: ConsoleState, p: dict[str, Any]) -> Outcome:
    _require_model(state)
    new = _first_show(state)
    return Outcome({"ar": new}, f"3D model reset: {_named(new.structures)}, surgical view.")


# ---------------------------------------------------------------- the table
_WINDOW = Param("window", "enum", tuple(WINDOW_PRESETS), description="CT window preset")

ACTIONS: tuple[Action, ...] = (
    Action("IR.SHOW", "IR", "SHOW", (
        Param("fields", "enum_list", IR_FIELDS, aliases=_FIELD_ALIASES,
              description="fields to show; none named = all"),
        Param("op", "enum", _OPS, description="set (default), add to or remove from the shown"),
    ), _ir_show, "Show patient information fields"),
    Action("IR.HIDE", "IR", "HIDE", (), _ir_hide, "Hide the patient information box"),
    Action("IR.RESET", "IR", "RESET", (), _ir_reset, "Show all patient information fields"),
    Action("IV.SHOW_MOVE", "IV", "SHOW_MOVE", (*_PLANE_PARAMS, _WINDOW), _iv_show_move,
           "Show the CT views and move slices"),
    Action("IV.ZOOM_IN_MOVE", "IV", "ZOOM_IN_MOVE",
           (Param("plane", "enum", PLANES, description="plane to enlarge"), *_PLANE_PARAMS,
            _WINDOW),
           _iv_zoom_in, "Enlarge one CT plane (optionally moving slices)"),
    Action("IV.ZOOM_OUT", "IV", "ZOOM_OUT", (), _iv_zoom_out, "Back to the three small views"),
    Action("IV.REMOVE", "IV", "REMOVE", (), _iv_remove, "Remove the CT views"),
    Action("IV.RESET", "IV", "RESET", (), _iv_reset, "Middle slices, small views"),
    Action("AR.SHOW", "AR", "SHOW", (
        Param("structures", "enum_list", AR_STRUCTURES, aliases=_STRUCT_ALIASES,
              description="structures; none named = the current or default set"),
        Param("op", "enum", _OPS, description="set (default), add or remove structures"),
        Param("view", "enum", AR_VIEWS, description="viewpoint; resets rotation"),
    ), _ar_show, "Show 3D anatomy"),
    Action("AR.ROTATE", "AR", "ROTATE",
           (Param("direction", "enum", AR_ROTATIONS, required=True),), _ar_rotate,
           "Rotate the 3D model"),
    Action("AR.ZOOM_IN", "AR", "ZOOM_IN",
           (Param("target", "enum", _ZOOM_TARGETS,
                  aliases={k: v for k, v in _STRUCT_ALIASES.items() if len(v) == 1},
                  description="structure to zoom toward"),),
           _ar_zoom_in, "Zoom the 3D model in (×2)"),
    Action("AR.ZOOM_OUT", "AR", "ZOOM_OUT", (), _ar_zoom_out, "Undo the last 3D zoom-in"),
    Action("AR.REMOVE", "AR", "REMOVE", (), _ar_remove, "Hide the 3D model"),
    Action("AR.RESET", "AR", "RESET", (), _ar_reset, "Default structures and view"),
)
