"""Which display the words name (DESIGN §3 tier 2 routing cues): each agent's score from its
own nouns and the shapes that name it ("from behind" is the model's, "switch to bone" the
CT's, "which lobe is the tumour in" the patient box's), and what each agent can do."""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.language.vocabulary import (
    _PFT_RE,
    AR_STRONG,
    AR_VIEW_WORDS,
    FIELD_PHRASES,
    IR_STRONG,
    IV_STRONG,
    PLANE_WORDS,
)

_NUM_RE = re.compile(r"^([+-]?)(\d+)(?:st|nd|rd|th)?$")


def _is_num(tok: str) -> bool:
    return bool(_NUM_RE.match(tok))


_WINDOW_SWITCH = re.compile(r"\b(switch|change|go|flip)( back)? to( the)? (bone|bony|mediastinal|"
                            r"mediastinum|soft tissue|lung|pulmonary|parenchyma)"
                            r"(?= please| now| thanks|$| ,| and| then)")


# The field's own names for where the tumour is ("tumour site", "tumour information"): the
# patient field, not the nodules in the model.
_TUMOR_FIELD_RE = re.compile(r"\b(?:" + "|".join(
    re.escape(" ".join(ph)) for ph, fields in FIELD_PHRASES
    if fields == ("tumor_location",) and "tumor" in ph) + r")\b")


def agent_scores(words: Sequence[str]) -> dict[str, float]:
    """How strongly the words name each agent (routing cues, not yet a decision)."""
    s = {"IR": 0.0, "IV": 0.0, "AR": 0.0}
    ws = list(words)
    text = " ".join(ws)
    for w in ws:
        if w in IR_STRONG:
            s["IR"] += 2 if w in ("info", "information", "data", "values", "details", "date",
                                  "record") else 3
        if w in IV_STRONG:
            s["IV"] += 2 if w in ("level", "images", "imaging", "pictures", "films",
                                  "chest", "layout", "grid") else 3
        if w in AR_STRONG and w != "readd":
            s["AR"] += 3
    if "readd" in ws and s["IR"] == 0 and s["IV"] == 0:
        s["AR"] += 3  # "bring it back" after the model; "bring the CT back" is the CT's
    if _PFT_RE.search(text):
        s["AR"] -= 3
        s["IR"] += 1
    if re.search(r"\b(lung|bone|soft|mediastin\w*|pulmonary) (window|tissue|preset|setting)",
                 text):
        s["AR"] = max(0.0, s["AR"] - 3)
        s["IR"] = max(0.0, s["IR"] - 3)
    if _TUMOR_FIELD_RE.search(text) or re.search(
            r"\b(which|what) (lobe|part|side|area|region|segment|portion)", text) and \
            re.search(r"\b(tumor|tumors|nodule|nodules|lesion|mass|cancer)\b", text) or \
            re.search(r"\b(which|what) lobe\b", text):
        s["AR"] = max(0.0, s["AR"] - 3)
        s["IR"] += 2
    if _WINDOW_SWITCH.search(text):
        s["IV"] += 3
    if re.search(r"\b(small|three|3|smaller|all|multiple|multi) (views?|panels?|windows?)", text):
        s["IV"] += 3
    if re.search(r"\b(view|views|perspective|angle|aspect|projection|orientation)\b", text) \
            and any(
            w in AR_VIEW_WORDS for w in ws if w not in PLANE_WORDS):
        s["AR"] += 2
    if re.search(r"\b(from|look at it from)( the)?( patient| patients| her| his| its)? (front|"
                 r"behind|back|above|below|top|bottom|left|right|side|underneath|anterior|"
                 r"posterior|superior|inferior|rear)", text):
        s["AR"] += 2
    if "patient" in ws or "pt" in ws or {"her", "she", "his", "he"} & set(ws):
        s["IR"] += 1
    if re.search(r"\b(of|on|in) the (scan|ct)\b", text):
        s["IV"] += 1
    if re.search(r"\bfrontal (view|side|perspective)\b", text) and not any(
            _is_num(w) or w in ("slice", "plane", "ct", "scan") for w in ws):
        s["IV"] = max(0.0, s["IV"] - 3)
        s["AR"] += 3
    if re.search(r"\b(left|right) (upper|middle|lower)\b|\b(upper|middle|lower) (left|right)\b",
                 text):
        s["AR"] += 3
    if re.search(r"\bturn(ing)? (it|the model|this|that)? ?(to the )?(left|right|up|down|around)"
                 r"\b", text):
        s["AR"] += 3
    if re.search(r"\bwhere\b|\b(which|what) (lobe|side|lung|part|area|region|segment|"
                 r"portion|bit)\b", text) and re.search(
            r"\b(tumor|tumors|nodule|nodules|lesion|mass|cancer)\b", text) and not re.search(
            r"\b(3d|model|anatomy|reconstruction)\b", text):
        s["IR"] += 3  # "where is the tumour?" asks for the tumour location field
        s["tumor_q"] = 1.0
    return s


def _dominant_agent(words: Sequence[str]) -> str | None:
    s = agent_scores(words)
    s.pop("tumor_q", None)
    best = max(s, key=s.__getitem__)
    if s[best] <= 0:
        return None
    tied = [a for a, v in s.items() if v == s[best]]
    return best if len(tied) == 1 else None


# What each agent can do: a clause whose intent an agent cannot serve is not routed there.
CAPABLE = {
    "IR": {"show", "hide", "reset", "add", "question"},
    "IV": {"show", "hide", "reset", "zoom_in", "zoom_out", "move", "question", "repeat"},
    "AR": {"show", "hide", "reset", "zoom_in", "zoom_out", "rotate", "view", "add",
           "question", "repeat", "move"},
}
