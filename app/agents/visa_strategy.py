"""The ``visa`` strategy: the reference system's all-LLM workflow, for side-by-side comparison.

DESIGN §3 item 5 and issue 4 item 5. An LLM *orchestrator* is shown the workflow functions
with their definitions, the decision rules and the current status, and answers with a
probability per function for what runs next; functions it leaves out get probability 0 and the
argmax runs. Every other stage is one LLM call as well: correct & validate, routing, and the
chosen agent's action/parameter decision. An invalid command loops back for new input, at
most ``max_invalid`` (3) times; in text mode a retry re-uses the same text or the next
provided alternative (audio mode: the next voice).

Deviations from "LLM only", each recorded in the diagnostics so the comparison stays honest:

* If the orchestrator's answer is unusable (timeout, garbage, all zeros) the rule table's
  function for that status runs, and ties are broken in favour of the rules.
* The agent's plan is validated through the command registry like the LLM tier's, so the
  reference workflow can be compared on the same state semantics and never applies garbage.
* A function whose input is missing (routing before any command) is skipped, and the whole
  workflow is capped at ``max_steps`` orchestrator turns.

``VisaStrategy(runtime).run(text, state, memory, alternatives=None)`` returns
``(decision, flow, invalid_cycles, stage_ms)``: the ``Decision`` (tier "visa"; its
diagnostics carry ``corrected``, the orchestrator's choices and every LLM call), the flow of
stages executed (e.g. ``["audio", "stt", "correct", "route", "IV", "end"]``), the number of
invalid loops, and milliseconds per stage (``orchestrator``, ``audio``, ``stt``, ``correct``,
``route``, ``decide``, ``total``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

from app.agents import prompts
from app.agents.decision import Decision, Memory
from app.agents.llm_tier import LLMTier
from app.agents.llm_types import LLMRuntime, ProgressFn, WarmHandle
from app.core.state import ConsoleState
from app.core.vocab import AGENTS

log = logging.getLogger(__name__)

FLOW_LABELS = {
    "record_audio": "audio", "speech_to_text": "stt", "correct_and_validate": "correct",
    "route_to_agent": "route", "IR_agent": "IR", "IV_agent": "IV", "AR_agent": "AR",
    "end": "end",
}
_INVALID = "last command invalid, need new input"
_DONE = "agent completed, workflow finished"


def choose_next(probs: dict[str, Any] | None, status: str) -> tuple[str, dict[str, float], bool]:
    """Complete the orchestrator's probabilities with 0 and take the argmax.

    Returns (function, completed probabilities, whether the rules decided). Ties go to the
    function the rules expect for this status; an answer with no positive probability (or
    none at all) falls back to the rules.
    """
    completed: dict[str, float] = {}
    for fn in prompts.VISA_FUNCTIONS:
        v = (probs or {}).get(fn, 0.0)
        completed[fn] = float(v) if isinstance(v, int | float) and not isinstance(v, bool) else 0.0
    rule = prompts.VISA_RULES.get(status, "end")
    best = max(completed.values())
    if best <= 0.0:
        return rule, completed, True
    top = [fn for fn, v in completed.items() if v == best]
    return (rule if rule in top else top[0]), completed, False


class VisaStrategy:
    name = "visa"

    def __init__(self, runtime: LLMRuntime, *, timeout_s: float = 20.0, max_invalid: int = 3,
                 max_steps: int = 30, orchestrator: str = "llm") -> None:
        if orchestrator not in ("llm", "rules"):
            raise ValueError("orchestrator must be 'llm' or 'rules'")
        self.runtime = runtime
        self.timeout_s = timeout_s
        self.max_invalid = max_invalid
        self.max_steps = max_steps
        self.orchestrator = orchestrator  # "rules": skip the orchestrator LLM (a cheaper variant)
        self.tier = LLMTier(runtime, timeout_s=timeout_s, progressive=False)

    def warm(self, progress: ProgressFn | None = None, *, background: bool = True) -> WarmHandle:
        return self.runtime.warm(prompts.visa_prompts(), progress, background=background)

    # -- stages ----------------------------------------------------------------------------
    def _orchestrate(self, status: str, diag: dict[str, Any], seen: set[tuple[str, str]]
                     ) -> str:
        if self.orchestrator == "rules":
            fn = prompts.VISA_RULES.get(status, "end")
            diag["orchestrator"].append({"status": status, "chosen": fn, "rules": True})
            return fn
        sp = prompts.VISA_ORCHESTRATOR
        res = self.runtime.complete_json(sp.stage, sp.system, f"status: {status}",
                                         prompts.visa_orchestrator_schema(), 96, self.timeout_s,
                                         examples=sp.examples)
        diag["llm_calls"].append(res.trace())
        fn, probs, by_rules = choose_next(res.data if res.ok else None, status)
        guard = False
        if (status, fn) in seen and fn != prompts.VISA_RULES.get(status):
            # The same choice in the same status again: it made no progress last time, so
            # the decision rules break the loop (a small model can otherwise cycle forever).
            fn, by_rules, guard = prompts.VISA_RULES.get(status, "end"), True, True
        seen.add((status, fn))
        diag["orchestrator"].append({
            "status": status, "chosen": fn, "rules": by_rules, "loop_guard": guard,
            "probs": {k: v for k, v in probs.items() if v > 0}, "error": res.error,
            "cache": res.cache, "ms": round(res.timings.total_ms, 1)})
        return fn

    def _correct(self, text: str, memory: Memory, diag: dict[str, Any]) -> tuple[str, bool, str]:
        sp = prompts.VISA_CORRECT
        user = f"command: {text.strip()}"
        res = self.runtime.complete_json(sp.stage, sp.system, user, prompts.visa_correct_schema(),
                                         96, self.timeout_s, examples=sp.examples)
        diag["llm_calls"].append(res.trace())
        if not res.ok or res.data is None:
            return text, False, ("The language model did not answer in time."
                                 if res.error == "timeout" else
                                 "The command could not be checked.")
        corrected = str(res.data.get("command") or text).strip() or text
        valid = bool(res.data.get("valid"))
        return corrected, valid, "" if valid else "That is not something the console can do."

    def _route(self, corrected: str, memory: Memory, diag: dict[str, Any]) -> str | None:
        sp = prompts.VISA_ROUTE
        user = f"last agent: {memory.last_agent or 'none'}\ncommand: {corrected}"
        res = self.runtime.complete_json(sp.stage, sp.system, user, prompts.visa_route_schema(),
                                         32, self.timeout_s, examples=sp.examples)
        diag["llm_calls"].append(res.trace())
        agent = (res.data or {}).get("agent") if res.ok else None
        return agent if agent in AGENTS else None

    # -- the workflow ------------------------------------------------------------------------
    def run(self, text: str, state: ConsoleState, memory: Memory,
            alternatives: Sequence[str] | None = None
            ) -> tuple[Decision, list[str], int, dict[str, float]]:
        t_run = time.monotonic()
        inputs = [text or "", *(alternatives or [])]
        flow: list[str] = []
        stage_ms: dict[str, float] = {k: 0.0 for k in
                                      ("orchestrator", "audio", "stt", "correct", "route",
                                       "decide")}
        diag: dict[str, Any] = {"orchestrator": [], "llm_calls": [], "invalid_reasons": [],
                                "skipped": []}
        if not (text or "").strip() and not any(a.strip() for a in alternatives or []):
            # Silence: the memory rule (DESIGN §4) handles it, as in the fast strategy.
            diag.update(empty=True, corrected="")
            stage_ms["total"] = round((time.monotonic() - t_run) * 1000, 1)
            return (Decision(False, tier=self.name, reason="I heard nothing to do.",
                             diagnostics=diag), ["audio", "stt", "correct", "end"], 0, stage_ms)

        status = "no audio recorded"
        seen: set[tuple[str, str]] = set()
        attempt = 0
        cycles = 0
        recorded: str | None = None
        transcript: str | None = None
        corrected: str | None = None
        agent: str | None = None
        final: Decision | None = None
        reason = "That is not something the console can do."

        def invalid(why: str) -> str:
            nonlocal cycles, reason, recorded, transcript, corrected, agent
            reason = why
            diag["invalid_reasons"].append(why)
            recorded = transcript = corrected = agent = None
            if cycles >= self.max_invalid:
                return "give up"
            cycles += 1
            return _INVALID

        for _ in range(self.max_steps):
            t0 = time.monotonic()
            fn = self._orchestrate(status, diag, seen)
            stage_ms["orchestrator"] += (time.monotonic() - t0) * 1000
            label = FLOW_LABELS[fn]
            t0 = time.monotonic()
            if fn == "end":
                flow.append(label)
                break
            if fn == "record_audio":
                recorded = inputs[min(attempt, len(inputs) - 1)]
                attempt += 1
                transcript = corrected = agent = final = None
                status = "audio recorded, not transcribed"
                stage_ms["audio"] += (time.monotonic() - t0) * 1000
            elif fn == "speech_to_text":
                if recorded is None:
                    diag["skipped"].append(fn)
                    status = "no audio recorded"
                    continue
                transcript = recorded  # text mode: the recording is the transcript
                status = "command recorded"
                stage_ms["stt"] += (time.monotonic() - t0) * 1000
            elif fn == "correct_and_validate":
                if transcript is None:
                    diag["skipped"].append(fn)
                    continue
                fixed, ok, why = self._correct(transcript, memory, diag)
                stage_ms["correct"] += (time.monotonic() - t0) * 1000
                flow.append(label)
                diag["corrected"] = fixed
                if ok:
                    corrected = fixed
                    status = "command valid, agent not chosen"
                else:
                    status = invalid(why)
                    if status == "give up":
                        break
                continue
            elif fn == "route_to_agent":
                if corrected is None:
                    diag["skipped"].append(fn)
                    continue
                agent = self._route(corrected, memory, diag)
                stage_ms["route"] += (time.monotonic() - t0) * 1000
                flow.append(label)
                diag["route"] = agent
                if agent is None:
                    status = invalid("The command could not be given to an agent.")
                    if status == "give up":
                        break
                else:
                    status = f"command routed to the {agent} agent"
                continue
            else:  # an agent
                want = label
                if corrected is None:
                    diag["skipped"].append(fn)
                    continue
                d = self.tier.ask(corrected, state, memory, (want,), self.timeout_s)
                stage_ms["decide"] += (time.monotonic() - t0) * 1000
                flow.append(label)
                diag["llm_calls"].extend(d.diagnostics.get("llm_calls", []))
                diag["decide"] = {k: v for k, v in d.diagnostics.items()
                                  if k not in ("llm_calls", "llm")}
                if d.valid:
                    final = d
                    agent = want
                    status = _DONE
                else:
                    status = invalid(d.reason)
                    if status == "give up":
                        break
                continue
            flow.append(label)
        else:
            diag["invalid_reasons"].append("The workflow did not finish.")
            final = None
        if not flow or flow[-1] != "end":
            flow.append("end")
        stage_ms = {k: round(v, 1) for k, v in stage_ms.items()}
        stage_ms["total"] = round((time.monotonic() - t_run) * 1000, 1)
        diag.setdefault("corrected", corrected or transcript or text)
        if corrected is not None:
            diag["corrected"] = corrected
        if final is not None and final.valid:
            merged = {**final.diagnostics, **diag}
            decision = Decision(True, list(final.steps), agent=final.agent or agent,
                                confidence=final.confidence, tier=self.name,
                                reason="Decided by the visa workflow.", diagnostics=merged)
        else:
            decision = Decision(False, tier=self.name, reason=reason, diagnostics=diag)
        log.debug("visa flow %s, %d invalid cycles", flow, cycles)
        return decision, flow, cycles, stage_ms
