"""Evaluation reports: a self-contained HTML page with plots, a Markdown summary, and a
side-by-side comparison of strategies (fast vs visa).

Plots are drawn with matplotlib's object API (``Figure`` + Agg), never pyplot: the report may
be produced inside the Qt console process, and pyplot would pick or switch a global backend.
Every image is embedded as base64 PNG so the HTML file can be mailed or archived alone.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure
from matplotlib.patches import Polygon, Rectangle

from app.eval.dataset import CATEGORY_VALUES, Row
from app.eval.metrics import CATEGORY_PAIRS, STAGES, SUCCESS, CommandScore

GOOD, BAD, MID = "#3a9d5d", "#d1495b", "#edae49"
SUCCESS_LABELS = {"strict": "strict", "single_pass": "single-pass", "multi_pass": "multi-pass"}
SUCCESS_COLOURS = {"strict": "#2e4057", "single_pass": "#00798c", "multi_pass": "#66a182"}
MAX_FAILURE_ROWS = 400


# ------------------------------------------------------------------------------ helpers
def _png(fig: Figure) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _rate(p: dict[str, Any] | None) -> float | None:
    return None if not p else p.get("rate")


def _err(p: dict[str, Any] | None) -> tuple[float, float]:
    """Asymmetric error bar lengths (below, above) from a proportion's Wilson interval."""
    if not p or p.get("rate") is None or not p.get("ci"):
        return 0.0, 0.0
    return p["rate"] - p["ci"][0], p["ci"][1] - p["rate"]


def fmt_prop(p: dict[str, Any] | None, digits: int = 1) -> str:
    if not p or p.get("rate") is None:
        return "n/a"
    lo, hi = p["ci"]
    return (f"{p['rate'] * 100:.{digits}f}% [{lo * 100:.{digits}f}, {hi * 100:.{digits}f}] "
            f"({p['k']}/{p['n']})")


def _fmt_ms(v: float | None) -> str:
    if v is None:
        return "n/a"
    return f"{v:.0f} ms" if v >= 10 else f"{v:.1f} ms"


# ------------------------------------------------------------------------------ plots
def plot_stages(metrics: dict[str, Any]) -> Figure:
    """Per-stage accuracy with Wilson 95% intervals."""
    stages = metrics["overall"]["stages"]
    names = [s for s in STAGES if stages.get(s)]
    rates = [_rate(stages[s]) or 0.0 for s in names]
    errs = [_err(stages[s]) for s in names]
    fig = Figure(figsize=(7, 3.4))
    ax = fig.add_subplot()
    bars = ax.bar(names, rates, color=[GOOD if r >= 0.95 else MID if r >= 0.8 else BAD
                                       for r in rates],
                  yerr=[[e[0] for e in errs], [e[1] for e in errs]], capsize=4,
                  ecolor="#333")
    for b, r, s in zip(bars, rates, names, strict=True):
        ax.text(b.get_x() + b.get_width() / 2, 0.02, f"{r * 100:.1f}%\nn={stages[s]['n']}",
                ha="center", va="bottom", fontsize=8, color="white")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("accuracy")
    ax.set_title("Per-stage accuracy (95% Wilson intervals)")
    ax.grid(axis="y", alpha=0.3)
    return fig


def plot_success(metrics: dict[str, Any]) -> Figure:
    """Strict / single-pass / multi-pass success, overall and per agent."""
    groups = [("overall", metrics["overall"])] + list(metrics["by_agent"].items())
    fig = Figure(figsize=(8, 3.6))
    ax = fig.add_subplot()
    width = 0.26
    for i, key in enumerate(SUCCESS):
        xs = [g + (i - 1) * width for g in range(len(groups))]
        ps = [grp["success"][key] for _, grp in groups]
        errs = [_err(p) for p in ps]
        ax.bar(xs, [_rate(p) or 0.0 for p in ps], width, label=SUCCESS_LABELS[key],
               color=SUCCESS_COLOURS[key],
               yerr=[[e[0] for e in errs], [e[1] for e in errs]], capsize=3, ecolor="#333")
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([f"{name}\n(n={grp['n']})" for name, grp in groups])
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("success rate")
    ax.set_title("Workflow success (95% Wilson intervals)")
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return fig


