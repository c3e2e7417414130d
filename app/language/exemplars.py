"""The semantic tier's exemplar phrasings, read from ``data/exemplars.toml``.

This module only loads and checks the file (and a hospital's own ``exemplars.toml`` in the
folder named by ``VISA_LANGUAGE_DIR``); what an intent means is said in the file, and the
semantic tier (``app.agents.exemplars``) turns the records into its intents.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from app.language import DATA_DIR, LanguageError, _hospital_file, _left_out

_AGENTS = frozenset({"IR", "IV", "AR", "OOS"})
_DEFAULT_KEYS = frozenset({"fields", "view", "direction", "dir", "window", "position"})


@dataclass(frozen=True)
class ExemplarRecord:
    key: str
    agent: str | None
    kind: str
    needs_words: bool
    defaults: tuple[tuple[str, str | tuple[str, ...]], ...]
    phrases: tuple[str, ...]


def _record(path: Path, entry: object, known: bool) -> ExemplarRecord:
    if not isinstance(entry, dict) or not isinstance(entry.get("key"), str):
        raise LanguageError(f"{path}: every [[intent]] needs key = \"...\"")
    key = entry["key"]
    phrases = entry.get("phrases", [])
    if not isinstance(phrases, list) or not all(isinstance(p, str) for p in phrases):
        raise LanguageError(f"{path}: [[intent]] {key} needs phrases = [\"...\", ...]")
    agent, kind = entry.get("agent"), entry.get("kind")
    if not known:
        if agent is not None and agent not in _AGENTS:
            raise LanguageError(f"{path}: [[intent]] {key}: agent must be one of "
                                f"{sorted(_AGENTS)} or left out")
        if not isinstance(kind, str) or not kind:
            raise LanguageError(f"{path}: [[intent]] {key} is new and needs kind = \"...\"")
    defaults = entry.get("defaults", {})
    if not isinstance(defaults, dict) or set(defaults) - _DEFAULT_KEYS:
        raise LanguageError(f"{path}: [[intent]] {key}: defaults may only name "
                            f"{sorted(_DEFAULT_KEYS)}")
    pairs = tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in defaults.items())
    return ExemplarRecord(key, agent, kind or "", bool(entry.get("needs_words", False)), pairs,
                          tuple(p.strip() for p in phrases if p.strip()))


def _read(path: Path, known: frozenset[str]) -> list[ExemplarRecord]:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise LanguageError(f"the language file {path} cannot be read: {exc}") from exc
    entries = raw.get("intent", [])
    if not isinstance(entries, list):
        raise LanguageError(f"{path}: intents are written as [[intent]] tables")
    return [_record(path, e, isinstance(e, dict) and e.get("key") in known) for e in entries]


@cache
def exemplar_records() -> tuple[ExemplarRecord, ...]:
    """Every intent with its phrasings, ours first, a hospital's additions merged in order."""
    ours = _read(DATA_DIR / "exemplars.toml", frozenset())
    keys = [r.key for r in ours]
    if len(set(keys)) != len(keys):
        raise LanguageError("exemplars.toml names an intent twice")
    by_key = {r.key: r for r in ours}
    extra = _hospital_file("exemplars.toml")
    if extra is not None:
        try:
            theirs = _read(extra, frozenset(by_key))
        except LanguageError as exc:
            _left_out(exc)
            theirs = []
        for r in theirs:
            old = by_key.get(r.key)
            if old is None:
                by_key[r.key] = r
            else:
                merged = tuple(dict.fromkeys(old.phrases + r.phrases))
                by_key[r.key] = ExemplarRecord(old.key, old.agent, old.kind, old.needs_words,
                                               old.defaults, merged)
    return tuple(by_key.values())
