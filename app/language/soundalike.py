"""Console words a misheard transcript may have meant: candidate rewrites for the recogniser.

Whisper tiny mishears short domain words as ordinary English ("Chill the right lung", "Grace
all", "what's at the top of the skin", "said max", "right lap view"). A text rule alone cannot
tell "skin" from "scan" safely; the audio can. This module only *proposes*: for each run of
one to three words holding a word the console does not know, the domain terms that sound
alike (metaphone and spelling similarity, RapidFuzz), and the transcript rewritten with them.
The speech recogniser then scores every proposal against the audio (a forced decode) and a
rewrite wins only when the audio supports it about as well as what Whisper wrote
(``app.voice.stt``). Nothing here is tuned to sentences: the terms come from the vocabulary.
It also proposes both readings of what Whisper writes ambiguously: "sag-40" is "sag minus 40"
or "sag 40" (:func:`_sign_readings`), and only the audio can tell.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import jellyfish
from rapidfuzz import fuzz

from app.language import words as language_words
from app.language.command_words import _CONTENT, _FUNCTION_WORDS, _NUM_RE, DOMAIN_WORDS
from app.language.normalize import _NUMBER_WORDS, _ORDINALS, _SIGN_WORDS
from app.language.validation import CommandScorer
from app.language.vocabulary import VOCABULARY

# How Whisper writes a term → how it is said (abbreviations are spelled out letter by letter).
_SPOKEN: dict[str, str] = {
    "RUL": "are you el", "RML": "are em el", "RLL": "are el el", "LUL": "el you el",
    "LLL": "el el el", "BMI": "bee em eye", "PFT": "pee eff tee", "FEV1": "eff ee vee one",
    "CT": "see tee", "3D": "three dee",
}
# Plain words worth proposing besides the domain nouns: the verbs and particles of commands.
_EXTRA = (
    "zoom", "rotate", "turn", "spin", "swing", "reset", "clear", "remove", "hide", "show",
    "display", "erase", "add", "move", "view", "again", "repeat", "enlarge", "shrink", "up",
    "down", "left", "right", "forward", "back", "front", "bigger", "smaller", "max", "min",
    "middle", "ax", "cor", "sag", "ant", "post", "lat", "in", "out", "all", "lung", "lungs",
)
_WORD_RE = re.compile(r"\d+[A-Za-z]+|[A-Za-z][A-Za-z0-9']*|\d+")  # "3D" is one word
MIN_SIMILARITY = 55.0
# Whole short commands Whisper tends to hear as other words ("Two men." for "zoom in").
_PHRASES = ("zoom in", "zoom out", "erase all")


@dataclass(frozen=True)
class Term:
    written: str
    spoken: str
    key: str          # metaphone of the spoken form without spaces
    letters: str      # the spoken form's letters without spaces


@lru_cache(maxsize=1)
def terms() -> tuple[Term, ...]:
    words = {w for w in (DOMAIN_WORDS | _CONTENT | set(_EXTRA)) if w.isalpha() and len(w) >= 2}
    out = [Term(k, v, jellyfish.metaphone(v.replace(" ", "")), v.replace(" ", ""))
           for k, v in _SPOKEN.items()]
    out += [Term(p, p, jellyfish.metaphone(p.replace(" ", "")), p.replace(" ", ""))
            for p in _PHRASES]
    for w in sorted(words):
        if w.upper() in _SPOKEN:
            continue
        out.append(Term(w, w, jellyfish.metaphone(w), w))
    return tuple(out)


_NUMBERISH = frozenset(_NUMBER_WORDS) | frozenset(_SIGN_WORDS) | frozenset(_ORDINALS) | {
    "hundred", "thousand"}


def _known(word: str, extra: frozenset[str] = frozenset()) -> bool:
    w = word.lower().strip("'").split("'")[0]  # "what's" → "what"
    return (w in _FUNCTION_WORDS or w in _CONTENT or w in _NUMBERISH or w in extra
            or bool(_NUM_RE.match(w)) or w.upper() in _SPOKEN)


def similarity(span: str, term: Term) -> float:
    """0–100: how alike a run of heard words and a term sound (and are spelled)."""
    letters = re.sub(r"[^a-z]", "", span.lower())
    if not letters or not term.key:
        return 0.0
    key = jellyfish.metaphone(letters)
    if not key:
        return 0.0
    sound = fuzz.ratio(key, term.key)
    spelling = fuzz.ratio(letters, term.letters)
    # Both must be near: sound alone confuses short keys ("said" ST ~ "xad"), spelling
    # alone confuses words that are spelled alike but said differently.
    return min(100.0, 0.75 * sound + 0.25 * spelling)


def alike(span: str, limit: int = 2, min_similarity: float = MIN_SIMILARITY,
          ) -> list[tuple[str, float]]:
    """The terms that sound most like ``span``, best first."""
    low = span.lower()
    n = len(re.sub(r"[^a-z]", "", low))
    # A term far shorter or longer than the words it would replace is no sound-alike: it
    # would drop or invent speech ("Chill the right" is not "right").
    scored = [(t.written, similarity(span, t)) for t in terms()
              if t.written.lower() != low and 0.7 * n <= len(t.letters) <= 1.5 * n]
    scored = [s for s in scored if s[1] >= min_similarity]
    scored.sort(key=lambda s: -s[1])
    return scored[:limit]


# A plane followed by a hyphen and a number: Whisper writes "sag minus 40" as "sag-40" but
# also "ax 40" as "Ax-40", so only the audio can say whether "minus" was spoken.
_PLANE_HYPHEN = re.compile(r"\b(x|ax|axial|cor|coronal|sag|sagittal)-(\d+)\b", re.IGNORECASE)


def _sign_readings(text: str) -> list[str]:
    """Both readings of a hyphenated plane step ("Sag-40." → "Sag minus 40.", "Sag 40.")."""
    if not _PLANE_HYPHEN.search(text):
        return []
    return [_PLANE_HYPHEN.sub(r"\1 minus \2", text), _PLANE_HYPHEN.sub(r"\1 \2", text)]


def variants(text: str, *, max_span: int = 3, per_span: int = 2, limit: int = 8,
             known: frozenset[str] = frozenset(),
             min_similarity: float = MIN_SIMILARITY,
             keep: frozenset[str] = frozenset()) -> list[str]:
    """``text`` rewritten with console terms where it holds words the console does not know.

    One rewrite per (span, term), best sounding first, then one with every unknown word's
    best term at once; at most ``limit``. Empty when every word is known."""
    signs = _sign_readings(text)
    words = [(m.start(), m.end(), m.group()) for m in _WORD_RE.finditer(text)]
    unknown = [i for i, (_, _, w) in enumerate(words) if not _known(w, known)]
    if not unknown:
        return signs[:limit]
    found: list[tuple[float, int, int, str]] = []  # (similarity, first, last, term)
    for i in unknown:
        for n in range(1, max_span + 1):
            for a in range(max(0, i - n + 1), i + 1):
                b = a + n - 1
                if b >= len(words) or any(_NUM_RE.match(words[k][2]) or
                                          words[k][2].lower() in keep for k in range(a, b + 1)):
                    continue
                span = text[words[a][0]:words[b][1]]
                for term, sim in alike(span, per_span, min_similarity):
                    found.append((sim, a, b, term))
    found.sort(key=lambda f: -f[0])
    out: list[str] = []

    def rewrite(subs: list[tuple[float, int, int, str]]) -> str:
        s = text
        for _, a, b, term in sorted(subs, key=lambda f: -f[1]):
            rep = term.capitalize() if a == 0 and term.islower() else term
            s = s[:words[a][0]] + rep + s[words[b][1]:]
        return s

    out += signs
    for f in found:
        v = rewrite([f])
        if v not in out and v != text:
            out.append(v)
    best: list[tuple[float, int, int, str]] = []
    for f in found:  # the best term for each unknown word, spans not overlapping
        if all(f[2] < g[1] or f[1] > g[2] for g in best):
            best.append(f)
    if len(best) > 1:
        v = rewrite(best)
        if v not in out:
            out.insert(0, v)
    return out[:limit]


# Without audio to tell them apart, a rewrite is only proposed for words that sound and are
# spelled almost as a console term ("row tate" ~ rotate 98, "noodles" ~ nodules 96, "macs" ~
# max 89), never for near misses such as "nodes" ~ nodules (85), "bit more" ~ tumor (81) or
# "table" ~ tall (77). Chosen on recogniser-style blind sets after their first measurement
# (b, f, z, ab), not on the test split.
TEXT_MIN_SIMILARITY = 88.0


def sound_alike_readings(text: str, limit: int = 6) -> list[str]:
    """Rewrites of a transcript with the console terms its unknown words sound like, for
    text with no audio behind it: only near-identical sounds (:data:`TEXT_MIN_SIMILARITY`);
    the caller still has to read a rewrite as a whole command."""
    known = frozenset(VOCABULARY) | language_words("grammar_words")
    spoken = frozenset(language_words("command_fillers") | language_words("discourse_markers")
                       | language_words("not_a_name") | language_words("final_particles"))
    said = [w.lower() for w in _WORD_RE.findall(text)]
    if said and all(w in spoken for w in said):
        return []  # "wait", "hai, okay": words of the language's own, no misheard term
    out = variants(text, limit=limit, known=known, min_similarity=TEXT_MIN_SIMILARITY,
                   keep=language_words("negation_words"))
    if not out:  # only when no word alone sounds like a term
        out = _joined_readings(text, known)
    amount = amount_reading(text, known)
    return ([amount] if amount and amount not in out else []) + out[:limit]


_JOIN_MIN_SPELLING = 55.0


def _joined_readings(text: str, known: frozenset[str]) -> list[str]:
    """A long console term a recogniser wrote as two words, one of them unknown ("tray kia" =
    trachea, "and tier" = anterior): the two together must have the term's Soundex code, pass
    the match-rating comparison and be spelled at least half alike, and only one term may fit
    (else nothing is proposed)."""
    words = [(m.start(), m.end(), m.group()) for m in _WORD_RE.finditer(text)]
    long_terms = [t for t in terms() if len(t.letters) >= 6 and t.written == t.spoken
                  and t.written.isalpha()]  # words, not spelled abbreviations ("see tee")
    out: list[str] = []
    for i in range(len(words) - 1):
        a, b = words[i][2].lower(), words[i + 1][2].lower()
        if _known(a, known) and _known(b, known) or not (a.isalpha() and b.isalpha()) or \
                a in DOMAIN_WORDS or b in DOMAIN_WORDS:
            continue  # a console word is no half of another ("the node right here")
        joined = a + b
        if len(joined) < 6:
            continue
        code = jellyfish.soundex(joined)
        fits = {t.written for t in long_terms
                if jellyfish.soundex(t.letters) == code
                and jellyfish.match_rating_comparison(joined, t.letters)
                and fuzz.ratio(joined, t.letters) >= _JOIN_MIN_SPELLING
                and 0.8 * len(joined) <= len(t.letters) <= 1.3 * len(joined)}
        if len(fits) == 1:
            out.append(text[:words[i][0]] + fits.pop() + text[words[i + 1][1]:])
    return out


# Where a slice step goes (after a direction, a plane or "by"), only a number word can stand:
# the few candidates allow a looser match than anywhere else ("twenny" ~ twenty 85, "fife" ~
# five 94), while "to" and "for" stay words (they are known).
AMOUNT_MIN_SIMILARITY = 80.0
AMOUNT_BEFORE = frozenset({"up", "down", "left", "right", "forward", "forwards", "back",
                            "backward", "backwards", "by", "plus", "minus", "axial", "coronal",
                            "sagittal", "ax", "cor", "sag", "another"})


@lru_cache(maxsize=1)
def _number_terms() -> tuple[Term, ...]:
    return tuple(Term(w, w, jellyfish.metaphone(w), w) for w in sorted(_NUMBER_WORDS)
                 if w.isalpha() and len(w) >= 3)


def amount_reading(text: str, known: frozenset[str] = frozenset()) -> str | None:
    """``text`` with an unknown word in a step's place read as the number word it sounds like
    ("coronal back twenny" → "coronal back twenty"); None when there is none, or when two
    number words sound equally near."""
    words = [(m.start(), m.end(), m.group()) for m in _WORD_RE.finditer(text)]
    # ("coronal, sorry": an apology or a filler is said as itself, never as "zero")
    spoken = language_words("command_fillers") | language_words("discourse_markers") | \
        language_words("correction_sorry")
    for k in range(1, len(words)):
        w = words[k][2]
        if words[k - 1][2].lower() not in AMOUNT_BEFORE or _known(w, known) or \
                w.lower() in spoken:
            continue
        scored = sorted(((similarity(w, t), t.written) for t in _number_terms()), reverse=True)
        if not scored or scored[0][0] < AMOUNT_MIN_SIMILARITY or (
                len(scored) > 1 and scored[1][0] >= scored[0][0] - 3):
            continue
        a, b = words[k][0], words[k][1]
        return text[:a] + scored[0][1] + text[b:]
    return None


class SoundalikeScorer(CommandScorer):
    """The recogniser's domain scorer (``app.voice.stt.DomainScorer``) with sound-alike
    rewrites: coverage and out-of-scope pinning from :class:`CommandScorer`, plus
    :func:`variants`."""

    def __init__(self, vocabulary: frozenset[str] | set[str] | None = None,
                 limit: int = 8) -> None:
        super().__init__(vocabulary)
        self.limit = limit

    def variants(self, text: str) -> list[str]:
        return variants(text, limit=self.limit, known=self.vocabulary)


__all__ = ["AMOUNT_MIN_SIMILARITY", "MIN_SIMILARITY", "TEXT_MIN_SIMILARITY", "SoundalikeScorer",
           "Term", "alike", "amount_reading",
           "similarity", "sound_alike_readings", "terms", "variants"]
