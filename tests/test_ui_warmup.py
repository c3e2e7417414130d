"""The interpreter's start-up warm-up in the console (issue 4): the strip shows the language
model warming and then ready (or why it is unavailable), and typed commands are answered by
the fast tiers at once while the warm-up runs.

Fast tests use the real lexicon and orchestrator with :class:`LLMTier` over a scripted runtime
whose warm-up reports progress from a thread and finishes only when the test says so. The slow
test starts the real window with the real tiers and measures the time to the first answer.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

import pytest

pytest.importorskip("pytestqt")

from app.agents.decision import Memory  # noqa: E402
from app.agents.interpreter import FastInterpreter  # noqa: E402
from app.agents.llm_tier import LLMTier  # noqa: E402
from app.agents.llm_types import LLMResult, StagePrompt, WarmHandle  # noqa: E402
from app.agents.orchestrator import Orchestrator  # noqa: E402
from app.core.state import ConsoleState  # noqa: E402
from app.session.loader import LoadedCase  # noqa: E402
from app.ui.commands import TYPED  # noqa: E402
from app.ui.main import MainWindow, llm_unavailable_text  # noqa: E402

pytestmark = pytest.mark.gui

FAST_COMMAND = "show the CT"  # the lexicon is sure: no slower tier is asked
UNSURE_COMMAND = "make the picture a bit bigger please"  # the lexicon asks the later tiers


class SlowWarmRuntime:
    """A scripted LLM runtime: ``warm`` reports 0 %, 40 % from a thread, then waits for
    ``release`` and finishes (or fails with ``fail``). ``complete_json`` blocks like a model
    that is still loading, so a tier that asked it during the warm-up would hang the command."""

    name = "fake"

    def __init__(self, fail: str | None = None) -> None:
        self.fail = fail
        self.release = threading.Event()
        self.reported = threading.Event()
        self.calls: list[str] = []

    def warm(self, stages: Sequence[StagePrompt], progress: Any = None, *,
             background: bool = True) -> WarmHandle:
        handle = WarmHandle()
        n = len(stages)

        def run() -> None:
            try:
                handle._report(progress, 0.0, "Loading the language model...")
                handle._report(progress, 0.4, f"Preparing the language model (decide.IV, 2/{n})")
                self.reported.set()
                deadline = time.monotonic() + 30
                while not self.release.wait(0.05) and not handle.cancelled:
                    if time.monotonic() > deadline:
                        break
                if self.fail:
                    raise RuntimeError(self.fail)
                handle._report(progress, 1.0, f"Language model ready ({n} stages, 0 from disk, "
                                              "1.0 s).")
            except Exception as exc:  # noqa: BLE001 - as LocalLlama.warm
                handle.error = str(exc)
                handle._report(progress, 1.0, f"Language model unavailable: {exc}")
            finally:
                handle._finish()

        handle.thread = threading.Thread(target=run, name="fake-warm", daemon=True)
        if background:
            handle.thread.start()
        else:
            run()
        return handle

    def complete_json(self, stage: str, system: str, user: str, schema: dict[str, Any],
                      max_tokens: int = 128, timeout_s: float = 10.0, **_kw: Any) -> LLMResult:
        self.calls.append(user)
        self.release.wait(timeout_s)  # "still loading"
        return LLMResult(None, "", False, "timeout", "did not answer in time", stage=stage)


@pytest.fixture(scope="module")
def demo_loaded(tmp_path_factory) -> LoadedCase:
    from app.data.case import load_case
    from app.data.demo import ensure_demo_case

    folder = ensure_demo_case(out=tmp_path_factory.mktemp("warm-demo") / "case", _scale=0.25)
    return LoadedCase(case=load_case(folder), model=None)


@pytest.fixture()
def make_window(qtbot):
    made: list[MainWindow] = []

    def make(runtime: SlowWarmRuntime, loaded: LoadedCase) -> MainWindow:
        tier = LLMTier(runtime, timeout_s=5.0)
        interp = FastInterpreter(tiers=[tier])
        w = MainWindow(anatomy=None, start_threads=False, mode="text")
        w._orch_factory = lambda: Orchestrator(w.registry, interpreter=interp, actor=TYPED)
        w.warmup_ready_hide_s = 0.3
        qtbot.addWidget(w)
        w.resize(1280, 720)
        made.append(w)
        w.set_loaded(loaded)
        return w

    yield make
    for w in made:
        w.shutdown()


def _answer(qtbot, w: MainWindow, text: str, timeout_s: float = 60.0) -> tuple[dict, float]:
    # timeout_s is a hang guard, not a timing check: the proof that commands do not wait
    # for the model is that they are answered while the fake warm-up is still held.
    n = len(w.trace.records)
    t0 = time.monotonic()
    w.submit_text(text)
    qtbot.waitUntil(lambda: len(w.trace.records) > n, timeout=round(timeout_s * 1000))
    return w.trace.records[-1], time.monotonic() - t0


def test_the_window_does_not_warm_by_itself(make_window, demo_loaded):
    rt = SlowWarmRuntime()
    w = make_window(rt, demo_loaded)
    assert w._warm_thread is None and not w.warming_up
    assert w.status.warmup_text() == ""


def test_warmup_progress_then_ready_while_commands_are_answered(qtbot, make_window,
                                                                demo_loaded):
    rt = SlowWarmRuntime()
    w = make_window(rt, demo_loaded)
    w.start_interpreter_warmup()
    assert w.start_interpreter_warmup() is w._warm_thread  # idempotent
    qtbot.waitUntil(lambda: w.status.warmup_text() == "Warming the language model 40%",
                    timeout=5000)
    assert not w.status.warm_bar.isHidden() and w.status.warm_bar.value() == 40
    assert "decide.IV" in w.status.warm_bar.toolTip()

    # The warm-up is still running: a fast-tier command is answered at once ...
    rec, took = _answer(qtbot, w, FAST_COMMAND)
    assert w.warming_up and not rt.release.is_set()
    assert rec["reply"]["ok"] and rec["tier"] == "lexicon", rec["reply"]
    assert w.state.iv.mode != "none"
    # ... and one the lexicon is unsure about does not wait for the model: the LLM tier
    # abstains while it warms (its runtime, "still loading", is never asked).
    rec, took = _answer(qtbot, w, UNSURE_COMMAND)
    assert rt.calls == [] and not rt.release.is_set()
    assert w.status.warmup_text().startswith("Warming the language model")

    rt.release.set()
    qtbot.waitUntil(lambda: w.status.warmup_text() == "Language model ready", timeout=5000)
    assert w.status.warm_bar.isHidden()
    assert any("Language model ready" in line for line in w.trace.lines())
    qtbot.waitUntil(lambda: w.status.warmup_text() == "", timeout=5000)  # then hides
    qtbot.waitUntil(lambda: not w.warming_up, timeout=5000)
    assert w.status.problem_text() == ""
    # Warm now: the LLM tier is asked again.
    _answer(qtbot, w, UNSURE_COMMAND)
    assert len(rt.calls) == 1


def test_the_llm_warms_once_the_case_is_in(qtbot, make_window, demo_loaded):
    """The model's load and prefix compute wait for the case (the start-up's I/O and CPU go
    to what the surgeon sees first); the strip says it is warming meanwhile."""
    rt = SlowWarmRuntime()
    w = make_window(rt, demo_loaded)
    w.loaded = None
    w._case_settled.clear()
    w.start_interpreter_warmup()
    qtbot.waitUntil(lambda: "Waiting for the case" in w.status.warm_bar.toolTip(), timeout=5000)
    assert w.status.warmup_text() == "Warming the language model 0%"
    time.sleep(0.3)
    assert not rt.reported.is_set()
    w.set_loaded(demo_loaded)
    qtbot.waitUntil(rt.reported.is_set, timeout=5000)
    qtbot.waitUntil(lambda: w.status.warmup_text() == "Warming the language model 40%",
                    timeout=5000)
    rt.release.set()
    qtbot.waitUntil(lambda: w.status.warmup_text() == "Language model ready", timeout=5000)


def test_closing_the_window_stops_the_warmup(qtbot, make_window, demo_loaded):
    rt = SlowWarmRuntime()
    w = make_window(rt, demo_loaded)
    w.start_interpreter_warmup()
    qtbot.waitUntil(rt.reported.is_set, timeout=5000)
    qtbot.waitUntil(lambda: bool(w._warm_handles), timeout=5000)
    t0 = time.monotonic()
    w.shutdown()
    assert time.monotonic() - t0 < 2.0
    assert all(h.done for h in w._warm_handles if hasattr(h, "cancel"))
    assert all(h.cancelled for h in w._warm_handles if hasattr(h, "cancel"))
    w._warm_thread.join(2)
    assert not w.warming_up


def test_warmup_failure_is_a_plain_warning_and_commands_still_work(qtbot, make_window,
                                                                   demo_loaded):
    rt = SlowWarmRuntime(fail="The language model could not be loaded: Model path does not "
                              "exist: /models/missing.gguf")
    w = make_window(rt, demo_loaded)
    w.start_interpreter_warmup()
    qtbot.waitUntil(rt.reported.is_set, timeout=5000)
    rt.release.set()
    expected = ("Language model unavailable: Model path does not exist: /models/missing.gguf "
                "\u2014 the other tiers, touch and keys still work.")
    qtbot.waitUntil(lambda: w.status.problem_text() == expected, timeout=5000)
    assert w.status.warmup_text() == ""
    assert any(expected in line for line in w.trace.lines())
    rec, _ = _answer(qtbot, w, FAST_COMMAND)
    assert rec["reply"]["ok"]
    assert w.send("IV.ZOOM_IN_MOVE", {"plane": "axial"}).ok  # touch
    # A case loaded afterwards keeps the warning in the strip.
    w.set_loaded(demo_loaded)
    assert expected in w.status.problem.toolTip()


def test_an_interpreter_without_the_llm_tier_says_why(qtbot, make_window, demo_loaded):
    w = make_window(SlowWarmRuntime(), demo_loaded)
    interp = FastInterpreter(tiers=[])
    interp.tier_problems = {"llm": "No module named 'llama_cpp'"}  # as build_interpreter
    w._orch_factory = lambda: Orchestrator(w.registry, interpreter=interp, actor=TYPED)
    w.start_interpreter_warmup()
    qtbot.waitUntil(lambda: "No module named 'llama_cpp'" in w.status.problem_text(),
                    timeout=5000)
    assert w.status.warmup_text() == ""
    assert _answer(qtbot, w, FAST_COMMAND)[0]["reply"]["ok"]


def test_llm_unavailable_text():
    assert llm_unavailable_text("The language model could not be loaded: boom.") == (
        "Language model unavailable: boom \u2014 the other tiers, touch and keys still work.")
    assert "it could not start" in llm_unavailable_text("")


def test_llm_tier_abstains_only_while_its_warmup_runs():
    rt = SlowWarmRuntime()
    tier = LLMTier(rt, timeout_s=0.2)
    state, memory = ConsoleState(), Memory()
    handle = tier.warm(background=True)
    assert tier.warming
    t0 = time.monotonic()
    assert tier.decide(UNSURE_COMMAND, state, memory) is None
    assert time.monotonic() - t0 < 0.1 and rt.calls == []
    rt.release.set()
    assert handle.wait(5)
    assert not tier.warming
    tier.decide(UNSURE_COMMAND, state, memory)
    assert len(rt.calls) == 1 and UNSURE_COMMAND in rt.calls[0]


# ----------------------------------------------------------------------------- the real tiers

@pytest.mark.slow
def test_real_window_answers_a_fast_command_within_5_s_while_the_llm_warms(qtbot, tmp_path,
                                                                          monkeypatch):
    """Window creation → first typed fast-tier command answered, with the real tiers warming
    (the real demo case loads too; typed commands wait for it). The issue asks for ≤ 5 s."""
    from app.runtime.models import model_path

    try:
        if not model_path("qwen2.5-coder-1.5b").is_file():
            pytest.skip("the default LLM is not installed")
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"the default LLM is not installed ({exc})")
    from app.agents import llm_local, llm_runtime

    # A fresh runtime with an empty prefix-state folder: the warm-up loads the model and
    # computes every prefix (tens of seconds on 2 cores), as on a first start. The semantic
    # tier and the demo case use their usual caches.
    monkeypatch.setattr(llm_runtime, "_SHARED", {})
    monkeypatch.setattr(llm_local, "default_state_dir", lambda: tmp_path / "llm-state")
    t0 = time.monotonic()
    w = MainWindow(mode="text", anatomy=None)
    qtbot.addWidget(w)
    try:
        w.start_interpreter_warmup()
        w.load_case(None)
        w.submit_text(FAST_COMMAND)
        qtbot.waitUntil(lambda: len(w.trace.records) == 1, timeout=60000)
        took = time.monotonic() - t0
        still_warming = w.warming_up
        rec = w.trace.records[0]
        print(f"\ntime to first typed command while warming: {took:.2f} s "
              f"(LLM still warming: {still_warming}; tier {rec['tier']}, "
              f"{rec['total_ms']:.0f} ms in the orchestrator)")
        assert rec["reply"]["ok"], rec["reply"]
        assert still_warming
        # the time is reported (issue 4: <= 5 s), not asserted: the machine is shared
    finally:
        # llama-cpp-python points the process's stdout/stderr at /dev/null while a model
        # loads; let the load finish so pytest's report is not swallowed.
        interp = getattr(getattr(w._shared, "inner", None), "_interpreter", None)
        llm = next((t for t in getattr(interp, "tiers", []) if t.name == "llm"), None)
        deadline = time.monotonic() + 120
        while llm is not None and w._case_settled.is_set() and w.warming_up and \
                not getattr(llm.runtime, "loaded", True) and time.monotonic() < deadline:
            qtbot.wait(200)
        w.shutdown()
