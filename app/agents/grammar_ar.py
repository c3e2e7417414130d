"""The grammar's 3D model decoder: structures, views, rotations and zoom from a clause.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from app.agents.grammar_clauses import (
    _PARTICLE_TAIL,
    Clause,
    _Ctx,
    _exception_at,
    _is_num,
    leaves_out,
)
from app.agents.grammar_iv import (
    _repeat_count,
)
from app.agents.structure_names import _side_added, ar_structures
from app.core.registry import Step
from app.core.state import ConsoleState
from app.core.vocab import AR_GROUPS, AR_STRUCTURES
from app.language.vocabulary import (
    _NEGATION,
    ADD_WORDS,
    AR_VIEW_WORDS,
    HIDE_VERBS,
    ONLY_WORDS,
    REPEAT_WORDS,
    RESET_VERBS,
    ROTATE_DIRS,
    ROTATE_VERBS,
    SHOW_VERBS,
    SIDES,
    STOP_WORDS_ROT,
    ZOOM_IN_WORDS,
    ZOOM_OUT_WORDS,
)

# ---------------------------------------------------------------------------------------------
# AR
# ---------------------------------------------------------------------------------------------


# The pronouns that may stand for the structures the previous command named.
_PRONOUNS = {"it", "them", "that", "those"}
# Words that name the model as a whole: with them, "it" is the model, not a structure.
_WHOLE_MODEL = {"model", "3d", "anatomy", "reconstruction", "rendering", "everything", "all",
                "whole", "entire"}


def _prior_referent(c: Clause, ctx: _Ctx, after: frozenset[str] | None = None
                    ) -> list[str] | None:
    """The structures a pronoun in the first clause stands for: those the previous command
    named ("add the RML" ... "zoom in on it"); None when it named none (then "it" is the model).
    Later clauses refer within the command (``_Ctx.ar_named``). ``after``: the words the
    pronoun must follow ("zoom in on it" names a target, "make it bigger" does not)."""
    if ctx.agent is not None or not ctx.prior_named or not c.has(*_PRONOUNS) \
            or c.has(*_WHOLE_MODEL):
        return None
    if after is not None and not any(t in _PRONOUNS and i and c.toks[i - 1] in after
                                     for i, t in enumerate(c.toks)):
        return None
    c.use_words(_PRONOUNS)
    ctx.referred_back = True
    return ctx.prior_named


_TARGET_PREPS = frozenset({"on", "onto", "into", "to", "toward", "towards", "at"})
# Verbs that with the particle "in" put a structure onto the model beside what is shown
# ("put the airway in", "pop the nodules back in", "throw in the RML").
_PUT_IN_VERBS = {"put", "pop", "stick", "throw", "slot", "bung", "chuck", "bring", "readd"}


_SIDED_ABBREVIATIONS = {"rul", "rml", "rll", "lul", "lll"}  # each names its side


def _on_shown_side(keys: list[str], c: Clause, state: ConsoleState) -> list[str]:
    """"the lower lobe" with no side said, while the model shows the lobes of one lung only:
    that lung's lower lobe (both lower lobes otherwise)."""
    pair = {k.split("_", 1)[1] for k in keys if k.startswith(("left_", "right_"))}
    if len(keys) != 2 or len(pair) != 1 or {k.split("_", 1)[0] for k in keys} != {
            "left", "right"} or any(t in SIDES or t in _SIDED_ABBREVIATIONS for t in c.toks) or \
            c.has("lobes", "both", "all") or not state.ar.visible:
        return keys
    sides = {k.split("_", 1)[0] for k in state.ar.structures if k.endswith("_lobe")}
    if len(sides) != 1:
        return keys
    (shown,) = sides
    return [k for k in keys if k.startswith(shown + "_")]


