"""``validate`` (DESIGN §3 tier 1): whether a command is in scope, out of scope (OR chatter,
surgical acts, fields and devices the console does not hold) or empty; ``sounds_like_command``,
``has_domain_content`` and the command scorer the recogniser uses.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import jellyfish
from rapidfuzz import fuzz

from app.language.command_words import (
    _CONTENT,
    _EMPTY_WORDS,
    _FUNCTION_WORDS,
    _NUM_RE,
    DOMAIN_WORDS,
    PROTECTED_WORDS,
    UNFAMILIAR_REASON,
    has_domain_content,
    sounds_like_command,
)
from app.language.correction import (
    correct,
)
from app.language.normalize import (
    normalize,
    tokens_of,
)
from app.language.scope import scope

_EMPTY_PHRASES = {
    "", "you", "music", "silence", "inaudible", "blank audio", "noise", "background noise",
    "no speech", "nothing",
}

# Topics we do not handle: (pattern, plain reason). Checked on word boundaries; any hit rejects
# the command even if it also names something of ours ("staple the RUL bronchus").
@dataclass(frozen=True)
class Validity:
    """Whether a command is in scope. Unpacks as ``valid, reason``; ``empty`` is separate."""

    valid: bool
    reason: str = ""
    empty: bool = False

    def __iter__(self) -> Iterator[object]:
        return iter((self.valid, self.reason))


EMPTY_REASON = "nothing was said"


def is_empty(text: str) -> bool:
    t = text.strip(" ,")
    if t in _EMPTY_PHRASES:
        return True
    toks = [x for x in tokens_of(t) if x != ","]
    return all(x in _EMPTY_WORDS for x in toks) and len(toks) <= 3


_ASKS_TO_SEE = re.compile(r"\b(show|display|zoom|rotate|add|hide|remove|highlight|enlarge|"
                          r"segment|model|view|bring|put|pull|on the model)\b")


def _aside(text: str, at: int) -> bool:
    """Is the word at ``at`` in a clause that asks for nothing, next to one that does?"""
    parts = text.split(",")
    pos = 0
    for k, part in enumerate(parts):
        if pos <= at < pos + len(part) + 1:
            others = parts[:k] + parts[k + 1:]
            return not _ASKS_TO_SEE.search(part) and any(
                has_domain_content(o) for o in others)
        pos += len(part) + 1
    return False


# OR-device words a recogniser misspells ("Stapel the RUL bronchus", measured on the dev split's
# audio, went on to show the RUL): an unknown word that sounds exactly like one of these (same
# metaphone, same first letter, spelled alike) is read as it for the scope check. Long words only: a short
# one's sound is shared by too many ordinary words.
_OOS_SOUND_WORDS = ("staple", "stapler", "stapling", "suction", "cautery", "irrigation",
                    "irrigate", "insufflation", "retractor", "trocar", "forceps", "grasper",
                    "scissors", "suture", "specimen", "cartridge", "sealer", "retract",
                    "retracting", "dissect", "ligate", "cauterize", "suturing")
_OOS_SOUNDS = {jellyfish.metaphone(w): w for w in _OOS_SOUND_WORDS}
_WORD_RE = re.compile(r"[a-z]{5,}")
_RE_SPLIT = re.compile(r"\bre[- ]([a-z]{3,})")  # "re-track" / "re track": one word said


def _near_oos_word(w: str) -> str | None:
    """An OR-device word ``w`` is a near-spelling of (same first letter, ≥ 85 similar, e.g.
    "retrack" for "retract"), when their sounds differ only at the end."""
    best = max(_OOS_SOUND_WORDS, key=lambda o: fuzz.ratio(w, o))
    return best if best[0] == w[0] and fuzz.ratio(w, best) >= 85 else None


def _oos_sound_alikes(text: str, known: frozenset[str] | set[str]) -> str:
    """``text`` with unknown words that sound like an OR-device word replaced by it."""
    def sub(m: re.Match[str]) -> str:
        w = m.group(0)
        if w in known or w in DOMAIN_WORDS or w in PROTECTED_WORDS or w in _CONTENT:
            return w
        hit = _OOS_SOUNDS.get(jellyfish.metaphone(w))
        # spelled alike too: "story" sounds like "suture" to metaphone (S-T-R) but is a word
        ok = hit is not None and hit[0] == w[0] and fuzz.ratio(w, hit) >= 60
        if not ok:
            hit = _near_oos_word(w)
            ok = hit is not None
        return hit if ok and hit is not None else w

    def joined(m: re.Match[str]) -> str:
        w = "re" + m.group(1)
        hit = _OOS_SOUNDS.get(jellyfish.metaphone(w)) or _near_oos_word(w)
        return hit if hit is not None else m.group(0)

    return _WORD_RE.sub(sub, _RE_SPLIT.sub(joined, text))


def validate(text: str, extra_fields: Iterable[str] = (),
             vocabulary: frozenset[str] | set[str] = frozenset(),
             canonical: str | None = None) -> Validity:
    """Is a corrected command in scope? Empty/silent input is its own outcome.

    ``extra_fields`` names the clinical sheet's extra columns (e.g. "allergies" where a hospital
    keeps them): a request for one of those is in scope even if the topic is otherwise not.
    ``vocabulary`` adds the words of a grammar tier that make a sentence a console command;
    ``canonical`` is the same text in that grammar's words (multi-word expressions folded),
    also searched for such words.
    """
    if is_empty(text):
        return Validity(True, EMPTY_REASON, empty=True)
    extras = [e.lower().strip() for e in extra_fields if e and e.strip()]
    classes = scope()
    rescued = _oos_sound_alikes(classes.rescue.sub(" ", text), vocabulary)
    for c in classes.classes:
        m = c.pattern.search(rescued)
        if not m:
            continue
        hit = m.group(0)
        if any(hit in e or e in hit for e in extras):
            continue
        if c.aside_ok and _aside(rescued, m.start()):
            continue  # "see how the fissure runs, rotate it left": anatomy named in passing
        return Validity(False, f"Out of scope: {c.why} ('{hit}').")
    if not has_domain_content(text, vocabulary) and not (
            canonical and has_domain_content(canonical, vocabulary)):
        m = classes.chatter.search(text)
        if m:
            return Validity(False, "Out of scope: that is conversation, not a console command "
                                   f"('{m.group(0)}').")
        if sounds_like_command(text):
            # "give it a twirl", "ease off a touch", "home position please": shaped like an
            # order to the console in words the grammar does not know. The later tiers
            # (paraphrase matcher, LLM) judge it; the grammar reads it with low confidence.
            return Validity(True, UNFAMILIAR_REASON)
        return Validity(False, "Not a console command: it names nothing the console shows.")
    return Validity(True, "")


class CommandScorer:
    """Domain coverage of a transcript for the speech recogniser's n-best rescoring
    (``app.voice.stt.choose_hypothesis``): the share of its content words (function words
    aside) that the console knows — domain words, the grammar's vocabulary, numbers — after
    normalisation and repair. "Zoom in." covers 1.0, "Two men." 0.5, "See you now." 0.
    ``pinned``: a transcript the console rejects as out of scope is never traded for an
    in-domain near-homophone."""

    def __init__(self, vocabulary: frozenset[str] | set[str] | None = None) -> None:
        if vocabulary is None:
            from app.language.vocabulary import VOCABULARY  # noqa: PLC0415

            vocabulary = VOCABULARY
        self.vocabulary = frozenset(vocabulary)
        self._known = DOMAIN_WORDS | _CONTENT | self.vocabulary

    def _fixed(self, text: str) -> str:
        return correct(normalize(text), protected=self.vocabulary).text

    def reading(self, text: str) -> str:
        """``text`` as the console reads it after normalisation and repair."""
        return self._fixed(text)

    def coverage(self, text: str) -> float:
        toks = [t for t in tokens_of(self._fixed(text)) if t != ","]
        content = [t for t in toks if t not in _FUNCTION_WORDS]
        if not content:
            return 0.0
        known = sum(1 for t in content if t in self._known or _NUM_RE.match(t))
        return known / len(content)

    def pinned(self, text: str) -> bool:
        v = validate(self._fixed(text), (), self.vocabulary)
        return not v.valid and v.reason.startswith("Out of scope")


__all__ = ["EMPTY_REASON", "CommandScorer", "Validity", "is_empty", "validate"]
