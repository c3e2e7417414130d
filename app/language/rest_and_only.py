"""Whole-set edits said as two parts: "only the RUL, close all the others" and "remove
everything, leave only the PFT and the diagnosis" both mean "only" what was named (the
corrector rewrites them so that every tier reads the one meaning)."""

from __future__ import annotations

from app.language.vocabulary import FIELD_WORDS, HIDE_VERBS, ONLY_WORDS, STRUCT_WORDS

_REST_NOUNS = {"others", "other", "rest", "else"}
_REST_PART = _REST_NOUNS | HIDE_VERBS | {"no", "need", "of", "for", "all", "the", "ones", "one",
                                         "everything", "please", "them", "not", "needed", "and",
                                         "nothing", "any", "more", "take", "away", "off",
                                         "get", "rid", "can", "go"}
# Words of hiding said with "the rest" besides the hide verbs ("take the rest away", "the
# others off", "other all can go")
_TAKEN_AWAY = {"need", "nothing", "away", "off", "rid", "go"}


def rest_hidden(tokens: list[str]) -> list[str]:
    """"only the RUL, close all the others", "diagnosis and location, no need of others": a
    closing part that hides the rest says the part before it is all that is wanted."""
    if "," not in tokens and "and" not in tokens:
        return tokens
    cut = max(k for k, t in enumerate(tokens) if t in (",", "and"))
    tail, head = tokens[cut + 1:], tokens[:cut]
    if not tail or not set(tail) & _REST_NOUNS or not all(t in _REST_PART for t in tail) or \
            not (set(tail) & (HIDE_VERBS | _TAKEN_AWAY)) or \
            not set(head) & _NAMED_THINGS or set(head) & _NOT_A_SHOW:
        return tokens  # ("don't hide the airway, hide the others", "zoom in … hide the rest")
    if set(head) & (ONLY_WORDS | {"only", "just"}):
        return head
    return ["only", *head] if head[:1] not in (["show"], ["display"]) else [
        head[0], "only", *head[1:]]


# A part before "the others" that does more than show ("hide the airway and remove the
# others", "zoom in on the nodule and hide the rest") or says "not" is no "only".
_NOT_A_SHOW = HIDE_VERBS | {"not", "no", "dont", "zoom", "rotate", "turn", "spin", "move", "go",
                            "reset", "except", "but", "center", "centre", "highlight", "focus",
                            "colour", "color"}
# What "only" picks here: structures and fields (not verbs: "zoom in and remove the others"
# is no "only zoom in"; not whole displays, whose "only" the grammar reads on its own)
_NAMED_THINGS = (frozenset(STRUCT_WORDS) | frozenset(FIELD_WORDS) | {
    "rul", "rml", "rll", "lul", "lll", "lobe", "lobes", "lung", "lungs"}) - HIDE_VERBS - {
    "all", "everything", "rest", "other", "others", "model", "3d", "ct", "scan", "chart", "info",
    "information", "patient", "data", "details", "box"}


_ALL_WORDS = {"everything", "all", "it", "of", "the", "please", "now", "off", "away"}
_KEEP_WORDS = {"leave", "keep", "except", "but", "save"}
_DISPLAYS = {"model", "3d", "ct", "scan", "chart", "box", "info", "information", "patient",
             "reconstruction", "views", "images"}


def only_what_is_kept(tokens: list[str]) -> list[str]:
    """"remove everything, leave only the PFT and the diagnosis", "clear it all but keep the
    nodules": a removal of everything, then what is kept, is "only" what is kept."""
    cut = next((k for k, t in enumerate(tokens) if t in (",", "but", "except")), None)
    if cut is None:
        return tokens
    head, tail = tokens[:cut], tokens[cut + 1:] if tokens[cut] == "," else tokens[cut:]
    if not set(head) & HIDE_VERBS or not set(head) & {"everything", "all"} or \
            not all(t in HIDE_VERBS or t in _ALL_WORDS for t in head):
        return tokens
    k = 0
    while k < len(tail) and (tail[k] in _KEEP_WORDS or tail[k] in ONLY_WORDS or tail[k] in (
            "only", "just")):
        k += 1
    kept = tail[k:]
    if not set(tail[:k]) & (_KEEP_WORDS | {"only", "just"}) or not set(kept) & _NAMED_THINGS or \
            set(kept) & (_NOT_A_SHOW | _DISPLAYS):  # "keep the 3D model and the airway"
        return tokens
    return ["only", *kept]
