"""What the context rules read in memory and in the words: the last move, the last command
that has an opposite, a correction's parts, the previous command with a new object
(``app.agents.context_rules`` is the inventory that uses them). Each takes the grammar it
reads with (``lx``), so earlier commands are read the way the console read them.
"""

from __future__ import annotations

from app.agents.correction_markers import _VERBISH, _correction_marker, _kinds
from app.agents.decision import Memory
from app.agents.grammar_clauses import _has_head, _is_num, _only_directions
from app.agents.grammar_phrases import canonical
from app.agents.lexicon import (
    GrammarTier,
    _move_kinds,
    _reversed,
    _same_steps,
)
from app.agents.repeat_words import _is_repeat
from app.agents.token_shapes import (
    _DISPLAY_NOUN_AGENT,
    _DISPLAY_TOO_FILL,
    _SAME_WORDS,
    _plan_size,
    _prepare,
    _same_for_object,
)
from app.core.registry import Step
from app.core.state import ConsoleState
from app.language import words as language_words
from app.language.normalize import tokens_of
from app.language.vocabulary import (
    AR_VIEW_WORDS,
    DIRECTIONS,
    FILLER,
    HIDE_VERBS,
    LOBE_POS,
    PLANE_WORDS,
    ROTATE_DIRS,
    SIDES,
    STRUCT_WORDS,
)

_GLUE_WORDS = {"and", "the", "a", "an", "then", "also", "too", "of", "on", "to", "in"}


_SORRY = language_words("correction_sorry") | {"sorry"}
_OPENERS = language_words("discourse_markers") - {"right", "first", "finally", "lastly"}


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
        parts = [s for s in (d.steps if d is not None else []) if _reversed([s])]
        if len(parts) == 1:  # "zoom in on coronal and move it forward 20": the move
            part = lx.reading_of(parts, state, memory)
            if part is not None:
                return part
    return None


def _last_move(lx: GrammarTier, state: ConsoleState, memory: Memory) -> str | None:
    """The latest remembered command that moved a slice, as the plan that ran: the move
    alone when more was done, the one said last when it moved several planes."""
    for text in reversed(memory.recent):
        if memory.agents.get(text) != "IV":
            continue
        reading = memory.reading_of(text)
        d = lx.decide(reading, state, memory)
        moves = [s for s in (d.steps if d is not None else [])
                 if s.action_id == "IV.SHOW_MOVE" and s.params]
        if len(moves) == 1 and len(d.steps) == 1:
            return reading
        if moves:  # "coronal to 400 and zoom in", "axial to 100 and coronal to 300": the
            return lx.reading_of(moves[-1:], state, memory)  # move said last
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


_PARTICLES = {"out", "in", "off", "on", "away"}


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
    # "Ag no, the other way", "Oh no, the coronal": an opening interjection is no part of
    # what is corrected ("right, no, left" keeps its direction)
    # ("sorry, I meant vertically": an apology before the marker is no part of it either)
    pre = [t for t in tokens[:i] if t != "," and t not in _OPENERS and t not in _SORRY]
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
    doers = _VERBISH | HIDE_VERBS
    if pre and post and tokens[i] in _SORRY and not set(pre) & doers and set(post) & doers \
            and all(t in doers or t in FILLER or t in ("it", "them", "that") for t in post):
        # "airway... sumimasen, please remove": an excuse between the object and its verb
        # corrects nothing, no other object is said
        return [*pre, *post], None
    if not post:
        return (pre, None) if pre else None
    if pre and _only_directions(pre) and _only_directions(post) and set(post) & set(DIRECTIONS):
        # "up up up no up up": the directions said again, as meant ("go up 20, no, 30" keeps
        # the direction: the number alone is replaced below)
        return post, None
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
    if pre and "," in post:
        # corrected mid-sentence, then the sentence goes on: "coronal anterior, oh, make
        # that posterior, 25", "take the axial, nah sorry, the coronal, minus 15": the
        # sentence as said without the correction, with the corrected word in its place
        k = post.index(",")
        said, rest = post[:k], [t for t in post[k + 1:] if t != ","]
        if said and rest and _correction_marker(rest) is None:
            whole = _substitute(lx, [*pre, *rest], said, state, memory)
            if whole is not None:
                return whole, None
    best = _substitute(lx, base, post, state, memory)
    if best is None:
        verb = next((k for k, t in enumerate(base) if t in _VERBISH | HIDE_VERBS), None)
        if replaced is None and verb is not None and not _has_head(post):
            # "remove the right middle, no, the right lower lobe", "hide the patient
            # info, no, the CT": the verb said before goes with the corrected object
            # (with its particle: "zoom out the model, I mean the CT")
            end = verb + 1
            while end < len(base) and base[end] in _PARTICLES and not set(post) & _PARTICLES:
                end += 1
            return [*base[:end], *post], None
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
    if len(post) == 1 and post[0].isdigit():
        # "axial plus 20, no, 30", "coronal minus 20, no, 40": a bare number replaces the
        # number said last, and a step stays a step in its direction
        nums = [k for k, t in enumerate(base) if _is_num(t)]
        if not nums:
            return None
        k = nums[-1]
        sign = base[k][:1] if base[k][:1] in "+-" else ""
        cand = [*base[:k], sign + post[0], *base[k + 1:]]
        d = lx.decide(" ".join(cand), state, memory)
        ok = d is not None and d.steps and d.confidence >= lx.accept and \
            [s.action_id for s in d.steps] == ref_ids
        return cand if ok else None
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
            if _keeps_every_field(d.steps, ref.steps):
                continue  # ("age and gender", "no, the operation name": age brings sex back)
            score = d.confidence - 0.1 * abs(_plan_size(d.steps) - ref_size) \
                - 0.01 * len(span) + (0.05 if _kinds(span) == _kinds(post) else 0.0)
            if best is None or score > best[0]:
                best = (score, cand)
    return None if best is None else best[1]


def _keeps_every_field(new: list[Step], old: list[Step]) -> bool:
    """Does a corrected field request still show every field the request it corrects did
    (age and sex being one item)? Then it replaced nothing."""
    def fields(steps: list[Step]) -> set[str]:
        return {"age" if f == "sex" else f for st in steps if st.action_id == "IR.SHOW"
                for f in st.params.get("fields") or []}
    before = fields(old)
    return bool(before) and before <= fields(new)


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
