"""The house of DESIGN §2 holds: the import-linter contracts in pyproject.toml (layers, Qt only
in app/ui) are kept, and nothing under app/ reads the evaluation datasets at run time."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_are_kept() -> None:
    exe = Path(sys.executable).with_name("lint-imports")
    assert exe.exists(), "import-linter is part of requirements/dev.txt"
    run = subprocess.run([str(exe), "--no-cache"], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "2 kept, 0 broken" in run.stdout


def test_nothing_the_console_runs_reads_the_datasets() -> None:
    # Only the evaluation layer (app/eval: the harness, the audio builder, the phrasings file
    # writer) opens datasets/; the console reads its language from app/language/data.
    readers = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "app").rglob("*.py")
                     if "DATASETS_DIR" in p.read_text(encoding="utf-8")
                     or '"datasets"' in p.read_text(encoding="utf-8"))
    assert readers and all(r.startswith("app/eval/") for r in readers), readers
