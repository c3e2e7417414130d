"""Tier 2 of the interpreter (DESIGN §3): a deterministic grammar over the domain vocabulary.

The corrected command is split into clauses ("and", "then", commas); each clause is routed to
an agent by the words that name one (CT, slice, lobe, BMI …), else by the clause before it in
the same command, else by memory (the last agent used, DESIGN §4), and then decoded by that
agent's rules into registry steps in the exact parameter forms of ``app.core.actions``.
Every token a rule uses is marked; the confidence falls with every content word left over, so
an unfamiliar phrasing comes out with low confidence (for the semantic/LLM tiers) instead of
a wrong confident answer.

Decisions taken where DESIGN §4 is silent (documented here, tested in tests/test_lexicon.py):
- "where is the tumour/nodule" asks for the ``tumor_location`` IR field, unless the words name
  the 3D model or the 3D model is the agent in use; then it adds the nodules to the model.
- Bare direction words ("left", "up") move the CT (DESIGN's direction convention), except
  right after the 3D model was used, where left/right/up/down rotate it and anterior/posterior/
  superior/inferior choose its view.
- "show the sagittal view" (a plane named, nothing moved) enlarges that plane.
- Within one command, adjacent IR.SHOW (or AR.SHOW) steps merge into one step; CT moves stay
  one step per spoken part.
- Phrasal verbs: "get/bring/pop/put the model up" shows it and "take/bring the CT down" hides
  it, unless a plane is the object or a step follows ("bring the axial up 20" moves).
- Another word for the same direction is emphasis, not a repetition ("a bit higher up" = one
  step; "up up" = two); "right up to the top" is "all the way"; "further"/"farther" continue
  in the named direction, else in the direction that plane last moved.
- A remark about the case ("the right upper lobe is really adherent today") is read with a
  confidence below the floor; before a request ("that view is perfect, now zoom in") it is
  dropped. A leading "right,"/"okay,"/"so," is a discourse marker, not a direction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from app.agents.decision import Decision, Memory
from app.agents.display_cues import CAPABLE, agent_scores
from app.agents.grammar_ar import (
    _PRONOUNS,
    _expand,
    decide_ar,
)
from app.agents.grammar_clauses import (
    _UNFAMILIAR_CONF,
    ACCEPT,
    Clause,
    RoutedClause,
    _Ctx,
    _is_num,
    clause_intent,
    split_clauses,
)
from app.agents.grammar_ir import (
    _ct_question_leads,
    _names_the_operation,
    _vague_ir_leads,
    decide_ir,
)
from app.agents.grammar_iv import (
    _rel,
    decide_iv,
)
from app.agents.grammar_phrases import (
    canonical,
)
from app.agents.plan_words import plan_phrase
from app.agents.repeat_words import _times_of
from app.agents.token_shapes import (
    _BARE_DIRECTION,
    _NESTING,
    _prepare,
)
from app.core.registry import Step
from app.core.state import ConsoleState
from app.core.vocab import IR_ALL_FIELDS, IV_DEFAULT_STEP
from app.language.command_words import has_domain_content
from app.language.normalize import tokens_of
from app.language.vocabulary import (
    _VAGUE_POS,
    AR_VIEW_WORDS,
    DIRECTIONS,
    FILLER,
    NAMED_POS,
    OP_WORDS,
    QUESTION_WORDS,
    SHOW_VERBS,
    VOCABULARY,
)


@dataclass
class Analysis:
    """The route stage's output: clauses with agents (the decide stage turns them into steps)."""

    text: str
    clauses: list[RoutedClause]
    repeat_of: str | None = None  # a repeat ("again") resolved to this earlier command
    step_override: int | None = None  # "20 more": the repeated move with this step
    reverse: bool = False  # "the other way": the repeated move or swing, reversed
    times: int = 1  # "twice more": the repeated plan this many times over
    statement: bool = False  # a remark about the case rather than a request
    # "sorry, 250" / "no, from above": the earlier command this one corrects (its plan is
    # read again with the new value; a relative CT move then only makes up the difference)
    replaces: str | None = None
    # the words read instead of the command's own, when context rewrote them ("and down"
    # after a swing is "rotate the model down"): the semantic tier matches these
    rewritten: str | None = None
    # "a bit more", "a little further": the repeated CT move by the default step, not again
    # by the last one's (which may have been 30)
    small: bool = False
    rules: list[str] = field(default_factory=list)  # the context rules that applied

    @property
    def agent(self) -> str | None:
        return self.clauses[0].agent if self.clauses else None


