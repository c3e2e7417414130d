"""MOEM scoring (DESIGN §5.4): per-command stage scores and their aggregation. Pure: no I/O.

A command is scored from its dataset row, the trace record the console wrote for it
(DESIGN §5.3) and the state snapshot before it. Definitions (all 1/0 per command):

STT  transcript right: ``normalize_text(stt.text) == normalize_text(row.text)``. Only in audio
     mode and only for rows with audio; otherwise n/a (None) and left out of the averages.
     ``normalize_text``: lower case, a leading wake word ("davinci") dropped, punctuation
     removed, a few contractions expanded, "+100"/"-30" read as "plus 100"/"minus 30", and
     number words written as digits ("two hundred and five" → 205).
CC   corrected command right AND validity right. The "right corrected text" of a paraphrase
     cannot be known, so for a valid row the corrected text counts as right when it equals the
     row's text after ``normalize_text`` OR the decided actions are right (AD). For an invalid
     row, CC is the validity alone (the console said "invalid").
CR   right routing. Valid row: the route agent is the row's ``agent`` and the agents of the
     decided actions, in order of first appearance, are the expected ones (``agents`` of a
     cross-agent composite, or the agents of ``actions``); when nothing was decided the route
     alone counts. Invalid row: no route agent and no actions.
AF   right action functions. Valid row: the (agent, action) names equal the canonical plan's,
     in order, OR — plans can differ and be equally right ("SHOW bmi, pft" vs "SHOW bmi" +
     "SHOW op=add pft") — the console said valid and the resulting state matches ``expect``
     (AP). Invalid row: no actions.
AP   right parameters: the trace's state snapshot matches ``expect`` by deep partial match
     (every key of ``expect`` present and equal; lists compared sorted; a key missing from
     the snapshot is a mismatch). For a row with nothing to do (invalid, or a silent input
     whose plan is ``[]``) ``expect`` is the whole state before the command; there, when the
     state before is known, AP is "the state is exactly the state before", so an earlier
     command's error carried over in the session does not fail this row as well.
AD   AF and AP.
OF   the stages ran in the right order. ``flow`` must read, per attempt,
     ``[audio] [stt] correct`` then either loop to the next attempt (the command was invalid:
     new input; a looped attempt may have got as far as ``route`` and an agent, where the
     reference workflow can also find a command invalid) or, on the last attempt, ``route <agent>...`` for a command the console took as
     valid, then ``end``. The agent stages must be the agents of the decided plan in order
     (consecutive repeats allowed), the last attempt must contain ``stt`` when the record has
     an STT stage, and the shape must fit the row: a valid row routes, an invalid row ends
     right after ``correct``.
IC   invalid cycles: the record's ``invalid_cycles`` plus the retries the harness made with the
     next voice (audio mode).

Outcome right = validity right and AP and, for an invalid row, the state exactly unchanged.
Success: strict = outcome right, every applicable stage right and IC 0; single-pass = outcome
right and IC 0; multi-pass = outcome right and IC ≤ 3. Fully correct = outcome right, CR and AD
and IC 0 (the rate asked of composite commands). Stage scores are taken on the attempt that
produced the outcome; strict and single-pass need IC 0, so for them it is the first attempt.

Diagnostics: ``unchanged`` (state equal to the previous one), ``side_effect_free`` (nothing
changed outside the keys of ``expect``, which by the dataset's rules holds every key the
command changes), ``plan_exact`` (the decided actions equal the canonical plan, parameters
included) and ``inherited`` failures (plan exact, outcome wrong: the state before had already
drifted because of an earlier error in the session, which carries over by design).
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from app.eval.dataset import CATEGORY_VALUES, Row, distinct
from app.eval.views import canon as _canon
from app.eval.views import either_match, merge_expect, per_command_expect

Z95 = 1.959963984540054
MAX_INVALID_LOOPS = 3
STAGES = ("STT", "CC", "CR", "AF", "AP", "AD", "OF")
SUCCESS = ("strict", "single_pass", "multi_pass")
LATENCY_STAGES = ("stt", "correct", "route", "decide")
CATEGORY_PAIRS = (("structure", "type"), ("structure", "expression"), ("type", "expression"))
AGENT_STAGE_NAMES = ("IR", "IV", "AR")
NO_AGENT = "none"  # group key for rows with agent null (invalid commands)


# ------------------------------------------------------------------------------ intervals
def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """Wilson score interval for k successes out of n (None when n is 0).

    Wilson rather than the normal approximation because our rates sit near 1 and per-category
    counts are small: the normal interval would exceed 1 or collapse to zero width at n/n.
    """
    if n <= 0:
        return None
    if not 0 <= k <= n:
        raise ValueError(f"successes {k} must lie in 0..{n}")
    p = k / n
    z2 = z * z
    denom = 1 + z2 / n
    center = (p + z2 / (2 * n)) / denom
    margin = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    # Exact ends at 0/n and n/n: floating point would leave 1e-17 residues.
    lo = 0.0 if k == 0 else max(0.0, center - margin)
    hi = 1.0 if k == n else min(1.0, center + margin)
    return lo, hi


def proportion(k: int, n: int) -> dict[str, Any]:
    """``{"k", "n", "rate", "ci": [lo, hi]}``; rate and ci are None when n is 0."""
    ci = wilson(k, n)
    return {"k": int(k), "n": int(n), "rate": (k / n) if n else None,
            "ci": [ci[0], ci[1]] if ci else None}


def mean_ci(values: Sequence[float]) -> dict[str, Any]:
    """Mean with a normal-approximation 95% interval (for invalid cycles, not a proportion)."""
    n = len(values)
    if n == 0:
        return {"n": 0, "mean": None, "ci": None, "max": None}
    m = sum(values) / n
    if n > 1:
        var = sum((v - m) ** 2 for v in values) / (n - 1)
        half = Z95 * math.sqrt(var / n)
    else:
        half = 0.0
    return {"n": n, "mean": m, "ci": [max(0.0, m - half), m + half], "max": max(values)}


# ------------------------------------------------------------------------------ text
_WAKE_RE = re.compile(r"^\s*(?:(?:hey|ok|okay)\s*,?\s+)?(?:da[\s-]*vinci|davinci)\b[\s,.!:;-]*")
_CONTRACTIONS = (
    (re.compile(r"\bwhat's\b"), "what is"), (re.compile(r"\bwhere's\b"), "where is"),
    (re.compile(r"\bhow's\b"), "how is"), (re.compile(r"\bit's\b"), "it is"),
    (re.compile(r"\bthat's\b"), "that is"), (re.compile(r"\bthere's\b"), "there is"),
    (re.compile(r"\blet's\b"), "let us"), (re.compile(r"\bcan't\b"), "cannot"),
    (re.compile(r"\bwon't\b"), "will not"), (re.compile(r"\b(\w+)n't\b"), r"\1 not"),
    (re.compile(r"\bi'm\b"), "i am"), (re.compile(r"\b(\w+)'re\b"), r"\1 are"),
    (re.compile(r"\b(\w+)'ll\b"), r"\1 will"), (re.compile(r"\b(\w+)'ve\b"), r"\1 have"),
    (re.compile(r"\b(\w+)'d\b"), r"\1 would"),
)
_UNITS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
          "seven": 7, "eight": 8, "nine": 9}
_TEENS = {"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
          "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
         "eighty": 80, "ninety": 90}


def normalize_text(text: str | None) -> str:
    """The comparison form of a transcript or command (see the module docstring).

    Deliberately independent of the interpreter's own normaliser: the yardstick must not
    share the bugs of what it measures.
    """
    if not text:
        return ""
    s = unicodedata.normalize("NFKC", text).lower()
    s = s.replace("\u2019", "'").replace("\u2018", "'").replace("\u2212", "-")
    s = _WAKE_RE.sub("", s)
    for rx, rep in _CONTRACTIONS:
        s = rx.sub(rep, s)
    s = s.replace("'", "")
    s = re.sub(r"(?<![\w.])\+(?=\d)", " plus ", s)
    s = re.sub(r"(?<![\w.])-(?=\d)", " minus ", s)
    s = s.replace("%", " percent ")
    s = re.sub(r"[^a-z0-9.]+", " ", s)
    s = re.sub(r"(?<!\d)\.|\.(?!\d)", " ", s)  # keep decimal points only
    return " ".join(_numbers_to_digits(s.split()))


def _numbers_to_digits(tokens: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(tokens):
        value, j = _parse_number(tokens, i)
        if j > i:
            out.append(str(value))
            i = j
        else:
            out.append(tokens[i])
            i += 1
    return out


def _parse_number(tokens: list[str], i: int) -> tuple[int, int]:
    """Parse number words from tokens[i]; returns (value, index after). index == i: none."""
    total, current = 0, 0
    last = ""  # kind of the previous number word: unit, teen, tens, hundred, thousand
    j = i
    while j < len(tokens):
        t = tokens[j]
        if t in _UNITS or t in _TEENS:
            if last in ("unit", "teen"):
                break  # "five five" is two numbers
            if last == "tens" and t in _TEENS:
                break
            current += _UNITS.get(t, _TEENS.get(t, 0))
            last = "unit" if t in _UNITS else "teen"
        elif t in _TENS:
            if last in ("unit", "teen", "tens"):
                break
            current += _TENS[t]
            last = "tens"
        elif t == "hundred":
            if last not in ("unit", "teen"):
                break
            current *= 100
            last = "hundred"
        elif t == "thousand":
            if not last or last == "thousand":
                break
            total += current * 1000
            current = 0
            last = "thousand"
        elif (t == "and" and last in ("hundred", "thousand") and j + 1 < len(tokens)
              and (tokens[j + 1] in _UNITS or tokens[j + 1] in _TEENS or tokens[j + 1] in _TENS)):
            pass  # "one hundred and five"
        else:
            break
        j += 1
    if j > i and tokens[j - 1] == "and":
        j -= 1
    return total + current, j


# ------------------------------------------------------------------------------ states
def partial_diff(expect: Any, got: Any, path: str = "") -> list[str]:
    """Where ``got`` departs from the partial ``expect``: plain lines, empty when it matches."""
    if isinstance(expect, dict):
        if not isinstance(got, dict):
            return [f"{path or 'state'}: expected an object, got {_short(got)}"]
        out: list[str] = []
        for k, v in expect.items():
            p = f"{path}.{k}" if path else str(k)
            if k not in got:
                out.append(f"{p}: expected {_short(v)}, missing")
            else:
                out.extend(partial_diff(v, got[k], p))
        return out
    if _canon(expect) != _canon(got):
        return [f"{path or 'state'}: expected {_short(expect)}, got {_short(got)}"]
    return []


def partial_match(expect: Any, got: Any) -> bool:
    return not partial_diff(expect, got)


def changed_outside(expect: dict[str, Any], before: Any, after: Any, path: str = "") -> list[str]:
    """Keys not covered by ``expect`` whose value differs between ``before`` and ``after``."""
    if isinstance(before, dict) and isinstance(after, dict):
        out: list[str] = []
        for k in sorted(set(before) | set(after)):
            p = f"{path}.{k}" if path else str(k)
            if k in expect and not isinstance(expect[k], dict):
                continue  # covered: AP judges it
            sub = expect.get(k) if isinstance(expect.get(k), dict) else {}
            out.extend(changed_outside(sub, before.get(k), after.get(k), p))
        return out
    if _canon(before) != _canon(after):
        return [f"{path}: {_short(before)} -> {_short(after)}"]
    return []


def _short(v: Any, limit: int = 80) -> str:
    s = json.dumps(v, sort_keys=True, default=str)
    return s if len(s) <= limit else s[: limit - 3] + "..."


# ------------------------------------------------------------------------------ records
def record_valid(rec: dict[str, Any]) -> bool | None:
    c = (rec.get("stages") or {}).get("correct")
    if isinstance(c, dict) and isinstance(c.get("valid"), bool):
        return c["valid"]
    return None


def record_actions(rec: dict[str, Any]) -> list[dict[str, Any]]:
    d = (rec.get("stages") or {}).get("decide")
    acts = d.get("actions") if isinstance(d, dict) else None
    return [a for a in acts if isinstance(a, dict)] if isinstance(acts, list) else []


def record_route(rec: dict[str, Any]) -> str | None:
    r = (rec.get("stages") or {}).get("route")
    if isinstance(r, dict):
        return r.get("agent")
    acts = record_actions(rec)  # no route stage written: the plan's first agent routed it
    return acts[0].get("agent") if acts else None


def _plain_actions(acts: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"agent": a.get("agent"), "action": a.get("action"), "params": a.get("params") or {}}
            for a in acts]


def _collapse(seq: Sequence[str]) -> list[str]:
    out: list[str] = []
    for s in seq:
        if not out or out[-1] != s:
            out.append(s)
    return out


def flow_ok(rec: dict[str, Any], expect_valid: bool | None = None) -> tuple[bool, str]:
    """OF: is the record's ``flow`` a well-formed order (module docstring)? (ok, why not)."""
    flow = rec.get("flow")
    if not isinstance(flow, list) or not flow:
        return False, "no flow recorded"
    if flow[-1] != "end":
        return False, "the flow does not finish with 'end'"
    body = list(flow[:-1])
    if "end" in body:
        return False, "'end' appears before the last stage"
    # Split into attempts: each attempt is [audio] [stt] correct [route agents...].
    attempts: list[list[str]] = []
    for tok in body:
        starts_new = tok == "audio" or (tok == "stt" and (not attempts or attempts[-1][-1] != "audio")) \
            or (tok == "correct" and (not attempts or attempts[-1][-1] not in ("audio", "stt")))
        if starts_new or not attempts:
            attempts.append([])
        attempts[-1].append(tok)
    for n, att in enumerate(attempts, 1):
        last = n == len(attempts)
        i = 0
        if i < len(att) and att[i] == "audio":
            i += 1
        if i < len(att) and att[i] == "stt":
            i += 1
        if i >= len(att) or att[i] != "correct":
            return False, f"attempt {n}: expected 'correct' after the input stages, got {att}"
        i += 1
        rest = att[i:]
        if not last:
            # A looped attempt was found invalid at correct, at routing or by the agent.
            if rest and (rest[0] != "route" or any(a not in AGENT_STAGE_NAMES for a in rest[1:])):
                return False, f"attempt {n}: a looped (invalid) attempt ran {rest} after correct"
            continue
        stages = rec.get("stages") or {}
        if isinstance(stages.get("stt"), dict) and "stt" not in att:
            return False, "the record has an STT stage but the last attempt's flow has no 'stt'"
        if not rest:
            if expect_valid:
                return False, "the command ended after 'correct' but should have been routed"
            continue
        if rest[0] != "route":
            return False, f"after 'correct' expected 'route' or 'end', got {rest[0]!r}"
        if expect_valid is False:
            return False, "an invalid command must end after 'correct', but it was routed"
        agents = rest[1:]
        bad = [a for a in agents if a not in AGENT_STAGE_NAMES]
        if bad:
            return False, f"unknown stage(s) {bad} after route"
        plan = [str(a.get("agent")) for a in record_actions(rec)]
        if plan:
            if _collapse(agents) != _collapse(plan) and distinct(agents) != distinct(plan):
                return False, f"agent stages {agents} do not follow the plan's agents {plan}"
        elif len(distinct(agents)) > 1 or (agents and agents[0] != record_route(rec)):
            return False, f"agent stages {agents} without a plan"
    return True, ""


