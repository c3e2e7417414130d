"""Run an evaluation dataset through an orchestrator and write trace, metrics and report.

The harness only talks to the interpreter through the trace-record contract (DESIGN §5.3):
``handle_text(text, cmd_id=None, stt=None) -> record`` and ``reset(context)``, so any strategy
(fast tiers, the ``visa`` reference workflow, a fake in tests) is measured the same way.

Rows run in file order with the state carried over; each new ``session`` starts from the
initial state (``reset``). In audio mode each row's ``audio`` (a file, or a list of alternative
voices) goes through a transcriber ``transcribe(path) -> {"text", "ms"}``. When the console
rejects a command the dataset marks valid, the harness retries with the next voice, as a
surgeon repeats a command the console did not take; every retry is one invalid cycle (at most
3 count for multi-pass success). An out-of-scope command is not repeated: a surgeon does not
say "prepare the stapler" to the console twice. In text mode a retry has no new input, so IC
comes only from the orchestrator's own loops. An orchestrator that loops back for new input
by itself (the ``visa`` workflow) gets the following voices' transcripts as ``alternatives``
instead, and the harness adds no retries of its own.
"""

from __future__ import annotations

import argparse
import inspect
import json
import logging
import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from app.core.state import CaseContext, ConsoleState
from app.eval.dataset import Dataset, DatasetError, Row, load_dataset
from app.eval.metrics import (
    MAX_INVALID_LOOPS,
    CommandScore,
    aggregate,
    merge_expect,
    record_valid,
    score_command,
)
from app.runtime.settings import settings

log = logging.getLogger(__name__)

Transcriber = Callable[[Path], dict[str, Any]]


class Orchestrator(Protocol):
    def handle_text(self, text: str, cmd_id: str | None = None,
                    stt: dict[str, Any] | None = None) -> dict[str, Any]: ...

    def reset(self, context: CaseContext) -> None: ...


OrchestratorFactory = Callable[[CaseContext], Orchestrator]


class EvalError(RuntimeError):
    """The evaluation cannot run; the message says why in plain words."""


@dataclass
class EvalResult:
    metrics: dict[str, Any]
    out_dir: Path
    trace_path: Path
    metrics_path: Path
    report_paths: dict[str, Path] = field(default_factory=dict)
    scores: list[CommandScore] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


# ------------------------------------------------------------------------------ case
def initial_snapshot(context: CaseContext) -> dict[str, Any]:
    """The state a session starts from (nothing shown, middle slices): DESIGN §4, §5.1."""
    state = ConsoleState()
    state.set_case(context)
    return state.snapshot()


def default_case() -> tuple[CaseContext, str]:
    """The built-in demo case's context (generated on first use)."""
    from app.data.demo import ensure_demo_case

    return load_case_context(ensure_demo_case(), "built-in demo case")


def load_case_context(path: Path, name: str | None = None) -> tuple[CaseContext, str]:
    from app.data.case import load_case
    from app.data.problems import LoadError

    try:
        case = load_case(path, load_video=False)  # the video plays no part in scoring
    except LoadError as exc:
        raise EvalError(str(exc)) from exc
    for p in case.errors:
        log.warning("case problem: %s", getattr(p, "message", p))
    return case.context(), name or case.name


def check_case(expected: dict[str, Any] | None, context: CaseContext) -> list[str]:
    """Plain warnings where the case differs from what the dataset assumes (its case.json):
    every ``expect`` was computed for that case, so a mismatch fails rows for no fault of
    the interpreter."""
    if not expected:
        return []
    warnings: list[str] = []
    if "iv_size" in expected:
        got = dict(context.iv_size) if context.iv_size is not None else None
        if got != expected["iv_size"]:
            warnings.append(f"the dataset assumes a CT of {expected['iv_size']} slices, "
                            f"the case has {got or 'no CT'}")
    if "tumor_lobes" in expected and sorted(expected["tumor_lobes"] or []) != sorted(
            context.tumor_lobes):
        warnings.append(f"the dataset assumes tumour lobe(s) {expected['tumor_lobes']}, "
                        f"the case has {list(context.tumor_lobes) or 'none'}")
    if "structures" in expected:
        got_s = sorted(context.structures) if context.structures is not None else None
        if got_s != sorted(expected["structures"] or []):
            warnings.append(f"the dataset assumes 3D structures {expected['structures']}, "
                            f"the case has {got_s}")
    if "has_clinical" in expected and bool(expected["has_clinical"]) != context.has_clinical:
        warnings.append("the dataset assumes a clinical sheet " +
                        ("is present, the case has none" if expected["has_clinical"]
                         else "is absent, the case has one"))
    return warnings


