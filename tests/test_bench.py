"""`visa-console bench` in quick mode: sections run isolated, a failing section is recorded and
the others still run, and bench.json / bench.md have the documented structure. The LLM is a
scripted fake (no model loads); timings are never asserted."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from app.agents import prompts
from app.agents.llm_types import LLMResult, StagePrompt, WarmHandle, parse_json_answer
from app.eval import bench
from app.eval.bench import BenchConfig, dist, parse_skip, run_bench


class ScriptedRuntime:
    """An LLMRuntime answering per stage: the visa orchestrator follows the rules, visa
    correct/route echo the command, and every decision stage shows the 3D model."""

    name = "fake"

    def __init__(self) -> None:
        self.calls: list[str] = []

    def complete_json(self, stage: str, system: str, user: str, schema: dict[str, Any],
                      max_tokens: int = 128, timeout_s: float = 10.0, *,
                      examples: Sequence[tuple[str, str]] = (), context: str = "",
                      on_text: Any = None) -> LLMResult:
        self.calls.append(stage)
        if stage == "visa.orchestrate":
            fn = prompts.VISA_RULES.get(user.removeprefix("status: "), "end")
            answer = json.dumps({fn: 0.9})
        elif stage == "visa.correct":
            answer = json.dumps({"command": user.removeprefix("command: "), "valid": True})
        elif stage == "visa.route":
            answer = '{"agent": "AR"}'
        else:
            answer = '{"valid": true, "steps": [{"action": "AR.SHOW", "params": {}}]}'
        data, err, detail = parse_json_answer(answer, schema)
        return LLMResult(data, answer, err is None, err, detail, stage=stage, cache="hit")

    def warm(self, stages: Sequence[StagePrompt], progress: Any = None, *,
             background: bool = True) -> WarmHandle:
        h = WarmHandle()
        h._finish()
        return h

    def warm_context(self, stage: StagePrompt, context: str) -> WarmHandle:
        h = WarmHandle()
        h._finish()
        return h

    def close(self) -> None:
        pass


def test_parse_skip_names_and_aliases() -> None:
    assert parse_skip("llm, visa,console") == {"llm", "strategies", "console"}
    assert parse_skip("") == frozenset()
    with pytest.raises(ValueError, match="unknown section 'gpu'"):
        parse_skip("llm,gpu")


def test_dist_median_and_p95() -> None:
    d = dist([1, 2, 3, 4, 100, None])
    assert d["n"] == 5 and d["median"] == 3 and d["max"] == 100
    assert 4 < d["p95"] <= 100
    assert dist([])["median"] is None


def test_quick_bench_writes_json_and_markdown(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = ScriptedRuntime()

    def broken(cfg: BenchConfig, ctx: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("the GPU caught fire")

    # The data section fails on purpose: its error is recorded and memory still runs after it.
    monkeypatch.setitem(bench.SECTION_FUNCS, "data", broken)
    lines: list[str] = []
    cfg = BenchConfig(out=tmp_path, quick=True, tiers="", runtime=runtime,
                      skip=parse_skip("console,stt"), progress=lines.append)
    report = run_bench(cfg)

    data = json.loads((tmp_path / "bench.json").read_text())
    assert data["meta"]["machine"]["cores"] >= 1
    assert {"cpu", "ram_gb", "os", "python", "packages"} <= set(data["meta"]["machine"])
    assert "llama-cpp-python" in data["meta"]["machine"]["packages"]
    assert len(data["meta"]["loadavg_start"]) == 3 and data["meta"]["date"]
    assert data["meta"]["skipped"] == ["console", "stt"]
    assert data["meta"]["failed"] == ["data"]
    assert set(data["sections"]) == {"interpreter", "llm", "strategies", "data", "memory"}
    assert "the GPU caught fire" in data["sections"]["data"]["error"]
    # One progress line before and one after every section that ran.
    assert len(lines) == 2 * len(data["sections"])

    it = data["sections"]["interpreter"]
    assert it["commands"] == 20
    assert {"normalize", "correct", "validate", "route", "decide", "total"} <= set(it["stage_ms"])
    assert it["stage_ms"]["total"]["n"] == 20
    assert sum(t["decided"] for t in it["by_tier"].values()) == 20
    assert it["startup"]["commands"] and it["startup"]["first_answer_s"] is not None

    llm = data["sections"]["llm"]
    assert "skipped" in llm["prefix_cache"]  # bench_llm needs the real model
    tc = llm["tier_calls"]
    assert tc["prefix_warm"]["n"] == len(bench.LLM_TIER_COMMANDS)
    assert tc["context_warmed"]["ms"]["median"] is not None
    assert all(isinstance(c["lexicon_confidence"], float) for c in tc["prefix_warm"]["calls"])
    assert 0 <= tc["prefix_warm"]["below_accept"] <= tc["prefix_warm"]["n"]

    st = data["sections"]["strategies"]
    assert st["commands"] == 3 and len(st["per_command"]) == 3
    for k in ("fast", "visa"):
        assert st[k]["AD"]["n"] == 3 and st[k]["latency_ms"]["n"] == 3
    assert "visa.orchestrate" in runtime.calls

    mem = data["sections"]["memory"]
    assert mem["peak_rss_mb"] > 0 and "interpreter" in mem["per_section"]
    for s in data["sections"].values():
        assert {"seconds", "loadavg_start", "loadavg_end", "rss_before_mb"} <= set(s)

    measures = [g["measure"] for g in data["goals"]]
    assert any("Latency per command" in m for m in measures)
    assert any("LLM-tier call" in m for m in measures)
    assert all(g["met"] in (True, False, None) for g in data["goals"])

    md = (tmp_path / "bench.md").read_text()
    assert md == bench.markdown(report)
    assert "## Goals" in md and "| Issue | Measure |" in md
    assert "**Failed**: RuntimeError: the GPU caught fire" in md
    assert "fast vs visa" in md and "| visa |" in md


def test_cli_bench_skips_everything_but_memory(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli import main

    rc = main(["bench", "--quick", "--out", str(tmp_path), "--skip",
               "interpreter,llm,visa,console,stt,data"])
    assert rc == 0
    data = json.loads((tmp_path / "bench.json").read_text())
    assert list(data["sections"]) == ["memory"]
    assert "bench.md" in capsys.readouterr().out
    assert main(["bench", "--skip", "nope", "--out", str(tmp_path)]) == 2


def test_llm_section_reports_a_missing_model_and_keeps_the_tier_calls(tmp_path: Path) -> None:
    cfg = BenchConfig(out=tmp_path, quick=True, runtime=ScriptedRuntime(),
                      llm_model_id="no-such-model", progress=lambda line: None,
                      skip=parse_skip("interpreter,strategies,console,stt,data,memory"))
    report = run_bench(cfg)
    llm = report["sections"]["llm"]
    assert "no-such-model" in llm["prefix_cache"]["error"]
    assert llm["tier_calls"]["prefix_warm"]["n"] == len(bench.LLM_TIER_COMMANDS)
    assert report["meta"]["failed"] == []
    assert "Prefix cache: " in (tmp_path / "bench.md").read_text()
