"""`visa-console case PATH --info`: what a case folder holds and every problem, in plain words."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from app.data.case import Case, load_case
from app.data.problems import LoadError


def case_summary(case: Case) -> dict[str, Any]:
    out: dict[str, Any] = {"case": str(case.root), "name": case.name,
                           "tumor_lobes": list(case.tumor_lobes), "timings_ms": case.timings_ms}
    if case.ct is not None:
        ct = case.ct
        out["ct"] = {
            "source": str(case.paths.get("ct")),
            "size": ct.size,
            "spacing_mm": [round(s, 3) for s in ct.spacing],
            "hu_range": [float(ct.data.min()), float(ct.data.max())],
            "dtype": str(ct.data.dtype),
            **{k: v for k, v in ct.meta.items() if isinstance(v, str | int | float)},
        }
    if case.labels is not None:
        lab = case.labels
        counts = lab.voxel_counts() if hasattr(lab, "voxel_counts") else {}
        out["labels"] = {
            "source": str(case.paths.get("labels")),
            "structures": lab.structures(),
            "voxels": {k: int(v) for k, v in counts.items()},
            "meshes": sorted(getattr(lab, "meshes", {}) or {}),
        }
    if case.clinical is not None:
        rec = case.clinical
        out["clinical"] = {
            "source": str(case.paths.get("clinical")),
            "patient_id": getattr(rec, "patient_id", None),
            "fields": {k: v for k, v in rec.fields.items() if v not in (None, "", [], {})},
            "extra": dict(getattr(rec, "extra", {}) or {}),
        }
    if case.video is not None:
        v = case.video
        out["video"] = {k: getattr(v, k, None) for k in
                        ("codec", "width", "height", "fps", "frame_count", "duration_s")}
        out["video"]["source"] = str(case.video_path)
    if case.video_device is not None:
        out["capture_device"] = case.video_device
    out["problems"] = [{"severity": p.severity, "part": p.part, "message": p.message,
                        "detail": p.detail} for p in case.problems]
    return out


def format_summary(s: dict[str, Any]) -> str:
    lines = [f"Case: {s['name']}  ({s['case']})"]
    ct = s.get("ct")
    if ct:
        size = ct["size"]
        lines.append(f"  CT        {size['axial']} axial × {size['coronal']} coronal × "
                     f"{size['sagittal']} sagittal slices, spacing {ct['spacing_mm']} mm, "
                     f"HU {ct['hu_range'][0]:.0f}..{ct['hu_range'][1]:.0f}  [{ct['source']}]")
    else:
        lines.append("  CT        none (the CT views are off)")
    lab = s.get("labels")
    if lab:
        lines.append(f"  3D model  {', '.join(lab['structures']) or 'no structures'}  "
                     f"[{lab['source']}]")
    else:
        lines.append("  3D model  none (the 3D view is off)")
    cli = s.get("clinical")
    if cli:
        lines.append(f"  Clinical  patient {cli.get('patient_id') or '?'}: "
                     f"{', '.join(cli['fields'])}"
                     + (f"; other columns: {', '.join(cli['extra'])}" if cli["extra"] else "")
                     + f"  [{cli['source']}]")
    else:
        lines.append("  Clinical  none (patient information is off)")
    vid = s.get("video")
    if vid:
        dur = vid.get("duration_s")
        lines.append(f"  Video     {vid.get('codec')} {vid.get('width')}×{vid.get('height')} "
                     f"@ {vid.get('fps') or 0:.1f} fps"
                     + (f", {dur:.1f} s" if dur else "") + f"  [{vid['source']}]")
    if s.get("capture_device") is not None:
        lines.append(f"  Capture   device {s['capture_device']}")
    if s.get("tumor_lobes"):
        lines.append(f"  Tumour    {', '.join(s['tumor_lobes'])}")
    probs = s["problems"]
    if probs:
        lines.append(f"Problems ({len(probs)}):")
        for p in probs:
            lines.append(f"  [{p['severity']}] {p['part']}: {p['message']}")
    else:
        lines.append("No problems found.")
    return "\n".join(lines)


def run_case_command(path: Path | None, as_json: bool = False) -> int:
    if path is None:
        from app.data.demo import ensure_demo_case

        path = ensure_demo_case()
    try:
        case = load_case(path)
    except LoadError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    summary = case_summary(case)
    if as_json:
        print(json.dumps(summary, indent=2, default=str))
    else:
        print(format_summary(summary))
    return 1 if case.errors else 0
