"""A second, acoustic opinion on a wake word Whisper wrote: is "da Vinci" really in the audio?

Why: Whisper decodes every utterance with the domain prompt and hotwords ("davinci, CT, …"),
so on a name that merely resembles it — "Devin, can you…", "Devon is covering…", "Davina
will…", "Davis and Finch…" — it writes the prompt's "davinci", often with good confidence.
Measured on 2 h of non-wake OR talk (scripts/measure_false_wakes.py): all 6 false wakes were
this, spelled exactly "davinci"; no text rule can tell them from the real thing.

How: the audio is encoded once more (Whisper tiny.en, the loaded model) and the decoder is
*forced* through a few spellings of the name with **no prompt and no hotwords**
(CTranslate2 ``align``: the probability of each given token). The best spelling's summed
log-probability says how well the audio itself supports the name, without the prompt's bias.
Measured on the dev wake set and the false wakes of the non-wake corpus (8 voices, clean and
10 dB SNR): true wakes −1.3 … −10 clean, down to about −15 (rarely −20) at 10 dB; the prompt's
false "davinci" −12.5 … −19. The default floor, −15, keeps ≥ 97% of wakes and drops most of
the false ones. Cost: four short forced decodes, only for utterances whose transcript already
holds the wake word; the encoder output of the transcription just made is reused (an encoder
pass, ~0.5 s on two cores, when it is not at hand).
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

#: Spellings the decoder is forced through (the best one counts). Measured: " Da Vinci" is
#: usually best; Piper's "da Vinci" sometimes " DaVinci" or " The Vinci".
SPELLINGS: tuple[str, ...] = (" Da Vinci", " DaVinci", " The Vinci", " Davinci")
DEFAULT_MIN_LOGPROB = -15.0
#: A transcript with no wake-like word at all is *rescued* when the forced "Da Vinci" scores at
#: least this: noise can hide the name from the transcript but not from the forced decode.
#: Measured on the dev split's wake set at 10 dB SNR (8 voices × 60): transcript misses score
#: −9.1 … −24 in the pipeline ("That vinci, coronal…" −10.0, "Infinci, forward…" −9.8);
#: 721 utterances of command speech with no wake word (clean and 10 dB) score at most −13.8,
#: and the prompt's false "davinci" on names −12.5 … −19; dev detection at 10 dB 444 → 457 of
#: 480 at a floor of −10.5 (454 with the coverage rule below). Words that really sound like
#: the name ("vincristine", "vintage") score as high: the score alone is not enough.
DEFAULT_RESCUE_LOGPROB = -10.5
#: ...and only when what follows the name reads as a console command (domain coverage): on the
#: 2 h non-wake corpus, hard negatives such as "The vincristine is for the oncology patient"
#: (−8.6) and "The vintage monitor in room two…" (−10.2) pass the score but not this.
RESCUE_MIN_COVERAGE = 0.75


class _EncoderMemo:
    """Remembers the model's last encoder outputs (input features → output), so verifying
    the audio Whisper has just transcribed costs only the forced decodes, not a second
    encoder pass (the encoder is most of the ~0.6 s a transcription costs on two cores).
    Installed once on the shared model object, wrapping its ``encode``."""

    def __init__(self, model: Any, keep: int = 2) -> None:
        self.keep = keep
        self.items: list[tuple[np.ndarray, Any]] = []
        self._orig = model.encode
        self.hits = 0

    def encode(self, features: np.ndarray) -> Any:
        out = self._orig(features)
        if isinstance(features, np.ndarray):
            self.items = [*self.items[-(self.keep - 1):], (np.array(features, copy=True), out)]
        return out

    def lookup(self, features: np.ndarray) -> Any | None:
        f = features[None] if features.ndim == 2 else features
        for x, out in reversed(self.items):
            xx = x[None] if x.ndim == 2 else x
            if xx.shape == f.shape and np.array_equal(xx, f):
                self.hits += 1
                return out
        return None

    @classmethod
    def install(cls, model: Any) -> _EncoderMemo:
        memo = getattr(model, "_visa_encoder_memo", None)
        if memo is None:
            memo = cls(model)
            model.encode = memo.encode  # instance attribute: shadows the method
            model._visa_encoder_memo = memo
        return memo


class WhisperWakeVerifier:
    """``verifier(audio) -> bool``: does the audio support the wake word without the prompt?

    ``stt`` is a :class:`~app.voice.stt.WhisperSTT` (its loaded model is shared). The last
    score is kept in :attr:`last_score` (for events and tuning)."""

    def __init__(self, stt: Any, *, min_logprob: float = DEFAULT_MIN_LOGPROB,
                 spellings: tuple[str, ...] = SPELLINGS,
                 rescue_logprob: float | None = DEFAULT_RESCUE_LOGPROB) -> None:
        self.stt = stt
        self.min_logprob = float(min_logprob)
        self.rescue_logprob = rescue_logprob
        self.spellings = spellings
        self.last_score: float | None = None
        self._tok: Any = None
        self._tokens: list[list[int]] = []

    def _model(self) -> Any:
        load = getattr(self.stt, "load", None)
        if load is not None:
            load()
        return self.stt._model

    def score(self, audio: np.ndarray) -> float:
        """The best spelling's summed token log-probability (0 is certain)."""
        from faster_whisper.audio import pad_or_trim  # noqa: PLC0415
        from faster_whisper.tokenizer import Tokenizer  # noqa: PLC0415

        m = self._model()
        if self._tok is None:
            self._tok = Tokenizer(m.hf_tokenizer, m.model.is_multilingual, task="transcribe",
                                  language="en")
            self._tokens = [self._tok.encode(s) for s in self.spellings]
        x = np.asarray(audio, dtype=np.float32).reshape(-1)
        lock = getattr(self.stt, "lock", None)
        got = lock.acquire("stt", timeout=15.0) if lock is not None else False
        try:
            memo = _EncoderMemo.install(m)
            feats = m.feature_extractor(x)
            frames = feats.shape[-1] - 1
            padded = pad_or_trim(feats[:, :frames])
            enc = memo.lookup(padded)
            if enc is None:
                enc = m.encode(padded)
            start = [*self._tok.sot_sequence, self._tok.no_timestamps]
            best = -1e9
            for toks in self._tokens:
                r = m.model.align(enc, start, [toks], frames)[0]
                p = np.asarray(r.text_token_probs[:len(toks)], dtype=np.float64)
                best = max(best, float(np.sum(np.log(np.maximum(p, 1e-12)))))
        finally:
            if got:
                lock.release()
        return best

    def rescue(self, audio: np.ndarray) -> str | None:
        """For an utterance whose transcript holds no wake word: when the audio itself
        strongly supports "Da Vinci" at its start (score ≥ ``rescue_logprob``), transcribe it
        again with the wake word as a forced prefix and return that transcript if a console
        command follows the name (:data:`RESCUE_MIN_COVERAGE`); else None.
        Costs one short forced decode per such utterance (the encoding is reused)."""
        self.last_score = None  # no stale score in the wake event when nothing is checked
        if self.rescue_logprob is None or audio is None or len(audio) < 1600:
            return None
        self.last_score = round(self.score(audio), 2)
        if self.last_score < self.rescue_logprob:
            return None
        tr = self.stt.transcribe(audio, prefix="davinci,")
        text = tr.text or ""
        command = text.split(",", 1)[1] if "," in text else ""
        scorer = getattr(self.stt, "scorer", None)
        if not command.strip() or (scorer is not None
                                   and scorer.coverage(command) < RESCUE_MIN_COVERAGE):
            return None  # the name alone, or talk that is not a console command
        return text

    def __call__(self, audio: np.ndarray) -> bool:
        if audio is None or len(audio) < 1600:  # under 0.1 s: nothing to check, trust the text
            self.last_score = None
            return True
        self.last_score = round(self.score(audio), 2)
        return self.last_score >= self.min_logprob


__all__ = ["DEFAULT_MIN_LOGPROB", "DEFAULT_RESCUE_LOGPROB", "RESCUE_MIN_COVERAGE", "SPELLINGS",
           "WhisperWakeVerifier"]
