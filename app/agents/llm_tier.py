"""The LLM interpreter tier (DESIGN §3 tier 4): a constrained JSON plan, validated twice.

``LLMTier`` implements the ``Tier`` protocol (name ``"llm"``). For a corrected command it

1. picks the decision stage by progressive disclosure (``prompts.guess_agents``): only the
   likely agent's actions are shown, with the "all" stage for composites and unclear commands;
2. asks the runtime for ``{"valid": bool, "steps": [{"action": id, "params": {...}}]}`` under a
   JSON-schema grammar generated from the registry's parameter schemas;
3. validates every step through ``CommandRegistry.validate`` (the same code as dispatch) and
   dry-runs the plan on a copy of the state, so "valid" means "would apply";
4. returns a ``Decision``. Anything that is not a clean, applicable plan - garbage, truncated
   JSON, a timeout, an unknown action, an out-of-range or unknown parameter - becomes an
   *invalid* decision with a plain reason and ``diagnostics`` saying why. It never returns a
   plan it has not validated, so a bad answer cannot change the state.

Streaming (SurgicalRoomAgent's "generate while execute", improved): ``decide_streaming``
feeds tokens to :class:`StreamingPlanParser` and hands each step to a callback the moment its
JSON object closes - *after* that step alone passed registry validation (the paper executes
unvalidated tasks). The final ``Decision`` confirms or rejects the plan as a whole.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from app.agents import prompts
from app.agents.decision import Decision, Memory
from app.agents.llm_types import (
    ERR_TIMEOUT,
    ERR_UNAVAILABLE,
    LLMResult,
    LLMRuntime,
    ProgressFn,
    StagePrompt,
    WarmHandle,
)
from app.core.params import CommandError
from app.core.registry import CommandRegistry, Step
from app.core.state import ConsoleState
from app.core.vocab import AGENTS

log = logging.getLogger(__name__)

StepFn = Callable[[Step], None]


# ------------------------------------------------------------------ streaming parser
class StreamingPlanParser:
    """Incremental parser for a plan ``{"valid": ..., "steps": [{...}, {...}]}``.

    ``feed(text)`` returns the step objects completed by that text, in order, as soon as each
    one's closing brace arrives; ``valid`` is known as soon as its literal is complete. Strings
    (with escapes, braces and quotes inside them) are tracked, so only real structure counts.
    A step whose text is not valid JSON is recorded in ``errors`` and not returned.
    """

    def __init__(self) -> None:
        self.buffer = ""
        self.steps: list[dict[str, Any]] = []
        self.errors: list[str] = []
        self.valid: bool | None = None
        self.steps_closed = False
        self.done = False
        self._i = 0
        self._stack: list[str] = []
        self._in_str = False
        self._esc = False
        self._str_start = 0
        self._pending_key: str | None = None
        self._key: str | None = None
        self._in_steps = False
        self._item_start: int | None = None

    def feed(self, text: str) -> list[dict[str, Any]]:
        self.buffer += text
        out: list[dict[str, Any]] = []
        buf = self.buffer
        while self._i < len(buf) and not self.done:
            c = buf[self._i]
            depth = len(self._stack)
            if self._in_str:
                if self._esc:
                    self._esc = False
                elif c == "\\":
                    self._esc = True
                elif c == '"':
                    self._in_str = False
                    if depth == 1:
                        try:
                            self._pending_key = json.loads(buf[self._str_start:self._i + 1])
                        except json.JSONDecodeError:
                            self._pending_key = None
            elif c == '"':
                self._in_str, self._str_start = True, self._i
            elif c == ":" and depth == 1:
                self._key = self._pending_key
            elif c == "," and depth == 1:
                self._key = None
            elif c in "{[":
                self._stack.append(c)
                if c == "[" and depth == 1 and self._key == "steps":
                    self._in_steps = True
                elif c == "{" and depth == 2 and self._in_steps:
                    self._item_start = self._i
            elif c in "}]":
                if c == "}" and depth == 3 and self._in_steps and self._item_start is not None:
                    chunk = buf[self._item_start:self._i + 1]
                    try:
                        obj = json.loads(chunk)
                    except json.JSONDecodeError as exc:
                        self.errors.append(f"step {len(self.steps) + 1}: {exc.msg}")
                    else:
                        if isinstance(obj, dict):
                            self.steps.append(obj)
                            out.append(obj)
                    self._item_start = None
                if self._stack:
                    self._stack.pop()
                if c == "]" and depth == 2 and self._in_steps:
                    self._in_steps, self.steps_closed = False, True
                if not self._stack and depth >= 1:
                    self.done = True
            elif depth == 1 and self._key == "valid" and self.valid is None and c in "tf":
                word = "true" if c == "t" else "false"
                if len(buf) - self._i < len(word):
                    break  # wait for the rest of the literal
                if buf.startswith(word, self._i):
                    self.valid = word == "true"
                    self._i += len(word) - 1
            self._i += 1
        return out

    def result(self) -> dict[str, Any] | None:
        """The whole answer parsed, once complete; None while partial or when garbage."""
        try:
            data = json.loads(self.buffer)
        except json.JSONDecodeError:
            return None
        return data if isinstance(data, dict) else None


# ------------------------------------------------------------------ the tier
_ACTION_AGENT = {aid: a.agent for aid, a in prompts.ACTION_BY_ID.items()}


# Per agent: actions that take the overlay away, and actions that bring it (back) on.
_OFF = {"IR.HIDE", "IV.REMOVE", "AR.REMOVE"}
_ON = {"IR.SHOW", "IR.RESET", "IV.SHOW_MOVE", "IV.ZOOM_IN_MOVE", "IV.RESET", "AR.SHOW",
       "AR.RESET", "AR.ROTATE", "AR.ZOOM_IN"}


def contradiction(steps: Sequence[Step]) -> str:
    """Why a plan undoes itself ("IR.HIDE then IR.RESET"), or "" when it does not: one
    agent's overlay taken away and brought back (in either order), or the same action twice
    with different values where only one can hold (two views, two rotations)."""
    seen: dict[str, str] = {}
    for st in steps:
        agent = st.action_id.split(".", 1)[0]
        kind = "off" if st.action_id in _OFF else "on" if st.action_id in _ON else ""
        if kind and seen.get(agent) and seen[agent] != kind:
            return f"{agent} is both taken away and shown in one plan"
        if kind:
            seen[agent] = kind
    for a, b in zip(steps, steps[1:], strict=False):
        if a.action_id == b.action_id == "AR.ROTATE" and a.params != b.params:
            return "two different rotations in one plan"
    return ""


def _plain_error(res: LLMResult) -> str:
    if res.error == ERR_TIMEOUT:
        return "The language model did not answer in time."
    if res.error == ERR_UNAVAILABLE:
        return res.detail or "The language model is not available."
    return "The language model gave no usable answer."


class LLMTier:
    """Tier 4: the LLM decides, the registry validates. See the module docstring."""

    name = "llm"

    def __init__(self, runtime: LLMRuntime, *, timeout_s: float = 12.0, max_tokens: int = 160,
                 progressive: bool = True, fallback_to_all: bool = True,
                 confidence: float = 0.75) -> None:
        self.runtime = runtime
        self.timeout_s = timeout_s
        self.max_tokens = max_tokens
        self.progressive = progressive
        self.fallback_to_all = fallback_to_all
        self.confidence = confidence
        # validate() needs only the action table; the state here is never dispatched to.
        self._registry = CommandRegistry(ConsoleState())
        # While the start-up warm-up runs the model is loading or computing prefixes; a call
        # then would wait for the load and compute its own prefix (seconds, up to the
        # timeout), so the tier abstains at once and the fast tiers answer alone.
        self.abstain_while_warming = True
        self._warming: WarmHandle | None = None

    # -- warm-up ---------------------------------------------------------------------------
    def prompts(self) -> list[StagePrompt]:
        return prompts.all_decision_prompts() if self.progressive else [
            prompts.decision_prompt(AGENTS)]

    def warm(self, progress: ProgressFn | None = None, *, background: bool = True,
             first: str | None = None) -> WarmHandle:
        """Warm every decision stage; ``first`` (e.g. "decide.IV") ends up live in the cache."""
        stages = self.prompts()
        if first:
            stages.sort(key=lambda s: s.stage != first)
        handle = self.runtime.warm(stages, progress, background=background)
        self._warming = handle
        return handle

    @property
    def warming(self) -> bool:
        """A warm-up started by :meth:`warm` is still running (``decide`` abstains then)."""
        handle = self._warming
        return handle is not None and not handle.done

    def prewarm(self, state: ConsoleState, memory: Memory) -> WarmHandle:
        """Warm the likely next stage with the current context (call after each command).

        The likely stage is the last agent's (bare "zoom in", "more", "again" go there);
        only one context can be live at a time, so other stages pay their context on use.
        """
        agents = ((memory.last_agent,) if self.progressive and memory.last_agent in AGENTS
                  else AGENTS)
        sp = prompts.decision_prompt(agents)
        ctx = prompts.context_message(state, memory, prompts.stage_agents(sp.stage))
        return self.runtime.warm_context(sp, ctx)

    # -- Tier ------------------------------------------------------------------------------
    def decide(self, corrected: str, state: ConsoleState, memory: Memory) -> Decision | None:
        return self._decide(corrected, state, memory, None)

    def decide_streaming(self, corrected: str, state: ConsoleState, memory: Memory,
                         on_step: StepFn) -> Decision | None:
        """Like ``decide``, calling ``on_step`` with each validated step as it is generated."""
        return self._decide(corrected, state, memory, on_step)

    def _decide(self, corrected: str, state: ConsoleState, memory: Memory,
                on_step: StepFn | None) -> Decision | None:
        text = (corrected or "").strip()
        if not text:
            return None  # silence is the memory tier's business (DESIGN §4)
        if self.abstain_while_warming and self.warming:
            log.debug("LLM tier abstains on %r: the language model is still warming up", text)
            return None
        t0 = time.monotonic()
        deadline = t0 + self.timeout_s
        agents = prompts.guess_agents(text, memory) if self.progressive else AGENTS
        calls: list[dict[str, Any]] = []
        decision = self._ask(text, state, memory, agents, deadline, on_step, calls)
        if (decision.diagnostics.get("verdict") == "out_of_scope" and len(agents) == 1
                and self.fallback_to_all and deadline - time.monotonic() > 1.0):
            # The narrowed prompt could not express it: ask once more with every action.
            decision = self._ask(text, state, memory, AGENTS, deadline, on_step, calls)
        decision.diagnostics["llm_calls"] = calls
        decision.diagnostics["llm"] = calls[-1] if calls else {}
        decision.diagnostics["ms"] = round((time.monotonic() - t0) * 1000, 1)
        return decision

    def ask(self, text: str, state: ConsoleState, memory: Memory, agents: Sequence[str],
            timeout_s: float | None = None) -> Decision:
        """One decision call with exactly these agents' actions shown (no fallback).

        The visa strategy's per-agent stage uses this: its router has already chosen.
        """
        calls: list[dict[str, Any]] = []
        deadline = time.monotonic() + (self.timeout_s if timeout_s is None else timeout_s)
        decision = self._ask(text.strip(), state, memory, agents, deadline, None, calls)
        decision.diagnostics["llm_calls"] = calls
        decision.diagnostics["llm"] = calls[-1] if calls else {}
        return decision

    def _ask(self, text: str, state: ConsoleState, memory: Memory, agents: Sequence[str],
             deadline: float, on_step: StepFn | None, calls: list[dict[str, Any]]) -> Decision:
        sp = prompts.decision_prompt(agents)
        shown = prompts.stage_agents(sp.stage)
        schema = prompts.plan_schema(shown)
        emitter = _StepEmitter(self, shown, on_step) if on_step is not None else None
        res = self.runtime.complete_json(
            sp.stage, sp.system, prompts.command_message(text), schema, self.max_tokens,
            max(0.0, deadline - time.monotonic()), examples=sp.examples,
            context=prompts.context_message(state, memory, shown),
            on_text=emitter.feed if emitter is not None else None)
        calls.append(res.trace())
        diag: dict[str, Any] = {"stage": sp.stage, "agents_shown": list(shown)}
        if not res.ok or res.data is None:
            diag.update(error=res.error, detail=res.detail)
            return Decision(False, agent=None, confidence=0.0, tier=self.name,
                            reason=_plain_error(res), diagnostics=diag)
        return self.to_decision(res.data, state, shown, diag)

    # -- validation ------------------------------------------------------------------------
    def to_decision(self, data: Mapping[str, Any], state: ConsoleState,
                    agents: Sequence[str] = AGENTS, diag: dict[str, Any] | None = None
                    ) -> Decision:
        """Turn a model's plan into a Decision, validating every step and the whole plan."""
        diag = dict(diag or {})
        raw_steps = data.get("steps") if isinstance(data, Mapping) else None
        if not isinstance(raw_steps, list):
            diag.update(error="schema", detail="no steps list")
            return Decision(False, confidence=0.0, tier=self.name,
                            reason="The language model gave no usable answer.",
                            diagnostics=diag)
        if data.get("valid") is False or not raw_steps:
            diag["verdict"] = "out_of_scope"
            return Decision(False, confidence=0.6, tier=self.name,
                            reason="That is not something the console can do.",
                            diagnostics=diag)
        try:
            steps = [self.validate_step(s, agents) for s in raw_steps]
            self.dry_run(steps, state)
        except CommandError as exc:
            diag.update(error=exc.code if exc.code != "invalid" else "invalid_plan",
                        detail=exc.message)
            return Decision(False, confidence=0.0, tier=self.name, reason=exc.message,
                            diagnostics=diag)
        clash = contradiction(steps)
        if clash:
            # a small model sometimes lists every action of an agent ("hide ... reset"):
            # a plan that undoes itself is not carried out
            diag.update(error="contradictory_plan", detail=clash)
            return Decision(False, confidence=0.0, tier=self.name,
                            reason="The language model's answer contradicts itself; please "
                                   "say it again in other words.", diagnostics=diag)
        diag["verdict"] = "plan"
        agent = _ACTION_AGENT[steps[0].action_id]
        return Decision(True, steps, agent=agent, confidence=self.confidence, tier=self.name,
                        reason="Decided by the language model.", diagnostics=diag)

    def validate_step(self, raw: Any, agents: Sequence[str] = AGENTS) -> Step:
        """One raw ``{"action", "params"}`` object -> a registry-validated Step."""
        if not isinstance(raw, Mapping):
            raise CommandError("The language model's plan has a malformed step.", "invalid_plan")
        action = str(raw.get("action") or "").strip()
        agent = raw.get("agent")
        if "." not in action:  # JSON-mode servers sometimes split or drop the agent
            if isinstance(agent, str) and agent.upper() in AGENTS:
                action = f"{agent.upper()}.{action}"
            elif len(agents) == 1:
                action = f"{agents[0]}.{action}"
        action = action.upper()
        params = raw.get("params") or {}
        if not isinstance(params, Mapping):
            raise CommandError(f"The parameters of {action} are malformed.", "invalid_plan")
        if action not in _ACTION_AGENT:
            raise CommandError(f"There is no action called {action or 'nothing'}.",
                               "unknown_action")
        return self._registry.validate(action, params)

    @staticmethod
    def dry_run(steps: Sequence[Step], state: ConsoleState) -> None:
        """Apply the plan to a scratch copy exactly as dispatch would; raises CommandError.

        Done without the registry's dispatch so that a check does not appear in the audit log.
        """
        scratch = state.copy()
        for s in steps:
            action = prompts.ACTION_BY_ID[s.action_id]
            outcome = action.apply(scratch, dict(s.params))
            scratch.apply(agent=action.agent, **outcome.sections)


class _StepEmitter:
    """Feeds streamed text to the parser and emits each step once it validates on its own."""

    def __init__(self, tier: LLMTier, agents: Sequence[str], on_step: StepFn) -> None:
        self.tier, self.agents, self.on_step = tier, agents, on_step
        self.parser = StreamingPlanParser()
        self.emitted: list[Step] = []
        self.broken = False

    def feed(self, text: str) -> None:
        for raw in self.parser.feed(text):
            if self.broken or self.parser.valid is False:
                return
            try:
                step = self.tier.validate_step(raw, self.agents)
            except CommandError:
                self.broken = True  # the plan is invalid: emit nothing further
                return
            self.emitted.append(step)
            try:
                self.on_step(step)
            except Exception:  # the consumer's failure must not kill generation
                log.exception("streamed-step callback failed")