# ------------------------------------------------------------------------------ scoring
@dataclass
class CommandScore:
    id: str
    stt: int | None
    cc: int
    cr: int
    af: int
    ap: int
    ad: int
    of: int
    ic: int
    valid_right: int
    unchanged: int | None  # state identical to the state before (None: before unknown)
    side_effect_free: int | None
    # Decided actions identical to the canonical plan (names and parameters); None: no plan.
    plan_exact: int | None
    outcome: int
    strict: int
    single_pass: int
    multi_pass: int
    fully_correct: int
    # The per-command view (DESIGN §5.4): judged from the console's own state before.
    ap_cmd: int = 0
    ad_cmd: int = 0
    failed: list[str] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)

    def stage(self, name: str) -> int | None:
        return getattr(self, name.lower())

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def score_command(row: Row, rec: dict[str, Any], prev_state: dict[str, Any] | None, *,
                  story_before: dict[str, Any] | None = None,
                  mode: str = "text", extra_cycles: int = 0) -> CommandScore:
    """Score one command. ``extra_cycles``: retries the harness made (audio mode)."""
    stages = rec.get("stages") or {}
    state = rec.get("state")
    got_valid = record_valid(rec)
    valid_right = int(got_valid is not None and got_valid == row.valid)
    acts = record_actions(rec)
    got_names = [(str(a.get("agent")), str(a.get("action"))) for a in acts]
    got_seq = distinct([n[0] for n in got_names])
    route = record_route(rec)

    # STT
    stt: int | None = None
    stt_text = None
    if mode == "audio" and row.audio:
        s = stages.get("stt")
        stt_text = s.get("text") if isinstance(s, dict) else None
        stt = int(stt_text is not None and normalize_text(stt_text) == normalize_text(row.text))

    # AP and the state checks
    diff = partial_diff(row.expect, state) if isinstance(state, dict) else ["no state in the trace"]
    unchanged: int | None = None
    outside: list[str] = []
    side_effect_free: int | None = None
    if prev_state is not None and isinstance(state, dict):
        unchanged = int(_canon(prev_state) == _canon(state))
        outside = changed_outside(row.expect, prev_state, state)
        side_effect_free = int(not outside)
        if not row.valid or row.actions == []:
            # Nothing to do: the expected state is "exactly the state before". The row's
            # `expect` spells out the state a perfect session would have had; judging against
            # the actual state before keeps an earlier command's error from failing this one.
            moved = changed_outside({}, prev_state, state)
            diff = [f"state changed: {m}" for m in moved]
    ap = int(not diff)
    # Per command: the same, or the story's change re-based on the console's own state.
    ap_cmd = ap
    if (not ap and row.valid and row.actions != [] and story_before is not None
            and isinstance(prev_state, dict) and isinstance(state, dict)):
        rebased = per_command_expect(row.expect, story_before, prev_state)
        ap_cmd = int(either_match(row.expect, rebased, state))

    # AF
    exp_names = ([(str(a["agent"]), str(a["action"])) for a in row.actions]
                 if row.actions is not None else None)
    if row.valid:
        names_ok = exp_names is not None and got_names == exp_names
        af = int(names_ok or (got_valid is True and bool(ap)))
        af_cmd = int(names_ok or (got_valid is True and bool(ap_cmd)))
    else:
        af = af_cmd = int(not got_names)
    ad = int(af and ap)
    ad_cmd = int(af_cmd and ap_cmd)
    plan_exact = (int(_canon(_plain_actions(acts)) == _canon(_plain_actions(row.actions)))
                  if row.actions is not None else None)

    # CR
    exp_seq = row.expected_agents()
    if row.valid:
        route_ok = route == row.agent
        if not got_seq:
            cr = int(route_ok)
        elif exp_seq:
            cr = int(route_ok and got_seq == exp_seq)
        else:  # silent input: nothing to run, the previous agent re-selected
            cr = int(route_ok and got_seq == [row.agent])
    else:
        cr = int(route is None and not got_seq)

    # CC
    c = stages.get("correct")
    corrected = c.get("text") if isinstance(c, dict) else None
    if row.valid:
        text_ok = normalize_text(corrected) == normalize_text(row.text)
        cc = int(bool(valid_right) and (text_ok or bool(ad)))
    else:
        cc = valid_right

    of_ok, of_why = flow_ok(rec, row.valid)
    of = int(of_ok)

    ic = int(rec.get("invalid_cycles") or 0) + int(extra_cycles)
    outcome = int(bool(valid_right) and bool(ap) and (row.valid or unchanged != 0))
    scores = {"STT": stt, "CC": cc, "CR": cr, "AF": af, "AP": ap, "AD": ad, "OF": of}
    failed = [k for k, v in scores.items() if v == 0]
    if ic:
        failed.append(f"IC={ic}")
    if not row.valid and unchanged == 0:
        failed.append("state changed")
    strict = int(bool(outcome) and not any(v == 0 for v in scores.values()) and ic == 0)
    single = int(bool(outcome) and ic == 0)
    multi = int(bool(outcome) and ic <= MAX_INVALID_LOOPS)
    fully = int(bool(outcome) and bool(cr) and bool(ad) and ic == 0)
    detail = {
        "expected": {"valid": row.valid, "agent": row.agent, "agents": exp_seq,
                     "actions": [f"{a}.{n}" for a, n in exp_names] if exp_names is not None
                     else None},
        "got": {"valid": got_valid, "corrected": corrected, "stt": stt_text, "route": route,
                "actions": [f"{a}.{n}" for a, n in got_names], "tier": rec.get("tier"),
                "flow": rec.get("flow")},
        "state_diff": diff,
        "changed_outside_expect": outside,
        "flow_problem": of_why,
    }
    if rec.get("error"):
        detail["error"] = rec["error"]
    if plan_exact and not outcome and row.valid:
        # The command was understood exactly; the state before it had already drifted from
        # the dataset's story because of an earlier error in the session.
        detail["inherited"] = True
    return CommandScore(id=row.id, stt=stt, cc=cc, cr=cr, af=af, ap=ap, ad=ad, of=of, ic=ic,
                        valid_right=valid_right, unchanged=unchanged,
                        side_effect_free=side_effect_free, plan_exact=plan_exact,
                        outcome=outcome, strict=strict,
                        single_pass=single, multi_pass=multi, fully_correct=fully,
                        ap_cmd=ap_cmd, ad_cmd=ad_cmd, failed=failed, detail=detail)