@dataclass
class Reading:
    """One command on its way through the context rules: the words as they stand and what
    the rules have found so far (a repeat, a reversal, a step, a remark)."""

    corrected: str
    state: ConsoleState
    memory: Memory
    nested: bool  # read for another command's context rule: those rules do not apply again
    tokens: list[str]
    own: list[str] = field(default_factory=list)  # the words as said (after preparation)
    repeat_of: str | None = None
    step_override: int | None = None
    reverse: bool = False
    small: bool = False
    times: str | None = None
    statement: bool = False
    core: list[str] = field(default_factory=list)
    fired: list[str] = field(default_factory=list)
    rewrote: bool = False  # a rule put other words in the command's place

    def __post_init__(self) -> None:
        self.own = list(self.tokens)


class ContextRule(Protocol):
    """A named context rule (the inventory is ``app.agents.context_rules.CONTEXT_RULES``)."""

    name: str
    rewrites: bool  # its words stand for the command's own (the semantic tier matches them)

    def apply(self, grammar: GrammarTier, reading: Reading) -> Analysis | bool: ...


def _state_agent(state: ConsoleState, intent: str) -> str | None:
    """An agent that is on screen and can serve the intent (last resort)."""
    cands = []
    if state.ar.visible:
        cands.append("AR")
    if state.iv.mode != "none":
        cands.append("IV")
    if state.ir.visible:
        cands.append("IR")
    for a in cands:
        if intent in CAPABLE[a]:
            return a
    return None




