"""A plan said back in words ("zoom in on the coronal ct view and then axial plus 20"): the
ask-back question's options and the spoken confirmation of an undo (DESIGN §3, ask, don't
guess)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.core.registry import Step


def _spoken(key: str) -> str:
    return "nodules" if key == "lung_nodules" else key.replace("_", " ")


def _slice_words(plane: str, value: Any) -> str:
    v = str(value)
    if v in ("middle", "max", "min"):
        return f"{plane} to the {'middle' if v == 'middle' else v + 'imum'}"
    if v[:1] in "+-":
        return f"{plane} {'plus' if v[0] == '+' else 'minus'} {v[1:]}"
    return f"{plane} slice {v}"


def _step_phrase(step: Step) -> str | None:
    agent, action = step.action_id.split(".", 1)
    p = dict(step.params)
    op = p.get("op", "set")
    if agent == "IR":
        if action == "SHOW":
            fields = " and ".join(_spoken(f) for f in p.get("fields") or ())
            if not fields:
                return "show all the patient information"
            return {"set": f"show only the patient {fields}", "add": f"add the patient {fields}",
                    "remove": f"remove the patient {fields}"}.get(op)
        return {"HIDE": "hide the patient information",
                "RESET": "reset the patient information"}.get(action)
    if agent == "IV":
        moves = [_slice_words(pl, p[pl]) for pl in ("axial", "coronal", "sagittal") if pl in p]
        if p.get("window"):
            moves.append(f"{_spoken(str(p['window']))} window")
        if action == "SHOW_MOVE":
            return ", ".join(moves) if moves else "show the ct"
        if action == "ZOOM_IN_MOVE":
            head = f"zoom in on the {p['plane']} ct view" if p.get("plane") else "zoom in the ct"
            return ", ".join([head, *moves])
        return {"ZOOM_OUT": "zoom out the ct", "REMOVE": "remove the ct",
                "RESET": "reset the ct"}.get(action)
    if action == "SHOW":
        parts = []
        names = " and ".join(_spoken(x) for x in p.get("structures") or ())
        if names:
            parts.append({"set": f"show only the {names} on the model",
                          "add": f"add the {names} to the model",
                          "remove": f"remove the {names} from the model"}.get(op, ""))
        if p.get("view"):
            parts.append(f"{_spoken(str(p['view']))} view of the model")
        return ", ".join(x for x in parts if x) or "show the 3d model"
    if action == "ROTATE":
        d = p.get("direction")
        return "stop rotating the model" if d == "static" else f"rotate the model {d}"
    if action == "ZOOM_IN":
        t = p.get("target")
        return f"zoom in on the {_spoken(str(t))} on the model" if t else "zoom in the model"
    return {"ZOOM_OUT": "zoom out the model", "REMOVE": "remove the model",
            "RESET": "reset the model"}.get(action)


def plan_phrase(steps: Sequence[Step]) -> str | None:
    """Words for a plan (one clause per step), or None when a step has none."""
    parts = [_step_phrase(st) for st in steps]
    if not parts or any(x is None for x in parts):
        return None
    return " and then ".join(x for x in parts if x)


__all__ = ["plan_phrase"]
