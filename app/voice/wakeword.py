"""The wake word "davinci", spotted in the transcript of each VAD segment.

No packaged keyword-spotting model knows "davinci" (DESIGN §6), so the wake word is found in
Whisper's transcript of every utterance: the first few words are compared with the ways Whisper
writes it ("davinci", "da Vinci", "the Vinci", "Devinci", "da Vinchi", …) by spelling
(rapidfuzz) *and* by sound (metaphone codes, jellyfish), so an unseen spelling of the same
sounds still matches while "the fence" or "divine" (same consonants, different word) do not.

* Only at the start (after at most ``max_lead_words`` fillers such as "hey", "okay"): people
  address the console first; a wake word in the middle of a conversation is not for us.
* ``sensitivity`` 0..1 maps to the score threshold (0.5 → 0.87): measured here, true spellings
  score ≥ 0.88 and the nearest non-wake phrases ("devin", "the vein", "divine") ≤ 0.85.
* A 2 s cooldown (HA's default) so one utterance heard twice, or an echo, is one wake.
* "davinci, show the CT" in one breath gives ``command="show the CT"``; "davinci" alone gives
  an empty command and the pipeline takes the next utterance as the command.
* :class:`SelfHearingGuard` keeps the console from obeying itself: input heard while it speaks
  (and a short tail) is only checked for stop words, and a transcript that matches what it
  just said is ignored (ANCHORS §3.5: self-hearing loops).
* ``prefilter``: an optional cheap check on the raw audio before Whisper runs (for instance a
  pocketsphinx keyphrase spotter, whose dictionary has "davinci"); not required.
* ``verifier``: an optional check on the audio *after* the transcript matched: the prompt
  makes Whisper write "davinci" for "Devin", "Devon", "Davis and Finch"; the pipeline's
  default (:class:`app.voice.wake_verify.WhisperWakeVerifier`) asks Whisper again, without
  the prompt, how well the audio supports the name. ≤ 1 false wake per hour of OR talk needs
  it (scripts/measure_false_wakes.py).
* A wake spelling without its V ("the finch") is not the name: metaphone writes V as F.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import jellyfish
import numpy as np
from rapidfuzz import fuzz

WAKE_WORD = "davinci"

#: Spellings Whisper produces for "davinci" (and a few near-homophones people say for it).
WAKE_VARIANTS: tuple[str, ...] = (
    "davinci", "da vinci", "the vinci", "da vinchi", "devinci", "davinchi", "the vincy",
    "de vinci", "di vinci", "divinci", "da vincy", "the vinchi", "da vinci's", "davincy",
    # Measured on the dev split (Piper voice): Whisper also writes "DaVenti". Not "the venti":
    # it would make "the vent is alarming" (the ventilator) a wake word.
    "daventi", "da venti",
)

#: Words people put before a name ("hey davinci", "okay, da Vinci"); skipped at the start.
FILLERS = frozenset({"hey", "hi", "hello", "ok", "okay", "um", "uh", "so", "and", "oh", "alright",
                     "right", "yo", "please"})

#: Words that stop speech or cancel a command, whatever else is going on (ANCHORS §3.4).
STOP_PHRASES: tuple[str, ...] = (
    "stop", "cancel", "stop talking", "stop it", "be quiet", "quiet", "silence", "shut up",
    "never mind", "nevermind", "cancel that", "forget it", "enough", "abort",
)
STOP_WORDS = frozenset({"stop", "cancel", "quiet", "silence", "enough", "abort"})

_TOKEN = re.compile(r"[A-Za-z0-9']+")


def _metaphone(s: str) -> str:
    # Metaphone writes "th" as "0"; Whisper hears "the Vinci" for "da Vinci", so treat 0 as T.
    return jellyfish.metaphone(s).replace("0", "T") if s else ""


@dataclass(frozen=True)
class WakeMatch:
    detected: bool
    score: float = 0.0
    variant: str = ""
    heard: str = ""        # the words that matched, as transcribed
    command: str = ""      # the rest of the utterance (the command in one breath)
    reason: str = ""       # why not detected: "no-match", "cooldown", "empty"

    @property
    def wake_only(self) -> bool:
        return self.detected and not self.command.strip()

    def to_dict(self) -> dict[str, Any]:
        return {"detected": self.detected, "score": round(self.score, 3), "variant": self.variant,
                "heard": self.heard, "command": self.command,
                **({"reason": self.reason} if self.reason else {})}


def sensitivity_to_threshold(sensitivity: float) -> float:
    """0 → 0.97 (only near-exact spellings), 0.5 → 0.87 (default), 1 → 0.77."""
    s = min(1.0, max(0.0, float(sensitivity)))
    return round(0.97 - 0.2 * s, 3)


class WakeWordSpotter:
    def __init__(self, variants: Iterable[str] = WAKE_VARIANTS, *, sensitivity: float = 0.5,
                 max_lead_words: int = 2, max_span_words: int = 3, cooldown_s: float = 2.0,
                 clock: Callable[[], float] = time.monotonic,
                 prefilter: Callable[[np.ndarray], bool] | None = None,
                 verifier: Callable[[np.ndarray], bool] | None = None,
                 verified_margin: float = 0.09) -> None:
        self.variants = tuple(dict.fromkeys(v.lower() for v in variants))
        self._compact = [(v, v.replace(" ", "").replace("'", "")) for v in self.variants]
        self._codes = [(v, c, _metaphone(c)) for v, c in self._compact]
        self.sensitivity = sensitivity
        self.max_lead_words = max_lead_words
        self.max_span_words = max_span_words
        self.cooldown_s = cooldown_s
        self.clock = clock
        self.prefilter = prefilter
        self.verifier = verifier
        self.verified_margin = verified_margin
        self._last_detection: float | None = None

    @property
    def threshold(self) -> float:
        return sensitivity_to_threshold(self.sensitivity)

    @property
    def candidate_threshold(self) -> float:
        """The spelling score a transcript needs to be *checked* by the verifier: with one,
        ``verified_margin`` below :attr:`threshold`, since the audio itself decides (dev
        split, 10 dB: "Javinci", "Ravinci", "The venti", "The vent sheet" for "da Vinci"
        score 0.79-0.85); without one, :attr:`threshold`."""
        if self.verifier is None:
            return self.threshold
        return round(self.threshold - self.verified_margin, 3)

    def score(self, phrase: str) -> tuple[float, str]:
        """Similarity of ``phrase`` (one to three words) to the closest variant, 0..1: half
        spelling, half sound, so both must agree for a high score."""
        c = "".join(_TOKEN.findall(phrase.lower())).replace("'", "")
        if len(c) < 4:  # "da", "the": far too little to be the name
            return 0.0, ""
        if "v" not in c:
            # Every spelling Whisper gives the name has its V ("Vinci", "Venti"); metaphone
            # writes V as F, so without this "the finch" (T-F-N-X) sounds like "the Vinci".
            return 0.0, ""
        code = _metaphone(c)
        best, best_v = 0.0, ""
        for v, vc, vcode in self._codes:
            s = 0.5 * fuzz.ratio(c, vc) / 100 + 0.5 * fuzz.ratio(code, vcode) / 100
            if s > best:
                best, best_v = s, v
        return best, best_v

    def match(self, text: str, threshold: float | None = None) -> WakeMatch:
        """Is ``text`` addressed to the console? Pure (no cooldown). ``threshold`` overrides
        the sensitivity's (the pipeline passes :attr:`candidate_threshold`)."""
        spans = [(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(text or "")]
        if not spans:
            return WakeMatch(False, reason="empty")
        words = [w.lower() for w, _, _ in spans]
        best = (0.0, "", 0, 0)  # score, variant, first word, last word (exclusive)
        for i in range(0, min(self.max_lead_words, len(words)) + 1):
            if i > 0 and words[i - 1] not in FILLERS:
                break  # only fillers may come before the wake word
            for n in range(1, self.max_span_words + 1):
                if i + n > len(words):
                    break
                # Whisper splits the name as a short prefix + "Vinci" ("da Vinci", "the Vinci",
                # "D.A. Vinci"): in a longer span every word but the last is short. Without
                # this, "the vein is" sounds like "the vinci" (T-F-N-S).
                if n > 1 and any(len(w) > 3 for w in words[i:i + n - 1]):
                    break
                s, v = self.score(" ".join(words[i:i + n]))
                # Prefer the shorter span on ties ("da vinci" over "da vinci show").
                if s > best[0] + 1e-9:
                    best = (s, v, i, i + n)
        score, variant, a, b = best
        if score < (self.threshold if threshold is None else threshold):
            return WakeMatch(False, score, variant, reason="no-match")
        heard = text[spans[a][1]:spans[b - 1][2]]
        rest = text[spans[b - 1][2]:] if b <= len(spans) else ""
        command = rest.lstrip(" ,.;:!?-\u2014").strip()
        return WakeMatch(True, score, variant, heard=heard, command=command)

    def detect(self, text: str, now: float | None = None,
               threshold: float | None = None) -> WakeMatch:
        """:meth:`match` with the cooldown: a second wake within ``cooldown_s`` is ignored."""
        m = self.match(text, threshold)
        if not m.detected:
            return m
        t = self.clock() if now is None else now
        if self._last_detection is not None and 0 <= t - self._last_detection < self.cooldown_s:
            return WakeMatch(False, m.score, m.variant, heard=m.heard, command=m.command,
                             reason="cooldown")
        self._last_detection = t
        return m

    def strip_wake(self, text: str) -> str:
        """``text`` without a leading wake word (someone repeating "davinci" after waking it)."""
        m = self.match(text)
        return m.command if m.detected else text

    def passes_prefilter(self, audio: np.ndarray) -> bool:
        if self.prefilter is None:
            return True
        try:
            return bool(self.prefilter(audio))
        except Exception:  # a broken pre-filter must not deafen the console
            return True

    def verify(self, audio: np.ndarray) -> bool:
        """The acoustic second opinion on a wake word found in the transcript (see
        :mod:`app.voice.wake_verify`); True without a verifier or when it fails."""
        if self.verifier is None:
            return True
        try:
            return bool(self.verifier(audio))
        except Exception:  # a broken verifier must not deafen the console
            return True

    def reset_cooldown(self) -> None:
        self._last_detection = None


# ----------------------------------------------------------------------------- stop words
def _words(text: str) -> list[str]:
    return [w.lower() for w in _TOKEN.findall(text or "")]


def is_stop_command(text: str) -> bool:
    """The whole utterance is a stop phrase ("stop", "cancel that", "be quiet", "davinci
    stop"). "stop the rotation" is *not*: it is a console command for the interpreter."""
    words = _words(text)
    while words and words[0] in FILLERS:
        words = words[1:]
    phrase = " ".join(words).strip()
    if not phrase:
        return False
    if phrase in STOP_PHRASES:
        return True
    # "davinci stop": the wake word then a stop phrase.
    m = WakeWordSpotter().match(phrase)
    return m.detected and " ".join(_words(m.command)) in STOP_PHRASES


def contains_stop_word(text: str, ignore: str = "") -> bool:
    """A stop word anywhere (used while the console speaks: barge-in). Words the console itself
    is saying (``ignore``) do not count."""
    own = set(_words(ignore))
    return any(w in STOP_WORDS and w not in own for w in _words(text))


# ------------------------------------------------------------------------- self-hearing
class SelfHearingGuard:
    """Remembers what the console says and when, so it does not obey itself.

    * ``speaking(text)`` when playback starts, ``done()`` when it ends; ``tail_s`` after the end
      still counts (room echo, device latency).
    * ``is_guarded(t)``: was the console speaking (or in the tail) at time ``t``?
    * ``is_echo(transcript)``: does the transcript repeat the last thing said (within
      ``memory_s``)? Compared with a partial fuzzy ratio, so a fragment of the reply counts.
    """

    def __init__(self, *, tail_s: float = 0.4, memory_s: float = 2.0, echo_ratio: float = 85.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.tail_s = tail_s
        self.memory_s = memory_s
        self.echo_ratio = echo_ratio
        self.clock = clock
        self._lock = threading.Lock()
        self._speaking = False
        self._since = 0.0
        self._until = -1e9
        self.last_text = ""
        self._last_t = -1e9

    def speaking(self, text: str) -> None:
        with self._lock:
            self._speaking = True
            self._since = self.clock()
            self.last_text = text or ""
            self._last_t = self._since

    def done(self) -> None:
        with self._lock:
            if self._speaking:
                self._speaking = False
                self._until = self.clock() + self.tail_s
                self._last_t = self.clock()

    @property
    def is_speaking(self) -> bool:
        return self._speaking

    def is_guarded(self, t: float | None = None) -> bool:
        t = self.clock() if t is None else t
        with self._lock:
            return self._speaking or t < self._until

    def is_echo(self, transcript: str, t: float | None = None) -> bool:
        t = self.clock() if t is None else t
        with self._lock:
            said, when, speaking = self.last_text, self._last_t, self._speaking
        if not said or not transcript.strip():
            return False
        if not speaking and t - when > self.memory_s:
            return False
        a, b = " ".join(_words(transcript)), " ".join(_words(said))
        if not a or not b:
            return False
        if len(a) < 6:  # "ok", "yes": too short to call an echo
            return a == b
        return fuzz.partial_ratio(a, b) >= self.echo_ratio


__all__ = ["FILLERS", "STOP_PHRASES", "STOP_WORDS", "WAKE_VARIANTS", "WAKE_WORD",
           "SelfHearingGuard", "WakeMatch", "WakeWordSpotter", "contains_stop_word",
           "is_stop_command", "sensitivity_to_threshold"]
