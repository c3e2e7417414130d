"""LLM tier: scripted (fake) runtimes prove bad answers never change state wrongly; the
streaming plan parser on partial input; progressive-disclosure prompts; and (slow) real
commands through the default model and through llama-cpp-python's own server."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from app.agents import prompts
from app.agents.decision import Decision, Memory
from app.agents.llm_local import LocalLlama
from app.agents.llm_remote import RemoteOpenAI
from app.agents.llm_runtime import make_runtime
from app.agents.llm_tier import LLMTier, StreamingPlanParser
from app.agents.llm_types import (
    DEFAULT_MODEL_ID,
    ERR_TIMEOUT,
    FAST_MODEL_ID,
    LLMResult,
    StagePrompt,
    WarmHandle,
    check_json,
    parse_json_answer,
)
from app.core.registry import Actor, CommandRegistry, Step
from app.core.state import CaseContext, ConsoleState

TIMEOUT = object()  # script entry: the runtime times out


class FakeRuntime:
    """A scripted LLMRuntime. Each call takes the next scripted answer (raw text or TIMEOUT).

    ``enforce_schema=False`` plays a JSON-mode server that ignores the schema, so invalid
    actions and parameters reach the tier's own validation.
    """

    name = "fake"

    def __init__(self, *answers: Any, enforce_schema: bool = True, chunk: int = 7) -> None:
        self.answers = list(answers)
        self.enforce_schema = enforce_schema
        self.chunk = chunk
        self.calls: list[dict[str, Any]] = []
        self.warmed_contexts: list[tuple[str, str]] = []

    def complete_json(self, stage: str, system: str, user: str, schema: dict[str, Any],
                      max_tokens: int = 128, timeout_s: float = 10.0, *,
                      examples: Sequence[tuple[str, str]] = (), context: str = "",
                      on_text: Any = None) -> LLMResult:
        self.calls.append({"stage": stage, "system": system, "user": user, "schema": schema,
                           "examples": examples, "context": context})
        answer = self.answers.pop(0) if self.answers else "{}"
        if answer is TIMEOUT:
            return LLMResult(None, "", False, ERR_TIMEOUT, "did not answer in time",
                             stage=stage, cache="hit")
        if on_text is not None:
            for i in range(0, len(answer), self.chunk):
                on_text(answer[i:i + self.chunk])
        if self.enforce_schema:
            data, err, detail = parse_json_answer(answer, schema)
        else:
            data, err, detail = parse_json_answer(answer, {"type": "object"})
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


def plan(*steps: tuple[str, dict[str, Any]], valid: bool = True) -> str:
    return json.dumps({"valid": valid, "steps": [{"action": a, "params": p} for a, p in steps]})


def make_state(ct: bool = True) -> ConsoleState:
    s = ConsoleState()
    s.set_case(CaseContext(
        iv_size=(("axial", 64), ("coronal", 512), ("sagittal", 512)) if ct else None,
        tumor_lobes=("right_upper_lobe",)))
    return s


def run(tier: LLMTier, text: str, state: ConsoleState, memory: Memory | None = None
        ) -> tuple[Decision, dict[str, Any], dict[str, Any]]:
    """Decide, dispatch through a real registry when valid; (decision, before, after)."""
    registry = CommandRegistry(state)
    before = state.snapshot()
    d = tier.decide(text, state, memory or Memory())
    assert d is not None
    if d.valid:
        assert registry.dispatch_plan(d.steps, Actor()).ok
    return d, before, state.snapshot()


# ------------------------------------------------------------------ good answers
def test_good_plan_is_validated_and_applies() -> None:
    rt = FakeRuntime(plan(("IV.SHOW_MOVE", {"coronal": "+10"})))
    d, before, after = run(LLMTier(rt), "bring the coronal slice forward a bit", make_state())
    assert d.valid and d.tier == "llm" and d.agent == "IV" and d.confidence > 0.5
    assert d.steps == [Step("IV.SHOW_MOVE", d.steps[0].params)]
    assert after["iv"]["pos"]["coronal"] == before["iv"]["pos"]["coronal"] + 10
    assert after["iv"]["mode"] == "small_views"
    assert d.diagnostics["llm"]["cache"] == "hit"
    assert rt.calls[0]["stage"] == "decide.IV"  # progressive disclosure: IV actions only


def test_composite_plan_across_agents() -> None:
    rt = FakeRuntime(plan(("AR.SHOW", {"structures": ["lung_nodules"]}),
                          ("IR.SHOW", {"fields": ["pft"]})))
    d, _, after = run(LLMTier(rt), "show the nodules and the pft values", make_state())
    assert d.valid and d.agents == ["AR", "IR"] and d.agent == "AR"
    assert rt.calls[0]["stage"] == "decide.all"
    assert after["ar"]["structures"] == ["lung_nodules"] and after["ir"]["fields"] == ["pft"]


# ------------------------------------------------------------------ bad answers never apply
BAD = [
    pytest.param(["I would move the coronal slice forward."], "parse", id="garbage"),
    pytest.param(['{"valid": true, "steps": [{"action": "IV.SHOW_MO'], "parse", id="truncated"),
    pytest.param([TIMEOUT], "timeout", id="timeout"),
    pytest.param(["", ""], "parse", id="empty"),
]


@pytest.mark.parametrize("answers,error", BAD)
def test_failed_answers_give_low_confidence_invalid_decisions(answers: list[Any],
                                                              error: str) -> None:
    d, before, after = run(LLMTier(FakeRuntime(*answers)), "coronal forward", make_state())
    assert not d.valid and d.steps == [] and d.confidence == 0.0 and d.tier == "llm"
    assert d.diagnostics["error"] == error and d.reason
    assert after == before


INVALID_PLANS = [
    pytest.param(plan(("IV.FLY", {})), "unknown_action", id="unknown-action"),
    pytest.param(plan(("SHOW_MOVE", {"coronal": "+10"}), ("AR.SPIN", {})), "unknown_action",
                 id="unknown-second-step"),
    pytest.param(plan(("IV.SHOW_MOVE", {"coronal": "forward"})), "invalid_plan",
                 id="bad-slice-value"),
    pytest.param(plan(("IV.SHOW_MOVE", {"zoom": 2})), "invalid_plan", id="unknown-param"),
    pytest.param(plan(("AR.ROTATE", {"direction": "sideways"})), "invalid_plan",
                 id="bad-enum"),
    pytest.param(plan(("AR.ROTATE", {})), "invalid_plan", id="missing-required"),
    pytest.param(plan(("AR.SHOW", {"structures": ["liver"]})), "invalid_plan",
                 id="unknown-structure"),
    pytest.param(plan(("IV.SHOW_MOVE", {"coronal": "+10"}), ("IR.SHOW", {"fields": ["pulse"]})),
                 "invalid_plan", id="one-bad-step-spoils-the-plan"),
    pytest.param('{"valid": true, "steps": "IV.SHOW_MOVE"}', "schema", id="steps-not-a-list"),
    pytest.param('{"valid": true, "steps": [42]}', "invalid_plan", id="step-not-an-object"),
]


@pytest.mark.parametrize("answer,error", INVALID_PLANS)
def test_invalid_plans_never_change_state(answer: str, error: str) -> None:
    state = make_state()
    CommandRegistry(state).dispatch("IV.SHOW_MOVE", {"axial": 40})  # something to protect
    rt = FakeRuntime(answer, enforce_schema=False)
    d, before, after = run(LLMTier(rt), "coronal forward then", state)
    assert not d.valid and d.steps == [] and d.confidence == 0.0
    assert d.diagnostics["error"] == error, d.diagnostics
    assert d.reason  # a plain sentence for the team
    assert after == before


def test_schema_enforcing_runtime_rejects_invalid_actions_before_the_tier() -> None:
    rt = FakeRuntime(plan(("IV.FLY", {})), enforce_schema=True)
    d, before, after = run(LLMTier(rt), "coronal forward", make_state())
    assert not d.valid and d.diagnostics["error"] == "schema" and after == before


def test_out_of_range_slice_is_clamped_not_wrong() -> None:
    rt = FakeRuntime(plan(("IV.SHOW_MOVE", {"coronal": 99999, "axial": "-500"})),
                     enforce_schema=False)
    d, _, after = run(LLMTier(rt), "coronal to 99999 and axial down 500", make_state())
    assert d.valid
    assert after["iv"]["pos"]["coronal"] == 511 and after["iv"]["pos"]["axial"] == 0


def test_plan_that_cannot_apply_is_invalid_with_the_registry_reason() -> None:
    rt = FakeRuntime(plan(("IV.SHOW_MOVE", {"axial": "+10"})))
    d, before, after = run(LLMTier(rt), "axial up", make_state(ct=False))
    assert not d.valid and "No CT is loaded" in d.reason and after == before
    assert d.diagnostics["error"] == "unavailable"


def test_out_of_scope_falls_back_to_all_actions_once() -> None:
    rt = FakeRuntime(plan(valid=False), plan(valid=False))
    d, before, after = run(LLMTier(rt), "prepare the ct stapler", make_state())
    assert [c["stage"] for c in rt.calls] == ["decide.IV", "decide.all"]
    assert not d.valid and d.diagnostics["verdict"] == "out_of_scope" and d.confidence > 0
    assert len(d.diagnostics["llm_calls"]) == 2 and after == before


def test_narrow_stage_miss_is_recovered_by_the_all_stage() -> None:
    rt = FakeRuntime(plan(valid=False), plan(("AR.ROTATE", {"direction": "left"})))
    memory = Memory(last_agent="IV", recent=["coronal plus 10"])
    d, _, after = run(LLMTier(rt), "now turn it to the left", make_state(), memory)
    assert d.valid and after["ar"]["rotation"] == "left"


def test_empty_command_is_left_to_memory() -> None:
    assert LLMTier(FakeRuntime()).decide("  ", make_state(), Memory()) is None


def test_user_message_carries_context_last_words_last() -> None:
    rt = FakeRuntime(plan(("IV.ZOOM_OUT", {})))
    state = make_state()
    CommandRegistry(state).dispatch("IV.ZOOM_IN_MOVE", {"plane": "coronal"})
    memory = Memory(last_agent="IV", recent=["zoom in on coronal", "up", "left"])
    LLMTier(rt).decide("smaller please", state, memory)
    call = rt.calls[0]
    assert call["user"] == "command: smaller please"  # the user's words, last
    ctx = call["context"]
    assert "zoom_view main coronal" in ctx and "last agent: IV" in ctx
    assert '"zoom in on coronal"' in ctx and ctx.endswith("\n")
    # The prefix (system + examples) holds no per-call context: it can be cached.
    assert "smaller" not in call["system"] and "coronal 256" not in call["system"]


def test_prewarm_warms_exactly_the_context_the_next_call_uses() -> None:
    rt = FakeRuntime(plan(("IV.ZOOM_OUT", {})))
    tier = LLMTier(rt)
    state = make_state()
    memory = Memory(last_agent="IV", recent=["coronal plus 10"])
    tier.prewarm(state, memory).wait(1)
    tier.decide("smaller please", state, memory)  # no cue words: the last agent's stage
    assert rt.warmed_contexts == [("decide.IV", rt.calls[0]["context"])]
    assert rt.calls[0]["stage"] == "decide.IV"


# ------------------------------------------------------------------ prompts
def test_stage_prompts_are_small_and_distinct() -> None:
    stages = prompts.all_decision_prompts()
    assert [s.stage for s in stages] == ["decide.all", "decide.IV", "decide.AR", "decide.IR"]
    assert len({s.prefix_hash() for s in stages}) == 4
    iv = prompts.decision_prompt(("IV",))
    assert "AR.ROTATE" not in iv.system and "IR.SHOW" not in iv.system
    for s in stages:  # examples obey their own stage's schema
        schema = prompts.plan_schema(prompts.stage_agents(s.stage))
        for _, answer in s.examples:
            assert check_json(json.loads(answer), schema) == []


def test_plan_schema_covers_the_registry() -> None:
    schema = prompts.plan_schema()
    consts = [o["properties"]["action"]["const"]
              for o in schema["properties"]["steps"]["items"]["oneOf"]]
    assert consts == list(prompts.ACTION_IDS) and len(consts) == 14


@pytest.mark.parametrize("text,last,expect", [
    ("coronal plus 100", None, ("IV",)),
    ("rotate the model to the left", None, ("AR",)),
    ("show the patient's bmi", None, ("IR",)),
    ("zoom in", "AR", ("AR",)),
    ("zoom in", None, ("IR", "IV", "AR")),
    ("show the nodules and the pft", None, ("IR", "IV", "AR")),
])
def test_guess_agents(text: str, last: str | None, expect: tuple[str, ...]) -> None:
    assert prompts.guess_agents(text, Memory(last_agent=last)) == expect


# ------------------------------------------------------------------ streaming parser
FULL = ('{"valid": true, "steps": [{"action": "IV.SHOW_MOVE", "params": {"axial": "middle"}}, '
        '{"action": "AR.SHOW", "params": {"structures": ["lung_nodules", "right_upper_lobe"]}}]}')


def test_parser_yields_each_step_exactly_when_it_closes() -> None:
    first_end = FULL.index("}}") + 2  # the first step's closing brace
    for cut in range(len(FULL) + 1):
        p = StreamingPlanParser()
        got = p.feed(FULL[:cut])
        expect = 0 if cut < first_end else 1 if cut < FULL.rindex("}}") + 2 else 2
        assert len(got) == expect, cut
        got += p.feed(FULL[cut:])
        assert [s["action"] for s in got] == ["IV.SHOW_MOVE", "AR.SHOW"]
        assert p.valid is True and p.done and p.steps_closed
        assert p.result() == json.loads(FULL)


def test_parser_char_by_char_and_valid_flag() -> None:
    p = StreamingPlanParser()
    seen_valid_at = None
    for i, ch in enumerate(FULL):
        p.feed(ch)
        if p.valid is not None and seen_valid_at is None:
            seen_valid_at = i
    assert seen_valid_at == FULL.index("true") + 3  # known as soon as the literal completes
    assert len(p.steps) == 2


def test_parser_ignores_braces_and_quotes_inside_strings() -> None:
    text = ('{"valid":true,"steps":[{"action":"X","params":{"note":"a } ] {\\" [ tricky"}},'
            '{"action":"Y","params":{}}]}')
    p = StreamingPlanParser()
    out = [s for i in range(0, len(text), 3) for s in p.feed(text[i:i + 3])]
    assert [s["action"] for s in out] == ["X", "Y"]
    assert out[0]["params"]["note"] == 'a } ] {" [ tricky'


def test_parser_on_invalid_partial_and_garbage_input() -> None:
    p = StreamingPlanParser()
    assert p.feed('{"valid": false, "steps": []}') == [] and p.valid is False and p.done
    p = StreamingPlanParser()
    assert p.feed('{"valid": true, "steps": [{"action": "IV.SHOW_MOVE", "par') == []
    assert p.valid is True and not p.done and p.result() is None
    p = StreamingPlanParser()
    assert p.feed("Sure! I'll move the slice {forward}.") == [] and p.steps == []
    p = StreamingPlanParser()  # a "steps" key that is not top level does not count
    assert p.feed('{"meta": {"steps": [{"a": 1}]}, "valid": true, "steps": [{"b": 2}]}') == [
        {"b": 2}]


def test_decide_streaming_emits_validated_steps_before_returning() -> None:
    answer = plan(("IV.SHOW_MOVE", {"axial": "middle"}), ("IV.ZOOM_IN_MOVE", {"plane": "axial"}))
    rt = FakeRuntime(answer, chunk=5)
    emitted: list[tuple[Step, int]] = []
    tier = LLMTier(rt)

    original = rt.complete_json

    def spy(*args: Any, **kwargs: Any) -> LLMResult:
        res = original(*args, **kwargs)
        spy.returned = True  # type: ignore[attr-defined]
        return res

    spy.returned = False  # type: ignore[attr-defined]
    rt.complete_json = spy  # type: ignore[method-assign]

    def on_step(step: Step) -> None:
        emitted.append((step, spy.returned))  # type: ignore[attr-defined]

    d = tier.decide_streaming("move axial to the middle slice and zoom in", make_state(),
                              Memory(), on_step)
    assert d is not None and d.valid
    assert [s.action_id for s, _ in emitted] == ["IV.SHOW_MOVE", "IV.ZOOM_IN_MOVE"]
    assert not any(returned for _, returned in emitted)  # each came while still generating
    assert [s for s, _ in emitted] == d.steps


def test_decide_streaming_stops_emitting_at_an_invalid_step() -> None:
    answer = plan(("IV.SHOW_MOVE", {"axial": "+10"}), ("IV.SHOW_MOVE", {"axial": "sideways"}),
                  ("IV.ZOOM_OUT", {}))
    emitted: list[Step] = []
    d = LLMTier(FakeRuntime(answer, enforce_schema=False)).decide_streaming(
        "axial up then sideways then smaller", make_state(), Memory(), emitted.append)
    assert d is not None and not d.valid
    assert [s.action_id for s in emitted] == ["IV.SHOW_MOVE"]  # the final decision rejects all


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


@pytest.fixture(scope="session")
def real_tier(real_runtime: LocalLlama) -> LLMTier:
    tier = LLMTier(real_runtime, timeout_s=900.0)
    handle = tier.warm(background=False)
    assert handle.error is None, handle.error
    return tier


REAL_COMMANDS = [
    ("could you bring the coronal slice a little forward", "IV", ["IV.SHOW_MOVE"]),
    ("rotate the 3d model to the right", "AR", ["AR.ROTATE"]),
    ("show me the patient's age and bmi", "IR", ["IR.SHOW"]),
]


@pytest.mark.slow
@pytest.mark.parametrize("text,agent,actions", REAL_COMMANDS)
def test_real_model_commands(real_tier: LLMTier, text: str, agent: str,
                             actions: list[str]) -> None:
    state = make_state()
    d, before, after = run(real_tier, text, state, Memory())
    assert d.valid, d.diagnostics
    assert d.agent == agent and [s.action_id for s in d.steps] == actions
    call = d.diagnostics["llm"]
    assert call["cache"] in ("hit", "restored") and call["cached_tokens"] > 100
    if agent == "IV":
        assert after["iv"]["pos"]["coronal"] > before["iv"]["pos"]["coronal"]
    if agent == "AR":
        assert after["ar"]["rotation"] == "right"
    if agent == "IR":
        assert {"age", "bmi"} <= set(after["ir"]["fields"])


@pytest.mark.slow
def test_real_model_rejects_out_of_scope(real_tier: LLMTier) -> None:
    d, before, after = run(real_tier, "prepare the stapler", make_state(), Memory())
    assert not d.valid and after == before


@pytest.mark.slow
def test_real_model_composite_streaming(real_tier: LLMTier) -> None:
    emitted: list[Step] = []
    d = real_tier.decide_streaming("move axial to the middle slice and zoom in", make_state(),
                                   Memory(), emitted.append)
    assert d is not None and d.valid, d.diagnostics
    assert [s.action_id for s in d.steps][:1] == ["IV.SHOW_MOVE"]
    assert "IV.ZOOM_IN_MOVE" in [s.action_id for s in d.steps]
    assert emitted == d.steps


# ------------------------------------------------------------------ llama-cpp-python's server
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_llama_cpp_server_with_the_small_model(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    for mod in ("uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings"):
        pytest.importorskip(mod, reason="llama-cpp-python[server] extras are not installed")
    from app.runtime.models import ModelUnavailable, model_path

    try:
        gguf = model_path(FAST_MODEL_ID)
    except ModelUnavailable as exc:
        pytest.skip(f"small LLM not installed: {exc}")
    port = _free_port()
    log = open(tmp_path / "server.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
         "--port", str(port), "--n_threads", "2", "--n_threads_batch", "2", "--n_ctx", "2048",
         "--model_alias", "small"],
        stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 600
        while True:
            assert proc.poll() is None, (tmp_path / "server.log").read_text()[-2000:]
            try:
                with urllib.request.urlopen(f"{url}/v1/models", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, "llama_cpp.server did not start"
            time.sleep(0.5)
        rt = RemoteOpenAI(url, "small")
        tier = LLMTier(rt, timeout_s=900.0)
        assert tier.warm(background=False).error is None
        state = make_state()
        registry = CommandRegistry(state)
        before = state.snapshot()
        d1 = tier.decide("axial plus 20", state, Memory())
        assert d1 is not None and d1.diagnostics["llm"]["ok"], d1.diagnostics
        assert d1.diagnostics["llm"]["backend"].startswith("remote:")
        if d1.valid:  # the 0.5B model is weak: it must be valid *and* right, or refused
            assert registry.dispatch_plan(d1.steps).ok
            assert d1.steps[0].action_id.startswith("IV.")
        else:
            assert state.snapshot() == before
        d2 = tier.decide("rotate the model to the left", state, Memory(last_agent="IV"))
        assert d2 is not None and d2.diagnostics["llm"]["ok"], d2.diagnostics
        assert rt.mode in ("json_schema", "json_object")
        if d2.valid:
            assert d2.steps[0].action_id.startswith("AR.")
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.mark.parametrize("steps", [
    (("IV.REMOVE", {}), ("AR.REMOVE", {}), ("IR.HIDE", {}), ("IR.RESET", {})),
    (("AR.SHOW", {}), ("AR.REMOVE", {})),
    (("AR.ROTATE", {"direction": "left"}), ("AR.ROTATE", {"direction": "right"})),
])
def test_a_plan_that_undoes_itself_is_not_carried_out(steps) -> None:
    rt = FakeRuntime(plan(*steps))
    d, before, after = run(LLMTier(rt), "get the pictures of the chest out of the way",
                           make_state())
    assert not d.valid and d.diagnostics["error"] == "contradictory_plan"
    assert after == before


def test_a_coherent_composite_is_not_a_contradiction() -> None:
    from app.agents.llm_tier import contradiction

    assert contradiction([Step("IV.SHOW_MOVE", {"axial": "+10"}),
                          Step("IV.ZOOM_IN_MOVE", {"plane": "axial"}),
                          Step("AR.REMOVE", {}), Step("IR.SHOW", {"fields": ["bmi"]})]) == ""
