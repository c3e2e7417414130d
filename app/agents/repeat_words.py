"""Repeat words: "again", "once more", "twice more", "do that three times" — whether a
command's words ask for the last command again, and how many times over (the context rules
in ``app.agents.context_rules`` and the grammar read them the same way)."""

from __future__ import annotations

import re

from app.agents.grammar_clauses import _TIMES_RE
from app.language import words as language_words
from app.language.vocabulary import FILLER, REPEAT_COUNTS, REPEAT_WORDS

_MORE_WORDS = {"more", "another", "further", "again"}


def _repeat_times(tokens: list[str]) -> str | None:
    """The count word of a counted repeat ("twice more", "three times again", "do that
    twice"), or None: the repeat words with one count and nothing else."""
    core = " ".join(t for t in tokens if t not in FILLER and t != ",")
    core = re.sub(r"\b(\d+) times\b", r"\1x", core).split()  # "3 times more" → "3x more"
    counts = [t for t in core if t in REPEAT_COUNTS and t != "once" or _TIMES_RE.match(t)]
    if len(counts) != 1:
        return None
    rest = [t for t in core if t != counts[0]]
    if not rest:  # "do that twice", "same again twice": a pro-form names the last command
        return counts[0] if {"that", "it", "this", "same"} & set(tokens) else None
    return counts[0] if _is_repeat(rest) else None


def _is_repeat(tokens: list[str]) -> bool:
    if "," in tokens and all(t in _OPENER_WORDS for t in tokens[:tokens.index(",")]):
        tokens = tokens[tokens.index(",") + 1:]  # "sumimasen, again", "encore, again"
    while len(tokens) > 1 and tokens[0] in _OPENER_WORDS and tokens[0] not in REPEAT_WORDS:
        tokens = tokens[1:]  # "und again"
    core = [t for t in tokens if t not in FILLER and t != ","]
    if not core:
        return bool({"again", "same"} & set(tokens))
    if keeps_as_is(tokens):
        return False  # "keep them": leave them as they are ("keep it going" repeats)
    return all(t in REPEAT_WORDS | {"once", "time", "1", "bit", "little", "lot", "much",
                                    "please", "one", "do", "it", "that", "going", "even",
                                    "slightly", "a", "but", "only", "this"} for t in core)


_KEPT_THINGS = {"it", "them", "that", "those", "these", "this"}


def keeps_as_is(tokens: list[str]) -> bool:
    """"keep them", "no, keep it": leaving things as they are, nothing to do."""
    core = [t for t in tokens if t not in (",", "please", "no", "just", "okay", "ok")]
    return len(core) == 2 and core[0] == "keep" and core[1] in _KEPT_THINGS


_OPENER_WORDS = language_words("discourse_markers") - {"right", "first", "finally", "lastly"}


def _times_of(word: str | None) -> int:
    """2 for "twice", 3 for "3x"; 1 for no count word."""
    if word is None:
        return 1
    m = _TIMES_RE.match(word)
    return int(m.group(1) or m.group(2)) if m else REPEAT_COUNTS.get(word, 1)
