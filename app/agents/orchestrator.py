"""The orchestrator: one command in, state changed through the registry, one trace record out.

It runs a strategy (``fast``: normalise → correct → validate → route → tiered decision;
``visa``: the reference all-LLM workflow), dispatches the decided plan through the command
registry (so RBAC, undo and audit apply), keeps the memory of DESIGN §4, and writes the trace
record of DESIGN §5.3. It never raises on bad input: every failure becomes a plain message.
"""

from __future__ import annotations

import functools
import itertools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from app.agents.ask_back import (
    QUESTION_TIMEOUT_S,
    PendingQuestion,
    is_answer_phrase,
    make_question,
    resolve,
)
from app.agents.decision import Decision, Memory
from app.core.registry import Actor, CommandRegistry, CommandResult, Step
from app.core.state import CaseContext, ConsoleState

log = logging.getLogger(__name__)


@dataclass
class Reply:
    """What the console says back (status strip, TTS)."""

    ok: bool
    text: str


# A spoken command is refused, not acted on, when the recogniser itself doubted it (per-token
# log-probability below UNSURE_LOGPROB) and little of it is console words (domain coverage
# below UNSURE_COVERAGE): "Iron-of-date, lung." or "How many a man love you be making did we
# give?" are garbled speech, and acting on the one console word in them does the wrong thing.
# Measured on the dev split's audio (first hearings, 3 voices, clean and 10 dB): of 28 such
# hearings 24 would have done something wrong; refusing them (a retry hears the next voice)
# moved single-pass success 848 → 851 and multi-pass 896 → 909 of 1,260 commands.
UNSURE_LOGPROB = -0.8
UNSURE_COVERAGE = 0.6


@functools.lru_cache(maxsize=1)
def _scorer() -> Any:
    from app.language.validation import CommandScorer

    return CommandScorer()  # built once: its known-word set is a union of large sets


def _unsure_hearing(stt: dict[str, Any] | None, corrected: str) -> dict[str, float] | None:
    """The recogniser's doubt and the command's domain coverage when both are low, else None."""
    lp = (stt or {}).get("logprob")
    if lp is None or float(lp) >= UNSURE_LOGPROB:
        return None
    cov = _scorer().coverage(corrected)
    if cov >= UNSURE_COVERAGE:
        return None
    return {"logprob": round(float(lp), 3), "coverage": round(cov, 3)}


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 2)


