"""Benchmark of the 2-D render path (issue 3): compositor frame rate at 1280×720 with the IR box,
the three small CT views and a 420×420 3D panel; MPR ``render_view`` cost per plane and size on
a 512×512×300 CT; and a full animated frame (three views re-rendered + compose).

    .venv/bin/python scripts/bench_render.py [--frames 300] [--out FILE.json]

Prints JSON. Timings depend on what else runs on the machine's cores.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.data.volume import Volume  # noqa: E402
from app.render.compositor import Compositor, Layer  # noqa: E402
from app.render.layout import AR_KEY, IR_KEY, STRIP_KEYS, Layout  # noqa: E402
from app.render.mpr import PLANES, MPRSlicer  # noqa: E402
from app.render.textbox import render_text_box  # noqa: E402

W, H = 1280, 720
IR_LINES = [
    ("Sex/Age", "F/65"), ("Diagnosis", "Adenocarcinoma, right upper lobe"),
    ("Body", "165 cm · 62 kg · BMI 22.8"), ("FEV1", "2.10 L (85%)"), ("FVC", "2.90 L (92%)"),
]


def stats(samples_s: list[float]) -> dict[str, float]:
    ms = sorted(1000.0 * s for s in samples_s)
    p95 = ms[min(len(ms) - 1, int(round(0.95 * (len(ms) - 1))))]
    med = statistics.median(ms)
    return {"median_ms": round(med, 3), "p95_ms": round(p95, 3), "max_ms": round(ms[-1], 3),
            "fps_median": round(1000.0 / med, 1) if med > 0 else float("inf"), "n": len(ms)}


def timed(fn: Callable[[int], object], n: int, warmup: int = 3) -> dict[str, float]:
    for i in range(warmup):
        fn(i)
    out = []
    for i in range(n):
        t = time.perf_counter()
        fn(i)
        out.append(time.perf_counter() - t)
    return stats(out)


def synthetic_frame() -> np.ndarray:
    """Endoscope-like: reddish tissue gradient with bright blobs."""
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    r = np.clip(150 + 60 * np.sin(xx / 90.0) * np.cos(yy / 70.0), 0, 255)
    frame = np.dstack([r, r * 0.45, r * 0.35]).astype(np.uint8)
    for cx, cy in ((300, 250), (700, 500), (900, 200)):
        cv2.circle(frame, (cx, cy), 40, (250, 230, 220), -1)
    return frame


def synthetic_ct(shape: tuple[int, int, int] = (300, 512, 512)) -> Volume:
    """A chest-like phantom in HU: body ellipse, two lungs, spine; 0.7 × 0.7 × 1.0 mm."""
    na, nc, ns = shape
    c, s = np.ogrid[0:nc, 0:ns]
    body = ((c - nc / 2) / (0.38 * nc)) ** 2 + ((s - ns / 2) / (0.46 * ns)) ** 2 < 1
    lung_r = ((c - nc / 2) / (0.26 * nc)) ** 2 + ((s - 0.32 * ns) / (0.13 * ns)) ** 2 < 1
    lung_l = ((c - nc / 2) / (0.26 * nc)) ** 2 + ((s - 0.68 * ns) / (0.13 * ns)) ** 2 < 1
    spine = ((c - 0.22 * nc) / (0.05 * nc)) ** 2 + ((s - ns / 2) / (0.05 * ns)) ** 2 < 1
    base = np.full((nc, ns), -1000, np.int16)
    base[body] = 40
    base[lung_r | lung_l] = -850
    base[spine] = 700
    data = np.empty(shape, np.int16)
    rng = np.random.default_rng(0)
    noise = rng.integers(-30, 30, size=(nc, ns), dtype=np.int16)
    for a in range(na):
        data[a] = base + np.roll(noise, a, axis=0)
    affine = np.array([[0, 0, 0.7, -180], [0, -0.7, 0, 180], [1.0, 0, 0, -300], [0, 0, 0, 1]])
    return Volume(data, affine, source="synthetic")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    n = args.frames

    frame = synthetic_frame()
    t0 = time.perf_counter()
    vol = synthetic_ct()
    build_s = time.perf_counter() - t0
    slicer = MPRSlicer(vol)
    mid = {p: k // 2 for p, k in vol.size.items()}

    ir = render_text_box(IR_LINES, round(0.42 * H), H / 1080)
    rects = Layout.for_frame(W, H, "small_views", True, True, (ir.shape[1], ir.shape[0]))
    vs = rects[STRIP_KEYS[0]].w
    views = slicer.render_small_views(mid, mid, vs)
    yy, xx = np.mgrid[0:420, 0:420]
    panel = np.zeros((420, 420, 4), np.uint8)
    panel[..., :3] = (30, 40, 60)
    panel[..., 3] = 150  # semi-transparent background: every pixel must be blended
    blob = (yy - 210) ** 2 + (xx - 210) ** 2 < 150 ** 2
    panel[blob] = (220, 120, 110, 255)
    ar = rects[AR_KEY]

    def layers(version: int = 0, panel_version: int = 0) -> list[Layer]:
        out = [Layer("ir", ir, rects[IR_KEY].x, rects[IR_KEY].y, 0)]
        for p, key in zip(PLANES, STRIP_KEYS, strict=True):
            out.append(Layer(key, views[p], rects[key].x, rects[key].y, version))
        out.append(Layer("ar", panel, ar.x, ar.y, panel_version))
        return out

    comp = Compositor()
    static = layers()
    res: dict[str, object] = {
        "machine": {"python": platform.python_version(), "cv2_threads": cv2.getNumThreads(),
                    "cpu": platform.processor() or platform.machine()},
        "frame": [W, H], "layers": {k: [r.w, r.h] for k, r in rects.items()} | {"ar": [420, 420]},
    }
    res["compose_static"] = timed(lambda i: comp.compose(frame, static), n)
    # The 3D panel changes every frame (rotation): its blend terms are recomputed each time.
    res["compose_3d_changing"] = timed(lambda i: comp.compose(frame, layers(0, i + 1)), n)

    mpr: dict[str, dict[str, float]] = {}
    other = {"axial": 150.0, "coronal": 256.0, "sagittal": 256.0}
    for size in (240, 576):
        for p in PLANES:
            # A new fractional index each call: the cached image cannot be reused.
            mpr[f"{p}_{size}"] = timed(
                lambda i, p=p, size=size: slicer.render_view(p, 100.0 + 0.37 * i, other, size),
                max(20, n // 6))
    res["mpr_render_view"] = mpr
    res["mpr_crosshair_only_240"] = timed(
        lambda i: slicer.render_view("axial", 150.0, {"coronal": 200.0 + 0.3 * i,
                                                      "sagittal": 256.0}, 240), max(20, n // 6))

    counter = {"v": 0}

    def animated(i: int) -> None:
        # Worst case: all three planes animate, so all three views are re-rendered.
        pos = {"axial": 100.0 + 0.21 * i, "coronal": 200.0 + 0.33 * i, "sagittal": 220 + 0.29 * i}
        new = slicer.render_small_views(pos, mid, vs)
        counter["v"] += 1
        ls = [Layer("ir", ir, rects[IR_KEY].x, rects[IR_KEY].y, 0)]
        for p, key in zip(PLANES, STRIP_KEYS, strict=True):
            ls.append(Layer(key, new[p], rects[key].x, rects[key].y, counter["v"]))
        ls.append(Layer("ar", panel, ar.x, ar.y, 0))
        comp.compose(frame, ls)

    res["animated_frame_3_views"] = timed(animated, max(30, n // 3))
    res["volume"] = {"shape": list(vol.shape), "build_s": round(build_s, 2)}
    res["goal_30fps_met"] = bool(res["compose_static"]["fps_median"] >= 30  # type: ignore[index]
                                 and res["animated_frame_3_views"]["fps_median"] >= 30)  # type: ignore[index]
    text = json.dumps(res, indent=2)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
