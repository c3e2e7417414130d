"""The wake word inside a transcript: said first ("davinci, ...", "the vinci, ..."), said
last after a pause ("a little bit more, davinci"), or said after words meant for someone else
("Sure, doctor. Davinci, show the PFT"). Split from the corrector, which strips it first."""

from __future__ import annotations

import re

import jellyfish
from rapidfuzz import fuzz

from app.language import words as language_words
from app.language.normalize import normalize, tokens_of

_WAKE = "davinci"
_WAKE_FILLERS = language_words("wake_fillers")


def strip_wake(tokens: list[str]) -> tuple[list[str], list[tuple[str, str, str]]]:
    """Remove a leading wake word ("davinci", "da vinci", "the vinci", "hey davinci")."""
    for start in range(0, min(8, len(tokens))):
        if start and tokens[start - 1] not in _WAKE_FILLERS:
            break
        for width in (1, 2, 3):
            span = tokens[start:start + width]
            if len(span) < width or any(t == "," for t in span):
                continue
            joined = "".join(span)
            score = fuzz.ratio(joined, _WAKE)
            same_sound = jellyfish.metaphone(joined) in ("TFNS", "TFNX", "TFNK", "TFNT")
            if score >= 80 or (same_sound and score >= 65) or (
                    width >= 2 and span[-1] in ("vinci", "vinchi", "vinchy", "vincy", "vinci's")
                    and span[0] in ("da", "the", "de", "de", "di", "duh", "a", "la")):
                rest = tokens[start + width:]
                while rest and rest[0] == ",":
                    rest = rest[1:]
                said = " ".join(tokens[:start + width])
                if rest and rest != tokens:
                    again, more = strip_wake(rest)  # "davinci davinci, ...": said twice
                    if more:
                        return again, [(f"{said} {more[0][0]}", "", "wake word")]
                return rest, [(said, "", "wake word")]
    return tokens, []


def strip_closing_wake(tokens: list[str]) -> tuple[list[str], list[tuple[str, str, str]]]:
    """Remove the wake word said last after a pause ("a little bit more, davinci", "zoom in,
    davinci, please")."""
    for k in range(len(tokens) - 2, max(0, len(tokens) - 7), -1):
        if tokens[k] == "," and k > 0:
            rest, found = strip_wake(tokens[k + 1:])
            if found and all(t == "," or t in _CLOSING_FILL for t in rest) and k > 1:
                # (not after one word: "stop, davinci" stays as said)
                return tokens[:k] + [t for t in rest if t != ","], [
                    (found[0][0], "", "wake word said last")]
    return tokens, []


_CLOSING_FILL = {"please", "thanks", "thank", "you", "now", "then"}


_CLAUSE_END = re.compile(r"[.!?;,]+")


def after_wake_word(text: str) -> str | None:
    """What was said from a wake word that is not at the start ("Sure, doctor. Davinci, show
    the PFT" → "Davinci, show the PFT"): the words before it were said to someone else. None
    when the wake word opens the text or is not said."""
    cuts = [m.end() for m in _CLAUSE_END.finditer(text)]
    for start in cuts:
        clause = text[start:]
        toks = tokens_of(normalize(clause))
        if not toks:
            continue
        _, wake = strip_wake(toks)
        if wake:
            return clause.strip()
    return None


__all__ = ["after_wake_word", "strip_closing_wake", "strip_wake"]