def plot_heatmaps(metrics: dict[str, Any], key: str = "single_pass") -> Figure:
    """Success rate for every category pair (type × expression, ...), with counts."""
    fig = Figure(figsize=(12.5, 3.8), layout="constrained")
    axes = fig.subplots(1, len(CATEGORY_PAIRS))
    image = None
    for ax, (a, b) in zip(axes, CATEGORY_PAIRS, strict=True):
        cells = metrics["by_category_pair"].get(f"{a}/{b}", {})
        rows_v, cols_v = CATEGORY_VALUES[a], CATEGORY_VALUES[b]
        grid = [[float("nan")] * len(cols_v) for _ in rows_v]
        for i, va in enumerate(rows_v):
            for j, vb in enumerate(cols_v):
                cell = cells.get(f"{va}/{vb}")
                if cell:
                    r = _rate(cell["success"][key])
                    grid[i][j] = r if r is not None else float("nan")
                    txt = f"{r * 100:.0f}%\nn={cell['n']}" if r is not None else "-"
                else:
                    txt = "-"
                ax.text(j, i, txt, ha="center", va="center", fontsize=8,
                        color="black")
        image = ax.imshow(grid, cmap="RdYlGn", vmin=0.5, vmax=1.0, aspect="auto")
        ax.set_xticks(range(len(cols_v)))
        ax.set_xticklabels(cols_v, fontsize=8)
        ax.set_yticks(range(len(rows_v)))
        ax.set_yticklabels(rows_v, fontsize=8)
        ax.set_xlabel(b)
        ax.set_ylabel(a)
    if image is not None:
        fig.colorbar(image, ax=list(axes), shrink=0.8, label=SUCCESS_LABELS[key] + " success")
    fig.suptitle(f"{SUCCESS_LABELS[key].capitalize()} success per category pair "
                 "(colour scale 50–100%)")
    return fig


def flow_columns(rows: Sequence[Row], scores: Sequence[CommandScore]
                 ) -> tuple[list[str], list[list[tuple[str, str]]], list[list[int]]]:
    """The failure/recovery paths: column titles, nodes per column (label, status) and, per
    command, its node index in every column. Status is "ok", "bad" or "rec" (recovered)."""
    audio = any(s.stt is not None for s in scores)
    titles = (["STT"] if audio else []) + ["CC", "CR", "AD", "outcome"]
    nodes: list[list[tuple[str, str]]] = []
    for t in titles[:-1]:
        nodes.append([(f"{t} right", "ok"), (f"{t} wrong", "bad")])
    nodes.append([("first pass", "ok"), ("recovered after loops", "rec"), ("failed", "bad")])
    paths: list[list[int]] = []
    for s in scores:
        p: list[int] = []
        for t in titles[:-1]:
            v = s.stage(t)
            p.append(0 if v else 1)
        p.append(0 if s.single_pass else 1 if s.multi_pass else 2)
        paths.append(p)
    return titles, nodes, paths


def plot_flow(rows: Sequence[Row], scores: Sequence[CommandScore]) -> Figure:
    """A Sankey-like diagram: each command flows stage → right/wrong → outcome. A band from a
    "wrong" node into "right" is a later stage recovering; into "recovered" a retry saving it."""
    titles, nodes, paths = flow_columns(rows, scores)
    n = max(1, len(paths))
    fig = Figure(figsize=(10, 4.2))
    ax = fig.add_subplot()
    ax.set_xlim(-0.02, 1.12)
    ax.set_ylim(-0.05, 1.08)
    ax.axis("off")
    ncol = len(titles)
    xs = [i / (ncol - 1) * 0.95 for i in range(ncol)]
    width, gap = 0.018, 0.05
    colour = {"ok": GOOD, "bad": BAD, "rec": MID}
    # Node extents: stacked from the top, heights proportional to counts.
    extents: list[list[tuple[float, float]]] = []
    for c, col in enumerate(nodes):
        counts = [sum(1 for p in paths if p[c] == i) for i in range(len(col))]
        used = sum(1 for k in counts if k)
        scale = (1.0 - gap * max(0, used - 1)) / n
        y = 1.0
        ext = []
        for k in counts:
            h = k * scale
            ext.append((y - h, y))
            y -= h + (gap if k else 0)
        extents.append(ext)
        for (label, status), (lo, hi), k in zip(col, ext, counts, strict=True):
            if not k:
                continue
            ax.add_patch(Rectangle((xs[c], lo), width, hi - lo, color=colour[status]))
            ax.text(xs[c] + width + 0.005, (lo + hi) / 2, f"{label}\n{k}", fontsize=7,
                    va="center", ha="left")
        ax.text(xs[c] + width / 2, 1.05, titles[c], ha="center", fontsize=9, weight="bold")
    # Bands between consecutive columns, ordered so they do not cross within a node.
    for c in range(ncol - 1):
        flows: dict[tuple[int, int], int] = {}
        for p in paths:
            flows[(p[c], p[c + 1])] = flows.get((p[c], p[c + 1]), 0) + 1
        out_off = {i: extents[c][i][1] for i in range(len(nodes[c]))}
        in_off = {j: extents[c + 1][j][1] for j in range(len(nodes[c + 1]))}
        src_scale = _scale(extents[c], paths, c)
        dst_scale = _scale(extents[c + 1], paths, c + 1)
        for (i, j), k in sorted(flows.items()):
            h0, h1 = k * src_scale, k * dst_scale
            y0, y1 = out_off[i], in_off[j]
            out_off[i] -= h0
            in_off[j] -= h1
            s_status, d_status = nodes[c][i][1], nodes[c + 1][j][1]
            col = colour[d_status] if s_status != d_status else colour[s_status]
            alpha = 0.55 if s_status != d_status else 0.25
            _band(ax, xs[c] + width, xs[c + 1], (y0 - h0, y0), (y1 - h1, y1), col, alpha)
    ax.set_title("Failure and recovery paths between stages (band width = commands)",
                 fontsize=10)
    return fig


