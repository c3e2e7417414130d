"""Synthesise the evaluation dataset as multi-voice audio, clean and in operating-room noise.

    .venv/bin/python scripts/make_audio_dataset.py --split test --voices piper,espeak,flite \\
        --snr clean,10 [--wake] [--limit N] [--out DIR] [--jobs 2]

Writes 16 kHz mono WAVs and one JSONL per split, variant and condition into the audio cache
(``$VISA_AUDIO_CACHE``, else the user cache dir ``visa-console/audio-dataset``), e.g.
``test-clean.jsonl``, ``test-snr10.jsonl``, ``test-wake-clean.jsonl``; each row's ``audio``
lists the voices in retry order. Reruns only make what is missing. Evaluate with
``visa-console eval <cache>/test-clean.jsonl --mode audio``. See datasets/README.md, "Audio".
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.eval import audio_synth as A  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", default="test",
                    help="dataset split(s) under datasets/: dev, test or dev,test (default test)")
    ap.add_argument("--dataset", action="append", type=Path, default=[],
                    help="another text dataset JSONL (repeatable); replaces --split")
    ap.add_argument("--voices", default="piper,espeak,flite",
                    help="families (piper, espeak, flite) and/or voice names, comma-separated; "
                         "families are interleaved so a retry changes engine")
    ap.add_argument("--snr", default="clean,10",
                    help="conditions: clean and/or SNRs in dB, e.g. clean,20,10,5")
    ap.add_argument("--wake", action="store_true",
                    help="also make the wake-word variant set ('da Vinci', pause, command)")
    ap.add_argument("--wake-only", action="store_true", help="make only the wake-word set")
    ap.add_argument("--limit", type=int, default=None,
                    help="only the first N rows of each dataset (JSONL names get -nN)")
    ap.add_argument("--out", type=Path, default=None,
                    help=f"output folder (default {A.default_cache_dir()})")
    ap.add_argument("--jobs", type=int, default=A.MAX_JOBS,
                    help=f"worker processes, at most {A.MAX_JOBS} (default {A.MAX_JOBS})")
    ap.add_argument("--seed", type=int, default=A.DEFAULT_SEED, help="base seed")
    ap.add_argument("--no-progress", action="store_true", help="no progress bars")
    ap.add_argument("--list-voices", action="store_true", help="list the voices and exit")
    args = ap.parse_args(argv)

    if args.list_voices:
        for v in A.VOICES:
            ok, why = A.engine_available(v.engine)
            mark = "" if ok else f"  (unavailable: {why})"
            dflt = "default" if v.default else "extra  "
            print(f"{v.name:16} {v.engine:7} {dflt} {v.params}{mark}")
        return 0
    try:
        if args.dataset:
            sources = [p.expanduser().resolve() for p in args.dataset]
            missing = [str(p) for p in sources if not p.is_file()]
            if missing:
                raise FileNotFoundError(f"no such dataset file: {', '.join(missing)}")
        else:
            sources = [A.split_path(s.strip()) for s in args.split.split(",") if s.strip()]
        conditions = A.parse_conditions(args.snr)
        voices, warnings = A.resolve_voices(args.voices)
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    if not voices:
        print("error: none of the requested voices can run here", file=sys.stderr)
        return 2
    if args.limit is not None and args.limit < 1:
        print("error: --limit must be at least 1", file=sys.stderr)
        return 2
    if args.jobs > A.MAX_JOBS:
        print(f"note: using {A.MAX_JOBS} worker processes (the two-core floor)", file=sys.stderr)

    print(f"voices (retry order): {', '.join(v.name for v in voices)}")
    print(f"conditions: {', '.join(c for c, _ in conditions)}"
          f"{' (plain + wake)' if args.wake else ' (wake only)' if args.wake_only else ''}")
    try:
        rep = A.build_audio_dataset(sources, args.out, voices, conditions, wake=args.wake,
                                    wake_only=args.wake_only, limit=args.limit, jobs=args.jobs,
                                    progress=not args.no_progress, seed=args.seed)
    except A.SynthesisError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    stages = ", ".join(f"{k}: {rep.made[k]} made / {rep.reused[k]} reused in {rep.seconds[k]} s"
                       for k in rep.made)
    print(f"\n{stages}")
    print(f"total {rep.seconds['total']} s; babble voices: {', '.join(rep.babble_voices) or '-'}")
    print(f"\naudio datasets in {rep.out_dir}:")
    for p in rep.outputs:
        print(f"  {p}   ({rep.audio_seconds[p.name] / 60:.1f} min of audio per voice)")
    print(f"manifest: {rep.manifest}")
    first = rep.outputs[0] if rep.outputs else None
    if first is not None:
        print(f"\nevaluate: visa-console eval {first} --mode audio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