class GrammarTier:
    """The deterministic grammar (implements ``app.agents.decision.Tier``): clauses, routing
    and decoding, after the context rules it is given (``LexiconTier`` in
    ``app.agents.context_rules`` is this grammar with the console's inventory)."""

    name = "lexicon"

    def __init__(self, accept: float = ACCEPT, extra_fields: Iterable[str] = (),
                 rules: Sequence[ContextRule] = ()) -> None:
        self.accept = accept
        self.extra_fields = tuple(e.lower() for e in extra_fields)
        self.rules = tuple(rules)

    # -- route -----------------------------------------------------------------------------
    def analyse(self, corrected: str, state: ConsoleState, memory: Memory) -> Analysis:
        # Context rules read earlier commands, which may read theirs: bounded depth.
        depth = getattr(_NESTING, "depth", 0)
        _NESTING.depth = depth + 1
        try:
            return self._analyse(corrected, state, memory, nested=depth >= 2)
        finally:
            _NESTING.depth = depth

    def _analyse(self, corrected: str, state: ConsoleState, memory: Memory,
                 nested: bool) -> Analysis:
        # the context rules, in their declared order (app/agents/context_rules.py): each may
        # rewrite the words, resolve a repeat or correction, or settle the reading itself
        r = Reading(corrected, state, memory, nested, _prepare(corrected))
        for rule in self.rules:
            done = rule.apply(self, r)
            if isinstance(done, Analysis):
                done.rules = [*r.fired, rule.name]
                return done
            if done:
                r.fired.append(rule.name)
                r.rewrote = r.rewrote or rule.rewrites
        return self._route_reading(r)

    def _route_reading(self, r: Reading) -> Analysis:
        """The words (as the context rules left them) split into clauses, each routed."""
        tokens, state, memory = r.tokens, r.state, r.memory
        clauses = split_clauses(tokens)
        routed: list[RoutedClause] = []
        for c in clauses:
            intent = clause_intent(c)
            agent, source = self._route(c, intent, routed, state, memory)
            routed.append(RoutedClause(c, agent, intent, source))
        # DESIGN §4: a view named together with a rotation is the model's view, then the
        # rotation ("switch to posterior and rotate down"): a bare direction beside a
        # rotation of the model names the view, not a CT step
        if any(rc.agent == "AR" and rc.intent == "rotate" for rc in routed):
            for rc in routed:
                bare = [t for t in rc.clause.toks if t not in FILLER and t not in (
                    "switch", "change", "to", "the", "view", "side", "from")]
                if rc.agent == "IV" and rc.source == "weak" and len(bare) == 1 and \
                        bare[0] in AR_VIEW_WORDS:
                    rc.agent, rc.source = "AR", "carried"
        # a clause that memory cannot serve may take the agent named by the clause after it
        for i, rc in enumerate(routed):
            nxt = routed[i + 1] if i + 1 < len(routed) else None
            if rc.source in ("state", "guess") and nxt is not None and nxt.agent and \
                    nxt.source == "words" and rc.intent in CAPABLE[nxt.agent]:
                rc.agent, rc.source = nxt.agent, "lookahead"
        rewritten = " ".join(tokens) if r.repeat_of is None and tokens != r.own and \
            r.rewrote else None
        return Analysis(r.corrected, routed, r.repeat_of, r.step_override, r.reverse,
                        _times_of(r.times), r.statement, rewritten=rewritten, small=r.small,
                        rules=list(r.fired))

    def reading_of(self, steps: Sequence[Step], state: ConsoleState,
                   memory: Memory) -> str | None:
        """A phrase this grammar reads as exactly ``steps`` (checked by reading it back), so a
        plan another tier decided can be repeated, reversed or stepped ("a bit more")."""
        phrase = plan_phrase(steps)
        if phrase is None:
            return None
        back = self.decide(phrase, state, memory)
        if back is None or not _same_steps(back.steps, steps):
            return None
        return phrase

    def _named_before(self, state: ConsoleState, memory: Memory) -> list[str] | None:
        """The model structures the previous command named (shown, added, hidden or zoomed
        toward), read against the memory it had, so that its own "it" resolves in turn."""
        named: list[str] = []
        for st in self._last_steps(state, memory):
            if st.action_id == "AR.SHOW":
                named.extend(st.params.get("structures") or [])
            elif st.action_id == "AR.ZOOM_IN" and st.params.get("target"):
                named.extend(_expand([st.params["target"]]))
        return sorted(dict.fromkeys(named)) or None

    def _last_steps(self, state: ConsoleState, memory: Memory) -> list[Step]:
        """The plan of the previous command, read against the memory it had."""
        if not memory.recent:
            return []
        prev = memory.reading_of(memory.recent[-1])
        before = Memory(memory.last_agent, memory.recent[:-1], readings=dict(memory.readings),
                        agents=dict(memory.agents))
        return list(self.decide_from(self.analyse(prev, state, before), state, before).steps)

    @staticmethod
    def context_rewrite(corrected: str, memory: Memory) -> str | None:
        """A follow-up with no console word of its own that the previous command gives one,
        read before the scope check: "and when is it?" right after the operation was asked
        about is its date. None when there is nothing to rewrite."""
        toks = set(tokens_of(corrected))
        if memory.recent and {"when", "it"} <= toks and toks <= {
                "and", "when", "is", "it", "its", "was", "will", "be", "scheduled", "planned",
                "happening", "booked", ",", "please", "so"} and set(
                tokens_of(canonical(memory.recent[-1]))) & OP_WORDS:
            return ("and " if "and" in toks else "") + "when is the operation"
        return None

    def _route(self, c: Clause, intent: str, before: list[RoutedClause], state: ConsoleState,
               memory: Memory) -> tuple[str | None, str]:
        scores = agent_scores(c.words)
        # DESIGN §4: "where the tumour is" is the patient field, whichever display is in use
        # (the nodules in the model are named as such: "the tumour in the model")
        if scores.pop("tumor_q", 0):
            if not set(c.words) & {"tumor", "tumors", "cancer"} and \
                    (memory.last_agent or state.agent) == "AR" and state.ar.visible:
                scores["AR"] += 3  # "where's the nodule?" on the model: the model's nodules
                scores["IR"] = 0
            else:
                scores["AR"] = max(0.0, scores["AR"] - 3)
        # plain directions and numbers hint at the CT
        words = c.words
        weak_iv = sum(1 for i, t in enumerate(words) if t in DIRECTIONS or (
            _is_num(t) and words[i + 1:i + 2] not in (["times"], ["time"])) or (
            t in NAMED_POS and t not in _VAGUE_POS))
        best = max(scores, key=scores.__getitem__)
        if scores[best] > 0:
            ranked = sorted(scores, key=scores.__getitem__, reverse=True)
            for a in ranked:
                if scores[a] > 0 and intent in CAPABLE[a]:
                    if scores[a] == scores[ranked[0]] or a == ranked[0]:
                        # ties: prefer memory, then the clause before
                        tied = [x for x in ranked if scores[x] == scores[a]
                                and intent in CAPABLE[x]]
                        if len(tied) > 1:
                            for pref in (before[-1].agent if before else None,
                                         memory.last_agent):
                                if pref in tied:
                                    return pref, "words"
                        return a, "words"
                    return a, "words"
        last = memory.last_agent or state.agent
        if weak_iv and intent == "rotate":
            return "AR", "words"
        if weak_iv:
            bare = {t for t in c.toks if t not in FILLER}
            bare -= SHOW_VERBS - QUESTION_WORDS
            if last == "AR" and bare and bare <= _BARE_DIRECTION | {
                    "view", "side", "more", "from", "look", "change", "switch", "go", "turn",
                    "face", "facing"} \
                    and not before:
                return "AR", "memory"
            if before and before[-1].agent == "AR" and bare <= _BARE_DIRECTION | {
                    "view", "side"}:
                return "AR", "carried"
            if before and before[-1].agent in ("IV",):
                return "IV", "carried"
            return "IV", "weak"
        if before and before[-1].agent and intent in CAPABLE[before[-1].agent]:
            return before[-1].agent, "carried"
        if last and intent in CAPABLE[last]:
            return last, "memory"
        other = _state_agent(state, intent)
        if other:
            return other, "state"
        for a in ("AR", "IV", "IR"):
            if intent in CAPABLE[a]:
                return a, "guess"
        return None, "guess"

    # -- decide ----------------------------------------------------------------------------
    def decide(self, corrected: str, state: ConsoleState, memory: Memory) -> Decision | None:
        return self.decide_from(self.analyse(corrected, state, memory), state, memory)

    def decide_from(self, analysis: Analysis, state: ConsoleState, memory: Memory
                    ) -> Decision:
        ctx = _Ctx(state, memory)
        first = analysis.clauses[0] if analysis.clauses else None
        if first is not None and first.agent == "AR" and first.clause.has(*_PRONOUNS) and \
                first.intent in ("show", "hide", "zoom_in") and not analysis.repeat_of:
            ctx.prior_named = self._named_before(state, memory)
        steps: list[Step] = []
        leftovers: list[str] = []
        sources: list[str] = []
        guessed = False
        vague = _vague_ir_leads(analysis.clauses) | _ct_question_leads(analysis.clauses)
        for k, rc in enumerate(analysis.clauses):
            c, agent, intent = rc.clause, rc.agent, rc.intent
            sources.append(rc.source)
            if agent is None:
                leftovers.extend(c.leftover())
                continue
            if k in vague:
                continue  # "who are we operating on, what is her age": the named fields win
            if agent == "IR" and _names_the_operation(analysis.clauses[:k], c):
                # "when is the operation and what is it called": "it" is the operation
                c = Clause([*c.toks, "operation"], c.sep, list(c.inherited))
            if agent == "IV":
                part = decide_iv(c, ctx, intent)
            elif agent == "AR":
                part = decide_ar(c, ctx, intent)
            else:
                part = decide_ir(c, ctx, intent)
            left = c.leftover()
            # a clause with no verb read as "show" while words went unread: the verb was
            # probably one of those words ("do the fnord with the model")
            implicit_show = intent == "show" and not set(c.words) & SHOW_VERBS
            guessed = guessed or c.guess or (implicit_show and
                                                                       bool(left))
            ctx.agent = agent
            steps.extend(part)
            leftovers.extend(left)
        steps = merge_steps(steps)
        if analysis.step_override is not None:
            steps = _with_step(steps, analysis.step_override)
            if not steps:
                leftovers.append(str(analysis.step_override))
        if analysis.small and analysis.step_override is None:
            steps = _with_step(steps, IV_DEFAULT_STEP) or steps
        if analysis.times > 1:
            steps = _times_over(steps, analysis.times)
        if analysis.replaces:
            # the corrected command already moved the CT: only the difference is left to do
            before = self.decide(analysis.replaces, state, memory)
            steps = _made_up(steps, before.steps if before else [])
        if analysis.reverse:
            steps = _reversed(steps)
            if not steps:
                leftovers.append("opposite")
        conf = self._confidence(steps, leftovers, sources, guessed)
        if analysis.statement:
            # A remark about the case, not a request: the grammar does not act on it alone.
            conf = min(conf, _UNFAMILIAR_CONF)
            ctx.notes.append("reads as a statement, not a request")
        if not has_domain_content(analysis.text, VOCABULARY) and not has_domain_content(
                canonical(analysis.text), VOCABULARY) and (leftovers or any(
                rc.intent not in ("hide", "zoom_in", "zoom_out", "rotate", "reset")
                for rc in analysis.clauses)):
            # No word of the console at all ("give it a twirl", let through by the validator
            # as command-shaped): unless a phrasal verb fully read says what to do ("take it
            # away"), whatever the grammar made of it is a guess for the later tiers.
            conf = min(conf, _UNFAMILIAR_CONF)
        agent = steps[0].action_id.split(".")[0] if steps else (
            analysis.agent or memory.last_agent)
        how = "; ".join(f"{rc.agent or '?'}<-{rc.source}" for rc in analysis.clauses)
        reason = f"lexicon: {len(analysis.clauses)} part(s) [{how}]"
        if leftovers:
            reason += f"; words not understood: {', '.join(leftovers)}"
        if analysis.repeat_of:
            reason += f"; repeats '{analysis.repeat_of}'"
        if ctx.notes:
            reason += "; " + "; ".join(ctx.notes)
        return Decision(valid=True, steps=steps, agent=agent, confidence=conf,
                        tier=self.name, reason=reason,
                        diagnostics={"leftover": leftovers, "routing": sources,
                                     "repeat_of": analysis.repeat_of,
                                     "rewritten": analysis.rewritten,
                                     **({"context_rules": analysis.rules}
                                        if analysis.rules else {}),
                                     **({"refers_back": True} if ctx.referred_back else {})})

    @staticmethod
    def _confidence(steps: list[Step], leftovers: list[str], sources: list[str],
                    guessed: bool) -> float:
        if not steps:
            return 0.1
        conf = 0.97
        conf -= 0.17 * len(leftovers)
        if any(s in ("state", "guess") for s in sources):
            conf -= 0.2
        if leftovers and any(s in ("memory", "state", "guess", "carried", "weak")
                             for s in sources):
            conf -= 0.3  # no word named the agent and some words were not understood
        if guessed:
            conf -= 0.12
        return round(max(0.05, min(conf, 0.99)), 3)


