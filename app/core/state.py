"""ConsoleState: the single source of truth for what the console shows (DESIGN §4, §5.1).

Sub-states are frozen dataclasses; a change replaces a sub-state through ``ConsoleState.apply``,
which diffs old and new and emits one ``StateChange`` per changed section. Voice, touch and
hotkeys all reach this through the command registry, so every change is seen the same way by
renderers, widgets, the trace and the audit log. No I/O and no Qt here.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from app.core.events import Emitter
from app.core.vocab import (
    AR_GROUPS,
    AR_ROTATIONS,
    AR_STRUCTURES,
    AR_VIEWS,
    IR_FIELDS,
    IV_MODES,
    LOBES,
    PLANES,
)


@dataclass(frozen=True)
class IRState:
    visible: bool = False
    fields: tuple[str, ...] = ()


@dataclass(frozen=True)
class IVState:
    mode: str = "none"
    main: str | None = None
    # Commanded target slice per plane (0-based), not the mid-animation value.
    pos: tuple[tuple[str, int], ...] = ()
    size: tuple[tuple[str, int], ...] = ()
    # Not in the snapshot: remembered for "zoom in" without a plane.
    last_main: str | None = None
    last_moved: str | None = None
    window: str = "lung"

    def pos_dict(self) -> dict[str, int]:
        return dict(self.pos)

    def size_dict(self) -> dict[str, int]:
        return dict(self.size)


@dataclass(frozen=True)
class ARState:
    visible: bool = False
    structures: tuple[str, ...] = ()
    view: str = "surgical"
    rotation: str = "static"
    zoom_level: int = 0
    zoom_target: str | None = None
    # Targets of the zoom-ins still in effect, oldest first (zoom_level == len(zoom_stack)).
    zoom_stack: tuple[str | None, ...] = ()
    # Shown at least once this case: a model emptied by structure edits or hidden comes back
    # as it was (DESIGN §4); only a first show (and a reset) takes the defaults.
    shown: bool = False


@dataclass(frozen=True)
class CaseContext:
    """What the loaded case offers; decides defaults and what commands can do."""

    iv_size: tuple[tuple[str, int], ...] | None = None  # None: no CT loaded
    tumor_lobes: tuple[str, ...] = ()
    # Structures the 3D model has; None when unknown (then every structure key is accepted).
    structures: tuple[str, ...] | None = None
    has_clinical: bool = True

    def default_structures(self) -> tuple[str, ...]:
        """First show and reset: tumour lobe(s) (else all lobes) plus nodules and airway."""
        lobes = tuple(self.tumor_lobes) or LOBES
        wanted = set(lobes) | {"lung_nodules", "trachea_bronchia"}
        if self.structures is not None:
            available = set(self.structures)
            kept = wanted & available
            if not (set(lobes) & available):  # tumour lobe missing from the model: all lobes
                kept |= set(LOBES) & available
            wanted = kept
        return tuple(sorted(wanted))


@dataclass(frozen=True)
class StateChange:
    """One section of the state changed. ``keys`` lists the changed fields."""

    section: str  # "agent", "ir", "iv", "ar", "case"
    old: Any
    new: Any
    keys: tuple[str, ...] = ()


def _changed_keys(old: Any, new: Any) -> tuple[str, ...]:
    if hasattr(old, "__dataclass_fields__") and type(old) is type(new):
        return tuple(f.name for f in fields(old) if getattr(old, f.name) != getattr(new, f.name))
    return ()


@dataclass
class ConsoleState:
    agent: str | None = None
    ir: IRState = field(default_factory=IRState)
    iv: IVState = field(default_factory=IVState)
    ar: ARState = field(default_factory=ARState)
    case: CaseContext = field(default_factory=CaseContext)

    def __post_init__(self) -> None:
        self.events: Emitter[StateChange] = Emitter()

    # -- mutation -----------------------------------------------------------------------
    def apply(self, **sections: Any) -> list[StateChange]:
        """Replace whole sections (agent/ir/iv/ar/case) and emit what changed."""
        changes: list[StateChange] = []
        for name, new in sections.items():
            if name not in ("agent", "ir", "iv", "ar", "case"):
                raise KeyError(f"unknown state section {name!r}")
            old = getattr(self, name)
            if old != new:
                object.__setattr__(self, name, new)
                changes.append(StateChange(name, old, new, _changed_keys(old, new)))
        for ch in changes:
            self.events.emit(ch)
        return changes

    def set_case(self, case: CaseContext) -> None:
        """Install a newly loaded case: IV positions start at the middle slices."""
        iv = self.iv
        if case.iv_size is not None:
            size = dict(case.iv_size)
            iv = replace(
                iv,
                size=tuple((p, size[p]) for p in PLANES),
                pos=tuple((p, size[p] // 2) for p in PLANES),
            )
        else:
            iv = replace(iv, mode="none", main=None, size=(), pos=())
        ar = self.ar
        if case.structures is not None and ar.structures:
            ar = replace(ar, structures=tuple(s for s in ar.structures if s in case.structures))
        self.apply(case=case, iv=iv, ar=ar)

    def copy(self) -> ConsoleState:
        """A detached copy (no subscribers) for undo and previews."""
        return ConsoleState(self.agent, self.ir, self.iv, self.ar, self.case)

    def restore(self, other: ConsoleState) -> list[StateChange]:
        return self.apply(agent=other.agent, ir=other.ir, iv=other.iv, ar=other.ar,
                          case=other.case)

    # -- serialisation (DESIGN §5.1) ------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """The contract snapshot: exactly the keys of DESIGN §5.1, lists sorted."""
        iv = self.iv
        return {
            "agent": self.agent,
            "ir": {"visible": self.ir.visible, "fields": sorted(self.ir.fields)},
            "iv": {
                "mode": iv.mode,
                "main": iv.main,
                "pos": iv.pos_dict(),
                "size": iv.size_dict(),
            },
            "ar": {
                "visible": self.ar.visible,
                "structures": sorted(self.ar.structures),
                "view": self.ar.view,
                "rotation": self.ar.rotation,
                "zoom_level": self.ar.zoom_level,
                "zoom_target": self.ar.zoom_target,
            },
        }

    def to_dict(self) -> dict[str, Any]:
        """The snapshot plus the private parts needed to resume exactly (``--state`` files)."""
        data = self.snapshot()
        data["_resume"] = {
            "iv": {"last_main": self.iv.last_main, "last_moved": self.iv.last_moved,
                   "window": self.iv.window},
            "ar": {"zoom_stack": list(self.ar.zoom_stack), "shown": self.ar.shown},
            "case": _case_to_dict(self.case),
        }
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ConsoleState:
        """Read a snapshot (or a ``to_dict`` file). Unknown or malformed values raise ValueError."""
        if not isinstance(data, dict):
            raise ValueError("a state snapshot must be a JSON object")
        resume = data.get("_resume") or {}
        ir_d = data.get("ir") or {}
        iv_d = data.get("iv") or {}
        ar_d = data.get("ar") or {}
        agent = data.get("agent")
        if agent not in (None, "IR", "IV", "AR"):
            raise ValueError(f"unknown agent {agent!r} in the state snapshot")
        ir_fields = tuple(ir_d.get("fields") or ())
        _check_members(ir_fields, IR_FIELDS, "IR field")
        ir = IRState(visible=bool(ir_d.get("visible", False)), fields=tuple(sorted(ir_fields)))
        mode = iv_d.get("mode", "none")
        _check_members((mode,), IV_MODES, "CT view mode")
        main = iv_d.get("main")
        if main is not None:
            _check_members((main,), PLANES, "plane")
        size = {p: int(v) for p, v in (iv_d.get("size") or {}).items()}
        pos = {p: int(v) for p, v in (iv_d.get("pos") or {}).items()}
        _check_members(tuple(size) + tuple(pos), PLANES, "plane")
        iv_r = resume.get("iv") or {}
        iv = IVState(
            mode=mode, main=main,
            pos=tuple((p, pos[p]) for p in PLANES if p in pos),
            size=tuple((p, size[p]) for p in PLANES if p in size),
            last_main=iv_r.get("last_main"), last_moved=iv_r.get("last_moved"),
            window=iv_r.get("window", "lung"),
        )
        structures = tuple(sorted(ar_d.get("structures") or ()))
        _check_members(structures, AR_STRUCTURES, "structure")
        view = ar_d.get("view", "surgical")
        _check_members((view,), AR_VIEWS, "view")
        rotation = ar_d.get("rotation", "static")
        _check_members((rotation,), AR_ROTATIONS, "rotation")
        zoom_level = int(ar_d.get("zoom_level", 0))
        if zoom_level < 0:
            raise ValueError("zoom_level cannot be negative")
        zoom_target = ar_d.get("zoom_target")
        if zoom_target is not None:
            _check_members((zoom_target,), AR_STRUCTURES + tuple(AR_GROUPS), "zoom target")
        stack = tuple((resume.get("ar") or {}).get("zoom_stack") or ())
        if len(stack) != zoom_level:  # a plain snapshot has no stack: rebuild one consistently
            stack = tuple([zoom_target] * zoom_level)
        visible = bool(ar_d.get("visible", False))
        shown = bool((resume.get("ar") or {}).get("shown", visible or bool(structures)))
        ar = ARState(visible=visible, structures=structures, view=view,
                     rotation=rotation, zoom_level=zoom_level,
                     zoom_target=zoom_target, zoom_stack=stack, shown=shown)
        case = _case_from_dict(resume.get("case")) if "case" in resume else CaseContext(
            iv_size=iv.size or None)
        return cls(agent=agent, ir=ir, iv=iv, ar=ar, case=case)

    def __deepcopy__(self, memo: dict) -> ConsoleState:
        return self.copy()

    def __copy__(self) -> ConsoleState:
        return self.copy()


def _check_members(values: tuple, allowed: tuple, what: str) -> None:
    for v in values:
        if v not in allowed:
            raise ValueError(f"unknown {what} {v!r}; expected one of {', '.join(map(str, allowed))}")


def _case_to_dict(case: CaseContext) -> dict[str, Any]:
    d = asdict(case)
    d["iv_size"] = dict(case.iv_size) if case.iv_size is not None else None
    return d


def _case_from_dict(d: dict[str, Any] | None) -> CaseContext:
    if not d:
        return CaseContext()
    size = d.get("iv_size")
    return CaseContext(
        iv_size=tuple((p, int(size[p])) for p in PLANES) if size else None,
        tumor_lobes=tuple(d.get("tumor_lobes") or ()),
        structures=tuple(d["structures"]) if d.get("structures") is not None else None,
        has_clinical=bool(d.get("has_clinical", True)),
    )


__all__ = [
    "ARState", "CaseContext", "ConsoleState", "IRState", "IVState", "StateChange",
]
