"""The plain command shapes as templates, matched with Home Assistant's hassil (Apache-2.0).

`data/commands.yaml` holds the sentence templates; their slot lists are built here from the
vocabulary tables, so the one word list serves the grammar, the recogniser and the templates.
:func:`match` answers which shape a whole (normalised) command is and with which slot values;
turning that into registry steps is the agents' (``app/agents/template_reader.py``).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import yaml
from hassil import Intents, TextSlotList, recognize_all

from app.language import DATA_DIR
from app.language.vocabulary import (
    AR_VIEW_WORDS,
    DIRECTIONS,
    FIELD_PHRASES,
    FIELD_WORDS,
    LOBE_POS,
    PLANE_WORDS,
    ROTATE_DIRS,
    SIDES,
    SIGN_WORDS,
    STRUCT_WORDS,
)

log = logging.getLogger(__name__)
_SIGNED = re.compile(r"(?<![\w])([+-])(\d+)\b")
COMMANDS_FILE = DATA_DIR / "commands.yaml"


@dataclass(frozen=True)
class TemplateMatch:
    """A whole command matched by one template: its intent and slot values."""

    intent: str
    slots: dict[str, Any]


def _pairs(table: dict[str, Any], out: Any = None) -> list[tuple[str, Any]]:
    return [(w, out(v) if out else v) for w, v in table.items() if w.isalpha() or " " in w]


def _slot_lists() -> dict[str, TextSlotList]:
    fields = _pairs(FIELD_WORDS, lambda v: ",".join(v)) + [
        (" ".join(ws), ",".join(fs)) for ws, fs in FIELD_PHRASES]
    tables: dict[str, list[tuple[str, Any]]] = {
        "plane": _pairs(PLANE_WORDS),
        "direction": _pairs(DIRECTIONS, lambda v: f"{v[0]}:{int(v[1]):+d}"),
        "sign": [(w, f"{int(v):+d}") for w, v in SIGN_WORDS.items() if w.isalpha()],
        "field": [(w, f) for w, f in fields if f],  # [] is "a summary", not one field
        "structure": _pairs(STRUCT_WORDS),
        "view": _pairs(AR_VIEW_WORDS),
        "rotation": _pairs(ROTATE_DIRS),
        "side": [(w, v) for w, v in SIDES.items() if len(w) > 1 and v != "both"],
        "position": _pairs(LOBE_POS),
    }
    return {name: TextSlotList.from_tuples(pairs, allow_template=False)
            for name, pairs in tables.items()}


def _sentences(data: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    """Ours with a hospital's sentences, lists and rules added (never taking ours away)."""
    for intent, body in (theirs.get("intents") or {}).items():
        mine = data.setdefault("intents", {}).setdefault(intent, {"data": []})
        mine["data"].extend(body.get("data") or [])
    for key in ("lists", "expansion_rules"):
        data.setdefault(key, {}).update(theirs.get(key) or {})
    return data


@lru_cache(maxsize=1)
def _intents() -> tuple[Intents, dict[str, TextSlotList]]:
    from app.language import LanguageError, _hospital_file, _left_out  # noqa: PLC0415

    def ours() -> dict[str, Any]:
        return yaml.safe_load(COMMANDS_FILE.read_text(encoding="utf-8"))

    extra = _hospital_file(COMMANDS_FILE.name)
    if extra is not None:
        try:
            theirs = yaml.safe_load(extra.read_text(encoding="utf-8")) or {}
            return Intents.from_dict(_sentences(ours(), theirs)), _slot_lists()
        except Exception as exc:  # a broken hospital file: ours are used, and it says why
            _left_out(LanguageError(f"{extra}: {exc}"))
    return Intents.from_dict(ours()), _slot_lists()


def reload() -> None:
    """Forget the loaded templates (after the language data changed)."""
    _intents.cache_clear()


def match(text: str) -> TemplateMatch | None:
    """The one template shape that ``text`` (normalised) is as a whole, or None — also when
    two shapes fit with different meanings (then it is the grammar's to read)."""
    if not text or "," in text:
        return None
    # the normaliser writes a spoken step signed ("coronal +50"): the templates say the sign
    text = _SIGNED.sub(lambda m: ("plus " if m.group(1) == "+" else "minus ") + m.group(2), text)
    intents, lists = _intents()
    found = {}
    for r in recognize_all(text, intents, slot_lists=lists):
        slots = {k: e.value for k, e in r.entities.items()}
        found[(r.intent.name, tuple(sorted((k, str(v)) for k, v in slots.items())))] = \
            TemplateMatch(r.intent.name, slots)
    if len(found) != 1:
        if len(found) > 1:
            log.debug("templates: %d readings of %r", len(found), text)
        return None
    return next(iter(found.values()))


__all__ = ["COMMANDS_FILE", "TemplateMatch", "match", "reload"]