_OPPOSITE = {"left": "right", "right": "left", "up": "down", "down": "up"}
_OPPOSITE_VIEW = {"left": "right", "right": "left", "anterior": "posterior",
                  "posterior": "anterior", "superior": "inferior", "inferior": "superior"}


def _reversed(steps: list[Step]) -> list[Step]:
    """The repeated swing or relative move the other way; [] when it has no opposite."""
    if len(steps) != 1:
        return []
    s = steps[0]
    if s.action_id == "AR.SHOW" and set(s.params) == {"view"} and \
            s.params["view"] in _OPPOSITE_VIEW:
        return [Step("AR.SHOW", {"view": _OPPOSITE_VIEW[s.params["view"]]})]
    if s.action_id == "AR.ROTATE" and s.params.get("direction") in _OPPOSITE:
        return [Step("AR.ROTATE", {"direction": _OPPOSITE[s.params["direction"]]})]
    if s.action_id == "IV.SHOW_MOVE" and s.params and all(
            isinstance(v, str) and v[:1] in "+-" for v in s.params.values()):
        return [Step("IV.SHOW_MOVE", {p: _rel(-int(v)) for p, v in s.params.items()})]
    return []


def _move_kinds(steps: Sequence[Step]) -> list[list[bool]]:
    """Per CT move, which of its values are relative steps (the rest are slice targets)."""
    return [sorted(isinstance(v, str) and v[:1] in "+-" for k, v in st.params.items()
                   if k in ("axial", "coronal", "sagittal"))
            for st in steps if st.action_id == "IV.SHOW_MOVE"]