# ------------------------------------------------------------------------------ aggregation
def group_metrics(scores: Sequence[CommandScore]) -> dict[str, Any]:
    """Stage accuracies, success rates, fully-correct rate and invalid cycles of a group."""
    stages: dict[str, Any] = {}
    for name in STAGES:
        vals = [s.stage(name) for s in scores]
        vals = [v for v in vals if v is not None]
        stages[name] = proportion(sum(vals), len(vals)) if vals else None
    n = len(scores)
    return {
        "n": n,
        "stages": stages,
        # DESIGN §5.4: both views side by side. "session" is the stages' AP/AD (the state
        # matches the story, every earlier command assumed right); "per_command" judges each
        # command from the state the console actually had.
        "views": {
            "session": {"AP": stages["AP"], "AD": stages["AD"]},
            "per_command": {
                "AP": proportion(sum(s.ap_cmd for s in scores), n) if n else None,
                "AD": proportion(sum(s.ad_cmd for s in scores), n) if n else None,
            },
        },
        "success": {k: proportion(sum(getattr(s, k) for s in scores), n) for k in SUCCESS},
        "fully_correct": proportion(sum(s.fully_correct for s in scores), n),
        "invalid_cycles": mean_ci([float(s.ic) for s in scores]),
    }


def latency_stats(values: Iterable[float]) -> dict[str, Any]:
    """Median, p95 (linear interpolation), mean and max in ms."""
    v = sorted(float(x) for x in values)
    if not v:
        return {"n": 0, "median": None, "p95": None, "mean": None, "max": None}
    return {"n": len(v), "median": _percentile(v, 50), "p95": _percentile(v, 95),
            "mean": sum(v) / len(v), "max": v[-1]}


