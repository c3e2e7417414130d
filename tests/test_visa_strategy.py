"""The visa (reference all-LLM) strategy: orchestrator argmax with 0-completion, the flow,
invalid loops (at most 3, retries use alternatives), and failure handling - with a scripted
runtime; one slow run through the real default model."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from app.agents import prompts
from app.agents.decision import Memory
from app.agents.llm_local import LocalLlama
from app.agents.llm_runtime import make_runtime
from app.agents.llm_types import (
    DEFAULT_MODEL_ID,
    ERR_TIMEOUT,
    LLMResult,
    StagePrompt,
    WarmHandle,
    parse_json_answer,
)
from app.agents.visa_strategy import VisaStrategy, choose_next
from app.core.registry import CommandRegistry
from app.core.state import CaseContext, ConsoleState

TIMEOUT = "<<timeout>>"
Answer = str | Callable[[str], str]


def rules_orchestrator(user: str) -> str:
    """An orchestrator that follows the rules (what a good model answers)."""
    status = user.removeprefix("status: ")
    fn = prompts.VISA_RULES[status]
    return json.dumps({fn: 0.9, "end": 0.05} if fn != "end" else {"end": 1.0})


class StageRuntime:
    """Scripted per stage: each stage has a queue of answers (text, TIMEOUT, or a function of
    the user message); the last answer of a queue repeats."""

    name = "fake"

    def __init__(self, **by_stage: Answer | list[Answer]) -> None:
        self.script: dict[str, list[Answer]] = {
            k.replace("__", "."): (v if isinstance(v, list) else [v]) for k, v in by_stage.items()}
        self.script.setdefault("visa.orchestrate", [rules_orchestrator])
        self.calls: list[tuple[str, str]] = []
        self.warmed_contexts: list[tuple[str, str]] = []

    def complete_json(self, stage: str, system: str, user: str, schema: dict[str, Any],
                      max_tokens: int = 128, timeout_s: float = 10.0, *,
                      examples: Sequence[tuple[str, str]] = (), context: str = "",
                      on_text: Any = None) -> LLMResult:
        self.calls.append((stage, user))
        queue = self.script.get(stage) or ["{}"]
        answer = queue.pop(0) if len(queue) > 1 else queue[0]
        if callable(answer):
            answer = answer(user)
        if answer == TIMEOUT:
            return LLMResult(None, "", False, ERR_TIMEOUT, "late", stage=stage)
        data, err, detail = parse_json_answer(answer, schema)
        return LLMResult(data, answer, err is None, err, detail, stage=stage, cache="hit")

    def warm(self, stages: Sequence[StagePrompt], progress: Any = None, *,
             background: bool = True) -> WarmHandle:
        h = WarmHandle()
        h.stats = {"stages": [s.stage for s in stages]}
        h._finish()
        return h

    def warm_context(self, stage: StagePrompt, context: str) -> WarmHandle:
        self.warmed_contexts.append((stage.stage, context))
        h = WarmHandle()
        h._finish()
        return h

    def close(self) -> None:
        pass

    def stages(self) -> list[str]:
        return [s for s, _ in self.calls]


def ok_correct(user: str) -> str:
    return json.dumps({"command": user.removeprefix("command: "), "valid": True})


BAD_CORRECT = '{"command": "prepare the stapler", "valid": false}'
IV_PLAN = '{"valid":true,"steps":[{"action":"IV.SHOW_MOVE","params":{"coronal":"+100"}}]}'


def make_state() -> ConsoleState:
    s = ConsoleState()
    s.set_case(CaseContext(iv_size=(("axial", 64), ("coronal", 512), ("sagittal", 512))))
    return s


# ------------------------------------------------------------------ choose_next
def test_missing_functions_are_zero_and_argmax_runs() -> None:
    fn, probs, rules = choose_next({"route_to_agent": 0.6, "IV_agent": 0.3},
                                   "command valid, agent not chosen")
    assert fn == "route_to_agent" and not rules
    assert set(probs) == set(prompts.VISA_FUNCTIONS) and probs["end"] == 0.0
    # argmax wins even against the rules (the reference trusts the orchestrator) ...
    fn, _, rules = choose_next({"end": 0.8, "record_audio": 0.2}, "no audio recorded")
    assert fn == "end" and not rules
    # ... ties go to the rules, and an unusable answer falls back to them.
    assert choose_next({"end": 0.5, "record_audio": 0.5}, "no audio recorded")[0] == \
        "record_audio"
    assert choose_next(None, "command recorded") == ("correct_and_validate", pytest.approx(
        dict.fromkeys(prompts.VISA_FUNCTIONS, 0.0)), True)
    assert choose_next({"end": True, "x": 3}, "command recorded")[2]  # bools/unknown ignored


# ------------------------------------------------------------------ the workflow
def test_happy_path_flow_and_decision() -> None:
    rt = StageRuntime(visa__correct=ok_correct, visa__route='{"agent": "IV"}',
                      decide__IV=IV_PLAN)
    state = make_state()
    d, flow, cycles, ms = VisaStrategy(rt).run("city corona plus 100", state, Memory())
    assert flow == ["audio", "stt", "correct", "route", "IV", "end"] and cycles == 0
    assert d.valid and d.tier == "visa" and d.agent == "IV"
    assert [s.action_id for s in d.steps] == ["IV.SHOW_MOVE"]
    assert d.diagnostics["corrected"] == "city corona plus 100"
    assert d.diagnostics["route"] == "IV"
    assert [o["chosen"] for o in d.diagnostics["orchestrator"]] == [
        "record_audio", "speech_to_text", "correct_and_validate", "route_to_agent", "IV_agent",
        "end"]
    assert set(ms) >= {"orchestrator", "correct", "route", "decide", "total"}
    # one LLM call per stage, the orchestrator before each
    assert rt.stages().count("visa.orchestrate") == 6
    assert [s for s in rt.stages() if s != "visa.orchestrate"] == [
        "visa.correct", "visa.route", "decide.IV"]
    before = state.snapshot()
    assert CommandRegistry(state).dispatch_plan(d.steps).ok
    assert state.snapshot()["iv"]["pos"]["coronal"] == before["iv"]["pos"]["coronal"] + 100


def test_invalid_command_loops_at_most_three_times() -> None:
    rt = StageRuntime(visa__correct=BAD_CORRECT)
    state = make_state()
    before = state.snapshot()
    d, flow, cycles, _ = VisaStrategy(rt).run("prepare the stapler", state, Memory())
    assert not d.valid and d.steps == [] and cycles == 3
    assert flow == ["audio", "stt", "correct"] * 4 + ["end"]
    assert rt.stages().count("visa.correct") == 4
    assert len(d.diagnostics["invalid_reasons"]) == 4
    assert state.snapshot() == before


def test_retry_uses_the_next_alternative() -> None:
    def correct(user: str) -> str:
        text = user.removeprefix("command: ")
        return json.dumps({"command": text, "valid": "coronal" in text})

    rt = StageRuntime(visa__correct=correct, visa__route='{"agent": "IV"}', decide__IV=IV_PLAN)
    d, flow, cycles, _ = VisaStrategy(rt).run("corona pus hundred", make_state(), Memory(),
                                             alternatives=["coronal plus 100"])
    assert d.valid and cycles == 1
    assert flow == ["audio", "stt", "correct", "audio", "stt", "correct", "route", "IV", "end"]
    corrected_inputs = [u for s, u in rt.calls if s == "visa.correct"]
    assert corrected_inputs == ["command: corona pus hundred", "command: coronal plus 100"]
    assert d.diagnostics["corrected"] == "coronal plus 100"


def test_garbage_orchestrator_falls_back_to_the_rules() -> None:
    rt = StageRuntime(visa__orchestrate=["not json at all", TIMEOUT, '{"end": 0}'],
                      visa__correct=ok_correct, visa__route='{"agent": "IV"}',
                      decide__IV=IV_PLAN)
    d, flow, cycles, _ = VisaStrategy(rt).run("coronal plus 100", make_state(), Memory())
    assert d.valid and flow == ["audio", "stt", "correct", "route", "IV", "end"]
    assert all(o["rules"] for o in d.diagnostics["orchestrator"])


def test_looping_orchestrator_is_broken_by_the_rules() -> None:
    # A small model once answered correct_and_validate again and again after a valid command.
    def sticky(user: str) -> str:
        if user == "status: command valid, agent not chosen":
            return '{"correct_and_validate": 0.9, "route_to_agent": 0.1}'
        return rules_orchestrator(user)

    rt = StageRuntime(visa__orchestrate=sticky, visa__correct=ok_correct,
                      visa__route='{"agent": "IV"}', decide__IV=IV_PLAN)
    d, flow, _, _ = VisaStrategy(rt).run("coronal plus 100", make_state(), Memory())
    assert d.valid
    assert flow == ["audio", "stt", "correct", "correct", "route", "IV", "end"]
    assert any(o["loop_guard"] for o in d.diagnostics["orchestrator"])


@pytest.mark.parametrize("route,decide", [
    (TIMEOUT, IV_PLAN),
    ('{"agent": "IV"}', "the slice goes forward"),
    ('{"agent": "IV"}', '{"valid":true,"steps":[{"action":"IV.SHOW_MOVE","params":{"zoom":1}}]}'),
    ('{"agent": "IV"}', TIMEOUT),
])
def test_failing_stages_loop_back_and_never_apply(route: str, decide: str) -> None:
    rt = StageRuntime(visa__correct=ok_correct, visa__route=route, decide__IV=decide)
    state = make_state()
    before = state.snapshot()
    d, flow, cycles, _ = VisaStrategy(rt).run("coronal plus 100", state, Memory())
    assert not d.valid and d.steps == [] and cycles == 3
    assert flow[-1] == "end" and flow.count("correct") == 4
    assert state.snapshot() == before


def test_out_of_order_functions_are_skipped_and_the_run_is_capped() -> None:
    rt = StageRuntime(visa__orchestrate='{"route_to_agent": 1.0}')
    d, flow, cycles, _ = VisaStrategy(rt, max_steps=3).run("coronal plus 100", make_state(),
                                                           Memory())
    # 1: routing before any command is skipped; 2: the same choice again -> the rules record
    # audio; 3: routing before transcription is skipped; then the cap ends the run.
    assert not d.valid and flow == ["audio", "end"] and cycles == 0
    assert d.diagnostics["skipped"] == ["route_to_agent"] * 2
    assert "did not finish" in d.diagnostics["invalid_reasons"][-1]


def test_rules_orchestrator_variant_makes_no_orchestrator_calls() -> None:
    rt = StageRuntime(visa__correct=ok_correct, visa__route='{"agent": "IV"}',
                      decide__IV=IV_PLAN)
    d, flow, _, _ = VisaStrategy(rt, orchestrator="rules").run("coronal plus 100", make_state(),
                                                               Memory())
    assert d.valid and flow == ["audio", "stt", "correct", "route", "IV", "end"]
    assert "visa.orchestrate" not in rt.stages()


def test_empty_command_is_reported_for_the_memory_rule() -> None:
    rt = StageRuntime()
    d, flow, cycles, _ = VisaStrategy(rt).run("", make_state(), Memory(last_agent="AR"))
    assert not d.valid and d.diagnostics["empty"] and cycles == 0 and flow[-1] == "end"
    assert rt.calls == []


def test_warm_lists_every_visa_stage() -> None:
    rt = StageRuntime()
    stages = VisaStrategy(rt).warm().stats["stages"]
    assert stages[:3] == ["visa.orchestrate", "visa.correct", "visa.route"]
    assert {"decide.IR", "decide.IV", "decide.AR"} <= set(stages)


# ------------------------------------------------------------------ the real model (slow)
@pytest.fixture(scope="session")
def real_runtime(tmp_path_factory: pytest.TempPathFactory) -> LocalLlama:
    """The default packaged model, loaded once per test session (shared by make_runtime)."""
    pytest.importorskip("llama_cpp")
    from app.runtime.models import ModelUnavailable, model_path

    try:
        model_path(DEFAULT_MODEL_ID)
    except ModelUnavailable as exc:
        pytest.skip(f"default LLM not installed: {exc}")
    rt = make_runtime({"state_dir": str(tmp_path_factory.getbasetemp() / "llm-state"),
                       "n_threads": 2})
    assert isinstance(rt, LocalLlama)
    return rt


@pytest.mark.slow
def test_real_model_visa_run(real_runtime: LocalLlama) -> None:
    visa = VisaStrategy(real_runtime, timeout_s=900.0)
    assert visa.warm(background=False).error is None
    state = make_state()
    d, flow, cycles, ms = visa.run("coronal plus 100", state, Memory())
    assert flow[0] == "audio" and flow[-1] == "end" and 0 <= cycles <= 3
    assert ms["total"] > 0
    assert d.valid, d.diagnostics
    assert "IV" in flow and [s.action_id for s in d.steps] == ["IV.SHOW_MOVE"]
    assert CommandRegistry(state).dispatch_plan(d.steps).ok
    assert state.snapshot()["iv"]["pos"]["coronal"] == 356
