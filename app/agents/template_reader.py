"""Slot decoders: a template match (``app.language.templates``) to registry steps.

The plain shapes of a command ("coronal plus 50", "show the bmi", "hide the nodules") are read
from the templates of `app/language/data/commands.yaml` first; each decoder below turns one
intent's slots into the steps the registry runs. A shape whose slots disagree ("coronal up
20": "up" moves the axial plane) is no match here, and the grammar reads it.
"""

from __future__ import annotations

from collections.abc import Callable

from app.agents.decision import Decision
from app.core.registry import Step
from app.language.templates import TemplateMatch, match

CONFIDENCE = 0.97  # a whole command in a known shape: as sure as the grammar's plain reading


def _step(sign: str, amount: float) -> str:
    return f"{'+' if int(sign) > 0 else '-'}{int(amount)}"


def _iv_sign(s: dict) -> list[Step] | None:
    return [Step("IV.SHOW_MOVE", {s["plane"]: _step(s["sign"], s["amount"])})]


def _iv_direction(s: dict) -> list[Step] | None:
    plane, sign = str(s["direction"]).split(":")
    if s.get("plane", plane) != plane:
        return None  # "coronal up 20": which plane is meant is the grammar's to judge
    return [Step("IV.SHOW_MOVE", {plane: _step(sign, s["amount"])})]


def _iv_to(s: dict) -> list[Step] | None:
    return [Step("IV.SHOW_MOVE", {s["plane"]: int(s["amount"])})]


def _structures(s: dict) -> list[str]:
    if "structure" in s:
        return [str(s["structure"])]
    return [f"{s['side']}_{s['position']}_lobe"]


def _lobe_known(s: dict) -> bool:
    return "structure" in s or (s["side"], s["position"]) != ("left", "middle")


_DECODERS: dict[str, Callable[[dict], list[Step] | None]] = {
    "IvMoveBySign": _iv_sign,
    "IvMoveByDirection": _iv_direction,
    "IvMoveTo": _iv_to,
    "IvShow": lambda s: [Step("IV.SHOW_MOVE", {})],
    "IvHide": lambda s: [Step("IV.REMOVE", {})],
    "IrShow": lambda s: [Step("IR.SHOW", {})],
    "IrHide": lambda s: [Step("IR.HIDE", {})],
    "IrShowField": lambda s: [Step("IR.SHOW", {"fields": sorted(str(s["field"]).split(","))})],
    "ArShow": lambda s: [Step("AR.SHOW", {})],
    "ArHide": lambda s: [Step("AR.REMOVE", {})],
    "ArView": lambda s: [Step("AR.SHOW", {"view": s["view"]})],
    "ArRotate": lambda s: [Step("AR.ROTATE", {"direction": s["rotation"]})],
    "ArZoom": lambda s: [Step("AR.ZOOM_IN" if s["zoom"] == "in" else "AR.ZOOM_OUT", {})],
    "ArShowStructure": lambda s: [Step("AR.SHOW", {"structures": _structures(s), "op": "add"})],
    "ArHideStructure": lambda s: [Step("AR.SHOW", {"structures": _structures(s),
                                                   "op": "remove"})],
    "ArShowLobe": lambda s: [Step("AR.SHOW", {"structures": _structures(s), "op": "add"})]
    if _lobe_known(s) else None,
    "ArHideLobe": lambda s: [Step("AR.SHOW", {"structures": _structures(s), "op": "remove"})]
    if _lobe_known(s) else None,
}


def read_template(text: str, tier: str) -> Decision | None:
    """The decision for ``text`` (normalised and corrected) when it is a whole command in one of
    the template shapes, else None."""
    m: TemplateMatch | None = match(text)
    if m is None or m.intent not in _DECODERS:
        return None
    steps = _DECODERS[m.intent](m.slots)
    if not steps:
        return None
    return Decision(valid=True, steps=steps, agent=steps[0].action_id.split(".", 1)[0],
                    confidence=CONFIDENCE, tier=tier, reason=f"template: {m.intent}",
                    diagnostics={"template": m.intent, "slots": {k: str(v) for k, v in
                                                               m.slots.items()}})


__all__ = ["CONFIDENCE", "read_template"]
