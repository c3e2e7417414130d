"""Benchmark of the 3D (AR) overlay: mesh build time and render frame rate; prints JSON.

    .venv/bin/python scripts/bench_3d.py [--shape 256 512 512] [--frames 60] [--size 480]
                                         [--png DIR]

1. Synthesises a lung-like 512×512×256 label map (0.7×0.7×1.25 mm): two lungs as ellipsoids
   with a mediastinal/heart cut-out, split into five lobes by oblique and horizontal fissure
   planes, a 9 mm nodule in the right upper lobe and a trachea with two main bronchi (tubes).
2. Builds every surface with ``MeshCache`` into a fresh temporary cache (cold), then again
   (cached). Goal: first build ≤ 3 s.
3. Renders a full horizontal turn (360° in 6 s) at the full size and at the animation size
   (60 %, scaled up), timing each frame with readback; reports median/p95 ms and fps.
   Goal: ≥ 20 fps during rotation at the animation size.
4. Runs the same turn in real time through ``AnatomyWorker`` (its own thread, latest request
   wins, rendering ahead of the clock) and counts the frames it publishes.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

LABELS = {
    1: "right_upper_lobe", 2: "right_middle_lobe", 3: "right_lower_lobe",
    4: "left_upper_lobe", 5: "left_lower_lobe", 6: "lung_nodules", 7: "trachea_bronchia",
}


def phantom_affine(spacing: tuple[float, float, float], shape: tuple[int, int, int]) -> np.ndarray:
    """Canonical (axial↑, coronal→anterior, sagittal→left) index → LPS mm, centred at 0."""
    sa, sc, ss = spacing
    na, nc, ns = shape
    aff = np.zeros((4, 4))
    aff[0, 2] = ss            # sagittal index → +x (left)
    aff[1, 1] = -sc           # coronal index → −y (anterior)
    aff[2, 0] = sa            # axial index → +z (superior)
    aff[:3, 3] = (-ss * (ns - 1) / 2, sc * (nc - 1) / 2, -sa * (na - 1) / 2)
    aff[3, 3] = 1.0
    return aff


def _segment_dist2(x, y, z, p0, p1):
    p0, p1 = np.asarray(p0, np.float32), np.asarray(p1, np.float32)
    d = p1 - p0
    t = ((x - p0[0]) * d[0] + (y - p0[1]) * d[1] + (z - p0[2]) * d[2]) / float(d @ d)
    t = np.clip(t, 0, 1)
    return (x - p0[0] - t * d[0]) ** 2 + (y - p0[1] - t * d[1]) ** 2 + (z - p0[2] - t * d[2]) ** 2


def synth_lungs(shape: tuple[int, int, int] = (256, 512, 512),
                spacing: tuple[float, float, float] = (1.25, 0.7, 0.7),
                ) -> tuple[np.ndarray, np.ndarray]:
    """A lung-like label map (values of ``LABELS``) on a canonical grid and its affine.

    The geometry scales with the field of view: lungs about 120×190×250 mm each.
    """
    aff = phantom_affine(spacing, shape)
    na, nc, ns = shape
    out = np.zeros(shape, np.uint8)
    xs = (np.arange(ns, dtype=np.float32) * aff[0, 2] + aff[0, 3])[None, None, :]
    ys = (np.arange(nc, dtype=np.float32) * aff[1, 1] + aff[1, 3])[None, :, None]
    chunk = 16
    for a0 in range(0, na, chunk):
        a1 = min(na, a0 + chunk)
        zs = (np.arange(a0, a1, dtype=np.float32) * aff[2, 0] + aff[2, 3])[:, None, None]
        lab = np.zeros((a1 - a0, nc, ns), np.uint8)
        for side, cx in (("right", -75.0), ("left", 72.0)):
            rx, ry, rz = (62.0, 92.0, 125.0) if side == "right" else (56.0, 90.0, 120.0)
            inside = ((xs - cx) / rx) ** 2 + ((ys - 12.0) / ry) ** 2 + ((zs - 5.0) / rz) ** 2 < 1
            # flat-ish base (diaphragm dome) and the heart's notch
            inside &= zs > -95.0 + 0.0006 * (xs - cx) ** 2 + 0.25 * (ys - 12.0)
            heart = ((xs - 25.0) / 70.0) ** 2 + ((ys + 45.0) / 60.0) ** 2 + ((zs + 60.0) / 65.0) ** 2 < 1
            inside &= ~heart
            lower = (zs - 5.0) < 0.9 * (ys - 12.0) - 5.0   # oblique fissure
            if side == "right":
                middle = ~lower & ((zs - 5.0) < 0.0) & (ys < 30.0)  # horizontal fissure
                lab[inside & lower] = 3
                lab[inside & ~lower & middle] = 2
                lab[inside & ~lower & ~middle] = 1
            else:
                lab[inside & lower] = 5
                lab[inside & ~lower] = 4
        airway = _segment_dist2(xs, ys, zs, (0, -10, 190), (0, 0, 75)) < 9.0 ** 2
        airway |= _segment_dist2(xs, ys, zs, (0, 0, 75), (-55, 10, 35)) < 6.5 ** 2
        airway |= _segment_dist2(xs, ys, zs, (0, 0, 75), (50, 12, 30)) < 6.0 ** 2
        airway |= _segment_dist2(xs, ys, zs, (-55, 10, 35), (-75, 30, -30)) < 4.0 ** 2
        airway |= _segment_dist2(xs, ys, zs, (50, 12, 30), (70, 32, -30)) < 4.0 ** 2
        airway |= _segment_dist2(xs, ys, zs, (-55, 10, 35), (-85, -20, 80)) < 4.0 ** 2
        airway |= _segment_dist2(xs, ys, zs, (50, 12, 30), (75, -20, 80)) < 4.0 ** 2
        lab[airway] = 7
        nodule = (xs + 88.0) ** 2 + (ys + 15.0) ** 2 + (zs - 70.0) ** 2 < 9.0 ** 2
        lab[nodule] = 6
        out[a0:a1] = lab
    return out, aff


@dataclass
class SimpleLabels:
    """The parts of ``app.data.labels.LabelSet`` that ``MeshCache.build`` reads."""

    masks: dict[str, np.ndarray] = field(default_factory=dict)
    affines: dict[str, np.ndarray] = field(default_factory=dict)
    meshes: dict = field(default_factory=dict)

    def structures(self) -> list[str]:
        return sorted(self.masks)


def split_labels(labelmap: np.ndarray, affine: np.ndarray) -> SimpleLabels:
    ls = SimpleLabels()
    for v, key in LABELS.items():
        m = labelmap == v
        if m.any():
            ls.masks[key] = m
            ls.affines[key] = affine
    return ls


def _stats(ms: list[float]) -> dict[str, float]:
    a = np.asarray(ms)
    return {"median_ms": round(float(np.median(a)), 2), "p95_ms": round(float(np.percentile(a, 95)), 2),
            "fps_median": round(1000.0 / float(np.median(a)), 1), "frames": len(ms)}


def worker_rotation(polys: dict, state, window_class: str, size: int) -> dict:
    """A real-time horizontal turn through ``AnatomyWorker``: frames published per second."""
    from dataclasses import replace

    from app.render.anatomy3d import AnatomyRenderer, AnatomyWorker
    from app.render.clock import MonotonicClock

    published: list[tuple[float, bool]] = []
    worker = AnatomyWorker(
        (size, size), clock=MonotonicClock(),
        renderer_factory=lambda s: AnatomyRenderer(s, window_class=window_class),
        on_frame=lambda f: published.append((time.monotonic(), f.fast)))
    worker.set_structures(polys)
    worker.start()
    worker.submit(state)
    worker.wait_idle(30.0)
    published.clear()
    t0 = time.monotonic()
    worker.submit(replace(state, rotation="horizontal"), t0)
    time.sleep(6.0)
    during = [t for t, fast in published if t <= t0 + 6.0]
    worker.wait_idle(10.0)
    final = worker.latest()
    worker.stop()
    gaps = np.diff([t0, *during]) * 1000 if during else np.array([0.0])
    return {
        "frames_during_turn": len(during),
        "fps": round(len(during) / 6.0, 1),
        "median_gap_ms": round(float(np.median(gaps)), 1),
        "p95_gap_ms": round(float(np.percentile(gaps, 95)), 1),
        "max_gap_ms": round(float(gaps.max()), 1),
        "expected_render_ms": round(worker.expected_render_s * 1000, 1),
        "final_frame_full_size": bool(final is not None and not final.fast),
        "error": worker.error,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", type=int, nargs=3, default=(256, 512, 512),
                    help="label map shape (axial, coronal, sagittal)")
    ap.add_argument("--frames", type=int, default=60, help="frames per rotation run")
    ap.add_argument("--size", type=int, default=480, help="overlay size (square)")
    ap.add_argument("--png", type=Path, default=None, help="save a few frames here")
    args = ap.parse_args(argv)

    from app.core.state import ARState
    from app.render.ar_animation import ARAnimator
    from app.render.meshes import MeshCache, centroids_of

    shape = tuple(args.shape)
    spacing = (1.25 * 256 / shape[0], 0.7 * 512 / shape[1], 0.7 * 512 / shape[2])
    result: dict = {"label_map": {"shape": list(shape), "spacing_mm": [round(s, 3) for s in spacing]}}
    t0 = time.perf_counter()
    labelmap, affine = synth_lungs(shape, spacing)  # type: ignore[arg-type]
    result["label_map"]["synth_s"] = round(time.perf_counter() - t0, 2)
    t0 = time.perf_counter()
    labels = split_labels(labelmap, affine)
    result["label_map"]["split_masks_s"] = round(time.perf_counter() - t0, 2)
    result["label_map"]["voxels"] = {k: int(m.sum()) for k, m in labels.masks.items()}
    del labelmap

    with tempfile.TemporaryDirectory(prefix="visa-bench-3d-") as tmp:
        cache = MeshCache(cache_dir=Path(tmp))
        t0 = time.perf_counter()
        polys = cache.build(labels)
        cold = time.perf_counter() - t0
        per = {k: round(v * 1000, 1) for k, v in cache.timings.items()}
        cache2 = MeshCache(cache_dir=Path(tmp))
        t0 = time.perf_counter()
        polys2 = cache2.build(labels)
        warm = time.perf_counter() - t0
        result["mesh_build"] = {
            "cold_s": round(cold, 3), "cached_s": round(warm, 3), "goal_cold_s": 3.0,
            "ok": cold <= 3.0, "per_structure_ms": per, "cache_hits": cache2.hits,
            "triangles": {k: int(p.GetNumberOfPolys()) for k, p in polys.items()},
            "triangles_total": int(sum(p.GetNumberOfPolys() for p in polys.values())),
        }
        assert set(polys2) == set(polys)

    try:
        from app.render.anatomy3d import AnatomyRenderer, RenderUnavailable, probe_offscreen
    except Exception as exc:  # pragma: no cover
        result["render"] = {"error": str(exc)}
        print(json.dumps(result, indent=2))
        return 1
    t0 = time.perf_counter()
    win, why = probe_offscreen()
    result["render"] = {"window_class": win, "probe_s": round(time.perf_counter() - t0, 2)}
    if win is None:
        result["render"]["error"] = why
        print(json.dumps(result, indent=2))
        return 1
    try:
        ren = AnatomyRenderer((args.size, args.size))
    except RenderUnavailable as exc:
        result["render"]["error"] = str(exc)
        print(json.dumps(result, indent=2))
        return 1
    ren.set_structures(polys, centroids_of(polys))
    state = ARState(visible=True, structures=tuple(sorted(polys)), view="surgical")

    class _Clock:
        t = 0.0

        def now(self) -> float:
            return self.t

    clk = _Clock()
    anim = ARAnimator(clk, centroids=ren.centroids(), bounds=ren.bounds())
    anim.update(state)
    t0 = time.perf_counter()
    ren.render(state, anim.pose(), fast=False)
    result["render"]["first_frame_ms"] = round((time.perf_counter() - t0) * 1000, 1)
    ren.render(ARState(visible=True, structures=state.structures, view="anterior"), None)

    def run(fast: bool) -> list[float]:
        clk.t = 100.0
        anim.update(state, clk.t)
        rot = ARState(visible=True, structures=state.structures, view="surgical",
                      rotation="horizontal")
        anim.update(rot, clk.t)
        ms = []
        for i in range(args.frames):
            clk.t = 100.0 + 6.0 * (i + 0.5) / args.frames
            t1 = time.perf_counter()
            img = ren.render(rot, anim.pose(), fast=fast)
            ms.append((time.perf_counter() - t1) * 1000)
            if args.png is not None and i % max(1, args.frames // 4) == 0:
                from PIL import Image

                args.png.mkdir(parents=True, exist_ok=True)
                Image.fromarray(np.asarray(img)).save(
                    args.png / f"bench_{'fast' if fast else 'full'}_{i:03d}.png")
        anim.update(state, clk.t)
        return ms

    full = run(False)
    fast = run(True)
    ren.render(state, anim.pose(), fast=False)
    t1 = time.perf_counter()
    n_memo = 50
    for _ in range(n_memo):
        ren.render(state, anim.pose(), fast=False)
    memo_ms = (time.perf_counter() - t1) * 1000 / n_memo
    result["render"].update({
        "size": [args.size, args.size],
        "animation_size": list(ren.render_size(True)),
        "rotation_full_size": _stats(full),
        "rotation_animation_size": _stats(fast),
        "goal_fps": 20, "ok": 1000.0 / float(np.median(fast)) >= 20.0,
        "still_memoised_ms": round(memo_ms, 3),
    })
    ren.close()
    result["worker"] = worker_rotation(polys, state, win, args.size)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