def _scale(ext: list[tuple[float, float]], paths: list[list[int]], c: int) -> float:
    for i, (lo, hi) in enumerate(ext):
        k = sum(1 for p in paths if p[c] == i)
        if k:
            return (hi - lo) / k
    return 0.0


def _band(ax: Any, x0: float, x1: float, src: tuple[float, float], dst: tuple[float, float],
          colour: str, alpha: float, steps: int = 30) -> None:
    xs = [x0 + (x1 - x0) * t / steps for t in range(steps + 1)]
    ease = [(1 - math.cos(math.pi * t / steps)) / 2 for t in range(steps + 1)]
    top = [src[1] + (dst[1] - src[1]) * e for e in ease]
    bot = [src[0] + (dst[0] - src[0]) * e for e in ease]
    pts = list(zip(xs, top, strict=True)) + list(zip(reversed(xs), reversed(bot), strict=True))
    ax.add_patch(Polygon(pts, closed=True, facecolor=colour, alpha=alpha, edgecolor="none"))


def plot_latency(metrics: dict[str, Any]) -> Figure:
    """Median and p95 latency per stage and per interpreter tier."""
    lat = metrics.get("latency") or {"stages": {}, "by_tier": {}}
    fig = Figure(figsize=(11, 3.6))
    axes = fig.subplots(1, 2)
    for ax, (title, data) in zip(axes, (("per stage", lat["stages"]),
                                        ("per tier (whole command)", lat["by_tier"])),
                                 strict=True):
        names = [k for k, v in data.items() if v and v.get("n")]
        med = [data[k]["median"] for k in names]
        p95 = [data[k]["p95"] for k in names]
        xs = range(len(names))
        ax.bar([x - 0.2 for x in xs], med, 0.4, label="median", color="#00798c")
        ax.bar([x + 0.2 for x in xs], p95, 0.4, label="p95", color="#edae49")
        ax.set_xticks(list(xs))
        ax.set_xticklabels([f"{k}\nn={data[k]['n']}" for k in names], fontsize=8)
        ax.set_ylabel("ms")
        if med and max(p95) > 20 * max(min(med), 0.1):
            ax.set_yscale("log")  # lexicon ~1 ms next to LLM ~seconds
        ax.set_title(f"Latency {title}")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8)
    return fig