def _put_in(c: Clause) -> bool:
    """Is the clause "put X in" / "put in X" (an addition)? Uses the particle when it is."""
    for i, t in enumerate(c.toks):
        if t != "in" or not i or not any(w in _PUT_IN_VERBS for w in c.toks[:i]):
            continue
        if c.toks[i - 1] in _PUT_IN_VERBS or all(w in _PARTICLE_TAIL for w in c.toks[i + 1:]):
            c.use(i, *(k for k in range(i) if c.toks[k] in _PUT_IN_VERBS))
            return True
    return False


def _ar_hide_except(c: Clause, tumor_lobes: Sequence[str]) -> list[Step] | None:
    """"hide every lobe except the RUL" / "take away everything but the LLL": the exception
    stays. Hiding named structures spares the exception; hiding everything (or the model)
    leaves the exception alone on show."""
    cut = _exception_at(c.toks)
    if cut is None:
        return None
    i, j = cut
    head, tail = Clause(c.toks[:i]), Clause(c.toks[j:])
    spared = _expand(ar_structures(tail, tumor_lobes))
    if not spared:
        return None
    named = _expand(ar_structures(head, tumor_lobes))
    c.use(*(k for k, u in enumerate(head.used) if u), *range(i, j),
          *(j + k for k, u in enumerate(tail.used) if u))
    c.use_words({"all", "everything", "every", "each", "model", "3d", "for", "the"})
    gone = [k for k in named if k not in spared]
    if not named or not gone or set(named) == set(AR_STRUCTURES):
        return [Step("AR.SHOW", {"structures": spared})]
    return [Step("AR.SHOW", {"structures": gone, "op": "remove"})]


def _group_of(structures: Sequence[str]) -> str | None:
    """The group key whose members are exactly these structures, if any."""
    for name, members in AR_GROUPS.items():
        if set(members) == set(structures):
            return name
    return None


def _expand(keys: Iterable[str]) -> list[str]:
    out: list[str] = []
    for k in keys:
        out.extend(AR_GROUPS.get(k, (k,)))
    return sorted(dict.fromkeys(out))


def _lobes_of_a_side(toks: list[str], i: int) -> bool:
    """"the other lobes on the right side", "the lobe inferior of the left side": the side
    says whose lobes, not a view."""
    return i >= 4 and toks[i - 1] in SIDES and toks[i - 2] == "the" and \
        toks[i - 3] in ("on", "of") and (toks[i - 4] in ("lobe", "lobes", "lung", "lungs") or
                                         i >= 5 and toks[i - 5] in ("lobe", "lobes"))


