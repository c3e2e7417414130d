"""The command language as data (DESIGN §2, §3): word classes read from ``words.toml``.

One home for the words the interpreter tiers and the voice layer share. A hospital extends a
class by editing the TOML file (or by pointing ``VISA_LANGUAGE_DIR`` at a folder holding its
own ``words.toml``, whose classes are merged into ours) — no Python. This module only loads and
queries the data; what a class means is said in the file beside it.
"""

from __future__ import annotations

import logging
import tomllib
from collections.abc import Iterable, Sequence
from functools import cache, lru_cache
from pathlib import Path

from app.runtime.settings import settings

DATA_DIR = Path(__file__).with_name("data")
log = logging.getLogger(__name__)


class LanguageError(ValueError):
    """A language data file cannot be used; the message says which and why."""


def _read(path: Path) -> dict[str, list[str]]:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise LanguageError(f"the language file {path} cannot be read: {exc}") from exc
    out: dict[str, list[str]] = {}
    for name, entry in raw.items():
        words = entry.get("words") if isinstance(entry, dict) else None
        if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            raise LanguageError(f"{path}: [{name}] needs words = [\"...\", ...]")
        try:
            out[name] = [e for w in words if w.strip() for e in expand(w.strip().lower())]
        except ValueError as exc:
            raise LanguageError(f"{path}: [{name}]: {exc}") from exc
    return out


_MAX_EXPANSIONS = 512


def expand(template: str) -> list[str]:
    """Every wording of a template in hassil's notation: "(a|b)" is one of the alternatives,
    "[x]" may be left out ("it (would|might) [really] help to" is four phrases). Written here
    because only this expansion is needed, not hassil's intent matching."""
    if not any(ch in template for ch in "()[]|"):
        return [template]
    out = [" ".join(w.split()) for w in _alternatives(template, 0, "")[0]]
    if len(out) > _MAX_EXPANSIONS:
        raise ValueError(f"{template!r} expands to {len(out)} phrases (at most {_MAX_EXPANSIONS})")
    return list(dict.fromkeys(w for w in out if w))


def _alternatives(t: str, i: int, close: str) -> tuple[list[str], int]:
    """The wordings of ``t`` from ``i`` up to the bracket ``close`` (or the end)."""
    choices: list[list[str]] = []
    seq = [""]
    while i < len(t):
        ch = t[i]
        if ch in "([":
            inner, i = _alternatives(t, i + 1, ")" if ch == "(" else "]")
            if ch == "[":
                inner = [*inner, ""]
            seq = [a + b for a in seq for b in inner]
            continue
        if ch == "|":
            if not close:
                raise ValueError(f"'|' outside brackets in {t!r}")
            choices.append(seq)
            seq = [""]
        elif ch in ")]":
            if ch != close:
                raise ValueError(f"unbalanced brackets in {t!r}")
            choices.append(seq)
            return [w for c in choices for w in c], i + 1
        else:
            seq = [a + ch for a in seq]
        i += 1
    if close:
        raise ValueError(f"unclosed bracket in {t!r}")
    choices.append(seq)
    return [w for c in choices for w in c], i


_PROBLEMS: list[str] = []


def problems() -> list[str]:
    """Why a hospital's language file was left out, in plain words (empty when all is well)."""
    from app.language.exemplars import exemplar_records  # imports this module

    _classes()
    _rewrites()
    from app.language.scope import scope  # imports this module

    exemplar_records()
    scope()
    return list(_PROBLEMS)


def _hospital_file(name: str) -> Path | None:
    extra = settings().language_dir
    path = extra / name if extra else None
    return path if path is not None and path.is_file() else None


def _left_out(exc: LanguageError) -> None:
    # A hospital's broken file must not stop the console: ours are used, and it says why.
    msg = f"{exc} — the console uses its own words only until the file is fixed"
    if msg not in _PROBLEMS:
        _PROBLEMS.append(msg)
    log.error("%s", msg)


