"""Benchmark of the LLM runtime (issue 4): cold vs warm (prefix cached) latency per stage,
restore-from-disk time, prompt and generation tokens/s, and the LLM-tier call on a set of
commands once warm.

    .venv/bin/python scripts/bench_llm.py [--model-id qwen2.5-coder-1.5b] [--threads 2]
                                          [--stages decide] [--out FILE.json]

Per stage, with a fresh state directory:
  cold      the prefix is computed (cache "miss") and the call answered
  warm      the same stage again with another command: the prefix is live (cache "hit")
  restored  after another stage ran: the saved prefix comes back from RAM (cache "restored")
  disk      after forgetting RAM and the live context: restore from disk only (no call)
  library   llama-cpp-python's own save_state()/load_state() on the same prefix, for reference
Prints JSON (also to --out). Timings depend on what else runs on the machine's two cores; the
load average before and after is recorded for that reason.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.agents import prompts  # noqa: E402
from app.agents.decision import Memory  # noqa: E402
from app.agents.llm_runtime import LLMResult, LocalLlama, StagePrompt, chatml_prefix  # noqa: E402
from app.agents.llm_tier import LLMTier  # noqa: E402
from app.core.registry import CommandRegistry  # noqa: E402
from app.core.state import CaseContext, ConsoleState  # noqa: E402

# Two commands per stage: the first runs cold, the second warm (another suffix, same prefix).
STAGE_COMMANDS = {
    "decide.all": ("move axial to the middle slice and zoom in", "show the nodules and the pft"),
    "decide.IV": ("could you bring the coronal slice a little forward", "go up three times"),
    "decide.AR": ("rotate the 3d model to the right", "show the lungs from the front"),
    "decide.IR": ("show me the patient's age and bmi", "hide the patient information"),
}
TIER_COMMANDS = [
    "could you bring the coronal slice a little forward",
    "rotate the 3d model to the right",
    "show me the patient's age and bmi",
    "move axial to the middle slice and zoom in",
    "go back twenty slices on the coronal",
    "hide the patient information",
    "zoom toward the nodule",
    "show the lungs from the front",
    "take the ct away",
    "prepare the stapler",
    "make that bigger",
    "show the weight and height too",
]


def _state() -> ConsoleState:
    s = ConsoleState()
    s.set_case(CaseContext(iv_size=(("axial", 64), ("coronal", 512), ("sagittal", 512)),
                           tumor_lobes=("right_upper_lobe",)))
    return s


def _call(rt: LocalLlama, sp: StagePrompt, command: str) -> LLMResult:
    agents = prompts.stage_agents(sp.stage)
    user = prompts.user_message(command, _state(), Memory(), agents)
    return rt.complete_json(sp.stage, sp.system, user, prompts.plan_schema(agents), 160, 600.0,
                            examples=sp.examples)


def _row(res: LLMResult) -> dict[str, Any]:
    t = res.timings
    gen_tps = res.completion_tokens / (t.gen_ms / 1000) if t.gen_ms > 0 else None
    return {"cache": res.cache, "ok": res.ok, "total_ms": round(t.total_ms),
            "prompt_ms": round(t.prompt_ms), "gen_ms": round(t.gen_ms),
            "prompt_tokens": res.prompt_tokens, "cached_tokens": res.cached_tokens,
            "computed_tokens": res.prompt_tokens - res.cached_tokens,
            "completion_tokens": res.completion_tokens,
            "gen_tokens_per_s": round(gen_tps, 1) if gen_tps else None}


def _library_restore(rt: LocalLlama, sp: StagePrompt) -> dict[str, float]:
    """llama-cpp-python's own save_state/load_state on a live prefix (DESIGN §6's figure)."""
    rt.prepare(sp)
    llm = rt._llm
    t0 = time.monotonic()
    st = llm.save_state()
    save_ms = (time.monotonic() - t0) * 1000
    llm.n_tokens = 0
    t0 = time.monotonic()
    llm.load_state(st)
    load_ms = (time.monotonic() - t0) * 1000
    return {"save_ms": round(save_ms), "load_ms": round(load_ms),
            "bytes": int(st.llama_state_size) + int(st.scores.nbytes)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model-id", default="qwen2.5-coder-1.5b")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--stages", choices=("decide", "all"), default="decide",
                    help="decide: the four decision stages; all: also the visa stages")
    ap.add_argument("--skip-tier", action="store_true", help="skip the LLM-tier command set")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)

    load_before = os.getloadavg()
    state_dir = Path(tempfile.mkdtemp(prefix="visa-llm-bench-"))
    rt = LocalLlama(args.model_id, n_threads=args.threads, state_dir=state_dir)
    t0 = time.monotonic()
    if not rt.load():
        print(json.dumps({"error": rt._load_error}))
        return 1
    report: dict[str, Any] = {
        "model": args.model_id, "threads": args.threads, "n_ctx": rt.n_ctx,
        "n_batch": rt.n_batch, "cpu": platform.processor() or platform.machine(),
        "cores": os.cpu_count(), "load_ms": round((time.monotonic() - t0) * 1000),
        "loadavg_before": [round(x, 2) for x in load_before], "stages": {},
    }
    stages = prompts.all_decision_prompts()
    if args.stages == "all":
        stages += [prompts.VISA_ORCHESTRATOR, prompts.VISA_CORRECT, prompts.VISA_ROUTE]

    for i, sp in enumerate(stages):
        cold_cmd, warm_cmd = STAGE_COMMANDS.get(sp.stage, ("coronal plus 100", "zoom out"))
        if sp.stage.startswith("visa."):
            cold_cmd = warm_cmd = "status: command recorded"
        rt.reset_context()
        cold = _call(rt, sp, cold_cmd)
        warm = _call(rt, sp, warm_cmd)
        other = stages[(i + 1) % len(stages)]
        rt.prepare(other)  # switch away ...
        restored = _call(rt, sp, warm_cmd)  # ... and back: the saved prefix is restored
        prefix_tokens = len(rt._llm.tokenize(chatml_prefix(sp.system, sp.examples).encode(),
                                             add_bos=False, special=True))
        # Restore from disk alone: nothing in RAM, nothing live.
        deadline = time.monotonic() + 30
        path = rt.saved_state_path(sp.system, sp.examples)
        while path is not None and not path.is_file() and time.monotonic() < deadline:
            time.sleep(0.05)
        rt.forget_states(memory=True)
        rt.reset_context()
        status, source, disk_ms = rt.prepare(sp)
        row: dict[str, Any] = {
            "prefix_tokens": prefix_tokens,
            "state_file_bytes": path.stat().st_size if path and path.is_file() else None,
            "cold": _row(cold), "warm": _row(warm), "restored": _row(restored),
            "disk_restore": {"status": status, "source": source, "ms": round(disk_ms)},
        }
        # The prefix alone: compute time from the cold call minus its suffix share is fuzzy,
        # so time a pure prefix computation as well.
        rt.forget_states(memory=True)
        for p in state_dir.glob("*.llstate"):
            p.unlink()
        rt.reset_context()
        _, _, compute_ms = rt.prepare(sp)
        row["prefix_compute_ms"] = round(compute_ms)
        row["prompt_tokens_per_s"] = round(prefix_tokens / (compute_ms / 1000), 1)
        row["speedup_warm_vs_cold"] = round(cold.timings.total_ms / warm.timings.total_ms, 2)
        row["speedup_restored_vs_cold"] = round(
            cold.timings.total_ms / restored.timings.total_ms, 2)
        row["speedup_disk_restore_vs_prefix_compute"] = round(compute_ms / max(disk_ms, 1e-3), 1)
        report["stages"][sp.stage] = row
        print(f"[bench] {sp.stage}: cold {row['cold']['total_ms']} ms, warm "
              f"{row['warm']['total_ms']} ms, restored {row['restored']['total_ms']} ms, "
              f"disk restore {row['disk_restore']['ms']} ms vs compute {compute_ms:.0f} ms",
              file=sys.stderr)

    report["library_save_load_state"] = _library_restore(rt, stages[0])

    rows = report["stages"].values()
    report["summary"] = {
        "cold_ms_median": statistics.median(r["cold"]["total_ms"] for r in rows),
        "warm_ms_median": statistics.median(r["warm"]["total_ms"] for r in rows),
        "restored_ms_median": statistics.median(r["restored"]["total_ms"] for r in rows),
        "disk_restore_ms_median": statistics.median(r["disk_restore"]["ms"] for r in rows),
        "speedup_warm_vs_cold_median": statistics.median(
            r["speedup_warm_vs_cold"] for r in rows),
        "speedup_restored_vs_cold_median": statistics.median(
            r["speedup_restored_vs_cold"] for r in rows),
        "prompt_tokens_per_s_median": statistics.median(r["prompt_tokens_per_s"] for r in rows),
        "gen_tokens_per_s_median": statistics.median(
            r["warm"]["gen_tokens_per_s"] or 0 for r in rows),
    }

    if not args.skip_tier:
        tier = LLMTier(rt, timeout_s=120.0)
        tier.warm(background=False)
        # Pass 1: stage prefixes warm only. Pass 2: also the context, warmed between commands
        # (what the console does while the surgeon is silent: tier.prewarm after each command).
        for key, prewarm in (("tier", False), ("tier_context_warmed", True)):
            calls = []
            state, memory = _state(), Memory()
            registry = CommandRegistry(state)
            for cmd in TIER_COMMANDS:
                if prewarm:
                    tier.prewarm(state, memory).wait(120)
                d = tier.decide(cmd, state, memory)
                assert d is not None
                llm = d.diagnostics.get("llm", {})
                calls.append({"command": cmd, "valid": d.valid, "ms": d.diagnostics.get("ms"),
                              "calls": len(d.diagnostics.get("llm_calls", [])),
                              "stage": llm.get("stage"), "cache": llm.get("cache"),
                              "computed_tokens": (llm.get("prompt_tokens", 0)
                                                  - llm.get("cached_tokens", 0)),
                              "completion_tokens": llm.get("completion_tokens"),
                              "prompt_ms": llm.get("prompt_ms"), "gen_ms": llm.get("gen_ms"),
                              "actions": [s.action_id for s in d.steps], "reason": d.reason})
                if d.valid and registry.dispatch_plan(d.steps).ok:  # later commands see it
                    memory.remember(cmd, d.agent)
            ms = sorted(c["ms"] for c in calls)
            report[key] = {
                "calls": calls, "median_ms": statistics.median(ms),
                "p95_ms": ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))], "max_ms": ms[-1],
                "valid": sum(c["valid"] for c in calls),
            }
            print(f"[bench] {key}: median {report[key]['median_ms']:.0f} ms, "
                  f"p95 {report[key]['p95_ms']:.0f} ms", file=sys.stderr)
    report["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text)
    rt.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