def _percentile(sorted_v: Sequence[float], q: float) -> float:
    if len(sorted_v) == 1:
        return sorted_v[0]
    pos = (len(sorted_v) - 1) * q / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_v) - 1)
    return sorted_v[lo] + (sorted_v[hi] - sorted_v[lo]) * (pos - lo)


def _ms(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def latency_metrics(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    stages: dict[str, Any] = {}
    for name in LATENCY_STAGES:
        vals = []
        for r in records:
            st = (r.get("stages") or {}).get(name)
            ms = _ms(st.get("ms")) if isinstance(st, dict) else None
            if ms is not None:
                vals.append(ms)
        stages[name] = latency_stats(vals)
    stages["total"] = latency_stats(v for r in records if (v := _ms(r.get("total_ms"))) is not None)
    by_tier: dict[str, list[float]] = {}
    for r in records:
        v = _ms(r.get("total_ms"))
        if v is not None:
            by_tier.setdefault(str(r.get("tier") or "unknown"), []).append(v)
    return {"stages": stages, "by_tier": {t: latency_stats(v) for t, v in sorted(by_tier.items())}}


def aggregate(rows: Sequence[Row], scores: Sequence[CommandScore],
              records: Sequence[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Every number of metrics.json (besides ``meta``): overall, per agent, per category,
    per category pair, out-of-scope rejection, composites and latency."""
    if len(rows) != len(scores):
        raise ValueError("rows and scores differ in length")
    pairs = list(zip(rows, scores, strict=True))

    def group(pred: Any) -> dict[str, Any]:
        return group_metrics([s for r, s in pairs if pred(r)])

    by_agent = {a: group(lambda r, a=a: r.agent == a)
                for a in (*AGENT_STAGE_NAMES, None) if any(r.agent == a for r in rows)}
    by_agent = {(k if k is not None else NO_AGENT): v for k, v in by_agent.items()}
    by_category = {
        dim: {val: group(lambda r, dim=dim, val=val: getattr(r, dim) == val)
              for val in values if any(getattr(r, dim) == val for r in rows)}
        for dim, values in CATEGORY_VALUES.items()
    }
    by_pair: dict[str, dict[str, Any]] = {}
    for a, b in CATEGORY_PAIRS:
        cells = {}
        for va in CATEGORY_VALUES[a]:
            for vb in CATEGORY_VALUES[b]:
                sel = [s for r, s in pairs if getattr(r, a) == va and getattr(r, b) == vb]
                if sel:
                    cells[f"{va}/{vb}"] = group_metrics(sel)
        by_pair[f"{a}/{b}"] = cells

    # Out-of-scope rejection: the rows tagged "oos" when the dataset has tags, else every
    # invalid row (a silent input at a session start is invalid but not out of scope).
    tagged = any(r.tags for r in rows)
    oos = [(r, s) for r, s in pairs if not r.valid and (not tagged or "oos" in r.tags)]
    rejected = [int(s.valid_right) for _, s in oos]
    unchanged = [int(s.unchanged if s.unchanged is not None else s.ap) for _, s in oos]
    both = [a & b for a, b in zip(rejected, unchanged, strict=True)]
    composite = [s for r, s in pairs if r.structure == "composite"]
    out: dict[str, Any] = {
        "overall": group_metrics(scores),
        "by_agent": by_agent,
        "by_category": by_category,
        "by_category_pair": by_pair,
        "out_of_scope": {
            "basis": "rows tagged 'oos'" if tagged else "rows with valid: false",
            "n": len(oos),
            "rejected": proportion(sum(rejected), len(oos)),
            "zero_state_change": proportion(sum(unchanged), len(oos)),
            "rejected_with_zero_state_change": proportion(sum(both), len(oos)),
        },
        "composite": {
            "n": len(composite),
            "fully_correct": proportion(sum(s.fully_correct for s in composite), len(composite)),
        },
        # Failures whose own plan was exact: an earlier error in the session left the state
        # off the dataset's story (state carried over), so they are not this command's fault.
        "inherited_failures": sum(1 for s in scores if s.detail.get("inherited")),
        "side_effect_free": proportion(
            sum(s.side_effect_free or 0 for s in scores if s.side_effect_free is not None),
            sum(1 for s in scores if s.side_effect_free is not None)),
    }
    if records is not None:
        out["latency"] = latency_metrics(records)
        tiers: dict[str, int] = {}
        for r in records:
            t = str(r.get("tier") or "unknown")
            tiers[t] = tiers.get(t, 0) + 1
        out["tiers"] = dict(sorted(tiers.items()))
    return out


__all__ = [
    "CATEGORY_PAIRS", "CommandScore", "LATENCY_STAGES", "MAX_INVALID_LOOPS", "NO_AGENT",
    "STAGES", "SUCCESS", "aggregate", "changed_outside", "flow_ok", "group_metrics",
    "latency_metrics", "latency_stats", "mean_ci", "merge_expect", "normalize_text",
    "partial_diff", "per_command_expect",
    "partial_match", "proportion", "record_actions", "record_route", "record_valid",
    "score_command", "wilson",
]
