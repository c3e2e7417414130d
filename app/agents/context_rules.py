"""The context rules of the lexicon tier, as one declared, ordered inventory (DESIGN §3, §4).

A context rule reads a command against what was said before it — a repeat ("again"), a
reversal ("the other way"), a correction ("no, the right one"), a follow-up ("now the axial",
"same for sagittal"), thinking aloud — and either rewrites the words for the grammar, records
what it found (a repeat, a step, a remark), or settles the reading itself. ``CONTEXT_RULES``
lists them in the order they apply; each has a name (it appears in the trace as
``diagnostics.context_rules``), a docstring, and examples that the test suite runs
(``tests/test_context_rules.py``). What the rules read in memory is in
``app.agents.context_reads``. ``LexiconTier`` is the grammar (``app.agents.lexicon``) with this
inventory.

The request frames ("I wonder if we could ...", "Dr Okafor wants ...") are set aside before
this, by the interpreter (``app.language.frames``); talk addressed to a person is refused after
it (``app.agents.checks.addressed_to_person``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from app.agents.context_reads import (
    _display_too,
    _last_real,
    _last_real_for,
    _last_reversible,
    _now_the,
    _redisplay,
    _same_for,
    _same_side,
    _self_correction,
    _swing_on,
)
from app.agents.grammar_clauses import ACCEPT, _has_head, _is_num
from app.agents.lexicon import (
    Analysis,
    GrammarTier,
    Reading,
)
from app.agents.particles_and_remarks import _complaint_request, _is_statement, _with_referent
from app.agents.reason_clauses import instead_of, reason_before_request
from app.agents.repeat_words import (
    _MORE_WORDS,
    _is_repeat,
    _repeat_times,
    _times_of,
    keeps_as_is,
)
from app.agents.token_shapes import (
    _AGENT_NAMING,
    _agent_repeat,
    _drop_asides,
    _drop_sparing,
    _only_side,
    _other_side,
    _prepare,
    _readd_pronoun,
    _side_one,
)
from app.language import matches as language_matches
from app.language import words as language_words
from app.language.command_words import has_domain_content
from app.language.vocabulary import (
    _APPROXIMATORS,
    DIRECTIONS,
    FILLER,
    HIDE_VERBS,
    LOBE_POS,
    MOVE_VERBS,
    SIDES,
    STRUCT_WORDS,
)

# Discourse markers ("nah, the other way") say nothing the amount and reversal rules read;
# "right" may be a direction.
_MARKERS = language_words("discourse_markers") - {"right"}

# ---------------------------------------------------------------------------------------------
# the rules (each reads and may change a Reading; True when it applied)
# ---------------------------------------------------------------------------------------------

def _read_as(r: Reading, words: list[str] | None) -> bool:
    """The command read as ``words`` (True), or left as it was when a rule found none."""
    if words is None:
        return False
    r.tokens = words
    return True


_EVERYTHING = {"everything", "all"}
_WHOLE_SCREEN = {"it", "of", "off", "away", "the", "overlays", "overlay", "displays", "panels",
                 "windows", "things", "stuff", "screen"}
_KEPT_LEADS = {"except", "but", "leave", "keep", "only", "just", "apart", "from", "other", "than",
               "save"}
_DISPLAY_FILL = {"the", "and", "please", "on", "up", "there", "now", "patient", "info", "box"}
_SAID_AS = {"IR": ["the", "patient", "info"], "IV": ["the", "ct"], "AR": ["the", "3d", "model"]}


def _names_a_part(t: str) -> bool:
    """A word of a structure kept with its display ("keep the 3D model and the airway")."""
    return t in STRUCT_WORDS or t in SIDES or t in LOBE_POS or t in ("lobe", "lobes", "lung",
                                                                      "lungs")


def all_but_displays(lx: GrammarTier, r: Reading) -> bool:
    """"remove everything except the CT", "hide it all, leave the model": the other displays
    go (hiding one that is not shown changes nothing)."""
    toks = r.tokens
    cut = next((k for k, t in enumerate(toks) if t in (",", "except", "but")), None)
    if cut is None or not toks[cut + 1:]:
        return False
    head, tail = toks[:cut], [t for t in toks[cut:] if t != ","]
    if not set(head) & HIDE_VERBS or not set(head) & _EVERYTHING or not all(
            t in HIDE_VERBS or t in _EVERYTHING or t in FILLER or t in _WHOLE_SCREEN
            for t in head):
        return False
    k = 0
    while k < len(tail) and tail[k] in _KEPT_LEADS:
        k += 1
    kept = {_AGENT_NAMING[t] for t in tail[k:] if t in _AGENT_NAMING}
    if k == 0 or not kept or not all(t in _AGENT_NAMING or t in _DISPLAY_FILL or t in FILLER
                                     or _names_a_part(t) for t in tail[k:]):
        return False
    words: list[str] = ["hide"]
    for agent in [a for a in ("IR", "IV", "AR") if a not in kept]:
        words += (["and"] if len(words) > 1 else []) + _SAID_AS[agent]
    return _read_as(r, words)


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
    return _read_as(r, None if r.nested else _now_the(lx, r.tokens, r.state, r.memory))


def display_too(lx: GrammarTier, r: Reading) -> bool:
    """"and the CT as well" after clearing the model: the previous command's action on the
    display named."""
    return _read_as(r, None if r.nested else _display_too(lx, r.tokens, r.state, r.memory))


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
    return _read_as(r, _redisplay(lx, r.state, r.memory))


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
                                                 "same", "distance", "amount", "no", "nah",
                                                 "nope", "sorry", "oops", "but", "take",
                                                 "it", "do", "that", "thing"}:
        # "no the other way", "the other way, sorry"
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
        _has_head(rest) and not _is_repeat(rest) else None  # "again, once more": one repeat
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
    if r.repeat_of is None and keeps_as_is(r.tokens):
        return Analysis(r.corrected, [], None)  # "keep them": nothing to do, asked
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
    return _read_as(r, _complaint_request(r.tokens) if r.repeat_of is None else None)


_SEE_VERBS = {"have", "see", "get", "look"}
_OBJECT_LEADS = {"the", "a", "at", "that", "this", "our"}
# a plan for later, a doubt or a negation is no request now ("we might not need the CT",
# "we could show her the CT after")
_NOT_NOW = {"not", "never", "no", "skip", "later", "after", "afterwards", "new", "again",
            "though", "tomorrow", "eventually", "end"}


def _framed_request(toks: list[str]) -> bool:
    """"let us have the 3D model", "can we see the CT": a request frame, a verb of seeing
    and a display or structure named right after it."""
    end = max((e for b, e in language_matches(toks, "request_leads") if b == 0), default=0)
    rest = toks[end:]
    if not end or len(rest) < 2 or rest[0] not in _SEE_VERBS or set(toks) & _NOT_NOW:
        return False
    obj = rest[1:]
    while obj and obj[0] in _OBJECT_LEADS:
        obj = obj[1:]
    return bool(obj) and obj[0] not in ("her", "him", "them", "it", "you") and \
        has_domain_content(" ".join(obj))


_WANT_LEAD = {"i", "we", "think", "guess", "will", "would", "really", "also", "just", "still"}


def _wants(core: list[str]) -> bool:
    """"I think I'll want the diagnosis up too", "we need the CT": a wish is a request ("we
    might need to remove it" is a plan)."""
    k = 0
    while k < len(core) and core[k] in _WANT_LEAD:
        k += 1
    return core[k:k + 1] in (["want"], ["like"], ["need"]) and core[k + 1:k + 2] != ["to"]


def _a_plan(rest: list[str]) -> bool:
    """"…, we might need to remove it", "…, let us have her close": after a remark, what
    the team will do (a first-person plan, a person to act), not a request ("bigger than I
    thought" is a remark too)."""
    core = [t for t in rest if t not in (",", "and", "so", "now", "then", "well", "okay")]
    return "than" in rest or core[:1] in (["we"], ["i"]) and not _wants(core) or bool(
        {"her", "him"} & set(rest)) or bool(set(rest) & _NOT_NOW)


def remark_before_request(lx: GrammarTier, r: Reading) -> bool:
    """"that view is perfect, now zoom in": a remark before the request is no part of it; a
    remark alone is kept and marked (the grammar does not act on it alone)."""
    r.statement = _is_statement(r.tokens)
    if not r.statement:
        return False
    tokens = r.tokens
    # the request starts after the first pause that leaves one ("well shoot, that is not
    # right, give me the surgical view")
    for cut in (i for i, t in enumerate(tokens) if t == ","):
        rest = tokens[cut + 1:]
        while rest and rest[0] == ",":
            rest = rest[1:]
        if rest and (_has_head(rest) or set(rest) & set(DIRECTIONS) or _framed_request(rest)) \
                and not _is_statement(rest) and not _a_plan(rest) and \
                rest[:2] not in (["right", "there"], ["right", "here"]):
            # ("that's the fissure, right there": "right" points, it turns nothing)
            r.tokens, r.statement = _with_referent(rest, tokens[:cut]), False
            return True
    return False


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
    Rule("all_but_displays", all_but_displays, ((("show the ct", "show the 3d model"),
                                                 "remove everything except the ct"),),
         rewrites=True),
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
    Rule("instead_of", instead_of, ((("show the 3d model",), "show the rll instead of the rul"),
                                    (("show the age",),
                                     "change to the diagnosis instead of sex and age")),
         rewrites=True),
    Rule("reason_before_request", reason_before_request, (
        (("show the 3d model", "zoom in", "zoom in"), "not so close, zoom out once"),
        (("show the ct",), "it is higher i think, so axial up, up, up")), rewrites=True),
    Rule("complaint", complaint, ((("show the 3d model",), "the model is too small"),),
         rewrites=True),
    Rule("remark_before_request", remark_before_request, (
        (("show the 3d model",), "that view is perfect, now zoom in"),
        (("show the 3d model", "show the inferior view"),
         "well shoot, that is not right, give me the surgical view")), rewrites=True),
)


class LexiconTier(GrammarTier):
    """The deterministic tier (implements ``app.agents.decision.Tier``): the grammar with the
    console's context rules."""

    def __init__(self, accept: float = ACCEPT, extra_fields: Iterable[str] = ()) -> None:
        super().__init__(accept, extra_fields, rules=CONTEXT_RULES)


__all__ = ["CONTEXT_RULES", "LexiconTier", "Rule"]
