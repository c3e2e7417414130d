"""The `visa-console` command line (DESIGN §5.2). Heavy modules are imported lazily."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="visa-console",
        description="Voice-controlled auxiliary console for robotic surgery.",
    )
    p.add_argument("--case", type=Path, help="case folder to load (default: the built-in demo case)")
    p.add_argument("--mode", choices=["realtime", "synthesized", "text"], default="realtime")
    p.add_argument("--audio", type=Path, help="audio file or folder for --mode synthesized")
    p.add_argument("--commands", type=Path, help="text file of commands for --mode text")
    p.add_argument("--fullscreen", action="store_true", help="full screen on the current monitor")
    p.add_argument("--screenshot", type=Path, help="save a screenshot of the console to this PNG and exit")
    sub = p.add_subparsers(dest="command")

    c = sub.add_parser("case", help="inspect a case folder")
    c.add_argument("path", type=Path, nargs="?", help="case folder (default: the demo case)")
    c.add_argument("--info", action="store_true", help="print what was found and every problem")
    c.add_argument("--json", action="store_true", help="print the report as JSON")

    m = sub.add_parser("models", help="assemble and verify the packaged model files")
    m.add_argument("--check", action="store_true", help="assemble parts, verify checksums, report")
    m.add_argument("--manifest", type=Path, help="manifest file (default: assets/models/manifest.toml)")
    m.add_argument("--only", nargs="*", help="model ids to check (default: all)")

    d = sub.add_parser("demo", help="generate (or locate) the built-in demo case")
    d.add_argument("--force", action="store_true", help="regenerate even if present")
    d.add_argument("--out", type=Path, help="write the demo case here instead of the data directory")

    do = sub.add_parser("do", help="interpret and apply one command headless")
    do.add_argument("text")
    do.add_argument("--case", dest="do_case", type=Path)
    do.add_argument("--state", type=Path, help="load the state from and save it to this JSON file")
    do.add_argument("--json", action="store_true", help="print the trace record")
    do.add_argument("--strategy", dest="do_strategy", choices=["fast", "visa"], default="fast")

    e = sub.add_parser("eval", help="run an evaluation dataset")
    e.add_argument("dataset", type=Path)
    e.add_argument("--case", dest="eval_case", type=Path)
    e.add_argument("--mode", dest="eval_mode", choices=["text", "audio"], default="text")
    e.add_argument("--strategy", choices=["fast", "visa"], default="fast")
    e.add_argument("--out", type=Path, default=Path("eval-out"))

    b = sub.add_parser("bench", help="performance benchmark")
    b.add_argument("--out", type=Path, default=Path("bench-out"))
    b.add_argument("--quick", action="store_true", help="tiny sizes, one run each (smoke test)")
    b.add_argument("--skip", default="", help="comma list of sections to skip: interpreter, "
                   "llm, strategies (visa), console, stt, data, memory")
    b.add_argument("--dataset", type=Path, default=None,
                   help="commands for the interpreter and strategies sections "
                        "(default datasets/dev.jsonl)")
    b.add_argument("--visa-per-session", type=int, default=None,
                   help="first N commands of each session for fast vs visa (default 2)")
    st = sub.add_parser("settings", help="show the effective settings (VISA_* variables)")
    st.add_argument("--json", action="store_true", help="machine-readable output")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _build_parser().parse_args(argv)
    from app.logging_setup import setup_logging

    setup_logging()
    if args.command == "case":
        from app.data.case_report import run_case_command

        return run_case_command(args.path, as_json=args.json)
    if args.command == "models":
        from app.runtime.models import run_models_command

        return run_models_command(check=args.check, manifest=args.manifest, only=args.only)
    if args.command == "demo":
        from app.data.demo import run_demo_command

        return run_demo_command(force=args.force, out=args.out)
    if args.command == "do":
        from app.session.do import run_do_command

        return run_do_command(args.text, args.do_case, args.state, args.json,
                              strategy=args.do_strategy)
    if args.command == "eval":
        from app.eval.harness import run_eval_command

        return run_eval_command(args)
    if args.command == "settings":
        from app.runtime.settings import run_settings_command

        return run_settings_command(as_json=args.json)
    if args.command == "bench":
        from app.eval.bench import run_bench_command

        return run_bench_command(args)
    from app.ui_entry import run_gui

    return run_gui(args)


if __name__ == "__main__":
    sys.exit(main())
