#!/usr/bin/env python
"""Measure the semantic matcher (tier 3): the fast strategy with and without it.

Runs the MOEM harness (``app.eval.harness.run_eval``, text mode, the built-in demo case) on the
development split (``datasets/dev.jsonl``) and on the paraphrase development set
(``datasets/paraphrase_dev.jsonl``), once with the lexicon alone and once with
``FastInterpreter(tiers=[SemanticTier()])``, and prints per set: AD, CR, composite commands
fully correct, out-of-scope rejection with zero state change, and for the semantic run how
often the tier was consulted / decided, its false accepts on out-of-scope rows and its latency.

The tier's *own* false-accept rate is also measured directly: every out-of-scope sentence of
the sets is given to the tier (bypassing the validator's keyword rules), and any decision it
would take on its own (valid, with steps, confidence >= accept) counts as a false accept.

    .venv/bin/python scripts/check_paraphrases.py [--show-failures] [--sets dev,paraphrase]

Never run it on the test split for tuning (datasets/README.md).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.agents.context_rules import LexiconTier  # noqa: E402
from app.agents.decision import Memory  # noqa: E402
from app.agents.factory import SEMANTIC_CONSULT_BELOW  # noqa: E402
from app.agents.grammar_clauses import ACCEPT  # noqa: E402
from app.agents.interpreter import FastInterpreter  # noqa: E402
from app.agents.orchestrator import Orchestrator  # noqa: E402
from app.agents.semantic import SemanticTier  # noqa: E402
from app.core.registry import CommandRegistry  # noqa: E402
from app.core.state import CaseContext, ConsoleState  # noqa: E402
from app.eval.harness import default_case, run_eval  # noqa: E402

SETS = {"dev": ROOT / "datasets" / "dev.jsonl",
        "paraphrase": ROOT / "datasets" / "paraphrase_dev.jsonl",
        "paraphrase2": ROOT / "datasets" / "paraphrase_dev2.jsonl"}


class _TimedTier:
    """Wraps a tier to record how often it is consulted and how long it takes."""

    def __init__(self, tier: SemanticTier) -> None:
        self.tier = tier
        self.name = tier.name
        self.consult_below = getattr(tier, "consult_below", ACCEPT)
        self.calls: list[float] = []
        self.texts: set[str] = set()

    def decide(self, corrected: str, state: ConsoleState, memory: Memory) -> Any:
        t0 = time.perf_counter()
        out = self.tier.decide(corrected, state, memory)
        self.calls.append((time.perf_counter() - t0) * 1e3)
        self.texts.add(corrected)
        return out


class _SilentLexicon(LexiconTier):
    """The grammar with its own decisions muted (confidence 0): every in-scope command then
    goes to the semantic tier, which still uses the grammar's splitter and slot readers. This
    measures the matcher on phrasings the grammar already knows (a generalisation check)."""

    def decide_from(self, analysis: Any, state: ConsoleState, memory: Memory) -> Any:
        d = super().decide_from(analysis, state, memory)
        d.confidence = 0.0
        return d


def _factory(tiers: list[Any], silent: bool = False):
    def make(context: CaseContext) -> Orchestrator:
        state = ConsoleState()
        state.set_case(context)
        lexicon = _SilentLexicon() if silent else None
        return Orchestrator(CommandRegistry(state),
                            interpreter=FastInterpreter(lexicon=lexicon, tiers=tiers))
    return make


def _rate(block: dict[str, Any] | None) -> float | None:
    return None if not block else block.get("rate")


def _pct(x: float | None) -> str:
    return "  n/a" if x is None else f"{100 * x:5.1f}%"


def run_set(path: Path, tiers: list[Any], out: Path, silent: bool = False
            ) -> tuple[dict[str, Any], list[dict]]:
    res = run_eval(path, _factory(tiers, silent), out_dir=out, progress=False, report=False)
    m = res.metrics
    stages = m["overall"]["stages"]
    summary = {
        "n": m["meta"]["commands"],
        "AD": _rate(stages.get("AD")),
        "CR": _rate(stages.get("CR")),
        "composite": _rate(m["composite"]["fully_correct"]),
        "composite_n": m["composite"]["n"],
        "oos": _rate(m["out_of_scope"]["rejected_with_zero_state_change"]),
        "oos_n": m["out_of_scope"]["n"],
        "single_pass": _rate(m["overall"]["success"].get("single_pass")),
    }
    records = [json.loads(line) for line in res.trace_path.read_text().splitlines() if line]
    return summary, records


def tier_false_accepts(tier: SemanticTier, paths: list[Path]) -> tuple[int, int, list[str]]:
    """Out-of-scope rows given straight to the tier: how many would it carry out?"""
    context, _ = default_case()
    hits: list[str] = []
    n = 0
    for path in paths:
        for line in path.read_text().splitlines():
            row = json.loads(line)
            if row.get("valid", True) or not row.get("text"):
                continue
            n += 1
            for last in (None, "IR", "IV", "AR"):
                state = ConsoleState()
                state.set_case(context)
                from app.language.correction import correct
                from app.language.normalize import normalize

                text = correct(normalize(row["text"])).text
                d = tier.decide(text, state, Memory(last_agent=last))
                if d is not None and d.valid and d.steps and d.confidence >= ACCEPT:
                    hits.append(f"{row['text']!r} (last agent {last}) -> "
                                f"{[s.action_id for s in d.steps]} {d.confidence:.2f}")
                    break
    return len(hits), n, hits


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", default="dev,paraphrase", help="comma list of: dev, paraphrase, paraphrase2")
    ap.add_argument("--data", action="append", default=[], metavar="JSONL",
                    help="another dataset to score (repeatable); never the test split")
    ap.add_argument("--show-failures", action="store_true",
                    help="list the rows the semantic run gets wrong")
    ap.add_argument("--show-tier", action="store_true",
                    help="list every row on which the semantic tier was consulted")
    args = ap.parse_args(argv)
    names = [s.strip() for s in args.sets.split(",") if s.strip()]
    for extra in args.data:
        if Path(extra).name == "test.jsonl":
            ap.error("the test split is for measuring only, not for this tuning script")
        SETS[Path(extra).stem] = Path(extra)
        names.append(Path(extra).stem)
    tier = SemanticTier()
    tier.consult_below = SEMANTIC_CONSULT_BELOW  # type: ignore[attr-defined] # as the console
    t0 = time.perf_counter()
    if not tier.warm():
        print(f"semantic tier unavailable: {tier.reason}")
        return 1
    print(f"semantic tier ready in {(time.perf_counter() - t0) * 1e3:.0f} ms "
          f"(cache {'hit' if tier.cache_hit else 'miss'}), "
          f"{sum(len(i.phrases) for i in tier.intents)} exemplars, {len(tier.intents)} intents")
    header = f"{'set':<11}{'tiers':<18}{'n':>4} {'AD':>7}{'CR':>7}{'compos.':>8}" \
             f"{'OOS rej.':>9}{'1-pass':>8}"
    print(header)
    print("-" * len(header))
    all_calls: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            path = SETS[name]
            base, _ = run_set(path, [], Path(tmp) / f"{name}-lexicon")
            timed = _TimedTier(tier)
            sem, records = run_set(path, [timed], Path(tmp) / f"{name}-semantic")
            all_calls += timed.calls
            alone, _ = run_set(path, [tier], Path(tmp) / f"{name}-alone", silent=True)
            for label, s in (("lexicon", base), ("lexicon+semantic", sem),
                             ("semantic alone*", alone)):
                print(f"{name:<11}{label:<18}{s['n']:>4} {_pct(s['AD']):>7}{_pct(s['CR']):>7}"
                      f"{_pct(s['composite']):>8}{_pct(s['oos']):>9}{_pct(s['single_pass']):>8}")
            decided = [r for r in records if r.get("tier") == "semantic"]
            print(f"{'':<11}semantic consulted on {len(timed.calls)} rows, decided {len(decided)}"
                  f" (right: {sum(1 for r in decided if r['eval']['score']['outcome'])})")
            if args.show_tier or args.show_failures:
                for r in records:
                    sc = r["eval"]["score"]
                    row = r["eval"]["row"]
                    wrong = not (sc["ad"] and sc["cr"] and sc["valid_right"])
                    consulted = r["stages"].get("correct", {}).get("text") in timed.texts
                    if (args.show_failures and wrong) or (args.show_tier and consulted):
                        acts = [(a["agent"], a["action"], a["params"])
                                for a in r["stages"].get("decide", {}).get("actions", [])]
                        print(f"  {'WRONG' if wrong else 'ok   '} {row['id']:<10} "
                              f"{row['text']!r:<60} {r['tier']:<9} "
                              f"{r['stages'].get('decide', {}).get('confidence')} {acts} "
                              f"| {r['reply']['text'][:70]}")
    print("* semantic alone: the grammar's own decisions muted, every in-scope command "
          "decided by the matcher (with the grammar's slot readers)")
    fa, n, hits = tier_false_accepts(tier, [SETS[n] for n in names])
    print(f"\nsemantic tier alone on out-of-scope sentences: {fa}/{n} would be carried out "
          f"with confidence >= {ACCEPT} (false-accept rate {_pct(fa / n if n else None)})")
    for h in hits:
        print(f"  false accept: {h}")
    if all_calls:
        q = statistics.quantiles(all_calls, n=20)
        print(f"semantic tier latency per consulted command: median "
              f"{statistics.median(all_calls):.1f} ms, p95 {q[-1]:.1f} ms (n={len(all_calls)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
