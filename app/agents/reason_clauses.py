"""A description said as the reason for the command beside it ("too close, zoom out once";
"it's higher I think, so axial up, up, up"): the description alone would be read as the same
action, but said with the command it is the command's reason, not a second step (DESIGN §4: a
composite does every part it asks for, and a reason asks for nothing).

The leads that make a clause a description are data (``description_leads`` in ``words.toml``).
Also here: the context rules that read a reason or a swap ("X instead of Y") beside a request
(listed, in order, in ``app.agents.context_rules``).
"""

from __future__ import annotations

from collections.abc import Sequence

from app.agents.lexicon import GrammarTier, Reading
from app.agents.token_shapes import _prepare
from app.core.registry import Step
from app.language import matches, words
from app.language.normalize import tokens_of
from app.language.vocabulary import (
    FIELD_WORDS,
    FILLER,
    LOBE_POS,
    MOVE_VERBS,
    ROTATE_VERBS,
    SHOW_VERBS,
    STRUCT_WORDS,
)

_MARKERS = words("discourse_markers")

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


_SWAP_LEADS = SHOW_VERBS | {"change", "switch", "swap", "put", "bring", "up", "to", "me", "us",
                            "can", "you", "could", "please", "now", "and", "then", "so"}


def instead_of(lx: GrammarTier, r: Reading) -> bool:
    """"show the RLL instead of the RUL", "the diagnosis instead of sex and age": what is
    named after "instead of" goes and what is named before it comes, beside what stays; a
    plane or view named instead of another is simply the one named."""
    toks = r.tokens
    at = next((k for k in range(len(toks) - 1) if (toks[k], toks[k + 1]) in (
        ("instead", "of"), ("in", "place"), ("rather", "than"))), None)
    if at is None:
        return False
    skip = at + 3 if toks[at] == "in" and toks[at + 2:at + 3] == ["of"] else at + 2
    if at == 0:  # "instead of the RUL, the RLL"
        if "," not in toks:
            return False
        end = toks.index(",")
        gone, come = toks[skip:end], toks[end + 1:]
    else:
        end = toks.index(",", skip) if "," in toks[skip:] else len(toks)
        gone, come = toks[skip:end], [*toks[:at], *toks[end:]]
    if not come or set(come) & _REMARKING:
        return False  # "the tumour is in the RML rather than the RUL": a remark
    named = [t for t in gone if t in STRUCT_WORDS or t in FIELD_WORDS or t in LOBE_POS or
             t in ("lung", "lungs", "lobe", "lobes")]
    k = 0
    while k < len(come) and come[k] in _SWAP_LEADS:
        k += 1
    if set(gone) & _DISPLAYS and not named:
        r.tokens = ["hide", *gone, ",", *come]  # "show the CT instead of the model"
        return True
    if not named or any(t in _ACTION_VERBS for t in come[k:]):
        # "zoom in on the coronal instead of the axial", "focus on the nodule rather than
        # the RUL": only what is named before is meant
        r.tokens = come
        return True
    r.tokens = ["remove", *gone, ",", "add", *come[k:]]
    return True


_REMARKING = {"is", "are", "was", "were", "sits", "lies", "we", "i", "will", "be", "its", "it"}
_DISPLAYS = {"model", "3d", "ct", "scan", "scans", "patient", "box", "info", "information"}
_ACTION_VERBS = MOVE_VERBS | {"zoom", "focus", "center", "centre", "rotate", "turn", "spin",
                              "hide", "remove", "reset", "enlarge"}


def reason_before_request(lx: GrammarTier, r: Reading) -> bool:
    """"too close, zoom out once", "it's higher I think, so axial up, up, up": a description
    before a request for the same thing is its reason, not a second step — read the request
    alone (a description alone is still read as the request it implies)."""
    if r.repeat_of is not None or "," not in r.tokens:
        return False
    segs = _segments(tokens_of(r.corrected))
    k = 0  # the first segment with more than fillers ("okay so, uh, hmm, it's higher ...")
    while k < len(segs) - 1 and not set(segs[k]) - _MARKERS - FILLER:
        k += 1
    if k >= len(segs) - 1 or not is_description(segs[k]) or any(
            is_description(seg) for seg in segs[k + 1:]):
        return False  # (several descriptions, each with its request, are read as said)
    head = _prepare(" ".join(segs[k]))
    rest = _prepare(" , ".join(" ".join(seg) for seg in segs[k + 1:]))
    said = lx.decide(" ".join(head), r.state, r.memory)
    asked = lx.decide(" ".join(rest), r.state, r.memory)
    if said is None or asked is None or not is_reason_for(said.steps, asked.steps):
        return False
    r.tokens = rest
    return True


def _segments(tokens: list[str]) -> list[list[str]]:
    """The words between pauses (no empty ones)."""
    out: list[list[str]] = [[]]
    for t in tokens:
        if t == ",":
            if out[-1]:
                out.append([])
        else:
            out[-1].append(t)
    return [seg for seg in out if seg]
