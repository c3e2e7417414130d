"""Filters on Whisper's output: segments heard over silence or noise, prompt echoes and
leaks, decoding loops, the speech level.
"""

from __future__ import annotations

import os

# No model may be downloaded at run time (DESIGN §6): keep huggingface_hub off the network even
# if a path is mistyped and faster-whisper falls back to treating it as a hub id.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import re

import numpy as np

from app.voice.stt_config import (
    HALLUCINATIONS,
    VOCABULARY,
    Segment,
    SttConfig,
)

# -------------------------------------------------------------------------------- filters
_WORD = re.compile(r"[a-z0-9']+")


def normalise(text: str) -> str:
    """Lower case words only (for blacklist and echo checks)."""
    return " ".join(_WORD.findall(text.lower()))


def speech_level_dbfs(audio: np.ndarray, window: int = 512) -> float:
    """Level of the loudest part (90th percentile of 32 ms RMS): a short word in a long quiet
    clip still counts as loud, a uniformly quiet clip does not."""
    x = np.asarray(audio, dtype=np.float32).reshape(-1)
    if len(x) < window:
        x = np.pad(x, (0, window - len(x)))
    n = len(x) // window
    rms = np.sqrt(np.mean(np.square(x[: n * window].reshape(n, window), dtype=np.float64), axis=1))
    return float(20 * np.log10(max(float(np.percentile(rms, 90)), 1e-6)))


def collapse_loops(text: str, min_repeats: int = 3) -> str:
    """"show the CT show the CT show the CT" → "show the CT": a phrase of two or more words
    repeated ``min_repeats`` times in a row is a decoding loop. Single words are left alone:
    "left left left" is a real command (three steps, DESIGN §4)."""
    words = text.split()
    changed = True
    while changed:
        changed = False
        for n in range(2, len(words) // min_repeats + 1):
            i = 0
            while i + n * min_repeats <= len(words):
                unit = [w.strip(",.!?").lower() for w in words[i:i + n]]
                k = 1
                while (i + (k + 1) * n <= len(words)
                       and [w.strip(",.!?").lower() for w in words[i + k * n:i + (k + 1) * n]]
                       == unit):
                    k += 1
                if k >= min_repeats:
                    words = words[:i + n] + words[i + k * n:]
                    changed = True
                i += 1
    return " ".join(words)


_VOCAB_NORMALISED = frozenset(normalise(w) for w in VOCABULARY) | {"vocabulary"}


def is_prompt_echo(text: str) -> bool:
    """Every word comes from the vocabulary prompt, and it reads like the list ("davinci, CT,")
    rather than a sentence: what Whisper recites over silence."""
    words = normalise(text).split()
    if not words or any(w not in _VOCAB_NORMALISED for w in words):
        return False
    return len(words) >= 2 or "," in text or text.strip().lower().startswith("vocabulary")


#: Vocabulary words that are nouns, not command starts: a transcript opening with one of them
#: as a lone item ("PFT, pathologist") is the prompt's list style leaking in.
_LIST_NOUNS = frozenset({"pft", "bmi", "fev1", "fvc", "trachea", "bronchi", "lobe", "nodule",
                         "airway", "lung"})
_CHUNK_SPLIT = re.compile(r"[,.;:!?]")


def _is_wake_chunk(chunk: str) -> bool:
    from app.voice.wakeword import WakeWordSpotter  # noqa: PLC0415

    return len(chunk.split()) <= 3 and WakeWordSpotter().match(chunk).detected


def prompt_leak(text: str) -> bool:
    """Does the transcript look like the vocabulary prompt's *list* rather than speech?

    Measured on the dev split with natural (Piper) voices: with the prompt, a clip opening
    with "Da Vinci," sometimes comes out as a continuation of the list — "davinci, davinci,
    davinci,", "PFT,", "trachea, CT.", "axial, dinci, axial,", "PFT, VINci, remove the 3D
    model". Such transcripts are decoded again without the prompt (hotwords kept)."""
    chunks = [normalise(c) for c in _CHUNK_SPLIT.split(text or "")]
    chunks = [c for c in chunks if c]
    if not chunks:
        return False
    vocab = _VOCAB_NORMALISED - {"vocabulary"}
    wake = [_is_wake_chunk(c) for c in chunks]
    if sum(wake) >= 2:
        return True
    rest = [c for c, w in zip(chunks, wake, strict=True) if not w]
    # Only vocabulary words, as a list: "trachea, CT." / a lone "PFT,". ("davinci, anterior"
    # is a command: the wake word and one word.)
    if rest and all(c in vocab for c in rest) and \
            (len(rest) >= 2 or (not any(wake) and rest[0] in _LIST_NOUNS)):
        return True
    if any(a in vocab and not wa and wb
           for a, wa, wb in zip(chunks, wake, wake[1:], strict=False)):
        return True
    listed = [c for c, w in zip(chunks, wake, strict=True) if c in vocab and not w]
    if len(listed) != len(set(listed)):
        return True
    if (text or "").rstrip().endswith(",") and chunks[-1] in vocab and not wake[-1]:
        return True  # "CHO, axial,": the list goes on
    first = 1 if wake[0] else 0
    return len(chunks) > first + 1 and chunks[first] in _LIST_NOUNS


def filter_segments(segments: list[Segment], level_dbfs: float,
                    cfg: SttConfig) -> tuple[str, list[str]]:
    """Mark dropped segments and return (text, reasons)."""
    reasons: list[str] = []
    low_energy = level_dbfs < cfg.low_energy_dbfs
    for s in segments:
        norm = normalise(s.text)
        if not norm:
            s.dropped = "punctuation-only"
        elif s.no_speech_prob >= cfg.no_speech_prob and s.avg_logprob < cfg.logprob_with_no_speech:
            s.dropped = "no-speech"
        elif s.avg_logprob < cfg.min_avg_logprob and s.no_speech_prob > cfg.doubt_no_speech:
            s.dropped = "low-confidence"
        elif s.compression_ratio > cfg.max_compression_ratio:
            s.dropped = "repetition-loop"
        elif is_prompt_echo(s.text) and (low_energy or s.no_speech_prob > 0.4):
            s.dropped = "prompt-echo"
        elif norm in HALLUCINATIONS and (low_energy or s.no_speech_prob > cfg.doubt_no_speech
                                         or s.avg_logprob < -0.7):
            s.dropped = "hallucination-phrase"
        if s.dropped:
            reasons.append(s.dropped)
    kept = " ".join(s.text.strip() for s in segments if not s.dropped).strip()
    kept = collapse_loops(kept)
    if kept and not normalise(kept):
        reasons.append("punctuation-only")
        kept = ""
    if kept and normalise(kept) in HALLUCINATIONS and low_energy:
        reasons.append("hallucination-phrase")
        kept = ""
    return kept, reasons
