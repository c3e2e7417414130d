"""Entry point for the GUI; kept outside app/ui so the CLI imports no Qt until needed."""

from __future__ import annotations

import argparse


def run_gui(args: argparse.Namespace) -> int:
    from app.ui.main import run  # imports Qt

    return run(args)