def _made_up(steps: list[Step], before: list[Step]) -> list[Step]:
    """A corrected relative CT move minus the move already made ("up 20" then "sorry, 30":
    10 more)."""
    done: dict[str, int] = {}
    for st in before:
        if st.action_id == "IV.SHOW_MOVE":
            for k, v in st.params.items():
                if isinstance(v, str) and v[:1] in "+-":
                    done[k] = done.get(k, 0) + int(v)
    if not done:
        return steps
    out = []
    said = {k for st in steps if st.action_id == "IV.SHOW_MOVE" for k in st.params}
    for st in steps:
        if st.action_id == "IV.SHOW_MOVE":
            params = {k: _rel(int(v) - done[k]) if k in done and isinstance(
                v, str) and v[:1] in "+-" else v for k, v in st.params.items()}
            if said and st.params and not set(st.params) & set(done):
                # "axial up 20", "sorry, I meant the coronal": the plane moved by mistake
                # goes back (first, so the corrected plane stays the one last moved)
                params = {**{k: _rel(-v) for k, v in done.items() if k not in said and v},
                          **params}
                said = set()
            st = Step(st.action_id, params)
        out.append(st)
    return out


def _times_over(steps: list[Step], times: int) -> list[Step]:
    """The plan done ``times`` times: relative CT moves scaled, a model zoom repeated;
    absolute targets and idempotent actions are the same however often they are done."""
    out: list[Step] = []
    for st in steps:
        if st.action_id == "IV.SHOW_MOVE":
            out.append(Step(st.action_id, {
                p: _rel(times * int(v)) if isinstance(v, str) and v[:1] in "+-" else v
                for p, v in st.params.items()}))
        elif st.action_id in ("AR.ZOOM_IN", "AR.ZOOM_OUT"):
            out.extend([st] * times)
        else:
            out.append(st)
    return out


