"""The evaluation harness end to end with fake orchestrators (app/eval/harness.py, report.py)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from app.core.registry import CommandRegistry, Step
from app.core.state import CaseContext, ConsoleState
from app.eval import harness
from app.eval.dataset import load_dataset
from app.eval.harness import EvalError, check_case, run_eval
from app.eval.report import compare_reports

CTX = CaseContext(iv_size=(("axial", 128), ("coronal", 512), ("sagittal", 512)),
                  tumor_lobes=("right_upper_lobe",),
                  structures=("left_lower_lobe", "left_upper_lobe", "lung_nodules",
                              "right_lower_lobe", "right_middle_lobe", "right_upper_lobe",
                              "trachea_bronchia"))
DATASETS = Path(__file__).resolve().parents[1] / "datasets"

# What the fake console does for each text: a plan, or None (rejected as invalid).
SCRIPT: dict[str, list[tuple[str, dict[str, Any]]] | None] = {
    "show the ct": [("IV.SHOW_MOVE", {})],
    "coronal plus 100": [("IV.SHOW_MOVE", {"coronal": "+100"})],
    "zoom in and rotate left": [("IV.ZOOM_IN_MOVE", {"plane": "coronal"}),
                                ("AR.ROTATE", {"direction": "left"})],
    "prepare the stapler": None,
    "show the bmi": [("IR.SHOW", {"fields": ["bmi"]})],
    "sagittal 200": [("IV.SHOW_MOVE", {"sagittal": 100})],  # a wrong parameter on purpose
}


class FakeOrchestrator:
    """Applies scripted plans through the real registry and writes §5.3 trace records."""

    def __init__(self, context: CaseContext, script: dict = SCRIPT) -> None:
        self.state = ConsoleState()
        self.state.set_case(context)
        self.registry = CommandRegistry(self.state)
        self.script = script
        self.resets: list[CaseContext] = []
        self.calls: list[dict[str, Any]] = []

    def reset(self, context: CaseContext) -> None:
        self.resets.append(context)
        fresh = ConsoleState()
        fresh.set_case(context)
        self.state.restore(fresh)

    def handle_text(self, text: str, cmd_id: str | None = None,
                    stt: dict[str, Any] | None = None) -> dict[str, Any]:
        self.calls.append({"text": text, "id": cmd_id, "stt": stt})
        if text == "crash":
            raise RuntimeError("boom")
        t0 = time.perf_counter()
        key = text.lower().strip(" .")
        plan = self.script.get(key)
        flow = (["audio", "stt"] if stt else []) + ["correct"]
        stages: dict[str, Any] = {"correct": {"text": key, "valid": plan is not None, "ms": 1.0}}
        if stt:
            stages["stt"] = {"text": stt["text"], "ms": stt["ms"]}
        if plan is not None:
            res = self.registry.dispatch_plan([Step(a, p) for a, p in plan])
            assert res.ok, res.message
            actions = res.actions()
            agents = list(dict.fromkeys(a["agent"] for a in actions))
            stages["route"] = {"agent": agents[0], "ms": 0.5}
            stages["decide"] = {"actions": actions, "ms": 2.0}
            flow += ["route", *agents]
        return {"id": cmd_id, "input": {"text": text}, "stages": stages, "tier": "lexicon",
                "flow": [*flow, "end"], "invalid_cycles": 0,
                "total_ms": (time.perf_counter() - t0) * 1000 + (stt or {}).get("ms", 0),
                "state": self.state.snapshot()}


def _row(rid: str, session: str, text: str, agent: str | None, expect: dict[str, Any],
         **extra: Any) -> str:
    r = {"id": rid, "session": session, "text": text, "agent": agent, "valid": agent is not None,
         "structure": "single", "type": "explicit", "expression": "baseline", "expect": expect}
    r.update(extra)
    return json.dumps(r)


FULL_START = {"agent": None, "ir": {"visible": False, "fields": []},
              "iv": {"mode": "none", "main": None,
                     "pos": {"axial": 64, "coronal": 256, "sagittal": 256},
                     "size": {"axial": 128, "coronal": 512, "sagittal": 512}},
              "ar": {"visible": False, "structures": [], "view": "surgical",
                     "rotation": "static", "zoom_level": 0, "zoom_target": None}}


def _tiny(tmp_path: Path) -> Path:
    lines = [
        _row("s1-1", "s1", "show the CT", "IV", {"agent": "IV", "iv": {
            "mode": "small_views", "pos": {"axial": 64, "coronal": 256, "sagittal": 256}}}),
        _row("s1-2", "s1", "coronal plus 100", "IV", {"iv": {"pos": {"coronal": 356}}}),
        _row("s1-3", "s1", "zoom in and rotate left", "IV", {
            "agent": "AR", "iv": {"mode": "zoom_view", "main": "coronal"},
            "ar": {"visible": True, "rotation": "left"}},
            structure="composite", agents=["IV", "AR"],
            actions=[{"agent": "IV", "action": "ZOOM_IN_MOVE", "params": {"plane": "coronal"}},
                     {"agent": "AR", "action": "ROTATE", "params": {"direction": "left"}}]),
        _row("s1-4", "s1", "sagittal 200", "IV", {"iv": {"pos": {"sagittal": 200}}},
             actions=[{"agent": "IV", "action": "SHOW_MOVE", "params": {"sagittal": 200}}]),
        # Session 2 starts fresh: coronal back at the middle slice, nothing shown before.
        _row("s2-1", "s2", "prepare the stapler", None, FULL_START, tags=["oos"]),
        _row("s2-2", "s2", "show the CT", "IV", {"agent": "IV", "iv": {
            "mode": "small_views", "pos": {"axial": 64, "coronal": 256, "sagittal": 256}}}),
    ]
    p = tmp_path / "tiny.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def test_run_eval_text_mode_writes_everything(tmp_path: Path) -> None:
    made: list[FakeOrchestrator] = []

    def factory(ctx: CaseContext) -> FakeOrchestrator:
        made.append(FakeOrchestrator(ctx))
        return made[-1]

    out = tmp_path / "out"
    res = run_eval(_tiny(tmp_path), factory, out_dir=out, progress=False, context=CTX,
                   case_name="test case", strategy="fast")
    orch = made[0]
    assert len(made) == 1 and len(orch.resets) == 2  # one reset per session
    assert [c["id"] for c in orch.calls] == ["s1-1", "s1-2", "s1-3", "s1-4", "s2-1", "s2-2"]

    lines = [json.loads(x) for x in (out / "trace.jsonl").read_text().splitlines()]
    assert len(lines) == 6
    assert lines[0]["eval"]["row"]["id"] == "s1-1"
    assert lines[2]["eval"]["row"]["structure"] == "composite"
    assert {"id", "stages", "flow", "state", "invalid_cycles", "total_ms"} <= set(lines[0])
    by_id = {x["eval"]["row"]["id"]: x["eval"]["score"] for x in lines}
    assert by_id["s1-3"]["fully_correct"] == 1
    assert by_id["s1-4"]["ap"] == 0 and by_id["s1-4"]["af"] == 1  # wrong parameter
    assert by_id["s2-1"]["single_pass"] == 1  # judged against session 2's fresh state
    assert by_id["s2-2"]["single_pass"] == 1  # would fail without the reset (coronal 356)

    m = json.loads((out / "metrics.json").read_text())
    assert {"meta", "overall", "by_agent", "by_category", "by_category_pair", "out_of_scope",
            "composite", "latency", "tiers", "side_effect_free"} <= set(m)
    assert m["meta"]["commands"] == 6 and m["meta"]["sessions"] == 2
    assert m["overall"]["success"]["single_pass"]["k"] == 5
    assert m["overall"]["success"]["single_pass"]["ci"][0] > 0.4
    assert m["out_of_scope"]["rejected_with_zero_state_change"]["k"] == 1
    assert m["composite"]["fully_correct"]["k"] == 1
    assert m == res.metrics

    html = (out / "report.html").read_text()
    assert html.count("data:image/png;base64,") == 5  # stages, success, heatmaps, flow, latency
    assert "src='http" not in html and 'src="http' not in html  # self-contained
    assert "s1-4" in html and "iv.pos.sagittal: expected 200, got 100" in html
    md = (out / "report.md").read_text()
    assert "single-pass success" in md and "| IV |" in md
    assert res.report_paths == {"html": out / "report.html", "md": out / "report.md"}


def test_crashing_command_is_scored_and_run_continues(tmp_path: Path) -> None:
    p = tmp_path / "c.jsonl"
    p.write_text("\n".join([
        _row("1", "s", "crash", "IV", {"agent": "IV"}),
        _row("2", "s", "show the CT", "IV", {"agent": "IV", "iv": {"mode": "small_views"}}),
    ]) + "\n", encoding="utf-8")
    res = run_eval(p, FakeOrchestrator, out_dir=tmp_path / "o", progress=False, context=CTX,
                   report=False)
    assert [s.single_pass for s in res.scores] == [0, 1]
    assert res.metrics["meta"]["errors"] == 1
    assert "RuntimeError: boom" in res.scores[0].detail["error"]
    assert any("raised an error" in w for w in res.warnings)


def _audio_dataset(tmp_path: Path) -> Path:
    (tmp_path / "audio").mkdir()
    for name in ("1a", "1b", "1c", "2a", "3a", "3b"):
        (tmp_path / "audio" / f"{name}.wav").write_bytes(b"RIFF")
    p = tmp_path / "a.jsonl"
    p.write_text("\n".join([
        _row("1", "s", "show the CT", "IV", {"agent": "IV", "iv": {"mode": "small_views"}},
             audio=["audio/1a.wav", "audio/1b.wav", "audio/1c.wav"]),
        _row("2", "s", "prepare the stapler", None, {}, audio="audio/2a.wav"),
        _row("3", "s", "coronal plus 100", "IV", {"iv": {"pos": {"coronal": 356}}},
             audio=["audio/3a.wav", "audio/3b.wav"]),
    ]) + "\n", encoding="utf-8")
    return p


# The first two voices of command 1 are misheard; command 3 is heard right at once.
HEARD = {"1a": "show the sea tea", "1b": "so the city", "1c": "show the CT.",
         "2a": "prepare the stapler", "3a": "corona plus one hundred", "3b": "unused"}


def _transcriber(seen: list[str]):
    def transcribe(path: Path) -> dict[str, Any]:
        seen.append(path.stem)
        return {"text": HEARD[path.stem], "ms": 800.0}
    return transcribe


def test_audio_mode_retries_with_the_next_voice(tmp_path: Path) -> None:
    seen: list[str] = []
    # The console repairs "corona" (a speech-recognition error) into "coronal".
    script = dict(SCRIPT, **{"corona plus one hundred": SCRIPT["coronal plus 100"]})
    res = run_eval(_audio_dataset(tmp_path), lambda c: FakeOrchestrator(c, script),
                   mode="audio", out_dir=tmp_path / "o", progress=False, context=CTX,
                   transcriber=_transcriber(seen), report=False)
    s1, s2, s3 = res.scores
    assert seen == ["1a", "1b", "1c", "2a", "3a"]  # out of scope: not repeated; 3b not needed
    assert s1.ic == 2 and (s1.strict, s1.single_pass, s1.multi_pass) == (0, 0, 1)
    assert s1.stt == 1  # the attempt that produced the outcome was heard right
    assert s2.ic == 0 and s2.single_pass == 1
    assert s3.stt == 0 and s3.single_pass == 1 and s3.strict == 0  # STT erred, CC recovered
    trace = [json.loads(x) for x in res.trace_path.read_text().splitlines()]
    assert len(trace[0]["eval"]["attempts"]) == 2
    assert trace[0]["stages"]["stt"]["text"] == "show the CT."
    assert res.metrics["overall"]["stages"]["STT"]["n"] == 3
    lat = res.metrics["latency"]["stages"]
    assert lat["stt"]["median"] == 800.0


class SelfLooping(FakeOrchestrator):
    """Like the visa workflow: loops back for new input itself, taking ``alternatives``."""

    strategy = "visa"

    def handle_text(self, text: str, cmd_id: str | None = None,
                    stt: dict[str, Any] | None = None,
                    alternatives: list[str] | None = None) -> dict[str, Any]:
        tries = [text, *(alternatives or [])][:4]
        for n, t in enumerate(tries):
            rec = super().handle_text(t, cmd_id, stt)
            if rec["stages"]["correct"]["valid"] or n == len(tries) - 1:
                rec["invalid_cycles"] = n
                rec["flow"] = ["audio", "stt", "correct"] * n + rec["flow"]
                return rec
        raise AssertionError("unreachable")


def test_self_looping_orchestrator_gets_alternatives_not_retries(tmp_path: Path) -> None:
    seen: list[str] = []
    res = run_eval(_audio_dataset(tmp_path), SelfLooping, mode="audio", out_dir=tmp_path / "o",
                   progress=False, context=CTX, transcriber=_transcriber(seen), report=False)
    s1 = res.scores[0]
    assert s1.ic == 2 and s1.multi_pass == 1 and s1.of == 1
    trace = [json.loads(x) for x in res.trace_path.read_text().splitlines()]
    assert trace[0]["eval"]["attempts"] == []  # the loops happened inside one record


def test_audio_mode_needs_a_transcriber_and_the_files(tmp_path: Path) -> None:
    p = _audio_dataset(tmp_path)
    with pytest.raises(EvalError, match="transcriber"):
        run_eval(p, FakeOrchestrator, mode="audio", out_dir=tmp_path / "o", progress=False,
                 context=CTX)
    (tmp_path / "audio" / "1b.wav").unlink()
    with pytest.raises(EvalError, match=r"1 audio file\(s\) are missing.*1b.wav"):
        run_eval(p, FakeOrchestrator, mode="audio", out_dir=tmp_path / "o", progress=False,
                 context=CTX, transcriber=_transcriber([]))
    with pytest.raises(EvalError, match="no 'audio' entries"):
        run_eval(_tiny(tmp_path), FakeOrchestrator, mode="audio", out_dir=tmp_path / "o",
                 progress=False, context=CTX, transcriber=_transcriber([]))


def test_cli_audio_without_stt_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli import main

    monkeypatch.setattr(harness, "find_transcriber", lambda: (None, "no STT in this build"))
    assert main(["eval", str(_audio_dataset(tmp_path)), "--mode", "audio",
                 "--out", str(tmp_path / "o")]) == 2
    assert "Audio mode is not available: no STT in this build" in capsys.readouterr().err


def test_cli_reports_dataset_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli import main

    p = tmp_path / "bad.jsonl"
    p.write_text('{"id": "1"}\n', encoding="utf-8")
    assert main(["eval", str(p), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "line 1: missing 'text'" in err and "line 1: missing 'valid'" in err


def test_cli_eval_with_the_real_orchestrator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("app.agents.orchestrator")
    from app.cli import main

    monkeypatch.setattr(harness, "default_case", lambda: (CTX, "test case"))
    out = tmp_path / "o"
    assert main(["eval", str(_tiny(tmp_path)), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "6 commands in 2 session(s), text mode, strategy fast" in printed
    assert f"Report:  {out / 'report.html'}" in printed
    assert (out / "trace.jsonl").read_text().count("\n") == 6
    assert json.loads((out / "metrics.json").read_text())["meta"]["strategy"] == "fast"


def test_case_mismatch_warnings() -> None:
    expected = json.loads((DATASETS / "case.json").read_text())
    assert check_case(expected, CTX) == []
    other = CaseContext(iv_size=(("axial", 64), ("coronal", 512), ("sagittal", 512)),
                        tumor_lobes=("left_lower_lobe",), structures=CTX.structures,
                        has_clinical=False)
    w = check_case(expected, other)
    assert len(w) == 3
    assert "slices" in w[0] and "tumour" in w[1] and "clinical" in w[2]


def test_oracle_scores_perfectly_on_the_team_dataset(tmp_path: Path) -> None:
    """Replaying each row's canonical plan must score 100% everywhere: the metric definitions
    agree with the dataset's semantics (and `expect` holds every key a command changes)."""
    ds = load_dataset(DATASETS / "dev.jsonl")
    rows = {r.id: r for r in ds}
    script: dict[str, Any] = {}

    class Oracle(FakeOrchestrator):
        def handle_text(self, text: str, cmd_id: str | None = None,
                        stt: dict[str, Any] | None = None) -> dict[str, Any]:
            r = rows[cmd_id or ""]
            if r.valid and not r.actions:  # silent input: re-select the previous agent
                self.state.apply(agent=r.agent)
                return {"id": cmd_id, "stages": {
                    "correct": {"text": "", "valid": True, "ms": 0},
                    "route": {"agent": r.agent, "ms": 0}, "decide": {"actions": [], "ms": 0}},
                    "tier": "memory", "flow": ["correct", "route", r.agent, "end"],
                    "invalid_cycles": 0, "total_ms": 0, "state": self.state.snapshot()}
            self.script = {text.lower().strip(" ."): None if not r.valid else [
                (f"{a['agent']}.{a['action']}", a["params"]) for a in r.actions or []]}
            return super().handle_text(text, cmd_id, stt)

    res = run_eval(ds, lambda c: Oracle(c, script), out_dir=tmp_path, progress=False,
                   context=CTX, report=False)
    o = res.metrics["overall"]
    for name, p in o["stages"].items():
        assert p is None or p["rate"] == 1.0, name
    assert all(p["rate"] == 1.0 for p in o["success"].values())
    assert res.metrics["side_effect_free"]["rate"] == 1.0
    assert res.metrics["out_of_scope"]["rejected_with_zero_state_change"]["rate"] == 1.0


def test_compare_reports_side_by_side(tmp_path: Path) -> None:
    a = run_eval(_tiny(tmp_path), FakeOrchestrator, out_dir=tmp_path / "a", progress=False,
                 context=CTX, strategy="fast", report=False).metrics
    b = json.loads(json.dumps(a))
    b["meta"]["strategy"] = "visa"
    b["overall"]["success"]["strict"] = {"k": 3, "n": 6, "rate": 0.5, "ci": [0.188, 0.812]}
    md = compare_reports([a, b])
    lines = md.splitlines()
    assert lines[0] == "| metric | fast (text) | visa (text) |"
    strict = next(x for x in lines if x.startswith("| strict success"))
    assert "50.0% [18.8, 81.2] (3/6)" in strict
    assert any(x.startswith("| latency total median / p95") for x in lines)
    assert compare_reports([a], labels=["mine"]).splitlines()[0] == "| metric | mine |"