def _ar_view(c: Clause) -> str | None:
    toks = c.toks
    text = " ".join(toks)
    m = re.search(r"\b(?:from|look at it from|seen from|viewed from)( the)?"
                  r"( patient| patients| her| his| its| their| our)? (\w+)", text)
    if m and m.group(3) in AR_VIEW_WORDS:
        word = m.group(3)
        idx = toks.index(word)
        c.use(idx)
        c.use_words({"patient", "patients"})
        c.use_words({"from", "look", "seen", "viewed", "side", "view", "perspective", "angle",
                     "lateral"})
        return AR_VIEW_WORDS[word]
    for i, t in enumerate(toks):
        if t in ("view", "views", "perspective", "angle", "projection", "orientation",
                 "side", "aspect", "approach", "position") and not (
                t == "side" and (_side_added(toks, max(0, i - 1), i + 1) or
                                 _lobes_of_a_side(toks, i))):
            # the view word is before "view" ("anterior view", "right lat view")
            for j in range(i - 1, max(-1, i - 4), -1):
                w = toks[j]
                if w in AR_VIEW_WORDS:
                    c.use(i, j, *[k for k in range(j + 1, i) if toks[k] in (
                        "lat", "lateral", "side", "on", "sided")])
                    return AR_VIEW_WORDS[w]
            if i + 1 < len(toks) and toks[i + 1] in AR_VIEW_WORDS and t != "side":
                c.use(i, i + 1)
                return AR_VIEW_WORDS[toks[i + 1]]
            if toks[i + 1:i + 2] == ["of"] and i + 2 < len(toks) and \
                    toks[i + 2] in AR_VIEW_WORDS and t in ("view", "views", "perspective"):
                c.use(i, i + 1, i + 2)  # "the view of left": a speaker's own word order
                return AR_VIEW_WORDS[toks[i + 2]]
    m = re.search(r"\b(see|show|view|face) (me )?(the |its |it from the )?(back|front|top|bottom|"
                  r"underside|rear|left side|right side)\b", text)
    after = text[m.end():].split()[:1] if m else []
    # "turn it so we see the back"; or the side named as all there is to see ("show me the
    # back", "see the back of the model"), not a part of something ("the back lobes")
    if m and (re.search(r"\b(turn|rotate|spin|so|can|view|look)\b", text)
              or not after or after[0] in ("of", "side", "view", ",", "please", "now", "and",
                                           "then", "too")):
        word = m.group(4).split()[0]
        c.use(toks.index(word))
        c.use_words({"see", "so", "turn", "rotate", "side", "underside", "view", "face"})
        return AR_VIEW_WORDS.get(word, "inferior")
    if re.search(r"\b(from|at) the side\b|\bside view\b|\blateral view\b|\bfrom the lateral\b",
                 text):
        c.use_words({"from", "side", "lateral", "view", "look", "at"})
        return "left"  # a lateral view with no side named: the standard left lateral
    for i, t in enumerate(toks):
        if t in ("behind", "above", "below", "underneath", "beneath"):
            nxt = toks[i + 1:i + 3]
            if nxt[:1] in (["the"], ["a"], ["an"]) and nxt[1:] not in (
                    ["model"], ["3d"], ["lungs"], ["anatomy"], ["reconstruction"]):
                continue  # "running up behind the bronchus": where a thing lies, no view
            c.use(i)
            c.use_words({"look", "it", "how", "does", "from", "seen", "view"})
            return AR_VIEW_WORDS[t]
    return None


_SIDE_OF_WHOLE = re.compile(
    r"\bthe (back|front|top|bottom|underside|rear|left side|right side) of (the |both |her |his "
    r"|the whole |the two )?(lungs|model|3d model|3d|anatomy|chest|it|them|reconstruction)\b")


def _side_of_whole(c: Clause) -> str | None:
    """A side of the whole model asked to be seen ("what does the back of the lungs look
    like?", "show me the front of the model") is a viewpoint, not the lungs as structures;
    "the back of the left lung" names a lung and is left to the other rules."""
    m = _SIDE_OF_WHOLE.search(" ".join(c.toks))
    if m is None or not c.has("look", "looks", "see", "show", "view", "like"):
        return None
    c.use_words({"of", "the", "both", "whole", "two", "lungs", "model", "3d", "anatomy",
                 "chest", "them", "reconstruction", "look", "looks", "like", "does", "do",
                 "what", "see", "show", "view", "side", "it"})
    word = m.group(1).split()[0]
    c.use(c.index(word))
    return AR_VIEW_WORDS.get(word, "inferior")  # "underside" is the bottom