# ------------------------------------------------------------------------------ HTML
_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:24px;color:#222;max-width:1250px}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:13px;margin:8px 0}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.num{text-align:right;white-space:nowrap}
img{max-width:100%;margin:6px 0}.bad{color:#b0283a}.small{font-size:12px;color:#555}
code{font-size:12px}
"""


def _e(x: Any) -> str:
    return html.escape(str(x))


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]], num_from: int = 1) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = []
    for r in rows:
        cells = "".join(
            f"<td class='num'>{_e(v)}</td>" if i >= num_from else f"<td>{_e(v)}</td>"
            for i, v in enumerate(r))
        body.append(f"<tr>{cells}</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _group_rows(groups: dict[str, dict[str, Any]]) -> list[list[str]]:
    out = []
    for name, g in groups.items():
        out.append([name, str(g["n"]),
                    *[fmt_prop(g["stages"].get(s)) if g["stages"].get(s) else "n/a"
                      for s in STAGES],
                    *[fmt_prop(g["success"][k]) for k in SUCCESS],
                    f"{g['invalid_cycles']['mean']:.2f}" if g["invalid_cycles"]["mean"]
                    is not None else "n/a"])
    return out


_GROUP_HEADERS = ["group", "n", *STAGES, *[SUCCESS_LABELS[k] for k in SUCCESS], "mean IC"]


def failure_rows(rows: Sequence[Row], scores: Sequence[CommandScore]) -> list[list[str]]:
    """Commands that were not a strict success: what was expected and what the console did."""
    out = []
    for r, s in zip(rows, scores, strict=True):
        if s.strict:
            continue
        d = s.detail
        exp = d["expected"]
        got = d["got"]
        expected = (f"valid={exp['valid']} agent={exp['agent']} "
                    f"actions={', '.join(exp['actions'] or []) or '-'}")
        got_s = (f"valid={got['valid']} route={got['route']} "
                 f"actions={', '.join(got['actions']) or '-'} tier={got['tier']}")
        if got.get("stt") is not None:
            got_s = f"heard \"{got['stt']}\"; " + got_s
        if got.get("corrected") is not None:
            got_s += f"; corrected \"{got['corrected']}\""
        problems = list(d["state_diff"])
        if d.get("flow_problem"):
            problems.append(f"flow: {d['flow_problem']}")
        if d.get("error"):
            problems.append(f"error: {d['error']}")
        outcome = ("recovered" if s.multi_pass and not s.single_pass else
                   "right (a stage erred)" if s.single_pass else
                   "failed (plan exact: inherited from an earlier error)"
                   if d.get("inherited") else "failed")
        out.append([r.id, r.text or "(silent)", ", ".join(s.failed) or "-", outcome, expected,
                    got_s, "; ".join(problems) or "-"])
    return out


def render_html(metrics: dict[str, Any], rows: Sequence[Row], scores: Sequence[CommandScore],
                images: dict[str, str]) -> str:
    m = metrics["meta"]
    o = metrics["overall"]
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>VISA Console evaluation "
             f"— {_e(m.get('strategy') or '')} {_e(m['mode'])}</title><style>{_CSS}</style>"
             "</head><body>",
             "<h1>VISA Console — MOEM evaluation</h1>",
             f"<p class='small'>dataset <code>{_e(m['dataset'])}</code> · {m['commands']} "
             f"commands in {m['sessions']} session(s) · mode {_e(m['mode'])} · strategy "
             f"{_e(m.get('strategy'))} · case {_e(m.get('case'))} · {_e(m['created'])} · "
             f"{_e(m.get('machine', ''))} · {m['wall_s']:.1f} s</p>"]
    if m.get("warnings"):
        parts.append("<ul class='bad'>" + "".join(f"<li>{_e(w)}</li>" for w in m["warnings"])
                     + "</ul>")
    parts.append("<h2>Summary</h2>")
    summary = [[s, fmt_prop(o["stages"][s])] for s in STAGES if o["stages"].get(s)]
    summary += [[SUCCESS_LABELS[k] + " success", fmt_prop(o["success"][k])] for k in SUCCESS]
    ic = o["invalid_cycles"]
    summary.append(["mean invalid cycles",
                    f"{ic['mean']:.3f} [{ic['ci'][0]:.3f}, {ic['ci'][1]:.3f}]"
                    if ic["mean"] is not None else "n/a"])
    oos = metrics["out_of_scope"]
    summary.append([f"out of scope rejected ({oos['basis']})", fmt_prop(oos["rejected"])])
    summary.append(["out of scope: zero state change", fmt_prop(oos["zero_state_change"])])
    summary.append(["composite fully correct", fmt_prop(metrics["composite"]["fully_correct"])])
    summary.append(["no change outside expect", fmt_prop(metrics.get("side_effect_free"))])
    summary.append(["failures inherited from an earlier error (plan exact)",
                    str(metrics.get("inherited_failures", "n/a"))])
    parts.append(_table(["metric", "value [95% CI] (k/n)"], summary))
    parts.append(f"<img alt='stage accuracy' src='data:image/png;base64,{images['stages']}'>")
    parts.append("<h2>Workflow success</h2>")
    parts.append(f"<img alt='success' src='data:image/png;base64,{images['success']}'>")
    parts.append(_table(_GROUP_HEADERS, _group_rows({"overall": o, **metrics["by_agent"]})))
    parts.append("<h2>Categories</h2>")
    parts.append(f"<img alt='category heatmaps' src='data:image/png;base64,{images['heatmaps']}'>")
    cat_groups = {f"{dim}={v}": g for dim, vals in metrics["by_category"].items()
                  for v, g in vals.items()}
    parts.append(_table(_GROUP_HEADERS, _group_rows(cat_groups)))
    pair_groups = {f"{pair}: {cell}": g for pair, cells in metrics["by_category_pair"].items()
                   for cell, g in cells.items()}
    parts.append("<details><summary>Category pairs</summary>"
                 + _table(_GROUP_HEADERS, _group_rows(pair_groups)) + "</details>")
    parts.append("<h2>Failure and recovery paths</h2>")
    parts.append(f"<img alt='failure and recovery flow' src='data:image/png;base64,{images['flow']}'>")
    parts.append("<h2>Latency</h2>")
    parts.append(f"<img alt='latency' src='data:image/png;base64,{images['latency']}'>")
    lat = metrics.get("latency") or {}
    lat_rows = [[k, str(v["n"]), _fmt_ms(v["median"]), _fmt_ms(v["p95"]), _fmt_ms(v["max"])]
                for k, v in {**lat.get("stages", {}),
                             **{f"tier {t}": v for t, v in lat.get("by_tier", {}).items()}}.items()]
    parts.append(_table(["stage / tier", "n", "median", "p95", "max"], lat_rows))
    fails = failure_rows(rows, scores)
    parts.append(f"<h2>Commands that were not a strict success ({len(fails)})</h2>")
    if len(fails) > MAX_FAILURE_ROWS:
        parts.append(f"<p class='small'>First {MAX_FAILURE_ROWS} shown; trace.jsonl has all.</p>")
    parts.append(_table(["id", "text", "failed", "outcome", "expected", "got", "state / flow"],
                        fails[:MAX_FAILURE_ROWS], num_from=99))
    parts.append("<h2>Definitions</h2>")
    parts.append(_table(["metric", "definition"],
                        [[k, v] for k, v in (m.get("definitions") or {}).items()], num_from=99))
    parts.append("</body></html>")
    return "\n".join(parts)


# ------------------------------------------------------------------------------ Markdown
def _md_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def render_markdown(metrics: dict[str, Any]) -> str:
    m = metrics["meta"]
    o = metrics["overall"]
    out = [f"### MOEM evaluation — {m.get('strategy') or '?'} strategy, {m['mode']} mode",
           "",
           f"{m['commands']} commands in {m['sessions']} sessions of `{m['dataset']}`, case: "
           f"{m.get('case')}, {m['created']}, {m.get('machine', '')}.",
           "", "Rates with 95% Wilson intervals (k/n).", ""]
    rows = [[s, fmt_prop(o["stages"][s])] for s in STAGES if o["stages"].get(s)]
    views = o.get("views") or {}
    for view in ("per_command", "session"):
        for k in ("AP", "AD"):
            if (views.get(view) or {}).get(k):
                rows.append([f"{k} ({view.replace('_', ' ')})", fmt_prop(views[view][k])])
    rows += [[SUCCESS_LABELS[k] + " success", fmt_prop(o["success"][k])] for k in SUCCESS]
    ic = o["invalid_cycles"]
    rows.append(["mean invalid cycles", f"{ic['mean']:.3f}" if ic["mean"] is not None else "n/a"])
    oos = metrics["out_of_scope"]
    rows.append(["out of scope rejected, zero state change",
                 fmt_prop(oos["rejected_with_zero_state_change"])])
    rows.append(["composite fully correct", fmt_prop(metrics["composite"]["fully_correct"])])
    lat = (metrics.get("latency") or {}).get("stages", {})
    if lat.get("total", {}).get("n"):
        rows.append(["latency per command (median / p95)",
                     f"{_fmt_ms(lat['total']['median'])} / {_fmt_ms(lat['total']['p95'])}"])
    out.append(_md_table(["metric", "value"], rows))
    out += ["", "**Per agent**", ""]
    out.append(_md_table(["agent", "n", "AD per command", "AD session", "CR", "single-pass",
                          "multi-pass"], [
        [a, str(g["n"]), fmt_prop((g.get("views") or {}).get("per_command", {}).get("AD")),
         fmt_prop(g["stages"]["AD"]), fmt_prop(g["stages"]["CR"]),
         fmt_prop(g["success"]["single_pass"]), fmt_prop(g["success"]["multi_pass"])]
        for a, g in metrics["by_agent"].items()]))
    out += ["", "**Per category (single-pass success)**", ""]
    out.append(_md_table(["category", "n", "single-pass", "AD"], [
        [f"{dim}={v}", str(g["n"]), fmt_prop(g["success"]["single_pass"]),
         fmt_prop(g["stages"]["AD"])]
        for dim, vals in metrics["by_category"].items() for v, g in vals.items()]))
    by_tier = (metrics.get("latency") or {}).get("by_tier", {})
    if by_tier:
        out += ["", "**Latency**", ""]
        out.append(_md_table(["stage / tier", "n", "median", "p95"], [
            [k, str(v["n"]), _fmt_ms(v["median"]), _fmt_ms(v["p95"])]
            for k, v in {**lat, **{f"tier {t}": v for t, v in by_tier.items()}}.items()
            if v.get("n")]))
    return "\n".join(out) + "\n"


def compare_reports(metrics_list: Sequence[dict[str, Any]],
                    labels: Sequence[str] | None = None) -> str:
    """A Markdown table putting several runs side by side (e.g. fast vs visa strategy)."""
    if not metrics_list:
        return ""
    if labels is None:
        labels = [f"{m['meta'].get('strategy') or '?'} ({m['meta']['mode']})"
                  for m in metrics_list]
    if len(labels) != len(metrics_list):
        raise ValueError("one label per metrics dict")

    def row(name: str, get: Any) -> list[str]:
        vals = []
        for m in metrics_list:
            try:
                vals.append(get(m))
            except (KeyError, TypeError):
                vals.append("n/a")
        return [name, *vals]

    rows = [row("commands", lambda m: str(m["meta"]["commands"]))]
    rows += [row(s, lambda m, s=s: fmt_prop(m["overall"]["stages"][s])) for s in STAGES]
    rows += [row(f"{SUCCESS_LABELS[k]} success",
                 lambda m, k=k: fmt_prop(m["overall"]["success"][k])) for k in SUCCESS]
    rows.append(row("mean invalid cycles",
                    lambda m: f"{m['overall']['invalid_cycles']['mean']:.3f}"))
    rows.append(row("composite fully correct",
                    lambda m: fmt_prop(m["composite"]["fully_correct"])))
    rows.append(row("out of scope rejected, zero change",
                    lambda m: fmt_prop(m["out_of_scope"]["rejected_with_zero_state_change"])))
    for st in ("total", "correct", "route", "decide", "stt"):
        rows.append(row(f"latency {st} median / p95", lambda m, st=st: (
            f"{_fmt_ms(m['latency']['stages'][st]['median'])} / "
            f"{_fmt_ms(m['latency']['stages'][st]['p95'])}"
            if m["latency"]["stages"][st]["n"] else "n/a")))
    return _md_table(["metric", *labels], rows) + "\n"


# ------------------------------------------------------------------------------ entry
def write_report(metrics: dict[str, Any], rows: Sequence[Row], scores: Sequence[CommandScore],
                 out_dir: Path | str) -> dict[str, Path]:
    """Write ``report.html`` (self-contained) and ``report.md``; returns their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    images = {
        "stages": _png(plot_stages(metrics)),
        "success": _png(plot_success(metrics)),
        "heatmaps": _png(plot_heatmaps(metrics)),
        "flow": _png(plot_flow(rows, scores)),
        "latency": _png(plot_latency(metrics)),
    }
    html_path = out / "report.html"
    html_path.write_text(render_html(metrics, rows, scores, images), encoding="utf-8")
    md_path = out / "report.md"
    md_path.write_text(render_markdown(metrics), encoding="utf-8")
    return {"html": html_path, "md": md_path}


def load_metrics(path: Path | str) -> dict[str, Any]:
    return json.loads(Path(path).read_text(encoding="utf-8"))


__all__ = [
    "compare_reports", "failure_rows", "flow_columns", "fmt_prop", "load_metrics",
    "plot_flow", "plot_heatmaps", "plot_latency", "plot_stages", "plot_success",
    "render_html", "render_markdown", "write_report",
]