# ------------------------------------------------------------------------------ running
def _error_record(row: Row, text: str, prev: dict[str, Any], exc: BaseException) -> dict[str, Any]:
    # The command is scored as failed at every stage; the state is assumed unchanged, which
    # is the best guess the harness has (the orchestrator applies plans as transactions).
    return {"id": row.id, "input": {"text": text}, "stages": {}, "tier": None, "flow": [],
            "invalid_cycles": 0, "total_ms": None, "state": prev,
            "error": f"{type(exc).__name__}: {exc}"}


def _run_row(orch: Orchestrator, row: Row, mode: str, transcriber: Transcriber | None,
             prev: dict[str, Any], notes: dict[str, int]) -> tuple[dict[str, Any], list[dict]]:
    """Run one command; returns (final record, earlier invalid attempts)."""
    if mode != "audio" or not row.audio:
        if mode == "audio":
            notes["rows_without_audio"] = notes.get("rows_without_audio", 0) + 1
        try:
            return orch.handle_text(row.text, cmd_id=row.id), []
        except Exception as exc:  # one broken command must not end a 300-command run
            log.exception("command %s failed", row.id)
            notes["errors"] = notes.get("errors", 0) + 1
            return _error_record(row, row.text, prev, exc), []
    assert transcriber is not None
    attempts: list[dict[str, Any]] = []
    voices = list(row.audio)[: MAX_INVALID_LOOPS + 1]
    heard: dict[int, dict[str, Any]] = {}

    def hear(k: int) -> dict[str, Any]:
        if k not in heard:  # each voice is transcribed at most once
            t = transcriber(voices[k])
            heard[k] = {"text": str(t.get("text") or ""), "ms": t.get("ms", 0),
                        "audio": str(voices[k]),
                        **({"logprob": t["logprob"]} if t.get("logprob") is not None else {}),
                        **({"second": t["second"]} if t.get("second") else {}),
                        **({"domain": t["domain"]} if t.get("domain") else {})}
        return heard[k]

    self_looping = _loops_on_invalid(orch)
    for k in range(len(voices)):
        try:
            stt = hear(k)
            if self_looping:
                # The orchestrator loops back for new input itself (the visa workflow): give
                # it the next voices' transcripts as that new input.
                alts = [hear(i)["text"] for i in range(k + 1, len(voices))]
                rec = orch.handle_text(stt["text"], cmd_id=row.id, stt=dict(stt),
                                       alternatives=alts)  # type: ignore[call-arg]
            else:
                rec = orch.handle_text(stt["text"], cmd_id=row.id, stt=dict(stt))
        except Exception as exc:
            log.exception("command %s (%s) failed", row.id, voices[k])
            notes["errors"] = notes.get("errors", 0) + 1
            rec = _error_record(row, "", prev, exc)
        else:
            stages = rec.setdefault("stages", {})
            if not isinstance(stages.get("stt"), dict):
                # The orchestrator did not echo the transcript: keep STT scoreable.
                stages["stt"] = {"text": stt["text"], "ms": stt["ms"]}
                notes["stt_stage_added"] = notes.get("stt_stage_added", 0) + 1
        attempts.append(rec)
        retry = (row.valid and record_valid(rec) is False and "error" not in rec
                 and not (self_looping or int(rec.get("invalid_cycles") or 0) > 0)
                 and k + 1 < len(voices))
        if not retry:
            break
    return attempts[-1], attempts[:-1]


def _loops_on_invalid(orch: Any) -> bool:
    """Does the orchestrator loop back for new input by itself (and take ``alternatives``)?

    Declared by ``loops_on_invalid = True``, or implied by ``strategy == "visa"`` (the
    reference workflow loops at most 3 times). Such an orchestrator gets the next voices up
    front and the harness does not add retries of its own, so loops are not counted twice.
    """
    declared = getattr(orch, "loops_on_invalid", None)
    if declared is not None:
        return bool(declared)
    if getattr(orch, "strategy", None) != "visa":
        return False
    try:
        return "alternatives" in inspect.signature(orch.handle_text).parameters
    except (TypeError, ValueError):
        return False