@lru_cache(maxsize=1)
def _classes() -> dict[str, frozenset[str]]:
    merged: dict[str, set[str]] = {k: set(v) for k, v in _read(DATA_DIR / "words.toml").items()}
    extra = _hospital_file("words.toml")
    if extra is not None:
        try:
            theirs = _read(extra)
        except LanguageError as exc:
            _left_out(exc)
            theirs = {}
        for k, v in theirs.items():
            merged.setdefault(k, set()).update(v)
    return {k: frozenset(v) for k, v in merged.items()}


def _name_list(path: Path) -> set[str]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise LanguageError(f"the names file {path} cannot be read: {exc}") from exc
    return {ln.strip().lower() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")}


@lru_cache(maxsize=1)
def given_names() -> frozenset[str]:
    """People's given names (``given_names.txt``, plus a hospital's own staff list of the same
    name): a capitalised opener before a pause that is one of these calls on a person."""
    names = _name_list(DATA_DIR / "given_names.txt")
    extra = _hospital_file("given_names.txt")
    if extra is not None:
        try:
            names |= _name_list(extra)
        except LanguageError as exc:
            _left_out(exc)
    return frozenset(names)


def reload() -> None:
    """Forget the cached data (tests, or after a hospital edited its file)."""
    _PROBLEMS.clear()
    _classes.cache_clear()
    given_names.cache_clear()
    _phrases.cache_clear()
    _rewrites.cache_clear()
    from app.language.exemplars import exemplar_records  # imports this module

    exemplar_records.cache_clear()
    from app.language.scope import scope  # imports this module

    scope.cache_clear()
    from app.language.known_words import known_words, mid_particles  # imports this module

    known_words.cache_clear()
    mid_particles.cache_clear()
    from app.language.templates import reload as reload_templates  # imports this module

    reload_templates()
    from app.language.correction import paused_particle  # imports this module

    paused_particle.cache_clear()


def words(name: str) -> frozenset[str]:
    """Every entry of a word class (single words and multi-word phrases)."""
    try:
        return _classes()[name]
    except KeyError:
        raise LanguageError(f"no word class [{name}] in the language data") from None


def has_any(tokens: Sequence[str], name: str) -> bool:
    """Whether the tokens contain a word or a phrase of the class."""
    return bool(matches(tokens, name))


@cache
def _phrases(name: str) -> tuple[tuple[str, ...], ...]:
    """The class's entries as token tuples, longest first (cached: asked several times per
    command by the checks)."""
    return tuple(sorted((tuple(e.split()) for e in words(name)), key=len, reverse=True))


def phrases(name: str) -> tuple[tuple[str, ...], ...]:
    """The class's entries as token tuples, longest first."""
    return _phrases(name)


def matches(tokens: Sequence[str], name: str) -> list[tuple[int, int]]:
    """(start, end) token spans of the class's words and phrases, longest first at a start."""
    phrases = _phrases(name)
    toks = [t.lower() for t in tokens]
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(toks):
        for ph in phrases:
            if tuple(toks[i:i + len(ph)]) == ph:
                out.append((i, i + len(ph)))
                i += len(ph) - 1
                break
        i += 1
    return out


def _read_rewrites(path: Path) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise LanguageError(f"the language file {path} cannot be read: {exc}") from exc
    out: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
    for i, r in enumerate(raw.get("rewrite", []), 1):
        if not (isinstance(r, dict) and isinstance(r.get("from"), str)
                and isinstance(r.get("to"), str) and r["from"].split()):
            raise LanguageError(f"{path}: rewrite {i} needs from = \"...\" and to = \"...\"")
        out.append((tuple(r["from"].lower().split()), tuple(r["to"].lower().split())))
    return out


@lru_cache(maxsize=1)
def _rewrites() -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    out = _read_rewrites(DATA_DIR / "phrases.toml")
    extra = _hospital_file("phrases.toml")
    if extra is not None:
        try:
            out += _read_rewrites(extra)
        except LanguageError as exc:
            _left_out(exc)
    out.sort(key=lambda fr: len(fr[0]), reverse=True)  # longest phrase first
    return tuple(out)


def rewrite_sources() -> frozenset[tuple[str, ...]]:
    """The word sequences the phrase rewrites replace ("lungs model", "zoo min", ...)."""
    return frozenset(f for f, _ in _rewrites())


def word_rewrites() -> dict[str, tuple[str, ...]]:
    """The rewrites of a single word ("ya" → "you", "naw" → "no"), for readers that keep each
    word's place in the text (the request frames)."""
    return {f[0]: t for f, t in _rewrites() if len(f) == 1}


def rewrite(tokens: Sequence[str]) -> list[str]:
    """The tokens with the language's phrase rewrites applied (longest match first) and runs
    of spelled-out letters joined ("p f t" → "pft", "r l l" → "rll")."""
    return replace_phrases(join_spelled_letters(tokens), _rewrites())


def replace_phrases(tokens: Sequence[str],
                    rules: Sequence[tuple[tuple[str, ...], Sequence[str]]]) -> list[str]:
    """``tokens`` with each ``(phrase, replacement)`` applied left to right, the first rule
    that matches at a position winning (give the rules longest first)."""
    toks = list(tokens)
    out: list[str] = []
    i = 0
    while i < len(toks):
        for src, dst in rules:
            if tuple(toks[i:i + len(src)]) == src:
                out.extend(dst)
                i += len(src)
                break
        else:
            out.append(toks[i])
            i += 1
    return out


_LONE_WORDS = {"a", "i"}  # single letters that are words of their own


def join_spelled_letters(tokens: Sequence[str]) -> list[str]:
    """Runs of two or more single letters are one spelled-out abbreviation ("d l c o" →
    "dlco"), unless every letter of the run is a word of its own ("a", "i")."""
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if len(run) >= 2 and not all(t in _LONE_WORDS for t in run):
            out.append("".join(run))
        else:
            out.extend(run)
        run.clear()

    for t in tokens:
        if len(t) == 1 and t.isalpha():
            run.append(t)
        elif len(run) >= 2 and len(t) == 2 and t[1] == "s" and t not in ("is", "as", "us", "ss"):
            run.append(t)  # "p f ts": the last letter said as a plural ("PFTs")
            flush()
        else:
            flush()
            out.append(t)
    flush()
    return out


def which_of(tokens: Sequence[str], names: Sequence[str]) -> set[str]:
    """The classes among ``names`` the tokens say, a phrase of one class hiding the words of
    another inside it ("bring down" is not "bring"; "no need" is not "need")."""
    toks = [t.lower() for t in tokens]
    spans = [(a, b, n) for n in names for a, b in matches(toks, n)]
    spans.sort(key=lambda s: (s[0] - s[1], s[0]))  # longest first
    taken: list[tuple[int, int]] = []
    found: set[str] = set()
    for a, b, n in spans:
        if any(a < y and x < b for x, y in taken):
            continue
        taken.append((a, b))
        found.add(n)
    return found


def phrasings() -> list[str]:
    """The console's own phrasings (``data/phrasings.txt``, written from the dev split and the
    phrasing sets by ``app.eval.phrasings``): what the optional phrasing model learns from."""
    path = DATA_DIR / "phrasings.txt"
    if not path.is_file():
        return []
    return [ln for ln in path.read_text(encoding="utf-8").splitlines()
            if ln.strip() and not ln.startswith("#")]


def class_names() -> Iterable[str]:
    return sorted(_classes())


__all__ = ["DATA_DIR", "LanguageError", "class_names", "expand", "given_names", "has_any", "join_spelled_letters",
           "matches", "phrasings", "problems", "reload", "replace_phrases", "rewrite",
           "rewrite_sources", "which_of",
           "words"]
