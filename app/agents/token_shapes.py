"""Token shapes the grammar rewrites before reading a command (``_prepare``): corrections (their
markers in ``correction_markers``),
asides, sparing ("everything but X"), returns, fronted objects, undo and "the other side".
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from app.agents.correction_markers import _VERBISH
from app.agents.display_cues import _dominant_agent, agent_scores
from app.agents.grammar_clauses import (
    _has_head,
    _is_num,
)
from app.agents.grammar_phrases import (
    canonical,
)
from app.agents.particles_and_remarks import (
    _drop_discourse,
    _drop_particles,
    _join_adjective_pairs,
)
from app.core.registry import Step
from app.language.command_words import has_domain_content
from app.language.normalize import tokens_of
from app.language.vocabulary import (
    AR_STRONG,
    AR_VIEW_WORDS,
    DIRECTIONS,
    FIELD_WORDS,
    FILLER,
    HIDE_VERBS,
    IR_STRONG,
    IV_STRONG,
    LOBE_POS,
    MOVE_VERBS,
    ONLY_WORDS,
    PLANE_WORDS,
    REPEAT_COUNTS,
    REPEAT_WORDS,
    RESET_VERBS,
    ROTATE_VERBS,
    SHOW_VERBS,
    STRUCT_WORDS,
)


def _only_side(tokens: list[str]) -> str | None:
    """"only the left", "just the right side", "the left one only": the side, else None."""
    core = [t for t in tokens if t not in ("now", "please", "the", ",", "then", "okay", "ok")]
    if not core or not ({"only", "just"} & set(core)):
        return None
    rest = [t for t in core if t not in ("only", "just", "show", "me", "side", "one", "lung",
                                         "lobes", "half")]
    return rest[0] if rest in (["left"], ["right"]) else None


def _plan_size(steps: Sequence[Step]) -> int:
    return sum(len(v) if isinstance(v, (list, tuple)) else 1
               for s in steps for v in dict(s.params).values())


_SPLIT_OFF_VERBS = {"take", "get", "put", "move", "clear", "pull", "shift", "chuck", "knock"}
_SPLIT_OFF_ENDS = (("off",), ("away",), ("out", "of", "the", "way"), ("out", "of", "view"),
                   ("off", "the", "screen"), ("off", "screen"), ("off", "the", "display"),
                   ("off", "the", "monitor"), ("away", "from", "the", "screen"))


def _hoist_particle(tokens: list[str]) -> list[str]:
    """"take the CT and the patient info off the screen": a removal verb split from its
    particle by a list of objects removes every object ("remove the ct and the patient
    info"); read clause by clause, the first object would be shown."""
    verb = next((i for i, t in enumerate(tokens) if t in _SPLIT_OFF_VERBS), None)
    if verb is not None and "remove" in tokens[verb + 2:]:
        # "chuck the nodules and the RUL off" ("RUL off" already read as "remove RUL"): the
        # verb and its particle around a list remove every item
        k = tokens.index("remove", verb + 2)
        head = tokens[verb + 1:k]
        while head and head[-1] == "the":
            head = head[:-1]
        if head and head[-1] == "and" and not set(head) & (_VERBISH | {","}):
            return [*tokens[:verb], "remove", *tokens[verb + 1:k], *tokens[k + 1:]]
    if verb is not None and tokens[verb] in ("take", "get", "pull") and "out" in tokens[verb + 2:]:
        # "take the RLL out of the model": the verb and its particle around the object
        k = tokens.index("out", verb + 2)
        obj, after = tokens[verb + 1:k], tokens[k + 1:]
        if obj and not set(obj) & (_VERBISH | {","}) and (not after or after[0] in (
                "of", ",", "please", "now", "too", "as", "and")):
            for gone in (["of", "the", "way"], ["of", "view"], ["of", "sight"]):
                if after[:len(gone)] == gone:
                    after = after[len(gone):]
            after = ["from", *after[1:]] if after and after[0] == "of" else after
            return [*tokens[:verb], "remove", *obj, *after]
    if verb is not None:
        # "put the patient info away and the CT too": the particle before the list goes on
        for k in range(verb + 2, len(tokens) - 2):
            if tokens[k] in ("away", "off") and tokens[k + 1] == "and" and \
                    not set(tokens[k + 2:]) & (_VERBISH | {","}):
                return [*tokens[:verb], "remove", *tokens[verb + 1:k], *tokens[k + 1:]]
    body = tokens[:-1] if tokens and tokens[-1] in ("please", "now", "too") else tokens
    for end in sorted(_SPLIT_OFF_ENDS, key=len, reverse=True):
        if tuple(body[-len(end):]) == end:
            head = body[:-len(end)]
            verb = next((i for i, t in enumerate(head) if t in _SPLIT_OFF_VERBS), None)
            if verb is not None and "and" in head[verb + 1:] and "," not in head[verb + 1:]:
                return [*head[:verb], "remove", *head[verb + 1:]]
            break
    return tokens


# Openers of an explanation said next to a request ("..., which means the vessels are lower",
# "that is where the bronchus branches", "these matter for the risk", "I am wondering about
# the lower lobe, so ..."): such a part asks for nothing, even when it names console things.
_ASIDE_OPENERS = (("which",), ("this", "is"), ("it", "is", "rather"), ("it", "is", "in"),
                  ("it", "is", "getting"), ("it", "is", "blocking"), ("these",), ("those",), ("that", "is", "where"),
                  ("that", "is", "why"), ("that", "is", "how"), ("it", "is", "where"),
                  ("because",), ("since",), ("as", "you", "can", "see"), ("i", "am", "wondering"),
                  ("i", "wonder"), ("so", "the"), ("the", "first", "thing"),
                  # "we're done, close everything": the reason given before the request
                  ("we", "are", "done"), ("we", "are", "finished"), ("i", "am", "done"),
                  ("all", "done"))
_REQUEST_VERBS = SHOW_VERBS - {"see", "view", "look", "visible", "remind", "where", "what", "which",
                                 "is", "are", "how", "whats"} | HIDE_VERBS | \
    RESET_VERBS | ROTATE_VERBS | MOVE_VERBS - {"come", "head", "go"} | {"zoom", "add", "enlarge"}


def _comma_parts(tokens: list[str]) -> list[list[str]]:
    """The parts of a command between commas; a part of fillers alone separates nothing
    ("uh, the nodules, um, add those")."""
    parts: list[list[str]] = [[]]
    for t in tokens:
        if t == ",":
            parts.append([])
        else:
            parts[-1].append(t)
    return [p for p in parts if any(t not in FILLER for t in p)] or parts


def _drop_asides(tokens: list[str]) -> tuple[list[str], bool]:
    """Drop explanation parts next to a request; (tokens, whether any part was dropped)."""
    if "," not in tokens:
        return tokens, False
    parts = _comma_parts(tokens)
    def aside(part: list[str]) -> bool:
        core = [t for t in part if t not in ("and", "so", "now", "hmm", "okay", "ok", "well")]
        return any(tuple(core[:len(o)]) == o for o in _ASIDE_OPENERS) and \
            not set(core[len(core) and 1:]) & _REQUEST_VERBS
    kept = [p for p in parts if p and not aside(p)]
    if len(kept) == len([p for p in parts if p]) or not kept or not any(
            _has_head(p) or set(p) & set(DIRECTIONS) or has_domain_content(" ".join(p))
            for p in kept):
        return tokens, False
    out: list[str] = []
    for p in kept:
        out.extend([",", *p] if out else p)
    return out, True


# "... but leave the model where it is", "..., keep the patient box up": the display named
# after these stays as it is; the words ask for nothing.
_SPARING_VERBS = {"leave", "leaving", "keep", "keeping"}
_JOINERS = {"but", "and", ","}
_SPARING_TAILS = {"where", "as", "it", "is", "they", "are", "up", "on", "alone", "there",
                  "visible", "open", "showing", "displayed", "shown", "in", "place", "untouched",
                  "unchanged", "be", "was", "were", "please"}


def _spared_span(tokens: list[str], k: int) -> int | None:
    """End of the sparing part starting at joiner ``k``, or None when there is none."""
    nxt = tokens[k + 1] if k + 1 < len(tokens) else ""
    if nxt not in _SPARING_VERBS and not (nxt == "not" and tokens[k] in ("but", ",")):
        return None
    end = k + 2
    while end < len(tokens) and tokens[end] not in (",", "then") and not (
            tokens[end] == "and" and _has_head(tokens[end + 1:])):
        end += 1
    return end


def _drop_sparing(tokens: list[str]) -> list[str]:
    """Drop what only says a display stays ("hide the CT but not the patient box", "clear
    the model and leave the patient info up"), and a negated part corrected by an "only"
    part ("not the diagnosis, just the operation name"). An exception inside one display
    ("all fields but not the weight", "the lobes but not the RUL") is no such part: it is
    read by the agent's grammar."""
    if tokens[:1] in (["leave"], ["keep"]) and "," in tokens[:6]:
        # "leave the model, just take off the CT": the part that stays, then the request
        cut = tokens.index(",")
        rest = [t for t in tokens[cut + 1:] if t not in ("just", "only")]
        if _dominant_agent(tokens[1:cut]) is not None and _has_head(rest):
            return _drop_sparing(rest)
    if tokens[:1] in (["not"], ["no"]) and "," in tokens:
        cut = tokens.index(",")
        rest = tokens[cut + 1:]
        if rest[:1] and rest[0] in ONLY_WORDS | {"but"} and not _has_head(tokens[:cut]):
            return rest[1:] if rest[0] == "but" else rest
    for k in range(1, len(tokens) - 1):
        if tokens[k] not in _JOINERS:
            continue
        end = _spared_span(tokens, k)
        if end is None:
            continue
        spared = [t for t in tokens[k + 2:end] if t not in _SPARING_TAILS]
        before = tokens[:k]
        mine, theirs = _dominant_agent(spared), _dominant_agent(before)
        rest_of = spared[-2:] in (["the", "rest"], ["everything", "else"], ["the", "others"])
        # theirs is None when several displays were named before ("close the CT and the
        # model, leave the chart"): the spared one is not among them
        if (mine is not None and (theirs is not None and mine != theirs or theirs is None and
                                  agent_scores(before).get(mine, 0) <= 0) or rest_of) and \
                _has_head(before):
            return _drop_sparing(before + tokens[end:])
    return tokens


# Nouns naming a display as a whole: "back to the model" returns to it ("back" is no view).
_RETURN_NOUNS = {"model", "3d", "reconstruction", "anatomy", "ct", "scan", "scans", "images",
                 "patient", "box", "info", "information", "sheet"}


def _drop_return(tokens: list[str]) -> list[str]:
    """"back to the model, zoom in again" / "back on the CT": a switch of display; "back" is
    neither a posterior view nor a zoom out there."""
    if tokens[:3] == ["back", "to", "the"] and "," in tokens[3:7]:
        # "back to the patient box, add the PFT": the header only names where the request
        # goes; a field named after it says it (the header alone would show every field)
        k = tokens.index(",", 3)
        rest = tokens[k + 1:]
        if set(tokens[3:k]) <= {"patient", "box", "info", "information", "sheet", "patient's"} \
                and set(rest) & set(FIELD_WORDS):
            return rest
    out: list[str] = []
    for i, t in enumerate(tokens):
        nxt = tokens[i + 1:i + 4]
        if t == "back" and nxt[:1] in (["to"], ["on"], ["onto"]) and (
                nxt[1:2] == ["the"] and nxt[2:3] and nxt[2] in _RETURN_NOUNS
                or nxt[1:2] and nxt[1] in _RETURN_NOUNS):
            continue
        out.append(t)
    return out


_FRONT_PRONOUNS = ("it", "them", "this", "that", "these", "those")
# What an object said first may be: a display, a structure, a plane, a patient field.
_OBJECT_NOUNS = (IR_STRONG | IV_STRONG | AR_STRONG | set(STRUCT_WORDS) | set(PLANE_WORDS)
                 | {"tumor", "lesion", "mass", "lobe", "lobes"})
_BARE_VERB_GLUE = {"please", "now", "then", "just", "and", "kindly"}


def _front_object(tokens: list[str]) -> list[str]:
    """The object said first, then the verb ("the airway, disable", "the model, show it",
    "the tumour, where is it?"): read as the verb with that object in the pronoun's place.
    Only a bare noun phrase (no verb, no number) followed by a part that is a verb alone or
    a verb with a pronoun is moved; anything else is left as said."""
    if "," not in tokens:
        return tokens
    parts = _comma_parts(tokens)
    for k in range(len(parts) - 1):
        obj, verb = parts[k], parts[k + 1]
        core = [t for t in obj if t not in FILLER and t not in ("the", "a")]
        if not set(core) & _OBJECT_NOUNS or len(obj) > 6 or _has_head(obj) or \
                any(_is_num(t) for t in obj) or \
                any(t in DIRECTIONS for t in core) and not set(core) & {
                    "lobe", "lobes", "lung", "lungs"} or not _has_head(verb):
            continue
        at = next((i for i, t in enumerate(verb) if t in _FRONT_PRONOUNS), None)
        rest = [t for t in verb if t not in _BARE_VERB_GLUE]
        if at is not None and at > 0:
            moved = [*verb[:at], *obj, *verb[at + 1:]]
        elif at is None and len(rest) == 1:
            moved = [*verb, *obj]  # "the airway, disable"
        else:
            continue
        parts = [*parts[:k], moved, *parts[k + 2:]]
        out: list[str] = []
        for i, part in enumerate(parts):
            out += ([","] if i else []) + part
        return out
    return tokens


_MODALS = {"could", "can", "should", "would", "might", "may", "will", "must"}


def _drop_passive_modal(tokens: list[str]) -> list[str]:
    """"the axial could be set to ninety", "the model can be turned": the verb alone."""
    out = list(tokens)
    for k in range(len(out) - 2, 0, -1):
        if out[k - 1] in _MODALS and out[k] == "be" and \
                out[k + 1] in _VERBISH | HIDE_VERBS | RESET_VERBS:
            del out[k - 1:k + 1]
    return out


def _side_over_lobes(tokens: list[str]) -> list[str]:
    """"the right middle and lower lobes": the side said once goes with each lobe listed."""
    out = list(tokens)
    for k in range(len(out) - 4):
        side, a, conj, b, noun = out[k:k + 5]
        if side in ("left", "right") and a in LOBE_POS and conj in ("and", "or", "plus") and \
                b in LOBE_POS and noun in ("lobe", "lobes"):
            return [*out[:k], side, a, "lobe", conj, side, b, "lobe", *out[k + 5:]]
    return out


_ROTATION_NOUNS = {"spin", "rotation", "turn", "swing", "twist", "orbit"}


def _with_rotation(tokens: list[str]) -> list[str]:
    """"anterior view with a vertical spin": the view, and then the rotation (DESIGN §4: a
    view named together with a rotation is two actions in order)."""
    for k, t in enumerate(tokens):
        if t in ("rotate", "spin", "turn", "swing") and k and tokens[k - 1] in ("view", "side") \
                and set(tokens[:k]) & set(AR_VIEW_WORDS):
            return [*tokens[:k], "and", *tokens[k:]]  # "left view rotate up"
        if t == "with" and k and set(tokens[k + 1:k + 4]) & _ROTATION_NOUNS and \
                set(tokens[:k]) & ({"view", "side"} | set(AR_VIEW_WORDS)):
            rest = [x for x in tokens[k + 1:] if x not in ("a", "an", "the")]
            return [*tokens[:k], "and", "rotate", *[x for x in rest if x not in
                                                    _ROTATION_NOUNS]]
    return tokens


_TOO_AFTER = set(FIELD_WORDS) | set(STRUCT_WORDS) | {"ct", "scan", "model", "3d", "chart", "info",
                                                     "information", "box", "lobe", "lung"}


def _closing_too(tokens: list[str]) -> list[str]:
    """"gender to", "the nodules to": a closing "to" after a thing named is "too" (a
    recogniser writes the sound both ways; no command ends in "to")."""
    if len(tokens) > 1 and tokens[-1] == "to" and tokens[-2] in _TOO_AFTER:
        return [*tokens[:-1], "too"]
    return tokens


def _prepare(text: str) -> list[str]:
    """The tokens the grammar reads for a corrected command."""
    return _closing_too(_side_over_lobes(_with_rotation(_drop_passive_modal(_front_object(_drop_discourse(
        _join_adjective_pairs(
            _drop_particles(_hoist_particle(_drop_return(tokens_of(canonical(text))))))))))))



_BARE_DIRECTION = {"left", "right", "up", "down", "anterior", "posterior", "superior",
                   "inferior", "front", "back", "top", "bottom"}


_NESTING = threading.local()

# "the same for X", "do the same with X", "likewise for X", "same goes for X", "ditto X"
_SAME_WORDS = {"same", "likewise", "ditto", "similarly"}
_SAME_LEAD = {"and", "now", "then", "do", "the", "please", ",", "thing", "again", "goes",
              "go", "applies", "let", "us", "we", "can", "okay", "ok", "so"}
_SAME_PREPS = {"for", "with", "on", "to"}
_SAME_TAIL = {"please", "too", "as", "well", ",", "now", "also"}


def _same_for_object(tokens: list[str]) -> list[str] | None:
    """The object X of "the same for X" (the whole command), else None."""
    k = next((i for i, t in enumerate(tokens) if t in _SAME_WORDS), None)
    if k is None:
        return None
    if any(t not in _SAME_LEAD for t in tokens[:k]):
        # the plane first: "now coronal the same", "axial likewise please"
        head = [t for t in tokens[:k] if t not in _SAME_LEAD and t not in _SAME_TAIL
                and t not in ("slice", "view", "plane", "image")]  # "coronal slice also same"
        tail = [t for t in tokens[k + 1:] if t not in _SAME_TAIL]
        if tail[:1] and tail[0] in _SAME_PREPS:
            # "the coronal, let's do the same for the coronal": the plane said twice
            tail = [t for t in tail[1:] if t not in ("the", ",")]
            tail = [] if tail == head else tail
        return head if len(head) == 1 and head[0] in PLANE_WORDS and not tail else None
    j = k + 1
    while j < len(tokens) and tokens[j] in _SAME_LEAD:
        j += 1
    if j < len(tokens) and tokens[j] in _SAME_PREPS:
        j += 1
    elif tokens[k] != "ditto" and not (
            len(tokens) == j + 1 and tokens[j] in PLANE_WORDS):  # "same ax", "same coronal"
        return None
    post = tokens[j:]
    while post and post[0] in ("the", ","):
        post = post[1:]
    while post and post[-1] in _SAME_TAIL:
        post = post[:-1]
    return post or None


# Words around "other side" when it is the whole request ("now from the other side", "look at
# it from the opposite side", "the other side, please").
_OTHER_SIDE_GLUE = {"now", "from", "the", "it", "show", "me", "view", "look", "at", "let", "us",
                    "see", "please", "and", ",", "then", "to", "go", "switch", "flip", "turn",
                    "can", "we", "could", "i", "have", "a", "of", "instead"}


_UNDO_FILL = {"that", "it", "this", "the", "last", "previous", "command", "change", "step",
              "move", "one", "action", "please", "now", ",", "just", "again", "what", "i",
              "did", "said", "you", "can", "could", "would", "we", "go", "ahead", "and",
              "oops", "sorry", "no", "wait"}


def is_undo(tokens: list[str]) -> bool:
    """"undo that", "undo the last command", "scratch that", "take that back", "revert the
    last change": the registry's undo (the state before the last command), not a new plan."""
    words = [t for t in tokens if t != ","]
    while words and (words[0] in ("oops", "sorry", "no", "wait", "uh", "um", "please", "okay",
                                  "ok") or words[:2] in (["i", "meant"], ["i", "mean"])):
        words = words[2:] if words[0] == "i" else words[1:]  # "sorry, I meant, undo that"
    extra = _UNDO_FILL | FILLER
    if "undo" in words:
        return all(t in extra or t == "undo" for t in words)
    for head in (("scratch", "that"), ("take", "that", "back"), ("revert",)):
        if tuple(words[:len(head)]) == head:
            return all(t in extra for t in words[len(head):])
    return _is_undo_phrase(words)


def _is_undo_phrase(words: list[str]) -> bool:
    """The whole command is one of the language's undo phrases, fillers aside."""
    from app.language import matches
    from app.language import words as word_class

    spans = matches(words, "undo_phrases") + matches(words, "position_back_phrases")
    if len(spans) != 1:
        return False
    a, b = spans[0]
    fill = word_class("command_fillers")
    before = words[:a]
    # "could we go back to where we were?": a request frame before the phrase is no part of it
    lead = [e for s, e in matches(before, "request_leads") if s == 0]
    if lead:
        before = before[max(lead):]
    # "jamkkanman, back to where we were": an opener of another language may come first (a
    # plane named first is not enough: the last move may have been another plane's)
    markers = word_class("discourse_markers")
    # "back to where we were on the CT": the slices the phrase means may be named after it
    tail = {k for s, e in matches(words[b:], "back_time_tails") for k in range(s, e)}
    after = [t for k, t in enumerate(words[b:]) if k not in tail]  # "... where we were before"
    return all(t in fill or t in (",", ".") or t in markers for t in before) and \
        all(t in fill or t in (",", ".") or t in _ON_THE_CT for t in after)


_ON_THE_CT = {"on", "in", "for", "with", "the", "ct", "scan", "scans", "images", "slices"}


_DISPLAY_TOO_FILL = {"and", "the", "as", "well", "too", "also", "please", ",", "thank", "you",
                     "all", "thanks", "now", "that", "her", "his", "its"}
_DISPLAY_NOUN_AGENT = {"ct": "IV", "scan": "IV", "scans": "IV", "ct scan": "IV", "images": "IV",
                  "model": "AR", "3d": "AR", "3d model": "AR", "patient box": "IR",
                  "info box": "IR", "patient info": "IR", "patient information": "IR",
                  "information": "IR", "box": "IR"}
_AGENT_NAMING = {"ct": "IV", "scan": "IV", "scans": "IV", "images": "IV", "viewer": "IV",
                 "cts": "IV", "model": "AR", "3d": "AR", "anatomy": "AR", "patient": "IR",
                 "box": "IR", "info": "IR", "information": "IR"}
_AGENT_REPEAT_FILL = {"on", "the", "last", "move", "moves", "command", "step", "change", "that",
                      "do", "and", "to", "in", "one", "previous", "action", "a", "please",
                      "now", "there", "of", "with", "but"}


def _agent_repeat(tokens: list[str]) -> tuple[str, str | None, str | None] | None:
    """"again on the CT", "repeat the last CT move", "do the axial move again", "and once
    more on the model": (agent, plane or None, count word or None) of a repeat that names
    which display's last command to repeat; None otherwise."""
    core = [t for t in tokens if t != ","]
    if not ({"again", "repeat"} & set(core) or {"once", "more"} <= set(core)):
        return None
    if any(t in _AGENT_NAMING and nxt in ("on", "up", "back", "off")
           for t, nxt in zip(core, core[1:], strict=False)):
        return None  # "CT on again": the display put back, not its last command repeated
    agents = {_AGENT_NAMING[t] for t in core if t in _AGENT_NAMING}
    planes = {PLANE_WORDS[t] for t in core if t in PLANE_WORDS}
    if planes:
        agents.add("IV")
    if len(agents) != 1 or len(planes) > 1:
        return None
    counts = [t for t in core if t in REPEAT_COUNTS and t != "once"]
    allowed = REPEAT_WORDS | set(REPEAT_COUNTS) | _AGENT_REPEAT_FILL | set(_AGENT_NAMING) \
        | set(PLANE_WORDS) | FILLER
    if not all(t in allowed for t in core) or "same" in core or len(counts) > 1:
        return None
    return agents.pop(), (planes.pop() if planes else None), (counts[0] if counts else None)


_ADDITIVE = {"too", "also", "and", "as", "well", "plus"}


def _side_one(tokens: list[str]) -> tuple[str, bool] | None:
    """"and the right one too", "the left one": (side, added?) of a side named with "one"."""
    core = [t for t in tokens if t not in (",", "please", "now", "the")]
    sides = [t for t in core if t in ("left", "right")]
    if len(sides) != 1 or "one" not in core or not set(core) <= {*sides, "one"} | _ADDITIVE:
        return None
    return sides[0], bool(set(core) & _ADDITIVE)


def _readd_pronoun(tokens: list[str]) -> bool:
    """"bring it back", "put that back please": re-adding a pronoun, nothing named."""
    core = [t for t in tokens if t in ("it", "that", "them", "this") or t not in FILLER
            and t not in (",", "can", "you", "could", "please", "now")]
    return len(core) == 2 and core[0] == "readd" and core[1] in ("it", "that", "them", "this")


def _other_side(tokens: list[str]) -> bool:
    """Is the command only "the other side" (the last view or swing, reversed)?"""
    rest = [t for t in tokens if t not in FILLER and t not in _OTHER_SIDE_GLUE]
    return rest in (["other", "side"], ["opposite", "side"])