def run_eval(dataset: Dataset | Path | str, orchestrator_factory: OrchestratorFactory,
             mode: str = "text", out_dir: Path | str = "eval-out", progress: bool = True, *,
             context: CaseContext | None = None, case_name: str | None = None,
             transcriber: Transcriber | None = None, strategy: str | None = None,
             report: bool = True) -> EvalResult:
    """Run every row in file order and write ``trace.jsonl``, ``metrics.json`` and the report.

    ``orchestrator_factory(context)`` is called once; ``reset(context)`` starts each session.
    ``context`` defaults to the built-in demo case.
    """
    if mode not in ("text", "audio"):
        raise EvalError(f"unknown mode {mode!r}: use text or audio")
    ds = dataset if isinstance(dataset, Dataset) else load_dataset(dataset)
    if mode == "audio":
        if transcriber is None:
            raise EvalError("audio mode needs a speech-to-text transcriber, and none was given")
        if not ds.has_audio():
            raise EvalError(f"the dataset {ds.path} has no 'audio' entries; generate the audio "
                            "first or use --mode text")
        missing = [f"line {r.line}: {p}" for r in ds for p in r.audio if not p.is_file()]
        if missing:
            raise EvalError(f"{len(missing)} audio file(s) are missing, e.g. "
                            + "; ".join(missing[:5]))
    if context is None:
        context, case_name = default_case()
    warnings = check_case(ds.case_expectations, context)
    for w in warnings:
        log.warning("case mismatch: %s", w)
        print(f"warning: {w}; rows will be judged against the dataset's case", file=sys.stderr)

    out = Path(out_dir).expanduser()
    out.mkdir(parents=True, exist_ok=True)
    trace_path = out / "trace.jsonl"
    t0 = time.perf_counter()
    orch = orchestrator_factory(context)
    wait = getattr(orch, "wait_ready", None)
    if callable(wait):  # every enabled tier ready before the first command (DESIGN §5.4)
        if progress:
            print("eval: getting the interpreter tiers ready ...", file=sys.stderr)
        for name in wait():
            warnings.append(f"the {name} tier could not get ready and abstained throughout")
    start_state = initial_snapshot(context)
    notes: dict[str, int] = {}
    rows: list[Row] = []
    scores: list[CommandScore] = []
    records: list[dict[str, Any]] = []

    from tqdm import tqdm

    bar = tqdm(total=len(ds), desc=f"eval {strategy or ''} {mode}".replace("  ", " "),
               unit="cmd", disable=not progress, file=sys.stderr, dynamic_ncols=True)
    with trace_path.open("w", encoding="utf-8") as fh:
        for _session, session_rows in ds.sessions():
            orch.reset(context)
            prev = start_state
            story = start_state  # the state had every command so far been right
            for row in session_rows:
                rec, earlier = _run_row(orch, row, mode, transcriber, prev, notes)
                score = score_command(row, rec, prev, story_before=story, mode=mode,
                                      extra_cycles=len(earlier))
                if row.valid:
                    story = merge_expect(story, row.expect)
                line = dict(rec)
                line["eval"] = {
                    "row": {"id": row.id, "line": row.line, "session": row.session,
                            "text": row.text, "agent": row.agent, "valid": row.valid,
                            **row.categories, "tags": list(row.tags)},
                    "score": score.to_dict(),
                    "attempts": earlier,
                }
                # Written as we go: a crash at row 250 still leaves 249 scored commands.
                fh.write(json.dumps(line, default=str) + "\n")
                fh.flush()
                rows.append(row)
                scores.append(score)
                records.append(rec)
                if isinstance(rec.get("state"), dict):
                    prev = rec["state"]
                bar.update(1)
                k = len(scores)
                bar.set_postfix(single_pass=f"{sum(s.single_pass for s in scores) / k:.0%}",
                                AD_cmd=f"{sum(s.ad_cmd for s in scores) / k:.0%}",
                                AD_session=f"{sum(s.ad for s in scores) / k:.0%}",
                                refresh=False)
    bar.close()
    wall = time.perf_counter() - t0

    for key, what in (("errors", "command(s) raised an error and were scored as failed"),
                      ("rows_without_audio", "row(s) had no audio and ran as text"),
                      ("stt_stage_added", "record(s) lacked the STT stage; the harness added it")):
        if notes.get(key):
            warnings.append(f"{notes[key]} {what}")
    metrics: dict[str, Any] = {
        "meta": {
            "dataset": str(ds.path),
            "commands": len(rows),
            "sessions": len(ds.sessions()),
            "mode": mode,
            "strategy": strategy,
            "case": case_name,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": f"{platform.system()} {platform.machine()}, {platform.processor() or '?'}",
            "wall_s": round(wall, 3),
            "errors": notes.get("errors", 0),
            "llm_timeout_s": settings().llm_timeout_s or CONSOLE_LLM_TIMEOUT_S,
            # commands the LLM tier decided slower than the console's own deadline allows
            "llm_past_console_deadline": sum(
                1 for r in records if r.get("tier") == "llm"
                and float(r.get("total_ms") or 0) > CONSOLE_LLM_TIMEOUT_S * 1e3),
            "warnings": warnings,
            "definitions": DEFINITIONS,
        },
        **aggregate(rows, scores, records),
    }
    metrics_path = out / "metrics.json"
    metrics_path.write_text(json.dumps(metrics, indent=2, default=str) + "\n", encoding="utf-8")
    result = EvalResult(metrics=metrics, out_dir=out, trace_path=trace_path,
                        metrics_path=metrics_path, scores=scores, warnings=warnings)
    if report:
        from app.eval.report import write_report

        result.report_paths = write_report(metrics, rows, scores, out)
    return result