def _with_step(steps: list[Step], step: int) -> list[Step]:
    """The repeated relative CT move, with a new step size ("20 more")."""
    if len(steps) != 1 or steps[0].action_id != "IV.SHOW_MOVE":
        return []
    rel = {p: v for p, v in steps[0].params.items() if isinstance(v, str) and v[:1] in "+-"}
    if len(rel) != 1:
        return []
    (plane, v), = rel.items()
    sign = -1 if v.startswith("-") else 1
    return [Step("IV.SHOW_MOVE", {plane: _rel(sign * step)})]


# Actions whose repetition changes nothing: a repeated one in a command is said twice, not
# meant twice ("the coronal view please, large").
_IDEMPOTENT = {"IV.ZOOM_IN_MOVE", "IV.ZOOM_OUT", "IV.REMOVE", "IV.RESET", "IR.HIDE", "IR.RESET",
               "AR.REMOVE", "AR.RESET", "AR.ROTATE"}


def merge_steps(steps: list[Step]) -> list[Step]:
    """Adjacent IR.SHOW / AR.SHOW steps of one command become one step (a spoken list)."""
    out: list[Step] = []
    for s in steps:
        if out and s.action_id in _IDEMPOTENT and s.action_id == out[-1].action_id and \
                dict(s.params) == dict(out[-1].params) and not any(
                    isinstance(v, str) and v[:1] in "+-" for v in s.params.values()):
            continue
        if out and s.action_id == out[-1].action_id and s.action_id in ("IR.SHOW", "AR.SHOW"):
            merged = _merge_show(out[-1], s)
            if merged is not None:
                out[-1] = merged
                continue
        out.append(s)
    return out


def _merge_show(a: Step, b: Step) -> Step | None:
    pa, pb = dict(a.params), dict(b.params)
    key = "fields" if a.action_id == "IR.SHOW" else "structures"
    if not pa and key == "fields" and pb.get("fields"):
        # "all the patient fields and the operation date as well" / "... but not the weight"
        everything = set(IR_ALL_FIELDS)
        fields = everything - set(pb["fields"]) if pb.get("op") == "remove" else \
            everything | set(pb["fields"])
        return replace(b, params={"fields": sorted(fields)})
    if not pa:
        return b  # "show the model and go to the surgical view"
    if not pb:
        return a
    if pa.get("op", "set") != pb.get("op", "set") and key in pa and key in pb:
        return None
    if "view" in pa and "view" in pb:
        return None
    out = {**pa, **pb}
    if key in pa and key in pb:
        out[key] = sorted(dict.fromkeys([*pa[key], *pb[key]]))
    return replace(b, params=out)


__all__ = [
    "ACCEPT", "VOCABULARY", "Analysis", "canonical", "Clause", "GrammarTier", "Reading",
    "merge_steps", "plan_phrase",
]


def _same_steps(a: Sequence[Step], b: Sequence[Step]) -> bool:
    def norm(st: Step) -> tuple[str, str]:
        params = dict(st.params)
        if st.action_id == "IR.SHOW" and params.get("fields"):
            # age and sex are one display item (DESIGN §4)
            params["fields"] = sorted({"age" if f == "sex" else f for f in params["fields"]})
        return st.action_id, repr(sorted((k, tuple(v) if isinstance(v, (list, tuple)) else v)
                                         for k, v in params.items()))
    return [norm(x) for x in a] == [norm(x) for x in b]
