"""False wake-word triggers per hour on ≥ 1 h of non-wake OR speech in noise, and detection.

    .venv/bin/python scripts/measure_false_wakes.py [--minutes 68] [--snr clean,20,10,5]
        [--out DIR] [--tag NAME] [--detect JSONL ...] [--detect-limit N] [--build-only]

1. Builds (or reuses) the corpus: every dataset sentence plus OR chatter, spoken by the 8
   dataset voices in long streams with natural pauses, clean and in OR noise (see
   ``app/eval/false_wake.py``); cached under ``<user cache>/visa-console/false-wake``.
2. Streams each one through the realtime-mode pipeline (Silero VAD → Whisper tiny.en → wake
   word, default sensitivity and cooldown) and counts wake-word triggers: all are false.
   Progress per stream; results per stream under ``<out>/results/<tag>/`` (resumable: rerun
   the same command to continue; ``--force`` measures again). Whisper's transcripts are cached
   per segment, so after a change to the wake logic a rerun with a new ``--tag`` takes minutes.
3. ``--detect`` also scores wake-word detection on audio JSONL sets (e.g. the dataset's
   ``dev-wake-clean.jsonl``) through the same path.

Prints a JSON summary and writes it to ``<out>/summary-<tag>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.eval import audio_synth as A  # noqa: E402
from app.eval import false_wake as F  # noqa: E402


def default_out() -> Path:
    env = os.environ.get("VISA_FALSE_WAKE_CACHE")
    if env:
        return Path(env).expanduser()
    return A.default_cache_dir().parent / "false-wake"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=F.DEFAULT_MINUTES)
    ap.add_argument("--snr", default=F.DEFAULT_CONDITIONS)
    ap.add_argument("--voices", default="piper,espeak,flite")
    ap.add_argument("--seed", type=int, default=F.DEFAULT_SEED)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--tag", default="default", help="results folder name (one per wake setup)")
    ap.add_argument("--jobs", type=int, default=2, help="corpus rendering workers (max 2)")
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--no-streams", action="store_true", help="skip the false-wake streams")
    ap.add_argument("--force", action="store_true", help="measure finished streams again")
    ap.add_argument("--detect", type=Path, action="append", default=[],
                    help="an audio JSONL wake-word set to score detection on (repeatable)")
    ap.add_argument("--detect-limit", type=int, default=None, help="first N rows of each set")
    ap.add_argument("--model", default="tiny.en")
    ap.add_argument("--no-speculative", action="store_true",
                    help="no transcription during pauses (same decisions, fewer Whisper calls)")
    args = ap.parse_args(argv)
    with_nice = getattr(os, "nice", None)
    if with_nice is not None:
        os.nice(5)

    out = (args.out or default_out()).expanduser().resolve()
    out.mkdir(parents=True, exist_ok=True)
    voices, warnings = A.resolve_voices(args.voices)
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    specs = F.plan_streams(out, args.minutes, voices, args.snr, seed=args.seed)
    sentences = F.corpus_sentences()
    print(f"{len(sentences)} non-wake sentences; {len(specs)} streams of "
          f"{specs[0].seconds / 60:.2f} min ({len(voices)} voices × {args.snr})", flush=True)
    t0 = time.monotonic()
    paths = F.build_corpus(out, specs, jobs=args.jobs, seed=args.seed,
                           log=lambda s: print(s, flush=True))
    if args.build_only:
        return 0

    from app.voice.stt import WhisperSTT  # noqa: PLC0415

    stt = F.CachedSTT(WhisperSTT(model=args.model).load(), out / f"stt-cache-{args.model}.jsonl")
    summary: dict = {"date": time.strftime("%Y-%m-%d %H:%M"), "model": args.model,
                     "voices": [v.name for v in voices], "conditions": args.snr}
    if not args.no_streams:
        summary["false_wake"] = F.measure_streams(paths, out / "results", stt, tag=args.tag,
                                                  log=lambda s: print(s, flush=True),
                                                  force=args.force,
                                                  speculative=not args.no_speculative)
    det = []
    for j in args.detect:
        d = F.measure_detection(j.expanduser().resolve(), stt, limit=args.detect_limit,
                                log=lambda s: print(s, flush=True),
                                speculative=not args.no_speculative)
        clips = d.pop("records")
        (out / f"detection-{args.tag}-{j.stem}.json").write_text(
            json.dumps(clips, indent=0) + "\n", encoding="utf-8")
        det.append(d)
    if det:
        summary["detection"] = det
    summary["stt"] = {"whisper_calls": stt.misses, "cached": stt.hits,
                      "whisper_s": round(stt.whisper_s, 1),
                      "settings": stt.settings,  # hash of SttConfig
                      "stt_py": stt.source_hash,  # hash of app/voice/stt.py
                      "config": repr(getattr(stt.stt, "config", None))}
    summary["wall_s"] = round(time.monotonic() - t0, 1)
    text = json.dumps(summary, indent=1)
    (out / f"summary-{args.tag}.json").write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