CONSOLE_LLM_TIMEOUT_S = 12.0  # the console's default (app.agents.factory.InterpreterConfig)
EVAL_LLM_TIMEOUT_S = 120.0


DEFINITIONS = {
    "STT": "transcript equals the dataset text after normalisation (audio rows only)",
    "CC": "validity right; for valid rows also the corrected text equals the dataset text "
          "after normalisation OR the decided actions are right (AD)",
    "CR": "route agent right and the plan's agents (in order) right; invalid: no route",
    "AF": "action names equal the canonical plan's OR (valid and the state matches expect)",
    "AP": "state snapshot matches expect (deep partial match, lists sorted)",
    "AD": "AF and AP",
    "OF": "flow is [audio] [stt] correct (loop)* then route + the plan's agents for valid "
          "commands, end right after correct for invalid ones",
    "IC": "invalid cycles: the record's own plus the harness's retries with the next voice",
    "strict": "outcome right, every stage right, IC 0",
    "single_pass": "outcome right (validity, AP, unchanged state for invalid rows), IC 0",
    "multi_pass": f"outcome right with IC <= {MAX_INVALID_LOOPS}",
    "fully_correct": "outcome right, CR and AD, IC 0",
}


# ------------------------------------------------------------------------------ CLI
def find_transcriber() -> tuple[Transcriber | None, str]:
    """The packaged STT as a transcriber, or (None, why). The voice pipeline provides
    ``app.voice.stt.make_transcriber() -> transcribe(path) -> {"text", "ms"}``."""
    try:
        from app.voice import stt  # type: ignore[attr-defined]
    except ImportError:
        return None, "the speech-to-text module (app.voice.stt) is not part of this build yet"
    make = getattr(stt, "make_transcriber", None)
    if make is None:
        return None, "app.voice.stt has no make_transcriber() to build a transcriber from"
    try:
        return make(), ""
    except Exception as exc:  # missing model files, no faster-whisper: say so, do not crash
        return None, f"the speech-to-text model could not be loaded: {exc}"


def _real_factory(strategy: str) -> OrchestratorFactory:
    from app.session.console import build_console

    def factory(context: CaseContext) -> Orchestrator:
        return build_console(context, strategy=strategy).orchestrator

    return factory


def _pct(p: dict[str, Any] | None) -> str:
    if not p or p.get("rate") is None:
        return "n/a"
    lo, hi = p["ci"]
    return f"{p['rate'] * 100:.1f}% [{lo * 100:.1f}, {hi * 100:.1f}]"