class Orchestrator:
    def __init__(self, registry: CommandRegistry, strategy: str = "fast",
                 interpreter: Any | None = None, visa: Any | None = None,
                 actor: Actor | None = None) -> None:
        if strategy not in ("fast", "visa"):
            raise ValueError(f"unknown strategy {strategy!r}; use fast or visa")
        self.registry = registry
        self.strategy = strategy
        self.actor = actor or Actor(role="surgeon", source="voice")
        self.memory = Memory()
        self._interpreter = interpreter
        self._visa = visa
        self._ids = itertools.count(1)
        self.last_reply: Reply | None = None
        # The question the console asked and its candidate plans (ask, don't guess).
        self.pending: PendingQuestion | None = None
        self.question_timeout_s = QUESTION_TIMEOUT_S
        # A touch or hotkey action changes the state the question was asked about: drop it.
        add_hook = getattr(registry, "add_audit_hook", None)
        if callable(add_hook):
            add_hook(self._on_audit)
        self.on_record: list[Callable[[dict[str, Any]], None]] = []

    @property
    def state(self) -> ConsoleState:
        return self.registry.state

    # -- lazily built strategies ----------------------------------------------------------
    @property
    def interpreter(self) -> Any:
        if self._interpreter is None:
            from app.agents.factory import build_interpreter

            self._interpreter = build_interpreter()
        return self._interpreter

    @property
    def visa(self) -> Any:
        if self._visa is None:
            from app.agents.llm_runtime import make_runtime
            from app.agents.visa_strategy import VisaStrategy

            self._visa = VisaStrategy(make_runtime({}))
        return self._visa

    def wait_ready(self, progress: Callable[[str], None] | None = None) -> list[str]:
        """Warm every enabled tier of the strategy now and wait for it (DESIGN §5.4: an
        evaluation waits until every tier is ready, so the decisions do not depend on how far
        a background warm-up had got). Returns the tiers that could not get ready."""
        if self.strategy != "fast":
            return []
        not_ready: list[str] = []
        for tier in getattr(self.interpreter, "tiers", ()):
            name = getattr(tier, "name", "?")
            if progress is not None:
                progress(name)
            try:
                if hasattr(tier, "start_warm") and hasattr(tier, "ready"):
                    tier.warm()  # synchronous; a no-op when ready
                    ok = bool(tier.ready())
                elif hasattr(tier, "warm"):
                    handle = tier.warm(background=False)
                    ok = getattr(handle, "error", None) is None
                else:
                    ok = True
            except Exception as exc:  # noqa: BLE001 - a tier that cannot warm abstains
                log.warning("the %s tier could not get ready: %s", name, exc)
                ok = False
            if not ok:
                not_ready.append(name)
        return not_ready

    # -- sessions -------------------------------------------------------------------------
    def reset(self, context: CaseContext | None = None) -> None:
        """Start a new session: the initial state for this case, memory and undo cleared."""
        context = context or self.state.case
        fresh = ConsoleState()
        fresh.set_case(context)
        self.state.restore(fresh)
        self.memory = Memory()
        self.pending = None
        self.registry._undo.clear()

    # -- one command ----------------------------------------------------------------------
    def handle_text(self, text: str, cmd_id: str | None = None, stt: dict[str, Any] | None = None,
                    alternatives: list[str] | None = None) -> dict[str, Any]:
        t0 = time.perf_counter()
        cmd_id = cmd_id if cmd_id is not None else str(next(self._ids))
        text = text if isinstance(text, str) else ""
        flow: list[str] = ["audio", "stt"] if stt is not None else []
        stages: dict[str, Any] = {}
        if stt is not None:
            stages["stt"] = {"text": stt.get("text", text), "ms": stt.get("ms", 0)}
            if stt.get("logprob") is not None:  # the recogniser's confidence, for audits
                stages["stt"]["logprob"] = round(float(stt["logprob"]), 3)
            if stt.get("second"):  # a second model was asked (app.voice.stt.second_opinion)
                stages["stt"]["second"] = stt["second"]
            if stt.get("domain"):  # the phrasing model's hearing (app.voice.domain_asr)
                stages["stt"]["domain"] = stt["domain"]
        try:
            if self.strategy == "visa":
                record = self._run_visa(text, stages, flow, alternatives)
            else:
                record = self._run_fast(text, stages, flow, stt)
        except Exception as exc:  # noqa: BLE001 - the console keeps running whatever happens
            log.exception("command failed unexpectedly")
            stages.setdefault("correct", {"text": text, "valid": False, "ms": 0})
            record = {"tier": self.strategy, "flow": [*flow, "end"], "invalid_cycles": 0,
                      "reply": Reply(False, "Sorry, that command failed because of an internal "
                                     f"error ({type(exc).__name__}); nothing was changed.")}
        reply: Reply = record.pop("reply")
        self.last_reply = reply
        out = {
            "id": cmd_id,
            "input": {"text": text} if stt is None else {"audio": stt.get("audio"), "text": text},
            "stages": stages,
            "tier": record["tier"],
            "flow": record["flow"],
            "invalid_cycles": record["invalid_cycles"],
            "total_ms": _ms(t0) + (stt.get("ms", 0) if stt else 0),
            "state": self.state.snapshot(),
            "reply": {"ok": reply.ok, "text": reply.text},
        }
        if "diagnostics" in record:
            out["diagnostics"] = record["diagnostics"]
        if "question" in record:
            out["question"] = record["question"]
        for fn in self.on_record:
            fn(out)
        return out

    # -- strategies -----------------------------------------------------------------------
    def _on_audit(self, rec: Any) -> None:
        if getattr(rec, "actor", None) is not self.actor:
            self.pending = None

    def _answer(self, text: str, stages: dict[str, Any], flow: list[str]
                ) -> dict[str, Any] | None:
        """The record for an answer to the pending question, or None when ``text`` is not one
        (then the question is dropped and ``text`` is read as a new command)."""
        q, self.pending = self.pending, None
        if q is None or q.expired(timeout_s=self.question_timeout_s):
            return None
        from app.agents.checks import addressed_to_person

        if addressed_to_person(text):
            return None  # "Yes, Tom." answers Tom, not the console
        pick = resolve(q, text)
        if pick is None:
            return None
        stages["correct"] = {"text": text, "valid": pick != "cancel", "ms": 0.0,
                             "answers": q.text}
        flow.append("correct")
        if pick == "cancel":
            return {"tier": "ask", "flow": [*flow, "end"], "invalid_cycles": 0,
                    "reply": Reply(False, "Okay, nothing was changed.")}
        chosen = q.options[int(pick)]
        stages["route"] = {"agent": chosen.agent, "ms": 0.0}
        flow.append("route")
        decision = replace(chosen, tier="ask", diagnostics={
            **(chosen.diagnostics or {}), "answered": q.labels[int(pick)],
            "asked_tier": chosen.tier})
        # the question was one invalid loop before this outcome (MOEM multi-pass)
        return self._dispatch(decision, q.labels[int(pick)], stages, flow, decide_ms=0.0,
                              invalid_cycles=1)

    def _run_fast(self, text: str, stages: dict[str, Any], flow: list[str],
                  stt: dict[str, Any] | None = None) -> dict[str, Any]:
        if self.pending is not None:
            answered = self._answer(text, stages, flow)
            if answered is not None:
                return answered
        elif is_answer_phrase(text):
            # a touch button or "option 2" after the question lapsed: not slice 2
            stages["correct"] = {"text": text, "valid": False, "ms": 0.0}
            return {"tier": "ask", "flow": [*flow, "correct", "end"], "invalid_cycles": 0,
                    "reply": Reply(False, "There is no question to answer now; nothing was "
                                   "changed.")}
        interp = self.interpreter.interpret(text, self.state, self.memory)
        sm = dict(getattr(interp, "stage_ms", {}) or {})
        decision: Decision | None = interp.decision
        correct_ms = round(sum(sm.get(k, 0.0) for k in ("normalize", "correct", "validate")), 2)
        stages["correct"] = {"text": interp.corrected, "valid": bool(interp.valid),
                             "ms": correct_ms}
        flow.append("correct")
        if getattr(interp, "empty", False):
            return self._empty(stages, flow)
        if not interp.valid or decision is None or not decision.valid:
            reason = (decision.reason if decision is not None and decision.reason else
                      getattr(interp, "reason", "") or "That is not a console command.")
            stages["correct"]["valid"] = False
            tier = decision.tier if decision is not None else "lexicon"
            from app.agents.plan_words import plan_phrase

            question = make_question(getattr(interp, "candidates", []) or [], plan_phrase)
            if question is not None:
                # ask, don't guess: one short question, nothing changed until it is answered
                self.pending = question
                return {"tier": tier, "flow": [*flow, "end"], "invalid_cycles": 0,
                        "question": question.to_dict(),
                        "reply": Reply(False, question.text),
                        **({"diagnostics": decision.diagnostics}
                           if decision is not None and decision.diagnostics else {})}
            return {"tier": tier, "flow": [*flow, "end"], "invalid_cycles": 0,
                    "reply": Reply(False, _plain_invalid(reason)),
                    **({"diagnostics": decision.diagnostics}
                       if decision is not None and decision.diagnostics else {})}
        unsure = _unsure_hearing(stt, interp.corrected)
        if unsure is not None:
            stages["correct"]["valid"] = False
            stages["correct"]["unsure"] = unsure
            return {"tier": decision.tier, "flow": [*flow, "end"], "invalid_cycles": 0,
                    "reply": Reply(False, f'I am not sure I heard that right ("{text}"). '
                                   "Please say it again."),
                    "diagnostics": {"unsure_hearing": unsure}}
        stages["route"] = {"agent": decision.agent, "ms": round(sm.get("route", 0.0), 2)}
        flow.append("route")
        if decision.undo:
            from app.language import has_any
            from app.language.normalize import tokens_of

            if has_any(tokens_of(interp.corrected), "position_back_phrases"):
                back = self._back_to_position(decision)
                if back is not None:
                    return self._dispatch(back, interp.corrected, stages, flow,
                                          decide_ms=round(sm.get("decide", 0.0), 2),
                                          invalid_cycles=0)
                stages["correct"]["valid"] = False  # no slice move to go back on: say so
                return {"tier": decision.tier, "flow": [*flow, "end"], "invalid_cycles": 0,
                        "reply": Reply(False, "There is no earlier slice move to go back "
                                       "to; nothing was changed.")}
            return self._undo(decision, interp.corrected, stages, flow)
        return self._dispatch(decision, interp.corrected, stages, flow,
                              decide_ms=round(sm.get("decide", 0.0), 2), invalid_cycles=0)

    def _run_visa(self, text: str, stages: dict[str, Any], flow: list[str],
                  alternatives: list[str] | None) -> dict[str, Any]:
        decision, vflow, cycles, sm = self.visa.run(text, self.state, self.memory,
                                                     alternatives=alternatives)
        corrected = decision.diagnostics.get("corrected", text)
        stages["correct"] = {"text": corrected, "valid": bool(decision.valid),
                             "ms": round(sm.get("correct", 0.0), 2)}
        tail = [s for s in vflow if s not in ("audio", "stt")]
        if not decision.valid:
            if decision.diagnostics.get("empty"):
                return self._empty(stages, [*flow, *[s for s in tail if s != "end"]])
            return {"tier": "visa", "flow": [*flow, *tail] if tail else [*flow, "correct", "end"],
                    "invalid_cycles": cycles, "reply": Reply(False, _plain_invalid(decision.reason)),
                    "diagnostics": decision.diagnostics}
        stages["route"] = {"agent": decision.agent, "ms": round(sm.get("route", 0.0), 2)}
        rec = self._dispatch(decision, corrected, stages, [], decide_ms=round(
            sm.get("decide", 0.0), 2), invalid_cycles=cycles)
        rec["flow"] = [*flow, *tail] if tail else [*flow, "correct", "route", *rec["flow"]]
        return rec

    # -- shared ---------------------------------------------------------------------------
    def _empty(self, stages: dict[str, Any], flow: list[str]) -> dict[str, Any]:
        """An empty or silent command re-selects the previous agent and keeps its state."""
        prev = self.memory.last_agent
        if prev is None:
            stages["correct"]["valid"] = False
            return {"tier": "memory", "flow": [*flow, "end"], "invalid_cycles": 0,
                    "reply": Reply(False, "I heard nothing to do.")}
        self.state.apply(agent=prev)
        stages["route"] = {"agent": prev, "ms": 0.0}
        stages["decide"] = {"actions": [], "ms": 0.0}
        return {"tier": "memory", "flow": [*flow, "route", prev, "end"], "invalid_cycles": 0,
                "reply": Reply(True, f"Still on {_AGENT_NAMES.get(prev, prev)}.")}

    def _undo(self, decision: Decision, corrected: str, stages: dict[str, Any],
              flow: list[str]) -> dict[str, Any]:
        """"undo that": the registry restores the state before its last command (the same
        undo as the touch panel's, with its role check and audit record)."""
        t0 = time.perf_counter()
        result = self.registry.undo(self.actor)
        undone = [f"{s.action_id}" for s in result.steps]
        stages["decide"] = {"actions": [], "ms": 0.0, "apply_ms": _ms(t0), "undone": undone}
        agent = result.steps[-1].action_id.split(".", 1)[0] if result.steps else decision.agent
        stages["route"]["agent"] = agent
        record: dict[str, Any] = {"tier": decision.tier,
                                  "flow": [*flow, *([agent] if agent else []), "end"],
                                  "invalid_cycles": 0}
        if not result.ok:
            stages["decide"]["error"] = result.message
            record["reply"] = Reply(False, result.message)
            return record
        self.memory.remember("", agent)  # not itself a command to repeat
        from app.agents.plan_words import plan_phrase

        # the trace form spells parameters as spoken ("+30"), not as registry values
        plain = [Step(f"{a['agent']}.{a['action']}", a.get("params") or {})
                 for a in result.actions()]
        what = plan_phrase(plain) or "the last command"
        record["reply"] = Reply(True, f"Undone: {what}.")
        return record

    def _back_to_position(self, decision: Decision) -> Decision | None:
        """"Back to where we were": the slices the last CT move changed go back (a new,
        undoable command); the view mode and main plane stay. None: no move to go back on."""
        before = self.registry.before_last_move()
        if before is None:
            return None
        now, then = self.state.iv.pos_dict(), before.iv.pos_dict()
        moved = {p: then[p] for p in now if p in then and then[p] != now[p]}
        if not moved:
            return None
        steps = [Step("IV.SHOW_MOVE", moved)]
        if self.state.iv.mode == "zoom_view" and self.state.iv.main:
            steps.append(Step("IV.ZOOM_IN_MOVE", {"plane": self.state.iv.main}))
        return replace(decision, steps=steps, agent="IV", undo=False, reading=None,
                       diagnostics={**(decision.diagnostics or {}), "back_to": moved})

    def _dispatch(self, decision: Decision, corrected: str, stages: dict[str, Any],
                  flow: list[str], decide_ms: float, invalid_cycles: int) -> dict[str, Any]:
        t0 = time.perf_counter()
        # Composite plans run in dependency order (layered topological sort, DESIGN §3/issue 4).
        from app.agents.planner import PlanCycleError, order_steps

        try:
            steps = order_steps(decision.steps)
        except PlanCycleError as exc:
            stages["decide"] = {"actions": [], "ms": decide_ms, "error": str(exc)}
            return {"tier": decision.tier, "flow": [*flow, "end"],
                    "invalid_cycles": invalid_cycles, "reply": Reply(False, str(exc))}
        result: CommandResult = self.registry.dispatch_plan(steps, self.actor)
        apply_ms = _ms(t0)
        stages["decide"] = {"actions": result.actions(), "ms": decide_ms, "apply_ms": apply_ms}
        if decision.confidence:
            stages["decide"]["confidence"] = round(float(decision.confidence), 3)
        agents = decision.agents or ([decision.agent] if decision.agent else [])
        record: dict[str, Any] = {"tier": decision.tier, "flow": [*flow, *agents, "end"],
                                  "invalid_cycles": invalid_cycles}
        if decision.diagnostics:
            record["diagnostics"] = decision.diagnostics
        if not result.ok:
            stages["decide"]["error"] = result.message
            record["reply"] = Reply(False, result.message)
            return record
        self.memory.remember(corrected, agents[-1] if agents else decision.agent,
                             decision.reading)
        text = result.message
        if result.notes:
            text += " " + " ".join(result.notes)
        record["reply"] = Reply(True, text)
        return record


_AGENT_NAMES = {"IR": "patient information", "IV": "the CT viewer", "AR": "the 3D model"}


def _plain_invalid(reason: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        return "That is not something the console can do."
    return reason if reason.endswith(".") else reason + "."
