"""A third hearing: pocketsphinx with a language model of the console's own phrasings.

Why: Whisper (tiny.en, base) is a general recogniser; on synthetic voices and OR noise it
hears commands as ordinary English ("Pied the patient and pulled them." for "hide the patient
info", "Two men." for "zoom in") and an oracle over both models' five best hearings shows the
right words are often in neither. pocketsphinx (BSD, its en-us acoustic model in the wheel;
DESIGN §6 lists it) decoding with a trigram model of how commands are phrased errs
differently: it can only say things the console has been told, so it hears "hide the patient
info" where Whisper heard talk. That is also its danger — it turns any talk into something
command-like — so it never decides alone: its hearing is offered to the STT stage as one more
candidate, taken only where Whisper's own hearing is not console words, the candidate is, it
is not out of scope, and the audio scored by Whisper itself does not contradict it
(:func:`app.voice.hearing_choice.choose_domain_hearing`).

Measured as an option, **off by default** (``SttConfig(domain_asr=True)`` turns it on): on the
dev split, with the model built without the dev sentences, single-pass success rose 932 →
951 of 1,260; on the test split it did not follow (flite clean 123 → 117 of 148: commands
phrased in ways the model never saw were forced into ones it knows, and acted on where the
console used to ask again). Details in ``docs/BENCHMARKS.md``.

The language model is built here, from text: the phrasing datasets in ``datasets/`` (the dev
split and the phrasing sets written by other engineers; never the test split), each sentence
with and without the wake word; numbers as words, clinical abbreviations as the letters a
surgeon says. Trigrams with absolute discounting and back-off, written as ARPA with a
dictionary cut from pocketsphinx's CMU dictionary (sentences with words it cannot pronounce
are left out), cached by content hash under the user cache directory. ~0.1 s per command on
two cores.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
import threading
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from app.language import phrasings

log = logging.getLogger(__name__)

DISCOUNT = 0.5
WAKE = "davinci"

_ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
         "eighteen", "nineteen"]
_TENS = ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
# How a surgeon says the abbreviations the datasets write (letter by letter).
SPOKEN_LETTERS = {
    "rul": "r u l", "rml": "r m l", "rll": "r l l", "lul": "l u l", "lll": "l l l",
    "fev1": "f e v one", "fvc": "f v c", "dlco": "d l c o", "ct": "c t", "bmi": "b m i",
    "pft": "p f t", "pfts": "p f t s", "3d": "three d", "pt": "p t", "dx": "d x",
    "spo2": "s p o two", "co2": "c o two",
}
# ...and back to how Whisper (and so the rest of the console) writes them, after
# normalisation has turned number words into digits.
_WRITTEN = (("f e v 1", "FEV1"), ("f e v one", "FEV1"), ("s p o 2", "SpO2"), ("c o 2", "CO2"), ("p f t s", "PFTs"),
            ("d l c o", "DLCO"), ("r u l", "RUL"), ("r m l", "RML"), ("r l l", "RLL"),
            ("l u l", "LUL"), ("l l l", "LLL"), ("f v c", "FVC"), ("b m i", "BMI"),
            ("p f t", "PFT"), ("c t", "CT"), ("3d", "3D"))


def number_words(n: int) -> str:
    """205 → "two hundred five" (how the datasets' digits are said)."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else " " + _ONES[n % 10])
    if n < 1000:
        rest = n % 100
        return _ONES[n // 100] + " hundred" + ("" if rest == 0 else " " + number_words(rest))
    return " ".join(_ONES[int(c)] for c in str(n))


def spoken_words(text: str) -> list[str]:
    """A dataset sentence as the words a speaker says ("cor +40" → cor plus forty)."""
    t = text.lower().replace("'", "")
    t = t.replace("+", " plus ")
    t = re.sub(r"(?<![a-z0-9])-(?=\d)", " minus ", t)
    out: list[str] = []
    for w in re.findall(r"[a-z0-9]+", t):
        if w in SPOKEN_LETTERS:
            out += SPOKEN_LETTERS[w].split()
        elif w.isdigit():
            out += number_words(int(w)).split()
        else:
            out.append(w)
    return out


def written(words: str) -> str:
    """pocketsphinx's words as Whisper would write them, so both compare ("sagittal two
    hundred" → "Sagittal 200.", "zoom in on the r u l" → "Zoom in on the RUL.")."""
    from app.language.normalize import normalize

    if not words.strip():
        return ""
    t = normalize(words)
    t = re.sub(r"(?<![\w])\+(?=\d)", "plus ", t)
    t = re.sub(r"(?<![\w])-(?=\d)", "minus ", t)
    for said, acronym in _WRITTEN:
        # spelled ("r u l") or already joined by the normaliser ("rul")
        for form in {said, said.replace(" ", "")}:
            t = re.sub(rf"\b{form}\b", acronym, t)
    return t[:1].upper() + t[1:] + "."


def build_lm(sentences: Iterable[Sequence[str]], discount: float = DISCOUNT) -> str:
    """A back-off trigram model in ARPA format (absolute discounting; unigrams add-half)."""
    counts: list[Counter[tuple[str, ...]]] = [Counter() for _ in range(4)]
    for s in sentences:
        toks = ["<s>", *s, "</s>"]
        for n in (1, 2, 3):
            for i in range(len(toks) - n + 1):
                g = tuple(toks[i:i + n])
                if g != ("<s>",):
                    counts[n][g] += 1
    total = sum(counts[1].values())
    words = [g[0] for g in counts[1]]  # what can be predicted (not "<s>")
    vocab = [*words, "<s>"]
    uni = {(w,): (counts[1][(w,)] + 0.5) / (total + 0.5 * len(words)) for w in words}
    hist: dict[int, Counter[tuple[str, ...]]] = {2: Counter(), 3: Counter()}
    kinds: dict[int, Counter[tuple[str, ...]]] = {2: Counter(), 3: Counter()}
    seen: dict[int, defaultdict[tuple[str, ...], list[tuple[str, ...]]]] = {
        2: defaultdict(list), 3: defaultdict(list)}
    for n in (2, 3):
        for g, c in counts[n].items():
            hist[n][g[:-1]] += c
            kinds[n][g[:-1]] += 1
            seen[n][g[:-1]].append(g)
    bows: dict[tuple[str, ...], float] = {}

    def prob(g: tuple[str, ...]) -> float:
        if len(g) == 1:
            return uni[g]
        n = len(g)
        if g in counts[n]:
            return (counts[n][g] - discount) / hist[n][g[:-1]]
        return bow(g[:-1]) * prob(g[1:])

    def bow(h: tuple[str, ...]) -> float:
        if h not in bows:
            n = len(h) + 1
            if h not in hist[n]:
                bows[h] = 1.0
            else:
                left = discount * kinds[n][h] / hist[n][h]
                lower = sum(prob(g[1:]) for g in seen[n][h])
                bows[h] = left / max(1e-9, 1.0 - lower)
        return bows[h]

    lines = ["\\data\\", f"ngram 1={len(vocab)}", f"ngram 2={len(counts[2])}",
             f"ngram 3={len(counts[3])}", "", "\\1-grams:"]
    for w in vocab:
        p = -99.0 if w == "<s>" else math.log10(uni[(w,)])
        lines.append(f"{p:.4f}\t{w}\t{math.log10(bow((w,))):.4f}")
    for n in (2, 3):
        lines += ["", f"\\{n}-grams:"]
        for g in counts[n]:
            line = f"{math.log10(prob(g)):.4f}\t{' '.join(g)}"
            if n == 2:
                line += f"\t{math.log10(bow(g)):.4f}"
            lines.append(line)
    lines += ["", "\\end\\", ""]
    return "\n".join(lines)


def _cache_dir() -> Path:
    from platformdirs import user_cache_dir  # noqa: PLC0415

    return Path(user_cache_dir("visa-console")) / "domain-lm"


class DomainRecognizer:
    """pocketsphinx decoding with the console's phrasing model; loaded on first use. Any
    failure (package missing, model files unreadable) is said once in the log and the
    recogniser stays off: Whisper alone still works."""

    def __init__(self, texts: Sequence[str] | None = None,
                 cache_dir: Path | None = None) -> None:
        self._texts = texts
        self._cache = cache_dir
        self._decoder: Any = None
        self._failed = False
        self._lock = threading.Lock()

    @property
    def available(self) -> bool:
        return not self._failed

    def _files(self, model_dir: Path) -> tuple[Path, Path]:
        texts = list(self._texts) if self._texts is not None else phrasings()
        # (word, line) of the CMU dictionary, read once ("word(2)" is a second pronunciation)
        cmudict = [(ln.split()[0].split("(")[0], ln) for ln in
                   (model_dir / "cmudict-en-us.dict").read_text(encoding="utf-8").splitlines()
                   if ln.strip()]
        pronounce = {w for w, _ in cmudict}
        sents = [w for w in (spoken_words(t) for t in texts) if w and all(
            x in pronounce for x in w)]
        sents += [[WAKE, *s] for s in sents]  # "davinci, zoom in" in one breath
        key = hashlib.sha256(json.dumps(sents).encode()).hexdigest()[:16]
        out = (self._cache or _cache_dir()) / key
        arpa, dic = out / "domain.arpa", out / "domain.dict"
        if not (arpa.exists() and dic.exists()):
            out.mkdir(parents=True, exist_ok=True)
            used = {w for s in sents for w in s}
            tmp = arpa.with_suffix(".tmp")
            tmp.write_text(build_lm(sents), encoding="utf-8")
            tmp.replace(arpa)
            lines = [ln for w, ln in cmudict if w in used]
            tmp = dic.with_suffix(".tmp")
            tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
            tmp.replace(dic)
            log.info("domain language model built: %d sentences, %d words -> %s",
                     len(sents), len(used), out)
        return arpa, dic

    def load(self) -> bool:
        if self._decoder is not None or self._failed:
            return self._decoder is not None
        try:
            from pocketsphinx import Decoder, get_model_path  # noqa: PLC0415

            model_dir = Path(get_model_path()) / "en-us"
            arpa, dic = self._files(model_dir)
            self._decoder = Decoder(hmm=str(model_dir / "en-us"), lm=str(arpa), dict=str(dic),
                                    loglevel="FATAL")
        except Exception as e:  # noqa: BLE001 - an optional hearing must never stop STT
            self._failed = True
            log.warning("domain recogniser (pocketsphinx) unavailable, Whisper alone: %s", e)
            return False
        return True

    def hear(self, audio: np.ndarray) -> str:
        """What the phrasing model hears in 16 kHz mono float audio, written as Whisper
        would write it ("" when nothing, or when the recogniser is off)."""
        if not self.load():
            return ""
        x = np.asarray(audio, dtype=np.float32).reshape(-1)
        pcm = (np.clip(x, -1.0, 1.0) * 32767).astype(np.int16).tobytes()
        try:
            with self._lock:
                self._decoder.start_utt()
                self._decoder.process_raw(pcm, full_utt=True)
                self._decoder.end_utt()
                hyp = self._decoder.hyp()
        except Exception as e:  # noqa: BLE001
            log.warning("domain recogniser failed on an utterance: %s", e)
            return ""
        return written(hyp.hypstr) if hyp is not None and hyp.hypstr else ""


_SHARED: DomainRecognizer | None = None
_SHARED_LOCK = threading.Lock()


def shared_recognizer() -> DomainRecognizer:
    """One recogniser per process (the model and decoder are ~40 MB)."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = DomainRecognizer()
        return _SHARED


__all__ = ["DomainRecognizer", "build_lm", "number_words", "shared_recognizer",
           "spoken_words", "written"]
