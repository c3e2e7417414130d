"""Check the fast interpreter on the dataset's dev split (never the test split).

Runs every session of ``datasets/dev.jsonl`` in order (fresh state and memory per session, the
case context stated in ``datasets/case.json``) through ``FastInterpreter`` and the command
registry, and prints per-category accuracy: validity, routing (CR), action functions (AF),
expected partial state (AP), both (AD), composite commands fully right, and out-of-scope
rejection with zero state change. ``--show-errors`` lists what went wrong.

    .venv/bin/python scripts/check_dev.py [--show-errors] [--data datasets/dev.jsonl]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.agents.decision import Memory  # noqa: E402
from app.agents.interpreter import FastInterpreter, apply  # noqa: E402
from app.core.registry import Actor, CommandRegistry  # noqa: E402
from app.core.state import CaseContext, ConsoleState  # noqa: E402


def _case(path: Path) -> CaseContext:
    d = json.loads(path.read_text()) if path.exists() else {}
    size = d.get("iv_size") or {"axial": 128, "coronal": 512, "sagittal": 512}
    return CaseContext(
        iv_size=tuple((p, int(size[p])) for p in ("axial", "coronal", "sagittal")),
        tumor_lobes=tuple(d.get("tumor_lobes") or ("right_upper_lobe",)),
        structures=tuple(d["structures"]) if d.get("structures") else None,
        has_clinical=bool(d.get("has_clinical", True)),
    )


def _matches(expected: Any, actual: Any) -> bool:
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            k in actual and _matches(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list) and isinstance(actual, list):
        return sorted(map(str, expected)) == sorted(map(str, actual))
    return expected == actual


def _names(actions: list[dict[str, Any]]) -> list[str]:
    return [f"{a['agent']}.{a['action']}" for a in actions]


def run(path: Path, case_path: Path, show_errors: bool) -> dict[str, Any]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    interp = FastInterpreter()
    case = _case(case_path)
    sessions: dict[str, tuple[ConsoleState, CommandRegistry, Memory]] = {}
    per: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    errors: list[str] = []
    times: list[float] = []
    for d in rows:
        sid = d.get("session", "default")
        if sid not in sessions:
            st = ConsoleState()
            st.set_case(case)
            sessions[sid] = (st, CommandRegistry(st), Memory())
        state, reg, mem = sessions[sid]
        before = state.snapshot()
        t0 = time.perf_counter()
        it = interp.interpret(d.get("text", ""), state, mem)
        times.append((time.perf_counter() - t0) * 1e3)
        res = apply(it, reg, Actor(source="eval"), mem)
        after = state.snapshot()
        got_actions = res.actions() if res is not None and res.ok else []
        if res is not None and not res.ok:
            got_actions = []
        exp_actions = d.get("actions") or []
        valid_ok = it.valid == d["valid"]
        cr = it.agent == d.get("agent") if d["valid"] else it.agent is None
        af = _names(got_actions) == _names(exp_actions)
        ap = _matches(d.get("expect") or {}, after)
        if not d["valid"]:
            ap = ap and after == before
        ad = af and ap and valid_ok
        cats = ["all", f"agent={d.get('agent')}", f"structure={d.get('structure')}",
                f"type={d.get('type')}", f"expression={d.get('expression')}"]
        cats += [f"tag={t}" for t in d.get("tags", [])]
        for c in cats:
            per[c]["valid"].append(valid_ok)
            per[c]["CR"].append(cr)
            per[c]["AF"].append(af)
            per[c]["AP"].append(ap)
            per[c]["AD"].append(ad)
            per[c]["full"].append(ad and cr)
        if not d["valid"] and d.get("text", "").strip():
            per["oos_rejected"]["ok"].append((not it.valid) and after == before)
        if not (ad and cr):
            exp_p = [(f"{a['agent']}.{a['action']}", a["params"]) for a in exp_actions]
            got_p = [(f"{a['agent']}.{a['action']}", a["params"]) for a in got_actions]
            errors.append(
                f"{d['id']} {d.get('text')!r}: corrected={it.corrected!r} valid={it.valid}"
                f"/{d['valid']} agent={it.agent}/{d.get('agent')} conf="
                f"{it.decision.confidence}\n    expected {exp_p}\n    got      {got_p}"
                f"\n    AP={ap} reason={it.decision.reason or it.reason}"
                + ("" if res is None or res.ok else f"\n    dispatch error: {res.message}"))
    report: dict[str, Any] = {}
    for c in sorted(per, key=lambda k: (k != "all", k)):
        m = per[c]
        report[c] = {k: (sum(v) / len(v) if v else None, len(v)) for k, v in m.items()}
    if show_errors:
        print("\n".join(errors))
        print()
    print(f"{'category':38s} {'n':>4s} {'valid':>6s} {'CR':>6s} {'AF':>6s} {'AP':>6s} "
          f"{'AD':>6s} {'full':>6s}")
    for c, m in report.items():
        if c == "oos_rejected":
            continue
        n = m["AD"][1]
        print(f"{c:38s} {n:4d} " + " ".join(f"{100 * m[k][0]:6.1f}" for k in
                                            ("valid", "CR", "AF", "AP", "AD", "full")))
    oos = report.get("oos_rejected", {}).get("ok")
    if oos:
        print(f"\nout-of-scope rejected with zero state change: {100 * oos[0]:.1f}% of {oos[1]}")
    comp = report.get("structure=composite")
    if comp:
        print(f"composite fully correct: {100 * comp['full'][0]:.1f}% of {comp['full'][1]}")
    print(f"latency per command: median {statistics.median(times):.2f} ms, "
          f"p95 {sorted(times)[int(0.95 * (len(times) - 1))]:.2f} ms, max {max(times):.2f} ms")
    return report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(ROOT / "datasets" / "dev.jsonl"))
    ap.add_argument("--case", default=str(ROOT / "datasets" / "case.json"))
    ap.add_argument("--show-errors", action="store_true")
    args = ap.parse_args()
    if Path(args.data).name.startswith("test"):
        sys.exit("This script is for the dev split; the test split is the held-out measure.")
    run(Path(args.data), Path(args.case), args.show_errors)


if __name__ == "__main__":
    main()
