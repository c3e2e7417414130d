"""The third hearing: pocketsphinx with a language model of the console's phrasings."""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import pytest

from app.eval.phrasings import dataset_texts
from app.language import phrasings
from app.voice.domain_asr import (
    DomainRecognizer,
    build_lm,
    number_words,
    spoken_words,
    written,
)
from app.voice.hearing_choice import choose_domain_hearing


def test_dataset_sentences_are_said_as_a_surgeon_says_them() -> None:
    assert spoken_words("cor +40") == ["cor", "plus", "forty"]
    assert spoken_words("sag -100") == ["sag", "minus", "one", "hundred"]
    assert spoken_words("zoom in on the RUL") == ["zoom", "in", "on", "the", "r", "u", "l"]
    assert spoken_words("what's her FEV1?") == ["whats", "her", "f", "e", "v", "one"]
    assert number_words(205) == "two hundred five"
    assert number_words(40) == "forty"


def test_its_hearing_is_written_as_whisper_writes() -> None:
    assert written("sagittal two hundred") == "Sagittal 200."
    assert written("coronal plus forty") == "Coronal plus 40."
    assert written("zoom in on the r u l") == "Zoom in on the RUL."
    assert written("show the c t and the three d model") == "Show the CT and the 3D model."
    assert written("") == ""


def test_the_test_split_never_feeds_the_language_model(tmp_path: Path) -> None:
    (tmp_path / "dev.jsonl").write_text('{"text": "zoom in"}\n{"text": ""}\n')
    (tmp_path / "paraphrase_dev3.jsonl").write_text('{"text": "closer please"}\n')
    (tmp_path / "test.jsonl").write_text('{"text": "secret test sentence"}\n')
    (tmp_path / "blind_a_reference.jsonl").write_text('{"text": "blind sentence"}\n')
    assert dataset_texts(tmp_path) == ["zoom in", "closer please"]
    real = dataset_texts()
    assert len(real) > 1000  # the dev split and the phrasing sets


def test_the_phrasings_file_is_up_to_date_with_the_datasets() -> None:
    from app.eval.phrasings import main

    assert main(["--check"]) == 0
    assert phrasings() == dataset_texts()


def _read_arpa(text: str) -> dict[int, dict[tuple[str, ...], tuple[float, float]]]:
    grams: dict[int, dict[tuple[str, ...], tuple[float, float]]] = defaultdict(dict)
    order = 0
    for line in text.splitlines():
        if line.startswith("\\") and line.endswith("-grams:"):
            order = int(line[1])
            continue
        parts = line.split("\t")
        if order and len(parts) >= 2:
            grams[order][tuple(parts[1].split())] = (float(parts[0]),
                                                    float(parts[2]) if len(parts) > 2 else 0.0)
    return grams


def _prob(grams: dict[int, dict[tuple[str, ...], tuple[float, float]]],
          g: tuple[str, ...]) -> float:
    if g in grams[len(g)]:
        return 10 ** grams[len(g)][g][0]
    h = g[:-1]
    bow = 10 ** grams[len(h)][h][1] if h in grams[len(h)] else 1.0
    return bow * _prob(grams, g[1:])


def test_the_language_model_is_a_proper_distribution() -> None:
    sents = [s.split() for s in ("zoom in", "zoom in on the nodule", "zoom out",
                                 "show the ct", "hide the ct", "show the nodule")]
    arpa = build_lm(sents)
    assert arpa.startswith("\\data\\") and arpa.rstrip().endswith("\\end\\")
    grams = _read_arpa(arpa)
    vocab = [w for (w,) in grams[1] if w != "<s>"]
    # every history, seen or not, gives a next word probabilities that sum to one
    for h in [("<s>",), ("zoom",), ("the",), ("<s>", "zoom"), ("zoom", "in"), ("hide", "the"),
              ("ct",), ("out",)]:
        total = sum(_prob(grams, (*h, w)) for w in vocab)
        assert math.isclose(total, 1.0, abs_tol=1e-3), (h, total)
    # and what was said more often is likelier
    assert _prob(grams, ("<s>", "zoom")) > _prob(grams, ("<s>", "hide"))


class _Scorer:
    def coverage(self, text: str) -> float:
        return 0.0 if any(w in text.lower() for w in ("pied", "pulled", "men", "pager")) else 1.0

    def pinned(self, text: str) -> bool:
        return "pager" in text.lower()


def test_the_domain_hearing_is_taken_only_where_whisper_heard_talk() -> None:
    sc = _Scorer()
    top = "Pied the patient and pulled them."
    scores = {top: -0.75, "Hide the patient info.": -2.44}
    assert choose_domain_hearing(top, top, "Hide the patient info.", scores, sc) == \
        "Hide the patient info."
    # the audio contradicts it
    assert choose_domain_hearing(top, top, "Hide the patient info.",
                                 {**scores, "Hide the patient info.": -3.5}, sc) is None
    # Whisper heard console words: they stay
    assert choose_domain_hearing("Zoom in.", "Zoom in.", "Zoom out.",
                                 {"Zoom in.": -0.3, "Zoom out.": -0.4}, sc) is None
    # out of scope stays out of scope
    oos = "Call the pager men."
    assert choose_domain_hearing(oos, oos, "Show the CT.", {oos: -0.5, "Show the CT.": -0.9},
                                 sc) is None
    # never makes (or loses) a wake word
    assert choose_domain_hearing("Two men.", "Two men.", "Davinci zoom in.",
                                 {"Two men.": -0.6, "Davinci zoom in.": -1.0}, sc) is None
    assert choose_domain_hearing("Two men.", "Two men.", "", {"Two men.": -0.6}, sc) is None


def test_a_broken_recogniser_says_so_and_hears_nothing(monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    import numpy as np

    rec = DomainRecognizer(texts=["zoom in"], cache_dir=tmp_path)
    monkeypatch.setattr(rec, "_files", lambda model_dir: (_ for _ in ()).throw(
        OSError("model files unreadable")))
    assert rec.hear(np.zeros(16000, dtype=np.float32)) == ""
    assert not rec.available
