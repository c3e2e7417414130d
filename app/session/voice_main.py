"""Headless voice runs: ``python -m app.session.voice_main`` (also what a ``visa-console voice``
command can call).

    python -m app.session.voice_main --list-devices
    python -m app.session.voice_main --mode synthesized --audio DIR_OR_FILE [--case PATH] [--json]
    python -m app.session.voice_main --mode text --commands FILE
    python -m app.session.voice_main --mode realtime [--device NAME_OR_INDEX] [--seconds N]

Every pipeline event is printed as it happens (one line, or JSON with ``--json``), then the
final console state. Exit status: 0, or 2 when the run could not start (no microphone, no
model) — said in plain words on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path
from typing import Any

from app.voice.events import EventType, PipelineEvent


def _orchestrator(case: str | None) -> Any:
    """The real console (fast strategy) on ``case``, or on the built-in demo case."""
    from app.session.console import build_console

    return build_console(case_path=Path(case) if case else None).orchestrator


def _line(ev: PipelineEvent) -> str:
    d = {k: v for k, v in ev.data.items() if k not in ("state", "segments")}
    return f"{ev.run_id or '-':>4} {ev.type:<15} {json.dumps(d, default=str)}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m app.session.voice_main", description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=["realtime", "synthesized", "text"], default="realtime")
    ap.add_argument("--audio", help="synthesized: an audio file or a folder of clips")
    ap.add_argument("--commands", help="text: a file with one command per line")
    ap.add_argument("--case", help="a case folder (default: the built-in demo case)")
    ap.add_argument("--device", help="realtime: input device name fragment or index")
    ap.add_argument("--seconds", type=float, default=0.0, help="realtime: stop after N s")
    ap.add_argument("--stt-model", default="tiny.en", help="tiny.en (default) or base")
    ap.add_argument("--tts", default="auto", help="auto | piper | espeak | none")
    ap.add_argument("--no-wake", action="store_true", help="every utterance is a command")
    ap.add_argument("--json", action="store_true", help="print events as JSON lines")
    ap.add_argument("--list-devices", action="store_true")
    args = ap.parse_args(argv)

    if args.list_devices:
        from app.voice.audio import list_devices

        devs = list_devices()
        if not devs:
            print("No audio devices were found.")
        for d in devs:
            io = ("in" if d.max_input_channels else "") + ("/out" if d.max_output_channels else "")
            star = " (default)" if d.is_default_input or d.is_default_output else ""
            print(f"{d.index:3d}  {io:7s} {d.name}{star}")
        return 0

    from app.voice.pipeline import VoicePipeline, make_pipeline

    if args.mode == "realtime":  # before loading any model: is there a microphone at all?
        from app.voice.audio import NoMicrophone, find_input_device

        try:
            find_input_device(args.device)
        except NoMicrophone as exc:
            print(f"{exc} ({exc.detail})", file=sys.stderr)
            return 2
    orch = _orchestrator(args.case)
    try:
        if args.mode == "text":
            pipeline = VoicePipeline(orch, mode="text")
        else:
            pipeline = make_pipeline(orch, args.mode, stt_model=args.stt_model,
                                     tts_engine=args.tts, require_wake=not args.no_wake)
    except Exception as exc:  # a model missing: say so
        print(f"Voice could not start: {exc}", file=sys.stderr)
        return 2
    pipeline.subscribe(lambda ev: print(json.dumps(ev.to_dict()) if args.json else _line(ev),
                                        flush=True))
    failed: list[str] = []
    pipeline.subscribe(lambda ev: failed.append(ev.data.get("message", ""))
                       if ev.type == EventType.ERROR and ev.data.get("code") == "no-microphone"
                       else None)
    if args.mode == "text":
        if not args.commands:
            ap.error("--mode text needs --commands FILE")
        pipeline.run(Path(args.commands))
    elif args.mode == "synthesized":
        if not args.audio:
            ap.error("--mode synthesized needs --audio FILE_OR_DIR")
        pipeline.run(Path(args.audio))
    else:
        from app.voice.audio import MicrophoneSource

        src = MicrophoneSource(args.device)
        if args.seconds > 0:
            threading.Timer(args.seconds, pipeline.stop).start()
        try:
            pipeline.run(src)
        except KeyboardInterrupt:
            pipeline.stop()
    pipeline.speaker.wait(10)
    if failed:
        print(failed[0], file=sys.stderr)
        return 2
    print(json.dumps(orch.state.snapshot(), sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
