"""The fast interpreter: normalise → correct → validate → route → decide, with memory.

``FastInterpreter.interpret`` only decides; it never changes the console. ``apply`` dispatches
a decision's plan through the command registry (ordered by the plan DAG) and updates memory
per DESIGN §4: the last agent and the last 3 corrected commands; an empty command re-selects
the previous agent and keeps its state; an invalid one changes nothing.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from app.agents.checks import (
    addressed_to_person,
    as_whole_sheet,
    checked,
    displays_named,
    ungrounded,
    unknown_opener,
)
from app.agents.context_rules import LexiconTier
from app.agents.decision import Decision, Memory, Tier
from app.agents.grammar_clauses import ACCEPT
from app.agents.grammar_phrases import canonical
from app.agents.planner import order_steps
from app.agents.repeat_words import _is_repeat
from app.agents.template_reader import read_template
from app.agents.token_shapes import is_undo
from app.core.registry import Actor, CommandRegistry, CommandResult, Step
from app.core.state import ConsoleState
from app.language import has_any
from app.language.command_words import DOMAIN_WORDS, has_domain_content
from app.language.correction import DEFAULT_LEXICON, Lexicon, correct
from app.language.frames import request_within_courtesy, unframe
from app.language.known_words import foreign_edges
from app.language.normalize import normalize, tokens_of
from app.language.soundalike import sound_alike_readings
from app.language.validation import validate
from app.language.vocabulary import VOCABULARY
from app.language.wake_word import after_wake_word

log = logging.getLogger(__name__)
# Words of the console: never a person's name (built once, not per command).
_KNOWN_WORDS = VOCABULARY | DOMAIN_WORDS
_SENTENCE_END = re.compile(r"[.?!;]+\s+(?=\S)")


def _request_after_a_remark(text: str) -> str | None:
    """The last sentence, when the sentences before it name nothing of the console
    ("Specimen's out. Clear the CT and reset the patient box")."""
    cuts = [m.end() for m in _SENTENCE_END.finditer(text)]
    if not cuts:
        return None
    before = tokens_of(normalize(text[:cuts[-1]]))
    last = text[cuts[-1]:].strip()
    said = tokens_of(normalize(last))
    if any(t in DOMAIN_WORDS for t in before) or not said or said[0] in _SUBJECTS or \
            has_any(before, "asks_a_person") or not any(t in DOMAIN_WORDS for t in said):
        # ("What are the sats doing? Ninety-two?": a number alone answers the talk)
        return None  # "... I can't see the CT from here" is a remark too, not a request
    return last


_SUBJECTS = {"i", "we", "you", "she", "he", "it", "they", "someone", "somebody", "that", "this",
             "there", "everyone", "anyone"}

# Below this confidence no tier's decision is carried out: the console asks instead (DESIGN §3
# "ask, don't guess": only a confident reading acts, and confident is the accept level).
FLOOR = ACCEPT


@dataclass
class Interpretation:
    raw: str
    normalized: str
    corrected: str
    corrections: list[tuple[str, str, str]]
    valid: bool
    empty: bool
    decision: Decision
    stage_ms: dict[str, float] = field(default_factory=dict)
    reason: str = ""  # why invalid/empty, in plain words
    memory: Memory | None = None  # the memory this was interpreted against (for ``apply``)
    # Readings no tier was confident of but that passed every check: what the console may
    # ask about instead of guessing (app.agents.ask_back).
    candidates: list[Decision] = field(default_factory=list)

    @property
    def agent(self) -> str | None:
        """The routing result (DESIGN §5.3 ``route.agent``)."""
        return self.decision.agent

    @property
    def tier(self) -> str:
        return self.decision.tier

    def trace_stages(self) -> dict[str, dict]:
        """The ``stages`` part of a trace record (DESIGN §5.3), minus STT."""
        ms = self.stage_ms
        correct_ms = ms.get("normalize", 0) + ms.get("correct", 0) + ms.get("validate", 0)
        return {
            "correct": {"text": self.corrected, "valid": self.valid, "ms": round(correct_ms, 3)},
            "route": {"agent": self.agent, "ms": round(ms.get("route", 0), 3)},
            "decide": {"actions": [
                {"agent": s.action_id.split(".", 1)[0], "action": s.action_id.split(".", 1)[1],
                 "params": dict(s.params)} for s in self.decision.steps],
                "ms": round(ms.get("decide", 0), 3)},
        }


class FastInterpreter:
    """Tiers fastest first; the first decision at or above ``accept`` wins."""

    def __init__(self, lexicon: LexiconTier | None = None, tiers: Sequence[Tier] = (),
                 accept: float = ACCEPT, words: Lexicon = DEFAULT_LEXICON,
                 extra_fields: Iterable[str] = (), floor: float = FLOOR,
                 templates: bool = True) -> None:
        self.extra_fields = tuple(extra_fields)
        self.lexicon = lexicon or LexiconTier(accept=accept, extra_fields=self.extra_fields)
        self.tiers = list(tiers)
        self.accept = accept
        self.floor = floor
        self.words = words
        self.templates = templates  # the plain shapes read from the language's templates

    def consult_below(self) -> float:
        """Below this lexicon confidence at least one later tier is asked."""
        return max([self.accept, *(getattr(t, "consult_below", self.accept) for t in self.tiers)])

    def interpret(self, text: str, state: ConsoleState, memory: Memory) -> Interpretation:
        addressed = after_wake_word(text or "")
        if addressed is not None:
            # "Sure, doctor. Davinci, show the PFT": what came before the wake word was said
            # to someone else; the console is spoken to from it on
            mine = self.interpret(addressed, state, memory)
            if mine.valid and not mine.empty:
                return replace(mine, raw=text or "", decision=replace(
                    mine.decision, diagnostics={**(mine.decision.diagnostics or {}),
                                                "addressed_from_wake_word": addressed}))
        tail = closing_request(text or "") or _after_a_remark(text or "")
        framed_tail = unframe(tail) if tail is not None else None
        tail = framed_tail.request if framed_tail is not None else tail  # "would you mind …"
        if tail is not None and is_undo(tokens_of(normalize(tail))):
            # "Hmm, that's the very edge. Take it back to where we were.": the remark before
            # an undo is no part of it
            again = self._interpret_said(tail, state, memory)
            if again.valid and again.decision.undo:
                return replace(again, raw=text or "")
        framed = unframe(text or "")
        if framed is None:
            return self._interpret_said(text, state, memory)
        # "I wonder if we could move the coronal forward", "Dr Okafor wants the axial at
        # forty": the request is read alone. The grammar's own reading wins (of the request,
        # else of the whole as said); thinking aloud ("I think ...") is set aside only when
        # the grammar reads the rest as a whole command by itself.
        if framed.frame.strip().endswith("let us") and set(tokens_of(normalize(
                framed.request))) <= {"close", "up", "now", "then", "please", "her", "him"}:
            # "let's close": with the frame it is the team's next step, not a request
            as_said = self._interpret(text or "", state, memory, grammar_only=True)
            if not as_said.valid and (as_said.reason or "").startswith("Out of scope"):
                return as_said
        inner = self._interpret_said(framed.request, state, memory)
        d = inner.decision
        acted = inner.valid and not inner.empty and bool(d.steps or d.undo)
        framed_reading = replace(inner, raw=text or "", decision=replace(d, diagnostics={
            **(d.diagnostics or {}), "frame": framed.frame}))
        if acted and d.tier == self.lexicon.name:
            return framed_reading
        whole = self._interpret_said(text, state, memory)
        if whole.valid and whole.decision.tier == self.lexicon.name or not acted or \
                framed.hedge:
            return whole
        return framed_reading

    def _confident(self, it: Interpretation) -> bool:
        return it.valid and not it.empty and bool(it.decision.steps) and \
            it.decision.tier == self.lexicon.name and it.decision.confidence >= self.accept

    def _confident_part(self, text: str, part: str, state: ConsoleState, memory: Memory,
                        key: str, said: str, grammar_only: bool = False
                        ) -> Interpretation | None:
        """The grammar's confident reading of ``part`` of ``text`` (noted under ``key`` in
        the diagnostics), or None when the part alone is no confident command."""
        again = self._interpret(part, state, memory, grammar_only=grammar_only)
        if not self._confident(again):
            return None
        return replace(again, raw=text or "", decision=replace(
            again.decision, diagnostics={**(again.decision.diagnostics or {}), key: said}))

    def _interpret_said(self, text: str, state: ConsoleState, memory: Memory
                        ) -> Interpretation:
        rest = foreign_edges(text or "")
        if rest is not None and addressed_to_person(rest, _KNOWN_WORDS) is None:
            # "Toda. Clear it", "Other way ka": words of the speaker's own language at the
            # edges; the rest is acted on only when it is a confident command by itself, and
            # only when the whole is neither read, nor out of scope, nor a recogniser's slip
            whole = self._interpret(text, state, memory, grammar_only=True)
            if not self._confident(whole) and not (whole.reason or "").startswith(
                    "Out of scope") and self._heard_as(text, state, memory) is None:
                part = self._confident_part(text, rest, state, memory,
                                            "foreign_words_set_aside", text, grammar_only=True)
                if part is not None:
                    return part
        interp = self._interpret(text, state, memory)
        if not interp.empty:
            why = addressed_to_person(text or "", _KNOWN_WORDS)
            rest = unknown_opener(text or "", _KNOWN_WORDS) if why is not None else None
            if rest is not None and addressed_to_person(rest, _KNOWN_WORDS) is None:
                # "Hao, again.": an opener that is no name may be the speaker's own word; the
                # rest is acted on only when it is a confident command by itself
                part = self._confident_part(text, rest, state, memory, "opener_set_aside",
                                            text[:len(text) - len(rest)])
                opener = (text or "").split(",", 1)[0].strip()
                more = foreign_edges(rest) if part is None and why is not None and \
                    why == f"it calls on {opener}, a person" else None
                if more is not None and addressed_to_person(more, _KNOWN_WORDS) is None and \
                        not any(w[:1].isupper() for w in rest[:rest.rfind(more)].split()):
                    # "Bine, deci... give me the 3D model": more of the speaker's own words
                    # (none with a capital: "Suction, Pieter. Back a little" calls on Pieter)
                    part = self._confident_part(text, more, state, memory, "opener_set_aside",
                                                text[:text.rfind(more)], grammar_only=True)
                if part is not None:
                    return part
            if why is not None:  # said to a person: out of scope, whatever it names
                reason = f"Out of scope: {why}."
                return replace(interp, valid=False, reason=reason, candidates=[],
                               decision=Decision(valid=False, agent=None, confidence=1.0,
                                                 tier=interp.decision.tier, reason=reason))
        if interp.valid or interp.empty:
            return interp
        d = interp.decision
        if (d.reason or "").startswith("Out of scope") and d.tier != "semantic":
            # named as out of scope (a surgical act, another device): stays so, unless only a
            # remark in a sentence of its own was ("Specimen's out. Clear the CT")
            last = _request_after_a_remark(text or "")
            if last is not None:
                part = self._confident_part(text, last, state, memory, "after_a_remark", last)
                if part is not None:
                    return part
            return interp
        if (d.diagnostics or {}).get("polarity"):
            return interp  # refused by a check, not merely not understood: no retry on a part
        tail = closing_request(text or "")
        if tail is None:
            # "I'm sorry to bother you again, but could you please bring up the CT": clauses
            # of courtesy around a request are set aside when the rest is a confident command
            kind = request_within_courtesy(text or "")
            part = self._confident_part(text, kind, state, memory, "courtesy_set_aside", kind) \
                if kind is not None and addressed_to_person(text or "", _KNOWN_WORDS) is None \
                and addressed_to_person(kind, _KNOWN_WORDS) is None else None
            return part if part is not None else interp
        again = self._interpret(tail, state, memory)
        if not again.valid or again.empty or not again.decision.steps:
            return interp
        # thinking aloud, then the request ("Hmm, maybe a bit too far, go down ten.")
        return replace(again, raw=text or "",
                       decision=replace(again.decision, diagnostics={
                           **(again.decision.diagnostics or {}), "closing_request": tail}))

    def _heard_as(self, text: str, state: ConsoleState, memory: Memory
                  ) -> Interpretation | None:
        """The words a recogniser's text sounds like, when they read as a command and the
        text itself does not ("row tate up", "a gain", "four ward twenty", "hide the
        noodles"): each rewrite of the words the console does not know with a console term
        that sounds almost the same is read by the grammar alone; it is used when at least
        one reads confidently and all that do agree on the plan (else nothing is guessed)."""
        found: list[Interpretation] = []
        for heard in sound_alike_readings(text or ""):
            again = self._interpret(heard, state, memory, grammar_only=True)
            if again.valid and not again.empty and again.decision.steps and \
                    again.decision.tier == self.lexicon.name:
                found.append(again)
        if not found or any(_plan(f.decision.steps) != _plan(found[0].decision.steps)
                            for f in found[1:]):
            return None
        best = found[0]
        heard = (text or "", best.raw, "sounds like a console word")
        return replace(best, raw=text or "", corrections=[heard, *best.corrections],
                       decision=replace(best.decision, diagnostics={
                           **(best.decision.diagnostics or {}), "heard_as": best.raw}))

    def _interpret(self, text: str, state: ConsoleState, memory: Memory,
                   grammar_only: bool = False) -> Interpretation:
        ms: dict[str, float] = {}
        t0 = time.perf_counter()
        normalized = normalize(text or "")
        t1 = time.perf_counter()
        fixed = correct(normalized, self.words, VOCABULARY)
        again = self.lexicon.context_rewrite(fixed.text, memory)
        if again is not None:
            fixed = replace(fixed, text=again)
        t2 = time.perf_counter()
        validity = validate(fixed.text, self.extra_fields, VOCABULARY, canonical(fixed.text))
        t3 = time.perf_counter()
        ms.update(normalize=(t1 - t0) * 1e3, correct=(t2 - t1) * 1e3, validate=(t3 - t2) * 1e3)

        def done(decision: Decision, valid: bool, empty: bool, reason: str) -> Interpretation:
            return Interpretation(text or "", normalized, fixed.text, fixed.changes, valid,
                                  empty, decision, ms, reason, memory)

        if validity.empty:
            prev = memory.last_agent or state.agent
            # Nothing said: keep everything, re-select the previous agent (DESIGN §4). With no
            # previous agent there is nothing to re-select, so it counts as not a command.
            valid = prev is not None
            ms.update(route=0.0, decide=0.0)
            decision = Decision(valid=valid, steps=[], agent=prev, confidence=1.0,
                                tier="memory", reason=validity.reason)
            return done(decision, valid, True, validity.reason)
        if is_undo(tokens_of(fixed.text)):
            ms.update(route=0.0, decide=0.0)
            decision = Decision(valid=True, steps=[], agent=memory.last_agent or state.agent,
                                confidence=0.97, tier=self.lexicon.name,
                                reason="undo: the state before the last command", undo=True)
            return done(decision, True, False, "")
        if not validity.valid:
            if not grammar_only and not validity.reason.startswith("Out of scope"):
                heard = self._heard_as(text, state, memory)
                if heard is not None:
                    return heard
            ms.update(route=0.0, decide=0.0)
            decision = Decision(valid=False, agent=None, confidence=1.0, tier=self.lexicon.name,
                                reason=validity.reason)
            return done(decision, False, False, validity.reason)

        t4 = time.perf_counter()
        plain = read_template(fixed.text, self.lexicon.name) if self.templates else None
        if plain is not None:
            # a whole command in one of the plain shapes of the language data
            decision = checked(plain, tokens_of(fixed.text))
            if decision.valid and decision.steps:
                ms.update(route=0.0, decide=(time.perf_counter() - t4) * 1e3)
                return done(decision, True, False, "")
        analysis = self.lexicon.analyse(fixed.text, state, memory)
        t5 = time.perf_counter()
        toks = tokens_of(fixed.text)
        if "self_correction" in analysis.rules and analysis.rewritten and \
                analysis.replaces is None:
            # "zoom in on the sagittal, actually no, just the small views": the checks read
            # the words as corrected, not the ones taken back
            toks = tokens_of(analysis.rewritten)
        decision = checked(self.lexicon.decide_from(analysis, state, memory), toks)
        t6 = time.perf_counter()
        considered: list[Decision] = []
        if decision.valid and decision.steps and decision.confidence > 0:
            considered.append(decision)
        ms.update(route=(t5 - t4) * 1e3, decide=(t6 - t5) * 1e3)
        if not grammar_only and not analysis.statement and (
                decision.confidence < self.accept or not decision.valid or not decision.steps):
            heard = self._heard_as(text, state, memory)
            if heard is not None:
                return heard
        elif not grammar_only and not analysis.statement and \
                (decision.diagnostics or {}).get("leftover"):
            # "sagittal macs": read past a word it does not know, the grammar is less sure
            # than of the words it sounds like ("sagittal max"); the surer reading wins
            heard = self._heard_as(text, state, memory)
            if heard is not None and heard.decision.confidence > decision.confidence and \
                    not (heard.decision.diagnostics or {}).get("leftover"):
                return heard
        if decision.confidence < self.consult_below() and not grammar_only:
            best = decision
            for tier in self.tiers:
                # A cheap tier may be asked even about confident lexicon readings (it can catch
                # the grammar's confident mistakes); an expensive one (the LLM) only below accept.
                if decision.confidence >= getattr(tier, "consult_below", self.accept):
                    continue
                if analysis.statement:
                    continue  # a remark about the case ("the tumour sits at the top"): no order
                ts = time.perf_counter()
                other = tier.decide(fixed.text, state, memory)
                ms[f"tier_{tier.name}"] = (time.perf_counter() - ts) * 1e3
                if other is None:
                    continue
                other = as_whole_sheet(checked(other, toks, (decision.diagnostics or {}).get(
                    "leftover") or ()), toks)
                if (other.diagnostics or {}).get("polarity"):
                    continue  # says the opposite of the words: not a reading of them
                why = ungrounded(other.steps, toks) if other.valid else None
                if why is not None:
                    log.info("%s tier reading refused: %s (%r)", tier.name, why, fixed.text)
                    continue  # does what no word asked for
                if other.valid and other.steps:
                    considered.append(other)
                if decision.confidence >= self.accept:
                    # The grammar was already sure: only a surer, valid reading replaces it,
                    # and not one that merely drops what the grammar read ("all the fields
                    # and the operation date" is more than "all the fields"), nor one on a
                    # display the words do not name ("inferior inferior" after CT moves steps
                    # the CT twice; it is no 3D view because "inferior" is one as well).
                    if other.valid and other.confidence > best.confidence and \
                            not _says_more(decision.steps, other.steps) and \
                            not _same_shape(decision.steps, other.steps) and \
                            _agents(other.steps) - _agents(decision.steps) <= \
                            displays_named(toks):
                        best = other
                    continue
                if other.confidence >= self.accept:
                    best = other
                    break
                if other.confidence > best.confidence:
                    best = other
            decision = best
        if not decision.valid:
            return done(decision, False, False, decision.reason)
        if not decision.steps or decision.confidence < self.floor:
            # In scope but not understood: ask again rather than guess (an invalid loop).
            why = "Not understood: please say it again in other words."
            decision = replace(decision, valid=False, steps=[], reason=f"{why} ({decision.reason})")
            out = done(decision, False, False, why)
            # the best reading first: the one the tiers trusted most
            out.candidates = sorted(considered, key=lambda d: -d.confidence)
            return out
        diag = decision.diagnostics or {}
        if decision.reading is None and (decision.tier != self.lexicon.name or
                                         diag.get("repeat_of") or diag.get("rewritten")):
            # memory keeps what ran: a later "once more" repeats this plan, not the one
            # this command repeated or reversed
            decision = replace(decision, reading=self.lexicon.reading_of(
                decision.steps, state, memory))
        return done(decision, True, False, "")


_COURTESY = {"please", "thanks", "thank", "you", "cheers", "ta"}
_CLAUSE_BREAK = re.compile(r"\s*[,.;:!?]+\s*|\s+-+\s+")
_PRONOUN = re.compile(r"\b(it|them|that one)\b")
_PLANE = re.compile(r"\b(axial|coronal|sagittal)\b")
_SLICE_MOVE = re.compile(r"\b(move|take|bring|go|push|pull|set|put|scroll)\b.*\b(up|down|forward|"
                         r"back|backward|left|right|to|\d+|[a-z]+ty|ten|twenty|hundred)\b")
_STRUCTURE = re.compile(r"\b(the )?((right|left) )?((upper|middle|lower) )?"
                        r"(lobes?|lung|lungs|airway|nodules?|trachea)\b")


def closing_request(text: str) -> str | None:
    """The request a surgeon says after thinking aloud: the last clause, when what was said
    before it muses ("I think", "hmm", "actually", "maybe"), with "it" / "them" standing for a
    structure named before ("I think I need the middle lobe to judge the fissure, add it." →
    "add the middle lobe"). None otherwise. Only the clause is read; the interpreter still
    decides whether it is a command."""
    parts = [p for p in _CLAUSE_BREAK.split(text.strip().lower()) if p]
    while len(parts) > 1 and set(parts[-1].split()) <= _COURTESY:
        parts = parts[:-1]  # "..., just the age, please": the request is the part before
    if len(parts) < 2:
        return None
    k = len(parts) - 1
    while k > 1 and parts[k - 1] == parts[-1]:
        k -= 1  # "Hmm, too far. Left, left": a repeated step counts, so all of it is the tail
    tail, before = ", ".join(parts[k:]), " ".join(parts[:k])
    if not has_any(_CLAUSE_BREAK.sub(" ", before.replace("’", "'")).split(), "musing_markers"):
        return None  # the words before do not muse: an instruction to someone else
    if _is_repeat(normalize(tail).split()) and has_domain_content(normalize(before), VOCABULARY):
        return None  # "zoom in, actually, a bit more": more of the request before, not a repeat
    named = list(_STRUCTURE.finditer(before))
    if _PRONOUN.search(tail) and named and not _STRUCTURE.search(tail):
        noun = named[-1].group(0)
        noun = noun if noun.startswith("the ") else "the " + noun
        tail = _PRONOUN.sub(noun, tail, count=1)
    planes = _PLANE.findall(before)
    if planes and not _PLANE.search(tail) and not _STRUCTURE.search(tail):
        # "the axial, I guess, take it up to, what, eighty? Yeah, eighty.": the plane named
        # while thinking aloud is what "it" or the bare amount is about
        if _PRONOUN.search(tail) and _SLICE_MOVE.search(tail):  # not "leave it", "rotate it"
            tail = _PRONOUN.sub(f"the {planes[-1]}", tail, count=1)
        elif re.fullmatch(r"[+-]?\d+", normalize(tail)):
            tail = f"{planes[-1]} {tail}"
    return tail


def _after_a_remark(text: str) -> str | None:
    """The last clause, when the clauses before it name nothing the console shows ("Ah,
    wrong one. Back to where we were"); None otherwise."""
    parts = [p for p in _CLAUSE_BREAK.split(text.strip().lower()) if p]
    if len(parts) < 2 or has_domain_content(normalize(" ".join(parts[:-1])), VOCABULARY):
        return None
    return parts[-1]


def _plan(steps: Sequence[Step]) -> list[tuple[str, str]]:
    return [(s.action_id, repr(sorted(dict(s.params).items()))) for s in steps]


def _agents(steps: Sequence[Step]) -> set[str]:
    return {s.action_id.split(".", 1)[0] for s in steps}


def _says_more(a: Sequence[Step], b: Sequence[Step]) -> bool:
    """Plan ``a`` is plan ``b`` with more said: the same actions, every parameter of ``b``
    in ``a`` with the same value or a larger list, and something more."""
    if len(a) > len(b) and b and all(
            any(sa.action_id == sb.action_id and _params_within(sb.params, sa.params)
                for sa in a) for sb in b):
        return True  # "left 20 and up 10": two moves read, one kept by the other tier
    if [s.action_id for s in a] != [s.action_id for s in b]:
        return False
    more = False
    for sa, sb in zip(a, b, strict=True):
        pa, pb = dict(sa.params), dict(sb.params)
        for k, v in pb.items():
            if k not in pa:
                return False
            if isinstance(v, (list, tuple)) and isinstance(pa[k], (list, tuple)):
                if not set(v) <= set(pa[k]):
                    return False
                more = more or set(pa[k]) > set(v)
            elif pa[k] != v:
                return False
        more = more or bool(set(pa) - set(pb))
    return more


def _same_shape(a: Sequence[Step], b: Sequence[Step]) -> bool:
    """The same actions with the same parameter names: plans that differ only in values
    (an amount, a slice, which structures). The grammar reads values from the words; an
    exemplar match only knows which action is meant, so it never overrides them."""
    return [s.action_id for s in a] == [s.action_id for s in b] and all(
        set(dict(x.params)) == set(dict(y.params)) for x, y in zip(a, b, strict=True))


def _params_within(small: Any, big: Any) -> bool:
    return all(k in dict(big) and dict(big)[k] == v for k, v in dict(small).items())


def apply(interp: Interpretation, registry: CommandRegistry, actor: Actor | None = None,
          memory: Memory | None = None) -> CommandResult | None:
    """Dispatch the plan (in DAG order) and update memory. Returns None when nothing ran."""
    memory = memory if memory is not None else interp.memory
    if interp.empty:
        # Re-select the previous agent; every overlay keeps its state. Selecting an agent is
        # not an action (nothing to undo or audit), so it is set on the state directly.
        prev = interp.decision.agent
        if prev is not None and registry.state.agent != prev:
            registry.state.apply(agent=prev)
        return None
    if interp.valid and interp.decision.undo:
        result = registry.undo(actor or Actor(source="voice"))
        if result.ok and result.steps and memory is not None:
            memory.remember("", result.steps[-1].action_id.split(".", 1)[0])
        return result
    if not interp.valid or not interp.decision.steps:
        return None
    steps = order_steps(interp.decision.steps)
    result = registry.dispatch_plan(steps, actor or Actor(source="voice"))
    if result.ok and memory is not None:
        last_agent = steps[-1].action_id.split(".", 1)[0]
        memory.remember(interp.corrected, last_agent, interp.decision.reading)
    return result


__all__ = ["FastInterpreter", "Interpretation", "apply"]
