"""Entry point for the GUI; kept outside app/ui so the CLI imports no Qt until needed."""

from __future__ import annotations

import argparse
import importlib.util
import sys


def gui_available() -> bool:
    return importlib.util.find_spec("app.ui.main") is not None


def run_gui(args: argparse.Namespace) -> int:
    if not gui_available():
        print("The console window is not part of this build yet. Available now: "
              "`visa-console case --info` (inspect a case), `visa-console demo`, "
              "`visa-console models --check`.", file=sys.stderr)
        return 3
    from app.ui.main import run  # imports Qt

    return run(args)
