"""The context rules of the lexicon tier, as one declared, ordered inventory (DESIGN §3, §4).

A context rule reads a command against what was said before it — a repeat ("again"), a
reversal ("the other way"), a correction ("no, the right one"), a follow-up ("now the axial",
"same for sagittal"), thinking aloud — and either rewrites the words for the grammar, records
what it found (a repeat, a step, a remark), or settles the reading itself. ``CONTEXT_RULES``
lists them in the order they apply; each has a name (it appears in the trace as
``diagnostics.context_rules``), a docstring, and examples that the test suite runs
(``tests/test_context_rules.py``). ``LexiconTier`` is the grammar (``app.agents.lexicon``)
with this inventory.

The request frames ("I wonder if we could ...", "Dr Okafor wants ...") are set aside before
this, by the interpreter (``app.language.frames``); talk addressed to a person is refused after
it (``app.agents.checks.addressed_to_person``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from app.agents.decision import Memory
from app.agents.lexicon import (
    _APPROXIMATORS,
    _DISPLAY_NOUN_AGENT,
    _DISPLAY_TOO_FILL,
    _MORE_WORDS,
    _SAME_WORDS,
    _VERBISH,
    ACCEPT,
    AR_VIEW_WORDS,
    DIRECTIONS,
    FILLER,
    HIDE_VERBS,
    LOBE_POS,
    MOVE_VERBS,
    PLANE_WORDS,
    ROTATE_DIRS,
    SIDES,
    STRUCT_WORDS,
    Analysis,
    GrammarTier,
    Reading,
    _agent_repeat,
    _complaint_request,
    _correction_marker,
    _drop_asides,
    _drop_sparing,
    _has_head,
    _is_num,
    _is_repeat,
    _is_statement,
    _kinds,
    _move_kinds,
    _only_directions,
    _only_side,
    _other_side,
    _plan_size,
    _prepare,
    _readd_pronoun,
    _repeat_times,
    _reversed,
    _same_for_object,
    _same_steps,
    _side_one,
    _times_of,
    _with_referent,
    canonical,
    tokens_of,
)
from app.core.state import ConsoleState
from app.language import words as language_words

_GLUE_WORDS = {"and", "the", "a", "an", "then", "also", "too", "of", "on", "to", "in"}

# Discourse markers ("nah, the other way") say nothing the amount and reversal rules read;
# "right" may be a direction.
_MARKERS = language_words("discourse_markers") - {"right"}

# ---------------------------------------------------------------------------------------------
# the rules (each reads and may change a Reading; True when it applied)
# ---------------------------------------------------------------------------------------------

def swing_on(lx: GrammarTier, r: Reading) -> bool:
    """A bare direction right after a swing of the model swings it that way ("tilt it up a
    touch" ... "and down"); elsewhere a bare direction moves the CT (DESIGN §4)."""
    turn = None if r.nested else _swing_on(lx, r.tokens, r.state, r.memory)
    if turn is None:
        return False
    r.tokens = ["rotate", "the", "model", turn]
    return True


def asides(lx: GrammarTier, r: Reading) -> bool:
    """An explanation said beside the request ("..., which means the vessels are lower") and
    a display the speaker spares ("leave the model, just take off the CT") are no part of it."""
    tokens, cut = _drop_asides(r.tokens)
    spared = _drop_sparing(tokens)
    changed = cut or spared != tokens
    r.tokens = spared
    return changed


def same_for(lx: GrammarTier, r: Reading) -> bool:
    """"the lower lobe on that side": the side named before; "the same for X" / "same ax" /
    "coronal the same": the last move (a slice move; else the last command) on X."""
    if r.nested:
        return False
    same = _same_side(lx, r.tokens, r.state, r.memory)
    if same is None:
        same = _same_for(lx, r.tokens, r.state, r.memory)
    if same is None:
        return False
    r.tokens = same
    return True


def that_lobe(lx: GrammarTier, r: Reading) -> bool:
    """"zoom in on that lobe": the lobe named before, like "it"."""
    tokens = r.tokens
    for k in range(len(tokens) - 1):
        if tokens[k] in ("that", "this", "same") and tokens[k + 1] in ("lobe", "structure") \
                and not any(t in SIDES or t in LOBE_POS for t in tokens):
            tokens = [*tokens[:k], "it", *tokens[k + 2:]]
            if k and tokens[k - 1] == "the":
                del tokens[k - 1]
            r.tokens = tokens
            return True
    return False


def go_back_zoomed(lx: GrammarTier, r: Reading) -> bool:
    """"go back" on a zoomed model backs out a level (zoom out)."""
    if r.memory.last_agent == "AR" and r.state.ar.zoom_level > 0 and "back" in r.tokens and \
            set(r.tokens) <= {"go", "back", "once", "more", "again", "please", "now", ",",
                              "and", "a", "bit", "step", "one"}:
        r.tokens = ["zoom", "out"]
        return True
    return False


def now_the(lx: GrammarTier, r: Reading) -> bool:
    """"now the RLL" after "zoom to the RML", "now the left" after "show the right view",
    "now the axial" after "coronal minus 20": the previous command on the newly named object."""
    swapped = None if r.nested else _now_the(lx, r.tokens, r.state, r.memory)
    if swapped is None:
        return False
    r.tokens = swapped
    return True


def display_too(lx: GrammarTier, r: Reading) -> bool:
    """"and the CT as well" after clearing the model: the previous command's action on the
    display named."""
    carried = None if r.nested else _display_too(lx, r.tokens, r.state, r.memory)
    if carried is None:
        return False
    r.tokens = carried
    return True


def other_lung_too(lx: GrammarTier, r: Reading) -> bool:
    """"and the right one too" after "show the left lung": the other lung, added."""
    side_one = _side_one(r.tokens) if not r.nested and r.memory.last_agent == "AR" else None
    if side_one is None or not lx._named_before(r.state, r.memory):
        return False
    r.tokens = ["add" if side_one[1] else "show", "the", side_one[0], "lung"]
    return True


def bring_it_back(lx: GrammarTier, r: Reading) -> bool:
    """"bring it back" right after a display was hidden: that display again."""
    if r.nested or not _readd_pronoun(r.tokens):
        return False
    shown = _redisplay(lx, r.state, r.memory)
    if shown is None:
        return False
    r.tokens = shown
    return True


def other_side(lx: GrammarTier, r: Reading) -> bool:
    """"now from the other side": the last view or swing reversed (read by "the other way")."""
    if not _other_side(r.tokens):
        return False
    r.tokens = ["opposite"]
    return True


def only_side(lx: GrammarTier, r: Reading) -> bool:
    """"only the left" / "just the right side" while on the model: that lung alone."""
    side = _only_side(r.tokens)
    if side and (r.memory.last_agent == "AR" or r.memory.last_agent is None and
                 r.state.ar.visible):
        r.tokens = ["show", "only", "the", side, "lung"]
        return True
    return False


def model_header(lx: GrammarTier, r: Reading) -> bool:
    """"3D, RUL and RML": a header naming the model, then exactly what to show."""
    tokens = r.tokens
    if len(tokens) > 2 and tokens[1] == "," and tokens[0] in ("3d", "model") \
            or tokens[:3] in (["the", "model", ","], ["the", "3d", ","]):
        rest = tokens[tokens.index(",") + 1:]
        first = rest[:rest.index(",")] if "," in rest else rest
        if first and not _has_head(first):
            r.tokens = ["show", "only", *rest]
            return True
    return False


def self_correction(lx: GrammarTier, r: Reading) -> Analysis | bool:
    """A command that corrects itself or the previous one ("rotate left, no, right", "show the
    BMI, I mean the weight", "sorry, 250", "remove the right middle, no, the right lower
    lobe"): read the corrected words; a correction of the previous command replaces it."""
    fixed = None if r.nested else _self_correction(lx, r.tokens, r.state, r.memory)
    if fixed is None:
        return False
    tokens, replaced = fixed
    r.tokens = _drop_sparing(tokens)  # "…, well, leave the model, just take off the CT"
    if replaced is not None:
        analysis = lx.analyse(" ".join(r.tokens), r.state, r.memory)
        analysis.rewritten = analysis.rewritten or " ".join(r.tokens)
        analysis.text, analysis.replaces = r.corrected, replaced
        return analysis
    return True


def amount_the_other_way(lx: GrammarTier, r: Reading) -> Analysis | bool:
    """"ten the other way": the last command reversed, by that many."""
    r.core = [t for t in r.tokens if t not in FILLER and t not in ("slices", "slice", "steps",
                                                                    ",")
              and t not in _APPROXIMATORS and t not in _MARKERS]
    nums = [t for t in r.core if _is_num(t) and t[0] not in "+-"]
    if "opposite" in r.core and len(nums) == 1 and set(r.core) - set(nums) <= {
            "opposite", "go", "move", "now", "please", "another", "more"}:
        prev = _last_real(lx, r.memory)
        if prev is not None:
            return Analysis(r.corrected, lx.analyse(prev, r.state, r.memory).clauses,
                            prev, int(nums[0]), True)
    return False


def amount_more_direction(lx: GrammarTier, r: Reading) -> bool:
    """"five more to the right": the direction is said, so it is a move of that many."""
    core = r.core
    nums = [t for t in core if _is_num(t) and t[0] not in "+-"]
    if nums and set(core) & _MORE_WORDS and any(t in DIRECTIONS for t in core) and \
            all(t in DIRECTIONS or _is_num(t) or t in _MORE_WORDS | MOVE_VERBS for t in core):
        r.tokens = [t for t in r.tokens if t not in _MORE_WORDS]
        r.core = [t for t in core if t not in _MORE_WORDS]
        return True
    return False


def amount_more(lx: GrammarTier, r: Reading) -> bool:
    """"20 more", "another 10": the last command again with that step."""
    core = r.core
    if len(core) == 2 and any(_is_num(t) and t[0] not in "+-" for t in core) and \
            set(core) & {"more", "another", "further", "again"}:
        prev = _last_real(lx, r.memory)
        if prev is not None:
            r.step_override = int(next(t for t in core if _is_num(t)))
            r.repeat_of = prev
            r.tokens = _prepare(prev)
            return True
    return False


def the_other_way(lx: GrammarTier, r: Reading) -> bool:
    """"now the other way": the last command that has an opposite, reversed (a zoom said
    after the move is stepped over: "forward 40", "zoom in", "the other way")."""
    if "opposite" in r.core and set(r.core) <= {"opposite", "go", "move", "rotate", "turn",
                                                 "swing", "spin", "now", "please", "back",
                                                 "same", "distance", "amount"}:
        prev = _last_reversible(lx, r.state, r.memory) or _last_real(lx, r.memory)
        if prev is not None:
            r.reverse, r.repeat_of = True, prev
            r.tokens = _prepare(prev)
            return True
    return False


def again_then(lx: GrammarTier, r: Reading) -> bool:
    """"again, and then zoom out": the last command, then this one."""
    tokens = r.tokens
    if r.repeat_of is not None or r.nested or "," not in tokens[:4]:
        return False
    k = tokens.index(",")
    rest = tokens[k + 1:]
    while rest and rest[0] in ("and", "then", ","):
        rest = rest[1:]
    prev = _last_real(lx, r.memory) if _is_repeat(tokens[:k]) and tokens[:k] and \
        _has_head(rest) else None
    if prev is None:
        return False
    r.tokens = [*_prepare(prev), ",", "and", "then", *rest]
    return True


def named_repeat(lx: GrammarTier, r: Reading) -> Analysis | bool:
    """"again on the CT" after a model command: the last command on that display."""
    named = _agent_repeat(r.tokens) if r.repeat_of is None else None
    if named is None:
        return False
    prev = _last_real_for(lx, r.memory, named[0], named[1])
    if prev is None:
        return False
    return Analysis(r.corrected, lx.analyse(prev, r.state, r.memory).clauses, prev, None,
                    False, _times_of(named[2]))


def repeat(lx: GrammarTier, r: Reading) -> Analysis | bool:
    """"again", "once more", "twice", "a bit more": the last command again (a little more is
    the default step)."""
    r.times = _repeat_times(r.tokens) if r.repeat_of is None else None
    if not r.tokens or r.repeat_of is not None or not (_is_repeat(r.tokens) or r.times):
        return False
    prev = _last_real(lx, r.memory)
    if prev is None:
        return Analysis(r.corrected, [], None)  # nothing to repeat
    r.repeat_of = prev
    r.small = bool({"bit", "little", "slightly", "touch", "tad"} & set(r.tokens))
    r.tokens = _prepare(prev)
    return True


def complaint(lx: GrammarTier, r: Reading) -> bool:
    """"the model is too small", "the patient box is in the way": the request it implies."""
    request = _complaint_request(r.tokens) if r.repeat_of is None else None
    if request is None:
        return False
    r.tokens = request
    return True


def remark_before_request(lx: GrammarTier, r: Reading) -> bool:
    """"that view is perfect, now zoom in": a remark before the request is no part of it; a
    remark alone is kept and marked (the grammar does not act on it alone)."""
    r.statement = _is_statement(r.tokens)
    if not r.statement:
        return False
    tokens = r.tokens
    cut = tokens.index(",") if "," in tokens else -1
    rest = tokens[cut + 1:] if cut >= 0 else []
    while rest and rest[0] == ",":
        rest = rest[1:]
    if rest and (_has_head(rest) or set(rest) & set(DIRECTIONS)) and not _is_statement(rest):
        r.tokens, r.statement = _with_referent(rest, tokens[:cut]), False
        return True
    return False


# ---------------------------------------------------------------------------------------------
# what the rules read in memory
# ---------------------------------------------------------------------------------------------

def _same_side(lx: GrammarTier, tokens: list[str], state: ConsoleState, memory: Memory
               ) -> list[str] | None:
    """"the lower lobe on that side": the side of the structures named just before."""
    for phrase in (("on", "that", "side"), ("on", "the", "same", "side"), ("on", "this",
                                                                            "side")):
        k = next((i for i in range(len(tokens)) if tuple(tokens[i:i + 3]) == phrase[:3]
                  and tuple(tokens[i:i + len(phrase)]) == phrase), None)
        if k is None:
            continue
        if {"left", "right"} & set(tokens):
            return None
        lobe = next((i for i, t in enumerate(tokens) if t in ("upper", "middle", "lower")
                     and tokens[i + 1:i + 2] in (["lobe"], ["lobes"])), None)
        prev = _last_real(lx, memory)
        if lobe is None or prev is None:
            return None
        d = lx.decide_from(lx.analyse(prev, state, memory), state, memory)
        named = [x for st in d.steps if st.action_id.startswith("AR.")
                 for x in (st.params.get("structures") or [st.params.get("target")])
                 if isinstance(x, str)]
        sides = {x.split("_", 1)[0] for x in named} & {"left", "right"}
        if len(sides) != 1:
            return None
        out = tokens[:k] + tokens[k + len(phrase):]
        at = lobe if lobe < k else lobe - len(phrase)
        return [*out[:at], sides.pop(), *out[at:]]
    return None


def _same_for(lx: GrammarTier, tokens: list[str], state: ConsoleState, memory: Memory
              ) -> list[str] | None:
    """"the same for the left lung" / "likewise with the coronal": the previous command
    with its object replaced by the one named here (read like a correction of it that
    does not undo it)."""
    post = _same_for_object(tokens)
    if post is None:
        return None
    # DESIGN §4: "same for X" applies the last *move* to plane X, so a zoom said after
    # the move ("coronal forward 20", "zoom in", "same for axial") is stepped over
    prev = (_last_move(lx, state, memory) if any(t in PLANE_WORDS for t in post)
            else None) or _last_real(lx, memory)
    if prev is None:
        return None
    return _substitute(lx, _prepare(prev), post, state, memory)


def _last_reversible(lx: GrammarTier, state: ConsoleState, memory: Memory) -> str | None:
    """The latest remembered command whose plan has an opposite (a relative move, a
    swing, a view with an opposite), as the plan that ran."""
    for text in reversed(memory.recent):
        if "opposite" in tokens_of(canonical(text)):
            return None  # "the other way" twice: back to the first way (the grammar's own)
        reading = memory.reading_of(text)
        d = lx.decide(reading, state, memory)
        if d is not None and _reversed(list(d.steps)):
            return reading
    return None


def _last_move(lx: GrammarTier, state: ConsoleState, memory: Memory) -> str | None:
    """The latest remembered command whose plan was one slice move, as the plan that ran."""
    for text in reversed(memory.recent):
        if memory.agents.get(text) != "IV":
            continue
        reading = memory.reading_of(text)
        d = lx.decide(reading, state, memory)
        moves = [s for s in (d.steps if d is not None else [])
                 if s.action_id == "IV.SHOW_MOVE" and s.params]
        if len(moves) == 1:  # "coronal to 400 and zoom in": the move of it
            return reading if len(d.steps) == 1 else lx.reading_of(moves, state, memory)
    return None


def _swing_on(lx: GrammarTier, tokens: list[str], state: ConsoleState, memory: Memory) -> str | None:
    """A bare direction right after a swing of the model swings it that way ("tilt it
    up a touch" ... "and down"); elsewhere a bare direction moves the CT (DESIGN §4)."""
    core = [t for t in tokens if t not in ("and", "now", "then", "please", ",", "the",
                                           "other", "way", "a", "bit", "touch", "little")]
    if len(core) != 1 or core[0] not in ROTATE_DIRS or memory.last_agent != "AR":
        return None
    prev = _last_real(lx, memory)
    if prev is None:
        return None
    d = lx.decide_from(lx.analyse(prev, state, memory), state, memory)
    if d.steps and d.steps[-1].action_id == "AR.ROTATE":
        return ROTATE_DIRS[core[0]] if ROTATE_DIRS[core[0]] in ("left", "right", "up",
                                                                 "down") else None
    return None


def _self_correction(lx: GrammarTier, tokens: list[str], state: ConsoleState, memory: Memory
                     ) -> tuple[list[str], str | None] | None:
    """A command that corrects itself or the previous one ("rotate left, no, right",
    "show the BMI, I mean the weight", "sorry, 250", "no, from above"): the tokens to read
    instead, and the earlier command replaced (None when the correction is within this
    command). None when there is no correction marker."""
    cut = _correction_marker(tokens)
    if cut is None:
        return None
    i, j = cut
    pre = [t for t in tokens[:i] if t != ","]
    post = tokens[j:]
    while post and post[0] in (",", "the"):
        post = post[1:]
    while post and post[-1] in (",", "sorry", "please", "then"):
        post = post[:-1]
    head = tokens[:i]
    while head and head[-1] == ",":
        head = head[:-1]
    if not post and "," in head:
        # "spin it vertically, horizontally, sorry": the marker closes the correction
        k = max(x for x, t in enumerate(head) if t == ",")
        pre = [t for t in head[:k] if t != ","]
        post = head[k + 1:]
    if post in (["other", "side"], ["other", "one"]):
        post = ["opposite"]  # "no, the other side"
    if not post:
        return (pre, None) if pre else None
    if pre and _only_directions(pre) and _only_directions(post):
        return post, None  # "up up up no up up": the directions said again, as meant
    core = [t for t in post if t not in FILLER]
    if "opposite" in core and pre and set(core) <= {"opposite", "way", "direction", "go"}:
        # "rotate left, no, the other way": what was just said, reversed
        said = lx.decide(" ".join(pre), state, memory)
        back = _reversed(said.steps) if said is not None else []
        reading = lx.reading_of(back, state, memory) if back else None
        return (tokens_of(reading), None) if reading else None
    if "opposite" in core or _is_repeat(post):
        return (post, None) if not pre else None  # "no, the other way": a reversal
    base, replaced = pre, None
    if not pre:
        prev = _last_real(lx, memory)
        if prev is None:
            return post, None
        base, replaced = _prepare(prev), prev
    if _has_head(post) and _VERBISH & set(post):
        return post, None  # a whole new command: "no, zoom in instead"
    best = _substitute(lx, base, post, state, memory)
    if best is None:
        verb = next((k for k, t in enumerate(base) if t in _VERBISH | HIDE_VERBS), None)
        if replaced is None and verb is not None and not _has_head(post):
            # "remove the right middle, no, the right lower lobe", "hide the patient
            # info, no, the CT": the verb said before goes with the corrected object
            return [*base[:verb + 1], *post], None
        return post, None
    return best, replaced


def _substitute(lx: GrammarTier, base: list[str], post: list[str], state: ConsoleState,
                memory: Memory) -> list[str] | None:
    """``base`` with one span of it replaced by ``post``, read as the same kind of plan
    with a different value; the best-read such candidate, or None."""
    ref = lx.decide(" ".join(base), state, memory)
    if ref is None or not ref.steps:
        return None
    planes = [PLANE_WORDS[t] for t in post if t in PLANE_WORDS]
    if len(ref.steps) == 1 and ref.steps[0].action_id == "IV.SHOW_MOVE" and \
            len(ref.steps[0].params) == 1 and len(planes) == 1 and \
            set(post) <= {"the", "a", "slice", "plane", "view", *PLANE_WORDS}:
        (v,) = ref.steps[0].params.values()
        if isinstance(v, str) and v[:1] in "+-":  # "right 15", "same for the coronal"
            return [planes[0], v]
    ref_ids = [s.action_id for s in ref.steps]
    ref_size = _plan_size(ref.steps)
    best: tuple[float, list[str]] | None = None
    n = len(base)
    for a in range(n):
        for b in range(a + 1, min(n, a + 4) + 1):
            span = base[a:b]
            if "," in span or set(span) & _VERBISH or all(
                    t in FILLER or t in _GLUE_WORDS for t in span):
                continue  # a correction replaces what was said, not "and" or "the"
            cand = base[:a] + post + base[b:]
            d = lx.decide(" ".join(cand), state, memory)
            if d is None or not d.steps or d.confidence < lx.accept or \
                    [s.action_id for s in d.steps] != ref_ids or _same_steps(d.steps,
                                                                             ref.steps) \
                    or _move_kinds(d.steps) != _move_kinds(ref.steps):
                continue  # ("right 15" → "coronal 15" would turn a step into a slice)
            score = d.confidence - 0.1 * abs(_plan_size(d.steps) - ref_size) \
                - 0.01 * len(span) + (0.05 if _kinds(span) == _kinds(post) else 0.0)
            if best is None or score > best[0]:
                best = (score, cand)
    return None if best is None else best[1]


def _display_too(lx: GrammarTier, tokens: list[str], state: ConsoleState, memory: Memory
                 ) -> list[str] | None:
    """"and the CT as well" / "and the model too": the previous command's action (hide,
    zoom out, reset, show) done to another display, which is all this one names."""
    if not tokens or not (tokens[0] == "and" or {"too", "also"} & set(tokens)
                          or "well" in tokens):
        return None
    core = [t for t in tokens if t not in _DISPLAY_TOO_FILL]
    agent = _DISPLAY_NOUN_AGENT.get(" ".join(core))
    if agent is None:
        return None
    steps = lx._last_steps(state, memory)
    if len(steps) != 1 or steps[0].action_id.split(".")[0] == agent:
        return None
    verb = {"REMOVE": ["hide"], "HIDE": ["hide"], "ZOOM_OUT": ["zoom", "out"],
            "RESET": ["reset"]}.get(steps[0].action_id.split(".")[1])
    return [*verb, "the", *core] if verb else None


def _now_the(lx: GrammarTier, tokens: list[str], state: ConsoleState, memory: Memory
             ) -> list[str] | None:
    """"now the RLL" after "zoom to the RML", "now the left" after "show the right
    view", "now the axial" after "coronal minus 20" in the small views: the previous
    command again on the newly named object (in the zoom view a plane named alone makes
    it the main view instead, see the IV rules)."""
    if not tokens or tokens[0] not in ("now", "and") or "now" not in tokens[:2]:
        return None
    obj = [t for t in tokens if t not in ("now", "and", "the", "one", ",", "please",
                                           "lobe", "view", "side")]
    if not obj or len(obj) > 3:
        return None
    steps = lx._last_steps(state, memory)
    if len(steps) != 1:
        return None
    st = steps[0]
    if st.action_id == "AR.ZOOM_IN" and st.params.get("target") and all(
            t in STRUCT_WORDS or t in SIDES or t in LOBE_POS for t in obj) and (
            len(obj) == 1 and obj[0] in STRUCT_WORDS or len(obj) >= 2):
        return ["zoom", "in", "on", "the", *obj, *(["lobe"] if len(obj) >= 2 else [])]
    if st.action_id == "AR.SHOW" and set(st.params) == {"view"} and len(obj) == 1 and \
            obj[0] in AR_VIEW_WORDS:
        return ["show", "the", obj[0], "view"]
    # In the zoom view a plane named alone is the main view to show, unless the command
    # before already carried a move over to another plane ("left 20", "same for the
    # coronal", "now the axial": the pattern goes on).
    prev_words = set(tokens_of(memory.recent[-1])) if memory.recent else set()
    pattern = bool(prev_words & (_SAME_WORDS | {"now"}))
    if st.action_id == "IV.SHOW_MOVE" and (state.iv.mode == "small_views" or pattern) and \
            len(obj) == 1 and obj[0] in PLANE_WORDS:
        rel = [v for v in st.params.values() if isinstance(v, str) and v[:1] in "+-"]
        if len(st.params) == 1 and len(rel) == 1:
            return [obj[0], rel[0]]
    return None


def _redisplay(lx: GrammarTier, state: ConsoleState, memory: Memory) -> list[str] | None:
    """"bring it back" right after a whole display was hidden: show that display."""
    steps = lx._last_steps(state, memory)
    if len(steps) != 1:
        return None
    return {"IV.REMOVE": ["show", "the", "ct"], "IR.HIDE": ["show", "the", "patient", "box"],
            "AR.REMOVE": ["show", "the", "model"]}.get(steps[0].action_id)


def _last_real_for(lx: GrammarTier, memory: Memory, agent: str, plane: str | None) -> str | None:
    """The latest remembered command that ended on ``agent`` (and, with ``plane``, named
    that plane), as the plan that ran."""
    for text in reversed(memory.recent):
        if memory.agents.get(text) != agent:
            continue
        reading = memory.reading_of(text)
        if plane is not None and plane not in {PLANE_WORDS.get(t) for t in tokens_of(
                canonical(reading))}:
            continue
        return reading
    return None


def _last_real(lx: GrammarTier, memory: Memory) -> str | None:
    for text in reversed(memory.recent):
        if text in memory.readings:
            return memory.readings[text]  # a plan another tier decided, or a repeat's
        toks = tokens_of(text)
        core = [t for t in toks if t not in FILLER and t not in ("slices", "slice", "steps")]
        more = len(core) == 2 and set(core) & {"more", "another", "further", "again"}
        opposite = "opposite" in tokens_of(canonical(text))
        if not _is_repeat(toks) and not more and not opposite:
            return memory.reading_of(text)
    return None


# ---------------------------------------------------------------------------------------------
# the inventory
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Rule:
    """One context rule: its name, what it does (the function's docstring), and examples —
    (commands said before, the command) pairs it applies to."""

    name: str
    fn: Callable[[GrammarTier, Reading], Analysis | bool]
    examples: tuple[tuple[tuple[str, ...], str], ...]
    rewrites: bool = False  # its words stand for the command's own
    top_level: bool = field(default=False)

    @property
    def doc(self) -> str:
        return (self.fn.__doc__ or "").strip()

    def apply(self, grammar: GrammarTier, reading: Reading) -> Analysis | bool:
        return self.fn(grammar, reading)


CONTEXT_RULES: tuple[Rule, ...] = (
    Rule("swing_on", swing_on, ((("show the 3d model", "tilt it up a touch"), "and down"),),
         rewrites=True),
    Rule("asides", asides, (((), "zoom in on the nodule, which means the vessels are lower"),
                            (("show the ct", "show the 3d model"),
                             "leave the model, just take off the ct")), rewrites=True),
    Rule("same_for", same_for, ((("show the ct", "coronal forward twenty", "zoom in"),
                                 "same for axial"),
                                (("show the ct", "sagittal left thirty"), "same ax")),
         rewrites=True),
    Rule("that_lobe", that_lobe, ((("show the 3d model", "show the right middle lobe"),
                                   "zoom in on that lobe"),)),
    Rule("go_back_zoomed", go_back_zoomed, ((("show the 3d model", "zoom in"), "go back"),),
         rewrites=True),
    Rule("now_the", now_the, ((("show the 3d model", "zoom to the rml"), "now the rll"),
                              (("show the ct", "coronal minus 20"), "now the axial")),
         rewrites=True),
    Rule("display_too", display_too, ((("show the ct", "show the 3d model", "hide the model"),
                                       "and the ct as well"),), rewrites=True),
    Rule("other_lung_too", other_lung_too, ((("show the 3d model", "show the left lung"),
                                             "and the right one too"),), rewrites=True),
    Rule("bring_it_back", bring_it_back, ((("show the ct", "hide the ct"), "bring it back"),),
         rewrites=True),
    Rule("other_side", other_side, ((("show the 3d model", "show the left view"),
                                     "now from the other side"),)),
    Rule("only_side", only_side, ((("show the 3d model",), "only the left"),), rewrites=True),
    Rule("model_header", model_header, ((("show the 3d model",), "3d, rul and rml"),)),
    Rule("self_correction", self_correction, (((), "rotate the model left, no, right"),
                                              (("show the ct", "axial up 20"), "sorry, 30"),
                                              (("show the 3d model",),
                                               "remove the right middle, no, the right lower "
                                               "lobe")), rewrites=True),
    Rule("amount_the_other_way", amount_the_other_way, ((("show the ct", "axial up 20"),
                                                         "ten the other way"),)),
    Rule("amount_more_direction", amount_more_direction, ((("show the ct",),
                                                           "five more to the right"),)),
    Rule("amount_more", amount_more, ((("show the ct", "coronal plus 10"), "20 more"),)),
    Rule("the_other_way", the_other_way, ((("show the ct", "move the scan forward 40",
                                            "zoom in"), "the other way"),)),
    Rule("again_then", again_then, ((("show the ct", "axial up 10"),
                                     "again, and then zoom in"),), rewrites=True),
    Rule("named_repeat", named_repeat, ((("show the ct", "axial up 10", "show the 3d model"),
                                         "again on the ct"),)),
    Rule("repeat", repeat, ((("show the ct", "axial up 10"), "once more"),
                            (("show the ct", "axial up 30"), "a bit more"))),
    Rule("complaint", complaint, ((("show the 3d model",), "the model is too small"),),
         rewrites=True),
    Rule("remark_before_request", remark_before_request, (
        (("show the 3d model",), "that view is perfect, now zoom in"),), rewrites=True),
)


class LexiconTier(GrammarTier):
    """The deterministic tier (implements ``app.agents.decision.Tier``): the grammar with the
    console's context rules."""

    def __init__(self, accept: float = ACCEPT, extra_fields: Iterable[str] = ()) -> None:
        super().__init__(accept, extra_fields, rules=CONTEXT_RULES)


__all__ = ["CONTEXT_RULES", "LexiconTier", "Rule"]