def decide_ar(c: Clause, ctx: _Ctx, intent: str) -> list[Step]:
    state = ctx.state
    c.use_words({"3d", "model", "anatomy", "reconstruction", "rendering", "hologram",
                 "segmentation", "structures", "structure", "it", "them", "lungs"} if not
                c.has("lung", "lobe", "lobes") else {"3d", "model", "anatomy", "reconstruction",
                                                     "rendering", "hologram", "segmentation",
                                                     "it", "them"})
    tumor_lobes = state.case.tumor_lobes
    if intent == "reset":
        c.use_words(RESET_VERBS | {"all", "everything", "view", "back"})
        ctx.ar_target, ctx.ar_target_set = None, True
        return [Step("AR.RESET", {})]
    if intent == "zoom_out":
        c.use_words(ZOOM_OUT_WORDS | {"zoom", "out", "back", "away", "all", "way", "again",
                                      "go", "further", "more", "bit", "little"})
        count = _repeat_count(c)
        if c.use_words({"fully"}):  # all the way out: pop the whole zoom stack
            count = max(1, ctx.state.ar.zoom_level)
        return [Step("AR.ZOOM_OUT", {}) for _ in range(count)]
    if intent == "zoom_in":
        c.use_words(ZOOM_IN_WORDS | {"zoom", "in", "into", "on", "onto", "toward", "towards",
                                     "get", "go", "move", "come", "up", "the", "make", "bring",
                                     "it", "look", "give", "take", "more"})
        count = _repeat_count(c)
        keys = ar_structures(c, tumor_lobes)
        target = keys[0] if keys else None
        if keys and len(keys) > 1:
            ctx.notes.append("several structures named; zooming toward the first")
        if target is None and ctx.ar_named and c.use_words({"it", "them", "that", "there"}):
            target = ctx.ar_named  # "show the right lung and zoom in on it"
        prior = None if target else _prior_referent(c, ctx, _TARGET_PREPS)
        if prior:
            target = _group_of(prior) or prior[0]  # "add the RML" ... "zoom in on it"
        if target is None:
            target = ctx.current_ar_target()
        params = {"target": target} if target else {}
        ctx.ar_target, ctx.ar_target_set = target, True
        steps = [Step("AR.ZOOM_IN", params) for _ in range(count)]
        view = _ar_view(c)
        if view:
            steps.append(Step("AR.SHOW", {"view": view}))
        return steps
    if intent == "rotate" or (c.has(*STOP_WORDS_ROT) and c.has(
            "rotation", "rotating", "spinning", "rotate", "spin", "turning", "moving",
            "motion", "animation")):
        if c.has(*STOP_WORDS_ROT) or c.has("no"):
            c.use_words(STOP_WORDS_ROT | ROTATE_VERBS | {"no", "the", "it", "moving", "motion",
                                                         "animation", "model", "hold"})
            return [Step("AR.ROTATE", {"direction": "static"})]
        c.use_words(ROTATE_VERBS | {"to", "the", "it", "model", "direction", "side", "degrees",
                                    "full", "circle", "all", "way", "axis", "around", "make",
                                    "start", "keep", "slowly"})
        text = " ".join(c.toks)
        direction = None
        mv = re.search(r"\bto (the |its )?(anterior|posterior|superior|inferior|surgical|"
                       r"front|back|top|bottom) view\b", text)
        if mv:  # "flip it round to the anterior view (and spin it)": a viewpoint
            c.use_words({"to", "the", "its", mv.group(2), "view", "round", "around"})
            return [Step("AR.SHOW", {"view": AR_VIEW_WORDS.get(mv.group(2), "surgical")})]
        m = re.search(r"\bto (the |its )?(back|front|rear|underside|top|bottom)\b", text)
        if m:  # "turn it round to the back": a viewpoint, not a swing
            c.use_words({"to", "the", "its", m.group(2), "around", "side"})
            return [Step("AR.SHOW", {"view": AR_VIEW_WORDS.get(m.group(2), "inferior")})]
        if re.search(r"\bvertical axis\b", text):
            direction = "horizontal"
        elif re.search(r"\bhorizontal axis\b", text):
            direction = "vertical"
        else:
            for i, t in enumerate(c.toks):
                nxt = c.toks[i + 1] if i + 1 < len(c.toks) else ""
                if t == "around" and (_is_num(nxt) or nxt in ("by", "about")):
                    c.use(i)  # "around 30 degrees to the left": an approximate angle
                    continue
                if t in ROTATE_DIRS and not (t == "around" and any(
                        w in ROTATE_DIRS and w != "around" for w in c.toks[i + 1:])):
                    # "swing it round to the right": the named side, "round" is the manner
                    direction = ROTATE_DIRS[t]
                    c.use(i)
                    break
                if t == "around":
                    c.use(i)
            for i, t in enumerate(c.toks):
                if t in ("degrees", "degree") and i and _is_num(c.toks[i - 1]):
                    c.use(i - 1, i)  # the swing angle is fixed (DESIGN §4)
        if direction is None:
            view = _ar_view(c)
            if view is None:
                for i, t in enumerate(c.toks):
                    if t in ("anterior", "posterior", "superior", "inferior", "surgical"):
                        view, _ = AR_VIEW_WORDS[t], c.use(i)
                        break
            if view is not None:  # "rotate to the anterior view": a viewpoint
                c.use_words({"to", "the", "view"})
                return [Step("AR.SHOW", {"view": view})]
        if direction is None:
            if c.has("360", "full", "circle", "around"):
                direction = "horizontal"
            elif c.has("flip", "tumble", "somersault"):
                direction = "vertical"
            elif c.has("spin", "spinning", "revolve", "orbit", "turntable"):
                direction = "horizontal"  # spinning is the turntable turn
            elif c.has(*REPEAT_WORDS) and state.ar.rotation != "static":
                direction = state.ar.rotation  # "again rotate": the rotation said last
                c.use_words(REPEAT_WORDS)
            else:
                direction = "horizontal"
                ctx.notes.append("rotation without a direction: turning horizontally")
                c.guess = True
        _repeat_count(c)
        return [Step("AR.ROTATE", {"direction": direction})]
    if intent == "hide":
        c.use_words(HIDE_VERBS | _NEGATION | {"turn", "switch", "take", "get", "the"})
        spared = _ar_hide_except(c, tumor_lobes)
        if spared is not None:
            return spared
        keys = _on_shown_side(ar_structures(c, tumor_lobes), c, ctx.state)
        if keys:
            ctx.ar_named = keys[0] if len(keys) == 1 else _group_of(_expand(keys))
        elif c.has(*_PRONOUNS) and not c.has("all", "everything", "whole") and any(
                c.find_phrase((p, "the", w)) >= 0
                                       for w in _WHOLE_MODEL for p in ("from", "off")):
            # "remove the airway, remove it from the model": what is taken from the model
            # is a structure of it, never the model itself
            named = [ctx.ar_named] if ctx.ar_named else ctx.prior_named \
                if ctx.agent is None else None
            if named:
                c.use_words(_PRONOUNS | {"from", "off"} | _WHOLE_MODEL)
                return [Step("AR.SHOW", {"structures": _expand(named), "op": "remove"})]
        prior = None if keys else _prior_referent(c, ctx)
        if prior:  # "hide the airway", "bring it back", "hide it again": the airway
            return [Step("AR.SHOW", {"structures": prior, "op": "remove"})]
        # removing every structure ("the model, all of it") is hiding the model
        if keys and not c.has("everything") and set(_expand(keys)) != set(AR_STRUCTURES):
            return [Step("AR.SHOW", {"structures": _expand(keys), "op": "remove"})]
        c.use_words({"all", "everything"})
        ctx.ar_target, ctx.ar_target_set = None, True
        return [Step("AR.REMOVE", {})]
    # show / add / view / question / move (bare directions after the model was used)
    cut = next((i for i, t in enumerate(c.toks) if (t in (
        "except", "without", "excluding", "but", "minus", "apart") or leaves_out(c.toks, i))
        and i > 0), None)
    if cut is not None:
        head = Clause(c.toks[:cut])
        tail = Clause(c.toks[cut + 1:])
        pos = _expand(ar_structures(head, tumor_lobes))
        neg = _expand(ar_structures(tail, tumor_lobes))
        if neg:
            c.used[:cut] = head.used
            c.used[cut + 1:] = tail.used
            c.use(cut)
            c.use_words(SHOW_VERBS | ONLY_WORDS | {"all", "everything", "from", "the", "me",
                                                   "but", "not", "for"})
            if not pos and c.has("everything", "all"):
                pos = list(AR_STRUCTURES)
            kept = [k for k in pos if k not in neg]
            if kept:
                return [Step("AR.SHOW", {"structures": kept})]
            if pos:
                c.guess = True  # "only the tumour, no nodules": nothing left to show
            return [Step("AR.SHOW", {"structures": neg, "op": "remove"})]
    keys = _on_shown_side(ar_structures(c, tumor_lobes), c, ctx.state)
    view = _ar_view(c)
    side = _side_of_whole(c)
    if side is not None:
        view, keys = side, []  # "what does the back of the lungs look like": a viewpoint
    params: dict[str, Any] = {}
    prior = None if keys or view else _prior_referent(c, ctx)
    if prior:  # "take the airway off" ... "bring it back": the airway, added to what is shown
        c.use_words(SHOW_VERBS | ADD_WORDS | REPEAT_WORDS | {"back", "in", "on", "please"})
        return [Step("AR.SHOW", {"structures": prior, "op": "add"})]
    if keys:
        params["structures"] = _expand(keys)
        ctx.ar_named = keys[0] if len(keys) == 1 else _group_of(params["structures"])
        only = c.use_words(ONLY_WORDS)
        add = c.use_words({"add", "also", "too", "include", "additionally", "plus", "another",
                           "readd"}) or _put_in(c) \
            or c.use_phrase(("as", "well")) or c.use_phrase(("in", "addition")) \
            or c.use_phrase(("along", "with")) \
            or (c.sep in ("and", "plus") and ctx.agent is None and ctx.state.ar.visible)
        question = (c.has("where", "which") or bool(c.toks) and c.toks[0] in ("is", "are")
                    or any(c.find_phrase(q) >= 0 for q in (
            ("is", "there"), ("are", "there"), ("do", "we", "see"), ("can", "you", "see"),
            ("do", "you", "see"))) or c.has("how", "what") and c.has("does", "do")
            and c.has("look", "run", "runs", "go", "goes", "sit", "sits", "lie", "lies")) \
            and not c.has("show", "display")
        # "show the model and the airway": the model as it is, plus the airway
        with_model = c.has("model", "3d", "anatomy", "reconstruction") and c.has("and", "with")
        if (add or question or with_model) and not only:
            params["op"] = "add"
        if question:
            c.use_words({"where", "which", "is", "are", "located", "find", "on",
                         "in", "side", "part", "area", "region", "of", "visible", "shown",
                         "showing", "displayed", "there"})
    if view is None and not keys:
        # bare view/direction words in an AR clause: "anterior", "from the top"
        for i, t in enumerate(c.toks):
            if t in ("anterior", "posterior", "superior", "inferior", "surgical", "front",
                     "behind", "top", "bottom") or t in ("ant", "post", "sup", "inf") and (
                    c.toks[i - 1:i] == ["to"] or c.toks[i + 1:i + 2] == ["view"] or
                    c.toks[i - 1:i] in (["3d"], ["model"])):  # "flip to ant", "3D ant"
                view = AR_VIEW_WORDS[t]
                c.use(i)
                break
        else:
            for i, t in enumerate(c.toks):
                if t in ("left", "right", "up", "down"):
                    c.use(i)
                    c.use_words({"to", "the", "move", "go", "turn"})
                    return [Step("AR.ROTATE", {"direction": ROTATE_DIRS[t]})]
    if view:
        params["view"] = view
        k = c.index("back")
        if k >= 0 and k + 1 < len(c.toks) and c.toks[k + 1] == "to":
            c.use(k)  # "back to the surgical view"
    c.use_words(SHOW_VERBS | {"all", "everything", "go", "switch", "change", "to", "up", "on",
                              "bring", "me", "with", "and", "can", "we", "look", "does", "how",
                              "it", "like", "seen", "out", "whole", "entire", "complete", "full"})
    if c.has("everything", "all") and not keys and not c.has("view"):
        params["structures"] = list(AR_STRUCTURES)
    return [Step("AR.SHOW", params)]
