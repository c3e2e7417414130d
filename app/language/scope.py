"""The validator's out-of-scope classes, read from ``data/out_of_scope.toml``.

This module only loads and compiles the file (and a hospital's own ``out_of_scope.toml`` in the
folder named by ``VISA_LANGUAGE_DIR``, whose classes and phrases are added to ours); what each
class means is said in the file. ``app.language.validation`` applies them.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from app.language import DATA_DIR, LanguageError, _hospital_file, _left_out


@dataclass(frozen=True)
class ScopeClass:
    why: str  # the reason the console says, in plain words
    pattern: re.Pattern[str]
    aside_ok: bool = False  # named in an aside, it does not refuse the command


@dataclass(frozen=True)
class Scope:
    classes: tuple[ScopeClass, ...]
    rescue: re.Pattern[str]  # phrases of ours holding an out-of-scope word
    chatter: re.Pattern[str]  # closing remarks and greetings


def _patterns(path: Path, where: str, entry: Any) -> list[str]:
    pats = entry.get("patterns") if isinstance(entry, dict) else None
    if not isinstance(pats, list) or not all(isinstance(p, str) and p for p in pats):
        raise LanguageError(f"{path}: {where} needs patterns = ['...', ...]")
    for p in pats:
        try:
            re.compile(p)
        except re.error as exc:
            raise LanguageError(f"{path}: {where}: the pattern {p!r} is not valid: {exc}") \
                from exc
    return pats


def _read(path: Path) -> tuple[list[ScopeClass], list[str], list[str]]:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise LanguageError(f"the language file {path} cannot be read: {exc}") from exc
    classes = []
    for i, c in enumerate(raw.get("class", []), 1):
        if not isinstance(c, dict) or not isinstance(c.get("why"), str) or not c["why"]:
            raise LanguageError(f"{path}: class {i} needs why = \"...\"")
        pats = _patterns(path, f"class {i}", c)
        classes.append(ScopeClass(c["why"], re.compile(rf"\b(?:{'|'.join(pats)})\b"),
                                  bool(c.get("aside_ok", False))))
    rescue = _patterns(path, "[rescue]", raw["rescue"]) if "rescue" in raw else []
    chatter = _patterns(path, "[chatter]", raw["chatter"]) if "chatter" in raw else []
    return classes, rescue, chatter


@cache
def scope() -> Scope:
    """Our classes, then a hospital's (a broken hospital file is left out, with the reason)."""
    classes, rescue, chatter = _read(DATA_DIR / "out_of_scope.toml")
    extra = _hospital_file("out_of_scope.toml")
    if extra is not None:
        try:
            more, more_rescue, more_chatter = _read(extra)
        except LanguageError as exc:
            _left_out(exc)
        else:
            classes, rescue, chatter = classes + more, rescue + more_rescue, \
                chatter + more_chatter
    return Scope(tuple(classes), re.compile("|".join(rescue)),
                 re.compile(rf"\b(?:{'|'.join(chatter)})\b"))


@lru_cache(maxsize=4096)
def other_talk_word(word: str) -> bool:
    """Is the word by itself one an out-of-scope class names ("retraction", "suction")? It is
    a word of its own then, not a console word misheard, and the corrector leaves it as said."""
    return other_talk_why(word) is not None


@lru_cache(maxsize=4096)
def other_talk_why(word: str) -> str | None:
    """The plain-words reason of the out-of-scope class the word by itself names, or None."""
    return next((c.why for c in scope().classes if c.pattern.fullmatch(word)), None)
