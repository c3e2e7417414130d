"""A description said as the reason for the command beside it ("too close, zoom out once";
"it's higher I think, so axial up, up, up"): the description alone would be read as the same
action, but said with the command it is the command's reason, not a second step (DESIGN §4: a
composite does every part it asks for, and a reason asks for nothing).

The leads that make a clause a description are data (``description_leads`` in ``words.toml``).
"""

from __future__ import annotations

from collections.abc import Sequence

from app.core.registry import Step
from app.language import matches, words
from app.language.vocabulary import MOVE_VERBS, ROTATE_VERBS, SHOW_VERBS

_ASKING = SHOW_VERBS | MOVE_VERBS | ROTATE_VERBS | {
    "zoom", "hide", "remove", "reset", "add", "rotate", "turn", "spin", "enlarge", "shrink",
    "take", "put", "bring", "go", "make", "give"}


def is_description(clause_words: Sequence[str]) -> bool:
    """The clause describes what is seen ("it is higher", "too close", "not so big") and asks
    for nothing with a verb of its own."""
    toks = list(clause_words)
    while toks and toks[0] in words("command_fillers"):
        toks = toks[1:]
    if not toks or set(toks) & _ASKING:
        return False
    return any(a == 0 for a, _ in matches(toks, "description_leads"))


def _same_kind(a: Step, b: Step) -> bool:
    if a.action_id != b.action_id:
        return False
    pa, pb = dict(a.params), dict(b.params)
    if a.action_id == "IV.SHOW_MOVE":
        def signs(p: dict[str, object]) -> dict[str, str]:
            return {k: str(v)[:1] for k, v in p.items() if str(v)[:1] in "+-"}
        return bool(signs(pa)) and signs(pa) == signs(pb)
    if a.action_id == "AR.ROTATE":
        return pa.get("direction") == pb.get("direction")
    return a.action_id in ("AR.ZOOM_OUT", "AR.ZOOM_IN", "IV.ZOOM_OUT") and pa == pb


def is_reason_for(described: Sequence[Step], asked: Sequence[Step]) -> bool:
    """Every step the description alone would take is one the request takes too."""
    return bool(described) and bool(asked) and all(
        any(_same_kind(s, t) for t in asked) for s in described)