def summary_lines(metrics: dict[str, Any]) -> list[str]:
    m = metrics["meta"]
    o = metrics["overall"]
    lines = [f"{m['commands']} commands in {m['sessions']} session(s), {m['mode']} mode, "
             f"strategy {m.get('strategy') or '?'}, {m['wall_s']:.1f} s"]
    st = "  ".join(f"{k} {_pct(v)}" for k, v in o["stages"].items() if v)
    lines.append(f"stages:  {st}")
    views = o.get("views") or {}
    if views:
        lines.append("AD per command " + _pct(views["per_command"]["AD"])
                     + "  |  AD session " + _pct(views["session"]["AD"]))
    lines.append("success: " + "  ".join(f"{k.replace('_', '-')} {_pct(v)}"
                                         for k, v in o["success"].items()))
    ic = o["invalid_cycles"]
    lines.append(f"invalid cycles: mean {ic['mean']:.2f}" if ic["mean"] is not None
                 else "invalid cycles: n/a")
    oos = metrics["out_of_scope"]
    lines.append(f"out of scope rejected with zero state change: "
                 f"{_pct(oos['rejected_with_zero_state_change'])} (n={oos['n']})")
    lines.append(f"composite fully correct: {_pct(metrics['composite']['fully_correct'])} "
                 f"(n={metrics['composite']['n']})")
    lat = (metrics.get("latency") or {}).get("stages", {}).get("total")
    if lat and lat["n"]:
        lines.append(f"latency per command: median {lat['median']:.0f} ms, p95 {lat['p95']:.0f} ms")
    return lines


def run_eval_command(args: argparse.Namespace) -> int:
    """`visa-console eval DATASET.jsonl [--case PATH] [--mode text|audio] [--strategy]
    [--out DIR]` (DESIGN §5.2)."""
    mode = getattr(args, "eval_mode", "text")
    strategy = getattr(args, "strategy", "fast")
    out = Path(getattr(args, "out", None) or "eval-out")
    try:
        ds = load_dataset(args.dataset)
    except DatasetError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    transcriber = None
    if mode == "audio":
        transcriber, why = find_transcriber()
        if transcriber is None:
            print(f"Audio mode is not available: {why}. Run with --mode text, or install the "
                  "voice pipeline and its models (visa-console models --check).", file=sys.stderr)
            return 2
    if not settings().llm_timeout_s:
        # The figures measure what the console decides, not how busy the machine is (DESIGN
        # §3): the LLM tier gets time enough; calls past the console's own deadline are counted.
        os.environ["VISA_LLM_TIMEOUT_S"] = str(EVAL_LLM_TIMEOUT_S)
    try:
        factory = _real_factory(strategy)
    except ImportError as exc:
        print(f"The command interpreter (app.agents.orchestrator) is not available in this "
              f"build: {exc}", file=sys.stderr)
        return 2
    try:
        case_path = getattr(args, "eval_case", None)
        if case_path is not None:
            context, name = load_case_context(Path(case_path))
        else:
            print("Loading the built-in demo case ...", file=sys.stderr, flush=True)
            try:
                context, name = default_case()
            except (OSError, RuntimeError) as exc:  # DemoCaseError: a folder it may not touch
                raise EvalError(f"the built-in demo case is not available: {exc}") from exc
        result = run_eval(ds, factory, mode=mode, out_dir=out, progress=True, context=context,
                          case_name=name, transcriber=transcriber, strategy=strategy)
    except EvalError as exc:
        print(f"The evaluation cannot run: {exc}", file=sys.stderr)
        return 2
    for line in summary_lines(result.metrics):
        print(line)
    for w in result.warnings:
        print(f"warning: {w}")
    print(f"Trace:   {result.trace_path}")
    print(f"Metrics: {result.metrics_path}")
    if "html" in result.report_paths:
        print(f"Report:  {result.report_paths['html']}")
    if result.metrics["meta"]["errors"] == len(result.scores) and result.scores:
        print("Every command raised an error: see the log and trace.jsonl.", file=sys.stderr)
        return 1
    return 0


__all__ = [
    "DEFINITIONS", "EvalError", "EvalResult", "Orchestrator", "OrchestratorFactory",
    "Transcriber", "check_case", "default_case", "find_transcriber", "initial_snapshot",
    "load_case_context", "run_eval", "run_eval_command", "summary_lines",
]
