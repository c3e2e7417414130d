"""Benchmark of the console (issue 3): composed frame rate, 3D frame rate, UI-thread stalls,
first mesh build. Prints JSON, then a Markdown table; ``--out DIR`` also writes both files.

    QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/bench_console.py [--out DIR] [--quick]

On the built-in demo case (512×512×128 CT, 960×540 video) at 1280×720:

1. **Composition, still** — IR box, three CT views and the 3D model over successive video
   frames, composed back to back by ``SceneRenderer.compose`` (capacity; the console itself
   composes at most 30 fps). Goal ≥ 30 fps.
2. **Composition while the 3D model turns** — the same during a 360° turn (6 s), the 3D worker
   rendering on its own thread at the same time. Goal ≥ 30 fps. Also counts how many distinct
   3D images reached the composed frames per second (goal ≥ 20).
3. **The real window** (offscreen Qt, every thread running: video decoding, render loop,
   3D worker): frames shown per second, and the longest gap of a 5 ms ``QTimer`` heartbeat on
   the UI thread — while still, then while a 4 s slice animation and a 6 s 3D turn run.
   Goal: longest stall < 50 ms.
4. **First mesh build** of a synthetic 512×512×256 label map (``scripts/bench_3d.py``'s lungs:
   five lobes, a nodule, an airway) into an empty cache, then cached. Goal ≤ 3 s.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SIZE = (1280, 720)


def _stats(ms: list[float]) -> dict[str, float]:
    a = np.asarray(ms, dtype=float)
    if a.size == 0:
        return {"frames": 0}
    return {"frames": int(a.size), "median_ms": round(float(np.median(a)), 2),
            "p95_ms": round(float(np.percentile(a, 95)), 2),
            "max_ms": round(float(a.max()), 2),
            "fps_median": round(1000.0 / float(np.median(a)), 1),
            "fps_mean": round(1000.0 * a.size / float(a.sum()), 1)}


def _wait(pred: Any, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.01)
    return False


def _video_frames(case: Any, n: int) -> list[np.ndarray]:
    from app.data.video import VideoSource

    src = VideoSource(case.video_path, output_size=SIZE)
    frames = []
    for _ in range(n):
        f = src.read()
        if f is None:
            break
        frames.append(f)
    src.close()
    if not frames:
        from app.render.scene import dark_frame

        frames = [dark_frame(SIZE)]
    return frames


def bench_compose(case: Any, model: Any, seconds: float) -> dict[str, Any]:
    """1 and 2: SceneRenderer.compose back to back, still and during a 3D turn."""
    from app.core.registry import Actor, CommandRegistry
    from app.core.state import ConsoleState
    from app.render.anatomy3d import AnatomyWorker
    from app.render.clock import MonotonicClock
    from app.render.scene import SceneRenderer

    clock = MonotonicClock()
    worker = AnatomyWorker((300, 300), clock=clock).start()
    state = ConsoleState()
    reg = CommandRegistry(state)
    scene = SceneRenderer(state, None, clock, SIZE, worker, registry=reg)
    scene.set_case(case, model)
    state.set_case(case.context())
    nurse = Actor(role="nurse", source="touch")
    for action in ("IR.RESET", "IV.SHOW_MOVE", "AR.SHOW"):
        assert reg.dispatch(action, {}, nurse).ok
    frames = _video_frames(case, 60)
    out: dict[str, Any] = {"video_frames": len(frames)}
    scene.layers()
    if not _wait(lambda: (scene.layers(), scene.ready())[1], 60.0):
        out["error"] = worker.error or "the 3D model never became ready"
    scene.compose(frames[0])
    out["ar_panel_px"] = list(scene.rects().get("ar", (0, 0, 0, 0))[2:])

    def run(duration: float) -> tuple[list[float], set[int]]:
        ms: list[float] = []
        seqs: set[int] = set()
        end = time.perf_counter() + duration
        i = 0
        while time.perf_counter() < end:
            t0 = time.perf_counter()
            scene.compose(frames[i % len(frames)])
            ms.append((time.perf_counter() - t0) * 1000.0)
            seq = scene.status().ar_seq
            if seq is not None:
                seqs.add(seq)
            i += 1
        return ms, seqs

    still, _ = run(min(seconds, 3.0))
    out["still"] = {**_stats(still), "goal_fps": 30, "ok": bool(1000 / np.median(still) >= 30)}
    renders0 = worker.render_count
    assert reg.dispatch("AR.ROTATE", {"direction": "horizontal"}, nurse).ok
    t_turn = time.perf_counter()
    turning, seqs = run(6.0)
    turn_s = time.perf_counter() - t_turn
    out["rotating"] = {**_stats(turning), "goal_fps": 30,
                       "ok": bool(1000 / np.median(turning) >= 30)}
    out["ar_during_turn"] = {
        "distinct_3d_images_composed": len(seqs),
        "fps": round(len(seqs) / turn_s, 1),
        "worker_renders": worker.render_count - renders0,
        "goal_fps": 20, "ok": len(seqs) / turn_s >= 20,
        "expected_render_ms": round(worker.expected_render_s * 1000.0, 1),
    }
    worker.stop()
    scene.close()
    return out


def bench_window(loaded: Any, still_s: float) -> dict[str, Any]:
    """3: the real window offscreen — frames shown and UI-thread heartbeat gaps."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from app.ui.main import MainWindow, apply_dark_theme

    app = QApplication.instance() or QApplication([sys.argv[0]])
    apply_dark_theme(app)
    window = MainWindow(text_available=False)
    window.resize(1800, 1080)
    window.view.setFixedSize(*SIZE)  # compose at exactly 1280×720
    window.show()
    window.set_loaded(loaded)
    for action in ("IR.RESET", "IV.SHOW_MOVE", "AR.SHOW"):
        window.send(action)

    def pump(seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            app.processEvents()
            time.sleep(0.001)

    end = time.monotonic() + 60
    while time.monotonic() < end and not (window.scene.ready()
                                          and window.render_loop.first_video_frame.is_set()):
        pump(0.05)
    gaps: list[float] = []
    last = [time.perf_counter()]

    def beat() -> None:
        now = time.perf_counter()
        gaps.append((now - last[0]) * 1000.0)
        last[0] = now

    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(beat)

    def phase(seconds: float) -> dict[str, Any]:
        gaps.clear()
        shown0 = window.view.frames_shown
        composed0 = window.render_loop.stats.composed
        ar0 = window.anatomy.render_count if window.anatomy is not None else 0
        t0 = time.perf_counter()
        last[0] = t0
        timer.start()
        pump(seconds)
        timer.stop()
        dt = time.perf_counter() - t0
        g = np.asarray(gaps[1:] or [0.0])
        return {
            "seconds": round(dt, 2),
            "frames_shown_fps": round((window.view.frames_shown - shown0) / dt, 1),
            "frames_composed_fps": round((window.render_loop.stats.composed - composed0) / dt, 1),
            "3d_renders_per_s": round(((window.anatomy.render_count if window.anatomy
                                        is not None else 0) - ar0) / dt, 1),
            "heartbeat_median_ms": round(float(np.median(g)), 2),
            "heartbeat_p99_ms": round(float(np.percentile(g, 99)), 2),
            "longest_stall_ms": round(float(g.max()), 1),
        }

    out: dict[str, Any] = {"composed_size": list(window.render_loop.output_size()),
                           "still": phase(still_s)}
    window.send("IV.SHOW_MOVE", {"axial": "+40"})  # a 4 s slice animation
    window.send("AR.ROTATE", {"direction": "horizontal"})  # a 6 s turn
    out["animating"] = phase(6.5)
    out["animating"]["goal_stall_ms"] = 50
    out["animating"]["ok"] = out["animating"]["longest_stall_ms"] < 50
    out["render_loop_max_compose_ms"] = round(window.render_loop.stats.max_compose_ms, 1)
    window.shutdown()
    window.close()
    return out


def bench_mesh(shape: tuple[int, int, int]) -> dict[str, Any]:
    """4: the 3D engineer's synthetic lungs, built into an empty mesh cache, then cached."""
    spec = importlib.util.spec_from_file_location("bench_3d", ROOT / "scripts" / "bench_3d.py")
    assert spec is not None and spec.loader is not None
    bench3d = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_3d", bench3d)
    spec.loader.exec_module(bench3d)
    from app.render.meshes import MeshCache

    spacing = (1.25 * 256 / shape[0], 0.7 * 512 / shape[1], 0.7 * 512 / shape[2])
    labelmap, affine = bench3d.synth_lungs(shape, spacing)
    labels = bench3d.split_labels(labelmap, affine)
    del labelmap
    with tempfile.TemporaryDirectory(prefix="visa-bench-console-") as tmp:
        t0 = time.perf_counter()
        polys = MeshCache(cache_dir=Path(tmp)).build(labels)
        cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        MeshCache(cache_dir=Path(tmp)).build(labels)
        warm = time.perf_counter() - t0
    return {"label_map_shape": list(shape), "structures": len(polys),
            "cold_s": round(cold, 3), "cached_s": round(warm, 3), "goal_s": 3.0,
            "ok": cold <= 3.0}


def markdown(r: dict[str, Any]) -> str:
    c, w, m = r.get("compose", {}), r.get("window", {}), r.get("mesh", {})
    rows = [("Measure", "Result", "Goal", "Met")]

    def add(name: str, value: str, goal: str, ok: Any) -> None:
        rows.append((name, value, goal, "yes" if ok else ("—" if ok is None else "**no**")))

    if "still" in c:
        add("Composed frame rate, 3 overlays, still (1280×720)",
            f"{c['still']['fps_median']} fps ({c['still']['median_ms']} ms/frame)",
            "≥ 30 fps", c["still"]["ok"])
    if "rotating" in c:
        add("Composed frame rate while the 3D model turns",
            f"{c['rotating']['fps_median']} fps ({c['rotating']['median_ms']} ms/frame)",
            "≥ 30 fps", c["rotating"]["ok"])
        a = c["ar_during_turn"]
        add("3D overlay frame rate during a turn", f"{a['fps']} fps "
            f"(panel {c.get('ar_panel_px')} px, ~{a['expected_render_ms']} ms/render)",
            "≥ 20 fps", a["ok"])
    if "animating" in w:
        s, a = w["still"], w["animating"]
        add("Window: frames shown, still", f"{s['frames_shown_fps']} fps", "video rate", None)
        add("Window: frames shown, slice animation + 3D turn",
            f"{a['frames_shown_fps']} fps", "≈ 30 fps", None)
        add("Longest UI-thread stall, still", f"{s['longest_stall_ms']} ms", "< 50 ms",
            s["longest_stall_ms"] < 50)
        add("Longest UI-thread stall, slice animation + 3D turn",
            f"{a['longest_stall_ms']} ms (p99 {a['heartbeat_p99_ms']} ms)", "< 50 ms", a["ok"])
    if "cold_s" in m:
        add(f"First mesh build, {'×'.join(map(str, reversed(m['label_map_shape'])))} label map",
            f"{m['cold_s']} s (cached {m['cached_s']} s)", "≤ 3 s", m["ok"])
    lines = ["| " + " | ".join(row) + " |" for row in rows]
    lines.insert(1, "|---|---|---|---|")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="also write bench_console.json/.md here")
    ap.add_argument("--quick", action="store_true", help="shorter runs, a smaller label map")
    ap.add_argument("--skip-mesh", action="store_true", help="skip the mesh build benchmark")
    args = ap.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

    from app.data.demo import ensure_demo_case
    from app.session.loader import load_case_and_model

    result: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "platform": platform.platform()},
        "frame_size": list(SIZE),
    }
    t0 = time.perf_counter()
    loaded = load_case_and_model(ensure_demo_case())
    if loaded.case is None:
        print(json.dumps({"error": loaded.error}))
        return 1
    result["case_load_s"] = round(time.perf_counter() - t0, 2)
    result["ct_shape"] = list(loaded.case.ct.shape)
    from app.render.anatomy3d import probe_offscreen

    win, why = probe_offscreen()
    if win is None:
        result["compose"] = {"error": f"no offscreen OpenGL: {why}"}
    else:
        result["compose"] = bench_compose(loaded.case, loaded.model, 2.0 if args.quick else 3.0)
    result["window"] = bench_window(loaded, 2.0 if args.quick else 3.0)
    if not args.skip_mesh:
        result["mesh"] = bench_mesh((128, 256, 256) if args.quick else (256, 512, 512))
    md = markdown(result)
    print(json.dumps(result, indent=2, default=str))
    print()
    print(md)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "bench_console.json").write_text(json.dumps(result, indent=2, default=str))
        (args.out / "bench_console.md").write_text(md + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
