"""The semantic matcher's intents (tier 3, DESIGN §3), built from the language data.

Every console action (``app.core.actions``) is reachable from at least one *intent*; every
intent has many phrasings the way a surgical team says it. The phrasings are data in
``app/language/data/exemplars.toml`` (DESIGN §3 "data, not code"); this module turns them into
:class:`Intent` objects. The matcher embeds them once (cached on disk) and trains a small
classifier on them that scores the intents of a spoken command.

An intent is (agent, kind, defaults):

- ``agent`` is "IR" | "IV" | "AR", or ``None`` for phrasings that name no agent ("closer
  still", "start over"): the agent then comes from the lexicon's routing, i.e. the words of the
  clause or the memory of DESIGN §4.
- ``kind`` is the lexicon's clause intent (show, hide, reset, zoom_in, zoom_out, move, rotate,
  add) plus ``remove_part`` (structures or fields taken away) and ``oos``.
- ``defaults`` are parameters the phrasing implies without saying them in the grammar's words
  (a view, a rotation, a window, a field, a direction, a named position). Explicit slots found
  by the lexicon in the user's words (numbers, planes, structures, fields…) take precedence;
  see ``app.agents.semantic``.

The ``oos`` intents are the negative class: OR chatter, surgical manipulation, staff talk,
patient-status remarks and requests for data the console does not hold. Several of them
deliberately share words with real commands (lung, lobe, CT, rotate, left…) so that a remark
*about* the anatomy is not mistaken for a request to *show* it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from app.language.exemplars import exemplar_records


@dataclass(frozen=True)
class Intent:
    key: str
    agent: str | None  # "IR" | "IV" | "AR" | None (from routing) | "OOS"
    kind: str
    defaults: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    # The plan needs slots from the user's words (a structure to add, a slice number):
    # without them the intent cannot produce a plan.
    needs_words: bool = False
    phrases: tuple[str, ...] = ()
    # Intents that differ only in a parameter the user may also speak (a view, a direction,
    # a field): within a family a parameter found in the user's words wins over the implied
    # one, because embeddings barely separate "left" from "right" while the words do.
    family: str = ""

    def __post_init__(self) -> None:
        if not self.family:
            object.__setattr__(self, "family", family_of(self.key))

    def param(self, name: str) -> Any:
        return self.defaults.get(name)


_FAMILIES = {
    "ir.show.": "ir.show", "iv.pos.": "iv.pos", "iv.window.": "iv.window", "ar.view.": "ar.view",
    "iv.move.up": "iv.dir", "iv.move.down": "iv.dir", "iv.move.left": "iv.dir",
    "iv.move.right": "iv.dir", "iv.move.forward": "iv.dir", "iv.move.back": "iv.dir",
    "ar.rotate.left": "ar.swing", "ar.rotate.right": "ar.swing", "ar.rotate.up": "ar.swing",
    "ar.rotate.down": "ar.swing", "ar.rotate.horizontal": "ar.turn",
    "ar.rotate.vertical": "ar.turn",
}


def family_of(key: str) -> str:
    for prefix, fam in _FAMILIES.items():
        if key == prefix or (prefix.endswith(".") and key.startswith(prefix)):
            return fam
    return key


def _intents() -> tuple[Intent, ...]:
    return tuple(Intent(r.key, r.agent, r.kind, MappingProxyType(dict(r.defaults)),
                        r.needs_words, r.phrases, family_of(r.key))
                 for r in exemplar_records())


INTENTS: tuple[Intent, ...] = _intents()
INTENTS_BY_KEY: dict[str, Intent] = {i.key: i for i in INTENTS}

# Which intents reach each registry action: the coverage tests read this.
ACTION_INTENTS: dict[str, tuple[str, ...]] = {
    "IR.SHOW": ("ir.show.all", "ir.show.pft", "ir.remove_field"),
    "IR.HIDE": ("ir.hide",),
    "IR.RESET": ("ir.reset",),
    "IV.SHOW_MOVE": ("iv.show", "iv.move.up", "iv.move.absolute", "iv.window.bone"),
    "IV.ZOOM_IN_MOVE": ("iv.zoom_in",),
    "IV.ZOOM_OUT": ("iv.zoom_out",),
    "IV.REMOVE": ("iv.remove",),
    "IV.RESET": ("iv.reset",),
    "AR.SHOW": ("ar.show", "ar.add", "ar.view.posterior", "ar.remove_part"),
    "AR.ROTATE": ("ar.rotate.left", "ar.rotate.static"),
    "AR.ZOOM_IN": ("ar.zoom_in",),
    "AR.ZOOM_OUT": ("ar.zoom_out",),
    "AR.REMOVE": ("ar.remove",),
    "AR.RESET": ("ar.reset",),
}


def all_phrases() -> list[tuple[str, str]]:
    """(intent key, phrase) for every exemplar, in a stable order."""
    return [(i.key, p) for i in INTENTS for p in i.phrases]


def exemplar_hash() -> str:
    """Identifies the exemplar set (the on-disk embedding cache is keyed by it)."""
    h = hashlib.sha256()
    for key, phrase in all_phrases():
        h.update(f"{key}\t{phrase}\n".encode())
    return h.hexdigest()[:16]


def family_values(intents: tuple[Intent, ...] | list[Intent], family: str, name: str
                  ) -> frozenset[Any]:
    """Every value of parameter ``name`` that the intents of a family imply."""
    return frozenset(i.param(name) for i in intents if i.family == family
                     and i.param(name) is not None)


__all__ = ["ACTION_INTENTS", "INTENTS", "INTENTS_BY_KEY", "Intent", "all_phrases",
           "exemplar_hash", "family_of", "family_values"]
