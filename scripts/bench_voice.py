"""Voice benchmark: STT real-time factor, VAD cost per frame, end-of-speech → state change.

    .venv/bin/python scripts/bench_voice.py [--models tiny.en,base] [--no-realtime] [--out F]

Speech is synthesised with espeak-ng (several voices and speeds, "da Vinci, <command>"), so
the numbers are reproducible on any machine with espeak-ng. Prints JSON (and writes it to
``--out``). Latency is measured through the real pipeline (Silero VAD, Whisper tiny.en, the
wake word, the real Orchestrator with the fast strategy):

* ``fast``: clips fed as fast as possible; latency = end-of-speech wait (audio time) +
  measured processing (STT, interpreter).
* ``realtime``: clips paced at the speed of sound, as from a microphone; latency = wall clock
  from the last voiced audio to the state change (includes any queueing behind Whisper).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.voice.audio import SAMPLE_RATE, read_audio, write_wav  # noqa: E402

COMMANDS = ["show the CT", "zoom in", "axial up", "show age and sex", "rotate left",
            "show the lungs", "coronal plus 100", "zoom out"]
VOICES = [("en-us", 150), ("en-us+m3", 170), ("en", 140), ("en-us+f3", 160)]


def synth(text: str, voice: str, speed: int, out: Path) -> Path:
    raw = out.with_suffix(".raw.wav")
    subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", str(raw), text],
                   check=True, capture_output=True)
    x = read_audio(raw)
    raw.unlink()
    pad = np.zeros(int(0.3 * SAMPLE_RATE), np.float32)
    return write_wav(out, np.concatenate([pad, x, pad]))


def make_clips(folder: Path) -> list[tuple[Path, str]]:
    clips = []
    for i, cmd in enumerate(COMMANDS):
        voice, speed = VOICES[i % len(VOICES)]
        clips.append((synth(f"da Vinci, {cmd}", voice, speed, folder / f"{i:02d}.wav"), cmd))
    return clips


def bench_stt(models: list[str], clips: list[tuple[Path, str]]) -> dict[str, Any]:
    from app.voice.stt import SttUnavailable, WhisperSTT

    out: dict[str, Any] = {}
    for name in models:
        try:
            t0 = time.perf_counter()
            stt = WhisperSTT(model=name).load()
            load_s = time.perf_counter() - t0
        except SttUnavailable as exc:
            out[name] = {"error": str(exc)}
            continue
        stt.transcribe(read_audio(clips[0][0]))  # warm-up (first call allocates)
        rows = []
        for path, cmd in clips:
            x = read_audio(path)
            tr = stt.transcribe(x)
            rows.append({"audio_s": round(len(x) / SAMPLE_RATE, 2), "ms": tr.ms,
                         "rtf": round(tr.ms / 1000 / (len(x) / SAMPLE_RATE), 3),
                         "said": f"da Vinci, {cmd}", "heard": tr.text})
        out[name] = {"load_s": round(load_s, 2),
                     "median_ms": round(statistics.median(r["ms"] for r in rows), 1),
                     "median_rtf": round(statistics.median(r["rtf"] for r in rows), 3),
                     "clips": rows}
    return out


def bench_vad(clips: list[tuple[Path, str]]) -> dict[str, Any]:
    from app.voice.vad import VadSegmenter, make_vad_backend

    backend = make_vad_backend()
    x = np.concatenate([read_audio(p) for p, _ in clips])
    seg = VadSegmenter(backend)
    n = 480
    frames = [x[i:i + n] for i in range(0, len(x) - n + 1, n)]
    t0 = time.perf_counter()
    for f in frames:
        seg.feed(f)
    dt = time.perf_counter() - t0
    return {"backend": type(backend).__name__, "frames": len(frames),
            "us_per_30ms_frame": round(dt / len(frames) * 1e6, 1),
            "cpu_share_of_realtime": round(dt / (len(frames) * 0.03), 4)}


def _orchestrator() -> Any:
    from app.agents.orchestrator import Orchestrator
    from app.core.registry import CommandRegistry
    from app.core.state import CaseContext, ConsoleState

    state = ConsoleState()
    state.set_case(CaseContext(iv_size=(("axial", 128), ("coronal", 512), ("sagittal", 512)),
                               tumor_lobes=("right_upper_lobe",)))
    orch = Orchestrator(CommandRegistry(state), strategy="fast")
    orch.handle_text("show the CT")  # build the interpreter before timing
    orch.reset()
    return orch


def bench_latency(clips: list[tuple[Path, str]], realtime: bool) -> dict[str, Any]:
    from app.voice.pipeline import PipelineConfig, VoicePipeline
    from app.voice.stt import WhisperSTT

    p = VoicePipeline(_orchestrator(), stt=WhisperSTT(model="tiny.en").load(),
                      mode="synthesized",
                      config=PipelineConfig(realtime_playback=realtime, clip_gap_s=1.0))
    t0 = time.perf_counter()
    runs = p.run_clips([c for c, _ in clips])
    wall = time.perf_counter() - t0
    lat = [r.latency for r in runs if r.latency]
    total = [v["total_ms"] for v in lat]
    return {
        "clock": lat[0]["clock"] if lat else None,
        "commands": len(clips), "applied": sum(r.outcome == "done" for r in runs),
        "outcomes": [r.outcome for r in runs],
        "heard": [r.command for r in runs],
        "eos_silence_s": p.vad.config.silence_s,
        "median_total_ms": round(statistics.median(total), 1) if total else None,
        "max_total_ms": round(max(total), 1) if total else None,
        "median_eos_wait_ms": round(statistics.median(v["eos_wait_ms"] for v in lat), 1)
        if lat else None,
        "median_stt_ms": round(statistics.median(v["stt_ms"] for v in lat), 1) if lat else None,
        "median_intent_ms": round(statistics.median(v["intent_ms"] for v in lat), 1)
        if lat else None,
        "wall_s": round(wall, 1),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="tiny.en,base")
    ap.add_argument("--no-realtime", action="store_true", help="skip the paced (slow) run")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as d:
        clips = make_clips(Path(d))
        result: dict[str, Any] = {
            "date": time.strftime("%Y-%m-%d %H:%M"),
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                        "processor": platform.processor() or platform.machine()},
            "stt": bench_stt([m for m in args.models.split(",") if m], clips),
            "vad": bench_vad(clips),
            "latency_fast": bench_latency(clips, realtime=False),
        }
        if not args.no_realtime:
            result["latency_realtime"] = bench_latency(clips, realtime=True)
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
