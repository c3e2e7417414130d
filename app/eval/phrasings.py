"""The console's own phrasings as language data: the sentences of the dev split and the
phrasing sets (never the test split or the blind sets, which measure the console), written to
``app/language/data/phrasings.txt`` for the optional phrasing-model hearing
(``app.voice.domain_asr``), so nothing under ``app/`` reads ``datasets/`` at run time.

    .venv/bin/python -m app.eval.phrasings          # rewrite the file
    .venv/bin/python -m app.eval.phrasings --check  # exit 1 when it is out of date
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from app.language import DATA_DIR

DATASETS_DIR = Path(__file__).resolve().parents[2] / "datasets"
OUT = DATA_DIR / "phrasings.txt"
HEADER = ("# The dev split's and the phrasing sets' sentences, one per line (app.eval.phrasings "
          "writes this file; do not edit by hand).\n")


def dataset_texts(directory: Path = DATASETS_DIR) -> list[str]:
    """The sentences to learn from: the dev split and the phrasing sets, in file order."""
    files = [directory / "dev.jsonl", *sorted(directory.glob("paraphrase_dev*.jsonl"))]
    out: list[str] = []
    for f in files:
        if not f.exists():
            continue
        for line in f.read_text(encoding="utf-8").splitlines():
            if line.strip():
                text = str(json.loads(line).get("text") or "").replace("\n", " ").strip()
                if text:
                    out.append(text)
    return out


def render(texts: list[str]) -> str:
    return HEADER + "".join(t + "\n" for t in texts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="only check the file is up to date")
    args = ap.parse_args(argv)
    want = render(dataset_texts())
    have = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
    if args.check:
        if want != have:
            print(f"{OUT} is out of date: run python -m app.eval.phrasings", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(want, encoding="utf-8")
    print(f"{OUT}: {len(want.splitlines()) - 1} sentences")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
